"""The ``tapis`` console script is installed and answers --version and --help."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

TAPIS = Path(sys.executable).parent / "tapis"


def run_tapis(*args: str) -> subprocess.CompletedProcess[str]:
    if not TAPIS.exists():
        pytest.fail(f"{TAPIS} is missing: install the project (pip install -e .)", pytrace=False)
    # From another directory: the installed script must not depend on the working directory.
    return subprocess.run(
        [str(TAPIS), *args], cwd="/", capture_output=True, text=True, timeout=60, check=False
    )


def test_version() -> None:
    completed = run_tapis("--version")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"tapis {metadata.version('tapis')}"


def test_help() -> None:
    completed = run_tapis("--help")

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: tapis")
    assert "Tapis" in completed.stdout


def test_no_command_prints_help() -> None:
    completed = run_tapis()

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: tapis")


def test_unknown_command_fails() -> None:
    completed = run_tapis("no-such-command")

    assert completed.returncode == 2
    assert "invalid choice" in completed.stderr
