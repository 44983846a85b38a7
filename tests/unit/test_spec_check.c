/* spec_check_supported: what brig cannot enforce is refused, naming the
 * field; the LSM checks follow what this host really has. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "config/spec.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/fs.h"

#define PROC "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]"
#define DOC(...) "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"}, " __VA_ARGS__ "}"

static int check(const char *json, struct brig_error **err)
{
    autospec struct brig_spec *s = NULL;
    autoerr struct brig_error *perr = NULL;
    cr_assert_eq(spec_parse(json, strlen(json), "/b", &s, &perr), 0, "%s: %s", json,
                 perr ? perr->msg : "");
    return spec_check_supported(s, err);
}

struct unsupported {
    const char *json;
    const char *expect;
};

static const struct unsupported cases[] = {
    { "{\"ociVersion\": \"1.2.0\", " PROC "}}", "root: required to create a container" },
    { DOC("\"hostname\": \"h\""), "process: required to create a container" },
    { DOC(PROC "}, \"linux\": {\"intelRdt\": {\"closID\": \"c\"}}"), "linux.intelRdt: not supported" },
    { DOC(PROC "}, \"linux\": {\"netDevices\": {\"eth0\": {}}}"), "linux.netDevices: not supported" },
    { DOC(PROC "}, \"linux\": {\"personality\": {\"domain\": \"LINUX\", \"flags\": [\"X\"]}}"),
      "linux.personality.flags: not supported" },
    { DOC(PROC ", \"execCPUAffinity\": {\"final\": \"0\"}}"), "process.execCPUAffinity: not supported" },
    { DOC(PROC "}, \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/s\"}}"),
      "linux.seccomp.listenerPath: seccomp notification is not supported" },
    { DOC(PROC "}, \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_NOTIFY\"}}"),
      "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY is not supported" },
    { DOC(PROC "}, \"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
          "{\"names\": [\"a\"], \"action\": \"SCMP_ACT_KILL\"}, {\"names\": [\"b\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}}"),
      "linux.seccomp.syscalls[1].action: SCMP_ACT_NOTIFY is not supported" },
    { DOC(PROC "}, \"mounts\": [{\"destination\": \"/a\"}, {\"destination\": \"/m\", \"type\": \"tmpfs\","
          " \"source\": \"/s\", \"options\": [\"idmap\"], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1,"
          " \"size\": 1}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1, \"size\": 1}]}]"),
      "mounts[1].options: only bind mounts can be idmapped by brig (type tmpfs)" },
    { DOC(PROC "}, \"mounts\": [{\"destination\": \"/m\", \"source\": \"/s\", \"options\": [\"bind\", \"idmap\"]}]"),
      "mounts[0].options: idmap without mounts[0].uidMappings uses the container's user namespace" },
    { DOC(PROC "}, \"mounts\": [{\"destination\": \"/m\", \"type\": \"tmpfs\", \"source\": \"/s\", "
          "\"options\": [\"idmap=uids=0-1-1;gids=0-1-1\"]}]"),
      "mounts[0].options: only bind mounts can be idmapped by brig (type tmpfs)" },
    { DOC(PROC "}, \"mounts\": [{\"destination\": \"/m\", \"source\": \"/s\", "
          "\"options\": [\"bind\", \"idmap=uids=0-1-1#0-2-1;gids=0-1-1\"]}]"),
      "mounts[0].options (idmap uids=)[1]: overlaps entry 0" },
};

Test(spec_check, refuses_unsupported)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct unsupported *c = &cases[i];
        autoerr struct brig_error *err = NULL;
        int r = check(c->json, &err);
        cr_expect_eq(r, -1, "accepted: %s", c->json);
        if (r == 0) continue;
        cr_expect(strstr(err->msg, c->expect) != NULL, "got: %s\nwant: %s", err->msg, c->expect);
    }
}

Test(spec_check, plain_config_passes)
{
    autoerr struct brig_error *err = NULL;
    int r = check(DOC(PROC ", \"apparmorProfile\": \"\"}, \"mounts\": [{\"destination\": \"/proc\", "
                      "\"type\": \"proc\", \"source\": \"proc\"}], \"linux\": {\"namespaces\": [{\"type\": "
                      "\"pid\"}], \"personality\": {\"domain\": \"LINUX\"}, \"seccomp\": {\"defaultAction\":"
                      " \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"x\"], \"action\": \"SCMP_ACT_ALLOW\"}]}}"),
                  &err);
    cr_assert_eq(r, 0, "%s", err ? err->msg : "");
}

static bool host_apparmor(void)
{
    autofree char *s = NULL;
    return brig_read_file("/sys/module/apparmor/parameters/enabled", 64, &s, NULL, NULL) == 0 &&
           s[0] == 'Y';
}

Test(spec_check, apparmor_follows_host)
{
    autoerr struct brig_error *err = NULL;
    int r = check(DOC(PROC ", \"apparmorProfile\": \"acme\"}"), &err);
    if (host_apparmor()) {
        cr_assert_eq(r, 0, "%s", err ? err->msg : "");
    } else {
        cr_assert_eq(r, -1);
        cr_assert(strstr(err->msg, "process.apparmorProfile: AppArmor is not enabled") != NULL,
                  "%s", err->msg);
    }
}

Test(spec_check, selinux_follows_host)
{
    bool selinux = access("/sys/fs/selinux/enforce", F_OK) == 0;
    autoerr struct brig_error *e1 = NULL, *e2 = NULL;
    int r1 = check(DOC(PROC ", \"selinuxLabel\": \"system_u:system_r:container_t:s0\"}"), &e1);
    int r2 = check(DOC(PROC "}, \"linux\": {\"mountLabel\": \"system_u:object_r:container_file_t:s0\"}"),
                   &e2);
    if (selinux) {
        cr_assert_eq(r1, 0);
        cr_assert_eq(r2, 0);
    } else {
        cr_assert_eq(r1, -1);
        cr_assert(strstr(e1->msg, "process.selinuxLabel: SELinux is not enabled") != NULL, "%s",
                  e1->msg);
        cr_assert_eq(r2, -1);
        cr_assert(strstr(e2->msg, "linux.mountLabel: SELinux is not enabled") != NULL, "%s",
                  e2->msg);
    }
}
