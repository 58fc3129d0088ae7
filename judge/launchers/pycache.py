"""The SDK compiled ahead for the sandbox's Python, so that a bot's start does not compile it.

Inside the sandbox every directory is read-only, so the bot's Python cannot write the
``__pycache__`` it would otherwise keep, and without one it compiles ``tapis_bot.py`` from
source at every start, a good part of what starting a sandboxed bot costs, paid by every seat
of every table (docs/operations.md, "What the judge's choices save"). :func:`compiled_sdk`
gives instead a copy of the SDK directory with its byte code, compiled once by the sandbox's
own interpreter (so the cache tag and the magic number are the ones that will read it) and
kept for later tables and later processes.

The copy lives in a directory of the judge's own uid that nobody else may write
(``$TMPDIR/tapis-sdk-<uid>/<digest>``), named by a digest of the SDK's files and the
interpreter, so a changed SDK or a new Python gets a new copy, and a copy is never changed once
it is in place (it is built beside and renamed in). When anything of this fails (no interpreter,
a directory that is not safely ours), bots get the SDK directory as it is: they still work, only
their start costs the compilation again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Final

from judge.launchers.package import RUNTIMES, make_read_only, remove
from judge.sandbox import SDK_ROOT

logger = logging.getLogger(__name__)

SANDBOX_PYTHON: Final = RUNTIMES["python3"][0]  # the interpreter bots run with

# Run by the sandbox's interpreter: compile every module of a directory, naming the files as the
# bot sees them in its tracebacks. Timestamp-checked byte code: the sandbox binds the very files.
_COMPILE: Final = """
import os, py_compile, sys
folder, shown = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(folder)):
    if name.endswith(".py"):
        py_compile.compile(
            os.path.join(folder, name),
            dfile=shown + "/" + name,
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
        )
"""


def compiled_sdk(source: Path) -> Path:
    """The directory to bind at ``/sdk``: a compiled copy of ``source``, or ``source`` itself
    when no copy can be made (logged once)."""
    try:
        return _compiled(Path(source).resolve(), _digest(Path(source)), _private_root())
    except (OSError, subprocess.SubprocessError, _NotSafe) as exc:
        _warn_once(str(exc))
        return Path(source)


class _NotSafe(Exception):
    """The cache directory exists but is not safely the judge's own."""


@functools.cache
def _compiled(source: Path, digest: str, root: Path) -> Path:
    target = root / digest
    if target.is_dir():
        return target
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
    try:
        for path in sorted(source.glob("*.py")):
            shutil.copyfile(path, building / path.name)
        subprocess.run(
            [SANDBOX_PYTHON, "-I", "-S", "-c", _COMPILE, str(building), SDK_ROOT],
            check=True,
            capture_output=True,
            timeout=60,
            env={},
        )
        make_read_only(building)
        try:
            building.rename(target)
        except OSError:  # another process put the same copy in place first
            if not target.is_dir():
                raise
    finally:
        remove(building)
    return target


def _digest(source: Path) -> str:
    """What the copy depends on: the SDK's files and the interpreter that compiles them."""
    h = hashlib.sha256()
    for path in sorted(source.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    python = os.stat(os.path.realpath(SANDBOX_PYTHON))
    h.update(f"{os.path.realpath(SANDBOX_PYTHON)}:{python.st_size}:{python.st_mtime_ns}".encode())
    return h.hexdigest()[:24]


def _private_root() -> Path:
    """``$TMPDIR/tapis-sdk-<uid>``: made here with mode 711, or checked to be ours and written
    by nobody else (a directory another user made first must not decide what bots import)."""
    root = Path(tempfile.gettempdir()) / f"tapis-sdk-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o711)
    info = root.lstat()
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != os.getuid()
        or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        raise _NotSafe(f"{root} is not a directory of uid {os.getuid()} that only it may write")
    if stat.S_IMODE(info.st_mode) != 0o711:
        root.chmod(0o711)  # the sandbox's uid must be able to reach the copies in it
    return root


@functools.cache
def _warn_once(reason: str) -> None:
    logger.warning("bots import the SDK uncompiled (slower starts): %s", reason)
