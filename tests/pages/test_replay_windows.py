"""The longest deals the engine allows, on the deal page: a Dutch round of ten players with ten
slots each and a turn cap of 200 that nobody calls (17,000 to 23,000 decisions, up to 4.4 MB
of steps) comes a window of steps at a time (page_selectors.STEP_WINDOW), and every window of
it is under 100 KB transferred with the page's own script and stylesheets.

The round is really dealt and recorded (a table of ten built-in bots); its log is then replaced
by the engine's play of the same cards by seats that never call, so that the page re-plays
the longest round the rules allow.
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import Client

import games
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import page_selectors, replay_steps, selectors, services
from tournaments.models import Deal, DealReplay, Tournament

WORST = {"players": 10, "slots": 10, "turn_cap": 200}
ASSETS = ("/static/replay/replay.js", "/static/replay/replay.css", "/static/tapis.css")
BUDGET = 100_000


def never_calling(document: dict[str, Any], *, seed: int = 1) -> dict[str, Any]:
    """``document`` (a deal's replay as the API gives it) played again from its own cards by
    seats that take a random legal action but never call Dutch: the round runs to its turn
    limit."""
    game = games.load("dutch", document["preset"], **document["options"])
    state = game.deal_from_record(document["index"], document["record"])
    rng = random.Random(seed)
    actions = []
    while not state.is_terminal():
        choices = [a for a in state.legal_actions() if a != "dutch"]
        action = rng.choice(choices)
        actions.append([state.current_player(), action])
        state.apply_action(action)
    return {
        **document,
        "log": {**document["log"], "actions": actions},
        "decisions": [
            {"step": k, "seat": seat, "action": action, "seconds": 0.013 * (k % 7), "fault": ""}
            for k, (seat, action) in enumerate(actions)
        ],
        "points": list(state.points()),
        "tricks": [],
        "faults": [],
    }


@pytest.fixture(scope="module")
def longest(django_db_setup: None, django_db_blocker: Any) -> Iterator[Deal]:
    """The longest Dutch round: a recorded deal whose stored replay is the never-calling play
    of its cards. One for the module, rolled back at its end."""
    with django_db_blocker.unblock(), transaction.atomic():
        tournament = make_tournament(
            name="Dutch of ten",
            game="dutch",
            preset=None,
            rounds=1,
            deals_per_table=1,
            table_size=10,
            options=WORST,
        )
        enter_builtins(tournament, ["random"] * 10)
        services.tournament_start(tournament=tournament)
        services.tournament_run_here(tournament=tournament)
        tournament.refresh_from_db()
        assert tournament.status == Tournament.Status.FINISHED
        deal = Deal.objects.get(table__tournament=tournament)
        document = never_calling(json.loads(selectors.deal_replay_document(deal_id=deal.pk)))
        DealReplay.objects.update_or_create(
            deal=deal, defaults={"document": json.dumps(document, separators=(",", ":"))}
        )
        cache.clear()
        yield deal
        transaction.set_rollback(True)


@pytest.fixture
def deal(longest: Deal, db: None) -> Deal:
    return longest


def transferred(client: Client, url: str) -> tuple[int, bytes]:
    """What ``url`` sends a browser that accepts gzip: its size, and its body uncompressed."""
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200, url
    assert response["Content-Encoding"] == "gzip", url
    return len(response.content), gzip.decompress(response.content)


def assets_size(client: Client) -> int:
    total = 0
    for path in ASSETS:
        asset = client.get(path, HTTP_ACCEPT_ENCODING="gzip")
        assert asset.status_code == 200
        total += len(b"".join(asset.streaming_content))  # type: ignore[attr-defined]
    return total


def total_steps(deal: Deal) -> int:
    document = json.loads(DealReplay.objects.get(deal=deal).document)
    return len(document["log"]["actions"])


def test_the_longest_round_is_what_the_rules_allow(deal: Deal) -> None:
    total = total_steps(deal)
    # Ten players, 200 turns each: 2,000 turns of a draw, a placement and a claim round after
    # each card put down (how many seats are asked before one claims depends on the cards:
    # 17,000 to 23,000 decisions in all).
    assert total > 10 * page_selectors.STEP_WINDOW
    assert len(page_selectors.step_windows(total)) == total // page_selectors.STEP_WINDOW + 1


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_each_window_of_the_page_is_under_100_kb_transferred(
    deal: Deal, client: Client, where: str
) -> None:
    """The page as served (the window of the step asked for) with its script and stylesheets,
    compressed as they are sent; and the window's steps as the script loads them."""
    total = total_steps(deal)
    step = {"first": 0, "middle": total // 2, "last": total}[where]
    size, body = transferred(client, f"/deals/{deal.pk}/?step={step}")
    html = body.decode()
    page_total = size + assets_size(client)
    assert page_total < BUDGET, page_total
    # The page carries the window of that step, and says so; its table of decisions too.
    window = step // page_selectors.STEP_WINDOW
    first = window * page_selectors.STEP_WINDOW
    data = json.loads(html.split('id="replay-steps">', 1)[1].split("</script>", 1)[0])
    assert (data["first"], data["total"]) == (first, total)
    assert len(data["steps"]) == min(page_selectors.STEP_WINDOW, total - first + 1)
    assert 'aria-label="Windows of steps"' in html
    assert f'id="step-{max(step, 1)}"' in html
    assert f'id="step-{first + page_selectors.STEP_WINDOW}"' not in html
    # The same window as the script loads it.
    loaded_size, loaded = transferred(client, f"/deals/{deal.pk}/steps/{window}/")
    assert loaded_size < BUDGET
    assert json.loads(loaded) == data


def test_a_window_past_the_end_is_not_found(deal: Deal, client: Client) -> None:
    windows = len(page_selectors.step_windows(total_steps(deal)))
    assert client.get(f"/deals/{deal.pk}/steps/{windows}/").status_code == 404


def test_windows_rebuild_the_same_table_at_every_step_as_the_whole_deal() -> None:
    """The engine's steps by windows (each starting with the whole table) give, step by step,
    the table the whole deal's steps give (a four-player round to its turn limit: about 2,000
    steps)."""
    game = games.load("dutch", None)
    state = game.new_deal(0, 7)
    document: dict[str, Any] = {
        "game": "dutch",
        "preset": game.preset,
        "options": {},
        "index": 0,
        "record": state.deal_record(),
        "log": {"actions": []},
        "seats": [{"position": s, "bot": f"bot {s}"} for s in range(game.players)],
    }
    document = never_calling(document, seed=3)
    whole = replay_steps.deal_replay_steps(replay=document)
    total = whole["total"]
    assert total == len(whole["steps"]) - 1 > 1500

    def states(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out, current = [], {}
        for step in steps:
            current = {**current, **step["d"]}
            out.append(current)
        return out

    expected = states(whole["steps"])
    size = 700
    for first in range(0, total + 1, size):
        window = replay_steps.deal_replay_steps(replay=document, first=first, count=size)
        assert window["first"] == first
        assert window["total"] == total
        assert window["end"] == expected[-1]
        got = states(window["steps"])
        assert got == expected[first : first + size]
        # Besides the whole table in its first step, each step is the whole deal's.
        for k, step in enumerate(window["steps"][1:], start=first + 1):
            assert step == whole["steps"][k]
        assert {key: v for key, v in window["steps"][0].items() if key != "d"} == {
            key: v for key, v in whole["steps"][first].items() if key != "d"
        }
