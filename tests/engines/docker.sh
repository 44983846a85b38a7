# Docker (Debian's docker.io 20.10) with brig for the engines suite (sourced
# after lib.sh).
#
# A private dockerd: its own --data-root, --exec-root, socket and pidfile
# under $T, the containerd it manages under those, no bridge and no
# iptables rules (--bridge=none --iptables=false: the host's network is not
# touched), vfs storage, cgroupfs under $CG_PARENT. Its daemon.json is
# contrib/docker/daemon.json with brig's path pointed at this build, plus a
# runtime `brig-NAME` per policy given (`--policy FILE` in runtimeArgs) (the same enforcement as
# /etc/brig/policy.json, without changing this host's). The client is
# /usr/bin/docker (Debian's), never a newer one earlier in PATH.
# shellcheck shell=bash disable=SC2034  # RC, PID, ... are read by the test files

DK_IMAGE=brig-engines-test:latest
DOCKER=/usr/bin/docker

# dk_config NAME=POLICY-FILE...: daemon.json with runtimes brig and, for each
# NAME, brig-NAME running brig --policy POLICY-FILE.
dk_config() {
    local snippet=$BRIG_CONTRIB/docker/daemon.json
    [ -r "$snippet" ] || bail "missing $snippet"
    DK=$T/docker
    mkdir -p "$DK"
    local filter='.runtimes.brig.path = $b' arg n=0 args=()
    for arg in "$@"; do
        args+=(--arg "n$n" "brig-${arg%%=*}" --arg "f$n" "${arg#*=}")
        filter+=" | .runtimes[\$n$n] = {path: \$b, runtimeArgs: [\"--policy\", \$f$n]}"
        n=$((n + 1))
    done
    jq --arg b "$BRIGW" "${args[@]}" "$filter" "$snippet" > "$DK/daemon.json" ||
        bail "contrib/docker/daemon.json is not JSON"
    [ "$(jq -r '.runtimes.brig.path' "$DK/daemon.json")" = "$BRIGW" ] ||
        bail "contrib/docker/daemon.json has no runtimes.brig.path to point at the build"
}

# dk_start [NAME=POLICY-FILE]...: start our dockerd, wait for it by the clock.
dk_start() {
    dk_config "$@"
    dockerd --config-file "$DK/daemon.json" --data-root "$DK/data" --exec-root "$DK/exec" \
        --pidfile "$DK/dockerd.pid" -H "unix://$DK/docker.sock" --bridge=none --iptables=false \
        --ip-masq=false --ip-forward=false --userland-proxy=false --storage-driver vfs \
        --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "$CG_PARENT" \
        > "$DK/dockerd.log" 2>&1 &
    DK_PID=$!
    eng_on_exit dk_stop
    local end=$((SECONDS + 60))
    while [ $SECONDS -lt $end ]; do
        d version >/dev/null 2>&1 && return 0
        pid_alive "$DK_PID" || break
        sleep 0.2
    done
    bail "dockerd did not come up in 60 s: $(tail -n 20 "$DK/dockerd.log")"
}

d() { timeout -k 5 "${DK_TIMEOUT:-60}" "$DOCKER" -H "unix://$DK/docker.sock" "$@"; }
d_pty() { in_pty timeout --foreground -k 5 30 "$DOCKER" -H "unix://$DK/docker.sock" "$@"; }

dk_stop() {
    [ -n "${DK_PID:-}" ] || return 0
    d rm -f $(d ps -aq 2>/dev/null) >/dev/null 2>&1
    kill -TERM "$DK_PID" 2>/dev/null
    local end=$((SECONDS + 20))
    while pid_alive "$DK_PID" && [ $SECONDS -lt $end ]; do sleep 0.2; done
    pid_alive "$DK_PID" && kill -9 "$DK_PID" 2>/dev/null
    # The containerd dockerd manages outlives a killed dockerd: by its pidfile.
    local c; c=$(cat "$DK/exec/containerd/containerd.pid" 2>/dev/null)
    [ -n "$c" ] && pid_alive "$c" && kill -9 "$c" 2>/dev/null
    # dockerd makes its data root a private mount of its own and may leave it.
    local m
    for m in $(mounts_under "$DK" | sort -r); do umount -l "$m" 2>/dev/null; done
    DK_PID=
}

# dk_load: the busybox + probe image as a `docker save` archive made here
# (manifest.json, config, one layer), loaded with `docker load`.
dk_load() {
    image_rootfs
    local s=$T/dsave sum cfg
    rm -rf "$s"; mkdir -p "$s/layer"
    cp "$T/image/rootfs.tar" "$s/layer/layer.tar"
    sum=$(sha256sum "$s/layer/layer.tar" | cut -d' ' -f1)
    jq -n --arg d "sha256:$sum" '{
        architecture: "amd64", os: "linux",
        config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], WorkingDir: "/",
                 Cmd: ["/bin/sh", "-c", "trap \"exit 0\" TERM; while :; do sleep 0.2; done"]},
        rootfs: {type: "layers", diff_ids: [$d]}}' > "$s/config.json"
    cfg=$(sha256sum "$s/config.json" | cut -d' ' -f1)
    mv "$s/config.json" "$s/$cfg.json"
    jq -n --arg c "$cfg.json" --arg t "$DK_IMAGE" '[{Config: $c, RepoTags: [$t], Layers: ["layer/layer.tar"]}]' \
        > "$s/manifest.json"
    tar -C "$s" -cf "$T/image/docker-save.tar" . || bail "tar of the docker save archive failed"
    local out
    out=$(d load -i "$T/image/docker-save.tar" 2>&1) || bail "docker load failed: $out"
}

# dk_run NAME [docker run options] -- ARGS...: `docker run --runtime brig`;
# stdout in $T/NAME.out, stderr in $T/NAME.err, exit status in RC.
dk_run() {
    local name=$1; shift
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
    shift
    d run --runtime "${DK_RUNTIME:-brig}" --name "$(cid "$name")" "${opts[@]}" "$DK_IMAGE" "$@" \
        < /dev/null > "$T/$name.out" 2> "$T/$name.err"
    RC=$?
}

# dk_run_d NAME [options] -- ARGS...: detached; ID and PID set.
dk_run_d() {
    dk_run "$1" -d "${@:2}"
    ID=$(head -n 1 "$T/$1.out")
    PID=$(d inspect --format '{{.State.Pid}}' "$(cid "$1")" 2>/dev/null)
    seen_pid "$PID"
}

dk_status() { d inspect --format '{{.State.Status}}' "$(cid "$1")" 2>/dev/null; }
dk_cg_of() { awk -F: -v c="$2" '$2 == c { print $3 }' "/proc/$1/cgroup" 2>/dev/null; }
