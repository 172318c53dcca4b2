// The benchmark's bus workload: a D-Bus client that writes the protocol itself (as GDBus and
// sd-bus do) on a connection to the system bus — authentication, Hello, then COUNT calls of
// org.freedesktop.DBus.GetId that want no reply, one write each. Under lnp the connection is
// watched and every write read (BusStreamGate.swift); run twice to count a call's cost.
//   bus_calls COUNT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

// Both as jeepney serialises them (little-endian); GetId with serial 2.
static const char hello[] = "6c01000100000000010000006d00000001016f00150000002f6f72672f667265656465736b746f702f4442757300000002017300140000006f72672e667265656465736b746f702e4442757300000000030173000500000048656c6c6f00000006017300140000006f72672e667265656465736b746f702e4442757300000000";
static const char get_id[] = "6c01000100000000020000006d00000001016f00150000002f6f72672f667265656465736b746f702f4442757300000002017300140000006f72672e667265656465736b746f702e44427573000000000301730005000000476574496400000006017300140000006f72672e667265656465736b746f702e4442757300000000";

static size_t unhex(const char *text, unsigned char *out) {
    size_t count = strlen(text) / 2;
    for (size_t i = 0; i < count; i++) {
        char pair[3] = {text[2 * i], text[2 * i + 1], 0};
        out[i] = (unsigned char)strtoul(pair, NULL, 16);
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    long count = atol(argv[1]);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un bus = {.sun_family = AF_UNIX, .sun_path = "/run/dbus/system_bus_socket"};
    if (connect(fd, (struct sockaddr *)&bus, sizeof bus) != 0) {
        perror("bus_calls: connect");
        return 1;
    }
    char authenticate[] = "\0AUTH EXTERNAL 30\r\n";  // uid 0, in hex digits' hex
    write(fd, authenticate, sizeof authenticate - 1);
    char answer[256];
    if (read(fd, answer, sizeof answer) <= 0 || strncmp(answer, "OK ", 3) != 0) return 1;
    write(fd, "BEGIN\r\n", 7);
    unsigned char message[256];
    size_t length = unhex(hello, message);
    write(fd, message, length);
    length = unhex(get_id, message);
    message[2] |= 1;  // no reply wanted
    for (long i = 0; i < count; i++) {
        unsigned serial = (unsigned)(i + 2);
        memcpy(message + 8, &serial, 4);  // little-endian, as the message says
        if (write(fd, message, length) != (ssize_t)length) {
            perror("bus_calls: write");
            return 1;
        }
    }
    close(fd);
    return 0;
}
