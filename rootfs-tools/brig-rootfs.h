/* brig-rootfs: build, import and check runner root filesystems. Each
 * subcommand is one function in its own file, listed in brig-rootfs.c's
 * table; it gets argv from its own name on and returns the exit status. */
#ifndef BRIG_ROOTFS_H
#define BRIG_ROOTFS_H

int rootfs_cmd_import(int argc, char **argv);   /* import/import_cmd.c */

#endif
