"""Engine speed on this machine: random legal games through every registered game and preset's
named API, the Hearts int fast path, and OpenSpiel's ``hearts`` (driven from Python the same
way, and its own C++ loop), with the ratios. Prints figures; asserts nothing.

    .venv/bin/python bench/engine.py                 # every game and preset, 2 s each, best of 3
    .venv/bin/python bench/engine.py --game hearts --seconds 1 --repeat 5

The first line says which engine runs (``games.ENGINE``): the hot modules compiled by mypyc
when ``make compile`` built them from the current sources, else pure Python;
``TAPIS_PURE_PYTHON=1`` measures the pure-Python engine. The loops are the same either way.

A "deal" is one deal from its start to its end. What each figure includes:

- named API (every game and preset): ``game.new_deal(deal_index, seed=...)``, i.e. the
  SHA-256 deal of games.dealing, then, per decision, ``legal_actions()``, ``random.choice``
  and ``apply_action()`` (checked), as a bot driver would do it; passes when the deal has
  one (whisthub: 3 deals in 4; each pass lists every 3-card combination, 286 of them).
- Hearts fast path: ``games.hearts_fast.random_deal_points``: a deal shuffled by the host's
  ``random.Random`` (no SHA-256), random passes if any, every card by the full rules on
  bitmasks, no names and no per-action checks, then the points.
- OpenSpiel from Python: ``new_initial_state()``, action 0 at the pass-direction chance node
  (no pass), the 52 dealing chance nodes and then every decision each driven by
  ``legal_actions()`` + ``random.choice`` + ``apply_action()`` from Python (its dealing is
  part of the loop, as ours is part of ``new_deal``).
- OpenSpiel's C++ loop: ``pyspiel.evaluate_bots`` with uniform random bots: dealing (C++
  random chance outcomes), passes off, every decision, all in C++, one Python call per deal.

The Hearts figures compared with OpenSpiel are no-pass deals with whisthub's rules (OpenSpiel's
``pass_cards=False, qs_breaks_hearts=False``). The comparison is measured in rounds that run the
four loops back to back, so that the load of other processes hits all of them alike; the best
round of each is reported. The goals (issue 3): the named API at twice OpenSpiel from Python,
the fast path at least as fast as OpenSpiel's C++ loop.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games
from games.base import Game
from games.hearts import HeartsGame
from games.hearts_fast import random_deal_points

# One deal; returns the number of decisions it took.
Deal = Callable[[int], int]

#: Issue 3's goals, as multiples of the OpenSpiel figures measured in the same run (the issue
#: puts the named API's at about 20,000 deals/s on this machine when idle).
NAMED_GOAL_RATIO = 2.0  # named API / OpenSpiel driven from Python
NAMED_GOAL_RATE = 20_000  # whisthub no-pass deals/s
FAST_GOAL_RATIO = 1.0  # fast path / OpenSpiel's C++ loop


def measure(deal: Deal, seconds: float, repeat: int) -> tuple[float, float]:
    """Best (deals/s, decisions/s) over ``repeat`` runs of about ``seconds`` each."""
    best = (0.0, 0.0)
    for _ in range(repeat):
        deals = decisions = 0
        start = time.perf_counter()
        deadline = start + seconds
        while True:
            decisions += deal(deals)
            deals += 1
            if deals % 16 == 0 and time.perf_counter() >= deadline:
                break
        elapsed = time.perf_counter() - start
        if deals / elapsed > best[0]:
            best = (deals / elapsed, decisions / elapsed)
    return best


def named_api(game: Game[object], seed: int, deal_indexes: Callable[[int], int]) -> Deal:
    rng = random.Random(seed)
    choice = rng.choice

    def deal(k: int) -> int:
        state = game.new_deal(deal_indexes(k), seed=seed + k)
        steps = 0
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
            steps += 1
        return steps

    return deal


def fast_path(game: HeartsGame, seed: int, deal_indexes: Callable[[int], int]) -> Deal:
    rng = random.Random(seed)
    cards = game.rules.hand_size * game.players + (
        game.rules.leftover_count if game.table.stock_mode else 0
    )

    def deal(k: int) -> int:
        random_deal_points(game, deal_indexes(k), rng)
        return cards

    return deal


def openspiel_from_python(seed: int) -> Deal | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("hearts", {"pass_cards": False, "qs_breaks_hearts": False})
    rng = random.Random(seed)
    choice = rng.choice

    def deal(k: int) -> int:
        state = game.new_initial_state()
        state.apply_action(0)  # no pass
        while state.is_chance_node():
            state.apply_action(choice(state.legal_actions()))
        steps = 0
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
            steps += 1
        return steps

    return deal


def openspiel_cpp(seed: int) -> Deal | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("hearts", {"pass_cards": False, "qs_breaks_hearts": False})
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(4)]

    def deal(k: int) -> int:
        pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + k)
        return 52

    return deal


def row(label: str, figures: tuple[float, float], fast: tuple[float, float] | None = None) -> str:
    deals, decisions = figures
    text = f"{label:<34} {deals:>12,.0f} {decisions:>14,.0f}"
    if fast is not None:
        text += f" {fast[0]:>16,.0f}"
    return text


def driver_only(seed: int, decisions: int = 52) -> Deal:
    """The driving loop alone, on a state that does nothing: the floor of any named-API figure
    (``is_terminal``, ``legal_actions`` returning a fresh 3-item list, ``random.choice``,
    ``apply_action``)."""
    rng = random.Random(seed)
    choice = rng.choice

    class Null:
        __slots__ = ("left",)

        def __init__(self) -> None:
            self.left = decisions

        def is_terminal(self) -> bool:
            return self.left == 0

        def legal_actions(self) -> list[str]:
            return [*_NULL_ACTIONS]

        def apply_action(self, action: str) -> None:
            self.left -= 1

    def deal(k: int) -> int:
        state = Null()
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
        return decisions

    return deal


_NULL_ACTIONS = ("2C", "3C", "4C")


def compare(seconds: float, repeat: int) -> dict[str, tuple[float, float]] | None:
    """Whisthub no-pass deals against OpenSpiel, in rounds that run every loop back to back;
    the best round of each."""
    spiel_py, spiel_cpp = openspiel_from_python(3), openspiel_cpp(3)
    if spiel_py is None or spiel_cpp is None:
        return None
    nopass = games.load("hearts", "whisthub", pass_schedule="none")
    assert isinstance(nopass, HeartsGame)
    loops = {
        "named": named_api(nopass, 2, lambda k: k),
        "fast": fast_path(nopass, 2, lambda k: k),
        "spiel_py": spiel_py,
        "spiel_cpp": spiel_cpp,
        "driver": driver_only(4),
    }
    best = dict.fromkeys(loops, (0.0, 0.0))
    for _ in range(repeat):
        for key, loop in loops.items():
            figures = measure(loop, seconds, 1)
            if figures[0] > best[key][0]:
                best[key] = figures
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    args = parser.parse_args(argv)
    seconds, repeat = args.seconds, args.repeat

    print(f"engine: {games.ENGINE} (games.COMPILED = {games.COMPILED})")
    print(f"engine speed, best of {repeat} x {seconds:g} s (wall clock)")
    print(f"{'game/preset':<34} {'deals/s':>12} {'decisions/s':>14} {'fast path deals/s':>16}")
    for name in games.game_names():
        if args.game and name not in args.game:
            continue
        for preset in games.game_class(name).presets:
            game = games.load(name, preset)
            named = measure(named_api(game, 1, lambda k: k), seconds, repeat)
            fast = None
            if isinstance(game, HeartsGame):
                fast = measure(fast_path(game, 1, lambda k: k), seconds, repeat)
            print(row(f"{name}/{preset}", named, fast), flush=True)

    if args.game and "hearts" not in args.game:
        return 0
    best = compare(seconds, repeat)
    if best is None:
        print("OpenSpiel (pyspiel) is not installed: no comparison")
        return 0
    print()
    print(f"whisthub no-pass deals against OpenSpiel, best of {repeat} rounds run back to back")
    print(row("Tapis named API (SHA-256 deal)", best["named"]))
    print(row("OpenSpiel, from Python", best["spiel_py"]))
    print(row("Tapis fast path (host RNG deal)", best["fast"]))
    print(row("OpenSpiel, its C++ loop", best["spiel_cpp"]))
    print(row("driver loop alone (52 decisions)", best["driver"]))
    named_rate, fast_rate = best["named"][0], best["fast"][0]
    py_rate, cpp_rate = best["spiel_py"][0], best["spiel_cpp"][0]
    named_goal = NAMED_GOAL_RATIO * py_rate
    print()
    print(
        f"named API / OpenSpiel from Python: {named_rate / py_rate:.2f}x (goal "
        f"{NAMED_GOAL_RATIO:g}x = {named_goal:,.0f} deals/s here and now; about "
        f"{NAMED_GOAL_RATE:,} on an idle machine): {named_rate / named_goal:.0%} of the goal"
    )
    print(
        f"fast path / OpenSpiel C++ loop:    {fast_rate / cpp_rate:.2f}x (goal "
        f"{FAST_GOAL_RATIO:g}x = {FAST_GOAL_RATIO * cpp_rate:,.0f} deals/s): "
        f"{fast_rate / (FAST_GOAL_RATIO * cpp_rate):.0%} of the goal"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
