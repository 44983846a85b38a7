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

#endif
