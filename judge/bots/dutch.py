"""A sound Dutch player (the ``heuristic`` built-in).

What it knows is what the observation shows it: ``slots`` holds every card this seat has seen
and not lost track of (its own cards it looked at, cards taken from the discard pile, cards
shown by wrong claims, followed through Jack swaps), and the discard pile is public. From that
it estimates the value of a face-down card it has not seen as the mean value of the cards it
has not seen anywhere, and then:

- takes the top discard when it is low enough to replace its worst known card or a face-down
  one, else draws;
- keeps a drawn card only to replace a card worth more (a known high card first, else a
  face-down card when the drawn one is below the estimate), else discards it;
- uses specials when it puts them down: a Queen looks at one of its unseen cards, a Jack swaps
  its worst card for an opponent's best known (or unseen) card, an Ace gives an unseen stock
  card to the opponent with the lowest estimated sum;
- throws a matching card whenever it knows one of the rank put down;
- calls Dutch when its estimated sum is low, few of its cards are unknown and no opponent is
  estimated lower.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.base import JSON, Action
from judge.bots.base import BuiltinBot

RANKS = "23456789TJQKA"
_RANK_VALUE = {"2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "T": 10}
_RANK_VALUE.update({"J": 11, "Q": 12, "A": 1})
DECK_VALUE = 338  # the values of one 52-card deck
CALL_AT = 7  # call Dutch with an estimated sum at most this


def value(card: str) -> int:
    """The points of a card name: A 1, 2-10 face value, J 11, Q 12, red K 0, black K 13.

    >>> [value(c) for c in ("AS", "TD", "KH", "KS")]
    [1, 10, 0, 13]
    """
    if card[0] == "K":
        return 13 if card[1] in "CS" else 0
    return _RANK_VALUE[card[0]]


def _name(entry: JSON) -> str | None:
    if isinstance(entry, dict):
        card = entry.get("card")
        return card if isinstance(card, str) else None
    return None


def _index(action: str, prefix: str) -> int:
    return int(action[len(prefix) :].split(":")[0])


class HeuristicBot(BuiltinBot):
    name = "heuristic"

    def __init__(self, *, game: str, seat: int, players: int, seed: int) -> None:
        super().__init__(game=game, seat=seat, players=players, seed=seed)
        self._swap_target: str | None = None  # the second card of a Jack swap under way

    # -- reading --------------------------------------------------------------------------------

    def _read(self, obs: Mapping[str, JSON]) -> None:
        slots = obs.get("slots")
        self.slots: list[list[JSON]] = (
            [row if isinstance(row, list) else [] for row in slots]
            if isinstance(slots, list)
            else []
        )
        decks = obs.get("decks")
        seen: list[str] = []
        for row in self.slots:
            seen += [n for n in map(_name, row) if n is not None]
        pile = obs.get("discard")
        if isinstance(pile, list):
            seen += [n for n in map(_name, pile) if n is not None]
        holding = _name(obs.get("holding"))
        if holding is not None:
            seen.append(holding)
        total = DECK_VALUE * (decks if isinstance(decks, int) else 2)
        cards = 52 * (decks if isinstance(decks, int) else 2)
        unknown = max(1, cards - len(seen))
        self.estimate = max(0.0, (total - sum(value(n) for n in seen)) / unknown)
        caller = obs.get("caller")
        self.caller = caller if isinstance(caller, int) else None

    def _row(self, seat: int) -> list[JSON]:
        return self.slots[seat] if 0 <= seat < len(self.slots) else []

    def _slot_value(self, entry: JSON) -> float | None:
        """A slot's value as we know it (estimate for a face-down card), None when empty."""
        if entry is None:
            return None
        name = _name(entry)
        return float(value(name)) if name is not None else self.estimate

    def _sum(self, seat: int) -> float:
        return sum(v for v in map(self._slot_value, self._row(seat)) if v is not None)

    def _unknown_slots(self, seat: int) -> list[int]:
        return [k for k, e in enumerate(self._row(seat)) if e == "?"]

    def _worst_known(self, seat: int) -> tuple[int, int] | None:
        """(slot, value) of the highest card of ``seat`` that we know."""
        best: tuple[int, int] | None = None
        for k, entry in enumerate(self._row(seat)):
            name = _name(entry)
            if name is not None and (best is None or value(name) > best[1]):
                best = (k, value(name))
        return best

    # -- decisions -----------------------------------------------------------------------------

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        legal = [a for a in legal_actions if isinstance(a, str)]
        if len(legal) != len(legal_actions) or not legal:
            return legal_actions[0]
        self._read(observation)
        phase = observation.get("phase")
        choice: str | None = None
        if phase == "draw":
            choice = self._draw(observation, legal)
        elif phase in ("stock-card", "taken-card"):
            choice = self._place(observation, legal)
        elif phase == "jack":
            choice = self._jack(legal)
        elif phase == "jack-second":
            choice = self._jack_second(legal)
        elif phase == "queen":
            choice = self._queen(legal)
        elif phase == "ace":
            choice = self._ace(legal)
        elif phase == "claim":
            choice = self._claim(observation, legal)
        elif phase == "call":
            choice = self._call(legal)
        return choice if choice in legal else legal[0]

    def _draw(self, obs: Mapping[str, JSON], legal: list[str]) -> str:
        top = _name(obs.get("top"))
        if top is None or "take" not in legal or "draw" not in legal:
            return legal[0]
        v = value(top)
        worst = self._worst_known(self.seat)
        if worst is not None and worst[1] - v >= 4:
            return "take"
        if self._unknown_slots(self.seat) and v <= 2:
            return "take"
        return "draw"

    def _target_slot(self, v: int, legal: list[str], must: bool) -> str | None:
        """Where a card of value ``v`` should go (a ``replace:K``), or None to discard it."""
        worst = self._worst_known(self.seat)
        unknown = self._unknown_slots(self.seat)
        options: list[tuple[float, str]] = []
        if worst is not None and worst[1] > v:
            options.append((float(worst[1] - v), f"replace:{worst[0]}"))
        if unknown and v < self.estimate - 1:
            options.append((self.estimate - v, f"replace:{unknown[0]}"))
        options = [o for o in options if o[1] in legal]
        if options:
            return max(options)[1]
        if must:
            replaces = [a for a in legal if a.startswith("replace:")]
            if worst is not None and f"replace:{worst[0]}" in replaces and worst[1] >= v:
                return f"replace:{worst[0]}"
            if unknown and f"replace:{unknown[0]}" in replaces:
                return f"replace:{unknown[0]}"
            return replaces[0] if replaces else None
        return None

    def _place(self, obs: Mapping[str, JSON], legal: list[str]) -> str:
        held = _name(obs.get("holding"))
        if held is None:
            return legal[0]
        v = value(held)
        must = "discard" not in legal
        target = self._target_slot(v, legal, must)
        if target is not None:
            return target
        return "discard" if "discard" in legal else legal[0]

    def _jack(self, legal: list[str]) -> str:
        """First card of a swap: our worst card, to an opponent's best (known or unseen)."""
        mine = self._worst_known(self.seat)
        my_slot: int | None = None
        my_value = 0.0
        if mine is not None and mine[1] > self.estimate + 1:
            my_slot, my_value = mine[0], float(mine[1])
        elif self._unknown_slots(self.seat):
            my_slot, my_value = self._unknown_slots(self.seat)[0], self.estimate
        if my_slot is None:
            return "pass"
        best: tuple[float, str] | None = None
        for seat in range(len(self.slots)):
            if seat == self.seat or seat == self.caller:
                continue
            for k, entry in enumerate(self._row(seat)):
                their = self._slot_value(entry)
                if their is None:
                    continue
                gain = my_value - their
                action = f"swap:{seat}:{k}"
                if gain > 1.5 and action in legal and (best is None or gain > best[0]):
                    best = (gain, action)
        first = f"swap:{self.seat}:{my_slot}"
        if best is None or first not in legal:
            return "pass"
        self._swap_target = best[1]
        return first

    def _jack_second(self, legal: list[str]) -> str:
        target, self._swap_target = self._swap_target, None
        if target is not None and target in legal:
            return target
        # Lost the plan (a replacement bot mid-swap): any card of another player.
        others = [a for a in legal if not a.startswith(f"swap:{self.seat}:")]
        return others[0] if others else legal[0]

    def _queen(self, legal: list[str]) -> str:
        for k in self._unknown_slots(self.seat):
            if f"peek:{k}" in legal:
                return f"peek:{k}"
        return "pass"

    def _ace(self, legal: list[str]) -> str:
        best: tuple[float, str] | None = None
        for action in legal:
            if not action.startswith("give:"):
                continue
            seat = _index(action, "give:")
            if seat == self.seat:
                continue
            estimate = self._sum(seat)
            if best is None or estimate < best[0]:
                best = (estimate, action)
        return best[1] if best is not None else "pass"

    def _claim(self, obs: Mapping[str, JSON], legal: list[str]) -> str:
        claim = obs.get("claim")
        rank = claim.get("rank") if isinstance(claim, dict) else None
        if not isinstance(rank, str):
            return "pass"
        for k, entry in enumerate(self._row(self.seat)):
            name = _name(entry)
            if name is not None and name[0] == rank and f"claim:{k}" in legal:
                return f"claim:{k}"
        return "pass"

    def _call(self, legal: list[str]) -> str:
        if "dutch" not in legal:
            return "pass"
        mine = self._sum(self.seat)
        unknown = len(self._unknown_slots(self.seat))
        others = [self._sum(s) for s in range(len(self.slots)) if s != self.seat]
        lowest_other = min(others) if others else 99.0
        if unknown <= 1 and mine <= CALL_AT and mine < lowest_other:
            return "dutch"
        if unknown == 0 and mine <= CALL_AT + 3 and mine + 4 < lowest_other:
            return "dutch"
        return "pass"
