# podman with brig for the engines suite (sourced after lib.sh).
#
# Everything podman keeps goes under $T: --root, --runroot, --tmpdir, vfs
# storage, file events. Its containers.conf (CONTAINERS_CONF) lowers the
# default rlimits (this host's hard nofile is 20000 and root lacks
# CAP_SYS_RESOURCE, so podman's default nofile=1048576 cannot be set), uses
# the host network by default (no netavark/CNI needed; --network none is
# tested explicitly), and ends with the [engine.runtimes] table of
# contrib/podman/containers.conf, its path pointed at this test's brig.
# podman runs brig without --root: brig's state is in its default /run/brig.
# shellcheck shell=bash disable=SC2034  # RC, PID, ... are read by the test files

PM_IMAGE=localhost/brig-engines-test:latest
BRIG_DEFAULT_ROOT=/run/brig
PM_IDS=()

pm_config() {
    local snippet=$BRIG_CONTRIB/podman/containers.conf
    [ -r "$snippet" ] || bail "missing $snippet"
    PM=$T/podman
    mkdir -p "$PM"
    cat > "$PM/containers.conf" <<EOF
# written by tests/engines/podman.sh
[containers]
default_ulimits = ["nofile=4096:8192", "nproc=4096:4096"]
netns = "host"
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "brig"

# ---- contrib/podman/containers.conf ----
EOF
    sed -e "s#^\\(\\s*\\)\"/usr/local/sbin/brig\",#\\1\"$BRIGW\",#" "$snippet" >> "$PM/containers.conf"
    grep -q "\"$BRIGW\"," "$PM/containers.conf" ||
        bail "contrib/podman/containers.conf has no \"/usr/local/sbin/brig\" entry to point at the build"
    export CONTAINERS_CONF=$PM/containers.conf
    P=(podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp"
       --storage-driver vfs --cgroup-manager cgroupfs --events-backend file
       --runtime brig)
}

# p ARGS...: our podman.
p() { timeout -k 5 "${PM_TIMEOUT:-60}" "${P[@]}" "$@"; }
# p_pty ARGS...: the same with a pty as stdin/stdout (for -t).
# --foreground keeps it in the pty's foreground process group: in a group of
# its own (timeout's default) setting raw mode stops it with SIGTTOU, unless
# script's $SHELL happens to be bash (found on a fresh root without SHELL).
p_pty() { in_pty timeout --foreground -k 5 "${PM_PTY_TIMEOUT:-30}" "${P[@]}" "$@"; }

pm_import() {
    image_rootfs
    local out
    out=$(p import "$T/image/rootfs.tar" "$PM_IMAGE" 2>&1) || bail "podman import failed: $out"
}

pm_cleanup() {
    [ -n "${P+x}" ] || return 0
    p rm -af -t 0 >/dev/null 2>&1
    p rmi -af >/dev/null 2>&1
    # podman has no daemon; conmon exits with its container.
}

# pm_run NAME [podman run options] -- ARGS...: `podman run --rm` in our cgroup
# parent; stdout in $T/NAME.out, stderr in $T/NAME.err, exit status in RC.
pm_run() {
    local name=$1; shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    p run --cgroup-parent "$CG_PARENT" --name "$(cid "$name")" "${opts[@]}" "$PM_IMAGE" "$@" \
        < /dev/null > "$T/$name.out" 2> "$T/$name.err"
    RC=$?
}

# pm_run_d NAME [options] -- ARGS...: detached; ID (full) and PID set.
pm_run_d() {
    pm_run "$1" -d "${@:2}"
    ID=$(head -n 1 "$T/$1.out")
    PM_IDS+=("$ID")
    PID=$(p inspect --format '{{.State.Pid}}' "$(cid "$1")" 2>/dev/null)
    seen_pid "$PID"
}

pm_status() { p inspect --format '{{.State.Status}}' "$(cid "$1")" 2>/dev/null; }

# cg_of PID CONTROLLER: the v1 cgroup path of PID for CONTROLLER.
cg_of() { awk -F: -v c="$2" '$2 == c { print $3 }' "/proc/$1/cgroup" 2>/dev/null; }
