#!/usr/bin/env bash
# The state root and the seccomp cache in it (BPF the next container
# runs under): a cache dir another user owns is neither read nor written, a
# --root others can write is refused.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

# ---- the seccomp cache and the state root -----------------------------------
# The cache holds BPF the next container runs under: a cache directory that
# another user owns is neither read nor written, and the filter still loads.
R2=$T/state2
mkb sc -- /usr/bin/brig-probe report || bail "cannot build a bundle"
cfg sc '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["keyctl"], action: "SCMP_ACT_ERRNO"}]}'
CLEAN_IDS+=("$(cid sc)")
# Twice: the first create makes the state root after compiling.
for _ in 1 2; do
    timeout -k 5 60 "$BRIG" --root "$R2" run --bundle "$T/sc" "$(cid sc)" </dev/null >"$T/sc.out" 2>"$T/sc.err"
    RC=$?
done
check_ran "a container with a filter runs (cache filled)" sc
n_before=$(find "$R2/.seccomp-cache" -type f 2>/dev/null | wc -l)
check "the cache holds an entry" test "$n_before" -ge 1
chown 65534:65534 "$R2/.seccomp-cache"
cfg sc '.linux.seccomp.syscalls[0].names += ["add_key"]'
timeout -k 5 60 "$BRIG" --root "$R2" run --bundle "$T/sc" "$(cid sc)" </dev/null >"$T/sc.out" 2>"$T/sc.err"
RC=$?
check_ran "with the cache dir owned by another user the container still runs" sc
check_probe "... under its seccomp filter" sc '.seccomp == 2'
check_eq "... and brig wrote nothing into that directory" \
    "$(find "$R2/.seccomp-cache" -type f | wc -l)" "$n_before"
mkdir -p "$T/wroot" && chmod 1777 "$T/wroot"
out=$(timeout -k 5 60 "$BRIG" --root "$T/wroot" run --bundle "$T/sc" "$(cid sc-w)" 2>&1 </dev/null)
rc=$?
if [ "$rc" != 0 ] && grep -q "writable by group or others" <<<"$out" && [ -z "$(ls -A "$T/wroot")" ]; then
    ok "a --root others can write is refused, nothing made in it"
else
    not_ok "a --root others can write is refused, nothing made in it" "exit $rc" "$out"
fi
timeout -k 5 30 "$BRIG" --root "$R2" delete --force "$(cid sc)" >/dev/null 2>&1
