"""What of the host's system a bot's sandbox holds: its runtime's files, not all of ``/usr``
(docs/sandbox.md, "Host-wide channels": the page cache).

A runtime names the host paths it needs (its program, its library folders); to them this adds
the shared libraries they load (``ldd``, once per process), the native libraries every compiled
bot and the starter link to, the dynamic loader's cache and ``/etc/localtime``. Symbolic links
on the way are made as links in the sandbox, the files and folders they lead to bound read-only
at their real paths.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from judge.sandbox.commands import _TRUSTED_PATH

# Linked by compiled bots (C, C++, Rust, Go with cgo) and the C starter: what their builds link.
NATIVE_LIBRARIES = (
    "libc.so.6",
    "libm.so.6",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libresolv.so.2",
    "libutil.so.1",
    "libcjson.so.1",  # the c runtime links it (docs/protocol.md)
)
CONFIGURATION = ("/etc/ld.so.cache", "/etc/localtime")
# In every sandbox: the shell and a few programs of every Unix (a bot may start them).
PROGRAMS = (
    "/bin/sh",
    "/usr/bin/true",
    "/usr/bin/false",
    "/usr/bin/env",
    "/usr/bin/kill",
    "/usr/bin/sleep",
)
MERGED_USR = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ELF = b"\x7fELF"


def python_paths() -> tuple[str, ...]:
    """The system's Python (the python3 runtime's, and the Python starter's): its program and
    its standard library."""
    python = os.path.realpath("/usr/bin/python3")
    return ("/usr/bin/python3", f"/usr/lib/{os.path.basename(python)}")


def system_key(system: Iterable[str], *, python: bool = False) -> tuple[str, ...]:
    """The key of a system's binds and files: its paths (with the system's Python's for the
    Python starter), sorted."""
    return tuple(sorted({*system, *(python_paths() if python else ())}))


@functools.cache
def system_binds(paths: tuple[str, ...]) -> tuple[str, ...]:
    """bubblewrap's options that make ``paths`` (and what they need) the sandbox's system."""
    links, real = _resolved(_needed(paths))
    options: list[str] = []
    for name in MERGED_USR:
        merged = Path("/") / name
        if merged.is_symlink():
            options += ["--symlink", os.readlink(merged), str(merged)]
    for path in real:
        options += ["--ro-bind", path, path]
    for link, target in sorted(links.items()):
        if not any(link.startswith(folder + "/") for folder in real):
            options += ["--symlink", target, link]
    # a link to a zone file: the file, bound at the link's place
    if Path("/etc/localtime").exists():
        options += ["--ro-bind", "/etc/localtime", "/etc/localtime"]
    return tuple(options)


@functools.cache
def system_files(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Every regular file a sandbox with the system of ``paths`` can open."""
    _, real = _resolved(_needed(paths))
    zone = [os.path.realpath("/etc/localtime")] if os.path.exists("/etc/localtime") else []
    return tuple(_files_under([*real, *zone]))


@functools.cache
def _needed(paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths``, the libraries their programs load, the native libraries, the loader's
    cache."""
    found = [path for path in (*paths, *PROGRAMS) if os.path.exists(path)]
    elf = [path for path in _regular_files(found) if _is_elf(path)]
    return tuple(sorted({*found, *_libraries(elf), *_native_libraries(), CONFIGURATION[0]}))


@functools.cache
def _native_libraries() -> tuple[str, ...]:
    libc = next((path for path in _libraries(["/usr/bin/env"]) if "libc.so" in path), None)
    if libc is None:
        return ()
    folder = Path(libc).parent
    present = [str(folder / name) for name in NATIVE_LIBRARIES if (folder / name).exists()]
    return tuple(sorted({*present, *_libraries(present)}))


def _libraries(elf_files: list[str]) -> list[str]:
    """The shared libraries (and loader) that ``elf_files`` load, as ``ldd`` finds them."""
    found: set[str] = set()
    for start in range(0, len(elf_files), 200):
        batch = elf_files[start : start + 200]
        done = subprocess.run(
            ["ldd", *batch],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": _TRUSTED_PATH, "LANG": "C"},
        )
        for line in done.stdout.splitlines():
            words = line.split()
            if "=>" in words and len(words) > words.index("=>") + 1:
                candidate = words[words.index("=>") + 1]
            elif words and words[0].startswith("/") and not words[0].endswith(":"):
                candidate = words[0]
            else:
                continue
            if candidate.startswith("/") and os.path.exists(candidate):
                found.add(candidate)
    return sorted(found)


def _resolved(paths: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """(the links met on the way to ``paths``: path -> target, the real paths to bind, none
    inside another)."""
    links: dict[str, str] = {}
    real = sorted({_follow(path, links) for path in paths})
    kept: list[str] = []
    for path in real:
        if not any(path.startswith(folder + "/") for folder in kept):
            kept.append(path)
    merged = {str(Path("/") / name) for name in MERGED_USR}
    return {k: v for k, v in links.items() if k not in merged}, kept


def _follow(path: str, links: dict[str, str], depth: int = 0) -> str:
    """The real path of ``path``, recording each link met in ``links``."""
    if depth > 16:
        return os.path.realpath(path)
    current = "/"
    parts = Path(path).parts[1:]
    for index, part in enumerate(parts):
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            links[candidate] = target
            joined = os.path.normpath(os.path.join(current, target))
            current = _follow(joined, links, depth + 1)
        else:
            current = candidate
        if index == len(parts) - 1:
            return current
    return current


def _regular_files(paths: Iterable[str]) -> list[str]:
    files: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if os.path.isdir(real):
            files += _files_under([real])
        elif os.path.isfile(real):
            files.append(real)
    return files


def files_under(paths: Iterable[str | Path]) -> list[str]:
    """The regular files of ``paths`` (files, or folders walked), links left out."""
    return _files_under(str(path) for path in paths)


def _files_under(paths: Iterable[str]) -> list[str]:
    files: list[str] = []
    for path in paths:
        if os.path.isfile(path) and not os.path.islink(path):
            files.append(path)
            continue
        for folder, _, names in os.walk(path):
            for name in names:
                full = os.path.join(folder, name)
                if not os.path.islink(full) and os.path.isfile(full):
                    files.append(full)
    return files


def _is_elf(path: str) -> bool:
    if not path.endswith(".so") and ".so." not in path and not os.access(path, os.X_OK):
        return False
    try:
        with open(path, "rb") as file:
            return file.read(4) == _ELF
    except OSError:
        return False
