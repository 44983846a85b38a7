#!/usr/bin/env bash
# Crash safety and failure paths of the lifecycle. Every step of create is
# made to fail in turn, brig itself is SIGKILLed at each stage (by a hook
# killing its parent, or by strace's fault injection at one syscall), and
# paused containers are deleted and killed. After each: no process, cgroup
# (in every hierarchy, under /brig-crash/<id>), mount, state dir, exec.fifo
# or seccomp cache temp file is left, `state` tells the truth, `list` works,
# and `delete --force` cleans up whatever a dead brig left.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

CG=brig-crash
# lib.sh only knows /brig-test: also remove our leftovers under /brig-crash.
eval "lib_$(declare -f it_cleanup)"
it_cleanup() {
    lib_it_cleanup
    local c
    for c in /sys/fs/cgroup/*/"$CG"; do
        [ -d "$c" ] || continue
        find "$c" -mindepth 1 -depth -type d -name "$TAG-*" -exec rmdir {} + 2>/dev/null
        rmdir "$c" 2>/dev/null
    done
}

# mkc NAME [mkb args]: a bundle whose cgroup is /brig-crash/<id>.
mkc() {
    local name=$1; shift
    mkb "$name" "$@" || return 1
    cfg "$name" '.linux.cgroupsPath = "/'$CG'/" + $id' --arg id "$(cid "$name")"
}

# hook NAME KIND SCRIPT [TIMEOUT]: one /bin/sh hook of KIND running SCRIPT.
hook() {
    local name=$1 kind=$2 script=$3 to=${4:-}
    cfg "$name" '.hooks[$k] = [{path: "/bin/sh", args: ["sh", "-c", $s]} +
        (if $t == "" then {} else {timeout: ($t | tonumber)} end)]' \
        --arg k "$kind" --arg s "$script" --arg t "$to"
}

no_pidns() { cfg "$1" '.linux.namespaces |= map(select(.type != "pid"))'; }

# wait_no_pids ID: the container's processes are gone (3 s at most).
wait_no_pids() {
    local n=30
    while [ $n -gt 0 ]; do
        [ -z "$(tagged_pids "$1")" ] && return 0
        sleep 0.1; n=$((n - 1))
    done
    return 1
}

# alive PID: the process exists and is not a zombie.
alive() {
    local s
    s=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# init_exits ID: the recorded init and every process of the container's
# cgroup (tagged_pids cannot see an init that has not exec'd yet) are gone
# within 3 s.
init_exits() {
    local id=$1 n=30 pid procs p
    pid=$(jq -r '.pid // 0' "$STATE/$id/state.json" 2>/dev/null)
    while [ $n -gt 0 ]; do
        procs=$(cat /sys/fs/cgroup/pids/$CG/"$id"/cgroup.procs 2>/dev/null)
        busy=0
        { [ "${pid:-0}" -gt 0 ] && alive "$pid"; } && busy=1
        for p in $procs; do alive "$p" && busy=1; done
        [ $busy = 0 ] && [ -z "$(tagged_pids "$id")" ] && return 0
        sleep 0.1; n=$((n - 1))
    done
    echo "left: init ${pid:-none} ($(alive "${pid:-0}" && echo alive)), cgroup: $procs" >&2
    return 1
}

# gone NAME: nothing of the container is left on the host.
gone() {
    local name=$1 id problems=() c m
    id=$(cid "$name")
    wait_no_pids "$id" || problems+=("processes left: $(tagged_pids "$id" | tr '\n' ' ')")
    m=$(mounts_under "$T/$name")
    [ -z "$m" ] || problems+=("mounts left: $m")
    [ ! -e "$STATE/$id" ] || problems+=("state dir left: $(find "$STATE/$id" -mindepth 1 -printf '%f ')")
    for c in /sys/fs/cgroup/*/"$CG"/"$id"; do
        [ ! -d "$c" ] || problems+=("cgroup left: $c")
    done
    local tmp
    tmp=$(find "$STATE" -maxdepth 2 -name '.*tmp*' 2>/dev/null | tr '\n' ' ')
    [ -z "$tmp" ] || problems+=("temp files left: $tmp")
    if [ ${#problems[@]} -eq 0 ]; then
        ok "$name: nothing left behind"
    else
        not_ok "$name: nothing left behind" "${problems[@]}"
    fi
}

# fails_create DESC NAME ERE [create options]: create fails, the error
# matches ERE, the container does not exist and nothing is left.
fails_create() {
    local d=$1 name=$2 re=$3; shift 3
    create_ct "$name" "$@"
    if [ "$RC" != 0 ] && grep -Eq -- "$re" "$T/$name.err"; then
        ok "$d: create fails with a clear error"
    else
        not_ok "$d: create fails with a clear error" "exit status $RC, want /$re/" \
            "stderr: $(head -c 1500 "$T/$name.err")"
    fi
    check_refused "$d: the container does not exist" "does not exist" 1 b state "$(cid "$name")"
    gone "$name"
}

# ---- 1. every step of create fails in turn -----------------------------------

for kind in prestart createRuntime createContainer; do
    n=f-$kind
    mkc "$n" -- /usr/bin/brig-probe sleep 60 || continue
    hook "$n" "$kind" 'cat >/dev/null; exit 3'
    fails_create "a failing $kind hook" "$n" "hooks\.$kind\[0\].*status 3"
    n=t-$kind
    mkc "$n" -- /usr/bin/brig-probe sleep 60 || continue
    hook "$n" "$kind" 'exec sleep 30' 1
    fails_create "a $kind hook past its timeout" "$n" "hooks\.$kind\[0\].*timed out"
done

# startContainer hooks run after start: run reports their failure.
mkc f-sc -- /usr/bin/brig-probe exit 0 || true
hook f-sc startContainer 'exit 3'
run_ct f-sc
check "a failing startContainer hook fails run (status $RC)" \
    eval '[ "$RC" != 0 ] && grep -q "hooks.startContainer\[0\]" "$T/f-sc.err"'
gone f-sc

mkc f-mnt -- /usr/bin/brig-probe sleep 60 || true
cfg f-mnt '.mounts += [{destination: "/mnt", type: "nosuchfs", source: "none"}]'
fails_create "a mount of an unknown filesystem type" f-mnt "mounts\[[0-9]+\]"

mkc f-dst -- /usr/bin/brig-probe sleep 60 || true
cfg f-dst '.mounts += [{destination: "/etc/passwd/sub", type: "tmpfs", source: "tmpfs"}]'
fails_create "a mount destination that cannot be created" f-dst "mounts\[[0-9]+\].*/etc/passwd/sub"

mkc f-exe -- /nonexistent/prog || true
fails_create "an executable that does not exist" f-exe "/nonexistent/prog"

# uid/gid -1 means "unchanged" to setresuid: it would have stayed root.
for f in uid gid; do
    mkc "f-$f" -- /usr/bin/brig-probe sleep 60 || continue
    cfg "f-$f" '.process.user[$f] = 4294967295' --arg f "$f"
    fails_create "process.user.$f 4294967295" "f-$f" "process\.user\.$f"
done

mkc f-cwd -- /usr/bin/brig-probe sleep 60 || true
cfg f-cwd '.process.cwd = "/etc/passwd"'
fails_create "a cwd that is not a directory" f-cwd "process\.cwd"

mkc f-sysctl -- /usr/bin/brig-probe sleep 60 || true
cfg f-sysctl '.linux.sysctl = {"net.ipv4.ip_forward": "not-a-number"}'
fails_create "a sysctl the kernel refuses" f-sysctl "net\.ipv4\.ip_forward"

mkc f-rlim -- /usr/bin/brig-probe sleep 60 || true
cfg f-rlim '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 1073741824, hard: 1073741824}]'
fails_create "an rlimit above the kernel's maximum" f-rlim "RLIMIT_NOFILE"

mkc f-rlim2 -- /usr/bin/brig-probe sleep 60 || true
cfg f-rlim2 '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 2048, hard: 1024}]'
fails_create "an rlimit with soft above hard" f-rlim2 "process\.rlimits\[0\]"

if [ ! -d /sys/fs/cgroup/net_cls ] && ! grep -qw net_cls /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
    mkc f-netcls -- /usr/bin/brig-probe sleep 60 || true
    cfg f-netcls '.linux.resources.network = {classID: 1048577}'
    fails_create "a net_cls classID without a net_cls hierarchy" f-netcls "network\.classID"
else
    skip "a net_cls classID without a net_cls hierarchy" "this host has net_cls"
fi

mkc f-sec -- /usr/bin/brig-probe sleep 60 || true
cfg f-sec '.linux.seccomp = {defaultAction: "SCMP_ACT_FOO"}'
fails_create "an invalid seccomp section" f-sec "seccomp.*SCMP_ACT_FOO"
mkc f-sec2 -- /usr/bin/brig-probe sleep 60 || true
cfg f-sec2 '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["getpid"], action: "SCMP_ACT_ERRNO", args: [{index: 9, value: 1, op: "SCMP_CMP_EQ"}]}]}'
fails_create "a seccomp rule on argument 9" f-sec2 "seccomp"

mkc f-pidf -- /usr/bin/brig-probe sleep 60 || true
fails_create "--pid-file in a directory that does not exist" f-pidf "--pid-file" \
    --pid-file "$T/no/such/dir/pid"

# A socket nobody listens on any more: connect is refused.
mkc f-cs -- /usr/bin/brig-probe sleep 60 || true
cfg f-cs '.process.terminal = true'
if command -v python3 >/dev/null &&
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$T/dead.sock"; then
    fails_create "--console-socket that refuses the connection" f-cs "--console-socket" \
        --console-socket "$T/dead.sock"
else
    skip "--console-socket that refuses the connection" "python3 is needed to leave a dead socket"
fi
fails_create "--console-socket that does not exist" f-cs "--console-socket" \
    --console-socket "$T/no-such.sock"

# The init killed during setup: a createContainer hook runs as its child
# (without a pid namespace its parent is killable from there).
mkc f-init -- /usr/bin/brig-probe sleep 60 || true
no_pidns f-init
hook f-init createContainer 'kill -9 $PPID; sleep 1'
fails_create "the init killed by a createContainer hook" f-init "init exited during setup"

# ---- 2. brig itself killed --------------------------------------------------

# after_crash NAME WHAT: brig died; state is truthful, list works, the init
# does not survive (it exits on the sync socket's EOF), delete --force
# removes everything.
after_crash() {
    local name=$1 what=$2 id st
    id=$(cid "$name")
    check "$what: the init and the container's processes exit by themselves" init_exits "$id"
    st=$(state_field "$id" status)
    check_eq "$what: state says stopped" "$st" stopped
    check "$what: list works and says stopped" \
        eval 'b list --format json | jq -e --arg id "$id" ".[] | select(.id == \$id) | .status == \"stopped\" and .pid == 0"'
    check "$what: list works" b list
    check "$what: list --format json works" eval 'b list --format json | jq -e . >/dev/null'
    check "$what: delete --force succeeds" b delete --force "$id"
    gone "$name"
}

# A hook's parent is the process that runs it: brig create for prestart and
# createRuntime.
for kind in prestart createRuntime; do
    n=k-$kind
    mkc "$n" -- /usr/bin/brig-probe sleep 60 || continue
    hook "$n" "$kind" 'kill -9 $PPID'
    create_ct "$n"
    check_eq "brig create killed by its $kind hook" "$RC" 137
    after_crash "$n" "killed in $kind"
done

# While create runs, state says creating (asked from its createRuntime hook).
mkc c-state -- /usr/bin/brig-probe sleep 60 || true
hook c-state createRuntime "\"$BRIG\" --root \"$STATE\" state $(cid c-state) > \"$T/c-state.inner\""
create_ct c-state
check_eq "state during create (from a createRuntime hook) says creating" \
    "$(jq -r .status "$T/c-state.inner" 2>/dev/null)" creating
check "... delete --force succeeds" b delete --force "$(cid c-state)"
gone c-state

# A hanging hook dies with the brig that would have enforced its timeout.
mkc k-hang -- /usr/bin/brig-probe sleep 60 || true
hook k-hang createRuntime "echo \$\$ > \"$T/k-hang.hookpid\"; exec sleep 60" 50
CLEAN_IDS+=("$(cid k-hang)")
"$BRIG" --root "$STATE" create --bundle "$T/k-hang" "$(cid k-hang)" </dev/null >/dev/null 2>&1 &
bp=$!
n=50
while [ $n -gt 0 ] && [ ! -s "$T/k-hang.hookpid" ]; do sleep 0.1; n=$((n - 1)); done
kill -9 "$bp"; wait "$bp" 2>/dev/null
hp=$(cat "$T/k-hang.hookpid" 2>/dev/null)
n=30
while [ $n -gt 0 ] && alive "${hp:-0}"; do sleep 0.1; n=$((n - 1)); done
check "a hanging createRuntime hook dies with its brig" eval '[ -n "$hp" ] && ! alive "$hp"'
[ -n "$hp" ] && alive "$hp" && kill -9 "$hp"
after_crash k-hang "killed during a hanging hook"

# killed_at NAME STRACE-ARGS...: brig create SIGKILLed by strace's fault
# injection at one syscall (the strace filter selects which).
killed_at() {
    local name=$1; shift
    CLEAN_IDS+=("$(cid "$name")")
    strace -qq -o /dev/null "$@" "$BRIG" --root "$STATE" create --bundle "$T/$name" "$(cid "$name")" \
        </dev/null >"$T/$name.out" 2>"$T/$name.err"
    RC=$?
}

if command -v strace >/dev/null; then
    # Between the cgroup's creation and the state write that records it.
    mkc k-cg -- /usr/bin/brig-probe sleep 60 || true
    killed_at k-cg -P "/sys/fs/cgroup/unified/$CG/$(cid k-cg)" -e trace=mkdir -e inject=mkdir:signal=KILL
    check_eq "brig create killed at the mkdir of its last cgroup" "$RC" 137
    after_crash k-cg "killed creating the cgroup"

    mkc k-cgw -- /usr/bin/brig-probe sleep 60 || true
    killed_at k-cgw -P "/sys/fs/cgroup/cpuset/$CG/$(cid k-cgw)/cpuset.cpus" -e trace=openat \
        -e inject=openat:signal=KILL
    check_eq "brig create killed writing the cgroup's limits" "$RC" 137
    after_crash k-cgw "killed writing limits"

    mkc k-clone -- /usr/bin/brig-probe sleep 60 || true
    killed_at k-clone -e trace=clone3 -e inject=clone3:signal=KILL
    check_eq "brig create killed at clone" "$RC" 137
    after_crash k-clone "killed at clone"

    # After the init reported "created", before the state says so: the last
    # state.json rename of a normal create (counted on a reference run).
    mkc k-ref -- /usr/bin/brig-probe sleep 60 || true
    killed_at k-ref -P "$STATE/$(cid k-ref)" -e trace=renameat -o "$T/k-ref.strace"
    nren=$(grep -c '^renameat' "$T/k-ref.strace" 2>/dev/null)
    b delete --force "$(cid k-ref)" >/dev/null 2>&1
    mkc k-last -- /usr/bin/brig-probe sleep 60 || true
    if [ "${nren:-0}" -ge 2 ]; then
        killed_at k-last -P "$STATE/$(cid k-last)" -e trace=renameat -e inject=renameat:signal=KILL:when="$nren"
        check_eq "brig create killed at its last state write ($nren)" "$RC" 137
        after_crash k-last "killed after the init was created"
    else
        not_ok "count the state writes of a create" "$(cat "$T/k-ref.strace" 2>/dev/null)"
    fi

    # Killed while storing a compiled seccomp filter in the cache: the temp
    # file it leaves is removed by a later store once it is stale.
    mkc k-sc -- /usr/bin/brig-probe sleep 60 || true
    cfg k-sc '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["swapon"], action: "SCMP_ACT_ERRNO"}]}'
    mkdir -p "$STATE"
    killed_at k-sc -P "$STATE/.seccomp-cache" -e trace=renameat -e inject=renameat:signal=KILL
    check_eq "brig create killed storing its seccomp filter" "$RC" 137
    check_refused "... the container does not exist" "does not exist" 1 b state "$(cid k-sc)"
    tmpf=$(find "$STATE/.seccomp-cache" -name '.*tmp*' 2>/dev/null)
    check "... a temp file was left in the cache (precondition)" test -n "$tmpf"
    [ -n "$tmpf" ] && touch -d '-5 minutes' "$tmpf"
    mkc k-sc2 -- /usr/bin/brig-probe sleep 60 || true
    cfg k-sc2 '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["swapoff"], action: "SCMP_ACT_ERRNO"}]}'
    create_ct k-sc2
    check "... the next create that stores a filter succeeds" test "$RC" = 0
    check "... delete succeeds" b delete --force "$(cid k-sc2)"
    gone k-sc
    gone k-sc2

    # start killed after it released the init, before it removed exec.fifo.
    mkc k-start -- /usr/bin/brig-probe sleep 60 || true
    create_ct k-start
    id=$(cid k-start)
    strace -qq -o /dev/null -P "$STATE/$id" -e trace=unlinkat -e inject=unlinkat:signal=KILL \
        "$BRIG" --root "$STATE" start "$id" >/dev/null 2>&1
    check_eq "brig start killed before removing exec.fifo" "$?" 137
    wait_status "$id" running 5
    check_eq "... state says running" "$(state_field "$id" status)" running
    check_refused "... a second start fails" "cannot start a container that is running" 1 b start "$id"
    check "... delete --force succeeds" b delete --force "$id"
    gone k-start

    # delete killed half-way: the init is dead, the cgroup or state remains.
    for at in rmdir unlinkat; do
        n=k-del-$at
        mkc "$n" -- /usr/bin/brig-probe sleep 60 || continue
        create_ct "$n"
        id=$(cid "$n")
        if [ $at = rmdir ]; then
            p=/sys/fs/cgroup/unified/$CG/$id
        else
            p=$STATE/$id
        fi
        strace -qq -o /dev/null -P "$p" -e trace=$at -e inject=$at:signal=KILL \
            "$BRIG" --root "$STATE" delete --force "$id" >/dev/null 2>&1
        check_eq "brig delete killed at $at" "$?" 137
        st=$(state_field "$id" status)
        check "... state says stopped or the container is gone (\"$st\")" \
            test "$st" = stopped -o ! -e "$STATE/$id/state.json"
        check "... list works" b list
        check "... delete --force succeeds" b delete --force "$id"
        gone "$n"
    done
else
    skip "brig killed at a chosen syscall" "strace is not installed"
fi

# run killed while it waits for the container: the container lives on,
# state says so, delete --force ends it.
mkc k-run -- /usr/bin/brig-probe sleep 60 || true
CLEAN_IDS+=("$(cid k-run)")
: >"$T/k-run.out"
"$BRIG" --root "$STATE" run --bundle "$T/k-run" "$(cid k-run)" </dev/null >"$T/k-run.out" 2>&1 &
rp=$!
n=50
while [ $n -gt 0 ] && ! grep -q '"op":"sleep"' "$T/k-run.out"; do sleep 0.1; n=$((n - 1)); done
kill -9 "$rp"; wait "$rp" 2>/dev/null
check_eq "brig run killed while waiting: state says running" "$(state_field "$(cid k-run)" status)" running
check "... delete --force succeeds" b delete --force "$(cid k-run)"
gone k-run

# ---- 3. paused containers --------------------------------------------------

# paused NAME [no-pidns]: a created-and-started container, paused.
paused() {
    mkc "$1" -- /usr/bin/brig-probe sleep 60 || return 1
    [ "${2:-}" = no-pidns ] && no_pidns "$1"
    create_ct "$1" && start_ct "$1" && b pause "$(cid "$1")" &&
        [ "$(state_field "$(cid "$1")" status)" = paused ]
}

if paused p-del; then
    id=$(cid p-del)
    if ! b delete "$id" >"$T/p-del.derr" 2>&1 && grep -q "paused" "$T/p-del.derr"; then
        ok "delete of a paused container fails and says paused"
    else
        not_ok "delete of a paused container fails and says paused" "$(cat "$T/p-del.derr")"
    fi
    check_eq "... and leaves it paused" "$(state_field "$id" status)" paused
    check "delete --force of a paused container succeeds" b delete --force "$id"
    gone p-del
else
    not_ok "pause a container" "$(cat "$T/p-del.err")"
fi

for mode in pidns no-pidns; do
    n=p-kill-$mode
    if paused "$n" $mode; then
        id=$(cid "$n")
        check "kill KILL of a paused container ($mode) succeeds" b kill "$id" KILL
        check "... it stops" wait_status "$id" stopped 5
        check "... delete succeeds" b delete "$id"
        gone "$n"
    else
        not_ok "pause $n" "$(cat "$T/$n.err")"
    fi
    n=p-all-$mode
    if paused "$n" $mode; then
        id=$(cid "$n")
        check "kill --all KILL of a paused container ($mode) succeeds" b kill --all "$id" KILL
        check "... it stops" wait_status "$id" stopped 5
        check "... delete succeeds" b delete "$id"
        gone "$n"
    else
        not_ok "pause $n" "$(cat "$T/$n.err")"
    fi
done

# ---- 4. what a dead brig may leave in the state root ------------------------
# A create killed before its first state write leaves a directory without
# state.json, maybe a temp file: list skips it, delete --force removes it.
mkdir -p "$STATE/$TAG-half" && chmod 0711 "$STATE/$TAG-half"
printf '{"id":"%s","bund' "$TAG-half" > "$STATE/$TAG-half/.state.json.tmp1"
check "list with a half-created container works" b list
check "... state fails cleanly" eval '! b state "$TAG-half" 2>&1 | grep -qi "segmentation\|abort"'
check "... delete --force removes it" b delete --force "$TAG-half"
check "... it is gone" test ! -e "$STATE/$TAG-half"

mkdir -p "$STATE/$TAG-bad" && chmod 0711 "$STATE/$TAG-bad"
printf '{"id":"%s","bund' "$TAG-bad" > "$STATE/$TAG-bad/state.json"
check "list with a corrupt state.json works" b list
check "... list --format json too" eval 'b list --format json | jq -e . >/dev/null'
check_refused "... state of it fails" "state.json is corrupt" 1 b state "$TAG-bad"
rm -rf "${STATE:?}/$TAG-bad"

# Nothing of ours is left in any hierarchy, not even the shared parent.
left=$(find /sys/fs/cgroup/*/"$CG" -maxdepth 1 -name "$TAG-*" 2>/dev/null | tr '\n' ' ')
check_eq "no cgroup of this test is left under /$CG" "$left" ""
