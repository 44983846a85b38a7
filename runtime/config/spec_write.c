/* Pieces of a config.json that several writers emit the same way (brig
 * spec, the sandbox's in-memory config, brig-rootfs bundle): written once. */
#include "spec_write.h"

void spec_write_deny_devices(struct brig_jw *w)
{
    jw_key(w, "resources");
    jw_obj_open(w);
    jw_key(w, "devices");
    jw_arr_open(w);
    jw_obj_open(w);
    jw_kbool(w, "allow", false);
    jw_kstr(w, "access", "rwm");
    jw_obj_close(w);
    jw_arr_close(w);
    jw_obj_close(w);
}

void spec_write_namespaces(struct brig_jw *w, const char *const *types)
{
    jw_key(w, "namespaces");
    jw_arr_open(w);
    for (const char *const *n = types; *n != NULL; n++) {
        jw_obj_open(w);
        jw_kstr(w, "type", *n);
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

void spec_write_mount(struct brig_jw *w, const char *dst, const char *type, const char *src,
                      const char *const *opts)
{
    jw_obj_open(w);
    jw_kstr(w, "destination", dst);
    jw_kstr(w, "type", type);
    jw_kstr(w, "source", src);
    jw_key(w, "options");
    jw_arr_open(w);
    for (; *opts; opts++) jw_str(w, *opts);
    jw_arr_close(w);
    jw_obj_close(w);
}

void spec_write_kernel_mounts(struct brig_jw *w)
{
    static const char *const none[] = { NULL };
    static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
    static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL };
    static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
    static const char *const mq[] = { "nosuid", "noexec", "nodev", NULL };
    static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
    spec_write_mount(w, "/proc", "proc", "proc", none);
    spec_write_mount(w, "/dev", "tmpfs", "tmpfs", dev);
    spec_write_mount(w, "/dev/pts", "devpts", "devpts", pts);
    spec_write_mount(w, "/dev/shm", "tmpfs", "shm", shm);
    spec_write_mount(w, "/dev/mqueue", "mqueue", "mqueue", mq);
    spec_write_mount(w, "/sys", "sysfs", "sysfs", sys);
}
