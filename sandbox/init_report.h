/* How brig-init tells brig that its command's execve failed (the command
 * never ran): before it exits with 127 or 126, the process brig waits for
 * (PID 1 of `sandbox run`, the --exec trampoline of `sandbox exec`) names
 * itself INIT_EXEC_FAILED_COMM followed by the errno in decimal
 * (PR_SET_NAME). brig reads /proc/PID/comm of its exited, not yet reaped
 * child. Only a process itself (or its own threads) can set its name: a
 * command cannot set PID 1's, nor the name of a trampoline it is not. */
#ifndef BRIG_INIT_REPORT_H
#define BRIG_INIT_REPORT_H

#define INIT_EXEC_FAILED_COMM "brig-init:e"

/* The trampoline of an OCI container's process (--exec-sync FD, brig's
 * unsealed start: docs/security.md) tells brig on its sync socket instead,
 * as brig's own child did: one SYNC_ERROR message (runtime/linux/sync.h,
 * which checks that these match): the header, then the text with its NUL.
 * errnum carries the errno in its low 16 bits and the exit status a shell
 * gives (127 not found, 126 not run) in the next 8. */
#define INIT_SYNC_ERROR 6
struct init_sync_head {
    unsigned int type;
    int errnum;
    unsigned int len;           /* payload bytes, NUL included */
};

#endif
