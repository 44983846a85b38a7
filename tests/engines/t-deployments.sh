#!/usr/bin/env bash
# The three agent deployments brig is built for (docs/recipes/),
# each the Docker way on brig and the native way (`brig sandbox`), running
# its real workload shape and checked from inside with brig-probe:
#   1. a long-lived agent container (pygent): N commands with per-command
#      timeouts through `docker exec` and `brig sandbox exec`; a runaway is
#      killed without killing the container; 512 MB and 256 pids; no network
#   2. a per-command runner (agent): N short commands, each in a fresh
#      container (`docker run --rm`, `brig sandbox run`); bounded previews,
#      wall and idle timeouts, no secret env, no residue
#   3. the coding-agent sandbox (pi) natively; its compose form runs in
#      t-docker.sh (docker-compose, runtime: brig-pi).
# N is BRIG_DEPLOY_N (default 100).
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/docker.sh"

eng_init
[ -x /usr/sbin/dockerd ] && [ -x "$DOCKER" ] || skip_all "docker.io is not installed (tests/engines/setup-engines.sh installs it)"
[ -d /sys/fs/cgroup/memory ] || skip_all "the checks read cgroup v1 files; no v1 memory controller here"
N=${BRIG_DEPLOY_N:-100}
SRC=$(cd "$here/../.." && pwd)
SECCOMP=$SRC/policy/seccomp-default.json
for pol in pygent agent pi; do
    "$BRIG" policy show "$pol" | jq --arg a "$T/audit.jsonl" '.audit.path = $a' > "$T/$pol.json"
done
dk_start "pygent=$T/pygent.json" "agent=$T/agent.json"
dk_load
ROOTFS=$T/image/rootfs
SB_STATE=$T/sbstate
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
sbx() { timeout -k 5 120 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }

# ==== 1. long-lived agent container (pygent) ===================================
LONG=(--user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --security-opt "seccomp=$SECCOMP"
      --network none --memory 512m --memory-swap 512m --pids-limit 256 --cpus 1
      --tmpfs /tmp:size=128m --tmpfs /var/tmp:size=128m -v "$T/ws:/workspace" -w /workspace
      --ulimit nofile=4096:4096 --ulimit core=0)
DK_RUNTIME=brig-pygent dk_run_d agent "${LONG[@]}" -- sh -c 'trap "exit 0" TERM; while :; do sleep 0.2; done'
check_eq "docker: the long-lived container runs under the pygent policy" "$(dk_status agent)" running
[ "$(dk_status agent)" = running ] || diag "$(cat "$T/agent.err")"
bad=0
for i in $(seq "$N"); do
    got=$(d exec "$(cid agent)" timeout 10 sh -c "echo cmd-$i; echo $i > /workspace/last" 2>&1)
    [ "$got" = "cmd-$i" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && diag "exec $i: $got"; }
done
check_eq "docker exec: $N commands, each with its own output" "$bad" 0
d exec "$(cid agent)" timeout 1 sh -c 'while :; do :; done'
rc=$?
# GNU timeout exits 124; the image's busybox timeout reports the SIGTERM (143)
check "docker exec: a runaway stopped by timeout(1) (exit $rc)" test "$rc" = 124 -o "$rc" = 143
check_eq "docker: the container survives its runaway command" "$(dk_status agent)" running
check_eq "docker: memory 512 MB enforced (memory.limit_in_bytes)" \
    "$(cat "/sys/fs/cgroup/memory$(dk_cg_of "$PID" memory)/memory.limit_in_bytes" 2>&1)" 536870912
check_eq "docker: 256 pids enforced (pids.max)" "$(cat "/sys/fs/cgroup/pids$(dk_cg_of "$PID" pids)/pids.max" 2>&1)" 256
d exec "$(cid agent)" /usr/bin/brig-probe report > "$T/agentprobe.out" 2>&1
check_probe "docker: no network (only lo), uid 1000, no capabilities" agentprobe \
    '[.interfaces[] | .name] == ["lo"] and .uid == 1000 and .caps.CapEff == "0000000000000000"'
d rm -f "$(cid agent)" > /dev/null 2>&1

sbx create agent1 --policy pygent --rootfs "$ROOTFS" --workspace "$T/ws" > "$T/create.out" 2>&1
check "native: brig sandbox create under pygent" test $? -eq 0 || diag "$(cat "$T/create.out")"
bad=0
for i in $(seq "$N"); do
    got=$(sbx exec agent1 --timeout 10s --json -- sh -c "echo cmd-$i" 2>/dev/null | jq -r '"\(.exit_code) \(.stdout.preview_head)"')
    [ "$got" = "0 cmd-$i" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && diag "exec $i: $got"; }
done
check_eq "native: $N brig sandbox execs, each with its own result" "$bad" 0
sbx exec agent1 --timeout 1s --json -- sh -c 'sleep 1000 & while :; do :; done' > "$T/runaway.json" 2>/dev/null
check_eq "native: a runaway exec is killed at its timeout (124, timed_out)" \
    "$?:$(jq -r .timed_out "$T/runaway.json")" "124:true"
check_eq "native: the sandbox survives its runaway command" \
    "$(sbx exec agent1 --json -- echo alive 2>/dev/null | jq -r .stdout.preview_head)" "alive"
sbx exec agent1 --json -- /usr/bin/brig-probe report > "$T/nativeprobe.json" 2>/dev/null
jq -r .stdout.preview_head "$T/nativeprobe.json" > "$T/nativeprobe.out"
check_probe "native: no network (only lo), uid 1000, no capabilities, pids 256" nativeprobe \
    '[.interfaces[] | .name] == ["lo"] and .uid == 1000 and .caps.CapEff == "0000000000000000"'
IPID=$(sbx ls --json 2>/dev/null | jq -r '.[] | select(.name == "agent1") | .pid')
check_eq "native: memory 512 MB and 256 pids on the sandbox's cgroup" \
    "$(cat "/sys/fs/cgroup/memory$(dk_cg_of "$IPID" memory)/memory.limit_in_bytes" 2>&1) $(cat "/sys/fs/cgroup/pids$(dk_cg_of "$IPID" pids)/pids.max" 2>&1)" \
    "536870912 256"
sbx rm --force agent1 > /dev/null 2>&1
check "native: rm leaves no sandbox" bash -c "[ \"\$(timeout 30 '$BRIG' sandbox ls --state-root '$SB_STATE' --json)\" = '[]' ]"

# ==== 2. per-command runner (agent) ============================================
RUN=(--rm --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --security-opt "seccomp=$SECCOMP"
     --read-only --tmpfs /tmp:size=64m --tmpfs /var/tmp:size=64m -v "$T/ws:/workspace" --network none
     --memory 512m --memory-swap 512m --pids-limit 128 --cpus 1 --ulimit nofile=1024:1024 --ulimit core=0)
bad=0
for i in $(seq "$N"); do
    got=$(d run --runtime brig-agent "${RUN[@]}" "$DK_IMAGE" sh -c "echo run-$i" 2>&1)
    [ "$got" = "run-$i" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && diag "run $i: $got"; }
done
check_eq "docker: $N fresh containers under the agent policy, each with its own output" "$bad" 0
check "docker: no container left" test -z "$(d ps -aq)"

bad=0
for i in $(seq "$N"); do
    got=$(sbx run --policy agent --rootfs "$ROOTFS" --workspace "$T/ws" --json -- sh -c "echo run-$i" 2>/dev/null |
          jq -r '"\(.exit_status) \(.stdout.preview_head)"')
    [ "$got" = "0 run-$i" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && diag "run $i: $got"; }
done
check_eq "native: $N brig sandbox runs, each with its own result" "$bad" 0
sbx run --policy agent --rootfs "$ROOTFS" --workspace "$T/ws" --timeout 1s --json -- sleep 100 > "$T/wall.json" 2>/dev/null
check_eq "native: wall timeout (124, timed_out)" "$?:$(jq -r .timed_out "$T/wall.json")" "124:true"
sbx run --policy agent --rootfs "$ROOTFS" --workspace "$T/ws" --idle-timeout 1s --json -- sh -c 'echo once; sleep 100' \
    > "$T/idle.json" 2>/dev/null
check_eq "native: idle timeout (124, idle_timed_out)" "$?:$(jq -r .idle_timed_out "$T/idle.json")" "124:true"
sbx run --policy agent --rootfs "$ROOTFS" --workspace "$T/ws" --output-limit 1KiB --json -- sh -c 'yes | head -c 1000000' \
    > "$T/big.json" 2>/dev/null
check_eq "native: output preview bounded, exact byte count" \
    "$(jq -r '"\(.stdout.truncated) \(.stdout.bytes) \((.stdout.preview_head + .stdout.preview_tail) | length <= 1024)"' "$T/big.json")" \
    "true 1000000 true"
sbx run --policy agent --rootfs "$ROOTFS" --workspace "$T/ws" --env GITHUB_TOKEN=brig-deploy-secret --json -- true \
    > "$T/secret.json" 2>/dev/null
check "native: a secret in the environment is refused (125), its value never shown" \
    bash -c "[ \$? -eq 0 ] && jq -e '.exit_status == 125 and (.error | test(\"GITHUB_TOKEN\"))' '$T/secret.json' >/dev/null && ! grep -rq brig-deploy-secret '$T/secret.json' '$T/audit.jsonl'"

# ==== 3. the coding-agent sandbox (pi), natively ================================
sbx run --policy pi --rootfs "$ROOTFS" --workspace "$T/ws" --json -- /usr/bin/brig-probe report > "$T/pi.json.out" 2>/dev/null
jq -r .stdout.preview_head "$T/pi.json.out" > "$T/piprobe.out"
check_probe "native pi: uid 1000, no capabilities, no_new_privs, only lo, PID 1 the init" piprobe \
    '.uid == 1000 and .caps.CapEff == "0000000000000000" and .no_new_privs == 1 and ([.interfaces[] | .name] == ["lo"]) and .pid != 1'

# ==== no residue ====================================================================
check "native: no sandbox state left" test -z "$(ls -A "$SB_STATE" 2>/dev/null | grep -v '^\.')"
left=""
for c in /sys/fs/cgroup/*/brig-sandbox/agent1; do [ -d "$c" ] && left+="$c "; done
check "native: no cgroup of the long-lived sandbox left" test -z "$left"
d ps -aq > "$T/left.ids" 2>&1
check "docker: no container left" test ! -s "$T/left.ids"
dk_stop
mapfile -t IDS < <(grep -E '(^| )create ' "$T/brig-calls.log" | awk '{ print $NF }' | sort -u)
assert_nothing_left "dockerd stopped: no process, state, cgroup or mount left" "$DK/exec/runtime-runc/moby" "${IDS[@]}"
