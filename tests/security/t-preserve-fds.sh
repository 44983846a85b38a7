#!/usr/bin/env bash
# CVE-2024-21626 class through --preserve-fds: N names the caller's fds
# 3..3+N-1, which brig leaves open at the final execve. Where the caller has
# none (N too large, or a gap), brig's own descriptors (close-on-exec: the
# bundle, a cgroup directory) took those numbers, and the kernel resolves
# a #! interpreter before close-on-exec applies: `#!/proc/self/fd/N/../..`
# ran a host-only program in the container (then open to overwrite through
# /proc/<pid>/exe). brig closes its own close-on-exec fds in the preserved
# range before execve (a caller's close-on-exec fd is not passed anyway).
# The host-only program is a decoy in the test's temp dir; brig runs with
# nothing open at 3..63 and --preserve-fds 64, in run, create+start, exec.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

cat >"$T/decoy.c" <<'EOF'
#include <stdio.h>
int main(void) { puts("HOST-DECOY-RAN"); return 0; }
EOF
mkdir -p "$T/hostbin"
build_static "$T/hostbin/decoy" "$T/decoy.c"
FDS=$(seq 3 20)
UP=$(printf '../%.0s' $(seq 40))

# nofds CMD...: CMD with nothing open above 2 (the caller has no fd to pass).
nofds() {
    (
        for fd in $(seq 3 63); do eval "exec $fd>&-"; done
        exec "$@"
    )
}

# A script per fd number whose interpreter goes through that fd.
scripts() { # ROOTFS
    local n
    for n in $FDS; do
        printf '#!/proc/self/fd/%d/%s%s\n' "$n" "$UP" "${T#/}/hostbin/decoy" >"$1/s$n"
        chmod +x "$1/s$n"
    done
}

mkb pf -- /s3 || bail "cannot build a bundle"
scripts "$T/pf/rootfs"

# ---- run --------------------------------------------------------------------------------
hits=""
for n in $FDS; do
    cfg pf '.process.args = [$a]' --arg a "/s$n"
    CLEAN_IDS+=("$(cid pf)")
    nofds "$BRIG" --root "$STATE" run --preserve-fds 64 --bundle "$T/pf" "$(cid pf)" </dev/null \
        >"$T/pf.out" 2>&1
    grep -q HOST-DECOY-RAN "$T/pf.out" && hits="$hits $n"
    b delete -f "$(cid pf)" >/dev/null 2>&1
done
check_eq "run --preserve-fds 64: no #! through fds 3-20 ran a host program" "$hits" ""

# ---- create + start ------------------------------------------------------------------------
hits=""
for n in $FDS; do
    cfg pf '.process.args = [$a]' --arg a "/s$n"
    nofds "$BRIG" --root "$STATE" create --preserve-fds 64 --bundle "$T/pf" "$(cid pf)" </dev/null \
        >"$T/pf.out" 2>&1
    b start "$(cid pf)" >/dev/null 2>&1
    wait_status "$(cid pf)" stopped 5 || true
    grep -q HOST-DECOY-RAN "$T/pf.out" && hits="$hits $n"
    b delete -f "$(cid pf)" >/dev/null 2>&1
done
check_eq "create+start --preserve-fds 64: no #! through fds 3-20 ran a host program" "$hits" ""
assert_clean pf

# ---- exec --------------------------------------------------------------------------------
mkb ex -- /usr/bin/brig-probe sleep 120 || bail "cannot build a bundle"
scripts "$T/ex/rootfs"
create_ct ex
start_ct ex || bail "the exec container does not start"
hits=""
for n in $FDS; do
    nofds "$BRIG" --root "$STATE" exec --preserve-fds 64 "$(cid ex)" "/s$n" </dev/null >"$T/ex.out" 2>&1
    grep -q HOST-DECOY-RAN "$T/ex.out" && hits="$hits $n"
done
check_eq "exec --preserve-fds 64: no #! through fds 3-20 ran a host program" "$hits" ""

# ---- use: a caller's fd is still passed --------------------------------------------------
(
    exec 3<"$T/decoy.c"
    "$BRIG" --root "$STATE" exec --preserve-fds 1 "$(cid ex)" /bin/sh -c 'head -c 18 <&3' </dev/null \
        >"$T/use.out" 2>&1
)
check "use: exec --preserve-fds 1 passes the caller's fd 3" grep -q '#include <stdio.h>' "$T/use.out"
b delete -f "$(cid ex)" >/dev/null 2>&1
assert_clean ex
