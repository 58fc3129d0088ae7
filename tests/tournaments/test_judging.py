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
