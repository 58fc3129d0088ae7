"""``TAPIS_REQUIRE_SANDBOX=1`` turns the skip of a test that needs the sandbox into a failure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REQUIRE_SANDBOX_ENV, sandbox_unavailable

BASE_DIR = Path(__file__).resolve().parents[2]
# Tests that need bubblewrap: through the ``bwrap_works`` fixture and through ``needs_bwrap``.
SANDBOX_TESTS = [
    "tests/judge/test_runtimes.py::test_a_bot_killed_by_a_signal_is_told_which",
    "tests/judge/test_runner.py::test_an_sdk_bot_plays_a_whole_table_in_the_sandbox",
]


def run_without_bwrap(*, require: bool) -> subprocess.CompletedProcess[str]:
    """Run the sandbox tests in a pytest of their own, on a host that has no bubblewrap."""
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_SANDBOX_ENV}
    env["TAPIS_BWRAP"] = "/nonexistent/bwrap"
    if require:
        env[REQUIRE_SANDBOX_ENV] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", *SANDBOX_TESTS],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_without_bubblewrap_the_sandbox_tests_fail_when_it_is_required() -> None:
    done = run_without_bwrap(require=True)
    assert done.returncode == 1, done.stdout + done.stderr
    # A failure in the fixture that gates them: pytest counts it as an error of the test.
    assert "2 errors" in done.stdout, done.stdout
    assert "skipped" not in done.stdout, done.stdout
    assert "sandbox unavailable: bubblewrap not found (/nonexistent/bwrap)" in done.stdout


def test_without_bubblewrap_the_sandbox_tests_skip_when_it_is_not_required() -> None:
    done = run_without_bwrap(require=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout, done.stdout


def test_the_gate_fails_with_the_reason_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SANDBOX_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="no gcc"):
        sandbox_unavailable("no gcc")


def test_the_gate_skips_with_the_reason_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SANDBOX_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no gcc"):
        sandbox_unavailable("no gcc")
