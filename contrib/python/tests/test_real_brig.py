"""brig_sandbox against the real brig (BRIG, as root): run, Sandbox and aio,
a timeout, an output cap, a refusal, 20 concurrent runs, live output, and
what a cancelled call leaves (nothing). One busybox rootfs and a private
state root for the whole module."""

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import brig_sandbox as bs
from brig_sandbox import aio

BRIG = os.environ.get("BRIG", "")
D = ""
KW = {}


def setUpModule():
    global D
    if os.geteuid() != 0 or not BRIG:
        raise unittest.SkipTest("the real brig needs root and BRIG (meson's clients env)")
    D = tempfile.mkdtemp(prefix="brig-pyclient.")
    os.chmod(D, 0o755)
    root = os.path.join(D, "rootfs")
    for d in ("bin", "dev", "proc", "sys", "tmp", "var/tmp", "workspace", "etc"):
        os.makedirs(os.path.join(root, d))
    shutil.copy("/bin/busybox", os.path.join(root, "bin"))
    for a in ("sh", "cat", "echo", "seq", "sleep", "true", "head", "yes", "touch", "ls", "test", "["):
        os.symlink("busybox", os.path.join(root, "bin", a))
    ws = os.path.join(D, "ws")
    os.mkdir(ws)
    # a filesystem of its own (the agent policy's workspace bound then holds
    # without staging): the host's files appear in it while a command runs
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "brig-pyclient", ws], check=True)
    os.chown(ws, 1000, 1000)
    KW.update(brig=BRIG, rootfs=root, workspace=ws, state_root=os.path.join(D, "state"), process_timeout=120)


def tearDownModule():
    if D:
        # a cancelled run's leftovers (cgroup, state) are the next run's to remove
        bs.run(["true"], **KW)
        for sb in bs.list_sandboxes(state_root=KW["state_root"], brig=BRIG):
            bs.remove(sb.name, force=True, state_root=KW["state_root"], brig=BRIG)
        subprocess.run(["umount", "-l", KW["workspace"]], check=False)
        shutil.rmtree(D)


def tagged_pids(tag: str):
    """Host pids whose environment holds TAG (a sandbox's commands)."""
    pids = []
    for p in os.listdir("/proc"):
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                if tag.encode() in f.read():
                    pids.append(int(p))
        except (OSError, ValueError):
            pass
    return pids


def gone(tag: str, within: float = 20.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not tagged_pids(tag):
            return True
        time.sleep(0.05)
    return False


class Run(unittest.TestCase):
    def test_run(self):
        r = bs.run(["sh", "-c", "echo hi; echo oops >&2; exit 4"], **KW)
        self.assertEqual((r.exit_code, r.stdout.text, r.stderr.text, r.policy), (4, "hi\n", "oops\n", "agent"))
        self.assertTrue(r.id.startswith("sb-"))
        self.assertIsNone(r.limit)

    def test_stdin_env_workspace(self):
        r = bs.run(["sh", "-c", 'cat > /workspace/py-in; cat /workspace/py-in; echo "$GREETING"'],
                   stdin="from python\n", env={"GREETING": "hello"}, **KW)
        self.assertEqual(r.stdout.text, "from python\nhello\n")
        with open(os.path.join(KW["workspace"], "py-in")) as f:
            self.assertEqual(f.read(), "from python\n")

    def test_timeout(self):
        r = bs.run(["sleep", "600"], timeout="1s", **KW)
        self.assertEqual((r.timed_out, r.exit_status, r.limit, r.signal), (True, 124, "wall", 9))

    def test_output_cap(self):
        r = bs.run(["sh", "-c", "yes | head -c 100000"], output_limit="1KiB", **KW)
        self.assertEqual((r.exit_code, r.stdout.bytes, r.stdout.truncated), (0, 100000, True))
        self.assertEqual(len(r.stdout.preview_head) + len(r.stdout.preview_tail), 1024)
        self.assertIn("bytes not kept", r.stdout.text)

    def test_refused(self):
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.run(["true"], env={"GITHUB_TOKEN": "ghp_x"}, **KW)
        self.assertIn("GITHUB_TOKEN", cm.exception.error)
        self.assertNotIn("ghp_x", cm.exception.error)
        self.assertFalse(cm.exception.result.ran)
        with self.assertRaisesRegex(bs.SandboxRefused, "timeouts.wall"):
            bs.run(["true"], timeout="999h", **KW)

    def test_not_found_and_not_executable(self):
        # 127 and 126 are results (ran false, error kept), not SandboxRefused
        r = bs.run(["no-such-command"], **KW)
        self.assertEqual((r.exit_code, r.exit_status, r.ran), (127, 127, False))
        self.assertIn("no-such-command", r.error)
        noexec = os.path.join(KW["workspace"], "noexec")
        with open(noexec, "w") as f:
            f.write("x\n")
        try:
            r = bs.run(["/workspace/noexec"], **KW)
        finally:
            os.unlink(noexec)
        self.assertEqual((r.exit_code, r.ran), (126, False))
        with bs.Sandbox(**KW) as sb:
            r = sb.exec(["no-such-command"])
            self.assertEqual((r.exit_code, r.ran), (127, False))

    def test_attack_caller_env_not_readable(self):
        # the agent process's own secrets never reach the sandbox: not through
        # run, exec or aio, whatever the command reads
        secret = f"sk-brig-py-{os.getpid()}-{time.monotonic_ns()}"
        dump = ["sh", "-c", "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null; echo end"]
        os.environ["ANTHROPIC_API_KEY"] = os.environ["BRIG_PY_MARK"] = secret
        try:
            outs = [bs.run(dump, **KW), asyncio.run(aio.run(dump, **KW))]
            with bs.Sandbox(**KW) as sb:
                outs.append(sb.exec(dump))
        finally:
            del os.environ["ANTHROPIC_API_KEY"], os.environ["BRIG_PY_MARK"]
        for r in outs:
            self.assertTrue(r.stdout.text.endswith("end\n"), r.stdout.text)
            self.assertNotIn(secret, r.stdout.text + r.stderr.text)

    def test_missing_brig(self):
        with self.assertRaises(bs.BrigNotFound):
            bs.run(["true"], **dict(KW, brig=os.path.join(D, "no-brig")))

    def test_live_output(self):
        seen = []
        r = bs.run(["sh", "-c", "echo one; echo two >&2"], on_output=lambda s, d: seen.append((s, d)), **KW)
        self.assertEqual(r.exit_code, 0)
        self.assertEqual("".join(d for s, d in seen if s == "stdout"), "one\n")
        self.assertEqual("".join(d for s, d in seen if s == "stderr"), "two\n")


class Session(unittest.TestCase):
    def test_sandbox(self):
        with bs.Sandbox(**KW) as sb:
            self.assertIn(sb.name, [s.name for s in bs.list_sandboxes(state_root=KW["state_root"], brig=BRIG)])
            self.assertEqual(sb.exec(["sh", "-c", "echo kept > /tmp/f"]).exit_code, 0)
            r = sb.exec(["cat", "/tmp/f"])
            self.assertEqual((r.stdout.text, r.sandbox), ("kept\n", sb.name))
            r = sb.exec(["sleep", "600"], timeout="1s")
            self.assertEqual((r.timed_out, r.exit_status), (True, 124))
            self.assertEqual(sb.exec(["true"]).exit_code, 0)       # the sandbox outlives that timeout
            with self.assertRaises(bs.SandboxRefused):
                sb.exec(["true"], env={"AWS_SECRET_ACCESS_KEY": "x"})
        self.assertNotIn(sb.name, [s.name for s in bs.list_sandboxes(state_root=KW["state_root"], brig=BRIG)])
        with self.assertRaisesRegex(bs.SandboxRefused, "no such sandbox"):
            sb.exec(["true"])

    def test_removed_on_error(self):
        with self.assertRaises(ZeroDivisionError):
            with bs.Sandbox(**KW) as sb:
                sb.exec(["true"])
                1 / 0
        self.assertEqual([s for s in bs.list_sandboxes(state_root=KW["state_root"], brig=BRIG)
                          if s.name == sb.name], [])

    def test_create_refused(self):
        with self.assertRaises(bs.SandboxRefused) as cm:
            bs.Sandbox(**dict(KW, rootfs=os.path.join(D, "no-rootfs"))).create()
        self.assertIn("no-rootfs", cm.exception.error)


class Async(unittest.TestCase):
    def test_twenty_at_once(self):
        async def main():
            return await asyncio.gather(*(aio.run(["sh", "-c", f"echo token-{i}; exit {i % 7}"], **KW)
                                          for i in range(20)))
        rs = asyncio.run(main())
        self.assertEqual([(r.stdout.text, r.exit_code) for r in rs],
                         [(f"token-{i}\n", i % 7) for i in range(20)])
        self.assertEqual(len({r.id for r in rs}), 20)

    def test_async_sandbox_and_errors(self):
        async def main():
            async with aio.Sandbox(**KW) as sb:
                rs = await asyncio.gather(*(sb.exec(["sh", "-c", f"echo {i}"]) for i in range(4)))
                self.assertEqual([r.stdout.text for r in rs], [f"{i}\n" for i in range(4)])
                t = await sb.exec(["sleep", "600"], timeout="1s")
                self.assertTrue(t.timed_out)
            names = [s.name for s in await aio.list_sandboxes(state_root=KW["state_root"], brig=BRIG)]
            self.assertNotIn(sb.name, names)
            with self.assertRaises(bs.SandboxRefused):
                await aio.run(["true"], env={"GITHUB_TOKEN": "x"}, **KW)
            r = await aio.run(["sleep", "600"], timeout="1s", **KW)
            self.assertEqual(r.limit, "wall")
        asyncio.run(main())

    def test_cancel_kills_the_sandbox(self):
        tag = f"BRIG_PYCANCEL={os.getpid()}-{time.monotonic_ns()}"

        async def main():
            t = asyncio.ensure_future(aio.run(["sleep", "600"], env={"BRIG_PYCANCEL": tag}, **KW))
            while not tagged_pids(tag):
                await asyncio.sleep(0.05)
            t.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await t
            async with aio.Sandbox(**KW) as sb:
                t = asyncio.ensure_future(sb.exec(["sleep", "600"], env={"BRIG_PYCANCEL": tag}))
                while not tagged_pids(tag):
                    await asyncio.sleep(0.05)
                t.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await t
                self.assertTrue(gone(tag), "the cancelled exec's command still runs")
                self.assertEqual((await sb.exec(["true"])).exit_code, 0)
        asyncio.run(main())
        self.assertTrue(gone(tag), "a cancelled call's command still runs")

    def test_live_stream(self):
        go = os.path.join(KW["workspace"], "go")

        async def main():
            evs = []
            # the command waits for a file the test makes only after it has
            # seen the first line: the event came while the command ran
            async for ev in aio.stream(["sh", "-c", "echo ready; while [ ! -e /workspace/go ]; do sleep 0.05; done;"
                                        " echo done"], **KW):
                evs.append(ev)
                if ev.event == "output" and "ready" in (ev.data or ""):
                    open(go, "w").close()
            return evs
        try:
            evs = asyncio.run(main())
        finally:
            if os.path.exists(go):
                os.unlink(go)
        self.assertEqual(evs[0].event, "start")
        self.assertEqual(evs[-1].event, "result")
        self.assertEqual(evs[-1].result.stdout.text, "ready\ndone\n")

        async def session():
            async with aio.Sandbox(**KW) as sb:
                return [e async for e in sb.stream(["sh", "-c", "echo in-session; exit 3"])]
        evs = asyncio.run(session())
        self.assertEqual("".join(e.data for e in evs if e.event == "output"), "in-session\n")
        self.assertEqual((evs[-1].result.exit_code, evs[-1].result.sandbox is not None), (3, True))


if __name__ == "__main__":
    unittest.main()
