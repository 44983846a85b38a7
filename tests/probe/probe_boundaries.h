/* brig-probe's boundary report and init mode (probe_boundaries.c). */
#ifndef BRIG_PROBE_BOUNDARIES_H
#define BRIG_PROBE_BOUNDARIES_H

int probe_boundaries(int argc, char **argv);
int probe_init(int argc, char **argv);

/* Single syscall attempts of brig-probe.c, shared with the boundary report:
 * each returns 0 when the call worked, else its errno. */
int sys_keyctl(void);
int sys_bpf(void);
int sys_perf_event_open(void);
int sys_io_uring_setup(void);
int sys_userfaultfd(void);

#endif
