/* libFuzzer target over brig-rootfs import's JSON parsers: the OCI index,
 * manifest and config, and docker save's manifest.json, on the same input.
 * Whatever parses as a config is written out as the image config file and
 * must parse again to the same Cmd/Env/WorkingDir. Errors are fine;
 * crashes, leaks and aborts are not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rootfs-tools/import/import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static bool strv_eq(char **a, char **b)
{
    if (a == NULL || b == NULL) return a == b;
    size_t i = 0;
    for (; a[i] != NULL && b[i] != NULL; i++)
        if (strcmp(a[i], b[i]) != 0) return false;
    return a[i] == NULL && b[i] == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct brig_error *err = NULL;

    struct image_index ix;
    if (image_parse_index(text, size, &ix, &err) == 0)
        for (size_t i = 0; i < ix.n; i++) CHECK(strlen(ix.m[i].hex) == 64);
    image_index_free(&ix);
    brig_error_free(err), err = NULL;

    struct image_manifest m;
    if (image_parse_manifest(text, size, &m, &err) == 0) CHECK(strlen(m.config.hex) == 64);
    image_manifest_free(&m);
    brig_error_free(err), err = NULL;

    struct docker_manifest dm;
    if (image_parse_docker_manifest(text, size, &dm, &err) == 0)
        for (size_t i = 0; i < dm.n; i++) CHECK(dm.img[i].config != NULL && dm.img[i].layers != NULL);
    docker_manifest_free(&dm);
    brig_error_free(err), err = NULL;

    struct image_config c;
    if (image_parse_config(text, size, &c, &err) == 0) {
        size_t len;
        char *out = image_config_json(&c, NULL, &len);
        CHECK(out != NULL);
        /* the written file is a config's "config" object: wrap it */
        size_t wlen = len + 16;
        char *wrapped = malloc(wlen);
        CHECK(wrapped != NULL);
        int n = snprintf(wrapped, wlen, "{\"config\":%s}", out);
        struct image_config again;
        struct brig_error *e2 = NULL;
        CHECK(image_parse_config(wrapped, (size_t)n, &again, &e2) == 0);
        CHECK(strv_eq(c.cmd, again.cmd) && strv_eq(c.env, again.env) &&
              strv_eq(c.entrypoint, again.entrypoint));
        CHECK(strcmp(c.working_dir ? c.working_dir : "", again.working_dir ? again.working_dir : "") == 0);
        image_config_free(&again);
        free(wrapped);
        free(out);
    }
    image_config_free(&c);
    brig_error_free(err);
    return 0;
}
