#!/bin/bash
# Run one command inside a fresh cgroup v2 VM and pass its result through:
#   run-in-vm.sh [--timeout SECONDS] [--mem SIZE] [--cpus N] [--env NAME=VALUE]... \
#                [--disk SIZE] [--quiet] [--keep] [--verbose] -- CMD ARGS...
# The VM sees the host's / read-only under a throwaway tmpfs overlay, so CMD runs in the
# same working directory with the same binaries and our BRIG_* variables; its stdout and
# stderr are copied to ours after the VM stops, and we exit with its status.
#
# Exit status: CMD's; 124 on timeout; 125 when the harness itself failed (no status came
# back). The kernel console log is printed on timeout, on harness failure, and (unless
# --quiet) when CMD fails. See docs/testing-vm.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
timeout=300
mem=2G
cpus=2
disk=64M
quiet=0
loglevel=4
keep=${BRIG_VM_KEEP:-0}
envs=()

usage() {
    sed -n '2,4s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 125
}
die() { printf 'run-in-vm: %s\n' "$*" >&2; exit 125; }

while [[ $# -gt 0 ]]; do
    case $1 in
        --timeout) [[ ${2:-} =~ ^[0-9]+$ && $2 -gt 0 ]] || die "--timeout wants seconds > 0"
                   timeout=$2; shift 2 ;;
        --mem) [[ ${2:-} =~ ^[0-9]+[MG]?$ ]] || die "--mem wants a size like 2G or 512M"
               mem=$2; shift 2 ;;
        --cpus) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--cpus wants a count >= 1"
                cpus=$2; shift 2 ;;
        --disk) [[ ${2:-} =~ ^[0-9]+[MG]$ ]] || die "--disk wants a size like 64M"
                disk=$2; shift 2 ;;
        --env) [[ ${2:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants NAME=VALUE"
               envs+=("$2"); shift 2 ;;
        --quiet) quiet=1; shift ;;
        --keep) keep=1; shift ;;
        --verbose) loglevel=7; shift ;;
        --) shift; break ;;
        -h|--help) usage ;;
        *) die "unknown option $1 (the command goes after --)" ;;
    esac
done
[[ $# -gt 0 ]] || usage
[[ $EUID == 0 ]] || die "must run as root (9p passthrough of the host /)"

# The VM mounts fresh tmpfs/proc/sys/dev over these, so a command started there would not
# find its directory. (/tmp is the host's, through the overlay.)
case $PWD/ in
    /run/*|/proc/*|/sys/*|/dev/*)
        die "the working directory $PWD is hidden in the VM (fresh /run /proc /sys /dev); run from elsewhere" ;;
esac

settings=$(bash "$here/setup-vm.sh") || die "setup-vm.sh failed"
eval "$settings"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/brig-vm.XXXXXX")
results=$tmp/results
mkdir -m 0755 "$results"
console=$tmp/console.log
# A sparse scratch disk, /dev/vda in the VM: a block device for io.max and mkfs tests.
truncate -s "$disk" "$tmp/scratch.img"
qpid=

# Only the qemu this script started is ever killed, by its PID.
cleanup() {
    if [[ -n $qpid ]] && kill -0 "$qpid" 2>/dev/null; then
        kill -KILL "$qpid" 2>/dev/null || true
        wait "$qpid" 2>/dev/null || true
    fi
    if [[ $keep == 1 ]]; then
        printf 'run-in-vm: kept %s\n' "$tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# The job runs under bash in the VM; %q quoting survives any argument bytes.
{
    printf 'cd -- %q || exit 125\n' "$PWD"
    # BRIG_* from our environment (e.g. set by meson's test(env:)) reach the command too;
    # BRIG_VM_* configure this harness and stay outside.
    while IFS= read -r name; do
        [[ $name == BRIG_* && $name != BRIG_VM_* ]] || continue
        printf 'export %s=%q\n' "$name" "${!name}"
    done < <(compgen -e)
    for e in "${envs[@]}"; do
        printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
    done
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$results/job.sh"

print_console() {
    printf -- '--- run-in-vm: VM console (%s) ---\n' "$1" >&2
    cat "$console" >&2 2>/dev/null || true
    if [[ -s $tmp/qemu.log ]]; then
        printf -- '--- run-in-vm: qemu output ---\n' >&2
        cat "$tmp/qemu.log" >&2
    fi
    printf -- '--- run-in-vm: end of console ---\n' >&2
}

# TCG: KVM hangs on these hosts (BRIG_VM_ACCEL=kvm where it works). -no-reboot + panic=-1 turn a kernel panic (e.g. init
# died) into a qemu exit instead of a hang. multidevs=remap keeps inode numbers unique
# across the host's mounts, which the overlay relies on. setpriv --pdeathsig: should this
# script be SIGKILLed, qemu dies with it instead of running a hung guest forever.
# no_timer_check: on a busy host the TCG vCPU may miss the timer interrupts the kernel
# counts at boot, and it panics ("IO-APIC + timer doesn't work"); seen with the VM tests
# beside engines-deployments on two cores.
# BRIG_VM_QEMU_ARGS: more qemu arguments, split on spaces; "-icount shift=0,sleep=off"
# makes the guest's clock count executed instructions, one per nanosecond, whatever the
# host's load (tests/bench: instructions per run).
# shellcheck disable=SC2086
setpriv --pdeathsig KILL -- qemu-system-x86_64 \
    -accel "${BRIG_VM_ACCEL:-tcg}" ${BRIG_VM_QEMU_ARGS:-} -cpu max -smp "$cpus" -m "$mem" \
    -nodefaults -no-user-config -display none -monitor none -no-reboot \
    -serial "file:$console" \
    -kernel "$BRIG_VM_KERNEL" -initrd "$BRIG_VM_INITRD" \
    -append "console=ttyS0 loglevel=$loglevel panic=-1 rw no_timer_check" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
    -drive "file=$tmp/scratch.img,format=raw,if=virtio,cache=unsafe" \
    -virtfs "local,path=$results,mount_tag=results,security_model=passthrough,multidevs=remap" \
    </dev/null >"$tmp/qemu.log" 2>&1 &
qpid=$!
start=$SECONDS

# kill -0 succeeds on a zombie, so look at the process state instead.
qemu_running() {
    local stat
    stat=$(cat "/proc/$qpid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z ]]
}

timed_out=0
while qemu_running; do
    if (( SECONDS - start >= timeout )); then
        timed_out=1
        kill -TERM "$qpid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do qemu_running || break; sleep 0.5; done
        kill -KILL "$qpid" 2>/dev/null || true
        break
    fi
    sleep 0.2
done
qrc=0
wait "$qpid" || qrc=$?
qpid=

[[ -e $results/stdout ]] && cat "$results/stdout"
[[ -e $results/stderr ]] && cat "$results/stderr" >&2

if [[ $timed_out == 1 ]]; then
    print_console "timed out after ${timeout}s"
    exit 124
fi
if [[ ! -s $results/status ]]; then
    print_console "no exit status came back; qemu exited with $qrc"
    exit 125
fi
rc=$(<"$results/status")
[[ $rc =~ ^[0-9]+$ ]] || { print_console "bad status '$rc'"; exit 125; }
if [[ $rc != 0 && $quiet == 0 ]]; then
    print_console "command exited with $rc"
fi
exit "$rc"
