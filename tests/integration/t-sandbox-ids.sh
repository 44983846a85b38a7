#!/usr/bin/env bash
# The host id slots of sandboxes (docs/sandbox.md, "Host identity"), as an
# admin meets them: a range of brig's own in sandbox-ids.json (here a file
# of the test's, BRIG_SANDBOX_IDS, one slot wide), a slot held for a
# sandbox's whole life (a long-lived one with brig gone between its execs,
# a one-shot), never given to a second live sandbox, free again once its
# sandbox is gone, also after its brig was SIGKILLed; and a range refused,
# naming the file, when it is not brig's alone (a user, a group, a
# subordinate range, the egress proxy's ids) or not well formed.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc} && cp /bin/busybox "$ROOTFS/bin/" || bail "rootfs"
for a in sh true sleep cat; do ln -s busybox "$ROOTFS/bin/$a"; done
mkdir -p "$T/ws"
SB_STATE=$T/sbstate
FIRST=2113929216        # 0x7E000000: outside the default range, one slot of the test's own
ids() { printf '{"first": %s, "count": %s}\n' "$1" "$2" > "$T/ids.json"; chmod 0644 "$T/ids.json"; }
ids $FIRST 1
export BRIG_SANDBOX_IDS=$T/ids.json
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
j() { jq -r "$1" "$T/out.json" 2>/dev/null; }
trap 'rc=$?; for n in A B; do sbx rm --force "ids-$n-$TAG" >/dev/null 2>&1; done; (exit $rc); it_finish' EXIT
run_in() { sbx run --json --rootfs "$ROOTFS" --workspace "$T/ws" --env "BRIG_IT_TAG=$TAG-sb" "$@" > "$T/out.json" 2>> "$T/brig.err"; }
# refused DESC MESSAGE: the last run_in refused before anything ran
refused() {
    check_eq "$1: exit 125" "$RC" 125
    check "$1: the error says \"$2\"" grep -qF -- "$2" <<<"$(j .error)" || diag "$(cat "$T/out.json")"
    check_eq "$1: nothing ran" "$(j .ran)" false
}

# ---- one slot: its sandbox's for its whole life ----
run_in -- cat /proc/self/uid_map; RC=$?
check_eq "a one-shot in the test's range: exit 0" "$RC" 0
check_eq "its ids are the range's one slot" "$(j .stdout.preview_head | awk 'NR == 1 {print $1, $2, $3}')" "0 $FIRST 65536"
sbx create --rootfs "$ROOTFS" --workspace "$T/ws" --env "BRIG_IT_TAG=$TAG-sb" "ids-A-$TAG" > /dev/null
check_eq "a long-lived sandbox takes the slot: exit 0" "$?" 0
sbx exec --json "ids-A-$TAG" -- cat /proc/self/uid_map > "$T/out.json" 2>> "$T/brig.err"
check_eq "an exec, brig gone since the create: the same slot" "$(j .stdout.preview_head | awk '{print $2}')" "$FIRST"
sbx create --rootfs "$ROOTFS" --workspace "$T/ws" "ids-B-$TAG" > "$T/out.json" 2>&1
check_eq "a second long-lived sandbox while it lives: exit 125" "$?" 125
check "a second long-lived sandbox: refused, no free host ids" grep -qF "no free host ids for a sandbox" "$T/out.json"
check_not "a second long-lived sandbox: no state left" test -e "$SB_STATE/ids-B-$TAG"
run_in -- true; RC=$?
refused "a one-shot while it lives" "no free host ids for a sandbox: all 1 slots"
sbx rm --force "ids-A-$TAG" >/dev/null
run_in -- true; RC=$?
check_eq "after rm: the slot is free again (exit 0)" "$RC" 0

# ---- brig SIGKILLed mid-run: the slot is free once its sandbox is gone ----
"$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$T/ws" --env "BRIG_IT_TAG=$TAG-k" \
    -- sleep 30 > /dev/null 2>&1 &
bp=$!
k_alive() { [ -n "$(tagged_pids "$TAG-k")" ]; }
wait_until 20 k_alive
run_in -- true; RC=$?
refused "a one-shot beside a running one" "no free host ids"
kill -9 "$bp"; wait "$bp" 2>/dev/null
wait_until 20 eval '! k_alive'
check_eq "brig SIGKILLed: its sandbox died with it" "$(tagged_pids "$TAG-k" | tr '\n' ' ')" ""
run_in -- true; RC=$?
check_eq "brig SIGKILLed: the next run gets the slot (exit 0)" "$RC" 0

# ---- a range that is not brig's alone, or not a range ----
ids 2952790016 1; run_in -- true; RC=$?
refused "the egress proxy's ids" "the egress proxy's ids"
ids $((FIRST + 5)) 1; run_in -- true; RC=$?
refused "a first id that is no multiple of 65536" "first must be a nonzero multiple of 65536"
ids $FIRST 0; run_in -- true; RC=$?
refused "no slot" "count at least 1"
ids 4294901760 2; run_in -- true; RC=$?
refused "past the 32-bit ids" "at most 4294967295"
printf '{"first": %s, "count": 1, "size": 1}\n' $FIRST > "$T/ids.json"; run_in -- true; RC=$?
refused "an unknown key" "unknown key \"size\""
ids $FIRST 1; chmod 0666 "$T/ids.json"; run_in -- true; RC=$?
refused "a file others may write" "must be owned by root and not writable by group or others"
ids $FIRST 1
BRIG_SANDBOX_IDS=$T/none.json run_in -- true; RC=$?
refused "a named file that is missing" "$T/none.json"
# a user, a group, a subordinate range in the range: the host's files as
# they would be, bound over them in a mount namespace of the test's own
cp /etc/passwd "$T/passwd" && echo "brigtest:x:$((FIRST + 1000)):$((FIRST + 1000))::/:/bin/false" >> "$T/passwd"
cp /etc/group "$T/group" && echo "brigtest:x:$((FIRST + 7)):" >> "$T/group"
echo "someone:$((FIRST - 100)):200" > "$T/subuid"
for f in passwd group subuid; do
    chmod 0644 "$T/$f"
    RC=0
    unshare -m bash -c 'mount --bind "$1" "/etc/$2" && exec "${@:3}"' _ "$T/$f" "$f" \
        timeout -k 5 60 "$BRIG" sandbox run --json --state-root "$SB_STATE" --rootfs "$ROOTFS" \
        --workspace "$T/ws" -- true > "$T/out.json" 2>> "$T/brig.err" || RC=$?
    case $f in
        passwd) msg="user brigtest (uid $((FIRST + 1000))) in /etc/passwd" ;;
        group) msg="group brigtest (gid $((FIRST + 7))) in /etc/group" ;;
        subuid) msg="someone's subordinate ids $((FIRST - 100))-$((FIRST + 99)) in /etc/subuid" ;;
    esac
    refused "a range holding $f's entry" "$msg"
    check "a range holding $f's entry: the error names the range's file" grep -qF "$T/ids.json" <<<"$(j .error)"
done
check_eq "nothing of the sandboxes left" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')" ""
