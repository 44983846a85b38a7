/* A command in a long-lived sandbox queues SIGTERM to its init (PID 1)
 * with a forged siginfo: si_code SI_QUEUE (rt_sigqueueinfo lets a sender
 * choose si_pid then), si_pid 0, as a signal from the host would read. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    int sigs[] = { SIGTERM, SIGINT };
    for (int i = 0; i < 2; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        si.si_signo = sigs[i];
        si.si_code = SI_QUEUE;
        si.si_pid = 0;
        si.si_uid = 0;
        if (syscall(SYS_rt_sigqueueinfo, 1, sigs[i], &si) < 0) {
            printf("rt_sigqueueinfo: %m\n");
            return 1;
        }
    }
    printf("forged\n");
    return 0;
}
