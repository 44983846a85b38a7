/* spec_parse over the runtime-spec's own schema test configs (good must
 * parse, bad must fail naming the offending path), the spec's example
 * config in detail, and spec_load on a real bundle directory. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/mount_options.h"
#include "config/spec.h"
#include "linux/caps.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/strutil.h"

#ifndef RUNTIME_SPEC_DIR
#error "RUNTIME_SPEC_DIR must be defined by meson"
#endif
#define CONFIG_TESTS RUNTIME_SPEC_DIR "/schema/test/config"

static char *read_all(const char *path, size_t *len)
{
    char *text = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(brig_read_file(path, 1 << 24, &text, len, &err), 0, "%s: %s", path,
                 err ? err->msg : "");
    return text;
}

static void need_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        cr_skip_test("runtime-spec reference %s is not on this machine", dir);
}

static int parse_file(const char *path, struct brig_spec **s, struct brig_error **err)
{
    size_t len = 0;
    autofree char *text = read_all(path, &len);
    return spec_parse(text, len, "/bundle", s, err);
}

Test(spec_files, every_good_config_parses)
{
    need_dir(CONFIG_TESTS "/good");
    DIR *d = opendir(CONFIG_TESTS "/good");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        autofree char *p = brig_asprintf("%s/good/%s", CONFIG_TESTS, e->d_name);
        autospec struct brig_spec *s = NULL;
        autoerr struct brig_error *err = NULL;
        cr_expect_eq(parse_file(p, &s, &err), 0, "%s: %s", e->d_name, err ? err->msg : "");
        if (s != NULL) cr_expect_str_eq(s->root.path, "/bundle/rootfs", "%s", e->d_name);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 5, "expected the spec's good configs, found %d", n);
}

/* What each bad config of the spec is about, as the path our message names.
 * A bad file not listed here must still fail. */
static const struct {
    const char *file;
    const char *expect;
} bad_files[] = {
    { "invalid-json.json", "invalid JSON: " },
    { "linux-hugepage.json", "linux.resources.hugepageLimits[0].pageSize: invalid page size \"64kB\"" },
    { "linux-netdevice.json", "linux.netDevices.eth0.name: expected a string, got 23" },
    { "linux-rdma.json",
      "linux.resources.rdma.mlx5_1.hcaHandles: expected an unsigned 32-bit integer, "
      "got \"not a uint32\"" },
};

Test(spec_files, every_bad_config_fails_naming_the_path)
{
    need_dir(CONFIG_TESTS "/bad");
    DIR *d = opendir(CONFIG_TESTS "/bad");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        autofree char *p = brig_asprintf("%s/bad/%s", CONFIG_TESTS, e->d_name);
        autospec struct brig_spec *s = NULL;
        autoerr struct brig_error *err = NULL;
        cr_expect_eq(parse_file(p, &s, &err), -1, "%s was accepted", e->d_name);
        cr_expect_null(s);
        if (err == NULL) continue;
        bool listed = false;
        for (size_t i = 0; i < BRIG_ARRAY_SIZE(bad_files); i++) {
            if (strcmp(bad_files[i].file, e->d_name) != 0) continue;
            listed = true;
            cr_expect(strstr(err->msg, bad_files[i].expect) != NULL, "%s: got \"%s\", want \"%s\"",
                      e->d_name, err->msg, bad_files[i].expect);
        }
        if (!listed) cr_log_warn("bad config %s is new to this test: %s", e->d_name, err->msg);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 4);
}

static uint64_t capbit(const char *name)
{
    int c = caps_from_name(name);
    return c >= 0 && c < 64 ? UINT64_C(1) << c : 0;
}

Test(spec_files, spec_example_in_detail)
{
    need_dir(CONFIG_TESTS "/good");
    autospec struct brig_spec *s = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse_file(CONFIG_TESTS "/good/spec-example.json", &s, &err), 0, "%s",
                 err ? err->msg : "");
    cr_assert_str_eq(s->oci_version, "0.5.0-dev");
    cr_assert_str_eq(s->bundle, "/bundle");
    cr_assert_str_eq(s->root.path, "/bundle/rootfs");
    cr_assert(s->root.readonly);
    cr_assert_str_eq(s->hostname, "slartibartfast");
    cr_assert_str_eq(s->domainname, "foobarbaz.test");

    const struct brig_process *p = &s->process;
    cr_assert(s->has_process);
    cr_assert(p->terminal);
    cr_assert_eq(p->user.uid, 1);
    cr_assert_eq(p->user.gid, 1);
    cr_assert(!p->user.has_umask);
    cr_assert_eq(p->user.n_additional_gids, 2);
    cr_assert_eq(p->user.additional_gids[1], 6);
    cr_assert_eq(p->n_args, 1);
    cr_assert_str_eq(p->args[0], "sh");
    cr_assert_null(p->args[1]);
    cr_assert_eq(p->n_env, 2);
    cr_assert_str_eq(p->env[1], "TERM=xterm");
    cr_assert_str_eq(p->cwd, "/");
    cr_assert(p->has_caps);
    for (int i = 0; i < BRIG_CAP_SET_COUNT; i++) cr_assert(p->caps.present[i]);
    uint64_t three = capbit("CAP_AUDIT_WRITE") | capbit("CAP_KILL") | capbit("CAP_NET_BIND_SERVICE");
    cr_assert_eq(p->caps.sets[BRIG_CAP_BOUNDING], three);
    cr_assert_eq(p->caps.sets[BRIG_CAP_EFFECTIVE], capbit("CAP_AUDIT_WRITE") | capbit("CAP_KILL"));
    cr_assert_eq(p->caps.sets[BRIG_CAP_AMBIENT], capbit("CAP_NET_BIND_SERVICE"));
    cr_assert_eq(p->n_rlimits, 2);
    cr_assert_eq(p->rlimits[0].resource, RLIMIT_CORE);
    cr_assert_str_eq(p->rlimits[1].name, "RLIMIT_NOFILE");
    cr_assert_eq(p->rlimits[1].soft, 1024);
    cr_assert_str_eq(p->apparmor_profile, "acme_secure_profile");
    cr_assert_str_eq(p->selinux_label, "system_u:system_r:svirt_lxc_net_t:s0:c124,c675");
    cr_assert(p->no_new_privileges);
    cr_assert(!p->has_oom_score_adj, "oomScoreAdj of the example is under resources: ignored");

    cr_assert_eq(s->n_mounts, 7);
    cr_assert_str_eq(s->mounts[1].destination, "/dev");
    cr_assert_str_eq(s->mounts[1].type, "tmpfs");
    cr_assert_eq(s->mounts[1].n_options, 4);
    cr_assert_str_eq(s->mounts[6].options[4], "ro");

    cr_assert_eq(s->hooks[BRIG_HOOK_PRESTART].n, 2);
    cr_assert_str_eq(s->hooks[BRIG_HOOK_PRESTART].hooks[0].path, "/usr/bin/fix-mounts");
    cr_assert_eq(s->hooks[BRIG_HOOK_PRESTART].hooks[0].n_args, 3);
    cr_assert_str_eq(s->hooks[BRIG_HOOK_PRESTART].hooks[0].env[0], "key1=value1");
    cr_assert_eq(s->hooks[BRIG_HOOK_CREATE_RUNTIME].n, 2);
    cr_assert_eq(s->hooks[BRIG_HOOK_CREATE_CONTAINER].n, 1);
    cr_assert_eq(s->hooks[BRIG_HOOK_START_CONTAINER].n, 1);
    cr_assert(s->hooks[BRIG_HOOK_POSTSTART].hooks[0].has_timeout);
    cr_assert_eq(s->hooks[BRIG_HOOK_POSTSTART].hooks[0].timeout, 5);
    cr_assert_eq(s->hooks[BRIG_HOOK_POSTSTOP].hooks[0].n_args, 2);
    cr_assert_eq(s->n_annotations, 2);
    cr_assert_str_eq(s->annotations[0].key, "com.example.key1");

    const struct brig_linux *l = &s->linux_cfg;
    cr_assert(s->has_linux);
    cr_assert_eq(l->n_devices, 2);
    cr_assert_eq(l->devices[0].type, 'c');
    cr_assert_eq(l->devices[0].major, 10);
    cr_assert_eq(l->devices[0].minor, 229);
    cr_assert_eq(l->devices[0].file_mode, 438);
    cr_assert_eq(l->devices[1].type, 'b');
    cr_assert_eq(l->n_uid_mappings, 1);
    cr_assert_eq(l->uid_mappings[0].host_id, 1000);
    cr_assert_eq(l->gid_mappings[0].size, 32000);
    cr_assert_eq(l->n_sysctl, 2);
    cr_assert_str_eq(l->sysctl[1].value, "256");
    cr_assert_str_eq(l->cgroups_path, "/myRuntime/myContainer");
    for (int i = 0; i < BRIG_NS_COUNT; i++) {
        cr_assert(l->namespaces[i].present, "%s", spec_ns_name(i));
        cr_assert_null(l->namespaces[i].path);
    }
    unsigned long slave = 0;
    cr_assert_eq(mount_propagation_parse("slave", &slave), 0);
    cr_assert(l->has_rootfs_propagation);
    cr_assert_eq(l->rootfs_propagation, slave);
    cr_assert_eq(l->n_masked_paths, 4);
    cr_assert_str_eq(l->readonly_paths[5], "/proc/sysrq-trigger");
    cr_assert_str_eq(l->mount_label, "system_u:object_r:svirt_sandbox_file_t:s0:c715,c811");
    cr_assert(l->time_offsets[0].set);
    cr_assert_eq(l->time_offsets[0].secs, 172800);
    cr_assert_eq(l->time_offsets[1].secs, 604800);

    const struct brig_resources *r = &l->resources;
    cr_assert(r->present);
    cr_assert(r->network.has_class_id);
    cr_assert_eq(r->network.class_id, 1048577);
    cr_assert_eq(r->network.n_priorities, 2);
    cr_assert_str_eq(r->network.priorities[1].name, "eth1");
    cr_assert_eq(r->pids.limit.v, 32771);
    cr_assert_eq(r->n_hugepage_limits, 2);
    cr_assert_eq(r->hugepage_limits[0].limit, UINT64_C(9223372036854772000));
    cr_assert_str_eq(r->hugepage_limits[1].page_size, "64KB");
    cr_assert(r->memory.limit.set);
    cr_assert_eq(r->memory.limit.v, 536870912);
    cr_assert_eq(r->memory.kernel.v, -1);
    cr_assert(r->memory.swappiness.set);
    cr_assert_eq(r->memory.swappiness.v, 0);
    cr_assert(r->memory.has_disable_oom_killer);
    cr_assert(!r->memory.disable_oom_killer);
    cr_assert_eq(r->cpu.shares.v, 1024);
    cr_assert_eq(r->cpu.quota.v, 1000000);
    cr_assert_eq(r->cpu.burst.v, 1000000);
    cr_assert_eq(r->cpu.realtime_runtime.v, 950000);
    cr_assert_str_eq(r->cpu.cpus, "2-3");
    cr_assert(!r->cpu.idle.set);
    cr_assert_eq(r->n_devices, 3);
    cr_assert(!r->devices[0].allow);
    cr_assert_eq(r->devices[0].type, 'a');
    cr_assert_eq(r->devices[0].major, -1);
    cr_assert_str_eq(r->devices[0].access, "rwm");
    cr_assert_eq(r->devices[1].type, 'c');
    cr_assert_str_eq(r->devices[1].access, "rw");
    cr_assert_eq(r->block_io.weight, 10);
    cr_assert_eq(r->block_io.n_weight_devices, 2);
    cr_assert(!r->block_io.weight_devices[1].has_leaf_weight);
    cr_assert_eq(r->block_io.weight_devices[0].leaf_weight, 300);
    cr_assert_eq(r->block_io.n_throttle_read_bps, 1);
    cr_assert_eq(r->block_io.throttle_read_bps[0].rate, 600);
    cr_assert_eq(r->block_io.n_throttle_write_iops, 1);
    cr_assert_eq(r->block_io.n_throttle_write_bps, 0);

    const struct brig_seccomp *sc = &l->seccomp;
    cr_assert(sc->present);
    cr_assert_eq(sc->default_action, BRIG_SCMP_ALLOW);
    cr_assert_eq(sc->n_architectures, 2);
    cr_assert_str_eq(sc->architectures[1], "SCMP_ARCH_X32");
    cr_assert_eq(sc->n_syscalls, 1);
    cr_assert_eq(sc->syscalls[0].n_names, 2);
    cr_assert_str_eq(sc->syscalls[0].names[1], "chmod");
    cr_assert_eq(sc->syscalls[0].action, BRIG_SCMP_ERRNO);
    cr_assert(!l->personality.present);
    cr_assert(!l->has_intel_rdt && !l->has_net_devices && !l->memory_policy.present);
}

Test(spec_files, netdevice_and_rdma_good)
{
    need_dir(CONFIG_TESTS "/good");
    autospec struct brig_spec *s = NULL;
    cr_assert_eq(parse_file(CONFIG_TESTS "/good/linux-netdevice.json", &s, NULL), 0);
    cr_assert(s->linux_cfg.has_net_devices);
    autospec struct brig_spec *s2 = NULL;
    cr_assert_eq(parse_file(CONFIG_TESTS "/good/linux-rdma.json", &s2, NULL), 0);
    const struct brig_resources *r = &s2->linux_cfg.resources;
    cr_assert_eq(r->n_rdma, 3);
    cr_assert_str_eq(r->rdma[0].device, "mlx5_1");
    cr_assert_eq(r->rdma[0].hca_handles, 3);
    cr_assert_eq(r->rdma[0].hca_objects, 10000);
    cr_assert(!r->rdma[1].has_hca_handles);
}

/* spec_load: a real bundle directory, given relatively. */
Test(spec_files, load_from_bundle)
{
    char tmpl[] = "/tmp/brig-spec-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    autofree char *cfg = brig_asprintf("%s/config.json", tmpl);
    FILE *f = fopen(cfg, "w");
    cr_assert_not_null(f);
    fputs("{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"./rootfs/\"},"
          " \"mounts\": [{\"destination\": \"/data\", \"source\": \"vol\", \"options\": [\"rbind\"]}]}",
          f);
    fclose(f);

    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
    cr_assert_eq(chdir("/tmp"), 0);
    autospec struct brig_spec *s = NULL;
    autoerr struct brig_error *err = NULL;
    int r = spec_load(tmpl + strlen("/tmp/"), &s, &err);
    cr_assert_eq(chdir(cwd), 0);
    cr_assert_eq(r, 0, "%s", err ? err->msg : "");
    autofree char *want = brig_asprintf("%s/rootfs", tmpl);
    cr_assert_str_eq(s->root.path, want);
    cr_assert_str_eq(s->bundle, tmpl);
    autofree char *vol = brig_asprintf("%s/vol", tmpl);
    cr_assert_str_eq(s->mounts[0].source, vol, "relative bind source is bundle-relative");

    f = fopen(cfg, "w");
    fputs("{\"ociVersion\": \"1.2.0\", \"process\": {\"cwd\": \"/\"}}", f);
    fclose(f);
    autospec struct brig_spec *s2 = NULL;
    autoerr struct brig_error *err2 = NULL;
    cr_assert_eq(spec_load(tmpl, &s2, &err2), -1);
    cr_assert_str_eq(err2->msg, "config.json: process.args: required, with at least one entry");

    unlink(cfg);
    autoerr struct brig_error *err3 = NULL;
    cr_assert_eq(spec_load(tmpl, &s2, &err3), -1);
    cr_assert(strstr(err3->msg, "config.json") != NULL && strstr(err3->msg, "No such file"),
              "msg: %s", err3->msg);
    rmdir(tmpl);
}
