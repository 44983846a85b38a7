#!/usr/bin/env bash
# brig-rootfs import of hostile images: each image is built here by
# rootfs-image.py (tarfile, nothing downloaded) and aims at a decoy
# directory in the test's temp dir. Every case must be refused with its
# message and exit status 1 (or, where docs/rootfs.md says so, made safe:
# the write lands inside DEST), leave no DEST and no scratch directory
# behind, and change nothing outside DEST. The cases about entries run
# again as plain root filesystem tars (plain, gzip, xz, zstd). Last, the
# same tricks in a container's rootfs against its mount destinations
# (dangling symlinks whose targets brig makes, inside the root only).
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
: "${BRIG_ROOTFS:?BRIG_ROOTFS must point at brig-rootfs}"
command -v python3 >/dev/null || skip_all "python3 is not installed"
MKIMG=${BRIG_SECURITY_SRC:-$(dirname "$0")}/rootfs-image.py

D=$T/decoy
mkdir -p "$D" "$T/dest"
echo secret > "$D/secret"
echo victim > "$D/victim"
decoy_state() { find "$D" -printf '%P %y %s %n %m\n' | sort; cat "$D/secret" "$D/victim"; }
DECOY0=$(decoy_state)

# every image at once (one python start-up): $T/img/CASE, $T/plain/CASE.tar*
python3 "$MKIMG" --all "$T/img" "$D" 2>"$T/mkimg.err" || bail "cannot build the images: $(cat "$T/mkimg.err")"
python3 "$MKIMG" --plain-all "$T/plain" "$D" 2>"$T/mkimg.err" || bail "cannot build the tars: $(cat "$T/mkimg.err")"
IMG=$T/img

# import CASE [FLAGS...]: import $IMG/CASE (an image layout; in $T/plain,
# CASE.tar*) into $T/dest/CASE; RC, $T/CASE.err, and OUTSIDE = files that
# appeared or changed in $T but outside $T/dest/CASE since the import started.
import_case() {
    local c=$1 src; shift
    src=$IMG/$c
    [ -e "$src" ] || src=$(echo "$IMG/${c#plain-}".tar*)
    touch "$T/stamp"; sleep 0.01
    timeout -k 5 60 "$BRIG_ROOTFS" import "$@" "$src" "$T/dest/$c" >"$T/$c.out" 2>"$T/$c.err"
    RC=$?
    OUTSIDE=$(find "$T" -path "$T/dest/$c" -prune -o -path "$T/img" -prune -o -path "$T/plain" -prune -o \
        \( -type f -o -type l -o -type d \) -newer "$T/stamp" ! -path "$T/dest" ! -path "$T" \
        ! -name "$c.*" -print)
}

# refused CASE MESSAGE [FLAGS...]
refused() {
    local c=$1 msg=$2; shift 2
    import_case "$c" "$@"
    if [ "$RC" = 1 ] && grep -qF -- "$msg" "$T/$c.err"; then
        ok "$c: refused (exit 1): $msg"
    else
        not_ok "$c: refused (exit 1): $msg" "exit status: $RC" "stderr: $(head -c 1000 "$T/$c.err")"
    fi
    nothing_left "$c"
}

nothing_left() {
    local c=$1 left
    left=$(find "$T/dest" -maxdepth 1 -name "$c*" -print)
    check_eq "$c: no DEST, no scratch dir left" "$left" ""
    check_eq "$c: nothing written outside DEST" "$OUTSIDE" ""
    check_eq "$c: the decoy is untouched" "$(decoy_state)" "$DECOY0"
}

# made_safe CASE [FLAGS...]: imported; only DEST changed.
made_safe() {
    local c=$1; shift
    import_case "$c" "$@"
    check_eq "$c: imported (exit 0) $(head -c 300 "$T/$c.err")" "$RC" 0
    check_eq "$c: nothing written outside DEST" "$OUTSIDE" ""
    check_eq "$c: the decoy is untouched" "$(decoy_state)" "$DECOY0"
}

# ---- names that leave the root --------------------------------------------
refused dotdot 'entry ../escape-dotdot: a ".." component, refusing it'
refused dotdot-inner 'a ".." component, refusing it'
refused absolute 'absolute path, refusing it'

# ---- symlinks planted by one layer, written through by the next ------------
made_safe symlink-then-write
check "symlink-then-write: the write through an absolute link landed inside DEST" \
    grep -q ESCAPED "$T/dest/symlink-then-write$D/through-abs"
check "symlink-then-write: the write through a ../ link landed inside DEST" \
    grep -q ESCAPED "$T/dest/symlink-then-write$D/through-rel"
made_safe symlink-same-layer
check "symlink-same-layer: landed inside DEST" grep -q ESCAPED "$T/dest/symlink-same-layer$D/same-layer"
made_safe symlink-last
check "symlink-last: the planted link was replaced by a file, not followed" \
    test -f "$T/dest/symlink-last/etc/shadow" -a ! -L "$T/dest/symlink-last/etc/shadow"
refused symlink-dangling-write 'is a dangling symlink'

# ---- hard links ---------------------------------------------------------------
refused hardlink-dotdot 'a ".." component, refusing it'
refused hardlink-absolute 'absolute path, refusing it'
refused hardlink-via-symlink 'hard link to s/secret: No such file or directory'

# ---- whiteouts --------------------------------------------------------------------
refused whiteout-dotdot 'names "..", refusing it'
made_safe whiteout-via-symlink

# ---- devices, setuid ---------------------------------------------------------------
refused device 'dev/evil-mem: a device node (refused without --allow-devices)'
made_safe device --allow-devices
check_eq "device: with --allow-devices, the node is made inside DEST" \
    "$(stat -c '%F %t:%T' "$T/dest/device/dev/evil-mem" 2>&1)" "character special file 1:1"
made_safe setuid
check_eq "setuid: setuid/setgid bits stripped by default" \
    "$(stat -c %a "$T/dest/setuid/bin/suid" "$T/dest/setuid/bin/sgid" | tr '\n' ' ')" "755 755 "
check "setuid: the stripping is reported" grep -q "2 setuid/setgid bits or file capabilities stripped" "$T/setuid.err"
rm -rf "$T/dest/setuid" "$T/dest/setuid.image-config.json"
made_safe setuid --keep-setuid
check_eq "setuid: --keep-setuid keeps them" \
    "$(stat -c %a "$T/dest/setuid/bin/suid" "$T/dest/setuid/bin/sgid" | tr '\n' ' ')" "4755 2755 "

# ---- broken images -------------------------------------------------------------------
refused digest-mismatch 'layers[0] (blobs/sha256/'
check "digest-mismatch: named as one" grep -q 'digest mismatch: sha256:' "$T/digest-mismatch.err"
refused manifest-mismatch 'manifest: blobs/sha256/'
check "manifest-mismatch: a manifest that still parses is refused by its digest" \
    grep -q 'digest mismatch' "$T/manifest-mismatch.err"
refused config-mismatch 'config: blobs/sha256/'
check "config-mismatch: refused by its digest" grep -q 'digest mismatch' "$T/config-mismatch.err"
refused truncated 'truncated or corrupt layer'
refused corrupt 'truncated or corrupt layer'
refused missing-blob 'layers[1] sha256:'
check "missing-blob: named as a missing blob" grep -q 'blob missing from the image' "$T/missing-blob.err"
refused bomb 'more than --max-size (16777216 bytes) once decompressed' --max-size 16M
refused many-files 'more than --max-files (100) entries' --max-files 100
# a few entries under a thousand missing parents each: the directories
# made for them count, or --max-files bounds nothing
refused implied-dirs 'more than --max-files (100) entries' --max-files 100
made_safe implied-dirs --max-files 5000
check_eq "implied-dirs: with room for them, the directories are made" \
    "$(find "$T/dest/implied-dirs" -type d | wc -l)" 4006

# ---- DEST that is not ours to replace -------------------------------------------------
mkdir -p "$T/dest/full" && echo keep > "$T/dest/full/mine"
timeout 60 "$BRIG_ROOTFS" import "$T/img/good" "$T/dest/full" >/dev/null 2>"$T/full.err"
check_eq "a non-empty DEST is refused (exit 1)" "$?" 1
check "the refusal says why" grep -qF "DEST exists and is not empty; refusing to unpack over it" "$T/full.err"
check_eq "a non-empty DEST is untouched" "$(ls "$T/dest/full")" "mine"

# ---- the same entries as plain root filesystem tars ------------------------------------
IMG=$T/plain
refused plain-dotdot 'entry ../escape-dotdot: a ".." component, refusing it'
refused plain-dotdot-inner 'a ".." component, refusing it'
refused plain-absolute 'absolute path, refusing it'
made_safe plain-symlink-then-write
check "plain symlink-then-write (gzip): the writes through the links landed inside DEST" \
    bash -c "grep -q ESCAPED '$T/dest/plain-symlink-then-write$D/through-abs' &&
             grep -q ESCAPED '$T/dest/plain-symlink-then-write$D/through-rel'"
made_safe plain-symlink-same-layer
check "plain symlink-same-layer (xz): landed inside DEST" grep -q ESCAPED "$T/dest/plain-symlink-same-layer$D/same-layer"
made_safe plain-symlink-last
check "plain symlink-last: the planted link was replaced by a file" \
    test -f "$T/dest/plain-symlink-last/etc/shadow" -a ! -L "$T/dest/plain-symlink-last/etc/shadow"
refused plain-symlink-dangling-write 'is a dangling symlink'
refused plain-hardlink-dotdot 'a ".." component, refusing it'
refused plain-hardlink-absolute 'absolute path, refusing it'
refused plain-hardlink-via-symlink 'hard link to s/secret: No such file or directory'
refused plain-device 'dev/evil-mem: a device node (refused without --allow-devices)'
made_safe plain-setuid
check_eq "plain setuid (gzip): bits stripped" \
    "$(stat -c %a "$T/dest/plain-setuid/bin/suid" "$T/dest/plain-setuid/bin/sgid" | tr '\n' ' ')" "755 755 "
refused plain-bomb 'more than --max-size (16777216 bytes) once decompressed' --max-size 16M
refused plain-many-files 'more than --max-files (100) entries' --max-files 100
refused plain-implied-dirs 'more than --max-files (100) entries' --max-files 100
made_safe plain-good
check "plain good: a .wh. name is a file in a plain tar, not a whiteout" test -f "$T/dest/plain-good/.wh.gone"
check "plain good: no image config beside DEST" test ! -e "$T/dest/plain-good.image-config.json"
# neither an image nor a rootfs: refused with what it is
IMG=$T/neither
mkdir -p "$IMG" "$T/neither-dir/blobs"
printf '{"not": "an image"}\n' > "$IMG/json.tar"
(cd "$T/neither-dir" && tar -cf "$IMG/blobs.tar" blobs)
: > "$IMG/empty.tar"
refused json.tar 'neither an image (index.json: an OCI image layout; manifest.json: docker save) nor a root filesystem tar: JSON text'
refused blobs.tar 'a tar of image blobs without index.json or manifest.json (first entries: blobs)'
refused empty.tar 'an empty file'

# ---- a container's mount destinations through the image's symlinks -------------------
# runc and crun make the target of a dangling symlink destination, and brig
# now does too: always inside the root. The image aims its links at the
# decoy (absolute, and by ../), loops them, and chains them past the
# kernel's 40; every mount must land inside the root or be refused, and
# nothing may appear in the decoy or anywhere else outside the root.
{
    mkb mdest -- /bin/sh -c 'cat /etc/rel /etc/abs /etc/chain; ls -d /reldir /absdir' || bail "cannot build a bundle"
    R=$T/mdest/rootfs
    echo mounted-in >"$T/bind-src"
    mkdir -p "$T/bind-dir"
    ln -s "../../../../../../../../..$D/made-rel" "$R/etc/rel"
    ln -s "$D/made-abs" "$R/etc/abs"
    ln -s "../../../../../../..$D/dir-rel/sub" "$R/reldir"
    ln -s "$D/dir-abs/sub" "$R/absdir"
    ln -s chain2 "$R/etc/chain"; ln -s "$D/chain3" "$R/etc/chain2"
    ln -s loop-b "$R/etc/loop-a"; ln -s loop-a "$R/etc/loop-b"
    for i in $(seq 1 45); do ln -s "long$((i + 1))" "$R/long$i"; done
    bind_at() { jq -n --arg d "$1" --arg s "$2" '{destination: $d, type: "bind", source: $s, options: ["bind"]}'; }
    cfg mdest '.mounts += [$a, $b, $c, $d, $e]' \
        --argjson a "$(bind_at /etc/rel "$T/bind-src")" --argjson b "$(bind_at /etc/abs "$T/bind-src")" \
        --argjson c "$(bind_at /reldir "$T/bind-dir")" --argjson d "$(bind_at /absdir "$T/bind-dir")" \
        --argjson e "$(bind_at /etc/chain "$T/bind-src")"
    touch "$T/stamp"; sleep 0.01
    run_ct mdest
    check_eq "dangling destinations aimed at the host (../, absolute, a chain): run succeeds" "$RC" 0
    check_eq "... each bind is seen at its destination" "$(grep -c mounted-in "$T/mdest.out")" 3
    check "... the targets were made inside the root" \
        test -f "$R$D/made-rel" -a -f "$R$D/made-abs" -a -f "$R$D/chain3" -a -d "$R$D/dir-rel/sub" -a -d "$R$D/dir-abs/sub"
    check_eq "... nothing appeared in the decoy" "$(decoy_state)" "$DECOY0"
    check_eq "... nothing was made outside the root" \
        "$(find "$T" -path "$R" -prune -o -path "$T/state" -prune -o -newer "$T/stamp" ! -name 'mdest.*' ! -name '.out.*' -print | grep -v "^$T\$\|^$T/mdest\$")" ""
    assert_clean mdest
    for dest in /etc/loop-a /long1; do
        cfg mdest '.mounts = [.mounts[] | select(.source != $s)] + [$m]' --arg s "$T/bind-src" \
            --argjson m "$(bind_at "$dest" "$T/bind-src")"
        cfg mdest '.mounts = [.mounts[] | select(.source != $s)]' --arg s "$T/bind-dir"
        run_ct mdest
        check_refused_rc "a destination through a symlink loop or a chain of 45 ($dest): refused" \
            "Too many levels of symbolic links" 1 "$RC" "$T/mdest.err"
        assert_clean mdest
    done
    check_eq "the decoy is untouched after all of them" "$(decoy_state)" "$DECOY0"
}

diag "every hostile case ran in $SECONDS s"
