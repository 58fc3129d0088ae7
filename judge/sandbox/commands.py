"""The util-linux commands a sandbox starts through (setpriv, prlimit) and the environment a
bot sees, shared by both modes."""

from __future__ import annotations

import resource
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence

from judge.sandbox.limits import SDK_ROOT, SandboxError, SandboxLimits

# The only environment a bot sees (and bubblewrap itself runs with).
_BASE_ENV: Mapping[str, str] = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
}

_TRUSTED_PATH = "/usr/bin:/bin:/usr/local/bin"  # where bwrap, setpriv and prlimit are looked for


def _bot_env(sdk: bool) -> dict[str, str]:
    env = dict(_BASE_ENV)
    if sdk:
        env["PYTHONPATH"] = SDK_ROOT
    return env


def _setpriv_command(uid: int) -> list[str]:
    """``setpriv --reuid=U --regid=U --clear-groups --`` : util-linux drops root for the
    sandbox uid, then executes the rest.

    Not ``subprocess.Popen(user=..., group=...)``: with those, CPython cannot start the child
    with ``vfork`` and copies the whole judge process (its page tables), where a small exec of
    ``setpriv`` costs a fraction of that (docs/operations.md, "What the judge's choices
    save").
    """
    setpriv = _trusted_binary("setpriv", "util-linux")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def _prlimit_command(limits: SandboxLimits) -> list[str]:
    """``prlimit --cpu=S:H ... --`` : util-linux sets the rlimits, then executes the rest.

    It runs as the sandbox uid, before bubblewrap, so the limits hold from the
    first instruction of the sandbox on (and bound the uid's process count on
    the host, bubblewrap included). A limit above the judge's own hard limit
    is lowered to it (raising it would need CAP_SYS_RESOURCE).
    """
    args = [_trusted_binary("prlimit", "util-linux")]
    for name, res, soft, hard in limits.rlimits():
        soft, hard = _within_hard_limit(res, soft, hard)
        args.append(f"--{name}={soft}:{hard}")
    args.append("--")
    return args


def _within_hard_limit(res: int, soft: int, hard: int) -> tuple[int, int]:
    ceiling = resource.getrlimit(res)[1]
    if ceiling != resource.RLIM_INFINITY:
        soft, hard = min(soft, ceiling), min(hard, ceiling)
    return soft, hard


def _trusted_binary(name: str, package: str) -> str:
    path = shutil.which(name, path=_TRUSTED_PATH)
    if path is None:
        raise SandboxError(f"{name} not found in {_TRUSTED_PATH}: install {package}")
    return path


def start_process(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    pass_fds: Sequence[int] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start the sandbox's first process (or the bot itself in mode "none"): unbuffered pipes
    for the bot's stdin, stdout and stderr, no other descriptor but ``pass_fds``, a process
    group of its own (which kill() kills)."""
    return subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
        env=env,
        cwd=cwd,
        close_fds=True,
        pass_fds=pass_fds,
        process_group=0,
        preexec_fn=preexec_fn,
    )
