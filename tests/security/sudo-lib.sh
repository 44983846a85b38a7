# The sudo set-up of the tests of docs/sandbox.md "Through sudo" (sourced
# after lib.sh and it_init): `nobody` may run `sudo brig sandbox run *`
# under a sudoers drop-in of the test's own, with the test's sandbox.conf
# (its policy "host-fixed", state root, rootfs copy and workspaces root
# $T/wsroot on a nosuid bind, $T/wsroot/mine owned by nobody); both files
# are removed on exit. One such test at a time (the conf path is fixed at
# build time). as_caller ARGS...: `sudo brig sandbox run --json ARGS` as
# nobody; RC, $T/out.json, $T/err.txt.
# shellcheck shell=bash

command -v sudo >/dev/null && command -v setpriv >/dev/null && command -v visudo >/dev/null ||
    skip_all "sudo, setpriv and visudo are needed"
[ -d /etc/sudoers.d ] || skip_all "no /etc/sudoers.d"
exec 9>/run/lock/brig-sandbox-sudo-test.lock
flock -w 120 9 || bail "another sudo test holds the lock"

CONF=$("$BRIG" sandbox run --help 2>&1 | grep -o '/[^ ]*/sandbox\.conf' | head -n 1)
[ -n "$CONF" ] || CONF=/usr/local/etc/brig/sandbox.conf    # an old brig names none
[ -e "$CONF" ] && skip_all "$CONF exists (a real installation): not touched"
SUDOERS=/etc/sudoers.d/brig-test-$TAG
made_dir=""
[ -d "$(dirname "$CONF")" ] || { mkdir -p "$(dirname "$CONF")" && made_dir=$(dirname "$CONF"); }
trap 'rc=$?; umount "$T/wsroot" 2>/dev/null; rm -f "$SUDOERS" "$CONF"; [ -n "$made_dir" ] && rmdir "$made_dir"; (exit $rc); it_finish' EXIT

"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/b" >/dev/null 2>&1 || bail "brig-mkbundle failed"
mkdir -p "$T/etc" "$T/wsroot/mine"
chown 65534:65534 "$T/wsroot/mine"
# workspaces on a nosuid mount (docs/sandbox.md), as the host would have them
mount --bind "$T/wsroot" "$T/wsroot" && mount -o remount,bind,nosuid "$T/wsroot" ||
    bail "cannot bind $T/wsroot nosuid"
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.name = "host-fixed" | .audit.path = $a | .timeouts.wall = "30s"' \
    > "$T/etc/policy.json"
jq -n --arg p "$T/etc/policy.json" --arg s "$T/sbstate" --arg r "$T/b/rootfs" --arg w "$T/wsroot" \
    '{policy: $p, stateRoot: $s, rootfs: $r, workspaces: $w}' > "$CONF"
chmod 0644 "$CONF" "$T/etc/policy.json"
printf 'nobody ALL=(root) NOPASSWD: %s sandbox run *\n' "$BRIG" > "$SUDOERS.tmp"
visudo -cqf "$SUDOERS.tmp" || bail "the test's sudoers rule does not parse"
chmod 0440 "$SUDOERS.tmp" && mv "$SUDOERS.tmp" "$SUDOERS"

as_caller() {
    (cd / && timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups -- \
        sudo -n "$BRIG" sandbox run --json "$@") > "$T/out.json" 2> "$T/err.txt"
    RC=$?
}
