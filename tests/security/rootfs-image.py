#!/usr/bin/env python3
"""Builds the hostile OCI images of t-rootfs-hostile.sh (and a small good
one), locally, with tarfile: nothing is downloaded.

    rootfs-image.py CASE OUT DECOY
    rootfs-image.py --all OUTDIR DECOY
    rootfs-image.py --plain-all OUTDIR DECOY

OUT becomes an OCI image layout directory (--all: OUTDIR/CASE for every
case, in one run: a python start-up costs seconds on a loaded machine);
--plain-all: OUTDIR/CASE.tar[.gz|.xz|.zst], the case's layers as one plain
root filesystem tar (what `docker export` or `tar -C dir -c .` give), for
the cases that are about entries, not the image's JSON or digests. DECOY is
the test's decoy directory on the host, which hostile entries aim at."""
import gzip
import hashlib
import io
import json
import lzma
import os
import subprocess
import sys
import tarfile

MT_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MT_CONFIG = "application/vnd.oci.image.config.v1+json"
MT_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
MT_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"


def entry(name, kind="file", data=b"x\n", mode=0o644, link="", major=0, minor=0):
    t = tarfile.TarInfo(name)
    t.mode = mode
    t.mtime = 1700000000
    t.type = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
              "hardlink": tarfile.LNKTYPE, "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
    t.linkname = link
    t.devmajor, t.devminor = major, minor
    if kind != "file":
        data = b""
    t.size = len(data)
    return t, data


def layer(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for t, data in entries:
            tf.addfile(t, io.BytesIO(data) if t.size else None)
    return buf.getvalue()


class Layout:
    def __init__(self, out):
        self.out = out
        os.makedirs(os.path.join(out, "blobs", "sha256"))

    def put(self, data):
        h = hashlib.sha256(data).hexdigest()
        with open(self.blob(h), "wb") as f:
            f.write(data)
        return {"digest": "sha256:" + h, "size": len(data)}

    def blob(self, h):
        return os.path.join(self.out, "blobs", "sha256", h.split(":")[-1])

    def write(self, raw_layers, post=None, zstd=False):
        """post(i, gz_bytes) -> bytes stored as layer i (e.g. truncated);
        zstd: compressed by the zstd command instead of gzip."""
        descs, diff_ids = [], []
        for i, raw in enumerate(raw_layers):
            diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
            if zstd:
                data = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE,
                                      check=True).stdout
            else:
                data = gzip.compress(raw, mtime=0)
            if post:
                data = post(i, data)
            descs.append(dict(mediaType=MT_ZSTD if zstd else MT_GZIP, **self.put(data)))
        config = {"architecture": "amd64", "os": "linux",
                  "config": {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]},
                  "rootfs": {"type": "layers", "diff_ids": diff_ids}}
        cdesc = dict(mediaType=MT_CONFIG, **self.put(json.dumps(config).encode()))
        manifest = {"schemaVersion": 2, "mediaType": MT_MANIFEST, "config": cdesc, "layers": descs}
        mdesc = dict(mediaType=MT_MANIFEST, **self.put(json.dumps(manifest).encode()))
        with open(os.path.join(self.out, "index.json"), "w") as f:
            json.dump({"schemaVersion": 2, "manifests": [mdesc]}, f)
        with open(os.path.join(self.out, "oci-layout"), "w") as f:
            json.dump({"imageLayoutVersion": "1.0.0"}, f)
        return descs


class Plain:
    """The layers of a case, one after the other, as one plain tar."""

    def __init__(self, out):
        self.out = out

    def write(self, raw_layers, post=None, zstd=False):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
            for raw in raw_layers:
                with tarfile.open(fileobj=io.BytesIO(raw)) as src:
                    for m in src.getmembers():
                        tf.addfile(m, src.extractfile(m) if m.isfile() else None)
        data = buf.getvalue()
        if self.out.endswith(".gz"):
            data = gzip.compress(data, mtime=0)
        elif self.out.endswith(".xz"):
            data = lzma.compress(data)
        elif self.out.endswith(".zst"):
            data = subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
        with open(self.out, "wb") as f:
            f.write(data)
        return []


# The cases a plain tar can carry, and how each is compressed.
PLAIN_CASES = {"good": ".tar", "dotdot": ".tar", "dotdot-inner": ".tar.gz", "absolute": ".tar.zst",
               "symlink-then-write": ".tar.gz", "symlink-dangling-write": ".tar", "symlink-same-layer": ".tar.xz",
               "symlink-last": ".tar", "hardlink-dotdot": ".tar.xz", "hardlink-absolute": ".tar.zst",
               "hardlink-via-symlink": ".tar", "device": ".tar", "setuid": ".tar.gz", "bomb": ".tar.xz",
               "many-files": ".tar.zst", "implied-dirs": ".tar"}

CASES = ["good", "dotdot", "dotdot-inner", "absolute", "symlink-then-write",
         "symlink-dangling-write", "symlink-same-layer", "symlink-last", "hardlink-dotdot",
         "hardlink-absolute", "hardlink-via-symlink", "whiteout-dotdot", "whiteout-via-symlink",
         "device", "setuid", "digest-mismatch", "manifest-mismatch", "config-mismatch", "truncated", "corrupt", "missing-blob", "bomb",
         "many-files", "implied-dirs"]


def main():
    case, out, decoy = sys.argv[1:4]
    if case == "--all":
        for c in CASES:
            build(c, os.path.join(out, c), decoy)
    elif case == "--plain-all":
        os.makedirs(out, exist_ok=True)
        for c, ext in PLAIN_CASES.items():
            build(c, os.path.join(out, c + ext), decoy, plain=True)
    else:
        build(case, out, decoy)


def build(case, out, decoy, plain=False):
    img = Plain(out) if plain else Layout(out)
    base = [entry("etc", "dir", mode=0o755), entry("etc/hostname", data=b"box\n"),
            entry("bin", "dir", mode=0o755)]
    if case in ("good", "good-zstd"):
        # whiteouts, an opaque dir, a hard link, a symlink, modes, a layer
        # replacing a directory with a file
        img.write([
            layer(base + [entry("old", "dir"), entry("old/a"), entry("gone"),
                          entry("opq", "dir"), entry("opq/lower"), entry("opq/sub", "dir"),
                          entry("opq/sub/lower"), entry("d2f", "dir"),
                          entry("d2f/x"), entry("bin/tool", data=b"#!/bin/sh\n", mode=0o750)]),
            layer([entry(".wh.gone"), entry("old/.wh.a"), entry("opq/upper"),
                   entry("opq/.wh..wh..opq"), entry("opq/sub/upper"), entry("d2f", data=b"file now\n"),
                   entry("bin/hl", "hardlink", link="bin/tool"),
                   entry("bin/sl", "symlink", link="/bin/tool"), entry("fifo", "fifo")]),
        ], zstd=case == "good-zstd")
    elif case == "implied-dirs":
        # a few entries, each a file under ~1000 missing directories: every
        # directory made for it is an inode as much as an entry is
        deep = "/".join(["d"] * 1000)
        img.write([layer(base + [entry("%s/f%d" % (deep, i)) for i in range(3)] +
                         [entry("e%d/%s/f" % (i, deep)) for i in range(3)])])
    elif case == "dotdot":
        img.write([layer(base + [entry("../escape-dotdot", data=b"ESCAPED\n")])])
    elif case == "dotdot-inner":
        img.write([layer(base + [entry("etc/../../escape-inner", data=b"ESCAPED\n")])])
    elif case == "absolute":
        img.write([layer(base + [entry(decoy + "/abs-file", data=b"ESCAPED\n")])])
    elif case == "symlink-then-write":
        # layer 1 plants links to the host's decoy dir; layer 2 writes
        # through them. In the root, they lead into DEST itself.
        img.write([layer(base + [entry("abs", "symlink", link=decoy),
                                 entry("rel", "symlink", link="../../../../../../../../" + decoy),
                                 entry(decoy.lstrip("/"), "dir")]),
                   layer([entry("abs/through-abs", data=b"ESCAPED\n"),
                          entry("rel/through-rel", data=b"ESCAPED\n")])])
    elif case == "symlink-dangling-write":
        img.write([layer(base + [entry("lnk", "symlink", link=decoy)]),
                   layer([entry("lnk/through-dangling", data=b"ESCAPED\n")])])
    elif case == "symlink-same-layer":
        img.write([layer(base + [entry("etc/evil", "symlink", link=decoy),
                                 entry(decoy.lstrip("/"), "dir"),
                                 entry("etc/evil/same-layer", data=b"ESCAPED\n")])])
    elif case == "symlink-last":
        # an entry whose own name is a planted symlink: replaced, not followed
        img.write([layer(base + [entry("etc/shadow", "symlink", link=decoy + "/secret")]),
                   layer([entry("etc/shadow", data=b"ESCAPED\n")])])
    elif case == "hardlink-dotdot":
        img.write([layer(base + [entry("hl", "hardlink", link="../../../../../../../.." + decoy + "/secret")])])
    elif case == "hardlink-absolute":
        img.write([layer(base + [entry("hl", "hardlink", link=decoy + "/secret")])])
    elif case == "hardlink-via-symlink":
        img.write([layer(base + [entry("s", "symlink", link=decoy)]),
                   layer([entry("hl", "hardlink", link="s/secret")])])
    elif case == "whiteout-dotdot":
        img.write([layer(base), layer([entry("etc/.wh..."), entry(".wh...")])])
    elif case == "whiteout-via-symlink":
        img.write([layer(base + [entry("s", "symlink", link=decoy)]),
                   layer([entry("s/.wh.victim"), entry("s/.wh..wh..opq")])])
    elif case == "device":
        img.write([layer(base + [entry("dev", "dir"), entry("dev/evil-mem", "chr", major=1, minor=1)])])
    elif case == "setuid":
        img.write([layer(base + [entry("bin/suid", data=b"\x7fELF", mode=0o4755),
                                 entry("bin/sgid", data=b"\x7fELF", mode=0o2755)])])
    elif case == "digest-mismatch":
        descs = img.write([layer(base)])
        path = img.blob(descs[0]["digest"])
        data = bytearray(open(path, "rb").read())
        data[-1] ^= 0xFF
        open(path, "wb").write(bytes(data))
    elif case in ("manifest-mismatch", "config-mismatch"):
        img.write([layer(base)])
        m = json.load(open(os.path.join(out, "index.json")))["manifests"][0]["digest"]
        if case == "config-mismatch":
            m = json.load(open(img.blob(m)))["config"]["digest"]
        path = img.blob(m)
        data = open(path, "rb").read().replace(b"sha256:", b"sha256:", 1)
        open(path, "wb").write(data.replace(b"{", b"{ ", 1))   # same meaning, other bytes
    elif case == "truncated":
        big = os.urandom(200000)
        img.write([layer(base + [entry("bin/big", data=big)])],
                  post=lambda i, d: d[: len(d) // 2])
    elif case == "corrupt":
        img.write([layer(base)], post=lambda i, d: d[:10] + b"\x00" * 50 + d[60:])
    elif case == "missing-blob":
        descs = img.write([layer(base), layer([entry("second")])])
        os.unlink(img.blob(descs[1]["digest"]))
    elif case == "bomb":
        # 32 MiB of zeros, 32 KiB compressed
        img.write([layer(base + [entry("bin/zeros", data=bytes(32 << 20))])])
    elif case == "many-files":
        img.write([layer(base + [entry("f%d" % i, data=b"") for i in range(300)])])
    else:
        sys.exit("unknown case " + case)


if __name__ == "__main__":
    main()
