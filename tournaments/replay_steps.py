"""A deal's replay step by step, for the replay viewer: the engine replays the deal's actions and
says what the table looks like after each of them.

The API's replay (``selectors.deal_replay_document``) holds the deal as dealt and its actions;
what lies between two actions (each hand, the trick on the table, the slots of Dutch and who
knows which card) is the engine's to say, not the browser's. :func:`deal_replay_steps` replays
the deal through ``games`` and writes, for every step, what changed on the table; the page hands
that to its script as JSON and the script only draws it.

The steps (``"steps"``) start with the deal as dealt (step 0); step ``k`` is the table after
the ``k``-th action. Each step's ``"d"`` holds the keys of the table's state that changed
(step 0 holds all of them), so that the page stays small however long a Dutch round is. The
state's keys, per game:

every game
    ``ph`` phase, ``act`` the seat to act (-1 at the end), ``h<s>`` the cards of seat ``s``
    (Hearts and Roi: the hand; Dutch: its slots, each ``[card, knowers]`` or None for an empty
    slot, ``knowers`` a bitmask of the seats that know the card), ``pts`` the deal's points once
    it is over.
Hearts and Roi
    ``tr`` the cards of the trick on the table from its leader ``tl``, ``tn`` tricks finished,
    ``won`` the index of the trick this step finished (else None), ``pt`` points taken so far.
Hearts
    ``br`` hearts broken, ``p<s>`` the cards seat ``s`` passed (once it has), ``r<s>`` the cards
    it received (once all have passed), ``res`` whether the reserve has been won, ``stk`` the
    stock's size and ``dr<s>`` the cards seat ``s`` drew from it (two-player stock), ``moon``.
Roi
    ``tk`` tricks taken per seat.
Dutch
    ``turn`` the seat whose turn it is, ``turns`` turns finished, ``caller``, ``stk`` the
    stock's size, ``top`` the top discard and ``pn`` the pile's size, ``hold`` the card drawn
    or taken and not placed yet (``{"s": seat, "c": card, "pub": taken from the pile}``),
    ``claim`` the claim round open (rank, putter, barred seats), ``jack`` the first card of a
    swap, ``left`` the last turns still to play once Dutch is called, ``sums`` each seat's sum
    at the end.

Each step after 0 also names its seat ``s``, its action ``a``, the decision's time ``sec`` and
fault ``f`` (when not 0 and not none), a sentence ``t`` (with every card the step involves) and
``tp`` (what the other seats heard, when that is less; ``ta`` false when the acting seat did not
see it either: an Ace's gift). In a sentence every seat's name (its bot, which its author named)
stands between :data:`NAME_OPEN` and :data:`NAME_CLOSE`, Unicode's first-strong isolate and its
pop: the page draws the card codes of a sentence as cards but never a name, even a bot named
"QS" (and a right-to-left name does not reorder the sentence); the names themselves (``seats``)
never hold either character. A step also has Dutch's ``hl``, the ``[seat, slot]`` pairs it
touched, and ``m``, what it ends: ``"pass"`` (the exchange of passes), ``"trick"``, ``"turn"``.
A step played by a built-in bot that took a seat over (after its bot crashed or faulted too
often) has ``by``, that bot's name, and its sentences name it; ``takeovers`` lists each such
seat with the first step the built-in bot played and its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import games
from games.base import JSON, Game, State
from games.cards import card_name
from games.errors import GameError
from tournaments.selectors.tables import bot_in_words

#: The version of the step format, for the page's script (2: names isolated in sentences; 3:
#: house bots named as the pages name built-in bots; 4: takeovers by a built-in bot; 5: a seat
#: without a name is "seat 1" for the first, as people count).
FORMAT = 5

#: Around each seat's name in a step's sentence (U+2068 FIRST STRONG ISOLATE and U+2069 POP
#: DIRECTIONAL ISOLATE): what stands between them is a name, never cards.
NAME_OPEN = "\u2068"
NAME_CLOSE = "\u2069"
_ISOLATES = dict.fromkeys(map(ord, "\u2066\u2067\u2068\u2069"))


class ReplayError(ValueError):
    """The deal's replay cannot be replayed by the engine (a corrupted or foreign log)."""


def _seat_names(document: Mapping[str, Any], players: int) -> list[str]:
    names = [f"seat {s + 1}" for s in range(players)]
    for seat in document.get("seats") or []:
        position = seat.get("position")
        if isinstance(position, int) and 0 <= position < players:
            # Without isolates of its own: a name cannot end its isolate in a sentence.
            name = _house_in_words(seat) or str(seat.get("bot") or names[position])
            names[position] = name.translate(_ISOLATES)
    return names


def _takeovers(document: Mapping[str, Any], players: int) -> dict[int, tuple[int, str]]:
    """The seats a built-in bot took over in this deal: seat -> (the index of its first
    action, its name), from the replay's seats (``takeover``)."""
    out = {}
    for seat in document.get("seats") or []:
        position, takeover = seat.get("position"), seat.get("takeover")
        if isinstance(position, int) and 0 <= position < players and isinstance(takeover, dict):
            start = takeover.get("from_action")
            if isinstance(start, int):
                out[position] = (start, str(takeover.get("bot") or "").translate(_ISOLATES))
    return out


def _house_in_words(seat: Mapping[str, Any]) -> str | None:
    """A house bot's seat as the pages name it ("built-in lowest", where the replay says
    ``house:lowest``), or None for an entry's. Only a seat the replay marks as the house's or
    a substitute's is read so: a bot of an author may be named ``house:...`` too."""
    label = str(seat.get("bot") or "")
    house, substitute = seat.get("house") is True, seat.get("substitute") is True
    if not (house or substitute) or not label.startswith("house:"):
        return None
    builtin, _, version = label.removeprefix("house:").partition(" for ")
    return bot_in_words(version or None, house_bot=builtin, substitute=substitute)


def _isolated(name: str) -> str:
    """A seat's name as sentences write it: a name, whatever it looks like.

    >>> _isolated("QS v1") == NAME_OPEN + "QS v1" + NAME_CLOSE
    True
    """
    return f"{NAME_OPEN}{name}{NAME_CLOSE}"


def _engine(document: Mapping[str, Any]) -> Game[object]:
    options = document.get("options") or {}
    try:
        return games.load(str(document["game"]), str(document["preset"]), **options)
    except (GameError, KeyError, TypeError) as exc:
        raise ReplayError(f"the deal's game cannot be loaded: {exc}") from exc


def _delta(before: Mapping[str, JSON], after: Mapping[str, JSON]) -> dict[str, JSON]:
    return {key: value for key, value in after.items() if before.get(key, ...) != value}


@dataclasses.dataclass(frozen=True, slots=True)
class _Step:
    """One action being written: the state after it, and the table before and after."""

    state: State
    seat: int
    action: JSON
    before: Mapping[str, JSON]
    after: Mapping[str, JSON]
    names: Sequence[str]
    static: Mapping[str, JSON]
    history_before: int  # Dutch: the length of the public history before the action


# --- Hearts ------------------------------------------------------------------------------------


def _trick_state(
    state: State, players: int, before: Mapping[str, JSON]
) -> tuple[dict[str, JSON], list[dict[str, JSON]]]:
    """The state keys every trick-taking game has (phase, seat to act, the trick on the table,
    tricks finished and the one this step won, points taken, each hand), and each seat's
    observation for the game's own keys."""
    views = [state.observation(s) for s in range(players)]
    public = views[0]
    trick = public["trick"]
    assert isinstance(trick, dict)
    tricks = public["tricks"]
    assert isinstance(tricks, list)
    done = len(tricks)
    out: dict[str, JSON] = {
        "ph": public["phase"],
        "act": public["to_act"],
        "tr": trick["cards"],
        "tl": trick["leader"],
        "tn": done,
        "won": done - 1 if before and done > before.get("tn", 0) else None,  # type: ignore[operator]
        "pt": public["points_taken"],
    }
    for seat, view in enumerate(views):
        out[f"h{seat}"] = view["hand"]
    return out, views


def _hearts_state(state: State, players: int, before: Mapping[str, JSON]) -> dict[str, JSON]:
    out, views = _trick_state(state, players, before)
    public = views[0]
    out["br"] = public["hearts_broken"]
    for seat, view in enumerate(views):
        out[f"p{seat}"] = view["passed"]
        out[f"r{seat}"] = view["received"]
        if "drawn" in view:
            out[f"dr{seat}"] = view["drawn"]
    if "stock_size" in public:
        out["stk"] = public["stock_size"]
    if "reserve_size" in public:
        out["res"] = public["reserve"] is not None
    if state.is_terminal():
        out["pts"] = list[JSON](state.points())
        out["moon"] = state.summary().get("moon")
    return out


def _hearts_static(state: State, game: Game[object], record: Mapping[str, JSON]) -> dict[str, JSON]:
    view = state.observation(0)
    rules = game.options()
    out: dict[str, JSON] = {
        "pass_direction": view["pass_direction"],
        "pass_count": rules.get("pass_count"),
        "moon_rule": rules.get("moon"),
        "pass_to": [state.observation(s).get("pass_to") for s in range(game.players)],
    }
    if "reserve" in record:
        out["reserve"] = record["reserve"]
    if "stock" in record:
        out["stock"] = record["stock"]
    return out


def _hearts_text(step: _Step) -> tuple[str, str, bool]:
    who = step.names[step.seat]
    action = step.action
    if isinstance(action, list):
        targets = step.static.get("pass_to")
        target = targets[step.seat] if isinstance(targets, list) else None
        to = step.names[target] if isinstance(target, int) else "?"
        cards = " ".join(str(c) for c in action)
        return f"{who} passes {cards} to {to}", f"{who} passes {len(action)} cards to {to}", True
    text = f"{who} plays {action}"
    won = step.after.get("won")
    if isinstance(won, int):
        trick = step.state.tricks()[won]
        text += f"; {step.names[trick.winner]} wins the trick ({trick.points} points)"
    return text, text, True


# --- Roi ---------------------------------------------------------------------------------------


def _roi_state(state: State, players: int, before: Mapping[str, JSON]) -> dict[str, JSON]:
    out, views = _trick_state(state, players, before)
    out["tk"] = views[0]["tricks_taken"]
    if state.is_terminal():
        out["pts"] = list[JSON](state.points())
    return out


def _roi_scoring(game: Game[object], deal_index: int) -> str:
    """The contract's scoring in words, from the engine's contract."""
    contract_of: Callable[[int], Any] | None = getattr(game, "contract_of", None)
    if contract_of is None:
        return ""
    contract = contract_of(deal_index)
    parts = []
    if contract.per_trick:
        parts.append(f"{contract.per_trick:+d} per trick")
    if contract.per_card:
        what = {
            "no-hearts": "heart",
            "no-kings-or-jacks": "king or jack",
            "no-queens": "queen",
            "no-king-of-hearts": "king of hearts",
        }.get(contract.name, "trump")
        parts.append(f"{contract.per_card:+d} per {what}")
    if contract.last_trick:
        parts.append(f"{contract.last_trick:+d} for the last trick")
    return ", ".join(parts) + " taken"


def _roi_static(state: State, game: Game[object], record: Mapping[str, JSON]) -> dict[str, JSON]:
    view = state.observation(0)
    return {
        "contract": view["contract"],
        "contract_number": view["contract_number"],
        "trump": view["trump"],
        "trump_suit": view["trump_suit"],
        "dealer": view["dealer"],
        "scoring": _roi_scoring(game, state.deal_index),
    }


# --- Dutch -------------------------------------------------------------------------------------


def _card_name(card: JSON) -> JSON:
    return card.get("card") if isinstance(card, dict) else None


def _dutch_state(state: State, players: int, before: Mapping[str, JSON]) -> dict[str, JSON]:
    # The referee's view of the round (DutchState's reading methods): who knows each card, and
    # the cards nobody has seen, drawn face up in the all-hands view. Observations would render
    # the whole discard pile and history for every seat at every step.
    dutch: Any = state
    phase = dutch.phase.label
    pile = dutch.discard_pile()
    out: dict[str, JSON] = {
        "ph": phase,
        "act": state.current_player(),
        "turn": dutch.turn,
        "turns": dutch.turns,
        "caller": dutch.caller,
        "stk": len(dutch.stock_cards()),
        "top": card_name(pile[-1] % 52) if pile else None,
        "pn": len(pile),
        "claim": None,
        "jack": None,
    }
    if phase in ("claim", "jack-second"):
        view = state.observation(0)
        out["claim"] = view["claim"]
        out["jack"] = view["jack"]
    for seat in range(players):
        row: list[JSON] = []
        for k, card in enumerate(dutch.slots(seat)):
            if card is None:
                row.append(None)
                continue
            knowers = sum(1 << o for o in range(players) if dutch.knows(o, seat, k))
            row.append([card_name(card % 52), knowers])
        out[f"h{seat}"] = row
    held = dutch.held()
    out["hold"] = (
        None
        if held is None
        else {"s": state.current_player(), "c": card_name(held % 52), "pub": phase == "taken-card"}
    )
    if state.is_terminal():
        summary = state.summary()
        out["pts"] = summary["points"]
        out["sums"] = summary["sums"]
    return out


def _dutch_static(state: State, game: Game[object], record: Mapping[str, JSON]) -> dict[str, JSON]:
    view = state.observation(0)
    rules = game.options()
    return {
        "decks": view["decks"],
        "turn_limit": view["turn_limit"],
        "call_penalty": rules.get("call_penalty"),
    }


def _slot_card(snapshot: Mapping[str, JSON], seat: int, slot: JSON) -> JSON:
    row = snapshot.get(f"h{seat}")
    if not isinstance(row, list) or not isinstance(slot, int) or not 0 <= slot < len(row):
        return None
    cell = row[slot]
    return cell[0] if isinstance(cell, list) else None


def _dutch_text(step: _Step) -> tuple[str, str, bool]:
    """The sentence of a Dutch decision, from the public history the engine keeps and the
    table before and after: the full one and what the other seats learnt."""
    who = step.names[step.seat]
    history: list[dict[str, JSON]] = step.state.public_history()  # type: ignore[attr-defined]
    done = history[step.history_before :]
    event = next((e for e in done if "seat" in e), {})
    card = _card_name(event.get("card"))
    before, after = step.before, step.after
    phase = before.get("ph")
    act = str(step.action)
    parts = act.split(":")
    held = before.get("hold")
    full = public = ""
    if act == "draw":
        drawn = after.get("hold")
        full = f"{who} draws {drawn['c'] if isinstance(drawn, dict) else '?'} from the stock"
        public = f"{who} draws from the stock"
    elif act == "take":
        full = public = f"{who} takes {card} from the discard pile"
    elif act == "discard":
        full = public = f"{who} discards {card}"
    elif act.startswith("replace:"):
        slot = int(parts[1])
        placed = held["c"] if isinstance(held, dict) else "?"
        full = f"{who} puts {placed} in slot {slot} and discards {card}"
        public = (
            full
            if phase == "taken-card"
            else f"{who} puts the card in slot {slot} and discards {card}"
        )
    elif act.startswith("swap:"):
        target, slot = int(parts[1]), int(parts[2])
        which = "first" if phase == "jack" else "second"
        full = public = f"{who} swaps with the Jack: {which} card, {step.names[target]} slot {slot}"
    elif act.startswith("peek:"):
        slot = int(parts[1])
        full = (
            f"{who} looks at its slot {slot} with the Queen: {_slot_card(after, step.seat, slot)}"
        )
        public = f"{who} looks at its slot {slot} with the Queen"
    elif act.startswith("give:"):
        target = int(parts[1])
        given_slot = event.get("slot")
        given = _slot_card(after, target, given_slot)
        # Nobody sees the card an Ace gives, the giver neither: only the full view names it.
        full = (
            f"{who} gives the top stock card ({given}) to {step.names[target]}, slot {given_slot}"
        )
        public = f"{who} gives the top stock card to {step.names[target]}, slot {given_slot}"
        return full, public, False
    elif act.startswith("claim:"):
        slot = int(parts[1])
        if event.get("right"):
            full = public = f"{who} claims slot {slot}: {card}, right"
        else:
            penalty = event.get("penalty_slot")
            tail = f"; a penalty card goes to slot {penalty}" if penalty is not None else ""
            full = public = f"{who} claims slot {slot}: {card}, wrong{tail}"
    elif act == "dutch":
        full = public = f"{who} calls Dutch"
    elif act == "pass":
        full = public = {
            "jack": f"{who} does not swap with the Jack",
            "queen": f"{who} does not look with the Queen",
            "ace": f"{who} gives no card with the Ace",
            "claim": f"{who} does not claim",
            "call": f"{who} does not call Dutch",
        }.get(str(phase), f"{who} passes")
    else:
        full = public = f"{who}: {act}"
    for e in done:
        if "reshuffle" in e:
            note = f"; the discard pile is shuffled into a new stock of {e['reshuffle']} cards"
            full += note
            public += note
    return full, public, True


def _dutch_touched(step: _Step) -> list[JSON]:
    """The slots a Dutch decision touched, as ``[seat, slot]`` pairs, for the page to point
    at: the slot replaced, both cards of a Jack's swap, the slot a Queen looked at, where an
    Ace's gift went, the slot claimed and a wrong claim's penalty card."""
    act = str(step.action)
    parts = act.split(":")
    seat = step.seat
    history: list[dict[str, JSON]] = step.state.public_history()  # type: ignore[attr-defined]
    event = next((e for e in history[step.history_before :] if "seat" in e), {})
    touched: list[JSON] = []
    if parts[0] in ("replace", "peek", "claim"):
        touched.append([seat, int(parts[1])])
    if parts[0] == "claim" and isinstance(event.get("penalty_slot"), int):
        touched.append([seat, event["penalty_slot"]])
    if parts[0] == "swap":
        touched.append([int(parts[1]), int(parts[2])])
        first = step.before.get("jack")
        if isinstance(first, dict):
            touched.append([first["seat"], first["slot"]])
    if parts[0] == "give" and isinstance(event.get("slot"), int):
        touched.append([int(parts[1]), event["slot"]])
    return touched


# --- the steps ---------------------------------------------------------------------------------

_StateFn = Callable[[State, int, Mapping[str, JSON]], dict[str, JSON]]
_StaticFn = Callable[[State, Game[object], Mapping[str, JSON]], dict[str, JSON]]
_TextFn = Callable[["_Step"], tuple[str, str, bool]]

_GAMES: dict[str, tuple[_StateFn, _StaticFn, _TextFn]] = {
    "hearts": (_hearts_state, _hearts_static, _hearts_text),
    "roi": (_roi_state, _roi_static, _hearts_text),
    "dutch": (_dutch_state, _dutch_static, _dutch_text),
}


def _mark(before: Mapping[str, JSON], after: Mapping[str, JSON]) -> str | None:
    """What a step ends: the exchange of passes, a trick, a Dutch turn (None if nothing)."""
    if after.get("won") is not None:
        return "trick"
    if before.get("ph") == "pass" and after.get("ph") != "pass":
        return "pass"
    if "turns" in after and (after["turns"] != before.get("turns") or after.get("act") == -1):
        return "turn"
    return None


def deal_replay_steps(
    *, replay: Mapping[str, Any], first: int = 0, count: int | None = None
) -> dict[str, JSON]:
    """The steps of a deal, replayed through the engine, from the deal's replay as the API
    gives it (``selectors.deal_replay_document``, parsed). See the module's docstring for the
    format. Raises :class:`ReplayError` if the engine refuses the deal or one of its actions.

    ``first`` and ``count`` ask for a window of the steps (the longest Dutch rounds have tens
    of thousands): steps ``first`` to ``first + count - 1`` (to the last without ``count``),
    the first of them holding the whole table in its ``"d"`` (so that the window is drawn
    without the steps before it), under ``"first"``; the actions before it are only applied.
    Every answer also says ``"total"``, the number of the last step, and ``"end"``, the whole
    table after it."""
    game_name = str(replay.get("game"))
    if game_name not in _GAMES:
        raise ReplayError(f"no step-by-step replay for the game {game_name!r}")
    state_of, static_of, text_of = _GAMES[game_name]
    game = _engine(replay)
    players = game.players
    record = replay.get("record") or {}
    index = replay.get("index")
    if not isinstance(record, dict) or not isinstance(index, int):
        raise ReplayError("the replay has no deal record")
    log = replay.get("log") or {}
    actions = log.get("actions") if isinstance(log, dict) else None
    if not isinstance(actions, list):
        raise ReplayError("the replay has no actions")
    total = len(actions)
    first = max(0, min(first, total))
    stop = total if count is None else min(total, first + max(count, 1) - 1)
    decisions = {d.get("step"): d for d in replay.get("decisions") or [] if isinstance(d, dict)}
    names = _seat_names(replay, players)
    takeovers = _takeovers(replay, players)

    def in_sentences(number: int) -> list[str]:
        """The seats' names in the sentence of action ``number``: after a takeover, the
        built-in bot's."""
        now = [
            takeovers[s][1] if s in takeovers and number >= takeovers[s][0] else name
            for s, name in enumerate(names)
        ]
        return [_isolated(name) for name in now]

    dutch = game_name == "dutch"

    def apply(number: int, item: object) -> tuple[int, JSON]:
        if not isinstance(item, list) or len(item) != 2:
            raise ReplayError(f"step {number + 1}: not a [seat, action] pair")
        seat, action = item
        if seat != state.current_player():
            raise ReplayError(f"step {number + 1}: seat {seat} acted out of turn")
        state.apply_action(action)
        return seat, action

    try:
        state = game.deal_from_record(index, record)
        static = static_of(state, game, record)
        history = 0
        called_at: int | None = None  # Dutch: the number of turns finished when Dutch was called
        # Before the window: the actions applied, nothing drawn (the table is read once, at
        # the step before the window's first).
        for number in range(first - 1 if first else 0):
            apply(number, actions[number])
            if dutch and called_at is None and state.caller is not None:  # type: ignore[attr-defined]
                called_at = state.turns  # type: ignore[attr-defined]
        if dutch:
            history = len(state.public_history())  # type: ignore[attr-defined]
        current = state_of(state, players, {})
        steps: list[dict[str, JSON]] = []
        if first == 0:
            steps.append({"t": "The deal as dealt", "d": current})
        for number in range(max(first - 1, 0), stop):
            seat, action = apply(number, actions[number])
            after = state_of(state, players, current)
            turns = after.get("turns")
            if dutch and after["caller"] is not None and isinstance(turns, int):
                # The call ends the caller's turn; then each other seat plays one last turn.
                if called_at is None:
                    called_at = turns
                after["left"] = 0 if state.is_terminal() else players - 1 - (turns - called_at)
            named = in_sentences(number)
            step = _Step(state, seat, action, current, after, named, static, history)
            full, public, actor_sees = text_of(step)
            entry: dict[str, JSON] = {
                "s": seat,
                "a": action,
                "t": full,
                # The window's first step holds the whole table.
                "d": dict(after) if not steps else _delta(current, after),
            }
            if seat in takeovers and number >= takeovers[seat][0]:
                entry["by"] = takeovers[seat][1]
            if public != full:
                entry["tp"] = public
                if not actor_sees:
                    entry["ta"] = False
            decision = decisions.get(number) or {}
            seconds = round(float(decision.get("seconds") or 0.0), 3)
            if seconds:
                entry["sec"] = seconds
            if decision.get("fault"):
                entry["f"] = str(decision["fault"])
            if dutch and (touched := _dutch_touched(step)):
                entry["hl"] = touched
            mark = _mark(current, after)
            if mark:
                entry["m"] = mark
            steps.append(entry)
            current = after
            if dutch:
                history = len(state.public_history())  # type: ignore[attr-defined]
        # After the window: the rest applied, for the table at the end.
        for number in range(stop, total):
            apply(number, actions[number])
        end = current if stop == total else state_of(state, players, {})
    except GameError as exc:
        raise ReplayError(f"the engine refuses the deal: {exc}") from exc
    return {
        "format": FORMAT,
        "game": game_name,
        "players": players,
        "seats": list[JSON](names),
        "takeovers": [
            {"seat": seat, "step": start + 1, "bot": bot}
            for seat, (start, bot) in sorted(takeovers.items())
        ],
        "static": static,
        "tricks": [t.as_json() for t in state.tricks()],
        "first": first,
        "total": total,
        "end": end,
        "steps": list[JSON](steps),
    }
