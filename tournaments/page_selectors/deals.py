"""A deal's page: the deal as tables, its steps for the viewer (:mod:`tournaments.replay_steps`),
its table's other deals and the duplicate traveller."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import defaultdict
from fractions import Fraction
from typing import Any

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page
from django.db.models import QuerySet
from django.http import Http404
from django.utils.html import format_html
from django.utils.safestring import mark_safe

import games
from games.base import JSON
from games.cards import card_name
from judge.counting import counted_points
from tournaments import scoring, selectors, visibility
from tournaments.models import Deal, Seat, Table, Tournament
from tournaments.page_selectors.common import PAGE_SIZE, paginate
from tournaments.page_selectors.tables import HIDDEN_DEAL, HIDDEN_DUPLICATE_DEAL
from tournaments.page_selectors.tournaments import seat_label
from tournaments.replay_steps import FORMAT, deal_replay_steps

# --- around a deal: its table's other deals, and the duplicate traveller -----------------------


@dataclasses.dataclass(frozen=True, slots=True)
class DealNeighbours:
    """The deals before and after one in its table (ids, or None)."""

    previous: int | None
    next: int | None
    count: int


def deal_neighbours(*, deal: Deal) -> DealNeighbours:
    """The previous and next deal of ``deal``'s table, and how many deals the table has."""
    ids = list(
        Deal.objects.filter(table_id=deal.table_id).order_by("index").values_list("pk", "index")
    )
    previous = [pk for pk, index in ids if index < deal.index]
    following = [pk for pk, index in ids if index > deal.index]
    return DealNeighbours(
        previous=previous[-1] if previous else None,
        next=following[0] if following else None,
        count=len(ids),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TravellerCell:
    """One seat of one table on a duplicate deal."""

    bot: str
    points: int
    matchpoints: str  # "1½"


@dataclasses.dataclass(frozen=True, slots=True)
class TravellerRow:
    """One table's result on a duplicate deal, seat by seat."""

    deal_id: int
    table_number: int
    cells: list[TravellerCell]
    current: bool


def _halves(value: Fraction) -> str:
    """Matchpoints as people write them.

    >>> _halves(Fraction(3, 2)), _halves(Fraction(1, 2)), _halves(Fraction(2))
    ('1½', '½', '2')
    """
    whole = int(value)
    rest = value - whole
    if rest == Fraction(1, 2):
        return f"{whole or ''}½"
    return str(whole) if not rest else f"{float(value):.2f}"


def _duplicate_deals(deal: Deal) -> QuerySet[Deal]:
    return (
        Deal.objects.filter(
            visibility.tables_shown_q(prefix="table__"),
            table__round_id=deal.table.round_id,
            index=deal.index,
            seed=deal.seed,
        )
        .select_related("table")
        .only("pk", "points", "table_id", "table__number")
        .order_by("table__number")
    )


#: Tables of a traveller on one page of the deal's (``?traveller=2``), as the standings'.
TRAVELLER_PAGE_SIZE = PAGE_SIZE


@dataclasses.dataclass(frozen=True, slots=True)
class Traveller:
    """One page of a deal's traveller: its rows and the page (of all the round's tables)."""

    rows: list[TravellerRow]
    page: Page


def deal_traveller(
    *, deal: Deal, lower_is_better: bool, page: str | int | None = None
) -> Traveller | None:
    """The duplicate "traveller" of ``deal``: every table of its round that played the same
    cards (same deal seed and index), with each seat's bot, points and matchpoints on this deal
    (:func:`scoring.duplicate_matchpoints`), :data:`TRAVELLER_PAGE_SIZE` tables a page: page
    ``page``, or without one the page of ``deal``'s own table. None unless the tournament is
    duplicate; only tables whose play may be shown (:func:`visibility.tables_shown_q`: the
    whole round is finished). The matchpoints compare every table of the round (their points
    are read for all, their seats for the page's only) as they count (a seat replaced by this
    deal forfeits it: judge.counting). Four queries."""
    if not deal.table.tournament.duplicate:
        return None
    deals = list(_duplicate_deals(deal))
    if len(deals) < 2:
        return None
    # As they count: a seat replaced by this deal forfeits it (judge.counting).
    replaced: dict[int, dict[int, int | None]] = defaultdict(dict)
    for table_id, position, start in Seat.objects.filter(
        table_id__in=[d.table_id for d in deals], replaced_deal__lte=deal.index
    ).values_list("table_id", "position", "replaced_deal"):
        replaced[table_id][position] = start
    counted = [
        counted_points(
            [list(d.points)],
            [replaced[d.table_id].get(p) for p in range(len(d.points))],
            lower_is_better=lower_is_better,
        )[0]
        for d in deals
    ]
    points = [[c] for c in counted]
    try:
        matchpoints = scoring.duplicate_matchpoints(points, lower_is_better=lower_is_better)
    except scoring.FormatError:
        matchpoints = [[Fraction(0)] * len(d.points) for d in deals]
    if page is None:
        mine = next((i for i, d in enumerate(deals) if d.pk == deal.pk), 0)
        page = mine // TRAVELLER_PAGE_SIZE + 1
    one_page = paginate(range(len(deals)), page, TRAVELLER_PAGE_SIZE)
    shown = list(one_page.object_list)
    seats: dict[int, list[str]] = {}
    for seat in (
        Seat.objects.filter(table_id__in=[deals[i].table_id for i in shown])
        .select_related("entry__version__bot")
        .defer("entry__version__content", "log")
        .order_by("table_id", "position")
    ):
        seats.setdefault(seat.table_id, []).append(seat_label(seat))
    rows = [
        TravellerRow(
            deal_id=deals[i].pk,
            table_number=deals[i].table.number,
            cells=[
                TravellerCell(bot=bot, points=p, matchpoints=_halves(mp))
                for bot, p, mp in zip(
                    seats.get(deals[i].table_id, []), counted[i], matchpoints[i], strict=False
                )
            ],
            current=deals[i].pk == deal.pk,
        )
        for i in shown
    ]
    return Traveller(rows=rows, page=one_page)


# --- the deal page -----------------------------------------------------------------------------

# What Django's json_script escapes: the JSON text cannot close its <script> element.
_SCRIPT_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}
_SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
_SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
_RANK_SHOWN = {"T": "10"}


@dataclasses.dataclass(frozen=True, slots=True)
class CardView:
    """A card as a page draws it: its name (``"QS"``), rank shown, suit letter, symbol and
    the suit in words."""

    name: str
    rank: str
    suit: str
    symbol: str
    suit_word: str

    def __html__(self) -> str:
        """The card as the page writes it (``{{ card }}`` in a template): the rank, the suit's
        symbol in its colour, the suit in words for screen readers. The script (replay.js)
        draws the same markup."""
        return format_html(
            '<span class="pcard s{}">{}<span aria-hidden="true">{}</span>'
            '<span class="visually-hidden"> of {}</span></span>',
            self.suit,
            self.rank,
            self.symbol,
            self.suit_word,
        )

    __str__ = __html__  # Django's templates call str() before they escape


def card_view(name: object) -> CardView | None:
    """How a page shows a card name (None for anything that is not one).

    >>> card_view("TH")
    CardView(name='TH', rank='10', suit='H', symbol='♥', suit_word='hearts')
    """
    if not isinstance(name, str) or len(name) != 2 or name[1] not in _SUIT_SYMBOLS:
        return None
    rank = _RANK_SHOWN.get(name[0], name[0])
    suit = name[1]
    return CardView(name, rank, suit, _SUIT_SYMBOLS[suit], _SUIT_WORDS[suit])


def _cards(names: object) -> list[CardView]:
    if not isinstance(names, list):
        return []
    return [c for c in (card_view(n) for n in names) if c is not None]


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRow:
    position: int
    bot: str
    points: int | None
    dealt: list[CardView]
    dutch_dealt: list[CardView]
    takeover: str = ""  # "built-in heuristic (for Bot v1) from step 21", after a crash


@dataclasses.dataclass(frozen=True, slots=True)
class PassRow:
    giver: str
    receiver: str
    cards: list[CardView]


@dataclasses.dataclass(frozen=True, slots=True)
class TrickRow:
    number: int
    leader: str
    by_seat: list[CardView | None]  # the card each seat played, in seat order
    winner: str
    points: int


@dataclasses.dataclass(frozen=True, slots=True)
class DecisionRow:
    step: int
    seat: str
    text: str
    seconds: float
    fault: str


#: Steps a deal page carries: a deal with more (the longest Dutch rounds have tens of
#: thousands: ten players, a turn cap of 200, nobody calling) is sent a window of its steps
#: at a time, the script loading the others when it goes there (:func:`deal_steps_window`),
#: so that the page stays well under 100 KB compressed.
STEP_WINDOW = 1000


@dataclasses.dataclass(frozen=True, slots=True)
class StepWindow:
    """A window of a deal's steps: its number (from 0) and its first and last steps."""

    number: int
    first: int
    last: int


def step_windows(total: int) -> list[StepWindow]:
    """The windows of a deal whose last step is ``total``.

    >>> step_windows(1500)
    [StepWindow(number=0, first=0, last=999), StepWindow(number=1, first=1000, last=1500)]
    """
    return [
        StepWindow(number=w, first=w * STEP_WINDOW, last=min(total, (w + 1) * STEP_WINDOW - 1))
        for w in range(total // STEP_WINDOW + 1)
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class ReplayPage:
    """Everything the deal page shows, worked out before the template runs."""

    deal: Deal
    table: Table
    tournament: Tournament
    game: str
    preset: str
    static: dict[str, JSON]
    seats: list[SeatRow]
    passes: list[PassRow]
    tricks: list[TrickRow]
    decisions: list[DecisionRow]
    leftover: list[CardView]  # Hearts: the reserve or the stock as dealt
    first_discard: CardView | None  # Dutch: the card that started the discard pile
    moon: str | None
    dutch_end: dict[str, JSON]
    neighbours: DealNeighbours
    traveller: Traveller | None
    steps_script: str  # the window's steps as JSON, escaped for a <script> element
    step_count: int  # the number of the last step
    windows: list[StepWindow]  # one unless the deal has more than STEP_WINDOW steps
    window: StepWindow  # the one the page carries


def _deal_for_page(deal_id: int, user: Any) -> Deal:
    """The deal, as the API answers for it (:mod:`tournaments.visibility` decides): Http404 if
    there is none or its tournament is one ``user`` may not see (a draft), PermissionDenied
    with the reason while its play is hidden."""
    try:
        deal = (
            Deal.objects.select_related("table__round", "table__tournament")
            .defer("log", "record", "passes")
            .get(pk=deal_id)
        )
    except Deal.DoesNotExist:
        raise Http404("no such deal") from None
    table = deal.table
    if not visibility.tournament_shown(user=user, tournament=table.tournament):
        raise Http404("no such deal")
    if not visibility.deal_shown(user=user, deal=deal):
        duplicate = table.tournament.duplicate and table.status == Table.Status.DONE
        raise PermissionDenied(HIDDEN_DUPLICATE_DEAL if duplicate else HIDDEN_DEAL)
    return deal


def _replay_text(deal: Deal) -> str:
    """The deal's replay as the API sends it: the one stored when its table was recorded."""
    stored = selectors.deal_replay_stored(deal_id=deal.pk)
    if stored is not None and stored.document:
        return stored.document
    return selectors.deal_replay_document(deal_id=deal.pk)


def deal_steps_json(*, replay_text: str, window: int = 0) -> str:
    """:func:`deal_replay_steps` of a recorded deal's replay (its JSON text) as JSON text, the
    steps of window ``window`` (of :data:`STEP_WINDOW` steps), computed once and cached under
    the replay's digest (a recorded deal never changes; a long Dutch round takes the engine
    a few tenths of a second to replay a window step by step)."""
    digest = hashlib.sha256(replay_text.encode()).hexdigest()
    key = f"replay-steps:{FORMAT}:{STEP_WINDOW}:{digest}:{window}"
    text = cache.get(key)
    if not isinstance(text, str):
        steps = deal_replay_steps(
            replay=json.loads(replay_text), first=window * STEP_WINDOW, count=STEP_WINDOW
        )
        steps["window"] = STEP_WINDOW
        text = json.dumps(steps, ensure_ascii=False, separators=(",", ":"))
        cache.set(key, text, timeout=None)
    return text


def _window_of(replay: dict[str, Any], step: str | int | None) -> tuple[int, list[StepWindow]]:
    log = replay.get("log") or {}
    total = len(log.get("actions") or []) if isinstance(log, dict) else 0
    windows = step_windows(total)
    try:
        asked = int(step) if step is not None else 0
    except (TypeError, ValueError):
        asked = 0
    return min(max(asked, 0) // STEP_WINDOW, len(windows) - 1), windows


def deal_steps_window(*, deal_id: int, user: Any, window: int) -> str:
    """The steps of one window of a deal (:func:`deal_steps_json`), for the page's script when
    it goes to a step outside the window it has: the deal page's rule (404, or 403 while
    hidden), and 404 for a window past the end."""
    deal = _deal_for_page(deal_id, user)
    replay_text = _replay_text(deal)
    _, windows = _window_of(json.loads(replay_text), None)
    if not 0 <= window < len(windows):
        raise Http404("no such window of steps")
    return deal_steps_json(replay_text=replay_text, window=window)


def deal_replay_page(
    *,
    deal_id: int,
    user: Any,
    step: str | int | None = None,
    traveller_page: str | int | None = None,
) -> ReplayPage:
    """The deal page of ``deal_id``: Http404 if there is no such deal, PermissionDenied (with
    the reason) while it is hidden (the API's rule), else what the page shows, with the
    window of steps that holds ``step`` (the first one without) and the page
    ``traveller_page`` of its traveller (:func:`deal_traveller`)."""
    deal = _deal_for_page(deal_id, user)
    table = deal.table
    replay_text = _replay_text(deal)
    replay = json.loads(replay_text)
    window, windows = _window_of(replay, step)
    steps_text = deal_steps_json(replay_text=replay_text, window=window)
    steps = json.loads(steps_text)
    names: list[str] = steps["seats"]
    players = len(names)
    game = steps["game"]
    record = replay.get("record") or {}
    points = replay.get("points") or []
    dealt = record.get("hands") or []
    takeovers = {
        t["seat"]: f"{t['bot']} from step {t['step']}" for t in steps.get("takeovers") or []
    }
    seats = []
    for s in range(players):
        hand = dealt[s] if s < len(dealt) else []
        seats.append(
            SeatRow(
                position=s,
                bot=names[s],
                points=points[s] if s < len(points) else None,
                dealt=_cards(hand) if game != "dutch" else [],
                dutch_dealt=[c for c in (card_view(card_name(i % 52)) for i in hand) if c]
                if game == "dutch"
                else [],
                takeover=takeovers.get(s, ""),
            )
        )
    passes = []
    pass_to = steps["static"].get("pass_to") or []
    for seat, action in (replay.get("log") or {}).get("actions") or []:
        if isinstance(action, list) and isinstance(pass_to[seat], int):
            passes.append(PassRow(names[seat], names[pass_to[seat]], _cards(action)))
    tricks = []
    for number, trick in enumerate(steps["tricks"], start=1):
        by_seat: list[CardView | None] = [None] * players
        for k, name in enumerate(trick["cards"]):
            by_seat[(trick["leader"] + k) % players] = card_view(name)
        tricks.append(
            TrickRow(
                number, names[trick["leader"]], by_seat, names[trick["winner"]], trick["points"]
            )
        )
    decisions = [
        DecisionRow(
            step=k,
            seat=entry.get("by") or names[entry["s"]],
            text=entry["t"],
            seconds=entry.get("sec", 0.0),
            fault=entry.get("f", ""),
        )
        for k, entry in enumerate(steps["steps"], start=steps["first"])
        if k > 0  # step 0 is the deal as dealt, no decision
    ]
    final = steps["end"]
    moon = final.get("moon")
    static = steps["static"]
    leftover = _cards(static.get("reserve") or static.get("stock") or [])
    first = None
    if game == "dutch":
        stock = record.get("stock") or []
        first = card_view(card_name(stock[0] % 52)) if stock else None
    dutch_end: dict[str, JSON] = {}
    if game == "dutch":
        caller = final.get("caller")
        dutch_end = {
            "caller": names[caller] if isinstance(caller, int) else None,
            "turns": final.get("turns"),
            "sums": final.get("sums"),
        }
    lower = getattr(games.game_class(game), "lower_is_better", True)
    return ReplayPage(
        deal=deal,
        table=table,
        tournament=table.tournament,
        game=game,
        preset=str(replay.get("preset", "")),
        static=static,
        seats=seats,
        passes=passes,
        tricks=tricks,
        decisions=decisions,
        leftover=leftover,
        first_discard=first,
        moon=names[moon] if isinstance(moon, int) else None,
        dutch_end=dutch_end,
        neighbours=deal_neighbours(deal=deal),
        traveller=deal_traveller(deal=deal, lower_is_better=lower, page=traveller_page),
        steps_script=mark_safe(steps_text.translate(_SCRIPT_ESCAPES)),
        step_count=steps["total"],
        windows=windows,
        window=windows[window],
    )
