/* linux/console.c: runc's console-socket protocol, the caller's terminal
 * modes, and the pty made inside a (chrooted, private) devpts as root. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "linux/console.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

/* A pty pair from the host's devpts: the master and its peer. */
static void open_pty(int *master, int *peer)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert(*master >= 0, "posix_openpt: %s", strerror(errno));
    cr_assert_eq(grantpt(*master), 0);
    cr_assert_eq(unlockpt(*master), 0);
    *peer = open(ptsname(*master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert(*peer >= 0, "open %s: %s", ptsname(*master), strerror(errno));
}

Test(console_socket, sends_fd_with_runc_payload)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    autoclose int a = sv[0], b = sv[1];
    autoclose int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    struct brig_error *err = NULL;
    cr_assert_eq(console_socket_send(a, fd, &err), 0, "%s", err ? err->msg : "");
    char name[128];
    autoclose int got = -1;
    cr_assert_eq(console_recv_fd(b, name, sizeof(name), &got, &err), 0, "%s", err ? err->msg : "");
    cr_expect_str_eq(name, "/dev/ptmx");
    struct stat s1, s2;
    cr_assert_eq(fstat(fd, &s1), 0);
    cr_assert_eq(fstat(got, &s2), 0);
    cr_expect(s1.st_rdev == s2.st_rdev && s1.st_ino == s2.st_ino, "a different file arrived");
    cr_expect(fcntl(got, F_GETFD) & FD_CLOEXEC, "received fd is not close-on-exec");
}

Test(console_socket, recv_without_fd_fails)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    autoclose int a = sv[0], b = sv[1];
    cr_assert_eq(write(a, "x", 1), 1);
    struct brig_error *err = NULL;
    int fd = -1;
    cr_expect_eq(console_recv_fd(b, NULL, 0, &fd, &err), -1);
    cr_expect(err != NULL && strstr(err->msg, "no file descriptor") != NULL);
    brig_error_free(err);
}

Test(console_socket, connect_errors_name_the_socket)
{
    struct brig_error *err = NULL;
    int fd = -1;
    cr_expect_eq(console_socket_connect("/nonexistent/brig-console.sock", &fd, &err), -1);
    cr_expect(err != NULL && strstr(err->msg, "--console-socket /nonexistent/brig-console.sock") != NULL,
              "%s", err ? err->msg : "");
    brig_error_freep(&err);
    char longp[200];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[0] = '/';
    longp[sizeof(longp) - 1] = '\0';
    cr_expect_eq(console_socket_connect(longp, &fd, &err), -1);
    cr_expect(err != NULL && strstr(err->msg, "too long") != NULL);
    brig_error_free(err);
}

Test(console_socket, connects_to_a_listener)
{
    char dir[] = "/tmp/brig-test-console.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autofree char *path = brig_asprintf("%s/s", dir);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    strcpy(sa.sun_path, path);
    autoclose int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(ls, 1), 0);
    struct brig_error *err = NULL;
    autoclose int c = -1;
    cr_expect_eq(console_socket_connect(path, &c, &err), 0, "%s", err ? err->msg : "");
    autoclose int peer = accept(ls, NULL, NULL);
    cr_expect(peer >= 0);
    unlink(path);
    rmdir(dir);
}

Test(console_tty, raw_mode_is_set_and_restored)
{
    autoclose int master = -1, peer = -1;
    open_pty(&master, &peer);
    struct termios before, during, after, saved;
    cr_assert_eq(tcgetattr(peer, &before), 0);
    cr_assert(before.c_lflag & ICANON, "a new pty starts canonical");
    bool ok = false;
    struct brig_error *err = NULL;
    cr_assert_eq(console_raw(peer, &saved, &ok, &err), 0);
    cr_expect(ok);
    cr_assert_eq(tcgetattr(peer, &during), 0);
    cr_expect(!(during.c_lflag & (ICANON | ECHO | ISIG)), "not raw: lflag %x", during.c_lflag);
    console_restore(peer, &saved, ok);
    cr_assert_eq(tcgetattr(peer, &after), 0);
    cr_expect_eq(after.c_lflag, before.c_lflag);
    cr_expect_eq(after.c_iflag, before.c_iflag);
    cr_expect_eq(after.c_oflag, before.c_oflag);
}

Test(console_tty, raw_mode_on_a_non_tty_is_a_no_op)
{
    autoclose int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    struct termios saved;
    bool ok = true;
    struct brig_error *err = NULL;
    cr_expect_eq(console_raw(fd, &saved, &ok, &err), 0);
    cr_expect(!ok, "nothing to restore for /dev/null");
}

Test(console_tty, clear_onlcr_keeps_newlines)
{
    autoclose int master = -1, peer = -1;
    open_pty(&master, &peer);
    struct brig_error *err = NULL;
    cr_assert_eq(console_clear_onlcr(master, &err), 0);
    cr_assert_eq(write(peer, "a\n", 2), 2);
    char buf[8] = {0};
    cr_assert_eq(read(master, buf, sizeof(buf)), 2);
    cr_expect_str_eq(buf, "a\n");
}

Test(console_tty, winsize_is_copied)
{
    autoclose int m1 = -1, p1 = -1, m2 = -1, p2 = -1;
    open_pty(&m1, &p1);
    open_pty(&m2, &p2);
    struct winsize ws = { .ws_row = 33, .ws_col = 111 }, got;
    cr_assert_eq(ioctl(p1, TIOCSWINSZ, &ws), 0);
    console_copy_winsize(p1, m2);
    cr_assert_eq(ioctl(p2, TIOCGWINSZ, &got), 0);
    cr_expect(got.ws_row == 33 && got.ws_col == 111, "got %ux%u", got.ws_row, got.ws_col);
}

/* In a forked child, root only: a private mount namespace, a root dir with
 * its own devpts instance, chroot there, console_setup. Exit code 0 when
 * everything the init's terminal needs holds. */
static int setup_in_private_root(const char *dir)
{
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) return 10;
    autofree char *pts = brig_asprintf("%s/dev/pts", dir);
    if (mount("devpts", pts, "devpts", 0, "newinstance,ptmxmode=0666,mode=0620") < 0) return 11;
    if (chroot(dir) < 0 || chdir("/") < 0) return 12;
    struct brig_process p = { .has_console_size = true, .console_height = 25, .console_width = 90 };
    struct brig_error *err = NULL;
    int master = -1;
    if (console_setup(&p, true, p.user.uid, &master, &err) < 0) {
        fprintf(stderr, "console_setup: %s\n", err->msg);
        return 13;
    }
    struct stat st0, stc;
    if (!isatty(0) || !isatty(1) || !isatty(2)) return 14;
    if (fstat(0, &st0) < 0 || stat("/dev/console", &stc) < 0) return 15;
    if (st0.st_rdev != stc.st_rdev || major(st0.st_rdev) != 136) return 16;     /* console is the pty */
    if (minor(st0.st_rdev) != 0) return 17;         /* the first pty of the new instance */
    struct winsize ws;
    if (ioctl(0, TIOCGWINSZ, &ws) < 0 || ws.ws_row != 25 || ws.ws_col != 90) return 18;
    if (getsid(0) != getpid() || tcgetsid(0) != getpid()) return 19;  /* controlling tty of a new session */
    if (write(master, "x\n", 2) != 2) return 20;
    char c;
    if (read(0, &c, 1) != 1 || c != 'x') return 21;
    return 0;
}

Test(console_setup, pty_in_the_containers_devpts)
{
    if (geteuid() != 0) cr_skip_test("needs root (mount namespace, devpts)");
    char dir[] = "/tmp/brig-test-console-root.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autofree char *pts = brig_asprintf("%s/dev/pts", dir);
    autofree char *ptmx = brig_asprintf("%s/dev/ptmx", dir);
    autofree char *dev = brig_asprintf("%s/dev", dir);
    cr_assert_eq(mkdir(dev, 0755), 0);
    cr_assert_eq(mkdir(pts, 0755), 0);
    cr_assert_eq(symlink("pts/ptmx", ptmx), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) _exit(setup_in_private_root(dir));
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    brig_rm_rf_at(AT_FDCWD, dir, NULL);
}

Test(console_setup, fails_without_devpts)
{
    if (geteuid() != 0) cr_skip_test("needs root (chroot)");
    char dir[] = "/tmp/brig-test-console-nopts.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (chroot(dir) < 0 || chdir("/") < 0) _exit(10);
        struct brig_process p = {0};
        struct brig_error *err = NULL;
        int master = -1;
        if (console_setup(&p, true, p.user.uid, &master, &err) == 0) _exit(11);
        _exit(strstr(err->msg, "process.terminal") != NULL ? 0 : 12);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    rmdir(dir);
}
