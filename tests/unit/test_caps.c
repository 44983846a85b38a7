/* caps_from_name, caps_last_cap, and caps_plan + caps_plan_apply in a forked child, judged
 * by the child's /proc/self/status. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/capability.h>

#include "linux/caps.h"
#include "linux/identity.h"
#include "util/error.h"
#include "sec_child.h"

#define BIT(c) (UINT64_C(1) << (c))
/* linux/capability.h numbers */
#define T_CAP_CHOWN 0
#define T_CAP_KILL 5
#define T_CAP_SETPCAP 8
#define T_CAP_NET_BIND_SERVICE 10
#define T_CAP_NET_RAW 13
#define T_CAP_SYS_ADMIN 21

static void need_root(void)
{
    if (geteuid() != 0) cr_skip_test("needs root (capabilities are changed for real)");
}

Test(caps, from_name)
{
    cr_assert_eq(caps_from_name("CAP_SYS_ADMIN"), T_CAP_SYS_ADMIN);
    cr_assert_eq(caps_from_name("cap_sys_admin"), T_CAP_SYS_ADMIN);
    cr_assert_eq(caps_from_name("Cap_Chown"), T_CAP_CHOWN);
    cr_assert_eq(caps_from_name("CAP_NET_BIND_SERVICE"), T_CAP_NET_BIND_SERVICE);
    cr_assert_eq(caps_from_name("SYS_ADMIN"), -1, "the CAP_ prefix is required");
    cr_assert_eq(caps_from_name("12"), -1, "numbers are not names");
    cr_assert_eq(caps_from_name("CAP_12"), -1);
    cr_assert_eq(caps_from_name("CAP_"), -1);
    cr_assert_eq(caps_from_name("CAP_NOT_A_CAP"), -1);
    cr_assert_eq(caps_from_name(""), -1);
}

Test(caps, last_cap)
{
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
    if (f == NULL) cr_skip_test("no /proc/sys/kernel/cap_last_cap");
    int v = -1;
    cr_assert_eq(fscanf(f, "%d", &v), 1);
    fclose(f);
    cr_assert_eq(caps_last_cap(), v);
    cr_assert_eq(caps_last_cap(), v, "cached value");
}

/* "CapInh CapPrm CapEff CapBnd CapAmb" of the calling process. */
static void status_caps(int fd)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    if (f == NULL) return;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "Cap", 3) == 0) {
            char name[16];
            unsigned long long v;
            if (sscanf(line, "%15[^:]:%llx", name, &v) == 2) sec_out(fd, "%s=%llx ", name, v);
        }
    }
    fclose(f);
}

struct apply_arg {
    struct brig_caps caps;
    struct brig_user *user;   /* identity_apply first if set */
};

static int apply_child(void *arg, int fd)
{
    struct apply_arg *a = arg;
    struct brig_error *err = NULL;
    struct caps_plan pl;
    /* As proc_confine: planned before the identity switch, applied after. */
    int rc = caps_plan(&a->caps, &pl, &err);
    if (rc == 0 && a->user != NULL && identity_apply(a->user, false, &err) < 0) {
        sec_out(fd, "identity: %s", err->msg);
        return 1;
    }
    if (rc < 0 || caps_plan_apply(&pl, &err) < 0) {
        sec_out(fd, "ERR %s|", err->msg);
        status_caps(fd);
        return 2;
    }
    status_caps(fd);
    return 0;
}

static struct brig_caps caps_of(uint64_t bnd, uint64_t eff, uint64_t inh, uint64_t prm,
                                uint64_t amb)
{
    struct brig_caps c = { .present = { true, true, true, true, true } };
    c.sets[BRIG_CAP_BOUNDING] = bnd;
    c.sets[BRIG_CAP_EFFECTIVE] = eff;
    c.sets[BRIG_CAP_INHERITABLE] = inh;
    c.sets[BRIG_CAP_PERMITTED] = prm;
    c.sets[BRIG_CAP_AMBIENT] = amb;
    return c;
}

Test(caps, apply_sets)
{
    need_root();
    struct apply_arg a = {
        .caps = caps_of(BIT(T_CAP_CHOWN) | BIT(T_CAP_KILL) | BIT(T_CAP_NET_BIND_SERVICE),
                        BIT(T_CAP_CHOWN),
                        BIT(T_CAP_NET_BIND_SERVICE),
                        BIT(T_CAP_CHOWN) | BIT(T_CAP_NET_BIND_SERVICE),
                        BIT(T_CAP_NET_BIND_SERVICE)),
    };
    /* A bit above cap_last_cap is ignored, not an error. */
    a.caps.sets[BRIG_CAP_BOUNDING] |= BIT(63);
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "CapInh=400 CapPrm=401 CapEff=1 CapBnd=421 CapAmb=400 ");
}

Test(caps, apply_empty_drops_everything)
{
    need_root();
    struct apply_arg a = { .caps = caps_of(0, 0, 0, 0, 0) };
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "CapInh=0 CapPrm=0 CapEff=0 CapBnd=0 CapAmb=0 ");
}

/* An ambient cap the kernel will not raise (not inheritable: `runc spec`'s
 * default) is left out with a warning, as runc and crun do: the process
 * runs with less. */
Test(caps, ambient_not_inheritable_is_left_out)
{
    need_root();
    struct apply_arg a = {
        .caps = caps_of(BIT(T_CAP_NET_RAW) | BIT(T_CAP_KILL), BIT(T_CAP_NET_RAW), 0,
                        BIT(T_CAP_NET_RAW), BIT(T_CAP_NET_RAW) | BIT(T_CAP_KILL)),
    };
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "CapInh=0 CapPrm=2000 CapEff=2000 CapBnd=2020 CapAmb=0 ");
}

/* A cap this process does not hold cannot be granted: left out of every
 * set, never an error, never more than it had. */
static int apply_without_admin_child(void *arg, int fd)
{
    if (prctl(PR_CAPBSET_DROP, T_CAP_SYS_ADMIN, 0, 0, 0) < 0) return 3;
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct d[2];
    if (capget(&hdr, d) < 0) return 3;
    d[0].permitted &= ~(1U << T_CAP_SYS_ADMIN);
    d[0].effective &= ~(1U << T_CAP_SYS_ADMIN);
    d[0].inheritable &= ~(1U << T_CAP_SYS_ADMIN);
    if (capset(&hdr, d) < 0) return 3;
    return apply_child(arg, fd);
}

Test(caps, ungrantable_cap_is_left_out)
{
    need_root();
    uint64_t want = BIT(T_CAP_SYS_ADMIN) | BIT(T_CAP_CHOWN);
    struct apply_arg a = { .caps = caps_of(want, want, want, want, want) };
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_without_admin_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "CapInh=1 CapPrm=1 CapEff=1 CapBnd=1 CapAmb=1 ");
}

/* A config whose effective set asks for more than it permits is wrong in
 * itself: refused with the field named, before the bounding set changes. */
Test(caps, effective_must_be_permitted)
{
    need_root();
    struct apply_arg a = { .caps = caps_of(BIT(T_CAP_NET_RAW), BIT(T_CAP_SYS_ADMIN), 0, 0, 0) };
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 2, "child: %s", r.out);
    cr_assert(strstr(r.out, "process.capabilities.effective: CAP_SYS_ADMIN is not in "
                     "process.capabilities.permitted") != NULL, "%s", r.out);
    /* Untouched: the child still has the bounding set it was born with. */
    cr_assert(strstr(r.out, "CapBnd=2020 ") == NULL, "%s", r.out);
    cr_assert(strstr(r.out, "CapBnd=1ff") != NULL || strstr(r.out, "CapBnd=3ff") != NULL, "%s", r.out);
}

/* The container's usual path: switch to a non-root uid with PR_SET_KEEPCAPS,
 * then caps_plan_apply still grants what was asked. */
Test(caps, apply_after_identity_switch)
{
    need_root();
    struct brig_user u = { .uid = 1000, .gid = 1000 };
    struct apply_arg a = {
        .caps = caps_of(BIT(T_CAP_NET_BIND_SERVICE) | BIT(T_CAP_SETPCAP),
                        BIT(T_CAP_NET_BIND_SERVICE), 0, BIT(T_CAP_NET_BIND_SERVICE), 0),
        .user = &u,
    };
    struct sec_child r;
    cr_assert_eq(sec_child_run(apply_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "CapInh=0 CapPrm=400 CapEff=400 CapBnd=500 CapAmb=0 ");
}
