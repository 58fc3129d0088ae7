"""``tapis rules`` and ``tapis verify``: the engine's command line tools."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.log import place_in_words

if TYPE_CHECKING:
    from games.base import Game


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rules = subparsers.add_parser("rules", help="list games, presets and rule options")
    rules.add_argument("game", nargs="?", help="only this game")
    rules.add_argument("--json", action="store_true", help="machine-readable output")
    rules.set_defaults(func=_rules)

    verify = subparsers.add_parser("verify", help="re-play a replay log through the engine")
    verify.add_argument("log", type=Path, help="a tapis-replay JSON file ('-' for stdin)")
    verify.add_argument("--json", action="store_true", help="machine-readable verdict")
    verify.set_defaults(func=_verify)


def _rules(args: argparse.Namespace) -> int:
    import games

    names = games.game_names()
    if args.game is not None:
        if args.game not in names:
            print(f"tapis rules: unknown game {args.game!r}", file=sys.stderr)
            return 2
        names = [args.game]
    if args.json:
        print(json.dumps([e for e in games.catalogue() if e["name"] in names], indent=2))
        return 0
    for name in names:
        _print_rules(games.game_class(name))
    return 0


def _print_rules(cls: type[Game[Any]]) -> None:
    """A game's presets and options, written the way ``tapis play`` takes them."""
    print(f"{cls.name}: {cls.title}")
    for preset, preset_values in cls.presets.items():
        default = " (default)" if preset == cls.default_preset else ""
        print(f"  --preset {preset}{default}: {cls.preset_docs.get(preset, '')}")
        if preset_values:
            sets = " ".join(option_argument(k, v) for k, v in preset_values.items())
            print(f"      sets {sets}")
    for option in cls.describe_options():
        argument = option_argument(option.name, option.default)
        print(f"  {argument}  (the default; {option.allowed()})")
        print(f"      {option.doc}")
    print()


def option_argument(name: str, value: object) -> str:
    """A rule option as ``tapis play`` takes it: ``--option NAME=VALUE``, quoted for a shell.

    >>> option_argument("moon", "none"), option_argument("td_bonus", False)
    ('--option moon=none', '--option td_bonus=false')
    >>> option_argument("hearts_broken_by", "any heart")
    "--option 'hearts_broken_by=any heart'"
    """
    text = value if isinstance(value, str) else json.dumps(value)
    return f"--option {shlex.quote(f'{name}={text}')}"


def _verify(args: argparse.Namespace) -> int:
    import games

    try:
        text = sys.stdin.read() if str(args.log) == "-" else args.log.read_text()
        log = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"tapis verify: cannot read {args.log}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(log, dict):
        print("tapis verify: a log is a JSON object", file=sys.stderr)
        return 2
    verdict = games.verify(log)
    if args.json:
        print(json.dumps(verdict.as_json()))
    elif verdict.ok:
        print(f"ok: {len(log.get('deals', []))} deal(s) re-played, every action legal")
    else:
        where = ""
        if verdict.deal is not None:
            where = f" ({place_in_words(verdict.deal)}"
            where += ")" if verdict.step is None else f", action {verdict.step + 1})"
        print(f"FAILED{where}: {verdict.message}")
    if not args.json:
        for line in faults_in_words(log):
            print(line)
    return 0 if verdict.ok else 1


def faults_in_words(log: dict[str, Any]) -> list[str]:
    """The faults a judge wrote into a log, and the seats it handed to a built-in bot, in
    words, counted from 1 as the site counts them; nothing for a log without them."""
    lines = []
    deals = log.get("deals")
    for entry in deals if isinstance(deals, list) else []:
        faults = entry.get("faults") if isinstance(entry, dict) else None
        for fault in faults if isinstance(faults, list) else []:
            if isinstance(fault, dict):
                where = place_in_words(_index(fault.get("deal")), _index(fault.get("decision")))
                detail = f": {fault['detail']}" if fault.get("detail") else ""
                seat = _seat(fault.get("seat"))
                lines.append(f"fault: seat {seat}, {fault.get('kind')} at {where}{detail}")
    judge = log.get("judge")
    seats = judge.get("seats") if isinstance(judge, dict) else None
    for seat in seats if isinstance(seats, list) else []:
        if isinstance(seat, dict) and seat.get("replaced_by"):
            at = seat.get("replaced_at")
            at = at if isinstance(at, dict) else {}
            deal, decision = _index(at.get("deal")), _index(at.get("decision"))
            when = "from start-up" if deal is None else f"after {place_in_words(deal, decision)}"
            lines.append(
                f"replaced: seat {_seat(seat.get('seat'))} played by {seat['replaced_by']} {when}"
            )
    return lines


def _seat(value: object) -> str:
    """A seat's index in a log as people number seats (from 1)."""
    index = _index(value)
    return "?" if index is None else str(index + 1)


def _index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
