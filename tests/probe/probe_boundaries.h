/* brig-probe's boundary report and init mode (probe_boundaries.c). */
#ifndef BRIG_PROBE_BOUNDARIES_H
#define BRIG_PROBE_BOUNDARIES_H

int probe_boundaries(int argc, char **argv);
int probe_init(int argc, char **argv);

#endif
