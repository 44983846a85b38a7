/* linux.seccomp (OCI runtime-spec config-linux.md, "Seccomp").
 *
 * The filter is compiled in the parent with libseccomp so that every config
 * error is reported before a process exists; the child only hands the raw
 * BPF to seccomp(2). libseccomp is told not to set no_new_privs (brig does
 * that itself, in the order the spec asks) and its filter flags are only
 * used to check what the kernel supports: the flags we pass to seccomp(2)
 * ourselves are kept in struct brig_bpf. */
#include "seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

/* The kernel refuses longer programs (BPF_MAXINSNS). */
#define SECCOMP_MAX_INSNS 4096
/* errnoRet travels in the 16 data bits of SECCOMP_RET_ERRNO and the kernel
 * clamps it to MAX_ERRNO; anything larger would silently mean another errno. */
#define SECCOMP_MAX_ERRNO 4095

static void seccomp_ctx_releasep(scmp_filter_ctx *ctx)
{
    if (*ctx != NULL) seccomp_release(*ctx);
    *ctx = NULL;
}
#define autoscmp __attribute__((cleanup(seccomp_ctx_releasep)))

static const char *seccomp_action_name(enum brig_scmp_action a)
{
    switch (a) {
    case BRIG_SCMP_KILL: return "SCMP_ACT_KILL";
    case BRIG_SCMP_KILL_PROCESS: return "SCMP_ACT_KILL_PROCESS";
    case BRIG_SCMP_KILL_THREAD: return "SCMP_ACT_KILL_THREAD";
    case BRIG_SCMP_TRAP: return "SCMP_ACT_TRAP";
    case BRIG_SCMP_ERRNO: return "SCMP_ACT_ERRNO";
    case BRIG_SCMP_TRACE: return "SCMP_ACT_TRACE";
    case BRIG_SCMP_ALLOW: return "SCMP_ACT_ALLOW";
    case BRIG_SCMP_LOG: return "SCMP_ACT_LOG";
    case BRIG_SCMP_NOTIFY: return "SCMP_ACT_NOTIFY";
    }
    return "?";
}

/* ALLOW and LOG let the syscall run; everything else stops it somehow. */
static bool seccomp_action_allows(enum brig_scmp_action a)
{
    return a == BRIG_SCMP_ALLOW || a == BRIG_SCMP_LOG;
}

/* Turn an action (+ errnoRet) into libseccomp's value. field is the JSON
 * path of the action's object ("linux.seccomp" or "...syscalls[3]") and
 * errno_field the name of its errno property there. */
static int seccomp_action_value(enum brig_scmp_action a, bool has_errno, uint32_t errno_ret,
                                const char *field, const char *errno_field, uint32_t *out,
                                struct brig_error **err)
{
    if (has_errno && a != BRIG_SCMP_ERRNO && a != BRIG_SCMP_TRACE)
        return brig_failx(err, "%s.%s: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
                          field, errno_field, seccomp_action_name(a));
    if (has_errno && errno_ret > SECCOMP_MAX_ERRNO)
        return brig_failx(err, "%s.%s: %u is out of range (0-%d)", field, errno_field, errno_ret,
                          SECCOMP_MAX_ERRNO);
    uint32_t e = has_errno ? errno_ret : EPERM;

    switch (a) {
    case BRIG_SCMP_KILL: *out = SCMP_ACT_KILL; return 0;
    case BRIG_SCMP_KILL_PROCESS: *out = SCMP_ACT_KILL_PROCESS; return 0;
    case BRIG_SCMP_KILL_THREAD: *out = SCMP_ACT_KILL_THREAD; return 0;
    case BRIG_SCMP_TRAP: *out = SCMP_ACT_TRAP; return 0;
    case BRIG_SCMP_ERRNO: *out = SCMP_ACT_ERRNO(e); return 0;
    case BRIG_SCMP_TRACE: *out = SCMP_ACT_TRACE(e); return 0;
    case BRIG_SCMP_ALLOW: *out = SCMP_ACT_ALLOW; return 0;
    case BRIG_SCMP_LOG: *out = SCMP_ACT_LOG; return 0;
    case BRIG_SCMP_NOTIFY: *out = SCMP_ACT_NOTIFY; return 0;
    }
    return brig_failx(err, "%s: unknown action %d", field, (int)a);
}

static int seccomp_op_value(enum brig_scmp_op op, enum scmp_compare *out)
{
    switch (op) {
    case BRIG_SCMP_CMP_NE: *out = SCMP_CMP_NE; return 0;
    case BRIG_SCMP_CMP_LT: *out = SCMP_CMP_LT; return 0;
    case BRIG_SCMP_CMP_LE: *out = SCMP_CMP_LE; return 0;
    case BRIG_SCMP_CMP_EQ: *out = SCMP_CMP_EQ; return 0;
    case BRIG_SCMP_CMP_GE: *out = SCMP_CMP_GE; return 0;
    case BRIG_SCMP_CMP_GT: *out = SCMP_CMP_GT; return 0;
    case BRIG_SCMP_CMP_MASKED_EQ: *out = SCMP_CMP_MASKED_EQ; return 0;
    }
    return -1;
}

/* "SCMP_ARCH_X86_64" -> libseccomp's token for "x86_64"; 0 if unknown. */
static uint32_t seccomp_arch_token(const char *name)
{
    if (!brig_str_has_prefix(name, "SCMP_ARCH_")) return 0;
    char lower[32];
    const char *s = name + strlen("SCMP_ARCH_");
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(lower)) return 0;
    for (size_t i = 0; i <= n; i++)
        lower[i] = (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] - 'A' + 'a' : s[i]);
    return seccomp_arch_resolve_name(lower);
}

/* Can a process on this kernel make system calls of arch `token`? The
 * native one and its compat ones only: seccomp_data.arch is never another
 * (a foreign binary under qemu-user makes native calls). A section for
 * another arch (Docker-style profiles list aarch64 beside x86_64) is code
 * no call reaches; it would only lengthen every load of the filter, and
 * the kernel's per-arch action cache built at each. Where the compat
 * arches are not known here, every listed arch is kept. */
static bool seccomp_arch_reachable(uint32_t token)
{
    uint32_t native = seccomp_arch_native();
    if (token == native) return true;
    switch (native) {
    case SCMP_ARCH_X86_64: return token == SCMP_ARCH_X86 || token == SCMP_ARCH_X32;
    case SCMP_ARCH_AARCH64: return token == SCMP_ARCH_ARM;
    case SCMP_ARCH_S390X: return token == SCMP_ARCH_S390;
    case SCMP_ARCH_PPC64: return token == SCMP_ARCH_PPC;
    default: return true;
    }
}

static int seccomp_add_arches(scmp_filter_ctx ctx, const struct brig_seccomp *sc,
                              struct brig_error **err)
{
    for (size_t i = 0; i < sc->n_architectures; i++) {
        const char *name = sc->architectures[i];
        uint32_t token = seccomp_arch_token(name);
        if (token == 0)
            return brig_failx(err, "linux.seccomp.architectures[%zu]: architecture \"%s\" is not "
                              "supported by libseccomp %u.%u.%u", i, name, SCMP_VER_MAJOR,
                              SCMP_VER_MINOR, SCMP_VER_MICRO);
        if (!seccomp_arch_reachable(token)) {
            /* Still refused where libseccomp refuses it beside the native
             * arch (another byte order), as before and as runc does. */
            scmp_filter_ctx probe = seccomp_init(SCMP_ACT_ALLOW);
            int r = probe != NULL ? seccomp_arch_add(probe, token) : -ENOMEM;
            if (probe != NULL) seccomp_release(probe);
            if (r < 0 && r != -EEXIST) return brig_fail(err, -r, "linux.seccomp.architectures[%zu] (%s)", i, name);
            brig_debug("seccomp: linux.seccomp.architectures[%zu] (%s): no call of it reaches this "
                       "kernel, no section compiled", i, name);
            continue;
        }
        int r = seccomp_arch_add(ctx, token);
        if (r < 0 && r != -EEXIST) /* EEXIST: the native arch is always there */
            return brig_fail(err, -r, "linux.seccomp.architectures[%zu] (%s)", i, name);
    }
    return 0;
}

/* The kernel checks the flags before it reads the program: EFAULT on a
 * NULL program means the flags are known (libseccomp probes the same way). */
static bool seccomp_kernel_has_flag(unsigned long flags)
{
    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, NULL);
    return r < 0 && errno == EFAULT;
}

/* Filter flags. LOG and SPEC_ALLOW go through libseccomp's attributes only
 * so that it checks the kernel's support; the bits we pass to seccomp(2)
 * are collected in *flags. */
static int seccomp_set_flags(scmp_filter_ctx ctx, const struct brig_seccomp *sc,
                             unsigned int *flags, struct brig_error **err)
{
    for (size_t i = 0; i < sc->n_flags; i++) {
        const char *f = sc->flags[i];
        int r = 0;
        if (strcmp(f, "SECCOMP_FILTER_FLAG_LOG") == 0) {
            r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
            *flags |= SECCOMP_FILTER_FLAG_LOG;
        } else if (strcmp(f, "SECCOMP_FILTER_FLAG_SPEC_ALLOW") == 0) {
            r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_SSB, 1);
            *flags |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
        } else if (strcmp(f, "SECCOMP_FILTER_FLAG_TSYNC") == 0) {
            /* The container's init is single-threaded when it loads the
             * filter, so TSYNC changes nothing; pass it on anyway. */
            *flags |= SECCOMP_FILTER_FLAG_TSYNC;
        } else if (strcmp(f, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0) {
            /* libseccomp 2.5 has no attribute for it, but we call seccomp(2)
             * ourselves: ask the kernel directly (seccomp_finish_flags). */
            if (!seccomp_kernel_has_flag(SECCOMP_FILTER_FLAG_NEW_LISTENER |
                                         SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV))
                return brig_failx(err, "linux.seccomp.flags[%zu]: %s is not supported by this "
                                  "kernel", i, f);
            *flags |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        } else {
            return brig_failx(err, "linux.seccomp.flags[%zu]: unknown flag \"%s\"", i, f);
        }
        if (r < 0)
            return brig_fail(err, -r, "linux.seccomp.flags[%zu]: %s not supported by this kernel",
                             i, f);
    }
    return 0;
}

/* The child sends the notify fd to brig over its socket right after the
 * filter is loaded: notifying those syscalls would deadlock it (runc refuses
 * "write" for the same reason). */
static bool seccomp_notify_forbidden(const char *name)
{
    return strcmp(name, "write") == 0 || strcmp(name, "sendmsg") == 0;
}

/* Several conditions on the same argument are ORed, each in its own rule
 * (as runc does); otherwise all conditions are ANDed in one rule. */
static int seccomp_add_rule(scmp_filter_ctx ctx, uint32_t action, int nr,
                            const struct scmp_arg_cmp *cmps, size_t n_cmps, bool or_args)
{
    if (n_cmps == 0 || !or_args)
        return seccomp_rule_add_array(ctx, action, nr, (unsigned int)n_cmps, cmps);
    for (size_t k = 0; k < n_cmps; k++) {
        int r = seccomp_rule_add_array(ctx, action, nr, 1, &cmps[k]);
        if (r < 0) return r;
    }
    return 0;
}

static int seccomp_rule_cmps(const struct brig_seccomp_rule *rule, size_t ri,
                             struct scmp_arg_cmp *cmps, bool *or_args, struct brig_error **err)
{
    unsigned int seen = 0;
    *or_args = false;
    if (rule->n_args > 6)
        return brig_failx(err, "linux.seccomp.syscalls[%zu].args: %zu conditions, at most 6 "
                          "are supported", ri, rule->n_args);
    for (size_t k = 0; k < rule->n_args; k++) {
        const struct brig_seccomp_arg *a = &rule->args[k];
        enum scmp_compare op;
        if (a->index > 5)
            return brig_failx(err, "linux.seccomp.syscalls[%zu].args[%zu].index: %u is out of "
                              "range (0-5)", ri, k, a->index);
        if (seccomp_op_value(a->op, &op) < 0)
            return brig_failx(err, "linux.seccomp.syscalls[%zu].args[%zu].op: unknown operator",
                              ri, k);
        if (seen & (1u << a->index)) *or_args = true;
        seen |= 1u << a->index;
        /* MASKED_EQ: value is the mask, valueTwo what the masked arg must equal. */
        cmps[k] = (struct scmp_arg_cmp){
            .arg = a->index, .op = op, .datum_a = a->value, .datum_b = a->value_two,
        };
    }
    return 0;
}

static int seccomp_add_rules(scmp_filter_ctx ctx, const struct brig_seccomp *sc,
                             uint32_t default_action, bool *notify, struct brig_error **err)
{
    bool default_allows = seccomp_action_allows(sc->default_action);
    char field[64];

    for (size_t i = 0; i < sc->n_syscalls; i++) {
        const struct brig_seccomp_rule *rule = &sc->syscalls[i];
        uint32_t action;
        snprintf(field, sizeof(field), "linux.seccomp.syscalls[%zu]", i);
        TRY(seccomp_action_value(rule->action, rule->has_errno_ret, rule->errno_ret, field,
                                 "errnoRet", &action, err));
        if (rule->n_names == 0)
            return brig_failx(err, "%s.names: must not be empty", field);
        /* libseccomp refuses rules that repeat the default; they add nothing. */
        if (action == default_action) {
            brig_debug("seccomp: %s has the default action, skipped", field);
            continue;
        }
        struct scmp_arg_cmp cmps[6];
        bool or_args;
        TRY(seccomp_rule_cmps(rule, i, cmps, &or_args, err));

        for (size_t j = 0; j < rule->n_names; j++) {
            const char *name = rule->names[j];
            if (rule->action == BRIG_SCMP_NOTIFY && seccomp_notify_forbidden(name))
                return brig_failx(err, "%s.names[%zu]: SCMP_ACT_NOTIFY cannot be used for \"%s\": "
                                  "brig needs it to hand over the notify fd", field, j, name);
            int nr = seccomp_syscall_resolve_name(name);
            if (nr == __NR_SCMP_ERROR) {
                /* Fail closed: under an allowing default, a deny rule we cannot
                 * express would leave the syscall allowed. */
                if (default_allows && !seccomp_action_allows(rule->action))
                    return brig_failx(err, "%s.names[%zu]: unknown syscall \"%s\"", field, j,
                                      name);
                brig_debug("seccomp: %s.names[%zu]: unknown syscall \"%s\" skipped", field, j,
                           name);
                continue;
            }
            int r = seccomp_add_rule(ctx, action, nr, cmps, rule->n_args, or_args);
            if (r < 0)
                return brig_fail(err, -r, "%s.names[%zu]: add rule for \"%s\"", field, j, name);
            if (rule->action == BRIG_SCMP_NOTIFY) *notify = true;
        }
    }
    return 0;
}

/* libseccomp 2.5 can only export to an fd: use a memfd and read it back. */
static int seccomp_export(scmp_filter_ctx ctx, struct brig_bpf *bpf, struct brig_error **err)
{
    autoclose int fd = memfd_create("brig-seccomp", MFD_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "linux.seccomp: memfd_create");
    int r = seccomp_export_bpf(ctx, fd);
    if (r < 0) return brig_fail(err, -r, "linux.seccomp: export BPF");
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "linux.seccomp: fstat BPF");
    size_t size = (size_t)st.st_size;
    if (size == 0 || size % sizeof(struct sock_filter) != 0)
        return brig_failx(err, "linux.seccomp: exported BPF has a bad size %zu", size);
    bpf->n_insns = size / sizeof(struct sock_filter);
    if (bpf->n_insns > SECCOMP_MAX_INSNS)
        return brig_failx(err, "linux.seccomp: the filter has %zu instructions, more than the "
                          "kernel's limit of %d", bpf->n_insns, SECCOMP_MAX_INSNS);
    bpf->insns = brig_calloc(bpf->n_insns, sizeof(struct sock_filter));
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, (char *)bpf->insns + done, size - done, (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return brig_fail(err, errno, "linux.seccomp: read BPF");
        if (n == 0) return brig_failx(err, "linux.seccomp: short read of BPF");
        done += (size_t)n;
    }
    return 0;
}

static int seccomp_validate_notify(const struct brig_seccomp *sc, struct brig_error **err)
{
    /* The child must send the notify fd after loading the filter; a default
     * notify would intercept that very send. */
    if (sc->default_action == BRIG_SCMP_NOTIFY)
        return brig_failx(err, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the "
                          "default action");
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        if (sc->syscalls[i].action == BRIG_SCMP_NOTIFY && sc->listener_path == NULL)
            return brig_failx(err, "linux.seccomp.listenerPath: required when "
                              "linux.seccomp.syscalls[%zu] uses SCMP_ACT_NOTIFY", i);
    }
    return 0;
}

int seccomp_compile(const struct brig_seccomp *sc, struct brig_bpf **out,
                    struct brig_error **err)
{
    *out = NULL;
    uint32_t default_action;
    TRY(seccomp_validate_notify(sc, err));
    TRY(seccomp_action_value(sc->default_action, sc->has_default_errno_ret,
                             sc->default_errno_ret, "linux.seccomp", "defaultErrnoRet",
                             &default_action, err));

    autoscmp scmp_filter_ctx ctx = seccomp_init(default_action);
    if (ctx == NULL)
        return brig_failx(err, "linux.seccomp.defaultAction: %s not supported by this kernel",
                          seccomp_action_name(sc->default_action));
    /* no_new_privs is brig's business (process.noNewPrivileges); we load the
     * BPF ourselves, so libseccomp must not decide it. */
    int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    if (r < 0) return brig_fail(err, -r, "linux.seccomp: disable libseccomp's no_new_privs");
    /* libseccomp's binary-tree layout: the program is longer (1223 against
     * 980 instructions for the bench's 358-name allowlist) but a syscall
     * walks O(log n) of it, not a list. The kernel runs the filter for every
     * syscall number when it loads it (its per-arch action cache), so the
     * load takes ~0.25 ms instead of ~0.9, and every syscall of the
     * container pays less (2M read/write: 280 -> 248 ms). Same decisions:
     * only the layout changes. Without it (libseccomp < 2.5) the list. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (r < 0) brig_debug("seccomp: no binary-tree layout in this libseccomp (%s)", strerror(-r));

    struct brig_bpf *bpf = brig_calloc(1, sizeof(*bpf));
    if (seccomp_add_arches(ctx, sc, err) < 0 || seccomp_set_flags(ctx, sc, &bpf->flags, err) < 0 ||
        seccomp_add_rules(ctx, sc, default_action, &bpf->notify, err) < 0 ||
        seccomp_export(ctx, bpf, err) < 0) {
        seccomp_bpf_free(bpf);
        return -1;
    }
    /* The flag only changes how a notifying filter waits; the kernel refuses
     * it without a listener, and without NOTIFY rules it would change nothing. */
    if ((bpf->flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) && !bpf->notify) {
        brig_debug("seccomp: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV ignored: no SCMP_ACT_NOTIFY");
        bpf->flags &= ~(unsigned int)SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    }
    brig_debug("seccomp: compiled %zu rules into %zu BPF instructions (flags 0x%x%s)",
               sc->n_syscalls, bpf->n_insns, bpf->flags, bpf->notify ? ", notify" : "");
    *out = bpf;
    return 0;
}

int seccomp_bpf_load_listener(const struct brig_bpf *bpf, int *listener_fd,
                              struct brig_error **err)
{
    struct sock_fprog prog = {
        .len = (unsigned short)bpf->n_insns,
        .filter = bpf->insns,
    };
    unsigned int flags = bpf->flags;
    if (listener_fd != NULL) *listener_fd = -1;
    if (bpf->notify) {
        if (listener_fd == NULL)
            return brig_failx(err, "linux.seccomp: the filter uses SCMP_ACT_NOTIFY but no "
                              "listener fd was asked for");
        flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
        /* TSYNC and NEW_LISTENER may only be combined with TSYNC_ESRCH. */
        if (flags & SECCOMP_FILTER_FLAG_TSYNC) flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }

    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (r < 0 && errno == ENOSYS && flags == 0)
        r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
    if (r < 0) return brig_fail(err, errno, "linux.seccomp: load filter");
    if (bpf->notify) *listener_fd = (int)r;
    return 0;
}

int seccomp_bpf_load(const struct brig_bpf *bpf, struct brig_error **err)
{
    return seccomp_bpf_load_listener(bpf, NULL, err);
}

void seccomp_bpf_free(struct brig_bpf *bpf)
{
    if (bpf == NULL) return;
    free(bpf->insns);
    free(bpf);
}

/* The set-id filter (spec.h, BRIG_NO_SETID_ANNOTATION). Every call that
 * takes a file mode as an argument is refused (EPERM) when that mode holds
 * S_ISUID or S_ISGID: chmod, fchmod, fchmodat, fchmodat2, and the modes of
 * created files (open, openat and creat with O_CREAT or O_TMPFILE, mknod,
 * mknodat); mkdir ignores both bits. A mode the kernel could read from
 * memory escapes an argument filter, so what carries one is refused as a
 * whole: openat2 (its mode is in struct open_how; ENOSYS, so that callers
 * fall back to openat) and io_uring (IORING_OP_OPENAT and OPENAT2 take a
 * mode without a system call). Tested bit by bit on the whole 64-bit
 * argument (the kernel takes the low 16). The compat ABIs are filtered too
 * (i386 and x32 on x86_64, arm on aarch64); any other is refused by the
 * kernel's arch check. A filter of its own, stacked under the config's: a
 * policy's filter, whatever it allows, cannot lift it. */
#define SETID_BITS(idx)                                                                              \
    { { .index = (idx), .value = S_ISUID, .value_two = S_ISUID, .op = BRIG_SCMP_CMP_MASKED_EQ } },   \
    { { .index = (idx), .value = S_ISGID, .value_two = S_ISGID, .op = BRIG_SCMP_CMP_MASKED_EQ } }
static struct brig_seccomp_arg setid_args[][1] = { SETID_BITS(1), SETID_BITS(2), SETID_BITS(3) };
static char *setid_mode1[] = { "chmod", "fchmod", "creat", "mknod" };
static char *setid_mode2[] = { "fchmodat", "fchmodat2", "open", "mknodat" };
static char *setid_mode3[] = { "openat" };
static char *setid_nosys[] = { "openat2" };
static char *setid_deny[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
#define SETID_RULE(names, arg) \
    { names, BRIG_ARRAY_SIZE(names), BRIG_SCMP_ERRNO, true, EPERM, setid_args[arg], 1 }
static struct brig_seccomp_rule setid_rules[] = {
    SETID_RULE(setid_mode1, 0), SETID_RULE(setid_mode1, 1),
    SETID_RULE(setid_mode2, 2), SETID_RULE(setid_mode2, 3),
    SETID_RULE(setid_mode3, 4), SETID_RULE(setid_mode3, 5),
    { setid_nosys, BRIG_ARRAY_SIZE(setid_nosys), BRIG_SCMP_ERRNO, true, ENOSYS, NULL, 0 },
    { setid_deny, BRIG_ARRAY_SIZE(setid_deny), BRIG_SCMP_ERRNO, true, EPERM, NULL, 0 },
};
#if defined(__x86_64__)
static char *setid_arches[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32" };
#elif defined(__aarch64__)
static char *setid_arches[] = { "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM" };
#else
static char *setid_arches[] = { "SCMP_ARCH_NATIVE" };
#endif

const struct brig_seccomp *seccomp_setid_filter(void)
{
    static const struct brig_seccomp f = {
        .present = true, .default_action = BRIG_SCMP_ALLOW,
        .architectures = setid_arches, .n_architectures = BRIG_ARRAY_SIZE(setid_arches),
        .syscalls = setid_rules, .n_syscalls = BRIG_ARRAY_SIZE(setid_rules),
    };
    return &f;
}
