/* Names are resolved by the proxy, never by the container (it has no
 * DNS): getaddrinfo, or for tests a hosts file named by BRIG_EGRESS_HOSTS
 * (docs/egress.md), read at each lookup so a test can make a name change
 * its address between two connections (rebinding). A name the hosts file
 * lacks does not resolve: tests send nothing to a real resolver. */
#include "egress_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "../runtime/util/cleanup.h"

#define RESOLVE_HOSTS_MAX (1u << 20)

static void resolve_add(struct egress_addr *out, size_t max, size_t *n, const struct egress_addr *a)
{
    for (size_t i = 0; i < *n; i++)
        if (memcmp(out[i].b, a->b, 16) == 0) return;
    if (*n < max) out[(*n)++] = *a;
}

/* The proxy cannot open the file once confined (egress_sandbox.c): it
 * was opened before, and is read whole from its start at each lookup. */
static FILE *resolve_hosts_open(int fd, char **buf)
{
    size_t cap = 0, n = 0;
    *buf = NULL;
    for (;;) {
        if (n == cap) {
            if (cap >= RESOLVE_HOSTS_MAX) return NULL;
            cap = cap ? cap * 2 : 8192;
            char *b = realloc(*buf, cap);
            if (b == NULL) return NULL;
            *buf = b;
        }
        ssize_t r = pread(fd, *buf + n, cap - n, (off_t)n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return NULL;
        if (r == 0) break;
        n += (size_t)r;
    }
    return n ? fmemopen(*buf, n, "r") : fopen("/dev/null", "re");
}

static int resolve_hosts(int fd, const char *path, const char *name, struct egress_addr *out, size_t max,
                         size_t *n, char *why, size_t len)
{
    autofree char *buf = NULL;
    autofclose FILE *f = fd >= 0 ? resolve_hosts_open(fd, &buf) : NULL;
    if (f == NULL) {
        snprintf(why, len, "%s: cannot read the hosts file %s", name, path);
        return -1;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f) != NULL) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *save = NULL, *addr = strtok_r(line, " \t\r\n", &save);
        struct egress_addr a;
        if (addr == NULL || egress_addr_parse(addr, &a) < 0) continue;
        for (char *h = strtok_r(NULL, " \t\r\n", &save); h; h = strtok_r(NULL, " \t\r\n", &save))
            if (strcasecmp(h, name) == 0) resolve_add(out, max, n, &a);
    }
    if (*n == 0) snprintf(why, len, "%s: no such name (hosts file %s)", name, path);
    return *n ? 0 : -1;
}

int egress_resolve(const struct egress_ctx *x, const char *name, struct egress_addr *out, size_t max, size_t *n,
                   char *why, size_t len)
{
    *n = 0;
    if (x->hosts_path != NULL) return resolve_hosts(x->hosts_fd, x->hosts_path, name, out, max, n, why, len);
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
    int rc = getaddrinfo(name, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(why, len, "%s: %s", name, gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
        struct egress_addr a = {0};
        if (ai->ai_family == AF_INET) {
            a.b[10] = a.b[11] = 0xff;
            memcpy(a.b + 12, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
        } else if (ai->ai_family == AF_INET6) {
            memcpy(a.b, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
        } else {
            continue;
        }
        resolve_add(out, max, n, &a);
    }
    freeaddrinfo(res);
    if (*n == 0) snprintf(why, len, "%s: no address", name);
    return *n ? 0 : -1;
}
