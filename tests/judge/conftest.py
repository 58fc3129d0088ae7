"""Helpers for the judge's tests: scripted fake bots and small bot packages on disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, NoReturn

import pytest

import games
from judge import BotSpec, Limits, TableResult, run_table
from judge.runner import SDK_DIR
from judge.sandbox import SANDBOX_UID_BASE, sandbox_status

FAKEBOTS = Path(__file__).resolve().parent / "fakebots"

# The game the protocol tests play: Jeu du Roi (4 seats, 13 decisions per seat and deal).
GAME = "roi"

FIRST_LEGAL_BOT = """\
from tapis_bot import Bot, run


class First(Bot):
    name = "first"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
"""

ScriptedBot = Callable[[Sequence[Sequence[Any]]], Path]

# "1" (CI sets it): a test that needs the sandbox, its cgroups or a bot toolchain fails where
# they are missing instead of being skipped, so that a host without them cannot pass.
REQUIRE_SANDBOX_ENV = "TAPIS_REQUIRE_SANDBOX"


def sandbox_unavailable(reason: str) -> NoReturn:
    """Skip the test for this reason, or fail it if ``TAPIS_REQUIRE_SANDBOX=1``."""
    if os.environ.get(REQUIRE_SANDBOX_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_SANDBOX_ENV}=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def bwrap_works() -> None:
    """Skip a module of sandbox tests only if bubblewrap truly cannot run a sandbox here (fail
    it if ``TAPIS_REQUIRE_SANDBOX=1``)."""
    status = sandbox_status()
    if status.problems:
        sandbox_unavailable("sandbox unavailable: " + "; ".join(status.problems))
    assert status.bwrap is not None
    probe = subprocess.run(
        [status.bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "true"],
        capture_output=True,
        text=True,
        check=False,
        user=SANDBOX_UID_BASE - 1 if os.geteuid() == 0 else None,
    )
    if probe.returncode != 0:
        sandbox_unavailable(f"bubblewrap cannot create namespaces here: {probe.stderr.strip()}")


@pytest.fixture
def bot_root() -> Iterator[Path]:
    """A directory for bots that the sandbox uid can reach (pytest's tmp_path is 700)."""
    root = Path(tempfile.mkdtemp(prefix="tapis-sandbox-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)


def write_package(directory: Path, source: str, entry: str = "main.py") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / entry).write_text(textwrap.dedent(source))
    (directory / "tapis.json").write_text(json.dumps({"entry": entry, "runtime": "python3"}))
    return directory


@pytest.fixture
def scripted_bot(tmp_path: Path) -> ScriptedBot:
    """Make a fake bot package that follows a script (see fakebots/scripted.py)."""
    count = 0

    def make(script: Sequence[Sequence[Any]]) -> Path:
        nonlocal count
        count += 1
        directory = tmp_path / f"scripted{count}"
        directory.mkdir()
        shutil.copy(FAKEBOTS / "scripted.py", directory / "main.py")
        (directory / "script.json").write_text(json.dumps(list(script)))
        (directory / "tapis.json").write_text(json.dumps({"entry": "main.py"}))
        return directory

    return make


@pytest.fixture
def first_bot(tmp_path: Path) -> Path:
    """A one-file SDK bot that plays the first legal action."""
    path = tmp_path / "first.py"
    path.write_text(FIRST_LEGAL_BOT)
    return path


def play(
    bots: Sequence[BotSpec | str | Path],
    *,
    game: str = GAME,
    seed: int = 1,
    limits: Limits | None = None,
    sandbox: str = "none",
    deals: int | None = None,
    fill: str = "builtin:lowest",
    sdk_dir: Path | None = SDK_DIR,
    cpu: int | Literal["auto", "free"] | None = None,
) -> TableResult:
    """A table of these bots (the other seats: ``fill``), checked for the invariants every
    table must hold whatever its bots did."""
    players = games.load(game).players
    specs = [str(b) if isinstance(b, Path) else b for b in bots]
    specs += [fill] * (players - len(specs))
    result = run_table(
        game=game,
        bots=specs,
        seed=seed,
        limits=limits,
        sandbox=sandbox,  # type: ignore[arg-type]
        deals=deals,
        sdk_dir=sdk_dir,
        cpu=cpu,
    )
    verdict = games.verify(result.log)
    assert verdict.ok, verdict
    for entry in result.log["deals"]:  # type: ignore[union-attr]
        assert len(entry["times"]) == len(entry["actions"])  # type: ignore[index, arg-type]
    return result
