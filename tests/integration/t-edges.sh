#!/usr/bin/env bash
# Lifecycle edges no other test reaches: start after the init died, a
# failing poststart hook (runtime-spec 1.3: an error, the container stopped),
# --no-pivot, and linux.rootfsPropagation as the container's own mount
# table shows it.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# ---- start after the init died ---------------------------------------------------
mkb dead -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
create_ct dead
ID=$(cid dead)
PID=$(state_field "$ID" pid)
if [ "$RC" = 0 ] && [ -n "$PID" ] && [ "$PID" -gt 0 ]; then
    kill -9 "$PID"
    check "the init killed from the host: state says stopped" wait_status "$ID" stopped 5
    check_refused "start after the init died is refused" "cannot start a container that is stopped" 1 \
        b start "$ID"
    check "... no process of it runs" test -z "$(tagged_pids "$ID")"
    check "... delete works" b delete "$ID"
else
    not_ok "create a container to kill" "$(cat "$T/dead.err")"
fi
assert_clean dead

# ---- a failing poststart hook ------------------------------------------------------
# runtime-spec 1.3 (runtime.md, lifecycle step 9): "If any poststart hook
# fails, the runtime MUST generate an error, stop the container, and
# continue the lifecycle at step 12" (spec 1.0 said a warning). runc and crun
# fail too; brig leaves the stopped container for delete, which runs poststop.
mkb ps -- /usr/bin/brig-probe sleep 600 || bail "cannot build a bundle"
cfg ps '.hooks = {poststart: [{path: "/bin/sh", args: ["sh", "-c", "exit 7"]},
                              {path: "/bin/sh", args: ["sh", "-c", "touch \($t)/ps-second"]}],
                  poststop: [{path: "/bin/sh", args: ["sh", "-c", "cat > \($t)/ps-poststop.json"]}]}' --arg t "$T"
create_ct ps
b start "$(cid ps)" >"$T/ps-start.out" 2>"$T/ps-start.err"
check_eq "start with a failing poststart hook fails (exit 1)" "$?" 1
check "... naming the hook" grep -qF "start $(cid ps): hooks.poststart[0] (/bin/sh): exited with status 7" "$T/ps-start.err"
check_not "... the hooks after it did not run" test -e "$T/ps-second"
check_eq "... the container is stopped as start returns" "$(state_field "$(cid ps)" status)" stopped
check "... no process of it runs" test -z "$(tagged_pids "$(cid ps)")"
check "... a plain delete removes it" b delete "$(cid ps)"
check "... and runs poststop (lifecycle step 13)" jq -e '.status == "stopped"' "$T/ps-poststop.json"
assert_clean ps
# run reports it the same way, and removes the container.
mkb psr -- /usr/bin/brig-probe sleep 600 || bail "cannot build a bundle"
cfg psr '.hooks = {poststart: [{path: "/bin/false"}]}'
run_ct psr -d
check_eq "run -d with a failing poststart hook fails (exit 1)" "$RC" 1
check "... naming the hook" grep -qF "run $(cid psr): hooks.poststart[0] (/bin/false): exited with status 1" "$T/psr.err"
check_refused "... and the container is gone" "does not exist" 1 b state "$(cid psr)"
assert_clean psr
if command -v runc >/dev/null; then
    other_run runc psr
    check_eq "runc run fails on the same bundle too" "$OTHER_RC" 1
    check "... with the hook's error" grep -q "error running hook #0" "$T/psr.runc.err"
fi

# ---- --no-pivot ------------------------------------------------------------------
mkb np -- /bin/cat /proc/self/mountinfo /etc/brig-np-marker || bail "cannot build a bundle"
echo np-marker-inside > "$T/np/rootfs/etc/brig-np-marker"
run_ct np --no-pivot
check_eq "run --no-pivot works" "$RC" 0
check "... the process sees the bundle's rootfs as /" grep -qx np-marker-inside "$T/np.out"
check "... and no mount point of the host's (none under $T)" bash -c "! awk 'NF > 6 {print \$5}' '$T/np.out' | grep -qF '$T'"
check "... / is the only mount point not under /proc, /dev, /sys" bash -c \
    "[ \"\$(awk 'NF > 6 && \$5 !~ \"^/(proc|dev|sys)(/|\$)\" {print \$5}' '$T/np.out' | sort -u)\" = / ]"
assert_clean np

# ---- rootfsPropagation -----------------------------------------------------------
# The optional fields of "/" in the container's mountinfo: shared:N,
# master:N, or none (private).
root_line() { awk '$5 == "/" { l = $0 } END { print l }' "$T/$1.out"; }
for prop in shared slave private; do
    mkb "rp-$prop" -- /bin/cat /proc/self/mountinfo || continue
    cfg "rp-$prop" '.linux.rootfsPropagation = $p' --arg p "$prop"
    run_ct "rp-$prop"
    check_eq "rootfsPropagation $prop: the container ran" "$RC" 0
    line=$(root_line "rp-$prop")
    case $prop in
        shared) check "... / is shared inside ($line)" grep -q ' shared:[0-9]' <<<"$line" ;;
        # a slave of a private host mount has no master: only "not shared"
        slave) check "... / is not shared inside ($line)" bash -c "! grep -q ' shared:' <<<'$line'" ;;
        private) check "... / is private inside ($line)" bash -c "! grep -qE ' (shared|master):' <<<'$line'" ;;
    esac
    assert_clean "rp-$prop"
done
mkb rp-bad || true
cfg rp-bad '.linux.rootfsPropagation = "sideways"'
create_ct rp-bad
check_refused_rc "rootfsPropagation sideways is refused" "linux.rootfsPropagation" 1 "$RC" "$T/rp-bad.err"
assert_clean rp-bad

# ---- without close_range and clone3 ----------------------------------------------
# Older kernels lack close_range (5.9) and clone3 (5.3): brig then closes
# fds by walking /proc/self/fd and clones without CLONE_INTO_CGROUP (the
# init is moved into its cgroup by pid). Forced here: brig runs under a
# seccomp filter (a small static program built by this test) that answers
# ENOSYS to both, inherited by everything brig starts.
cat > "$T/nosys.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
/* nosys CMD...: CMD without close_range and clone3 (ENOSYS), x86-64 only. */
int main(int argc, char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    };
    struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
    if (argc < 2) return 2;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) { perror("seccomp"); return 3; }
    if (syscall(SYS_close_range, 1000, 1001, 0) == 0 || errno != ENOSYS) return 4;
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
C
if [ "$(uname -m)" != x86_64 ]; then
    skip "without close_range and clone3" "the filter is written for x86-64 (this is $(uname -m))"
elif ! command -v cc >/dev/null || ! cc -static -O1 -o "$T/nosys-wrap" "$T/nosys.c" 2>"$T/nosys.log"; then
    skip "without close_range and clone3" "no C compiler or static libc: $(head -c 200 "$T/nosys.log" 2>/dev/null)"
else
    mkb nosys -- /usr/bin/brig-probe sleep 600 || bail "cannot build a bundle"
    ID=$(cid nosys)
    CLEAN_IDS+=("$ID")
    echo leaked > "$T/fd9"
    "$T/nosys-wrap" "$BRIG" --root "$STATE" create --bundle "$T/nosys" "$ID" 9<"$T/fd9" </dev/null >/dev/null 2>"$T/nosys.err"
    check_eq "create under a filter without close_range and clone3 works" "$?" 0
    "$T/nosys-wrap" "$BRIG" --root "$STATE" start "$ID" 2>>"$T/nosys.err"
    check "... start too" wait_status "$ID" running 5
    PID=$(state_field "$ID" pid)
    check "... the init is in the cgroup asked for" grep -q ":/brig-test/$ID\$" "/proc/${PID:-0}/cgroup"
    check "... and holds only fds 0, 1, 2 (the caller's fd 9 was closed)" \
        bash -c "[ \"\$(ls /proc/${PID:-0}/fd | sort -n | tr '\n' ' ')\" = '0 1 2 ' ]"
    check "... the filter was in force in the init" grep -q '^Seccomp:[[:space:]]*2' "/proc/${PID:-0}/status"
    b delete --force "$ID" >/dev/null 2>&1
    assert_clean nosys
fi
