/* libFuzzer target over spec_parse(): any input must either parse into a
 * spec that keeps the model's promises, or fail with a message and no
 * spec; never crash, hang or leak. spec_check_supported() runs on every
 * parsed spec so that the whole config module is exercised. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/spec.h"
#include "util/error.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() is what the fuzzer and the replay test both report. */
#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void check_strv(char **v, size_t n)
{
    CHECK(n == 0 || v != NULL);
    if (v != NULL) CHECK(v[n] == NULL);
}

static void check_spec(const struct brig_spec *s)
{
    CHECK(s->oci_version != NULL);
    CHECK(s->bundle != NULL && s->bundle[0] == '/');
    CHECK(s->root.path == NULL || s->root.path[0] == '/');
    if (s->has_process) {
        const struct brig_process *p = &s->process;
        CHECK(p->n_args > 0 && p->args[0][0] != '\0');
        check_strv(p->args, p->n_args);
        check_strv(p->env, p->n_env);
        CHECK(p->cwd != NULL && p->cwd[0] == '/');
        for (size_t i = 0; i < p->n_rlimits; i++) CHECK(p->rlimits[i].soft <= p->rlimits[i].hard);
    }
    for (size_t i = 0; i < s->n_mounts; i++) {
        CHECK(s->mounts[i].destination[0] == '/');
        check_strv(s->mounts[i].options, s->mounts[i].n_options);
    }
    for (int k = 0; k < BRIG_HOOK_KIND_COUNT; k++)
        for (size_t i = 0; i < s->hooks[k].n; i++) {
            CHECK(s->hooks[k].hooks[i].path[0] == '/');
            CHECK(!s->hooks[k].hooks[i].has_timeout || s->hooks[k].hooks[i].timeout > 0);
        }
    const struct brig_linux *l = &s->linux_cfg;
    for (size_t i = 0; i < l->n_devices; i++) CHECK(strchr("cbup", l->devices[i].type) != NULL);
    for (size_t i = 0; i < l->resources.n_devices; i++) {
        const struct brig_device_rule *d = &l->resources.devices[i];
        CHECK(strchr("acb", d->type) != NULL);
        CHECK(strspn(d->access, "rwm") == strlen(d->access));
    }
    for (size_t i = 0; i < l->seccomp.n_syscalls; i++) {
        CHECK(l->seccomp.syscalls[i].n_names > 0);
        for (size_t j = 0; j < l->seccomp.syscalls[i].n_args; j++)
            CHECK(l->seccomp.syscalls[i].args[j].index < 6);
    }
    for (size_t i = 0; i < l->resources.n_unified; i++)
        CHECK(strchr(l->resources.unified[i].key, '/') == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        brig_log_set_fd(-1);    /* unknown capabilities etc. warn on every input */
        quiet = 1;
    }
    struct brig_spec *s = NULL;
    struct brig_error *err = NULL;
    if (spec_parse((const char *)data, size, "/bundle", &s, &err) == 0) {
        CHECK(s != NULL && err == NULL);
        check_spec(s);
        if (spec_check_supported(s, &err) < 0) CHECK(err != NULL && err->msg[0] != '\0');
        spec_free(s);
    } else {
        CHECK(s == NULL && err != NULL && err->msg[0] != '\0');
    }
    brig_error_free(err);
    return 0;
}
