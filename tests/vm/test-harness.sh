#!/bin/bash
# Host-side checks of run-in-vm.sh itself: exit status, stdout/stderr, argument quoting,
# working directory and --env reach the VM intact, and a hung command times out with 124
# and the console log instead of hanging the suite.
set -uo pipefail
if [[ $EUID != 0 ]]; then
    echo "SKIP: the VM tests need root"
    exit 77
fi
run=$(dirname "${BASH_SOURCE[0]}")/run-in-vm.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, condition result
    if [[ $2 == 0 ]]; then echo "ok - $1"; else echo "FAIL - $1"; fail=1; fi
}

# Arguments with spaces, quotes and a newline must arrive as they were given; so must
# --env and our BRIG_* variables (but not the harness's own BRIG_VM_*).
arg=$'two words "q" \'s\' $HOME\nline2'
rc=0
BRIG_PASSED="a b" BRIG_VM_NOT_PASSED=x bash "$run" --quiet --env "GREETING=hello there" -- \
    bash -c 'printf "%s|" "$1" "$PWD" "$GREETING" "$BRIG_VM" "$BRIG_PASSED" "${BRIG_VM_NOT_PASSED-unset}"
             echo oops >&2; exit 7' \
    sh "$arg" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "exit status 7 passes through (got $rc)" "$([[ $rc == 7 ]]; echo $?)"
want="$arg|$PWD|hello there|1|a b|unset|"
check "stdout carries args, cwd and env" "$([[ $(<"$tmp/out") == "$want" ]]; echo $?)"
check "stderr is separate" "$([[ $(<"$tmp/err") == oops ]]; echo $?)"

# The guest's writes land in a throwaway overlay, never on the host.
marker=/var/tmp/brig-vm-overlay-check.$$
rc=0
bash "$run" -- sh -c "echo x >$marker && cat $marker" >"$tmp/out" 2>&1 || rc=$?
check "guest can write to its overlay (rc $rc)" "$([[ $rc == 0 && $(<"$tmp/out") == x ]]; echo $?)"
check "guest writes do not reach the host" "$([[ ! -e $marker ]]; echo $?)"

# A hung command: 124, with the console log, well before the suite's own timeout.
rc=0
start=$SECONDS
bash "$run" --timeout 20 -- sleep 600 >"$tmp/out" 2>"$tmp/err" || rc=$?
took=$((SECONDS - start))
check "timeout exits 124 (got $rc after ${took}s)" "$([[ $rc == 124 && $took -lt 60 ]]; echo $?)"
# Under heavy load the guest may not have printed anything yet: check the log section.
check "timeout prints the console log" \
    "$(grep -q -- '--- run-in-vm: VM console (timed out after 20s)' "$tmp/err"; echo $?)"
exit $fail
