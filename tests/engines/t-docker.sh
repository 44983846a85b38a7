#!/usr/bin/env bash
# Docker 20.10 (Debian's docker.io) drives brig as a registered runtime
# (contrib/docker/daemon.json): what the container sees, what docker gets
# back (exit codes, logs, stats, top, brig's errors), the lifecycle verbs,
# the hardening flags enforced, a policy enforced on docker's own configs,
# and that nothing is left behind.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/docker.sh"

eng_init
[ -x /usr/sbin/dockerd ] && [ -x "$DOCKER" ] || skip_all "docker.io is not installed (tests/engines/setup-engines.sh installs it)"
command -v script >/dev/null || skip_all "script(1) from util-linux is needed for the tty checks"
[ -d /sys/fs/cgroup/memory ] || skip_all "the docker checks read cgroup v1 files; no v1 memory controller here"
SRC=$(cd "$here/../.." && pwd)
SECCOMP=$SRC/policy/seccomp-default.json
# The policy the brig-agent runtime enforces: agent, audit log in $T.
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a' > "$T/agent.json"
"$BRIG" policy show pi | jq --arg a "$T/audit.jsonl" '.audit.path = $a' > "$T/pi.json"
dk_start "agent=$T/agent.json" "pi=$T/pi.json"
dk_load

check_match "contrib snippet: docker knows runtime brig" \
    "$(d info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' 2>&1)" '(^| )brig( |$)'

# ---- foreground runs ---------------------------------------------------------
dk_run run --rm -- /usr/bin/brig-probe report
check_eq "run --runtime brig: exit 0" "$RC" 0
check_probe "run: the probe ran as PID 1 in new pid/mnt namespaces" run \
    '.pid == 1 and .namespaces.pid != $pid and .namespaces.mnt != $mnt' \
    --argjson pid "$(stat -L -c %i /proc/self/ns/pid)" --argjson mnt "$(stat -L -c %i /proc/self/ns/mnt)"
check "docker called brig create with its own --root and --log-format json" \
    bash -c "grep -E -- '--log-format json.* create ' '$T/brig-calls.log' | grep -q -- '--root'"

dk_run noexec --rm -- /nonexistent
check "a brig create error fails docker run" test "$RC" -ne 0
check_match "brig's error message reaches docker's user" "$(cat "$T/noexec.err")" '/nonexistent: No such file or directory'

dk_run exit --rm -- sh -c 'exit 42'
check_eq "exit status 42 returned to docker" "$RC" 42

d_pty run -it --rm --runtime brig "$DK_IMAGE" sh -c 'test -t 0 && test -t 1 && echo "tty=$(tty)"' > "$T/tty.out" 2>&1
RC=$?
check_match "-it: a pty from the container's devpts" "$(out tty)" 'tty=/dev/pts/[0-9]+'
check_eq "-it: exit 0" "$RC" 0

dk_run user --rm --user 1000:1000 -- /usr/bin/brig-probe report
check_probe "--user 1000:1000" user '.uid == 1000 and .gid == 1000 and .euid == 1000'

dk_run caps --rm --cap-drop ALL --security-opt no-new-privileges -- /usr/bin/brig-probe report
check_probe "--cap-drop ALL --security-opt no-new-privileges" caps '.caps.CapEff == "0000000000000000" and .caps.CapBnd == "0000000000000000" and .no_new_privs == 1'

dk_run nonet --rm --network none -- /usr/bin/brig-probe report
check_probe "--network none: only lo" nonet '[.interfaces[] | .name] == ["lo"]'

dk_run ro --rm --read-only --tmpfs /tmp -- sh -c 'cat /etc/brig-image; touch /etc/x 2>/dev/null && echo ROOT-WRITABLE; touch /tmp/x && echo tmp-ok'
check_eq "--read-only --tmpfs /tmp: root not writable, /tmp writable" "$(out ro | tr '\n' ' ')" "brig-image tmp-ok "

dk_run init --rm --init -- sh -c 'cat /proc/1/cmdline | tr "\0" " "; sh -c "sleep 0.1 &" ; sleep 0.5; ps -o stat= 2>/dev/null | grep -c Z || true'
check_match "--init: docker-init (tini) is PID 1, the command below it" "$(out init | head -n 1)" '^/sbin/docker-init -- sh -c '

# ---- detached: exec, logs, top, stats, limits ----------------------------------
dk_run_d long --memory 64m --memory-swap 64m --pids-limit 20 --cpus 0.5 -- \
    sh -c 'echo started; trap "echo got-term; exit 0" TERM; while :; do sleep 0.2; done'
check_eq "run -d: running" "$(dk_status long)" running
check_eq "exec: output and exit status" "$(d exec "$(cid long)" sh -c 'echo in-exec; exit 3'; echo "rc=$?")" "in-exec
rc=3"
check_match "logs: the container's stdout" "$(d logs "$(cid long)" 2>&1)" 'started'
check_eq "--memory 64m: memory.limit_in_bytes" \
    "$(cat "/sys/fs/cgroup/memory$(dk_cg_of "$PID" memory)/memory.limit_in_bytes" 2>&1)" 67108864
check_eq "--pids-limit 20: pids.max" "$(cat "/sys/fs/cgroup/pids$(dk_cg_of "$PID" pids)/pids.max" 2>&1)" 20
check_eq "--cpus 0.5: cfs quota 50000 of 100000" \
    "$(cat "/sys/fs/cgroup/cpu$(dk_cg_of "$PID" cpu)/cpu.cfs_quota_us" 2>&1)" 50000
check_match "the container's cgroup is under docker's --cgroup-parent" "$(dk_cg_of "$PID" memory)" "^$CG_PARENT/"
d exec "$(cid long)" sh -c 'i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done; wait' > "$T/forks.out" 2>&1
check_match "--pids-limit 20 stops forks inside" "$(cat "$T/forks.out")" "fork|Resource temporarily unavailable|can't fork"
check_match "top: lists the container's processes" "$(d top "$(cid long)" 2>&1)" 'while'
check_match "stats --no-stream: memory read from the cgroup" \
    "$(d stats --no-stream --format '{{.MemUsage}}' "$(cid long)" 2>&1)" '^[1-9][0-9.]*[KMG]i?B / 64MiB$'
d pause "$(cid long)" > /dev/null 2>&1
check_eq "pause: docker says paused" "$(dk_status long)" paused
check_eq "pause: the container's cgroup is frozen" "$(freeze_state "$PID")" FROZEN
d unpause "$(cid long)" > /dev/null 2>&1
check_eq "unpause: running again" "$(dk_status long)" running
check "unpause: it runs (processes change)" ticking "$PID"
d restart -t 5 "$(cid long)" > /dev/null 2>&1
NEWPID=$(d inspect --format '{{.State.Pid}}' "$(cid long)" 2>/dev/null); seen_pid "$NEWPID"
check "restart: running with a new init" test "$(dk_status long)" = running -a "$NEWPID" != "$PID" -a -n "$NEWPID"
d stop -t 10 "$(cid long)" > /dev/null 2>&1
check_eq "stop: SIGTERM handled, exit code 0" "$(d inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$(cid long)")" "exited 0"
d start "$(cid long)" > /dev/null 2>&1
KPID=$(d inspect --format '{{.State.Pid}}' "$(cid long)" 2>/dev/null); seen_pid "$KPID"
d kill "$(cid long)" > /dev/null 2>&1
sleep 0.5
check_eq "kill: SIGKILL, exit code 137" "$(d inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$(cid long)")" "exited 137"
d rm "$(cid long)" > /dev/null 2>&1
check "--rm and rm: no container left" test -z "$(d ps -aq)"

# ---- a policy enforced on what docker asks for ------------------------------
# The brig-agent runtime runs brig --policy agent: docker's config for a
# hardened `docker run` passes it; each weakening is refused at create, and
# docker's user sees brig's reason.
mkdir -p "$T/ws"; chown 1000:1000 "$T/ws"
HARD=(--user 1000:1000 --cap-drop ALL --security-opt no-new-privileges --security-opt "seccomp=$SECCOMP"
      --read-only --tmpfs /tmp:size=64m --tmpfs /var/tmp:size=64m -v "$T/ws:/workspace" --network none
      --memory 512m --memory-swap 512m --pids-limit 128 --cpus 1 --ulimit nofile=1024:1024 --ulimit core=0)
DK_RUNTIME=brig-agent dk_run hard --rm "${HARD[@]}" -- sh -c 'id -u; echo x > /workspace/w && echo ws-ok'
check_eq "a hardened docker run passes the agent policy and runs" "$RC:$(out hard | tr '\n' ' ')" "0:1000 ws-ok "
[ "$RC" = 0 ] || diag "$(cat "$T/hard.err")"
weak() { # NAME RULE-REGEX FLAGS...
    local name=$1 rule=$2; shift 2
    DK_RUNTIME=brig-agent dk_run "$name" --rm "${HARD[@]}" "$@" -- true
    if [ "$RC" -ne 0 ] && grep -Eq "($rule)" "$T/$name.err" && grep -q policy "$T/$name.err"; then
        ok "policy refuses docker run $* (docker shows brig's reason: $rule)"
    else
        not_ok "policy refuses docker run $*" "exit $RC" "$(cat "$T/$name.err")" "$(brig_last_calls)"
    fi
    d rm -f "$(cid "$name")" > /dev/null 2>&1
}
weak privileged 'caps.none|seccomp.present' --privileged
weak dockersock 'mounts.forbidden' -v /var/run/docker.sock:/var/run/docker.sock
weak capadd 'caps.none' --cap-add SYS_ADMIN
weak unconfined 'seccomp.present' --security-opt seccomp=unconfined
weak secretenv 'env.secrets' -e AWS_SECRET_ACCESS_KEY=brig-test-secret-value
check "the secret's value is in no error message and not in the audit log" \
    bash -c "! grep -rq brig-test-secret-value '$T'/secretenv.err '$T/audit.jsonl'"
# Without seccomp=: Docker's own default profile, which lets ptrace through.
SAVED=("${HARD[@]}")
HARD=("${HARD[@]/seccomp=$SECCOMP/apparmor=unconfined}")
weak dockerdefault '"ptrace" is allowed'
HARD=("${SAVED[@]}")

# ---- selftest --engine docker: a Docker user proves their own flags ----------
# The same boundary report as a brig selftest, from the probe run by docker
# with the given flags (here through our daemon and the brig runtime).
SELFTEST=(env DOCKER_HOST="unix://$DK/docker.sock" timeout -k 5 180 "$BRIG" policy selftest --policy "$T/agent.json"
          --probe "$BRIG_PROBE" --engine docker --format json --)
out=$("${SELFTEST[@]}" --rm --runtime brig "${HARD[@]}" 2>&1); RC=$?
if [ "$RC" = 0 ] && jq -e '.pass and .open == 0 and .runtime == "docker" and (.boundaries | length) > 20' <<<"$out" >/dev/null 2>&1; then
    ok "selftest --engine docker: the hardened flags close every boundary of agent"
else
    not_ok "selftest --engine docker: the hardened flags close every boundary" "exit $RC" \
        "$(jq -r '.error // empty, (.boundaries[]? | select(.closed | not) | "\(.name): \(.detail)")' <<<"$out" 2>/dev/null)" "${out:0:1500}"
fi
WEAK=("${HARD[@]/--cap-drop/--cap-add}")
out=$("${SELFTEST[@]}" --rm --runtime brig "${WEAK[@]/ALL/NET_RAW}" 2>&1); RC=$?
if [ "$RC" = 1 ] && jq -e '.pass == false and ([.boundaries[] | select(.closed | not)] | length) >= 1' <<<"$out" >/dev/null 2>&1; then
    ok "selftest --engine docker: --cap-add NET_RAW instead of --cap-drop ALL: open boundaries and exit 1 ($(jq -r '[.boundaries[] | select(.closed | not) | .name] | join(",")' <<<"$out"))"
else
    not_ok "selftest --engine docker: weakened flags show open boundaries" "exit $RC" "${out:0:1500}"
fi
out=$("${SELFTEST[@]}" --rm --runtime brig "${HARD[@]/seccomp=$SECCOMP/apparmor=unconfined}" 2>&1); RC=$?
if [ "$RC" = 1 ] && jq -e '[.boundaries[] | select(.closed | not) | .name] | index("seccomp.io_uring_setup") != null' <<<"$out" >/dev/null 2>&1; then
    ok "selftest --engine docker: Docker's default seccomp profile shows open (io_uring_setup, ptrace)"
else
    not_ok "selftest --engine docker: Docker's default seccomp profile shows open" "exit $RC" "${out:0:1500}"
fi
check_eq "selftest --engine docker leaves no image or container" "$(d images -q --filter 'reference=brig-selftest*' 2>&1)$(d ps -aq 2>&1)" ""

# ---- the coding-agent sandbox as compose runs it, on brig, under `pi` ------
# The hardening table of its security page (user, cap_drop, no-new-privileges,
# read_only, tmpfs, init, limits), docker-compose 1.29, runtime: brig-pi.
if command -v docker-compose >/dev/null; then
    mkdir -p "$T/compose"
    cat > "$T/compose/compose.yaml" <<YAML
services:
  pi:
    image: $DK_IMAGE
    runtime: brig-pi
    user: "1000:1000"
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true", "seccomp=$SECCOMP"]
    read_only: true
    tmpfs: ["/tmp:size=64m", "/run/pi-session:size=16m"]
    init: true
    cpus: 2
    mem_limit: 1g
    memswap_limit: 1g
    pids_limit: 512
    network_mode: none
    ulimits: {nofile: 16384, core: 0}
YAML
    DOCKER_HOST=unix://$DK/docker.sock timeout -k 5 120 docker-compose -p "brig$TAG" -f "$T/compose/compose.yaml" \
        run --rm -T pi sh -c 'cat /proc/1/cmdline | tr "\0" " "; echo; /usr/bin/brig-probe report' \
        > "$T/compose.out" 2> "$T/compose.err"
    RC=$?
    check_eq "docker-compose run (runtime: brig-pi): exit 0" "$RC" 0
    [ "$RC" = 0 ] || diag "$(tail -n 5 "$T/compose.err")"
    check_match "compose init: true: docker-init is PID 1 under brig" "$(head -n 1 "$T/compose.out")" '^/sbin/docker-init -- '
    check_probe "compose: uid 1000, no capabilities, no_new_privs, only lo" compose \
        '.uid == 1000 and .caps.CapEff == "0000000000000000" and .no_new_privs == 1 and ([.interfaces[] | .name] == ["lo"])'
    out=$("$BRIG" policy check --policy pi --compose "$T/compose/compose.yaml" 2>&1)
    check_eq "policy check --compose on the same file: only image.pinned fails (a local tag)" \
        "$(grep '^FAIL' <<<"$out" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" "image.pinned "
    sed -i 's/read_only: true/read_only: false/' "$T/compose/compose.yaml"
    DOCKER_HOST=unix://$DK/docker.sock timeout -k 5 120 docker-compose -p "brig$TAG" -f "$T/compose/compose.yaml" \
        run --rm -T pi true > "$T/compose-weak.out" 2> "$T/compose-weak.err"
    RC=$?
    check "compose with read_only: false is refused by brig under pi (root.readonly)" \
        bash -c "[ $RC -ne 0 ] && grep -q 'root.readonly' '$T/compose-weak.err'"
    DOCKER_HOST=unix://$DK/docker.sock timeout -k 5 60 docker-compose -p "brig$TAG" -f "$T/compose/compose.yaml" \
        down > /dev/null 2>&1
else
    skip "docker-compose run on brig" "docker-compose is not installed"
fi

d ps -aq > "$T/left.ids" 2>&1
check "no container left in docker" test ! -s "$T/left.ids"
dk_stop
# Every container brig created (brig's .seccomp-cache may stay: it is a cache).
mapfile -t IDS < <(grep -E '(^| )create ' "$T/brig-calls.log" | awk '{ print $NF }' | sort -u)
assert_nothing_left "dockerd stopped: no process, state of the ${#IDS[@]} containers, cgroup or mount left" \
    "$DK/exec/runtime-runc/moby" "${IDS[@]}"
