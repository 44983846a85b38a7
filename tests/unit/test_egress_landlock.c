/* The rootless proxy's Landlock domain (egress/egress_sandbox.c,
 * docs/security.md "A rootless brig"): in a child that entered it, what
 * the resolver reads opens, and a file of the caller's (here one the test
 * made in a directory of its own) does not, nor does any write, directory
 * listing outside the allowed trees, or new file. Each child reports one
 * bit per access that went otherwise than it should. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../egress/egress_internal.h"

static char dir[] = "/tmp/brig-landlock.XXXXXX";

static int opens(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* Exit status of a child in the domain: 0 when every access went as it
 * should, else a bit per one that did not; 100 when the domain failed. */
static int in_domain(void)
{
    char secret[300], made[300];
    snprintf(secret, sizeof(secret), "%s/secret", dir);
    snprintf(made, sizeof(made), "%s/new", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char why[300] = "";
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || egress_sandbox_landlock(why, sizeof(why)) < 0) {
            fprintf(stderr, "landlock: %s\n", why);
            _exit(100);
        }
        int bad = 0;
        if (!opens("/etc/hosts", O_RDONLY)) bad |= 1;              /* the resolver's */
        if (!opens("/etc", O_RDONLY | O_DIRECTORY)) bad |= 2;
        if (opens(secret, O_RDONLY)) bad |= 4;                      /* the caller's file */
        if (opens("/etc/hosts", O_WRONLY)) bad |= 8;                /* a write, even where reads go */
        if (opens(made, O_WRONLY | O_CREAT)) bad |= 16;             /* a new file */
        if (opens("/", O_RDONLY | O_DIRECTORY)) bad |= 32;          /* listing outside the trees */
        if (opens("/proc/self/status", O_RDONLY)) bad |= 64;
        _exit(bad);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

Test(egress_landlock, reads_only_what_the_resolver_needs)
{
    cr_assert_not_null(mkdtemp(dir));
    char secret[300];
    snprintf(secret, sizeof(secret), "%s/secret", dir);
    FILE *f = fopen(secret, "w");
    cr_assert_not_null(f);
    fputs("the caller's key\n", f);
    fclose(f);
    /* the control: the same process without the domain reads it */
    cr_assert_eq(opens(secret, O_RDONLY), 1);
    int bad = in_domain();
    unlink(secret);
    char made[300];
    snprintf(made, sizeof(made), "%s/new", dir);
    unlink(made);
    rmdir(dir);
    cr_assert_neq(bad, 100, "Landlock is not available here");
    cr_assert_eq(bad, 0, "accesses that went otherwise than they should: bits %#x "
                 "(1 /etc/hosts, 2 /etc, 4 the caller's file, 8 a write, 16 a new file, 32 /, 64 /proc)", bad);
}
