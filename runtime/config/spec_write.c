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
