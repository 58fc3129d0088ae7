"""``tapis rules`` and ``tapis verify``: the engine's command line tools."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
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

    entries = games.catalogue()
    if args.game is not None:
        entries = [e for e in entries if e["name"] == args.game]
        if not entries:
            print(f"tapis rules: unknown game {args.game!r}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    for entry in entries:
        print(f"{entry['name']}: {entry['title']}")
        presets: list[dict[str, Any]] = entry["presets"]  # type: ignore[assignment]
        for preset in presets:
            default = " (default)" if preset["name"] == entry["default_preset"] else ""
            values = ", ".join(f"{k}={v}" for k, v in preset["values"].items())
            print(f"  preset {preset['name']}{default}: {preset['doc']}")
            if values:
                print(f"    {values}")
        options: list[dict[str, Any]] = entry["options"]  # type: ignore[assignment]
        for option in options:
            print(f"  --{option['name']} ({option['allowed']}; default {option['default']!r})")
            print(f"      {option['doc']}")
        print()
    return 0


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
        where = "" if verdict.deal is None else f" (deal {verdict.deal}, action {verdict.step})"
        print(f"FAILED{where}: {verdict.message}")
    return 0 if verdict.ok else 1
