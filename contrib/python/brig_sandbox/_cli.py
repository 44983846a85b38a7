"""What the sync and async flavours share: finding brig, the command lines
of `brig sandbox ...`, and turning brig's exit status and stdout into one
outcome (docs: the table in brig_sandbox's docstring)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._types import BadResult, BrigNotFound, Event, SandboxInfo, SandboxRefused, SandboxResult

# Where an installed brig lies when PATH has no sbin (a non-root login,
# a service's minimal PATH): `meson install` and the .deb put it in sbin.
BRIG_DIRS: Tuple[str, ...] = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

REFUSED = 125            # brig failed: SandboxRefused
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")

Stdin = Union[bytes, str, None]
OnOutput = Callable[[str, str], None]
OnEvent = Callable[[Event], None]


def event_handler(on_output: Optional[OnOutput], on_event: Optional[OnEvent]) -> Optional[OnEvent]:
    """One handler for each event (None: the caller wants the result only)."""
    if on_output is None and on_event is None:
        return None

    def handle(ev: Event) -> None:
        if on_output is not None and ev.event == "output" and ev.stream is not None and ev.data is not None:
            on_output(ev.stream, ev.data)
        if on_event is not None:
            on_event(ev)
    return handle


def find_program(name: str, dirs: Optional[Iterable[str]] = None) -> str:
    """NAME as given when it is a path; else the first on PATH, then in DIRS
    (default BRIG_DIRS)."""
    dirs = tuple(BRIG_DIRS if dirs is None else dirs)
    if os.sep in name:
        return name
    found = shutil.which(name)
    if found:
        return found
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    fix = ("install brig (`bash scripts/setup.sh` in its clone, or its .deb), or pass brig='/path/to/brig'"
           if "brig" in name else f"install {name}")
    raise BrigNotFound(f"{name}: not found on PATH ({os.environ.get('PATH', '')}) nor in {', '.join(dirs)}: {fix}")


def prefix(brig: str, sudo: bool) -> List[str]:
    """The start of every command line: [sudo -n] /path/to/brig."""
    if sudo:
        return [find_program("sudo"), "-n", find_program(brig)]
    return [find_program(brig)]


def check_argv(argv: Sequence[str]) -> List[str]:
    if isinstance(argv, (str, bytes)) or not argv:
        raise ValueError("argv: a non-empty list of strings (use ['sh', '-c', CMD] for a shell line)")
    return [str(a) for a in argv]


def check_name(name: str) -> str:
    if not NAME_RE.match(name) or name.startswith("sb-") or ".." in name:
        raise ValueError(f"sandbox name {name!r}: 1-63 of [A-Za-z0-9_.-], starting with a letter or digit, "
                         "not sb-...")
    return name


def _flags(pairs: Iterable[Tuple[str, Any]]) -> List[str]:
    out: List[str] = []
    for flag, val in pairs:
        if val is not None:
            out += [flag, str(val)]
    return out


def _env(env: Optional[Mapping[str, str]]) -> List[str]:
    out: List[str] = []
    for k, v in (env or {}).items():
        if "=" in k or not k:
            raise ValueError(f"env: bad name {k!r}")
        out += ["--env", f"{k}={v}"]
    return out


def stdin_bytes(stdin: Stdin) -> Optional[bytes]:
    if stdin is None:
        return None
    return stdin.encode() if isinstance(stdin, str) else bytes(stdin)


def output_flag(events: bool) -> List[str]:
    """--events when the caller wants live output (its last line is the
    result), else --json (the result only)."""
    return ["--events"] if events else ["--json"]


def run_args(argv: Sequence[str], *, policy: Optional[str], rootfs: Optional[str], workspace: Optional[str],
             timeout: Optional[str], idle_timeout: Optional[str], output_limit: Optional[str],
             env: Optional[Mapping[str, str]], cwd: Optional[str], stdin: Stdin, tty: bool,
             state_root: Optional[str], events: bool) -> List[str]:
    args = ["sandbox", "run"] + output_flag(events)
    args += _flags((("--policy", policy), ("--rootfs", rootfs), ("--workspace", workspace), ("--timeout", timeout),
                    ("--idle-timeout", idle_timeout), ("--output-limit", output_limit), ("--cwd", cwd),
                    ("--state-root", state_root)))
    args += _env(env)
    if tty:
        args.append("--tty")
    if stdin is not None:
        args += ["--stdin", "-"]
    return args + ["--"] + check_argv(argv)


def exec_args(name: str, argv: Sequence[str], *, timeout: Optional[str], idle_timeout: Optional[str],
              output_limit: Optional[str], env: Optional[Mapping[str, str]], cwd: Optional[str], stdin: Stdin,
              state_root: Optional[str], events: bool) -> List[str]:
    args = ["sandbox", "exec"] + output_flag(events)
    args += _flags((("--timeout", timeout), ("--idle-timeout", idle_timeout), ("--output-limit", output_limit),
                    ("--cwd", cwd), ("--state-root", state_root)))
    args += _env(env)
    if stdin is not None:
        args += ["--stdin", "-"]
    return args + [check_name(name), "--"] + check_argv(argv)


def create_args(name: str, *, policy: Optional[str], rootfs: Optional[str], workspace: Optional[str],
                env: Optional[Mapping[str, str]], state_root: Optional[str]) -> List[str]:
    return (["sandbox", "create"] + _flags((("--policy", policy), ("--rootfs", rootfs), ("--workspace", workspace),
                                            ("--state-root", state_root))) + _env(env) + [check_name(name)])


def rm_args(name: str, *, force: bool, state_root: Optional[str]) -> List[str]:
    return ["sandbox", "rm"] + (["--force"] if force else []) + _flags((("--state-root", state_root),)) + \
        [check_name(name)]


def ls_args(*, state_root: Optional[str]) -> List[str]:
    return ["sandbox", "ls", "--json"] + _flags((("--state-root", state_root),))


def _stderr_text(stderr: bytes) -> str:
    lines = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1].strip() if lines else ""


def parse_event(line: Union[bytes, str]) -> Event:
    return Event.from_json(json.loads(line))


def _find_result(stdout: bytes, events: bool) -> SandboxResult:
    """The result on stdout: the --json object, or --events' last line."""
    if not events:
        return SandboxResult.from_json(json.loads(stdout))
    for line in reversed(stdout.splitlines()):
        if line.strip():
            d = json.loads(line)
            # brig failing before the stream starts may print a bare result
            if isinstance(d, Mapping) and "event" not in d:
                return SandboxResult.from_json(d)
            ev = Event.from_json(d)
            if ev.result is None:
                raise ValueError(f"the last event is {ev.event!r}, not the result")
            return ev.result
    raise ValueError("no result event")


def outcome(returncode: int, stdout: bytes, stderr: bytes, events: bool = False,
            result: Optional[SandboxResult] = None) -> SandboxResult:
    """brig's exit status and output as one outcome: a result, or raised.

    125 (brig failed) raises SandboxRefused, with the result when brig
    printed one; any other status with a result is that result (0, the
    command's N, 124 a timeout, 126/127 not executable / not found,
    128+N a signal); no result at all raises BadResult."""
    err: Optional[Exception] = None
    if result is None:
        try:
            result = _find_result(stdout, events)
        except (ValueError, UnicodeDecodeError) as e:
            err = e
    if returncode == REFUSED or (result is not None and result.exit_status == REFUSED):
        raise SandboxRefused(result, _stderr_text(stderr) or None)
    if result is None:
        how = (f"died of signal {signal.Signals(-returncode).name}" if returncode < 0 else f"exited {returncode}")
        raise BadResult(f"brig {how} without a result: {err}; stderr: "
                        f"{stderr.decode(errors='replace').strip()[:500]}", stdout, stderr, returncode)
    return result


def checked(returncode: int, stdout: bytes, stderr: bytes) -> str:
    """A command without a result (create, rm): its stdout, or raised."""
    if returncode == 0:
        return stdout.decode(errors="replace")
    if returncode == REFUSED:
        raise SandboxRefused(None, _stderr_text(stderr) or None)
    raise BadResult(f"brig exited {returncode}: {_stderr_text(stderr)}", stdout, stderr, returncode)


def parse_ls(stdout: bytes) -> List[SandboxInfo]:
    try:
        items = json.loads(stdout)
        if not isinstance(items, list):
            raise ValueError("sandbox ls: expected an array")
        return [SandboxInfo.from_json(d) for d in items]
    except (ValueError, UnicodeDecodeError) as e:
        raise BadResult(f"brig sandbox ls --json: {e}", stdout, b"", 0) from e


class SandboxSpec:
    """What a long-lived sandbox is made of, and its command lines; the
    sync and async Sandbox classes run them."""

    def __init__(self, name: Optional[str] = None, *, policy: Optional[str] = None, rootfs: Optional[str] = None,
                 workspace: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                 state_root: Optional[str] = None, brig: str = "brig", process_timeout: Optional[float] = None):
        self.name = check_name(name) if name is not None else "py-" + os.urandom(6).hex()
        self.policy, self.rootfs, self.workspace, self.env = policy, rootfs, workspace, env
        self.state_root, self.brig, self.process_timeout = state_root, brig, process_timeout
        self.created = False

    def _create_cmd(self) -> List[str]:
        return prefix(self.brig, False) + create_args(self.name, policy=self.policy, rootfs=self.rootfs,
                                                      workspace=self.workspace, env=self.env,
                                                      state_root=self.state_root)

    def _exec_cmd(self, argv: Sequence[str], events: bool, timeout: Optional[str], idle_timeout: Optional[str],
                  output_limit: Optional[str], env: Optional[Mapping[str, str]], cwd: Optional[str],
                  stdin: Stdin) -> List[str]:
        return prefix(self.brig, False) + exec_args(
            self.name, argv, timeout=timeout, idle_timeout=idle_timeout, output_limit=output_limit, env=env, cwd=cwd,
            stdin=stdin, state_root=self.state_root, events=events)

    def __repr__(self) -> str:
        return f"{type(self).__module__}.Sandbox({self.name!r}, policy={self.policy!r}, workspace={self.workspace!r})"
