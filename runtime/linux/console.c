/* process.terminal and process.consoleSize (config.md "Process"), and the
 * console-socket protocol of runc (docs/terminals.md in runc): the pty is
 * made from the container's own /dev/ptmx, so it belongs to the container's
 * devpts instance and its number means nothing on the host. */
#include "console.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "rootfs/mount_util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* What runc sends with the fd: the name of the master's file. */
#define CONSOLE_PAYLOAD "/dev/ptmx"

/* The logging fd must not become the container's terminal when it is one
 * of 0-2: move it out of the way first. */
static int console_move_log_fd(struct brig_error **err)
{
    int fd = brig_log_fd();
    if (fd < 0 || fd > 2) return 0;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (nfd < 0) return brig_fail(err, errno, "process.terminal: move the log fd");
    brig_log_set_fd(nfd);
    return 0;
}

/* runc's mountConsole: /dev/console is a bind of the peer, created as an
 * empty file when the image has none. */
static int console_bind(int rootfd, int peer, struct brig_error **err)
{
    autoclose int dest = brig_mkfile_in_root(rootfd, "/dev/console", 0600, err);
    if (dest < 0) return brig_wrap(err, "process.terminal: /dev/console");
    struct stat st;
    if (fstat(dest, &st) < 0) return brig_fail(err, errno, "process.terminal: stat /dev/console");
    if (S_ISDIR(st.st_mode)) return brig_failx(err, "process.terminal: /dev/console is a directory");
    autoclose int tree = mnt_clone(peer, false, err);
    if (tree < 0 || mnt_attach(tree, dest, err) < 0)
        return brig_wrap(err, "process.terminal: bind the pty over /dev/console");
    return 0;
}

static int console_open_ptmx(int rootfd, struct brig_error **err)
{
    autoclose int ptmx = brig_open_in_root(rootfd, "/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC, 0, err);
    if (ptmx < 0)
        return brig_wrap(err, "process.terminal: the container's /dev/ptmx (is a devpts mounted "
                              "on /dev/pts?)");
    struct stat st;
    if (fstat(ptmx, &st) < 0) return brig_fail(err, errno, "process.terminal: stat /dev/ptmx");
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 || minor(st.st_rdev) != 2)
        return brig_failx(err, "process.terminal: /dev/ptmx is not the pty multiplexer (5:2)");
    int unlock = 0;
    if (ioctl(ptmx, TIOCSPTLCK, &unlock) < 0) return brig_fail(err, errno, "process.terminal: unlockpt");
    return steal_fd(&ptmx);
}

/* The peer becomes stdin/out/err and the controlling terminal of a new
 * session, as a login would have it. */
static int console_make_stdio(int peer, struct brig_error **err)
{
    if (setsid() < 0 && getsid(0) != getpid()) return brig_fail(err, errno, "process.terminal: setsid");
    if (ioctl(peer, TIOCSCTTY, 0) < 0) return brig_fail(err, errno, "process.terminal: TIOCSCTTY");
    for (int fd = 0; fd <= 2; fd++)
        if (dup2(peer, fd) < 0) return brig_fail(err, errno, "process.terminal: dup2 onto %d", fd);
    return 0;
}

int console_setup(const struct brig_process *p, bool bind_console, uid_t owner, int *master,
                  struct brig_error **err)
{
    TRY(console_move_log_fd(err));
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "process.terminal: open /");
    autoclose int ptmx = console_open_ptmx(rootfd, err);
    if (ptmx < 0) return -1;
    autoclose int peer = ioctl(ptmx, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (peer < 0) return brig_fail(err, errno, "process.terminal: TIOCGPTPEER");
    if (p->has_console_size) {
        struct winsize ws = { .ws_row = (unsigned short)p->console_height,
                              .ws_col = (unsigned short)p->console_width };
        if (ioctl(ptmx, TIOCSWINSZ, &ws) < 0)
            return brig_fail(err, errno, "process.consoleSize: TIOCSWINSZ");
    }
    /* The process must own its terminal (runc's fixStdioPermissions). An
     * id the user namespace does not map (EINVAL) keeps the owner. */
    struct stat st;
    if (fstat(peer, &st) == 0 && st.st_uid != owner && fchown(peer, owner, (gid_t)-1) < 0 && errno != EINVAL)
        return brig_fail(err, errno, "process.terminal: chown the pty to uid %u", (unsigned)owner);
    if (bind_console) TRY(console_bind(rootfd, peer, err));
    TRY(console_make_stdio(peer, err));
    brig_debug("terminal: pty ready (%s/dev/console)", bind_console ? "bound over " : "no ");
    *master = steal_fd(&ptmx);
    return 0;
}

int console_socket_connect(const char *path, int *sock, struct brig_error **err)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path))
        return brig_failx(err, "--console-socket %s: path too long for a unix socket", path);
    strcpy(sa.sun_path, path);
    autoclose int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return brig_fail(err, errno, "--console-socket: socket");
    int r;
    do {
        r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    } while (r < 0 && errno == EINTR);
    if (r < 0) return brig_fail(err, errno, "--console-socket %s: connect", path);
    *sock = steal_fd(&fd);
    return 0;
}

int console_socket_send(int sock, int master, struct brig_error **err)
{
    static const char payload[] = CONSOLE_PAYLOAD;
    if (brig_send_with_fd(sock, payload, sizeof(payload) - 1, master, err) < 0)
        return brig_wrap(err, "--console-socket: send the pty master");
    brig_debug("terminal: pty master sent to the console socket");
    return 0;
}

int console_recv_fd(int sock, char *name, size_t len, int *fd, struct brig_error **err)
{
    char dummy[4096];
    bool named = name != NULL && len > 1;
    ssize_t r = brig_recv_with_fd(sock, named ? name : dummy, named ? len - 1 : sizeof(dummy),
                                  fd, "receive fd", err);
    if (r < 0) return -1;
    if (name != NULL && len > 0) name[named ? (size_t)r : 0] = '\0';
    if (*fd < 0) return brig_failx(err, "receive fd: no file descriptor in the message");
    return 0;
}

int console_raw(int fd, struct termios *saved, bool *saved_ok, struct brig_error **err)
{
    *saved_ok = false;
    if (tcgetattr(fd, saved) < 0) {
        if (errno == ENOTTY || errno == EINVAL) return 0;     /* not a terminal: nothing to do */
        return brig_fail(err, errno, "tcgetattr");
    }
    struct termios raw = *saved;
    cfmakeraw(&raw);
    if (tcsetattr(fd, TCSANOW, &raw) < 0) return brig_fail(err, errno, "set the terminal to raw mode");
    *saved_ok = true;
    return 0;
}

void console_restore(int fd, const struct termios *saved, bool saved_ok)
{
    if (saved_ok && tcsetattr(fd, TCSANOW, saved) < 0)
        brig_warn("restore the terminal mode: %s", strerror(errno));
}

void console_copy_winsize(int from, int master)
{
    struct winsize ws;
    if (ioctl(from, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        ioctl(master, TIOCSWINSZ, &ws);
}

int console_clear_onlcr(int master, struct brig_error **err)
{
    struct termios t;
    if (tcgetattr(master, &t) < 0) return brig_fail(err, errno, "tcgetattr pty master");
    t.c_oflag &= ~(tcflag_t)ONLCR;
    if (tcsetattr(master, TCSANOW, &t) < 0) return brig_fail(err, errno, "clear ONLCR on the pty");
    return 0;
}
