"""The API every game follows: a Game (rules) makes States (one deal) and Matches (a game).

Actions are JSON-safe values (a card name, a sorted list of card names, a small dict): what a
bot sends is what the engine checks, and what the replay log keeps.

Only games.options and games.errors lie below this module: games.registry registers Game
subclasses and games.log verifies the replay logs that :meth:`Match.log` writes (the format
is documented there), and neither is imported here, so that the layers never import back.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import ClassVar, Generic, TypeAlias, TypeVar

from games.options import OptionInfo, build_rules, describe_options, rules_as_json

JSON: TypeAlias = str | int | float | bool | list["JSON"] | dict[str, "JSON"] | None
Action: TypeAlias = JSON

# Covariant: a Game[HeartsRules] is a Game[object], so registries and matches can hold any game.
RulesT = TypeVar("RulesT", covariant=True)


@dataclasses.dataclass(frozen=True, slots=True)
class Trick:
    """One finished trick: who led, the cards in play order, who won it and its points."""

    leader: int
    cards: tuple[str, ...]
    winner: int
    points: int

    def as_json(self) -> dict[str, JSON]:
        return {
            "leader": self.leader,
            "cards": list(self.cards),
            "winner": self.winner,
            "points": self.points,
        }


def running_totals(deal_points: Iterable[Sequence[int]], players: int) -> list[int]:
    """Each seat's sum of the points of some deals.

    >>> running_totals([[1, 2, 0], [5, 0, -1]], 3)
    [6, 2, -1]
    """
    totals = [0] * players
    for points in deal_points:
        for seat, p in enumerate(points):
            totals[seat] += p
    return totals


def places_for(scores: Sequence[int], *, lower_is_better: bool) -> list[int]:
    """Places (1 = best) for final scores; equal scores share the better place.

    >>> places_for([10, 3, 10, 0], lower_is_better=True)
    [3, 2, 3, 1]
    >>> places_for([5, 5, 1], lower_is_better=False)
    [1, 1, 3]
    """
    if lower_is_better:
        return [1 + sum(other < score for other in scores) for score in scores]
    return [1 + sum(other > score for other in scores) for score in scores]


class State(abc.ABC):
    """One deal in progress. Every method that reads is cheap; apply_action checks legality."""

    game: Game[object]
    deal_index: int

    @abc.abstractmethod
    def current_player(self) -> int:
        """The seat to act, or -1 once the deal is over."""

    @abc.abstractmethod
    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to act, sorted in the game's order ([] when over)."""

    @abc.abstractmethod
    def apply_action(self, action: Action) -> None:
        """Play an action of the seat to act; raises IllegalActionError and changes nothing
        when it is not legal."""

    @abc.abstractmethod
    def is_terminal(self) -> bool:
        """Whether the deal is over."""

    @abc.abstractmethod
    def points(self) -> list[int]:
        """This deal's points per seat so far (final once terminal)."""

    @abc.abstractmethod
    def observation(self, seat: int) -> dict[str, JSON]:
        """Exactly what that seat may know now, JSON-safe."""

    @abc.abstractmethod
    def history(self) -> list[tuple[int, Action]]:
        """Every (seat, action) from the deal's start."""

    @abc.abstractmethod
    def deal_record(self) -> dict[str, JSON]:
        """How this deal was dealt (seed if any, hands and any hidden packets), JSON-safe:
        ``game.deal_from_record(deal_index, record)`` rebuilds the same starting state."""

    @abc.abstractmethod
    def clone(self) -> State:
        """An independent copy."""

    def tricks(self) -> list[Trick]:
        """The finished tricks of a trick-taking deal, in order ([] for other games)."""
        return []

    def summary(self) -> dict[str, JSON]:
        """What the end of the deal makes public (for the deal_end message and replays)."""
        return {
            "points": list(self.points()),
            "tricks": [t.as_json() for t in self.tricks()],
        }


class Game(abc.ABC, Generic[RulesT]):
    """A game with fixed rules. Subclasses declare ``name``, ``rules_type``, ``presets`` and
    ``default_preset``, and are registered with :func:`games.registry.register`."""

    name: ClassVar[str]
    title: ClassVar[str]
    rules_type: ClassVar[type]
    presets: ClassVar[Mapping[str, Mapping[str, object]]]
    preset_docs: ClassVar[Mapping[str, str]] = {}
    default_preset: ClassVar[str]
    lower_is_better: ClassVar[bool] = True
    #: A match's number of deals (``fixed_deals``) must be a multiple of this (Roi: a game is
    #: ten deals, one per contract).
    deals_multiple: ClassVar[int] = 1

    def __init__(self, rules: RulesT, preset: str) -> None:
        self.rules: RulesT = rules
        self.preset = preset

    @classmethod
    def from_preset(cls, preset: str, overrides: Mapping[str, object]) -> Game[RulesT]:
        rules: RulesT = build_rules(
            cls.rules_type, game=cls.name, preset=cls.presets[preset], overrides=overrides
        )
        return cls(rules, preset)

    @classmethod
    def describe_options(cls) -> list[OptionInfo]:
        return describe_options(cls.rules_type)

    def options(self) -> dict[str, JSON]:
        """Every option of these rules by name, JSON-safe (the replay log keeps it)."""
        return dict(rules_as_json(self.rules))

    @property
    @abc.abstractmethod
    def players(self) -> int:
        """The number of seats."""

    @property
    @abc.abstractmethod
    def decisions_per_deal(self) -> int:
        """The decisions (actions, all seats together) a deal is expected to take, for time
        budgets: exact or an upper bound where the rules fix it, an estimate where play
        decides (each game documents which)."""

    @property
    def has_passes(self) -> bool:
        """Whether some deal of these rules opens with a pass phase, in which every seat gives
        cards to another (the pass actions are lists of cards; see :meth:`passes`)."""
        return False

    def passes(self, actions: Iterable[Sequence[JSON]]) -> list[JSON] | None:
        """The cards each seat passed in one deal, by seat, read from that deal's
        ``[seat, action]`` pairs in order (:meth:`State.history`, or a replay log's
        ``actions``); None when the deal had no pass, always so without a pass phase."""
        return None

    def round_deals_up(self, deals: int) -> int:
        """The fewest deals, at least ``deals``, that a match of these rules may be fixed to
        (a multiple of :attr:`deals_multiple`).

        >>> import games
        >>> games.load("hearts").round_deals_up(2), games.load("roi").round_deals_up(2)
        (2, 10)
        """
        multiple = self.deals_multiple
        return -(-deals // multiple) * multiple

    @abc.abstractmethod
    def new_deal(
        self,
        deal_index: int = 0,
        seed: int | None = None,
        hands: Sequence[Sequence[str]] | None = None,
    ) -> State:
        """A new deal, dealt from (seed, deal_index, rules) or from explicit hands."""

    @abc.abstractmethod
    def deal_from_record(self, deal_index: int, record: Mapping[str, JSON]) -> State:
        """Rebuild a deal's starting state from its :meth:`State.deal_record`."""

    @abc.abstractmethod
    def match_over(self, deal_points: Sequence[Sequence[int]]) -> bool:
        """Whether a match whose finished deals scored ``deal_points`` is over."""

    def match_scores(self, deal_points: Sequence[Sequence[int]]) -> list[int]:
        """Final scores of a match from its deals' points (default: the running totals)."""
        return running_totals(deal_points, self.players)

    def places(self, scores: Sequence[int]) -> list[int]:
        """Places for final scores (1 = best, ties share)."""
        return places_for(scores, lower_is_better=self.lower_is_better)

    def new_match(self, seed: int) -> Match:
        """A whole game: deals in sequence until the rules' end condition."""
        return Match(self, seed)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}/{self.preset} {self.players} players>"


class Match:
    """A whole game: deals played in order, running totals, the end condition, places.

    Use: while not ``match.is_over()``: play ``match.state`` to its end, then call
    ``match.next_deal()`` when ``match.state.is_terminal()`` and the match is not over.
    """

    def __init__(self, game: Game[object], seed: int) -> None:
        self.game: Game[object] = game
        self.seed = seed
        self.finished: list[State] = []
        self.state: State = game.new_deal(0, seed=seed)

    @property
    def deal_index(self) -> int:
        return self.state.deal_index

    def deal_points(self) -> list[list[int]]:
        """Points of every finished deal (the current one included once it is terminal)."""
        done = [s.points() for s in self.finished]
        if self.state.is_terminal():
            done.append(self.state.points())
        return done

    def is_over(self) -> bool:
        return self.state.is_terminal() and self.game.match_over(self.deal_points())

    def next_deal(self) -> State:
        if not self.state.is_terminal():
            raise RuntimeError("the current deal is not over")
        if self.is_over():
            raise RuntimeError("the match is over")
        self.finished.append(self.state)
        self.state = self.game.new_deal(self.state.deal_index + 1, seed=self.seed)
        return self.state

    def totals(self) -> list[int]:
        """Running totals of the finished deals."""
        return running_totals(self.deal_points(), self.game.players)

    def scores(self) -> list[int]:
        """Final scores by the game's rule (Roi floors at 0); equal to totals for most games."""
        return self.game.match_scores(self.deal_points())

    def places(self) -> list[int]:
        return self.game.places(self.scores())

    def deals(self) -> list[State]:
        """Every deal of the match so far, the current one last."""
        return [*self.finished, self.state]

    def log(self) -> dict[str, JSON]:
        """The replay log of the match so far (its format: games.log)."""
        over = self.is_over()
        return {
            "format": LOG_FORMAT,
            "version": LOG_VERSION,
            "game": self.game.name,
            "preset": self.game.preset,
            "options": self.game.options(),
            "seed": self.seed,
            "deals": [deal_log(s) for s in self.deals()],
            "totals": _json_ints(self.totals()),
            "scores": _json_ints(self.scores() if over else None),
            "places": _json_ints(self.places() if over else None),
        }


# --- replay logs: written here, where matches and deals are; read by games.log.verify ---------

#: The ``format`` and ``version`` of every replay log (games.log documents the format).
LOG_FORMAT = "tapis-replay"
LOG_VERSION = 1


def _json_ints(values: list[int] | None) -> JSON:
    return None if values is None else list[JSON](values)


def deal_log(state: State) -> dict[str, JSON]:
    """The log entry of one deal (finished or not)."""
    return {
        "index": state.deal_index,
        "deal": state.deal_record(),
        "actions": [[seat, action] for seat, action in state.history()],
        "points": _json_ints(state.points()),
    }
