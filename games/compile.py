"""Build the compiled engine: ``python -m games.compile`` (``make compile``).

Compiles the modules of :data:`games._native.COMPILED_MODULES` with mypyc into
``games/_compiled/`` (see games/_native.py for how and when they are used). Optional by
design: without mypyc, a C compiler or the Python headers, or when the build fails, it prints
one warning line and exits 0, and the engine runs in pure Python. Up to date builds are left
alone. ``--check`` only says which engine ``import games`` would use.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from games._native import (
    BUILD_DIR,
    COMPILED_MODULES,
    LIBRARY,
    MANIFEST,
    MANIFEST_FORMAT,
    PACKAGE_DIR,
    PURE_PYTHON_VARIABLE,
    check_build,
    python_tag,
    sources_digest,
    warn,
)

LOG = PACKAGE_DIR / "_compiled.log"
LOCK = PACKAGE_DIR / "_compiled.lock"
#: mypyc's group: one shared library, inside the package, for every compiled module.
GROUP = LIBRARY.removesuffix("__mypyc")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m games.compile", description=__doc__)
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument("--check", action="store_true", help="say which engine is in use")
    parser.add_argument("--into", type=Path, help=argparse.SUPPRESS)  # the build's child
    args = parser.parse_args(argv)
    if args.into is not None:
        return _build_into(args.into)
    if args.check:
        import games

        print(games.ENGINE)  # what `import games` does here and now
        return 0
    # One build at a time (two `make test` in one checkout): the second waits, then finds the
    # first one's build up to date.
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not args.force and check_build()[0] is not None:
            print("games: the compiled engine is up to date")
            return 0
        problem = _missing_toolchain()
        if problem:
            warn(f"{problem}: the engine runs in pure Python")
            return 0
        return _build()


def _missing_toolchain() -> str | None:
    try:
        import mypyc  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed (pip install -e '.[dev]')"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python headers (Python.h; e.g. apt-get install python3-dev)"
    return None


def _build() -> int:
    """Build in a fresh directory beside the package, then swap it in whole."""
    before = sources_digest()
    work = Path(tempfile.mkdtemp(prefix="_compiled.", dir=PACKAGE_DIR))
    work.chmod(0o755)  # mkdtemp makes it private; the build is read by every user
    try:
        print(f"games: compiling {', '.join(COMPILED_MODULES)} with mypyc...", flush=True)
        env = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
        child = subprocess.run(
            [sys.executable, "-m", "games.compile", "--into", str(work)],
            cwd=PACKAGE_DIR.parent,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        LOG.write_text(child.stdout + child.stderr)
        if child.returncode != 0:
            last = (child.stderr.strip() or child.stdout.strip() or "no output").splitlines()[-1]
            warn(f"the build failed ({last[:200]}; see {LOG}): the engine runs in pure Python")
            return 0
        if sources_digest() != before:
            warn("the sources changed during the build: run make compile again")
            return 0
        modules = {name: _built_file(work, name).name for name in (*COMPILED_MODULES, LIBRARY)}
        manifest = {
            "format": MANIFEST_FORMAT,
            "python": python_tag(),
            "sources": before,
            "modules": modules,
        }
        (work / MANIFEST.name).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        _swap_in(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    files, why = check_build()
    print(f"games: {'compiled engine built' if files else 'build not usable: ' + why}")
    return 0


def _built_file(work: Path, module: str) -> Path:
    name = module.rsplit(".", 1)[1]
    suffix = str(python_tag()["extension_suffix"])
    path = work / f"{name}{suffix}"
    if not path.is_file():
        raise FileNotFoundError(f"the build made no {path.name}")
    return path


def _swap_in(work: Path) -> None:
    """Replace BUILD_DIR by ``work`` (a rename; a process importing now sees the old build,
    the new one or none, never a mix: each manifest is checked against its own files)."""
    old = None
    if BUILD_DIR.exists():
        old = Path(tempfile.mkdtemp(prefix="_compiled.old.", dir=PACKAGE_DIR))
        BUILD_DIR.rename(old / "build")
    work.rename(BUILD_DIR)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _build_into(work: Path) -> int:
    """The child: mypyc and the C compiler, output into ``work`` (flat)."""
    from mypyc.build import mypycify
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext

    paths = [f"games/{name.rsplit('.', 1)[1]}.py" for name in COMPILED_MODULES]
    # No config file: pyproject's mypy section loads the Django plugins, which the engine
    # (plain Python) does not need; the engine's own strictness is checked by make typecheck.
    extensions = mypycify(
        ["--config-file=", *paths],
        opt_level="3",
        group_name=GROUP,
        target_dir=str(work / "c"),
    )
    distribution = Distribution({"name": "tapis-engine", "ext_modules": extensions})
    command = build_ext(distribution)
    command.build_lib = str(work / "lib")
    command.build_temp = str(work / "temp")
    command.ensure_finalized()
    command.run()
    for built in (work / "lib" / "games").iterdir():
        built.rename(work / built.name)
    for scratch in ("c", "lib", "temp"):
        shutil.rmtree(work / scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
