/* What a container behind the proxy is told: the proxy variables, in upper
 * and lower case (curl reads only http_proxy for plain HTTP). Data only,
 * so that the policy code (apply, and its fuzz target) links without the
 * supervisor. */
#include <stdbool.h>
#include <string.h>

#include "egress.h"

const char *const egress_env[] = {
    "HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
    "HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
    "ALL_PROXY=socks5h://127.0.0.1:1080", "all_proxy=socks5h://127.0.0.1:1080",
    "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
    NULL,
};

bool egress_env_name(const char *name)
{
    size_t n = strcspn(name, "=");
    for (size_t i = 0; egress_env[i]; i++)
        if (strncmp(egress_env[i], name, n) == 0 && egress_env[i][n] == '=') return true;
    return false;
}
