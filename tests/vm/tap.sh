# TAP helpers of the VM's brig scripts (vm-brig-cgroups.sh, vm-rootless.sh;
# sourced, bash): one line per check, N and FAILED counted; the script's
# exit trap prints the plan ("1..$N").
# shellcheck shell=bash
N=0 FAILED=0

ok() { N=$((N + 1)); echo "ok $N - $1"; }
not_ok() {
    N=$((N + 1)); FAILED=$((FAILED + 1)); echo "not ok $N - $1"; shift
    local l; for l in "$@"; do printf '%s\n' "$l" | sed 's/^/#   /'; done
}
check() {
    local d=$1 out; shift
    if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "failed: $*" "$out"; fi
}
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi; }
diag() { printf '%s\n' "$*" | sed 's/^/# /'; }
