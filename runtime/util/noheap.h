/* A stretch of a process that must not touch the heap: the `brig exec`
 * child that shares brig's memory (linux/spawn_vm.h) from just before its
 * identity switch to its execve, where a process of the container may kill
 * or stop it at any instruction, inside malloc too, and the root parent
 * would go on with a torn heap. While it is on, errors are made in one
 * static object (error.h) and brig's allocation helpers end the process
 * with a message instead of allocating: a regression fails the exec tests
 * instead of tearing a heap once in a blue moon. */
#ifndef BRIG_NOHEAP_H
#define BRIG_NOHEAP_H

#include <stdbool.h>

void brig_noheap_set(bool on);
bool brig_noheap(void);
/* In the no-heap stretch: "brig: BUG: <what> ..." on stderr and exit_group
 * (no abort: raise would aim at the parent's thread id, the TLS being its). */
void brig_noheap_check(const char *what);

#endif
