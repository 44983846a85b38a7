/* The seccomp BPF cache (linux/seccomp_cache.c) and the SHA-256 that names
 * its entries: a hit must be exactly what seccomp_compile returns, and a
 * damaged, foreign or different entry must never be used. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/seccomp.h"
#include "linux/seccomp_cache.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/sha256.h"

#define STRV(...) ((char *[]){ __VA_ARGS__, NULL })
#define STRV_LEN(...) (sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *))
#define NAMES(...) .names = STRV(__VA_ARGS__), .n_names = STRV_LEN(__VA_ARGS__)

static char root[64];

static void mkroot(void)
{
    snprintf(root, sizeof(root), "/tmp/brig-sccache.XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void rmroot(void)
{
    struct brig_error *e = NULL;
    brig_rm_rf_at(AT_FDCWD, root, &e);
    brig_error_free(e);
}

TestSuite(seccomp_cache, .init = mkroot, .fini = rmroot);

static struct brig_seccomp_rule rules[] = {
    { NAMES("read", "write", "exit_group", "futex"), .action = BRIG_SCMP_ALLOW },
    { NAMES("getpid"), .action = BRIG_SCMP_ALLOW },
};

static struct brig_seccomp section(void)
{
    return (struct brig_seccomp){ .present = true, .default_action = BRIG_SCMP_ERRNO,
                                  .syscalls = rules, .n_syscalls = 1 };
}

static struct brig_bpf *cached(const struct brig_seccomp *sc)
{
    struct brig_bpf *bpf = NULL;
    struct brig_error *err = NULL;
    int r = seccomp_compile_cached(sc, root, &bpf, &err);
    cr_assert_eq(r, 0, "seccomp_compile_cached: %s", err ? err->msg : "?");
    return bpf;
}

static void assert_same(const struct brig_bpf *a, const struct brig_bpf *b)
{
    cr_assert_eq(a->n_insns, b->n_insns);
    cr_assert_eq(a->flags, b->flags);
    cr_assert_eq(a->notify, b->notify);
    cr_assert_eq(memcmp(a->insns, b->insns, a->n_insns * 8), 0, "programs differ");
}

/* The one entry in the cache directory, as a path. */
static char *entry_path(void)
{
    static char path[256];
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "ls %s/.seccomp-cache", root);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char name[128] = "";
    cr_assert_not_null(fgets(name, sizeof(name), p), "no cache entry");
    pclose(p);
    name[strcspn(name, "\n")] = '\0';
    cr_assert_eq(strlen(name), 64, "entry named by a sha256: %s", name);
    snprintf(path, sizeof(path), "%s/.seccomp-cache/%s", root, name);
    return path;
}

Test(seccomp_cache, sha256_vectors)
{
    uint8_t d[BRIG_SHA256_LEN];
    char hex[65];
    brig_sha256("", 0, d);
    cr_assert_str_eq(brig_sha256_hex(d, hex),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    brig_sha256("abc", 3, d);
    cr_assert_str_eq(brig_sha256_hex(d, hex),
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* Two blocks. */
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    brig_sha256(m, strlen(m), d);
    cr_assert_str_eq(brig_sha256_hex(d, hex),
                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(seccomp_cache, miss_stores_then_hit_is_the_compiled_program)
{
    struct brig_seccomp sc = section();
    struct brig_bpf *ref = NULL;
    struct brig_error *err = NULL;
    cr_assert_eq(seccomp_compile(&sc, &ref, &err), 0);
    struct brig_bpf *first = cached(&sc);
    assert_same(first, ref);
    struct stat st, st2;
    cr_assert_eq(stat(entry_path(), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    /* A hit reads the entry and leaves it alone (same inode). */
    struct brig_bpf *second = cached(&sc);
    assert_same(second, ref);
    cr_assert_eq(stat(entry_path(), &st2), 0);
    cr_assert_eq(st.st_ino, st2.st_ino, "a hit rewrote the entry");
    seccomp_bpf_free(ref);
    seccomp_bpf_free(first);
    seccomp_bpf_free(second);
}

Test(seccomp_cache, different_section_different_entry)
{
    struct brig_seccomp a = section(), b = section();
    b.n_syscalls = 2;
    size_t la, lb;
    unsigned char *ka = seccomp_cache_key(&a, &la), *kb = seccomp_cache_key(&b, &lb);
    cr_assert(la != lb || memcmp(ka, kb, la) != 0);
    free(ka);
    free(kb);
    struct brig_bpf *pa = cached(&a), *pb = cached(&b);
    cr_assert(pa->n_insns != pb->n_insns || memcmp(pa->insns, pb->insns, pa->n_insns * 8) != 0);
    seccomp_bpf_free(pa);
    seccomp_bpf_free(pb);
    /* A name differing in one letter is another key. */
    struct brig_seccomp_rule r1[] = { { NAMES("read"), .action = BRIG_SCMP_ALLOW } };
    struct brig_seccomp_rule r2[] = { { NAMES("readv"), .action = BRIG_SCMP_ALLOW } };
    a.syscalls = r1;
    b.syscalls = r2;
    a.n_syscalls = b.n_syscalls = 1;
    ka = seccomp_cache_key(&a, &la);
    kb = seccomp_cache_key(&b, &lb);
    cr_assert(la != lb || memcmp(ka, kb, la) != 0);
    free(ka);
    free(kb);
}

/* Flip one byte of the stored program, then of the key's digest (the
 * entry holds the digest, not the key: header 24 bytes, digest 32): the
 * entry is compiled again (and rewritten), never loaded. */
Test(seccomp_cache, damaged_entry_is_recompiled)
{
    struct brig_seccomp sc = section();
    struct brig_bpf *ref = cached(&sc);
    const char *path = entry_path();
    struct stat st, st2;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq((size_t)st.st_size, 24 + 32 + ref->n_insns * 8 + 32, "the entry holds more than the key's digest");
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(stat(path, &st), 0);
        int fd = open(path, O_RDWR);
        cr_assert_geq(fd, 0);
        off_t at = i == 0 ? lseek(fd, 0, SEEK_END) - 40 : 24 + 5;
        unsigned char b;
        cr_assert_eq(pread(fd, &b, 1, at), 1);
        b ^= 0xff;
        cr_assert_eq(pwrite(fd, &b, 1, at), 1);
        close(fd);
        struct brig_bpf *again = cached(&sc);
        assert_same(again, ref);
        /* ... and stored again (atomically: a new inode). */
        cr_assert_eq(stat(entry_path(), &st2), 0);
        cr_assert_neq(st.st_ino, st2.st_ino, "the damaged entry (byte %lld) was not replaced", (long long)at);
        seccomp_bpf_free(again);
    }
    seccomp_bpf_free(ref);
}

/* An entry anyone may write is not trusted; nor is a truncated one. */
Test(seccomp_cache, foreign_or_truncated_entry_is_ignored)
{
    struct brig_seccomp sc = section();
    struct brig_bpf *ref = cached(&sc);
    const char *path = entry_path();
    /* World-writable: intact, but anyone could have written it. */
    cr_assert_eq(chmod(path, 0666), 0);
    struct brig_bpf *got = cached(&sc);
    assert_same(got, ref);
    seccomp_bpf_free(got);
    struct stat st;
    cr_assert_eq(stat(entry_path(), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "the foreign entry was not replaced");
    /* Truncated. */
    cr_assert_eq(truncate(entry_path(), 20), 0);
    got = cached(&sc);
    assert_same(got, ref);
    seccomp_bpf_free(got);
    cr_assert_eq(stat(entry_path(), &st), 0);
    cr_assert_gt(st.st_size, 20, "the truncated entry was not replaced");
    seccomp_bpf_free(ref);
}

/* A state root that is not ours is not used for the cache at all. */
Test(seccomp_cache, untrusted_root_compiles_without_storing)
{
    cr_assert_eq(chmod(root, 0777), 0);
    struct brig_seccomp sc = section();
    struct brig_bpf *bpf = cached(&sc);
    cr_assert_gt(bpf->n_insns, 0);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/.seccomp-cache", root);
    cr_assert_eq(access(dir, F_OK), -1, "cache dir made under a world-writable root");
    seccomp_bpf_free(bpf);
}

/* Config errors are still found: nothing cached stands in for a compile
 * that fails. */
Test(seccomp_cache, errors_are_not_cached)
{
    struct brig_seccomp_rule bad[] = { { NAMES("no_such_syscall_xyz"), .action = BRIG_SCMP_ERRNO } };
    struct brig_seccomp sc = { .present = true, .default_action = BRIG_SCMP_ALLOW,
                               .syscalls = bad, .n_syscalls = 1 };
    for (int i = 0; i < 2; i++) {
        struct brig_bpf *bpf = NULL;
        struct brig_error *err = NULL;
        cr_assert_eq(seccomp_compile_cached(&sc, root, &bpf, &err), -1);
        cr_assert_not_null(strstr(err->msg, "unknown syscall"), "%s", err->msg);
        brig_error_free(err);
    }
}

/* ---- the key covers every field of linux.seccomp ---------------------------
 * One field changed at a time, from a section where every field is set: the
 * key must change, and a cached compile of the changed section must be what
 * seccomp_compile makes of it (never the entry stored for the base). A field
 * left out of the key would let a tightened config (LOG -> KILL_PROCESS, a
 * new errnoRet) run under the old cached filter. */

struct fix {
    char *arches[2], *flags[1], *names0[2], *names1[1];
    struct brig_seccomp_arg args[2];
    struct brig_seccomp_rule rules[2];
    struct brig_seccomp sc;
};

static void fix_base(struct fix *f)
{
    *f = (struct fix){
        .arches = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86" },
        .flags = { "SECCOMP_FILTER_FLAG_LOG" },
        .names0 = { "getcwd", "keyctl" },
        .names1 = { "personality" },
        .args = { { .index = 0, .value = 0x40000, .value_two = 0x40000, .op = BRIG_SCMP_CMP_MASKED_EQ },
                  { .index = 1, .value = 7, .op = BRIG_SCMP_CMP_EQ } },
    };
    f->rules[0] = (struct brig_seccomp_rule){ .names = f->names0, .n_names = 2,
                                              .action = BRIG_SCMP_LOG };
    f->rules[1] = (struct brig_seccomp_rule){ .names = f->names1, .n_names = 1,
                                              .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
                                              .errno_ret = 13, .args = f->args, .n_args = 2 };
    f->sc = (struct brig_seccomp){ .present = true, .default_action = BRIG_SCMP_ERRNO,
                                   .has_default_errno_ret = true, .default_errno_ret = 1,
                                   .architectures = f->arches, .n_architectures = 2,
                                   .flags = f->flags, .n_flags = 1,
                                   .syscalls = f->rules, .n_syscalls = 2 };
}

struct key_case {
    const char *field;
    void (*change)(struct fix *f);
    bool compiles;      /* seccomp_compile accepts the changed section */
};

#define CHANGE(fn, body) static void fn(struct fix *f) { body; }
CHANGE(ch_default_action, f->sc.default_action = BRIG_SCMP_TRACE)
CHANGE(ch_default_errno, f->sc.default_errno_ret = 38)
CHANGE(ch_default_errno_unset, f->sc.has_default_errno_ret = false)
CHANGE(ch_arch_dropped, f->sc.n_architectures = 1)
CHANGE(ch_arch_other, f->arches[1] = "SCMP_ARCH_X32")
CHANGE(ch_flags_none, f->sc.n_flags = 0)
CHANGE(ch_flags_other, f->flags[0] = "SECCOMP_FILTER_FLAG_SPEC_ALLOW")
CHANGE(ch_listener_path, f->sc.listener_path = "/run/agent.sock")
CHANGE(ch_listener_metadata, f->sc.listener_metadata = "x")
CHANGE(ch_rule0_name, f->names0[1] = "keyctI")
CHANGE(ch_rule0_name_dropped, f->rules[0].n_names = 1)
CHANGE(ch_rule0_action, f->rules[0].action = BRIG_SCMP_KILL_PROCESS)
CHANGE(ch_rule0_action_errno, f->rules[0].action = BRIG_SCMP_ERRNO)
CHANGE(ch_rule1_action, f->rules[1].action = BRIG_SCMP_TRACE)
CHANGE(ch_rule1_errno, f->rules[1].errno_ret = 14)
CHANGE(ch_rule1_errno_unset, f->rules[1].has_errno_ret = false)
CHANGE(ch_rule1_name, f->names1[0] = "perf_event_open")
CHANGE(ch_arg_index, f->args[1].index = 2)
CHANGE(ch_arg_value, f->args[0].value = 0x40001)
CHANGE(ch_arg_value_two, f->args[0].value_two = 0x40001)
CHANGE(ch_arg_op, f->args[1].op = BRIG_SCMP_CMP_NE)
CHANGE(ch_arg_dropped, f->rules[1].n_args = 1)
CHANGE(ch_rule_dropped, f->sc.n_syscalls = 1)
CHANGE(ch_rules_swapped, { struct brig_seccomp_rule t = f->rules[0];
                           f->rules[0] = f->rules[1]; f->rules[1] = t; })

static const struct key_case key_cases[] = {
    { "defaultAction (ERRNO -> TRACE)", ch_default_action, true },
    { "defaultErrnoRet", ch_default_errno, true },
    { "defaultErrnoRet unset", ch_default_errno_unset, true },
    { "architectures (one dropped)", ch_arch_dropped, true },
    { "architectures (one replaced)", ch_arch_other, true },
    { "flags (none)", ch_flags_none, true },
    { "flags (another)", ch_flags_other, true },
    { "listenerPath", ch_listener_path, false },
    { "listenerMetadata", ch_listener_metadata, false },
    { "syscalls[0].names (one letter)", ch_rule0_name, false },
    { "syscalls[0].names (one dropped)", ch_rule0_name_dropped, true },
    { "syscalls[0].action (LOG -> KILL_PROCESS)", ch_rule0_action, true },
    { "syscalls[0].action (LOG -> ERRNO)", ch_rule0_action_errno, true },
    { "syscalls[1].action (ERRNO -> TRACE)", ch_rule1_action, true },
    { "syscalls[1].errnoRet", ch_rule1_errno, true },
    { "syscalls[1].errnoRet unset", ch_rule1_errno_unset, true },
    { "syscalls[1].names", ch_rule1_name, true },
    { "syscalls[1].args[1].index", ch_arg_index, true },
    { "syscalls[1].args[0].value", ch_arg_value, true },
    { "syscalls[1].args[0].valueTwo", ch_arg_value_two, true },
    { "syscalls[1].args[1].op", ch_arg_op, true },
    { "syscalls[1].args (one dropped)", ch_arg_dropped, true },
    { "syscalls (one rule dropped)", ch_rule_dropped, true },
    { "syscalls (order)", ch_rules_swapped, true },
};

static bool key_equal(const struct brig_seccomp *a, const struct brig_seccomp *b)
{
    size_t la, lb;
    unsigned char *ka = seccomp_cache_key(a, &la), *kb = seccomp_cache_key(b, &lb);
    bool eq = la == lb && memcmp(ka, kb, la) == 0;
    free(ka);
    free(kb);
    return eq;
}

Test(seccomp_cache, key_is_deterministic)
{
    /* Without this, a key holding anything random would pass the table. */
    struct fix a, b;
    fix_base(&a);
    fix_base(&b);
    cr_assert(key_equal(&a.sc, &b.sc), "the same section gave two keys");
}

Test(seccomp_cache, key_changes_with_every_field)
{
    struct fix base;
    fix_base(&base);
    struct brig_bpf *stored = cached(&base.sc);
    for (size_t i = 0; i < sizeof(key_cases) / sizeof(key_cases[0]); i++) {
        const struct key_case *c = &key_cases[i];
        struct fix f;
        fix_base(&f);
        c->change(&f);
        cr_expect(!key_equal(&base.sc, &f.sc), "%s: changed, but the cache key did not",
                  c->field);
        if (!c->compiles) continue;
        struct brig_bpf *ref = NULL, *got = NULL;
        struct brig_error *err = NULL;
        cr_assert_eq(seccomp_compile(&f.sc, &ref, &err), 0, "%s: %s", c->field,
                     err ? err->msg : "?");
        cr_assert_eq(seccomp_compile_cached(&f.sc, root, &got, &err), 0, "%s: %s", c->field,
                     err ? err->msg : "?");
        cr_expect(got->n_insns == ref->n_insns && got->flags == ref->flags &&
                      memcmp(got->insns, ref->insns, ref->n_insns * 8) == 0,
                  "%s: the cached program is not the compiled one", c->field);
        seccomp_bpf_free(ref);
        seccomp_bpf_free(got);
    }
    seccomp_bpf_free(stored);
}
