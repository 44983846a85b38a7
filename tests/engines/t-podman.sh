#!/usr/bin/env bash
# podman 4.3 drives brig through conmon (`--runtime brig`, the runtime table
# from contrib/podman/containers.conf): what the container sees, what podman
# gets back, and that nothing is left behind.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
source "$here/podman.sh"

eng_init
command -v script >/dev/null || skip_all "script(1) from util-linux is needed for the tty checks"
[ -d /sys/fs/cgroup/memory ] || skip_all "the podman checks read cgroup v1 files; no v1 memory controller here"
pm_config
eng_on_exit pm_cleanup
pm_import
# podman's own cgroup under our parent (conmon moves itself there).
ENGINE_CGROUPS_OK='^conmon$'

check_eq "contrib snippet: podman resolves runtime 'brig' to our brig" \
    "$(p info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}' 2>&1)" "brig $BRIGW"
check_match "podman reads brig --version" "$(p info --format '{{.Host.OCIRuntime.Version}}' 2>&1)" \
    '^brig version [0-9]+\.[0-9]+'

# ---- foreground runs ---------------------------------------------------------
pm_run run --rm -- /usr/bin/brig-probe report
check_eq "run: exit 0" "$RC" 0
check_probe "run: the probe ran as PID 1 in new pid/mnt namespaces" run \
    '.pid == 1 and .namespaces.pid != $pid and .namespaces.mnt != $mnt' \
    --argjson pid "$(stat -L -c %i /proc/self/ns/pid)" --argjson mnt "$(stat -L -c %i /proc/self/ns/mnt)"
check "podman called brig without --root (default state dir)" \
    bash -c "grep -E '(^| )create ' '$T/brig-calls.log' | grep -qv -- '--root'"

# The runtime given by path instead of by name.
timeout -k 5 90 podman --root "$PM/root" --runroot "$PM/runroot" --tmpdir "$PM/tmp" \
    --storage-driver vfs --cgroup-manager cgroupfs --events-backend file --runtime "$BRIGW" \
    run --rm --cgroup-parent "$CG_PARENT" "$PM_IMAGE" echo by-path > "$T/bypath.out" 2> "$T/bypath.err"
RC=$?
check_eq "--runtime /path/to/brig: run, exit 0" "$RC:$(out bypath)" "0:by-path"

# brig's error reaches the user through conmon and podman.
pm_run noexec --rm -- /nonexistent
check "a brig create error fails podman run" test "$RC" -ne 0
check_match "brig's error message reaches podman's user" "$(cat "$T/noexec.err")" 'exec: /nonexistent: No such file or directory'
p rm -f "$(cid noexec)" > /dev/null 2>&1

pm_run exit --rm -- sh -c 'exit 42'
check_eq "exit status 42 returned to podman" "$RC" 42

pm_run user --rm --user 1000:1000 -- /usr/bin/brig-probe report
check_probe "--user 1000:1000" user '.uid == 1000 and .gid == 1000 and .euid == 1000'

pm_run host --rm --hostname brig-pod -- /usr/bin/brig-probe report
check_probe "--hostname" host '.hostname == "brig-pod"'

check_probe "default rlimits from our containers.conf (nofile 4096:8192)" run \
    '.rlimits.nofile.soft == 4096 and .rlimits.nofile.hard == 8192'
# With any --ulimit, podman 4.3 also sets nproc to the host's maximum, which
# this host (no CAP_SYS_RESOURCE) refuses: name nproc too, as users must here.
pm_run ulim --rm --ulimit nofile=512:1024 --ulimit nproc=1000:2000 -- /usr/bin/brig-probe report
check_probe "--ulimit nofile=512:1024, nproc=1000:2000" ulim \
    '.rlimits.nofile.soft == 512 and .rlimits.nofile.hard == 1024 and .rlimits.nproc.soft == 1000 and .rlimits.nproc.hard == 2000'

p_pty run -t --rm --cgroup-parent "$CG_PARENT" "$PM_IMAGE" sh -c 'test -t 0 && test -t 1 && echo "tty=$(tty)"; echo "console=$(stat -c %t:%T /dev/console) pty=$(stat -L -c %t:%T "$(tty)")"' > "$T/tty.out" 2>&1
RC=$?
check_match "-t: a pty from the container's devpts" "$(out tty)" 'tty=/dev/pts/[0-9]+'
check_match "-t: /dev/console is that pty" "$(out tty)" 'console=([0-9a-f]+:[0-9a-f]+) pty=\1$'
check_eq "-t: exit 0" "$RC" 0

mkdir -p "$T/bind"; echo from-host > "$T/bind/in"
pm_run bind --rm -v "$T/bind:/mnt/b" -- sh -c 'cat /mnt/b/in; echo from-container > /mnt/b/out'
check_eq "-v bind mount: host file visible" "$(out bind)" from-host
check_eq "-v bind mount: container write visible on the host" "$(cat "$T/bind/out" 2>/dev/null)" from-container
pm_run bindro --rm -v "$T/bind:/mnt/b:ro" -- sh -c 'echo x > /mnt/b/out2'
check "-v ...:ro refuses writes" test "$RC" -ne 0 -a ! -e "$T/bind/out2"

pm_run nonet --rm --network none -- /usr/bin/brig-probe report
check_probe "--network none: only lo" nonet '[.interfaces[] | .name] == ["lo"]'

pm_run ro --rm --read-only -- sh -c 'cat /etc/brig-image; touch /etc/x 2>/dev/null && echo ROOT-WRITABLE; touch /tmp/x && echo tmp-ok'
check_eq "--read-only: root not writable, /tmp a tmpfs" "$(out ro | tr '\n' ' ')" "brig-image tmp-ok "

pm_run capd --rm --cap-drop all -- /usr/bin/brig-probe report
check_probe "--cap-drop all: no capabilities" capd \
    '[.caps.CapEff, .caps.CapPrm, .caps.CapBnd] | all(test("^0+$"))'

# ---- pids and memory limits: set and enforced --------------------------------
pm_run_d pids --pids-limit 20 -- sleep 300
check_eq "--pids-limit: pids.max is 20" \
    "$(cat "/sys/fs/cgroup/pids$(cg_of "${PID:-0}" pids)/pids.max" 2>/dev/null)" 20
p exec "$(cid pids)" /usr/bin/brig-probe fork-bomb 40 > "$T/bomb.out" 2>&1
check_probe "--pids-limit enforced: at most 20 processes, fork fails with EAGAIN" bomb \
    '.forked < 20 and .result == "EAGAIN"'
p rm -f -t 0 "$(cid pids)" > /dev/null 2>&1

pm_run_d mem --memory 32m -- sleep 300
check_eq "--memory 32m: memory.limit_in_bytes" \
    "$(cat "/sys/fs/cgroup/memory$(cg_of "${PID:-0}" memory)/memory.limit_in_bytes" 2>/dev/null)" 33554432
check_match "the container's cgroup is under our cgroup parent" "$(cg_of "${PID:-0}" memory)" "^$CG_PARENT/"
p rm -f -t 0 "$(cid mem)" > /dev/null 2>&1

pm_run oom --rm --memory 32m -- sh -c 'a=$(head -c 200000000 /dev/zero | tr "\000" x); echo survived'
check_eq "--memory enforced: OOM kill, exit 137" "$RC" 137

# ---- detached: exec, pause/unpause, stop, rm, kill --------------------------
pm_run_d det -- sh -c 'trap "exit 0" TERM; while :; do sleep 0.2; done'
check_eq "-d: running" "$(pm_status det)" running
check "-d: the init pid is alive on the host" pid_alive "${PID:-0}"
check "-d: brig state dir in its default root" test -f "$BRIG_DEFAULT_ROOT/$ID/state.json"

p exec "$(cid det)" sh -c 'echo exec-out; cat /proc/1/cmdline | tr "\0" " "' > "$T/ex1.out" 2> "$T/ex1.err"
RC=$?
check_eq "exec: exit 0" "$RC" 0
check_match "exec: output, in the container's pid namespace" "$(out ex1; cat "$T/ex1.err")" $'^exec-out\nsh -c trap'
p exec "$(cid det)" sh -c 'exit 5' > /dev/null 2>&1
check_eq "exec: exit status 5 returned" "$?" 5
p exec --user 1000:1000 --env BRIG_X=42 --workdir /tmp "$(cid det)" sh -c 'echo "$(id -u):$(id -g) $BRIG_X $(pwd)"' \
    > "$T/ex2u.out" 2>&1
check_eq "exec --user --env --workdir" "$(out ex2u)" "1000:1000 42 /tmp"
p_pty exec -t "$(cid det)" sh -c 'test -t 0 && tty' > "$T/ex3.out" 2>&1
RC=$?
check_match "exec -t: a pty" "$(out ex3)" '/dev/pts/[0-9]+'
check_eq "exec -t: exit 0" "$RC" 0
p exec "$(cid det)" sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status' > "$T/ex4.out" 2>&1
check_eq "exec: same caps, no_new_privs and seccomp as the init" "$(out ex4)" \
    "$(grep -E '^(CapEff|NoNewPrivs|Seccomp):' "/proc/${PID:-0}/status" 2>/dev/null)"

det_cg=$(cg_of "${PID:-0}" memory)
p pause "$(cid det)" > "$T/pause.err" 2>&1
check_eq "pause: paused" "$(pm_status det)" paused
check_eq "pause: the cgroup is frozen" "$(freeze_state "${PID:-0}")" FROZEN
check_not "pause: nothing runs (no new process in 1.5 s)" ticking "${PID:-0}"
p unpause "$(cid det)" > "$T/unpause.err" 2>&1
check_eq "unpause: running" "$(pm_status det)" running
check_eq "unpause: the cgroup is thawed" "$(freeze_state "${PID:-0}")" THAWED
check "unpause: the container runs again" ticking "${PID:-0}"

p stop -t 10 "$(cid det)" > "$T/stop.out" 2>&1
check_eq "stop: exited" "$(pm_status det)" exited
check_eq "stop: SIGTERM trapped by PID 1, exit code 0" \
    "$(p inspect --format '{{.State.ExitCode}}' "$(cid det)" 2>&1)" 0
check "rm" p rm "$(cid det)"
check "rm: brig state dir gone" test ! -e "$BRIG_DEFAULT_ROOT/$ID"
check_eq "rm: container cgroup gone" "$(ls -d /sys/fs/cgroup/*"$det_cg" 2>/dev/null)" ""

pm_run_d kill -- sleep 300
p kill "$(cid kill)" > /dev/null 2>&1
wait_for 10 bash -c "[ \"\$($(printf '%q ' "${P[@]}") inspect --format '{{.State.Status}}' $(cid kill))\" = exited ]"
check_eq "kill: exited" "$(pm_status kill)" exited
check_eq "kill: exit code 137 (SIGKILL)" "$(p inspect --format '{{.State.ExitCode}}' "$(cid kill)" 2>&1)" 137
check "kill: rm" p rm "$(cid kill)"

# A signal podman passes on (kill ID 10), trapped by PID 1: its exit code.
pm_run_d usr1 -- sh -c 'trap "exit 10" USR1; while :; do sleep 0.2; done'
p kill -s USR1 "$(cid usr1)" > /dev/null 2>&1
wait_for 10 bash -c "[ \"\$($(printf '%q ' "${P[@]}") inspect --format '{{.State.Status}}' $(cid usr1))\" = exited ]"
check_eq "kill -s USR1 trapped by PID 1: exit code 10" "$(p inspect --format '{{.State.ExitCode}}' "$(cid usr1)" 2>&1)" 10
p rm -f "$(cid usr1)" > /dev/null 2>&1

# ---- nothing left ------------------------------------------------------------
p rm -af -t 0 > /dev/null 2>&1
check_eq "no containers left in podman" "$(p ps -aq 2>&1)" ""
assert_nothing_left "nothing left behind (processes, brig state, cgroups, mounts)" \
    "$BRIG_DEFAULT_ROOT" "${PM_IDS[@]}"
