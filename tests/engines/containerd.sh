# A private containerd for the engines suite (sourced after lib.sh).
#
# Its config.toml is a small header (root, state, sockets under $T) followed
# by contrib/containerd/brig.toml, the snippet users install, with only its
# paths (BinaryName, Root) pointed at this test's brig and temp dir. Note:
# containerd 1.6's runc shim v2 keeps its sockets under /run/containerd/s
# whatever `state` says; ctrd_stop checks that ours are gone.
# shellcheck shell=bash disable=SC2034  # RC, PID, ... are read by the test files

CTRD_PID=""
CTR_IMAGE=docker.io/brig/engines-test:latest

ctrd_config() {
    local snippet=$BRIG_CONTRIB/containerd/brig.toml
    [ -r "$snippet" ] || bail "missing $snippet"
    CTRD=$T/containerd
    mkdir -p "$CTRD"
    cat > "$CTRD/config.toml" <<EOF
# written by tests/engines/containerd.sh
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
[grpc]
  address = "$CTRD/containerd.sock"
[ttrpc]
  address = "$CTRD/containerd.sock.ttrpc"
[debug]
  level = "info"
# The CRI plugin must load (it carries the brig handler) without taking a
# port or the host's CNI setup.
[plugins."io.containerd.grpc.v1.cri"]
  stream_server_port = "0"
  sandbox_image = "$CTR_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: a pod sandbox's oomScoreAdj (-998)
  # could not be set; clamp it to containerd's own, as for rootless setups.
  restrict_oom_score_adj = true
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "brig"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$CTRD/cni/bin"
  conf_dir = "$CTRD/cni/net.d"

# ---- contrib/containerd/brig.toml ----
EOF
    # Only the two host paths change; the rest is the file as shipped.
    sed -e "s#^\\(\\s*BinaryName = \\)\"/usr/local/sbin/brig\"#\\1\"$BRIGW\"#" \
        -e "s#^\\(\\s*Root = \\)\"/run/containerd/brig\"#\\1\"$T/brig-cri-root\"#" \
        "$snippet" >> "$CTRD/config.toml"
    grep -q "BinaryName = \"$BRIGW\"" "$CTRD/config.toml" ||
        bail "contrib/containerd/brig.toml has no 'BinaryName = \"/usr/local/sbin/brig\"' line to point at the build"
    CTRD_SOCK=$CTRD/containerd.sock
}

# ctrd_start: start containerd with that config; killed by PID at exit.
ctrd_start() {
    ctrd_config
    SHIM_SOCKS_BEFORE=$(ls /run/containerd/s 2>/dev/null | sort)
    containerd --config "$CTRD/config.toml" > "$CTRD/containerd.log" 2>&1 &
    CTRD_PID=$!
    eng_on_exit ctrd_stop
    # By the clock, and no longer than containerd lives.
    local end=$((SECONDS + 30))
    until wait_for 2 ctr -a "$CTRD_SOCK" version; do
        if ! kill -0 "$CTRD_PID" 2>/dev/null || [ $SECONDS -ge $end ]; then
            diag "containerd's log ($CTRD/containerd.log):"
            diag "$(tail -n 60 "$CTRD/containerd.log")"
            kill -0 "$CTRD_PID" 2>/dev/null && bail "containerd did not come up within 30 s"
            bail "containerd exited before it came up"
        fi
    done
    diag "containerd pid $CTRD_PID, socket $CTRD_SOCK"
}

# c ARGS...: ctr against our containerd, in our namespace.
c() { timeout -k 5 "${CTR_TIMEOUT:-60}" ctr -a "$CTRD_SOCK" -n "$TAG" "$@"; }
# c_pty ARGS...: the same with a pty as stdin/stdout (`ctr -t` insists on a
# console); output on stdout.
# --foreground keeps it in the pty's foreground process group: in a group of
# its own (timeout's default) setting raw mode stops it with SIGTTOU, unless
# script's $SHELL happens to be bash (found on a fresh root without SHELL).
c_pty() { in_pty timeout --foreground -k 5 "${CTR_PTY_TIMEOUT:-20}" ctr -a "$CTRD_SOCK" -n "$TAG" "$@"; }

# Shim processes of our containerd (their argv names our socket).
ctrd_shim_pids() {
    local p
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/exe" 2>/dev/null) == */containerd-shim* ]] || continue
        tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "-address $CTRD_SOCK " && echo "${p#/proc/}"
    done
}

# Stale shim sockets under /run/containerd/s: appeared since ctrd_start and
# nobody listens on them (a running system containerd's shims do, and are
# left alone).
ctrd_new_shim_sockets() {
    local listening n
    listening=$(ss -Hxl 2>/dev/null | awk '{ print $5 }')
    for n in $(comm -13 <(printf '%s\n' "$SHIM_SOCKS_BEFORE") <(ls /run/containerd/s 2>/dev/null | sort)); do
        grep -qxF "/run/containerd/s/$n" <<<"$listening" || echo "$n"
    done
}

# Remove every task and container left in our namespace.
ctrd_remove_all() {
    local id
    for id in $(c task ls -q 2>/dev/null); do
        c task kill -s KILL "$id"; sleep 0.2
        c task delete -f "$id"
    done
    for id in $(c container ls -q 2>/dev/null); do c container delete "$id"; done
}

ctrd_stop() {
    [ -n "$CTRD_PID" ] || return 0
    ctrd_remove_all >/dev/null 2>&1
    local shims; shims=$(ctrd_shim_pids)
    kill -TERM "$CTRD_PID" 2>/dev/null
    wait_for 10 bash -c "! kill -0 $CTRD_PID" || kill -KILL "$CTRD_PID" 2>/dev/null
    wait "$CTRD_PID" 2>/dev/null
    local p; for p in $shims; do kill -KILL "$p" 2>/dev/null; done
    CTRD_PID=""
    # Sockets a killed shim could not remove.
    for p in $(ctrd_new_shim_sockets); do rm -f "/run/containerd/s/$p"; done
}

# ctr_import: the image from lib.sh's image_oci_archive into our namespace.
ctr_import() {
    image_rootfs
    image_oci_archive "$CTR_IMAGE"
    local out
    out=$(c images import "$T/image/oci.tar" 2>&1) || bail "ctr images import failed: $out"
    c images ls -q | grep -qxF "$CTR_IMAGE" || bail "imported image $CTR_IMAGE not listed: $out"
}

BROOT=""   # brig --root the shim uses for ctr-run containers: $BROOT/$TAG/ID

# ctr_run NAME [ctr run options] -- ARGS...: `ctr run --rm` with brig as the
# runc binary and the cgroup under $CG_PARENT; stdout in $T/NAME.out, stderr in
# $T/NAME.err, exit status in RC. stdin is /dev/null unless STDIN_FILE is set.
ctr_run() {
    local name=$1; shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    c run --runtime io.containerd.runc.v2 --runc-binary "$BRIGW" --runc-root "$BROOT" --cgroup "$CG_PARENT/$(cid "$name")" \
        "${opts[@]}" "$CTR_IMAGE" "$(cid "$name")" "$@" \
        < "${STDIN_FILE:-/dev/null}" > "$T/$name.out" 2> "$T/$name.err"
    RC=$?
}

# ctr_run_d NAME [options] -- ARGS...: detached; PID is the task's host pid.
ctr_run_d() {
    ctr_run "$1" -d "${@:2}"
    PID=$(c task ls 2>/dev/null | awk -v id="$(cid "$1")" '$1 == id { print $2 }')
    seen_pid "$PID"
}

# cgroup_pids NAME: the processes in the container's cgroup, as the host
# sees them (independent of `brig ps`).
cgroup_pids() {
    local f
    for f in /sys/fs/cgroup/memory "/sys/fs/cgroup/unified"; do
        f=$f$CG_PARENT/$(cid "$1")/cgroup.procs
        [ -r "$f" ] && { tr '\n' ' ' < "$f"; return 0; }
    done
}

# task_status NAME: RUNNING, PAUSED, STOPPED ... as `ctr task ls` shows it.
task_status() { c task ls 2>/dev/null | awk -v id="$(cid "$1")" '$1 == id { print $3 }'; }
