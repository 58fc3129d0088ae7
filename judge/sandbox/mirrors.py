"""Neutral paths for what the sandbox binds: the kernel prints the source path of every bind in
the bot's ``/proc/self/mountinfo``, so the sandbox binds a mirror of each folder instead, named
by nothing but a random token (docs/sandbox.md, "Host-wide channels").

A mirror is a folder of :data:`MIRROR_ROOT` (``TMPDIR/tapis-bind-EUID``) holding the same
folders as its source (same modes) and hard links to the same files (copies where a link is
refused, e.g. across file systems): the bot reads the very files, and its mountinfo shows
``/tmp/tapis-bind-0/3f9c...`` instead of the project's path or a table's folder.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from judge.sandbox import cgroups
from judge.sandbox.limits import SandboxError


@functools.cache
def mirror_root() -> Path:
    """The judge's folder of mirrors: its own, writable by it alone, reachable by the sandbox
    uids (711)."""
    root = Path(tempfile.gettempdir()) / f"tapis-bind-{os.geteuid()}"
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o711)
    root.chmod(0o711)  # whatever the umask
    info = root.lstat()
    if info.st_uid != os.geteuid() or not stat.S_ISDIR(info.st_mode):
        raise SandboxError(f"{root} is not the judge's own folder: no mirror can be made there")
    sweep_stale_mirrors(root)
    return root


def _owner_prefix(pid: int, start: int) -> str:
    """The start of the names of the mirrors made by process ``pid`` of this pid namespace,
    which started at ``start`` (a reused pid has another start)."""
    return f"{cgroups._pid_namespace()}-{pid}at{start}-"


def sweep_stale_mirrors(root: Path) -> list[Path]:
    """Remove the mirrors under ``root`` left by processes of this pid namespace that are gone
    (a judge killed, or the mirrors of the SDK and the starter it kept to its end); those of a
    live process, or of another pid namespace, are never touched. Returns those removed."""
    pattern = re.compile(rf"{cgroups._pid_namespace()}-(\d+)at(\d+)-[0-9a-f]+")
    removed = []
    for entry in root.iterdir():
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        if cgroups._start_time(int(match.group(1))) != int(match.group(2)):
            remove_mirror(entry)
            removed.append(entry)
    return removed


def make_mirror(source: Path) -> Path:
    """A mirror of the folder or file ``source`` under a random name; :func:`remove_mirror`
    removes it."""
    pid = os.getpid()
    owner = _owner_prefix(pid, cgroups._start_time(pid) or 0)
    target = mirror_root() / f"{owner}{secrets.token_hex(12)}"
    try:
        if source.is_dir():
            _mirror_tree(source, target)
        else:
            _link_or_copy(source, target)
    except OSError as exc:
        remove_mirror(target)
        raise SandboxError(f"cannot mirror {source} for the sandbox: {exc}") from exc
    return target


@functools.cache
def shared_mirror(source: Path) -> Path:
    """A mirror of ``source`` made once per process, for what never changes under one path (the
    compiled SDK and the starter, named by their digests)."""
    return make_mirror(source)


def remove_mirror(target: Path) -> None:
    """Remove a mirror (its folders are read-only: made writable first)."""
    if target.is_dir() and not target.is_symlink():
        for folder, _, _ in os.walk(target):
            with contextlib.suppress(OSError):
                os.chmod(folder, 0o700)
        shutil.rmtree(target, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()


def _mirror_tree(source: Path, target: Path) -> None:
    modes: list[tuple[str, int]] = []
    for folder, dirs, files in os.walk(source):
        relative = os.path.relpath(folder, source)
        made = target if relative == "." else target / relative
        made.mkdir(mode=0o700)
        modes.append((str(made), stat.S_IMODE(os.stat(folder).st_mode)))
        for name in files:
            _link_or_copy(Path(folder) / name, made / name)
        for name in dirs:  # a link to a folder is copied as a link, never followed
            if os.path.islink(os.path.join(folder, name)):
                os.symlink(os.readlink(os.path.join(folder, name)), made / name)
    for made_path, mode in reversed(modes):  # deepest first: the parents stay writable
        os.chmod(made_path, mode)


def _link_or_copy(source: Path, target: Path) -> None:
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
        return
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
