#!/bin/bash
# Two state roots, one sandbox NAME. A long-lived sandbox's cgroup is
# /brig-sandbox/NAME whatever root it was made in, so a namesake in another
# root shares it: a create that joined the leaf a dead sandbox left there
# (its init killed, its entry not yet removed) was then killed by that dead
# one's `sandbox gc` (every 10 minutes by the timer) or `sandbox rm --force`:
# the removal of a dead sandbox killed someone else's live one. Now a
# sandbox's leaf must be its own, made by its create: a namesake's (live or
# left) refuses the create, naming the leftover and gc; after gc it works.
. "$(dirname "$0")/lib.sh"
it_init
busybox_rootfs "$T/rootfs" sh true sleep cat echo
mkdir -p "$T/wsA" "$T/wsB"
RA=$T/rootA RB=$T/rootB
NAME=nr-$TAG
sba() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$RA" "${@:2}"; }
sbb() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$RB" "${@:2}"; }
trap 'rc=$?; sbb rm --force "$NAME" >/dev/null 2>&1; sba rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
leaves() { ls -d /sys/fs/cgroup/*/brig-sandbox/"$NAME" /sys/fs/cgroup/brig-sandbox/"$NAME" 2>/dev/null; }
b_alive() { sbb exec --json "$NAME" -- echo alive 2>/dev/null | jq -r .stdout.preview_head 2>/dev/null | grep -qx alive; }

# ---- A: made, then its init killed (a dead sandbox, its leaf left) ----
out=$(sba create --rootfs "$T/rootfs" --workspace "$T/wsA" --env "BRIG_IT_TAG=$TAG-A" "$NAME" 2>&1) ||
    bail "sandbox create in root A: $out"
kill -9 "$(jq -r .pid "$RA/$NAME/state.json")" 2>/dev/null
wait_until 20 test -z "$(tagged_pids "$TAG-A")"
check "A's init is dead and its leaf is left" test -n "$(leaves)"

# ---- B: the same NAME in another root ----
sbb create --rootfs "$T/rootfs" --workspace "$T/wsB" --env "BRIG_IT_TAG=$TAG-B" "$NAME" > "$T/b.out" 2>&1
brc=$?
if [ $brc = 0 ]; then
    # It joined A's leaf. A's removal must still not touch it.
    check "B runs beside A's dead namesake" b_alive
    sba gc > /dev/null 2>&1
    check "B survives gc of root A (A's dead sandbox removed)" b_alive
    sba rm --force "$NAME" > /dev/null 2>&1
    check "B survives rm --force of A's namesake" b_alive
else
    check_eq "B's create beside A's leftover: exit 125" "$brc" 125
    check "B's create: the error names the leaf that is not its own" grep -qF "exists already" "$T/b.out"
    check "B's create: the error names gc" grep -qF "brig sandbox gc" "$T/b.out"
    check_not "B's refused create left no state entry" test -e "$RB/$NAME"
    check "B's refused create left A's leftover as it was" test -e "$RA/$NAME"
    sba gc > /dev/null 2>&1
    check_not "gc of root A removed A's leaf" test -n "$(leaves)"
    out=$(sbb create --rootfs "$T/rootfs" --workspace "$T/wsB" --env "BRIG_IT_TAG=$TAG-B" "$NAME" 2>&1)
    check_eq "B's create after gc: exit 0" "$?" 0
    check "B runs" b_alive
fi

# ---- the other way round: B live, A's create refused and B untouched ----
out=$(sba create --rootfs "$T/rootfs" --workspace "$T/wsA" --env "BRIG_IT_TAG=$TAG-A2" "$NAME" 2>&1)
check_eq "A's create beside B's live namesake: exit 125" "$?" 125
check_not "A's refused create left no state entry" test -e "$RA/$NAME"
sba gc > /dev/null 2>&1
check "B survives A's refused create and gc of root A" b_alive
sbb rm --force "$NAME" > /dev/null 2>&1
check_not "rm of B leaves no leaf" test -n "$(leaves)"
