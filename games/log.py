"""Replay logs: their format (written by :meth:`games.base.Match.log`), and ``verify``, which
re-plays one through the engine.

The format (version 1)::

    {
      "format": "tapis-replay", "version": 1,
      "game": "hearts", "preset": "whisthub", "options": {...every option...},
      "seed": 42,                      # null when the deals were given explicitly
      "deals": [
        {"index": 0, "deal": {...State.deal_record()...},
         "actions": [[seat, action], ...],
         "points": [p0, p1, ...],
         "times": [seconds, ...]}      # optional: one per action, added by the judge
      ],
      "totals": [...], "scores": [...], "places": [...]
    }

Unknown keys are ignored by ``verify``, so producers may add their own (faults, bot names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from games.base import JSON, LOG_FORMAT, LOG_VERSION, Game, deal_log, running_totals
from games.errors import GameError, IllegalActionError, LogError
from games.registry import load

# deal_log is written by games.base (with Match.log) and kept importable from here.
__all__ = ["Verdict", "deal_log", "place_in_words", "verify", "verify_deal"]


def place_in_words(deal: int | None, decision: int | None = None) -> str:
    """Where in a table something happened, counted from 1 as people count.

    ``deal`` and ``decision`` are the indexes a log and the API keep (from 0); None for a
    deal means before the first deal.

    >>> place_in_words(1, 20)
    'deal 2, decision 21'
    >>> place_in_words(0)
    'deal 1'
    >>> place_in_words(None)
    'start-up'
    """
    if deal is None:
        return "start-up"
    where = f"deal {deal + 1}"
    return where if decision is None else f"{where}, decision {decision + 1}"


def _ints(value: JSON, what: str) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise LogError(f"{what} must be a list of integers")
    return [v for v in value if isinstance(v, int)]


@dataclasses.dataclass(frozen=True, slots=True)
class Verdict:
    """The result of verifying a log: ok, or the first thing found wrong and where."""

    ok: bool
    message: str
    deal: int | None = None
    step: int | None = None  # index of the action in the deal's action list

    def as_json(self) -> dict[str, JSON]:
        return {"ok": self.ok, "message": self.message, "deal": self.deal, "step": self.step}


def _game_of(log: Mapping[str, JSON]) -> Game[object]:
    if log.get("format") != LOG_FORMAT or log.get("version") != LOG_VERSION:
        raise LogError(f"not a {LOG_FORMAT} log of version {LOG_VERSION}")
    name, preset, options = log.get("game"), log.get("preset"), log.get("options", {})
    if not isinstance(name, str) or not isinstance(preset, str) or not isinstance(options, dict):
        raise LogError("a log needs a game name, a preset name and an options object")
    return load(name, preset, **options)


def verify_deal(game: Game[object], entry: Mapping[str, JSON], seed: int | None) -> Verdict:
    """Re-play one deal entry: every action legal and by the right seat, points right."""
    index = entry.get("index")
    record = entry.get("deal")
    actions = entry.get("actions")
    if not isinstance(index, int) or not isinstance(record, dict) or not isinstance(actions, list):
        raise LogError("a deal entry needs an index, a deal record and a list of actions")
    state = game.deal_from_record(index, record)
    deal_seed = record.get("seed", seed)
    if isinstance(deal_seed, int) and game.new_deal(index, seed=deal_seed).deal_record() != record:
        return Verdict(False, f"deal {index + 1} is not the deal its seed gives", index, None)
    for step, item in enumerate(actions):
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int):
            raise LogError(f"deal {index + 1}, action {step + 1}: expected [seat, action]")
        seat, action = item
        if state.is_terminal():
            return Verdict(False, f"action after the end of the deal: {action!r}", index, step)
        if seat != state.current_player():
            return Verdict(
                False,
                f"seat {seat} acted but seat {state.current_player()} was to act",
                index,
                step,
            )
        try:
            state.apply_action(action)
        except IllegalActionError as exc:
            return Verdict(False, f"illegal action {action!r} by seat {seat}: {exc}", index, step)
    if entry.get("points") != state.points():
        return Verdict(
            False,
            f"deal {index + 1} scores {state.points()}, the log says {entry.get('points')}",
            index,
            None,
        )
    return Verdict(True, "ok", index, None)


def verify(log: Mapping[str, JSON]) -> Verdict:
    """Re-play a whole log; the first illegal action, wrong seat or wrong score, if any."""
    try:
        game = _game_of(log)
        seed = log.get("seed")
        if seed is not None and not isinstance(seed, int):
            raise LogError("the seed must be an integer or null")
        deals = log.get("deals")
        if not isinstance(deals, list) or not deals:
            raise LogError("a log needs a non-empty list of deals")
        deal_points = []
        for position, entry in enumerate(deals):
            if not isinstance(entry, dict):
                raise LogError("every deal entry is an object")
            if entry.get("index") != position:
                raise LogError(f"deal entries must be in order: entry {position + 1}")
            verdict = verify_deal(game, entry, seed)
            if not verdict.ok:
                return verdict
            deal_points.append(_ints(entry["points"], f"deal {position + 1} points"))
            if position < len(deals) - 1 and game.match_over(deal_points):
                return Verdict(False, f"the match was over after deal {position + 1}", position)
        return _verify_results(game, log, deal_points, len(deals) - 1)
    except GameError as exc:
        return Verdict(False, f"bad log: {exc}")


def _verify_results(
    game: Game[object], log: Mapping[str, JSON], deal_points: list[list[int]], last: int
) -> Verdict:
    totals = running_totals(deal_points, game.players)
    if log.get("totals") is not None and log.get("totals") != totals:
        return Verdict(False, f"totals are {totals}, the log says {log.get('totals')}", last)
    if log.get("scores") is not None or log.get("places") is not None:
        if not game.match_over(deal_points):
            return Verdict(False, "the log gives final places but the match is not over", last)
        scores = game.match_scores(deal_points)
        places = game.places(scores)
        if log.get("scores") != scores:
            return Verdict(False, f"scores are {scores}, the log says {log.get('scores')}", last)
        if log.get("places") != places:
            return Verdict(False, f"places are {places}, the log says {log.get('places')}", last)
    return Verdict(True, "ok")
