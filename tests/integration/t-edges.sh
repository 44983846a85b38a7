#!/usr/bin/env bash
# Lifecycle edges no other test reaches: start after the init died, a
# failing poststart hook (runtime-spec: a warning, and start still
# succeeds), --no-pivot, and linux.rootfsPropagation as the container's
# own mount table shows it.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# ---- start after the init died ---------------------------------------------------
mkb dead -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
create_ct dead
ID=$(cid dead)
PID=$(state_field "$ID" pid)
if [ "$RC" = 0 ] && [ -n "$PID" ] && [ "$PID" -gt 0 ]; then
    kill -9 "$PID"
    check "the init killed from the host: state says stopped" wait_status "$ID" stopped 5
    check_refused "start after the init died is refused" "cannot start a container that is stopped" 1 \
        b start "$ID"
    check "... no process of it runs" test -z "$(tagged_pids "$ID")"
    check "... delete works" b delete "$ID"
else
    not_ok "create a container to kill" "$(cat "$T/dead.err")"
fi
assert_clean dead

# ---- a failing poststart hook ------------------------------------------------------
# runtime-spec (config.md, poststart): "If any poststart hook fails, the
# runtime MUST log a warning, but the remaining hooks and lifecycle continue
# as if the hook had succeeded." Only that is asserted.
mkb ps -- /usr/bin/brig-probe sleep 600 || bail "cannot build a bundle"
cfg ps '.hooks = {poststart: [{path: "/bin/sh", args: ["sh", "-c", "exit 7"]}]}'
create_ct ps
b start "$(cid ps)" >"$T/ps-start.out" 2>"$T/ps-start.err"
check_eq "start with a failing poststart hook still succeeds" "$?" 0
check "... with a warning on stderr naming the hook" grep -qi "poststart" "$T/ps-start.err"
check "... and the container runs" wait_status "$(cid ps)" running 5
b delete --force "$(cid ps)" >/dev/null 2>&1
assert_clean ps

# ---- --no-pivot ------------------------------------------------------------------
mkb np -- /bin/cat /proc/self/mountinfo /etc/brig-np-marker || bail "cannot build a bundle"
echo np-marker-inside > "$T/np/rootfs/etc/brig-np-marker"
run_ct np --no-pivot
check_eq "run --no-pivot works" "$RC" 0
check "... the process sees the bundle's rootfs as /" grep -qx np-marker-inside "$T/np.out"
check "... and no mount point of the host's (none under $T)" bash -c "! awk '{print \$5}' '$T/np.out' | grep -qF '$T'"
check "... / is the only mount point not under /proc, /dev, /sys" bash -c \
    "[ \"\$(awk '\$5 !~ \"^/(proc|dev|sys)(/|\$)\" {print \$5}' '$T/np.out' | sort -u)\" = / ]"
assert_clean np

# ---- rootfsPropagation -----------------------------------------------------------
# The optional fields of "/" in the container's mountinfo: shared:N,
# master:N, or none (private).
root_line() { awk '$5 == "/" { l = $0 } END { print l }' "$T/$1.out"; }
for prop in shared slave private; do
    mkb "rp-$prop" -- /bin/cat /proc/self/mountinfo || continue
    cfg "rp-$prop" '.linux.rootfsPropagation = $p' --arg p "$prop"
    run_ct "rp-$prop"
    check_eq "rootfsPropagation $prop: the container ran" "$RC" 0
    line=$(root_line "rp-$prop")
    case $prop in
        shared) check "... / is shared inside ($line)" grep -q ' shared:[0-9]' <<<"$line" ;;
        # a slave of a private host mount has no master: only "not shared"
        slave) check "... / is not shared inside ($line)" bash -c "! grep -q ' shared:' <<<'$line'" ;;
        private) check "... / is private inside ($line)" bash -c "! grep -qE ' (shared|master):' <<<'$line'" ;;
    esac
    assert_clean "rp-$prop"
done
mkb rp-bad || true
cfg rp-bad '.linux.rootfsPropagation = "sideways"'
create_ct rp-bad
check_refused_rc "rootfsPropagation sideways is refused" "linux.rootfsPropagation" 1 "$RC" "$T/rp-bad.err"
assert_clean rp-bad
