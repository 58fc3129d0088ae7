"""``run_table``: play one table of bots through the engine, whatever the bots do.

A table is one match of a game (a fixed number of deals, or the game's own end condition) with
one bot per seat. Each bot is either a built-in bot (run in-process) or a bot package run as a
process in the sandbox, speaking protocol version 1 (docs/protocol.md). The judge measures every
decision on its own monotonic clock, records every fault, plays the fallback action (the first
legal action in the game's order) for a faulty decision, hands a seat to a built-in bot after a
crash or ``max_faults`` faults, and always finishes the table with a complete, verifiable log.

The clock (docs/protocol.md, "Clock"): a bot has ``startup`` seconds from its start to say
``ready``; each decision may take ``decision`` seconds for free; a decision that takes longer
draws the excess from the seat's ``bank`` for the table; a decision times out when it has used
``decision`` plus the whole bank left, which then drops to 0. Once the bank is empty the
``decision`` limit is hard.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import games
from games.base import JSON, Action
from judge import bots as builtins
from judge.clock import Stopwatch
from judge.cpus import pinned
from judge.faults import Fault, FaultKind, clip
from judge.launchers import runtimes
from judge.launchers.package import PackageError, PreparedBot, prepare, remove
from judge.launchers.pycache import compiled_sdk
from judge.protocol import (
    BYE_LINE,
    LINE_CAP,
    ProtocolFault,
    deal_end_message,
    encode,
    game_end_message,
    hello_message,
)
from judge.results import SeatRecord, SeatResult, TableResult, table_result
from judge.seats import BuiltinSeat, ProcessSeat

if TYPE_CHECKING:
    from judge.launchers.zygote import ForkedBot
    from judge.sandbox import BotProcess, SandboxLimits, SandboxMode

ProgressCallback = Callable[[int, int | None], None]

SDK_DIR = Path(__file__).resolve().parent / "sdk"
log = logging.getLogger(__name__)
BUILTIN_PREFIX = "builtin:"

__all__ = [
    "BUILTIN_PREFIX",
    "SDK_DIR",
    "BotSpec",
    "Limits",
    "ProgressCallback",
    "SeatResult",
    "TableResult",
    "run_table",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Limits:
    """The clock and the fault policy of a table (every time in seconds)."""

    startup: float = 5.0  # from the bot's start to its ready
    decision: float = 1.0  # free time per decision
    bank: float = 20.0  # extra time per seat for the whole table
    max_faults: int = 3  # faults before a seat is handed to a built-in bot (a crash: at once)
    line_bytes: int = LINE_CAP  # longest message a bot may send
    log_bytes: int = 64 * 1024  # bot stderr kept per seat per table
    replacement: str = "heuristic"  # built-in bot for a replaced seat (random if the game has none)
    closing: float = 0.5  # how long bots may take to exit after bye before they are killed
    resources: SandboxLimits | None = None  # the sandbox's resource limits (None: its defaults)

    def __post_init__(self) -> None:
        for name in ("startup", "decision", "bank", "closing"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value < 0:
                raise ValueError(f"Limits.{name} must be a number of seconds >= 0, not {value!r}")
        if self.decision <= 0 or self.startup <= 0:
            raise ValueError("Limits.decision and Limits.startup must be positive")
        if self.max_faults < 1:
            raise ValueError("Limits.max_faults must be at least 1")
        if self.line_bytes < 1024 or self.log_bytes < 0:
            raise ValueError("Limits.line_bytes must be at least 1024 and log_bytes >= 0")

    def as_json(self) -> dict[str, JSON]:
        return {
            "startup": self.startup,
            "decision": self.decision,
            "bank": self.bank,
            "max_faults": self.max_faults,
            "line_bytes": self.line_bytes,
            "log_bytes": self.log_bytes,
            "replacement": self.replacement,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot for a seat: a built-in bot by name, or a bot package (file, zip or folder).

    ``instance`` names who the bot is for the zygotes of ``run_table(zygotes=True)``: a zygote
    serves only the tables of one instance, so the caller gives each bot its own (the
    tournaments: ``bot version 12, entry 7``), and two uploads of identical bytes never share a
    process or a sandbox. A package without an instance is always started alone.

    >>> BotSpec.parse("builtin:random")
    BotSpec(builtin='random', path=None, label=None, instance=None)
    >>> BotSpec.parse("bots/mine.zip").describe()
    'mine.zip'
    """

    builtin: str | None = None
    path: Path | None = None
    label: str | None = None  # a display name (defaults to the builtin or file name)
    instance: str | None = None  # one zygote per instance; None: never forked from a zygote

    def __post_init__(self) -> None:
        if (self.builtin is None) == (self.path is None):
            raise ValueError("a BotSpec is either builtin=NAME or path=PATH")
        if self.instance is not None and self.path is None:
            raise ValueError("only a bot package has an instance")

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """``builtin:NAME`` or a path."""
        if text.startswith(BUILTIN_PREFIX):
            return cls(builtin=text[len(BUILTIN_PREFIX) :])
        return cls(path=Path(text))

    def describe(self) -> str:
        if self.label is not None:
            return self.label
        if self.builtin is not None:
            return BUILTIN_PREFIX + self.builtin
        assert self.path is not None
        return self.path.name or str(self.path)


class _SeatState:
    """The judge's book-keeping for one seat during a table."""

    __slots__ = (
        "bank",
        "decisions",
        "driver",
        "faults",
        "index",
        "log",
        "name",
        "process",
        "replaced_at",
        "replaced_by",
        "spec",
        "started",
        "times",
        "watch",
    )

    def __init__(self, index: int, spec: BotSpec, bank: float) -> None:
        self.index = index
        self.spec = spec
        self.bank = bank
        self.driver: BuiltinSeat | ProcessSeat | None = None
        self.process: BotProcess | ForkedBot | None = None
        self.started = 0.0
        self.watch: Stopwatch | None = None  # the charge of its start-up
        self.decisions = 0  # every decision of the seat, replacement included
        self.times: list[float] = []  # the bot's own decisions
        self.faults = 0
        self.name: str | None = None
        self.log = ""
        self.replaced_by: str | None = None
        self.replaced_at: dict[str, int | None] | None = None


def run_table(
    *,
    game: str,
    preset: str | None = None,
    options: Mapping[str, object] | None = None,
    bots: Sequence[BotSpec | str],
    deals: int | None = None,
    seed: int,
    limits: Limits | None = None,
    sandbox: SandboxMode = "bwrap",
    on_progress: ProgressCallback | None = None,
    sdk_dir: Path | None = SDK_DIR,
    workdir: Path | None = None,
    cpu: int | Literal["auto", "free"] | None = None,
    zygotes: bool = False,
) -> TableResult:
    """Play a table to its end and return its result. Nothing a bot does raises out of here.

    ``deals`` None plays to the game's own end condition; an int plays exactly that many deals
    (the ``fixed_deals`` option). ``bots`` has one entry per seat: a :class:`BotSpec` or its text
    form (``builtin:NAME`` or a path). Bad arguments (unknown game, option, built-in bot or seat
    count) raise ValueError before any bot starts; a bot package that is refused or a sandbox
    that cannot start is a ``crash`` fault of that seat, which is then played by a built-in bot.

    ``cpu`` pins the table (the calling thread, and the bots it starts, which inherit it) to one
    CPU for its duration: ``"auto"`` is the CPU the thread runs on now. A table is strictly
    sequential, and on one CPU a decision round trip avoids the cross-CPU wake-ups that cost
    more than the work itself (bench/judge.py); run one table per CPU. ``"free"`` is a CPU
    that no other table of the host holds (so that workers side by side do not share one),
    or no pinning when every CPU has its table. None leaves the scheduler free.

    ``zygotes`` (sandboxed Python bots with a :attr:`BotSpec.instance` only) forks each bot
    from a zygote kept by this process for its instance (judge.launchers.zygote) instead of
    starting a sandbox and a Python for it: the bot still gets a new process in new
    namespaces, a new ``/tmp``, nothing of an earlier table, and the start costs a fork. Worth
    it wherever the same versions play table after table (the tournament workers).
    """
    limits = limits if limits is not None else Limits()
    table_options = dict(options or {})
    if deals is not None:
        table_options["fixed_deals"] = deals
    engine = games.load(game, preset, **table_options)
    specs = [b if isinstance(b, BotSpec) else BotSpec.parse(b) for b in bots]
    if len(specs) != engine.players:
        raise ValueError(
            f"{engine.name}/{engine.preset} seats {engine.players} players, got {len(specs)} bots"
        )
    for spec in specs:
        if spec.builtin is not None:
            builtins.builtin_class(spec.builtin, engine.name)  # ValueError for an unknown one
    replacement = builtins.replacement_name(engine.name, limits.replacement)
    with contextlib.ExitStack() as stack:
        if cpu is not None:
            stack.enter_context(pinned(cpu))
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tapis-table-")))
            # The sandbox's uid must be able to reach the unpacked bots (not to list them).
            workdir.chmod(0o711)
        table = _Table(
            engine=engine,
            specs=specs,
            seed=seed,
            limits=limits,
            sandbox=sandbox,
            sdk_dir=sdk_dir,
            workdir=workdir,
            replacement=replacement,
            on_progress=on_progress,
            zygotes=zygotes and sandbox == "bwrap",
        )
        stack.callback(table.kill_all)
        return table.play()


class _Table:
    def __init__(
        self,
        *,
        engine: games.Game[object],
        specs: list[BotSpec],
        seed: int,
        limits: Limits,
        sandbox: SandboxMode,
        sdk_dir: Path | None,
        workdir: Path,
        replacement: str,
        on_progress: ProgressCallback | None,
        zygotes: bool = False,
    ) -> None:
        self.engine = engine
        self.zygotes = zygotes
        self.specs = specs
        self.seed = seed
        self.limits = limits
        self.sandbox = sandbox
        self.sdk_dir = sdk_dir
        self.workdir = workdir
        self.replacement = replacement
        self.on_progress = on_progress
        self.seats = [_SeatState(i, spec, limits.bank) for i, spec in enumerate(specs)]
        self.cpus = len(os.sched_getaffinity(0))  # the table's: its bots' CPUs
        self.faults: list[Fault] = []
        self.deal_faults: dict[int, list[JSON]] = {}
        self.prepared: list[Path] = []
        options = engine.options()
        total = options.get("fixed_deals")
        self.total_deals = total if isinstance(total, int) and total > 0 else None

    # -- seats ---------------------------------------------------------------------------------

    def hello(self, seat: int) -> dict[str, JSON]:
        limits = self.limits
        return hello_message(
            game=self.engine.name,
            preset=self.engine.preset,
            options=self.engine.options(),
            seat=seat,
            players=self.engine.players,
            startup=limits.startup,
            decision=limits.decision,
            bank=limits.bank,
        )

    def builtin_seat(self, name: str, seat: int) -> BuiltinSeat:
        bot = builtins.make_builtin(
            name, game=self.engine.name, seat=seat, players=self.engine.players, seed=self.seed
        )
        driver = BuiltinSeat(bot)
        driver.hello(self.hello(seat))
        return driver

    def spawn(self, state: _SeatState, forked: ForkedBot | None = None) -> None:
        """Start a process bot (hello sent, ready not yet read), or take the one forked for it
        (:meth:`fork_all`); a failure is a crash fault."""
        from judge.sandbox import SandboxError, SandboxLimits, prepare_system, spawn_bot

        spec = state.spec
        assert spec.path is not None
        directory = self.workdir / f"seat{state.index}"
        limits = self.limits.resources or SandboxLimits()
        process: BotProcess | ForkedBot | None = forked
        try:
            if process is None:
                prepared: PreparedBot = prepare(spec.path, directory)
                self.prepared.append(directory)
                # a compiled runtime's artifact (built in the sandbox unless cached)
                bot_dir, limits = runtimes.launch(
                    prepared.directory,
                    prepared.runtime,
                    prepared.entry,
                    prepared.sources,
                    limits,
                    mode=self.sandbox,
                )
                system = runtimes.system_paths(prepared.runtime)
                if self.sandbox == "bwrap":  # once per process, before its clock starts
                    prepare_system(system)
                state.started = time.perf_counter()
                process = spawn_bot(
                    prepared.command_for(limits.memory_bytes),
                    bot_dir=bot_dir,
                    mode=self.sandbox,
                    limits=limits,
                    sdk_dir=self.bots_sdk_dir,
                    system=system,
                )
        except (PackageError, runtimes.BuildError, SandboxError, OSError) as exc:
            self.fault(state, FaultKind.CRASH, None, None, f"could not start the bot: {exc}")
            self.replace(state)
            return
        state.process = process
        # charged from the start of its process: a forked bot's is its fork, now
        state.watch = self.stopwatch(process, state.started if forked is None else None)
        try:
            driver = ProcessSeat(
                process, line_cap=self.limits.line_bytes, log_cap=self.limits.log_bytes
            )
        except (OSError, TypeError) as exc:
            process.kill()
            state.process = None
            self.fault(state, FaultKind.CRASH, None, None, f"could not start the bot: {exc}")
            self.replace(state)
            return
        state.driver = driver
        driver.hello(self.hello(state.index))

    def stopwatch(self, process: BotProcess | ForkedBot, started: float | None = None) -> Stopwatch:
        """The charge of a bot from now (or ``started``): its CPU, not its waits for one, where
        its sandbox accounts them (judge/clock.py); else the wall clock."""
        return Stopwatch(process.cpu_reading, cpus=self.cpus, started=started)

    @functools.cached_property
    def bots_sdk_dir(self) -> Path | None:
        """The SDK directory the sandbox binds (compiled ahead: judge/launchers/pycache.py),
        found once per table."""
        return compiled_sdk(self.sdk_dir) if self.sdk_dir is not None else None

    def fork_all(self, states: list[_SeatState]) -> dict[int, ForkedBot]:
        """The bots of ``states`` forked by zygotes of their instances (the new zygotes started
        side by side), by seat; a seat left out starts its bot alone (not a Python bot, or
        the zygote failed: logged, and the normal start says what is wrong)."""
        from judge.launchers import zygote

        sdk_dir = self.bots_sdk_dir
        wanted = [s for s in states if s.spec.path is not None and s.spec.instance is not None]
        if not self.zygotes or sdk_dir is None or not wanted:
            return {}
        # A bot started alone inherits the judge's CPUs (one, when the table is pinned); a
        # forked bot is given them, else it would have its zygote's.
        cpus = frozenset(os.sched_getaffinity(0))
        loans = []
        for state in wanted:
            path, instance = state.spec.path, state.spec.instance
            assert path is not None
            assert instance is not None
            loans.append(zygote.Loan(path, instance, cpus))
        started = time.perf_counter()
        bots = zygote.lend_all(
            loans,
            sdk_dir=sdk_dir,
            limits=self.limits.resources or _default_resources(),
            startup=self.limits.startup,
        )
        forked = {}
        for state, bot in zip(wanted, bots, strict=True):
            if isinstance(bot, Exception):
                log.info("bot %s started alone: %s", state.spec.path, bot)
            else:
                state.started = started
                forked[state.index] = bot
        return forked

    def start(self) -> None:
        for state in self.seats:
            if state.spec.builtin is not None:
                state.driver = self.builtin_seat(state.spec.builtin, state.index)
                state.name = state.driver.name
        forked = self.fork_all(self.seats)
        for state in self.seats:
            if state.spec.path is not None:
                self.spawn(state, forked.get(state.index))
        for state in self.seats:
            driver, watch, startup = state.driver, state.watch, self.limits.startup
            if isinstance(driver, ProcessSeat) and state.replaced_by is None:
                assert watch is not None
                try:
                    driver.await_ready(0.0, functools.partial(watch.remaining, startup))
                except ProtocolFault as fault:
                    self.fault(state, fault.kind, None, None, fault.detail)
                    self.replace(state)
                    continue
                state.name = driver.name
                self.freeze(state)  # until it is asked

    def freeze(self, state: _SeatState) -> None:
        """Stop a seat's bot while the others play: nothing it does then takes a CPU from them
        (docs/sandbox.md, "CPU"); it is thawed when asked, and for the end of the table."""
        if state.process is not None:
            state.process.freeze()

    def thaw(self, state: _SeatState) -> None:
        if state.process is not None:
            state.process.thaw()

    def fault(
        self,
        state: _SeatState,
        kind: FaultKind,
        deal: int | None,
        step: int | None,
        detail: str,
    ) -> None:
        decision = state.decisions if deal is not None else None
        fault = Fault(state.index, kind, deal, decision, step, clip(detail))
        self.faults.append(fault)
        if deal is not None:
            self.deal_faults.setdefault(deal, []).append(fault.as_json())
        state.faults += 1

    def replace(self, state: _SeatState, deal: int | None = None) -> None:
        """Hand the seat to a built-in bot for the rest of the table."""
        self.stop(state)
        state.replaced_at = {
            "deal": deal,
            "decision": state.decisions if deal is not None else None,
        }
        state.replaced_by = BUILTIN_PREFIX + self.replacement
        state.driver = self.builtin_seat(self.replacement, state.index)

    def stop(self, state: _SeatState) -> None:
        """Kill a seat's process (if any) and keep its log."""
        process, driver = state.process, state.driver
        if process is None:
            return
        if isinstance(driver, ProcessSeat):
            driver.collect_log()
        process.kill()
        if isinstance(driver, ProcessSeat):
            state.log = driver.log()
        state.process = None

    def kill_all(self) -> None:
        for state in self.seats:
            with contextlib.suppress(Exception):
                self.stop(state)
        for directory in self.prepared:
            with contextlib.suppress(OSError):
                remove(directory)

    # -- play ----------------------------------------------------------------------------------

    def decide(
        self, state: _SeatState, deal: int, step: int, legal: list[Action], obs: dict[str, JSON]
    ) -> tuple[bool, Action, float]:
        """Ask a seat for its action: (whether it answered, its action, seconds taken)."""
        driver = state.driver
        assert driver is not None
        limits = self.limits
        request_id = state.decisions + 1
        action: Action = None
        fault: ProtocolFault | None = None
        if isinstance(driver, ProcessSeat):
            bank, allowed = state.bank, limits.decision + state.bank
            assert state.process is not None
            watch = self.stopwatch(state.process)
            self.thaw(state)
            try:
                action = driver.ask(
                    request_id, deal, obs, legal, bank, 0.0, lambda: watch.remaining(allowed)
                )
            except ProtocolFault as exc:
                fault = exc
            elapsed = watch.charged()
            self.freeze(state)
            if elapsed > limits.decision:
                state.bank = max(0.0, bank - (elapsed - limits.decision))
        else:
            started = time.perf_counter()
            try:
                action = driver.ask(request_id, deal, obs, legal, 0.0, 0.0)
            except ProtocolFault as exc:
                fault = exc
            elapsed = time.perf_counter() - started
        if state.replaced_by is None:
            state.times.append(elapsed)
        if fault is not None:
            self.faulted(state, fault.kind, deal, step, fault.detail)
            return False, None, elapsed
        return True, action, elapsed

    def faulted(
        self, state: _SeatState, kind: FaultKind, deal: int, step: int, detail: str
    ) -> None:
        """Record a fault in play; replace the seat after a crash or too many faults."""
        self.fault(state, kind, deal, step, detail)
        if state.replaced_by is None and (
            kind is FaultKind.CRASH or state.faults >= self.limits.max_faults
        ):
            self.replace(state, deal)

    def play(self) -> TableResult:
        began = time.perf_counter()
        self.start()
        match = self.engine.new_match(self.seed)
        seats = self.seats
        all_times: list[list[float]] = []
        done = 0
        while True:
            state = match.state
            deal = state.deal_index
            times: list[float] = []
            step = 0
            while not state.is_terminal():
                seat = state.current_player()
                legal = state.legal_actions()
                seat_state = seats[seat]
                answered, action, elapsed = self.decide(
                    seat_state, deal, step, legal, state.observation(seat)
                )
                if answered:
                    try:
                        state.apply_action(action)
                    except Exception as exc:  # IllegalActionError, or junk the engine refuses
                        self.faulted(
                            seat_state, FaultKind.ILLEGAL, deal, step, _illegal(action, exc)
                        )
                        answered = False
                if not answered:
                    state.apply_action(legal[0])  # the fallback: the first legal action
                seat_state.decisions += 1
                times.append(elapsed)
                step += 1
            all_times.append(times)
            done += 1
            self.notify_deal_end(match)
            if self.on_progress is not None:
                with contextlib.suppress(Exception):
                    self.on_progress(done, self.total_deals)
            if match.is_over():
                break
            match.next_deal()
        self.finish(match)
        return self.result(match, all_times, time.perf_counter() - began)

    def notify_deal_end(self, match: games.Match) -> None:
        state = match.state
        message = deal_end_message(
            deal=state.deal_index,
            points=state.points(),
            totals=match.totals(),
            summary=state.summary(),
        )
        line = encode(message)
        for seat_state in self.seats:
            driver = seat_state.driver
            if isinstance(driver, ProcessSeat):
                driver.notify_lines(line)
            elif driver is not None:
                driver.notify(message)

    def finish(self, match: games.Match) -> None:
        message = game_end_message(scores=match.scores(), places=match.places())
        lines = encode(message) + BYE_LINE
        deadline = time.perf_counter() + self.limits.closing
        for state in self.seats:
            driver = state.driver
            if isinstance(driver, ProcessSeat):
                self.thaw(state)
                driver.notify_lines(lines)
            elif driver is not None:
                driver.notify(message)
        for state in self.seats:
            driver = state.driver
            if isinstance(driver, ProcessSeat) and state.process is not None:
                driver.finish(deadline)
                self.stop(state)

    def result(
        self, match: games.Match, all_times: list[list[float]], elapsed: float
    ) -> TableResult:
        seats = [
            SeatRecord(
                seat=state.index,
                bot=state.spec.describe(),
                name=state.name,
                times=state.times,
                bank=state.bank,
                replaced_by=state.replaced_by,
                replaced_at=state.replaced_at,
                log=state.log,
            )
            for state in self.seats
        ]
        judge: dict[str, JSON] = {"sandbox": self.sandbox, "limits": self.limits.as_json()}
        return table_result(
            match=match,
            game=self.engine.name,
            preset=self.engine.preset,
            seed=self.seed,
            seats=seats,
            faults=self.faults,
            deal_faults=self.deal_faults,
            all_times=all_times,
            judge=judge,
            elapsed=elapsed,
        )


def _default_resources() -> SandboxLimits:
    from judge.sandbox import SandboxLimits

    return SandboxLimits()


def _illegal(action: object, exc: Exception) -> str:
    shown = repr(action)
    if len(shown) > 60:
        shown = shown[:60] + "..."
    reason = str(exc) if isinstance(exc, games.GameError) else f"{type(exc).__name__}: {exc}"
    return f"{shown}: {reason}"
