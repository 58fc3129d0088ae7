"""The deal page without a browser: the steps the engine writes, the page as served (the whole
deal as tables, which is what a reader without JavaScript gets), what it hides, the duplicate
traveller, and its size.

Deals are recorded by playing real tables with built-in bots through the judge, in this process
(``services.tournament_run_here``): Hearts at 2 (the stock), 3 (the reserve) and 4 seats, a
Jeu du Roi deal, a Dutch round, a duplicate Hearts round, and a tournament still running.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

import games
from tournaments import page_selectors, replay_steps, selectors, services
from tournaments.models import Bot, Deal, Table, Tournament
from tournaments.tournament_settings import TournamentSettings

BUILTINS = ("heuristic", "lowest", "random", "heuristic", "lowest", "random", "heuristic")


@dataclasses.dataclass
class ReplayWorld:
    """Finished tournaments of each game, a duplicate one and a running one."""

    hearts: Tournament
    hearts3: Tournament
    hearts2: Tournament
    roi: Tournament
    dutch: Tournament
    duplicate: Tournament
    running: Tournament

    def deal(self, tournament: Tournament, index: int = 0) -> Deal:
        deal = (
            Deal.objects.filter(table__tournament=tournament, index=index)
            .order_by("table__number")
            .first()
        )
        assert deal is not None
        return deal


def _cup(
    organiser: User,
    name: str,
    game: str,
    entries: int,
    *,
    run: bool = True,
    bot_names: Sequence[str] = (),
    **settings: Any,
) -> Tournament:
    settings.setdefault("rounds", 1)
    settings.setdefault("deals_per_table", 2)
    tournament = services.tournament_create(
        organiser=organiser, settings=TournamentSettings(name=name, game=game, **settings)
    )
    services.tournament_open(tournament=tournament)
    for i in range(entries):
        owner = User.objects.create_user(username=f"{name}-{i}".replace(" ", "-").lower())
        # One bot's name tries to close the page's script element: the steps must stay data.
        bot_name = f"{BUILTINS[i]}{i}" if i else "</script><b>x</b>"
        if i < len(bot_names):
            bot_name = bot_names[i]
        bot: Bot = services.bot_create(owner=owner, name=bot_name, game=game)
        version = services.bot_version_create(bot=bot, builtin=BUILTINS[i])
        services.entry_register(tournament=tournament, version=version, user=owner)
    services.tournament_start(tournament=tournament)
    if run:
        _play(tournament)
    tournament.refresh_from_db()
    return tournament


def _play(tournament: Tournament) -> None:
    """Play the tournament's tables here. A Celery worker left running by another test of the
    session (``live_worker``) may have taken some from the queue: wait for it to record them."""
    deadline = time.monotonic() + 300
    while True:
        services.tournament_run_here(tournament=tournament)
        tournament.refresh_from_db()
        if tournament.status != Tournament.Status.RUNNING or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    tables = list(Table.objects.filter(tournament=tournament).values("status", "error"))
    assert tournament.status == Tournament.Status.FINISHED, (tournament.status, tables)


def build_replay_world() -> ReplayWorld:
    organiser = User.objects.create_user(username="organiser")
    return ReplayWorld(
        hearts=_cup(organiser, "Hearts cup", "hearts", 4),
        hearts3=_cup(
            organiser,
            "Hearts three",
            "hearts",
            3,
            table_size=3,
            options={"players": 3, "pass_schedule": "left-right-none"},
        ),
        hearts2=_cup(
            organiser,
            "Hearts two",
            "hearts",
            2,
            table_size=2,
            options={"players": 2, "leftover_cards": "stock", "pass_schedule": "left-right-none"},
        ),
        roi=_cup(organiser, "Roi cup", "roi", 4, deals_per_table=10),
        dutch=_cup(organiser, "Dutch cup", "dutch", 4),
        duplicate=_cup(organiser, "Duplicate cup", "hearts", 5, duplicate=True),
        running=_cup(organiser, "Running cup", "hearts", 4, run=False),
    )


@pytest.fixture(scope="module")
def replay_world(django_db_setup: None, django_db_blocker: Any) -> Iterator[ReplayWorld]:
    """One world for the module, rolled back at its end; each test runs in a savepoint."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield build_replay_world()
        transaction.set_rollback(True)


@pytest.fixture
def world(replay_world: ReplayWorld, db: None) -> Iterator[ReplayWorld]:
    cache.clear()  # each test computes the steps it shows (they are cached by replay)
    yield replay_world
    cache.clear()


def _replay(deal: Deal) -> dict[str, Any]:
    document = json.loads(selectors.deal_replay_document(deal_id=deal.pk))
    assert isinstance(document, dict)
    return document


def _states(steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The table at every step, rebuilt from the changes as the page's script does."""
    states: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for step in steps["steps"]:
        current = {**current, **step["d"]}
        states.append(current)
    return states


# --- the steps are the engine's ----------------------------------------------------------------


@pytest.mark.parametrize("which", ["hearts", "hearts3", "hearts2", "roi", "dutch"])
def test_every_step_is_the_engines_table(world: ReplayWorld, which: str) -> None:
    """At every step the rebuilt table holds what the engine says each seat holds and sees."""
    tournament = getattr(world, which)
    deal = world.deal(tournament, index=1)
    replay = _replay(deal)
    steps = replay_steps.deal_replay_steps(replay=replay)
    states = _states(steps)
    actions = replay["log"]["actions"]
    assert len(states) == len(actions) + 1

    game = games.load(replay["game"], replay["preset"], **replay["options"])
    state = game.deal_from_record(replay["index"], replay["record"])
    for k, table in enumerate(states):
        if k:
            state.apply_action(actions[k - 1][1])
            assert steps["steps"][k]["s"] == actions[k - 1][0]
        for seat in range(game.players):
            view = state.observation(seat)
            if which == "dutch":
                for slot, shown in enumerate(view["slots"][seat]):
                    cell = table[f"h{seat}"][slot]
                    if shown is None:
                        assert cell is None
                    else:
                        known = bool(cell[1] >> seat & 1)
                        assert known == isinstance(shown, dict), (k, seat, slot)
                        if known:
                            assert cell[0] == shown["card"]
            else:
                assert table[f"h{seat}"] == view["hand"], (k, seat)
        assert table["act"] == state.current_player()
    assert table["pts"] == state.points() == deal.points
    if which.startswith("hearts"):
        assert table["moon"] == state.summary()["moon"]
        stored = [{k: v for k, v in t.items() if k != "number"} for t in replay["tricks"]]
        assert steps["tricks"] == stored == [t.as_json() for t in state.tricks()]


def test_steps_say_hidden_cards_only_to_who_sees_them(world: ReplayWorld) -> None:
    """A pass names its cards in the full sentence, only their number in the public one; a
    Dutch draw names the drawn card only to the drawer."""
    steps = replay_steps.deal_replay_steps(replay=_replay(world.deal(world.hearts, index=0)))
    first = steps["steps"][1]
    assert isinstance(first["a"], list)
    assert all(card in first["t"] for card in first["a"])
    assert not any(card in first["tp"] for card in first["a"])
    to = replay_steps.NAME_OPEN + steps["seats"][1] + replay_steps.NAME_CLOSE
    assert first["tp"].endswith(f"passes 3 cards to {to}")

    dutch = replay_steps.deal_replay_steps(replay=_replay(world.deal(world.dutch)))
    draws = [s for s in dutch["steps"][1:] if s["a"] == "draw"]
    assert draws
    for step in draws:
        assert step["tp"].endswith("draws from the stock")
        assert re.search(r"draws [2-9TJQKA][SHDC] from the stock$", step["t"])


# Bots named like cards ("10H" is not a code: the ten is T; it must stay text all the same).
CARD_NAMES = ("QS", "TH", "AC", "10H")


def card_named_cup() -> Tournament:
    organiser = User.objects.get(username="organiser")
    return _cup(organiser, "Card names", "hearts", 4, deals_per_table=1, bot_names=CARD_NAMES)


def cards_of(action: Any) -> int:
    """The cards a Hearts step's sentence names: a pass's, or the one played."""
    return len(action) if isinstance(action, list) else 1


def test_a_bot_named_like_a_card_is_never_drawn_as_one(world: ReplayWorld, client: Client) -> None:
    """A seat's name stands isolated in every sentence, and the page draws the cards of a
    sentence, never its names: each row of the decisions has exactly its step's cards."""
    deal = world.deal(card_named_cup())
    steps = replay_steps.deal_replay_steps(replay=_replay(deal))
    names = steps["seats"]
    assert sorted(n.split()[0] for n in names) == sorted(CARD_NAMES)
    isolated = re.compile(f"{replay_steps.NAME_OPEN}(.*?){replay_steps.NAME_CLOSE}")
    for step in steps["steps"][1:]:
        assert set(isolated.findall(step["t"])) <= set(names)
        assert not any(name in isolated.sub("", step["t"]) for name in names), step["t"]

    html = client.get(f"/deals/{deal.pk}/").content.decode()
    rows = re.findall(r'<tr id="step-(\d+)"[^>]*>(?:<td.*?</td>){2}<td>(.*?)</td>', html, re.S)
    actions = deal.log["actions"]
    assert len(rows) == len(actions)
    for number, text in rows:
        action = actions[int(number) - 1][1]
        assert text.count('class="pcard') == cards_of(action), text
        for bdi in re.findall(r"<bdi>(.*?)</bdi>", text):
            assert bdi in {str(escape(n)) for n in names}
    for name in names:
        assert f"<bdi>{escape(name)}</bdi>" in html


def test_dutch_steps_point_at_the_slots_they_touch(world: ReplayWorld) -> None:
    steps = replay_steps.deal_replay_steps(replay=_replay(world.deal(world.dutch)))
    slot_actions = 0
    for step in steps["steps"][1:]:
        kind, _, rest = str(step["a"]).partition(":")
        if kind in ("replace", "peek", "claim"):
            slot_actions += 1
            assert [step["s"], int(rest)] in step["hl"], step
        elif kind in ("draw", "take", "discard", "pass", "dutch"):
            assert "hl" not in step, step
    assert slot_actions


def test_after_a_call_each_other_seat_plays_one_last_turn(world: ReplayWorld) -> None:
    replay = _replay(world.deal(world.dutch))
    states = _states(replay_steps.deal_replay_steps(replay=replay))
    calls = [k for k, s in enumerate(states) if s.get("caller") is not None]
    if not calls:  # the round reached its turn limit
        assert all("left" not in s for s in states)
        return
    first = calls[0]
    assert states[first]["left"] == 3  # four seats: the three others
    turns_then = states[first]["turns"]
    for state in states[first:-1]:
        assert state["left"] == 3 - (state["turns"] - turns_then)
    assert states[-1]["left"] == 0
    assert states[-1]["turns"] == turns_then + 3


def test_a_corrupt_log_is_refused_not_replayed(world: ReplayWorld) -> None:
    replay = _replay(world.deal(world.hearts))
    replay["log"]["actions"][5][0] = (replay["log"]["actions"][5][0] + 1) % 4
    with pytest.raises(replay_steps.ReplayError, match="out of turn"):
        replay_steps.deal_replay_steps(replay=replay)


# --- the page without JavaScript ---------------------------------------------------------------


def _page(client: Client, deal: Deal, **params: Any) -> tuple[Any, str]:
    response = client.get(f"/deals/{deal.pk}/", params, HTTP_ACCEPT_ENCODING="gzip")
    body = response.content
    if response.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    return response, body.decode()


def _rows(html: str, table_class: str) -> list[str]:
    match = re.search(rf'<table class="data {table_class}">(.*?)</table>', html, re.S)
    assert match, table_class
    return re.findall(r"<tr[ >].*?</tr>", match.group(1).split("<tbody>")[1], re.S)


def _card_names(fragment: str) -> list[str]:
    """The cards drawn in an HTML fragment, as names ("TH")."""
    pairs = re.findall(r'class="pcard s([SHDC])">(10|[2-9JQKA])<', fragment)
    return [("T" if rank == "10" else rank) + suit for suit, rank in pairs]


def test_the_page_shows_the_whole_hearts_deal_as_tables(world: ReplayWorld, client: Client) -> None:
    deal = world.deal(world.hearts)
    replay = _replay(deal)
    response, html = _page(client, deal)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")

    hands = _rows(html, "hands")
    assert [_card_names(row) for row in hands] == replay["record"]["hands"]
    tricks = _rows(html, "tricks")
    assert len(tricks) == 13
    for row, trick in zip(tricks, replay["tricks"], strict=True):
        cards = _card_names(row)
        leader = trick["leader"]
        # Columns are seats 0..3: the trick's cards from its leader, rotated into seat order.
        assert cards == [trick["cards"][(seat - leader) % 4] for seat in range(4)]
        assert f'<td class="num">{trick["points"]}</td>' in row
    assert "<h2>Passes</h2>" in html
    for seat, action in replay["log"]["actions"][:4]:
        assert sorted(action) == sorted(_card_names(_passes_row(html, seat)))
    # Every decision with its time, linked to its step.
    assert len(re.findall(r'<tr id="step-\d+"', html)) == len(replay["log"]["actions"])
    assert 'href="?step=52"' in html


def _passes_row(html: str, seat: int) -> str:
    block = html.split("<h2>Passes</h2>")[1].split("</table>")[0]
    return re.findall(r"<tr>.*?</tr>", block.split("<tbody>")[1], re.S)[seat]


def test_the_page_of_a_roi_deal_names_its_contract(world: ReplayWorld, client: Client) -> None:
    deal = world.deal(world.roi, index=7)
    _, html = _page(client, deal)
    replay = _replay(deal)
    contract = games.load("roi").contract_of(7)  # type: ignore[attr-defined]
    assert f"<strong>{contract.name}</strong>" in html
    assert "trumps diamonds" in html
    assert len(_rows(html, "tricks")) == 13
    assert replay["record"]["hands"] == [_card_names(r) for r in _rows(html, "hands")]


def test_the_page_of_a_dutch_round_lists_its_turns(world: ReplayWorld, client: Client) -> None:
    deal = world.deal(world.dutch)
    _, html = _page(client, deal)
    replay = _replay(deal)
    assert "Turns: every decision" in html
    assert len(re.findall(r'<tr id="step-\d+"', html)) == len(replay["log"]["actions"])
    dealt = [[games.card_name(c % 52) for c in hand] for hand in replay["record"]["hands"]]
    assert [_card_names(r) for r in _rows(html, "hands")] == dealt
    assert "Tricks</h2>" not in html


def test_the_reserve_and_the_stock_are_shown(world: ReplayWorld, client: Client) -> None:
    _, html = _page(client, world.deal(world.hearts3))
    reserve = _replay(world.deal(world.hearts3))["record"]["reserve"]
    assert "The reserve, face down" in html
    assert len(reserve) == 1
    _, html = _page(client, world.deal(world.hearts2))
    assert "The stock, top first" in html


def test_the_steps_are_data_in_the_page(world: ReplayWorld, client: Client) -> None:
    """The steps are JSON in a script element that a bot's name cannot close."""
    deal = world.deal(world.hearts)
    _, html = _page(client, deal)
    match = re.search(
        r'<script type="application/json" id="replay-steps">(.*?)</script>', html, re.S
    )
    assert match
    steps = json.loads(match.group(1))
    assert steps == {
        **replay_steps.deal_replay_steps(replay=_replay(deal)),
        "window": page_selectors.STEP_WINDOW,
    }
    assert "</script><b>x</b> v1" in steps["seats"]
    assert "<b>x</b>" not in html  # the name is escaped everywhere on the page


def test_previous_and_next_deal_of_the_table(world: ReplayWorld, client: Client) -> None:
    first, second = world.deal(world.hearts, 0), world.deal(world.hearts, 1)
    _, html = _page(client, first)
    assert f'href="/deals/{second.pk}/" rel="next"' in html
    assert 'rel="prev"' not in html
    _, html = _page(client, second)
    assert f'href="/deals/{first.pk}/" rel="prev"' in html


# --- hidden information ------------------------------------------------------------------------


def test_a_deal_of_a_running_table_is_hidden(world: ReplayWorld, client: Client) -> None:
    """The site's 403 page while the table plays, for staff too, as the API answers."""
    table = Table.objects.filter(tournament=world.running).order_by("number").first()
    assert table is not None
    # A deal recorded on a table that is not finished (as if it were being written).
    deal = Deal.objects.create(
        table=table, index=0, record={"hands": []}, points=[0, 0, 0, 0], log={"actions": []}
    )
    staff = User.objects.create_user(username="staff", is_staff=True)
    for who in (None, staff):
        if who is not None:
            client.force_login(who)
        response, html = _page(client, deal)
        assert response.status_code == 403
        assert "this deal is hidden until its table is finished" in html.lower()
        assert "replay-steps" not in html
    api = client.get(f"/api/v1/deals/{deal.pk}/")
    assert api.status_code == 403


def test_a_duplicate_deal_is_hidden_until_its_round_is_over(
    world: ReplayWorld, client: Client
) -> None:
    deal = world.deal(world.duplicate)
    deal.table.round.status = "running"
    deal.table.round.save(update_fields=["status"])
    response, html = _page(client, deal)
    assert response.status_code == 403
    assert "every table of its round is finished" in html
    assert client.get(f"/api/v1/deals/{deal.pk}/").status_code == 403


def test_no_such_deal(world: ReplayWorld, client: Client) -> None:
    assert client.get("/deals/999999999/").status_code == 404


# --- duplicate ---------------------------------------------------------------------------------


def test_the_traveller_compares_every_table_of_the_round(
    world: ReplayWorld, client: Client
) -> None:
    deals = list(
        Deal.objects.filter(table__tournament=world.duplicate, index=1).order_by("table__number")
    )
    assert len(deals) == 2  # five entries: two tables, the second completed by house bots
    assert deals[0].record == deals[1].record
    _, html = _page(client, deals[0])
    section = html.split('id="traveller"')[1].split("</section>")[0]
    rows = re.findall(r"<tr[ >].*?</tr>", section.split("<tbody>")[1], re.S)
    assert len(rows) == 2
    assert 'aria-current="true"' in rows[0]
    assert f'href="/deals/{deals[1].pk}/"' in rows[1]
    for row, deal in zip(rows, deals, strict=True):
        points = re.findall(r"<strong>(-?\d+)</strong> points · ([\d½.]+) MP", row)
        assert [int(p) for p, _ in points] == deal.points
    # Each seat against the same seat of the other table: 1 if better, ½ if equal.
    a, b = deals[0].points, deals[1].points
    first_row_mp = re.findall(r"· ([\d½.]+|½) MP", rows[0])
    expected = ["1" if x < y else "½" if x == y else "0" for x, y in zip(a, b, strict=True)]
    assert first_row_mp == expected
    # A deal of a tournament that is not duplicate has no traveller.
    _, html = _page(client, world.deal(world.hearts))
    assert 'id="traveller"' not in html


def test_the_traveller_comes_a_page_of_tables_at_a_time(
    world: ReplayWorld, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TRAVELLER_PAGE_SIZE tables a page (25; one here, for the two tables of the world):
    without ``?traveller=`` the page of the deal's own table, and the matchpoints still
    compare every table of the round."""
    deals = list(
        Deal.objects.filter(table__tournament=world.duplicate, index=1).order_by("table__number")
    )
    _, whole = _page(client, deals[1])
    every_row = _traveller_rows(whole)
    assert len(every_row) == 2
    monkeypatch.setattr(page_selectors.deals, "TRAVELLER_PAGE_SIZE", 1)

    _, html = _page(client, deals[1])
    rows = _traveller_rows(html)
    assert rows == [every_row[1]]  # its own table's page: page 2, MP against both tables
    assert 'aria-current="true"' in rows[0]
    nav = html.split('aria-label="Pages of the traveller"')[1].split("</nav>")[0]
    assert '<span aria-current="page">2</span>' in nav
    assert 'href="?traveller=1#traveller-title"' in nav

    for asked, expected in (("1", every_row[0]), ("2", every_row[1]), ("9", every_row[1])):
        response = client.get(f"/deals/{deals[1].pk}/?traveller={asked}")
        assert response.status_code == 200
        assert _traveller_rows(response.content.decode()) == [expected], asked


def test_the_travellers_pages_keep_the_moment_of_the_replay(
    world: ReplayWorld, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Page 2 of the traveller reopens the replay at the step and in the view it was in, not
    at the deal as dealt; anything else of the address (not a number) is not written back."""
    deal = Deal.objects.filter(table__tournament=world.duplicate, index=1).order_by(
        "table__number"
    )[1]
    monkeypatch.setattr(page_selectors.deals, "TRAVELLER_PAGE_SIZE", 1)
    _, html = _page(client, deal, step=17, seat=2, traveller=2, x="<b>")
    nav = html.split('aria-label="Pages of the traveller"')[1].split("</nav>")[0]
    assert 'href="?step=17&amp;seat=2&amp;traveller=1#traveller-title"' in nav
    _, html = _page(client, deal, step="1x", seat="-1")
    nav = html.split('aria-label="Pages of the traveller"')[1].split("</nav>")[0]
    assert 'href="?traveller=1#traveller-title"' in nav


def _traveller_rows(html: str) -> list[str]:
    section = html.split('id="traveller"')[1].split("</section>")[0]
    return re.findall(r"<tr[ >].*?</tr>", section.split("<tbody>")[1], re.S)


# --- size and queries --------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["hearts", "roi", "dutch"])
def test_the_page_is_under_100_kb_transferred(
    world: ReplayWorld, client: Client, which: str
) -> None:
    """The page and its own script and stylesheet, compressed as they are served."""
    response, _ = _page(client, world.deal(getattr(world, which)))
    assert response["Content-Encoding"] == "gzip"
    total = len(response.content)
    for path in ("/static/replay/replay.js", "/static/replay/replay.css", "/static/tapis.css"):
        asset = client.get(path, HTTP_ACCEPT_ENCODING="gzip")
        assert asset.status_code == 200
        total += len(b"".join(asset.streaming_content))  # type: ignore[attr-defined]
    assert total < 100_000, total


def test_queries_do_not_grow_with_the_deal(world: ReplayWorld, client: Client) -> None:
    from django.db import connection

    counts = []
    for deal in (world.deal(world.hearts), world.deal(world.dutch), world.deal(world.duplicate)):
        client.get(f"/deals/{deal.pk}/")  # the steps are cached after the first view
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/deals/{deal.pk}/").status_code == 200
        counts.append(len(queries))
    assert max(counts) <= 8, counts
