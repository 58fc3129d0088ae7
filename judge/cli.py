"""The ``tapis`` command line: the home of every command line tool of the project.

Each tool lives in its own module and registers a sub-command through a function
``add_parser(subparsers)`` that sets ``func`` on its parser; ``func(args)`` returns
the exit status. Modules are listed in ``COMMANDS`` and imported lazily so that a
broken or heavy tool never slows down ``tapis --help``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from importlib import metadata

# module path -> sub-command names it registers
COMMANDS: dict[str, tuple[str, ...]] = {
    "games.cli": ("rules", "verify"),
    "judge.play": ("play",),
}


def version() -> str:
    try:
        return metadata.version("tapis")
    except metadata.PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tapis",
        description="Tapis: tournaments and an online judge for card-game bots.",
    )
    parser.add_argument("--version", action="version", version=f"tapis {version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue  # tool not built yet
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    status: int = func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
