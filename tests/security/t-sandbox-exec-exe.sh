#!/usr/bin/env bash
# brig sandbox exec from brig's unsealed binary (docs/security.md, "sandbox
# exec without the sealed copy"): a long-lived sandbox already holds the
# command's own processes, and the command is the attacker's. Neither way to
# the brig binary that runs the exec may open:
#  (a) a `#!/proc/self/exe` script as the command (in the workspace, and in
#      the sandbox's /tmp): the kernel runs /proc/self/exe of the process
#      that execs it; with the image's own loader (a hostile one planted at
#      /lib64/ld-linux-x86-64.so.2) that reports what /proc/self/exe is;
#  (b) a program whose PT_INTERP is /proc/self/exe: the kernel loads that
#      process's exe as the interpreter;
#  (c) a racer started earlier in the sandbox, as its user, opening
#      /proc/PID/exe of every process while many execs come and go; again
#      with fs.suid_dumpable=1 (the uid switch then makes a process
#      dumpable), set for that part only and restored.
# The brig that runs is a decoy copy in the test's temp dir (brig-init
# beside it): what the attack reaches is compared with its dev:ino, and it
# must stay byte-identical. The use side is t-sandbox-session.sh.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
[ "$(uname -m)" = x86_64 ] || skip_all "the hostile loader is x86_64 code"
SRC=$BRIG_SECURITY_SRC/sandbox-exec-exe

D=$T/decoy
decoy_brig "$D"
cp "$D/brig" "$D/brig.orig"

ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh cat chmod printf sleep true
mkdir -p "$ROOTFS/lib64" || bail "cannot make the rootfs"
build_static "$ROOTFS/lib64/ld-linux-x86-64.so.2" "$SRC/loader.c" -nostdlib -fno-stack-protector -fno-builtin
build_static "$ROOTFS/usr/bin/racer" "$SRC/racer.c"
WS=$T/ws
mkdir -p "$WS" && chown 1000:1000 "$WS"
PI=pi-$$-$RANDOM     # its name (15 bytes at most) in the kernel's report of its crash
cc -O1 -nostdlib -fPIE -pie -fno-stack-protector -Wl,--dynamic-linker=/proc/self/exe -o "$WS/$PI" \
    "$SRC/interp.c" 2>"$T/cc.log" || bail "cannot link the PT_INTERP program: $(head -c 300 "$T/cc.log")"
printf '#!/proc/self/exe\n' >"$WS/pwn" && chmod 0755 "$WS/$PI" "$WS/pwn" || bail "cannot plant the script"
SB_STATE=$T/sbstate
NAME=exe-$TAG
SUID_DUMPABLE=$(cat /proc/sys/fs/suid_dumpable)
sbx() { timeout -k 5 60 "$D/brig" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
trap 'rc=$?; echo "$SUID_DUMPABLE" >/proc/sys/fs/suid_dumpable; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
sbx create --policy agent --rootfs "$ROOTFS" --workspace "$WS" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" >/dev/null
check_eq "create (agent policy): exit 0" "$?" 0

# exec_mode: which way this brig runs an exec here: the exec's brig, seen from the host.
exec_mode() {
    local bp exe
    "$D/brig" sandbox exec --state-root "$SB_STATE" --json "$NAME" -- sleep 1 >/dev/null 2>&1 &
    bp=$!
    sleep 0.5
    exe=$(readlink "/proc/$bp/exe")
    wait $bp
    case $exe in
        "$D/brig") echo unsealed ;;
        /memfd:brig-exe:* | "/brig") echo sealed ;;     # the memfd copy, or the read-only view
        *) echo "unknown: $exe" ;;
    esac
}
MODE=$(exec_mode)
diag "sandbox exec runs $MODE"

# A sealed run (policy pi: an init of its own) re-executes brig from its read-only view
# or memfd copy, whose own path says nothing of where brig lies: the copy still finds
# the brig-init beside the decoy (linux/exe_seal.c: _BRIG_EXE_ORIGIN, believed for the
# file that runs; the memfd's name), never another one (an installed brig's).
timeout -k 5 60 "$D/brig" --debug sandbox run --state-root "$SB_STATE" --policy pi --rootfs "$ROOTFS" \
    --workspace "$WS" --json -- true >"$T/pi.json" 2>"$T/pi.err"
check_eq "sealed sandbox run (pi): exit 0" "$?" 0
check "sealed sandbox run (pi): it re-executed from a read-only view or sealed copy" \
    grep -q -e "re-executing from a read-only overlayfs view" -e "re-executing from a sealed memfd" "$T/pi.err"
check_eq "sealed sandbox run (pi): the re-executed brig found the brig-init beside it" \
    "$(grep -o 'sandbox init: [^ ]*' "$T/pi.err" | tail -1)" "sandbox init: $D/brig-init"

# no_brig WHAT FILE: no line of FILE reports the decoy's dev:ino as /proc/self/exe.
no_brig() {
    if grep -q "^EXE $DEV $INO " "$2"; then
        not_ok "$1: the command never reached the host brig" "$(grep '^EXE' "$2" | head -3)"
    else
        ok "$1: the command never reached the host brig"
    fi
}

# ---- (a) #!/proc/self/exe as the command ----
sbx exec --json --timeout 10s "$NAME" -- /workspace/pwn >"$T/a.json" 2>&1
rc=$?
jq -r '.stdout.preview_head, .stdout.preview_tail' "$T/a.json" >"$T/a.out" 2>/dev/null
no_brig "(a) #!/proc/self/exe in the workspace" "$T/a.out"
if [ "$rc" != 124 ] && [ "$rc" -lt 128 ]; then   # 125: brig-init's own exit
    ok "(a) ended on its own (exit $rc)"
else
    not_ok "(a) ended on its own" "$(rc_reason "$rc")" "$(head -c 600 "$T/a.json")"
fi
sbx exec --json "$NAME" -- sh -c 'printf "#!/proc/self/exe\n" > /tmp/pwn; chmod 755 /tmp/pwn' >/dev/null 2>&1
sbx exec --json --timeout 10s "$NAME" -- /tmp/pwn >"$T/a2.json" 2>&1
jq -r '.stdout.preview_head, .stdout.preview_tail' "$T/a2.json" >"$T/a2.out" 2>/dev/null
no_brig "(a) #!/proc/self/exe in the sandbox's /tmp" "$T/a2.out"
if [ "$MODE" = unsealed ]; then
    check "(a) unsealed: what the kernel ran as /proc/self/exe was brig-init (its message)" \
        grep -q 'brig-init' <<<"$(jq -r '.stderr.preview_head' "$T/a.json")"
fi

# ---- (b) PT_INTERP /proc/self/exe ----
# Whatever the kernel loads as its interpreter either crashes at once (it
# runs without its own loader, from the program's entry data; the kernel
# names the file it crashed in, debug.exception-trace), or is brig-init,
# which has no libc to crash in: it takes the program's arguments for its
# own and exits 125 with its usage (a message brig does not have).
sbx exec --json --timeout 10s "$NAME" -- "/workspace/$PI" >"$T/b.json" 2>&1
rc=$?
b_usage=$(jq -r '.stderr.preview_head' "$T/b.json" 2>/dev/null | grep '^brig-init: usage: brig-init ')
check "(b) the PT_INTERP program ended on its own (exit $rc)" \
    test "$rc" -lt 124 -o "$rc" = 139 -o \( "$rc" = 125 -a -n "$b_usage" \)
crash=$(dmesg | grep "$PI\[[0-9]*\]: segfault" | tail -1)
if [ -n "$b_usage" ]; then
    ok "(b) the interpreter that ran was not the host brig: brig-init's usage"
elif [ -z "$crash" ]; then
    skip "(b) the interpreter that ran was not the host brig" "no segfault report in dmesg (rate-limited, or exception-trace off)"
else
    diag "(b) kernel: ${crash#*\] }"
    case $crash in
        *" in brig["*) not_ok "(b) the interpreter that ran was not the host brig" "$crash" ;;
        *) ok "(b) the interpreter that ran was not the host brig" ;;
    esac
fi
# brig-init's usage, or its text holding the faulting ip; brig's (no
# loader ran for it) jumps to 0 through its unrelocated GOT: no file named.
[ "$MODE" = unsealed ] && [ -n "$b_usage$crash" ] && check "(b) unsealed: the interpreter was brig-init" \
    test -n "$b_usage" -o -n "$(grep ' in brig-init\[' <<<"$crash")"

# ---- (c) a racer in the sandbox while execs come and go ----
for dumpable in "$SUID_DUMPABLE" 1; do
    sb=$NAME
    echo "$dumpable" >/proc/sys/fs/suid_dumpable
    # the uid switch makes the child dumpable there: never unsealed
    [ "$dumpable" = 1 ] && check_not "(c) suid_dumpable=1: the exec does not run unsealed" grep -q unsealed <<<"$(exec_mode)"
    sbx exec --json --timeout 30s "$sb" -- /usr/bin/racer 4 "$DEV" "$INO" "$TDEV" "$TINO" >"$T/c.json" 2>&1 &
    RP=$!
    sleep 0.3
    n=0
    while kill -0 "$RP" 2>/dev/null && [ $n -lt 60 ]; do
        sbx exec --json "$sb" -- true >/dev/null 2>&1
        n=$((n + 1))
    done
    wait "$RP"
    res=$(jq -r '.stdout.preview_head' "$T/c.json")
    diag "(c) suid_dumpable=$dumpable: $n execs; racer: $(tail -1 <<<"$res") (TRAMPOLINE: execs caught mid-flight)"
    check "(c) suid_dumpable=$dumpable: the racer scanned while the execs ran" \
        grep -q '^SCANS [1-9][0-9]* OPENED [1-9]' <<<"$res"
    check_not "(c) suid_dumpable=$dumpable: the racer never opened the host brig as a process's exe" \
        grep -q '^HIT' <<<"$res"
    check "(c) suid_dumpable=$dumpable: no brig-init it caught could be opened for writing" \
        grep -q 'TWRITABLE 0 VIEWS [0-9]*$' <<<"$res"
done
echo "$SUID_DUMPABLE" >/proc/sys/fs/suid_dumpable

# A malformed --exec is a usage error, never an init running "--exec".
for args in "--exec" "--exec /bin/true" "--exec /bin/true true"; do
    out=$("$D/brig-init" $args 2>&1); rc=$?
    check_eq "brig-init $args: exit 125" "$rc" 125
    check "brig-init $args: the usage message" grep -q 'usage: brig-init --exec PATH' <<<"$out"
done

check "the decoy brig is byte-identical" cmp -s "$D/brig" "$D/brig.orig"
check "the decoy brig still runs" "$D/brig" --version
sbx rm --force "$NAME"
check_eq "rm: exit 0" "$?" 0
check_eq "rm: no process left" "$(tagged_pids "$TAG-sb")" ""
