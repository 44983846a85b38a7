#!/bin/bash
# `meson install` of this build into a DESTDIR (never the machine's own
# prefix): every binary, brig-init, the profiles, the seccomp profile, the man
# pages, the systemd units and both clients land where they belong, and the
# tree works from there: brig --version names the commit, brig sandbox run
# runs from / (brig-init found beside the installed brig), the Python client
# imports and runs, brig-mcp starts.
. "$(dirname "$0")/../integration/lib.sh"
it_init
: "${BRIG_BUILD_ROOT:?}" "${BRIG_SOURCE_ROOT:?}"

D=$T/root
if out=$(meson install -C "$BRIG_BUILD_ROOT" --destdir "$D" --no-rebuild --quiet 2>&1); then
    ok "meson install --destdir"
else
    not_ok "meson install --destdir" "$out"; exit 1
fi
P=$D$(meson introspect "$BRIG_BUILD_ROOT" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
find "$D" \( -type f -o -type l \) | sed "s|^$D||" | sort > "$T/installed.txt"
diag "$(wc -l < "$T/installed.txt") files installed"

want=(sbin/brig bin/brig-rootfs bin/brig-mkbundle bin/brig-mcp libexec/brig/brig-init libexec/brig/brig-probe
      libexec/brig/brig-egress-tls share/brig/policy/pi-egress.json
      share/brig/seccomp-default.json share/brig/result.schema.json share/brig/policy/agent.json
      share/brig/policy/pi.json share/brig/policy/pygent.json share/brig/policy/policy.schema.json
      share/man/man8/brig.8 share/man/man8/brig-sandbox.8 share/man/man1/brig-rootfs.1
      lib/systemd/system/brig-runner.slice "lib/systemd/system/brig-runner@.service"
      lib/systemd/system/brig-sandbox-gc.service lib/systemd/system/brig-sandbox-gc.timer
      lib/tmpfiles.d/brig-sandbox.conf
      lib/node_modules/brig-sandbox/package.json lib/node_modules/brig-sandbox/src/index.js
      lib/node_modules/brig-sandbox/src/mcp.js lib/node_modules/brig-sandbox/types/index.d.ts
      lib/node_modules/brig-sandbox/bin/brig-mcp.js
      lib/node_modules/brig-sandbox/node_modules/@modelcontextprotocol/sdk/package.json)
missing=()
for f in "${want[@]}"; do [ -e "$P/$f" ] || missing+=("$f"); done
pydir=$(find "$D" -type d -name brig_sandbox -path '*-packages/*' | head -n 1)
for f in __init__.py aio.py _cli.py _sync.py _types.py py.typed; do
    [ -n "$pydir" ] && [ -e "$pydir/$f" ] || missing+=("<python dist-packages>/brig_sandbox/$f")
done
if [ ${#missing[@]} = 0 ]; then ok "every file in place"; else not_ok "every file in place" "missing: ${missing[*]}"; fi
check_eq "no __pycache__ installed" "$(grep -c __pycache__ "$T/installed.txt")" 0
check_eq "brig-mcp links into the installed package" "$(readlink -f "$P/bin/brig-mcp")" \
    "$(readlink -f "$P/lib/node_modules/brig-sandbox/bin/brig-mcp.js")"
case $pydir in
    "$D"/usr/local/lib/python3*/dist-packages/brig_sandbox|"$D"/usr/lib/python3/dist-packages/brig_sandbox) ok "python package in Debian's dist-packages ($pydir)" ;;
    *) [ "${P#"$D"}" = /usr/local ] || [ "${P#"$D"}" = /usr ] && not_ok "python package in Debian's dist-packages" "it is in $pydir" ||
           ok "python package under the prefix ($pydir)" ;;
esac

for page in brig brig-sandbox brig-rootfs; do
    if command -v man >/dev/null; then
        check "man -w $page" man -M "$P/share/man" -w "$page"
    else
        skip "man -w $page" "man is not installed (bash scripts/setup.sh installs man-db)"
    fi
done

# What the installed tree does, from /: brig-init comes from the installed
# libexec beside it.
commit=$(git -C "$BRIG_SOURCE_ROOT" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
check_eq "brig --version names the commit" "$("$P/sbin/brig" --version | sed -n 's/^commit: //p')" "$commit"
check_eq "brig-rootfs --version names it too" "$("$P/bin/brig-rootfs" --version)" \
    "brig-rootfs $("$P/sbin/brig" --version | sed -n 's/^brig version //p') (commit $commit)"
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,workspace} && cp /bin/busybox "$ROOTFS/bin/" && ln -s busybox "$ROOTFS/bin/sh" &&
    ln -s busybox "$ROOTFS/bin/true" || bail "cannot make the rootfs"
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
SBX=(--rootfs "$ROOTFS" --workspace "$T/ws" --state-root "$T/sb")
out=$(cd / && "$P/sbin/brig" sandbox run --json "${SBX[@]}" -- sh -c 'echo from-install' 2>"$T/sb.err")
check_eq "the installed brig runs a sandbox from /" "$(jq -r '.stdout.preview_head' <<<"$out" 2>&1)" "from-install"

py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
out=$(cd / && PYTHONPATH=$pydir/.. "$py" -c '
import sys, brig_sandbox as bs, brig_sandbox.aio
assert bs.__file__.startswith(sys.path[1]), bs.__file__
r = bs.run(["sh", "-c", "echo py"], brig=sys.argv[1], rootfs=sys.argv[2], workspace=sys.argv[3], state_root=sys.argv[4])
print(r.stdout.text, end="")' "$P/sbin/brig" "$ROOTFS" "$T/ws" "$T/sb" 2>&1)
check_eq "the installed python package runs a command" "$out" "py"

if command -v node >/dev/null; then
    check "the installed brig-mcp starts (its SDK beside it)" "$P/bin/brig-mcp" --help
    out=$(cd / && node --input-type=module -e '
const { run } = await import(process.argv[1] + "/src/index.js");
const r = await run(["sh", "-c", "echo js"], { brig: process.argv[2], rootfs: process.argv[3], workspace: process.argv[4], stateRoot: process.argv[5] });
process.stdout.write(r.stdout.text);' "$P/lib/node_modules/brig-sandbox" "$P/sbin/brig" "$ROOTFS" "$T/ws" "$T/sb" 2>&1)
    check_eq "the installed node package runs a command" "$out" "js"
else
    skip "the installed brig-mcp starts" "node is not installed (bash scripts/setup.sh installs nodejs)"
    skip "the installed node package runs a command" "node is not installed"
fi
