#!/bin/bash
# brig sandbox run (docs/sandbox.md): the one-shot, seen from outside: the
# exit status and JSON result, what the command saw, and what the host has
# left afterwards (no process, state dir or cgroup).
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_SANDBOX_SCHEMA:?BRIG_SANDBOX_SCHEMA must point at sandbox/result.schema.json}"

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/b" >/dev/null 2>&1 ||
    bail "brig-mkbundle failed"
ROOTFS=$T/b/rootfs
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate

# sb [flags] -- CMD...: one sandbox run with the test's rootfs, workspace,
# private state root and tag; the JSON result in $T/out.json, status in $RC.
sb() {
    timeout -k 5 120 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --env "BRIG_IT_TAG=$TAG-sb" --json "$@" > "$T/out.json" 2> "$T/err.txt"
    RC=$?
    jq -r '.id // empty' "$T/out.json" >> "$T/ids" 2>/dev/null
}
j() { jq -r "$1" "$T/out.json"; }
# eq DESC WANT GOT
eq() { check_eq "$1" "$3" "$2"; }

# nothing of any sandbox is left on the host
sb_clean() {
    local pids left=""
    sleep 0.2
    pids=$(tagged_pids "$TAG-sb" | tr '\n' ' ')
    [ -z "$pids" ] || left+="processes: $pids; "
    local st; st=$(ls -A "$SB_STATE" 2>/dev/null | grep -v "^.seccomp-cache$")
    [ -z "$st" ] || left+="state: $st; "
    local c
    # this test's sandboxes only: other runs on the host may be live
    for c in /sys/fs/cgroup/*/brig-sandbox/sb-*; do
        [ -d "$c" ] && grep -qxF "${c##*/}" "$T/ids" 2>/dev/null && left+="cgroup: $c; "
    done
    check "$1: nothing left on the host" test -z "$left" || diag "$left"
}

validate() {
    python3 - "$BRIG_SANDBOX_SCHEMA" "$T/out.json" <<'EOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validate(json.load(open(sys.argv[2])), schema)
EOF
}

# ---- refusals: exit 125, nothing runs ----
# the default rootfs cannot be kept (a file, not a dir): the error names both ways out
BRIG_ROOTFS_DIR=/dev/null "$BRIG" sandbox run --state-root "$SB_STATE" --json -- true > "$T/out.json" 2>&1
eq "missing --rootfs: exit 125" 125 "$?"
check "missing --rootfs: the error names the flag and brig-rootfs" \
    bash -c "jq -r .error '$T/out.json' | grep -q -- '--rootfs' && jq -r .error '$T/out.json' | grep -q brig-rootfs"
check "missing --rootfs: the result validates" validate

sb --timeout 2h -- true
eq "--timeout above timeouts.wall: exit 125" 125 "$RC"
check "--timeout above the policy: names both" \
    bash -c "jq -r .error '$T/out.json' | grep -q -- '--timeout 2h' && jq -r .error '$T/out.json' | grep -q timeouts.wall"
sb --output-limit 1GiB -- true
eq "--output-limit above output.maxBytes: exit 125" 125 "$RC"

touch "$WS/ran-marker-absent"
sb --env GITHUB_TOKEN=ghp_supersecretvalue -- sh -c 'rm /workspace/ran-marker-absent'
eq "secret-looking --env: exit 125" 125 "$RC"
check "secret-looking --env: named in the error" grep -q GITHUB_TOKEN "$T/out.json"
check_not "secret-looking --env: the value is never echoed" grep -q supersecretvalue "$T/out.json" "$T/err.txt"
check "secret-looking --env: nothing ran" test -e "$WS/ran-marker-absent"
eq "secret-looking --env: ran is false" false "$(j .ran)"
sb_clean "refusals"

# ---- a normal run ----
sb -- sh -c 'echo hi; echo oops >&2; exit 3'
eq "exit code mirrored" 3 "$RC"
eq "exit_code in the result" 3 "$(j .exit_code)"
eq "stdout preview" "hi" "$(j .stdout.preview_head)"
eq "stderr preview" "oops" "$(j .stderr.preview_head)"
eq "stdout bytes" 3 "$(j .stdout.bytes)"
eq "policy is agent by default" agent "$(j .policy)"
check "the result validates against sandbox/result.schema.json" validate
check "wall_ms and memory_peak_bytes are numbers" \
    bash -c "jq -e '(.wall_ms|type==\"number\") and (.memory_peak_bytes|type==\"number\")' '$T/out.json'"

# the shared parent /brig-sandbox (v1/hybrid hosts: sandbox/sandbox_cgroup.c) is made once,
# unmarked, and kept: a run's delete removes only its own leaf (the parent was made and
# removed by every run while the second listing of /sys/fs/cgroup read nothing)
if [ "$(stat -f -c %T /sys/fs/cgroup)" = tmpfs ]; then
    missing=""
    for h in /sys/fs/cgroup/*/; do
        case $(stat -f -c %T "$h") in cgroupfs | cgroup2fs) [ -d "$h/brig-sandbox" ] || missing+="$h " ;; esac
    done
    eq "v1: /brig-sandbox is kept in every hierarchy after a run" "" "$missing"
    check_not "v1: /brig-sandbox carries no parent mark (no delete removes it)" python3 -c \
        'import os,sys; os.getxattr("/sys/fs/cgroup/pids/brig-sandbox", "trusted.brig.parent")'
fi

sb -- sh -c 'kill -KILL $$'
eq "signal mirrored: exit 137" 137 "$RC"
eq "signal in the result" 9 "$(j .signal)"
eq "no exit_code after a signal" null "$(j .exit_code)"

# a policy with an init of its own (pi: docker-init's path) keeps the sealed
# re-exec, which starts over: brig-init is still found beside brig
sb --policy pi -- sh -c 'echo pi-ran'
eq "policy pi (the sealed path): exit 0" 0 "$RC"
eq "policy pi: the command ran" "pi-ran" "$(j .stdout.preview_head)"

# ---- environment ----
export BRIG_CALLER_LEAK=leakvalue
sb --env FOO=bar -- env
unset BRIG_CALLER_LEAK
check_not "caller's environment does not leak in" grep -q leakvalue "$T/out.json"
check "--env reaches the command" bash -c "jq -r .stdout.preview_head '$T/out.json' | grep -qx FOO=bar"
check "PATH from the defaults" bash -c "jq -r .stdout.preview_head '$T/out.json' | grep -q '^PATH=/usr/local/sbin'"

# ---- filesystem and network ----
rm -f "$WS/out"
sb -- sh -c 'touch /rootfile && echo wrote-root; echo inside > /workspace/out; cat /proc/net/dev'
check_not "write to / fails (read-only rootfs)" bash -c "jq -r .stdout.preview_head '$T/out.json' | grep -q wrote-root"
check_not "nothing written into the host rootfs" test -e "$ROOTFS/rootfile"
eq "/workspace is writable, seen on the host" inside "$(cat "$WS/out" 2>/dev/null)"
eq "only lo inside" "lo" \
    "$(j .stdout.preview_head | awk -F: 'NR>2 && /:/ {gsub(/ /,"",$1); print $1}' | tr '\n' ' ' | sed 's/ $//')"

# ---- timeouts ----
sb --timeout 2s -- sleep 600
eq "wall timeout: exit 124" 124 "$RC"
eq "wall timeout: timed_out" true "$(j .timed_out)"
eq "wall timeout: not idle" false "$(j .idle_timed_out)"
w=$(j .wall_ms)
check "wall timeout: fired at ~2s (wall_ms=$w)" test "$w" -ge 1900 -a "$w" -lt 6000
sb_clean "wall timeout"

sb --idle-timeout 2s -- sh -c 'echo once; sleep 600'
eq "idle timeout: exit 124" 124 "$RC"
eq "idle timeout: idle_timed_out" true "$(j .idle_timed_out)"
eq "idle timeout: the output before it is kept" once "$(j .stdout.preview_head)"
sb_clean "idle timeout"

sb --idle-timeout 2s -- sh -c 'for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.5; done'
eq "printing every 0.5s under a 2s idle limit: not killed" 0 "$RC"
eq "printing every 0.5s: idle_timed_out false" false "$(j .idle_timed_out)"

# Streamed output (no --json) to a reader that never reads: brig stops copying to it,
# the timeout still ends the command on time (it waited on the stalled writes until
# the reader went: 8 s for a 2 s timeout before).
mkfifo "$T/stall.fifo"
( exec 3<"$T/stall.fifo"; sleep 8 ) &
stall_reader=$!
s0=$(date +%s%N)
timeout -k 5 60 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "BRIG_IT_TAG=$TAG-sb" --timeout 2s -- sh -c 'printf "%40000s\n" a; sleep 0.3; while :; do printf "%65000s\n" b; done' \
    > "$T/stall.fifo" 2>/dev/null
RC=$?
took=$(( ($(date +%s%N) - s0) / 1000000 ))
kill "$stall_reader" 2>/dev/null
eq "streamed to a stalled reader: the wall timeout fires (exit 124)" 124 "$RC"
check "... on time, not when the reader goes (${took} ms; the reader holds 8 s)" test "$took" -lt 6000
sb_clean "a stalled reader"
# One that takes 4 KiB every half second keeps the copy going: the copy stops at the
# wall limit (before, a 2 s timeout fired after the whole 64 KiB read was copied: 8 s).
s0=$(date +%s%N)
{ timeout -k 5 60 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "BRIG_IT_TAG=$TAG-sb" --timeout 2s -- sh -c 'while :; do printf "%65000s\n" b; done' 2>/dev/null
  date +%s%N > "$T/slow.end"; } |
    { for i in $(seq 40); do [ "$(dd bs=4096 count=1 2>/dev/null | wc -c)" -gt 0 ] || break
          [ -e "$T/slow.end" ] || sleep 0.5; done
      cat > /dev/null; }
took=$(( ($(cat "$T/slow.end") - s0) / 1000000 ))
check "streamed to a slow reader: the wall timeout ends the run on time (${took} ms)" test "$took" -lt 6000
sb_clean "a slow reader"

# A timeout kills what detached too.
sb --timeout 2s -- sh -c 'setsid sh -c "sleep 3171" & (sleep 3172 &) ; sleep 600'
eq "timeout with detached children: exit 124" 124 "$RC"
sb_clean "timeout with setsid and double-forked children"

# ---- a fork bomb is stopped by the policy's pids limit, and cleaned up ----
sb --timeout 5s -- sh -c 'f() { f | f & }; f; sleep 2; echo alive'
check "fork bomb: stopped by the pids limit (fork fails inside)" grep -q "can't fork" "$T/out.json"
eq "fork bomb: the sandbox's own command still finished" alive "$(j .stdout.preview_head)"
sb_clean "fork bomb"

# ---- daemons die with the command ----
sb -- sh -c 'sleep 3173 & setsid sh -c "sleep 3174 &" ; (sleep 3175 &); echo started'
eq "command with daemons: exit 0" 0 "$RC"
eq "command with daemons: its output" started "$(j .stdout.preview_head)"
sb_clean "background, setsid and double-forked daemons"

# ---- big output: bounded in brig, exact counts ----
/usr/bin/time -f %M -o "$T/rss" "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" \
    --workspace "$WS" --json -- sh -c 'yes | head -c 104857600; yes e | head -c 1000 >&2' > "$T/out.json" 2>/dev/null
eq "100 MiB of output: exit 0" 0 "$?"
eq "100 MiB of output: exact stdout bytes" 104857600 "$(j .stdout.bytes)"
eq "stderr bytes" 1000 "$(j .stderr.bytes)"
eq "100 MiB of output: truncated" true "$(j .stdout.truncated)"
eq "stderr under the limit: not truncated" false "$(j .stderr.truncated)"
hl=$(j '.stdout.preview_head | length'); tl=$(j '.stdout.preview_tail | length')
check "previews within the 1 MiB limit (head $hl + tail $tl)" test $((hl + tl)) -le 1048576 -a "$hl" -gt 0 -a "$tl" -gt 0
rss=$(cat "$T/rss")
diag "brig max RSS for 100 MiB of output: ${rss} KiB"
# 100 MiB went through: brig's RSS stays far below it (ASan's shadow memory
# and allocator double a build's RSS: the sanitizer build gets 48 MiB).
rss_max=16384; [ -n "${ASAN_OPTIONS:-}" ] && rss_max=49152
check "brig's memory stays bounded (max RSS ${rss} KiB < $((rss_max / 1024)) MiB)" test "$rss" -lt "$rss_max"
check "big result validates" validate

# UTF-8 cut and binary marking
sb --output-limit 10 -- sh -c 'printf "aaaa\303\251bbbbbbbbbbbbbbb\303\251cc"'
check "a UTF-8 character is never cut in half" bash -c "jq -e '.stdout.binary == false' '$T/out.json'"
eq "head cut on a character boundary" aaaa "$(j .stdout.preview_head)"
sb -- sh -c 'printf "a\000b\377"'
eq "NUL and invalid UTF-8 mark the stream binary" true "$(j .stdout.binary)"
check "binary result validates" validate

# ---- streaming without --json ----
out=$("$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" -- sh -c 'echo live; exit 4' 2>"$T/err.txt")
eq "without --json: exit mirrored" 4 "$?"
eq "without --json: output streamed" live "$out"
check "without --json: one summary line on stderr" grep -q "brig sandbox sb-.*exit 4" "$T/err.txt"

sb_clean "all runs"

# ---- concurrent runs: separate results, nothing left ----
for i in $(seq 1 10); do
    ( "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
        --env "BRIG_IT_TAG=$TAG-sb" --json -- sh -c "echo run$i; exit $i" > "$T/c$i.json" 2>/dev/null
      echo $? > "$T/c$i.rc" ) &
done
wait
bad=""
for i in $(seq 1 10); do
    [ "$(cat "$T/c$i.rc")" = "$i" ] && [ "$(jq -r .stdout.preview_head "$T/c$i.json")" = "run$i" ] ||
        bad+="$i:$(cat "$T/c$i.rc"):$(jq -r .error "$T/c$i.json") "
done
check "10 concurrent runs: each its own exit code and output" test -z "$bad" || diag "$bad"
sb_clean "10 concurrent runs"

# ---- a command the rootfs lacks: 127, one not executable: 126, as a shell says ----
sb -- nosuchcommand --flag
eq "command not in the rootfs: exit 127 before anything runs" 127 "$RC"
eq "command not in the rootfs: exit_code and exit_status 127" "127 127" "$(j '"\(.exit_code) \(.exit_status)"')"
check "command not in the rootfs: named in the error" bash -c "jq -r .error '$T/out.json' | grep -q 'nosuchcommand: not found in the rootfs.*brig-rootfs from-host --with sh,nosuchcommand DIR'"
eq "command not in the rootfs: ran is false" false "$(j .ran)"
eq "command not in the rootfs: said on stderr as a shell would" "brig sandbox: nosuchcommand: not found" \
    "$(j .stderr.preview_head)"
check "command not in the rootfs: the result validates" validate
sb -- /etc/passwd
eq "a file without x in the rootfs: exit 126, ran false" "126 126 false" "$(j '"\(.exit_status) \(.exit_code) \(.ran)"')"
printf '#!/no/such/interpreter\necho hi\n' > "$WS/bad-interp.sh" && chmod 0755 "$WS/bad-interp.sh"
sb -- /workspace/bad-interp.sh
eq "a script whose #! interpreter is missing (brig-init's execve): exit 127, ran false" "127 127 false" \
    "$(j '"\(.exit_status) \(.exit_code) \(.ran)"')"
check "... brig-init's message on stderr, the error says it never ran" bash -c \
    "jq -r .stderr.preview_head '$T/out.json' | grep -q 'brig-init: /workspace/bad-interp.sh: No such file or directory' &&
     jq -r .error '$T/out.json' | grep -q 'never ran'"
sb -- sh -c 'echo x >&2; exit 127'
eq "a command that itself exits 127: ran true, no error" "127 true null" "$(j '"\(.exit_code) \(.ran) \(.error)"')"
timeout -k 5 60 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" -- nosuchcommand \
    > "$T/plain.out" 2> "$T/plain.err"
eq "without --json: exit 127" 127 "$?"
check "without --json: the shell-like line on stderr, then the summary" \
    bash -c "head -1 '$T/plain.err' | grep -qx 'brig sandbox: nosuchcommand: not found' && tail -1 '$T/plain.err' | grep -q 'exit 127 (not found)'"
rm -f "$WS/bad-interp.sh"

# ---- a policy file: its own wall bound, memory limit and audit log ----
AUDIT=$T/audit.jsonl
"$BRIG" policy show agent | jq --arg a "$AUDIT" '.audit.path = $a | .timeouts.wall = "2s" | .limits.memory = "32MiB"' \
    > "$T/policy.json"
sb --policy "$T/policy.json" -- sh -c 'echo before; sleep 600'
eq "the policy's timeouts.wall applies without a flag: exit 124" 124 "$RC"
eq "the policy's timeouts.wall: timed_out" true "$(j .timed_out)"
check "one audit line for the run: argv[0] only, the limit hit, byte counts" \
    jq -e --arg id "$(j .id)" 'select(.op == "sandbox-run" and .id == $id) |
        .argv0 == "sh" and .limits_hit == "wall" and .stdout_bytes == 7 and .exit_status == 124' "$AUDIT"
check_not "the audit log holds no argv beyond argv[0] and no output" grep -q "sleep 600\|before" "$AUDIT"
# the same limit with room on the clock: a loaded machine must not turn the OOM into a timeout
jq '.timeouts.wall = "60s"' "$T/policy.json" > "$T/policy-oom.json"
sb --policy "$T/policy-oom.json" -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived'
eq "memory exhaustion: oom_killed" true "$(j .oom_killed)"
eq "memory exhaustion: the command died of SIGKILL (exit 137)" 137 "$RC"
check "memory_peak_bytes at the limit" bash -c "jq -e '.memory_peak_bytes >= 30000000' '$T/out.json'"
sb_clean "policy file runs"

# ---- brig itself killed: the sandbox's processes die with it ----
"$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "BRIG_IT_TAG=$TAG-k9" -- sh -c 'setsid sleep 3176 & sleep 3177' >/dev/null 2>&1 &
bpid=$!
for _ in $(seq 50); do [ -n "$(tagged_pids "$TAG-k9")" ] && break; sleep 0.1; done
check "brig killed: the command was running" test -n "$(tagged_pids "$TAG-k9")"
kill -9 "$bpid"; wait "$bpid" 2>/dev/null
sleep 0.5
check "brig killed by SIGKILL: no process of its sandbox remains (brig-init's parent-death signal)" \
    test -z "$(tagged_pids "$TAG-k9")"
left=$(ls -A "$SB_STATE" | grep '^sb-')
check "brig killed: its stopped state is left (the test is not vacuous)" test -n "$left"
sb -- true
eq "the next run succeeds" 0 "$RC"
sb_clean "the next run removed the stale state and cgroup of the killed one"

# ---- the reader of brig's live output goes away: brig survives, the capture goes on ----
"$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
    --timeout 2s -- sh -c 'yes | head -c 5000000; echo done >&2' 2>"$T/err.txt" | head -c 10 >/dev/null
eq "reader gone (SIGPIPE ignored): brig reports the command's own exit" 0 "${PIPESTATUS[0]}"
check "reader gone: the summary counts every byte" grep -q "stdout 5000000 B" "$T/err.txt"
sb_clean "reader gone"

# ---- signals sent to brig reach the command ----
"$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" --json \
    -- sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.1; done' > "$T/sig.json" 2>/dev/null &
bpid=$!
sleep 1.5
kill -TERM "$bpid"
wait "$bpid"
eq "SIGTERM to brig is forwarded: the command's trap ran and its exit is mirrored" 7 "$?"
check "SIGTERM forwarded: the command saw it" grep -q got-term "$T/sig.json"
sb_clean "signal forwarding"
