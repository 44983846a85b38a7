/* brig policy selftest --engine docker -- FLAGS...: the probe run by
 * Docker with the user's own `docker run` flags, so that a Docker user
 * proves their definition (whatever runtime dockerd uses) against the
 * policy with the same boundary report as a brig selftest.
 *
 * The selftest rootfs (the static probe, passwd/group) is imported as a
 * throwaway image, run with FLAGS, then the container and the image are
 * removed whatever happened. The daemon is the caller's (DOCKER_HOST is
 * passed on). */
#include "policy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy_tree.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

/* The distribution's client first (a newer one earlier in PATH may not
 * speak to an older daemon), else the first in PATH. */
static char *eng_docker(void)
{
    if (access("/usr/bin/docker", X_OK) == 0) return brig_strdup("/usr/bin/docker");
    const char *path = getenv("PATH");
    autofree char *copy = brig_strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        autofree char *c = brig_asprintf("%s/docker", d);
        if (access(c, X_OK) == 0) return steal_ptr(&c);
    }
    return NULL;
}

int policy_selftest_engine(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                           const char *id, const char *out, const char *errf, int *status,
                           struct brig_error **err)
{
    if (strcmp(o->engine, "docker") != 0)
        return brig_failx(err, "--engine %s: only docker is supported", o->engine);
    autofree char *docker = eng_docker();
    if (docker == NULL) return brig_failx(err, "--engine docker: no docker client (/usr/bin/docker or in PATH)");
    autofree char *image = brig_asprintf("%s:latest", id);
    autofree char *rootfs = brig_asprintf("%s/rootfs", dir);
    autofree char *log = brig_asprintf("%s/engine.log", dir);
    /* tar | docker import: the image holds exactly the selftest rootfs. */
    autofree char *import = brig_asprintf("tar --numeric-owner -C \"$1\" -cf - . | %s import - \"$2\" >/dev/null",
                                          docker);
    char *imp[] = { "/bin/sh", "-c", import, "sh", rootfs, image, NULL };
    int st = 0;
    if (policy_selftest_spawn(imp, log, log, &st, err) < 0) return -1;
    if (st != 0) {
        autofree char *text = NULL;
        size_t len = 0;
        brig_read_file(log, 4096, &text, &len, NULL);
        return brig_failx(err, "docker import of the probe image failed: %.400s", text ? text : "");
    }
    autoptree struct ptree *args = policy_selftest_args(p, false);
    size_t n_flags = 0;
    for (char **f = o->engine_args; f && *f; f++) n_flags++;
    char **argv = brig_calloc(n_flags + args->n + 8, sizeof(char *));
    size_t a = 0;
    argv[a++] = docker;
    argv[a++] = "run";
    argv[a++] = "--name";
    argv[a++] = (char *)id;
    for (char **f = o->engine_args; f && *f; f++) argv[a++] = *f;
    argv[a++] = image;
    for (size_t i = 0; i < args->n; i++) argv[a++] = args->vals[i]->s;
    argv[a] = NULL;
    brig_debug("selftest: docker run --name %s ... %s", id, image);
    int r = policy_selftest_spawn(argv, out, errf, status, err);
    char *rm[] = { docker, "rm", "-f", (char *)id, NULL };
    char *rmi[] = { docker, "rmi", "-f", image, NULL };
    int ignored = 0;
    policy_selftest_spawn(rm, log, log, &ignored, NULL);
    policy_selftest_spawn(rmi, log, log, &ignored, NULL);
    free(argv);
    return r;
}
