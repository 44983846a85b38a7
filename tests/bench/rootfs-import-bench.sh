#!/usr/bin/env bash
# brig-rootfs import against `umoci unpack` of the same image: a ~100 MB,
# 5-layer OCI image built here with umoci (random and text files, large
# and small, a few whiteouts), unpacked by both, interleaved, ROUNDS times
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
umoci init --layout "$W/img" >/dev/null
umoci new --image "$W/img:t" >/dev/null
for l in 1 2 3 4 5; do
    d=$W/l$l/layer$l
    mkdir -p "$d/small" "$d/text"
    head -c $((8 << 20)) /dev/urandom > "$d/big.bin"                  # 8 MiB incompressible
    for i in $(seq 1 100); do head -c 40000 /dev/urandom > "$d/small/f$i"; done   # 4 MB in 100 files
    head -c $((6 << 20)) /dev/urandom | base64 > "$d/text/log.txt"    # 8 MB compressible
    for i in $(seq 1 400); do printf 'line %d of a small config file\n' $(seq 1 20) > "$d/text/c$i.conf"; done
    umoci insert --image "$W/img:t" "$d" "/layer$l" >/dev/null
done
# a layer of whiteouts: unpack, delete, repack
umoci unpack --image "$W/img:t" "$W/wb" >/dev/null
rm -rf "$W/wb/rootfs/layer1/small" "$W/wb/rootfs/layer2/big.bin"
umoci repack --image "$W/img:t" "$W/wb" >/dev/null
rm -rf "$W/wb" "$W"/l?
size=$(du -sb "$W/img/blobs" | cut -f1)
layers=$(umoci stat --image "$W/img:t" --json | jq '[.history[] | select(.empty_layer != true)] | length')
echo "image: $layers layers, $((size / 1000000)) MB of blobs (gzip)"

# ---- interleaved rounds -------------------------------------------------------
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
b=() u=()
for r in $(seq 1 "$rounds"); do
    rm -rf "$W/out" "$W/out.image-config.json" "$W/ub"; sync
    b+=("$(t "$BR" import "$W/img" "$W/out")")
    u+=("$(t umoci unpack --image "$W/img:t" "$W/ub")")
    echo "round $r: brig-rootfs import ${b[-1]} ms, umoci unpack ${u[-1]} ms"
done
diff -r --no-dereference "$W/out" "$W/ub/rootfs" >/dev/null && echo "trees: identical" || echo "trees: DIFFER"
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median of $rounds: brig-rootfs import $(med "${b[@]}") ms, umoci unpack $(med "${u[@]}") ms"
