#!/usr/bin/env bash
# Rootless podman drives brig (`--runtime brig`) for a fresh unprivileged
# user with the subordinate ids useradd gives it (docs/rootless.md): brig
# runs as uid 0 of podman's user namespace, with no privilege on the host;
# its state goes under the user's $XDG_RUNTIME_DIR; device nodes are bound,
# not made; exec joins the container; nothing is left behind.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/podman.sh"
source "$here/../integration/rootless-lib.sh"

eng_init
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"
command -v newuidmap >/dev/null || skip_all "newuidmap is missing (uidmap: tests/engines/setup-engines.sh)"
RL_FINISH=eng_finish rl_init
[ -n "$RL_SUBUID" ] || { rl_cleanup; skip_all "useradd gave the test user no /etc/subuid range (rootless podman needs one)"; }
image_rootfs

# The recording wrapper, where the user can run it, and a containers.conf
# of ours: contrib's [engine.runtimes] table pointed at it.
cat > "$RL_BIN/brig-rec" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >> "$T/brig-calls.log"
exec "$RL_BRIG" "\$@"
EOF
mkdir -p "$RL_BIN/w" && mv "$RL_BIN/brig-rec" "$RL_BIN/w/brig" && chmod 0755 "$RL_BIN/w" "$RL_BIN/w/brig"
: > "$T/brig-calls.log" && chmod 0666 "$T/brig-calls.log"
BRIGW=$RL_BIN/w/brig
mkdir -p "$T/rlpm"
cat > "$T/rlpm/containers.conf" <<EOF
# written by tests/engines/t-podman-rootless.sh
[containers]
netns = "host"
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "brig"

# ---- contrib/podman/containers.conf ----
EOF
sed -e "s#^\\(\\s*\\)\"/usr/local/sbin/brig\",#\\1\"$BRIGW\",#" "$BRIG_CONTRIB/podman/containers.conf" \
    >> "$T/rlpm/containers.conf"
chmod -R a+rX "$T/rlpm" "$T/image"
# rp ARGS...: podman as the user, its storage in the user's home under $T.
rp() { rl timeout -k 5 "${PM_TIMEOUT:-60}" env CONTAINERS_CONF="$T/rlpm/containers.conf" \
    podman --storage-driver vfs --events-backend file "$@"; }
RL_ON_EXIT='rp rm -af -t 0; rp rmi -af; rm -f "/dev/shm/libpod_rootless_lock_$RL_UID"'
out=$(rp import "$T/image/rootfs.tar" "$PM_IMAGE" 2>&1) || bail "rootless podman import failed: $out"
XB=$RL_XDG/brig

check_eq "podman is rootless and resolves runtime 'brig' to our brig" \
    "$(rp info --format '{{.Host.Security.Rootless}} {{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}' 2>&1)" \
    "true brig $BRIGW"

rp run --rm "$PM_IMAGE" /usr/bin/brig-probe report </dev/null >"$T/run.out" 2>"$T/run.err"
RC=$?
check_eq "run --rm: exit 0" "$RC" 0
check_probe "as uid 0 of a user namespace that is not the host's, in new pid and mount namespaces" run \
    '.uid == 0 and .namespaces.user != $u and .namespaces.pid != $p and .namespaces.mnt != $m' \
    --argjson u "$(stat -L -c %i /proc/self/ns/user)" --argjson p "$(stat -L -c %i /proc/self/ns/pid)" \
    --argjson m "$(stat -L -c %i /proc/self/ns/mnt)"
check_probe "the default devices are there (bound from the host: a user namespace cannot mknod)" run \
    '[.mounts[] | .mount_point] | (index("/dev/null") != null and index("/dev/zero") != null)'

rp run --rm --user 1000:1000 "$PM_IMAGE" /usr/bin/brig-probe report </dev/null >"$T/user.out" 2>"$T/user.err"
check_probe "--user 1000:1000" user '.uid == 1000 and .gid == 1000'

rp run --rm --network none "$PM_IMAGE" /usr/bin/brig-probe report </dev/null >"$T/nonet.out" 2>"$T/nonet.err"
check_probe "--network none: only lo" nonet '[.interfaces[] | .name] == ["lo"]'

rp run -d --name "$(cid det)" "$PM_IMAGE" sh -c 'trap "exit 0" TERM; while :; do sleep 0.2; done' \
    </dev/null >"$T/det.out" 2>"$T/det.err"
ID=$(head -n 1 "$T/det.out")
IDS=("$ID")
PID=$(rp inspect --format '{{.State.Pid}}' "$(cid det)" 2>/dev/null)
seen_pid "$PID"
check_eq "-d: running" "$(rp inspect --format '{{.State.Status}}' "$(cid det)" 2>&1)" running
check_eq "-d: the init runs as the user on the host" "$(awk '/^Uid:/ { print $2 }' "/proc/$PID/status" 2>/dev/null)" \
    "$RL_UID"
check "-d: brig's state is under the user's \$XDG_RUNTIME_DIR/brig" test -f "$XB/$ID/state.json"
check "brig was called without --root, as rootless podman calls runc" \
    bash -c "grep -E '(^| )create ' '$T/brig-calls.log' | grep -qv -- '--root'"
rp exec "$(cid det)" sh -c 'echo exec-out; cat /proc/1/cmdline | tr "\0" " "' >"$T/ex.out" 2>&1
check_match "exec: output, in the container's pid namespace" "$(out ex)" $'^exec-out\nsh -c trap'
rp exec --user 1000:1000 "$(cid det)" id -u >"$T/exu.out" 2>&1
check_eq "exec --user 1000" "$(out exu)" 1000
rp stop -t 10 "$(cid det)" >/dev/null 2>&1
check_eq "stop: SIGTERM trapped by PID 1, exit code 0" \
    "$(rp inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$(cid det)" 2>&1)" "exited 0"
check "rm" rp rm "$(cid det)"
check "rm: brig state dir gone" test ! -e "$XB/$ID"

rp run -d --name "$(cid kill)" "$PM_IMAGE" sleep 300 </dev/null >"$T/kill.out" 2>&1
IDS+=("$(head -n 1 "$T/kill.out")")
seen_pid "$(rp inspect --format '{{.State.Pid}}' "$(cid kill)" 2>/dev/null)"
rp kill "$(cid kill)" >/dev/null 2>&1
wait_for 10 bash -c "[ \"\$(cat /proc/$(rp inspect --format '{{.State.Pid}}' "$(cid kill)" 2>/dev/null || echo 0)/status 2>/dev/null)\" = '' ]"
check_eq "kill: exit code 137" "$(rp inspect --format '{{.State.ExitCode}}' "$(cid kill)" 2>&1)" 137
rp rm -f "$(cid kill)" >/dev/null 2>&1

rp rm -af -t 0 >/dev/null 2>&1
check_eq "no containers left in podman" "$(rp ps -aq 2>&1)" ""
assert_nothing_left "nothing left behind (processes, brig state, mounts)" "$XB" "${IDS[@]}"
check_eq "nothing of the user's in /tmp, /var/tmp, /dev/shm, /dev/mqueue or /run but podman's lock" \
    "$(rl_files_outside | grep -v "^/dev/shm/libpod_rootless_lock_$RL_UID\$")" ""
