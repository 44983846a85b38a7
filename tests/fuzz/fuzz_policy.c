/* libFuzzer target over the policy file parser and apply: any input either
 * fails to parse (with an error) or gives a policy that apply can meet,
 * after which check passes (apply verifies that itself and reports
 * "still violates" otherwise: that is a bug here) and apply is idempotent. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../policy/policy.h"
#include "util/error.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static const char *config =
    "{\"ociVersion\":\"1.2.1\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0},"
    "\"env\":[\"PATH=/bin\",\"GITHUB_TOKEN=x\",\"HOME=/\"],\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":9,\"hard\":99999}],"
    "\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\",\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"]}},"
    "\"root\":{\"path\":\"rootfs\"},\"hostname\":\"h\","
    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\",\"options\":[\"rw\"]},"
    "{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"size=50%\"]},"
    "{\"destination\":\"/s\",\"type\":\"bind\",\"source\":\"/var/run/docker.sock\",\"options\":[\"rbind\"]}],"
    "\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/h\"}]},"
    "\"linux\":{\"namespaces\":[{\"type\":\"pid\",\"path\":\"/proc/1/ns/pid\"},{\"type\":\"network\"}],"
    "\"sysctl\":{\"net.ipv4.ip_forward\":\"1\"},\"resources\":{\"memory\":{\"limit\":99999999999},"
    "\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        brig_log_init("/dev/null", BRIG_LOG_TEXT, false);
        quiet = true;
    }
    struct brig_policy *p = NULL;
    struct brig_error *err = NULL;
    if (policy_parse((const char *)data, size, &p, &err) < 0) {
        CHECK(err != NULL && err->msg[0] != '\0');
        brig_error_free(err);
        return 0;
    }
    /* A seccomp file would make the target read arbitrary host paths. */
    p->seccomp.profile = POLICY_SECCOMP_DEFAULT;
    struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
    char *once = NULL, *twice = NULL;
    if (policy_apply(p, config, strlen(config), &o, &once, &err) < 0) {
        if (strstr(err->msg, "still violates") != NULL) {
            fprintf(stderr, "%s\n", err->msg);     /* which rule apply could not meet */
            abort();
        }
        brig_error_free(err);
        policy_free(p);
        return 0;
    }
    CHECK(policy_apply(p, once, strlen(once), &o, &twice, &err) == 0);
    CHECK(strcmp(once, twice) == 0);
    free(once);
    free(twice);
    policy_free(p);
    return 0;
}
