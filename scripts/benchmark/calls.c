// The benchmark's workload: COUNT socket calls of one kind, so that callgrind can count
// the instructions each preload adds per call (run twice with different COUNTs).
//   calls sendto ADDRESS PORT COUNT   one UDP socket, COUNT sendto calls
//   calls cycle ADDRESS PORT COUNT    COUNT times: socket, connect (UDP), close
//   calls write ADDRESS PORT COUNT    COUNT one-byte writes to /dev/null (the address unused)
//   calls setsockopt ADDRESS PORT COUNT
//                                     one UDP socket, COUNT setsockopt(SO_REUSEADDR) calls
//   calls bind ADDRESS PORT COUNT     one UDP socket, COUNT binds to ADDRESS:PORT (all but the
//                                     first fail with EINVAL, after lnp has decided each)
//   calls getaddrinfo ADDRESS PORT COUNT
//                                     COUNT getaddrinfo calls for the name ADDRESS (and
//                                     freeaddrinfo)
//   calls sendmmsg ADDRESS PORT COUNT COUNT sendmmsg calls of 8 messages each to ADDRESS
//   calls spread ADDRESS PORT COUNT DISTINCT
//                                     COUNT sendto calls, cycling through DISTINCT addresses
//                                     from ADDRESS on; prints the wall-clock ns per call
//   calls timed-sendto|timed-cycle ADDRESS PORT COUNT
//                                     as sendto and cycle, printing the wall-clock ns per call
#define _GNU_SOURCE  // sendmmsg
#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1e9 + now.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 5 && !(argc == 6 && strcmp(argv[1], "spread") == 0)) {
        fprintf(stderr, "usage: calls [timed-]sendto|[timed-]cycle|write ADDRESS PORT COUNT, or calls spread ADDRESS PORT COUNT DISTINCT\n");
        return 2;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[3]))};
    if (strcmp(argv[1], "getaddrinfo") != 0 && inet_pton(AF_INET, argv[2], &address.sin_addr) != 1) return 2;
    long count = atol(argv[4]);
    const char *mode = argv[1];
    int timed = strncmp(mode, "timed-", 6) == 0;
    if (timed) mode += 6;
    double start = nanoseconds();
    if (strcmp(argv[1], "spread") == 0) {
        long distinct = atol(argv[5]);
        unsigned first = ntohl(address.sin_addr.s_addr);
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (long i = 0; i < count; i++) {
            address.sin_addr.s_addr = htonl(first + (unsigned)(i % distinct));
            sendto(fd, "x", 1, 0, (struct sockaddr *)&address, sizeof address);
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        printf("%.0f\n", ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / count);
        close(fd);
    } else if (strcmp(mode, "sendto") == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        for (long i = 0; i < count; i++) sendto(fd, "x", 1, 0, (struct sockaddr *)&address, sizeof address);
        close(fd);
    } else if (strcmp(mode, "setsockopt") == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0), on = 1;
        for (long i = 0; i < count; i++) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        close(fd);
    } else if (strcmp(mode, "bind") == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        for (long i = 0; i < count; i++) bind(fd, (struct sockaddr *)&address, sizeof address);
        close(fd);
    } else if (strcmp(mode, "getaddrinfo") == 0) {
        struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *found;
        for (long i = 0; i < count; i++) {
            if (getaddrinfo(argv[2], argv[3], &hints, &found) == 0) freeaddrinfo(found);
        }
    } else if (strcmp(mode, "sendmmsg") == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        struct iovec piece = {.iov_base = "x", .iov_len = 1};
        struct mmsghdr messages[8];
        memset(messages, 0, sizeof messages);
        for (int m = 0; m < 8; m++) {
            messages[m].msg_hdr = (struct msghdr){.msg_name = &address, .msg_namelen = sizeof address, .msg_iov = &piece, .msg_iovlen = 1};
        }
        for (long i = 0; i < count; i++) sendmmsg(fd, messages, 8, 0);
        close(fd);
    } else if (strcmp(mode, "write") == 0) {
        int fd = open("/dev/null", O_WRONLY);
        for (long i = 0; i < count; i++) write(fd, "x", 1);
        close(fd);
    } else {
        for (long i = 0; i < count; i++) {
            int fd = socket(AF_INET, SOCK_DGRAM, 0);
            connect(fd, (struct sockaddr *)&address, sizeof address);
            close(fd);
        }
    }
    if (timed) printf("%.0f\n", (nanoseconds() - start) / count);
    return 0;
}
