// The benchmark's workload: COUNT socket calls of one kind, so that callgrind can count
// the instructions each preload adds per call (run twice with different COUNTs).
//   calls sendto ADDRESS PORT COUNT   one UDP socket, COUNT sendto calls
//   calls cycle ADDRESS PORT COUNT    COUNT times: socket, connect (UDP), close
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: calls sendto|cycle ADDRESS PORT COUNT\n");
        return 2;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[3]))};
    if (inet_pton(AF_INET, argv[2], &address.sin_addr) != 1) return 2;
    long count = atol(argv[4]);
    if (strcmp(argv[1], "sendto") == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        for (long i = 0; i < count; i++) sendto(fd, "x", 1, 0, (struct sockaddr *)&address, sizeof address);
        close(fd);
    } else {
        for (long i = 0; i < count; i++) {
            int fd = socket(AF_INET, SOCK_DGRAM, 0);
            connect(fd, (struct sockaddr *)&address, sizeof address);
            close(fd);
        }
    }
    return 0;
}
