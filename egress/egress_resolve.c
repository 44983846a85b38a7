/* Names are resolved by the proxy, never by the container (it has no
 * DNS): getaddrinfo, or for tests a hosts file named by BRIG_EGRESS_HOSTS
 * (docs/egress.md), read at each lookup so a test can make a name change
 * its address between two connections (rebinding). A name the hosts file
 * lacks does not resolve: tests send nothing to a real resolver. */
#include "egress_internal.h"

#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "../runtime/util/cleanup.h"

static void resolve_add(struct egress_addr *out, size_t max, size_t *n, const struct egress_addr *a)
{
    for (size_t i = 0; i < *n; i++)
        if (memcmp(out[i].b, a->b, 16) == 0) return;
    if (*n < max) out[(*n)++] = *a;
}

static int resolve_hosts(const char *path, const char *name, struct egress_addr *out, size_t max, size_t *n,
                         char *why, size_t len)
{
    autofclose FILE *f = fopen(path, "re");
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

int egress_resolve(const char *hosts_path, const char *name, struct egress_addr *out, size_t max, size_t *n,
                   char *why, size_t len)
{
    *n = 0;
    if (hosts_path != NULL) return resolve_hosts(hosts_path, name, out, max, n, why, len);
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
