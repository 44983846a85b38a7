#!/usr/bin/env bash
# brig-rootfs import against `umoci unpack` of the same image: a ~100 MB,
# 5-layer OCI image built here (random and text files, large and small,
# and a sixth layer of whiteouts and an opaque directory), unpacked by both, interleaved, ROUNDS times
# each. A benchmark, not a test (outside CI): it prints figures only.
#
#   sudo tests/bench/rootfs-import-bench.sh [--build DIR] [--rounds N] [--keep]
#
# Both read a warm page cache and write to the same filesystem ($TMPDIR).
# umoci unpack also writes its mtree manifest of the rootfs (its own
# bookkeeping, part of what a user waits for); brig-rootfs checks every
# blob's sha256 before unpacking it, umoci while reading.
set -euo pipefail
build=build rounds=3 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--build DIR] [--rounds N] [--keep]" >&2; exit 2 ;;
    esac
done
BR=$(realpath "$build/rootfs-tools/brig-rootfs")
[ -x "$BR" ] || { echo "no $BR: ninja -C $build first" >&2; exit 1; }
command -v umoci >/dev/null || { echo "umoci is not installed (apt-get install umoci)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/brig-import-bench.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$W"' EXIT

# ---- the image: 5 layers of ~20 MB ------------------------------------------
# Written by tests/security/rootfs-image.py's Layout (tarfile + gzip): umoci
# 0.4.7's `insert` writes layers whose tar is cut short (GNU tar and
# brig-rootfs both refuse them), and `repack` from one bundle does not stack.
python3 - "$W/img" "$(dirname "$0")/../security/rootfs-image.py" <<'PY'
import base64, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("ri", sys.argv[2])
ri = importlib.util.module_from_spec(spec); spec.loader.exec_module(ri)
e = ri.entry
conf = "".join("line %d of a small config file\n" % i for i in range(1, 21)).encode()
layers = []
for l in range(1, 6):
    d = "layer%d" % l
    ents = [e(d, "dir", mode=0o755), e(d + "/small", "dir", mode=0o755), e(d + "/text", "dir", mode=0o755),
            e(d + "/big.bin", data=os.urandom(8 << 20))]
    ents += [e(d + "/small/f%d" % i, data=os.urandom(40000)) for i in range(100)]
    ents += [e(d + "/text/log.txt", data=base64.encodebytes(os.urandom(6 << 20)))]
    ents += [e(d + "/text/c%d.conf" % i, data=conf) for i in range(400)]
    layers.append(ri.layer(ents))
layers.append(ri.layer([e("layer1/.wh.small"), e("layer2/.wh.big.bin"), e("layer3/text/.wh..wh..opq"),
                        e("layer3/text/new.conf", data=conf)]))
img = ri.Layout(sys.argv[1])
img.write(layers)
with open(os.path.join(sys.argv[1], "index.json")) as f:
    import json
    ix = json.load(f)
ix["manifests"][0]["annotations"] = {"org.opencontainers.image.ref.name": "t"}
with open(os.path.join(sys.argv[1], "index.json"), "w") as f:
    json.dump(ix, f)
PY
size=$(du -sb "$W/img/blobs" | cut -f1)
layers=$(jq '.layers | length' "$W/img/blobs/sha256/$(jq -r '.manifests[0].digest' "$W/img/index.json" | cut -d: -f2)")
echo "image: $layers layers, $((size / 1000000)) MB of blobs (gzip)"

# ---- interleaved rounds -------------------------------------------------------
# t CMD...: "WALL_MS CPU_MS" (user + sys of CMD and its children): on a
# shared machine the CPU time is the steadier figure.
t() {
    /usr/bin/time -f '%e %U %S' -o "$W/time" "$@" >/dev/null 2>"$W/err" ||
        { echo "failed: $* $(cat "$W/err")" >&2; exit 1; }
    awk '{printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000}' "$W/time"
}
bw=() bc=() uw=() uc=()
for r in $(seq 1 "$rounds"); do
    rm -rf "$W/out" "$W/out.image-config.json" "$W/ub"; sync
    read -r w c < <(t "$BR" import "$W/img" "$W/out"); bw+=("$w"); bc+=("$c")
    read -r w c < <(t umoci unpack --image "$W/img:t" "$W/ub"); uw+=("$w"); uc+=("$c")
    echo "round $r: brig-rootfs import ${bw[-1]} ms (cpu ${bc[-1]} ms), umoci unpack ${uw[-1]} ms (cpu ${uc[-1]} ms)"
done
diff -r --no-dereference "$W/out" "$W/ub/rootfs" >/dev/null && echo "trees: identical" || echo "trees: DIFFER"
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median of $rounds: brig-rootfs import $(med "${bw[@]}") ms (cpu $(med "${bc[@]}") ms)," \
    "umoci unpack $(med "${uw[@]}") ms (cpu $(med "${uc[@]}") ms)"
