#!/usr/bin/env bash
# profile-insns.sh: where the instructions of a `brig sandbox run` (or `exec`) go,
# profiled in the project's cgroup v2 VM (tests/vm) under qemu's
# `-icount shift=0,sleep=off`: the guest's cpu-clock advances one nanosecond per
# executed instruction, so `perf record -e cpu-clock -c 50000` takes a sample every
# 50,000 instructions of whatever runs. Prints, in millions of instructions per
# run: each command name's share, brig's by system call (or "user", "pagefault"),
# and brig's user-space symbols. Kernel work deferred to kernel threads shows under
# their names. Not a test; asserts nothing (docs/performance.md, "Seventh pass").
#     sudo tests/bench/profile-insns.sh [--build DIR] [--runs N] [--exec]
# --exec: `sandbox exec NAME -- true` into a `sandbox create`d NAME, instead of
# `sandbox run --json -- true`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BRIG_BUILD:-$repo/build}
runs=60
mode=run
inner=0
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$(cd "${2:?}" && pwd); shift 2 ;;
        --runs) runs=${2:?}; shift 2 ;;
        --exec) mode="exec"; shift ;;
        --in-vm) inner=1; W=${2:?}; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--runs N] [--exec]" >&2; exit 2 ;;
    esac
done
# shellcheck source=tests/bench/vm-bench.sh
. "$here/vm-bench.sh"       # as root only; brig=$build/runtime/brig

if [ $inner = 1 ]; then
    R=$W/b/rootfs
    vm_guest_workspace /run/prof-ws
    cmd=("$brig" sandbox run --state-root /run/prof-st --policy agent --rootfs "$R" --workspace /run/prof-ws --json -- true)
    if [ $mode = exec ]; then
        "$brig" sandbox create --state-root /run/prof-st --policy agent --rootfs "$R" --workspace /run/prof-ws prof >/dev/null
        cmd=("$brig" sandbox exec --state-root /run/prof-st --json prof -- true)
    fi
    for _ in 1 2; do "${cmd[@]}" >/dev/null; done      # the caches warm
    # shellcheck disable=SC2016  # $0 and $@ are the inner bash's
    perf record -q -e cpu-clock -c 50000 -a -g -o /tmp/prof.data -- \
        bash -c 'for ((i = 0; i < $0; i++)); do "$@" >/dev/null; done' "$runs" "${cmd[@]}" 2>/dev/null
    perf script -i /tmp/prof.data -F comm,pid,ip,sym 2>/dev/null > /tmp/prof.txt
    python3 - "$runs" <<'PY'
import collections, sys
runs = int(sys.argv[1])
per = 0.05 / runs                       # one sample = 50,000 instructions; in M per run
comm_n, by_call, user_sym = collections.Counter(), collections.Counter(), collections.Counter()
ours = ('brig', '.brig-init', 'brig-init', 'true', 'brig-wswatch')
for sample in open('/tmp/prof.txt').read().split('\n\n'):
    lines = [l.strip() for l in sample.strip().split('\n') if l.strip()]
    if not lines or not lines[0].split():
        continue
    comm = lines[0].split()[0]
    syms = [l.split()[1] if len(l.split()) > 1 else '?' for l in lines[1:]]
    comm_n[comm] += 1
    if comm not in ours:
        continue
    key = 'user'
    for s in syms:
        if s.startswith(('__x64_sys_', '__do_sys_', '__se_sys_')):
            key = s.split('sys_', 1)[1]
            break
        if s == 'asm_exc_page_fault':
            key = 'pagefault'
            break
    else:
        if 'do_syscall_64' in syms:
            i = syms.index('do_syscall_64')
            key = 'sys:' + '<'.join(syms[max(0, i - 2):i])
    by_call[(comm, key)] += 1
    if key == 'user':
        user_sym[(comm, syms[0] if syms else '?')] += 1
print('== M instructions per run, by command name')
for k, v in comm_n.most_common(12):
    print(f'{k:<20} {v * per:7.3f}')
print('== brig and its children, by system call')
for (c, k), v in by_call.most_common(40):
    print(f'{c:<12} {k[:44]:<44} {v * per:7.3f}')
print('== user space, by symbol')
for (c, k), v in user_sym.most_common(30):
    print(f'{c:<12} {k[:44]:<44} {v * per:7.3f}')
PY
    exit 0
fi

command -v perf >/dev/null || { echo "perf is needed (Debian: linux-perf)" >&2; exit 2; }
vm_host_prepare profile-insns
flag=
[ $mode = exec ] && flag=--exec
echo "profile-insns: $(date -u +%FT%TZ), HEAD $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?'), $mode, $runs runs"
BRIG_VM_QEMU_ARGS="-icount shift=0,sleep=off" "$repo/tests/vm/run-in-vm.sh" --cpus 1 --disk 2G --timeout 1500 --quiet -- \
    bash "$here/profile-insns.sh" --build "$build" --runs "$runs" $flag --in-vm "$W"
