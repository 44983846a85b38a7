"""Tests of brig_sandbox.py: the argv it builds and the errors it maps
(against a stand-in brig), then, as root with BRIG set (meson's
integration env), the real brig with the busybox rootfs the integration
tests build (tests/integration/lib.sh: brig-mkbundle).

    python3 -m unittest -v contrib/python/test_brig_sandbox.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brig_sandbox as bs  # noqa: E402

SAMPLE = {
    "id": "sb-a4938fea258a", "policy": "agent", "exit_code": 3, "signal": None, "timed_out": False,
    "idle_timed_out": False, "oom_killed": False, "wall_ms": 13, "cpu_user_ms": 1, "cpu_system_ms": 4,
    "memory_peak_bytes": 1122304, "pids_peak": None,
    "stdout": {"preview_head": "hi\n", "preview_tail": "", "bytes": 3, "truncated": False, "binary": False},
    "stderr": {"preview_head": "", "preview_tail": "", "bytes": 0, "truncated": False, "binary": False},
    "error": None, "ran": True, "exit_status": 3,
}


class FakeBrig(unittest.TestCase):
    """A stand-in brig: prints $FAKE_OUT, exits $FAKE_RC, records its argv and stdin."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.brig = os.path.join(self.dir, "brig")
        with open(self.brig, "w") as f:
            f.write('#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_DIR/argv"\ncat > "$FAKE_DIR/stdin"\n'
                    'printf "%s" "$FAKE_OUT"\n[ -n "$FAKE_SLEEP" ] && sleep "$FAKE_SLEEP"\nexit "$FAKE_RC"\n')
        os.chmod(self.brig, 0o755)
        os.environ["FAKE_DIR"] = self.dir
        os.environ.pop("FAKE_SLEEP", None)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def fake(self, out, rc):
        os.environ["FAKE_OUT"] = out if isinstance(out, str) else json.dumps(out)
        os.environ["FAKE_RC"] = str(rc)

    def argv(self):
        with open(os.path.join(self.dir, "argv")) as f:
            return f.read().splitlines()

    def test_result_typed(self):
        self.fake(SAMPLE, 3)
        r = bs.run(["sh", "-c", "echo hi; exit 3"], brig=self.brig)
        self.assertIsInstance(r, bs.SandboxResult)
        self.assertEqual((r.exit_code, r.signal, r.stdout.text, r.stdout.bytes), (3, None, "hi\n", 3))
        self.assertFalse(r.ok)
        self.assertIsNone(r.pids_peak)

    def test_flags_and_command(self):
        self.fake(SAMPLE, 3)
        bs.run(["ls", "-l", "--", "x"], policy="pi", workspace="/w", timeout="10s", idle_timeout="5s",
               output_limit="1KiB", env={"A": "b=c"}, cwd="/w", tty=True, brig=self.brig)
        self.assertEqual(self.argv(), ["sandbox", "run", "--json", "--policy", "pi", "--workspace", "/w",
                                       "--timeout", "10s", "--idle-timeout", "5s", "--output-limit", "1KiB",
                                       "--cwd", "/w", "--env", "A=b=c", "--tty", "--", "ls", "-l", "--", "x"])

    def test_stdin_fed(self):
        self.fake(SAMPLE, 3)
        bs.run(["cat"], stdin="some input", brig=self.brig)
        self.assertIn("--stdin", self.argv())
        with open(os.path.join(self.dir, "stdin")) as f:
            self.assertEqual(f.read(), "some input")

    def test_refused_is_an_exception(self):
        res = dict(SAMPLE, exit_code=None, error="--timeout 2h is above the policy's timeouts.wall (600s)",
                   ran=False, exit_status=125)
        self.fake(res, 125)
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["true"], timeout="2h", brig=self.brig)
        self.assertIn("timeouts.wall", str(cm.exception))
        self.assertFalse(cm.exception.result.ran)

    def test_timeout_is_a_result(self):
        self.fake(dict(SAMPLE, exit_code=None, signal=9, timed_out=True, exit_status=124), 124)
        r = bs.run(["sleep", "600"], timeout="1s", brig=self.brig)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.signal, 9)

    def test_not_a_result(self):
        self.fake("Usage: brig ...", 1)
        with self.assertRaises(bs.BadResult) as cm:
            bs.run(["true"], brig=self.brig)
        self.assertEqual(cm.exception.returncode, 1)
        self.fake(dict(SAMPLE, exit_code="3"), 3)
        with self.assertRaisesRegex(bs.BadResult, "exit_code: expected int"):
            bs.run(["true"], brig=self.brig)
        self.fake(dict(SAMPLE, wall_ms=True), 3)
        with self.assertRaisesRegex(bs.BadResult, "wall_ms: expected int"):
            bs.run(["true"], brig=self.brig)

    def test_brig_missing(self):
        with self.assertRaises(bs.BrigNotFound):
            bs.run(["true"], brig=os.path.join(self.dir, "nonexistent"))

    def test_brig_hangs(self):
        self.fake(SAMPLE, 0)
        os.environ["FAKE_SLEEP"] = "10"
        with self.assertRaises(bs.BrigTimeout):
            bs.run(["true"], brig=self.brig, process_timeout=0.5)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            bs.run("echo hi", brig=self.brig)
        with self.assertRaises(ValueError):
            bs.run(["true"], env={"A=B": "c"}, brig=self.brig)

    def test_truncated_text(self):
        s = bs.StreamResult(preview_head="ab", preview_tail="yz", bytes=10, truncated=True, binary=False)
        self.assertEqual(s.text, "ab\n[... 6 bytes not kept ...]\nyz")


@unittest.skipUnless(os.geteuid() == 0 and os.environ.get("BRIG") and os.environ.get("BRIG_MKBUNDLE"),
                     "the real brig needs root and BRIG, BRIG_PROBE, BRIG_MKBUNDLE (meson's integration env)")
class RealBrig(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="brig-pyclient.")
        os.chmod(cls.dir, 0o755)
        subprocess.run([os.environ["BRIG_MKBUNDLE"], "--probe", os.environ["BRIG_PROBE"], "--brig",
                        os.environ["BRIG"], "--no-config", os.path.join(cls.dir, "b")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.ws = os.path.join(cls.dir, "ws")
        os.mkdir(cls.ws)
        os.chown(cls.ws, 1000, 1000)
        cls.kw = dict(brig=os.environ["BRIG"], rootfs=os.path.join(cls.dir, "b", "rootfs"), workspace=cls.ws,
                      state_root=os.path.join(cls.dir, "state"), process_timeout=60)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_run(self):
        r = bs.run(["sh", "-c", "echo hi; echo oops >&2; exit 4"], **self.kw)
        self.assertEqual((r.exit_code, r.stdout.text, r.stderr.text, r.policy), (4, "hi\n", "oops\n", "agent"))
        self.assertTrue(r.id.startswith("sb-"))

    def test_stdin_and_env(self):
        r = bs.run(["sh", "-c", 'cat; echo "$GREETING"'], stdin="from python\n", env={"GREETING": "hello"},
                   **self.kw)
        self.assertEqual(r.stdout.text, "from python\nhello\n")

    def test_timeout(self):
        r = bs.run(["sleep", "600"], timeout="1s", **self.kw)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_status, 124)

    def test_refused(self):
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["true"], env={"GITHUB_TOKEN": "ghp_x"}, **self.kw)
        self.assertIn("GITHUB_TOKEN", cm.exception.error)
        self.assertFalse(cm.exception.result.ran)


if __name__ == "__main__":
    unittest.main()
