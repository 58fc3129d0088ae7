"""The complete exchanges of docs/protocol.md, captured from the real judge and engines.

    .venv/bin/python docs/protocol_examples.py          # rewrite the examples in place
    .venv/bin/python docs/protocol_examples.py --check  # exit 1 if they are stale

Each example is seat 0's view of a real table: a bot process at seat 0 (it plays the first
legal action) copies every line it reads and writes to its stderr, which the judge keeps (the
log cap is raised for it); the other seats are built-in bots. The transcript is then cut to
the lines the doc shows, the cuts marked by ``#`` comments. In the doc each example is the code
block that follows a ``<!-- example: NAME -->`` line; tests/judge/test_docs_examples.py checks
that the doc holds exactly what this module captures now, so that the examples cannot go
stale.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from games.base import JSON
from judge.runner import Limits, run_table

DOC = Path(__file__).resolve().parent / "protocol.md"

TRANSCRIPT_BOT = """\
import sys

log = sys.stderr.write
out = sys.stdout.write
for line in sys.stdin:
    log("< " + line)
    if line.startswith('{"type":"hello"'):
        answer = '{"type":"ready","name":"example"}'
    elif line.startswith('{"type":"act"'):
        import json

        message = json.loads(line)
        action = json.dumps(message["legal_actions"][0], separators=(",", ":"))
        answer = '{"id":%d,"action":%s}' % (message["id"], action)
    elif line.startswith('{"type":"bye"'):
        break
    else:
        continue
    log("> " + answer + "\\n")
    out(answer + "\\n")
    sys.stdout.flush()
"""

# Legal action lists longer than this are cut to their first 3 entries (the Hearts pass).
LONG_LEGAL = 20


@dataclasses.dataclass(frozen=True, slots=True)
class Example:
    """A table whose seat 0 the doc shows, and how much of it."""

    name: str
    game: str
    preset: str
    options: Mapping[str, object]
    deals: int | None
    others: str  # the built-in bot of the other seats
    seed: int
    first: int  # act/answer pairs shown at the start of the first deal
    comment: str  # what the elided act/answer pairs of a deal are, after "N more ..."


EXAMPLES = (
    Example("hearts", "hearts", "whisthub", {}, 1, "heuristic", 42, 2, "one per trick"),
    Example("roi", "roi", "classic", {}, None, "heuristic", 42, 1, ""),
    Example(
        "dutch",
        "dutch",
        "classic",
        {"players": 2},
        1,
        "heuristic",
        42,
        4,
        "draw, place the card, claims, call",
    ),
)


def transcript(example: Example, attempts: int = 3) -> list[tuple[str, str]]:
    """Every line seat 0 read (``<``) and wrote (``>``), in order, at the example's table.

    The exchange is a function of the seed, but for the clock: a table whose bot lost time
    from its bank (or timed out) on a machine too busy to answer within the 1 s of a decision
    is played again, up to ``attempts`` times in all."""
    for _ in range(attempts):
        lines, clean = _capture(example)
        if clean:
            return lines
    raise RuntimeError(f"the {example.name} example table kept losing time: is the host busy?")


def _capture(example: Example) -> tuple[list[tuple[str, str]], bool]:
    limits = Limits(log_bytes=16 * 1024 * 1024)
    with tempfile.TemporaryDirectory(prefix="tapis-docs-") as tmp:
        bot = Path(tmp) / "example.py"
        bot.write_text(TRANSCRIPT_BOT)
        result = run_table(
            game=example.game,
            preset=example.preset,
            options=example.options,
            bots=[str(bot)] + [f"builtin:{example.others}"] * (_players(example) - 1),
            deals=example.deals,
            seed=example.seed,
            limits=limits,
            sandbox="none",
        )
    lines = []
    for line in result.seats[0].log.splitlines():
        direction, _, text = line.partition(" ")
        if direction not in ("<", ">"):
            raise RuntimeError(f"unexpected line in the transcript: {line[:80]!r}")
        lines.append((direction, text))
    return lines, not result.faults and result.seats[0].bank_left == limits.bank


def _players(example: Example) -> int:
    import games

    return games.load(example.game, example.preset, **example.options).players


def _shorten(line: str) -> str:
    """An ``act`` line with a long list of legal actions cut to its first three."""
    message: dict[str, JSON] = json.loads(line)
    legal = message.get("legal_actions")
    if message.get("type") != "act" or not isinstance(legal, list) or len(legal) <= LONG_LEGAL:
        return line
    first = legal[0]
    what = f"ways to pass {len(first)} cards" if isinstance(first, list) else "legal actions"
    message["legal_actions"] = [
        *legal[:3],
        f"... {len(legal) - 3} more: all {len(legal)} {what} ...",
    ]
    return json.dumps(message, separators=(",", ":"))


def render(example: Example, lines: Sequence[tuple[str, str]]) -> str:
    """The doc's block: hello and ready; the first deal's first pairs, a comment, its last pair
    and its deal_end; a comment for the deals in between; the last deal's last pair and
    deal_end; game_end and bye."""
    head: list[str] = []
    deals: list[tuple[list[tuple[str, str]], str]] = []  # per deal: act/answer pairs, deal_end
    pairs: list[tuple[str, str]] = []
    tail: list[str] = []
    pending_act: str | None = None
    for direction, text in lines:
        kind = json.loads(text).get("type")
        if direction == ">" and pending_act is not None:
            pairs.append((pending_act, text))
            pending_act = None
        elif direction == ">" or kind == "hello":
            head.append(text)
        elif kind == "act":
            pending_act = text
        elif kind == "deal_end":
            deals.append((pairs, text))
            pairs = []
        else:
            tail.append(text)
    out = list(head)
    suffix = f": {example.comment}" if example.comment else ""
    first_pairs, first_end = deals[0]
    shown = first_pairs[: example.first]
    for act, answer in shown:
        out += [_shorten(act), answer]
    left = len(first_pairs) - len(shown) - 1
    if left > 0:
        out.append(f"# ... {left} more act/answer pairs{suffix} ...")
    if len(first_pairs) > len(shown):
        out += [_shorten(first_pairs[-1][0]), first_pairs[-1][1]]
    out.append(first_end)
    if len(deals) > 1:
        last_pairs, last_end = deals[-1]
        between = len(deals) - 2
        if between:
            per_deal = {len(p) for p, _ in deals[1:-1]}
            count = f"{per_deal.pop()} act/answer pairs" if len(per_deal) == 1 else "its acts"
            out.append(
                f"# ... deals 1 to {len(deals) - 2}: {count} and a deal_end each ..."
                if between > 1
                else f"# ... deal 1: {count} and a deal_end ..."
            )
        out.append(
            f"# ... deal {len(deals) - 1}: its first {len(last_pairs) - 1} act/answer pairs ..."
        )
        out += [_shorten(last_pairs[-1][0]), last_pairs[-1][1], last_end]
    out += tail
    return "\n".join(out) + "\n"


def blocks() -> dict[str, str]:
    """Every example as the doc should show it now."""
    return {example.name: render(example, transcript(example)) for example in EXAMPLES}


_BLOCK = re.compile(r"(<!-- example: (?P<name>[a-z]+) -->\n```\n)(?P<body>.*?)(```)", re.S)


def doc_blocks(text: str) -> dict[str, str]:
    """The example blocks found in the doc's text."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def rewrite(text: str, new: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        return match[1] + new.get(match["name"], match["body"]) + match[4]

    return _BLOCK.sub(replace, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if the doc is stale")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    new = blocks()
    missing = sorted(set(new) - set(doc_blocks(text)))
    if missing:
        print(f"{DOC}: no <!-- example: NAME --> block for {missing}", file=sys.stderr)
        return 1
    updated = rewrite(text, new)
    if args.check:
        if updated != text:
            print(f"{DOC}: the example exchanges are stale", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
