#!/usr/bin/env bash
# Terminal injection (docs/security.md): a container must not push keystrokes
# into the caller's terminal (TIOCSTI), which the caller's shell then runs
# as root. With process.terminal false the container's stdio may be the
# caller's tty; brig makes the init and every exec'd process lead a new
# session (setsid), so that tty is not their controlling one and TIOCSTI on
# it needs CAP_SYS_ADMIN over the host. Second layer: the default seccomp
# profile denies TIOCSTI and TIOCLINUX with a comparison the kernel's
# 32-bit truncation of cmd cannot dodge, and socket families that are not
# namespaced or rarely used (AF_VSOCK reaches the hypervisor's services).
# The "caller's terminal" is a pty of script(1); the hostile piece is a
# small static program compiled here.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v script >/dev/null || skip_all "script(1) (util-linux) is not installed"

cat >"$T/w.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* errno of ioctl(fd, cmd, arg) with the full 64-bit cmd as given. */
static int try_ioctl(int fd, unsigned long cmd, void *arg)
{
    return syscall(SYS_ioctl, fd, cmd, arg) < 0 ? errno : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "inject") == 0) {
        /* A comment, harmless if a shell ever runs it. */
        const char *s = "#INJECTED\n";
        int e = 0;
        for (const char *c = s; *c && e == 0; c++) e = try_ioctl(0, TIOCSTI, (void *)c);
        printf("sti=%d leader=%d\n", e, getsid(0) == getpid());
        return 0;
    }
    if (strcmp(mode, "pty") == 0) {
        /* A pty of our own: not our controlling terminal, so only
         * CAP_SYS_ADMIN lets the kernel take TIOCSTI on it. */
        int m = posix_openpt(O_RDWR | O_NOCTTY);
        if (m < 0 || unlockpt(m) < 0) { printf("pty=%d\n", errno); return 1; }
        int s = open(ptsname(m), O_RDWR | O_NOCTTY);
        if (s < 0) { printf("pty=%d\n", errno); return 1; }
        char c = '#';
        struct winsize ws;
        char sel[2] = { 2, 0 };   /* TIOCL_SETSEL */
        printf("sti=%d hi=%d linux=%d winsz=%d\n", try_ioctl(s, TIOCSTI, &c),
               try_ioctl(s, (1UL << 32) | TIOCSTI, &c), try_ioctl(s, TIOCLINUX, sel),
               try_ioctl(s, TIOCGWINSZ, &ws));
        return 0;
    }
    if (strcmp(mode, "sock") == 0) {
        for (int i = 2; i < argc; i++) {
            unsigned long fam = strtoul(argv[i], NULL, 0);
            long fd = syscall(SYS_socket, fam, SOCK_DGRAM, 0);
            if (fd < 0 && errno == ESOCKTNOSUPPORT) fd = syscall(SYS_socket, fam, SOCK_STREAM, 0);
            if (fd < 0 && (errno == ESOCKTNOSUPPORT || errno == EPROTOTYPE))
                fd = syscall(SYS_socket, fam, SOCK_SEQPACKET, 0);
            printf("%s=%d\n", argv[i], fd < 0 ? errno : 0);
            if (fd >= 0) close((int)fd);
        }
        return 0;
    }
    return 2;
}
EOF
build_static "$T/w" "$T/w.c"

# The default profile as the brig under test has it (policy apply puts it in).
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a | .mode = "enforce" | '"$RL_POLICY_JQ" \
    >"$T/agent.json"
mkdir -p "$T/ws"
mkb ag -- /w inject || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/ag/config.json" \
    "$T/ag" || bail "policy apply failed"
jq '.linux.seccomp' "$T/ag/config.json" >"$T/default-seccomp.json"
jq -e '.defaultAction' "$T/default-seccomp.json" >/dev/null || bail "no seccomp profile in the applied config"

# under_tty NAME CMD: CMD runs in a shell on a fresh pty (the caller's
# terminal), with that pty as stdin. Afterwards the shell reads what is
# waiting on its terminal: pushed keystrokes would be there.
under_tty() {
    local name=$1 cmd=$2
    local inner="$cmd; read -r -t 2 got; printf '%s' \"\$got\" >$T/$name.got"
    timeout 60 script -qec "$inner" /dev/null < <(exec sleep 10 2>/dev/null) >/dev/null 2>&1
}
check_tty() { # NAME WHAT
    local out; out=$(cat "$T/$1.out" 2>/dev/null)
    check_eq "$2: the writer ran" "$(grep -c '^sti=' <<<"$out")" 1
    check_eq "$2: nothing reached the caller's terminal" "$(cat "$T/$1.got" 2>/dev/null)" ""
    check "$2: TIOCSTI on the caller's tty failed" grep -Eq '^sti=[1-9]' <<<"$out"
    check "$2: the process leads its own session (setsid)" grep -q 'leader=1' <<<"$out"
}

if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ]; then
    diag "dev.tty.legacy_tiocsti=0: the kernel refuses TIOCSTI anyway; the session checks still run"
fi

# ---- run, terminal false, root with brig spec's capabilities -------------------------
mkb plain -- /w inject || bail "cannot build a bundle"
cp "$T/w" "$T/plain/rootfs/w"
CLEAN_IDS+=("$(cid plain)")
under_tty plain "$(brig_cmd) run --bundle $T/plain $(cid plain) >$T/plain.out 2>$T/plain.err"
check_tty plain "run"
assert_clean plain

# ---- run under the agent policy -----------------------------------------------------
cp "$T/w" "$T/ag/rootfs/w"
CLEAN_IDS+=("$(cid ag)")
under_tty ag "$(brig_cmd) --policy $T/agent.json run --bundle $T/ag $(cid ag) >$T/ag.out 2>$T/ag.err"
check_tty ag "--policy agent run"

# ---- exec, terminal false ---------------------------------------------------------------
mkb ex -- /usr/bin/brig-probe sleep 120 || bail "cannot build a bundle"
cp "$T/w" "$T/ex/rootfs/w"
create_ct ex
start_ct ex || bail "the exec container does not start"
under_tty ex "$(brig_cmd) exec $(cid ex) /w inject >$T/ex.out 2>$T/ex.err"
check_tty ex "exec"
b delete -f "$(cid ex)" >/dev/null 2>&1
assert_clean ex

# ---- the default profile, even with CAP_SYS_ADMIN ------------------------------------------
mkb sa -- /w pty || bail "cannot build a bundle"
cp "$T/w" "$T/sa/rootfs/w"
cfg sa '.process.capabilities = {bounding: ["CAP_SYS_ADMIN"], effective: ["CAP_SYS_ADMIN"],
        permitted: ["CAP_SYS_ADMIN"]}'
run_ct sa
# Control: without a filter the kernel takes TIOCSTI on a non-controlling
# tty from CAP_SYS_ADMIN, so a denial below is the filter's. Rootless, the
# container's CAP_SYS_ADMIN is its user namespace's, not the host's, which
# the kernel asks for (capable()): refused even without a filter.
if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then
    check "rootless: without a filter, CAP_SYS_ADMIN of the container's user namespace may not TIOCSTI" \
        grep -q '^sti=1 ' "$T/sa.out"
elif [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" != 0 ]; then
    check "without a filter, CAP_SYS_ADMIN may TIOCSTI (the control)" grep -q '^sti=0 ' "$T/sa.out"
fi
cfg sa '.linux.seccomp = $p' --slurpfile p "$T/default-seccomp.json"
cfg sa '.linux.seccomp = .linux.seccomp[0]'
run_ct sa
out=$(cat "$T/sa.out")
check_eq "default profile: TIOCSTI is denied (EPERM) even with CAP_SYS_ADMIN" "$(grep -o 'sti=[0-9]*' <<<"$out" | head -n 1)" "sti=1"
check_eq "... also with the high 32 bits of cmd set (the kernel truncates to 32)" "$(grep -o 'hi=[0-9]*' <<<"$out")" "hi=1"
check_eq "... and TIOCLINUX is denied" "$(grep -o 'linux=[0-9]*' <<<"$out")" "linux=1"
check_eq "... while other tty ioctls work (TIOCGWINSZ)" "$(grep -o 'winsz=[0-9]*' <<<"$out")" "winsz=0"

# ---- socket families under the default profile ------------------------------------------
# AF_VSOCK 40 (not namespaced: the hypervisor's services), AF_KCM 41,
# AF_RDS 21, AF_ALG 38, AF_BLUETOOTH 31, AF_QIPCRTR 42, AF_TIPC 30, AF_XDP 44,
# and AF_VSOCK with high bits set; AF_UNIX 1, AF_INET 2, AF_INET6 10,
# AF_NETLINK 16 stay usable.
cfg sa '.process.args = ["/w", "sock", "40", "41", "21", "38", "31", "42", "30", "44", "0x100000028",
        "1", "2", "10", "16"]'
run_ct sa
out=$(cat "$T/sa.out")
for f in 40 41 21 38 31 42 30 44 0x100000028; do
    check_eq "default profile: socket(family $f) is denied by the filter (EPERM)" \
        "$(grep "^$f=" <<<"$out")" "$f=1"
done
for f in 1 2 10 16; do
    check_eq "default profile: socket(family $f) works" "$(grep "^$f=" <<<"$out")" "$f=0"
done
assert_clean sa
