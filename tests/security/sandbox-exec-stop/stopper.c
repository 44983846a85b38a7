/* The stopper of t-sandbox-exec-stop.sh, run in a sandbox as its user:
 * for SECONDS it sends SIGSTOP to every process it may signal (kill -1:
 * its own uid's), so that a `brig sandbox exec` started meanwhile has its
 * child stopped between the uid switch and the execve, while its brig
 * still waits for that execve. Usage: stopper SECONDS */
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    time_t end = time(NULL) + atoi(argv[1]);
    while (time(NULL) < end) kill(-1, SIGSTOP);
    return 0;
}
