#!/usr/bin/env bash
# exec and ps: a process started in a running container joins every
# namespace and the cgroup of its init, is confined by the container's
# seccomp filter and capabilities, takes runc's flags; ps lists the
# container's processes. Nothing is left behind.
. "$(dirname "$0")/lib.sh"
it_init

ID=$(cid ex)
mkb ex -- /usr/bin/brig-probe sleep 300 || bail "cannot build a bundle"
# A filter and a narrow capability set that the exec'd process must share.
cfg ex '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
      architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
      syscalls: [{names: ["keyctl"], action: "SCMP_ACT_ERRNO", errnoRet: 42}]}
  | .process.capabilities = {bounding: ["CAP_KILL", "CAP_CHOWN"], effective: ["CAP_KILL", "CAP_CHOWN"],
      permitted: ["CAP_KILL", "CAP_CHOWN"]}
  | .process.env += ["FROM_CONFIG=1"]'
run_ct ex -d
check_eq "the container runs detached" "$RC" 0
init=$(state_field "$ID" pid)
[ -n "$init" ] && [ "$init" -gt 0 ] || bail "no init pid: $(cat "$T/ex.err")"

# ---- output and exit status -------------------------------------------------------
out=$(b exec "$ID" /bin/sh -c 'echo hello; exit 3' 2>&1); rc=$?
check_eq "exec prints the process's output" "$out" "hello"
check_eq "exec returns the process's exit status" "$rc" 3
b exec "$ID" /usr/bin/brig-probe kill-self TERM >/dev/null 2>&1; rc=$?
check_eq "a process killed by SIGTERM gives 128+15" "$rc" 143

# ---- the exec child in brig's memory, or a fork ------------------------------------
# Before its identity switch brig's child allocates, and a process of a
# container of root (or CAP_KILL) processes may kill it there: a fork. In a
# container of none such (uid 1000, no_new_privs, no CAP_KILL/CAP_SETUID)
# it runs in brig's memory (linux/spawn_vm.c), and an error after its
# switch, made without the heap (util/noheap.h), comes back whole.
b --debug --log "$T/mm-root.log" exec "$ID" /bin/true
check "exec into a container of root processes: a fork" grep -q 'msg="exec: process is pid [0-9]*"' "$T/mm-root.log"
NR=$(cid nr)
mkb nr -- /usr/bin/brig-probe sleep 300 || bail "cannot build a bundle"
cfg nr '.process.user = {uid: 1000, gid: 1000} | .process.noNewPrivileges = true
  | .process.capabilities = {bounding: ["CAP_CHOWN"], effective: [], permitted: []}'
run_ct nr -d
b --debug --log "$T/mm-nr.log" exec "$NR" /bin/sh -c 'id -u' >"$T/mm-nr.out" 2>&1
check_eq "exec as uid 1000 (no_new_privs, no CAP_KILL): runs" "$(cat "$T/mm-nr.out")" 1000
check "... in brig's memory" grep -q 'in our memory until its execve' "$T/mm-nr.log"
b exec --cwd /no-such "$NR" /bin/true >/dev/null 2>"$T/mm-cwd.err"; rc=$?
check_eq "... an error after its uid switch: exit 1" "$rc" 1
check "... names process.cwd and the errno" grep -q 'process.cwd (/no-such): open /no-such: No such file or directory' "$T/mm-cwd.err"
b exec "$NR" /etc/passwd >/dev/null 2>"$T/mm-x.err"; rc=$?
check_eq "... an execve that fails after it: exit 1" "$rc" 1
check "... names the file and the errno" grep -q 'exec /etc/passwd: Permission denied' "$T/mm-x.err"
check_eq "... and the next exec runs" "$(b exec "$NR" /bin/sh -c 'echo again' 2>&1)" again
# A process of another identity left by an exec (--user 0) is not in the
# saved config: that exec marks the state, and every exec after it forks.
b --debug --log "$T/mm-u0.log" exec --user 0 "$NR" /bin/true
check "an exec --user 0 into it: a fork" grep -q 'msg="exec: process is pid [0-9]*"' "$T/mm-u0.log"
b --debug --log "$T/mm-after.log" exec "$NR" /bin/true
check "... and the uid-1000 exec after it: a fork too" grep -q 'msg="exec: process is pid [0-9]*"' "$T/mm-after.log"
check "... (no exec in brig's memory)" sh -c "! grep -q 'in our memory' '$T/mm-after.log'"
b delete -f "$NR" >/dev/null 2>&1
assert_clean nr
# CAP_SYS_PTRACE signals nothing, but outside a user namespace it passes
# ptrace_may_access on brig's non-dumpable root child: a fork.
NP=$(cid np)
mkb np -- /usr/bin/brig-probe sleep 300 || bail "cannot build a bundle"
cfg np '.process.user = {uid: 1000, gid: 1000} | .process.noNewPrivileges = true
  | .process.capabilities = {bounding: ["CAP_SYS_PTRACE"], effective: [], permitted: []}'
run_ct np -d
b --debug --log "$T/mm-np.log" exec "$NP" /bin/sh -c 'id -u' >"$T/mm-np.out" 2>&1
check_eq "exec as uid 1000 with CAP_SYS_PTRACE in a set: runs" "$(cat "$T/mm-np.out")" 1000
check "... in a fork" grep -q 'msg="exec: process is pid [0-9]*"' "$T/mm-np.log"
b delete -f "$NP" >/dev/null 2>&1
assert_clean np

# A signal to `brig exec` reaches the process (which then dies of it).
"$BRIG" --root "$STATE" exec "$ID" /usr/bin/brig-probe sleep 30 >/dev/null 2>&1 &
bpid=$!
sleep 1
kill -TERM "$bpid"
wait "$bpid"; rc=$?
sleep 0.2
check_eq "SIGTERM to brig exec is forwarded to the process (128+15)" "$rc" 143

# --preserve-fds: fd 3 of the caller is the process's fd 3.
echo "through-fd-3" >"$T/fd3.txt"
out=$(b exec --preserve-fds 1 "$ID" /bin/sh -c 'cat <&3' 3<"$T/fd3.txt" 2>&1)
check_eq "--preserve-fds 1 passes fd 3" "$out" "through-fd-3"
out=$(b exec "$ID" /bin/sh -c '{ cat <&3; } 2>/dev/null || echo closed' 3<"$T/fd3.txt" 2>&1)
check_eq "without --preserve-fds fd 3 is not passed" "$out" "closed"

# ---- what the exec'd process sees -------------------------------------------------
b exec "$ID" /usr/bin/brig-probe report >"$T/rep.out" 2>"$T/rep.err"; RC=$?
if check_ran "exec runs the probe" rep; then
    for ns in cgroup ipc mnt net pid uts user; do
        want=$(stat -L -c %i "/proc/$init/ns/$ns")
        check_probe "exec joins the init's $ns namespace" rep ".namespaces.$ns == $want"
    done
    check_probe "the process is not pid 1 of the container (it joined the init's pid ns)" rep '.pid > 1'
    check_probe "the container's seccomp filter applies" rep '.seccomp == 2'
    # The config's sets (CAP_CHOWN = bit 0, CAP_KILL = bit 5), not the
    # init's: an init that had kept too much would otherwise pass.
    want_bnd=0000000000000021
    check_probe "capability bounding set is the config's (CHOWN, KILL)" rep '.caps.CapBnd == $w' --arg w "$want_bnd"
    check_probe "effective and permitted are the config's (CHOWN, KILL)" rep \
        '.caps.CapEff == $w and .caps.CapPrm == $w' --arg w "$want_bnd"
    check_probe "inheritable and ambient are empty (the config has none)" rep \
        '.caps.CapInh == "0000000000000000" and .caps.CapAmb == "0000000000000000"'
    check_eq "... as the init's bounding set" "$(awk '/^CapBnd/ {print $2}' "/proc/$init/status")" "$want_bnd"
    check_probe "no_new_privs as the config asks" rep '.no_new_privs == 1'
    check_probe "the config's environment" rep '.env | index("FROM_CONFIG=1") != null'
    check_probe "the container's hostname" rep '.hostname == "brig"'
fi
cg=$(b exec "$ID" /bin/sh -c 'cat /proc/1/cgroup; echo ---; cat /proc/self/cgroup' 2>&1)
check_eq "exec is in the init's cgroups" "$(sed -n '/^---$/,$p' <<<"$cg" | tail -n +2)" "$(sed '/^---$/,$d' <<<"$cg")"
b exec "$ID" /usr/bin/brig-probe syscall keyctl >/dev/null 2>&1; rc=$?
check_eq "a syscall the container's filter denies is denied in exec (errnoRet 42)" "$rc" 42

# ---- flags ------------------------------------------------------------------------
b exec --cwd /tmp -e FOO=bar -e FROM_CONFIG=2 -u 1000:1000 -g 2000 "$ID" \
    /usr/bin/brig-probe report >"$T/flags.out" 2>"$T/flags.err"; RC=$?
if check_ran "exec with --cwd, --env, --user, --additional-gids" flags; then
    check_probe "--cwd" flags '.cwd == "/tmp"'
    check_probe "--env adds a variable" flags '.env | index("FOO=bar") != null'
    check_probe "--env overrides the config's value" flags '(.env | index("FROM_CONFIG=2") != null) and (.env | index("FROM_CONFIG=1") == null)'
    check_probe "--user uid:gid" flags '.uid == 1000 and .gid == 1000'
    check_probe "--additional-gids" flags '.groups | index(2000) != null'
    check_probe "a non-root user has no effective capabilities" flags '.caps.CapEff == "0000000000000000"'
fi
b exec --cap CAP_SYS_TIME "$ID" /usr/bin/brig-probe report >"$T/cap.out" 2>"$T/cap.err"; RC=$?
if check_ran "exec --cap" cap; then
    want=$(printf '%016x' $(( 16#$want_bnd | (1 << 25) )))     # CAP_SYS_TIME is bit 25
    check_probe "--cap adds to the bounding and effective sets, nothing else" cap \
        '.caps.CapBnd == $w and .caps.CapEff == $w' --arg w "$want"
fi
b exec --cap CAP_BOGUS "$ID" /bin/true >/dev/null 2>"$T/badcap.err"
check "--cap with an unknown name fails, naming it" grep -q "CAP_BOGUS" "$T/badcap.err"

cat >"$T/proc.json" <<'JSON'
{"args": ["/bin/sh", "-c", "echo from-process-file; pwd; exit 5"], "cwd": "/etc",
 "env": ["PATH=/bin:/usr/bin"], "user": {"uid": 0, "gid": 0}}
JSON
out=$(b exec --process "$T/proc.json" "$ID" 2>&1); rc=$?
check_eq "--process FILE: output" "$(printf '%s' "$out" | tr '\n' ' ')" "from-process-file /etc"
check_eq "--process FILE: exit status" "$rc" 5
echo '{"args": ["/bin/true"], "cwd": "relative"}' >"$T/badproc.json"
b exec --process "$T/badproc.json" "$ID" >/dev/null 2>"$T/badproc.err"
check "a bad --process file fails naming the field" grep -q "process.cwd" "$T/badproc.err"
b exec "$ID" >/dev/null 2>"$T/noargs.err"
check "exec without a command fails clearly" grep -q "a command is required" "$T/noargs.err"

# ---- detach, pid file, ps ---------------------------------------------------------
b exec -d --pid-file "$T/exec.pid" "$ID" /usr/bin/brig-probe sleep 120 >/dev/null 2>"$T/det.err"; rc=$?
check_eq "exec --detach returns at once" "$rc" 0
epid=$(cat "$T/exec.pid" 2>/dev/null)
check "--pid-file holds a live pid" kill -0 "${epid:-0}"
check "... whose parent is not brig (it was reparented)" \
    bash -c "[ \"\$(awk '/^PPid/ {print \$2}' /proc/${epid:-0}/status)\" != \"\$\$\" ]"
ps_json=$(b ps -f json "$ID" 2>&1)
check "ps -f json lists the init" jq -e --argjson p "$init" 'index($p) != null' <<<"$ps_json"
check "ps -f json lists the exec'd process" jq -e --argjson p "${epid:-0}" 'index($p) != null' <<<"$ps_json"
ps_tab=$(b ps "$ID" 2>&1)
check "ps (table) keeps ps's header" bash -c "head -n1 <<<'$ps_tab' | grep -qw PID"
check "ps (table) shows the init's line" bash -c "awk '{print \$2}' <<<'$ps_tab' | grep -qx '$init'"
check_eq "ps (table) shows only the container's processes" "$(($(wc -l <<<"$ps_tab") - 1))" 2
ps_o=$(b ps "$ID" -o pid,comm 2>&1)
check "ps passes its own arguments to ps(1)" bash -c "grep -qw '^ *$init *brig-probe' <<<'$ps_o' && [ \$(wc -l <<<'$ps_o') -eq 3 ]"

# ---- paused, not running ------------------------------------------------------------
# A freezer is there (v1 freezer or cgroup2's cgroup.freeze): pause must work.
if [ ! -d /sys/fs/cgroup/freezer ] && ! ls /sys/fs/cgroup/unified/cgroup.freeze /sys/fs/cgroup/cgroup.freeze >/dev/null 2>&1 &&
   ! find /sys/fs/cgroup -maxdepth 2 -name cgroup.freeze 2>/dev/null | grep -q .; then
    skip "exec into a paused container" "this host has no freezer (no /sys/fs/cgroup/freezer, no cgroup.freeze)"
elif b pause "$ID" >"$T/pause.err" 2>&1; then
    b exec "$ID" /bin/true >/dev/null 2>"$T/paused.err"
    check "exec into a paused container fails clearly" grep -q "cannot exec in a paused container" "$T/paused.err"
    b resume "$ID" >/dev/null 2>&1
    check "... and works again after resume" b exec "$ID" /bin/true
else
    not_ok "brig pause of a running container (a freezer exists here)" "$(cat "$T/pause.err")"
fi
b delete -f "$ID" >/dev/null 2>&1
check "the exec'd process died with the container" bash -c "! kill -0 ${epid:-0} 2>/dev/null"
assert_clean ex

mkb st -- /usr/bin/brig-probe exit 0
create_ct st
b exec "$(cid st)" /bin/true >/dev/null 2>"$T/st-created.err"
check "exec into a created container fails clearly" grep -q "cannot exec in a created container" "$T/st-created.err"
b start "$(cid st)" >/dev/null 2>&1
wait_status "$(cid st)" stopped 10
b exec "$(cid st)" /bin/true >/dev/null 2>"$T/st-stopped.err"; rc=$?
check "exec into a stopped container fails" test "$rc" -ne 0
check "... clearly" grep -q "cannot exec in a stopped container" "$T/st-stopped.err"
b ps "$(cid st)" >/dev/null 2>"$T/st-ps.err"
check "ps of a stopped container fails clearly" grep -q "is not running" "$T/st-ps.err"
b delete "$(cid st)" >/dev/null 2>&1
assert_clean st

# ---- a container with its own user namespace ----------------------------------------
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ]; then
    mkb un --chown 100000:100000 -- /usr/bin/brig-probe sleep 300
    cfg un '.linux.namespaces = ((.linux.namespaces // []) | map(select(.type != "user")) + [{type: "user"}])
      | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
      | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
      | .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
    run_ct un -d
    uinit=$(state_field "$(cid un)" pid)
    b exec "$(cid un)" /usr/bin/brig-probe report >"$T/un.out" 2>"$T/un.err"; RC=$?
    if check_ran "exec into a user-namespaced container" un; then
        check_probe "... joins its user namespace" un ".namespaces.user == $(stat -L -c %i "/proc/${uinit:-0}/ns/user")"
        check_probe "... and is root there" un '.uid == 0 and .euid == 0'
    fi
    b exec -d --pid-file "$T/un.pid" "$(cid un)" /usr/bin/brig-probe sleep 30 >/dev/null 2>&1
    upid=$(cat "$T/un.pid" 2>/dev/null)
    check_eq "... and is uid 100000 on the host" "$(awk '/^Uid/ {print $2}' "/proc/${upid:-0}/status" 2>/dev/null)" 100000
    out=$(b exec -t "$(cid un)" /bin/sh -c 'tty' </dev/null 2>&1)
    check_eq "exec -t in a user namespace" "$out" "/dev/pts/0"
    b delete -f "$(cid un)" >/dev/null 2>&1
    assert_clean un
else
    skip "exec into a user namespace" "user namespaces are disabled"
fi
