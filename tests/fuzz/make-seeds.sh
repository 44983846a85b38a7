#!/usr/bin/env bash
# make-seeds.sh BUILD-FUZZ-DIR: add to tests/fuzz/corpus/ the inputs users
# make (not only brig's own tools'), kept only where they add coverage.
#   fuzz_spec, fuzz_json  `runc spec` and `runc spec --rootless`, the engines'
#                         configs of tests/data/configs, docs' JSON blocks
#   fuzz_policy           the shipped profiles, the docs' and tests' policies
#   fuzz_compose          the compose files of t-policy-compose.sh, the docs'
#   fuzz_image_json       an image layout made here by umoci (index, manifest,
#                         config), skopeo's dir: and docker-archive: copies
#   fuzz_layer            umoci's layers and GNU tar ones (pax, gzip, zstd)
# Nothing is downloaded. The fuzz build (docs/testing.md, -Dfuzz=true) picks
# with -merge=1; a picked seed keeps a readable name. Needs runc, umoci,
# skopeo, zstd, jq. Then grow the corpus with each target's own runs and
# merge those the same way (docs/testing.md "Fuzzing").
set -euo pipefail

fz=$(cd "$1" && pwd)/tests/fuzz
src=$(cd "$(dirname "$0")/../.." && pwd)
S=$(mktemp -d /tmp/brig-seeds.XXXXXX)
trap 'rm -rf "$S"' EXIT
for t in fuzz_spec fuzz_json fuzz_policy fuzz_compose fuzz_image_json fuzz_layer; do mkdir -p "$S/$t"; done

# ---- runtime configs ---------------------------------------------------------
mkdir "$S/runc" && (cd "$S/runc" && runc spec && mv config.json ../fuzz_spec/runc-spec.json &&
    runc spec --rootless && mv config.json ../fuzz_spec/runc-spec-rootless.json)
cp "$src"/tests/data/configs/*.json "$S/fuzz_spec/"
# ```json blocks of the docs: a policy, a config or any JSON
python3 - "$src" "$S" <<'PY'
import glob, json, os, re, sys
src, out = sys.argv[1], sys.argv[2]
policy_keys = {'network', 'limits', 'rootReadonly', 'capabilities', 'workspace', 'tmpfs', 'env', 'user', 'seccomp'}
for f in sorted(glob.glob(src + '/docs/**/*.md', recursive=True)) + [src + '/README.md']:
    base = os.path.basename(f)[:-3]
    for i, (lang, body) in enumerate(re.findall(r'```(json|yaml)\n(.*?)```', open(f).read(), re.S)):
        name = f'doc-{base}-{i}'
        if lang == 'yaml':
            if 'services:' in body: open(f'{out}/fuzz_compose/{name}.yaml', 'w').write(body)
            continue
        try: v = json.loads(body)
        except ValueError: v = None
        kind = 'fuzz_json'
        if isinstance(v, dict) and 'ociVersion' not in v and policy_keys & set(v): kind = 'fuzz_policy'
        elif isinstance(v, dict) and ('ociVersion' in v or 'process' in v): kind = 'fuzz_spec'
        open(f'{out}/{kind}/{name}.json', 'w').write(body)
PY
cp "$src"/policy/profiles/*.json "$S/fuzz_policy/"
cp "$S"/fuzz_spec/* "$S"/fuzz_policy/* "$S/fuzz_json/"

# ---- compose: every file t-policy-compose.sh checks, made by its own code ------
mkdir -p "$S/compose/work"
{
    echo 'ok() { :; }; not_ok() { :; }; check_eq() { :; }; ccheck() { :; }'
    echo "D=$S/compose SECCOMP=/usr/share/brig/seccomp-default.json PIN=sha256:$(printf '0%.0s' {1..64})"
    sed -n '/^hardened() {/,/^# ---- JSON report/p' "$src/tests/integration/t-policy-compose.sh"
} > "$S/compose.sh"
bash "$S/compose.sh"
for f in "$S"/compose/*.yaml; do cp "$f" "$S/fuzz_compose/compose-${f##*/}"; done

# ---- an image layout, and its layers ------------------------------------------
I=$S/img
umoci init --layout "$I/lay"
umoci new --image "$I/lay:v1"
umoci config --image "$I/lay:v1" --config.cmd sh --config.cmd -c --config.cmd 'echo hi' \
    --config.env PATH=/bin:/usr/bin --config.workingdir /work --config.user 1000:1000 \
    --config.entrypoint /entry --config.exposedports 80/tcp --config.volume /data --history.comment seed
umoci unpack --rootless --image "$I/lay:v1" "$I/b1"
mkdir -p "$I/b1/rootfs/etc" && echo hi > "$I/b1/rootfs/etc/hello" && ln -s /etc/hello "$I/b1/rootfs/l"
umoci repack --image "$I/lay:v1" "$I/b1"
umoci unpack --rootless --image "$I/lay:v1" "$I/b2"
rm "$I/b2/rootfs/etc/hello"             # a whiteout
umoci repack --image "$I/lay:v1" "$I/b2"
skopeo copy --quiet "oci:$I/lay:v1" "dir:$I/dir"
skopeo copy --quiet --format v2s2 "oci:$I/lay:v1" "dir:$I/dir2"
skopeo copy --quiet "oci:$I/lay:v1" "docker-archive:$I/d.tar:example/img:v1"
mkdir "$I/da" && tar -C "$I/da" -xf "$I/d.tar"
cp "$I/lay/index.json" "$S/fuzz_image_json/umoci-index.json"
cp "$I/dir/manifest.json" "$S/fuzz_image_json/skopeo-dir-oci-manifest.json"
cp "$I/dir2/manifest.json" "$S/fuzz_image_json/skopeo-dir-v2s2-manifest.json"
cp "$I/da/manifest.json" "$S/fuzz_image_json/docker-save-manifest.json"
for b in "$I"/lay/blobs/sha256/*; do
    h=${b##*/}
    if jq -e . "$b" >/dev/null 2>&1; then cp "$b" "$S/fuzz_image_json/umoci-${h:0:8}.json"
    else cp "$b" "$S/fuzz_layer/umoci-layer-${h:0:8}.tar.gz"; fi
done
# GNU tar: hard links, symlinks (one a loop), whiteouts, an opaque dir, a
# fifo, a setuid file, a long path (pax), as tar, tar.gz and tar.zst
L=$S/layer && mkdir -p "$L/etc" "$L/usr/bin" "$L/opq" "$L/d/$(printf 'x%.0s' {1..120})"
echo data > "$L/etc/file" && chmod 4755 "$L/etc/file" && ln "$L/etc/file" "$L/etc/hard"
ln -s ../etc/file "$L/usr/bin/rel" && ln -s /etc/file "$L/usr/bin/abs" && ln -s . "$L/usr/bin/loop"
touch "$L/.wh.removed" "$L/etc/.wh.gone" "$L/opq/.wh..wh..opq" "$L/d/$(printf 'x%.0s' {1..120})/$(printf 'y%.0s' {1..120})"
mkfifo "$L/fifo"
tar --format=ustar -C "$L" -cf "$S/fuzz_layer/ustar-small.tar" etc usr
tar --format=pax -C "$L" -cf "$S/pax-mixed.tar" .
gzip -9 -n -c "$S/pax-mixed.tar" > "$S/fuzz_layer/pax-mixed.tar.gz"
zstd -q -19 -c "$S/pax-mixed.tar" > "$S/fuzz_layer/pax-mixed.tar.zst"

# ---- keep what adds coverage, under its own name -------------------------------
for t in fuzz_spec fuzz_json fuzz_policy fuzz_compose fuzz_image_json fuzz_layer; do
    "$fz/$t" -merge=1 "$src/tests/fuzz/corpus/$t" "$S/$t" 2>&1 | grep 'MERGE-OUTER: .* new files' || true
    for f in "$S/$t"/*; do
        h=$(sha1sum < "$f" | cut -c1-40)
        [ -e "$src/tests/fuzz/corpus/$t/$h" ] || continue
        n=${f##*/}
        [ -e "$src/tests/fuzz/corpus/$t/$n" ] && n=seed-$n
        mv "$src/tests/fuzz/corpus/$t/$h" "$src/tests/fuzz/corpus/$t/$n"
        echo "$t: $n"
    done
done
