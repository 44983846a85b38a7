/* brig-rootfs: one function per subcommand, listed in brig-rootfs.c's
 * table. argv excludes the subcommand's name. Exit statuses: 0 done, 1 the
 * check failed (drift, a missing tool, a refused image), 2 bad input or an
 * error. */
#ifndef BRIG_ROOTFS_CLI_H
#define BRIG_ROOTFS_CLI_H

#include "../runtime/util/error.h"

typedef int (*rootfs_cmd_fn)(int argc, char **argv, int *status, struct brig_error **err);

int rootfs_cmd_from_host(int argc, char **argv, int *status, struct brig_error **err);   /* rootfs_from_host.c */
int rootfs_cmd_verify(int argc, char **argv, int *status, struct brig_error **err);      /* rootfs_verify.c */
int rootfs_cmd_bundle(int argc, char **argv, int *status, struct brig_error **err);      /* rootfs_bundle.c */
/* import/import_cmd.c: argv from its own name on; returns the exit status. */
int rootfs_cmd_import(int argc, char **argv);

/* rootfs_progress.c: on stderr when it is a terminal, a bar (or, with no
 * total, counts) redrawn at most every 100 ms; then, terminal or not, one
 * summary line: "brig-rootfs CMD: WHAT: N entries, SIZE in T s". */
#include <stdbool.h>
#include <stdint.h>
#include "lib/rootfs.h"
struct rootfs_bar {
    struct rootfs_progress p;       /* hand &bar.p to the library */
    const char *cmd;
    bool tty, drawn;
    uint64_t start_ms, last_ms;
};
void rootfs_bar_init(struct rootfs_bar *b, const char *cmd);
/* Clears the bar; the summary line unless what is NULL. */
void rootfs_bar_end(struct rootfs_bar *b, const char *what, uint64_t entries, uint64_t bytes);

#endif
