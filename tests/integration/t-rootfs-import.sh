#!/usr/bin/env bash
# brig-rootfs import, the way users feed it: a busybox rootfs made into a
# two-layer OCI image by Debian's umoci (the second layer adds a file and
# whites one out), as an OCI layout directory, a tar of it and a
# docker-archive tar (skopeo); imported, compared with umoci's own unpack,
# bundled with the image config, and run by brig.
# A plain root filesystem tar (plain, gzip, xz, zstd) imported as it is,
# what is neither refused with a hint, progress on a terminal.
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

# ---- a plain root filesystem tar: docker export, tar -C dir -c . -------------------------
P=$T/plainsrc
mkdir -p "$P"/{bin,etc,proc,sys,dev,tmp,workspace} && cp /bin/busybox "$P/bin/" && ln -s busybox "$P/bin/sh" &&
    echo plain > "$P/etc/hostname" && ln "$P/etc/hostname" "$P/etc/hostname-link" && touch "$P/.dockerenv" ||
    bail "cannot make the plain tree"
tar -C "$P" -cf "$T/p.tar" . && tar -C "$P" -czf "$T/p.tar.gz" . && tar -C "$P" -cJf "$T/p.tar.xz" . ||
    bail "tar failed"
exts="tar tar.gz tar.xz"
if command -v zstd >/dev/null; then tar -C "$P" --zstd -cf "$T/p.tar.zst" . && exts="$exts tar.zst"; fi
for x in $exts; do
    out=$("$BRIG_ROOTFS" import "$T/p.$x" "$T/plain-$x" 2>"$T/plain-$x.err")
    check_eq "import of a plain rootfs .$x (exit 0, no progress when stderr is no terminal): $out" \
        "$?:$(cat "$T/plain-$x.err")" "0:"
    check_eq "  .$x: the tree as it was (modes, links, hard links)" \
        "$(cd "$T/plain-$x" && find . -printf '%p %y %m %n %l %s\n' | sort)" \
        "$(cd "$P" && find . -printf '%p %y %m %n %l %s\n' | sort)"
done
check "the summary says a root filesystem tar" grep -q "^imported a root filesystem tar, " <<<"$out"
check "no image config beside a plain import" test ! -e "$T/plain-tar.image-config.json"
mkdir -p "$T/ws" && chown 1000:1000 "$T/ws"
timeout -k 5 60 "$BRIG" sandbox run --state-root "$T/sbstate" --rootfs "$T/plain-tar" --workspace "$T/ws" \
    --json -- sh -c 'cat /etc/hostname' > "$T/plain-run.json" 2>&1
check_eq "brig sandbox runs the imported plain rootfs" "$(jq -r .stdout.preview_head "$T/plain-run.json")" plain
echo "not a tar" > "$T/note.txt"
"$BRIG_ROOTFS" import "$T/note.txt" "$T/not-tar" 2>"$T/not-tar.err"
check "a file that is no tar: refused with what it seems to be" \
    grep -q "neither an image .* nor a root filesystem tar: not a tar, plain or gzip, zstd, xz or bzip2 compressed" "$T/not-tar.err"
(cd "$P" && python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1],'w').write('etc/hostname')" "$T/p.zip")
"$BRIG_ROOTFS" import "$T/p.zip" "$T/not-zip" 2>"$T/not-zip.err"
check "a zip: refused, named a zip archive, with the way out" grep -q "a zip archive (unzip it, then tar the tree" "$T/not-zip.err"
"$BRIG_ROOTFS" import "$P" "$T/not-dir" 2>"$T/not-dir.err"
check "a rootfs directory: refused, pointing at --rootfs and tar" \
    grep -q "a root filesystem directory is used as it is (brig sandbox run --rootfs DIR), or import its tar" "$T/not-dir.err"
if command -v script >/dev/null; then
    script -qefc "$(printf '%q ' "$BRIG_ROOTFS" import "$T/p.tar.xz" "$T/plain-tty")" /dev/null > "$T/tty.out" 2>&1
    check "on a terminal: a progress bar on stderr, then cleared" \
        bash -c "grep -q '\[[#.]*\] *[0-9]*%  [0-9]* entries' '$T/tty.out' && grep -q \$'\033\\[K' '$T/tty.out'"
else
    skip "progress on a terminal" "script (util-linux) is not installed"
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
