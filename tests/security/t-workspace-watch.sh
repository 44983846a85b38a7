#!/usr/bin/env bash
# The watched workspace (docs/policy.md, "Workspace bound"): where neither
# the workspace's filesystem nor a project quota keeps workspace.maxSize
# (the host's big disk here), the workspace stays a live bind and a
# watcher in the sandbox's cgroup stops the sandbox once the workspace grew
# past the bound. Attacked: a writer that never stops; hard links (counted
# once, never once per name) and sparse files (by their blocks: the holes
# are free, the blocks written are not); a flood of empty files or
# directories (the inode bound); a symlink to / (never followed); killing
# everything visible from inside (the watcher is not there to kill, and
# keeps bounding); an engine's container (create/start: killed, `brig
# state` and --log say why); nothing left after rm or a SIGKILLed brig.
# shellcheck disable=SC2016  # sh -c scripts are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

busybox_rootfs "$T/root" sh dd ln rm mkdir touch truncate stat seq cat echo ls sleep kill grep head
POL=$T/watch-4m.json
printf '{"extends": "agent", "workspace": {"maxSize": "4MiB"}}\n' > "$POL"
SW=$T/ws
SBS=$T/sbstate
fresh_ws() { rm -rf "$SW" && mkdir -p "$SW" && chown 1000:1000 "$SW"; }
sbrun() { # NAME SCRIPT: sandbox run of sh -c SCRIPT in $SW, the result in $T/NAME.json
    timeout -k 5 60 "$BRIG" sandbox run --policy "$POL" --state-root "$SBS" --rootfs "$T/root" \
        --workspace "$SW" --timeout 30s --json -- /bin/sh -c "$2" > "$T/$1.json" 2> "$T/$1.err"
}
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SBS" "${@:2}"; }
hit() { jq -c .limits_hit "$T/$1.json" 2>/dev/null; }
# watchers of a workspace: brig-wswatch processes holding it (fd 4)
watchers_of() {
    local p
    for p in $(pgrep -x brig-wswatch); do
        [ "$(readlink "/proc/$p/fd/4" 2>/dev/null)" = "$1" ] && echo "$p"
    done
}
no_watcher() { [ -z "$(watchers_of "$SW")" ]; }
some_watcher() { [ -n "$(watchers_of "$SW")" ]; }
NAME=wsw-$TAG
QW=$T/wsq     # a small tmpfs workspace (below), unmounted whatever happens
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; for p in $(watchers_of "$SW"); do kill -9 "$p"; done;
      mountpoint -q "$QW" && umount -l "$QW"; (exit $rc); it_finish' EXIT

# ---- a writer that never stops ---------------------------------------------
fresh_ws
sbrun flood 'i=0; while :; do dd if=/dev/zero of=/workspace/f$i bs=65536 count=16 2>/dev/null; i=$((i+1)); done'
check_eq "a writer past the bound is stopped (SIGKILL), not at the timeout" \
    "$(jq -r '[.signal, .timed_out] | @tsv' "$T/flood.json")" "$(printf '9\tfalse')"
check_eq "... limits_hit names workspace.maxSize" "$(hit flood)" '["workspace.maxSize"]'
used=$(du -sk "$SW" | cut -f1)
diag "the workspace holds $used KiB when the writer was stopped (bound 4096 KiB)"
check "... it stopped well before the host's disk: $used KiB (< 256 MiB)" test "$used" -lt 262144
fresh_ws
timeout -k 5 60 "$BRIG" sandbox run --policy "$POL" --state-root "$SBS" --rootfs "$T/root" --workspace "$SW" \
    -- /bin/sh -c 'dd if=/dev/zero of=/workspace/f bs=65536 count=1024; sleep 5' > /dev/null 2> "$T/summary.err"
check "the summary line says why" grep -q "killed by signal 9 (the workspace passed workspace.maxSize)" "$T/summary.err"
# the bound is on what the workspace grows by: what it held at create is not
# the command's
fresh_ws
head -c $((8 << 20)) /dev/urandom > "$SW/before"
sbrun grown 'dd if=/dev/zero of=/workspace/mine bs=65536 count=16 2>/dev/null; sleep 1; echo fine'
check_eq "8MiB there before, 1MiB written: not stopped" "$(jq -r '"\(.exit_code) \(.limits_hit | length)"' "$T/grown.json")" "0 0"
check_eq "no watcher of the workspace is left after the runs" "$(watchers_of "$SW")" ""

# ---- hard links and sparse files: counted by what they take on disk ----------
fresh_ws
sbrun links 'dd if=/dev/urandom of=/workspace/a bs=65536 count=48 2>/dev/null;
             for i in $(seq 600); do ln /workspace/a /workspace/l$i || break; done; sleep 1; echo made=$i'
check_eq "3MiB with 600 hard links is 3MiB: not stopped" "$(jq -r '"\(.exit_code) \(.stdout.preview_head)"' "$T/links.json")" \
    "0 made=600"
fresh_ws
sbrun linked-big 'dd if=/dev/urandom of=/workspace/a bs=65536 count=96 2>/dev/null; ln /workspace/a /workspace/b;
                  sleep 5; echo survived'
check_eq "6MiB under two names is 6MiB: stopped" "$(hit linked-big)" '["workspace.maxSize"]'
fresh_ws
sbrun sparse 'truncate -s 10G /workspace/sparse && echo data >> /workspace/sparse; sleep 1; echo rc=$?'
check_eq "a 10GiB sparse file of a few blocks is not stopped" "$(jq -r '"\(.exit_code) \(.limits_hit | length)"' "$T/sparse.json")" \
    "0 0"
fresh_ws
sbrun sparse-full 'truncate -s 10G /workspace/sparse && dd if=/dev/urandom of=/workspace/sparse bs=65536 seek=4096 count=128 conv=notrunc 2>/dev/null;
                   sleep 5; echo survived'
check_eq "a sparse file with 8MiB of blocks written in it is stopped" "$(hit sparse-full)" '["workspace.maxSize"]'

# ---- files no name leads to: unlinked while open, or mapped after their unlink --
# (their blocks stay taken until the last fd or mapping goes; a walk of the
# tree never meets them)
fresh_ws
sbrun unlinked 'exec 3>/workspace/hidden; rm /workspace/hidden; dd if=/dev/zero bs=65536 count=160 >&3 2>/dev/null;
                sleep 5; echo survived'
check_eq "10MiB written into a file unlinked while open is stopped" "$(hit unlinked)" '["workspace.maxSize"]'
cat > "$T/mapped.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
    size_t len = 10u << 20;
    int fd = open("/workspace/mapped", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0) return perror("open"), 1;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return perror("mmap"), 1;
    close(fd);
    unlink("/workspace/mapped");
    for (size_t i = 0; i < len; i += 4096) p[i] = 1;
    msync(p, len, MS_SYNC);
    sleep(5);
    puts("survived");
    return 0;
}
C
build_static "$T/root/bin/mapped" "$T/mapped.c"
fresh_ws
sbrun mapped '/bin/mapped'
check_eq "10MiB written through a mapping of an unlinked file (its fd closed) is stopped" "$(hit mapped)" \
    '["workspace.maxSize"]'

# ---- fallocate: blocks taken without a write, faster than any look -------------
# (16 GiB in the 50 ms before the first look, on this ext4): answered EOPNOTSUPP
cat > "$T/falloc.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    int fd = open("/workspace/falloc", O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return perror("open"), 1;
    int r = fallocate(fd, 0, 0, 1L << 30);
    printf("fallocate=%d %s\n", r, r < 0 ? strerror(errno) : "ok");
    return 0;
}
C
build_static "$T/root/bin/falloc" "$T/falloc.c"
fresh_ws
sbrun falloc '/bin/falloc'
check_eq "fallocate of 1 GiB in a watched workspace: refused (EOPNOTSUPP)" \
    "$(jq -r .stdout.preview_head "$T/falloc.json")" "fallocate=-1 Operation not supported"
check "... and the workspace took nothing ($(du -sk "$SW" | cut -f1) KiB)" test "$(du -sk "$SW" | cut -f1)" -lt 1024

# ---- what no walk sees: unlinked files kept as fds queued in a unix socket ---
# (SCM_RIGHTS, the sender's fd closed: /proc shows no socket's queue). The
# watch keeps the bound free on the filesystem whatever it cannot count: on a
# 64MiB tmpfs with an 8MiB bound, the queued files fill it and the sandbox is
# stopped once less than 8MiB is left.
cat > "$T/queued.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(void)
{
    int sv[2];
    static char buf[65536];
    memset(buf, 'x', sizeof(buf));
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) return perror("socketpair"), 1;
    for (int i = 0; i < 8; i++) {
        char name[64];
        snprintf(name, sizeof(name), "/workspace/q%d", i);
        int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return perror("open"), 1;
        for (int k = 0; k < 160; k++)
            if (write(fd, buf, sizeof(buf)) < 0) break;       /* 10MiB, or the filesystem is full */
        unlink(name);
        char c = 'f';
        struct iovec iov = { &c, 1 };
        union { struct cmsghdr h; char b[CMSG_SPACE(sizeof(int))]; } u;
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        if (sendmsg(sv[0], &m, 0) < 0) return perror("sendmsg"), 1;
        close(fd);
    }
    sleep(5);
    puts("survived");
    return 0;
}
C
build_static "$T/root/bin/queued" "$T/queued.c"
mkdir -p "$QW" && mount -t tmpfs -o size=64m,mode=0755 tmpfs "$QW" || bail "cannot mount the test's tmpfs"
printf '{"extends": "agent", "workspace": {"maxSize": "8MiB"}}\n' > "$T/watch-8m.json"
timeout -k 5 60 "$BRIG" sandbox run --policy "$T/watch-8m.json" --state-root "$SBS" --rootfs "$T/root" \
    --workspace "$QW" --timeout 30s --json -- /bin/queued > "$T/queued.json" 2> "$T/queued.err"
check_eq "unlinked files queued in a unix socket past the bound: stopped, the bound kept free" \
    "$(jq -c '[.stdout.preview_head, .limits_hit]' "$T/queued.json")" '["",["workspace.maxSize"]]'
umount "$QW"

# ---- empty names: the inode bound (4096 for 4MiB) -----------------------------
fresh_ws
sbrun files 'mkdir /workspace/n; i=0; while [ $i -lt 20000 ] && touch /workspace/n/$i; do i=$((i+1)); done; sleep 5; echo made=$i'
check_eq "a flood of empty files is stopped at the inode bound" "$(hit files)" '["workspace.maxSize"]'
check "... before 20000 of them ($(ls "$SW/n" | wc -l))" test "$(ls "$SW/n" | wc -l)" -lt 20000
fresh_ws
sbrun dirs 'i=0; while [ $i -lt 20000 ] && mkdir /workspace/d$i; do i=$((i+1)); done; sleep 5; echo made=$i'
check_eq "a flood of empty directories is stopped at the inode bound" "$(hit dirs)" '["workspace.maxSize"]'

# ---- a symlink to /: never followed ------------------------------------------
fresh_ws
ln -s / "$SW/host-root" && ln -s /usr "$SW/usr" && chown -h 1000:1000 "$SW/host-root" "$SW/usr"
sbrun symlink 'ln -s / /workspace/root; ln -s /bin /workspace/bin; sleep 1; echo fine'
check_eq "symlinks to / and to big host directories are not followed (not stopped)" \
    "$(jq -r '"\(.exit_code) \(.limits_hit | length) \(.stdout.preview_head)"' "$T/symlink.json")" "0 0 fine"

# ---- a one-shot run's watcher: forked by brig only once its first look is due ---
fresh_ws
timeout -k 5 60 "$BRIG" --debug --log "$T/short.log" sandbox run --policy "$POL" --state-root "$SBS" \
    --rootfs "$T/root" --workspace "$SW" --json -- /bin/echo short > "$T/short.json" 2>/dev/null
check "a command shorter than the first look: the workspace measured at create" \
    grep -q "its watcher forked if the command outlives the first look" "$T/short.log"
check_not "... and no watcher forked for it" grep -q "watched by pid" "$T/short.log"
fresh_ws
timeout -k 5 60 "$BRIG" sandbox run --policy "$POL" --state-root "$SBS" --rootfs "$T/root" --workspace "$SW" \
    --json -- /bin/sleep 3 > "$T/long.json" 2>/dev/null &
long=$!
n=100; while [ $n -gt 0 ] && no_watcher; do sleep 0.05; n=$((n - 1)); done
w=$(watchers_of "$SW")
check "a command that outlives the first look gets its watcher ($w)" test -n "$w" -a "$(echo "$w" | wc -w)" = 1
sid=$(ls "$SBS" | grep '^sb-' | head -n 1)
sinit=$(jq -r .pid "$SBS/$sid/state.json" 2>/dev/null)
if [ -n "$w" ] && [ -n "$sinit" ]; then
    check_eq "... in a child cgroup of the run's, in every hierarchy the run's init is in" \
        "$(cat "/proc/$w/cgroup" 2>&1)" "$(sed 's|$|/brig-wswatch|' "/proc/$sinit/cgroup" 2>&1)"
    check_eq "... with no capability but CAP_DAC_READ_SEARCH, CAP_KILL and CAP_SYS_PTRACE" \
        "$(awk '/^CapEff|^CapBnd/ {print $2}' "/proc/$w/status" | sort -u)" 0000000000080024
    check_eq "... no_new_privs" "$(awk '/^NoNewPrivs/ {print $2}' "/proc/$w/status")" 1
    # forked by the run's supervisor: none of its fds (the command's pipes, its signalfd)
    check_eq "... holding only its own fds (stdio, control, workspace, record, the init's pidfd)" \
        "$(ls "/proc/$w/fd" | sort -n | tr '\n' ' ')" "0 1 2 3 4 5 6 "
fi
wait "$long"
check_eq "... the run ends as it would have" "$(jq -r '"\(.exit_code) \(.limits_hit | length)"' "$T/long.json")" "0 0"
check_eq "... and its watcher with it" "$(watchers_of "$SW")" ""

# Output copied live (no --json) to a reader that takes 4 KiB every 0.1 s, the
# command flooding stdout while a writer fills the workspace: the loop that copies it
# must not be what starts the bound (a later watcher forked there was never forked:
# 6 GB past 4 MiB, stopped only by the timeout).
fresh_ws
timeout -k 5 60 "$BRIG" sandbox run --policy "$POL" --state-root "$SBS" --rootfs "$T/root" --workspace "$SW" \
    --timeout 10s -- /bin/sh -c 'i=0; while :; do dd if=/dev/zero of=/workspace/f$i bs=65536 count=16 2>/dev/null;
        i=$((i+1)); done & cat /dev/zero' 2> "$T/trickle.err" |
    { for i in $(seq 200); do [ "$(dd bs=4096 count=1 2>/dev/null | wc -c)" -gt 0 ] || break; sleep 0.1; done
      cat > /dev/null; }
used=$(du -sk "$SW" | cut -f1)
check "a streamed run behind a slow reader is stopped by the watch, not the timeout" \
    grep -q "the workspace passed workspace.maxSize" "$T/trickle.err"
check "... with the workspace far from the disk's size: $used KiB (< 512 MiB)" test "$used" -lt 524288

# The same to a reader that takes nothing and whose write blocks though it polled
# writable: a terminal nobody reads (it hung brig past its --timeout before) and a unix
# socket with the smallest buffer; and brig stopped at its first write (a background
# job of a terminal with tostop: SIGTTOU). The watch still stops the command (its
# watcher is forked before the first byte is copied: a review found the last one
# unwatched, GBs written, while the watcher waited for brig's loop; and it leaves
# brig's process group before it answers: CI found it stopped with brig by that
# SIGTTOU, and left stopped when only brig was continued), and brig ends.
for kind in pty sock tostop; do
    fresh_ws
    took=$(python3 "$(dirname "$0")/stalled-reader.py" "$kind" "$T/stalled-$kind.err" "$BRIG" sandbox run \
        --policy "$POL" --state-root "$SBS" --rootfs "$T/root" --workspace "$SW" --timeout 20s -- /bin/sh -c \
        'i=0; while :; do dd if=/dev/zero of=/workspace/f$i bs=65536 count=16 2>/dev/null; i=$((i+1)); done & cat /dev/zero')
    used=$(du -sk "$SW" | cut -f1)
    check "a streamed run to a $kind nobody reads ends before its timeout (${took}s)" test "$took" != hung -a "$took" -lt 20
    check "... stopped by the watch" grep -q "the workspace passed workspace.maxSize" "$T/stalled-$kind.err"
    check "... with the workspace far from the disk's size: $used KiB (< 512 MiB)" test "$used" -lt 524288
done
# and with no workspace to bound, the timeout is kept
fresh_ws
took=$(python3 "$(dirname "$0")/stalled-reader.py" pty "$T/stalled-t.err" "$BRIG" sandbox run --state-root "$SBS" \
    --rootfs "$T/root" --workspace "$SW" --timeout 2s -- /bin/cat /dev/zero)
check "a streamed run to a terminal nobody reads keeps its --timeout 2s (${took}s)" test "$took" != hung -a "$took" -lt 10
check "... and says so" grep -q "killed at the wall timeout" "$T/stalled-t.err"

# ---- the watcher, from inside and from the host --------------------------------
fresh_ws
if sbx create --policy "$POL" --rootfs "$T/root" --workspace "$SW" "$NAME" >/dev/null 2>"$T/create.err"; then
    w=$(watchers_of "$SW")
    check "a long-lived sandbox has one watcher ($w)" test -n "$w" -a "$(echo "$w" | wc -w)" = 1
    check "... in the sandbox's cgroup (charged to it)" grep -q "/$NAME/brig-wswatch$" "/proc/$w/cgroup"
    check_eq "... with no capability but CAP_DAC_READ_SEARCH, CAP_KILL and CAP_SYS_PTRACE" \
        "$(awk '/^CapEff|^CapBnd/ {print $2}' "/proc/$w/status" | sort -u)" 0000000000080024
    check_eq "... no_new_privs" "$(awk '/^NoNewPrivs/ {print $2}' "/proc/$w/status")" 1
    sbx exec --json "$NAME" -- /bin/falloc > "$T/falloc-exec.json" 2>/dev/null
    check_eq "an exec into it: fallocate refused too (EOPNOTSUPP)" \
        "$(jq -r .stdout.preview_head "$T/falloc-exec.json")" "fallocate=-1 Operation not supported"
    rm -f "$SW/falloc"
    if (( 0x$(awk '/^CapEff/ {print $2}' /proc/self/status) >> 24 & 1 )); then
        check_eq "... never the OOM killer's pick in the memory cgroup it shares" "$(cat "/proc/$w/oom_score_adj")" -1000
    else
        skip "... never the OOM killer's pick (oom_score_adj -1000)" "this test's root has no CAP_SYS_RESOURCE, nor has brig"
    fi
    sbx exec --json "$NAME" -- /bin/sh -c 'ls /proc | grep -c "^[0-9]"; for p in /proc/[0-9]*; do cat $p/comm; done | grep -c wswatch; kill -9 -1; echo after' \
        > "$T/killall.json" 2>/dev/null
    check_eq "inside, the watcher is not among the processes (a pid namespace)" \
        "$(jq -r .stdout.preview_head "$T/killall.json" | sed -n 2p)" 0
    check_eq "kill -9 -1 inside leaves the watcher alive" "$(watchers_of "$SW")" "$w"
    sbx exec --json "$NAME" -- /bin/sh -c 'dd if=/dev/zero of=/workspace/big bs=65536 count=1024 2>/dev/null; sleep 5; echo survived' \
        > "$T/after.json" 2>/dev/null
    check_eq "... and it still bounds the session (limits_hit of the exec)" "$(hit after)" '["workspace.maxSize"]'
    check "... whose sandbox is gone" wait_until 10 no_watcher
    sbx rm --force "$NAME" >/dev/null 2>&1
    check_eq "rm leaves no cgroup of the watcher" "$(ls -d /sys/fs/cgroup/*/brig-sandbox/"$NAME" 2>/dev/null)" ""
else
    not_ok "sandbox create with a watched workspace" "$(cat "$T/create.err")"
fi
# rm of a live session ends its watcher
fresh_ws
if sbx create --policy "$POL" --rootfs "$T/root" --workspace "$SW" "$NAME" >/dev/null 2>"$T/create.err"; then
    w=$(watchers_of "$SW")
    sbx rm --force "$NAME" >/dev/null 2>&1
    check "rm ends the session's watcher ($w)" wait_until 10 no_watcher
else
    not_ok "sandbox create with a watched workspace" "$(cat "$T/create.err")"
fi
# brig SIGKILLed during a run: the sandbox ends, and its watcher with it
fresh_ws
"$BRIG" sandbox run --policy "$POL" --state-root "$SBS" --rootfs "$T/root" --workspace "$SW" \
    -- /bin/sh -c 'touch /workspace/up; sleep 30' > /dev/null 2>&1 &
BPID=$!
if wait_until 20 test -e "$SW/up" && wait_until 10 some_watcher; then
    kill -9 "$BPID"
    wait "$BPID" 2>/dev/null
    check "brig sandbox run SIGKILLed: its watcher is gone too" wait_until 10 no_watcher
else
    not_ok "brig sandbox run SIGKILLed: its watcher is gone too" "the run did not start"
    kill -9 "$BPID" 2>/dev/null
fi
"$BRIG" sandbox gc --state-root "$SBS" >/dev/null 2>&1

# ---- an engine's container (create, start) -------------------------------------
mkb eng -- /bin/sh -c 'i=0; while :; do dd if=/dev/zero of=/workspace/f$i bs=65536 count=16 2>/dev/null; i=$((i+1)); done' ||
    bail "cannot build a bundle"
PLAIN=$T/plain.json
"$BRIG" policy show agent | jq 'del(.audit) | .workspace.maxSize = "4MiB"' > "$PLAIN"
fresh_ws
"$BRIG" policy apply --policy "$PLAIN" --workspace "$SW" --output "$T/eng/config.json.new" "$T/eng/config.json" &&
    mv "$T/eng/config.json.new" "$T/eng/config.json" || bail "policy apply failed"
ID=$(cid eng)
CLEAN_IDS+=("$ID")
if b --policy "$PLAIN" --log "$T/eng.log" create --bundle "$T/eng" "$ID" </dev/null >/dev/null 2>"$T/eng.err"; then
    check "create: the container has a watcher" test -n "$(watchers_of "$SW")"
    b start "$ID"
    check "the engine's container is killed past the bound" wait_status "$ID" stopped 30
    check_eq "brig state says why (annotation)" \
        "$(b state "$ID" | jq -r '.annotations["org.brig.workspace.maxSize"] // empty' | jq -r .limit 2>/dev/null)" \
        workspace.maxSize
    check "--log says why" grep -q "workspace.maxSize" "$T/eng.log"
    b delete --force "$ID" >/dev/null 2>&1
    check_eq "no watcher left after delete" "$(watchers_of "$SW")" ""
else
    not_ok "create a container with a watched workspace" "$(cat "$T/eng.err")"
fi
assert_clean eng
