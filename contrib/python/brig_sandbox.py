"""A small client for `brig sandbox run` (docs/sandbox.md), as an agent
framework would call it: one command in a fresh sandbox, the JSON result as
typed dataclasses, brig's own failures as exceptions.

    from brig_sandbox import run
    r = run(["sh", "-c", "make test"], workspace="/srv/ws/task1", timeout="10m")
    if r.timed_out: ...
    print(r.exit_code, r.stdout.text)

Standard library only (subprocess, json, dataclasses); Python 3.8+.

What is an exception and what is a result: a command that exits non-zero,
dies of a signal, or is killed at a limit is a *result* (exit_code, signal,
timed_out, ...): the sandbox worked. brig failing (bad flag, policy refusal,
a sandbox that could not be made: exit 125 and `error`) raises
SandboxRefused; brig missing raises BrigNotFound; brig itself not answering
within `process_timeout` raises BrigTimeout (brig is killed; its sandbox
dies with it and the next run removes what it left).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

__all__ = ["run", "SandboxResult", "StreamResult", "BrigError", "SandboxRefused",
           "BrigNotFound", "BrigTimeout", "BadResult"]


class BrigError(Exception):
    """brig could not give a result for the command."""


class SandboxRefused(BrigError):
    """brig failed before or while making the sandbox (exit 125): nothing ran,
    or what ran was killed. `result` is the full result, `error` brig's text."""

    def __init__(self, result: "SandboxResult"):
        super().__init__(result.error or "brig failed (exit 125)")
        self.result = result
        self.error = result.error


class BrigNotFound(BrigError):
    """The brig binary (or sudo) is not there."""


class BrigTimeout(BrigError):
    """brig did not finish within process_timeout (it was killed)."""


class BadResult(BrigError):
    """brig's stdout was not a result (a brig too old, or something else)."""

    def __init__(self, message: str, stdout: bytes, stderr: bytes, returncode: int):
        super().__init__(message)
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


@dataclass(frozen=True)
class StreamResult:
    """One stream: previews of its head and tail, everything counted."""
    preview_head: str
    preview_tail: str
    bytes: int
    truncated: bool
    binary: bool

    @property
    def text(self) -> str:
        """What is kept: all of it when not truncated, else head + marker + tail."""
        if not self.truncated:
            return self.preview_head
        cut = self.bytes - len(self.preview_head.encode()) - len(self.preview_tail.encode())
        return f"{self.preview_head}\n[... {cut} bytes not kept ...]\n{self.preview_tail}"

    @classmethod
    def from_json(cls, d: Mapping) -> "StreamResult":
        return cls(preview_head=_typed(d, "preview_head", str), preview_tail=_typed(d, "preview_tail", str),
                   bytes=_typed(d, "bytes", int), truncated=_typed(d, "truncated", bool),
                   binary=_typed(d, "binary", bool))


@dataclass(frozen=True)
class SandboxResult:
    """sandbox/result.schema.json, field for field."""
    id: str
    policy: Optional[str]
    exit_code: Optional[int]
    signal: Optional[int]
    timed_out: bool
    idle_timed_out: bool
    oom_killed: bool
    wall_ms: int
    cpu_user_ms: Optional[int]
    cpu_system_ms: Optional[int]
    memory_peak_bytes: Optional[int]
    pids_peak: Optional[int]
    stdout: StreamResult
    stderr: StreamResult
    error: Optional[str]
    ran: bool
    exit_status: int

    @property
    def ok(self) -> bool:
        """The command ran and exited 0."""
        return self.exit_code == 0 and self.error is None

    @classmethod
    def from_json(cls, d: Mapping) -> "SandboxResult":
        if not isinstance(d, Mapping):
            raise ValueError("result: expected an object")
        opt = lambda k, t: _typed(d, k, t, optional=True)  # noqa: E731
        return cls(id=_typed(d, "id", str), policy=opt("policy", str), exit_code=opt("exit_code", int),
                   signal=opt("signal", int), timed_out=_typed(d, "timed_out", bool),
                   idle_timed_out=_typed(d, "idle_timed_out", bool), oom_killed=_typed(d, "oom_killed", bool),
                   wall_ms=_typed(d, "wall_ms", int), cpu_user_ms=opt("cpu_user_ms", int),
                   cpu_system_ms=opt("cpu_system_ms", int), memory_peak_bytes=opt("memory_peak_bytes", int),
                   pids_peak=opt("pids_peak", int), stdout=StreamResult.from_json(_typed(d, "stdout", dict)),
                   stderr=StreamResult.from_json(_typed(d, "stderr", dict)), error=opt("error", str),
                   ran=_typed(d, "ran", bool), exit_status=_typed(d, "exit_status", int))


def _typed(d: Mapping, key: str, typ: type, optional: bool = False):
    if key not in d:
        raise ValueError(f"result: {key} missing")
    v = d[key]
    if v is None and optional:
        return None
    # bool is an int in Python: an int field must not take true/false
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        raise ValueError(f"result: {key}: expected {typ.__name__}, got {type(v).__name__}")
    return v


def run(argv: Sequence[str], *, policy: Optional[str] = None, rootfs: Optional[str] = None,
        workspace: Optional[str] = None, timeout: Optional[str] = None, idle_timeout: Optional[str] = None,
        output_limit: Optional[str] = None, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
        stdin: Union[bytes, str, None] = None, tty: bool = False, state_root: Optional[str] = None,
        brig: str = "brig", sudo: bool = False, process_timeout: Optional[float] = None) -> SandboxResult:
    """Run argv in a fresh sandbox and return its result.

    Durations are brig's ("30s", "10m"), sizes "64KiB". `stdin` (bytes or
    str) is fed to the command (`--stdin -`); without it the command reads
    /dev/null. `sudo=True` runs `sudo -n brig sandbox run`: then policy,
    rootfs and state_root must be None (the host's sandbox.conf fixes them)
    and workspace is a name in the host's workspaces. `process_timeout`
    (seconds) bounds brig itself, beyond the sandbox's own wall limit.
    """
    if isinstance(argv, (str, bytes)) or not argv:
        raise ValueError("argv: a non-empty list of strings (use ['sh', '-c', CMD] for a shell line)")
    cmd = (["sudo", "-n"] if sudo else []) + [brig, "sandbox", "run", "--json"]
    for flag, val in (("--policy", policy), ("--rootfs", rootfs), ("--workspace", workspace),
                      ("--timeout", timeout), ("--idle-timeout", idle_timeout),
                      ("--output-limit", output_limit), ("--cwd", cwd), ("--state-root", state_root)):
        if val is not None:
            cmd += [flag, str(val)]
    for k, v in (env or {}).items():
        if "=" in k or not k:
            raise ValueError(f"env: bad name {k!r}")
        cmd += ["--env", f"{k}={v}"]
    if tty:
        cmd.append("--tty")
    data = None
    if stdin is not None:
        cmd += ["--stdin", "-"]
        data = stdin.encode() if isinstance(stdin, str) else stdin
    cmd.append("--")
    cmd += [str(a) for a in argv]
    try:
        p = subprocess.run(cmd, input=data, stdin=None if data is not None else subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=process_timeout, check=False)
    except FileNotFoundError as e:
        raise BrigNotFound(f"{cmd[0]}: not found") from e
    except subprocess.TimeoutExpired as e:
        raise BrigTimeout(f"brig did not finish within {process_timeout} s (killed)") from e
    try:
        result = SandboxResult.from_json(json.loads(p.stdout))
    except (ValueError, UnicodeDecodeError) as e:
        raise BadResult(f"brig exited {p.returncode} without a result: {e}; stderr: "
                        f"{p.stderr.decode(errors='replace').strip()[:500]}", p.stdout, p.stderr, p.returncode) from e
    if result.error is not None or p.returncode == 125:
        raise SandboxRefused(result)
    return result
