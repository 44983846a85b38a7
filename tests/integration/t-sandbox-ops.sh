#!/bin/bash
# brig sandbox run, operations (docs/sandbox.md): --tty (a pty of the
# sandbox's own, held by brig, streamed live or into stdout's preview), 50
# concurrent runs with separate results and nothing left, and the next run
# healing what brigs killed at any point of their run left behind.
. "$(dirname "$0")/lib.sh"
it_init
command -v script >/dev/null || skip_all "script (util-linux) is not installed"

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/b" >/dev/null 2>&1 ||
    bail "brig-mkbundle failed"
ROOTFS=$T/b/rootfs
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate

sbrun() {
    timeout -k 5 120 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --env "BRIG_IT_TAG=$TAG-sb" "$@"
}
sb() { sbrun --json "$@" > "$T/out.json" 2> "$T/err.txt"; RC=$?; }
j() { jq -r "$1" "$T/out.json"; }
eq() { check_eq "$1" "$3" "$2"; }

# nothing of any sandbox of this test is left: process, state, owner lock,
# cgroup leaf, mount
# tagged_pids of lib.sh in one grep (a fork per process is slow on a loaded host)
fast_tagged() { grep -lsz "^BRIG_IT_TAG=$1\$" /proc/[0-9]*/environ | cut -d/ -f3; }
# the cgroup leaves of this test's sandboxes still there
our_cgroups() {
    printf '%s\n' "${IDS[@]}" | grep . > "$T/ids" || return 0
    ls -d /sys/fs/cgroup/*/brig-sandbox/sb-* /sys/fs/cgroup/brig-sandbox/sb-* 2>/dev/null | grep -F -f "$T/ids"
}
sb_clean() {
    local left="" pids st c
    sleep 0.2
    pids=$(fast_tagged "$TAG-.*" | tr '\n' ' ')
    [ -z "$pids" ] || left+="processes: $pids; "
    st=$(ls -A "$SB_STATE" 2>/dev/null | grep -v '^.seccomp-cache$' | tr '\n' ' ')
    [ -z "$st" ] || left+="state: $st; "
    c=$(our_cgroups | tr '\n' ' ')
    [ -z "$c" ] || left+="cgroups: $c; "
    [ -z "$(mounts_under "$T")" ] || left+="mounts: $(mounts_under "$T" | tr '\n' ' '); "
    check "$1: nothing left on the host" test -z "$left" || diag "$left"
}
IDS=()

# ---- --tty with --json: the terminal's output is stdout's preview ----
sb --tty -- sh -c 'tty; test -t 0 && test -t 1 && test -t 2 && echo stdio-tty; stty size; read x; echo read=$?; echo to-err >&2; exit 5'
IDS+=("$(j .id)")
eq "--tty --json: exit mirrored" 5 "$RC"
out=$(j .stdout.preview_head)
check "--tty: stdio is a pty of the sandbox's own devpts" bash -c "printf '%s\n' '$out' | head -n 2 | tr '\n' ' ' | grep -qx '/dev/pts/0 stdio-tty '"
check "--tty without a terminal to copy: 24 rows, 80 columns" bash -c "printf '%s\n' '$out' | grep -qx '24 80'"
check "--tty: stdin reads end of file at once (not an idle wait)" bash -c "printf '%s\n' '$out' | grep -qx 'read=1'"
check "--tty: stderr goes to the terminal, into stdout's preview" bash -c "printf '%s\n' '$out' | grep -qx 'to-err'"
eq "--tty: the stderr stream is empty" 0 "$(j .stderr.bytes)"
check_not "--tty: no \\r in the preview (ONLCR off)" bash -c "j() { jq -r \"\$1\" '$T/out.json'; }; j .stdout.preview_head | grep -q $'\r'"
eq "--tty: exact byte count" "$(printf '%s\n' "$out" | wc -c)" "$(j .stdout.bytes)"

sb --tty --stdin /dev/null -- true
eq "--tty with --stdin: refused, exit 125" 125 "$RC"
check "--tty with --stdin: the error names both" bash -c "jq -r .error '$T/out.json' | grep -q -- '--stdin /dev/null: not with --tty'"

sb --tty --timeout 2s -- sh -c 'echo once; sleep 600'
eq "--tty: the wall clock still runs (exit 124)" 124 "$RC"
eq "--tty: the output before it kept" once "$(j .stdout.preview_head)"
IDS+=("$(j .id)")

# ---- --tty under a terminal, no --json: streamed live, summary on stderr ----
# script(1) gives brig a terminal on stdin, stdout and stderr (the typescript
# is its stdout here); the command prints, then sleeps: the first line must
# be out while it still runs.
script -qefc "$(printf '%q ' "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" --tty -- sh -c 'stty size; echo first-line; sleep 3; echo last-line; exit 6')" \
    /dev/null > "$T/live.txt" 2>&1 < /dev/null &
spid=$!
live=no
for _ in $(seq 25); do grep -q first-line "$T/live.txt" 2>/dev/null && { live=yes; break; }; sleep 0.1; done
check_eq "--tty under a terminal: output streamed while the command runs" "$live" yes
check_not "--tty: the last line not yet (the command is still sleeping)" grep -q last-line "$T/live.txt"
wait "$spid"
eq "--tty under script: exit mirrored" 6 "$?"
check "--tty: the last line came too" grep -q last-line "$T/live.txt"
check "--tty: one summary line on stderr" grep -q "brig sandbox sb-.*exit 6 in .*ms; stdout .* B, stderr 0 B" "$T/live.txt"
# no --tty, but a terminal on stdout and no --json: streams live as well
script -qefc "$(printf '%q ' "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" -- sh -c 'test -t 1 || echo stdout-is-a-pipe; echo plain-live')" \
    /dev/null > "$T/live2.txt" 2>&1 < /dev/null
check "a terminal on stdout, no --tty: streamed (the command still gets a pipe)" \
    bash -c "grep -q stdout-is-a-pipe '$T/live2.txt' && grep -q plain-live '$T/live2.txt'"
sb_clean "--tty runs"

# ---- 50 concurrent runs: each its own token, exit and id; nothing left ----
N=50
start=$(date +%s%N)
for i in $(seq 1 $N); do
    ( sbrun --json -- sh -c "echo token-$i-$$; echo err-$i >&2; exit $((i % 100))" > "$T/c$i.json" 2>"$T/c$i.err"
      echo $? > "$T/c$i.rc" ) &
done
wait
ms=$((($(date +%s%N) - start) / 1000000))
diag "$N concurrent sandbox runs: ${ms} ms"
# one jq over all results (one per run is slow on a loaded host): the runs
# whose result is not their own token, exit and status
files=(); for i in $(seq 1 $N); do files+=("$T/c$i.json"); done
bad=$(jq -rs --arg p "$$" 'to_entries[] | (.key + 1) as $i | .value |
        select(.stdout.preview_head != "token-\($i)-\($p)\n" or .stderr.preview_head != "err-\($i)\n" or
               .exit_code != ($i % 100) or .exit_status != ($i % 100) or .error != null) | "\($i):\(.error)"' "${files[@]}" 2>&1)
for i in $(seq 1 $N); do [ "$(cat "$T/c$i.rc")" = $((i % 100)) ] || bad+=" rc$i:$(cat "$T/c$i.rc")"; done
check "$N concurrent runs: each its own token on stdout and stderr, exit code, no error" test -z "$bad" ||
    diag "$bad"
mapfile -t ids < <(jq -r .id "${files[@]}")
IDS+=("${ids[@]}")
eq "$N concurrent runs: $N distinct ids" $N "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)"
sb_clean "$N concurrent runs"

# ---- brigs killed at any point: the next run removes what they left ----
# SIGKILL after 0..150 ms lands in the policy load, the create (state
# "creating", init cloned or not), the start or the run. Whatever it leaves
# (state, cgroup leaf, owner lock, an init still alive) is the next run's
# to remove: only the runs of dead brigs are touched.
"$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" --timeout 60s \
    --env "BRIG_IT_TAG=$TAG-live" -- sh -c 'sleep 600' > /dev/null 2>&1 &
live_pid=$!
for _ in $(seq 50); do [ -n "$(ls "$SB_STATE" | grep '^sb-')" ] && break; sleep 0.1; done
live_id=$(ls "$SB_STATE" | grep '^sb-' | head -n 1)
for d in 0.00 0.02 0.05 0.08 0.12 0.3; do
    "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --env "BRIG_IT_TAG=$TAG-k9" -- sh -c 'sleep 3178' > /dev/null 2>&1 &
    bpid=$!
    sleep "$d"
    kill -9 "$bpid" 2>/dev/null
    wait "$bpid" 2>/dev/null
done
left=$(ls -A "$SB_STATE" | grep -v "^.seccomp-cache$\|$live_id" | tr '\n' ' ')
diag "left by killed brigs: $left"
check "killed brigs left something behind (the test is not vacuous)" test -n "$left"
for id in $(ls -A "$SB_STATE" | sed -n 's/^\.owner-//p; /^sb-/p' | sort -u); do
    [ "$id" = "$live_id" ] || IDS+=("$id")
done
# an init that outlived its brig (killed before brig-init's parent-death
# prctl): a host process planted in one dead sandbox's cgroup stands in
dead=$(ls "$SB_STATE" | grep '^sb-' | grep -v "$live_id" | head -n 1)
planted=""
if [ -n "$dead" ] && [ -d "/sys/fs/cgroup/pids/brig-sandbox/$dead" ]; then
    BRIG_IT_TAG=$TAG-k9 sleep 3179 &
    planted=$!
    for c in /sys/fs/cgroup/*/brig-sandbox/"$dead"; do echo "$planted" > "$c/cgroup.procs"; done
    # and a helper of its (the workspace watcher, the egress proxy) in a
    # cgroup below the leaf
    BRIG_IT_TAG=$TAG-k9 sleep 3180 &
    planted_helper=$!
    for c in /sys/fs/cgroup/*/brig-sandbox/"$dead"; do
        mkdir -p "$c/brig-wswatch" && echo "$planted_helper" > "$c/brig-wswatch/cgroup.procs"
    done
fi
sb -- true
eq "the next run succeeds" 0 "$RC"
left=$(ls -A "$SB_STATE" | grep -v "^.seccomp-cache$\|$live_id" | tr '\n' ' ')
check "the next run removed every state dir and owner lock of the dead brigs" test -z "$left" || diag "$left"
cg=$(our_cgroups | grep -v "$live_id" | tr '\n' ' ')
check "the next run removed their cgroup leaves" test -z "$cg" || diag "$cg"
check "no process of a dead sandbox remains" test -z "$(fast_tagged "$TAG-k9")"
if [ -n "$planted" ]; then
    for _ in $(seq 50); do kill -0 "$planted" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$planted" 2>/dev/null && kill -9 "$planted"    # the test's own, never left running
    wait "$planted" 2>/dev/null
    eq "a process in a dead sandbox's cgroup is killed (SIGKILL)" 137 "$?"
    for _ in $(seq 50); do kill -0 "$planted_helper" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$planted_helper" 2>/dev/null && kill -9 "$planted_helper"
    wait "$planted_helper" 2>/dev/null
    eq "... and one in a cgroup below its leaf (a helper's)" 137 "$?"
else
    skip "a process in a dead sandbox's cgroup is killed" "no stale pids cgroup to plant one in"
    skip "... and one in a cgroup below its leaf (a helper's)" "no stale pids cgroup to plant one in"
fi
check "a live brig's running sandbox is left alone" test -d "$SB_STATE/$live_id"
check "its command still runs" test -n "$(fast_tagged "$TAG-live")"
kill -TERM "$live_pid"
wait "$live_pid"
eq "the live sandbox, signalled, ends as its command does (143)" 143 "$?"
IDS+=("$live_id")
sb_clean "killed brigs"
