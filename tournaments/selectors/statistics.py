"""Reads of a tournament's statistics, from the rows its visibility allows.

Its results as :mod:`tournaments.statistics` reads them, standings with confidence intervals, rank
probabilities and settled places, the crosstable, and what a tournament's settings can resolve
(docs/tournaments.md, "Statistics").

Only what :mod:`tournaments.visibility` allows is read (:func:`visibility.tables_shown_q`:
nothing of a table still being played, in duplicate play nothing of a round still being
played), so the figures are the same for everyone and say nothing a table's page would not.
A tournament's figures are kept in Django's cache under its standings version
(:func:`~tournaments.selectors.tournaments.standings_version`): final ones are computed once.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable

from django.core.cache import cache
from django.db.models import Count, Max, Q, QuerySet

import games
from tournaments import visibility
from tournaments.errors import ApplicationError
from tournaments.models import Deal, Match, MatchBatch, Seat, Tournament, TournamentSummary
from tournaments.selectors.tournaments import FINAL_VERSION, standings_version
from tournaments.statistics.crosstable import Crosstable, crosstable
from tournaments.statistics.resolution import Resolution, resolution, rounds_needed
from tournaments.statistics.scores import DealRow, Results, SeatRow, results_from_rows
from tournaments.statistics.spread import Spread, measured_spread, preset_spread
from tournaments.statistics.sprt import MIN_DEALS, SprtResult, sprt_expected_deals, sprt_from_sums
from tournaments.statistics.standings import EntryStanding, Standings, standings_with_confidence
from tournaments.statistics.stored import crosstable_from_json, standings_from_json

#: How long a tournament's figures are kept: final ones never change; live ones are keyed by
#: the standings version, which moves with each recorded table, so this only bounds memory.
CACHE_SECONDS = 24 * 3600
#: The finished tournaments of a preset read to measure its spread (the latest ones).
SPREAD_TOURNAMENTS = 20
#: Scores (seat-deals of entries) below which the finished tournaments' spread is not used.
SPREAD_MIN_SCORES = 200

# The columns SeatRow and DealRow are made of.
SEAT_FIELDS = (
    "table__round__number",
    "table__number",
    "position",
    "entry_id",
    "substitute",
    "replaced_deal",
)
DEAL_FIELDS = ("table__round__number", "table__number", "index", "points")


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentStatistics:
    """A tournament's standings with confidence, and its crosstable.

    The standings are under its standings ``version``; the crosstable is read apart when first asked
    for (the standings' endpoint does not need it, and in duplicate play it costs more than the
    standings). ``stored``: read from the tournament's
    :class:`~tournaments.models.TournamentSummary` (a finished one), not computed."""

    standings: Standings
    version: str
    tournament: int
    duplicate: bool
    game: str
    stored: bool = False

    def by_entry(self) -> dict[int, EntryStanding]:
        """Each ranked entry's line, by entry id."""
        return {line.entry: line for line in self.standings.entries}

    @property
    def crosstable(self) -> Crosstable:
        """The crosstable of the same results.

        Kept in the cache: once not kept, the stored one (one query), else computed (two
        queries)."""
        key = f"tapis:crosstable:{self.tournament}:{self.version}"
        kept: Crosstable | None = cache.get(key)
        if kept is not None:
            return kept
        if self.stored:
            stored = (
                TournamentSummary.objects.filter(tournament_id=self.tournament)
                .values_list("crosstable", flat=True)
                .first()
            )
            kept = crosstable_from_json(stored) if stored is not None else None
        if kept is None:
            kept = crosstable(
                _results(tournament_id=self.tournament, duplicate=self.duplicate, game=self.game)
            )
        cache.set(key, kept, CACHE_SECONDS)
        return kept


def _rows(seats: QuerySet[Seat], deals: QuerySet[Deal]) -> tuple[list[SeatRow], list[DealRow]]:
    seat_rows = [SeatRow(*row) for row in seats.values_list(*SEAT_FIELDS)]
    deal_rows = [
        DealRow(r, t, i, tuple(points)) for r, t, i, points in deals.values_list(*DEAL_FIELDS)
    ]
    return seat_rows, deal_rows


def _results(*, tournament_id: int, duplicate: bool, game: str) -> Results:
    shown = visibility.tables_shown_q(prefix="table__")
    seats, deals = _rows(
        Seat.objects.filter(shown, table__tournament_id=tournament_id),
        Deal.objects.filter(shown, table__tournament_id=tournament_id),
    )
    return results_from_rows(
        seats=seats,
        deals=deals,
        duplicate=duplicate,
        lower_is_better=games.game_class(game).lower_is_better,
    )


def tournament_results(*, tournament: Tournament) -> Results:
    """The scores of ``tournament``'s tables whose results may be shown.

    Scores as tournaments/statistics/scores.py's docstring says. Two queries, whatever the size."""
    return _results(
        tournament_id=tournament.pk, duplicate=tournament.duplicate, game=tournament.game
    )


def _ranked(tournament: Tournament) -> list[int]:
    return list(
        tournament.entries.filter(withdrawn=False, disqualified=False).values_list("pk", flat=True)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentFigures:
    """A tournament's statistics computed from its rows: what its summary stores."""

    standings: Standings
    crosstable: Crosstable
    spread: TournamentSpread


def tournament_figures(*, tournament: Tournament) -> TournamentFigures:
    """Compute a tournament's figures from its rows now.

    The standings with confidence, the crosstable and the spread per deal measured on
    ``tournament``, computed from its rows now (never the stored or cached ones): what
    :func:`~tournaments.services.tournament_summary_store` keeps when it finishes. Three queries."""
    results = tournament_results(tournament=tournament)
    return TournamentFigures(
        standings=standings_with_confidence(results, entries=_ranked(tournament)),
        crosstable=crosstable(results),
        spread=tournament_spread(results),
    )


def tournament_statistics(*, tournament: Tournament) -> TournamentStatistics:
    """A tournament's statistics: kept, stored or computed.

    Standings with 95% intervals, rank probabilities and settled flags (ranked entries only:
    withdrawn and disqualified ones are left out, their scores still count for the others), and the
    crosstable (read when first asked for).

    Kept in the cache under the standings version: none once kept. Else a finished
    tournament's are read from its stored summary (:class:`~tournaments.models.TournamentSummary`,
    written when it finished): one query, nothing computed; others' are computed, in a constant
    number of queries (the version, the seats, the deals, the ranked entries)."""
    version = standings_version(tournament=tournament)
    key = f"tapis:statistics:{tournament.pk}:{version}"
    kept: TournamentStatistics | None = cache.get(key)
    if kept is not None:
        return kept
    stored = (
        TournamentSummary.objects.filter(tournament_id=tournament.pk)
        .values_list("standings", flat=True)
        .first()
        if version == FINAL_VERSION
        else None
    )
    if stored is not None:
        standings = standings_from_json(stored)
    else:
        results = tournament_results(tournament=tournament)
        standings = standings_with_confidence(results, entries=_ranked(tournament))
    figures = TournamentStatistics(
        standings=standings,
        version=version,
        tournament=tournament.pk,
        duplicate=tournament.duplicate,
        game=tournament.game,
        stored=stored is not None,
    )
    cache.set(key, figures, CACHE_SECONDS)
    return figures


# ---------------------------------------------------------------------------------------------
# How many deals? What a tournament's settings resolve
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SpreadSource:
    """Where a preset's spread per deal comes from.

    The house bots (tournaments/spread.json, ``deals`` deals) and, when there are enough, the
    finished tournaments of the preset (``tournament_deals`` scores of ``tournaments`` tournaments;
    None: too few)."""

    house: Spread
    tournaments: int
    tournament_deals: int
    tournament_table: float | None
    tournament_duplicate: float | None

    def spread(self) -> Spread:
        """The spread used.

        The finished tournaments' figure of each format where there is one (they are the real
        field), else the house bots'."""
        return dataclasses.replace(
            self.house,
            table=self.tournament_table if self.tournament_table is not None else self.house.table,
            duplicate=(
                self.tournament_duplicate
                if self.tournament_duplicate is not None
                else self.house.duplicate
            ),
        )


def _pooled(parts: Iterable[tuple[float, int]]) -> tuple[float | None, int]:
    """Pooled standard deviation of (sd, scores) parts; None without enough scores."""
    squares = 0.0
    count = 0
    for sd, n in parts:
        squares += sd * sd * n
        count += n
    if count < SPREAD_MIN_SCORES:
        return None, count
    return math.sqrt(squares / count), count


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentSpread:
    """What a finished tournament tells of its preset's spread per deal.

    :func:`measured_spread` of its results: ``sd`` (None: too few scores), the ``scores`` of its
    entries it was measured on, and in duplicate play the most ``tables`` of a board (0 in normal
    play). Stored in its summary when it finishes."""

    sd: float | None
    scores: int
    tables: int

    def as_json(self) -> dict[str, float | int | None]:
        return {"sd": self.sd, "scores": self.scores, "tables": self.tables}


def tournament_spread(results: Results) -> TournamentSpread:
    """The spread measured on a tournament's ``results`` (see :class:`TournamentSpread`)."""
    scores = sum(len(s.scores) for b in results.blocks for s in b.seats if s.entry is not None)
    try:
        sd: float | None = measured_spread(results)
    except ValueError:
        sd = None
    tables = (
        max((len({s.table for s in b.seats}) for b in results.blocks), default=0)
        if results.duplicate
        else 0
    )
    return TournamentSpread(sd=sd, scores=scores, tables=tables)


def _spreads_from_rows(
    *, game: str, finished: list[tuple[int, bool]]
) -> dict[int, TournamentSpread]:
    """The spread of finished tournaments without a stored summary, from their rows.

    :func:`tournament_spread` of each of the ``finished`` (id, duplicate). Two queries."""
    ids = [pk for pk, _ in finished]
    shown = visibility.tables_shown_q(prefix="table__")
    by_tournament_seats: dict[int, list[SeatRow]] = defaultdict(list)
    by_tournament_deals: dict[int, list[DealRow]] = defaultdict(list)
    for tid, *seat in Seat.objects.filter(shown, table__tournament__in=ids).values_list(
        "table__tournament_id", *SEAT_FIELDS
    ):
        by_tournament_seats[tid].append(SeatRow(*seat))
    for tid, r, t, i, points in Deal.objects.filter(shown, table__tournament__in=ids).values_list(
        "table__tournament_id", *DEAL_FIELDS
    ):
        by_tournament_deals[tid].append(DealRow(r, t, i, tuple(points)))
    lower = games.game_class(game).lower_is_better
    return {
        pk: tournament_spread(
            results_from_rows(
                seats=by_tournament_seats[pk],
                deals=by_tournament_deals[pk],
                duplicate=duplicate,
                lower_is_better=lower,
            )
        )
        for pk, duplicate in finished
    }


def preset_spread_source(*, game: str, preset: str) -> SpreadSource:
    """The spread of ``game``/``preset`` and where it comes from.

    Measured from the house bots (ValueError if it was not) and from its latest finished tournaments
    (:func:`measured_spread`, each duplicate one rescaled to :attr:`~Spread.duplicate_tables`
    tables), as stored in their summaries when they finished: one query; three when some have no
    summary (their rows are read)."""
    house = preset_spread(game, preset)
    finished = list(
        Tournament.objects.filter(
            game=game, preset=preset, status=Tournament.Status.FINISHED, practice=False
        )
        .order_by("-created_at", "-pk")
        .values_list("pk", "duplicate", "summary__spread")[:SPREAD_TOURNAMENTS]
    )
    if not finished:
        return SpreadSource(house, 0, 0, None, None)
    spreads = {pk: TournamentSpread(**stored) for pk, _, stored in finished if stored is not None}
    missing = [(pk, duplicate) for pk, duplicate, stored in finished if stored is None]
    if missing:
        spreads.update(_spreads_from_rows(game=game, finished=missing))
    table_parts: list[tuple[float, int]] = []
    duplicate_parts: list[tuple[float, int]] = []
    for pk, duplicate, _ in finished:
        spread = spreads[pk]
        if spread.sd is None:
            continue
        if duplicate:
            if spread.tables < 2:
                continue
            # One seat's own variance, then as at the file's number of tables.
            own = spread.sd * spread.sd / (1 - 1 / spread.tables)
            duplicate_parts.append(
                (math.sqrt(own * (1 - 1 / house.duplicate_tables)), spread.scores)
            )
        else:
            table_parts.append((spread.sd, spread.scores))
    table_sd, table_n = _pooled(table_parts)
    duplicate_sd, duplicate_n = _pooled(duplicate_parts)
    return SpreadSource(
        house,
        tournaments=len(finished),
        tournament_deals=table_n + duplicate_n,
        tournament_table=table_sd,
        tournament_duplicate=duplicate_sd,
    )


def _kept_spread_source(*, game: str, preset: str) -> SpreadSource:
    """The spread of ``game``/``preset``, kept in the cache.

    :func:`preset_spread_source`, kept until a tournament of the preset finishes (one query to
    know)."""
    finished = Tournament.objects.filter(
        game=game, preset=preset, status=Tournament.Status.FINISHED, practice=False
    ).aggregate(n=Count("pk"), last=Max("pk"))
    key = f"tapis:spread:{game}:{preset}:{finished['n']}:{finished['last']}"
    kept: SpreadSource | None = cache.get(key)
    if kept is None:
        kept = preset_spread_source(game=game, preset=preset)
        cache.set(key, kept, CACHE_SECONDS)
    return kept


@dataclasses.dataclass(frozen=True, slots=True)
class ResolutionReport:
    """What a tournament's settings tell apart (:func:`tournament_resolution`).

    ``resolution``: with the settings as given. ``normal`` and ``duplicate_play``: the same
    settings in normal and in duplicate play (``normal`` None with a single round: a table is
    its unit; ``duplicate_play`` None when the entries fill a single table: duplicate play
    compares tables), so ``narrowing``, the ratio of their
    interval widths, says how much duplicate play narrows the intervals for this preset, as
    measured. ``needed``: for a ``difference`` asked, the fewest rounds (and deals per entry)
    that tell it apart, with these settings otherwise."""

    game: str
    preset: str
    entries: int
    table_size: int
    rounds: int
    deals_per_table: int
    duplicate: bool
    source: SpreadSource
    resolution: Resolution
    normal: Resolution | None
    duplicate_play: Resolution | None
    difference: float | None
    needed: Resolution | None

    @property
    def narrowing(self) -> float | None:
        if self.duplicate_play is None or self.normal is None:
            return None
        return self.duplicate_play.half_width / self.normal.half_width

    @property
    def needed_rounds(self) -> int | None:
        if self.needed is None:
            return None
        return self.needed.deals_per_entry // self.deals_per_table


def tournament_resolution(
    *,
    game: str,
    entries: int,
    rounds: int,
    deals_per_table: int,
    preset: str | None = None,
    table_size: int | None = None,
    duplicate: bool = False,
    difference: float | None = None,
) -> ResolutionReport:
    """What a tournament of these settings tells apart, and the rounds a difference needs.

    The smallest difference in points per deal that a tournament of these settings tells apart at
    95% (with 80% power), and with ``difference`` the rounds and deals it needs to tell that
    difference apart; for the organiser's form and the API. ``preset`` and ``table_size`` default to
    the game's. The spread per deal is the preset's as measured (:func:`preset_spread_source`).
    ApplicationError (code ``invalid``, with the field in ``extra``) for settings the statistics
    cannot answer.
    """
    try:
        engine = games.load(game, preset)
    except games.GameError as exc:
        option = getattr(exc, "option", None) or ("game" if preset is None else "preset")
        raise ApplicationError(str(exc), code="invalid_option", extra={"option": option}) from None
    size = table_size if table_size is not None else engine.players
    name = engine.preset
    try:
        source = _kept_spread_source(game=game, preset=name)
    except ValueError as exc:
        raise ApplicationError(str(exc), code="invalid", extra={"field": "preset"}) from None
    spread = source.spread()
    tables = math.ceil(entries / size)
    if duplicate and tables < 2:
        raise ApplicationError(
            f"duplicate play needs at least two tables a round: more than {size} entries",
            code="invalid",
            extra={"field": "entries"},
        )

    def at(duplicate_play: bool) -> Resolution:
        return resolution(
            entries=entries,
            rounds=rounds,
            deals_per_table=deals_per_table,
            table_size=size,
            duplicate=duplicate_play,
            spread=spread,
        )

    try:
        normal = at(False) if rounds >= 2 else None
        duplicate_play = at(True) if tables >= 2 else None
        needed = None
        if difference is not None:
            needed = rounds_needed(
                difference=difference,
                entries=entries,
                deals_per_table=deals_per_table,
                table_size=size,
                duplicate=duplicate,
                spread=spread,
            )
    except ValueError as exc:
        field = "difference" if "difference" in str(exc) or "rounds are" in str(exc) else "rounds"
        raise ApplicationError(str(exc), code="invalid", extra={"field": field}) from None
    chosen = duplicate_play if duplicate else normal
    if chosen is None:
        raise ApplicationError(
            "one table per entry gives no interval: play at least two rounds",
            code="invalid",
            extra={"field": "rounds"},
        )
    return ResolutionReport(
        game=game,
        preset=name,
        entries=entries,
        table_size=size,
        rounds=rounds,
        deals_per_table=deals_per_table,
        duplicate=duplicate,
        source=source,
        resolution=chosen,
        normal=normal,
        duplicate_play=duplicate_play,
        difference=difference,
        needed=needed,
    )


# ---------------------------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------------------------


_IN_FLIGHT = (MatchBatch.Status.PENDING, MatchBatch.Status.RUNNING)


def match_list(*, user: visibility.Viewer) -> QuerySet[Match]:
    """The matches ``user`` may see: their own (staff: every one), newest first."""
    matches = (
        Match.objects.select_related("owner", "candidate__bot", "baseline__bot")
        .defer("candidate__content", "baseline__content")
        .annotate(
            batches_done=Count("batches", filter=Q(batches__status=MatchBatch.Status.DONE)),
            batches_in_flight=Count("batches", filter=Q(batches__status__in=_IN_FLIGHT)),
        )
        .order_by("-created_at", "-pk")
    )
    if user is None or not getattr(user, "is_authenticated", False):
        return matches.none()
    if getattr(user, "is_staff", False):
        return matches
    return matches.filter(owner_id=getattr(user, "pk", None))


@dataclasses.dataclass(frozen=True, slots=True)
class MatchProgress:
    """Where a match stands.

    The sequential test on the deals played so far (the running mean difference per deal with its
    95% interval, the log-likelihood ratio and its bounds, the verdict), the batches played and in
    flight, and Wald's estimate of the deals the test takes on average (at the preset's measured
    spread, or the one seen so far)."""

    match: Match
    test: SprtResult
    batches_done: int
    batches_in_flight: int
    expected_deals: float | None


def match_progress(*, match: Match) -> MatchProgress:
    """The progress of ``match``.

    No query for a match of :func:`match_list` (its batches are counted there), one for
    another."""
    done = getattr(match, "batches_done", None)
    flight = getattr(match, "batches_in_flight", None)
    if done is None or flight is None:
        counts = MatchBatch.objects.filter(match=match).aggregate(
            done=Count("pk", filter=Q(status=MatchBatch.Status.DONE)),
            flight=Count("pk", filter=Q(status__in=_IN_FLIGHT)),
        )
        done, flight = counts["done"], counts["flight"]
    test = sprt_from_sums(
        deals=match.deals,
        total=match.total,
        total_squares=match.total_squares,
        d0=match.d0,
        d1=match.d1,
        alpha=match.alpha,
        beta=match.beta,
        max_deals=match.max_deals,
    )
    sd = test.sd if test.deals >= MIN_DEALS else None
    if sd is None:
        try:
            sd = preset_spread(match.game, match.preset).paired()
        except ValueError:
            sd = None
    expected = (
        sprt_expected_deals(d0=match.d0, d1=match.d1, sd=sd, alpha=match.alpha, beta=match.beta)
        if sd
        else None
    )
    return MatchProgress(
        match=match,
        test=test,
        batches_done=done,
        batches_in_flight=flight,
        expected_deals=expected,
    )
