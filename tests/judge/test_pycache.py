"""The SDK compiled ahead for the sandbox's Python (judge/launchers/pycache.py)."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

import pytest

from judge.launchers import pycache
from judge.runner import SDK_DIR

from .conftest import sandbox_unavailable


@pytest.fixture(autouse=True)
def _sandbox_python() -> None:
    if not Path(pycache.SANDBOX_PYTHON).exists():
        sandbox_unavailable(f"no {pycache.SANDBOX_PYTHON}")


@pytest.fixture
def tmpdir_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return tmp_path


def sandbox_python(code: str) -> str:
    done = subprocess.run(
        [pycache.SANDBOX_PYTHON, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_copy_holds_byte_code_the_sandbox_python_will_use(tmpdir_root: Path) -> None:
    copy = pycache.compiled_sdk(SDK_DIR)
    assert copy != SDK_DIR
    assert copy.parent == tmpdir_root / f"tapis-sdk-{os.getuid()}"
    assert (copy / "tapis_bot.py").read_bytes() == (SDK_DIR / "tapis_bot.py").read_bytes()
    tag = sandbox_python("import sys; print(sys.implementation.cache_tag)")
    compiled = copy / "__pycache__" / f"tapis_bot.{tag}.pyc"
    header = compiled.read_bytes()[:16]
    magic = sandbox_python("import importlib.util; print(importlib.util.MAGIC_NUMBER.hex())")
    assert header[:4].hex() == magic
    # Timestamp-checked byte code (flags 0) for exactly this source: the loader takes it.
    source = (copy / "tapis_bot.py").stat()
    assert int.from_bytes(header[4:8], "little") == 0
    assert int.from_bytes(header[8:12], "little") == int(source.st_mtime) & 0xFFFFFFFF
    assert int.from_bytes(header[12:16], "little") == source.st_size
    # Readable by the sandbox's uid ("others"), and tracebacks name the file as the bot sees it.
    for path in [copy, copy / "__pycache__", compiled, copy / "tapis_bot.py"]:
        assert path.stat().st_mode & 0o004
    shown = sandbox_python(
        f"import marshal; f = open({str(compiled)!r}, 'rb'); f.read(16); "
        "print(marshal.load(f).co_filename)"
    )
    assert shown == "/sdk/tapis_bot.py"


def test_the_copy_is_made_once_and_follows_the_sdk(tmpdir_root: Path, tmp_path: Path) -> None:
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    (sdk / "tapis_bot.py").write_text("VALUE = 1\n")
    first = pycache.compiled_sdk(sdk)
    assert pycache.compiled_sdk(sdk) == first
    (sdk / "tapis_bot.py").write_text("VALUE = 2\n")
    second = pycache.compiled_sdk(sdk)
    assert second != first
    assert (second / "tapis_bot.py").read_text() == "VALUE = 2\n"
    assert list((second / "__pycache__").glob("tapis_bot.*.pyc"))


def test_a_cache_directory_others_may_write_is_not_used(
    tmpdir_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmpdir_root / f"tapis-sdk-{os.getuid()}"
    root.mkdir()
    root.chmod(0o777)  # as if another user had made it first, for everybody to write
    with caplog.at_level(logging.WARNING, logger="judge.launchers.pycache"):
        assert pycache.compiled_sdk(SDK_DIR) == SDK_DIR
    assert "uncompiled" in caplog.text
    assert str(root) in caplog.text
    assert not list(root.iterdir())


def test_without_the_interpreter_bots_get_the_sdk_as_it_is(
    tmpdir_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pycache, "SANDBOX_PYTHON", str(tmpdir_root / "no-such-python"))
    assert pycache.compiled_sdk(SDK_DIR) == SDK_DIR
