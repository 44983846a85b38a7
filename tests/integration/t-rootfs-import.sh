#!/usr/bin/env bash
# brig-rootfs import, the way users feed it: a busybox rootfs made into a
# two-layer OCI image by Debian's umoci (the second layer adds a file and
# whites one out), as an OCI layout directory, a tar of it and a
# docker-archive tar (skopeo); imported, compared with umoci's own unpack,
# bundled with the image config, and run by brig.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_ROOTFS:?BRIG_ROOTFS must point at brig-rootfs}"
command -v python3 >/dev/null || skip_all "python3 is not installed"

# ---- the layer rules, on an image whose every entry is known ------------------------
# tests/security/rootfs-image.py "good": layer 2 whites out a file and a
# file in a directory, makes opq/ opaque (its own opq/upper and
# opq/sub/upper stay, the lower opq/lower and opq/sub/lower go), turns the
# directory d2f into a file, adds a hard link, a symlink and a fifo.
python3 "$(dirname "$0")/../security/rootfs-image.py" good "$T/good-img" "$T/nowhere" ||
    bail "cannot build the layer-rules image"
out=$("$BRIG_ROOTFS" import "$T/good-img" "$T/good" 2>&1)
check_eq "import of the layer-rules image (exit 0): $out" "$?" 0
check_eq "whiteouts, opaque directory, replacement, links, modes" \
    "$(cd "$T/good" && find . -printf '%p %y %m %n %l\n' | sort | tr '\n' ';')" \
    "$(printf '%s;' '. d 755 6 ' './bin d 755 2 ' './bin/hl f 750 2 ' './bin/sl l 777 1 /bin/tool' \
        './bin/tool f 750 2 ' './d2f f 644 1 ' './etc d 755 2 ' './etc/hostname f 644 1 ' \
        './fifo p 644 1 ' './old d 644 2 ' './opq d 644 3 ' './opq/sub d 644 2 ' \
        './opq/sub/upper f 644 1 ' './opq/upper f 644 1 ')"
check_eq "file mtimes are the image's" "$(stat -c %Y "$T/good/etc/hostname")" 1700000000
if command -v zstd >/dev/null; then
    python3 "$(dirname "$0")/../security/rootfs-image.py" good-zstd "$T/zstd-img" "$T/nowhere" ||
        bail "cannot build the zstd image"
    out=$("$BRIG_ROOTFS" import "$T/zstd-img" "$T/zstd" 2>&1)
    check_eq "import of the same layers compressed with zstd (exit 0): $out" "$?" 0
    # files' mtimes included; directories' are those of the unpacking
    check_eq "zstd layers give the same tree" \
        "$(cd "$T/zstd" && find . ! -type d -printf '%p %y %m %n %l %T@\n' | sort)" \
        "$(cd "$T/good" && find . ! -type d -printf '%p %y %m %n %l %T@\n' | sort)"
else
    skip "zstd layers" "the zstd command is not installed"
fi

command -v umoci >/dev/null || { skip "umoci round trip" "umoci is not installed (bash scripts/setup.sh installs it)"; exit 0; }

# ---- the image: busybox + probe, then a second layer ---------------------------
"$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/src" >"$T/src.log" 2>&1 ||
    bail "cannot build the busybox rootfs: $(tail -3 "$T/src.log")"
O=$T/oci
{
    umoci init --layout "$O" && umoci new --image "$O:t" &&
    umoci unpack --image "$O:t" "$T/u1" && cp -a "$T/src/rootfs/." "$T/u1/rootfs/" &&
    umoci repack --image "$O:t" "$T/u1" &&
    umoci unpack --image "$O:t" "$T/u2" && rm "$T/u2/rootfs/etc/hosts" &&
    echo hello-from-layer-2 > "$T/u2/rootfs/hello.txt" && chmod 0640 "$T/u2/rootfs/hello.txt" &&
    ln "$T/u2/rootfs/hello.txt" "$T/u2/rootfs/hello-link" &&
    umoci repack --image "$O:t" "$T/u2" &&
    umoci config --image "$O:t" --config.cmd /usr/bin/brig-probe --config.cmd report \
        --config.cmd --read --config.cmd /hello.txt --config.cmd --read --config.cmd /etc/hosts \
        --config.env IMG_ENV=from-image --config.workingdir /tmp &&
    umoci unpack --image "$O:t" "$T/ref"
} >"$T/umoci.log" 2>&1 || bail "umoci: $(tail -5 "$T/umoci.log")"
check_eq "umoci made a two-layer image" "$(umoci stat --image "$O:t" --json 2>/dev/null |
    jq '[.history[] | select(.empty_layer != true)] | length')" 2

# tree NAME DIR: what import must reproduce (paths, types, modes, owners,
# sizes, link targets, link counts), sorted.
tree() { (cd "$1" && find . -printf '%p %y %m %U:%G %s %l %n\n' | sort); }

# ---- the OCI layout directory -----------------------------------------------------
mkb ct || bail "cannot build the bundle"
rm -rf "$T/ct/rootfs"
out=$("$BRIG_ROOTFS" import "$O" "$T/ct/rootfs" 2>&1)
check_eq "import of umoci's layout (exit 0): $out" "$?" 0
check_eq "the rootfs is what umoci unpack makes of the same image" \
    "$(tree "$T/ct/rootfs" | sed 's/ [0-9]*$//' | grep -v '^\. ')" \
    "$(tree "$T/ref/rootfs" | sed 's/ [0-9]*$//' | grep -v '^\. ')"
check "layer 2's whiteout removed /etc/hosts" test ! -e "$T/ct/rootfs/etc/hosts"
check_eq "layer 2's hard link is a hard link" "$(stat -c %h "$T/ct/rootfs/hello-link")" 2
C=$T/ct/rootfs.image-config.json
check_eq "the image config is written beside the rootfs" \
    "$(jq -c '[.Cmd[0], .WorkingDir, (.Env | index("IMG_ENV=from-image") != null), .os, .architecture]' "$C")" \
    '["/usr/bin/brig-probe","/tmp",true,"linux","amd64"]'

# ---- bundled with the image config and run by brig ------------------------------------
cfg ct '.process.args = $c[0].Cmd | .process.env += $c[0].Env | .process.cwd = $c[0].WorkingDir' \
    --slurpfile c "$C"
run_ct ct
check_ran "brig runs the imported rootfs with the image's Cmd" ct
check_probe "the file from layer 2 is there" ct '.reads["/hello.txt"].result == "ok" and .reads["/hello.txt"].bytes == 19'
check_probe "the file whited out in layer 2 is not" ct '.reads["/etc/hosts"].result == "ENOENT"'
check_probe "the image's Env and WorkingDir are the process's" ct \
    '(.env | index("IMG_ENV=from-image") != null) and .cwd == "/tmp"'
assert_clean ct

# ---- the same image as tars -------------------------------------------------------------
if command -v skopeo >/dev/null; then
    # an oci-archive is the layout in a tar: tar makes it without one more Go start-up
    if ! { skopeo copy -q "oci:$O:t" "docker-archive:$T/d.tar:brig/img:t" &&
           tar -C "$O" -cf "$T/o.tar" .; } >"$T/skopeo.log" 2>&1; then
        bail "skopeo: $(tail -3 "$T/skopeo.log")"
    fi
    out=$("$BRIG_ROOTFS" import --ref brig/img:t "$T/d.tar" "$T/from-docker" 2>&1)
    check_eq "import of a docker-archive by its tag (exit 0): $out" "$?" 0
    check_eq "the docker-archive gives the same tree" "$(tree "$T/from-docker")" "$(tree "$T/ct/rootfs")"
    out=$("$BRIG_ROOTFS" import "$T/o.tar" "$T/from-oci-tar" 2>&1)
    check_eq "import of the layout as a tar (exit 0): $out" "$?" 0
    check_eq "the layout tar gives the same tree" "$(tree "$T/from-oci-tar")" "$(tree "$T/ct/rootfs")"
    "$BRIG_ROOTFS" import --ref nosuch "$T/d.tar" "$T/none" >/dev/null 2>"$T/none.err"
    check_eq "an absent --ref is refused (exit 1)" "$?" 1
    check "and named" grep -qF "manifest.json: no image tagged nosuch" "$T/none.err"
    "$BRIG_ROOTFS" import --platform linux/arm64 "$O" "$T/arm" >/dev/null 2>"$T/arm.err"
    check_eq "another --platform is refused (exit 1)" "$?" 1
    check "and named" grep -qF "the image is linux/amd64, not the --platform asked for (linux/arm64)" "$T/arm.err"
else
    skip "docker-archive and oci-archive imports" "skopeo is not installed"
fi
check_eq "no scratch directory left anywhere" "$(find "$T" -maxdepth 2 -name '*.import-*')" ""
