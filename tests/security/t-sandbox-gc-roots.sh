#!/bin/bash
# sandbox gc and the state roots it knows (docs/sandbox.md, "Leftovers and
# gc"): a root is recorded as the run named it, and gc refuses a recorded
# path that goes through a symbolic link (a directory on it replaced by a
# link could lead gc into another runtime's root). A root named through a
# link from the start (/var/run/X on Debian, where /var/run -> /run), or
# with a trailing slash, was recorded so and then never swept: a dead
# sandbox there stayed for ever (its init killed: the gc timer's job), gc
# warning about a link it always was. Now the record is the root's real
# path: gc sweeps it, and still refuses one whose path became a link.
. "$(dirname "$0")/lib.sh"
it_init
busybox_rootfs "$T/rootfs" sh true sleep
mkdir -p "$T/ws" "$T/real" && ln -s real "$T/link"
NAME=gr-$TAG
ROOT_AS_NAMED=$T/link/sb/           # a link on the way, and a trailing slash
ROOT_REAL=$T/real/sb
sbn() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$ROOT_AS_NAMED" "${@:2}"; }
trap 'rc=$?; sbn rm --force "$NAME" >/dev/null 2>&1; sbn rm --force "$NAME-2" >/dev/null 2>&1; (exit $rc); it_finish' EXIT

out=$(sbn create --rootfs "$T/rootfs" --workspace "$T/ws" --env "BRIG_IT_TAG=$TAG-a" "$NAME" 2>&1) ||
    bail "sandbox create through $ROOT_AS_NAMED: $out"
check "the sandbox's entry is in the real root" test -d "$ROOT_REAL/$NAME"
kill -9 "$(jq -r .pid "$ROOT_REAL/$NAME/state.json")" 2>/dev/null
wait_until 20 test -z "$(tagged_pids "$TAG-a")"

# the timer's gc: no --state-root
"$BRIG" sandbox gc > "$T/gc.out" 2> "$T/gc.err"
check_not "gc removed the dead sandbox of a root named through a link" test -e "$ROOT_REAL/$NAME"
check_not "gc did not call that root a link it will not sweep" grep -qF "$T/link" "$T/gc.err"
check_eq "its leaf is gone" "$(ls -d /sys/fs/cgroup/*/brig-sandbox/"$NAME" 2>/dev/null)" ""

# the guard stays: the recorded (real) path made a link to another root
out=$(sbn create --rootfs "$T/rootfs" --workspace "$T/ws" --env "BRIG_IT_TAG=$TAG-b" "$NAME-2" 2>&1) ||
    bail "second create: $out"
kill -9 "$(jq -r .pid "$ROOT_REAL/$NAME-2/state.json")" 2>/dev/null
wait_until 20 test -z "$(tagged_pids "$TAG-b")"
mv "$T/real" "$T/moved" && ln -s moved "$T/real"
"$BRIG" sandbox gc > "$T/gc.out" 2> "$T/gc.err"
check "gc names the recorded root that is now reached through a link" grep -qF "$ROOT_REAL" "$T/gc.err"
check "and does not sweep it: the dead entry is still there" test -e "$T/moved/sb/$NAME-2"
rm "$T/real" && mv "$T/moved" "$T/real"
"$BRIG" sandbox rm --force --state-root "$ROOT_REAL" "$NAME-2" > /dev/null 2>&1
