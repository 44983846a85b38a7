#!/usr/bin/env bash
# A broken entry under --root (a state.json cut short, garbage, or none)
# beside good ones: `list` shows every entry, the broken one with status
# unknown and why (text and --format json); `state` says what is wrong and
# what still works; `kill`, `ps` and `events` act on what the file still
# says (the init by pid and start time, the rest by its cgroup); the good
# containers are untouched; `delete --force` cleans the broken one up.
# The attack: a broken state.json naming a host process (its pid with
# another start time, or with none) never gets that process signalled.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

nothing_of() {
    local id; id=$(cid "$1")
    [ ! -e "$STATE/$id" ] && [ -z "$(tagged_pids "$id")" ] &&
        ! ls -d /sys/fs/cgroup/*/brig-test/"$id" >/dev/null 2>&1
}

# up NAME: a created and started container running brig-probe sleep.
up() {
    mkb "$1" -- /usr/bin/brig-probe sleep 60 || return 1
    create_ct "$1" && start_ct "$1"
}
for n in good1 good2 bad; do up $n || bail "cannot start container $n"; done
G1=$(cid good1) G2=$(cid good2) BAD=$(cid bad)
BADPID=$(state_field "$BAD" pid)
[ -n "$BADPID" ] || bail "no pid for $BAD"
# Cut in the middle of the bundle path: pid, pidStartTime and cgroup come
# first and are still whole.
f=$STATE/$BAD/state.json
off=$(grep -bo '"bundle":' "$f" | head -n 1 | cut -d: -f1)
truncate -s $((off + 12)) "$f"
# A directory a create left before its first state write (no state.json).
mkdir -m 0711 "$STATE/$(cid dead)"

# ---- list ----------------------------------------------------------------------------
out=$(b list 2>"$T/list.err"); rc=$?
check_eq "list exits 0 with a broken entry among the others" "$rc" 0
row() { awk -v id="$1" '$1 == id { print $3 }' <<<"$out"; }
check_eq "list: good1 running" "$(row "$G1")" running
check_eq "list: good2 running" "$(row "$G2")" running
check_eq "list: the broken one, status unknown" "$(row "$BAD")" unknown
check_eq "list: its pid is the init it still names" "$(awk -v id="$BAD" '$1 == id { print $2 }' <<<"$out")" "$BADPID"
check_eq "list: the dead create's directory, status unknown" "$(row "$(cid dead)")" unknown
check "list: stderr says why for the broken one" grep -q "container $BAD: state.json is corrupt: .*status is unknown" "$T/list.err"
check "list: ... and for the directory without state.json" grep -q "container $(cid dead): no state.json" "$T/list.err"
js=$(b list --format json 2>/dev/null)
check_eq "list --format json: every entry" "$(jq -r 'map(select(.id | startswith($t))) | length' --arg t "$TAG-" <<<"$js")" 4
check_eq "list --format json: the broken one has status unknown, its pid and an error" \
    "$(jq -r --arg id "$BAD" '.[] | select(.id == $id) | "\(.status) \(.pid) \(.error | test("state.json is corrupt"))"' <<<"$js")" \
    "unknown $BADPID true"
check_eq "list --format json: the good ones as before (no error member)" \
    "$(jq -r --arg id "$G1" '.[] | select(.id == $id) | "\(.status) \(has("error"))"' <<<"$js")" "running false"

# ---- state, ps, events of the broken one -----------------------------------------------
check_refused "state of the broken one: refused, saying state.json is corrupt" "state.json is corrupt" b state "$BAD"
check_refused "... that its status is unknown and its init still runs" "its status is unknown (it still names its init, $BADPID, running" \
    b state "$BAD"
check_refused "... and what cleans it up" "brig delete --force $BAD" b state "$BAD"
check_eq "ps --format json of the broken one: the processes of its cgroup" "$(b ps --format json "$BAD" 2>/dev/null)" "[$BADPID]"
check_eq "events --stats of the broken one: a stats event" \
    "$(b events --stats "$BAD" 2>/dev/null | jq -r '.type' 2>&1)" stats

# ---- kill ------------------------------------------------------------------------------
check "kill of a good one works" b kill "$G1" KILL
check "... it stops" wait_status "$G1" stopped
check_eq "... and good2 runs on" "$(state_field "$G2" status)" running
out=$(b kill "$BAD" KILL 2>&1); rc=$?
check_eq "kill of the broken one signals its init (exit 0)" "$rc" 0
check "... saying the state is broken" grep -q 'state.json is corrupt.*signalled its init' <<<"$out"
check "... the init is gone" wait_until 10 test ! -e "/proc/$BADPID"
check_refused "kill of the broken one again: not running, and why" "is not running (its init, $BADPID, is gone" \
    b kill "$BAD" KILL

# ---- the attack: a broken state naming a process that is not its init ------------------
sleep 300 & VICTIM=$!
vstart=$(awk '{ print $22 }' "/proc/$VICTIM/stat")
mkdir -m 0711 "$STATE/$(cid forged)" "$STATE/$(cid nostart)"
printf '{"id":"%s","pid":%d,"pidStartTime":%d,"setupDone":true,"cgroup":null,"bundle":' \
    "$(cid forged)" "$VICTIM" $((vstart + 1)) > "$STATE/$(cid forged)/state.json"
printf '{"id":"%s","pid":%d,"setupDone":true,"cgroup":null,"bundle":' \
    "$(cid nostart)" "$VICTIM" > "$STATE/$(cid nostart)/state.json"
check_refused "a broken state naming another process's pid (another start time): kill refuses" \
    "is not running" b kill "$(cid forged)" KILL
check_refused "a broken state naming a pid without its start time: kill refuses, saying why" \
    "does not name its init's pid and start time" b kill "$(cid nostart)" KILL
check "... the process is untouched" kill -0 "$VICTIM"
check_eq "... and list does not report it as the init" \
    "$(b list --format json 2>/dev/null | jq -r --arg id "$(cid forged)" '.[] | select(.id == $id) | .pid')" 0
kill "$VICTIM"; wait "$VICTIM" 2>/dev/null
rm -rf "${STATE:?}/$(cid forged)" "${STATE:?}/$(cid nostart)"

# ---- delete --force cleans the broken entries up ---------------------------------------
check "delete --force of the broken one" b delete --force "$BAD"
check "... nothing of it is left" nothing_of bad
check "delete --force of the dead create's directory" b delete --force "$(cid dead)"
check "... gone" test ! -e "$STATE/$(cid dead)"
check "delete of good1 (stopped)" b delete "$G1"
check_eq "list: good2 is what is left" "$(b list -q 2>&1)" "$G2"
check "delete --force good2" b delete --force "$G2"
for n in good1 good2; do assert_clean $n; done
