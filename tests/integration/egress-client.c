/* A small static client for the egress tests (t-egress, t-egress-escape):
 * compiled by the test and copied into the sandbox's rootfs. Prints what
 * came back, so the test judges what the process inside saw.
 *   send IP PORT DATA            connect, send DATA (\r \n \xHH decoded),
 *                                print the answer until EOF (5 s at most)
 *   socks IP PORT ATYP DEST DPORT DATA [MS DATA]...
 *                                SOCKS5 CONNECT (ATYP 1 IPv4, 3 name,
 *                                4 IPv6), "socks-reply N", then as send
 *                                (as steps with each pair)
 *   hold IP PORT N DATA          N connections at once, DATA on each, the
 *                                first answer line of each counted:
 *                                "ok=A limit=B other=C" (all held open)
 *   fetch IP PORT DATA           as send, the answer discarded:
 *                                "bytes=N ms=M" (tests/bench/egress-bench.sh)
 *   setup IP PORT N DATA         N connections one after the other, each
 *                                until its first answer byte:
 *                                "us=AVG median=MEDIAN"
 *   stream IP PORT DATA MARK DATA2
 *                                send DATA, read until MARK came (30 s at
 *                                most), then send DATA2 on a second
 *                                connection (a "go on" to the server), then
 *                                as send: a response passed on only at its
 *                                end never shows MARK, and the server never
 *                                hears DATA2 (t-egress-cred)
 *   steps IP PORT DATA [MS DATA]...
 *                                send DATA, print the first answer (the
 *                                proxy's "200" to a CONNECT), then for each
 *                                pair wait MS ms and send DATA; then as send
 *   flood IP PORT HOLD N         one connection sending HOLD, held open
 *                                (it takes the only maxConnections slot),
 *                                then N connections made and closed at
 *                                once: "flood=N"
 *   serve PORT                   on the host, for the bench: accept on
 *                                127.0.0.1:PORT, read once, answer a
 *                                1-byte HTTP/1.0 200, close (no fork: the
 *                                set-up figures are the proxy's, not a
 *                                server's)
 * Exit 0 when the first connection was made; else "connect: ERRNO". */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static size_t decode(const char *s, char *out)
{
    size_t n = 0;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] == 'r') { out[n++] = '\r'; s++; }
        else if (s[0] == '\\' && s[1] == 'n') { out[n++] = '\n'; s++; }
        else if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) {
            char h[3] = { s[2], s[3], 0 };
            out[n++] = (char)strtol(h, NULL, 16);
            s += 3;
        } else out[n++] = *s;
    }
    return n;
}

static int dial(const char *ip, int port)
{
    struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
    struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int v6 = strchr(ip, ':') != NULL;
    if (v6 ? inet_pton(AF_INET6, ip, &s6.sin6_addr) != 1 : inet_pton(AF_INET, ip, &s4.sin_addr) != 1) {
        printf("connect: EINVAL\n");
        exit(2);
    }
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, v6 ? (struct sockaddr *)&s6 : (struct sockaddr *)&s4,
                          v6 ? sizeof(s6) : sizeof(s4)) < 0) {
        int e = errno;
        printf("connect: %s\n", e == ENETUNREACH ? "ENETUNREACH" : e == ECONNREFUSED ? "ECONNREFUSED"
                              : e == EHOSTUNREACH ? "EHOSTUNREACH" : e == EACCES ? "EACCES"
                              : e == EPERM ? "EPERM" : e == EADDRNOTAVAIL ? "EADDRNOTAVAIL" : strerror(e));
        exit(1);
    }
    return fd;
}

static void copy_out(int fd)
{
    char buf[65536];
    for (;;) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, 5000) <= 0) break;
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0) break;
        fwrite(buf, 1, (size_t)n, stdout);
    }
    fflush(stdout);
}

static void send_all(int fd, const char *data)
{
    static char buf[65536];
    size_t n = decode(data, buf);
    if (write(fd, buf, n) != (ssize_t)n) printf("short write\n");
}

/* MS DATA pairs: wait MS ms, send DATA. A proxy that refused has closed:
 * no SIGPIPE, its answer is read after. */
static void send_steps(int fd, int n, char **pairs)
{
    for (int i = 0; i + 1 < n; i += 2) {
        struct timespec ts = { atoi(pairs[i]) / 1000, (long)(atoi(pairs[i]) % 1000) * 1000000L };
        nanosleep(&ts, NULL);
        static char buf[65536];
        size_t len = decode(pairs[i + 1], buf);
        (void)!send(fd, buf, len, MSG_NOSIGNAL);
    }
}

static int readn(int fd, unsigned char *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "send") == 0) {
        int fd = dial(argv[2], atoi(argv[3]));
        send_all(fd, argv[4]);
        copy_out(fd);
        return 0;
    }
    if (argc >= 8 && argc % 2 == 0 && strcmp(argv[1], "socks") == 0) {
        int fd = dial(argv[2], atoi(argv[3]));
        unsigned char b[300] = { 5, 1, 0 }, r[10];
        if (write(fd, b, 3) != 3 || readn(fd, r, 2) < 0 || r[1] != 0) { printf("socks-greeting failed\n"); return 1; }
        int atyp = atoi(argv[4]), port = atoi(argv[6]);
        size_t n = 0;
        b[n++] = 5; b[n++] = 1; b[n++] = 0; b[n++] = (unsigned char)atyp;
        if (atyp == 1) { inet_pton(AF_INET, argv[5], b + n); n += 4; }
        else if (atyp == 4) { inet_pton(AF_INET6, argv[5], b + n); n += 16; }
        else { size_t l = strlen(argv[5]); b[n++] = (unsigned char)l; memcpy(b + n, argv[5], l); n += l; }
        b[n++] = (unsigned char)(port >> 8); b[n++] = (unsigned char)port;
        if (write(fd, b, n) != (ssize_t)n || readn(fd, r, 10) < 0) { printf("socks-reply none\n"); return 0; }
        printf("socks-reply %d\n", r[1]);
        fflush(stdout);
        if (r[1] == 0) {
            send_all(fd, argv[7]);
            send_steps(fd, argc - 8, argv + 8);
            copy_out(fd);
        }
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "hold") == 0) {
        int n = atoi(argv[4]), ok = 0, limit = 0, other = 0;
        int *fds = calloc((size_t)n, sizeof(int));
        for (int i = 0; i < n; i++) {
            fds[i] = dial(argv[2], atoi(argv[3]));
            send_all(fds[i], argv[5]);
        }
        for (int i = 0; i < n; i++) {
            char line[64] = "";
            struct pollfd pf = { .fd = fds[i], .events = POLLIN };
            ssize_t r = poll(&pf, 1, 5000) == 1 ? read(fds[i], line, sizeof(line) - 1) : -1;
            if (r > 0 && strstr(line, " 200 ")) ok++;
            else if (r > 0 && strstr(line, " 503 ")) limit++;
            else other++;
        }
        printf("ok=%d limit=%d other=%d\n", ok, limit, other);
        return 0;
    }
    if (argc >= 5 && argc % 2 == 1 && strcmp(argv[1], "steps") == 0) {
        int fd = dial(argv[2], atoi(argv[3]));
        send_all(fd, argv[4]);
        char first[256];
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        ssize_t r = poll(&pf, 1, 5000) == 1 ? read(fd, first, sizeof(first)) : -1;
        if (r > 0) fwrite(first, 1, (size_t)r, stdout);
        fflush(stdout);
        send_steps(fd, argc - 5, argv + 5);
        copy_out(fd);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "flood") == 0) {
        int held = dial(argv[2], atoi(argv[3])), n = atoi(argv[5]);
        send_all(held, argv[4]);
        char line[64];
        struct pollfd pf = { .fd = held, .events = POLLIN };
        if (poll(&pf, 1, 5000) == 1) (void)!read(held, line, sizeof(line));
        for (int i = 0; i < n; i++) close(dial(argv[2], atoi(argv[3])));
        printf("flood=%d\n", n);
        close(held);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "fetch") == 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int fd = dial(argv[2], atoi(argv[3]));
        send_all(fd, argv[4]);
        static char buf[1 << 20];
        unsigned long long total = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0) total += (unsigned long long)n;
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("bytes=%llu ms=%lld\n", total,
               (long long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000));
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "setup") == 0) {
        int n = atoi(argv[4]);
        if (n < 1) n = 1;
        long long *us = calloc((size_t)n, sizeof(*us)), total = 0;
        for (int i = 0; i < n; i++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            int fd = dial(argv[2], atoi(argv[3]));
            send_all(fd, argv[5]);
            char c;
            if (read(fd, &c, 1) != 1) { printf("no answer\n"); return 1; }
            clock_gettime(CLOCK_MONOTONIC, &b);
            close(fd);
            us[i] = ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec)) / 1000;
            total += us[i];
        }
        /* The median: on a shared machine the mean is the scheduler's. */
        qsort(us, (size_t)n, sizeof(*us), cmp_ll);
        printf("us=%lld median=%lld\n", total / n, us[n / 2]);
        return 0;
    }
    if (argc == 7 && strcmp(argv[1], "stream") == 0) {
        int fd = dial(argv[2], atoi(argv[3]));
        send_all(fd, argv[4]);
        static char got[65536];
        size_t n = 0;
        while (memmem(got, n, argv[5], strlen(argv[5])) == NULL) {
            struct pollfd pf = { .fd = fd, .events = POLLIN };
            ssize_t r = poll(&pf, 1, 30000) == 1 ? read(fd, got + n, sizeof(got) - 1 - n) : -1;
            if (r <= 0) {
                printf("%.*sno %s before the end\n", (int)n, got, argv[5]);
                return 1;
            }
            n += (size_t)r;
        }
        fwrite(got, 1, n, stdout);
        int go = dial(argv[2], atoi(argv[3]));
        send_all(go, argv[6]);
        char sink[4096];
        while (read(go, sink, sizeof(sink)) > 0) {}
        close(go);
        copy_out(fd);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "serve") == 0) {
        struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(lfd, (struct sockaddr *)&s4, sizeof(s4)) < 0 || listen(lfd, 128) < 0) { perror("serve"); return 1; }
        static const char ans[] = "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx";
        for (;;) {
            int fd = accept(lfd, NULL, NULL);
            if (fd < 0) continue;
            char req[4096];
            if (read(fd, req, sizeof(req)) > 0) (void)!write(fd, ans, sizeof(ans) - 1);
            close(fd);
        }
    }
    fprintf(stderr, "usage: egress-client send|socks|hold|steps|flood|fetch|setup|serve ...\n");
    return 2;
}
