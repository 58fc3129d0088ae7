"""The starter put before every bot started alone: it makes the sandbox's writable places
``noexec``, drops what it needed for that and becomes the bot (docs/sandbox.md, "Nothing
writable executes").

Two implementations of the same steps: ``starter.c``, built once per host with the host's gcc
into a folder of the judge's own (:func:`native_starter`), and ``_starter.py``, run by the
system's Python where the C one cannot be built (no gcc) or is not to be trusted. The C one
spares each bot a Python start (about 8 ms of CPU). ``TAPIS_SANDBOX_STARTER=python`` forces the
Python one.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from judge.sandbox.commands import _TRUSTED_PATH
from judge.sandbox.mirrors import shared_mirror

log = logging.getLogger(__name__)

PYTHON = "/usr/bin/python3"  # the system's, as the python3 runtime's
IN_SANDBOX = "/.tapis-start"  # where the C starter is bound, read-only
_HERE = Path(__file__).resolve().parent


def starter(bot_filter: int) -> tuple[list[str], list[str]]:
    """(bubblewrap options, argv put before the bot's) of the starter, which is handed the
    descriptor ``bot_filter`` of the bot's seccomp filter."""
    native = None if os.environ.get("TAPIS_SANDBOX_STARTER") == "python" else native_starter()
    if native is not None:
        bound = shared_mirror(native)  # a neutral path in the bot's mountinfo
        return ["--ro-bind", str(bound), IN_SANDBOX], [IN_SANDBOX, str(bot_filter), "--"]
    return [], [PYTHON, "-S", "-I", "-c", _python_source(), str(bot_filter), "--"]


def uses_python() -> bool:
    """Whether the starter is the Python one (the sandbox then needs the system's Python)."""
    return os.environ.get("TAPIS_SANDBOX_STARTER") == "python" or native_starter() is None


@functools.cache
def _python_source() -> str:
    return (_HERE / "_starter.py").read_text()


@functools.cache
def native_starter() -> Path | None:
    """The C starter, built with the host's gcc at the first call of a process (then found
    built, by the SHA-256 of its source), in ``TAPIS_STARTER_DIR`` (else a folder of the
    system's temporary directory): a folder and a program owned by the judge's uid, writable by
    it alone, reachable by the sandbox uids (711 and 555). None, logged, when it cannot be built
    or what is there is not the judge's own: the Python starter is used."""
    source = (_HERE / "starter.c").read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    configured = os.environ.get("TAPIS_STARTER_DIR")
    folder = Path(configured or Path(tempfile.gettempdir()) / f"tapis-starter-{os.geteuid()}")
    program = folder / f"tapis-start-{digest}"
    try:
        if not folder.exists():
            folder.mkdir(mode=0o711, exist_ok=True)  # another process may make it too
            folder.chmod(0o711)  # whatever the umask
        if not _owned(folder):
            log.warning("sandbox: %s is not the judge's own: the Python starter is used", folder)
            return None
        if not program.exists():
            _build(source, folder, program)
        if not _owned(program):
            log.warning("sandbox: %s is not the judge's own: the Python starter is used", program)
            return None
        if not _reachable(program):
            log.warning(
                "sandbox: the sandbox uids cannot reach %s (every folder above it needs o+x): "
                "the Python starter is used",
                program,
            )
            return None
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("sandbox: the C starter could not be built (%s): the Python starter is used", exc)
        return None
    return program


def _owned(path: Path) -> bool:
    """Owned by the judge's uid and writable by nobody else (a link is not)."""
    info = path.lstat()
    others_write = stat.S_IWGRP | stat.S_IWOTH
    return (
        info.st_uid == os.geteuid()
        and not stat.S_ISLNK(info.st_mode)
        and not info.st_mode & others_write
    )


def _reachable(program: Path) -> bool:
    """Whether a sandbox uid (to which only the "others" bits apply) can reach and run it."""
    if not program.stat().st_mode & stat.S_IXOTH:
        return False
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in program.parents)


def _build(source: bytes, folder: Path, program: Path) -> None:
    gcc = shutil.which("gcc", path=_TRUSTED_PATH)
    if gcc is None:
        raise OSError("no gcc")
    with tempfile.TemporaryDirectory(dir=folder) as work:
        (Path(work) / "starter.c").write_bytes(source)
        built = Path(work) / "tapis-start"
        done = subprocess.run(
            [gcc, "-O2", "-Wall", "-o", str(built), str(Path(work) / "starter.c")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": _TRUSTED_PATH, "LANG": "C"},
        )
        if done.returncode != 0:
            raise OSError(f"gcc: {done.stderr.strip()[:300]}")
        built.chmod(0o555)
        os.replace(built, program)  # atomic: another process may build it at the same time
