#!/usr/bin/env bash
# The CLI around the containers: spec, features, --log/--log-format json
# (what containerd's shim and conmon read), and the create/start path's
# stdio and fds.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# ---- spec ---------------------------------------------------------------------
mkdir -p "$T/spec"
check "spec writes config.json into --bundle" b spec --bundle "$T/spec"
check "... a valid config with ociVersion, process, root, linux" jq -e \
    '(.ociVersion | type == "string") and (.process.args | length > 0) and .root.path == "rootfs" and (.linux.namespaces | length > 0)' \
    "$T/spec/config.json"
check "... that asks for pid, network, ipc, uts and mount namespaces" jq -e \
    '[.linux.namespaces[].type] as $t | ["pid", "network", "ipc", "uts", "mount"] | all(. as $n | $t | index($n) != null)' \
    "$T/spec/config.json"
check "... with a read-only root and noNewPrivileges" jq -e '.root.readonly == true and .process.noNewPrivileges == true' "$T/spec/config.json"
cp "$T/spec/config.json" "$T/spec/before.json"
check_refused "spec refuses to overwrite an existing config.json" "config.json already exists, remove it first" 1 b spec --bundle "$T/spec"
check "... and leaves it as it was" cmp -s "$T/spec/config.json" "$T/spec/before.json"
mkdir -p "$T/spec-cwd"
check "spec without --bundle writes into the current directory" bash -c "cd '$T/spec-cwd' && timeout 30 '$BRIG' spec && test -s config.json"

# ---- features -------------------------------------------------------------------
b features > "$T/features.json" 2>"$T/features.err"
check_eq "features exits 0" "$?" 0
check "features prints ociVersionMin/Max and the namespaces it knows" jq -e \
    '(.ociVersionMin | type == "string") and (.ociVersionMax | type == "string") and (.linux.namespaces | index("pid") != null)' \
    "$T/features.json"

# ---- logging as shims read it ------------------------------------------------------
mkb logj -- /usr/bin/brig-probe exit 0 || bail "cannot build a bundle"
cfg logj '.process.args = "not-an-array"'
b --log "$T/log.json" --log-format json create --bundle "$T/logj" "$(cid logj)" </dev/null >/dev/null 2>&1
check "a failed create with --log-format json exits non-zero" test "$?" -ne 0
check "--log got JSON lines with level, msg and time" bash -c \
    "test -s '$T/log.json' && jq -es 'length > 0 and all(has(\"level\") and has(\"msg\") and has(\"time\"))' '$T/log.json' >/dev/null"
check "... one of them an error naming the field" bash -c \
    "jq -s -e 'any(.level == \"error\" and (.msg | test(\"process.args\")))' '$T/log.json' >/dev/null"
assert_clean logj

mkb logt -- /usr/bin/brig-probe exit 0 || true
b --log "$T/log.txt" --debug run --bundle "$T/logt" "$(cid logt)" </dev/null >/dev/null 2>&1
check_eq "run with --debug --log exits 0" "$?" 0
check "--debug logs to the --log file" test -s "$T/log.txt"
assert_clean logt

# ---- create + start: stdio goes to the container, no fd leaks ------------------------
mkb cs -- /usr/bin/brig-probe report || true
ID=$(cid cs)
# create's stdout is the container's stdout; the extra fd 9 must not reach it.
exec 9<"$T/cs/config.json"
create_ct cs
exec 9<&-
check_eq "create succeeds" "$RC" 0
check "start succeeds" b start "$ID"
check "the container stops by itself" wait_status "$ID" stopped 10
check_probe "the probe wrote its report to create's stdout" cs '.pid == 1'
check_probe "only fds 0, 1, 2 reached the process via create/start" cs '[.fds[].fd] == [0, 1, 2]'
check_probe "stdin is /dev/null as given to create" cs '.fds[0].target == "/dev/null"'
check "delete succeeds" b delete "$ID"
assert_clean cs

# ---- --preserve-fds passes exactly the fds asked for ---------------------------
mkb pf -- /usr/bin/brig-probe report || true
echo preserved > "$T/pf.data"
CLEAN_IDS+=("$(cid pf)")
b run --preserve-fds 1 --bundle "$T/pf" "$(cid pf)" </dev/null >"$T/pf.out" 2>"$T/pf.err" 3<"$T/pf.data" 4<"$T/pf.data"
RC=$?
check_eq "run --preserve-fds 1 exits 0" "$RC" 0
check_probe "fd 3 reaches the process, fd 4 does not" pf '[.fds[].fd] == [0, 1, 2, 3]'
check_probe "fd 3 is the caller's file" pf '.fds[3].target == $f' --arg f "$T/pf.data"
assert_clean pf

# ---- state of a container that exited on its own ---------------------------------
mkb ex -- /usr/bin/brig-probe exit 5 || true
create_ct ex
b start "$(cid ex)" >/dev/null 2>&1
check "a container whose process exits is stopped" wait_status "$(cid ex)" stopped 10
check "list shows it as stopped" bash -c "timeout 30 '$BRIG' --root '$STATE' list | grep '$(cid ex)' | grep -q stopped"
check "delete succeeds" b delete "$(cid ex)"
assert_clean ex
