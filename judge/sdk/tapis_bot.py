"""tapis_bot: write a Tapis bot in Python with nothing but the standard library.

One file, downloadable as is. Inside the judge's sandbox it is importable (``/sdk`` is on
``PYTHONPATH``); a copy next to your bot works too. Protocol version 1 (docs/protocol.md)::

    from tapis_bot import Bot, run

    class Lowest(Bot):
        name = "lowest"

        def act(self, observation, legal_actions):
            return legal_actions[0]

    if __name__ == "__main__":
        run(Lowest())

``act`` gets what your seat may know now (``observation``, a dict whose fields each game
documents) and the legal actions sorted in the game's order, and returns one of them. Override
``on_hello``, ``on_deal_end`` and ``on_game_end`` to see the table's set-up and what each deal
made public. Print your debugging to stderr with ``self.log(...)``: the judge keeps the first
64 KiB for you. Never print to stdout: it is the protocol's channel.

If ``act`` raises, the SDK logs the traceback and answers the first legal action, so that your
bot keeps its seat (the judge would otherwise record a fault).

The judge sends the lists of an observation that only grow within a deal (``history``,
``tricks``) as deltas, the new entries after ``<key>_start`` earlier ones; the SDK puts each
list back together, so ``act`` always gets the whole observation, as the game documents it.

Test locally with ``tapis play --game hearts --sandbox none my_bot.py builtin:random ...``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

__all__ = ["PROTOCOL_VERSION", "Bot", "run"]

PROTOCOL_VERSION = 1

# Observation lists the judge sends as deltas (docs/protocol.md, "Observations").
APPEND_ONLY = ("history", "tricks")


class _DecoderSettings:
    """What json's C scanner reads of a decoder: json.loads's defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


# A bot starts once per table, and its start-up is paid by every table: importing ``json``
# (with ``re``, ``enum``, ``functools``...), ``traceback`` or ``typing`` costs more CPU than
# starting the interpreter itself. So the loop uses json's C accelerator directly, with the
# same settings as json.loads and json.dumps(separators=(",", ":")), and imports ``json`` only
# for what the accelerator does not cover (then with json's own result or error), and
# ``traceback`` only when an ``act`` raises.
_quote: Callable[[str], str] | None
_scan: Callable[[str, int], tuple[Any, int]] | None
try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner

    _scan = make_scanner(_DecoderSettings())  # type: ignore[arg-type]
except ImportError:  # another Python than CPython: json as usual
    _quote = _scan = None


def _loads(text: str) -> Any:
    """``json.loads(text)``."""
    if _scan is not None:
        try:
            value, end = _scan(text, 0)
        except (StopIteration, ValueError):
            pass  # not JSON, or leading white space: json.loads says which
        else:
            if not text[end:].strip(" \t\n\r"):
                return value
    import json

    return json.loads(text)


def _dumps(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))``."""
    kind = type(value)
    if _quote is not None:
        if kind is str:
            return _quote(value)
        if (kind is list or kind is tuple) and all(type(item) is str for item in value):
            return "[" + ",".join(map(_quote, value)) + "]"
    if kind is int:
        return int.__repr__(value)
    import json

    return json.dumps(value, separators=(",", ":"))


class Bot:
    """Subclass this and implement :meth:`act`. Attributes set from ``hello``: ``game``,
    ``preset``, ``options``, ``seat``, ``players``, ``limits``."""

    name: str | None = None

    def __init__(self) -> None:
        self.game = ""
        self.preset = ""
        self.options: dict[str, Any] = {}
        self.seat = 0
        self.players = 0
        self.limits: dict[str, float] = {}
        self.bank = 0.0  # seconds left on the time bank, updated with every request
        self.deal = 0  # index of the deal in progress
        self._lists: dict[str, list[Any]] = {}  # the append-only lists received so far

    # -- override these ------------------------------------------------------------------------

    def on_hello(self, hello: dict[str, Any]) -> None:
        """The table's set-up (already stored in the attributes)."""

    def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
        """Return one of ``legal_actions``."""
        raise NotImplementedError("implement act(observation, legal_actions)")

    def on_deal_end(self, notice: dict[str, Any]) -> None:
        """A deal ended: ``notice`` has its points, the totals and what it made public."""

    def on_game_end(self, notice: dict[str, Any]) -> None:
        """The table ended: ``notice`` has the scores and places."""

    # -- helpers -------------------------------------------------------------------------------

    def log(self, *parts: object) -> None:
        """Write a line to the bot's log (stderr), never to the protocol's channel."""
        print(*parts, file=sys.stderr, flush=True)

    # -- the loop ------------------------------------------------------------------------------

    def run(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
        """Speak the protocol until ``bye`` or the end of the input."""
        source = stdin if stdin is not None else sys.stdin.buffer
        sink = stdout if stdout is not None else sys.stdout.buffer
        readline = source.readline
        write = sink.write
        flush = sink.flush
        while True:
            line = readline()
            if not line:
                return
            try:
                message = _loads(line.decode())
            except ValueError:
                self.log(f"tapis_bot: ignoring a line that is not JSON: {line[:80]!r}")
                continue
            kind = message.get("type")
            if kind == "act":
                self.bank = message.get("bank", 0.0)
                self.deal = message.get("deal", 0)
                legal = message["legal_actions"]
                try:
                    action = self.act(self._whole(message["observation"]), legal)
                except Exception:
                    self._log_exception()
                    self.log("tapis_bot: act() raised; answering the first legal action")
                    action = legal[0]
                write(b'{"id":%d,"action":%s}\n' % (message["id"], _dumps(action).encode()))
                flush()
            elif kind == "hello":
                self._hello(message)
                if self.name:  # {"type": "ready", "name": ...}
                    write(b'{"type":"ready","name":%s}\n' % _dumps(str(self.name)).encode())
                else:
                    write(b'{"type":"ready"}\n')
                flush()
            elif kind == "deal_end":
                self._notice(self.on_deal_end, message)
            elif kind == "game_end":
                self._notice(self.on_game_end, message)
            elif kind == "bye":
                return
            # unknown notices are ignored: later protocol versions may add some

    def _hello(self, hello: dict[str, Any]) -> None:
        if hello.get("protocol") != PROTOCOL_VERSION:
            self.log(f"tapis_bot: protocol {hello.get('protocol')!r}; this SDK speaks 1")
        self.game = hello.get("game", "")
        self.preset = hello.get("preset", "")
        self.options = hello.get("options", {})
        self.seat = hello.get("seat", 0)
        self.players = hello.get("players", 0)
        self.limits = hello.get("limits", {})
        self.bank = self.limits.get("bank", 0.0)
        try:
            self.on_hello(hello)
        except Exception:
            self._log_exception()

    def _whole(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The observation with each delta list put back together (``<key>_start`` removed)."""
        for key in APPEND_ONLY:
            start = observation.pop(key + "_start", None)
            if start is None:
                continue
            kept = self._lists.get(key, [])
            if start > len(kept):
                self.log(f"tapis_bot: {key} entries {len(kept)} to {start} were never received")
            whole = kept[:start] + observation[key]
            self._lists[key] = whole
            observation[key] = whole[:]  # the bot's own copy: it may keep or change it
        return observation

    def _notice(self, handler: Any, message: dict[str, Any]) -> None:
        try:
            handler(message)
        except Exception:
            self._log_exception()

    def _log_exception(self) -> None:
        import traceback  # here: importing it costs a bot's start-up more than the SDK itself

        self.log(traceback.format_exc().rstrip())


def run(bot: Bot) -> None:
    """Run ``bot`` on stdin/stdout until the judge says bye."""
    try:  # noqa: SIM105 (contextlib: a costly import at every bot's start)
        bot.run()
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":

    class _First(Bot):
        name = "first-legal"

        def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
            return legal_actions[0]

    run(_First())
