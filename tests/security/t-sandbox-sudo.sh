#!/bin/bash
# The unprivileged trusted worker (docs/sandbox.md "Through sudo"): a
# caller allowed only `sudo brig sandbox run *` gets the host's policy,
# state root, rootfs and workspaces from sandbox.conf and cannot choose
# others. Performed for real: `nobody` runs sudo under a sudoers drop-in of
# this test's own (removed on exit), and tries its own permissive policy,
# another state root, the host's / as rootfs, /etc as workspace, someone
# else's workspace and a root-only file as stdin.
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/security/sudo-lib.sh
. "$(dirname "$0")/sudo-lib.sh"
mkdir -p "$T/wsroot/other"
# the caller's own policy: no limits worth the name
"$BRIG" policy show agent | jq '.name = "evil" | .timeouts.wall = "24h"' > "$T/evil.json"
chmod 0644 "$T/evil.json"
echo "root-only decoy secret" > "$T/secret" && chmod 0600 "$T/secret"
j() { jq -r "$1" "$T/out.json" 2>/dev/null; }
# refused DESC MESSAGE ARGS...: exit 125, the message, nothing ran
refused() {
    local desc=$1 msg=$2; shift 2
    as_caller "$@"
    check_eq "$desc: exit 125" "$RC" 125
    check "$desc: refused with \"$msg\"" bash -c "jq -r .error '$T/out.json' | grep -qF -- \"\$1\"" _ "$msg" ||
        diag "$(cat "$T/out.json" "$T/err.txt")"
    check_eq "$desc: nothing ran" "$(j .ran)" false
}

# ---- use: the worker runs commands under the host's policy ----
as_caller --workspace mine -- sh -c 'echo hi; id -u'
check_eq "through sudo: the command runs (exit 0)" "$RC" 0 || diag "$(cat "$T/out.json" "$T/err.txt")"
check_eq "through sudo: under the host's policy (sandbox.conf)" "$(j .policy)" host-fixed
check_eq "through sudo: its output" "$(j .stdout.preview_head)" "$(printf 'hi\n1000')"
check "through sudo: the host's audit log has the line" jq -e 'select(.op == "sandbox-run")' "$T/audit.jsonl"
check "through sudo: the host's state root was used" test -d "$T/sbstate"
as_caller --workspace "$T/wsroot/mine" --timeout 1s -- sleep 30
check_eq "through sudo: flags still tighten (--timeout 1s: exit 124)" "$RC" 124
refused "through sudo: a flag above the host's policy" "above the policy's timeouts.wall" --timeout 1h -- true

# ---- attacks: every choice a root brig would make on the caller's say-so ----
refused "--policy of the caller's own" "--policy $T/evil.json: not allowed through sudo" \
    --policy "$T/evil.json" -- true
refused "--policy naming a built-in profile" "--policy pi: not allowed through sudo" --policy pi -- true
refused "--state-root elsewhere" "--state-root /tmp/brig-evil-state: not allowed through sudo" \
    --state-root /tmp/brig-evil-state -- true
check_not "--state-root elsewhere: not made" test -e /tmp/brig-evil-state
refused "--rootfs / (the host)" "--rootfs /: not allowed through sudo" --rootfs / -- cat /etc/shadow
refused "--workspace /etc" "--workspace /etc: through sudo, a workspace is a directory directly in" \
    --workspace /etc -- true
refused "--workspace escaping the workspaces with .." "a workspace is a directory directly in" \
    --workspace "$T/wsroot/../etc" -- true
refused "--workspace of another owner" "owned by uid 0, not by the caller (uid 65534)" \
    --workspace other -- true
# The command tries to leave a setuid copy of a program in the caller's
# workspace (idmapped: what it makes there is the caller's); the caller
# would run it on the host. brig's set-id filter refuses the bit, and the
# workspaces must be on a nosuid mount besides: any other is refused.
printf '#include <stdio.h>\n#include <unistd.h>\nint main(void){printf("%%u\\n", geteuid());return 0;}\n' > "$T/euid.c"
build_static "$T/euid" "$T/euid.c"
chmod o+x "$T"
install -m 0755 -o 65534 "$T/euid" "$T/wsroot/mine/euid-src"
plant='cp /workspace/euid-src /workspace/sh && chmod 4755 /workspace/sh && echo planted'
euid_of_planted() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$T/wsroot/mine/sh" 2>&1; }
umount "$T/wsroot"
if findmnt -no OPTIONS -T "$T/wsroot" | grep -qw nosuid; then
    skip "a workspace on a mount that honours setuid" "the test's temp dir is on a nosuid mount"
else
    refused "a workspace on a mount that honours setuid" "through sudo, workspaces must be on a nosuid mount" \
        --workspace mine -- sh -c "$plant"
    [ -e "$T/wsroot/mine/sh" ] &&
        diag "planted, and run by the caller with euid $(euid_of_planted)"
    check_not "a workspace on a mount that honours setuid: no setuid program left in it" \
        test -u "$T/wsroot/mine/sh"
fi
mount --bind "$T/wsroot" "$T/wsroot" && mount -o remount,bind,nosuid "$T/wsroot" || bail "cannot bind nosuid again"
as_caller --workspace mine -- sh -c "$plant"
check_eq "on a nosuid mount the command still writes the workspace (the copy is there)" \
    "$(stat -c %u "$T/wsroot/mine/sh" 2>&1)" 65534
check "but chmod 4755 is refused (the command's exit 1, Operation not permitted)" \
    bash -c '[ "$(jq -r .exit_code "$1")" = 1 ] && jq -r .stderr.preview_head "$1" | grep -q "Operation not permitted"' \
    _ "$T/out.json" || diag "$(cat "$T/out.json")"
check_not "no setuid program left for the caller" test -u "$T/wsroot/mine/sh"
check_eq "and what it left runs on the host as the caller" "$(euid_of_planted)" 65534
rm -f "$T/wsroot/mine/sh" "$T/wsroot/mine/euid-src"; chmod o-x "$T"
refused "--stdin a root-only file" "--stdin $T/secret: through sudo only" --stdin "$T/secret" -- cat
check_not "--stdin a root-only file: its content never echoed" grep -q "decoy secret" "$T/out.json" "$T/err.txt"

# Its own stdin, but a directory: the command (uid 1000) would look host
# names up from it with its own credentials, and read what only uid 1000
# may (a decoy the caller cannot read).
mkdir -m 0700 "$T/u1000" && echo "uid-1000-only decoy" > "$T/u1000/secret" && chown -R 1000:1000 "$T/u1000"
chmod o+x "$T"
as_caller --workspace mine --stdin - -- sh -c "cat /proc/self/fd/0$T/u1000/secret" < /
check_eq "--stdin - that is a directory: exit 125" "$RC" 125
check "--stdin - that is a directory: refused" \
    bash -c "jq -r .error '$T/out.json' | grep -qF -- '--stdin -: a directory or an O_PATH fd'" ||
    diag "$(cat "$T/out.json" "$T/err.txt")"
check_not "--stdin - that is a directory: the decoy never read" grep -q "decoy" "$T/out.json" "$T/err.txt"
echo data | as_caller --workspace mine --stdin - -- cat
check_eq "--stdin - from a pipe: still the command's input" "$(j .stdout.preview_head)" data
chmod o-x "$T"

# A sudoers env_keep (or a setuid brig) would pass brig's test hooks on: with
# BRIG_EGRESS_HOSTS the root proxy resolves the policy's allowed names from
# the caller's file. As sudo with env_keep would run it: SUDO_UID and the hook.
# glibc's resolver variables likewise (the proxy asks DNS for
# pypi.org.LOCALDOMAIN first under RES_OPTIONS=ndots:5).
echo "127.0.0.1 pypi.org" > "$T/evil-hosts" && chmod 0644 "$T/evil-hosts"
for v in BRIG_EGRESS_HOSTS BRIG_ROOTFS_DIR LOCALDOMAIN RES_OPTIONS HOSTALIASES; do
    (cd / && env SUDO_UID=65534 "$v=$T/evil-hosts" timeout -k 5 60 "$BRIG" sandbox run --json --workspace mine -- true) \
        > "$T/out.json" 2> "$T/err.txt"
    check_eq "$v kept by sudo: exit 125" "$?" 125
    check "$v kept by sudo: refused" grep -qF "$v in the environment: not allowed through sudo" "$T/out.json" ||
        diag "$(cat "$T/out.json" "$T/err.txt")"
    check_eq "$v kept by sudo: nothing ran" "$(j .ran)" false
done

# doas: DOAS_USER names the caller, looked up in /etc/passwd only. A name
# found nowhere is someone, not root: refused like a known one, never a
# crash (the static brig cannot load NSS modules such as nsswitch.conf's
# "systemd", which it would try for a name not in /etc/passwd).
for u in nobody "no-such-user-$$"; do
    (cd / && env DOAS_USER="$u" timeout -k 5 60 "$BRIG" sandbox run --json --policy "$T/evil.json" -- true) \
        > "$T/out.json" 2> "$T/err.txt"
    check_eq "doas as $u: exit 125" "$?" 125
    check "doas as $u: --policy refused" grep -qF -- "--policy $T/evil.json: not allowed through sudo" "$T/out.json" ||
        diag "$(cat "$T/out.json" "$T/err.txt")"
    check_eq "doas as $u: nothing ran" "$(j .ran)" false
done

# doas with keepenv (or a sudoers env_keep) hands brig the caller's own
# variables beside the one the tool set: a root-looking SUDO_UID or
# PKEXEC_UID beside doas's DOAS_USER, or DOAS_USER=root beside sudo's
# SUDO_UID, must not get root's choices.
for combo in "DOAS_USER=nobody SUDO_UID=0" "DOAS_USER=nobody PKEXEC_UID=0" \
             "SUDO_UID=65534 DOAS_USER=root" "PKEXEC_UID=65534 SUDO_UID=0"; do
    # shellcheck disable=SC2086
    (cd / && env $combo timeout -k 5 60 "$BRIG" sandbox run --json --policy "$T/evil.json" -- true) \
        > "$T/out.json" 2> "$T/err.txt"
    check_eq "$combo: exit 125" "$?" 125
    check "$combo: --policy refused" grep -qF -- "--policy $T/evil.json: not allowed through sudo" "$T/out.json" ||
        diag "$(cat "$T/out.json" "$T/err.txt")"
    check_eq "$combo: nothing ran" "$(j .ran)" false
done

# ---- fail closed: a sandbox.conf the caller could have changed ----
chmod 0666 "$CONF"
refused "a world-writable sandbox.conf" "must be owned by root and not writable by group or others" -- true
chmod 0644 "$CONF"
chmod 0666 "$T/etc/policy.json"
refused "a world-writable policy named by sandbox.conf" "sandbox.conf policy $T/etc/policy.json: must be owned by root" -- true
chmod 0644 "$T/etc/policy.json"
mv "$CONF" "$CONF.away"
refused "no sandbox.conf" "the host's sandbox.conf is not usable" -- true
mv "$CONF.away" "$CONF"
