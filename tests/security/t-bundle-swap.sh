#!/usr/bin/env bash
# The bundle as somebody else's directory (docs/security.md): a user who
# can rename entries of the bundle directory races brig for its root and
# its config.json.
#  (a) rootfs rename-exchanged with a symlink to a decoy host tree, in a
#      tight loop, by an unprivileged user, while brig runs containers
#      (under a policy that forbids the decoy, and without one): no
#      container may see the decoy, nothing may be created in it;
#  (b) config.json a symlink to a decoy secret: refused by create, run,
#      policy check/apply and exec --process, the secret in no output;
#  (c) a config.json with a syntax error: a byte offset, not an excerpt;
#  (d) config.json a fifo, a directory, a device: refused, no hang.
# And the use tests: runc spec bundles with relative, absolute and ".."
# root paths, and a --bundle named through a symlink, run.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

NOBODY=65534
SECRET="brig-swap-secret-$TAG"
# What is looked for: short enough to be caught in a parser's excerpt of
# a few dozen bytes, found in no message of brig's own.
LEAK="swap-secret"
AUDIT=$T/audit.jsonl

# ---- the hostile piece: rename-exchange in a tight loop ----------------------
cat > "$T/swapper.c" <<'EOF'
/* swapper DIR A B SECONDS: exchange DIR/A and DIR/B as fast as possible,
 * until SECONDS have passed or SIGTERM comes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif
static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }
int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    signal(SIGTERM, on_term);
    int d = open(argv[1], O_PATH | O_DIRECTORY);
    if (d < 0) { perror("open"); return 1; }
    time_t end = time(NULL) + atoi(argv[4]);
    unsigned long n = 0, failed = 0;
    while (!stop && time(NULL) < end) {
        for (int i = 0; i < 1000; i++, n++)
            if (syscall(SYS_renameat2, d, argv[2], d, argv[3], RENAME_EXCHANGE) < 0) failed++;
    }
    printf("%lu exchanges, %lu failed\n", n, failed);
    return 0;
}
EOF
build_static "$T/swapper" "$T/swapper.c"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is needed to run the swapper unprivileged"

# The agent profile, auditing into $T, with the decoy forbidden: it stands
# for the host's / (judged, it is refused; mounted, it is an escape).
mkdir -p "$T/ws"
"$BRIG" policy show agent | jq --arg a "$AUDIT" --arg d "$T/decoy" \
    '.audit.path = $a | .forbiddenPaths += [$d]' > "$T/agent.json" || bail "policy show failed"

# ---- (a) rootfs swapped for a symlink while containers start ---------------
mkb swap -- /bin/sh -c 'cat /decoy-marker 2>/dev/null; echo ran-inside' || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/swap/c.json" "$T/swap" ||
    bail "policy apply failed"
mv "$T/swap/c.json" "$T/swap/config.json"
# The decoy: a copy of the root (so that a container landing there runs and
# says so), with a marker, and without the workspace mount point.
cp -a "$T/swap/rootfs" "$T/decoy"
echo "DECOY-$TAG" > "$T/decoy/decoy-marker"
mkdir -p "$T/swap/rootfs/workspace"
rm -rf "$T/decoy/workspace"
ln -s "$T/decoy" "$T/swap/alt"
# The bundle directory belongs to the unprivileged user; what is in it is root's.
chown "$NOBODY:$NOBODY" "$T/swap"
check "the policy allows the bundle as it is" "$BRIG" policy check --policy "$T/agent.json" "$T/swap"
# Without a policy: the same bundle, the same race.
check "the bundle runs before the race" b run --bundle "$T/swap" "$(cid swap-pre)"

# The race runs until it has shown both outcomes several times in RUNS
# containers (20 per mode; brig before the fix, c01a13e, let about 1 in 4
# containers see the decoy) or SWAP_SECONDS have passed, then the swapper is
# stopped: a bound, not a soak.
SWAP_SECONDS=45 RUNS=60
setpriv --reuid "$NOBODY" --regid "$NOBODY" --clear-groups \
    "$T/swapper" "$T/swap" rootfs alt "$SWAP_SECONDS" > "$T/swapper.out" 2>&1 &
swapper=$!
sleep 0.2
inside=0 escapes=0 refused=0 other=0 runs=0
end=$((SECONDS + SWAP_SECONDS - 5))
i=0
while [ $i -lt 150 ] && [ $SECONDS -lt $end ] &&
      ! { [ $runs -ge $RUNS ] && [ "$inside" -ge 3 ] && [ "$refused" -ge 3 ]; }; do
    i=$((i + 1))
    id=$(cid "swap-$i")
    CLEAN_IDS+=("$id")
    # Every mode that opens the bundle: run and create+start, with the
    # policy, and run without one.
    case $((i % 3)) in
        0) mode="create+start --policy"
           out=$( { b --policy "$T/agent.json" create --bundle "$T/swap" "$id" </dev/null &&
                    b start "$id" && wait_status "$id" stopped 10; } 2>&1)
           rc=$?
           b delete --force "$id" >/dev/null 2>&1 ;;
        1) mode="run --policy"
           out=$(b --policy "$T/agent.json" run --bundle "$T/swap" "$id" 2>&1 </dev/null); rc=$? ;;
        2) mode="run"
           out=$(b run --bundle "$T/swap" "$id" 2>&1 </dev/null); rc=$? ;;
    esac
    runs=$((runs + 1))
    case $out in
        *DECOY-*) escapes=$((escapes + 1)); diag "escape ($mode): $(head -c 300 <<<"$out")" ;;
        *ran-inside*) inside=$((inside + 1)) ;;
        *root.path*|*"refuses create"*) refused=$((refused + 1)) ;;
        *) other=$((other + 1)); diag "other outcome ($mode, exit $rc): $(head -c 300 <<<"$out")" ;;
    esac
done
kill -TERM "$swapper" 2>/dev/null
wait "$swapper"     # it stops and counts
diag "swapper: $(cat "$T/swapper.out")"
diag "rootfs swap race: $runs containers: $inside ran in their root, $refused refused, $escapes saw the decoy, $other other"
check_eq "no container ever got the decoy as its root" "$escapes" 0
if [ "$inside" -ge 1 ] && [ "$refused" -ge 1 ]; then
    ok "the race was run: some containers ran, some were refused"
else
    not_ok "the race was run: some containers ran, some were refused" "ran $inside, refused $refused, other $other"
fi
check_not "nothing was created in the decoy (its /workspace)" test -e "$T/decoy/workspace"
check_not "no mount was made on the decoy" test -n "$(mounts_under "$T/decoy")"

# ---- (b) config.json a symlink to a secret ----------------------------------
# The decoy secret looks like a shadow line: not JSON, so a parser quoting
# what it could not read would show it.
printf 'root:%s:19000:0:99999:7:::\n' "$SECRET" > "$T/secret-file"
mkb cfglink || bail "cannot build a bundle"
mv "$T/cfglink/config.json" "$T/cfglink/config.json.real"
ln -s "$T/secret-file" "$T/cfglink/config.json"
# no_secret DESC FILE...: the secret is in none of the files, and they say
# why (a symlink).
no_secret() {
    local d=$1; shift
    if grep -q "$LEAK" "$@" 2>/dev/null; then
        not_ok "$d" "$(grep -h "$LEAK" "$@" | head -c 500)"
    elif ! grep -qi "symlink" "$@" 2>/dev/null; then
        not_ok "$d" "no error naming the symlink:" "$(cat "$@" | head -c 500)"
    else
        ok "$d"
    fi
}
for op in create run; do
    for pol in "" "--policy $T/agent.json"; do
        # shellcheck disable=SC2086  # $pol is two words or none
        b $pol --log "$T/cfglink-$op.log" --log-format json $op --bundle "$T/cfglink" \
            "$(cid "cfglink-$op")" </dev/null >"$T/cfglink-$op.out" 2>"$T/cfglink-$op.err"
        rc=$?
        check_refused_rc "$op ${pol:+with a policy }refuses a config.json that is a symlink" \
            "config.json: a symlink, refusing to follow it" 1 "$rc" "$T/cfglink-$op.err"
        no_secret "$op ${pol:+with a policy }: the secret in no error, no --log line" \
            "$T/cfglink-$op.out" "$T/cfglink-$op.err" "$T/cfglink-$op.log"
        CLEAN_IDS+=("$(cid "cfglink-$op")")
    done
done
for arg in "$T/cfglink" "$T/cfglink/config.json"; do
    for sub in "check --format json" "check" "apply"; do
        # shellcheck disable=SC2086
        "$BRIG" policy $sub --policy "$T/agent.json" "$arg" >"$T/pc.out" 2>"$T/pc.err"
        rc=$?
        check_eq "policy $sub ${arg#"$T"/}: a symlinked config is bad input" "$rc" 2
        no_secret "policy $sub ${arg#"$T"/}: the secret in no output" "$T/pc.out" "$T/pc.err"
    done
done
check_not "the audit log never holds the secret" grep -q "$LEAK" "$AUDIT"

# exec --process FILE: the caller's file, read by the same rule.
mkb svc -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
SVC=$(cid svc)
CLEAN_IDS+=("$SVC")
if b run --detach --bundle "$T/svc" "$SVC" </dev/null >/dev/null 2>"$T/svc.err"; then
    ln -s "$T/secret-file" "$T/proc-link.json"
    b --log "$T/exec.log" --log-format json exec --process "$T/proc-link.json" "$SVC" \
        >"$T/exec.out" 2>"$T/exec.err" </dev/null
    rc=$?
    check_refused_rc "exec --process refuses a symlink" "a symlink, refusing to follow it" 1 "$rc" "$T/exec.err"
    no_secret "exec --process: the secret in no error, no --log line" "$T/exec.out" "$T/exec.err" "$T/exec.log"
    printf '{"args": %s}' "$SECRET" > "$T/proc-bad.json"
    b exec --process "$T/proc-bad.json" "$SVC" >"$T/exec2.out" 2>"$T/exec2.err" </dev/null
    if grep -q "$LEAK" "$T/exec2.out" "$T/exec2.err" || ! grep -q "byte offset" "$T/exec2.err"; then
        not_ok "exec --process of a file that is not JSON: no excerpt" "$(cat "$T/exec2.err")"
    else
        ok "exec --process of a file that is not JSON: no excerpt"
    fi
else
    not_ok "a container to exec into" "$(cat "$T/svc.err")"
fi
b delete --force "$SVC" >/dev/null 2>&1

# ---- (c) a syntax error: where, not what -------------------------------------
mkb syntax || bail "cannot build a bundle"
printf '{"ociVersion": "1.0.2",\n "root": %s }\n' "$SECRET" > "$T/syntax/config.json"
b --log "$T/syntax.log" --log-format json create --bundle "$T/syntax" "$(cid syntax)" \
    </dev/null >"$T/syntax.out" 2>"$T/syntax.err"
CLEAN_IDS+=("$(cid syntax)")
if grep -q "$LEAK" "$T/syntax.out" "$T/syntax.err" "$T/syntax.log"; then
    not_ok "a syntax error is reported without an excerpt" "$(cat "$T/syntax.err")"
elif grep -q "line 2, column [0-9]* (byte offset [0-9]*)" "$T/syntax.err" "$T/syntax.log"; then
    ok "a syntax error is reported without an excerpt"
else
    not_ok "a syntax error is reported without an excerpt" "no line and byte offset:" "$(cat "$T/syntax.err")"
fi
"$BRIG" policy check --policy "$T/agent.json" "$T/syntax" >"$T/pcs.out" 2>"$T/pcs.err"
rc=$?
if [ "$rc" = 2 ] && ! grep -q "$LEAK" "$T/pcs.out" "$T/pcs.err" && grep -q "byte offset" "$T/pcs.err"; then
    ok "policy check: the syntax error without an excerpt"
else
    not_ok "policy check: the syntax error without an excerpt" "exit $rc" "$(cat "$T/pcs.err")"
fi

# ---- (d) config.json that is not a regular file ---------------------------
mkb notreg || bail "cannot build a bundle"
for kind in fifo dir dev; do
    rm -rf "$T/notreg/config.json"
    case $kind in
        fifo) mkfifo "$T/notreg/config.json" ;;
        dir) mkdir "$T/notreg/config.json" ;;
        dev) mknod "$T/notreg/config.json" c 1 3 ;;   # /dev/null: reads as empty
    esac
    for cmd in "create --bundle $T/notreg $(cid "notreg-$kind")" "policy check $T/notreg"; do
        d="${cmd%% --bundle*}"; d="${d%% /*}: a config.json that is a $kind is refused without hanging"
        # shellcheck disable=SC2086
        out=$(timeout -k 2 10 "$BRIG" --root "$STATE" $cmd 2>&1 </dev/null)
        rc=$?
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            not_ok "$d" "timed out"
        elif [ "$rc" != 0 ] && grep -q "not a regular file" <<<"$out"; then
            ok "$d"
        else
            not_ok "$d" "exit $rc" "$out"
        fi
    done
    CLEAN_IDS+=("$(cid "notreg-$kind")")
done
rm -rf "$T/notreg/config.json"

# ---- use: what users make ------------------------------------------------------
# runc spec output, root.path relative (its default), absolute, and through
# "..", and a bundle named through a symlink (the caller's own path).
if command -v runc >/dev/null; then
    "$BRIG_MKBUNDLE" --no-config --probe "$BRIG_PROBE" "$T/rs" >/dev/null 2>&1 || bail "cannot build a rootfs"
    ( cd "$T/rs" && runc spec ) || bail "runc spec failed"
    # runc 1.1.5's spec lists ambient capabilities it leaves out of the
    # inheritable set, which brig refuses (a separate matter).
    jq --arg id "$(cid rs)" '.process.terminal = false | .process.args = ["/usr/bin/brig-probe", "report"]
        | .process.capabilities.inheritable = .process.capabilities.ambient
        | .linux.cgroupsPath = "/brig-test/" + $id' "$T/rs/config.json" > "$T/rs/c.json" &&
        mv "$T/rs/c.json" "$T/rs/config.json"
    for root in rootfs "$T/rs/rootfs" ../rs/rootfs; do
        jq --arg r "$root" '.root.path = $r' "$T/rs/config.json" > "$T/rs/c.json" && mv "$T/rs/c.json" "$T/rs/config.json"
        run_ct rs
        check_ran "runc spec bundle with root.path $root runs" rs
        assert_clean rs
    done
    ln -s "$T/rs" "$T/rs-link"
    CLEAN_IDS+=("$(cid rs-link)")
    check "a --bundle named through a symlink runs" b run --bundle "$T/rs-link" "$(cid rs-link)"
    # The refusal: root.path through a symlink (runc: "not an absolute path, or a symlink").
    mv "$T/rs/rootfs" "$T/rs/real" && ln -s real "$T/rs/rootfs"
    run_ct rs
    if [ "$RC" != 0 ] && grep -q "root.path.*symlink" "$T/rs.err"; then
        ok "a rootfs that is a symlink is refused, naming root.path"
    else
        not_ok "a rootfs that is a symlink is refused, naming root.path" "exit $RC" "$(cat "$T/rs.err")"
    fi
    assert_clean rs
else
    skip "runc spec bundles run" "runc is not installed"
fi
