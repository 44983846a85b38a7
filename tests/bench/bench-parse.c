/* bench-parse: parse time of every parser brig feeds outside input to,
 * against input size. Each case makes its input in memory at sizes from
 * 1 KB to 64 MB (x4 each step) in one shape (many keys, deep nesting, long
 * strings, long lists), runs the parser as brig runs it and prints the
 * time and the time per byte: a linear parser keeps ns/byte flat, a
 * quadratic one doubles it with every doubling of the input. Times are
 * CPU time (the fastest of a few runs). A case whose run takes longer than
 * --budget seconds stops growing (and says so).
 *
 *     bench-parse [--ci] [--max BYTES] [--budget SECONDS] [--only SUBSTRING]
 *
 * --ci: sizes up to 256 KB, each once: every case runs and is decided (its
 * parser accepts or refuses the input), and no time is judged. Without
 * --ci nothing is judged either: the figures are the point. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/json.h"
#include "config/spec.h"
#include "util/error.h"
#include "util/log.h"
#include "../../policy/policy.h"
#include "../../rootfs-tools/import/import.h"
#include "../../rootfs-tools/lib/rootfs.h"

/* ---- a growable text buffer ------------------------------------------- */

struct buf { char *p; size_t len, cap; };

static void bput(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL) abort();
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void bs(struct buf *b, const char *s) { bput(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3)))
static void bf(struct buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(tmp)) abort();     /* short items only */
    bput(b, tmp, (size_t)n);
}

/* ---- inputs: each fills b to about `size` bytes ------------------------ */

/* items(b, size, open, item, sep, close): open, items while under size, close */
typedef void (*item_fn)(struct buf *b, size_t i);

static void items(struct buf *b, size_t size, const char *open, item_fn item, const char *sep,
                  const char *close)
{
    bs(b, open);
    size_t tail = strlen(close);
    for (size_t i = 0; i == 0 || b->len + tail < size; i++) {
        if (i > 0) bs(b, sep);
        item(b, i);
    }
    bs(b, close);
}

static void it_kv(struct buf *b, size_t i) { bf(b, "\"k%zu\":\"v\"", i); }
static void it_num(struct buf *b, size_t i) { bf(b, "%zu", i); }
static void it_env(struct buf *b, size_t i) { bf(b, "\"E%zu=v\"", i); }
static void it_mount(struct buf *b, size_t i)
{
    bf(b, "{\"destination\":\"/m/%zu\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"size=1m\"]}", i);
}
static void it_scrule(struct buf *b, size_t i)
{
    bf(b, "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":%zu,"
          "\"op\":\"SCMP_CMP_EQ\"}]}", i);
}
/* a nest of 250 arrays around a number: as deep as JSON_MAX_DEPTH lets */
static void it_deep(struct buf *b, size_t i)
{
    for (int d = 0; d < 250; d++) bput(b, "[", 1);
    bf(b, "%zu", i);
    for (int d = 0; d < 250; d++) bput(b, "]", 1);
}

static void in_json_keys(struct buf *b, size_t size) { items(b, size, "{", it_kv, ",", "}"); }
static void in_json_array(struct buf *b, size_t size) { items(b, size, "[", it_num, ",", "]"); }
static void in_json_deep(struct buf *b, size_t size) { items(b, size, "[", it_deep, ",", "]"); }
static void in_json_string(struct buf *b, size_t size)
{
    bs(b, "{\"s\":\"");
    while (b->len + 2 < size) bs(b, "abcdefghijklmnopqrstuvwxyz0123456789 \\n\\\"\\u00e9/");
    bs(b, "\"}");
}

/* A config.json: the spec's minimal fields with one part grown. */
enum grow { G_NONE, G_ANNOTATIONS, G_ENV, G_MOUNTS, G_SECCOMP, G_LONGARG };

static void in_config(struct buf *b, size_t size, enum grow g)
{
    size_t part = size > 700 ? size - 700 : 16;
    bs(b, "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"/bin/sh\"");
    if (g == G_LONGARG) {
        bs(b, ",\"");
        for (size_t n = 0; n < part; n += 32) bs(b, "abcdefghijklmnopqrstuvwxyz012345");
        bs(b, "\"");
    }
    bs(b, "],\"cwd\":\"/\",\"user\":{\"uid\":1000,\"gid\":1000},\"env\":");
    struct buf t = { 0 };
    if (g == G_ENV) items(&t, part, "[\"PATH=/bin\",", it_env, ",", "]");
    else bs(&t, "[\"PATH=/bin\"]");
    bput(b, t.p, t.len);
    bs(b, ",\"noNewPrivileges\":true},\"root\":{\"path\":\"rootfs\",\"readonly\":true},\"mounts\":");
    t.len = 0;
    if (g == G_MOUNTS) items(&t, part, "[", it_mount, ",", "]");
    else bs(&t, "[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"}]");
    bput(b, t.p, t.len);
    bs(b, ",\"annotations\":");
    t.len = 0;
    if (g == G_ANNOTATIONS) items(&t, part, "{", it_kv, ",", "}");
    else bs(&t, "{}");
    bput(b, t.p, t.len);
    bs(b, ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"},{\"type\":\"ipc\"},"
          "{\"type\":\"uts\"},{\"type\":\"network\"}]");
    if (g == G_SECCOMP) {
        t.len = 0;
        items(&t, part, "[", it_scrule, ",", "]");
        bs(b, ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_X86_64\"],"
              "\"syscalls\":");
        bput(b, t.p, t.len);
        bs(b, "}");
    }
    bs(b, "}}");
    free(t.p);
}

static void in_cfg_annotations(struct buf *b, size_t size) { in_config(b, size, G_ANNOTATIONS); }
static void in_cfg_env(struct buf *b, size_t size) { in_config(b, size, G_ENV); }
static void in_cfg_mounts(struct buf *b, size_t size) { in_config(b, size, G_MOUNTS); }
static void in_cfg_seccomp(struct buf *b, size_t size) { in_config(b, size, G_SECCOMP); }
static void in_cfg_longarg(struct buf *b, size_t size) { in_config(b, size, G_LONGARG); }

/* A policy whose lists are long (they are added to brig's built-in ones). */
static void it_deny(struct buf *b, size_t i) { bf(b, "\"DENY_%zu_*\"", i); }
static void it_path(struct buf *b, size_t i) { bf(b, "\"/forbidden/%zu\"", i); }
static void in_policy(struct buf *b, size_t size, item_fn item, const char *list)
{
    bs(b, "{\"name\":\"bench\",\"mode\":\"enforce\",\"network\":{\"mode\":\"none\"},\"rootReadonly\":true,");
    struct buf t = { 0 };
    items(&t, size > 300 ? size - 300 : 16, "[", item, ",", "]");
    bs(b, strcmp(list, "env") == 0 ? "\"env\":{\"deny\":" : "\"forbiddenPaths\":");
    bput(b, t.p, t.len);
    bs(b, strcmp(list, "env") == 0 ? "}}" : "}");
    free(t.p);
}
static void in_policy_env(struct buf *b, size_t size) { in_policy(b, size, it_deny, "env"); }
static void in_policy_paths(struct buf *b, size_t size) { in_policy(b, size, it_path, "paths"); }

/* compose: one service with a long list or map, or many services/anchors */
static void in_compose(struct buf *b, size_t size, int shape)
{
    /* the 1 MiB row just under compose's 1 MiB limit; larger ones over it */
    if (size == (1u << 20)) size -= 128;
    bs(b, "services:\n  app:\n    image: busybox@sha256:"
          "0000000000000000000000000000000000000000000000000000000000000000\n    read_only: true\n");
    switch (shape) {
    case 0:
        bs(b, "    environment:\n");
        for (size_t i = 0; b->len < size; i++) bf(b, "      - E%zu=v\n", i);
        break;
    case 1:
        bs(b, "    labels:\n");
        for (size_t i = 0; b->len < size; i++) bf(b, "      l%zu: v\n", i);
        break;
    case 2:
        bs(b, "    tmpfs:\n");
        for (size_t i = 0; b->len < size; i++) bf(b, "      - /t/%zu\n", i);
        break;
    case 3: {   /* as many anchors as brig takes, then aliases to them */
        bs(b, "    environment:\n");
        size_t n = 0;
        for (; n < 250 && (n == 0 || b->len < size / 2); n++) bf(b, "      - &a%zu E%zu=v\n", n, n);
        bs(b, "x-refs:\n");
        for (size_t i = 0; b->len < size; i++) bf(b, "  - *a%zu\n", i % n);
        break;
    }
    case 4:     /* many services: app is judged */
        for (size_t i = 0; b->len < size; i++) bf(b, "  s%zu:\n    image: x\n", i);
        break;
    }
}
static void in_compose_env(struct buf *b, size_t size) { in_compose(b, size, 0); }
static void in_compose_labels(struct buf *b, size_t size) { in_compose(b, size, 1); }
static void in_compose_tmpfs(struct buf *b, size_t size) { in_compose(b, size, 2); }
static void in_compose_alias(struct buf *b, size_t size) { in_compose(b, size, 3); }
static void in_compose_svcs(struct buf *b, size_t size) { in_compose(b, size, 4); }

/* image JSON: an OCI manifest with many layers, a config with a long Env,
 * an index with many manifests, docker save's manifest.json */
#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
static void it_desc(struct buf *b, size_t i)
{
    bf(b, "{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\",\"digest\":\"" DIGEST
          "\",\"size\":%zu}", i);
}
static void it_layerpath(struct buf *b, size_t i) { bf(b, "\"blobs/sha256/%064zu\"", i); }
static void in_img_manifest(struct buf *b, size_t size)
{
    bs(b, "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
          "\"digest\":\"" DIGEST "\",\"size\":1},\"layers\":");
    struct buf t = { 0 };
    items(&t, size > 200 ? size - 200 : 16, "[", it_desc, ",", "]");
    bput(b, t.p, t.len);
    bs(b, "}");
    free(t.p);
}
static void in_img_index(struct buf *b, size_t size)
{
    bs(b, "{\"schemaVersion\":2,\"manifests\":");
    struct buf t = { 0 };
    items(&t, size > 100 ? size - 100 : 16, "[", it_desc, ",", "]");
    bput(b, t.p, t.len);
    bs(b, "}");
    free(t.p);
}
static void in_img_config(struct buf *b, size_t size)
{
    bs(b, "{\"architecture\":\"amd64\",\"os\":\"linux\",\"config\":{\"Cmd\":[\"sh\"],\"Env\":");
    struct buf t = { 0 };
    items(&t, size > 200 ? size - 200 : 16, "[", it_env, ",", "]");
    bput(b, t.p, t.len);
    bs(b, "},\"rootfs\":{\"type\":\"layers\",\"diff_ids\":[]}}");
    free(t.p);
}
static void in_img_docker(struct buf *b, size_t size)
{
    bs(b, "[{\"Config\":\"blobs/sha256/" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
          "\",\"RepoTags\":[\"x:1\"],\"Layers\":");
    struct buf t = { 0 };
    items(&t, size > 200 ? size - 200 : 16, "[", it_layerpath, ",", "]");
    bput(b, t.p, t.len);
    bs(b, "}]");
    free(t.p);
}
/* brig-rootfs's own manifest: one line per file, sorted */
static void in_rootfs_manifest(struct buf *b, size_t size)
{
    bs(b, "# brig-rootfs manifest 1\nd 0755 0 0 0 0.000000000 - /\n");
    for (size_t i = 0; b->len < size; i++)
        bf(b, "f 0644 0 0 12 1700000000.000000000 - /f%012zu\n", i);
}

/* ---- what runs on each input ------------------------------------------- */

static struct brig_policy *agent;

static int run_json(const char *t, size_t n, struct brig_error **err)
{
    autojson brig_json v = NULL;
    return json_parse(t, n, &v, err);
}

static int run_spec(const char *t, size_t n, struct brig_error **err)
{
    struct brig_spec *s = NULL;
    int r = spec_parse(t, n, "/bundle", &s, err);
    if (r == 0) r = spec_check_supported(s, err);
    spec_free(s);
    return r;
}

/* What create decides before anything exists: parse, supported, the
 * agent policy's verdict. */
static int run_check(const char *t, size_t n, struct brig_error **err)
{
    struct brig_spec *s = NULL;
    int r = spec_parse(t, n, "/bundle", &s, err);
    if (r == 0) {
        struct policy_report rep;
        policy_check(agent, s, &rep);
        policy_report_free(&rep);
    }
    spec_free(s);
    return r;
}

static int run_apply(const char *t, size_t n, struct brig_error **err)
{
    struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
    char *out = NULL;
    int r = policy_apply(agent, t, n, &o, &out, err);
    free(out);
    return r;
}

static int run_policy(const char *t, size_t n, struct brig_error **err)
{
    struct brig_policy *p = NULL;
    int r = policy_parse(t, n, &p, err);
    policy_free(p);
    return r;
}

static int run_compose(const char *t, size_t n, struct brig_error **err)
{
    struct policy_report rep;
    char *svc = NULL;
    int r = policy_compose_check_text(agent, t, n, "/nonexistent-bench", "app", &rep, &svc, err);
    if (r == 0) policy_report_free(&rep);
    free(svc);
    return r;
}

static int run_img_manifest(const char *t, size_t n, struct brig_error **err)
{
    struct image_manifest m;
    int r = image_parse_manifest(t, n, &m, err);
    image_manifest_free(&m);
    return r;
}

static int run_img_index(const char *t, size_t n, struct brig_error **err)
{
    struct image_index ix;
    int r = image_parse_index(t, n, &ix, err);
    image_index_free(&ix);
    return r;
}

static int run_img_config(const char *t, size_t n, struct brig_error **err)
{
    struct image_config c;
    int r = image_parse_config(t, n, &c, err);
    image_config_free(&c);
    return r;
}

static int run_img_docker(const char *t, size_t n, struct brig_error **err)
{
    struct docker_manifest dm;
    int r = image_parse_docker_manifest(t, n, &dm, err);
    docker_manifest_free(&dm);
    return r;
}

static int run_rootfs_manifest(const char *t, size_t n, struct brig_error **err)
{
    struct rootfs_manifest m = { 0 };
    int r = rootfs_manifest_parse(t, n, &m, err);
    rootfs_manifest_free(&m);
    return r;
}

struct bcase {
    const char *name;
    void (*make)(struct buf *b, size_t size);
    int (*run)(const char *t, size_t n, struct brig_error **err);
};

static const struct bcase cases[] = {
    { "json.keys", in_json_keys, run_json },
    { "json.array", in_json_array, run_json },
    { "json.deep", in_json_deep, run_json },
    { "json.string", in_json_string, run_json },
    { "spec.annotations", in_cfg_annotations, run_spec },
    { "spec.env", in_cfg_env, run_spec },
    { "spec.mounts", in_cfg_mounts, run_spec },
    { "spec.seccomp", in_cfg_seccomp, run_spec },
    { "spec.longarg", in_cfg_longarg, run_spec },
    { "check.annotations", in_cfg_annotations, run_check },
    { "check.env", in_cfg_env, run_check },
    { "check.mounts", in_cfg_mounts, run_check },
    { "apply.annotations", in_cfg_annotations, run_apply },
    { "apply.env", in_cfg_env, run_apply },
    { "apply.mounts", in_cfg_mounts, run_apply },
    { "apply.seccomp", in_cfg_seccomp, run_apply },
    { "policy.envdeny", in_policy_env, run_policy },
    { "policy.paths", in_policy_paths, run_policy },
    { "compose.env", in_compose_env, run_compose },
    { "compose.labels", in_compose_labels, run_compose },
    { "compose.tmpfs", in_compose_tmpfs, run_compose },
    { "compose.aliases", in_compose_alias, run_compose },
    { "compose.services", in_compose_svcs, run_compose },
    { "image.manifest", in_img_manifest, run_img_manifest },
    { "image.index", in_img_index, run_img_index },
    { "image.config", in_img_config, run_img_config },
    { "image.docker", in_img_docker, run_img_docker },
    { "rootfs.manifest", in_rootfs_manifest, run_rootfs_manifest },
};

/* ---- the timing -------------------------------------------------------- */

/* CPU time of this process, not the wall clock: on a shared machine the
 * wall clock of one run is mostly the scheduler's. Every parser is single
 * threaded and does no I/O. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The fastest of a few runs (enough to fill ~0.2 s, at most 20; one in --ci). */
static double time_case(const struct bcase *c, const struct buf *in, bool once, char *verdict, size_t vlen)
{
    double best = -1, spent = 0;
    for (int i = 0; i < 20 && (i == 0 || (!once && spent < 0.2)); i++) {
        struct brig_error *err = NULL;
        double t0 = now_s();
        int r = c->run(in->p, in->len, &err);
        double dt = now_s() - t0;
        spent += dt;
        if (best < 0 || dt < best) best = dt;
        if (i == 0) {
            if (r == 0) snprintf(verdict, vlen, "accepted");
            else snprintf(verdict, vlen, "refused: %.60s", err && err->msg[0] ? err->msg : "(no message)");
        }
        brig_error_free(err);
    }
    return best;
}

int main(int argc, char **argv)
{
    bool ci = false;
    size_t max = 64u << 20;
    double budget = 30;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ci") == 0) ci = true, max = 256u << 10;
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) max = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc) budget = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: bench-parse [--ci] [--max BYTES] [--budget SECONDS] [--only SUBSTRING]\n");
            return 2;
        }
    }
    brig_log_set_fd(-1);    /* spec_parse warns about what it ignores */
    struct brig_error *err = NULL;
    if (policy_load("agent", &agent, &err) < 0) {
        fprintf(stderr, "bench-parse: policy agent: %s\n", err->msg);
        return 1;
    }
    int failed = 0;
    printf("%-18s %10s %10s %9s  %s\n", "case", "bytes", "ms", "ns/byte", "verdict");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const struct bcase *c = &cases[k];
        if (only != NULL && strstr(c->name, only) == NULL) continue;
        for (size_t size = 1024; size <= max; size *= 4) {
            struct buf in = { 0 };
            c->make(&in, size);
            char verdict[128];
            double t = time_case(c, &in, ci, verdict, sizeof(verdict));
            double per = t * 1e9 / (double)in.len;
            printf("%-18s %10zu %10.2f %9.1f  %s\n", c->name, in.len, t * 1e3, per, verdict);
            fflush(stdout);
            free(in.p);
            if (strstr(verdict, "(no message)") != NULL) failed++;
            if (t > budget) {
                printf("%-18s stopped: one run took %.1f s (--budget %.0f)\n", c->name, t, budget);
                break;
            }
        }
    }
    policy_free(agent);
    if (failed) fprintf(stderr, "bench-parse: %d runs refused without a message\n", failed);
    return failed ? 1 : 0;
}
