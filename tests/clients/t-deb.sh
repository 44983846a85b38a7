#!/bin/bash
# The Debian package (debian/): built from a copy of this tree as a user
# builds it (dpkg-buildpackage, with contrib/node/node_modules from npm ci),
# its contents against what `meson install` puts, its Depends, lintian with
# no error, and the unpacked package at work (brig sandbox run from /, the
# Python client, brig-mcp). Installing it on a fresh machine:
# tests/fresh/fresh-root.sh --deb.
. "$(dirname "$0")/../integration/lib.sh"
it_init
: "${BRIG_BUILD_ROOT:?}" "${BRIG_SOURCE_ROOT:?}"
for c in dpkg-buildpackage dh lintian dpkg-deb; do
    command -v $c >/dev/null || skip_all "$c is not installed (bash scripts/setup.sh installs debhelper, dpkg-dev, lintian)"
done
SDK=$BRIG_SOURCE_ROOT/contrib/node/node_modules/@modelcontextprotocol/sdk
[ -d "$SDK" ] || skip_all "contrib/node/node_modules has no MCP SDK (bash scripts/setup.sh runs npm ci there)"

# The tree as it is (committed or not, ignored files left out), and the SDK.
mkdir -p "$T/src/brig"
(cd "$BRIG_SOURCE_ROOT" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$T/src/brig" ||
    bail "cannot copy the source tree"
cp -a "$BRIG_SOURCE_ROOT/contrib/node/node_modules" "$T/src/brig/contrib/node/" || bail "cannot copy node_modules"

t0=$(date +%s)
if (cd "$T/src/brig" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=$(nproc)" dpkg-buildpackage -b -us -uc) \
        > "$T/build.log" 2>&1; then
    ok "dpkg-buildpackage -b ($(( $(date +%s) - t0 )) s)"
else
    not_ok "dpkg-buildpackage -b" "$(tail -n 30 "$T/build.log")"; exit 1
fi
DEB=$(echo "$T"/src/brig_*.deb)
[ -f "$DEB" ] || bail "no brig_*.deb in $T/src: $(ls "$T/src")"
diag "$(basename "$DEB"): $(stat -c %s "$DEB") bytes"

# What the package holds, in the terms of an install: the prefix (/usr for
# the package, this build's for meson install) cut off, the python and
# systemd directories (which differ between the two) named by their role.
norm() {
    sed -E -e 's|^\./|/|' -e "s|^$1/||" \
        -e 's|^.*/(dist-packages\|site-packages)/|python:|' -e 's|^/?(usr/)?lib/systemd/system/|systemd:|' \
        -e 's|\.gz$||' | grep -v -e '^share/doc/' -e '^share/lintian/' -e '/node_modules/brig-sandbox/node_modules/' | sort -u
}
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | norm /usr > "$T/deb.txt"
meson install -C "$BRIG_BUILD_ROOT" --destdir "$T/ref" --no-rebuild --quiet >/dev/null 2>&1 || bail "meson install --destdir failed"
prefix=$(meson introspect "$BRIG_BUILD_ROOT" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
(cd "$T/ref" && find . \( -type f -o -type l \)) | sed 's|^\.||' | norm "$prefix" > "$T/ref.txt"
missing=$(comm -13 "$T/deb.txt" "$T/ref.txt")
extra=$(comm -23 "$T/deb.txt" "$T/ref.txt")
if [ -z "$missing$extra" ]; then
    ok "dpkg-deb -c lists what meson install puts ($(wc -l < "$T/ref.txt") files, the SDK aside)"
else
    not_ok "dpkg-deb -c lists what meson install puts" "not in the package: $missing" "only in the package: $extra"
fi
check "the package carries the MCP SDK for brig-mcp" \
    sh -c "dpkg-deb -c '$DEB' | grep -q '/usr/lib/node_modules/brig-sandbox/node_modules/@modelcontextprotocol/sdk/package.json'"

deps=$(dpkg-deb -f "$DEB" Depends)
diag "Depends: $deps"
miss=()
for p in libc6 libseccomp2 libcap2 libyajl2 libnettle8 libyaml-0-2 libarchive13; do
    grep -qE "(^|, )$p( |,|$)" <<<"$deps" || miss+=("$p")
done
check_eq "Depends names the Debian 12 libraries brig links" "${miss[*]}" ""

if lintian --no-cfg --fail-on error "$DEB" > "$T/lintian.txt" 2>&1; then
    ok "lintian: no error"
else
    not_ok "lintian: no error" "$(grep '^E:' "$T/lintian.txt")"
fi
diag "lintian: $(grep -c '^W:' "$T/lintian.txt") warnings: $(grep '^W:' "$T/lintian.txt" | cut -d' ' -f3 | sort | uniq -c | tr -s ' \n' ' ')"

# The package unpacked anywhere works from there: brig finds its brig-init
# beside it (usr/libexec), as it does installed.
X=$T/x
dpkg-deb -x "$DEB" "$X" || bail "dpkg-deb -x failed"
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS"/{bin,dev,proc,sys,tmp,workspace} && cp /bin/busybox "$ROOTFS/bin/" && ln -s busybox "$ROOTFS/bin/sh" ||
    bail "cannot make the rootfs"
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
out=$(cd / && "$X/usr/sbin/brig" sandbox run --json --rootfs "$ROOTFS" --workspace "$T/ws" --state-root "$T/sb" \
      -- sh -c 'echo from-deb' 2>"$T/sb.err")
check_eq "the packaged brig runs a sandbox from /" "$(jq -r '.stdout.preview_head' <<<"$out" 2>&1)" "from-deb"
py=/usr/bin/python3
[ -x $py ] || py=$(command -v python3)
check "the packaged Python client imports" env PYTHONPATH="$X/usr/lib/python3/dist-packages" "$py" -c 'import brig_sandbox.aio'
if command -v node >/dev/null; then
    check "the packaged brig-mcp starts" "$X/usr/bin/brig-mcp" --help
else
    skip "the packaged brig-mcp starts" "node is not installed (bash scripts/setup.sh installs nodejs)"
fi
