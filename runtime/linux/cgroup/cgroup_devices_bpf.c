/* linux.resources.devices on cgroup v2: there is no devices.allow file, the
 * kernel asks a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup.
 * The program is assembled here by hand (no libbpf, no clang), in the shape
 * runc's devicefilter and crun's ebpf.c use:
 *   prologue: r2 = type, r3 = access, r4 = major, r5 = minor (from the ctx)
 *   one block per rule, LAST rule first (a later rule overrides an earlier
 *   one, as with the v1 files): on a full match return allow/deny;
 *   otherwise fall through; at the end deny.
 * The rule list is the config's rules followed by the default allowlist,
 * exactly as on v1. Attached with BPF_F_ALLOW_MULTI: programs of ancestors
 * still run, and the kernel grants access only if every one allows it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <linux/bpf.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

static const struct brig_device_rule default_rules[] = {
    {true, 'c', -1, -1, "m"}, {true, 'b', -1, -1, "m"},
    {true, 'c', 1, 3, "rwm"},  {true, 'c', 1, 5, "rwm"},  {true, 'c', 1, 7, "rwm"},
    {true, 'c', 1, 8, "rwm"},  {true, 'c', 1, 9, "rwm"},  {true, 'c', 5, 0, "rwm"},
    {true, 'c', 5, 2, "rwm"},  {true, 'c', 136, -1, "rwm"},
};  /* not c 5:1, the host's console: cgroup_v1.c's default_devices says why */

struct prog {
    struct bpf_insn *v;
    size_t n, cap;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        struct bpf_insn *nv = realloc(p->v, p->cap * sizeof(*nv));
        if (nv == NULL) abort();
        p->v = nv;
    }
    p->v[p->n++] = (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off,
                                     .imm = imm};
}

#define LDXW(dst, off) emit(p, BPF_LDX | BPF_MEM | BPF_W, dst, BPF_REG_1, off, 0)
#define ALU32_IMM(op, dst, imm) emit(p, BPF_ALU | op | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src) emit(p, BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)

static unsigned access_bits(const char *a)
{
    unsigned bits = 0;
    if (a == NULL || *a == '\0') a = "rwm";
    for (; *a; a++) {
        if (*a == 'r') bits |= BPF_DEVCG_ACC_READ;
        else if (*a == 'w') bits |= BPF_DEVCG_ACC_WRITE;
        else if (*a == 'm') bits |= BPF_DEVCG_ACC_MKNOD;
    }
    return bits;
}

/* Returns 1 when the block matches every access (nothing after it can run:
 * the verifier refuses unreachable instructions), 0 otherwise. */
static int rule_block(struct prog *p, const struct brig_device_rule *d, const char *field,
                      struct brig_error **err)
{
    const unsigned all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
    char type = d->type ? d->type : 'a';
    if (type != 'a' && type != 'c' && type != 'b')
        return brig_failx(err, "%s.type: \"%c\" is not one of a, c, b", field, type);
    if (d->major > UINT32_MAX / 2 || d->minor > UINT32_MAX / 2)
        return brig_failx(err, "%s: device number out of range", field);
    unsigned acc = access_bits(d->access);
    /* Jumps in a block go to its end; they are patched once its size is known. */
    size_t start = p->n;
    size_t jumps[4], nj = 0;
    if (type != 'a') {
        jumps[nj++] = p->n;
        emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 0,
             type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
    }
    if (acc != all) {
        /* Match only when the requested access is a subset of the rule's. */
        MOV32_REG(BPF_REG_1, BPF_REG_3);
        ALU32_IMM(BPF_AND, BPF_REG_1, (int32_t)acc);
        jumps[nj++] = p->n;
        emit(p, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_3, 0, 0);
    }
    if (d->major >= 0) {
        jumps[nj++] = p->n;
        emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 0, (int32_t)d->major);
    }
    if (d->minor >= 0) {
        jumps[nj++] = p->n;
        emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 0, (int32_t)d->minor);
    }
    emit(p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, d->allow ? 1 : 0);
    emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    for (size_t i = 0; i < nj; i++) p->v[jumps[i]].off = (int16_t)(p->n - jumps[i] - 1);
    (void)start;
    return nj == 0;
}

int cg_devices_compile(const struct brig_device_rule *rules, size_t n, struct bpf_insn **out,
                       size_t *count, struct brig_error **err)
{
    for (size_t i = 0; i < n; i++) {
        char t = rules[i].type ? rules[i].type : 'a';
        if (t != 'a' && t != 'c' && t != 'b')
            return brig_failx(err, "linux.resources.devices[%zu].type: \"%c\" is not one of a, "
                              "c, b", i, t);
    }
    struct prog pr = {0}, *p = &pr;
    /* ctx->access_type: low 16 bits the device type, high 16 the access. */
    LDXW(BPF_REG_2, 0);
    ALU32_IMM(BPF_AND, BPF_REG_2, 0xFFFF);
    LDXW(BPF_REG_3, 0);
    ALU32_IMM(BPF_RSH, BPF_REG_3, 16);
    LDXW(BPF_REG_4, 4);
    LDXW(BPF_REG_5, 8);
    size_t nd = BRIG_ARRAY_SIZE(default_rules);
    bool ended = false;
    for (size_t k = n + nd; k > 0; k--) {
        size_t i = k - 1;
        char field[64];
        const struct brig_device_rule *d;
        if (i >= n) {
            d = &default_rules[i - n];
            snprintf(field, sizeof(field), "linux.resources.devices (default %zu)", i - n);
        } else {
            d = &rules[i];
            snprintf(field, sizeof(field), "linux.resources.devices[%zu]", i);
        }
        int all = rule_block(p, d, field, err);
        if (all < 0) {
            free(pr.v);
            return -1;
        }
        if (all) {
            /* e.g. the usual leading "deny all": earlier rules are moot */
            ended = true;
            break;
        }
    }
    if (!ended) {
        emit(p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
        emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    }
    *out = pr.v;
    *count = pr.n;
    return 0;
}

static int bpf_sys(int cmd, union bpf_attr *attr)
{
    return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int cgv2_devices_apply(const char *dir, const struct brig_resources *r, struct brig_error **err)
{
    const char *F = "linux.resources.devices";
    autofree struct bpf_insn *insns = NULL;
    size_t n = 0;
    bool have = r != NULL && r->present;
    TRY(cg_devices_compile(have ? r->devices : NULL, have ? r->n_devices : 0, &insns, &n, err));
    static char log[8192];
    union bpf_attr la;
    memset(&la, 0, sizeof(la));
    la.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    la.insns = (uint64_t)(uintptr_t)insns;
    la.insn_cnt = (uint32_t)n;
    la.license = (uint64_t)(uintptr_t)"Apache-2.0";
    autoclose int prog = bpf_sys(BPF_PROG_LOAD, &la);
    if (prog < 0) {
        int e = errno;
        /* Load again with the verifier log, only to explain the failure. */
        la.log_level = 1;
        la.log_buf = (uint64_t)(uintptr_t)log;
        la.log_size = sizeof(log);
        log[0] = '\0';
        int again = bpf_sys(BPF_PROG_LOAD, &la);
        if (again >= 0) close(again);
        brig_debug("cgroup: device filter verifier log: %s", log);
        return brig_fail(err, e, "%s: cannot load the cgroup v2 device filter (eBPF)", F);
    }
    autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "%s: open %s", F, dir);
    union bpf_attr aa;
    memset(&aa, 0, sizeof(aa));
    aa.target_fd = (uint32_t)dfd;
    aa.attach_bpf_fd = (uint32_t)prog;
    aa.attach_type = BPF_CGROUP_DEVICE;
    aa.attach_flags = BPF_F_ALLOW_MULTI;
    if (bpf_sys(BPF_PROG_ATTACH, &aa) < 0)
        return brig_fail(err, errno, "%s: cannot attach the device filter to %s", F, dir);
    /* The cgroup holds the program now; our fd can go. */
    brig_debug("cgroup: device filter (%zu insns, %zu rules) attached to %s", n,
               have ? r->n_devices : 0, dir);
    return 0;
}
