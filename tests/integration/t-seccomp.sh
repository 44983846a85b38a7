#!/usr/bin/env bash
# linux.seccomp: a chosen syscall is denied with the chosen errno, the
# default errno is EPERM, argument filters and KILL_PROCESS work, the
# filter is visible in /proc/self/status.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# seccomp_bundle NAME PROBE-ARGS...: default allow, a few targeted rules.
seccomp_bundle() {
    local name=$1; shift
    mkb "$name" -- /usr/bin/brig-probe "$@" || return 1
    cfg "$name" '.linux.seccomp = {
        defaultAction: "SCMP_ACT_ALLOW",
        architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
        syscalls: [
          {names: ["getcwd"], action: "SCMP_ACT_ERRNO", errnoRet: 42},
          {names: ["keyctl"], action: "SCMP_ACT_ERRNO"},
          {names: ["perf_event_open"], action: "SCMP_ACT_ERRNO", errnoRet: 43},
          {names: ["personality"], action: "SCMP_ACT_ERRNO", errnoRet: 13,
           args: [{index: 0, value: 262144, valueTwo: 262144, op: "SCMP_CMP_MASKED_EQ"}]},
          {names: ["userfaultfd"], action: "SCMP_ACT_KILL_PROCESS"}
        ]}'
}

seccomp_bundle sc-getcwd syscall getcwd || bail "cannot build a bundle"
run_ct sc-getcwd
check_eq "getcwd is denied with errnoRet 42 (ENOMSG)" "$RC" 42
check_probe "... and the probe saw ENOMSG" sc-getcwd '.result == "ENOMSG"'
assert_clean sc-getcwd

seccomp_bundle sc-keyctl syscall keyctl
run_ct sc-keyctl
check_eq "keyctl is denied with the default errno EPERM" "$RC" 1
assert_clean sc-keyctl

seccomp_bundle sc-pers syscall personality
run_ct sc-pers
check_eq "personality(ADDR_NO_RANDOMIZE) is denied by the argument filter (EACCES)" "$RC" 13
assert_clean sc-pers

# io_uring_setup has no rule: the probe must get what it gets on the host.
host_rc=$("$BRIG_PROBE" syscall io_uring_setup >/dev/null 2>&1; echo $?)
seccomp_bundle sc-ok syscall io_uring_setup
run_ct sc-ok
check_eq "a syscall without a rule behaves as on the host" "$RC" "$host_rc"
assert_clean sc-ok

seccomp_bundle sc-kill syscall userfaultfd
run_ct sc-kill
check_eq "SCMP_ACT_KILL_PROCESS kills the process with SIGSYS (128+31)" "$RC" 159
assert_clean sc-kill

seccomp_bundle sc-report report
run_ct sc-report
if check_ran "the probe reports under the filter" sc-report; then
    check_probe "Seccomp mode 2 (filter) in /proc/self/status" sc-report '.seccomp == 2'
    check_probe "at least one filter is loaded" sc-report '.seccomp_filters >= 1'
    check_probe "NoNewPrivs still set (seccomp is applied last, nothing undone)" sc-report '.no_new_privs == 1'
fi
assert_clean sc-report

# A non-root user without no_new_privs: loading the filter needs privilege,
# which the runtime must use before dropping it, never skip the filter.
# (perf_event_open: nothing a runtime calls between loading the filter and exec)
seccomp_bundle sc-user syscall perf_event_open
cfg sc-user '.linux.seccomp.syscalls |= map(select(.names != ["getcwd"]))
  | .process.noNewPrivileges = false | .process.user = {uid: 1000, gid: 1000}
  | .process.capabilities = {bounding: [], effective: [], permitted: []}'
run_ct sc-user
check_eq "the filter applies to an unprivileged user without no_new_privs (EIDRM)" "$RC" 43
assert_clean sc-user

# A bad rule fails create before anything exists.
seccomp_bundle sc-bad report
cfg sc-bad '.linux.seccomp.syscalls[0].action = "SCMP_ACT_BOGUS"'
run_ct sc-bad
check "an unknown seccomp action fails" test "$RC" -ne 0
check "... naming the field" grep -q "linux.seccomp.syscalls\[0\].action" "$T/sc-bad.err"
check "... and no process ran" bash -c "! grep -q '^{' '$T/sc-bad.out'"
assert_clean sc-bad

