"""The tournament page's statistics (issue 17 on the site): intervals as bars next to the
standings, rank probabilities and settled places, the statistics' crosstable (the page has no
head to head of its own), how much duplicate play narrows for the preset; and the rounds in
the live answer."""

from __future__ import annotations

import math
import re
from collections import defaultdict

import pytest
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import page_selectors, selectors, services
from tournaments.models import Deal, Seat, Table, Tournament
from tournaments.statistics.spread import preset_spread

pytestmark = pytest.mark.django_db


def page_html(client: Client, tournament: Tournament, route: str = "tournament-detail") -> str:
    response = client.get(reverse(f"tournaments:{route}", args=[tournament.pk]))
    assert response.status_code == 200
    return response.content.decode()


def crosstable_of(tournament: Tournament) -> page_selectors.Crosstable:
    return page_selectors.crosstable_page(tournament_id=tournament.pk, user=None).crosstable


def test_the_standings_show_each_entrys_interval_as_a_bar_with_its_figures_in_words(
    site_world: SiteWorld, client: Client
) -> None:
    tournament = site_world.finished
    figures = selectors.tournament_statistics(tournament=tournament).by_entry()
    page = page_selectors.tournament_page(tournament_id=tournament.pk, user=None)
    html = page_html(client, tournament)
    assert len(page.live.standings) == 4
    for line in page.live.standings:
        c = line.confidence
        assert c is not None
        expected = figures[line.row.entry.pk]
        assert (c.mean, c.low, c.high) == (expected.mean, expected.low, expected.high)
        assert c.rank == expected.rank
        assert c.probability == expected.rank_probabilities[expected.rank - 1]
        assert c.settled is expected.settled
        # On one scale: the bar's ends around its mean, inside the box, 0 in view.
        assert 0 <= c.bar.low <= c.bar.mean <= c.bar.high <= 100
        assert 0 <= c.bar.zero <= 100
        # The figures are in the text and in the bar's title and label.
        assert f'aria-label="{c.summary}"' in html.replace("&#x27;", "'")
        assert f"<title>{c.summary}</title>" in html
        assert f'<span class="ci-mean">{c.mean_text}</span>' in html
        assert f'<span class="cell-detail">{c.interval_text}</span>' in html
        assert f"{c.rank}: {c.probability_text}" in html
    # Two rounds of one table: two blocks each, so every entry has an interval.
    assert all(line.confidence.low is not None for line in page.live.standings)  # type: ignore[union-attr]
    assert html.count('<svg class="ci-bar"') == 4
    assert "How these figures are computed" in html
    assert "#:~:text=Statistics%3A%20how%20sure" in html  # to docs/tournaments.md's section


def test_signed_figures_and_percentages_read_as_people_write_them() -> None:
    from tournaments.page_selectors.tournaments import percent, signed

    assert signed(1.254) == "+1.25"
    assert signed(-0.4) == "\u22120.40"
    assert signed(-0.001) == "0.00"
    assert percent(0.004) == "<1%"
    assert percent(0.999) == ">99%"
    assert percent(1.0) == "100%"
    assert percent(0.64) == "64%"


def shared_deal_differences(tournament: Tournament) -> dict[tuple[int, int], list[float]]:
    """For each ordered pair of entries, the row's score minus the column's on every deal they
    played at the same table, computed directly from the rows: in normal play both scores are
    against the same table average, so the difference is the difference of their points
    (negated in Hearts, where fewer points are better)."""
    seats: dict[int, dict[int, int]] = defaultdict(dict)  # table -> position -> entry
    for seat in Seat.objects.filter(table__tournament=tournament, entry__isnull=False):
        seats[seat.table_id][seat.position] = seat.entry_id  # type: ignore[assignment]
    out: dict[tuple[int, int], list[float]] = defaultdict(list)
    for deal in Deal.objects.filter(table__tournament=tournament):
        for pa, a in seats[deal.table_id].items():
            for pb, b in seats[deal.table_id].items():
                if a != b:
                    out[a, b].append(-(deal.points[pa] - deal.points[pb]))
    return out


def test_the_crosstable_is_the_statistics_one_and_equals_a_direct_computation(
    site_world: SiteWorld, client: Client
) -> None:
    tournament = site_world.finished
    page = page_selectors.tournament_page(tournament_id=tournament.pk, user=None)
    crosstable = crosstable_of(tournament)
    entries = crosstable.entries
    assert [e.pk for e in entries] == [line.row.entry.pk for line in page.live.standings]
    assert [number for number, _ in crosstable.columns] == [1, 2, 3, 4]
    assert [g.comparison for g in crosstable.grids] == ["table"]  # not duplicate
    grid = crosstable.grids[0]
    direct = shared_deal_differences(tournament)
    for _, row, cells in crosstable.rows(grid):
        for column, cell in zip(entries, cells, strict=True):
            if row.pk == column.pk:
                assert cell is None
                continue
            assert cell is not None
            differences = direct[row.pk, column.pk]
            assert cell.deals == len(differences) == 4  # 2 tables of 2 deals, always together
            assert math.isclose(cell.mean, sum(differences) / len(differences), abs_tol=1e-9)
            assert cell.low is not None
            assert cell.high is not None
            assert cell.low <= cell.mean <= cell.high
            assert cell.significant == (cell.low > 0 or cell.high < 0)
            assert cell.verdict == (
                "" if not cell.significant else "better" if cell.mean > 0 else "worse"
            )
    html = page_html(client, tournament, "tournament-crosstable")
    assert "At the same table" in html
    assert "On the same cards" not in html
    assert html.count("4 deals</span>") == 12  # every ordered pair, once
    # The tournament's page links it.
    crosstable_url = reverse("tournaments:tournament-crosstable", args=[tournament.pk])
    assert f'href="{crosstable_url}"' in page_html(client, tournament)


def play_duplicate(entries: int = 8) -> Tournament:
    tournament = make_tournament(name="Duplicate cup", rounds=1, deals_per_table=2, duplicate=True)
    enter_builtins(tournament, ["heuristic", "random"] * (entries // 2))
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    return tournament


def test_duplicate_play_also_compares_the_pairs_that_held_the_same_cards(
    client: Client,
) -> None:
    tournament = play_duplicate()
    crosstable = crosstable_of(tournament)
    assert [g.comparison for g in crosstable.grids] == ["table", "cards"]
    cards = crosstable.grids[1]
    # Directly: the entries at the same position of the two tables, on the same deal.
    at: dict[tuple[int, int], int] = {}  # (table number, position) -> entry
    for seat in Seat.objects.filter(table__tournament=tournament).select_related("table"):
        at[seat.table.number, seat.position] = seat.entry_id  # type: ignore[assignment]
    points = {
        (d.table.number, d.index): d.points
        for d in Deal.objects.filter(table__tournament=tournament).select_related("table")
    }
    index = {e.pk: i for i, e in enumerate(crosstable.entries)}
    checked = 0
    for position in range(4):
        a, b = at[1, position], at[2, position]
        differences = [-(points[1, d][position] - points[2, d][position]) for d in range(2)]
        cell = cards.cells[index[a]][index[b]]
        assert cell is not None
        assert cell.deals == 2
        assert math.isclose(cell.mean, sum(differences) / 2, abs_tol=1e-9)
        checked += 1
    assert checked == 4
    # Entries at the same table were not on the same cards: no cell there.
    same_table = cards.cells[index[at[1, 0]]][index[at[1, 1]]]
    assert same_table is not None
    assert same_table.deals == 0
    html = page_html(client, tournament, "tournament-crosstable")
    assert "On the same cards" in html
    assert 'data-comparison="cards"' in html


def test_the_page_says_how_much_duplicate_play_narrows_for_its_preset(
    site_world: SiteWorld, client: Client
) -> None:
    # One table a round: duplicate play is impossible with these settings; the preset's
    # measured spreads say it.
    spread = preset_spread("hearts", "whisthub")
    narrowing = page_selectors.tournament_page(
        tournament_id=site_world.finished.pk, user=None
    ).duplicate_narrowing
    assert narrowing is not None
    assert narrowing.factor == spread.table / spread.duplicate
    assert f"{spread.table:.2f}" in narrowing.sentence
    assert f"{spread.duplicate:.2f}" in narrowing.sentence
    assert f"a factor of {spread.table / spread.duplicate:.2f}" in narrowing.sentence
    assert narrowing.sentence in page_html(client, site_world.finished)

    # Eight entries, three rounds: both ways of playing are possible; the settings' figures.
    tournament = make_tournament(name="Big cup", rounds=3, deals_per_table=4)
    enter_builtins(tournament, ["random"] * 8)
    report = selectors.tournament_resolution(
        game="hearts", preset="whisthub", entries=8, rounds=3, deals_per_table=4
    )
    assert report.normal is not None
    assert report.duplicate_play is not None
    narrowing = page_selectors.tournament_page(
        tournament_id=tournament.pk, user=None
    ).duplicate_narrowing
    assert narrowing is not None
    assert narrowing.factor == report.normal.half_width / report.duplicate_play.half_width
    assert f"\u00b1{report.normal.half_width:.2f}" in narrowing.sentence
    assert f"\u00b1{report.duplicate_play.half_width:.2f}" in narrowing.sentence
    html = page_html(client, tournament)
    assert 'data-testid="duplicate-narrowing"' in html
    assert "no deal yet" in html  # entries without a score have no interval


def test_a_duplicate_round_still_playing_gives_no_figure_of_its_finished_table(
    client: Client,
) -> None:
    tournament = make_tournament(
        name="Hidden duplicate", rounds=1, deals_per_table=2, duplicate=True
    )
    enter_builtins(tournament, ["random"] * 8)
    services.tournament_start(tournament=tournament)
    first = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert first is not None
    assert services.table_run(table_id=first.pk, worker="test", token="t-1").outcome == "recorded"
    page = page_selectors.tournament_page(tournament_id=tournament.pk, user=None)
    assert all(line.confidence is None for line in page.live.standings)
    assert all(
        cell is None or cell.deals == 0
        for grid in crosstable_of(tournament).grids
        for cells in grid.cells
        for cell in cells
    )
    html = page_html(client, tournament)
    assert '<svg class="ci-bar"' not in html
    crosstable_html = page_html(client, tournament, "tournament-crosstable")
    assert "sig-better" not in crosstable_html
    assert "deals</span>" not in crosstable_html


def test_the_live_answer_also_brings_the_rounds_and_the_round_page_their_tables(
    client: Client,
) -> None:
    tournament = make_tournament(name="Rounds cup", rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 8)
    url = reverse("tournaments:tournament-live", args=[tournament.pk])
    html = client.get(url).content.decode()
    assert 'id="tournament-rounds" aria-labelledby="rounds-title" hx-swap-oob="outerHTML"' in html
    assert "No round is seated yet: registration is open" in html
    round_url = reverse("tournaments:round-detail", args=[tournament.pk, 1])
    assert client.get(round_url).status_code == 404  # not seated yet

    services.tournament_start(tournament=tournament)
    first = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert first is not None
    assert services.table_run(table_id=first.pk, worker="test", token="t-1").outcome == "recorded"
    html = client.get(url).content.decode()
    rounds = html[html.index('id="tournament-rounds"') :]
    # One line per round: its page, its status, its tables by status (2 tables, 1 done,
    # 0 running, 1 waiting, 0 failed).
    line = re.search(
        rf'<a href="{round_url}">Round 1</a></th>\s*<td><span class="status status-running"'
        r'.*?</td>\s*((?:<td class="num">\d+</td>\s*){5})',
        rounds,
        re.S,
    )
    assert line is not None, rounds
    assert re.findall(r">(\d+)<", line.group(1)) == ["2", "1", "0", "1", "0"]
    # The page itself carries the same section, without the out-of-band marker.
    detail = page_html(client, tournament)
    assert '<section id="tournament-rounds" aria-labelledby="rounds-title">' in detail
    assert f'href="{round_url}"' in detail

    # The round's page: its tables with who sat where; the finished table's places show, the
    # waiting one has none; it refreshes itself while the round is played.
    page = client.get(round_url).content.decode()
    table_rows = re.findall(r"Table (\d)</a>\s*<span class=\"status status-(\w+)\"", page)
    assert table_rows == [("1", "done"), ("2", "pending")]
    assert len(re.findall(r"data-place>\d", page)) == 4
    assert f'hx-get="{round_url}"' in page
    services.tournament_run_here(tournament=tournament)
    page = client.get(round_url).content.decode()
    assert len(re.findall(r"data-place>\d", page)) == 8
    assert "hx-get" not in page  # finished: no more refreshing


def test_long_standings_and_rounds_are_paginated(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of the standings at a time (the live answer keeps the page it refreshes), and a
    page of a round's tables at a time (pages of 3 lines here)."""
    monkeypatch.setattr("tournaments.page_selectors.tournaments.PAGE_SIZE", 3)
    tournament = make_tournament(name="Crowded cup", rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 16)
    services.tournament_start(tournament=tournament)
    url = reverse("tournaments:tournament-detail", args=[tournament.pk])
    rows = re.compile(r'<tr class="[^"]*">\s*<td class="num">')
    first = client.get(url).content.decode()
    last = client.get(url + "?page=6").content.decode()
    assert len(rows.findall(first)) == 3
    assert len(rows.findall(last)) == 1  # 16 = 5 * 3 + 1
    assert 'aria-label="Pages of the standings"' in first
    assert "&amp;page=6" in last  # the polling asks for the page it shows
    live = client.get(reverse("tournaments:tournament-live", args=[tournament.pk]) + "?page=6")
    assert len(rows.findall(live.content.decode())) == 1
    # 16 entries at tables of 4: 4 tables, on two pages of the round's.
    round_url = reverse("tournaments:round-detail", args=[tournament.pk, 1])
    table = re.compile(r"Table (\d)</a>\s*<span class=\"status")
    assert table.findall(client.get(round_url).content.decode()) == ["1", "2", "3"]
    assert table.findall(client.get(round_url + "?page=2").content.decode()) == ["4"]


def running_with_one_table_done(name: str, entries: int, deals: int) -> Tournament:
    tournament = make_tournament(name=name, rounds=2, deals_per_table=deals)
    enter_builtins(tournament, ["random"] * entries)
    services.tournament_start(tournament=tournament)
    for table in Table.objects.filter(tournament=tournament).order_by("number")[:2]:
        services.table_run(table_id=table.pk, worker="test", token=f"t-{table.pk}")
    return tournament


def test_a_running_tournaments_statistics_cost_as_many_queries_whatever_its_size(
    client: Client,
) -> None:
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def cold(tournament: Tournament) -> dict[str, int]:
        counts = {}
        for route in ("tournament-detail", "tournament-live"):
            url = reverse(f"tournaments:{route}", args=[tournament.pk])
            client.get(url)  # the engine's catalogue and the like
            cache.clear()  # the statistics computed again: their queries count
            with CaptureQueriesContext(connection) as captured:
                assert client.get(url).status_code == 200
            counts[route] = len(captured)
        return counts

    small = running_with_one_table_done("Small running", entries=8, deals=1)
    large = running_with_one_table_done("Large running", entries=16, deals=3)
    assert cold(small) == cold(large)


def test_a_large_crosstable_is_shown_by_square_blocks(
    site_world: SiteWorld, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of 2 entries a side here (CROSSTABLE_BLOCK): rows of one block of the
    standings against the columns of another, each cell the whole crosstable's."""
    tournament = site_world.finished
    whole = crosstable_of(tournament)
    monkeypatch.setattr("tournaments.page_selectors.tournaments.CROSSTABLE_BLOCK", 2)
    page = page_selectors.crosstable_page(
        tournament_id=tournament.pk, user=None, rows="2", columns="1"
    )
    assert [(b.first, b.last) for b in page.blocks] == [(1, 2), (3, 4)]
    block = page.crosstable
    assert [n for n, _ in block.rows_entries] == [3, 4]
    assert [n for n, _ in block.columns] == [1, 2]
    assert block.grids[0].cells == [row[0:2] for row in whole.grids[0].cells[2:4]]
    # Past the end: the last block.
    assert (
        page_selectors.crosstable_page(tournament_id=tournament.pk, user=None, rows="9").row_block
        == 2
    )
    url = reverse("tournaments:tournament-crosstable", args=[tournament.pk])
    html = client.get(url + "?rows=2&columns=1").content.decode()
    assert 'aria-label="Rows of the crosstable"' in html
    assert '<span aria-current="page">3\u20134</span>' in html  # the rows shown
    assert '<a href="?rows=2&amp;columns=2">3\u20134</a>' in html  # the other columns
    assert html.count("4 deals</span>") == 4  # 2 rows x 2 columns, none on the diagonal


def test_a_running_tournaments_live_part_is_rendered_once_per_version_for_every_viewer(
    client: Client,
) -> None:
    """Every viewer's polling after a change gets the rendering the first one made (the
    standings are not computed again for each), until the next change."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    tournament = running_with_one_table_done("Watched cup", entries=8, deals=1)
    url = reverse("tournaments:tournament-live", args=[tournament.pk])
    first = client.get(url).content.decode()
    with CaptureQueriesContext(connection) as captured:
        second = Client().get(url).content.decode()
    assert second == first
    sql = " ".join(q["sql"] for q in captured.captured_queries)
    assert "tournaments_deal" not in sql  # no standings, no statistics computed again
    assert "tournaments_seat" not in sql
    # A table recorded: a new version, a new rendering.
    table = Table.objects.filter(tournament=tournament, status=Table.Status.PENDING).first()
    assert table is not None
    services.table_run(table_id=table.pk, worker="test", token="t-watched")
    third = Client().get(url).content.decode()
    done = re.compile(r'data-testid="tables-done">(\d+) of')
    assert [done.findall(html) for html in (first, third)] == [["2"], ["3"]]


def test_rank_chances_and_head_to_head_show_only_where_they_mean_something(
    client: Client,
) -> None:
    """One table per entry: no interval, so no rank chance (not "100%" beside "no interval
    yet") and no settled place; head to head decided nothing (no tie), so it shows a dash
    with a title saying why, not 0."""
    tournament = make_tournament(rounds=1, deals_per_table=2)
    enter_builtins(tournament, ["heuristic", "lowest", "random", "random"])
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    html = page_html(client, tournament)
    standings = html[
        html.index('id="standings"') : html.index("</table>", html.index('id="standings"'))
    ]
    assert standings.count("needs two tables") == 4
    body = standings[standings.index("<tbody>") :]
    # No chance at all, 100% or other (the only percentage is the intervals' level).
    assert set(re.findall(r"\S*\d+%", body)) == {"95%"}
    assert standings.count("Head to head decided nothing here") == 4


def test_head_to_head_decides_only_where_it_tells_tied_entries_apart() -> None:
    from fractions import Fraction

    from tournaments import scoring

    def decides(*outcomes: scoring.TableOutcome) -> dict[int, bool]:
        lines = scoring.standings(
            entries=[1, 2, 3, 4], outcomes=outcomes, seed=1, lower_is_better=True
        )
        # Standings stored before the flag was kept give the same, found from the lines.
        stored = [row[:10] for row in scoring.standings_as_json(lines)]
        assert scoring.standings_from_json(stored) == lines
        return {line.entry: line.head_to_head_decides for line in lines}

    # 1 and 3 are tied on points and score, as are 2 and 4, but they never met: 0 decides
    # nothing (the seeded draw does).
    assert decides(
        scoring.TableOutcome(1, 1, (1, 2), (0, 26), (1, 2), (Fraction(1), Fraction(0))),
        scoring.TableOutcome(1, 2, (3, 4), (0, 26), (1, 2), (Fraction(1), Fraction(0))),
    ) == {1: False, 2: False, 3: False, 4: False}
    # All four tied; 1 placed above 2 where they met: head to head orders the tie.
    half = (Fraction(1, 2), Fraction(1, 2))
    assert decides(
        scoring.TableOutcome(1, 1, (1, 2), (5, 5), (1, 2), half),
        scoring.TableOutcome(1, 2, (3, 4), (5, 5), (1, 1), half),
    ) == {1: True, 2: True, 3: True, 4: True}
