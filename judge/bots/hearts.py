"""A sound Hearts player for every preset of the Hearts family (the ``heuristic`` built-in).

It reads everything from the observation (hand, trick, finished tricks, points taken) and the
rule options of ``hello``:

- passing: voids a short side suit, sheds QS (unless well guarded by low spades), AS and KS
  when short of spades, and high hearts;
- following: ducks under the trick's winner when the trick carries points (or may still get
  some), takes a clean trick with its highest card when it plays last, drops QS on AS or KS;
- discarding: QS first, then AS/KS while QS is out, then its highest heart, then the highest
  card of its shortest suit;
- leading: smokes out QS with low spades when it holds none of QS/KS/AS, else leads the lowest
  card that another player is likely to beat, hearts last;
- stopping a moon: when one opponent has taken every penalty card so far (and enough of them
  to matter), it keeps a heart to take and tries to win the tricks that hold hearts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.base import JSON, Action
from games.cards import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    RANK_K,
    RANK_Q,
    SPADES,
    SUIT_MASKS,
    card_name,
    parse_card,
)
from judge.bots.base import BuiltinBot

QS = SPADES * 13 + RANK_Q
KS = SPADES * 13 + RANK_K
AS = SPADES * 13 + 12
TD = DIAMONDS * 13 + 8
MOON_ALERT = 10  # penalty points one opponent must have taken alone before we act on a moon

_IDS: dict[str, int] = {}


def card_id(name: str) -> int:
    """The int of a card name (cached)."""
    card = _IDS.get(name)
    if card is None:
        card = _IDS[name] = parse_card(name)
    return card


def _ids(names: object) -> list[int]:
    if not isinstance(names, list):
        return []
    return [card_id(n) for n in names if isinstance(n, str)]


def _rank(card: int) -> int:
    return card % 13


def _suit(card: int) -> int:
    return card // 13


class HeuristicBot(BuiltinBot):
    name = "heuristic"

    # -- state read from the observation ------------------------------------------------------

    def _read(self, obs: Mapping[str, JSON]) -> None:
        self.hand = _ids(obs.get("hand"))
        trick = obs.get("trick")
        self.trick: list[int] = []
        self.leader = -1
        if isinstance(trick, dict):
            self.trick = _ids(trick.get("cards"))
            leader = trick.get("leader")
            self.leader = leader if isinstance(leader, int) else -1
        self.played = 0  # every card seen on the table (finished tricks and this one)
        self.penalty_by: dict[int, int] = {}  # seat -> penalty points taken so far
        self.hearts_out_to: set[int] = set()  # seats that took at least one penalty card
        tricks = obs.get("tricks")
        self.tricks_done = 0
        self.voids: dict[int, set[int]] = {}
        if isinstance(tricks, list):
            self.tricks_done = len(tricks)
            for t in tricks:
                if not isinstance(t, dict):
                    continue
                cards = _ids(t.get("cards"))
                winner = t.get("winner")
                leader = t.get("leader")
                for c in cards:
                    self.played |= 1 << c
                if isinstance(winner, int):
                    pen = sum(1 for c in cards if _suit(c) == HEARTS) + (13 if QS in cards else 0)
                    if pen:
                        self.penalty_by[winner] = self.penalty_by.get(winner, 0) + pen
                if isinstance(leader, int) and cards:
                    led = _suit(cards[0])
                    for i, c in enumerate(cards[1:], 1):
                        if _suit(c) != led:
                            self.voids.setdefault((leader + i) % self.players, set()).add(led)
        for c in self.trick:
            self.played |= 1 << c
        mine = 0
        for c in self.hand:
            mine |= 1 << c
        self.mine = mine
        # Cards nobody has shown and we do not hold (other hands, a reserve or a stock).
        self.unseen = ((1 << 52) - 1) & ~self.played & ~mine

    def _opt(self, name: str, default: JSON) -> JSON:
        return self.options.get(name, default)

    def _trick_points(self, cards: Sequence[int]) -> int:
        points = 0
        for c in cards:
            if _suit(c) == HEARTS:
                points += 1
            elif c == QS:
                points += 13
            elif c == TD and self._opt("td_bonus", False):
                points -= 10
        return points

    def _moon_threat(self) -> int | None:
        """The opponent who has taken every penalty card so far, when enough to matter."""
        if self._opt("moon", "others-plus-26") == "none" or len(self.penalty_by) != 1:
            return None
        ((seat, points),) = self.penalty_by.items()
        if seat == self.seat or points < MOON_ALERT:
            return None
        return seat

    # -- decisions -----------------------------------------------------------------------------

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        if observation.get("phase") == "pass":
            return self._pass(observation, legal_actions)
        self._read(observation)
        legal = [card_id(a) for a in legal_actions if isinstance(a, str)]
        if len(legal) != len(legal_actions) or not legal:
            return legal_actions[0]
        card = self._play(legal)
        return legal_actions[legal.index(card)]

    def _pass(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        hand = _ids(observation.get("hand"))
        first = legal_actions[0]
        count = len(first) if isinstance(first, list) else 3
        chosen = self.choose_pass(hand, count)
        names = sorted(chosen)
        action: list[JSON] = [card_name(c) for c in names]
        return action if action in legal_actions else first

    def choose_pass(self, hand: list[int], count: int) -> list[int]:
        """The cards to pass: a sound, simple choice."""
        by_suit: dict[int, list[int]] = {s: [] for s in range(4)}
        for c in hand:
            by_suit[_suit(c)].append(c)
        spades = by_suit[SPADES]
        low_spades = [c for c in spades if c < QS]
        keep_queen = QS in hand and len(low_spades) >= 4
        score: dict[int, float] = {}
        for c in hand:
            r = _rank(c)
            s = _suit(c)
            value = float(r)
            if c == QS:
                value = -50.0 if keep_queen else 100.0
            elif c in (AS, KS):
                value = 20.0 if keep_queen or len(low_spades) >= 4 else 80.0 + r
            elif s == HEARTS:
                value = r * 2.5 if r >= 8 else r * 0.5
            elif s == SPADES:
                value = -10.0 + r  # low spades guard against QS: keep them
            score[c] = value
        # Void a short club or diamond suit when the rest of the pass allows it.
        must = [c for c in hand if score[c] >= 80.0][:count]
        room = count - len(must)
        best_void: list[int] | None = None
        for s in (CLUBS, DIAMONDS):
            cards = by_suit[s]
            if 0 < len(cards) <= room and (best_void is None or len(cards) < len(best_void)):
                if s == CLUBS and 0 in cards and len(cards) > 1:
                    continue  # keep a club suit holding 2C: we lead it anyway
                best_void = cards
        chosen = list(must)
        if best_void is not None:
            chosen += best_void
        rest = sorted((c for c in hand if c not in chosen), key=lambda c: -score[c])
        chosen += rest[: count - len(chosen)]
        return chosen[:count]

    def _play(self, legal: list[int]) -> int:
        trick = self.trick
        if not trick:
            return self._lead(legal)
        led = _suit(trick[0])
        if _suit(legal[0]) == led:
            return self._follow(legal, led)
        return self._discard(legal)

    def _winner(self) -> tuple[int, int]:
        """The card winning the trick so far and the seat that played it."""
        led = _suit(self.trick[0])
        best = self.trick[0]
        pos = 0
        for i, c in enumerate(self.trick):
            if _suit(c) == led and c > best:
                best, pos = c, i
        return best, (self.leader + pos) % self.players

    def _follow(self, legal: list[int], led: int) -> int:
        best, winner_seat = self._winner()
        last = len(self.trick) == self.players - 1
        points = self._trick_points(self.trick)
        under = [c for c in legal if c < best]
        over = [c for c in legal if c > best]
        threat = self._moon_threat()
        if threat is not None and over:
            # Take a trick with hearts in it (or one the threat may still fill) ourselves.
            hearts_here = any(_suit(c) == HEARTS for c in self.trick)
            if hearts_here or winner_seat == threat:
                safe = [c for c in over if c != QS]
                return max(safe) if safe else max(over)
        if led == SPADES and QS in legal and best > QS:
            return QS  # drop the queen on the king or the ace
        first_trick_clean = (
            self.tricks_done == 0 and self._opt("first_trick_points", "forbidden") == "forbidden"
        )
        if points < 0 and over:  # a bonus (TD) to take
            return min(over) if last else max(over)
        if first_trick_clean and led != HEARTS:
            safe = [c for c in legal if c != QS]
            return max(safe) if safe else legal[0]
        if last:
            if points > 0:
                if under:
                    return max(under)
                safe = [c for c in legal if c != QS]
                return max(safe) if safe else legal[0]
            # A clean trick: win it with our highest card, but never with QS.
            safe = [c for c in legal if c != QS]
            return max(safe) if safe else legal[0]
        if under:
            # Duck: the highest card that still loses, keeping AS/KS out of spade tricks.
            if led == SPADES and (self.unseen >> QS) & 1:
                low = [c for c in under if c < QS]
                if low:
                    return max(low)
            return max(under)
        # We cannot duck: let a later player overtake if possible (lowest), except QS.
        safe = [c for c in legal if c != QS]
        if led == SPADES and (self.unseen >> QS) & 1:
            below = [c for c in safe if c < QS]
            if below:
                return max(below)
        return min(safe) if safe else legal[0]

    def _discard(self, legal: list[int]) -> int:
        _, winner_seat = self._winner()
        threat = self._moon_threat()
        hearts = [c for c in legal if _suit(c) == HEARTS]
        if threat is not None and winner_seat == threat:
            # Do not feed the shooter: shed a high card of another suit, keep hearts.
            others = [c for c in legal if _suit(c) != HEARTS and c != QS]
            if others:
                return max(others, key=_rank)
        if QS in legal:
            return QS
        queen_out = bool((self.unseen >> QS) & 1)
        if queen_out:
            for c in (AS, KS):
                if c in legal:
                    return c
        if hearts:
            return max(hearts)
        if self._opt("td_bonus", False) and TD in legal and len(legal) > 1:
            legal = [c for c in legal if c != TD]
        # The highest card of our shortest suit (towards another void), ties by rank.
        length = {s: sum(1 for c in self.hand if _suit(c) == s) for s in range(4)}
        return max(legal, key=lambda c: (_rank(c) >= 9, -length[_suit(c)], _rank(c)))

    def _lead(self, legal: list[int]) -> int:
        threat = self._moon_threat()
        if threat is not None:
            hearts = [c for c in legal if _suit(c) == HEARTS]
            if hearts:
                return max(hearts)  # take a heart ourselves
        queen_out = bool((self.unseen >> QS) & 1)
        spades = [c for c in legal if _suit(c) == SPADES]
        big_spades = [c for c in self.hand if c in (QS, KS, AS)]
        if queen_out and spades and not big_spades:
            return max(spades)  # smoke out the queen with spades below it
        best: tuple[float, int] | None = None
        for c in legal:
            if c == QS and len(legal) > 1:
                continue
            s = _suit(c)
            suit_unseen = self.unseen & SUIT_MASKS[s]
            higher = (suit_unseen >> (c + 1)).bit_count()
            lower = (suit_unseen & ((1 << c) - 1)).bit_count()
            # Lower is better: sure to lose when others hold higher cards of the suit.
            risk = 0.0 if higher else 10.0
            risk += lower * 0.5 + _rank(c) * 0.1
            if s == HEARTS:
                risk += 2.0
            if queen_out and c in (KS, AS):
                risk += 20.0
            if s == DIAMONDS and c == TD and self._opt("td_bonus", False):
                risk += 5.0
            if best is None or risk < best[0]:
                best = (risk, c)
        assert best is not None
        return best[1]
