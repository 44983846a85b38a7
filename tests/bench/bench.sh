#!/usr/bin/env bash
# bench.sh: container start latency of brig against crun, runc and a floor
# program, interleaved in rounds, in one invocation. It prints figures and
# never asserts a time: it fails only if a runtime cannot run the bundle.
# Method and results: docs/performance.md.
set -euo pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
orig_args=("$@")

usage() {
    cat <<EOF
usage: $prog [options]

Times \`run\` start-to-exit of /bin/true in a busybox bundle for each runtime
and config, interleaved in rounds (the order rotates every round), then
\`exec\` of /bin/true into a running container, then counts syscalls with
\`strace -f -c\`. Run as root.

  --build DIR         meson build dir with runtime/brig, tests/bench/* and
                      tests/probe/brig-probe (default: \$BRIG_BUILD or
                      $repo/build)
  --rounds N          timed rounds (default 30; one untimed warm-up first)
  --quick             3 rounds, exec 3 rounds (figures only indicative)
  --ci                --quick, install nothing (a runtime that is not
                      installed is left out), skip (exit 77) when not root:
                      fails only if a runtime cannot run the bundles
  --runtimes "LIST"   subset/order of: floor brig crun runc (default all)
  --configs "LIST"    subset of: minimal hardened (default both)
  --gap MS            idle time before each timed command (default 50): a
                      cgroup migration leaves the kernel's rcu_sync fast for
                      about one RCU grace period, which would let one
                      runtime's cgroup.procs write speed up the next one's
  --no-exec           skip the exec measurement
  --no-strace         skip the syscall counts
  --host-cgroups      do not hide the hybrid host's cgroup2 mount (crun 1.8.1
                      refuses hybrid hosts: crun is then left out)
  --compare PATH      also time another brig binary as runtime "brig-cmp"
                      (A/B of an optimization, same bundles and rounds)
  --keep              keep the work directory (raw samples in res/)
  -h, --help          this text

Extending: a new runtime (e.g. \`brig sandbox\`) is one case in run_cmd()
(and exec_cmd() if it supports exec) plus its name in --runtimes.
EOF
}

die() { echo "$prog: $*" >&2; exit 1; }

build=${BRIG_BUILD:-$repo/build}
rounds=30
exec_rounds=""
runtimes="floor brig crun runc"
configs="minimal hardened"
do_exec=1
do_strace=1
host_cg=0
keep=0
brig_cmp=""
ci=0
gap_ms=50
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=${2:?--build needs a directory}; shift 2 ;;
        --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
        --quick) rounds=3; exec_rounds=3; shift ;;
        --ci) rounds=3; exec_rounds=3; ci=1; shift ;;
        --runtimes) runtimes=${2:?}; shift 2 ;;
        --configs) configs=${2:?}; shift 2 ;;
        --gap) gap_ms=${2:?--gap needs milliseconds}; shift 2 ;;
        --no-exec) do_exec=0; shift ;;
        --no-strace) do_strace=0; shift ;;
        --host-cgroups) host_cg=1; shift ;;
        --compare) brig_cmp=${2:?--compare needs a brig binary}; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option $1" ;;
    esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive number"
exec_rounds=${exec_rounds:-$rounds}
[[ $gap_ms =~ ^[0-9]+$ ]] || die "--gap needs a number of milliseconds"
gap_s=$(awk -v m="$gap_ms" 'BEGIN { printf "%.3f", m / 1000 }')
if [ "$(id -u)" != 0 ]; then
    [ "$ci" = 1 ] && { echo "SKIP: needs root (containers with new namespaces and cgroups)"; exit 77; }
    die "run as root (containers with new namespaces and cgroups)"
fi
build=$(cd "$build" && pwd) || die "no build dir $build"
brig=$build/runtime/brig
timer=$build/tests/bench/bench-timer
floor=$build/tests/bench/bench-floor
probe=$build/tests/probe/brig-probe
for f in "$brig" "$timer" "$floor" "$probe"; do
    [ -x "$f" ] || die "$f missing: ninja -C $build"
done

# ---- the other runtimes, from Debian ------------------------------------------
want() { [[ " $runtimes " == *" $1 "* ]]; }
need_pkgs=()
want crun && ! command -v crun >/dev/null && need_pkgs+=(crun)
want runc && ! command -v runc >/dev/null && need_pkgs+=(runc)
[ "$do_strace" = 1 ] && ! command -v strace >/dev/null && need_pkgs+=(strace)
command -v jq >/dev/null || need_pkgs+=(jq)
if [ "$ci" = 1 ]; then
    for p in "${need_pkgs[@]}"; do
        case $p in
            crun|runc) echo "$prog: $p not installed: left out (--ci installs nothing)" >&2
                       runtimes=$(echo " $runtimes " | sed "s/ $p / /g") ;;
            strace) echo "$prog: strace not installed: no syscall counts" >&2; do_strace=0 ;;
            jq) die "jq is needed (apt-get install jq)" ;;
        esac
    done
    need_pkgs=()
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "$prog: installing ${need_pkgs[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_pkgs[@]}" >&2 ||
        die "apt-get install ${need_pkgs[*]} failed"
fi

# ---- hybrid cgroups: hide the cgroup2 mount from every runtime ------------------
# crun 1.8.1 refuses a hybrid host. Unmounting /sys/fs/cgroup/unified in a
# private mount namespace makes the host look legacy (v1 only) to all
# runtimes alike; the namespace is made once, outside the timed commands.
# (A tmpfs over it works for crun, but brig and runc read mountinfo, where
# the shadowed cgroup2 mount is still listed.)
hybrid=0
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] &&
   [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
    hybrid=1
fi
if [ "$hybrid" = 1 ] && [ "$host_cg" = 0 ] && [ -z "${BRIG_BENCH_PRIVATE_NS:-}" ]; then
    export BRIG_BENCH_PRIVATE_NS=1
    exec unshare --mount --propagation private -- "$0" "${orig_args[@]}"
fi
cg_env="host"
if [ -n "${BRIG_BENCH_PRIVATE_NS:-}" ]; then
    umount /sys/fs/cgroup/unified || die "cannot unmount /sys/fs/cgroup/unified"
    cg_env="v1 only (cgroup2 mount unmounted in a private mount namespace)"
elif [ "$hybrid" = 1 ] && want crun; then
    echo "$prog: --host-cgroups on a hybrid host: leaving crun out" >&2
    runtimes=$(echo " $runtimes " | sed 's/ crun / /g')
fi
if [ -n "$brig_cmp" ]; then
    [ -x "$brig_cmp" ] || die "--compare $brig_cmp: not executable"
    brig_cmp=$(cd "$(dirname "$brig_cmp")" && pwd)/$(basename "$brig_cmp")
    runtimes="$runtimes brig-cmp"
fi
set -f; runtimes_list=($runtimes); configs_list=($configs); set +f
[ ${#runtimes_list[@]} -gt 0 ] || die "no runtime left to measure"

# ---- work dir, bundles -------------------------------------------------------------
W=$(mktemp -d -t brig-bench.XXXXXX)
# State roots on tmpfs, as the runtimes' defaults (/run/brig, /run/crun,
# /run/runc): on a disk file system every state rename may wait on the journal.
ST=$(mktemp -d -p /run brig-bench-state.XXXXXX)
cgprefix=/brig-bench-$$
exec_ids=()

cleanup() {
    set +e
    for e in "${exec_ids[@]}"; do
        rt=${e%%:*}; id=${e#*:}
        rt_cli "$rt" kill "$id" KILL >/dev/null 2>&1
        sleep 0.05
        rt_cli "$rt" delete -f "$id" >/dev/null 2>&1
    done
    # Only the cgroups this run named (linux.cgroupsPath under $cgprefix).
    for d in /sys/fs/cgroup/*/"${cgprefix#/}" /sys/fs/cgroup/"${cgprefix#/}"; do
        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    rm -rf "$ST"
    if [ "$keep" = 1 ]; then echo "$prog: kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$W/res" "$W/bundles" "$W/workspace"
"$repo/rootfs-tools/brig-mkbundle" --brig "$brig" --probe "$probe" "$W/base" -- /bin/true >/dev/null
rootfs=$W/base/rootfs

# crun 1.8.1 knows spec versions up to 1.0.x ("unknown version specified"):
# every runtime gets the same 1.0.2 config.
jq --arg root "$rootfs" '
    .ociVersion = "1.0.2" | .root = {path: $root, readonly: true}
' "$W/base/config.json" > "$W/minimal.json"
jq --arg root "$rootfs" --arg ws "$W/workspace" --slurpfile sc "$here/seccomp-allowlist.json" '
    .ociVersion = "1.0.2"
    | .root = {path: $root, readonly: true}
    | .process.capabilities = {bounding: [], effective: [], permitted: []}
    | .process.noNewPrivileges = true
    | .mounts += [
        {destination: "/tmp", type: "tmpfs", source: "tmpfs",
         options: ["nosuid", "nodev", "mode=1777", "size=65536k"]},
        {destination: "/workspace", type: "bind", source: $ws,
         options: ["rbind", "rw", "nosuid", "nodev"]}]
    | .linux.seccomp = $sc[0]
    | .linux.resources.memory = {limit: 268435456}
    | .linux.resources.pids = {limit: 128}
' "$W/base/config.json" > "$W/hardened.json"

# One bundle per (config, runtime, purpose), each with its own absolute
# cgroupsPath under $cgprefix (never under the caller's own cgroup).
make_bundle() {   # cfg rt purpose args-json
    local b=$W/bundles/$1-$2-$3
    mkdir -p "$b"
    jq --arg cg "$cgprefix/$1-$2-$3" --argjson args "$4" \
        '.linux.cgroupsPath = $cg | .process.args = $args' "$W/$1.json" > "$b/config.json"
    echo "$b"
}

rt_cli() {   # rt args... : the runtime's CLI with its own state root
    local rt=$1; shift
    case $rt in
        brig) "$brig" --root "$ST/brig" "$@" ;;
        brig-cmp) "$brig_cmp" --root "$ST/brig-cmp" "$@" ;;
        crun|runc) "$rt" --root "$ST/$rt" "$@" ;;
        *) return 1 ;;
    esac
}

# CMD=(...): the command that runs /bin/true in a new container of cfg.
run_cmd() {   # rt cfg id
    case $1 in
        floor) CMD=("$floor" "$rootfs" /bin/true) ;;
        brig) CMD=("$brig" --root "$ST/brig" run --bundle "$W/bundles/$2-brig-run" "$3") ;;
        brig-cmp) CMD=("$brig_cmp" --root "$ST/brig-cmp" run --bundle "$W/bundles/$2-brig-cmp-run" "$3") ;;
        crun|runc) CMD=("$1" --root "$ST/$1" run --bundle "$W/bundles/$2-$1-run" "$3") ;;
        *) die "unknown runtime $1" ;;
    esac
}

# CMD=(...): exec /bin/true into the running container id; false if rt has no exec.
exec_cmd() {   # rt id
    case $1 in
        brig) CMD=("$brig" --root "$ST/brig" exec "$2" /bin/true) ;;
        brig-cmp) CMD=("$brig_cmp" --root "$ST/brig-cmp" exec "$2" /bin/true) ;;
        crun|runc) CMD=("$1" --root "$ST/$1" exec "$2" /bin/true) ;;
        *) return 1 ;;
    esac
}

for cfg in "${configs_list[@]}"; do
    [ -f "$W/$cfg.json" ] || die "unknown config $cfg"
    for rt in "${runtimes_list[@]}"; do
        [ "$rt" = floor ] && continue
        make_bundle "$cfg" "$rt" run '["/bin/true"]' >/dev/null
        make_bundle "$cfg" "$rt" exec '["/bin/sleep", "3600"]' >/dev/null
    done
done

# ---- timing ------------------------------------------------------------------------
timed() {   # label file: runs CMD under bench-timer, appends "ns rss" to file
    local out ns rss code
    [ "$gap_ms" = 0 ] || sleep "$gap_s"
    out=$("$timer" -e "$W/stderr" "${CMD[@]}") || die "$1: bench-timer failed"
    read -r ns rss code <<<"$out"
    if [ "$code" != 0 ]; then
        echo "$prog: $1 failed (exit $code): ${CMD[*]}" >&2
        sed 's/^/    /' "$W/stderr" >&2
        exit 1
    fi
    [ -z "$2" ] || echo "$ns $rss" >> "$2"
}

rotate() {   # round list...: the list rotated by round positions
    local r=$1; shift
    local a=("$@") n=$#
    for ((i = 0; i < n; i++)); do echo "${a[$(((i + r) % n))]}"; done
}

echo "brig bench: $(date -u +%FT%TZ), $(uname -r), $(nproc) CPUs, cgroups: $cg_env" >&2
echo "runtimes: ${runtimes_list[*]}; configs: ${configs_list[*]}; $rounds rounds, ${gap_ms} ms idle before each" >&2
for ((r = 0; r <= rounds; r++)); do
    for cfg in "${configs_list[@]}"; do
        for rt in $(rotate "$r" "${runtimes_list[@]}"); do
            run_cmd "$rt" "$cfg" "b$$-$rt-$cfg-$r"
            # Round 0 warms caches and is not recorded.
            timed "run $rt $cfg" "$([ "$r" = 0 ] || echo "$W/res/run-$cfg-$rt")"
        done
    done
    printf '.' >&2
done
echo >&2

# exec: one long-running container per (runtime, config), execs interleaved.
exec_rts=()
if [ "$do_exec" = 1 ]; then
    for cfg in "${configs_list[@]}"; do
        for rt in "${runtimes_list[@]}"; do
            exec_cmd "$rt" x || continue
            id=x$$-$rt-$cfg
            run_cmd "$rt" "$cfg" "$id"
            # The same command as for run, detached, on the sleeping bundle.
            CMD=("${CMD[@]:0:3}" run -d --bundle "$W/bundles/$cfg-$rt-exec" "$id")
            timed "run -d $rt $cfg" ""
            exec_ids+=("$rt:$id")
            exec_cmd "$rt" "$id"
            # A runtime without a working exec is reported, not a failure.
            if ! "$timer" -e "$W/stderr" "${CMD[@]}" | awk '{exit $3 != 0}'; then
                echo "$prog: $rt exec not available: $(head -c 300 "$W/stderr")" >&2
                continue
            fi
            [[ " ${exec_rts[*]} " == *" $rt "* ]] || exec_rts+=("$rt")
        done
    done
    for ((r = 1; r <= exec_rounds; r++)); do
        for cfg in "${configs_list[@]}"; do
            for rt in $(rotate "$r" "${exec_rts[@]}"); do
                exec_cmd "$rt" "x$$-$rt-$cfg"
                timed "exec $rt $cfg" "$W/res/exec-$cfg-$rt"
            done
        done
    done
fi

# ---- syscalls ----------------------------------------------------------------------
count_syscalls() {   # out-file: strace -f -c of CMD, prints the total number of calls
    strace -f -c -o "$1" "${CMD[@]}" </dev/null >/dev/null 2>"$W/stderr" ||
        { cat "$W/stderr" >&2; die "strace ${CMD[*]} failed"; }
    awk '$NF == "total" { print $4 }' "$1"
}
if [ "$do_strace" = 1 ]; then
    for cfg in "${configs_list[@]}"; do
        for rt in "${runtimes_list[@]}"; do
            run_cmd "$rt" "$cfg" "s$$-$rt-$cfg"
            count_syscalls "$W/res/strace-run-$cfg-$rt" > "$W/res/sys-run-$cfg-$rt"
        done
        for rt in "${exec_rts[@]}"; do
            exec_cmd "$rt" "x$$-$rt-$cfg"
            count_syscalls "$W/res/strace-exec-$cfg-$rt" > "$W/res/sys-exec-$cfg-$rt"
        done
    done
fi

# ---- report ------------------------------------------------------------------------
# stats FILE: "median p10 p90 max-rss" of the ns column (nearest rank).
stats() {
    sort -n -k1,1 "$1" | awk '
        { t[NR] = $1; if ($2 > rss) rss = $2 }
        function rank(q,   i) { i = int(q * NR + 0.999999); if (i < 1) i = 1; return t[i] }
        END {
            med = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
            printf "%.0f %.0f %.0f %d\n", med, rank(0.10), rank(0.90), rss
        }'
}
# ratio FILE BASE: median over rounds of FILE[i] / BASE[i].
ratio() {
    paste -d' ' "$1" "$2" | awk '{ print $1 / $3 }' | sort -g | awk '
        { v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ms() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e6 }'; }

table() {   # kind cfg runtimes...
    local kind=$1 cfg=$2; shift 2
    local base=$W/res/$kind-$cfg-crun
    local sys_base=$W/res/sys-$kind-$cfg-crun
    printf '%-9s %9s %9s %9s %8s %10s %9s %8s\n' runtime "median ms" "p10 ms" "p90 ms" "x crun" \
        "peak RSS" syscalls "x crun"
    for rt in "$@"; do
        local f=$W/res/$kind-$cfg-$rt
        [ -s "$f" ] || continue
        local med p10 p90 rss x="-" sys="-" sysx="-"
        read -r med p10 p90 rss < <(stats "$f")
        [ -s "$base" ] && x=$(ratio "$f" "$base")
        [ -s "$W/res/sys-$kind-$cfg-$rt" ] && sys=$(cat "$W/res/sys-$kind-$cfg-$rt")
        [ "$sys" != "-" ] && [ -s "$sys_base" ] &&
            sysx=$(awk -v a="$sys" -v b="$(cat "$sys_base")" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
        printf '%-9s %9s %9s %9s %8s %7s KB %9s %8s\n' "$rt" "$(ms "$med")" "$(ms "$p10")" "$(ms "$p90")" \
            "$x" "$rss" "$sys" "$sysx"
    done
}

echo
echo "brig bench, $(date -u +%FT%TZ): $(uname -r), $(nproc) CPUs, cgroups: $cg_env"
echo "brig: $brig: $("$brig" --version 2>/dev/null | head -1)"
[ -z "$brig_cmp" ] || echo "brig-cmp: $brig_cmp: $("$brig_cmp" --version 2>/dev/null | head -1)"
want crun && echo "$(crun --version | head -1)"
want runc && echo "$(runc --version | head -1)"
for cfg in "${configs_list[@]}"; do
    echo
    echo "== run /bin/true, $cfg config, $rounds rounds, ${gap_ms} ms apart (x crun: median of per-round ratios; syscalls x crun: of the counts)"
    table run "$cfg" "${runtimes_list[@]}"
done
if [ "$do_exec" = 1 ]; then
    for cfg in "${configs_list[@]}"; do
        echo
        echo "== exec /bin/true into a running container, $cfg config, $exec_rounds rounds"
        if [ ${#exec_rts[@]} -eq 0 ]; then echo "(no runtime with a working exec)"; continue; fi
        table exec "$cfg" "${exec_rts[@]}"
    done
fi
