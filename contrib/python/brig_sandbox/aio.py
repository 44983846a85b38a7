"""The asyncio flavour: the same names as brig_sandbox, awaited, so an
async agent loop runs many sandboxed commands at once.

    from brig_sandbox import aio
    results = await asyncio.gather(*(aio.run(c, workspace=ws) for c in cmds))
    async with aio.Sandbox(workspace=ws) as sb:
        r = await sb.exec(["make"], timeout="10m")
        async for ev in sb.stream(["pytest", "-q"]):      # live output
            if ev.event == "output": print(ev.data, end="")

Cancelling a call (task.cancel(), asyncio.wait_for) kills its brig: a
run's sandbox dies with it, an exec's command is reaped at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import AsyncIterator, Callable, List, Mapping, Optional, Sequence, Tuple, Type

from . import _cli
from ._cli import OnEvent, OnOutput, Stdin
from ._types import BrigNotFound, BrigTimeout, Event, SandboxInfo, SandboxResult

__all__ = ["run", "stream", "Sandbox", "list_sandboxes", "remove"]
# A line of --events may carry a whole output chunk: more than asyncio's 64 KiB default.
_LINE_LIMIT = 16 << 20


async def _spawn(cmd: List[str], stdin: Stdin) -> "asyncio.subprocess.Process":
    try:
        return await asyncio.create_subprocess_exec(
            *cmd, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=_LINE_LIMIT)
    except FileNotFoundError as e:
        raise BrigNotFound(f"{cmd[0]}: not found") from e


async def _kill(p: "asyncio.subprocess.Process") -> None:
    with contextlib.suppress(ProcessLookupError):
        p.kill()
    await p.wait()


async def _events_of(p: "asyncio.subprocess.Process", stdin: Stdin,
                     out: List[bytes], err: List[bytes]) -> AsyncIterator[Event]:
    """Each event of p's stdout as it comes; stdin fed and stderr kept beside."""
    async def feed() -> None:
        assert p.stdin is not None
        with contextlib.suppress(OSError):
            p.stdin.write(_cli.stdin_bytes(stdin) or b"")
            await p.stdin.drain()
            p.stdin.close()

    async def read_err() -> None:
        assert p.stderr is not None
        err.append(await p.stderr.read())

    helpers = [asyncio.ensure_future(read_err())]
    if stdin is not None:
        helpers.append(asyncio.ensure_future(feed()))
    try:
        assert p.stdout is not None
        while True:
            line = await p.stdout.readline()
            if not line:
                break
            out.append(line)
            try:
                yield _cli.parse_event(line)
            except ValueError:
                continue        # not an event: the outcome tells what it was
        await asyncio.gather(*helpers)
        await p.wait()
    finally:
        for h in helpers:
            h.cancel()


async def _call(cmd: List[str], stdin: Stdin, process_timeout: Optional[float],
                on_event: Optional[OnEvent] = None) -> Tuple[int, bytes, bytes, Optional[SandboxResult]]:
    p = await _spawn(cmd, stdin)
    out: List[bytes] = []
    err: List[bytes] = []
    result: List[SandboxResult] = []

    async def whole() -> None:
        if on_event is None:
            o, e = await p.communicate(_cli.stdin_bytes(stdin))
            out.append(o)
            err.append(e)
            return
        async for ev in _events_of(p, stdin, out, err):
            if ev.result is not None:
                result.append(ev.result)
            on_event(ev)

    try:
        await asyncio.wait_for(whole(), process_timeout)
    except asyncio.TimeoutError as e:
        await _kill(p)
        raise BrigTimeout(f"brig did not finish within {process_timeout} s (killed)") from e
    except BaseException:
        await asyncio.shield(_kill(p))
        raise
    assert p.returncode is not None
    return p.returncode, b"".join(out), b"".join(err), result[-1] if result else None


async def _stream(cmd: List[str], stdin: Stdin, process_timeout: Optional[float],
                  after_kill: Optional[Callable[[], "asyncio.Future[None]"]] = None) -> AsyncIterator[Event]:
    p = await _spawn(cmd, stdin)
    out: List[bytes] = []
    err: List[bytes] = []
    last: Optional[SandboxResult] = None
    done = False
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        with contextlib.suppress(ProcessLookupError):
            p.kill()
    timer = asyncio.get_running_loop().call_later(process_timeout, expire) if process_timeout is not None else None
    try:
        async for ev in _events_of(p, stdin, out, err):
            if ev.result is not None:
                last = ev.result
                continue        # the result event comes after the outcome
            yield ev
        done = True
    finally:
        if timer is not None:
            timer.cancel()
        if not done:            # the caller stopped iterating, or was cancelled
            await asyncio.shield(_kill(p))
            if after_kill is not None:
                await asyncio.shield(after_kill())
    if expired:
        if after_kill is not None:
            await after_kill()
        raise BrigTimeout(f"brig did not finish within {process_timeout} s (killed)")
    assert p.returncode is not None
    r = _cli.outcome(p.returncode, b"".join(out), b"".join(err), events=True, result=last)
    yield Event(event="result", result=r, raw={"event": "result"})


async def run(argv: Sequence[str], *, policy: Optional[str] = None, rootfs: Optional[str] = None,
              workspace: Optional[str] = None, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
              output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
              stdin: Stdin = None, tty: bool = False, state_root: Optional[str] = None, brig: str = "brig",
              sudo: bool = False, process_timeout: Optional[float] = None, on_output: Optional[OnOutput] = None,
              on_event: Optional[OnEvent] = None) -> SandboxResult:
    """brig_sandbox.run, awaited."""
    handle = _cli.event_handler(on_output, on_event)
    args = _cli.run_args(argv, policy=policy, rootfs=rootfs, workspace=workspace, timeout=timeout,
                         idle_timeout=idle_timeout, output_limit=output_limit, env=env, cwd=cwd, stdin=stdin,
                         tty=tty, state_root=state_root, events=handle is not None)
    rc, out, err, res = await _call(_cli.prefix(brig, sudo) + args, stdin, process_timeout, handle)
    return _cli.outcome(rc, out, err, events=handle is not None, result=res)


def stream(argv: Sequence[str], *, policy: Optional[str] = None, rootfs: Optional[str] = None,
           workspace: Optional[str] = None, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
           output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
           stdin: Stdin = None, tty: bool = False, state_root: Optional[str] = None, brig: str = "brig",
           sudo: bool = False, process_timeout: Optional[float] = None) -> AsyncIterator[Event]:
    """run() as an async iterator of its events (`--events`): start,
    output, limit, ..., and last an Event "result" whose `result` is run()'s
    (brig failing raises there, as run() would). Leaving the loop early
    kills the sandbox."""
    args = _cli.run_args(argv, policy=policy, rootfs=rootfs, workspace=workspace, timeout=timeout,
                         idle_timeout=idle_timeout, output_limit=output_limit, env=env, cwd=cwd, stdin=stdin,
                         tty=tty, state_root=state_root, events=True)
    return _stream(_cli.prefix(brig, sudo) + args, stdin, process_timeout)


async def list_sandboxes(*, state_root: Optional[str] = None, brig: str = "brig",
                         process_timeout: Optional[float] = None) -> List[SandboxInfo]:
    """brig_sandbox.list_sandboxes, awaited."""
    rc, out, err, _ = await _call(_cli.prefix(brig, False) + _cli.ls_args(state_root=state_root), None,
                                  process_timeout)
    return _cli.parse_ls(_cli.checked(rc, out, err).encode())


async def remove(name: str, *, force: bool = False, state_root: Optional[str] = None, brig: str = "brig",
                 process_timeout: Optional[float] = None) -> None:
    """brig_sandbox.remove, awaited."""
    rc, out, err, _ = await _call(_cli.prefix(brig, False) + _cli.rm_args(name, force=force, state_root=state_root),
                                  None, process_timeout)
    _cli.checked(rc, out, err)


class Sandbox(_cli.SandboxSpec):
    """brig_sandbox.Sandbox, awaited: `async with aio.Sandbox(...) as sb`."""

    async def create(self) -> "Sandbox":
        rc, out, err, _ = await _call(self._create_cmd(), None, self.process_timeout)
        _cli.checked(rc, out, err)
        self.created = True
        return self

    async def _reap(self) -> None:
        # A killed brig exec leaves its command to the next exec or ls.
        with contextlib.suppress(Exception):
            await list_sandboxes(state_root=self.state_root, brig=self.brig, process_timeout=self.process_timeout)

    async def exec(self, argv: Sequence[str], *, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
                   output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                   cwd: Optional[str] = None, stdin: Stdin = None, process_timeout: Optional[float] = None,
                   on_output: Optional[OnOutput] = None, on_event: Optional[OnEvent] = None) -> SandboxResult:
        """brig_sandbox.Sandbox.exec, awaited; cancelled, its command is killed."""
        handle = _cli.event_handler(on_output, on_event)
        cmd = self._exec_cmd(argv, handle is not None, timeout, idle_timeout, output_limit, env, cwd, stdin)
        pt = process_timeout if process_timeout is not None else self.process_timeout
        try:
            rc, out, err, res = await _call(cmd, stdin, pt, handle)
        except BaseException:
            await asyncio.shield(self._reap())
            raise
        return _cli.outcome(rc, out, err, events=handle is not None, result=res)

    def stream(self, argv: Sequence[str], *, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
               output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
               cwd: Optional[str] = None, stdin: Stdin = None,
               process_timeout: Optional[float] = None) -> AsyncIterator[Event]:
        """exec() as an async iterator of its events, as aio.stream()."""
        cmd = self._exec_cmd(argv, True, timeout, idle_timeout, output_limit, env, cwd, stdin)
        pt = process_timeout if process_timeout is not None else self.process_timeout
        return _stream(cmd, stdin, pt, after_kill=lambda: asyncio.ensure_future(self._reap()))

    async def remove(self, force: bool = False) -> None:
        await remove(self.name, force=force, state_root=self.state_root, brig=self.brig,
                     process_timeout=self.process_timeout)
        self.created = False

    async def __aenter__(self) -> "Sandbox":
        return await self.create()

    async def __aexit__(self, et: Optional[Type[BaseException]], ev: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        if self.created:
            await asyncio.shield(self.remove(force=True))
