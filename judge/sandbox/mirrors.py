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
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

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
    return root


def make_mirror(source: Path) -> Path:
    """A mirror of the folder or file ``source`` under a random name; :func:`remove_mirror`
    removes it."""
    target = mirror_root() / secrets.token_hex(12)
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
