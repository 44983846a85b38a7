"""The result, event and error types: sandbox/result.schema.json as frozen
dataclasses, brig's failures as exceptions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Type, TypeVar

T = TypeVar("T")


class BrigError(Exception):
    """brig could not give a result for the command."""


class SandboxRefused(BrigError):
    """brig failed (exit 125): a bad flag, a policy refusal, a sandbox that
    could not be made or is gone. Nothing ran, or what ran was killed.
    `result` is the full result when brig printed one (run, exec), else None
    (create, rm, a flag brig does not know); `error` is brig's text."""

    def __init__(self, result: Optional["SandboxResult"] = None, error: Optional[str] = None):
        self.result = result
        self.error = (result.error if result is not None else None) or error or "brig failed (exit 125)"
        super().__init__(self.error)


class BrigNotFound(BrigError):
    """The brig binary (or sudo) is not there."""


class BrigTimeout(BrigError):
    """brig did not finish within process_timeout (it was killed)."""


class BadResult(BrigError):
    """brig's stdout was not a result (a brig too old, or something else)."""

    def __init__(self, message: str, stdout: bytes, stderr: bytes, returncode: int):
        super().__init__(message)
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


def _typed(d: Mapping[str, Any], key: str, typ: Type[T], optional: bool = False, what: str = "result") -> Any:
    if key not in d:
        raise ValueError(f"{what}: {key} missing")
    v = d[key]
    if v is None and optional:
        return None
    # bool is an int in Python: an int field must not take true/false
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        raise ValueError(f"{what}: {key}: expected {typ.__name__}, got {type(v).__name__}")
    return v


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
    def from_json(cls, d: Mapping[str, Any]) -> "StreamResult":
        return cls(preview_head=_typed(d, "preview_head", str), preview_tail=_typed(d, "preview_tail", str),
                   bytes=_typed(d, "bytes", int), truncated=_typed(d, "truncated", bool),
                   binary=_typed(d, "binary", bool))


@dataclass(frozen=True)
class SandboxResult:
    """sandbox/result.schema.json, field for field (`sandbox`: exec only)."""
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
    sandbox: Optional[str] = None

    @property
    def ok(self) -> bool:
        """The command ran and exited 0."""
        return self.exit_code == 0 and self.error is None

    @property
    def limit(self) -> Optional[str]:
        """Which limit ended the command: "wall", "idle", "oom", or None."""
        if self.timed_out:
            return "wall"
        if self.idle_timed_out:
            return "idle"
        return "oom" if self.oom_killed else None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SandboxResult":
        if not isinstance(d, Mapping):
            raise ValueError("result: expected an object")

        def opt(k: str, t: type) -> Any:
            return _typed(d, k, t, optional=True)

        sandbox = d.get("sandbox")
        if sandbox is not None and not isinstance(sandbox, str):
            raise ValueError("result: sandbox: expected str")
        return cls(id=_typed(d, "id", str), policy=opt("policy", str), exit_code=opt("exit_code", int),
                   signal=opt("signal", int), timed_out=_typed(d, "timed_out", bool),
                   idle_timed_out=_typed(d, "idle_timed_out", bool), oom_killed=_typed(d, "oom_killed", bool),
                   wall_ms=_typed(d, "wall_ms", int), cpu_user_ms=opt("cpu_user_ms", int),
                   cpu_system_ms=opt("cpu_system_ms", int), memory_peak_bytes=opt("memory_peak_bytes", int),
                   pids_peak=opt("pids_peak", int), stdout=StreamResult.from_json(_typed(d, "stdout", dict)),
                   stderr=StreamResult.from_json(_typed(d, "stderr", dict)), error=opt("error", str),
                   ran=_typed(d, "ran", bool), exit_status=_typed(d, "exit_status", int), sandbox=sandbox)


@dataclass(frozen=True)
class SandboxInfo:
    """One line of `brig sandbox ls --json`."""
    name: str
    status: str
    policy: Optional[str]
    pid: Optional[int]
    execs: int
    created: Optional[str]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SandboxInfo":
        if not isinstance(d, Mapping):
            raise ValueError("sandbox ls: expected objects")

        def opt(k: str, t: type) -> Any:
            return _typed(d, k, t, optional=True, what="sandbox ls") if k in d else None

        return cls(name=_typed(d, "name", str, what="sandbox ls"), status=_typed(d, "status", str, what="sandbox ls"),
                   policy=opt("policy", str), pid=opt("pid", int), execs=opt("execs", int) or 0,
                   created=opt("created", str))


@dataclass(frozen=True)
class Event:
    """One line of `--events` (docs/sandbox.md): `event` is "start" (id,
    policy), "output" (stream, data: for display; the result's previews
    and counts are authoritative), "limit" (limit: "wall", "idle", "oom",
    ...), "output_truncated" (stream), and last "result" (result). Kinds
    and members brig adds later arrive in `raw`."""
    event: str
    time_ms: Optional[int] = None
    stream: Optional[str] = None
    data: Optional[str] = None
    limit: Optional[str] = None
    id: Optional[str] = None
    policy: Optional[str] = None
    result: Optional[SandboxResult] = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Event":
        if not isinstance(d, Mapping) or not isinstance(d.get("event"), str):
            raise ValueError("event: expected an object with an \"event\" member")

        def opt(k: str, t: type) -> Any:
            return _typed(d, k, t, optional=True, what="event") if k in d else None

        result = None
        if d["event"] == "result":
            result = SandboxResult.from_json(_typed(d, "result", dict, what="event"))
        return cls(event=d["event"], time_ms=opt("time_ms", int), stream=opt("stream", str), data=opt("data", str),
                   limit=opt("limit", str), id=opt("id", str), policy=opt("policy", str), result=result, raw=d)
