#!/usr/bin/env bash
# bench-insns.sh: instructions per start, counted in the project's cgroup v2 VM
# (tests/vm), where they do not move with the host's load. qemu runs the guest
# with `-icount shift=0,sleep=off`: the guest's clock advances one nanosecond per
# executed instruction, so the CPU time a process tree is charged (user + system,
# getrusage of the reaped children) is the instructions it executed. Per start:
#   floor        bench-floor: clone into new namespaces, pivot, exec /bin/true
#   brig run     `brig run` of /bin/true, the minimal config (bench.sh's)
#   crun run     the same bundle under crun 1.8.1 (a pure cgroup v2 guest)
#   runc run     the same under runc 1.1.5
#   bwrap        `bwrap --unshare-all ... /bin/true` (bench-sandbox.sh's line)
#   brig sandbox `brig sandbox run --policy agent -- true`
#   brig exec    `brig sandbox exec NAME -- true` into a `sandbox create`d NAME
# Kernel work done later in kernel threads (a namespace's or cgroup's teardown)
# is not in a process's time, for any of them alike. Not a test: never run by
# meson; asserts nothing.
#     sudo tests/bench/bench-insns.sh [--build DIR] [--runs N] [--compare OLD_BRIG]
# --compare: the brig lines again for another brig binary (A/B; its brig-init is the
# one beside it, or the installed one).
# Method and results: docs/performance.md ("Instructions per start").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BRIG_BUILD:-$repo/build}
runs=20
inner=0
old=
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=$(cd "${2:?}" && pwd); shift 2 ;;
        --runs) runs=${2:?}; shift 2 ;;
        --compare) old=$(realpath "${2:?}"); shift 2 ;;
        --in-vm) inner=1; W=${2:?}; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--runs N] [--compare OLD_BRIG]" >&2; exit 2 ;;
    esac
done
# shellcheck source=tests/bench/vm-bench.sh
. "$here/vm-bench.sh"       # as root only; brig=$build/runtime/brig
floor=$build/tests/bench/bench-floor

# per_run NAME CMD...: CMD run $runs times after one untimed run; prints NAME and
# the median of the per-run charged CPU time, in millions of instructions.
per_run() {
    local name=$1; shift
    python3 - "$runs" "$name" "$@" <<'EOF'
import os, resource, statistics, subprocess, sys
n, name, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
def once():
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{name}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3   # ms = M instructions
once()
v = sorted(once() for _ in range(n))
print(f"{name:<14} {statistics.median(v):8.2f} {v[len(v) // 10]:8.2f} {v[len(v) * 9 // 10]:8.2f}")
EOF
}

if [ $inner = 1 ]; then
    R=$W/b/rootfs
    sb=insns-$$
    # the workspace (vm-bench.sh), room for the agent policy's 1 GiB bound
    vm_guest_workspace /run/insns-ws
    sed -i "s|$W/ws|/run/insns-ws|" "$W/minimal/config.json" 2>/dev/null || true
    "$brig" sandbox create --state-root "$W/sbstate" --policy agent --rootfs "$R" --workspace /run/insns-ws "$sb" >/dev/null
    printf '%-14s %8s %8s %8s   (M instructions per start: median, p10, p90; %s runs)\n' runtime median p10 p90 "$runs"
    per_run floor "$floor" "$R" /bin/true
    per_run "brig run" "$brig" --root "$W/st-brig" run --bundle "$W/minimal" insns-brig
    command -v crun >/dev/null && per_run "crun run" crun --root "$W/st-crun" run --bundle "$W/minimal" insns-crun
    command -v runc >/dev/null && per_run "runc run" runc --root "$W/st-runc" run --bundle "$W/minimal" insns-runc
    command -v bwrap >/dev/null && per_run bwrap bwrap --unshare-all --die-with-parent --ro-bind "$R" / --dev /dev \
        --proc /proc --tmpfs /tmp --bind /run/insns-ws /workspace --uid 1000 --gid 1000 --cap-drop ALL /bin/true
    per_run "brig sandbox" "$brig" sandbox run --state-root "$W/sbstate" --policy agent --rootfs "$R" \
        --workspace /run/insns-ws --json -- true
    per_run "brig exec" "$brig" sandbox exec --state-root "$W/sbstate" --json "$sb" -- true
    "$brig" sandbox rm --force --state-root "$W/sbstate" "$sb" >/dev/null 2>&1 || true
    if [ -n "$old" ]; then
        "$old" sandbox create --state-root "$W/sbold" --policy agent --rootfs "$R" --workspace /run/insns-ws "$sb" >/dev/null
        per_run "old run" "$old" --root "$W/st-old" run --bundle "$W/minimal" insns-old
        per_run "old sandbox" "$old" sandbox run --state-root "$W/sbold" --policy agent --rootfs "$R" \
            --workspace /run/insns-ws --json -- true
        per_run "old exec" "$old" sandbox exec --state-root "$W/sbold" --json "$sb" -- true
        "$old" sandbox rm --force --state-root "$W/sbold" "$sb" >/dev/null 2>&1 || true
    fi
    exit 0
fi

command -v jq >/dev/null || { echo "jq is needed" >&2; exit 2; }
vm_host_prepare bench-insns
mkdir -p "$W/minimal" "$W/ws" && chown 1000:1000 "$W/ws"
# bench.sh's minimal config; crun 1.8.1 knows spec versions up to 1.0.x
jq --arg root "$W/b/rootfs" '.ociVersion = "1.0.2" | .root = {path: $root, readonly: true}
    | .linux.cgroupsPath = "/brig-bench-insns/run"' "$W/b/config.json" > "$W/minimal/config.json"
echo "bench-insns: $(date -u +%FT%TZ), HEAD $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?'), brig $brig"
echo "guest: tests/vm (cgroup v2, Debian's 6.1 kernel), 1 vCPU, qemu -icount shift=0,sleep=off"
BRIG_VM_QEMU_ARGS="-icount shift=0,sleep=off" "$repo/tests/vm/run-in-vm.sh" --cpus 1 --disk 3G --timeout 1500 --quiet -- \
    bash "$here/bench-insns.sh" --build "$build" --runs "$runs" ${old:+--compare "$old"} --in-vm "$W"
