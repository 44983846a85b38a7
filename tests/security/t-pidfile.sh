#!/usr/bin/env bash
# A --pid-file in a directory an unprivileged user owns, with a
# symlink planted at its name: brig must replace the name, never follow it.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

# ---- --pid-file in a directory an unprivileged user owns --------------------
mkb pidf -- /usr/bin/brig-probe sleep 60 || bail "cannot build a bundle"
mkdir -p "$T/userdir" && chown 65534:65534 "$T/userdir"
echo untouched > "$T/target"
ln -s "$T/target" "$T/userdir/pid"
create_ct pidf --pid-file "$T/userdir/pid"
check_eq "create with --pid-file in a user's directory" "$RC" 0
check_eq "the symlink planted at the pid file is not followed" "$(cat "$T/target")" "untouched"
check "the pid file is a regular file with the pid" test ! -L "$T/userdir/pid" -a \
    "$(cat "$T/userdir/pid" 2>/dev/null)" = "$(state_field "$(cid pidf)" pid)"
b delete --force "$(cid pidf)" >/dev/null 2>&1
assert_clean pidf
