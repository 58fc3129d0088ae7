"""``tapis play``: play a table locally with the judge's engine, clock and sandbox.

    tapis play --game hearts --preset whisthub --deals 8 --seed 42 my_bot.py builtin:random

BOT is a bot package (a ``.py`` file, a ``.zip`` with a ``tapis.json`` manifest, or a folder
holding one) or ``builtin:NAME``; missing seats are filled with the game's heuristic bot (or
``random``). A progress bar goes to stderr when it is a terminal; then a results table, or with
``--json`` one JSON object with, per seat, its totals, decision count, mean and p99 decision
time and faults.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from games.base import JSON
from games.log import place_in_words

if TYPE_CHECKING:
    from judge.results import TableResult

PROGRESS_WIDTH = 30


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play a table of bots locally",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog="BOT is a source file (.py .c .cpp .rs .go .java .js), a .zip or a folder with "
        "tapis.json, or builtin:NAME "
        "(random, lowest, heuristic).",
    )
    parser.add_argument("--game", default="hearts", help="game name (default: hearts)")
    parser.add_argument("--preset", default=None, help="rules preset (default: the game's)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a rule option (repeatable; see `tapis rules GAME`)",
    )
    parser.add_argument(
        "--deals",
        type=int,
        default=None,
        help="play exactly this many deals (default: the game's own end condition)",
    )
    parser.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    parser.add_argument(
        "--sandbox",
        choices=("bwrap", "none"),
        default="bwrap",
        help="run bots under bubblewrap (default) or, for your own bots only, unsandboxed",
    )
    parser.add_argument("--decision", type=float, default=1.0, help="seconds per decision")
    parser.add_argument("--bank", type=float, default=20.0, help="time bank per seat (seconds)")
    parser.add_argument("--startup", type=float, default=5.0, help="start-up limit (seconds)")
    parser.add_argument(
        "--max-faults", type=int, default=3, help="faults before a seat is replaced"
    )
    parser.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the table (judge and bots) on one CPU: faster round trips (default: on)",
    )
    parser.add_argument("--replay", type=Path, default=None, help="write the replay log here")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--logs", action="store_true", help="print each bot's stderr after the results"
    )
    parser.add_argument("bots", nargs="+", metavar="BOT", help="one bot per seat")
    parser.set_defaults(func=run)


def parse_options(items: list[str]) -> dict[str, object]:
    """The rule options of ``--option NAME=VALUE`` arguments (VALUE is JSON, or else text).

    >>> parse_options(["moon=none", "td_bonus=true", "players=3"])
    {'moon': 'none', 'td_bonus': True, 'players': 3}
    """
    options: dict[str, object] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--option takes NAME=VALUE, not {item!r}")
        options[name.strip()] = _option_value(value)
    return options


def _option_value(text: str) -> object:
    try:
        value: object = json.loads(text)
    except ValueError:
        return text
    return value


class _Progress:
    """A one-line progress bar on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, done: int, total: int | None) -> None:
        if total:
            filled = PROGRESS_WIDTH * done // total
            bar = "#" * filled + "." * (PROGRESS_WIDTH - filled)
            text = f"\r[{bar}] {done}/{total} deals"
        else:
            text = f"\r{done} deal(s) played"
        self.stream.write(text)
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _fail(message: str) -> int:
    print(f"tapis play: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    import games
    from judge import bots as builtins
    from judge.launchers.package import PackageError, check
    from judge.runner import BotSpec, Limits, run_table

    try:
        options = parse_options(args.option)
    except ValueError as exc:
        return _fail(str(exc))
    if args.deals is not None and args.deals < 1:
        return _fail("--deals must be at least 1")
    try:
        probe = games.load(
            args.game,
            args.preset,
            **options,
            **({"fixed_deals": args.deals} if args.deals is not None else {}),
        )
    except ValueError as exc:
        return _fail(str(exc))
    specs = [BotSpec.parse(text) for text in args.bots]
    if len(specs) > probe.players:
        return _fail(f"{probe.name}/{probe.preset} seats {probe.players}, got {len(specs)} bots")
    filler = builtins.replacement_name(probe.name)
    if len(specs) < probe.players:
        missing = probe.players - len(specs)
        print(f"tapis play: {missing} empty seat(s) filled with builtin:{filler}", file=sys.stderr)
        specs += [BotSpec(builtin=filler)] * missing
    for spec in specs:
        try:
            if spec.builtin is not None:
                builtins.builtin_class(spec.builtin, probe.name)
            elif spec.path is not None:
                check(spec.path)
        except (ValueError, PackageError) as exc:
            return _fail(f"{spec.describe()}: {exc}")
    try:
        limits = Limits(
            startup=args.startup,
            decision=args.decision,
            bank=args.bank,
            max_faults=args.max_faults,
        )
    except ValueError as exc:
        return _fail(str(exc))
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    if args.sandbox == "none":
        # The loud warning, now rather than in the middle of the progress bar (judge.sandbox
        # prints it once per process, at the latest when it starts the first bot).
        from judge.sandbox import warn_unsandboxed

        warn_unsandboxed()
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    try:
        result = run_table(
            game=probe.name,
            preset=probe.preset,
            options=options,
            bots=specs,
            deals=args.deals,
            seed=seed,
            limits=limits,
            sandbox=args.sandbox,
            on_progress=progress,
            cpu="auto" if args.pin else None,
        )
    except ValueError as exc:
        return _fail(str(exc))
    finally:
        if progress is not None:
            progress.close()
    if args.replay is not None:
        args.replay.write_text(json.dumps(result.log, indent=1) + "\n")
    if args.json:
        out: dict[str, JSON] = result.as_json(with_log=False)
        if args.logs:
            seats = out["seats"]
            assert isinstance(seats, list)
            for entry, seat in zip(seats, result.seats, strict=True):
                assert isinstance(entry, dict)
                entry["log"] = seat.log
        print(json.dumps(out, indent=2))
        return 0
    _print_table(result, sys.stdout)
    if args.replay is not None:
        print(f"replay log written to {args.replay} (check it with `tapis verify`)")
    if args.logs:
        for seat in result.seats:
            print(f"\n--- seat {seat.seat + 1} ({seat.bot}) stderr ---")
            print(seat.log or "(empty)", end="" if seat.log.endswith("\n") else "\n")
    return 0


def _print_table(result: TableResult, out: TextIO) -> None:
    print(
        f"{result.game}/{result.preset}: {len(result.deal_points)} deal(s), seed {result.seed}, "
        f"{result.elapsed:.2f} s",
        file=out,
    )
    header = (
        "seat",
        "bot",
        "name",
        "total",
        "score",
        "place",
        "decisions",
        "mean ms",
        "p99 ms",
        "faults",
    )
    rows = [header]
    for seat in result.seats:
        bot = seat.bot + (f" -> {seat.replaced_by}" if seat.replaced else "")
        rows.append(
            (
                str(seat.seat + 1),
                bot,
                seat.name or "-",
                str(seat.total),
                str(seat.score),
                str(seat.place),
                str(seat.decisions),
                f"{seat.mean_time * 1000:.3f}",
                f"{seat.p99_time * 1000:.3f}",
                str(len(seat.faults)),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        print(line.rstrip(), file=out)
    if result.faults:
        print("faults:", file=out)
        for fault in result.faults:
            where = place_in_words(fault.deal, fault.decision)
            print(f"  seat {fault.seat + 1} {where}: {fault.kind.value}: {fault.detail}", file=out)
    for seat in result.seats:
        if seat.replaced:
            at = seat.replaced_at or {}
            when = (
                "at start-up"
                if at.get("deal") is None
                else f"after {place_in_words(at['deal'], at.get('decision'))}"
            )
            print(f"seat {seat.seat + 1} was played by {seat.replaced_by} {when}", file=out)
            print(
                f"  a fault never pays: from deal {(seat.replaced_deal or 0) + 1} on, seat "
                f"{seat.seat + 1} counts the worst points of each deal and its place is last",
                file=out,
            )
