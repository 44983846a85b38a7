/* The last steps before execve, shared by the container's init
 * (linux/child.c) and processes started by `brig exec` (lifecycle/exec.c):
 * find the program, confine the process, reset signals, exec. */
#ifndef BRIG_PROC_EXEC_H
#define BRIG_PROC_EXEC_H

#include <stdbool.h>

#include "../config/spec.h"
#include "caps.h"
#include "seccomp.h"

/* Where execve will find p->args[0]: a path with a slash as is, else looked
 * up in the process's PATH (or the default one) inside the current root.
 * Not found: the error's exec_status is 127; found but not an executable
 * file: 126 (proc_execve sets it too when execve itself fails). */
int proc_find_exec(const struct brig_process *p, char **out, struct brig_error **err);

/* Everything the last steps need, made before the identity switch:
 * from it to execve, proc_confine and proc_execve touch no heap
 * (util/noheap.h). Never freed: the process execs or exits with it. */
struct proc_launch {
    char **argv;                /* p->args, or the trampoline's */
    char **envp;                /* p->env plus HOME */
    const char *exe;
    int via_fd;                 /* the trampoline, or -1 */
    const char *via_name;
    int report_fd;              /* the trampoline tells a failed execve here (the sync socket), or -1 */
    char report_arg[16];        /* report_fd in decimal, in argv */
    struct caps_plan caps;
    const struct brig_bpf *setid;   /* loaded before the process's own filter, or NULL */
};
/* exe as found by proc_find_exec; home_env as proc_home_default's (may be
 * NULL); via_fd/via_name: the trampoline (an O_PATH fd of a static
 * program, lifecycle/exec.h), or -1: then execveat(via_fd) of
 * `via_name --exec EXE -- p->args...`, which execs EXE, and nothing the
 * kernel runs as /proc/self/exe for EXE's execve is brig. report_fd >= 0
 * (with via_fd): `via_name --exec-sync REPORT_FD EXE -- p->args...`, the
 * trampoline keeping that fd (brig's sync socket, linux/exe_trampoline.h)
 * to tell a failed execve as brig's own child would, closed by a good one. */
int proc_launch_prepare(const struct brig_process *p, const char *exe, const char *home_env,
                        int via_fd, const char *via_name, int report_fd, struct proc_launch *l,
                        struct brig_error **err);

/* identity, cwd, capabilities, no_new_privs and the seccomp filter (bpf may
 * be NULL), in the order that keeps the filter loadable: last when
 * no_new_privs is set, else first while still privileged (as runc). */
int proc_confine(const struct brig_process *p, const struct brig_bpf *bpf, bool in_userns,
                 const struct proc_launch *l, struct brig_error **err);
/* The same, for a process that has entered process.cwd already (the init,
 * before "created"), with its uid before the switch being its euid now. */
int proc_confine_in_cwd(const struct brig_process *p, const struct brig_bpf *bpf,
                        bool in_userns, const struct proc_launch *l, struct brig_error **err);

/* config.md "POSIX process" as runc and crun: without HOME in p->env,
 * *home_env is "HOME=<dir>" from the root's /etc/passwd for p->user.uid,
 * or "HOME=/"; NULL when env has HOME. rootfd: the container's root. */
int proc_home_default(int rootfd, const struct brig_process *p, char **home_env,
                      struct brig_error **err);
/* A process.cwd missing in the root is made (0755, as runc), inside it. */
int cwd_make(int rootfd, const struct brig_process *p, struct brig_error **err);

/* Reset signals as execve expects them (nothing blocked, nothing ignored)
 * and exec l; returns only on failure. */
int proc_execve(const struct proc_launch *l, struct brig_error **err);

#endif
