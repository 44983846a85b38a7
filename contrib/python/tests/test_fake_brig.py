"""brig_sandbox against a stand-in brig: the command lines it builds, and
each brig exit status mapped to its one outcome. The real brig:
test_real_brig.py. Run by contrib/python/tests/venv-test.sh (meson test
clients-python) against the package installed in a venv, or from the
source: PYTHONPATH=contrib/python python3 -m unittest discover -s contrib/python/tests
"""

import asyncio
import json
import os
import shutil
import tempfile
import unittest

import brig_sandbox as bs
from brig_sandbox import _cli, aio

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
                    'printf "%s" "$FAKE_OUT"\nprintf "%s" "$FAKE_ERR" >&2\n'
                    '[ -n "$FAKE_SLEEP" ] && exec sleep "$FAKE_SLEEP"\nexit "$FAKE_RC"\n')
        os.chmod(self.brig, 0o755)
        os.environ["FAKE_DIR"] = self.dir
        os.environ.pop("FAKE_SLEEP", None)
        os.environ.pop("FAKE_ERR", None)

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

    def test_installed_package(self):
        # venv-test.sh: the package under test is the installed one
        if os.environ.get("BRIG_CLIENT_INSTALLED"):
            self.assertTrue(bs.__file__.startswith(os.environ["BRIG_CLIENT_INSTALLED"]), bs.__file__)

    def test_refused_is_an_exception(self):
        res = dict(SAMPLE, exit_code=None, error="--timeout 2h is above the policy's timeouts.wall (600s)",
                   ran=False, exit_status=125)
        self.fake(res, 125)
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["true"], timeout="2h", brig=self.brig)
        self.assertIn("timeouts.wall", str(cm.exception))
        self.assertFalse(cm.exception.result.ran)

    def test_refused_without_a_result(self):
        # a flag brig does not know: exit 125, only stderr
        self.fake("", 125)
        os.environ["FAKE_ERR"] = "brig sandbox run: flag provided but not defined: --bogus"
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["true"], brig=self.brig)
        self.assertIsNone(cm.exception.result)
        self.assertIn("--bogus", cm.exception.error)

    def test_not_found_and_not_executable_are_results(self):
        for code in (126, 127):
            self.fake(dict(SAMPLE, exit_code=code, ran=False, exit_status=code,
                           error="brig-init: no-such: No such file or directory"), code)
            r = bs.run(["no-such"], brig=self.brig)
            self.assertEqual((r.exit_code, r.ran, r.ok), (code, False, False))
            self.assertIn("no-such", r.error)

    def test_every_other_status_is_a_result(self):
        for code in (0, 1, 2, 124, 128 + 9, 255):
            self.fake(dict(SAMPLE, exit_code=code, exit_status=code), code)
            self.assertEqual(bs.run(["x"], brig=self.brig).exit_status, code)

    def test_timeout_is_a_result(self):
        self.fake(dict(SAMPLE, exit_code=None, signal=9, timed_out=True, exit_status=124), 124)
        r = bs.run(["sleep", "600"], timeout="1s", brig=self.brig)
        self.assertTrue(r.timed_out)
        self.assertEqual((r.signal, r.limit), (9, "wall"))

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

    def test_default_brig_found_off_path(self):
        # brig="brig" with a PATH without sbin (a non-root login): the
        # installed one in sbin is found; with none anywhere, BrigNotFound
        # says where it looked and what to do.
        self.fake(SAMPLE, 3)
        path, dirs = os.environ.get("PATH", ""), _cli.BRIG_DIRS
        os.environ["PATH"] = "/nonexistent"
        try:
            _cli.BRIG_DIRS = ("/nonexistent-2", self.dir)
            self.assertEqual(bs.run(["true"]).exit_code, 3)
            _cli.BRIG_DIRS = ("/nonexistent-2",)
            with self.assertRaises(bs.BrigNotFound) as cm:
                bs.run(["true"])
            self.assertIn("/nonexistent-2", str(cm.exception))
            self.assertIn("setup.sh", str(cm.exception))
            with self.assertRaises(bs.BrigNotFound):
                asyncio.run(aio.run(["true"]))
        finally:
            os.environ["PATH"], _cli.BRIG_DIRS = path, dirs

    def test_brig_hangs(self):
        self.fake(SAMPLE, 0)
        os.environ["FAKE_SLEEP"] = "10"
        with self.assertRaises(bs.BrigTimeout):
            bs.run(["true"], brig=self.brig, process_timeout=0.5)
        with self.assertRaises(bs.BrigTimeout):
            bs.run(["true"], brig=self.brig, process_timeout=0.5, on_output=lambda s, d: None)
        with self.assertRaises(bs.BrigTimeout):
            asyncio.run(aio.run(["true"], brig=self.brig, process_timeout=0.5))

        async def collect():
            return [e async for e in aio.stream(["true"], brig=self.brig, process_timeout=0.5)]
        with self.assertRaises(bs.BrigTimeout):
            asyncio.run(collect())

    def test_events(self):
        lines = [{"event": "start", "id": "sb-1", "policy": "agent", "time_ms": 0},
                 {"event": "output", "stream": "stdout", "data": "hi\n", "time_ms": 3},
                 {"event": "output", "stream": "stderr", "data": "oops\n", "time_ms": 4},
                 {"event": "limit", "limit": "wall", "time_ms": 1000},
                 {"event": "something-new", "time_ms": 1001},
                 {"event": "result", "result": dict(SAMPLE, timed_out=True, exit_code=None, signal=9,
                                                    exit_status=124)}]
        self.fake("\n".join(json.dumps(x) for x in lines) + "\n", 124)
        seen, events = [], []
        r = bs.run(["x"], brig=self.brig, on_output=lambda s, d: seen.append((s, d)), on_event=events.append)
        self.assertIn("--events", self.argv())
        self.assertNotIn("--json", self.argv())
        self.assertEqual(seen, [("stdout", "hi\n"), ("stderr", "oops\n")])
        self.assertEqual([e.event for e in events], [x["event"] for x in lines])
        self.assertEqual((events[3].limit, events[-1].result), ("wall", r))
        self.assertEqual(r.limit, "wall")

        async def collect():
            return [e async for e in aio.stream(["x"], brig=self.brig)]
        evs = asyncio.run(collect())
        self.assertEqual([e.event for e in evs], [x["event"] for x in lines])
        self.assertTrue(evs[-1].result.timed_out)

    def test_events_refused(self):
        # brig failing prints its result as the last line, and exits 125
        res = dict(SAMPLE, exit_code=None, error="--env GITHUB_TOKEN: refused", ran=False, exit_status=125)
        self.fake(json.dumps({"event": "result", "result": res}) + "\n", 125)
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["x"], brig=self.brig, on_output=lambda s, d: None)
        self.assertIn("GITHUB_TOKEN", cm.exception.error)

        async def collect():
            return [e async for e in aio.stream(["x"], brig=self.brig)]
        with self.assertRaises(bs.SandboxRefused):
            asyncio.run(collect())

    def test_session_commands(self):
        self.fake("", 0)
        sb = bs.Sandbox("s1", policy="pygent", workspace="/w", env={"A": "1"}, state_root="/st", brig=self.brig)
        with sb:
            self.assertEqual(self.argv(), ["sandbox", "create", "--policy", "pygent", "--workspace", "/w",
                                           "--state-root", "/st", "--env", "A=1", "s1"])
            self.fake(SAMPLE, 3)
            r = sb.exec(["ls", "-l"], timeout="5s")
            self.assertEqual(r.exit_code, 3)
            self.assertEqual(self.argv(), ["sandbox", "exec", "--json", "--timeout", "5s", "--state-root", "/st",
                                           "s1", "--", "ls", "-l"])
            self.fake("", 0)
        self.assertEqual(self.argv(), ["sandbox", "rm", "--force", "--state-root", "/st", "s1"])
        self.fake(json.dumps([{"name": "s1", "status": "running", "policy": "agent", "pid": 7, "execs": 1,
                               "created": "2026-01-01T00:00:00Z"}]), 0)
        self.assertEqual(bs.list_sandboxes(brig=self.brig),
                         [bs.SandboxInfo("s1", "running", "agent", 7, 1, "2026-01-01T00:00:00Z")])
        self.fake("", 125)
        os.environ["FAKE_ERR"] = "brig sandbox rm: sandbox s1: 1 command(s) still running (rm --force kills them)"
        with self.assertRaisesRegex(bs.SandboxRefused, "still running"):
            bs.remove("s1", brig=self.brig)
        self.assertTrue(bs.Sandbox(brig=self.brig).name.startswith("py-"))
        for bad in ("../x", "sb-1", "a/b", ""):
            with self.assertRaises(ValueError):
                bs.Sandbox(bad)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            bs.run("echo hi", brig=self.brig)
        with self.assertRaises(ValueError):
            bs.run(["true"], env={"A=B": "c"}, brig=self.brig)

    def test_truncated_text(self):
        s = bs.StreamResult(preview_head="ab", preview_tail="yz", bytes=10, truncated=True, binary=False)
        self.assertEqual(s.text, "ab\n[... 6 bytes not kept ...]\nyz")


if __name__ == "__main__":
    unittest.main()
