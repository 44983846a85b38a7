"""The blocking flavour: run(), Sandbox, list_sandboxes(), remove()."""

from __future__ import annotations

import subprocess
import threading
from types import TracebackType
from typing import List, Mapping, Optional, Sequence, Tuple, Type

from . import _cli
from ._cli import OnEvent, OnOutput, Stdin
from ._types import BrigNotFound, BrigTimeout, SandboxInfo, SandboxResult


def _call(cmd: List[str], stdin: Stdin, process_timeout: Optional[float],
          on_event: Optional[OnEvent] = None) -> Tuple[int, bytes, bytes, Optional[SandboxResult]]:
    """Run brig; with on_event, each stdout line is an event handed over as
    it arrives. Returns (status, stdout, stderr, the result event's result)."""
    data = _cli.stdin_bytes(stdin)
    if on_event is None:
        try:
            done = subprocess.run(cmd, input=data, stdin=None if data is not None else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=process_timeout, check=False)
        except FileNotFoundError as e:
            raise BrigNotFound(f"{cmd[0]}: not found") from e
        except subprocess.TimeoutExpired as e:
            raise BrigTimeout(f"brig did not finish within {process_timeout} s (killed)") from e
        return done.returncode, done.stdout, done.stderr, None
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as e:
        raise BrigNotFound(f"{cmd[0]}: not found") from e
    err_chunks: List[bytes] = []
    expired = threading.Event()

    def read_err() -> None:
        assert p.stderr is not None
        err_chunks.append(p.stderr.read())

    def feed() -> None:
        assert p.stdin is not None
        try:
            p.stdin.write(data or b"")
            p.stdin.close()
        except OSError:
            pass   # the command did not read it all

    def expire() -> None:
        expired.set()
        p.kill()

    helpers = [threading.Thread(target=read_err, daemon=True)]
    if data is not None:
        helpers.append(threading.Thread(target=feed, daemon=True))
    timer = threading.Timer(process_timeout, expire) if process_timeout is not None else None
    for t in helpers:
        t.start()
    if timer:
        timer.start()
    out: List[bytes] = []
    result = None
    try:
        assert p.stdout is not None
        for line in p.stdout:
            out.append(line)
            try:
                ev = _cli.parse_event(line)
            except ValueError:
                continue        # not an event: the outcome tells what it was
            if ev.result is not None:
                result = ev.result
            on_event(ev)
        p.wait()
    except BaseException:
        p.kill()
        p.wait()
        raise
    finally:
        if timer:
            timer.cancel()
        for t in helpers:
            t.join()
        for f in (p.stdout, p.stderr):
            if f is not None:
                f.close()
    if expired.is_set():
        raise BrigTimeout(f"brig did not finish within {process_timeout} s (killed)")
    return p.returncode, b"".join(out), b"".join(err_chunks), result


def run(argv: Sequence[str], *, policy: Optional[str] = None, rootfs: Optional[str] = None,
        workspace: Optional[str] = None, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
        output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
        stdin: Stdin = None, tty: bool = False, state_root: Optional[str] = None, brig: str = "brig",
        sudo: bool = False, process_timeout: Optional[float] = None, on_output: Optional[OnOutput] = None,
        on_event: Optional[OnEvent] = None) -> SandboxResult:
    """Run argv in a fresh sandbox (`brig sandbox run`) and return its result.

    Durations are brig's ("30s", "10m"), sizes "64KiB". `stdin` (bytes or
    str) is fed to the command (`--stdin -`); without it the command reads
    /dev/null. `sudo=True` runs `sudo -n brig sandbox run`: then policy,
    rootfs and state_root must be None (the host's sandbox.conf fixes them)
    and workspace is a name in the host's workspaces. `process_timeout`
    (seconds) bounds brig itself, beyond the sandbox's own wall limit.
    `on_output(stream, text)` and `on_event(event)` see the command's output
    as it comes (`brig sandbox run --events`); the result is the same.
    """
    handle = _cli.event_handler(on_output, on_event)
    args = _cli.run_args(argv, policy=policy, rootfs=rootfs, workspace=workspace, timeout=timeout,
                         idle_timeout=idle_timeout, output_limit=output_limit, env=env, cwd=cwd, stdin=stdin,
                         tty=tty, state_root=state_root, events=handle is not None)
    rc, out, err, res = _call(_cli.prefix(brig, sudo) + args, stdin, process_timeout, handle)
    return _cli.outcome(rc, out, err, events=handle is not None, result=res)


def list_sandboxes(*, state_root: Optional[str] = None, brig: str = "brig",
                   process_timeout: Optional[float] = None) -> List[SandboxInfo]:
    """The long-lived sandboxes (`brig sandbox ls --json`)."""
    rc, out, err, _ = _call(_cli.prefix(brig, False) + _cli.ls_args(state_root=state_root), None, process_timeout)
    return _cli.parse_ls(_cli.checked(rc, out, err).encode())


def remove(name: str, *, force: bool = False, state_root: Optional[str] = None, brig: str = "brig",
           process_timeout: Optional[float] = None) -> None:
    """Remove the sandbox NAME (`brig sandbox rm`); force=True kills the
    commands still running in it (without it, that is SandboxRefused)."""
    rc, out, err, _ = _call(_cli.prefix(brig, False) + _cli.rm_args(name, force=force, state_root=state_root),
                            None, process_timeout)
    _cli.checked(rc, out, err)


class Sandbox(_cli.SandboxSpec):
    """A long-lived sandbox for an agent session: made by create() (or on
    entering a `with` block), many commands through exec(), removed by
    remove() (or, with force, on leaving the block, whatever happened).
    Sandbox(name=None, *, policy, rootfs, workspace, env, state_root, brig,
    process_timeout); the name is py-<12 hex> unless given.

        with Sandbox(workspace="/srv/ws/task1", policy="pygent") as sb:
            r = sb.exec(["pytest", "-q"], timeout="10m")
    """

    def create(self) -> "Sandbox":
        """Make the sandbox (`brig sandbox create`); SandboxRefused if brig cannot."""
        rc, out, err, _ = _call(self._create_cmd(), None, self.process_timeout)
        _cli.checked(rc, out, err)
        self.created = True
        return self

    def exec(self, argv: Sequence[str], *, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
             output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
             stdin: Stdin = None, process_timeout: Optional[float] = None, on_output: Optional[OnOutput] = None,
             on_event: Optional[OnEvent] = None) -> SandboxResult:
        """Run argv in this sandbox (`brig sandbox exec`): the result as run()'s.
        A timeout kills this command and what it started, not the sandbox."""
        handle = _cli.event_handler(on_output, on_event)
        cmd = self._exec_cmd(argv, handle is not None, timeout, idle_timeout, output_limit, env, cwd, stdin)
        pt = process_timeout if process_timeout is not None else self.process_timeout
        try:
            rc, out, err, res = _call(cmd, stdin, pt, handle)
        except BaseException:
            # brig was killed: its command is an orphan until the next
            # exec or ls of the sandbox reaps it. Reap it now.
            self._reap()
            raise
        return _cli.outcome(rc, out, err, events=handle is not None, result=res)

    def _reap(self) -> None:
        try:
            list_sandboxes(state_root=self.state_root, brig=self.brig, process_timeout=self.process_timeout)
        except Exception:
            pass

    def remove(self, force: bool = False) -> None:
        """Remove the sandbox (`brig sandbox rm`); force=True kills what still runs."""
        remove(self.name, force=force, state_root=self.state_root, brig=self.brig,
               process_timeout=self.process_timeout)
        self.created = False

    def __enter__(self) -> "Sandbox":
        return self.create()

    def __exit__(self, et: Optional[Type[BaseException]], ev: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self.created:
            self.remove(force=True)
