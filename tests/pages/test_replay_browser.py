"""The replay viewer in a real browser (Debian's Chromium through Playwright, on the live server,
against PostgreSQL): what it draws at each step is compared with the engine replaying the deal
here, seat by seat.

Deals are recorded by real tables of built-in bots played in this process (one with an uploaded
bot that plays an illegal card, run by the judge in its sandbox, for the faults).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

import games
from tests.pages.conftest import axe_violations
from tests.pages.test_replay_page import CARD_NAMES, _cup, _play, card_named_cup, cards_of
from tests.tournaments.factories import BotFactory, file_version
from tournaments import page_selectors, services
from tournaments.models import Deal, Tournament
from tournaments.tournament_settings import TournamentSettings

pytestmark = pytest.mark.slow


# --- what the engine says -----------------------------------------------------------------------


def _deal(tournament: Tournament, index: int = 0) -> Deal:
    deal = Deal.objects.filter(table__tournament=tournament, index=index).first()
    assert deal is not None
    return deal


def _engine_states(deal: Deal) -> tuple[Any, list[Any]]:
    """The game and the deal's state after each of its actions (state 0: as dealt)."""
    header = deal.table.result["replay_header"]
    game = games.load(header["game"], header["preset"], **header["options"])
    state = game.deal_from_record(deal.index, deal.record)
    states = [state.clone()]
    for _, action in deal.log["actions"]:
        state.apply_action(action)
        states.append(state.clone())
    return game, states


def _trick_shown(before: Any, after: Any) -> dict[int, str]:
    """The cards the table should show in its middle, by seat: the trick in play, or the one
    this step finished."""
    if len(after.tricks()) > len(before.tricks()):
        trick = after.tricks()[-1]
        leader, cards = trick.leader, list(trick.cards)
    else:
        view = after.observation(0)["trick"]
        leader, cards = view["leader"], view["cards"]
    n = after.game.players
    return {(leader + k) % n: card for k, card in enumerate(cards)}


# --- what the page draws ------------------------------------------------------------------------

_HANDS = """() => Object.fromEntries([...document.querySelectorAll('[data-felt] [data-seat]')]
  .map(seat => [seat.dataset.seat, [...seat.querySelectorAll('[data-hand] [data-card]')]
    .map(card => card.dataset.card)]))"""
_SLOTS = """() => Object.fromEntries([...document.querySelectorAll('[data-felt] [data-seat]')]
  .map(seat => [seat.dataset.seat, [...seat.querySelectorAll('[data-hand] [data-slot]')]
    .map(slot => { const card = slot.querySelector('[data-card]');
                   return card ? card.dataset.card : null; })]))"""
_TRICK = """() => Object.fromEntries([...document.querySelectorAll('[data-trick] [data-played-by]')]
  .map(spot => [spot.dataset.playedBy, spot.querySelector('[data-card]').dataset.card]))"""


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#viewer[data-ready]")


def _step(page: Any) -> int:
    return int(page.locator("[data-felt]").get_attribute("data-step"))


def _hands(page: Any) -> dict[int, list[str]]:
    return {int(seat): cards for seat, cards in page.evaluate(_HANDS).items()}


def _check_trick_step(page: Any, states: list[Any], k: int) -> None:
    assert _step(page) == k
    state = states[k]
    hands = _hands(page)
    for seat in range(state.game.players):
        assert hands[seat] == state.observation(seat)["hand"], (k, seat)
    if k:
        shown = {int(s): c for s, c in page.evaluate(_TRICK).items()}
        assert shown == _trick_shown(states[k - 1], state), k


def _walk_whole_deal(page: Any, states: list[Any]) -> None:
    """Forward step by step to the end, then back to the start, checking every step."""
    last = len(states) - 1
    _check_trick_step(page, states, 0)
    for k in range(1, last + 1):
        page.get_by_role("button", name="Next step", exact=True).click()
        _check_trick_step(page, states, k)
    assert page.get_by_role("button", name="Next step", exact=True).is_visible()
    for k in range(last - 1, -1, -1):
        page.get_by_role("button", name="Previous step", exact=True).click()
        _check_trick_step(page, states, k)


# --- the tests ------------------------------------------------------------------------------------


def _organiser() -> User:
    return User.objects.create_user(username="organiser")


def test_a_whole_hearts_deal_forward_and_back(page: Any, console_errors: list[str]) -> None:
    cup = _cup(_organiser(), "Hearts cup", "hearts", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    _open(page, f"/deals/{deal.pk}/")
    _walk_whole_deal(page, states)
    # The passes are steps of their own: who gave what to whom.
    page.keyboard.press("ArrowRight")
    first_pass = deal.log["actions"][0][1]
    text = page.locator("[data-step-text]").inner_text()
    assert re.search(r"passes .* to ", text, re.S)
    assert [c for c in page.evaluate(_HANDS)["0"] if c in first_pass] == []  # set aside
    page.keyboard.press("End")
    points = page.locator('[data-seat="0"] dd strong').inner_text()
    assert int(points) == deal.points[0]
    assert not axe_violations(page)
    assert not console_errors


def test_a_whole_roi_deal_forward_and_back(page: Any, console_errors: list[str]) -> None:
    cup = _cup(_organiser(), "Roi cup", "roi", 4, deals_per_table=10)
    deal = _deal(cup, index=6)  # trump-clubs in the classic order
    _, states = _engine_states(deal)
    _open(page, f"/deals/{deal.pk}/")
    centre = page.locator("[data-felt] .centre").inner_text()
    assert "trump-clubs" in centre
    assert "clubs" in centre
    _walk_whole_deal(page, states)
    assert not axe_violations(page)
    assert not console_errors


def _dutch_expected(state: Any, viewer: int | None) -> dict[int, list[str | None]]:
    """Each seat's slots as the page should draw them: the referee's cards (all hands face up)
    or what ``viewer`` knows ("" for a card face down), None for an empty slot."""
    out: dict[int, list[str | None]] = {}
    for seat in range(state.game.players):
        if viewer is None:
            out[seat] = [None if c is None else games.card_name(c % 52) for c in state.slots(seat)]
        else:
            shown = state.observation(viewer)["slots"][seat]
            out[seat] = [None if s is None else "" if s == "?" else s["card"] for s in shown]
    return out


def test_a_whole_dutch_round_forward_and_back_in_both_views(
    page: Any, console_errors: list[str]
) -> None:
    cup = _cup(_organiser(), "Dutch cup", "dutch", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    last = len(states) - 1
    _open(page, f"/deals/{deal.pk}/")
    for k in range(last + 1):
        assert _step(page) == k
        slots = {int(s): v for s, v in page.evaluate(_SLOTS).items()}
        assert slots == _dutch_expected(states[k], None), k
        pile = states[k].discard_pile()
        shown = page.locator("[data-discard] [data-card]")
        if pile:  # empty after a seat took its only card
            assert shown.get_attribute("data-card") == games.card_name(pile[-1] % 52)
        else:
            assert shown.count() == 0
        action = str(deal.log["actions"][k - 1][1]) if k else ""
        if action.startswith("replace:"):  # the slot the step filled is pointed at
            seat = deal.log["actions"][k - 1][0]
            slot = page.locator(f'[data-seat="{seat}"] [data-slot="{action[8:]}"]')
            assert "touched" in (slot.get_attribute("class") or "")
        if k < last:
            page.keyboard.press("ArrowRight")
    page.get_by_label("View").select_option("2")
    for k in range(last, -1, -1):
        slots = {int(s): v for s, v in page.evaluate(_SLOTS).items()}
        assert slots == _dutch_expected(states[k], 2), k
        if k:
            page.keyboard.press("ArrowLeft")
    # The steps that are Dutch's own: draws, the discards, the claims and the call.
    texts = page.evaluate(
        "() => JSON.parse(document.getElementById('replay-steps').textContent).steps.map(s => s.t)"
    )
    assert any("draws" in t for t in texts)
    assert texts[-1]
    assert not axe_violations(page)
    assert not console_errors


def test_the_keyboard_moves_the_viewer(page: Any, console_errors: list[str]) -> None:
    cup = _cup(_organiser(), "Hearts cup", "hearts", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    last = len(states) - 1
    _open(page, f"/deals/{deal.pk}/")
    page.keyboard.press("End")
    assert _step(page) == last
    page.keyboard.press("Home")
    assert _step(page) == 0
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert _step(page) == 2
    # Page Down: to the end of the passes (step 4), then to the end of the first trick.
    page.keyboard.press("PageDown")
    assert _step(page) == 4
    page.keyboard.press("PageDown")
    assert _step(page) == 8
    assert len(states[8].tricks()) == 1
    page.keyboard.press("PageUp")
    assert _step(page) == 4
    # Space plays (the step moves on by itself) and pauses.
    play = page.locator('[data-go="play"]')
    page.get_by_label("Speed").select_option("120")
    page.locator("h1").click()  # the focus back on the page
    page.keyboard.press(" ")
    assert play.get_attribute("data-playing") == "true"
    assert play.inner_text().endswith("Pause")
    page.wait_for_function("() => Number(document.querySelector('[data-felt]').dataset.step) > 6")
    page.keyboard.press(" ")
    assert play.get_attribute("data-playing") == "false"
    assert play.inner_text().endswith("Play")
    paused_at = _step(page)
    _check_trick_step(page, states, paused_at)
    assert not console_errors


def test_a_steps_address_reopens_at_that_step(page: Any, console_errors: list[str]) -> None:
    cup = _cup(_organiser(), "Hearts cup", "hearts", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    _open(page, f"/deals/{deal.pk}/")
    for _ in range(17):
        page.keyboard.press("ArrowRight")
    assert page.url.endswith(f"/deals/{deal.pk}/?step=17")
    page.reload()
    page.wait_for_selector("#viewer[data-ready]")
    _check_trick_step(page, states, 17)
    assert page.locator("#replay-step").input_value() == "17"
    _open(page, f"/deals/{deal.pk}/#step-30")
    _check_trick_step(page, states, 30)
    # The address carries the view too.
    _open(page, f"/deals/{deal.pk}/?step=21&seat=3")
    assert page.get_by_label("View").input_value() == "3"
    assert _hands(page)[3] == states[21].observation(3)["hand"]
    assert not console_errors


def test_the_travellers_pages_reopen_the_replay_where_it_was(
    page: Any, console_errors: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moved to step 5 in seat 1's view, page 1 of the traveller (one table a page here)
    reopens the replay at step 5 in that view, not at the deal as dealt."""
    monkeypatch.setattr(page_selectors.deals, "TRAVELLER_PAGE_SIZE", 1)
    cup = _cup(_organiser(), "Duplicate cup", "hearts", 5, duplicate=True)
    deal = Deal.objects.filter(table__tournament=cup, index=0).order_by("table__number")[1]
    _open(page, f"/deals/{deal.pk}/")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.get_by_label("View").select_option("1")
    page.get_by_role("navigation", name="Pages of the traveller").get_by_role(
        "link", name="1", exact=True
    ).click()
    page.wait_for_selector("#viewer[data-ready]")
    assert page.url.endswith(f"/deals/{deal.pk}/?traveller=1&step=5&seat=1#traveller-title")
    assert _step(page) == 5
    assert page.get_by_label("View").input_value() == "1"
    assert page.locator("#traveller tr.current").count() == 0  # the other table's page
    assert not console_errors


def test_a_bot_named_like_a_card_is_written_not_drawn(page: Any, console_errors: list[str]) -> None:
    """The viewer's sentence draws a step's cards, never a seat's name: bots named QS, TH, AC
    and 10H are each a <bdi> of text in every sentence of the deal."""
    _organiser()
    deal = _deal(card_named_cup())
    names = {f"{name} v1" for name in CARD_NAMES}
    _open(page, f"/deals/{deal.pk}/")
    for number, (_, action) in enumerate(deal.log["actions"], start=1):
        page.keyboard.press("ArrowRight")
        assert _step(page) == number
        drawn = page.evaluate(_SENTENCE)
        assert drawn["cards"] == cards_of(action), (number, drawn)
        assert drawn["names"], number
        assert set(drawn["names"]) <= names, (number, drawn)
    assert not axe_violations(page)
    assert not console_errors


_SENTENCE = """() => {
  const text = document.querySelector("[data-step-text]");
  return {
    cards: text.querySelectorAll(".pcard").length,
    names: [...text.querySelectorAll("bdi")].map((b) => b.textContent),
  };
}"""


def test_one_seats_view_hides_the_other_hands(page: Any, console_errors: list[str]) -> None:
    cup = _cup(_organiser(), "Hearts cup", "hearts", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    _open(page, f"/deals/{deal.pk}/?step=2")
    page.get_by_label("View").select_option("1")
    assert page.url.endswith("?step=2&seat=1")
    for k in (2, 3, 4, 20):
        page.goto(f"/deals/{deal.pk}/?step={k}&seat=1")
        page.wait_for_selector("#viewer[data-ready]")
        hands = _hands(page)
        view = states[k].observation(1)
        assert hands[1] == view["hand"]
        for other in (0, 2, 3):
            assert hands[other] == [""] * view["hand_sizes"][other], (k, other)
        felt = page.locator("[data-felt]").inner_text()
        for other in (0, 2, 3):
            passed = states[k].observation(other)["passed"] or []
            received = states[k].observation(other)["received"] or []
            # Another seat's pass is a number of cards; seat 1 sees only what it gave and got.
            for card in (
                set(passed + received) - set(view["passed"] or []) - set(view["received"] or [])
            ):
                assert card not in page.locator(f'[data-seat="{other}"]').inner_html(), card
        if k == 4:
            assert "Received" in felt
    # Seat 0's pass as seat 1 reads it: to whom and how many, not which cards.
    page.goto(f"/deals/{deal.pk}/?step=1&seat=1")
    page.wait_for_selector("#viewer[data-ready]")
    text = page.locator("[data-step-text]").inner_text()
    assert "passes 3 cards to" in text
    assert not axe_violations(page)
    assert not console_errors


def test_faults_and_times_are_on_the_timeline(page: Any, console_errors: list[str]) -> None:
    """An uploaded bot that plays a card it does not hold, judged in its sandbox: its faults
    are marked on the timeline and said at their step."""
    tournament = services.tournament_create(
        organiser=_organiser(),
        settings=TournamentSettings(
            name="Faulty cup",
            game="hearts",
            rounds=1,
            deals_per_table=1,
            decision_seconds=2.0,
            bank_seconds=10.0,
            startup_seconds=10.0,
        ),
    )
    services.tournament_open(tournament=tournament)
    faulty = file_version(BotFactory.create(game="hearts"), "illegal")
    services.entry_register(tournament=tournament, version=faulty, user=faulty.bot.owner)
    for i in range(3):
        owner = User.objects.create_user(username=f"builtin{i}")
        bot = services.bot_create(owner=owner, name=f"builtin{i}", game="hearts")
        version = services.bot_version_create(bot=bot, builtin="heuristic")
        services.entry_register(tournament=tournament, version=version, user=owner)
    services.tournament_start(tournament=tournament)
    _play(tournament)
    deal = _deal(tournament)
    faults = [f for f in deal.log.get("faults", []) if f.get("step") is not None]
    assert faults, deal.log.get("faults")
    _open(page, f"/deals/{deal.pk}/")
    marked = page.locator("[data-timeline] .tick.fault")
    assert marked.count() == len({f["step"] for f in faults})
    step = faults[0]["step"] + 1  # the decision's step in the viewer (0 is the deal dealt)
    _open(page, f"/deals/{deal.pk}/?step={step}")
    assert f"fault: {faults[0]['kind']}" in page.locator("[data-step-text]").inner_text()
    assert re.search(r"\d\.\d{3} s", page.locator("[data-step-text]").inner_text())
    assert page.locator(f"tr#step-{step}.fault").count() == 1
    assert not console_errors


def test_a_long_round_comes_a_window_of_steps_at_a_time(
    page: Any, console_errors: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deal of more steps than a page carries (windows of 7 steps here; the longest Dutch
    rounds have tens of thousands: tests/pages/test_replay_windows.py): the viewer loads the
    next window when it steps past the one it holds, forward and back, and a step's address
    opens the page with that step's window."""
    from playwright.sync_api import expect

    monkeypatch.setattr("tournaments.page_selectors.deals.STEP_WINDOW", 7)
    cup = _cup(_organiser(), "Dutch cup", "dutch", 4, deals_per_table=1)
    deal = _deal(cup)
    _, states = _engine_states(deal)
    last = len(states) - 1
    assert last > 14  # three windows at least
    loads: list[str] = []
    page.on("request", lambda r: loads.append(r.url) if "/steps/" in r.url else None)
    felt = page.locator("[data-felt]")

    def check(k: int) -> None:
        expect(felt).to_have_attribute("data-step", str(k))
        slots = {int(s): v for s, v in page.evaluate(_SLOTS).items()}
        assert slots == _dutch_expected(states[k], None), k

    _open(page, f"/deals/{deal.pk}/")
    assert page.locator("details.decisions tbody tr").count() == 6  # steps 1 to 6
    for k in range(last + 1):
        check(k)
        if k < last:
            page.keyboard.press("ArrowRight")
    for k in range(last, -1, -1):
        check(k)
        if k:
            page.keyboard.press("ArrowLeft")
    assert any(url.endswith(f"/deals/{deal.pk}/steps/1/") for url in loads)
    # A step's address: the page comes with its window (no load to draw it).
    loads.clear()
    middle = 9
    _open(page, f"/deals/{deal.pk}/?step={middle}")
    check(middle)
    assert loads == []
    assert page.locator(f"details.decisions tr#step-{middle}").count() == 1
    assert page.locator("details.decisions tr#step-1").count() == 0
    page.keyboard.press("End")
    check(last)
    page.keyboard.press("Home")
    check(0)
    assert not axe_violations(page)
    assert not console_errors
