"""A finished tournament's stored summary: written by its finish, equal to the figures computed
from its rows, read by the selectors instead of computing them, and filled for the tournaments
finished before summaries existed by ``manage.py tournament_summaries``."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import queue, scoring, selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import Tournament, TournamentSummary
from tournaments.statistics.stored import crosstable_from_json, standings_from_json

pytestmark = pytest.mark.django_db


def finished(name: str = "Summer cup", *, duplicate: bool = False) -> Tournament:
    tournament = make_tournament(
        name=name, rounds=2 if not duplicate else 1, deals_per_table=2, duplicate=duplicate
    )
    enter_builtins(tournament, ["heuristic", "random", "lowest", "random"] * 2)
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    return tournament


@pytest.mark.parametrize("duplicate", [False, True], ids=["normal", "duplicate"])
def test_the_finish_stores_the_figures_computed_from_the_rows(duplicate: bool) -> None:
    tournament = finished(duplicate=duplicate)
    summary = TournamentSummary.objects.get(tournament=tournament)
    figures = selectors.tournament_figures(tournament=tournament)
    assert standings_from_json(summary.standings) == figures.standings
    assert crosstable_from_json(summary.crosstable) == figures.crosstable
    assert figures.crosstable.pairs  # something to compare: the entries met
    assert selectors.TournamentSpread(**summary.spread) == figures.spread
    assert figures.spread.sd is not None
    assert figures.spread.scores == 8 * 2 * tournament.rounds  # entries x deals x rounds
    assert figures.spread.tables == (2 if duplicate else 0)
    lines = selectors.tournament_standing_lines(tournament=tournament)
    assert scoring.standings_from_json(summary.lines) == lines
    # The same final ranks as the entries' own (written by the same finish).
    ranks = dict(tournament.entries.values_list("pk", "final_rank"))
    assert {line.entry: line.rank for line in lines} == ranks


def test_the_selectors_read_the_stored_summary_without_computing() -> None:
    tournament = finished()
    summary = TournamentSummary.objects.get(tournament=tournament)
    computed = selectors.tournament_statistics(tournament=tournament)
    rows = selectors.standings_for_tournament(tournament=tournament)
    # A summary that says something else: what the selectors show is what is stored.
    first = summary.standings["entries"][0]
    first[2] = 99.5  # the first entry's mean per deal
    summary.lines[0][4] = 7  # the first line's head to head
    summary.crosstable["pairs"][0][5] = -42.0  # the first pair's mean
    summary.save()
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        figures = selectors.tournament_statistics(tournament=tournament)
        assert figures.stored
        assert figures.by_entry()[first[0]].mean == 99.5
        assert figures.crosstable.pairs[0].mean == -42.0
        stored_rows = selectors.standings_for_tournament(tournament=tournament)
    assert stored_rows[0].head_to_head == 7
    assert [r.entry.pk for r in stored_rows] == [r.entry.pk for r in rows]
    assert computed.by_entry()[first[0]].mean != 99.5
    # Nothing of the rows was read: no seat, no deal.
    sql = " ".join(q["sql"] for q in captured.captured_queries)
    assert "tournaments_deal" not in sql
    assert "tournaments_seat" not in sql


def test_only_a_finished_tournament_has_a_summary() -> None:
    tournament = make_tournament(name="Still open", rounds=1, deals_per_table=1)
    with pytest.raises(ApplicationError, match="only a finished one"):
        services.tournament_summary_store(tournament=tournament)
    assert not TournamentSummary.objects.exists()


def test_the_command_fills_the_missing_summaries_and_only_those() -> None:
    first, second = finished("First"), finished("Second")
    kept = TournamentSummary.objects.get(tournament=second).computed_at
    TournamentSummary.objects.filter(tournament=first).delete()  # finished before summaries
    out = StringIO()
    call_command("tournament_summaries", stdout=out)
    assert out.getvalue().startswith("1 tournament summary stored")
    restored = TournamentSummary.objects.get(tournament=first)
    figures = selectors.tournament_figures(tournament=first)
    assert standings_from_json(restored.standings) == figures.standings
    assert TournamentSummary.objects.get(tournament=second).computed_at == kept
    out = StringIO()
    call_command("tournament_summaries", "--all", stdout=out)
    assert out.getvalue().startswith("2 tournament summaries stored")
    assert TournamentSummary.objects.get(tournament=second).computed_at > kept


def test_without_a_summary_the_figures_are_computed_as_before() -> None:
    tournament = finished()
    stored = selectors.tournament_statistics(tournament=tournament)
    TournamentSummary.objects.filter(tournament=tournament).delete()
    cache.clear()
    computed = selectors.tournament_statistics(tournament=tournament)
    assert not computed.stored
    assert computed.standings == stored.standings
    assert computed.crosstable == stored.crosstable


def test_the_presets_spread_reads_the_stored_spreads_as_it_measured_the_rows() -> None:
    """The finished tournaments' part of a preset's spread per deal: from their summaries, one
    query, the same figures as measured on their rows (those without a summary still are)."""
    tournaments = [finished("Normal one"), finished("Duplicate one", duplicate=True)]
    game, preset = tournaments[0].game, tournaments[0].preset
    with CaptureQueriesContext(connection) as captured:
        stored = selectors.preset_spread_source(game=game, preset=preset)
    assert len(captured) == 1
    TournamentSummary.objects.all().delete()
    measured = selectors.preset_spread_source(game=game, preset=preset)
    assert stored.tournaments == measured.tournaments == 2
    assert stored.tournament_deals == measured.tournament_deals
    assert stored == measured


def test_the_finish_queues_the_audit_which_the_audit_page_then_reads(
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    client: Client,
) -> None:
    from celery import current_app

    sent: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=(), **_: sent.append((name, tuple(args)))
    )
    with django_capture_on_commit_callbacks(execute=True):
        tournament = finished()
    assert (queue.TOURNAMENT_AUDIT_STORE, (tournament.pk,)) in sent
    assert TournamentSummary.objects.get(tournament=tournament).audit is None
    # The task's work (run twice: the same audit).
    for _ in range(2):
        audit = services.tournament_audit_store(tournament_id=tournament.pk)
        assert audit is not None
        assert audit.ok
    summary = TournamentSummary.objects.get(tournament=tournament)
    assert services.TournamentAudit.from_json(summary.audit) == audit
    assert summary.audited_at is not None
    # The page shows the stored audit: a stored problem shows; no deal is re-played.
    problem = "a problem only the stored audit has"
    summary.audit["problems"] = [problem]
    summary.audit["ok"] = False
    summary.audit["checks"][-1].update(verdict="failed", problems=[problem])
    summary.save()
    cache.clear()
    url = reverse("tournaments:tournament-audit", args=[tournament.pk])
    with CaptureQueriesContext(connection) as captured:
        html = client.get(url).content.decode()
    assert f"<li>{problem}</li>" in html
    assert "The audit found 1 problem" in html
    assert "this audit was made once and kept" in html
    sql = " ".join(q["sql"] for q in captured.captured_queries)
    assert "tournaments_deal" not in sql


def test_no_audit_is_stored_for_a_tournament_not_finished() -> None:
    tournament = make_tournament(name="Open still", rounds=1, deals_per_table=1)
    assert services.tournament_audit_store(tournament_id=tournament.pk) is None
    assert services.tournament_audit_store(tournament_id=987654) is None


def test_the_command_makes_the_missing_audits_when_asked() -> None:
    first, second = finished("First"), finished("Second")
    services.tournament_audit_store(tournament_id=second.pk)
    kept = TournamentSummary.objects.get(tournament=second).audited_at
    out = StringIO()
    call_command("tournament_summaries", stdout=out)
    assert TournamentSummary.objects.get(tournament=first).audit is None  # not asked
    call_command("tournament_summaries", "--audits", stdout=out)
    assert "1 tournament audit stored" in out.getvalue()
    assert services.TournamentAudit.from_json(
        TournamentSummary.objects.get(tournament=first).audit
    ) == services.tournament_audit(tournament=first, shown_only=True)
    assert TournamentSummary.objects.get(tournament=second).audited_at == kept
