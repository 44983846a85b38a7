#!/usr/bin/env bash
# CVE-2019-5736 class: an image makes the runtime's own binary run inside the
# container (an entrypoint `#!/proc/self/exe`, or process.args
# ["/proc/self/exe"]) with the image's /lib64/ld-linux-x86-64.so.2 as its
# loader. The loader (exe-overwrite-loader.c) keeps an fd of /proc/self/exe,
# execs away, and rewrites the file through that fd once it is no longer
# busy. Aimed at a DECOY copy of brig: the containers are run with
# $T/decoy-brig, never with the binary under test. Every mode that starts a
# container process: create+start, run, run -d, exec, with and without the
# agent policy. Safe: the decoy is byte-identical and still runs afterwards,
# and the container's processes and brig's see a sealed memfd as their exe.
. "$(dirname "$0")/lib.sh"
it_init
[ "$(uname -m)" = x86_64 ] || skip_all "the hostile loader is x86_64 code"
SRC=${BRIG_SECURITY_SRC:-$(dirname "$0")}
build_static "$T/loader" "$SRC/exe-overwrite-loader.c" -nostdlib -fno-stack-protector -fno-builtin
build_static "$T/hunter" "$SRC/exe-overwrite-hunter.c"
build_static "$T/racer" "$SRC/sandbox-exec-exe/racer.c"

DECOY=$T/decoy-brig
cp "$BRIG" "$DECOY.orig" && cp "$DECOY.orig" "$DECOY" || bail "cannot copy $BRIG"
chmod 0755 "$DECOY"
# A static brig (the plain build, static_deps) has no loader for the image to
# replace: brig itself runs in the container, and must only refuse /pwn as a
# command. The loader attack proper runs against the dynamic brig of the
# sanitizer build (scripts/test.sh runs this suite there too).
command -v readelf >/dev/null || bail "readelf (binutils) is needed to tell a static brig"
STATIC=0
readelf -lW "$BRIG" | grep -q 'Requesting program interpreter' || STATIC=1
diag "brig under test: $([ $STATIC = 1 ] && echo static || echo dynamic)"
BRIG_REFUSAL="brig: no such command: /pwn"
# `brig run` from brig's unsealed binary execs the process through a sealed memfd
# copy of brig-init (linux/exe_trampoline.h): that copy is what the kernel runs for
# #!/proc/self/exe, and it refuses to be that interpreter.
TRAMPOLINE_REFUSAL="not as brig-init (an interpreter line naming /proc/self/exe?): refusing"
d() {
    as_brig_user env ${_BRIG_EXE_SEALED+_BRIG_EXE_SEALED="$_BRIG_EXE_SEALED"} \
        timeout -k 5 "${BRIG_TIMEOUT:-60}" "$DECOY" --root "$STATE" "$@"
}

# The agent profile, auditing into our temp dir instead of /var/log.
POL=$T/agent.json
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a | '"$RL_POLICY_JQ" >"$POL" ||
    bail "cannot write the agent policy"
mkdir -p "$T/ws" && chown "$SB_WS_OWNER" "$T/ws"

# The hostile image, made once: a busybox bundle whose image carries the fake
# loader and /pwn (`#!/proc/self/exe`).
mkb image || bail "cannot build the hostile bundle"
r=$T/image/rootfs
mkdir -p "$r/lib64" && cp "$T/loader" "$r/lib64/ld-linux-x86-64.so.2" &&
    chmod 0755 "$r/lib64/ld-linux-x86-64.so.2" &&
    printf '#!/proc/self/exe\n' >"$r/pwn" && chmod 0755 "$r/pwn" || bail "cannot plant the loader"
# For a static brig, the attack as first published: /pwn-fifo runs brig in
# the container, held in open() of its log (the FIFO) while the image's init
# (exe-overwrite-hunter.c) takes its /proc/<pid>/exe, to write once it exits.
cp "$T/hunter" "$r/hunter" && cp "$T/racer" "$r/racer" && mkfifo -m 0666 "$r/fifo" &&
    printf '#!/proc/self/exe --log=/fifo\n' >"$r/pwn-fifo" && chmod 0755 "$r/pwn-fifo" ||
    bail "cannot plant the hunter"

# hostile NAME POLICY [ARGS...]: a copy of the image as bundle NAME, with its
# own cgroup and tag, process.args ARGS (default /pwn), under POLICY.
hostile() {
    local name=$1 pol=$2 id; shift 2
    [ $# -gt 0 ] || set -- /pwn
    id=$(cid "$name")
    cp -a "$T/image" "$T/$name" || return 1
    cfg "$name" '.linux.cgroupsPath = "/brig-test/" + $id | .process.args = $a
        | .process.env = [.process.env[] | select(startswith("BRIG_IT_TAG=") | not)] + ["BRIG_IT_TAG=" + $id]' \
        --arg id "$id" --argjson a "$(jq -nc '$ARGS.positional' --args "$@")" || return 1
    if [ "$pol" = agent ]; then
        "$BRIG" policy apply --policy "$POL" --workspace "$T/ws" --output "$T/$name/config.json.p" \
            "$T/$name" >"$T/$name.apply" 2>&1 && mv "$T/$name/config.json.p" "$T/$name/config.json"
    fi
}

# polflag POL: the global flags of the decoy for that policy.
polflag() { [ "$1" = agent ] && echo "--policy $POL"; }

# wait_done OUT: the loader's writer has finished, or a static brig in the
# container refused /pwn (or 8 s passed).
wait_done() {
    local n=80
    while [ $n -gt 0 ]; do
        grep -q '^PWN done' "$1" 2>/dev/null && return 0
        [ $STATIC = 1 ] && grep -qF "$BRIG_REFUSAL" "$1" "${1%.out}.err" 2>/dev/null && return 0
        grep -qF "$TRAMPOLINE_REFUSAL" "$1" "${1%.out}.err" 2>/dev/null && return 0
        sleep 0.1; n=$((n - 1))
    done
    return 1
}

# judge WHAT OUT: the attack ran, saw a sealed copy, and the decoy survived.
judge() {
    local what=$1 out=$2 tramp=0
    grep -qF "$TRAMPOLINE_REFUSAL" "$out" "${out%.out}.err" 2>/dev/null && tramp=1
    if [ $tramp = 1 ]; then
        ok "$what: the kernel ran brig's sealed trampoline (brig-init) for #!/proc/self/exe, which refused it"
        check_not "$what: trampoline: the image's loader never ran" grep -q '^PWN' "$out"
        check_not "$what: trampoline: brig itself never ran in the container" \
            grep -qF "$BRIG_REFUSAL" "$out" "${out%.out}.err"
    elif [ $STATIC = 1 ]; then
        check_not "$what: static brig: the image's loader never ran" grep -q '^PWN' "$out"
        check "$what: static brig: brig itself ran in the container and refused /pwn" \
            grep -qF "$BRIG_REFUSAL" "$out" "${out%.out}.err"
    elif grep -q '^PWN exe=' "$out"; then
        ok "$what: the hostile loader ran"
    else
        not_ok "$what: the hostile loader ran" "output: $(head -c 1500 "$out")"
    fi
    local exe; exe=$(sed -n 's/^PWN exe=//p' "$out" | head -n 1)
    # the sealed memfd copy, or the read-only view (linux/exe_seal.c), whose path is the
    # binary's name at the root of a mount of its own: never the decoy's path on the host
    [ $STATIC = 1 ] || [ $tramp = 1 ] || case $exe in
        /memfd:brig-exe:* | "/${DECOY##*/}") ok "$what: the container's /proc/self/exe is brig's sealed copy or view ($exe)" ;;
        *) not_ok "$what: the container's /proc/self/exe is brig's sealed copy or view" "it is: $exe" ;;
    esac
    if cmp -s "$DECOY" "$DECOY.orig"; then
        ok "$what: the decoy brig is byte-identical"
    else
        not_ok "$what: the decoy brig is byte-identical" "loader: $(grep '^PWN' "$out" | tr '\n' ' ')" \
            "decoy now starts: $(head -c 80 "$DECOY" | tr -cd '[:print:]\n')"
        cp "$DECOY.orig" "$DECOY"       # the next mode starts from a sound decoy
    fi
    check "$what: the decoy brig still runs" "$DECOY" --version
}

# host_exe_sealed WHAT PID: brig's process PID runs from the sealed copy, or from the
# read-only view: an overlayfs file, read-only, that no write reaches (tried here as
# host root, with every capability, through /proc/PID/exe and /proc/PID/map_files).
host_exe_sealed() {
    local l; l=$(readlink "/proc/$2/exe" 2>&1)
    case $l in
        /memfd:brig-exe:*) ok "$1: /proc/$2/exe on the host is a sealed copy ($l)" ;;
        "/${DECOY##*/}")
            if python3 - "$2" <<'PYEOF'
import os, sys, glob
pid = sys.argv[1]
st = os.statvfs(f"/proc/{pid}/exe")
assert st.f_flag & os.ST_RDONLY, "not read-only"
import subprocess
t = subprocess.run(["stat", "-L", "-f", "-c", "%T", f"/proc/{pid}/exe"], capture_output=True, text=True).stdout.strip()
assert t == "overlayfs", t
paths = [f"/proc/{pid}/exe"] + [p for p in glob.glob(f"/proc/{pid}/map_files/*") if os.readlink(p) == os.readlink(f"/proc/{pid}/exe")]
assert len(paths) > 1, "no mapping of the view"
for p in paths:
    try:
        os.close(os.open(p, os.O_WRONLY))
        sys.exit(f"{p} opened for writing")
    except OSError as e:
        assert e.errno in (30, 26), f"{p}: {e}"      # EROFS (ETXTBSY only while it runs)
    try:
        os.chmod(p, 0o777)
        sys.exit(f"{p} chmod")
    except OSError as e:
        assert e.errno == 30, f"{p}: {e}"
PYEOF
            then ok "$1: /proc/$2/exe on the host is brig's read-only view: no write, chmod, through it or its mappings"
            else not_ok "$1: /proc/$2/exe on the host is brig's read-only view" "it is: $l"; fi ;;
        *) not_ok "$1: /proc/$2/exe on the host is a sealed copy or view" "it is: $l" ;;
    esac
}

for pol in none agent; do
    # ---- create + start ---------------------------------------------------------------
    n=cs-$pol; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n $pol || bail "cannot build the hostile bundle $n"
    # shellcheck disable=SC2046
    d $(polflag $pol) create --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    check_eq "create+start ($pol): create" "$?" 0
    init=$(d state "$id" 2>/dev/null | jq -r '.pid // empty')
    [ -n "$init" ] && host_exe_sealed "create+start ($pol): the created init" "$init"
    # shellcheck disable=SC2046
    d $(polflag $pol) start "$id" >>"$T/$n.err" 2>&1
    wait_done "$T/$n.out"
    judge "create+start ($pol)" "$T/$n.out"
    d delete --force "$id" >/dev/null 2>&1

    # ---- run, attached: brig run waits while the writer tries -------------------------
    n=run-$pol; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n $pol || bail "cannot build the hostile bundle $n"
    # shellcheck disable=SC2046
    d $(polflag $pol) run --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    wait_done "$T/$n.out"
    judge "run ($pol)" "$T/$n.out"

    # ---- run -d -------------------------------------------------------------------------
    n=rund-$pol; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n $pol || bail "cannot build the hostile bundle $n"
    # shellcheck disable=SC2046
    d $(polflag $pol) run -d --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    check_eq "run -d ($pol): run" "$?" 0
    wait_done "$T/$n.out"
    judge "run -d ($pol)" "$T/$n.out"
    d delete --force "$id" >/dev/null 2>&1

    # ---- process.args = ["/proc/self/exe"] ------------------------------------------------
    n=args-$pol; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n $pol /proc/self/exe || bail "cannot build the hostile bundle $n"
    # shellcheck disable=SC2046
    d $(polflag $pol) run -d --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    rc=$?
    # Since args[0] is found inside the root without magic links
    # (t-fd-at-execve), /proc/self/exe is refused before anything runs.
    check "process.args /proc/self/exe ($pol): refused, naming process.args[0]" \
        eval '[ "$rc" != 0 ] && grep -q "process.args\[0\] /proc/self/exe" "$T/$n.err"'
    check "process.args /proc/self/exe ($pol): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
    d delete --force "$id" >/dev/null 2>&1

    # ---- exec of a #!/proc/self/exe file in a running container ---------------------------
    n=exec-$pol; id=$(cid $n); CLEAN_IDS+=("$id")
    if [ $STATIC = 1 ]; then
        hostile $n $pol /hunter || bail "cannot build the hostile bundle $n"
    else
        hostile $n $pol /bin/sleep 60 || bail "cannot build the hostile bundle $n"
    fi
    # shellcheck disable=SC2046
    d $(polflag $pol) run -d --bundle "$T/$n" "$id" </dev/null >"$T/$n.init" 2>"$T/$n.err"
    check_eq "exec ($pol): the container runs" "$?" 0
    # While a long exec runs, its brig is the sealed copy too.
    as_brig_user_exec "$DECOY" --root "$STATE" $(polflag $pol) exec "$id" /bin/sleep 3 </dev/null >/dev/null 2>&1 &
    bpid=$!
    sleep 0.5
    host_exe_sealed "exec ($pol): a waiting brig exec" "$bpid"
    wait "$bpid"
    # shellcheck disable=SC2046
    d $(polflag $pol) exec "$id" /pwn </dev/null >"$T/$n.out" 2>>"$T/$n.err"
    wait_done "$T/$n.out"
    judge "exec ($pol)" "$T/$n.out"
    if [ $STATIC = 1 ]; then
        # shellcheck disable=SC2046
        d $(polflag $pol) exec "$id" /pwn-fifo </dev/null >"$T/$n.fifo.out" 2>>"$T/$n.err"
        for _ in $(seq 80); do grep -q '^HUNT done' "$T/$n.init" && break; sleep 0.1; done
        check "exec ($pol): static brig: the init held brig's exe while brig ran in the container" \
            grep -q '^HUNT exe=' "$T/$n.init"
        check "exec ($pol): static brig: that exe is brig's sealed copy or view" \
            grep -q -e '^HUNT exe=/memfd:brig-exe:' -e "^HUNT exe=/${DECOY##*/}\$" "$T/$n.init"
        check "exec ($pol): static brig: brig refused /pwn-fifo as a command" grep -qF 'no such command: /pwn-fifo' "$T/$n.init"
        check "exec ($pol): static brig: the hunter finished" grep -q '^HUNT done' "$T/$n.init"
        diag "exec ($pol): $(grep '^HUNT' "$T/$n.init" | tr '\n' ' ')"
        check_not "exec ($pol): static brig: no byte of brig's exe could be written" \
            grep -q '^HUNT wrote [0-9]' "$T/$n.init"
        if cmp -s "$DECOY" "$DECOY.orig"; then
            ok "exec ($pol): static brig: the decoy brig is byte-identical after the hunt"
        else
            not_ok "exec ($pol): static brig: the decoy brig is byte-identical after the hunt" \
                "$(grep '^HUNT' "$T/$n.init" | tr '\n' ' ')"
            cp "$DECOY.orig" "$DECOY"
        fi
    fi
    d delete --force "$id" >/dev/null 2>&1
done

# ---- a process with CAP_SYS_PTRACE beside ordinary execs ---------------------------
# A process of the container that holds CAP_SYS_PTRACE (an engine's
# privileged exec) opens /proc/PID/exe of every process it sees while
# ordinary execs come and go beside it: each brig exec child it catches must
# be the sealed copy, never the decoy as is (sandbox-exec-exe/racer.c: HIT
# when the exe it opened is the decoy's inode). Non-dumpable is no defence
# against CAP_SYS_PTRACE: only the seal is.
n=ptrace; id=$(cid $n); CLEAN_IDS+=("$id")
hostile $n none /bin/sleep 60 || bail "cannot build the hostile bundle $n"
d run -d --bundle "$T/$n" "$id" </dev/null >/dev/null 2>"$T/$n.err"
check_eq "ptrace racer: the container runs" "$?" 0
# shellcheck disable=SC2046
d exec --cap CAP_SYS_PTRACE "$id" /racer 3 $(stat -c '%d %i' "$DECOY") 0 0 </dev/null >"$T/$n.race" 2>&1 &
rpid=$!
for _ in $(seq 30); do d exec "$id" /bin/true </dev/null >/dev/null 2>&1; done
wait "$rpid"
diag "ptrace racer: $(tail -1 "$T/$n.race")"
check "ptrace racer: it opened the exes of processes as the execs came and went" \
    grep -q '^SCANS [1-9][0-9]* OPENED [1-9]' "$T/$n.race"
check_not "ptrace racer: none of them was the decoy brig as is" grep -q '^HIT' "$T/$n.race"
check "ptrace racer: the decoy brig is byte-identical after the race" cmp -s "$DECOY" "$DECOY.orig"
cp "$DECOY.orig" "$DECOY"
d delete --force "$id" >/dev/null 2>&1
assert_clean $n

# ---- where the read-only view cannot be made: the sealed memfd copy ----------------
# (/run/brig-exe, the view's empty second layer, is a file here: overlayfs refuses it;
# rootless brig and kernels without the new mount API take the same way)
if [ -d /run/brig-exe ] && rmdir /run/brig-exe 2>/dev/null && touch /run/brig-exe; then
    n=noview; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n none /bin/sleep 60 || bail "cannot build the hostile bundle $n"
    d create --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    check_eq "no view possible: create" "$?" 0
    init=$(d state "$id" 2>/dev/null | jq -r '.pid // empty')
    case $(readlink "/proc/$init/exe" 2>&1) in
        /memfd:brig-exe:*) ok "no view possible: the created init runs from the sealed memfd copy" ;;
        *) not_ok "no view possible: the created init runs from the sealed memfd copy" "$(readlink "/proc/$init/exe" 2>&1)" ;;
    esac
    rm -f /run/brig-exe
    d delete --force "$id" >/dev/null 2>&1
else
    skip "no view possible: the sealed memfd copy" "/run/brig-exe is in use (not an empty directory)"
fi

# ---- brig installed on a read-only overlayfs (a container's read-only root) ---------
# is not taken for its own view: it makes one of its own (its exe then reads as the
# binary's name at a mount root), never runs the container's init from that mount,
# whose upper layer a mapping reaches on older kernels
mkdir -p "$T/ro-low" "$T/ro-empty" "$T/ro-mnt"
cp "$DECOY" "$T/ro-low/decoy-brig"
for f in "$(dirname "$DECOY")"/brig-init; do [ -e "$f" ] && cp "$f" "$T/ro-low/"; done
if mount -t overlay -o "ro,lowerdir=$T/ro-low:$T/ro-empty" brig-ro "$T/ro-mnt" 2>/dev/null; then
    n=roover; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n none /bin/sleep 60 || bail "cannot build the hostile bundle $n"
    as_brig_user timeout -k 5 60 "$T/ro-mnt/decoy-brig" --root "$STATE" create --bundle "$T/$n" "$id" \
        </dev/null >"$T/$n.out" 2>"$T/$n.err"
    check_eq "brig on a read-only overlayfs: create" "$?" 0
    init=$(d state "$id" 2>/dev/null | jq -r '.pid // empty')
    l=$(readlink "/proc/$init/exe" 2>&1)
    case $l in
        /decoy-brig | /memfd:brig-exe:*) ok "brig on a read-only overlayfs: the init runs from brig's own view or copy ($l)" ;;
        *) not_ok "brig on a read-only overlayfs: the init runs from brig's own view or copy" "it is: $l" ;;
    esac
    d delete --force "$id" >/dev/null 2>&1
    umount "$T/ro-mnt"
else
    skip "brig on a read-only overlayfs" "cannot mount an overlayfs here"
fi

# ---- the re-exec's loop guard set by the caller ------------------------------------
# brig marks its own sealed re-exec with _BRIG_EXE_SEALED (naming the memfd);
# the same variable in the caller's environment, with any value, must not
# stand for "already sealed": create, run and exec still seal themselves
# (their init and a waiting exec run from the memfd), and the attack finds
# the sealed copy.
for val in 1 "$(stat -c '%d:%i' "$DECOY" | awk -F: '{printf "%x:%x", $1, $2}')" "0:0"; do
    n=guard-$(tr -c 'a-z0-9' x <<<"$val" | head -c 12); id=$(cid "$n"); CLEAN_IDS+=("$id")
    hostile "$n" none /bin/sleep 60 || bail "cannot build the hostile bundle $n"
    _BRIG_EXE_SEALED=$val d create --bundle "$T/$n" "$id" </dev/null >"$T/$n.out" 2>"$T/$n.err"
    rc=$?
    init=$(d state "$id" 2>/dev/null | jq -r '.pid // empty')
    if [ "$rc" = 0 ] && [ -n "$init" ]; then
        host_exe_sealed "_BRIG_EXE_SEALED=$val from the caller: create still seals (the created init)" "$init"
    elif grep -q 'is not one: refusing' "$T/$n.err"; then
        # a value naming the decoy itself reads as brig's own re-exec that
        # did not seal: refused, never run unsealed
        check_eq "_BRIG_EXE_SEALED=$val (the decoy's own dev:ino): create refuses, fail closed" "$val"             "$(stat -c '%d:%i' "$DECOY" | awk -F: '{printf "%x:%x", $1, $2}')"
        d delete --force "$id" >/dev/null 2>&1
        continue
    else
        not_ok "_BRIG_EXE_SEALED=$val from the caller: create still seals" "exit $rc" "$(cat "$T/$n.err")"
        continue
    fi
    d start "$id" >>"$T/$n.err" 2>&1
    as_brig_user_exec env _BRIG_EXE_SEALED="$val" "$DECOY" --root "$STATE" exec "$id" /bin/sleep 3 </dev/null >/dev/null 2>&1 &
    bpid=$!
    sleep 0.5
    host_exe_sealed "_BRIG_EXE_SEALED=$val from the caller: a waiting brig exec" "$bpid"
    wait "$bpid"
    if [ $STATIC = 0 ]; then
        _BRIG_EXE_SEALED=$val d exec "$id" /pwn </dev/null >"$T/$n.pwn" 2>>"$T/$n.err"
        wait_done "$T/$n.pwn"
        judge "_BRIG_EXE_SEALED=$val: exec" "$T/$n.pwn"
    fi
    d delete --force "$id" >/dev/null 2>&1
    assert_clean "$n"
done

# ---- static brig: the init is brig itself, its exe held from beside it ------------
# With no pid namespace of its own, the container outlives its init: the
# init runs brig (#!/proc/self/exe --log=/fifo, held in open() of the FIFO),
# and a process `brig exec` starts beside it takes the init's exe and writes
# it once brig exits. The init is a clone of `brig run -d`: its exe is that
# brig's, which must be the sealed copy. Not rootless: a user namespace's
# proc is mounted only in a pid namespace it owns (nor can one join another
# user namespace's pid namespace, below).
if [ "${BRIG_ROOTLESS:-0}" = 1 ]; then
    skip "no pid namespace: static brig" "rootless: a container without a pid namespace of its own cannot mount its /proc"
    skip "pid ns joined by path" "rootless: a pid namespace is joined only from within its own user namespace"
elif [ $STATIC = 1 ]; then
    n=nopid; id=$(cid $n); CLEAN_IDS+=("$id")
    hostile $n none /pwn-fifo && cfg $n '.linux.namespaces |= map(select(.type != "pid"))' ||
        bail "cannot build the hostile bundle $n"
    d run -d --bundle "$T/$n" "$id" </dev/null >"$T/$n.init" 2>"$T/$n.err"
    check_eq "no pid namespace: run -d" "$?" 0
    d exec "$id" /hunter </dev/null >"$T/$n.out" 2>>"$T/$n.err"
    for _ in $(seq 80); do grep -q '^HUNT done' "$T/$n.out" && break; sleep 0.1; done
    diag "no pid namespace: $(grep '^HUNT' "$T/$n.out" | tr '\n' ' ')"
    check "no pid namespace: static brig: brig ran as the init and its exe was held" grep -q '^HUNT exe=' "$T/$n.out"
    check "no pid namespace: static brig: that exe is brig's sealed copy or view" \
        grep -q -e '^HUNT exe=/memfd:brig-exe:' -e "^HUNT exe=/${DECOY##*/}\$" "$T/$n.out"
    check "no pid namespace: static brig: brig refused /pwn-fifo" grep -qF 'no such command: /pwn-fifo' "$T/$n.out"
    check "no pid namespace: static brig: the hunter finished" grep -q '^HUNT done' "$T/$n.out"
    check_not "no pid namespace: static brig: no byte of brig's exe could be written" \
        grep -q '^HUNT wrote [0-9]' "$T/$n.out"
    if cmp -s "$DECOY" "$DECOY.orig"; then
        ok "no pid namespace: static brig: the decoy brig is byte-identical after the hunt"
    else
        not_ok "no pid namespace: static brig: the decoy brig is byte-identical after the hunt"
        cp "$DECOY.orig" "$DECOY"
    fi
    d delete --force "$id" >/dev/null 2>&1
    assert_clean $n
fi

# ---- a container that joins another's pid namespace by path -----------------------
# The created init of "peer" (brig, before its execve) is visible in "host-a":
# its exe must not be reachable from there (non-dumpable), and is a sealed copy.
if [ "${BRIG_ROOTLESS:-0}" != 1 ]; then
hostile host-a none /bin/sleep 60 || bail "cannot build bundle host-a"
hostile peer none /bin/true || bail "cannot build bundle peer"
CLEAN_IDS+=("$(cid host-a)" "$(cid peer)")
d run -d --bundle "$T/host-a" "$(cid host-a)" </dev/null >/dev/null 2>"$T/host-a.err"
apid=$(d state "$(cid host-a)" 2>/dev/null | jq -r '.pid // empty')
if [ -n "$apid" ]; then
    cfg peer '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
        --arg p "/proc/$apid/ns/pid"
    d create --bundle "$T/peer" "$(cid peer)" </dev/null >/dev/null 2>"$T/peer.err"
    check_eq "pid ns joined by path: the peer is created" "$?" 0
    ppid=$(d state "$(cid peer)" 2>/dev/null | jq -r '.pid // empty')
    host_exe_sealed "pid ns joined by path: the peer's created init" "${ppid:-0}"
    # The peer's init as host-a numbers it (the last NSpid field).
    nsp=$(awk '/^NSpid/ {print $NF}' "/proc/${ppid:-0}/status" 2>/dev/null)
    seen=$(d exec "$(cid host-a)" /bin/sh -c "test -d /proc/$nsp && echo VISIBLE
        readlink /proc/$nsp/exe || echo NO-LINK
        cat /proc/$nsp/exe >/dev/null 2>&1 && echo READABLE || echo NOT-READABLE" 2>&1)
    check "pid ns joined by path: host-a sees the peer's init" grep -qx VISIBLE <<<"$seen"
    if grep -q -e "$DECOY" -e decoy-brig -e READABLE <<<"$(grep -v NOT-READABLE <<<"$seen")"; then
        not_ok "pid ns joined by path: the peer's exe is out of host-a's reach" "$seen"
    else
        ok "pid ns joined by path: the peer's exe is out of host-a's reach"
    fi
    d delete --force "$(cid peer)" >/dev/null 2>&1
else
    not_ok "pid ns joined by path: host-a runs" "$(cat "$T/host-a.err")"
fi
d delete --force "$(cid host-a)" >/dev/null 2>&1
assert_clean host-a
assert_clean peer
fi

# ---- sandbox run (agent): a command that hunts brig's exe from inside ------------
# The one-shot sandbox's command looks at every /proc/PID/exe it can see and
# tries to write each (a brig there would be the host binary, or its sealed
# copy); then the image's #!/proc/self/exe file as the command, and
# /proc/self/exe itself. brig-init is found beside the decoy, as installed.
SB_INIT=${BRIG_INIT:-$(dirname "$BRIG")/../sandbox/brig-init}
[ -x "$SB_INIT" ] || SB_INIT=$(dirname "$BRIG")/brig-init
cp "$SB_INIT" "$T/brig-init" || bail "cannot copy brig-init beside the decoy"
printf '%s\n' '#!/bin/sh' 'for p in /proc/[0-9]*; do' \
    '  l=$(readlink "$p/exe" 2>&1); echo "EXE $p $l"' \
    '  if printf PWN 2>/dev/null >>"$p/exe"; then echo "WROTE $p $l"; fi' \
    'done' 'echo HUNT-DONE' >"$r/hunt" && chmod 0755 "$r/hunt" || bail "cannot plant the hunter"
# sb_run NAME ARGS...: the decoy's sandbox run of ARGS under the agent policy.
sb_run() {
    local n=$1; shift
    as_brig_user timeout -k 5 120 "$DECOY" sandbox run --policy "$POL" --state-root "$T/sbstate" --rootfs "$r" \
        --workspace "$T/ws" --env "BRIG_IT_TAG=$(cid "$n")" --json -- "$@" >"$T/$n.out" 2>"$T/$n.err"
}
sb_run sb-hunt /hunt
check_eq "sandbox run: the hunter ran (exit 0)" "$?" 0
hunt=$(jq -r '(.stdout.preview_head // "") + (.stdout.preview_tail // "")' "$T/sb-hunt.out" 2>/dev/null)
check "sandbox run: the hunter finished its scan" grep -q HUNT-DONE <<<"$hunt"
check "sandbox run: the hunter saw its own exe" grep -q '^EXE /proc/[0-9]* /' <<<"$hunt"
check_not "sandbox run: no brig process (host binary or sealed copy) is visible in the sandbox" \
    grep -q -e decoy-brig -e 'brig-exe:' <<<"$hunt"
check_not "sandbox run: no exe of any visible process could be written" grep -q '^WROTE' <<<"$hunt"
check "sandbox run (hunter): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
cp "$DECOY.orig" "$DECOY"
sb_run sb-pwn /pwn
check_not "sandbox run: #!/proc/self/exe as the command did not run the hostile loader" \
    grep -q 'PWN exe=' "$T/sb-pwn.out" "$T/sb-pwn.err"
check "sandbox run (#!/proc/self/exe): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
cp "$DECOY.orig" "$DECOY"
sb_run sb-self /proc/self/exe
check "sandbox run: /proc/self/exe as the command is refused before anything runs" \
    grep -q 'no such executable in the rootfs' "$T/sb-self.out" "$T/sb-self.err"
check "sandbox run (/proc/self/exe): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
# A rootfs whose /dev is a symlink into the workspace, where a `#!/proc/self/exe`
# .brig-init waits: the init must be brig-init, reached without a symlink.
cp -a "$r" "$T/devlink" && rm -rf "$T/devlink/dev" && ln -s workspace "$T/devlink/dev" &&
    mkdir -p "$T/ws2" && printf '#!/proc/self/exe\n' >"$T/ws2/.brig-init" && chmod 0755 "$T/ws2/.brig-init" &&
    chown -R "$SB_WS_OWNER" "$T/ws2" || bail "cannot make the /dev-symlink rootfs"
as_brig_user timeout -k 5 120 "$DECOY" sandbox run --policy "$POL" --state-root "$T/sbstate" --rootfs "$T/devlink" \
    --workspace "$T/ws2" --env "BRIG_IT_TAG=$(cid sb-devlink)" --json -- /bin/true >"$T/sb-devlink.out" 2>"$T/sb-devlink.err"
rc=$?
# (refused when /dev is mounted, which needs a real directory there; the
# check of the live init's /dev/.brig-init stays behind it)
check "sandbox run: /dev a symlink into the workspace: refused (125) naming /dev" \
    eval '[ "$rc" = 125 ] && grep -qE "/dev/.brig-init in the sandbox is not|/dev is a symlink" "$T/sb-devlink.out"'
check_not "sandbox run (/dev symlink): the hostile loader never ran" \
    grep -q 'PWN exe=' "$T/sb-devlink.out" "$T/sb-devlink.err"
check "sandbox run (/dev symlink): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
check "sandbox run: the decoy brig still runs" "$DECOY" --version
for n in sb-hunt sb-pwn sb-self sb-devlink; do assert_clean "$n"; done

# ---- brig run from brig's unsealed binary (linux/exe_trampoline.h) -----------------------
# Which runs may go unsealed: a pid namespace of the container's own, no hooks, no
# CAP_SYS_PTRACE, no LSM label; create, and every other run, re-executes sealed.
# rd NAME JQ: brig run --debug of /hunt in a copy of the image whose config is changed by JQ.
rd() {
    local n=$1; shift
    hostile "$n" none /hunt || bail "cannot build the bundle $n"
    cfg "$n" "$@" || bail "cannot change the config of $n"
    d --debug run --bundle "$T/$n" "$(cid "$n")" </dev/null >"$T/$n.out" 2>"$T/$n.err"
}
TRAMP_LINE="through brig-init (sealed copy)"
rd rt-plain '.'
check "run unsealed: its process was exec'd through the sealed trampoline" grep -qF "$TRAMP_LINE" "$T/rt-plain.err"
check_not "run unsealed: brig did not re-execute itself" grep -q "re-executing from" "$T/rt-plain.err"
check "run unsealed: the hunter finished its scan" grep -q HUNT-DONE "$T/rt-plain.out"
check_not "run unsealed: no brig process (host binary or sealed copy) is visible in the container" \
    grep -q -e "${DECOY##*/}" -e 'brig-exe:' -e 'brig-init' "$T/rt-plain.out"
check_not "run unsealed: no exe of any visible process could be written" grep -q '^WROTE' "$T/rt-plain.out"
check "run unsealed (hunter): the decoy brig is byte-identical" cmp -s "$DECOY" "$DECOY.orig"
cp "$DECOY.orig" "$DECOY"
# A filter that answers exit_group with an errno (the trampoline's own exit falls back
# to exit, as glibc's _exit does): a failed exec ends the run as the sealed one does,
# never a pid 1 that spins in its exit.
printf 'not a program\n' >"$r/noexec" && chmod 0644 "$r/noexec" || bail "cannot plant /noexec"
BRIG_TIMEOUT=15 rd rt-exitgroup '.process.args = ["/noexec"] | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["exit_group"], "action": "SCMP_ACT_ERRNO"}]}'
rc=$?
check "run unsealed, exit_group denied: through the trampoline" grep -qF "$TRAMP_LINE" "$T/rt-exitgroup.err"
check_eq "run unsealed, exit_group denied: a failed exec ends the run (exit 1, not the timeout's)" "$rc" 1
check "run unsealed, exit_group denied: the sealed run's message" grep -q "exec /noexec: Permission denied" \
    "$T/rt-exitgroup.err"
sealed_run() {
    rd "$1" "$3"
    check "run sealed when $2: brig re-executed itself" grep -q "re-executing from" "$T/$1.err"
    check_not "run sealed when $2: no trampoline" grep -qF "$TRAMP_LINE" "$T/$1.err"
}
sealed_run rt-ptrace "CAP_SYS_PTRACE is in the bounding set" '.process.capabilities.bounding += ["CAP_SYS_PTRACE"]'
sealed_run rt-nopid "the container has no pid namespace" '.linux.namespaces |= map(select(.type != "pid"))'
sealed_run rt-hook "the config has a hook" '.hooks.poststop = [{"path": "/bin/true"}]'
rd rt-aa '.process.apparmorProfile = "unconfined"'
if grep -q "AppArmor is not enabled on this host" "$T/rt-aa.err"; then
    check_not "run with process.apparmorProfile: refused here (no AppArmor), before any trampoline" \
        grep -qF "$TRAMP_LINE" "$T/rt-aa.err"
else
    check "run sealed when process.apparmorProfile is set: brig re-executed itself" \
        grep -q "re-executing from" "$T/rt-aa.err"
    check_not "run sealed when process.apparmorProfile is set: no trampoline" grep -qF "$TRAMP_LINE" "$T/rt-aa.err"
fi
for n in rt-plain rt-exitgroup rt-ptrace rt-nopid rt-hook rt-aa; do d delete --force "$(cid "$n")" >/dev/null 2>&1; assert_clean "$n"; done

for n in cs run rund args exec; do
    for pol in none agent; do assert_clean "$n-$pol"; done
done
