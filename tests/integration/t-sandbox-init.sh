#!/bin/bash
# brig-init (sandbox/brig-init.c) run by itself: what its header promises,
# seen from outside, whatever libc it has (none on x86_64 and aarch64): the
# command's status (128+N for a signal), 125/126/127 and their messages,
# execvp's PATH rules, --cwd, --exec, its own session and the command's own
# group (the terminal's foreground), forwarding, and as a pid namespace's
# init: orphans reaped, everything killed at its exit, --idle ending only on
# the host's SIGTERM. The sandbox tests run it as PID 1 of real sandboxes.
. "$(dirname "$0")/lib.sh"
it_init
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"

# Found as brig finds it: beside brig, or in brig's build tree.
INIT=$(dirname "$BRIG")/brig-init
[ -x "$INIT" ] || INIT=$(dirname "$BRIG")/../sandbox/brig-init
[ -x "$INIT" ] || bail "no brig-init beside $BRIG"
diag "brig-init: $INIT"

# What it is mapped as (without libc its link is its own: sandbox/meson.build):
# a stack that is not executable, no segment both writable and executable.
if command -v readelf >/dev/null; then
    readelf -lW "$INIT" | grep -E '^ *(LOAD|GNU_STACK) ' > "$T/segments"
    check "its segments read (a GNU_STACK among them)" grep -q GNU_STACK "$T/segments"
    check_eq "no segment writable and executable (nor its stack)" "$(grep WE "$T/segments")" ""
else
    skip "its segments" "readelf (binutils) is not installed"
fi

# init_is DESC WANT_RC WANT_ERR ARGS...: brig-init ARGS exits WANT_RC and says
# WANT_ERR (exactly) on stderr; with the environment changed by env's
# arguments in ENV (brig-init's own, not another brig-init's: that one
# would not lead a session).
ENV=()
init_is() {
    local d=$1 want_rc=$2 want_err=$3; shift 3
    env "${ENV[@]}" /usr/bin/timeout -k 2 10 "$INIT" "$@" > "$T/out" 2> "$T/err"
    local rc=$?
    check_eq "$d: exit $want_rc" "$rc" "$want_rc"
    check_eq "$d: stderr" "$(cat "$T/err")" "$want_err"
}

# ---- status, and the exits of its own ----
init_is "exit 7 passed on" 7 "" -- sh -c 'exit 7'
init_is "a command killed by SIGKILL: 128+9" 137 "" -- sh -c 'kill -KILL $$'
init_is "a command killed by SIGTERM: 128+15" 143 "" -- sh -c 'kill -TERM $$'
init_is "no command: usage" 125 "brig-init: usage: brig-init [--cwd DIR] -- CMD [ARGS...] | brig-init --idle | brig-init --exec PATH -- ARGV0 [ARGS...]"
init_is "a missing path" 127 "brig-init: $T/missing: No such file or directory" -- "$T/missing"
mkdir -p "$T/a" "$T/b" "$T/d"
printf '#!/bin/sh\necho from-a\n' > "$T/a/prog" && chmod 0644 "$T/a/prog"
printf '#!/bin/sh\necho "from-b $*"\n' > "$T/b/prog" && chmod 0755 "$T/b/prog"
init_is "a file not executable" 126 "brig-init: $T/a/prog: Permission denied" -- "$T/a/prog"
# ---- execvp's rules ----
ENV=(PATH="$T/a:$T/b")
init_is "a missing name, searched in PATH" 127 "brig-init: nosuch-$TAG: No such file or directory" -- "nosuch-$TAG"
ENV=(PATH="$T/d:$T/a")
init_is "a name only not executable in PATH: EACCES" 126 "brig-init: prog: Permission denied" -- prog
ENV=(PATH="/nonexistent:$T/a:$T/b")
init_is "PATH: past the entry not executable, the next one" 0 "" -- prog x y
check_eq "PATH: the one in $T/b ran, with its arguments" "$(cat "$T/out")" "from-b x y"
ENV=(-u PATH)
init_is "no PATH: /bin:/usr/bin" 0 "" -- sh -c 'echo ran'
check_eq "no PATH: sh found" "$(cat "$T/out")" ran
printf 'echo "script $0 $1"\n' > "$T/d/noshebang" && chmod 0755 "$T/d/noshebang"
printf 'eval "echo \\$# \\${$#}"\n' > "$T/d/count" && chmod 0755 "$T/d/count"
init_is "a script without #!: /bin/sh runs it" 0 "" -- "$T/d/noshebang" arg1
check_eq "a script without #!: its path and arguments" "$(cat "$T/out")" "script $T/d/noshebang arg1"
ENV=(PATH=":/nonexistent")
init_is "an empty PATH entry: the working directory (--cwd)" 0 "" --cwd "$T/d" -- noshebang z
check_eq "an empty PATH entry: found there" "$(cat "$T/out")" "script noshebang z"
# Where brig-init computes a length (its PATH buffer, sized as glibc's from
# PATH up to PATH_MAX; its one-line messages): at and past each bound.
# An entry of PATH_MAX-1 bytes is tried (the buffer's largest use: the
# kernel refuses the path), one of PATH_MAX is skipped as glibc skips it.
ENV=(PATH="$(printf '/%.0s' $(seq 4095)):$T/b")
init_is "a PATH entry of PATH_MAX-1 bytes: tried" 126 "brig-init: prog: File name too long" -- prog
ENV=(PATH="$(printf '/%.0s' $(seq 4096)):$T/b")
init_is "a PATH entry of PATH_MAX bytes: skipped" 0 "" -- prog q
check_eq "a PATH entry of PATH_MAX bytes: the next one" "$(cat "$T/out")" "from-b q"
ENV=(PATH="$T/b:$(printf 'y%.0s' $(seq 9000))")
init_is "PATH past PATH_MAX: its first entries still searched" 0 "" -- prog r
name=$(printf 'n%.0s' $(seq 255))
init_is "a name of NAME_MAX bytes: searched" 127 "brig-init: $name: No such file or directory" -- "$name"
init_is "a name of NAME_MAX+1 bytes: refused" 126 "brig-init: ${name}n: File name too long" -- "${name}n"
ENV=()
long=$T/$(printf 'm%.0s' $(seq 5000))
env /usr/bin/timeout -k 2 10 "$INIT" -- "$long" > "$T/out" 2> "$T/err"
check_eq "a message past its 4096-byte line (ENAMETOOLONG): exit 126" "$?" 126
check_eq "a message past its 4096-byte line: cut to it, one line" "$(wc -c < "$T/err") $(wc -l < "$T/err")" "4096 1"
check_eq "a message past its 4096-byte line: its start" "$(head -c 20 "$T/err")" "brig-init: ${T:0:9}"
init_is "a script without #!: 5000 arguments to /bin/sh" 0 "" -- "$T/d/count" $(seq 5000)
check_eq "a script without #!: all its arguments" "$(cat "$T/out")" "5000 5000"
ENV=()
# ---- --cwd ----
init_is "--cwd DIR" 0 "" --cwd "$T/d" -- pwd
check_eq "--cwd DIR: the command's working directory" "$(cat "$T/out")" "$T/d"
init_is "--cwd missing: never made" 125 "brig-init: --cwd $T/nodir: No such file or directory (brig does not create it)" \
    --cwd "$T/nodir" -- true
check_not "--cwd missing: not made" test -e "$T/nodir"
# ---- --exec: no PATH search, argv0 as given ----
init_is "--exec PATH -- ARGV0" 0 "" --exec /bin/sh -- my-argv0 -c 'echo "$0"'
check_eq "--exec: argv0 as the caller gave it" "$(cat "$T/out")" my-argv0
init_is "--exec a missing path" 127 "brig-init: $T/missing: No such file or directory" --exec "$T/missing" -- x
init_is "--exec a file not executable" 126 "brig-init: $T/a/prog: Permission denied" --exec "$T/a/prog" -- x
init_is "--exec without --" 125 "brig-init: usage: brig-init --exec PATH -- ARGV0 [ARGS...]" --exec /bin/true x y

# ---- its own session; the command's own group, the terminal's foreground ----
# /proc/PID/stat: 4 ppid, 5 pgrp, 6 session, 8 the terminal's foreground group
init_is "the command's process" 0 "" -- sh -c 'exec cat /proc/self/stat'
read -r -a st < "$T/out"
check_eq "brig-init leads a session of its own (the command's session is its parent's pid)" "${st[5]}" "${st[3]}"
check_eq "the command leads its own group" "${st[4]}" "${st[0]}"
if command -v script >/dev/null; then
    # setsid -c: a session whose terminal is the pty, as brig's --tty makes it
    script -qec "setsid -c $INIT -- sh -c 'exec cat /proc/self/stat' > $T/tty-stat" /dev/null > /dev/null 2>&1
    read -r -a st < "$T/tty-stat"
    check_eq "on a terminal: the command's group is its foreground" "${st[7]}" "${st[4]}"
else
    skip "on a terminal" "script (util-linux) is not installed"
fi

# ---- forwarding ----
"$INIT" -- sh -c 'trap "exit 9" TERM; echo up; for i in $(seq 200); do sleep 0.05; done' > "$T/fwd" &
pid=$!
for _ in $(seq 100); do grep -q up "$T/fwd" && break; sleep 0.02; done
kill -TERM $pid
wait $pid 2>/dev/null
check_eq "SIGTERM to brig-init: forwarded, the command's trap's status" "$?" 9

# ---- as a pid namespace's init ----
# orphans reparented to it are reaped (no zombie left while the command runs)
timeout -k 2 10 unshare -pf --mount-proc "$INIT" -- sh -c \
    '(sh -c "exit 0" &); (sh -c "exit 0" &); sleep 0.3; cat /proc/[0-9]*/stat' > "$T/ns" 2> "$T/err"
check_eq "in a pid namespace: exit 0" "$?" 0
check_eq "in a pid namespace: the orphans were reaped (no zombie)" "$(awk '$3 == "Z"' "$T/ns")" ""
# a setsid'd daemon dies with it
MARK="$TAG-daemon"
timeout -k 2 10 unshare -pf "$INIT" -- sh -c "setsid sh -c 'sleep 30; : $MARK' </dev/null >/dev/null 2>&1 & sleep 0.2; exit 3"
check_eq "the command's status through unshare" "$?" 3
sleep 0.1
check_eq "the setsid'd daemon died with the init" "$(pgrep -f "$MARK")" ""

# --idle: a SIGTERM (or SIGINT) from inside the namespace carries the
# sender's pid and does not end it; the host's does
unshare -pf --mount-proc "$INIT" --idle &
ushare=$!
for _ in $(seq 100); do init=$(pgrep -P $ushare) && break; sleep 0.02; done
check "--idle: running" kill -0 "$init"
nsenter -t "$init" -p -m -- sh -c 'kill -TERM 1; kill -INT 1'
sleep 0.3
check "--idle: SIGTERM and SIGINT from inside do not end it" kill -0 "$init"
nsenter -t "$init" -p -m -- sh -c "sleep 30; : $MARK-idle" &
sleep 0.2
check "--idle: a command inside runs" pgrep -f "$MARK-idle"
kill -TERM "$init"
wait $ushare 2>/dev/null
check_eq "--idle: the host's SIGTERM ends it, exit 0" "$?" 0
wait 2>/dev/null
check_eq "--idle: what ran inside died with it" "$(pgrep -f "$MARK-idle")" ""
