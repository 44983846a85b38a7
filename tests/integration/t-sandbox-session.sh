#!/bin/bash
# brig sandbox create/exec/ls/rm (docs/sandbox.md): a long-lived sandbox
# seen from outside: each exec's own result and exit status, one exec
# killed at its timeout (with what it detached) while another goes on,
# limits shared by the execs, the audit line, an older brig's running exec left to
# it (a rolling upgrade), and what the host has left
# after rm (no process, cgroup, mount or state).
. "$(dirname "$0")/lib.sh"
it_init

# A busybox rootfs, made in a moment (brig-mkbundle's takes ~20 s here).
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc} && cp /bin/busybox "$ROOTFS/bin/" ||
    bail "cannot make the rootfs"
for a in sh cat echo seq sleep setsid true; do ln -s busybox "$ROOTFS/bin/$a"; done
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate
AUDIT=$T/audit.jsonl
"$BRIG" policy show agent | jq --arg a "$AUDIT" '.audit.path = $a | .limits.pids = 40 | .limits.memory = "64MiB"' \
    > "$T/policy.json"
NAME=s-$TAG
N2=s2-$TAG

sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
# ex [flags] NAME -- CMD...: one exec, the JSON result in $T/out.json, status in $RC.
ex() {
    sbx exec --json "$@" > "$T/out.json" 2> "$T/err.txt"
    RC=$?
}
j() { jq -r "$1" "${2:-$T/out.json}"; }
eq() { check_eq "$1" "$3" "$2"; }
# cgroup dirs of sandbox $1 left in any hierarchy
# a failed test leaves no sandbox behind
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; sbx rm --force "$N2" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
cg_left() { local c; for c in /sys/fs/cgroup/*/brig-sandbox/"$1"; do [ -d "$c" ] && echo "$c"; done; }

# ---- create and ls ----
out=$(sbx create --policy "$T/policy.json" --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME")
eq "create: exit 0, prints the name" "0 $NAME" "$? $out"
sbx create --rootfs "$ROOTFS" --workspace "$WS" "$NAME" > /dev/null 2> "$T/err.txt"
eq "create of an existing name: exit 125" 125 "$?"
check "create of an existing name: says it exists" grep -q "exists" "$T/err.txt"
sbx ls --json > "$T/ls.json"
eq "ls --json: running" running "$(jq -r --arg n "$NAME" '.[] | select(.name == $n) | .status' "$T/ls.json")"
eq "ls --json: the policy's name" "$T/policy.json" "$(jq -r --arg n "$NAME" '.[] | select(.name == $n) | .policy' "$T/ls.json")"
check "ls: a table with the sandbox" bash -c "'$BRIG' sandbox ls --state-root '$SB_STATE' | grep -q '^$NAME *running'"
INIT=$(jq -r --arg n "$NAME" '.[] | select(.name == $n) | .pid' "$T/ls.json")

# ---- 20 execs, each its own result ----
bad=""
ids=""
for i in $(seq 1 20); do
    ex "$NAME" -- sh -c "echo out-$i; echo err-$i >&2; exit $((i % 7))"
    got=$(j '"\(.exit_code) \(.stdout.preview_head)\(.stderr.preview_head)\(.sandbox) \(.error) \(.id)"')
    [ "$RC ${got% *}" = "$((i % 7)) $((i % 7)) out-$i
err-$i
$NAME null" ] || bad+="exec $i: rc $RC $(head -c 300 "$T/out.json"); "
    ids+="${got##* } "
done
eq "20 execs: each exit status and output its own" "" "$bad"
check "an exec's result validates against the schema" python3 -c "
import json, jsonschema
jsonschema.validate(json.load(open('$T/out.json')), json.load(open('$BRIG_SANDBOX_SCHEMA')))"
eq "20 execs: 20 distinct ids" 20 "$(echo $ids | tr ' ' '\n' | sort -u | grep -c '^x-')"
ex "$NAME" -- sh -c 'echo kept > /tmp/f'
ex "$NAME" -- cat /tmp/f
eq "execs share the sandbox (its /tmp tmpfs)" kept "$(j .stdout.preview_head)"
eq "the init is PID 1 inside, the same across execs" "1 brig-init" \
    "$(sbx exec "$NAME" -- sh -c 'cat /proc/1/comm; true' 2>/dev/null | sed 's/^/1 /; s/\.brig-init/brig-init/')"

# ---- the command as the caller gave it (exec'd through brig-init --exec when unsealed) ----
eq "argv as given: argv[0] is \"cat\", not the path found" "cat /proc/self/cmdline " \
    "$(sbx exec "$NAME" -- cat /proc/self/cmdline 2>/dev/null | tr '\0' ' ')"
ex --env "SB_VAR=v-$TAG" --cwd /tmp --stdin "$ROOTFS/bin/busybox" "$NAME" -- sh -c 'echo "$SB_VAR $(pwd) $(wc -c)"'
eq "env, cwd and stdin reach the command" "v-$TAG /tmp $(stat -c %s "$ROOTFS/bin/busybox")" "$(j .stdout.preview_head)"
ex "$NAME" -- no-such-cmd-$TAG
check "a command not found: exit 127, the error names it, nothing ran" \
    bash -c "[ $RC = 127 ] && [ \"\$(jq -r .exit_code '$T/out.json')\" = 127 ] && jq -r .error '$T/out.json' | grep -q 'exec: \"no-such-cmd-$TAG\": executable file not found in \\\$PATH' && [ \"\$(jq -r .ran '$T/out.json')\" = false ]"
printf 'echo x\n' > "$WS/noexec-$TAG" && chmod 0644 "$WS/noexec-$TAG"
ex "$NAME" -- "/workspace/noexec-$TAG"
check "a file not executable: exit 126, Permission denied, nothing ran" \
    bash -c "[ $RC = 126 ] && [ \"\$(jq -r .exit_code '$T/out.json')\" = 126 ] && jq -r .error '$T/out.json' | grep -q 'exec /workspace/noexec-$TAG: Permission denied' && [ \"\$(jq -r .ran '$T/out.json')\" = false ]"
rm -f "$WS/noexec-$TAG"

# ---- flags tighten the sandbox's policy, never loosen; secret env names refused ----
ex --timeout 2h "$NAME" -- true
check "exec --timeout above the policy: exit 125, names both" \
    bash -c "[ $RC = 125 ] && jq -r .error '$T/out.json' | grep -q -- '--timeout 2h is above the policy.s timeouts.wall'"
ex --env "GITHUB_TOKEN=tok-$TAG" "$NAME" -- true
check "exec --env of a secret-looking name: exit 125, refused, value not echoed" \
    bash -c "[ $RC = 125 ] && jq -r .error '$T/out.json' | grep -q 'GITHUB_TOKEN: refused' && ! grep -q 'tok-$TAG' '$T/out.json' '$T/err.txt'"

# ---- several at once: separate results ----
for i in 1 2 3 4; do
    sbx exec --json "$NAME" -- sh -c "sleep 0.$i; echo par-$i" > "$T/par$i.json" 2>/dev/null &
done
wait
bad=""
for i in 1 2 3 4; do [ "$(j .stdout.preview_head "$T/par$i.json")" = "par-$i" ] || bad+="$i "; done
eq "4 concurrent execs: each its own output" "" "$bad"

# ---- a timeout kills that exec and all it detached; another goes on ----
sbx exec --json "$NAME" -- sh -c 'for i in 1 2 3 4 5 6 7 8; do echo tick; sleep 0.25; done' > "$T/long.json" 2>/dev/null &
LONG=$!
ex --timeout 1s "$NAME" -- sh -c 'setsid sh -c "sleep 3071" & (sh -c "sleep 3072 &" &); echo started; sleep 3073'
eq "timed-out exec: exit 124" 124 "$RC"
eq "timed-out exec: timed_out" true "$(j .timed_out)"
eq "timed-out exec: its output kept" started "$(j .stdout.preview_head)"
wait $LONG
eq "the other exec ran to its end" "0 8" "$(j .exit_code "$T/long.json") $(j .stdout.preview_head "$T/long.json" | grep -c tick)"
sleep 0.2
check_not "the setsid'd and double-forked children died with the timed-out exec" pgrep -f "^sleep 307[123]"
ex "$NAME" -- sh -c 'sleep 3074 & echo bg'
sleep 0.2
check_not "what an exec leaves in the background dies when it exits" pgrep -f "^sleep 3074"
eq "the sandbox's init survived all of it" "$INIT" "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .pid')"

# ---- limits are the sandbox's, shared by its execs ----
ex "$NAME" -- sh -c 'for i in $(seq 25); do sleep 2 & done; wait'
eq "pids: 25 processes fit in the sandbox's 40 alone" "0 " "$RC $(grep -o 'fork' "$T/err.txt" "$T/out.json" | head -1)"
sbx exec --json "$NAME" -- sh -c 'for i in $(seq 25); do sleep 3 & done; echo spawned; wait' > "$T/holder.json" 2>/dev/null &
HOLD=$!
for _ in $(seq 50); do [ "$(cat /sys/fs/cgroup/pids/brig-sandbox/"$NAME"/pids.current 2>/dev/null)" -ge 25 ] 2>/dev/null && break; sleep 0.1; done
ex "$NAME" -- sh -c 'n=0; for i in $(seq 25); do sleep 2 & done; echo done'
check "pids: with another exec holding 25, the same 25 fail to fork (the limit is shared)" \
    grep -qi "fork\|resource temporarily" "$T/out.json"
mem=$(for c in /sys/fs/cgroup/memory/brig-sandbox/"$NAME"/x-*; do
          awk '$1 == "hierarchical_memory_limit" {print $2}' "$c/memory.stat"; break; done)
eq "memory: an exec's cgroup is bounded by the sandbox's 64MiB" 67108864 "$mem"
wait $HOLD

# ---- audit: one line per command, never argv[1], env values or output ----
: > "$AUDIT"
ex --env "PLAIN_VAR=envsecret-$TAG" "$NAME" -- sh -c "echo outsecret-$TAG; : argsecret-$TAG"
"$BRIG" sandbox run --state-root "$SB_STATE" --policy "$T/policy.json" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "PLAIN_VAR=envsecret-$TAG" --json -- sh -c "echo outsecret-$TAG; : argsecret-$TAG" > /dev/null 2>&1
eq "audit: one sandbox-exec line with argv[0], exit and byte counts" "sh 0 $((${#TAG} + 11)) $NAME/" \
    "$(jq -r 'select(.op == "sandbox-exec") | "\(.argv0) \(.exit_status) \(.stdout_bytes) \(.id[0:'$((${#NAME} + 1))'])"' "$AUDIT")"
eq "audit: one sandbox-run line" 1 "$(jq -r 'select(.op == "sandbox-run") | .argv0' "$AUDIT" | grep -c '^sh$')"
check_not "audit: no argv[1], env value or output in the log" grep -q "secret-$TAG" "$AUDIT"
ex --timeout 1s "$NAME" -- sleep 30
eq "audit: the limit hit" wall "$(jq -r 'select(.op == "sandbox-exec") | .limits_hit' "$AUDIT" | tail -1)"

# ---- an exec whose brig is killed: its command is an orphan, killed by the next exec or ls ----
"$BRIG" sandbox exec --state-root "$SB_STATE" --json "$NAME" -- sh -c 'setsid sleep 3077 & sleep 3078' > /dev/null 2>&1 &
BPID=$!
for _ in $(seq 300); do pgrep -f "^sleep 3078" >/dev/null && break; sleep 0.1; done   # 30 s: a loaded host
kill -9 "$BPID"
wait "$BPID" 2>/dev/null
sleep 0.2
check "brig exec killed: its command outlives it for now" pgrep -f "^sleep 3078"
eq "brig exec killed: ls reaps the orphaned exec" 0 "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .execs')"
sleep 0.2
check_not "brig exec killed: the orphan and what it detached are dead" pgrep -f "^sleep 307[78]"

# ---- an exec an older brig runs is not an orphan to a newer one ----
# (a rolling upgrade) An older brig made its exec's cgroup in every hierarchy and
# locks it in the sandbox's first one (runtime/linux/cgroup/cgroup_child.c); a newer
# brig's reaper must look for that lock there. Played here by hand: a host process
# in such a cgroup, the lock held in the first hierarchy only.
SB_CG=$(jq -r '.cgroup | fromjson | [.dirs[].path] | join(" ")' "$SB_STATE/$NAME/state.json")
OLD=x-0123456789ab
sleep 3079 & OLD_CMD=$!
for d in $SB_CG; do
    mkdir "$d/$OLD" || bail "cannot play the older exec in $d"
    if [ -e "$d/cpuset.cpus" ]; then cat "$d/cpuset.cpus" > "$d/$OLD/cpuset.cpus"; cat "$d/cpuset.mems" > "$d/$OLD/cpuset.mems"; fi
    echo "$OLD_CMD" > "$d/$OLD/cgroup.procs" || bail "cannot put the older exec's command in $d/$OLD"
done
exec {old_lock}<"${SB_CG%% *}/$OLD"     # its brig's lock: the first hierarchy's directory
flock -x "$old_lock"
ex "$NAME" -- true
eq "an older brig's running exec: a newer exec beside it runs" 0 "$RC"
sbx ls --json > /dev/null
check "... and neither it nor ls takes the older one for an orphan (its command lives)" kill -0 "$OLD_CMD"
eq "... which ls counts" 1 "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .execs')"
exec {old_lock}<&-
kill "$OLD_CMD" 2>/dev/null
wait "$OLD_CMD" 2>/dev/null
for _ in $(seq 100); do [ "$(sbx ls --json | jq -r --arg n "$NAME" '.[] | select(.name == $n) | .execs')" = 0 ] && break
    sleep 0.05; done
check_eq "... once it ended, ls removed its cgroup in every hierarchy" \
    "$(for d in $SB_CG; do [ -d "$d/$OLD" ] && echo "$d/$OLD"; done)" ""

# ---- an exec into a sandbox whose init died ----
sbx create --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$N2" > /dev/null
P2=$(sbx ls --json | jq -r --arg n "$N2" '.[] | select(.name == $n) | .pid')
kill -9 "$P2"
sleep 0.2
eq "ls: a sandbox whose init died is stopped" stopped "$(sbx ls --json | jq -r --arg n "$N2" '.[] | select(.name == $n) | .status')"
ex "$N2" -- true
eq "exec into a dead sandbox: exit 125" 125 "$RC"
check "exec into a dead sandbox: the error says its init is not running" \
    bash -c "jq -r .error '$T/out.json' | grep -q 'init is not running'"
eq "exec into a dead sandbox: nothing ran" false "$(j .ran)"
sbx rm "$N2"
eq "rm of a dead sandbox: exit 0" 0 "$?"

# ---- rm: refused while an exec runs, --force kills all; nothing left ----
echo keep > "$WS/kept"
sbx exec --json "$NAME" -- sh -c 'setsid sleep 3075 & sleep 3076' > "$T/victim.json" 2>/dev/null &
VICTIM=$!
for _ in $(seq 300); do pgrep -f "^sleep 3076" >/dev/null && break; sleep 0.1; done   # 30 s: a loaded host
sbx rm "$NAME" 2> "$T/err.txt"
eq "rm while an exec runs: exit 125" 125 "$?"
check "rm while an exec runs: says so, names --force" grep -q "still running (rm --force" "$T/err.txt"
sbx rm --force "$NAME"
eq "rm --force: exit 0" 0 "$?"
wait $VICTIM
eq "the exec killed by rm reports signal 9" 9 "$(j .signal "$T/victim.json")"
sleep 0.2
eq "rm: no process of the sandboxes left" "" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')"
eq "rm: no cgroup left" "" "$(cg_left "$NAME")$(cg_left "$N2")"
eq "rm: no state left" "" "$(ls -A "$SB_STATE" | grep -v '^.seccomp-cache$')"
check_not "rm: no mount of the rootfs left on the host" grep -q "$ROOTFS" /proc/self/mountinfo
eq "rm: the workspace is kept" keep "$(cat "$WS/kept")"
eq "ls after rm: empty" "[]" "$(sbx ls --json | jq -c .)"

ex "$NAME" -- true
eq "exec into a removed sandbox: exit 125" 125 "$RC"
check "exec into a removed sandbox: no such sandbox" bash -c "jq -r .error '$T/out.json' | grep -q 'no such sandbox'"
sbx rm "$NAME" 2> "$T/err.txt"
eq "rm of a removed sandbox: exit 125" 125 "$?"

