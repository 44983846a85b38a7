/* In the sandbox, for argv[1] seconds: SIGKILL and SIGSTOP everything this
 * process may signal (kill(-1, ...): every process of its uid but itself
 * and the init), brig's exec children among them once they have switched
 * to the sandbox's uid and until their execve. Some stops are left for
 * brig's start timeout to end with its own SIGKILL, some are continued or
 * killed at once. Prints the number of rounds. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 4;
    time_t end = time(NULL) + secs;
    unsigned long rounds = 0, seed = (unsigned long)getpid();
    while (time(NULL) < end) {
        seed = seed * 1103515245 + 12345;
        switch ((seed >> 16) % 4) {
        case 0: kill(-1, SIGKILL); break;
        case 1: kill(-1, SIGSTOP); kill(-1, SIGKILL); break;
        case 2: kill(-1, SIGSTOP); usleep(200); kill(-1, SIGCONT); break;
        case 3: kill(-1, SIGSTOP); usleep(2000); break;     /* left to brig's timeout */
        }
        rounds++;
        if (rounds % 64 == 0) usleep(1000);
    }
    kill(-1, SIGCONT);
    printf("ROUNDS %lu\n", rounds);
    return 0;
}
