#!/usr/bin/env bash
# Runs brig-probe on the host, where the answers are known, so that a probe
# bug is not mistaken for a runtime bug by the integration tests. TAP output.
set -u
PROBE=${1:?usage: test-probe.sh PATH-TO-brig-probe}
command -v jq >/dev/null || { echo "1..0 # SKIP jq is not installed (scripts/setup.sh installs it)"; exit 0; }

n=0; failed=0
ok()  { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # check DESC CMD...: the command must succeed
    local d=$1; shift
    if "$@" >/dev/null 2>&1; then ok "$d"; else bad "$d" "command: $*"; fi
}
status_is() { # status_is DESC WANT CMD...
    local d=$1 want=$2 got; shift 2
    "$@" >/dev/null 2>&1; got=$?
    if [ "$got" = "$want" ]; then ok "$d"; else bad "$d" "exit status $got, want $want"; fi
}

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo hello-probe > "$tmp/f"

echo "1..20"
"$PROBE" report --read "$tmp/f" --read "$tmp/missing" --read "$tmp" --write "$tmp" > "$tmp/r.json" 7</dev/null
check "report prints one valid JSON object" jq -e 'type == "object"' "$tmp/r.json"
r() { jq -e "$1" "$tmp/r.json" >/dev/null; }
check "uid/gid match id(1)" r ".uid == $(id -u) and .egid == $(id -g)"
check "hostname matches uname -n" r ".hostname == \"$(uname -n)\""
check "pid namespace inode matches the host's" r ".namespaces.pid == $(stat -L -c %i /proc/self/ns/pid)"
check "mount namespace inode matches the host's" r ".namespaces.mnt == $(stat -L -c %i /proc/self/ns/mnt)"
check "caps are 16 hex digits" r '.caps.CapEff | test("^[0-9a-f]{16}$")'
check "mount table contains / and /proc" r '[.mounts[].mount_point] | index("/") != null and index("/proc") != null'
check "nofile rlimit matches ulimit -n" r ".rlimits.nofile.soft == $(ulimit -n)"
check "the inherited fd 7 is listed" r '[.fds[].fd] | index(7) != null'
check "reads: file ok with its size, missing is ENOENT, dir listed" \
    r ".reads[\"$tmp/f\"].bytes == 12 and .reads[\"$tmp/missing\"].result == \"ENOENT\" and .reads[\"$tmp\"].entries >= 1"
check "writes: the --write dir is writable" r ".writes[\"$tmp\"] == \"ok\""
check "loopback TCP works on the host" r '.tcp_loopback == "ok"'

status_is "exit 7 exits 7" 7 "$PROBE" exit 7
status_is "write into a missing dir exits ENOENT (2)" 2 "$PROBE" write "$tmp/no/such"
check "write PATH creates the file" bash -c "'$PROBE' write '$tmp/w' >/dev/null && grep -q brig-probe '$tmp/w'"
check "read PATH returns the data" bash -c "'$PROBE' read '$tmp/f' | jq -e '.data == \"hello-probe\\n\" and .result == \"ok\"' >/dev/null"
status_is "syscall getcwd works (0)" 0 "$PROBE" syscall getcwd
status_is "kill-self TERM dies by SIGTERM (143)" 143 "$PROBE" kill-self TERM
check "fork-bomb 5 forks 5 and reaps them" bash -c "'$PROBE' fork-bomb 5 | jq -e '.forked == 5' >/dev/null"
# A port nobody listens on: bind one, close it, connect.
status_is "connect to a closed local port is ECONNREFUSED (111)" 111 "$PROBE" connect 127.0.0.1 1
[ "$failed" -eq 0 ]
