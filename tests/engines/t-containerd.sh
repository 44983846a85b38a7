#!/usr/bin/env bash
# containerd 1.6 drives brig through its runc shim v2 (`ctr run --runc-binary`,
# and the CRI handler from contrib/containerd/brig.toml): what the container
# sees, what the engine gets back, and that nothing is left behind.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/containerd.sh"

eng_init
command -v script >/dev/null || skip_all "script(1) from util-linux is needed for the tty checks"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] ||
    skip_all "no cgroup memory controller mounted"
BROOT=$T/brig-root
ctrd_start
ctr_import
# The shim runs brig with --root $BROOT/<namespace>.
BR=$BROOT/$TAG

# ---- the handler from contrib/ ----------------------------------------------
dump=$(containerd --config "$CTRD/config.toml" config dump 2>&1)
check_match "contrib snippet: CRI runtime 'brig' is the runc shim v2" \
    "$(grep -A12 'containerd.runtimes.brig\]' <<<"$dump" | grep runtime_type)" 'io\.containerd\.runc\.v2'
check_match "contrib snippet: handler 'brig' has BinaryName = brig" \
    "$(grep -A4 'runtimes.brig.options\]' <<<"$dump" | grep BinaryName)" "BinaryName = \"$BRIGW\""
check_match "the CRI plugin (which carries the handler) loaded" \
    "$(ctr -a "$CTRD_SOCK" plugins ls 2>&1 | awk '$2 == "cri" { print $NF }')" '^ok$'

# ---- the CRI handler: a pod with runtime_handler "brig", as the kubelet asks --
# for a RuntimeClass with handler: brig (contrib/kubernetes/runtimeclass.yaml).
CRI_ROOT=$T/brig-cri-root/k8s.io
cri() { timeout -k 5 120 /usr/bin/python3 "$here/cri-client.py" "$CTRD_SOCK" "$@"; }
if ! /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
    skip "CRI pod with handler brig" "python3-grpcio is not installed (tests/engines/setup-engines.sh installs it)"
else
    ctr -a "$CTRD_SOCK" -n k8s.io images import "$T/image/oci.tar" > /dev/null 2>&1 ||
        bail "ctr -n k8s.io images import failed"
    mkdir -p "$T/pods"
    podcg=$CG_PARENT/pod
    podargs=(brig-pod "uid-$TAG" default "$T/pods" "$podcg")
    pod=$(cri run-pod "${podargs[@]}" brig 2> "$T/cri.err")
    check_match "CRI RunPodSandbox with runtime_handler brig" "$pod$(cat "$T/cri.err")" '^[0-9a-f]{64}$'
    if [[ $pod =~ ^[0-9a-f]{64}$ ]]; then
        eng_on_exit "cri stop-pod $pod; cri remove-pod $pod"
        check "the handler ran brig (BinaryName) with its Root from the snippet" \
            grep -q -- "^--root $CRI_ROOT .* create .*$pod\$" "$T/brig-calls.log"
        seen_pid "$(jq -r '.pid // empty' "$CRI_ROOT/$pod/state.json" 2>/dev/null)"
        ctrid=$(cri create "$pod" "${podargs[@]}" probe "$CTR_IMAGE" probe.log \
            /usr/bin/brig-probe report 2> "$T/cri.err")
        check_match "CRI CreateContainer in the brig pod" "$ctrid$(cat "$T/cri.err")" '^[0-9a-f]{64}$'
        cri start "$ctrid" > "$T/cri.err" 2>&1
        wait_for 30 bash -c "[ \"\$(/usr/bin/python3 '$here/cri-client.py' '$CTRD_SOCK' status '$ctrid' | cut -d' ' -f1)\" = EXITED ]"
        check_eq "CRI container ran to completion, exit code 0" "$(cri status "$ctrid" 2>&1)" "EXITED 0 Completed"
        sed -n 's/^[^ ]* stdout F //p' "$T/pods/probe.log" > "$T/cri-probe.out" 2>/dev/null
        check_probe "CRI container: the probe's report reached the pod log; it shares the pod's pid namespace (pid > 1) and cgroup parent" cri-probe \
            '.pid > 1 and (.cgroup | tostring | contains($cg))' --arg cg "$podcg/"
        cri stop-pod "$pod" > "$T/cri.err" 2>&1
        check "CRI StopPodSandbox" test $? = 0
        cri remove-pod "$pod" > "$T/cri.err" 2>&1
        check "CRI RemovePodSandbox" test $? = 0
        check_eq "CRI pod removed: no brig state left under the handler's Root" "$(ls -A "$CRI_ROOT" 2>&1)" ""
    else
        skip "the rest of the CRI pod checks" "RunPodSandbox failed"
    fi
fi

# ---- foreground runs ---------------------------------------------------------
ctr_run echo --rm -- echo hello from brig
check_eq "stdout reaches ctr" "$(out echo)" "hello from brig"
check_eq "exit status 0" "$RC" 0

ctr_run env --rm --env BRIG_E2E=yes --cwd /tmp -- /usr/bin/brig-probe report
check_probe "env var from --env" env '.env | index("BRIG_E2E=yes") != null'
check_probe "cwd from --cwd" env '.cwd == "/tmp"'
# containerd's default set: chown dac_override fowner fsetid kill setgid setuid
# setpcap net_bind_service net_raw sys_chroot mknod audit_write setfcap.
check_probe "runs as root with containerd's default capabilities, nothing more" env \
    '.uid == 0 and .caps.CapEff == "00000000a80425fb" and .caps.CapBnd == "00000000a80425fb"'

ctr_run exit --rm -- sh -c 'exit 42'
check_eq "exit status 42 returned to ctr" "$RC" 42

# brig's error reaches the user: the shim shows the last JSON log line's msg.
ctr_run noexec --rm -- /nonexistent
check "a brig create error fails ctr run" test "$RC" -ne 0
check_match "brig's error message reaches ctr's user" "$(cat "$T/noexec.err")" 'exec: /nonexistent: No such file or directory'
c container delete "$(cid noexec)" > /dev/null 2>&1

# stdin: ctr run hangs if its stdin reaches EOF before the task exists, so the
# data goes in through a fifo only once the task is running.
mkfifo "$T/stdin.fifo"
( exec 3> "$T/stdin.fifo"
  wait_for 30 bash -c "ctr -a '$CTRD_SOCK' -n '$TAG' task ls | grep -q '^$(cid stdin) .*RUNNING'"
  printf 'line one\nline two\n' >&3 ) &
feeder=$!
STDIN_FILE=$T/stdin.fifo ctr_run stdin --rm -- sh -c 'wc -l; echo done'
wait "$feeder"
check_eq "stdin reaches the container (and its EOF ends it)" "$(out stdin | tr -s ' ' | tr '\n' ' ')" "2 done "

c_pty run -t --rm --runc-binary "$BRIGW" --runc-root "$BROOT" --cgroup "$CG_PARENT/$(cid tty)" \
    "$CTR_IMAGE" "$(cid tty)" sh -c 'test -t 0 && test -t 1 && echo "tty=$(tty)"; echo "console=$(stat -c %t:%T /dev/console) pty=$(stat -L -c %t:%T "$(tty)")"' > "$T/tty.out" 2>&1
RC=$?
check_match "-t: stdin and stdout are a pty from the container's devpts" "$(out tty)" 'tty=/dev/pts/[0-9]+'
check_match "-t: /dev/console is that pty" "$(out tty)" 'console=([0-9a-f]+:[0-9a-f]+) pty=\1$'
check_eq "-t: exit status 0" "$RC" 0

ctr_run netns --rm -- /usr/bin/brig-probe report
check_probe "no host networking: only lo" netns '[.interfaces[] | (.name // .)] == ["lo"]'

ctr_run nethost --rm --net-host -- /usr/bin/brig-probe report
host_ifs=$(ls /sys/class/net | sort | jq -R . | jq -sc .)
check_probe "--net-host: the host's interfaces" nethost '([.interfaces[] | (.name // .)] | sort) == $h' --argjson h "$host_ifs"

ctr_run ro --rm --read-only -- sh -c 'cat /etc/brig-image; touch /etc/x && echo WRITABLE; exit 0'
check_eq "--read-only: the image is readable, the root is not writable" "$(out ro)" brig-image

mkdir -p "$T/bind"; echo from-host > "$T/bind/in"
ctr_run bind --rm --mount "type=bind,src=$T/bind,dst=/mnt/b,options=rbind:rw" -- \
    sh -c 'cat /mnt/b/in; echo from-container > /mnt/b/out'
check_eq "bind mount: host file visible" "$(out bind)" from-host
check_eq "bind mount: container write visible on the host" "$(cat "$T/bind/out" 2>/dev/null)" from-container
ctr_run bindro --rm --mount "type=bind,src=$T/bind,dst=/mnt/b,options=rbind:ro" -- \
    sh -c 'echo x > /mnt/b/out2'
check "read-only bind mount refuses writes" test "$RC" -ne 0 -a ! -e "$T/bind/out2"

# ---- memory limit: set, then enforced by the OOM killer ----------------------
ctr_run_d mem --memory-limit 33554432 -- sleep 300
memcg=$(grep -E '(^[0-9]+:memory:|^0::)' "/proc/${PID:-0}/cgroup" 2>/dev/null | head -n 1 | cut -d: -f3)
lim=$(cat "/sys/fs/cgroup/memory$memcg/memory.limit_in_bytes" 2>/dev/null ||
      cat "/sys/fs/cgroup/unified$memcg/memory.max" 2>/dev/null)
check_eq "--memory-limit: 32 MiB in the container's memory cgroup" "$lim" 33554432
check_eq "the container's cgroup is the one asked for" "$memcg" "$CG_PARENT/$(cid mem)"
c task kill -s KILL "$(cid mem)" >/dev/null 2>&1; sleep 0.5
c task delete "$(cid mem)" >/dev/null 2>&1; c container delete "$(cid mem)" >/dev/null 2>&1

ctr_run oom --rm --memory-limit 33554432 -- sh -c 'a=$(head -c 200000000 /dev/zero | tr "\000" x); echo survived'
check_eq "memory limit enforced: OOM kill, exit 137" "$RC" 137

# ---- detached: ps, exec, pause/resume, kill, delete ---------------------------
ctr_run_d det -- sh -c 'trap "exit 0" TERM; sleep 1000 & while :; do sleep 0.2; done'
check_eq "-d: the task is RUNNING" "$(task_status det)" RUNNING
check "-d: the init pid is alive on the host" pid_alive "${PID:-0}"
check "brig state dir of the running container" test -f "$BR/$(cid det)/state.json"

ps_out=$(c task ps "$(cid det)" 2>&1)
check_match "task ps lists the init pid" "$ps_out" "(^|[[:space:]])${PID:-none}[[:space:]]"
check "task ps lists more than the init (sleep 1000)" test "$(grep -cE '^[0-9]+' <<<"$ps_out")" -ge 2
# shellcheck disable=SC2046  # one pid per word
seen_pid $(grep -oE '^[0-9]+' <<<"$ps_out")

c task exec --exec-id ex1 "$(cid det)" sh -c 'echo exec-out; cat /proc/1/cmdline | tr "\0" " "' \
    < /dev/null > "$T/ex1.out" 2> "$T/ex1.err"
RC=$?
check_eq "task exec: exit 0" "$RC" 0
check_match "task exec: output, and it runs in the container's pid namespace" "$(out ex1; cat "$T/ex1.err")" \
    $'^exec-out\nsh -c trap'
c task exec --exec-id ex2 "$(cid det)" sh -c 'exit 5' < /dev/null > /dev/null 2>&1
check_eq "task exec: exit status 5 returned" "$?" 5
c_pty task exec -t --exec-id ex3 "$(cid det)" sh -c 'test -t 0 && tty' > "$T/ex3.out" 2>&1
RC=$?
check_match "task exec -t: a pty" "$(out ex3)" '/dev/pts/[0-9]+'
check_eq "task exec -t: exit 0" "$RC" 0
c task exec --exec-id ex4 "$(cid det)" sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status' \
    < /dev/null > "$T/ex4.out" 2>&1
init_st=$(grep -E '^(CapEff|NoNewPrivs|Seccomp):' "/proc/${PID:-0}/status" 2>/dev/null)
check_eq "task exec: same caps, no_new_privs and seccomp as the init" "$(out ex4)" "$init_st"

c task pause "$(cid det)" > "$T/pause.err" 2>&1
check_eq "task pause: PAUSED" "$(task_status det)" PAUSED
check_eq "task pause: the cgroup is frozen" "$(freeze_state "${PID:-0}")" FROZEN
check_not "task pause: nothing runs (no new process in 1.5 s)" ticking "${PID:-0}"
c task resume "$(cid det)" > "$T/resume.err" 2>&1
check_eq "task resume: RUNNING" "$(task_status det)" RUNNING
check_eq "task resume: the cgroup is thawed" "$(freeze_state "${PID:-0}")" THAWED
check "task resume: the container runs again" ticking "${PID:-0}"
c task exec --exec-id ex5 "$(cid det)" true < /dev/null > /dev/null 2>&1
check_eq "after resume: exec works again" "$?" 0

c task kill "$(cid det)" > /dev/null 2>&1      # SIGTERM, trapped: exit 0
wait_for 10 bash -c "[ \"\$(ctr -a '$CTRD_SOCK' -n '$TAG' task ls | awk '\$1 == \"$(cid det)\" { print \$3 }')\" = STOPPED ]"
check_eq "task kill: SIGTERM stops the task" "$(task_status det)" STOPPED
check "task delete" c task delete "$(cid det)"
check "container delete" c container delete "$(cid det)"
check "task delete: brig state dir gone" test ! -e "$BR/$(cid det)"
check_eq "task delete: container cgroup gone" "$(ls -d /sys/fs/cgroup/*"$CG_PARENT/$(cid det)" 2>/dev/null)" ""

# ---- a signal caught by PID 1, its exit status returned ----------------------
( ctr_run sig --rm -- sh -c 'trap "exit 7" USR1; while :; do sleep 0.1; done'; echo "$RC" > "$T/sig.rc" ) &
runner=$!
wait_for 30 bash -c "ctr -a '$CTRD_SOCK' -n '$TAG' task ls | grep -q '^$(cid sig) .*RUNNING'"
seen_pid "$(c task ls | awk -v id="$(cid sig)" '$1 == id { print $2 }')"
c task kill -s USR1 "$(cid sig)" > /dev/null 2>&1
wait "$runner"
check_eq "SIGUSR1 trapped by PID 1: its exit status 7 reaches ctr" "$(cat "$T/sig.rc" 2>/dev/null)" 7

# ---- kill --all ----------------------------------------------------------------
# PID 1 handles USR1 (its children get the default action back), so a USR1 to
# every process ends the children and leaves the init: that is --all, not the
# init's death taking its pid namespace along.
ctr_run_d all -- sh -c 'trap "echo usr1" USR1; sleep 1001 & sleep 1002 & while :; do sleep 0.2; done'
wait_for 5 bash -c "grep -qx '$(cid all)' <(ctr -a '$CTRD_SOCK' -n '$TAG' task ls -q)"
kids=""
for p in $(cgroup_pids all); do
    grep -qE '^sleep 100[12]$' <(tr '\0' ' ' < "/proc/$p/cmdline" | sed 's/ $//') && kids="$kids $p"
done
seen_pid $kids
check "kill --all: the container runs sleep 1001 and 1002 ($kids)" test "$(wc -w <<<"$kids")" -eq 2
c task kill --all -s USR1 "$(cid all)" > "$T/killall.err" 2>&1
check "task kill --all -s USR1 succeeds" test "$?" = 0
gone() { local p; for p in $kids; do pid_alive "$p" && return 1; done; return 0; }
check "kill --all: the children got the signal (gone)" wait_for 10 gone
check_eq "kill --all: the init handled it and still runs" "$(task_status all)" RUNNING
pids=$(cgroup_pids all)
seen_pid $pids
c task kill --all -s KILL "$(cid all)" > "$T/killall.err" 2>&1
gone() { local p; for p in $pids; do pid_alive "$p" && return 1; done; return 0; }
check "kill --all -s KILL: every process of the container is gone ($pids)" wait_for 10 gone
c task delete "$(cid all)" >/dev/null 2>&1; c container delete "$(cid all)" >/dev/null 2>&1

# ---- nothing left ------------------------------------------------------------
ctrd_remove_all > /dev/null 2>&1
check_eq "no containers left in the namespace" "$(c container ls -q 2>&1)" ""
assert_nothing_left "nothing left behind (processes, brig state, cgroups, mounts)" "$BR"
shims=$(ctrd_shim_pids)
wait_for 10 bash -c "[ -z \"\$(for p in $shims; do [ -d /proc/\$p ] && echo \$p; done)\" ]"
check_eq "no shim left running" "$(for p in $shims; do pid_alive "$p" && echo "$p"; done)" ""
check_eq "no shim socket left in /run/containerd/s" "$(ctrd_new_shim_sockets | tr '\n' ' ')" ""
