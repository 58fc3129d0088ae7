"""What the judge is handed for a table asks the engine, not a table of game names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tournaments.factories import BotFactory, UserFactory, file_version, make_tournament
from tournaments import judging


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("game", "preset", "deals"),
    [
        ("hearts", "whisthub", 4),
        ("hearts", "two-player", 4),
        ("roi", "classic", 10),
        ("dutch", "classic", 2),
    ],
)
def test_a_tables_time_budget_counts_the_engines_decisions(
    game: str, preset: str, deals: int
) -> None:
    tournament = make_tournament(open_it=False, game=game, preset=preset, deals_per_table=deals)
    engine = judging.tournament_engine(tournament=tournament)
    seats = tournament.table_size
    expected = (
        seats * (tournament.startup_seconds + tournament.bank_seconds)
        + deals * engine.decisions_per_deal * tournament.decision_seconds
        + deals * 1.0
        + 30.0
    )
    assert judging.table_time_budget(tournament=tournament) == pytest.approx(expected)
    # More deals cost more time, in proportion to the engine's decisions.
    assert engine.decisions_per_deal > 0


@pytest.mark.django_db
def test_a_zygote_instance_is_one_version_of_one_entry(settings: Any, tmp_path: Path) -> None:
    """Identical bytes uploaded twice, or one version entered twice, never share an instance
    (the judge keys its zygotes by it)."""
    settings.TAPIS_BOT_CACHE_DIR = str(tmp_path)
    alice, bob = UserFactory.create(), UserFactory.create()
    mine = file_version(BotFactory.create(owner=alice), "first_legal")
    same_bytes = file_version(BotFactory.create(owner=bob), "first_legal")
    assert mine.sha256 == same_bytes.sha256
    instances = {
        judging.bot_spec(version=mine, entry_id=1).instance,
        judging.bot_spec(version=mine, entry_id=2).instance,
        judging.bot_spec(version=same_bytes, entry_id=3).instance,
        judging.bot_spec(version=mine).instance,
    }
    assert len(instances) == 4
    assert None not in instances


@pytest.mark.django_db
def test_a_stored_build_of_another_toolchain_is_rebuilt_by_the_worker(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A C version whose stored build (BotArtifact) was made by another toolchain: the worker
    builds the sources again in its sandbox and the table plays that build; the stored program
    (a script saying it ran) never runs."""
    import hashlib
    import io
    import shutil
    import tarfile
    import tempfile

    from judge import run_table
    from judge.launchers import runtimes
    from judge.launchers.package import prepare
    from tournaments.models import BotArtifact, BotVersion

    tmp_path = Path(tempfile.mkdtemp(prefix="tapis-toolchain-"))  # reachable by the sandbox uids
    for folder in ("bots", "builds"):
        (tmp_path / folder).mkdir(mode=0o711)
    tmp_path.chmod(0o711)
    settings.TAPIS_BOT_CACHE_DIR = str(tmp_path / "bots")
    settings.TAPIS_SANDBOX = "bwrap"
    monkeypatch.setenv("TAPIS_BUILD_CACHE", str(tmp_path / "builds"))
    source = Path(__file__).resolve().parents[2] / "docs" / "examples" / "c" / "bot.c"
    data = source.read_bytes()
    version = BotVersion.objects.create(
        bot=BotFactory.create(),
        number=1,
        content=data,
        filename="bot.c",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        status=BotVersion.Status.READY,
        report={"ok": True},
        runtime="c",
        toolchain="gcc (Debian 99.1.0-1) 99.1.0",
    )
    stale = b'#!/bin/sh\necho "STALE BUILD RAN" >&2\nexit 3\n'
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("./bot")
        info.size, info.mode = len(stale), 0o755
        archive.addfile(info, io.BytesIO(stale))
    prepared = prepare(source, tmp_path / "prepared")
    BotArtifact.objects.create(
        version=version,
        data=buffer.getvalue(),
        sources_sha256=runtimes.sources_digest(prepared.directory),
        toolchain=version.toolchain,
    )
    assert version.toolchain != runtimes.toolchain("c")

    spec = judging.bot_spec(version=version, entry_id=1)
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[spec, "builtin:lowest", "builtin:lowest", "builtin:lowest"],
        deals=1,
        seed=3,
        sandbox="bwrap",
    )
    assert result.faults == ()
    assert result.seats[0].name == "example-c"
    assert "STALE BUILD RAN" not in result.seats[0].log
    for build in (tmp_path / "builds").iterdir():
        runtimes.remove_tree(build)
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.django_db
def test_a_version_fetched_at_once_by_two_pool_processes_is_written_whole(
    settings: Any, tmp_path: Path
) -> None:
    """A worker's pool processes are forked from one parent and may share a thread ident: one
    of them fetching a version must never take the other's half-written file for its own (it
    did: the other then failed its table with FileNotFoundError)."""
    import threading

    settings.TAPIS_BOT_CACHE_DIR = str(tmp_path)
    version = file_version(BotFactory.create(owner=UserFactory.create()), "first_legal")
    directory = tmp_path / version.sha256
    directory.mkdir()
    name = version.filename or "bot.py"
    sibling = directory / f".{name}.{threading.get_ident()}"  # the other process's, in flight
    sibling.write_bytes(b"half of it")

    path = judging.bot_version_path(version=version)

    assert path.read_bytes() == bytes(version.content)
    assert sibling.read_bytes() == b"half of it"  # still the other process's to finish
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)  # the sandbox's uid reads it
    assert sorted(p.name for p in directory.iterdir()) == sorted([name, sibling.name])
