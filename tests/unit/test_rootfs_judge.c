/* brig-rootfs import's judging of what an image names: entry paths,
 * whiteouts, modes, digests, sizes (rootfs-tools/import/judge.c), and the
 * parsers of the image's JSON (image.c). */
#include <criterion/criterion.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"

static const char *clean(const char *in)
{
    static char out[PATH_MAX];
    struct brig_error *err = NULL;
    if (judge_entry_path(in, out, sizeof(out), &err) < 0) {
        brig_error_free(err);
        return NULL;
    }
    return out;
}

Test(judge_path, cleans_honest_names)
{
    cr_assert_str_eq(clean("./etc/passwd"), "etc/passwd");
    cr_assert_str_eq(clean("etc//x/./y/"), "etc/x/y");
    cr_assert_str_eq(clean("./"), "");
    cr_assert_str_eq(clean("a..b/..c/c.."), "a..b/..c/c..");   /* dots inside names are names */
    cr_assert_str_eq(clean(".wh..wh..opq"), ".wh..wh..opq");
}

Test(judge_path, refuses_what_leaves_the_root)
{
    cr_assert_null(clean("../x"));
    cr_assert_null(clean("a/../../x"));
    cr_assert_null(clean("a/.."));           /* even when it would stay inside */
    cr_assert_null(clean("./.."));
    cr_assert_null(clean("/etc/passwd"));
    cr_assert_null(clean("//etc"));
    cr_assert_null(clean(""));
    char longname[NAME_MAX + 3];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cr_assert_null(clean(longname));
}

static enum judge_wh wh(const char *p, char *target)
{
    enum judge_wh k;
    struct brig_error *err = NULL;
    if (judge_whiteout(p, &k, target, PATH_MAX, &err) < 0) {
        brig_error_free(err);
        return (enum judge_wh)-1;
    }
    return k;
}

Test(judge_whiteout, kinds)
{
    char t[PATH_MAX];
    cr_assert_eq(wh("etc/passwd", t), JUDGE_WH_NONE);
    cr_assert_eq(wh("etc/.wh.passwd", t), JUDGE_WH_FILE);
    cr_assert_str_eq(t, "etc/passwd");
    cr_assert_eq(wh(".wh.top", t), JUDGE_WH_FILE);
    cr_assert_str_eq(t, "top");
    cr_assert_eq(wh("usr/lib/.wh..wh..opq", t), JUDGE_WH_OPAQUE);
    cr_assert_str_eq(t, "usr/lib");
    cr_assert_eq(wh(".wh..wh..opq", t), JUDGE_WH_OPAQUE);
    cr_assert_str_eq(t, "");
    cr_assert_eq(wh(".wh..wh.plnk", t), JUDGE_WH_IGNORE);
    cr_assert_eq(wh("a/.wh..wh.aufs", t), JUDGE_WH_IGNORE);
    cr_assert_eq(wh("a/x.wh.y", t), JUDGE_WH_NONE);
}

Test(judge_whiteout, refuses_dot_names)
{
    char t[PATH_MAX];
    cr_assert_eq(wh("etc/.wh...", t), (enum judge_wh)-1);
    cr_assert_eq(wh(".wh...", t), (enum judge_wh)-1);
    cr_assert_eq(wh("etc/.wh..", t), (enum judge_wh)-1);
    cr_assert_eq(wh("etc/.wh.", t), (enum judge_wh)-1);
}

Test(judge_mode, devices_and_setuid)
{
    mode_t m;
    bool s;
    struct brig_error *err = NULL;
    cr_assert_eq(judge_mode(S_IFCHR | 0666, 0, &m, &s, &err), -1);
    cr_assert(strstr(err->msg, "--allow-devices") != NULL);
    brig_error_free(err);
    err = NULL;
    cr_assert_eq(judge_mode(S_IFBLK | 0600, JUDGE_ALLOW_DEVICES, &m, &s, &err), 0);
    cr_assert_eq(judge_mode(S_IFSOCK | 0600, JUDGE_ALLOW_DEVICES, &m, &s, &err), -1);
    brig_error_free(err);
    err = NULL;
    cr_assert_eq(judge_mode(S_IFREG | 04755, 0, &m, &s, &err), 0);
    cr_assert_eq(m, S_IFREG | 0755);
    cr_assert(s);
    cr_assert_eq(judge_mode(S_IFREG | 06755, JUDGE_KEEP_SETUID, &m, &s, &err), 0);
    cr_assert_eq(m, S_IFREG | 06755);
    cr_assert_not(s);
    /* setgid on a directory only means "inherit the group" */
    cr_assert_eq(judge_mode(S_IFDIR | 02775, 0, &m, &s, &err), 0);
    cr_assert_eq(m, S_IFDIR | 02775);
    cr_assert_eq(judge_mode(S_IFIFO | 0600, 0, &m, &s, &err), 0);
    cr_assert_eq(judge_mode(S_IFLNK | 0777, 0, &m, &s, &err), 0);
}

Test(judge_digest, sha256_only)
{
    char hex[65];
    struct brig_error *err = NULL;
    const char *ok = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    cr_assert_eq(judge_digest(ok, hex, &err), 0);
    cr_assert_str_eq(hex, ok + 7);
    cr_assert_eq(judge_digest("sha512:abcd", hex, &err), -1);
    brig_error_free(err);
    err = NULL;
    cr_assert_eq(judge_digest("sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", hex, &err), -1);
    brig_error_free(err);
    err = NULL;
    cr_assert_eq(judge_digest("sha256:../../etc/passwd", hex, &err), -1);
    brig_error_free(err);
}

Test(judge_size, units)
{
    uint64_t v;
    cr_assert_eq(judge_size("100", &v), 0);
    cr_assert_eq(v, 100);
    cr_assert_eq(judge_size("16M", &v), 0);
    cr_assert_eq(v, 16u << 20);
    cr_assert_eq(judge_size("8G", &v), 0);
    cr_assert_eq(v, 8ull << 30);
    cr_assert_eq(judge_size("1X", &v), -1);
    cr_assert_eq(judge_size("-1", &v), -1);
    cr_assert_eq(judge_size("99999999999T", &v), -1);
    cr_assert_eq(judge_size("", &v), -1);
    cr_assert_eq(judge_size("1MB", &v), -1);
}

Test(image_json, manifest_and_config)
{
    const char *m = "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"x\",\"digest\":\"sha256:"
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\",\"size\":2},"
                    "\"layers\":[{\"digest\":\"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\","
                    "\"size\":7,\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\"}]}";
    struct image_manifest man;
    struct brig_error *err = NULL;
    cr_assert_eq(image_parse_manifest(m, strlen(m), &man, &err), 0);
    cr_assert_eq(man.n, 1);
    cr_assert_eq(man.layers[0].size, 7);
    image_manifest_free(&man);
    const char *bad = "{\"config\":{\"digest\":\"sha256:../x\",\"size\":1},\"layers\":[]}";
    cr_assert_eq(image_parse_manifest(bad, strlen(bad), &man, &err), -1);
    cr_assert(strstr(err->msg, "config.digest") != NULL, "%s", err->msg);
    brig_error_free(err);
    image_manifest_free(&man);

    const char *c = "{\"os\":\"linux\",\"architecture\":\"amd64\",\"config\":{\"Env\":[\"A=1\"],"
                    "\"Cmd\":[\"sh\"],\"WorkingDir\":\"/w\"},\"rootfs\":{\"diff_ids\":[]}}";
    struct image_config cfg;
    err = NULL;
    cr_assert_eq(image_parse_config(c, strlen(c), &cfg, &err), 0);
    cr_assert_str_eq(cfg.env[0], "A=1");
    cr_assert_str_eq(cfg.working_dir, "/w");
    cr_assert_null(cfg.entrypoint);
    size_t len;
    char *out = image_config_json(&cfg, NULL, &len);
    cr_assert(strstr(out, "\"Entrypoint\": null") != NULL, "%s", out);
    free(out);
    image_config_free(&cfg);
}
