#!/usr/bin/python3
"""egress-cred-client.py CONTRIB_PYTHON POLICY ROOTFS STATE_ROOT URL: the
Python client's public run() (contrib/python) under an egress policy with
a credential (t-egress-cred): the command, busybox wget through the
sandbox's http_proxy, reaches URL, whose server gets the key from the
proxy. The key is in this process's environment (BRIG_TEST_KEY, brig
reads it from there), never passed to run(). Prints one line per check:
"ok NAME" or "FAIL NAME: why"."""
import os
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "src"))
import brig_sandbox as bs  # noqa: E402

policy, rootfs, state_root, url = sys.argv[2:6]
key = os.environ["BRIG_TEST_KEY"]


def check(name, cond, why=""):
    print(("ok " if cond else "FAIL ") + name + ("" if cond else ": " + why))


r = bs.run(["wget", "-q", "-O", "-", url], policy=policy, rootfs=rootfs, state_root=state_root,
           brig=os.environ["BRIG"], timeout="30s")
check("run: exit 0", r.exit_code == 0, "exit %r, stderr %r" % (r.exit_code, r.stderr.text))
check("run: the server's echo came back", "x-api-key: " in r.stdout.text, r.stdout.text[:300])
check("run: the key is in neither stream", key not in r.stdout.text and key not in r.stderr.text)
