"""Engine speed on this machine: random legal games through every registered game and preset's
named API, the Hearts int fast path, and OpenSpiel's ``hearts`` (driven from Python the same
way, and its own C++ loop), with the ratios. Prints figures; asserts nothing.

    .venv/bin/python bench/engine.py                 # every game and preset, 2 s each, best of 3
    .venv/bin/python bench/engine.py --game hearts --seconds 1 --repeat 5

A "deal" is one deal from its seed to its end: dealing, passing if the deal has a pass, every
card. Through the named API each decision is ``legal_actions()``, ``random.choice`` and
``apply_action()`` (checked), as a bot driver would do it. The Hearts figures compared with
OpenSpiel are the no-pass deals (OpenSpiel's ``pass_cards=False``) with whisthub's rules.
Other processes on the machine slow every figure; the best of several runs is reported.
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

GOALS = {
    "named": 20_000,  # whisthub no-pass deals/s through the checked named API
    "fast": 38_000,  # the fast path: at least OpenSpiel's own C++ loop
}


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
        game.rules.leftover_count if game.stock_mode else 0
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    args = parser.parse_args(argv)
    seconds, repeat = args.seconds, args.repeat

    print(f"engine speed, best of {repeat} x {seconds:g} s (wall clock)")
    print(f"{'game/preset':<34} {'deals/s':>12} {'decisions/s':>14} {'fast path deals/s':>16}")
    results: dict[str, float] = {}
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
            if name == "hearts" and preset == "whisthub":
                nopass = games.load("hearts", "whisthub", pass_schedule="none")
                assert isinstance(nopass, HeartsGame)
                named = measure(named_api(nopass, 2, lambda k: k), seconds, repeat)
                fast = measure(fast_path(nopass, 2, lambda k: k), seconds, repeat)
                print(row("hearts/whisthub, no-pass deals", named, fast), flush=True)
                results["named"], results["fast"] = named[0], fast[0]

    if args.game and "hearts" not in args.game:
        return 0
    spiel_py, spiel_cpp = openspiel_from_python(3), openspiel_cpp(3)
    if spiel_py is None or spiel_cpp is None:
        print("OpenSpiel (pyspiel) is not installed: no comparison")
        return 0
    py = measure(spiel_py, seconds, repeat)
    cpp = measure(spiel_cpp, seconds, repeat)
    print(row("OpenSpiel hearts, from Python", py))
    print(row("OpenSpiel hearts, its C++ loop", cpp))
    if "named" in results:
        named_rate, fast_rate = results["named"], results["fast"]
        print()
        print(
            f"named API / OpenSpiel from Python: {named_rate / py[0]:.2f}x"
            f"  ({named_rate:,.0f} deals/s; goal {GOALS['named']:,})"
        )
        print(
            f"fast path / OpenSpiel C++ loop:    {fast_rate / cpp[0]:.2f}x"
            f"  ({fast_rate:,.0f} deals/s; goal {GOALS['fast']:,})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
