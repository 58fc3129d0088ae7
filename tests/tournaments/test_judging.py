"""What the judge is handed for a table asks the engine, not a table of game names."""

from __future__ import annotations

import pytest

from tests.tournaments.factories import make_tournament
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
