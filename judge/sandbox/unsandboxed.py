"""Mode "none": bots on the host, for their authors' own machines only."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from judge.sandbox.commands import _bot_env, _prlimit_command, _within_hard_limit, start_process
from judge.sandbox.limits import BOT_ROOT, SDK_ROOT, SandboxError, SandboxLimits
from judge.sandbox.process import BotProcess

UNSANDBOXED_WARNING = (
    "\n"
    "*********************************************************************\n"
    "* WARNING: tapis runs bots WITHOUT A SANDBOX (--sandbox none).        *\n"
    "* A bot can read and change your files, use the network and outlive *\n"
    "* the table. Use this only for your own bots, on your own machine.  *\n"
    "*********************************************************************\n"
)

_warned_lock = threading.Lock()
_warned = False


def warn_unsandboxed() -> None:
    """Print the loud warning about mode "none" on stderr, once per process.

    :func:`spawn_bot` calls it when it starts an unsandboxed bot; a tool may call it earlier
    (``tapis play`` does, before its progress bar), and it is not printed again."""
    global _warned
    with _warned_lock:
        if _warned:
            return
        _warned = True
    sys.stderr.write(UNSANDBOXED_WARNING)
    sys.stderr.flush()


def _map_path(arg: str, bot_dir: Path, sdk_dir: Path | None) -> str:
    """An argument that is a sandbox path (``/bot/main.py``), or a list of them (Java's
    class path ``gson.jar:/bot``), with the host's folders in place of the sandbox's."""
    if ":" in arg:
        return ":".join(_map_one(part, bot_dir, sdk_dir) for part in arg.split(":"))
    return _map_one(arg, bot_dir, sdk_dir)


def _map_one(arg: str, bot_dir: Path, sdk_dir: Path | None) -> str:
    for inner, outer in ((BOT_ROOT, bot_dir), (SDK_ROOT, sdk_dir)):
        if outer is None:
            continue
        if arg == inner:
            return str(outer)
        if arg.startswith(inner + "/"):
            return str(outer) + arg[len(inner) :]
    return arg


def _rlimit_setter(limits: SandboxLimits) -> Callable[[], None]:
    """Mode "none" on a system without util-linux's prlimit (macOS): set them between fork
    and exec instead (unsafe in a threaded judge, acceptable for local development)."""
    values = [
        (res, *_within_hard_limit(res, soft, hard)) for _, res, soft, hard in limits.rlimits()
    ]

    def apply() -> None:
        for res, soft, hard in values:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(res, (soft, hard))

    return apply


def _spawn_unsandboxed(
    argv: list[str], *, bot_dir: Path, sdk_dir: Path | None, limits: SandboxLimits, cwd: str
) -> BotProcess:
    warn_unsandboxed()
    args = [_map_path(arg, bot_dir, sdk_dir) for arg in argv]
    preexec: Callable[[], None] | None = None
    try:
        args = [*_prlimit_command(limits), *args]
    except SandboxError:
        preexec = _rlimit_setter(limits)
    env = _bot_env(False)
    env["HOME"] = tempfile.gettempdir()
    if sdk_dir is not None:
        env["PYTHONPATH"] = str(sdk_dir)
    real_cwd = _map_path(cwd, bot_dir, sdk_dir)
    try:
        popen = start_process(args, env=env, cwd=real_cwd, preexec_fn=preexec)
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
    return BotProcess(popen, mode="none", uid=os.getuid())
