#!/usr/bin/env bash
# bench-sandbox.sh: `brig sandbox run -- true` under the agent policy, end to
# end (policy, config, init, pipes, result, cleanup), side by side in one run
# with the same under the agent policy with network egress (the proxy and
# its audit writer started, listening, confined and ended: "egress"),
# `podman run --rm` under the same hardening, `bwrap --unshare-all` and
# the floor program; and `brig sandbox exec NAME -- true` into a long-lived
# sandbox against `podman exec CT true` into a long-lived container with the
# same hardening. Interleaved in rounds (the order rotates). Prints medians
# and ratios; asserts no time. Not a test: never run by meson.
#     sudo tests/bench/bench-sandbox.sh [--build DIR] [--rounds N]
# Method and results: docs/performance.md ("The agent sandbox").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BRIG_BUILD:-$repo/build}
rounds=10
while [ $# -gt 0 ]; do
    case $1 in
        --build) build=${2:?}; shift 2 ;;
        --rounds) rounds=${2:?}; shift 2 ;;
        *) echo "usage: $0 [--build DIR] [--rounds N]" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 77; }
brig=$build/runtime/brig
timer=$build/tests/bench/bench-timer
floor=$build/tests/bench/bench-floor
W=$(mktemp -d /tmp/brig-bench-sandbox.XXXXXX)
sb_name=bench-$$
pm_name=brig-bench-$$
cleanup() {
    "$brig" sandbox rm --force --state-root "$W/state" "$sb_name" >/dev/null 2>&1 || true
    if command -v podman >/dev/null; then podman --runtime runc rm -f -t 0 "$pm_name" >/dev/null 2>&1 || true; fi
    rm -rf "$W"
}
trap cleanup EXIT
chmod 0755 "$W"
"$repo/rootfs-tools/brig-mkbundle" --probe "$build/tests/probe/brig-probe" --brig "$brig" --no-config "$W/b" >/dev/null 2>&1
R=$W/b/rootfs
mkdir -p "$W/ws" "$W/res" && chown 1000:1000 "$W/ws"

# the agent policy, its network egress to one name (docs/egress.md)
jq --arg audit "$W/audit.jsonl" '.name = "agent-egress" | .network = {"mode": "egress", "allow": ["api.example.com:443"]}
    | .audit.path = $audit' "$repo/policy/profiles/agent.json" > "$W/agent-egress.json"
runtimes="floor bwrap sandbox sbdef egress sbexec"
command -v bwrap >/dev/null || runtimes=${runtimes/bwrap /}
# podman: runc (crun 1.8 refuses a hybrid cgroup host), rlimits below the
# host's hard ones (its defaults are above this machine's and fail)
if command -v podman >/dev/null; then runtimes+=" podman pmexec"; fi

# the same hardening for each, as far as each has it (sbdef: brig's default
# runner rootfs instead of R, as users run it): read-only root, the
# workspace bound read-write, uid 1000, no capabilities, no_new_privs, no
# network, a tmpfs /tmp, pids and memory limits (bwrap has no cgroups and
# no seccomp here; the floor program has none of it)
cmd_of() {
    case $1 in
        floor) CMD=("$floor" "$R" /bin/true) ;;
        bwrap) CMD=(bwrap --unshare-all --die-with-parent --ro-bind "$R" / --dev /dev --proc /proc
                    --tmpfs /tmp --bind "$W/ws" /workspace --uid 1000 --gid 1000 --cap-drop ALL /bin/true) ;;
        sandbox) CMD=("$brig" sandbox run --policy agent --state-root "$W/state" --rootfs "$R"
                      --workspace "$W/ws" --json -- true) ;;
        # as the README runs it: the default runner rootfs (built by the
        # warm-up if missing), checked against its manifest each run
        sbdef) CMD=("$brig" sandbox run --policy agent --state-root "$W/state" --workspace "$W/ws" --json -- true) ;;
        egress) CMD=("$brig" sandbox run --policy "$W/agent-egress.json" --state-root "$W/state" --rootfs "$R"
                     --workspace "$W/ws" --json -- true) ;;
        podman) CMD=(podman --runtime runc run --rm "${pm_hard[@]}" --rootfs "$R" /bin/true) ;;
        sbexec) CMD=("$brig" sandbox exec --state-root "$W/state" --json "$sb_name" -- true) ;;
        pmexec) CMD=(podman --runtime runc exec "$pm_name" /bin/true) ;;
    esac
}
pm_hard=(--read-only --cap-drop=ALL --security-opt no-new-privileges --network none
         --pids-limit 256 --memory 512m --ulimit nofile=1024:1024 --ulimit nproc=1024:1024
         --tmpfs /tmp -v "$W/ws:/workspace" --user 1000:1000)

# the long-lived pair, started once outside the timed commands: a sandbox
# under the agent policy (PID 1 brig-init --idle) and a podman container
# (PID 1 a sleep) with the same hardening as `podman run` above
"$brig" sandbox create --policy agent --state-root "$W/state" --rootfs "$R" --workspace "$W/ws" \
    "$sb_name" >/dev/null
if [[ $runtimes == *pmexec* ]]; then
    podman --runtime runc run -d --name "$pm_name" "${pm_hard[@]}" --rootfs "$R" \
        /bin/sleep 100000 >/dev/null
fi

echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $rounds rounds of: $runtimes"
for rt in $runtimes; do     # warm-up, and a failure stops the bench
    cmd_of "$rt"
    read -r ns _ st < <("$timer" -e "$W/res/$rt.err" "${CMD[@]}")
    [ "$st" = 0 ] || { echo "$rt failed (status $st):" >&2; cat "$W/res/$rt.err" >&2; exit 1; }
done
list=($runtimes)
for ((i = 0; i < rounds; i++)); do
    for ((k = 0; k < ${#list[@]}; k++)); do
        rt=${list[$(((i + k) % ${#list[@]}))]}
        cmd_of "$rt"
        sleep 0.05
        read -r ns _ st < <("$timer" -e "$W/res/$rt.err" "${CMD[@]}")
        [ "$st" = 0 ] || { echo "$rt failed in round $i" >&2; exit 1; }
        echo "$ns" >> "$W/res/$rt"
    done
done
median() { sort -n "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# brig's figure of the same kind: the run for the one-shot starts, the exec
# for the execs; the ratio is of the medians
printf '%-8s %10s %10s %10s  %s\n' runtime median_ms min_ms max_ms "brig / runtime"
for rt in $runtimes; do
    case $rt in sbexec | pmexec) sb=$(median "$W/res/sbexec") ;; *) sb=$(median "$W/res/sandbox") ;; esac
    m=$(median "$W/res/$rt")
    mn=$(sort -n "$W/res/$rt" | head -n 1); mx=$(sort -n "$W/res/$rt" | tail -n 1)
    awk -v rt="$rt" -v m="$m" -v mn="$mn" -v mx="$mx" -v sb="$sb" \
        'BEGIN { printf "%-8s %10.1f %10.1f %10.1f  %.3fx\n", rt, m / 1e6, mn / 1e6, mx / 1e6, sb / m }'
done
# what egress adds to a run: the difference of the medians
awk -v e="$(median "$W/res/egress")" -v s="$(median "$W/res/sandbox")" \
    'BEGIN { printf "egress adds %.1f ms to a sandbox run (median %.1f vs %.1f ms)\n", (e - s) / 1e6, e / 1e6, s / 1e6 }'

