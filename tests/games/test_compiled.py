"""The optional compiled engine (games/_native.py, games/compile.py): used only when built from
exactly the sources on disk, never stale, and pure Python whenever it cannot be used.

Most tests work on a copy of the package in a temporary directory, imported by a fresh
interpreter, so that they can edit sources and break builds without touching the real one.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import games
from games import _native

PACKAGE = Path(games.__file__).resolve().parent
REPORT = (
    "import sys, games, games.hearts_fast; from games import _native; "
    "print(games.COMPILED, all(_native.in_use(sys.modules[m]) for m in _native.COMPILED_MODULES)"
    ", games.ENGINE, sep='|')"
)


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_PYTHON_VARIABLE}
    return {**env, **extra}


def _report(root: Path, **env: str) -> tuple[bool, bool, str, str]:
    """(games.COMPILED, every engine module an extension, games.ENGINE, stderr) in a fresh
    interpreter importing the package under ``root``."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT],
        cwd=root,
        env=_environment(PYTHONPATH=str(root), **env),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    compiled, extensions, engine = done.stdout.strip().split("|")
    return compiled == "True", extensions == "True", engine, done.stderr


def _copy(tmp_path: Path, *, build: bool) -> Path:
    target = tmp_path / "games"
    target.mkdir()
    for source in PACKAGE.glob("*.py"):
        shutil.copy2(source, target / source.name)
    if build:
        shutil.copytree(_native.BUILD_DIR, target / "_compiled")
    return tmp_path


built = pytest.mark.skipif(
    _native.check_build()[0] is None, reason="no current compiled engine (make compile)"
)


def test_the_engine_in_use_is_the_one_the_build_allows() -> None:
    modules = [sys.modules[name] for name in _native.COMPILED_MODULES if name in sys.modules]
    assert modules

    if _native.forced_pure() or _native.check_build()[0] is None:
        assert not games.COMPILED
        assert games.ENGINE.startswith("pure Python")
        assert all(str(m.__file__).endswith(".py") for m in modules)
    else:
        assert games.COMPILED, games.ENGINE
        for module in modules:
            assert isinstance(module.__spec__, importlib.machinery.ModuleSpec)
            assert isinstance(module.__spec__.loader, importlib.machinery.ExtensionFileLoader)
            assert Path(str(module.__file__)).parent == _native.BUILD_DIR


def test_a_fresh_process_uses_the_same_engine() -> None:
    """What the Celery worker, the judge and the command line tools get by importing games."""
    done = subprocess.run(
        [sys.executable, "-c", REPORT],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert done.stdout.split("|")[:2] == [str(games.COMPILED), str(games.COMPILED)]
    stale = _native.check_build()[1].startswith("stale")  # sources edited since make compile
    if stale:
        assert done.stderr.startswith("warning: games: the compiled engine is stale")
    else:
        assert done.stderr == ""


@built
def test_a_copy_of_a_current_build_is_used(tmp_path: Path) -> None:
    assert _report(_copy(tmp_path, build=True)) == (True, True, "compiled with mypyc", "")


@built
@pytest.mark.parametrize("edited", ["hearts.py", "base.py", "roi.py"])
def test_an_edited_source_is_never_run_compiled(tmp_path: Path, edited: str) -> None:
    """Any file of the package: the compiled modules depend on the types of the others."""
    root = _copy(tmp_path, build=True)
    with (root / "games" / edited).open("a") as source:
        source.write("\n# an edit after the build\n")

    compiled, extensions, engine, stderr = _report(root)

    assert (compiled, extensions) == (False, False)
    assert (
        engine == f"pure Python (compiled engine stale: games/{edited} changed since make compile)"
    )
    assert stderr.count("\n") == 1
    assert stderr.startswith("warning: games: the compiled engine is stale")


@built
def test_a_build_for_another_python_is_not_used(tmp_path: Path) -> None:
    root = _copy(tmp_path, build=True)
    manifest_path = root / "games" / "_compiled" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["python"]["version"] = "3.11.0-other"
    manifest_path.write_text(json.dumps(manifest))

    compiled, extensions, engine, stderr = _report(root)

    assert (compiled, extensions) == (False, False)
    assert "built for another Python" in engine
    assert stderr.count("\n") == 1


@built
def test_a_broken_build_falls_back_to_pure_python(tmp_path: Path) -> None:
    root = _copy(tmp_path, build=True)
    library = (
        root / "games" / "_compiled" / f"_engine__mypyc{_native.python_tag()['extension_suffix']}"
    )
    library.write_bytes(b"not a shared library")

    compiled, extensions, engine, stderr = _report(root)

    assert (compiled, extensions) == (False, False)
    assert engine == "pure Python (the compiled engine does not load)"
    assert stderr.startswith("warning: games: the compiled engine does not load (ImportError")
    assert stderr.count("\n") == 1


@built
def test_tapis_pure_python_forces_pure_python(tmp_path: Path) -> None:
    root = _copy(tmp_path, build=True)

    assert _report(root, TAPIS_PURE_PYTHON="1") == (
        False,
        False,
        "pure Python (TAPIS_PURE_PYTHON is set)",
        "",
    )


def test_no_build_is_pure_python_and_silent(tmp_path: Path) -> None:
    compiled, extensions, engine, stderr = _report(_copy(tmp_path, build=False))

    assert (compiled, extensions, stderr) == (False, False, "")
    assert engine == "pure Python (compiled engine not built (run make compile))"


def _compile(root: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-m", "games.compile"],
        cwd=root,
        env=_environment(PYTHONPATH=str(root), TAPIS_PURE_PYTHON="1", **env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_without_a_c_compiler_the_build_warns_and_succeeds(tmp_path: Path) -> None:
    root = _copy(tmp_path, build=False)

    done = _compile(root, PATH=str(tmp_path / "no-such-bin"))

    assert done.returncode == 0
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("warning: games: ")
    assert "the engine runs in pure Python" in done.stderr
    assert not (root / "games" / "_compiled").exists()
    assert _report(root)[:2] == (False, False)


def test_without_mypyc_the_build_warns_and_succeeds(tmp_path: Path) -> None:
    """``make run`` installs Tapis without the dev extra, hence without mypy."""
    root = _copy(tmp_path, build=False)

    done = _compile(root, "-S")  # no site-packages: the engine (stdlib only) but no mypyc

    assert done.returncode == 0
    assert done.stderr == (
        "warning: games: mypyc is not installed (pip install -e '.[dev]'): "
        "the engine runs in pure Python\n"
    )
    assert not (root / "games" / "_compiled").exists()


def test_a_failed_build_warns_and_leaves_pure_python(tmp_path: Path) -> None:
    pytest.importorskip("mypyc")
    root = _copy(tmp_path, build=False)
    with (root / "games" / "tricks.py").open("a") as source:
        source.write('\nBROKEN: int = "not an int"\n')  # a type error: mypyc refuses it

    done = _compile(root)

    assert done.returncode == 0
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("warning: games: the build failed (")
    assert not (root / "games" / "_compiled").exists()
    assert "Incompatible types" in (root / "games" / "_compiled.log").read_text()
    assert _report(root) == (
        False,
        False,
        "pure Python (compiled engine not built (run make compile))",
        "",
    )
