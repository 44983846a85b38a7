#!/bin/bash
# brig sandbox as its users meet it (docs/sandbox.md): a command not found
# or not executable is exit 127/126 with a result, in exec from brig's own
# binary and sealed alike; --events lines arrive while the command runs
# (read before it may exit); the summary line is a line of its own; an
# unknown flag points at --help.
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_SANDBOX_SCHEMA:?BRIG_SANDBOX_SCHEMA must point at sandbox/result.schema.json}"
EVENTS_SCHEMA=$(dirname "$BRIG_SANDBOX_SCHEMA")/events.schema.json

# A busybox rootfs, made in a moment.
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,var/tmp,workspace,etc,run} && cp /bin/busybox "$ROOTFS/bin/" ||
    bail "cannot make the rootfs"
for a in sh cat echo printf sleep true; do ln -s busybox "$ROOTFS/bin/$a"; done
WS=$T/ws
# its own small filesystem: agent's workspace bound holds without staging,
# so the host's fifo in it is the command's (a staged workspace shows no
# host fifo, nor files the host adds while a command runs: docs/policy.md)
mkdir -p "$WS" && mount -t tmpfs -o size=64m,mode=0755 brig-test "$WS" && chown 1000:1000 "$WS"
SB_STATE=$T/sbstate
U=u-$TAG    # exec from brig's own binary (agent: brig-init --exec)
S=s-$TAG    # sealed (pi: an init path of its own)

sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$U" >/dev/null 2>&1; sbx rm --force "$S" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
j() { jq -r "$1" "$T/out.json"; }
validate() {
    python3 - "$BRIG_SANDBOX_SCHEMA" "$T/out.json" <<'EOF'
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
EOF
}

sbx create --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$U" >/dev/null
check_eq "create (agent)" "$?" 0
sbx create --policy pi --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$S" >/dev/null
check_eq "create (pi, sealed exec)" "$?" 0

# ---- 127 and 126 in exec: unsealed and sealed ----
printf 'echo x\n' > "$WS/noexec" && chmod 0644 "$WS/noexec"
printf '#!/no/such/interpreter\necho x\n' > "$WS/badinterp" && chmod 0755 "$WS/badinterp"
for sb in "$U" "$S"; do
    mode=unsealed; [ "$sb" = "$S" ] && mode=sealed
    for c in "no-such-cmd|127" "/workspace/missing|127" "/workspace/noexec|126" "/workspace/badinterp|127"; do
        cmd=${c%|*} want=${c#*|}
        sbx exec --json "$sb" -- "$cmd" > "$T/out.json" 2> "$T/err.txt"
        rc=$?
        got="$rc $(j '"\(.exit_code) \(.exit_status) \(.ran) \(.error != null)"')"
        check_eq "exec ($mode) $cmd: exit $want, exit_code $want, ran false, error set" "$got" "$want $want $want false true"
        check "exec ($mode) $cmd: stderr says it (as a shell would)" \
            bash -c "jq -r .stderr.preview_head '$T/out.json' | grep -q '$cmd: '"
    done
    validate || not_ok "exec ($mode): the result validates"
    sbx exec --json "$sb" -- sh -c 'exit 127' > "$T/out.json" 2>/dev/null
    check_eq "exec ($mode): a command that exits 127 itself ran" "$? $(j '"\(.ran) \(.error)"')" "127 true null"
done

# ---- --events: a line arrives while the command runs ----
# The command prints a partial line, then waits on a fifo the test opens
# only after it has read that output event: without live events the read
# times out (the command cannot end before the test writes).
events_live() {
    local what=$1; shift
    rm -f "$WS/go" && mkfifo "$WS/go" && chown 1000:1000 "$WS/go"
    local out=$T/ev.$what
    : > "$out"      # there before tail opens it
    "$@" -- sh -c 'printf first; cat /workspace/go >/dev/null; echo second; echo oops >&2; exit 3' > "$out" &
    local pid=$! line start="" first="" ok=0
    exec 7< <(tail -n +1 -f "$out" --pid=$pid)
    read -r -t 30 start <&7 && read -r -t 30 first <&7 && ok=1
    # the command goes on either way (a brig without live events must fail
    # this test, not hang it)
    timeout 10 sh -c 'echo go > "$1"' sh "$WS/go"
    wait $pid
    local rc=$?
    exec 7<&-
    check_eq "$what --events: exit status is the command's" "$rc" 3
    check_eq "$what --events: the start line first" "$(jq -r '"\(.event) \(.time_ms)"' <<<"$start")" "start 0"
    check "$what --events: the partial line 'first' read before the command could exit" \
        test "$ok:$(jq -r '"\(.event) \(.stream) \(.data)"' <<<"$first")" = "1:output stdout first"
    check_eq "$what --events: the result last, the object --json prints" \
        "$(tail -n 1 "$out" | jq -r '"\(.event) \(.result.exit_code) \(.result.stdout.preview_head)"')" \
        "result 3 firstsecond"
    check "$what --events: stderr's chunk" grep -q '"event":"output","stream":"stderr","data":"oops\\n"' "$out"
    check "$what --events: every line validates against events.schema.json" python3 - "$EVENTS_SCHEMA" \
        "$BRIG_SANDBOX_SCHEMA" "$out" <<'EOF'
import json, sys, jsonschema
from referencing import Registry, Resource
ev, res = (json.load(open(p)) for p in sys.argv[1:3])
reg = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in (ev, res)])
v = jsonschema.Draft202012Validator(ev, registry=reg)
for line in open(sys.argv[3]):
    v.validate(json.loads(line))
EOF
}
events_live run timeout -k 5 60 "$BRIG" sandbox run --state-root "$SB_STATE" --rootfs "$ROOTFS" --workspace "$WS" \
    --env "BRIG_IT_TAG=$TAG-sb" --timeout 50s --events
events_live exec sbx exec --timeout 50s --events "$U"

sbx exec --events --output-limit 8 "$U" -- sh -c 'printf 0123456789abcdef' > "$T/ev.trunc"
check_eq "--events: output bounded at the output limit, then output_truncated" \
    "$(jq -r 'select(.event=="output" or .event=="output_truncated" or .event=="limit") | "\(.event):\(.data // .limit // "")"' "$T/ev.trunc" | tr '\n' ' ')" \
    "limit:output output:01234567 output_truncated: "
check_eq "--events: the result keeps head and tail" "$(tail -n 1 "$T/ev.trunc" | jq -r '.result.stdout | "\(.bytes) \(.truncated)"')" \
    "16 true"
sbx exec --events --timeout 1s "$U" -- sleep 30 > "$T/ev.wall"
check_eq "--events: a wall limit is an event, then the result" \
    "$(jq -r 'select(.event=="limit" or .event=="result") | .limit // .result.timed_out' "$T/ev.wall" | tr '\n' ' ')" "wall true "
sbx exec --events "$U" -- no-such-cmd > "$T/ev.127"
check_eq "--events: a command not found: its stderr line, then the result (no start)" \
    "$?:$(jq -r '"\(.event):\(.data // .result.exit_code)"' "$T/ev.127" | tr '\n' ' ')" \
    "127:output:brig sandbox: no-such-cmd: not found  result:127 "
sbx exec --events --json "$U" -- echo both > "$T/ev.both"
check_eq "--events with --json: the events, the result last" "$(jq -r .event "$T/ev.both" | tr '\n' ' ')" "start output result "

# ---- the summary line starts a line of its own ----
sbx exec "$U" -- printf no-newline > "$T/sum.out" 2>&1
check "summary after output without a final newline: on a line of its own" \
    bash -c "head -1 '$T/sum.out' | grep -qx no-newline && tail -1 '$T/sum.out' | grep -q '^brig sandbox x-'"
sbx exec "$U" -- echo with-newline > "$T/sum.out" 2>&1
check_eq "summary after a final newline: no empty line" "$(sed -n 2p "$T/sum.out" | cut -c1-14)" "brig sandbox x"

# ---- an unknown flag names where the help is ----
for c in "sandbox run" "sandbox exec" "sandbox create" "sandbox ls" "sandbox rm" "create" "policy check"; do
    # shellcheck disable=SC2086
    "$BRIG" $c --bogus x > /dev/null 2> "$T/flag.err"
    check "brig $c --bogus: names 'brig $c --help'" grep -q "flag provided but not defined: --bogus (run 'brig $c --help')" "$T/flag.err"
done
"${BRIG_ROOTFS:-$(dirname "$BRIG")/../rootfs-tools/brig-rootfs}" from-host --bogus x 2> "$T/flag.err"
check "brig-rootfs from-host --bogus: names 'brig-rootfs from-host --help'" \
    grep -q "(run 'brig-rootfs from-host --help')" "$T/flag.err"
"${BRIG_ROOTFS:-$(dirname "$BRIG")/../rootfs-tools/brig-rootfs}" verify --help > "$T/help.out"
check "brig-rootfs verify --help: its usage names brig-rootfs" grep -q "^Usage: brig-rootfs verify " "$T/help.out"

sbx rm --force "$U" >/dev/null && sbx rm --force "$S" >/dev/null
# the kernel finishes the killed ones on its own time under load
no_tagged() { test -z "$(tagged_pids "$TAG-sb")"; }
wait_until 10 no_tagged
check "nothing of the test's sandboxes left (processes)" no_tagged
