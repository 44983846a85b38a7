/* The features document (runtime-spec features.md): what this build of
 * brig can enforce on this host, probed at call time rather than
 * hard-coded, so a caller never asks for something brig would only refuse
 * at create. In the library (not the CLI): the CLI's include path has
 * runtime/ first, where linux/seccomp.h would shadow the kernel's. */
#include <ctype.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "brig-config.h"
#include "brig-commit.h"
#include "features.h"
#include "../config/json.h"
#include "../config/mount_options.h"
#include "../config/spec.h"
#include "../linux/caps.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* Every option runc/crun document; only those our parser accepts are
 * reported (mount_options_parse is the authority). "idmap"/"ridmap": bind
 * mounts only (linux/rootfs/mounts_idmap.c), see mountExtensions. */
static const char *const feature_mount_options[] = {
    "async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec",
    "idmap", "iversion", "lazytime", "loud", "mand", "noatime", "nodev", "nodiratime", "noexec",
    "noiversion", "nolazytime", "nomand", "norelatime", "nostrictatime", "nosuid",
    "nosymfollow", "private", "rbind", "relatime", "remount", "ridmap", "ro", "rprivate", "rshared",
    "rslave", "runbindable", "rw", "shared", "silent", "slave", "strictatime", "suid",
    "symfollow", "sync", "unbindable", "tmpcopyup",
    "rro", "rrw", "rnosuid", "rsuid", "rnodev", "rdev", "rnoexec", "rexec", "rnodiratime",
    "rdiratime", "rrelatime", "rnorelatime", "rnoatime", "ratime", "rstrictatime",
    "rnostrictatime", "rnosymfollow", "rsymfollow",
};

static void features_hooks(struct brig_jw *w)
{
    jw_key(w, "hooks");
    jw_arr_open(w);
    for (int k = 0; k < BRIG_HOOK_KIND_COUNT; k++) jw_str(w, spec_hook_name((enum brig_hook_kind)k));
    jw_arr_close(w);
}

static void features_mount_options(struct brig_jw *w)
{
    jw_key(w, "mountOptions");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(feature_mount_options); i++) {
        char *opt[] = { (char *)feature_mount_options[i], NULL };
        struct brig_mount_opts mo = {0};
        autoerr struct brig_error *e = NULL;
        if (mount_options_parse(opt, 1, NULL, "mountOptions", &mo, &e) == 0) jw_str(w, opt[0]);
        mount_opts_free(&mo);
    }
    jw_arr_close(w);
}

static void features_namespaces(struct brig_jw *w)
{
    /* /proc/self/ns entry -> OCI name: present means this kernel has it. */
    static const struct { const char *proc, *oci; } ns[] = {
        { "cgroup", "cgroup" }, { "ipc", "ipc" }, { "mnt", "mount" }, { "net", "network" },
        { "pid", "pid" }, { "time", "time" }, { "user", "user" }, { "uts", "uts" },
    };
    jw_key(w, "namespaces");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(ns); i++) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i].proc);
        if (access(path, F_OK) == 0) jw_str(w, ns[i].oci);
    }
    jw_arr_close(w);
}

static void features_capabilities(struct brig_jw *w)
{
    jw_key(w, "capabilities");
    jw_arr_open(w);
    int last = caps_last_cap();
    for (int c = 0; c <= last; c++) {
        autofree char *cname = NULL;
        char *n = cap_to_name((cap_value_t)c);
        if (n == NULL) continue;
        cname = brig_strdup(n);
        cap_free(n);
        /* libcap prints caps it has no name for as numbers: brig could not
         * parse those from a config, so they are not offered. */
        if (strncasecmp(cname, "cap_", 4) != 0) continue;
        for (char *p = cname; *p != '\0'; p++) *p = (char)toupper((unsigned char)*p);
        if (caps_from_name(cname) == c) jw_str(w, cname);
    }
    jw_arr_close(w);
}

/* Is a cgroup (v1) or cgroup2 filesystem mounted under /sys/fs/cgroup? */
static bool features_has_cgroup_mount(bool v2)
{
    autofclose FILE *f = fopen("/proc/self/mounts", "re");
    if (f == NULL) return false;
    char line[4096];
    while (fgets(line, sizeof(line), f) != NULL) {
        char dev[1024], mnt[1024], type[64];
        if (sscanf(line, "%1023s %1023s %63s", dev, mnt, type) != 3) continue;
        if (strcmp(type, v2 ? "cgroup2" : "cgroup") == 0 && brig_str_has_prefix(mnt, "/sys/fs/cgroup"))
            return true;
    }
    return false;
}

static void features_cgroup(struct brig_jw *w)
{
    jw_key(w, "cgroup");
    jw_obj_open(w);
    jw_kbool(w, "v1", features_has_cgroup_mount(false));
    jw_kbool(w, "v2", features_has_cgroup_mount(true));
    /* --systemd-cgroup only changes how linux.cgroupsPath is read; brig
     * does not ask systemd for a scope. */
    jw_kbool(w, "systemd", false);
    jw_kbool(w, "systemdUser", false);
    jw_kbool(w, "rdma", access("/sys/fs/cgroup/rdma", F_OK) == 0);
    jw_obj_close(w);
}

/* seccomp(SET_MODE_FILTER, flag, NULL) fails with EFAULT (bad pointer)
 * when the flag is known and EINVAL when not: nothing is installed. */
static bool features_seccomp_flag_ok(unsigned long flag)
{
    /* WAIT_KILLABLE_RECV is only valid together with NEW_LISTENER. */
    if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL);
    return r < 0 && errno == EFAULT;
}

static void features_seccomp(struct brig_jw *w)
{
    static const char *const ops[] = { "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
                                       "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ" };
    static const char *const archs[] = {
        "SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_ARM", "SCMP_ARCH_AARCH64",
        "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_M68K", "SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64",
        "SCMP_ARCH_MIPS64N32", "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32",
        "SCMP_ARCH_PPC", "SCMP_ARCH_PPC64", "SCMP_ARCH_PPC64LE", "SCMP_ARCH_S390", "SCMP_ARCH_S390X",
        "SCMP_ARCH_SH", "SCMP_ARCH_SHEB", "SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",
    };
    static const struct { const char *name; unsigned long flag; } flags[] = {
        { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
        { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
        { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
        { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
    };
    unsigned int api = seccomp_api_get();
    jw_key(w, "seccomp");
    jw_obj_open(w);
    jw_kbool(w, "enabled", true);
    jw_key(w, "actions");
    jw_arr_open(w);
    jw_str(w, "SCMP_ACT_ALLOW");
    jw_str(w, "SCMP_ACT_ERRNO");
    jw_str(w, "SCMP_ACT_KILL");
    if (api >= 3) jw_str(w, "SCMP_ACT_KILL_PROCESS");
    jw_str(w, "SCMP_ACT_KILL_THREAD");
    if (api >= 3) jw_str(w, "SCMP_ACT_LOG");
    if (api >= 5) jw_str(w, "SCMP_ACT_NOTIFY");
    jw_str(w, "SCMP_ACT_TRACE");
    jw_str(w, "SCMP_ACT_TRAP");
    jw_arr_close(w);
    jw_key(w, "operators");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(ops); i++) jw_str(w, ops[i]);
    jw_arr_close(w);
    jw_key(w, "archs");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(archs); i++) {
        /* libseccomp names: "SCMP_ARCH_X86_64" -> "x86_64". */
        char lower[32];
        const char *s = archs[i] + strlen("SCMP_ARCH_");
        size_t j = 0;
        for (; s[j] != '\0' && j + 1 < sizeof(lower); j++) lower[j] = (char)tolower((unsigned char)s[j]);
        lower[j] = '\0';
        if (seccomp_arch_resolve_name(lower) != 0) jw_str(w, archs[i]);
    }
    jw_arr_close(w);
    jw_key(w, "knownFlags");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(flags); i++) jw_str(w, flags[i].name);
    jw_arr_close(w);
    jw_key(w, "supportedFlags");
    jw_arr_open(w);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(flags); i++)
        if (features_seccomp_flag_ok(flags[i].flag)) jw_str(w, flags[i].name);
    jw_arr_close(w);
    jw_obj_close(w);
}

static bool features_apparmor_enabled(void)
{
    autofree char *v = NULL;
    if (brig_read_file("/sys/module/apparmor/parameters/enabled", 64, &v, NULL, NULL) < 0) return false;
    return v[0] == 'Y';
}

static void features_linux(struct brig_jw *w)
{
    jw_key(w, "linux");
    jw_obj_open(w);
    features_namespaces(w);
    features_capabilities(w);
    features_cgroup(w);
    features_seccomp(w);
    /* The LSMs are as enabled as the host has them: spec_check_supported
     * refuses a profile or label for one the host lacks. */
    jw_key(w, "apparmor");
    jw_obj_open(w);
    jw_kbool(w, "enabled", features_apparmor_enabled());
    jw_obj_close(w);
    jw_key(w, "selinux");
    jw_obj_open(w);
    jw_kbool(w, "enabled", access("/sys/fs/selinux/enforce", F_OK) == 0);
    jw_obj_close(w);
    /* Refused by spec_check_supported: brig does not implement them. */
    jw_key(w, "intelRdt");
    jw_obj_open(w);
    jw_kbool(w, "enabled", false);
    jw_obj_close(w);
    jw_key(w, "netDevices");
    jw_obj_open(w);
    jw_kbool(w, "enabled", false);
    jw_obj_close(w);
    jw_key(w, "memoryPolicy");
    jw_obj_open(w);
    jw_key(w, "modes");
    jw_arr_open(w);
    for (size_t i = 0; spec_mempolicy_mode_name(i) != NULL; i++) jw_str(w, spec_mempolicy_mode_name(i));
    jw_arr_close(w);
    jw_key(w, "flags");
    jw_arr_open(w);
    for (size_t i = 0; spec_mempolicy_flag_name(i) != NULL; i++) jw_str(w, spec_mempolicy_flag_name(i));
    jw_arr_close(w);
    jw_obj_close(w);
    /* linux/rootfs/mounts_idmap.c: bind mounts, by mount_setattr. */
    jw_key(w, "mountExtensions");
    jw_obj_open(w);
    jw_key(w, "idmap");
    jw_obj_open(w);
    jw_kbool(w, "enabled", true);
    jw_obj_close(w);
    jw_obj_close(w);
    jw_obj_close(w);
}

char *features_json(bool pretty)
{
    autojw struct brig_jw *w = jw_new(pretty);
    const struct scmp_version *v = seccomp_version();
    char ver[64], api[16];
    snprintf(ver, sizeof(ver), "%u.%u.%u", v->major, v->minor, v->micro);
    snprintf(api, sizeof(api), "%u", seccomp_api_get());
    jw_obj_open(w);
    jw_kstr(w, "ociVersionMin", "1.0.0");
    jw_kstr(w, "ociVersionMax", BRIG_OCI_VERSION);
    features_hooks(w);
    features_mount_options(w);
    features_linux(w);
    jw_key(w, "annotations");
    jw_obj_open(w);
    jw_kstr(w, "io.github.seccomp.libseccomp.version", ver);
    jw_kstr(w, "io.github.seccomp.libseccomp.api_level", api);
    jw_kstr(w, "io.github.seccomp.libseccomp.enabled", "true");
    jw_kstr(w, "org.opencontainers.brig.version", BRIG_VERSION);
    jw_kstr(w, "org.opencontainers.brig.commit", BRIG_COMMIT);
    jw_kstr(w, "org.opencontainers.brig.checkpoint.enabled", "false");
    jw_obj_close(w);
    jw_obj_close(w);
    return brig_asprintf("%s\n", jw_text(w, NULL));
}
