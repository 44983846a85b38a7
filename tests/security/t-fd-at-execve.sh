#!/usr/bin/env bash
# The CVE-2024-21626 class (docs/security.md): no host fd may be open when
# brig execs the container's program. execve resolves process.args[0], a
# script's #! interpreter and an ELF's PT_INTERP *before* it closes
# close-on-exec fds, so /proc/self/fd/N/../../.. through a host directory
# fd (a cgroup dir, the workspace, brig's own namespaces) leads out of the
# root. For every fd number 3..20, in every mode that reaches the execve
# (run, create+start, exec, exec -t with a console socket, under the agent
# policy, with --log, a hook and --preserve-fds), each of the three lookups
# is aimed at a decoy in our temp dir that only prints ESCAPED. Then, from
# inside, only 0-2 and the preserved fds are open. The modes run side by
# side (one bundle and container each): ~400 containers and execs, one
# after another, took minutes under ASan.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_RECVTTY:?BRIG_RECVTTY must point at the recvtty helper}"

FDS=$(seq 3 20)
# Rootless (security-fd-at-execve-rootless): the fds a rootless brig holds
# beyond root's are few (the user namespace's maps); 3-12 keep its CI time small.
[ "${BRIG_ROOTLESS:-0}" = 1 ] && FDS=$(seq 3 12)
UP=$(printf '../%.0s' $(seq 1 30))
# via N: the decoy, reached from fd N of the process doing the execve.
via() { echo "/proc/self/fd/$1/$UP${T#/}/decoy/esc"; }

# The decoy: no libc, so it runs as a program, a #! interpreter or a
# PT_INTERP alike, and only says that it ran.
mkdir -p "$T/decoy"
cat >"$T/esc.c" <<'EOF'
static long sys3(long n, long a, long b, long c)
{
    long r;
#if defined(__x86_64__)
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    r = x0;
#else
#error "x86_64 or aarch64 only"
#endif
    return r;
}
void _start(void)
{
    static const char m[] = "ESCAPED\n";
#if defined(__x86_64__)
    sys3(1, 1, (long)m, sizeof(m) - 1);
    sys3(60, 0, 0, 0);
#else
    sys3(64, 1, (long)m, sizeof(m) - 1);
    sys3(93, 0, 0, 0);
#endif
    for (;;) {}
}
EOF
build_static "$T/decoy/esc" "$T/esc.c" -nostdlib -fno-stack-protector
[ "$("$T/decoy/esc")" = ESCAPED ] || bail "the decoy does not run"

# In each rootfs: /s/N, a #! script whose interpreter is the decoy via fd N,
# and /e/N, an ELF whose PT_INTERP is. Both are the container's own files:
# only the kernel's lookup of the interpreter goes through the fd. One ELF
# is linked with fd "XX/" and patched for each N ("3//" or "10/": same
# length), since a link per fd number costs seconds on a busy machine.
echo 'int main(void) { return 0; }' >"$T/main.c"
mkdir -p "$T/elf"
cc -O1 -o "$T/elf/XX" "$T/main.c" -Wl,--dynamic-linker="/proc/self/fd/XX/$UP${T#/}/decoy/esc" \
    2>"$T/elf.log" || bail "cannot link with a PT_INTERP: $(head -c 300 "$T/elf.log")"
off=$(grep -obUa 'fd/XX/' "$T/elf/XX" | head -n 1 | cut -d: -f1)
[ -n "$off" ] || bail "no PT_INTERP string in the linked ELF"
for n in $FDS; do
    cp "$T/elf/XX" "$T/elf/$n"
    pad=/; [ "$n" -lt 10 ] && pad=//
    printf 'fd/%s%s' "$n" "$pad" | dd of="$T/elf/$n" bs=1 seek="$off" conv=notrunc status=none
done
plant() { # NAME: the scripts and ELFs in NAME's rootfs
    local r=$T/$1/rootfs n
    mkdir -p "$r/s" "$r/e"
    for n in $FDS; do
        printf '#!%s\n' "$(via "$n")" >"$r/s/$n"
        chmod 0755 "$r/s/$n"
        cp "$T/elf/$n" "$r/e/$n"
    done
}

# lookups N: the three args[0] aimed at the decoy through fd N.
lookups() { echo "$(via "$1") /s/$1 /e/$1"; }

# setarg NAME ARG0: process.args = [ARG0] (sed on the "@ARG0@" that mkb
# was given: a jq per attempt would double the run time of this file).
setarg() {
    sed "s|\"@ARG0@\"|\"$2\"|" "$T/$1/config.tmpl" >"$T/$1/config.json"
}
tmpl() { cp "$T/$1/config.json" "$T/$1/config.tmpl"; }
# gone PID: the process has exited (or is a zombie), 5 s at most.
gone() {
    local k=250 st
    while [ $k -gt 0 ]; do
        st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 0
        [ "$st" = Z ] && return 0
        sleep 0.02; k=$((k - 1))
    done
    return 1
}

# attempt KEY N ARG0 OUTFILE: the decoy ran if OUTFILE says so; noted in
# $T/esc/KEY (the modes run in background jobs: a file, not a variable).
mkdir -p "$T/esc"
attempt() {
    if grep -q ESCAPED "$4" 2>/dev/null; then echo "fd $2: $3" >>"$T/esc/$1"; fi
}
# report KEY MODE: after the job of KEY ended (its file "done" says it ran
# to the end: a job that died early proves nothing).
report() {
    local d="$2: no host fd at execve leads to the decoy (fds 3-20, args[0], #!, PT_INTERP)"
    if [ ! -e "$T/esc/$1.done" ]; then
        not_ok "$d" "the attempts did not run to the end (or their container stopped)"
    elif [ -s "$T/esc/$1" ]; then
        not_ok "$d" "$(cat "$T/esc/$1")"
    else
        ok "$d"
    fi
}

# ---- the bundles and the exec container ---------------------------------------
mkb run -- @ARG0@ || bail "cannot build a bundle"
plant run
tmpl run
CLEAN_IDS+=("$(cid run)")
mkb cs -- @ARG0@ || bail "cannot build a bundle"
plant cs
tmpl cs
CLEAN_IDS+=("$(cid cs)")
mkb hk -- @ARG0@ || bail "cannot build a bundle"
plant hk
cfg hk '.hooks = {prestart: [{path: "/bin/true"}], createRuntime: [{path: "/bin/true"}],
                  poststart: [{path: "/bin/true"}]}'
tmpl hk
echo data >"$T/pf.data"
CLEAN_IDS+=("$(cid hk)")
wait_socket() {
    local k=50
    while [ $k -gt 0 ] && [ ! -S "$1" ]; do sleep 0.02; k=$((k - 1)); done
    [ -S "$1" ]
}
# It must outlive every job and the checks after them (an hour: minutes
# on a busy machine under ASan).
mkb ex -- /usr/bin/brig-probe sleep 3600 || bail "cannot build a bundle"
plant ex
create_ct ex
start_ct ex || bail "the exec container does not start"
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a | .mode = "enforce" | '"$RL_POLICY_JQ" \
    >"$T/agent.json"
mkdir -p "$T/ws"
mkb ag -- @ARG0@ || bail "cannot build a bundle"
plant ag
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/ag/config.json" \
    "$T/ag" || bail "policy apply failed"
tmpl ag
CLEAN_IDS+=("$(cid ag)")

# ---- the attempts: one background job per mode ---------------------------------
# Each job writes only its own bundle's config and output files, and marks
# $T/esc/KEY.done at its end. An exec job counts only if its container still
# runs after its attempts: an exec into a stopped one proves nothing.
running() { [ "$(state_field "$1" status)" = running ]; }
att_run() {
    for n in $FDS; do
        for a in $(lookups "$n"); do
            setarg run "$a"
            run_ct run
            attempt run "$n" "$a" "$T/run.out"
        done
    done
}
att_cs() {
    local n a pid
    for n in $FDS; do
        for a in /s/$n /e/$n; do
            setarg cs "$a"
            create_ct cs
            pid=$(b state "$(cid cs)" 2>/dev/null | grep -o '"pid": *[0-9]*' | grep -o '[0-9]*$')
            b start "$(cid cs)" >/dev/null 2>&1
            [ -n "$pid" ] && gone "$pid"
            attempt cs "$n" "$a" "$T/cs.out"
            b delete -f "$(cid cs)" >/dev/null 2>&1
        done
    done
}
att_hk() {
    for n in $FDS; do
        for a in $(lookups "$n"); do
            setarg hk "$a"
            b --log "$T/hk.log" --debug run --preserve-fds 2 --bundle "$T/hk" "$(cid hk)" \
                </dev/null >"$T/hk.out" 2>"$T/hk.err" 3<"$T/pf.data" 4<"$T/pf.data"
            attempt hk "$n" "$a" "$T/hk.out"
        done
    done
}
att_exec() {
    for n in $FDS; do
        for a in $(lookups "$n"); do
            b exec "$(cid ex)" "$a" </dev/null >"$T/ex.exec.out" 2>&1
            attempt exec "$n" "$a" "$T/ex.exec.out"
        done
    done
    running "$(cid ex)"
}
att_exectty() {
    local n a sock rpid
    for n in $FDS; do
        for a in $(lookups "$n"); do
            sock=$T/ex-$n.sock
            rm -f "$sock"
            "$BRIG_RECVTTY" "$sock" >"$T/ex.tty.out" 2>/dev/null &
            rpid=$!
            wait_socket "$sock"
            b exec -t -d --console-socket "$sock" "$(cid ex)" "$a" </dev/null >/dev/null 2>&1 ||
                kill "$rpid" 2>/dev/null
            wait "$rpid" 2>/dev/null
            attempt exectty "$n" "$a" "$T/ex.tty.out"
        done
    done
    running "$(cid ex)"
}
# run under the policy, then exec into a container of the same bundle.
att_ag() {
    for n in $FDS; do
        for a in $(lookups "$n"); do
            setarg ag "$a"
            b --policy "$T/agent.json" run --bundle "$T/ag" "$(cid ag)" </dev/null >"$T/ag.out" 2>"$T/ag.err"
            attempt agrun "$n" "$a" "$T/ag.out"
        done
    done
    touch "$T/esc/agrun.done"
    cfg ag '.process.args = ["/usr/bin/brig-probe", "sleep", "3600"]'
    if b --policy "$T/agent.json" run -d --bundle "$T/ag" "$(cid ag)" </dev/null >/dev/null 2>"$T/ag.err" &&
        wait_status "$(cid ag)" running 10; then
        for n in $FDS; do
            for a in $(lookups "$n"); do
                b --policy "$T/agent.json" exec "$(cid ag)" "$a" </dev/null >"$T/ag.exec.out" 2>&1
                attempt agexec "$n" "$a" "$T/ag.exec.out"
            done
        done
        running "$(cid ag)" && touch "$T/esc/agexec.done"
        b delete -f "$(cid ag)" >/dev/null 2>&1
    else
        cp "$T/ag.err" "$T/esc/ag.norun"
    fi
}
jobs_=()
for k in run cs hk exec exectty ag; do
    ( "att_$k" && touch "$T/esc/$k.done" ) &
    jobs_+=($!)
done
wait "${jobs_[@]}"

report run "run"
setarg run "$(via 0)"
run_ct run
check "run: args[0] through /proc/self/fd is refused, the error names process.args[0]" \
    grep -q 'process.args\[0\]' "$T/run.err"
check_eq "... before the container was created (no state left)" "$(ls "$STATE" 2>/dev/null | grep -c "$(cid run)")" 0
assert_clean run
report cs "create+start"
assert_clean cs
report hk "run --log --debug --preserve-fds 2, with hooks"
assert_clean hk
report exec "exec"
report exectty "exec -t -d --console-socket"
# /proc/self/exe during execve is brig itself (CVE-2019-5736's ingredient):
# a #! script naming it must not run the host's runtime binary in the
# container. A dynamic brig does not start at all in this libc-less rootfs;
# a static one (the plain build) does and only refuses /s/self as a command.
# Nothing here attacks its exe, so this cannot tell the sealed copy from the
# host binary (an unsealed static brig passes): t-exe-overwrite does that,
# holding /proc/<pid>/exe of brig run inside and writing it once brig exits.
command -v readelf >/dev/null || bail "readelf (binutils) is needed to tell a static brig"
printf '#!/proc/self/exe\n' >"$T/ex/rootfs/s/self"
chmod 0755 "$T/ex/rootfs/s/self"
brig_sum=$(sha256sum <"$BRIG")
out=$(b exec "$(cid ex)" /s/self </dev/null 2>&1)
if readelf -lW "$BRIG" | grep -q 'Requesting program interpreter'; then
    check "exec of a script whose #! is /proc/self/exe does not run brig" \
        bash -c '! grep -q "no such command: /s/self" <<<"$1"' _ "$out"
else
    check "exec of a script whose #! is /proc/self/exe: a static brig only refuses it" \
        grep -qx "brig: no such command: /s/self (see brig --help)" <<<"$out"
    check_eq "... and the brig binary is unchanged" "$(sha256sum <"$BRIG")" "$brig_sum"
fi
b exec "$(cid ex)" "$(via 0)" </dev/null >/dev/null 2>"$T/ex.err"
check "exec: args[0] through /proc/self/fd is refused, the error names process.args[0]" \
    grep -q 'process.args\[0\]' "$T/ex.err"

# ---- under the agent policy (run and exec) ------------------------------------------
report agrun "--policy agent: run"
if [ -e "$T/esc/ag.norun" ]; then
    not_ok "--policy agent: the container runs" "$(cat "$T/esc/ag.norun")"
else
    report agexec "--policy agent: exec"
fi
assert_clean ag

# ---- use: what is open in the container, scripts keep their $0 ------------------------
mkb use -- /usr/bin/brig-probe report || bail "cannot build a bundle"
CLEAN_IDS+=("$(cid use)")
b --log "$T/use.log" run --preserve-fds 2 --bundle "$T/use" "$(cid use)" \
    </dev/null >"$T/use.out" 2>"$T/use.err" 3<"$T/pf.data" 4<"$T/pf.data"
RC=$?
check_ran "run --log --preserve-fds 2 runs the probe" use
check_probe "... which has only 0-2 and the two preserved fds open" use '[.fds[].fd] | sort == [0,1,2,3,4]'
fds=$(b exec "$(cid ex)" /usr/bin/brig-probe report </dev/null 2>/dev/null | grep '^{' | tail -n 1 |
    jq -c '[.fds[].fd] | sort')
check_eq "exec: the process has only 0-2 open" "$fds" "[0,1,2]"
printf '#!/bin/sh\necho "zero=$0"\n' >"$T/ex/rootfs/s/hello"
chmod 0755 "$T/ex/rootfs/s/hello"
out=$(b exec "$(cid ex)" /s/hello </dev/null 2>&1)
check_eq "exec of a #! script: it runs, with its own path as \$0" "$out" "zero=/s/hello"
out=$(b exec --cwd /s "$(cid ex)" ./hello </dev/null 2>&1)
check_eq "exec of ./script relative to --cwd" "$out" "zero=./hello"
mkb sc -- /s/hello || bail "cannot build a bundle"
mkdir -p "$T/sc/rootfs/s" && cp "$T/ex/rootfs/s/hello" "$T/sc/rootfs/s/hello"
run_ct sc
check_eq "run of a #! script: it runs, with its own path as \$0" "$(cat "$T/sc.out")" "zero=/s/hello"
cfg sc '.process.args = ["hello"] | .process.env += ["PATH=/s:/bin"]'
run_ct sc
check_eq "run of a script found in \$PATH" "$(cat "$T/sc.out")" "zero=/s/hello"
b delete -f "$(cid ex)" >/dev/null 2>&1
assert_clean ex
