#!/bin/bash
# A state root that fills up mid-create, or is read-only: `brig create` and
# `brig sandbox run` on a tmpfs of a few pages (or a few inodes) that the
# test fills, at every size from "nothing fits" to "everything fits". Each
# run either works or fails with a clear error (what could not be written,
# and that the state directory has no room left or is read-only), and a
# failed one leaves nothing: no state entry, owner file, cgroup or process.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

mkb c -- /usr/bin/brig-probe report || bail "cannot build a bundle"
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc} && cp /bin/busybox "$ROOTFS/bin/" ||
    bail "cannot make the rootfs"
for a in sh echo true; do ln -s busybox "$ROOTFS/bin/$a"; done
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
M=$T/full
mkdir -p "$M"

# fresh KIND N: a new tmpfs at $M with state root $M/st: KIND pages leaves
# N free 4 KiB pages of 64 (the rest filled), inodes allows N more inodes.
fresh() {
    umount "$M" 2>/dev/null
    if [ "$1" = pages ]; then
        mount -t tmpfs -o size=256k,mode=0700 tmpfs "$M" || return 1
        mkdir -m 0700 "$M/st"
        [ $((63 - $2)) -le 0 ] || dd if=/dev/zero of="$M/filler" bs=4k count=$((63 - $2)) 2>/dev/null
    else
        mount -t tmpfs -o "size=1m,nr_inodes=$(($2 + 3)),mode=0700" tmpfs "$M" || return 1
        mkdir -m 0700 "$M/st"
    fi
}
# what is left of a container ID in the state root, its cgroups, its processes
leftovers() {
    local id=$1 c
    ls -A "$M/st" | grep -v '^\.seccomp-cache$' | tr '\n' ' '
    for c in /sys/fs/cgroup/*/brig-test/"$id" /sys/fs/cgroup/*/brig-sandbox/"$id" /sys/fs/cgroup/brig-sandbox/"$id"; do
        [ -d "$c" ] && printf 'cgroup %s ' "$c"
    done
    tagged_pids "$2" | sed 's/^/process /' | tr '\n' ' '
}

HINT='(the state directory has no room left: free room there, or give brig another'
ID=$(cid c)
# sizes around where each kind stops fitting, and one where all fits
declare -A SIZES=([create-pages]="0 1 2 3 16" [create-inodes]="0 1 2 3 4 5 16"
                  [sandbox-pages]="0 4 8 10 11 12 24" [sandbox-inodes]="0 2 4 5 6 16")
for kind in pages inodes; do
    worked=0 failed=0 late=0 bad=""
    for n in ${SIZES[create-$kind]}; do
        fresh "$kind" "$n" || bail "cannot mount a tmpfs at $M"
        timeout -k 5 60 "$BRIG" --root "$M/st" create --bundle "$T/c" "$ID" </dev/null >"$T/out" 2>&1
        rc=$?
        if [ $rc = 0 ]; then
            worked=$((worked + 1))
            timeout -k 5 30 "$BRIG" --root "$M/st" delete --force "$ID" >/dev/null 2>&1
            continue
        fi
        failed=$((failed + 1))
        grep -qF "$HINT" "$T/out" || bad+="$kind $n: exit $rc, $(head -c 300 "$T/out"); "
        # a state write after the init's clone failed: the undo had an init
        # and a cgroup to remove
        grep -q 'create [^:]*: container [^:]*: \(write \|create \.\)state\.json' "$T/out" && late=$((late + 1))
        left=$(leftovers "$ID" "$ID")
        [ -z "$left" ] || bad+="$kind $n: left $left; "
    done
    diag "create, $kind: $worked worked, $failed refused ($late after its cgroup and init existed)"
    check "create with the state root out of $kind: each refusal says so and leaves nothing" test -z "$bad" ||
        diag "$bad"
    check "... some creates were refused, some after their cgroup existed, some worked (the test is not vacuous)" \
        test "$failed" -gt 0 -a "$late" -gt 0 -a "$worked" -gt 0
done

for kind in pages inodes; do
    worked=0 failed=0 bad=""
    for n in ${SIZES[sandbox-$kind]}; do
        fresh "$kind" "$n" || bail "cannot mount a tmpfs at $M"
        timeout -k 5 60 "$BRIG" sandbox run --json --state-root "$M/st" --rootfs "$ROOTFS" --workspace "$WS" \
            --env "BRIG_IT_TAG=$TAG-sb" -- echo hi </dev/null >"$T/out.json" 2>"$T/err"
        rc=$?
        id=$(jq -r .id "$T/out.json" 2>/dev/null)
        if [ $rc = 0 ] && [ "$(jq -r .stdout.preview_head "$T/out.json")" = "hi" ]; then
            worked=$((worked + 1))
        elif [ $rc = 125 ] && jq -r .error "$T/out.json" | grep -qF "$HINT"; then
            failed=$((failed + 1))
        else
            bad+="$kind $n: exit $rc, $(head -c 300 "$T/out.json") $(head -c 300 "$T/err"); "
        fi
        left=$(leftovers "${id:-none}" "$TAG-sb")
        [ -z "$left" ] || bad+="$kind $n: left $left; "
    done
    diag "sandbox run, $kind: $worked worked, $failed refused"
    check "sandbox run with the state root out of $kind: each refusal says so and leaves nothing" test -z "$bad" ||
        diag "$bad"
    check "... some were refused, some worked (the test is not vacuous)" test "$failed" -gt 0 -a "$worked" -gt 0
done

# ---- a read-only state root (a mount of the test's own, never /run) ----
fresh pages 16 || bail "cannot mount a tmpfs at $M"
mount -o remount,ro "$M" || bail "cannot make $M read-only"
check_refused "create under a read-only state root: refused, saying why" \
    "Read-only file system (the state directory is on a read-only file system" \
    "$BRIG" --root "$M/st" create --bundle "$T/c" "$ID"
check_eq "... nothing of it exists" "$(leftovers "$ID" "$ID")" ""
check_refused "create with a missing state root under a read-only mount: refused" "Read-only file system" \
    "$BRIG" --root "$M/st/sub" create --bundle "$T/c" "$ID"
timeout -k 5 60 "$BRIG" sandbox run --json --state-root "$M/st" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "BRIG_IT_TAG=$TAG-sb" -- echo hi </dev/null >"$T/out.json" 2>"$T/err"
check_eq "sandbox run under a read-only state root: exit 125, saying why" \
    "$?:$(jq -r '.error | test("Read-only file system \\(the state directory is on a read-only")' "$T/out.json")" \
    "125:true"
check_eq "... nothing of it exists" "$(leftovers "$(jq -r .id "$T/out.json")" "$TAG-sb")" ""
check "list under a read-only state root still works" "$BRIG" --root "$M/st" list
umount "$M"
assert_clean c
