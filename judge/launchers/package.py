"""Bot packages: one ``.py`` file, a ``.zip`` with a manifest, or a folder with a manifest.

A package is checked before anything of it runs, and unpacked into a fresh directory that the
sandbox binds read-only at ``/bot``. The manifest is ``tapis.json`` at the root of the zip (or
folder)::

    {"entry": "main.py", "runtime": "python3"}

``entry`` is the file the runtime starts (a relative path inside the package); ``runtime`` is
one of :data:`judge.launchers.runtimes.RUNTIMES` (``python3`` by default); a compiled runtime's
``sources`` lists the files its compiler is given (by default the entry alone). A single source
file's runtime comes from its extension (``.py .c .cpp .rs .go .java .js``). A package is
refused, with a reason naming the file, for: a path that leaves the package (``..``) or is
absolute, a file or folder name that starts with ``-`` or ``@`` (a compiler's option or file of
options), a link or any other special file, an encrypted entry, a duplicate name, more than
:data:`MAX_FILES` files, more than :data:`MAX_ZIP_BYTES` zipped or :data:`MAX_UNPACKED_BYTES`
unpacked (checked on the bytes really written, not only on what the zip claims: a zip bomb stops
at the limit), a missing or unreadable manifest, an unknown runtime, an entry or a source that
is not in the package, or a compiled program (ELF, PE, Mach-O or a Java class) instead of
sources.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp:
...     src = pathlib.Path(tmp, "bot.py")
...     _ = src.write_text("print('hi')")
...     bot = prepare(src, pathlib.Path(tmp, "out"))
...     bot.command
('/usr/bin/python3', '-S', '-u', '/bot/bot.py')
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import Final

from judge.launchers import runtimes
from judge.sandbox.limits import BOT_ROOT

MANIFEST: Final = "tapis.json"
# -S: no site module (bots get the standard library, docs/protocol.md; site's .pth files cost
# a bot's start more CPU than anything else it imports), -u: unbuffered pipes.
RUNTIMES: Final[dict[str, tuple[str, ...]]] = {"python3": ("/usr/bin/python3", "-S", "-u")}

MAX_ZIP_BYTES: Final = 4 * 1024 * 1024  # the package as uploaded (zip or single file)
MAX_UNPACKED_BYTES: Final = 16 * 1024 * 1024  # the sum of the unpacked files
MAX_FILES: Final = 200  # files in the package (folders not counted)
MAX_PATH_CHARS: Final = 200
MAX_DEPTH: Final = 16
MAX_MANIFEST_BYTES: Final = 4096

_SAFE_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class PackageError(ValueError):
    """A bot package that is refused; the message says why, for the bot's author."""


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedBot:
    """A checked, unpacked bot: its directory and the command that starts it in the sandbox."""

    directory: Path
    entry: str
    runtime: str
    files: int
    size: int
    sources: tuple[str, ...] = ()  # what a compiled runtime's compiler is given

    @property
    def command(self) -> tuple[str, ...]:
        """The argv in the sandbox: a compiled runtime's starts its artifact, which the judge
        binds at /bot instead of the sources (judge.launchers.runtimes)."""
        return self.command_for(runtimes.DEFAULT_MEMORY)

    def command_for(self, memory_bytes: int) -> tuple[str, ...]:
        """The argv for a memory limit of ``memory_bytes`` (a managed runtime's heap flag)."""
        if self.runtime == "python3":
            return (*RUNTIMES[self.runtime], f"{BOT_ROOT}/{self.entry}")
        return runtimes.RUNTIMES[self.runtime].command(self.entry, memory_bytes)


def _check_name(name: str) -> PurePosixPath:
    """A member name as a safe relative path inside the package, or PackageError."""
    if not name or len(name) > MAX_PATH_CHARS:
        raise PackageError(
            f"{name[:MAX_PATH_CHARS]!r}: a path must have 1 to {MAX_PATH_CHARS} characters"
        )
    if "\\" in name:
        raise PackageError(f"{name!r}: backslashes are not allowed in paths (use '/')")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in name):
        raise PackageError(f"{name!r}: control characters are not allowed in paths")
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        raise PackageError(f"{name!r}: absolute paths are not allowed")
    path = PurePosixPath(name)
    parts = path.parts
    if not parts:
        raise PackageError(f"{name!r}: not a file name")
    if any(part == ".." for part in parts):
        raise PackageError(f"{name!r}: '..' would leave the package (path traversal)")
    if any(part.startswith(("-", "@")) for part in parts):
        raise PackageError(
            f"{name!r}: a file or folder name may not start with '-' or '@' (a compiler would "
            "read it as an option or a file of options)"
        )
    if len(parts) > MAX_DEPTH:
        raise PackageError(f"{name!r}: more than {MAX_DEPTH} nested folders")
    return path


def _read_manifest(data: bytes, where: str) -> tuple[str, str, tuple[str, ...]]:
    if len(data) > MAX_MANIFEST_BYTES:
        raise PackageError(f"{where}: the manifest is over {MAX_MANIFEST_BYTES} bytes")
    try:
        manifest = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError) as exc:
        raise PackageError(f"{where}: the manifest is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise PackageError(f'{where}: the manifest is an object like {{"entry": "main.py"}}')
    entry = manifest.get("entry")
    runtime = manifest.get("runtime", "python3")
    if not isinstance(entry, str) or not entry:
        raise PackageError(f'{where}: the manifest needs "entry", the file to run')
    if not isinstance(runtime, str) or runtime not in runtimes.RUNTIMES:
        raise PackageError(
            f"{where}: unknown runtime {runtime!r}; runtimes are: {', '.join(runtimes.RUNTIMES)}"
        )
    entry_path = str(_check_name(entry))
    sources = manifest.get("sources", [entry_path])
    if not isinstance(sources, list) or not all(isinstance(x, str) for x in sources):
        raise PackageError(f'{where}: "sources" is a list of file names')
    return entry_path, runtime, tuple(str(_check_name(x)) for x in sources)


def _fresh_dir(dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True, mode=0o755)
    return dest


def _finish(
    dest: Path,
    entry: str,
    runtime: str,
    files: set[str],
    size: int,
    sources: tuple[str, ...] = (),
) -> PreparedBot:
    if entry not in files:
        raise PackageError(f"the entry file {entry!r} named by {MANIFEST} is not in the package")
    for source in sources:
        if source not in files:
            raise PackageError(f"the source {source!r} named by {MANIFEST} is not in the package")
    for name in sorted(files):
        if runtimes.is_program(dest / name):
            raise PackageError(
                f"{name!r} is a compiled program: a bot package holds sources, which the judge "
                "builds itself"
            )
    make_read_only(dest)
    return PreparedBot(dest, entry, runtime, len(files), size, sources or (entry,))


def make_read_only(dest: Path) -> None:
    """Folders 555, files 444: readable by the sandbox's unprivileged user (it has only the
    "others" bits), writable by nobody. :func:`remove` removes such a tree."""
    for root, dirs, names in os.walk(dest):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o555)
        for n in names:
            os.chmod(os.path.join(root, n), 0o444)
    os.chmod(dest, 0o555)


def _prepare_file(source: Path, dest: Path) -> PreparedBot:
    size = source.stat().st_size
    if size > MAX_ZIP_BYTES:
        raise PackageError(f"{source.name}: {size} bytes, over the limit of {MAX_ZIP_BYTES}")
    runtime = runtimes.runtime_for_file(source.name)
    assert runtime is not None
    suffix = source.suffix.lower()
    fallback = "Bot.java" if runtime == "java" else f"bot{suffix}"
    # Java wants the public class's name as the file's: a name with dots is no class name.
    name = source.stem + suffix
    if not _SAFE_FILE_NAME.fullmatch(name) or (runtime == "java" and "." in source.stem):
        name = fallback
    _fresh_dir(dest)
    shutil.copyfile(source, dest / name)
    return _finish(dest, name, runtime, {name}, size)


def _prepare_zip(source: Path, dest: Path) -> PreparedBot:
    size = source.stat().st_size
    if size > MAX_ZIP_BYTES:
        raise PackageError(f"{source.name}: {size} bytes zipped, over the limit of {MAX_ZIP_BYTES}")
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise PackageError(f"{source.name}: not a readable zip file ({exc})") from None
    with archive:
        members = archive.infolist()
        files: dict[str, zipfile.ZipInfo] = {}
        seen: set[str] = set()
        declared = 0
        for info in members:
            path = _check_name(info.filename)
            key = str(path)
            if key in seen or key.casefold() in seen:
                raise PackageError(f"{info.filename!r}: the name appears twice in the zip")
            seen.update((key, key.casefold()))
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if kind == stat.S_IFLNK:
                raise PackageError(f"{info.filename!r}: links are not allowed in a bot package")
            if info.flag_bits & 0x1:
                raise PackageError(f"{info.filename!r}: encrypted entries are not allowed")
            if info.is_dir():
                if kind not in (0, stat.S_IFDIR):
                    raise PackageError(f"{info.filename!r}: not a regular file or folder")
                continue
            if kind not in (0, stat.S_IFREG):
                raise PackageError(
                    f"{info.filename!r}: not a regular file (special files are not allowed)"
                )
            files[key] = info
            if len(files) > MAX_FILES:
                raise PackageError(f"more than {MAX_FILES} files in the package")
            declared += info.file_size
            if declared > MAX_UNPACKED_BYTES:
                raise PackageError(
                    f"unpacked size over the limit of {MAX_UNPACKED_BYTES} bytes (zip bomb?)"
                )
        # A file must not also be used as a folder ("a" and "a/b").
        for key in files:
            for parent in PurePosixPath(key).parents:
                if str(parent) in files:
                    raise PackageError(f"{key!r}: {str(parent)!r} is both a file and a folder")
        manifest = files.get(MANIFEST)
        if manifest is None:
            raise PackageError(f"no {MANIFEST} manifest at the root of the zip")
        with archive.open(manifest) as stream:
            entry, runtime, sources = _read_manifest(stream.read(MAX_MANIFEST_BYTES + 1), MANIFEST)
        if entry not in files:
            raise PackageError(f"the entry file {entry!r} named by {MANIFEST} is not in the zip")
        _fresh_dir(dest)
        written = 0
        for key, info in files.items():
            target = dest.joinpath(*PurePosixPath(key).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(info) as src, open(target, "xb") as out:
                    while True:
                        chunk = src.read(64 * 1024)
                        if not chunk:
                            break
                        written += len(chunk)
                        if written > MAX_UNPACKED_BYTES:
                            raise PackageError(
                                f"unpacked size over the limit of {MAX_UNPACKED_BYTES} bytes "
                                "(the zip lies about its sizes: zip bomb?)"
                            )
                        out.write(chunk)
            except PackageError:
                shutil.rmtree(dest, ignore_errors=True)
                raise
            except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
                shutil.rmtree(dest, ignore_errors=True)
                raise PackageError(f"{info.filename!r}: cannot be unpacked ({exc})") from None
    return _finish(dest, entry, runtime, set(files), written, sources)


def _prepare_folder(source: Path, dest: Path) -> PreparedBot:
    manifest = source / MANIFEST
    if manifest.is_symlink() or not manifest.is_file():
        raise PackageError(f"no {MANIFEST} manifest in {source}")
    entry, runtime, sources = _read_manifest(
        manifest.read_bytes()[: MAX_MANIFEST_BYTES + 1], MANIFEST
    )
    plan: list[tuple[Path, str]] = []
    total = 0
    for root, dirs, names in os.walk(source):
        for name in [*dirs, *names]:
            full = Path(root, name)
            rel = full.relative_to(source).as_posix()
            _check_name(rel)
            mode = full.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise PackageError(f"{rel!r}: links are not allowed in a bot package")
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise PackageError(f"{rel!r}: not a regular file (special files are not allowed)")
            if "__pycache__" in PurePosixPath(rel).parts:
                continue
            plan.append((full, rel))
            if len(plan) > MAX_FILES:
                raise PackageError(f"more than {MAX_FILES} files in the package")
            total += full.lstat().st_size
            if total > MAX_UNPACKED_BYTES:
                raise PackageError(f"the files are over the limit of {MAX_UNPACKED_BYTES} bytes")
    _fresh_dir(dest)
    for full, rel in plan:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(full, target, follow_symlinks=False)
    return _finish(dest, entry, runtime, {rel for _, rel in plan}, total, sources)


def prepare(source: Path, dest: Path) -> PreparedBot:
    """Check a bot package and unpack it into ``dest`` (emptied first); PackageError if refused.

    ``source`` is a ``.py`` file, a ``.zip`` file or a folder holding a manifest.
    """
    source = Path(source)
    try:
        mode = source.lstat().st_mode
    except OSError as exc:
        raise PackageError(f"{source}: cannot read the bot ({exc.strerror})") from None
    if stat.S_ISLNK(mode):
        mode = source.stat().st_mode  # a link given on the command line is the author's choice
    if stat.S_ISDIR(mode):
        return _prepare_folder(source, dest)
    if not stat.S_ISREG(mode):
        raise PackageError(f"{source}: not a file or a folder")
    if source.suffix.lower() == ".zip" or zipfile.is_zipfile(source):
        return _prepare_zip(source, dest)
    if runtimes.runtime_for_file(source.name) is not None:
        return _prepare_file(source, dest)
    extensions = " ".join(runtimes.EXTENSIONS)
    raise PackageError(
        f"{source.name}: a bot is a source file ({extensions}), a .zip file or a folder"
    )


def check(source: Path) -> PreparedBot:
    """Check a package without keeping it unpacked (the upload check)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tapis-check-") as tmp:
        bot = prepare(source, Path(tmp, "bot"))
        _make_writable(bot.directory)
        return dataclasses.replace(bot, directory=source)


def _make_writable(directory: Path) -> None:
    """Undo the read-only modes so that the directory can be removed."""
    for root, dirs, _ in os.walk(directory):
        os.chmod(root, 0o755)
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)


def remove(directory: Path) -> None:
    """Remove an unpacked bot directory (its folders are read-only)."""
    if directory.exists():
        _make_writable(directory)
        shutil.rmtree(directory, ignore_errors=True)
