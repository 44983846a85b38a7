#!/usr/bin/env bash
# The seccomp BPF cache (runtime/linux/seccomp_cache.c) follows the config:
# the same bundle rerun under the same --root, its rule changed each time,
# gets the filter of its own config. The unit test (test_seccomp_cache)
# changes every field of linux.seccomp; this one proves it end to end.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# seccomp_bundle NAME PROBE-ARGS...: default allow, one rule for getcwd.
seccomp_bundle() {
    local name=$1; shift
    mkb "$name" -- /usr/bin/brig-probe "$@" || return 1
    cfg "$name" '.linux.seccomp = {
        defaultAction: "SCMP_ACT_ALLOW",
        architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        syscalls: [{names: ["getcwd"], action: "SCMP_ACT_LOG"}]}'
}

# ---- the BPF cache follows the config -----------------------------------------
# The same bundle rerun under the same --root, its getcwd rule tightened step
# by step: each run must get the filter of its own config, never the one
# cached for the previous. (A cache key without the action or errnoRet
# would run the first, looser filter every time.)
cache_entries() { find "$STATE/.seccomp-cache" -maxdepth 1 -type f ! -name '.*' 2>/dev/null | wc -l; }
# The cache lives in the state root: a root made by the first create is not
# there yet when that create compiles its filter.
mkdir -m 0700 "$STATE"
seccomp_bundle sc-cache syscall getcwd || bail "cannot build a bundle"
cfg sc-cache '.linux.seccomp.syscalls[0] = {names: ["getcwd"], action: "SCMP_ACT_LOG"}'
run_ct sc-cache
check_eq "cache: getcwd under SCMP_ACT_LOG is allowed" "$RC" 0
n_before=$(cache_entries)
check "cache: the compiled filter was stored ($n_before entries)" test "$n_before" -ge 1
run_ct sc-cache
check_eq "cache: the same config again (a hit) still allows it" "$RC" 0
check_eq "cache: ... and stored nothing new" "$(cache_entries)" "$n_before"
step=1
for change in 'SCMP_ACT_KILL_PROCESS 159 killed with SIGSYS' \
              'SCMP_ACT_ERRNO:42 42 denied with errnoRet 42' \
              'SCMP_ACT_ERRNO:43 43 denied with errnoRet 43 (only errnoRet changed)'; do
    read -r act want what <<<"$change"
    errno=${act#*:}
    [ "$errno" = "$act" ] && errno=null
    cfg sc-cache '.linux.seccomp.syscalls[0] = {names: ["getcwd"], action: $a}
        | if $e != null then .linux.seccomp.syscalls[0].errnoRet = $e else . end' \
        --arg a "${act%%:*}" --argjson e "$errno"
    run_ct sc-cache
    check_eq "cache: rerun $step, getcwd rule now ${act}: $what" "$RC" "$want"
    step=$((step + 1))
done
assert_clean sc-cache
