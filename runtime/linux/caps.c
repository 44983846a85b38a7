/* process.capabilities (OCI runtime-spec config.md, "Linux Process"):
 * bounding, effective, inheritable, permitted and ambient sets. */
#include "caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"

int caps_from_name(const char *name)
{
    /* cap_from_name() also takes numbers and names without "cap_": insist on
     * the spec's form, in any case, as runc does. */
    if (name == NULL || strncasecmp(name, "CAP_", 4) != 0 || name[4] == '\0') return -1;
    for (const char *p = name + 4; *p != '\0'; p++)
        if (!isalpha((unsigned char)*p) && *p != '_') return -1;
    cap_value_t v;
    if (cap_from_name(name, &v) < 0) return -1;
    return (int)v;
}

bool caps_in_any_set(const struct brig_caps *caps, int cap)
{
    for (size_t i = 0; i < BRIG_CAP_SET_COUNT; i++)
        if (caps->sets[i] & (UINT64_C(1) << cap)) return true;
    return false;
}

int caps_last_cap(void)
{
    /* Read once: the parent asks before clone, so the child never needs a
     * /proc of its own for this. */
    static int last = -1;
    if (last >= 0) return last;

    /* cap_max_bits() is libcap's own probe of the running kernel
     * (PR_CAPBSET_READ at its start-up, already paid): no file to read. */
    int bits = (int)cap_max_bits();
    if (bits > 0 && bits <= 64) return last = bits - 1;
    autofree char *buf = NULL;
    int64_t v;
    if (brig_read_file("/proc/sys/kernel/cap_last_cap", 32, &buf, NULL, NULL) == 0) {
        buf[strcspn(buf, "\n")] = '\0';
        if (brig_parse_i64(buf, &v) == 0 && v >= 0 && v < 64) return last = (int)v;
    }
    return last = bits - 1;
}

static const char *caps_set_field(enum brig_cap_set s)
{
    switch (s) {
    case BRIG_CAP_BOUNDING: return "process.capabilities.bounding";
    case BRIG_CAP_EFFECTIVE: return "process.capabilities.effective";
    case BRIG_CAP_INHERITABLE: return "process.capabilities.inheritable";
    case BRIG_CAP_PERMITTED: return "process.capabilities.permitted";
    case BRIG_CAP_AMBIENT: return "process.capabilities.ambient";
    case BRIG_CAP_SET_COUNT: break;
    }
    return "process.capabilities";
}

/* The kernel's names (include/uapi/linux/capability.h), from a table and
 * not libcap's cap_to_name, which mallocs: errors after the identity
 * switch name caps where the heap is off limits (util/noheap.h). */
static const char *const caps_names[] = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
    "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW",
    "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
    "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ",
    "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
};

static const char *caps_name(int cap, char *buf, size_t len)
{
    if (cap >= 0 && (size_t)cap < BRIG_ARRAY_SIZE(caps_names)) snprintf(buf, len, "%s", caps_names[cap]);
    else snprintf(buf, len, "%d", cap);
    return buf;
}

/* The sets limited to what this kernel knows; higher bits cannot be granted
 * anyway, so they are dropped with a debug note rather than refused. */
static void caps_clamp(const struct brig_caps *in, uint64_t sets[BRIG_CAP_SET_COUNT], int last)
{
    uint64_t known = last >= 63 ? ~UINT64_C(0) : (UINT64_C(1) << (last + 1)) - 1;
    for (int s = 0; s < BRIG_CAP_SET_COUNT; s++) {
        sets[s] = in->sets[s] & known;
        if (sets[s] != in->sets[s])
            brig_debug("%s: capabilities above %d (cap_last_cap) ignored: 0x%llx",
                       caps_set_field((enum brig_cap_set)s), last,
                       (unsigned long long)(in->sets[s] & ~known));
    }
}

/* Requests the kernel would refuse with a bare EPERM get a message that
 * names the capability and the set. */
static int caps_check_subset(const uint64_t sets[BRIG_CAP_SET_COUNT], enum brig_cap_set sub,
                             enum brig_cap_set super, struct brig_error **err)
{
    uint64_t extra = sets[sub] & ~sets[super];
    if (extra == 0) return 0;
    char name[64];
    int cap = __builtin_ctzll(extra);
    return brig_failx(err, "%s: %s is not in %s", caps_set_field(sub), caps_name(cap, name,
                      sizeof(name)), caps_set_field(super));
}

/* The sets this process holds now, read once: no set may grow beyond its
 * permitted set (capset refuses a permitted or effective cap outside it, an
 * inheritable one outside it without CAP_SETPCAP, and PR_CAP_AMBIENT_RAISE
 * needs it), and caps_raise_effective needs to know whether to act. */
typedef struct __user_cap_data_struct caps_now_t[_LINUX_CAPABILITY_U32S_3];

static int caps_get_now(caps_now_t now, struct brig_error **err)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    memset(now, 0, sizeof(caps_now_t));
    if (capget(&hdr, now) < 0) return brig_fail(err, errno, "process.capabilities: capget");
    return 0;
}

static void caps_note_dropped(enum brig_log_level level, enum brig_cap_set set, uint64_t dropped,
                              const char *why)
{
    if (level == BRIG_LOG_DEBUG && !brig_log_debug_enabled()) return;
    char name[64];
    for (int cap = 0; dropped != 0 && cap < 64; cap++) {
        if (!(dropped & (UINT64_C(1) << cap))) continue;
        dropped &= ~(UINT64_C(1) << cap);
        brig_log(level, "%s: %s %s: left out", caps_set_field(set), caps_name(cap, name, sizeof(name)), why);
    }
}

/* Caps brig itself does not hold (a host or an outer container whose
 * bounding set lacks them) cannot be granted: left out of every set. The
 * bounding set only keeps or drops, so it needs no such step. */
static void caps_drop_ungrantable(uint64_t sets[BRIG_CAP_SET_COUNT], uint64_t have)
{
    static const enum brig_cap_set granted[] = { BRIG_CAP_EFFECTIVE, BRIG_CAP_PERMITTED,
                                                 BRIG_CAP_INHERITABLE, BRIG_CAP_AMBIENT };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(granted); i++) {
        uint64_t missing = sets[granted[i]] & ~have;
        if (missing == 0) continue;
        caps_note_dropped(BRIG_LOG_WARN, granted[i], missing, "cannot be granted on this host");
        sets[granted[i]] &= have;
    }
}

/* The kernel raises an ambient cap only when it is both permitted and
 * inheritable. `runc spec` asks for ambient caps it leaves out of the
 * inheritable set on every run: runc and crun drop them silently, so this
 * is a debug line, not a warning on the caller's stderr. */
static void caps_drop_unraisable_ambient(uint64_t sets[BRIG_CAP_SET_COUNT])
{
    uint64_t raisable = sets[BRIG_CAP_PERMITTED] & sets[BRIG_CAP_INHERITABLE];
    uint64_t missing = sets[BRIG_CAP_AMBIENT] & ~raisable;
    if (missing == 0) return;
    caps_note_dropped(BRIG_LOG_DEBUG, BRIG_CAP_AMBIENT, missing,
                      "is not in both the permitted and the inheritable set");
    sets[BRIG_CAP_AMBIENT] &= raisable;
}

/* After identity_apply switched to a non-root uid (PR_SET_KEEPCAPS), the
 * permitted set survived but the effective set is empty: make the permitted
 * caps effective again so CAP_SETPCAP can drop the bounding set. One capget
 * tells whether that is needed (a uid 0 process still has them effective);
 * libcap's cap_get_proc + cap_set_proc would cost four syscalls every time. */
static int caps_raise_effective(const caps_now_t data, struct brig_error **err)
{
    bool raised = true;
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
        raised = raised && data[i].effective == data[i].permitted;
    if (raised) return 0;
    /* capset itself, not libcap's cap_get_proc/cap_set_proc (which malloc). */
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    caps_now_t want;
    memcpy(want, data, sizeof(want));
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) want[i].effective = want[i].permitted;
    if (syscall(SYS_capset, &hdr, want) < 0)
        return brig_fail(err, errno, "process.capabilities: raise the permitted set");
    return 0;
}

int caps_validate(const struct brig_caps *caps, bool in_userns, struct brig_error **err)
{
    uint64_t sets[BRIG_CAP_SET_COUNT];
    caps_clamp(caps, sets, caps_last_cap());
    /* In a user namespace the process holds every cap of it; outside, what
     * brig holds now, which its clone inherits. */
    uint64_t have = ~UINT64_C(0);
    if (!in_userns) {
        caps_now_t now;
        TRY(caps_get_now(now, err));
        have = (uint64_t)now[0].permitted | ((uint64_t)now[1].permitted << 32);
    }
    sets[BRIG_CAP_EFFECTIVE] &= have;
    sets[BRIG_CAP_PERMITTED] &= have;
    return caps_check_subset(sets, BRIG_CAP_EFFECTIVE, BRIG_CAP_PERMITTED, err);
}

int caps_raise_effective_all(struct brig_error **err)
{
    caps_now_t now;
    TRY(caps_get_now(now, err));
    return caps_raise_effective(now, err);
}

/* Needs CAP_SETPCAP, so it runs before capset may take that away. Dropping
 * a cap that is already gone succeeds; without CAP_SETPCAP the drop fails
 * and the cap is then read: one already gone is fine, so such a process can
 * still apply a bounding set it already satisfies (one prctl per cap in the
 * usual case instead of two). */
static int caps_drop_bounding(uint64_t keep, int last, struct brig_error **err)
{
    char name[64];
    for (int cap = 0; cap <= last; cap++) {
        if (keep & (UINT64_C(1) << cap)) continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
        int drop_errno = errno;
        if (drop_errno == EINVAL) continue;       /* not known to this kernel */
        int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (r < 0 && errno == EINVAL) continue;
        if (r < 0)
            return brig_fail(err, errno, "process.capabilities.bounding: read %s",
                             caps_name(cap, name, sizeof(name)));
        if (r == 0) continue;
        return brig_fail(err, drop_errno, "process.capabilities.bounding: drop %s",
                         caps_name(cap, name, sizeof(name)));
    }
    return 0;
}

/* One capset, as libcap's cap_set_proc makes it, without its cap_t (a
 * malloc'd object): sets holds no cap above last (caps_clamp). */
static int caps_set_proc(const uint64_t sets[BRIG_CAP_SET_COUNT], struct brig_error **err)
{
    struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
    caps_now_t d;
    memset(d, 0, sizeof(d));
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        d[i].effective = (uint32_t)(sets[BRIG_CAP_EFFECTIVE] >> (32 * i));
        d[i].permitted = (uint32_t)(sets[BRIG_CAP_PERMITTED] >> (32 * i));
        d[i].inheritable = (uint32_t)(sets[BRIG_CAP_INHERITABLE] >> (32 * i));
    }
    if (syscall(SYS_capset, &hdr, d) < 0)
        return brig_fail(err, errno, "process.capabilities: capset (effective, permitted, "
                         "inheritable)");
    return 0;
}

static int caps_set_ambient(uint64_t ambient, int last, struct brig_error **err)
{
    char name[64];
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
        /* Kernels before 4.3 have no ambient set: fine unless one is asked. */
        if (errno == EINVAL && ambient == 0) return 0;
        return brig_fail(err, errno, "process.capabilities.ambient: clear");
    }
    for (int cap = 0; cap <= last; cap++) {
        if (!(ambient & (UINT64_C(1) << cap))) continue;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
            return brig_fail(err, errno, "process.capabilities.ambient: raise %s",
                             caps_name(cap, name, sizeof(name)));
    }
    return 0;
}

int caps_plan(const struct brig_caps *caps, struct caps_plan *out, struct brig_error **err)
{
    int last = caps_last_cap();
    uint64_t *sets = out->sets;
    out->last = last;
    caps_clamp(caps, sets, last);

    /* What this host cannot grant, and ambient caps the kernel will not
     * raise, are dropped with a warning (config.md: a runtime SHOULD NOT
     * fail for capabilities that cannot be granted; runc and crun skip such
     * ambient caps): the process gets less, never more. A config asking for
     * an effective cap it does not permit is wrong in itself: refused with
     * the field named, before anything changes. The permitted set read
     * here is the one after the identity switch too (PR_SET_KEEPCAPS). */
    caps_now_t now;
    TRY(caps_get_now(now, err));
    uint64_t have = (uint64_t)now[0].permitted | ((uint64_t)now[1].permitted << 32);
    caps_drop_ungrantable(sets, have);
    TRY(caps_check_subset(sets, BRIG_CAP_EFFECTIVE, BRIG_CAP_PERMITTED, err));
    caps_drop_unraisable_ambient(sets);

    brig_debug("caps: bounding 0x%llx effective 0x%llx permitted 0x%llx inheritable 0x%llx "
               "ambient 0x%llx", (unsigned long long)sets[BRIG_CAP_BOUNDING],
               (unsigned long long)sets[BRIG_CAP_EFFECTIVE],
               (unsigned long long)sets[BRIG_CAP_PERMITTED],
               (unsigned long long)sets[BRIG_CAP_INHERITABLE],
               (unsigned long long)sets[BRIG_CAP_AMBIENT]);
    return 0;
}

int caps_plan_apply(const struct caps_plan *pl, struct brig_error **err)
{
    caps_now_t now;
    TRY(caps_get_now(now, err));
    TRY(caps_raise_effective(now, err));
    TRY(caps_drop_bounding(pl->sets[BRIG_CAP_BOUNDING], pl->last, err));
    TRY(caps_set_proc(pl->sets, err));
    TRY(caps_set_ambient(pl->sets[BRIG_CAP_AMBIENT], pl->last, err));
    return 0;
}
