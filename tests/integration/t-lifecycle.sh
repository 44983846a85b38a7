#!/usr/bin/env bash
# The OCI lifecycle through the CLI: create -> state -> start -> kill ->
# delete, exit statuses of run, id validation, --pid-file, duplicate ids.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# state_is ID STATUS: one TAP line.
state_is() {
    local got; got=$(state_field "$1" status)
    check_eq "$1 is $2" "$got" "$2"
}

# pid_alive PID: a live, non-zombie process.
pid_alive() { [ -n "$1" ] && [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# ---- create, state, start, kill by name, delete ------------------------------
mkb lc -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
ID=$(cid lc)
create_ct lc --pid-file "$T/lc.pid"
check_eq "create succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/lc.err")"
S=$(b state "$ID" 2>"$T/state.err")
check "state prints the OCI state object" jq -e --arg id "$ID" --arg b "$T/lc" \
    '.id == $id and .bundle == $b and (.ociVersion | type) == "string"' <<<"$S"
check_eq "state says created" "$(jq -r .status <<<"$S" 2>/dev/null)" created
PID=$(jq -r '.pid // 0' <<<"$S" 2>/dev/null)
check "created: the init pid is alive on the host" pid_alive "$PID"
check_eq "--pid-file holds the init pid" "$(cat "$T/lc.pid" 2>/dev/null)" "$PID"
check "the init sits in the cgroup asked for" grep -q ":/brig-test/$ID\$" "/proc/$PID/cgroup"
check "the init is not the probe yet (it waits for start)" \
    bash -c "! grep -qa brig-probe /proc/$PID/cmdline"
check "list shows the container" bash -c "timeout 30 '$BRIG' --root '$STATE' list -q | grep -qx '$ID'"

check "start succeeds" start_ct lc
state_is "$ID" running
check "running: the init is now the probe" grep -qa brig-probe "/proc/$PID/cmdline"
check_refused "start twice fails" "cannot start a container that is running" 1 b start "$ID"
check_refused "delete refuses a running container without --force" "that is not stopped: running" 1 b delete "$ID"
state_is "$ID" running
check "the process survived the refused delete" pid_alive "$PID"

check "kill with a signal name (TERM)" b kill "$ID" TERM
check "the container stops after SIGTERM" wait_status "$ID" stopped 10
check "delete a stopped container" b delete "$ID"
check_refused "state of a deleted container fails" "container $ID does not exist" 1 b state "$ID"
check "the init pid is gone" bash -c "! [ -e /proc/$PID ] || grep -q '^State:.*Z' /proc/$PID/status"
assert_clean lc

# ---- kill: numbers, SIG-prefixed names, default signal, before start -----------
i=0
for sig in 15 SIGTERM 9 KILL SIGKILL; do
    i=$((i + 1))
    mkb "k$i" -- /usr/bin/brig-probe sleep 60 || continue
    create_ct "k$i"
    start_ct "k$i" >/dev/null 2>&1
    check "kill $sig is accepted" b kill "$(cid "k$i")" "$sig"
    check "kill $sig stops the container" wait_status "$(cid "k$i")" stopped 10
    b delete "$(cid "k$i")" >/dev/null 2>&1
    assert_clean "k$i"
done

mkb kdef -- /usr/bin/brig-probe sleep 60 || true
create_ct kdef
start_ct kdef >/dev/null 2>&1
check "kill without a signal sends SIGTERM" b kill "$(cid kdef)"
check "... which stops the container" wait_status "$(cid kdef)" stopped 10
check_refused "kill of a stopped container fails" "container $(cid kdef) is not running" 1 b kill "$(cid kdef)" KILL
check "delete after it stopped" b delete "$(cid kdef)"
assert_clean kdef

mkb kbad -- /usr/bin/brig-probe sleep 60 || true
create_ct kbad
start_ct kbad >/dev/null 2>&1
check_refused "kill with an unknown signal name fails" 'unknown signal "SIGNOPE"' 1 b kill "$(cid kbad)" SIGNOPE
check_refused "kill with signal 999 fails" 'invalid signal "999": not in 1..64' 1 b kill "$(cid kbad)" 999
state_is "$(cid kbad)" running
check "delete --force kills and removes a running container" b delete --force "$(cid kbad)"
assert_clean kbad

mkb kc -- /usr/bin/brig-probe sleep 60 || true
create_ct kc
check "kill KILL a created (never started) container" b kill "$(cid kc)" KILL
check "... it stops" wait_status "$(cid kc)" stopped 10
check "... and deletes" b delete "$(cid kc)"
assert_clean kc

mkb dc -- /usr/bin/brig-probe sleep 60 || true
create_ct dc
check "delete --force of a created container" b delete --force "$(cid dc)"
assert_clean dc

# ---- run: exit statuses ------------------------------------------------------
mkb r3 -- /usr/bin/brig-probe exit 3 || true
run_ct r3
check_eq "run returns the container's exit status (3)" "$RC" 3
assert_clean r3

mkb r0 -- /usr/bin/brig-probe exit 0 || true
run_ct r0 --pid-file "$T/r0.pid"
check_eq "run returns 0" "$RC" 0
check "run writes --pid-file" grep -qE '^[0-9]+$' "$T/r0.pid"
assert_clean r0

# As pid 1 a process cannot signal itself to death, but a real fault kills it.
mkb rsegv -- /usr/bin/brig-probe kill-self SEGV || true
run_ct rsegv
check_eq "run returns 128+11 when the process dies of SIGSEGV" "$RC" 139
assert_clean rsegv

mkb rkill -- /usr/bin/brig-probe kill-self KILL || true
cfg rkill '.linux.namespaces |= map(select(.type != "pid"))'
run_ct rkill
check_eq "run returns 128+9 when the process dies of SIGKILL (no pid ns)" "$RC" 137
assert_clean rkill

mkb rmiss -- /no/such/binary || true
run_ct rmiss
check "run of a missing executable fails" test "$RC" -ne 0
check "... with an error message" test -s "$T/rmiss.err"
assert_clean rmiss

# ---- ids ---------------------------------------------------------------------
mkb ids -- /usr/bin/brig-probe exit 0 || true
# Each refused by the id check itself (its message), not by whatever a bad
# id would break later (a mkdir of "a/b" fails too, with another message).
START='must start with a letter or digit'
for c in "../escape|$START" "a/b|character 0x2f not allowed" "..|$START" ".|$START" \
         "|container id must not be empty" "-x|flag provided but not defined: -x" \
         "a b|character 0x20 not allowed" "a..b|must not contain \"..\"" \
         "x/../../escape|character 0x2f not allowed"; do
    bad=${c%%|*} msg=${c#*|}
    check_refused "id '$bad' is refused: $msg" "$msg" 1 b create --bundle "$T/ids" "$bad"
done
check "nothing was created outside the state dir" test ! -e "$T/escape"
check "the state dir holds no entry for refused ids" \
    bash -c "[ ! -d '$STATE' ] || [ -z \"\$(ls -A '$STATE' | grep -v -e '^$TAG-' -e '^\.seccomp-cache\$')\" ]"

# ---- two creates of the same id ---------------------------------------------
mkb dup -- /usr/bin/brig-probe sleep 60 || true
create_ct dup
check_eq "first create succeeds" "$RC" 0
P1=$(state_field "$(cid dup)" pid)
create_ct dup
check "second create of the same id fails" test "$RC" -ne 0
check "... saying it exists" grep -qi "exist" "$T/dup.err"
state_is "$(cid dup)" created
check_eq "... and leaves the first one alone" "$(state_field "$(cid dup)" pid)" "$P1"
check "start the first one still works" b start "$(cid dup)"
check "delete --force" b delete --force "$(cid dup)"
assert_clean dup

check_refused "state of an unknown id fails" "container nosuch does not exist" 1 b state nosuch
check_refused "delete of an unknown id fails" "container nosuch does not exist" 1 b delete nosuch
