"""A sound Jeu du Roi player (the ``heuristic`` built-in): it plays to each contract.

- The six negative contracts: it knows which cards (or which tricks) cost points in this
  contract; it ducks under the trick's winner, and when it must win it does so without adding
  a costly card of its own; void, it discards its costly cards first, then its highest cards;
  it leads the card least likely to win. In *no-last-trick* only the 13th trick costs: it
  sheds its high cards early and ducks at the end.
- The four trump contracts: it wins tricks as cheaply as it can (the lowest winning card when
  it plays last, its top card when that card is the highest one left), trumps when void with
  the lowest trump that wins, leads its sure winners (trumps first when it holds the top
  trump), and otherwise leads from a short side suit to make a void.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.base import JSON, Action
from games.cards import HEARTS, SUIT_MASKS
from judge.bots.base import BuiltinBot
from judge.bots.hearts import card_id

SUIT_INDEX = {"clubs": 0, "diamonds": 1, "hearts": 2, "spades": 3}
RANK_J, RANK_Q, RANK_K = 9, 10, 11
KH = HEARTS * 13 + RANK_K
FULL = (1 << 52) - 1


def _suit(card: int) -> int:
    return card // 13


def _rank(card: int) -> int:
    return card % 13


def _ids(names: object) -> list[int]:
    if not isinstance(names, list):
        return []
    return [card_id(n) for n in names if isinstance(n, str)]


class HeuristicBot(BuiltinBot):
    name = "heuristic"

    def _read(self, obs: Mapping[str, JSON]) -> None:
        self.contract = str(obs.get("contract", ""))
        trump = obs.get("trump_suit")
        self.trump = SUIT_INDEX.get(trump, -1) if isinstance(trump, str) else -1
        self.hand = _ids(obs.get("hand"))
        trick = obs.get("trick")
        self.trick: list[int] = []
        self.leader = 0
        if isinstance(trick, dict):
            self.trick = _ids(trick.get("cards"))
            leader = trick.get("leader")
            self.leader = leader if isinstance(leader, int) else 0
        played = 0
        tricks = obs.get("tricks")
        self.number = len(tricks) if isinstance(tricks, list) else 0  # finished tricks
        if isinstance(tricks, list):
            for t in tricks:
                if isinstance(t, dict):
                    for c in _ids(t.get("cards")):
                        played |= 1 << c
        for c in self.trick:
            played |= 1 << c
        mine = 0
        for c in self.hand:
            mine |= 1 << c
        self.unseen = FULL & ~played & ~mine

    # -- what costs ----------------------------------------------------------------------------

    def costly(self, card: int) -> bool:
        """Whether taking this card costs points in this contract."""
        contract = self.contract
        if contract == "no-hearts":
            return _suit(card) == HEARTS
        if contract == "no-kings-or-jacks":
            return _rank(card) in (RANK_J, RANK_K)
        if contract == "no-queens":
            return _rank(card) == RANK_Q
        if contract == "no-king-of-hearts":
            return card == KH
        return False

    def trick_cost(self, cards: Sequence[int]) -> int:
        """Rough cost of taking a trick with these cards (before ours)."""
        if self.contract == "no-tricks":
            return 1
        if self.contract == "no-last-trick":
            return 1 if self.number == 12 else 0
        return sum(1 for c in cards if self.costly(c))

    def _beats(self, card: int, best: int) -> bool:
        """Whether ``card`` beats the trick's current best card."""
        if _suit(card) == _suit(best):
            return card > best
        return _suit(card) == self.trump

    def _winner(self) -> int:
        best = self.trick[0]
        for c in self.trick[1:]:
            if self._beats(c, best):
                best = c
        return best

    def _higher_out(self, card: int) -> int:
        """Unseen cards of the same suit above ``card``."""
        return (self.unseen & SUIT_MASKS[_suit(card)] & ~((2 << card) - 1)).bit_count()

    # -- decisions -----------------------------------------------------------------------------

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        legal = [card_id(a) for a in legal_actions if isinstance(a, str)]
        if len(legal) != len(legal_actions) or not legal:
            return legal_actions[0]
        self._read(observation)
        if self.trump >= 0:
            card = self._positive(legal)
        elif self.contract == "no-last-trick" and self.number < 9:
            card = self._shed(legal)
        else:
            card = self._negative(legal)
        return legal_actions[legal.index(card)]

    # negative contracts

    def _negative(self, legal: list[int]) -> int:
        if not self.trick:
            return self._lead_low(legal)
        best = self._winner()
        last = len(self.trick) == self.players - 1
        led = _suit(self.trick[0])
        if _suit(legal[0]) != led:  # void: discard
            costly = [c for c in legal if self.costly(c)]
            if costly:
                return max(costly, key=_rank)
            return max(legal, key=lambda c: (_rank(c), -self._suit_length(_suit(c))))
        under = [c for c in legal if not self._beats(c, best)]
        if under:
            return max(under)
        # We take this trick unless someone overtakes: without our costly cards if we can.
        clean = [c for c in legal if not self.costly(c)] or legal
        if last:
            return max(clean)
        return min(clean)

    def _lead_low(self, legal: list[int]) -> int:
        def risk(card: int) -> tuple[float, int]:
            higher = self._higher_out(card)
            value = 0.0 if higher else 10.0
            value += _rank(card) * 0.2 - min(higher, 4) * 0.3
            if self.costly(card):
                value += 3.0
            return value, card

        return min(legal, key=risk)

    def _suit_length(self, suit: int) -> int:
        return sum(1 for c in self.hand if _suit(c) == suit)

    def _shed(self, legal: list[int]) -> int:
        """no-last-trick, early: get rid of high cards (tricks cost nothing yet)."""
        return max(legal, key=lambda c: (_rank(c), -self._suit_length(_suit(c))))

    # trump contracts

    def _positive(self, legal: list[int]) -> int:
        trump = self.trump
        if not self.trick:
            return self._lead_win(legal)
        best = self._winner()
        last = len(self.trick) == self.players - 1
        winners = [c for c in legal if self._beats(c, best)]
        if not winners:
            return self._cheapest_discard(legal)
        led = _suit(self.trick[0])
        if last:
            return min(winners, key=lambda c: (_suit(c) == trump, _rank(c)))
        following = [c for c in winners if _suit(c) == led]
        if following:
            top = max(following)
            trumped_danger = led != trump and self._others_may_trump(led)
            if self._higher_out(top) == 0 and not trumped_danger:
                return top
            return min(legal, key=_rank) if _suit(legal[0]) == led else min(winners)
        # Void in the led suit: trump with the lowest trump that wins.
        return min(winners, key=_rank)

    def _others_may_trump(self, suit: int) -> bool:
        """Whether the cards of ``suit`` still out are few enough that someone may be void."""
        out = (self.unseen & SUIT_MASKS[suit]).bit_count()
        return out < 3

    def _cheapest_discard(self, legal: list[int]) -> int:
        side = [c for c in legal if _suit(c) != self.trump]
        pool = side or legal
        return min(pool, key=lambda c: (self._suit_length(_suit(c)), _rank(c)))

    def _lead_win(self, legal: list[int]) -> int:
        trump = self.trump
        trumps = [c for c in legal if _suit(c) == trump]
        trumps_out = (self.unseen & SUIT_MASKS[trump]).bit_count()
        if trumps and trumps_out and self._higher_out(max(trumps)) == 0:
            return max(trumps)  # draw trumps with the top one
        sure = [c for c in legal if _suit(c) != trump and self._higher_out(c) == 0]
        sure = [c for c in sure if not self._others_may_trump(_suit(c)) or not trumps_out]
        if sure:
            return max(sure)
        side = [c for c in legal if _suit(c) != trump]
        if side:
            return min(side, key=lambda c: (self._suit_length(_suit(c)), _rank(c)))
        return min(legal)
