"""Helpers shared by the engine tests (imported by name: tests/games is on sys.path)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from games.base import Action, State

Policy = Callable[[State], Action]
S = TypeVar("S", bound=State)


def lowest(state: State) -> Action:
    """The first legal action (for cards: the lowest card id, clubs first)."""
    return state.legal_actions()[0]


def play_out(
    state: S,
    script: Mapping[int, Sequence[Action]] | None = None,
    *,
    policy: Policy = lowest,
    stop: Callable[[State], bool] | None = None,
) -> S:
    """Play until the end (or until ``stop(state)``): seats in ``script`` play their listed
    actions in order (then ``policy``), every other seat plays ``policy``."""
    queues = {seat: list(actions) for seat, actions in (script or {}).items()}
    while not state.is_terminal() and not (stop is not None and stop(state)):
        seat = state.current_player()
        queue = queues.get(seat)
        state.apply_action(queue.pop(0) if queue else policy(state))
    return state


def view(state: State, seat: int) -> dict[str, Any]:
    """A seat's observation, loosely typed for tests."""
    return dict(state.observation(seat))


def record(state: State) -> dict[str, Any]:
    """A deal record, loosely typed for tests."""
    return dict(state.deal_record())


def snapshot(state: State) -> object:
    """Everything the public API says about a state (to check that it did not change)."""
    players = state.game.players
    return (
        state.current_player(),
        state.is_terminal(),
        state.legal_actions(),
        state.history(),
        state.points(),
        [state.observation(seat) for seat in range(players)],
        state.deal_record(),
    )
