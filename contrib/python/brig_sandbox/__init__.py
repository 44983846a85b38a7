"""brig_sandbox: agent-authored commands in brig sandboxes, from Python.

    import brig_sandbox as bs
    r = bs.run(["sh", "-c", "make test"], workspace="/srv/ws/task1", timeout="10m")
    print(r.exit_code, r.limit, r.stdout.text)

    with bs.Sandbox(workspace="/srv/ws/task1", policy="pygent") as sb:   # one per session
        r = sb.exec(["pip", "list"], timeout="1m")

    from brig_sandbox import aio                                          # the async twin
    rs = await asyncio.gather(*(aio.run(c, workspace=ws) for c in cmds))

Live output: `on_output=lambda stream, text: ...` (or `on_event`) on run()
and exec(), or `async for ev in aio.stream(...)`; they use `brig sandbox
run/exec --events`.

Each brig exit status is one outcome:

    0, N, 128+N    a result: the command exited N, or died of signal N
    124            a result with timed_out / idle_timed_out (a limit fired)
    126, 127       a result: the command was not executable / not found
                   (exit_code 126/127, `error` says why)
    125            SandboxRefused: brig failed (bad flag, policy refusal, a
                   sandbox that could not be made or is gone); `.result` is
                   brig's result when it printed one, `.error` its text
    anything else  BadResult when brig printed no result
    no brig        BrigNotFound (PATH, then /usr/local/sbin, /usr/sbin, ...)
    brig hangs     BrigTimeout after process_timeout seconds (brig killed)

All are BrigError. Standard library only; Python 3.8+. brig must run as
root, or through sudo (run(..., sudo=True), docs/sandbox.md).
"""

from . import aio
from ._cli import BRIG_DIRS
from ._sync import Sandbox, list_sandboxes, remove, run
from ._types import (BadResult, BrigError, BrigNotFound, BrigTimeout, Event, SandboxInfo, SandboxRefused,
                     SandboxResult, StreamResult)

__version__ = "0.1.0"

__all__ = ["aio", "run", "Sandbox", "list_sandboxes", "remove", "SandboxResult", "StreamResult", "SandboxInfo", "Event",
           "BrigError", "SandboxRefused", "BrigNotFound", "BrigTimeout", "BadResult", "BRIG_DIRS"]
