"""Writes of the tournaments app: keyword-only functions named ``<entity>_<action>``.

Every state change is a compare-and-set (``filter(pk=..., status=...).update(...)`` and check
the count) or happens under ``select_for_update`` of the rows concerned, so that two workers,
two admins or a task that runs twice never record anything twice. Tasks are queued only after
the transaction that made their work commits (``transaction.on_commit``).

A refused request raises :class:`~tournaments.errors.ApplicationError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import threading
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import InterfaceError, OperationalError, connection, models, transaction
from django.db.models import F
from django.utils import timezone

import games
from games.base import JSON
from games.errors import GameError
from games.log import verify_deal
from judge import bots as builtin_bots
from judge.package import MAX_ZIP_BYTES, PackageError, check
from judge.runner import BotSpec, Limits, TableResult, run_table
from tournaments import conf, formats, ratings, selectors
from tournaments.errors import ApplicationError
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    DealReplay,
    Decision,
    Entry,
    Fault,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
    WorkerHeartbeat,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=models.Model)

MAX_ROUNDS = 100
MAX_DEALS_PER_TABLE = 1000
VALIDATION_DEALS = 2  # deals of a validation table (a whole game for games that need one)
BULK_BATCH = 2000
POINTS_QUANTUM = Decimal("0.0001")

# Errors that say the infrastructure is away (retried by tasks), not that the work is wrong.
INFRASTRUCTURE_ERRORS = (OperationalError, InterfaceError)

# Decisions a whole table makes per deal, for the time budget of a table task.
DECISIONS_PER_DEAL = {"hearts": 56, "roi": 52}


def worker_heartbeat_record(*, hostname: str) -> WorkerHeartbeat:
    """Record that the worker ``hostname`` is alive and taking tasks now."""
    now = timezone.now()
    heartbeat, created = WorkerHeartbeat.objects.get_or_create(
        hostname=hostname, defaults={"last_seen": now, "beats": 1}
    )
    if not created:
        WorkerHeartbeat.objects.filter(pk=heartbeat.pk).update(last_seen=now, beats=F("beats") + 1)
        heartbeat.refresh_from_db(fields=["last_seen", "beats"])
    return heartbeat


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


def bot_create(*, owner: User, name: str, game: str, description: str = "") -> Bot:
    """A new bot of ``owner`` for ``game`` (its code comes with versions)."""
    name = name.strip()
    if not name:
        raise ApplicationError("a bot needs a name", code="bot_name")
    try:
        games.game_class(game)
    except GameError as exc:
        raise ApplicationError(str(exc), code="unknown_game") from None
    if Bot.objects.filter(owner=owner, name=name).exists():
        raise ApplicationError(f"you already have a bot named {name!r}", code="bot_name")
    return Bot.objects.create(owner=owner, name=name, game=game, description=description)


def bot_version_create(
    *, bot: Bot, content: bytes | None = None, filename: str = "", builtin: str = ""
) -> BotVersion:
    """A new immutable version of a bot: an uploaded ``.py`` file or ``.zip`` package, or a
    built-in bot (trusted: ready at once). An upload is checked statically here (its format,
    manifest and sizes) and queued for validation in the sandbox."""
    if (content is None) == (not builtin):
        raise ApplicationError("a version is either an uploaded file or a built-in bot")
    if builtin:
        try:
            builtin_bots.builtin_class(builtin, bot.game)
        except ValueError as exc:
            raise ApplicationError(str(exc), code="unknown_builtin") from None
        digest = hashlib.sha256(f"builtin:{builtin}".encode()).hexdigest()
        status, report = BotVersion.Status.READY, {"ok": True, "builtin": builtin}
        size, filename, data = 0, "", b""
    else:
        assert content is not None
        data = bytes(content)
        filename = Path(filename or "bot.py").name
        if not filename.endswith((".py", ".zip")):
            raise ApplicationError("a bot is a .py file or a .zip package", code="bot_package")
        if not data:
            raise ApplicationError("the uploaded file is empty", code="bot_package")
        if len(data) > MAX_ZIP_BYTES:
            raise ApplicationError(
                f"the upload is {len(data)} bytes; the limit is {MAX_ZIP_BYTES}",
                code="bot_package",
            )
        _check_package(data, filename)
        digest = hashlib.sha256(data).hexdigest()
        status, report, size = BotVersion.Status.PENDING, {}, len(data)
    with transaction.atomic():
        Bot.objects.select_for_update().get(pk=bot.pk)  # one number per version
        last = bot.versions.order_by("-number").values_list("number", flat=True).first()
        version = BotVersion.objects.create(
            bot=bot,
            number=(last or 0) + 1,
            content=data,
            filename=filename,
            sha256=digest,
            size=size,
            builtin=builtin,
            status=status,
            report=report,
            validated_at=timezone.now() if builtin else None,
        )
        if not builtin:
            from tournaments.tasks import validate_bot_version

            validate_bot_version.delay_on_commit(version.pk)
    return version


def _check_package(data: bytes, filename: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tapis-upload-") as tmp:
        path = Path(tmp, filename)
        path.write_bytes(data)
        try:
            check(path)
        except PackageError as exc:
            raise ApplicationError(str(exc), code="bot_package") from None


def bot_version_path(*, version: BotVersion) -> Path:
    """The version's upload as a file a worker can hand to the judge (cached by SHA-256)."""
    directory = conf.bot_cache_dir() / version.sha256
    path = directory / (version.filename or "bot.py")
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == version.sha256:
        return path
    data = bytes(BotVersion.objects.values_list("content", flat=True).get(pk=version.pk))
    if hashlib.sha256(data).hexdigest() != version.sha256:
        raise RuntimeError(f"{version}: the stored upload does not match its SHA-256")
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{path.name}.{threading.get_ident()}"
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


def bot_spec(*, version: BotVersion) -> BotSpec:
    if version.builtin:
        return BotSpec(builtin=version.builtin, label=version.label)
    return BotSpec(path=bot_version_path(version=version), label=version.label)


def bot_version_validate(*, version_id: int) -> BotVersion:
    """Run a pending version in the sandbox at a short table against built-in bots; it becomes
    ready if it played every decision cleanly, rejected otherwise (the report says why).
    Running it twice validates once."""
    claimed = BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.PENDING).update(
        status=BotVersion.Status.VALIDATING
    )
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if not claimed:
        return version
    try:
        report = _validation_report(version)
    except BaseException:
        BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.VALIDATING).update(
            status=BotVersion.Status.PENDING
        )
        raise
    status = BotVersion.Status.READY if report["ok"] else BotVersion.Status.REJECTED
    BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.VALIDATING).update(
        status=status, report=report, validated_at=timezone.now()
    )
    version.refresh_from_db(fields=["status", "report", "validated_at"])
    return version


def bot_version_revalidate(*, version: BotVersion) -> BotVersion:
    """Queue a rejected version for validation again (after a sandbox problem was fixed)."""
    with transaction.atomic():
        updated = BotVersion.objects.filter(
            pk=version.pk, status=BotVersion.Status.REJECTED
        ).update(status=BotVersion.Status.PENDING, report={}, validated_at=None)
        if not updated:
            raise ApplicationError(
                f"{version.label} is {version.status}: only a rejected version is validated again",
                code="status",
            )
        from tournaments.tasks import validate_bot_version

        validate_bot_version.delay_on_commit(version.pk)
    version.refresh_from_db(fields=["status", "report", "validated_at"])
    return version


def _validation_report(version: BotVersion) -> dict[str, JSON]:
    game = games.load(version.bot.game)
    deals = None if game.name == "roi" else VALIDATION_DEALS  # Roi: one whole game
    sparring = "random"
    seed = int(version.sha256[:15], 16)
    limits = Limits(startup=5.0, decision=1.0, bank=5.0, max_faults=1)
    result = run_table(
        game=game.name,
        preset=game.preset,
        bots=[bot_spec(version=version)] + [f"builtin:{sparring}"] * (game.players - 1),
        deals=deals,
        seed=seed,
        limits=limits,
        sandbox=conf.sandbox_mode(),
    )
    seat = result.seats[0]
    faults = [f.as_json() for f in seat.faults]
    ok = not faults and not seat.replaced
    if ok:
        reason = f"played {seat.decisions} decisions cleanly"
    else:
        first = seat.faults[0] if seat.faults else None
        reason = (
            f"{first.kind.value}: {first.detail}" if first else "the bot was replaced by the judge"
        )
    return {
        "ok": ok,
        "reason": reason,
        "game": game.name,
        "preset": game.preset,
        "opponents": f"builtin:{sparring}",
        "deals": len(result.deal_points),
        "seed": seed,
        "sandbox": conf.sandbox_mode(),
        "name": seat.name,
        "decisions": seat.decisions,
        "mean_time": round(seat.mean_time, 6),
        "p99_time": round(seat.p99_time, 6),
        "faults": list[JSON](faults),
        "log": seat.log[-4000:],
    }


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


def _engine(
    game: str, preset: str | None, options: Mapping[str, object], deals: int
) -> games.Game[object]:
    return games.load(game, preset, **{**options, "fixed_deals": deals})


def tournament_limits(*, tournament: Tournament) -> Limits:
    return Limits(
        startup=tournament.startup_seconds,
        decision=tournament.decision_seconds,
        bank=tournament.bank_seconds,
        max_faults=tournament.max_faults,
        replacement=tournament.house_bot,
    )


def table_time_budget(*, tournament: Tournament) -> float:
    """The most a table may take when every bot uses all its time (seconds)."""
    per_deal = DECISIONS_PER_DEAL.get(tournament.game, 30 * tournament.table_size)
    seats = tournament.table_size
    return (
        seats * (tournament.startup_seconds + tournament.bank_seconds)
        + tournament.deals_per_table * per_deal * tournament.decision_seconds
        + tournament.deals_per_table * 1.0  # the engine and the database
        + 30.0
    )


def tournament_create(
    *,
    organiser: User,
    name: str,
    game: str,
    rounds: int,
    deals_per_table: int,
    preset: str | None = None,
    options: Mapping[str, object] | None = None,
    table_size: int | None = None,
    seating: str = "random",
    duplicate: bool = False,
    place_points: Sequence[int] | None = None,
    decision_seconds: float = 1.0,
    bank_seconds: float = 20.0,
    startup_seconds: float = 5.0,
    max_faults: int = 3,
    house_bot: str = "heuristic",
    allow_multiple_entries: bool = False,
    registration_opens_at: datetime | None = None,
    registration_closes_at: datetime | None = None,
) -> Tournament:
    """A draft tournament. Every setting is checked here: the rules (preset and overrides,
    through the engine), the fixed length, the seating format, place points, time limits. The
    secret seed is drawn and its commitment published."""
    values = _checked_settings(
        name=name,
        game=game,
        rounds=rounds,
        deals_per_table=deals_per_table,
        preset=preset,
        options=options,
        table_size=table_size,
        seating=seating,
        duplicate=duplicate,
        place_points=place_points,
        decision_seconds=decision_seconds,
        bank_seconds=bank_seconds,
        startup_seconds=startup_seconds,
        max_faults=max_faults,
        house_bot=house_bot,
        allow_multiple_entries=allow_multiple_entries,
        registration_opens_at=registration_opens_at,
        registration_closes_at=registration_closes_at,
    )
    seed = formats.new_tournament_seed()
    return Tournament.objects.create(
        organiser=organiser, seed=str(seed), commitment=formats.seed_commitment(seed), **values
    )


# The settings tournament_create takes and tournament_update changes.
TOURNAMENT_SETTINGS = (
    "name",
    "game",
    "preset",
    "options",
    "table_size",
    "rounds",
    "deals_per_table",
    "seating",
    "duplicate",
    "place_points",
    "decision_seconds",
    "bank_seconds",
    "startup_seconds",
    "max_faults",
    "house_bot",
    "allow_multiple_entries",
    "registration_opens_at",
    "registration_closes_at",
)
# Settings whose change makes the stored place points (one per seat) meaningless.
_SEATING_SETTINGS = frozenset({"game", "preset", "options", "table_size"})


def tournament_update(*, tournament: Tournament, **changes: Any) -> Tournament:
    """Change the settings of a tournament that has not started (draft or open).

    The new settings are checked exactly as :func:`tournament_create` checks them; the seed
    and its commitment do not change. The game cannot change once bots are entered; place
    points go back to the default when the game, preset, options or table size change without
    new ones, and the preset to the game's default when the game changes without one."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        values = _updated_settings(locked, changes)
        for name, value in values.items():
            setattr(locked, name, value)
        locked.save(update_fields=list(values))
    tournament.refresh_from_db()
    return tournament


def tournament_check_update(*, tournament: Tournament, **changes: Any) -> None:
    """Raise ApplicationError if :func:`tournament_update` would refuse these changes."""
    _updated_settings(Tournament.objects.get(pk=tournament.pk), changes)


def _updated_settings(tournament: Tournament, changes: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(TOURNAMENT_SETTINGS))
    if unknown:
        raise ApplicationError(
            f"unknown tournament settings: {', '.join(unknown)}",
            code="invalid",
            extra={"field": unknown[0]},
        )
    if tournament.status not in (Tournament.Status.DRAFT, Tournament.Status.OPEN):
        raise ApplicationError(
            f"the tournament is {tournament.status}; only a draft or open one can change",
            code="status",
            extra={"status": tournament.status},
        )
    game_changes = changes.get("game", tournament.game) != tournament.game
    if game_changes and Entry.objects.filter(tournament=tournament).exists():
        raise ApplicationError(
            "bots are entered: the game cannot change", code="entries", extra={"field": "game"}
        )
    settings: dict[str, Any] = {name: getattr(tournament, name) for name in TOURNAMENT_SETTINGS}
    if _SEATING_SETTINGS & set(changes) and "place_points" not in changes:
        settings["place_points"] = None
    if game_changes and "preset" not in changes:
        settings["preset"] = None
    settings.update(changes)
    return _checked_settings(**settings)


def _checked_settings(
    *,
    name: str,
    game: str,
    rounds: int,
    deals_per_table: int,
    preset: str | None,
    options: Mapping[str, object] | None,
    table_size: int | None,
    seating: str,
    duplicate: bool,
    place_points: Sequence[int] | None,
    decision_seconds: float,
    bank_seconds: float,
    startup_seconds: float,
    max_faults: int,
    house_bot: str,
    allow_multiple_entries: bool,
    registration_opens_at: datetime | None,
    registration_closes_at: datetime | None,
) -> dict[str, Any]:
    """Check a tournament's settings; the model field values, or ApplicationError."""
    overrides = dict(options or {})
    if "fixed_deals" in overrides:
        raise ApplicationError(
            "the number of deals is set by deals_per_table, not by the fixed_deals option",
            code="invalid_option",
            extra={"option": "fixed_deals"},
        )
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ApplicationError(f"rounds must be from 1 to {MAX_ROUNDS}", code="rounds")
    if not 1 <= deals_per_table <= MAX_DEALS_PER_TABLE:
        raise ApplicationError(
            f"deals per table must be from 1 to {MAX_DEALS_PER_TABLE}", code="deals_per_table"
        )
    try:
        engine = _engine(game, preset, overrides, deals_per_table)
        if table_size is not None and table_size != engine.players:
            overrides["players"] = table_size
            engine = _engine(game, preset, overrides, deals_per_table)
    except GameError as exc:
        option = getattr(exc, "option", None)
        if option == "fixed_deals":
            option = "deals_per_table"
        raise ApplicationError(str(exc), code="invalid_option", extra={"option": option}) from None
    if engine.players != (table_size or engine.players):
        raise ApplicationError(
            f"{game}/{engine.preset} is played by {engine.players}, not {table_size}",
            code="table_size",
        )
    if seating not in formats.format_names():
        raise ApplicationError(
            f"unknown seating format {seating!r}; formats are: "
            + ", ".join(formats.format_names()),
            code="seating",
        )
    try:
        points = (
            formats.check_place_points(place_points, engine.players)
            if place_points is not None
            else formats.default_place_points(engine.players)
        )
    except formats.FormatError as exc:
        raise ApplicationError(str(exc), code="place_points") from None
    try:
        builtin_bots.builtin_class(house_bot, engine.name)
        Limits(
            startup=startup_seconds,
            decision=decision_seconds,
            bank=bank_seconds,
            max_faults=max_faults,
            replacement=house_bot,
        )
    except ValueError as exc:
        raise ApplicationError(str(exc), code="limits") from None
    if (
        registration_opens_at is not None
        and registration_closes_at is not None
        and registration_closes_at <= registration_opens_at
    ):
        raise ApplicationError("registration must close after it opens", code="registration")
    return {
        "name": name.strip() or f"{engine.name} tournament",
        "game": engine.name,
        "preset": engine.preset,
        "options": overrides,
        "table_size": engine.players,
        "rounds": rounds,
        "deals_per_table": deals_per_table,
        "seating": seating,
        "duplicate": duplicate,
        "place_points": list(points),
        "decision_seconds": decision_seconds,
        "bank_seconds": bank_seconds,
        "startup_seconds": startup_seconds,
        "max_faults": max_faults,
        "house_bot": house_bot,
        "allow_multiple_entries": allow_multiple_entries,
        "registration_opens_at": registration_opens_at,
        "registration_closes_at": registration_closes_at,
    }


def _transition(tournament: Tournament, sources: Iterable[str], target: str, **fields: Any) -> None:
    """Compare-and-set the tournament's status; ApplicationError if it was not in ``sources``."""
    allowed = list(sources)
    updated = Tournament.objects.filter(pk=tournament.pk, status__in=allowed).update(
        status=target, **fields
    )
    if not updated:
        current = Tournament.objects.values_list("status", flat=True).get(pk=tournament.pk)
        raise ApplicationError(
            f"the tournament is {current}; this needs it to be {' or '.join(allowed)}",
            code="status",
            extra={"status": current},
        )
    tournament.refresh_from_db()


def tournament_open(*, tournament: Tournament) -> Tournament:
    """Open registration (draft -> open)."""
    _transition(tournament, [Tournament.Status.DRAFT], Tournament.Status.OPEN)
    return tournament


def tournament_cancel(*, tournament: Tournament) -> Tournament:
    """Cancel a tournament that is not finished. Tables in play finish but are not recorded."""
    _transition(
        tournament,
        [Tournament.Status.DRAFT, Tournament.Status.OPEN, Tournament.Status.RUNNING],
        Tournament.Status.CANCELLED,
        finished_at=timezone.now(),
    )
    return tournament


def entry_register(*, tournament: Tournament, version: BotVersion, user: User) -> Entry:
    """Enter a ready bot version (frozen for the whole tournament). ``user`` is who asks: the
    bot's owner, or staff entering it for them."""
    now = timezone.now()
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if locked.status != Tournament.Status.OPEN:
            raise ApplicationError(
                f"registration is closed: the tournament is {locked.status}", code="status"
            )
        if locked.registration_opens_at and now < locked.registration_opens_at:
            raise ApplicationError("registration has not opened yet", code="registration")
        if locked.registration_closes_at and now > locked.registration_closes_at:
            raise ApplicationError("registration has closed", code="registration")
        version = BotVersion.objects.select_related("bot").get(pk=version.pk)
        if version.status != BotVersion.Status.READY:
            raise ApplicationError(
                f"{version.label} is {version.status}: only a ready version can enter",
                code="version_not_ready",
            )
        if version.bot.game != locked.game:
            raise ApplicationError(
                f"{version.bot.name} plays {version.bot.game}, this tournament {locked.game}",
                code="wrong_game",
            )
        if version.bot.owner_id != user.pk and not getattr(user, "is_staff", False):
            raise ApplicationError("you can only enter your own bots", code="not_owner")
        if Entry.objects.filter(tournament=locked, version=version).exists():
            raise ApplicationError(f"{version.label} is already entered", code="duplicate_entry")
        if (
            not locked.allow_multiple_entries
            and Entry.objects.filter(
                tournament=locked, user_id=version.bot.owner_id, withdrawn=False
            ).exists()
        ):
            raise ApplicationError(
                "this tournament allows one entry per user", code="one_entry_per_user"
            )
        # The entry is the bot owner's, even when staff entered it for them.
        return Entry.objects.create(
            tournament=locked, version=version, user_id=version.bot.owner_id
        )


def entry_withdraw(*, entry: Entry, reason: str = "") -> Entry:
    """Withdraw an entry. Before the start it is simply not seated; during the tournament its
    seats not yet played are played by a house bot, and the entry is flagged (unranked)."""
    return _entry_flag(entry=entry, field="withdrawn", reason=reason or "withdrawn")


def entry_disqualify(*, entry: Entry, reason: str) -> Entry:
    """Disqualify an entry: like a withdrawal, decided by the organiser."""
    return _entry_flag(entry=entry, field="disqualified", reason=reason or "disqualified")


def _entry_flag(*, entry: Entry, field: str, reason: str) -> Entry:
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=entry.tournament_id)
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise ApplicationError(f"the tournament is {tournament.status}", code="status")
        updated = Entry.objects.filter(pk=entry.pk, **{field: False}).update(
            **{field: True}, flag_reason=reason[:300], flagged_at=timezone.now()
        )
        if updated:
            Seat.objects.filter(entry=entry, table__status=Table.Status.PENDING).update(
                substitute=True, house_bot=tournament.house_bot
            )
    entry.refresh_from_db()
    return entry


def tournament_start(*, tournament: Tournament) -> Round:
    """Close registration, seat round 1 and queue its tables (open -> running). The seed's
    commitment was published when the tournament was created; the seed stays secret."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        active = Entry.objects.filter(tournament=locked, withdrawn=False, disqualified=False)
        count = active.count()
        if locked.status != Tournament.Status.OPEN:
            raise ApplicationError(
                f"the tournament is {locked.status}; only an open one can start", code="status"
            )
        if count < 2:
            raise ApplicationError("a tournament needs at least two entries", code="too_few")
        if locked.duplicate and count <= locked.table_size:
            raise ApplicationError(
                "duplicate play compares tables: it needs more entries than one table seats",
                code="too_few",
            )
        _transition(
            locked, [Tournament.Status.OPEN], Tournament.Status.RUNNING, started_at=timezone.now()
        )
        first = round_advance(tournament=locked)
        assert first is not None
    tournament.refresh_from_db()
    return first


def round_advance(*, tournament: Tournament) -> Round | None:
    """Seat the next round from the standings and queue its tables; after the last round,
    finish the tournament. Idempotent: a round is seated once."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if locked.status != Tournament.Status.RUNNING:
            return None
        number = locked.current_round + 1
        if number > locked.rounds:
            tournament_finish(tournament=locked)
            return None
        existing = Round.objects.filter(tournament=locked, number=number).first()
        if existing is not None:
            return existing
        entries = list(
            Entry.objects.filter(
                tournament=locked, withdrawn=False, disqualified=False
            ).values_list("pk", flat=True)
        )
        if not entries:
            tournament_finish(tournament=locked)
            return None
        seating = formats.seat_round(
            locked.seating,
            round_number=number,
            entries=entries,
            table_size=locked.table_size,
            seed=locked.seed_int,
            history=selectors.tournament_outcomes(tournament=locked, before_round=number),
            lower_is_better=selectors.tournament_lower_is_better(tournament=locked),
        )
        round_ = Round.objects.create(tournament=locked, number=number)
        now = timezone.now()
        tables = Table.objects.bulk_create(
            [
                Table(
                    tournament=locked,
                    round=round_,
                    number=t,
                    deal_seed=formats.table_deal_seed(
                        locked.seed_int,
                        round_number=number,
                        table_number=t,
                        duplicate=locked.duplicate,
                    ),
                    queued_at=now,
                )
                for t in range(1, len(seating) + 1)
            ]
        )
        Seat.objects.bulk_create(
            [
                Seat(
                    table=table,
                    position=position,
                    entry_id=slot,
                    house_bot=locked.house_bot if slot is None else "",
                )
                for table, slots in zip(tables, seating, strict=True)
                for position, slot in enumerate(slots)
            ]
        )
        Tournament.objects.filter(pk=locked.pk).update(current_round=number)
        tournament.current_round = number
        for table in tables:
            table_enqueue(table=table, tournament=locked)
        return round_


def table_enqueue(*, table: Table, tournament: Tournament, countdown: float | None = None) -> None:
    """Queue a table's task once the current transaction commits, with time limits above the
    table's time budget."""
    from tournaments.tasks import play_table

    budget = table_time_budget(tournament=tournament)
    options: dict[str, Any] = {"soft_time_limit": budget + 60, "time_limit": budget + 120}
    if countdown:
        options["countdown"] = countdown
    play_table.apply_async_on_commit((table.pk,), **options)


# ---------------------------------------------------------------------------------------------
# Tables: claim, play, record
# ---------------------------------------------------------------------------------------------


def table_claim(
    *, table_id: int, worker: str, token: str, now: datetime | None = None
) -> Table | None:
    """Claim a table for a worker (compare-and-set): it must be pending, or running under an
    expired lease (its worker died), or already claimed with this same token (a retry of the
    same task). None if another worker has it, it is done, or it used up its attempts."""
    now = now or timezone.now()
    tournament = _row(
        Tournament, f"id = (SELECT tournament_id FROM {_TABLE} WHERE id = %s)", table_id
    )
    if tournament is None or tournament.status != Tournament.Status.RUNNING:
        return None
    # A plain WHERE on the table's row, no join: PostgreSQL re-checks it on the row it waited
    # for, so of two claims at the same moment exactly one updates the row.
    table = _row(
        Table,
        "id = %s AND attempts < %s AND (status = %s OR (status = %s AND "
        "(lease_expires_at < %s OR claim_token = %s)))",
        table_id,
        conf.max_attempts(),
        Table.Status.PENDING,
        Table.Status.RUNNING,
        now,
        token[:64],
        update=(
            "status = %s, claimed_by = %s, claim_token = %s, lease_expires_at = %s, "
            "attempts = attempts + 1, started_at = %s",
            [
                Table.Status.RUNNING,
                worker[:255],
                token[:64],
                now + timedelta(seconds=conf.lease_seconds()),
                now,
            ],
        ),
    )
    if table is None:
        return None
    table.tournament = tournament
    return table


# Rows read and written on the paths every table takes (claim, record), in SQL: compiling
# these through the ORM cost the worker more CPU (about 0.5 to 1 ms a query) than the server
# took to run them.
_TABLE = Table._meta.db_table


def _row(
    model: type[ModelT],
    where: str,
    *params: object,
    lock: bool = False,
    update: tuple[str, list[object]] | None = None,
) -> ModelT | None:
    """The row of ``model`` WHERE ``where`` (None if there is none) as the ORM loads it:
    locked (``FOR UPDATE``) if ``lock``; or first updated with ``update`` (a SET clause and
    its parameters), as it is after the change."""
    meta = model._meta
    columns = ", ".join(connection.ops.quote_name(f.column) for f in meta.concrete_fields)
    if update is not None:
        assignments, values = update
        sql = f"UPDATE {meta.db_table} SET {assignments} WHERE {where} RETURNING {columns}"
        rows = model._default_manager.raw(sql, [*values, *params])
    else:
        sql = f"SELECT {columns} FROM {meta.db_table} WHERE {where}"
        if lock and connection.features.has_select_for_update:
            sql += " FOR UPDATE"
        rows = model._default_manager.raw(sql, list(params))
    return next(iter(rows), None)


def table_lease_renew(*, table_id: int, token: str) -> bool:
    """Extend a claimed table's lease; False if the claim was lost (another worker has it)."""
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            lease_expires_at=timezone.now() + timedelta(seconds=conf.lease_seconds())
        )
    )


@contextlib.contextmanager
def _lease_kept(table_id: int, token: str) -> Iterator[None]:
    """Renew the table's lease every third of it from a thread while the table plays."""
    stop = threading.Event()
    interval = max(0.5, conf.lease_seconds() / 3)

    def keep() -> None:
        try:
            while not stop.wait(interval):
                try:
                    if not table_lease_renew(table_id=table_id, token=token):
                        log.warning("table %s: lease lost to another worker", table_id)
                except Exception:  # the database is away: try again next time
                    log.exception("table %s: lease renewal failed", table_id)
        finally:
            connection.close()

    thread = threading.Thread(target=keep, name=f"lease-table-{table_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def table_bots(*, table: Table) -> list[BotSpec]:
    """The bot of each seat: the entry's frozen version, or a house bot."""
    specs = []
    for seat in table.seats.select_related("entry__version__bot").order_by("position"):
        if seat.entry is None or seat.substitute:
            label = f"house:{seat.house_bot}"
            specs.append(BotSpec(builtin=seat.house_bot, label=label))
        else:
            specs.append(bot_spec(version=seat.entry.version))
    return specs


def table_play(*, table: Table) -> TableResult:
    """Play a claimed table through the judge (no transaction is open meanwhile)."""
    tournament = table.tournament
    return run_table(
        game=tournament.game,
        preset=tournament.preset,
        options=tournament.options,
        bots=table_bots(table=table),
        deals=tournament.deals_per_table,
        seed=table.deal_seed,
        limits=tournament_limits(tournament=tournament),
        sandbox=conf.sandbox_mode(),
        zygotes=conf.bot_zygotes(),
        cpu="free" if conf.pin_tables() else None,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TableRun:
    """What a table task did: ``played`` (and ``recorded``), or ``skipped`` and why."""

    table_id: int
    outcome: str  # "recorded", "duplicate", "skipped", "failed"
    detail: str = ""

    def as_json(self) -> dict[str, JSON]:
        return {"table": self.table_id, "outcome": self.outcome, "detail": self.detail}


def table_run(*, table_id: int, worker: str, token: str) -> TableRun:
    """Claim, play and record one table: what a table task does. Safe to run twice.

    Bots cannot make this fail (the judge turns whatever they do into faults). An error of the
    infrastructure (the database away) propagates, for the task to retry; any other error (a
    bug, a setting the judge refuses) marks the table failed with its traceback, for an
    operator to look at and re-run."""
    table = table_claim(table_id=table_id, worker=worker, token=token)
    if table is None:
        return TableRun(table_id, "skipped", "not claimable (done, taken or out of attempts)")
    try:
        with _lease_kept(table_id, token):
            result = table_play(table=table)
        recorded = table_record_result(table_id=table_id, result=result)
    except INFRASTRUCTURE_ERRORS:
        raise
    except Exception as exc:
        log.exception("table %s failed", table_id)
        table_fail(table_id=table_id, token=token, error=traceback.format_exc())
        return TableRun(table_id, "failed", f"{type(exc).__name__}: {exc}")
    return TableRun(table_id, "recorded" if recorded else "duplicate")


def table_fail(*, table_id: int, token: str, error: str) -> bool:
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            status=Table.Status.FAILED, error=error[-20000:], lease_expires_at=None
        )
    )


def table_release(*, table_id: int, token: str, error: str = "") -> bool:
    """Give a claimed table back to the queue (a soft time limit, a warm shutdown)."""
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            status=Table.Status.PENDING,
            claim_token="",
            lease_expires_at=None,
            error=error[-20000:],
        )
    )


def table_rerun(*, table: Table) -> Table:
    """Queue a failed table again with fresh attempts (an operator's action)."""
    updated = Table.objects.filter(pk=table.pk, status=Table.Status.FAILED).update(
        status=Table.Status.PENDING,
        attempts=0,
        claim_token="",
        claimed_by="",
        lease_expires_at=None,
        queued_at=timezone.now(),
    )
    if not updated:
        raise ApplicationError(f"{table} is {table.status}: only a failed table can be re-run")
    table.refresh_from_db()
    if table.tournament.status == Tournament.Status.RUNNING:
        table_enqueue(table=table, tournament=table.tournament)
    return table


@dataclasses.dataclass(frozen=True, slots=True)
class SweepReport:
    requeued: list[int]
    failed: list[int]
    resent: list[int]

    def as_json(self) -> dict[str, JSON]:
        return {
            "requeued": list[JSON](self.requeued),
            "failed": list[JSON](self.failed),
            "resent": list[JSON](self.resent),
        }


def table_sweep(*, now: datetime | None = None) -> SweepReport:
    """The periodic sweep: tables whose lease expired (their worker died) go back to the
    queue, or fail after too many attempts; pending tables whose message seems lost are
    queued again. Every change is a compare-and-set, so sweeps may overlap."""
    now = now or timezone.now()
    running = Tournament.Status.RUNNING
    requeued, failed, resent = [], [], []
    expired = Table.objects.filter(
        status=Table.Status.RUNNING, lease_expires_at__lt=now, tournament__status=running
    ).select_related("tournament")
    for table in expired:
        if table.attempts >= conf.max_attempts():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at__lt=now
            ).update(
                status=Table.Status.FAILED,
                lease_expires_at=None,
                error=f"the worker's lease expired {table.attempts} times "
                f"(last worker: {table.claimed_by})",
            ):
                failed.append(table.pk)
            continue
        with transaction.atomic():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at__lt=now
            ).update(
                status=Table.Status.PENDING,
                claim_token="",
                lease_expires_at=None,
                queued_at=now,
                error=f"lease expired at {table.lease_expires_at:%Y-%m-%d %H:%M:%S} "
                f"(worker {table.claimed_by}); queued again",
            ):
                table_enqueue(table=table, tournament=table.tournament)
                requeued.append(table.pk)
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    lost = Table.objects.filter(
        status=Table.Status.PENDING, queued_at__lt=stale, tournament__status=running
    ).select_related("tournament")
    for table in lost:
        with transaction.atomic():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.PENDING, queued_at=table.queued_at
            ).update(queued_at=now):
                table_enqueue(table=table, tournament=table.tournament)
                resent.append(table.pk)
    return SweepReport(requeued, failed, resent)


def _as_points(value: Fraction) -> Decimal:
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(POINTS_QUANTUM)


def _passes(engine: games.Game[object], actions: Sequence[Any]) -> list[JSON] | None:
    """The cards each seat passed: the list-valued actions that open a Hearts deal (None for
    other games, and for a Hearts deal without a pass)."""
    if engine.name != "hearts":
        return None
    players = engine.players
    passed: list[JSON] = [None] * players
    found = False
    for seat, action in actions:
        if not isinstance(action, list):
            break
        passed[seat] = action
        found = True
    return passed if found else None


def table_record_result(*, table_id: int, result: TableResult) -> bool:
    """Record a played table in one transaction: every deal with its tricks and decisions,
    the faults, the seats' scores, places and points; then, if it was the round's last table,
    close the round and seat the next one (or finish the tournament).

    Returns False, and changes nothing, if the table was already recorded (a task that ran
    twice) or the tournament is no longer running."""
    with transaction.atomic():
        # Lock order everywhere: round, then table. Locking the round serialises the tables
        # of a round, so exactly one of them sees the round complete.
        round_ = _row(
            Round, f"id = (SELECT round_id FROM {_TABLE} WHERE id = %s)", table_id, lock=True
        )
        table = _row(Table, "id = %s", table_id, lock=True)
        if round_ is None or table is None:
            raise Table.DoesNotExist(f"there is no table {table_id}")
        if table.status == Table.Status.DONE:
            return False
        tournament = _row(Tournament, "id = %s", table.tournament_id)
        if tournament is None or tournament.status != Tournament.Status.RUNNING:
            return False
        table.round, table.tournament = round_, tournament
        seats = selectors.table_replay_seats(table_id=table_id)
        deals, tricks = _write_deals(table, tournament, result)
        _write_seats(table, tournament, result, seats)
        header = {k: v for k, v in result.log.items() if k != "deals"}
        summary: dict[str, Any] = result.as_json(with_log=False)
        summary["replay_header"] = header
        now = timezone.now()
        table.status = Table.Status.DONE
        table.finished_at = now
        table.lease_expires_at = None
        table.result = summary
        table.error = ""
        table.save(update_fields=["status", "finished_at", "lease_expires_at", "result", "error"])
        # The deals' replays, rendered once: the API sends them as they are.
        replays = selectors.replays_to_store(table=table, deals=deals, tricks=tricks, seats=seats)
        _insert_rows(
            DealReplay, ("deal_id", "document"), [(r.deal_id, r.document) for r in replays]
        )
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {_TABLE} WHERE round_id = %s AND status <> %s LIMIT 1",
                [round_.pk, Table.Status.DONE],
            )
            complete = cursor.fetchone() is None
        if complete:
            _round_close(round_, tournament)
            round_advance(tournament=tournament)
    return True


# The columns of a deal row as _write_deals writes them (after the id).
_DEAL_FIELDS = (
    "table_id",
    "index",
    "seed",
    "record",
    "passes",
    "points",
    "log",
    "decisions",
    "faults",
)


def _write_deals(
    table: Table, tournament: Tournament, result: TableResult
) -> tuple[list[Deal], dict[int, list[dict[str, Any]]]]:
    """Write the deals of a played table with their tricks and decisions; return the deals
    (with their ids) and each deal's tricks by deal id, as the replays show them."""
    engine = _engine(
        tournament.game, tournament.preset, tournament.options, len(result.deal_points)
    )
    entries: list[Any] = result.log["deals"]  # type: ignore[assignment]
    deals: list[Deal] = []
    extras: list[tuple[list[games.Trick], list[Any], dict[int, str], list[Any]]] = []
    for entry in entries:
        index: int = entry["index"]
        record: dict[str, Any] = entry["deal"]
        actions: list[Any] = entry["actions"]
        state = engine.deal_from_record(index, record)
        for _, action in actions:
            state.apply_action(action)
        fault_list: list[Any] = entry.get("faults") or []
        faults_at = {
            int(f["step"]): str(f["kind"])
            for f in fault_list
            if isinstance(f, dict) and isinstance(f.get("step"), int)
        }
        times: list[Any] = entry.get("times") or []
        seed = record.get("seed")
        deals.append(
            Deal(
                table=table,
                index=index,
                seed=seed if isinstance(seed, int) else None,
                record=record,
                passes=_passes(engine, actions),
                points=entry["points"],
                log=entry,
                decisions=len(actions),
                faults=len(fault_list),
            )
        )
        extras.append((list(state.tricks()), actions, faults_at, times))
    _insert_deals(deals)
    tricks: list[tuple[object, ...]] = []
    decisions: list[tuple[object, ...]] = []
    shown: dict[int, list[dict[str, Any]]] = {}
    for deal, (deal_tricks, actions, faults_at, times) in zip(deals, extras, strict=True):
        rows = [
            (deal.pk, n, t.leader, list(t.cards), t.winner, t.points)
            for n, t in enumerate(deal_tricks)
        ]
        tricks.extend(rows)
        shown[deal.pk] = [
            {"number": n, "leader": leader, "cards": cards, "winner": winner, "points": points}
            for _, n, leader, cards, winner, points in rows
        ]
        decisions.extend(
            (
                deal.pk,
                step,
                seat,
                action,
                float(times[step]) if step < len(times) else 0.0,
                faults_at.get(step, ""),
            )
            for step, (seat, action) in enumerate(actions)
        )
    _insert_rows(Trick, ("deal_id", "number", "leader", "cards", "winner", "points"), tricks)
    _insert_rows(Decision, ("deal_id", "step", "seat", "action", "seconds", "fault"), decisions)
    return deals, shown


def _insert_deals(deals: list[Deal]) -> None:
    """Insert new deals and set their ids, in order. On PostgreSQL, the ids come first from
    the id column's sequence (one query), then the rows go in with COPY: ``bulk_create``
    would send every JSON value through psycopg's array of jsonb, which costs far more."""
    if connection.vendor != "postgresql":
        Deal.objects.bulk_create(deals, batch_size=BULK_BATCH)
        return
    meta = Deal._meta
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(deals)],
        )
        ids = sorted(row[0] for row in cursor.fetchall())
    for deal, pk in zip(deals, ids, strict=True):
        deal.pk = pk
    _insert_rows(
        Deal,
        ("id", *_DEAL_FIELDS),
        [(deal.pk, *(getattr(deal, field) for field in _DEAL_FIELDS)) for deal in deals],
    )
    for deal in deals:
        deal._state.adding = False  # as bulk_create leaves them: saved rows


def _insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[tuple[object, ...]]
) -> None:
    """Insert many rows at once: PostgreSQL's COPY (the fastest path by far: a table writes
    hundreds of decisions), else ``bulk_create``. JSON fields take Python values; None is
    SQL NULL, as the ORM writes it."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows],
            batch_size=BULK_BATCH,
        )
        return
    meta = model._meta
    concrete = [meta.get_field(f) for f in fields]
    assert all(isinstance(f, models.Field) for f in concrete)
    json_columns = [isinstance(f, models.JSONField) for f in concrete]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in concrete if isinstance(f, models.Field))
    statement = f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN"
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(
                [
                    dumps(value) if is_json and value is not None else value
                    for value, is_json in zip(row, json_columns, strict=True)
                ]
            )


# The columns of a seat that recording a table fills, after the position.
_SEAT_RESULT_FIELDS = (
    "score",
    "total",
    "place",
    "points",
    "faults",
    "replaced",
    "decisions",
    "mean_time",
    "bot_name",
    "log",
)


def _write_seats(
    table: Table, tournament: Tournament, result: TableResult, seats: list[dict[str, Any]]
) -> None:
    """Write each seat's result (one UPDATE for all of them) and the table's faults;
    ``seats`` are the table's seats (:func:`selectors.table_replay_seats`)."""
    points = (
        None
        if tournament.duplicate
        else formats.table_points(
            result.places, selectors.tournament_place_points(tournament=tournament)
        )
    )
    values = [
        (
            seat_result.seat,
            seat_result.score,
            seat_result.total,
            seat_result.place,
            _as_points(points[seat_result.seat]) if points is not None else None,
            len(seat_result.faults),
            seat_result.replaced,
            seat_result.decisions,
            seat_result.mean_time,
            (seat_result.name or "")[:100],
            seat_result.log,
        )
        for seat_result in result.seats
    ]
    if values:
        _update_seats(table, values)
    entries = {seat["position"]: seat["entry_id"] for seat in seats}
    Fault.objects.bulk_create(
        [
            Fault(
                table=table,
                seat=f.seat,
                entry_id=entries[f.seat],
                kind=f.kind.value,
                deal_index=f.deal,
                decision=f.decision,
                step=f.step,
                detail=f.detail,
            )
            for f in result.faults
        ]
    )


def _update_seats(table: Table, values: list[tuple[Any, ...]]) -> None:
    """Set the result columns of a table's seats from (position, *_SEAT_RESULT_FIELDS)
    rows, in one ``UPDATE ... FROM (VALUES ...)`` (one small UPDATE per seat cost the worker
    and the server more; ``bulk_update``'s CASE over every column more still). Other
    databases get one small UPDATE per seat."""
    if connection.vendor != "postgresql":
        for position, *columns in values:
            Seat.objects.filter(table=table, position=position).update(
                **dict(zip(_SEAT_RESULT_FIELDS, columns, strict=True))
            )
        return
    meta = Seat._meta
    quote = connection.ops.quote_name
    fields = [meta.get_field(name) for name in _SEAT_RESULT_FIELDS]
    assert all(isinstance(f, models.Field) for f in fields)
    # Each value cast to its column's type: the VALUES list has none of its own (a column
    # of NULLs would be text).
    assignments = ", ".join(
        f"{quote(f.column)} = v.{quote(f.column)}::{f.db_type(connection)}"
        for f in fields
        if isinstance(f, models.Field)
    )
    names = ", ".join(quote(f.column) for f in fields if isinstance(f, models.Field))
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    table_name = quote(meta.db_table)
    sql = (
        f"UPDATE {table_name} SET {assignments} "
        f"FROM (VALUES {', '.join([row] * len(values))}) AS v(position, {names}) "
        f"WHERE {table_name}.{quote('table_id')} = %s "
        f"AND {table_name}.{quote('position')} = v.position"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for row_values in values for value in row_values] + [table.pk])


def _round_close(round_: Round, tournament: Tournament) -> None:
    """Close a round whose tables are all recorded; duplicate play scores matchpoints now."""
    if tournament.duplicate:
        tables = list(Table.objects.filter(round=round_).order_by("number"))
        deal_points: dict[int, list[list[int]]] = {t.pk: [] for t in tables}
        for table_id, points in (
            Deal.objects.filter(table__round=round_)
            .order_by("table_id", "index")
            .values_list("table_id", "points")
        ):
            deal_points[table_id].append(points)
        matchpoints = formats.duplicate_matchpoints(
            [deal_points[t.pk] for t in tables],
            lower_is_better=selectors.tournament_lower_is_better(tournament=tournament),
        )
        seats = list(Seat.objects.filter(table__round=round_))
        index = {t.pk: i for i, t in enumerate(tables)}
        for seat in seats:
            seat.points = _as_points(matchpoints[index[seat.table_id]][seat.position])
        Seat.objects.bulk_update(seats, ["points"])
    round_.status = Round.Status.DONE
    round_.finished_at = timezone.now()
    round_.save(update_fields=["status", "finished_at"])


def tournament_finish(*, tournament: Tournament) -> Tournament:
    """Finish a running tournament: reveal its seed, freeze the final standings, update the
    ratings. Runs once (compare-and-set on the status)."""
    now = timezone.now()
    with transaction.atomic():
        updated = Tournament.objects.filter(
            pk=tournament.pk, status=Tournament.Status.RUNNING
        ).update(status=Tournament.Status.FINISHED, finished_at=now, seed_revealed_at=now)
        tournament.refresh_from_db()
        if not updated:
            return tournament
        lines = selectors.standings_for_tournament(tournament=tournament)
        entries = []
        for line in lines:
            line.entry.final_rank = line.rank
            line.entry.final_points = _as_points(line.points)
            entries.append(line.entry)
        Entry.objects.bulk_update(entries, ["final_rank", "final_points"])
        ratings_update(tournament=tournament)
    return tournament


def ratings_update(*, tournament: Tournament) -> int:
    """Update the ratings of the bots of a finished tournament, table by table in order, from
    each table's places among its rated seats (house and substitute seats are not rated; a bot
    entered twice at one table counts once, at its better place). Returns the tables rated."""
    family = ratings.preset_family(tournament.game, tournament.preset)
    tables = list(
        Table.objects.filter(tournament=tournament, status=Table.Status.DONE)
        .select_related("round")
        .order_by("round__number", "number")
    )
    seats_by_table: dict[int, list[Seat]] = {t.pk: [] for t in tables}
    for seat in Seat.objects.filter(
        table__in=tables, entry__isnull=False, substitute=False, place__isnull=False
    ).select_related("entry__version"):
        seats_by_table[seat.table_id].append(seat)
    bot_ids = sorted(
        {s.entry.version.bot_id for seats in seats_by_table.values() for s in seats if s.entry}
    )
    # The bots rated for the first time start from the default rating (in one query, not a
    # get_or_create per bot; a rating made meanwhile by another tournament is kept).
    rated_before = set(
        Rating.objects.filter(bot_id__in=bot_ids, family=family).values_list("bot_id", flat=True)
    )
    Rating.objects.bulk_create(
        [
            Rating(
                bot_id=bot_id,
                family=family,
                mu=ratings.DEFAULT_MU,
                sigma=ratings.DEFAULT_SIGMA,
                ordinal=ratings.Skill().ordinal,
            )
            for bot_id in bot_ids
            if bot_id not in rated_before
        ],
        ignore_conflicts=True,
    )
    current = {
        r.bot_id: r
        for r in Rating.objects.select_for_update()
        .filter(bot_id__in=bot_ids, family=family)
        .order_by("pk")
    }
    history: list[RatingHistory] = []
    rated = 0
    now = timezone.now()
    for table in tables:
        best: dict[int, int] = {}
        for seat in seats_by_table[table.pk]:
            assert seat.entry is not None
            assert seat.place is not None
            bot_id = seat.entry.version.bot_id
            best[bot_id] = min(best.get(bot_id, seat.place), seat.place)
        if len(best) < 2:
            continue
        order = sorted(best)
        before = [ratings.Skill(current[b].mu, current[b].sigma) for b in order]
        after = ratings.rate_table(before, [best[b] for b in order])
        for bot_id, skill in zip(order, after, strict=True):
            rating = current[bot_id]
            rating.mu, rating.sigma, rating.ordinal = skill.mu, skill.sigma, skill.ordinal
            rating.tables += 1
            rating.updated_at = now
            history.append(
                RatingHistory(
                    rating=rating,
                    tournament=tournament,
                    table=table,
                    mu=skill.mu,
                    sigma=skill.sigma,
                    ordinal=skill.ordinal,
                    place=best[bot_id],
                    created_at=now,
                )
            )
        rated += 1
    Rating.objects.bulk_update(current.values(), ["mu", "sigma", "ordinal", "tables", "updated_at"])
    RatingHistory.objects.bulk_create(history, batch_size=BULK_BATCH)
    return rated


# ---------------------------------------------------------------------------------------------
# Audit
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class DealAudit:
    deal_id: int
    table_id: int
    index: int
    ok: bool
    problems: tuple[str, ...]

    def as_json(self) -> dict[str, JSON]:
        return {
            "deal": self.deal_id,
            "table": self.table_id,
            "index": self.index,
            "ok": self.ok,
            "problems": list(self.problems),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentAudit:
    tournament_id: int
    ok: bool
    deals: int
    tables: int
    problems: tuple[str, ...]
    commitment_ok: bool | None  # None while the seed is secret

    def as_json(self) -> dict[str, JSON]:
        return {
            "tournament": self.tournament_id,
            "ok": self.ok,
            "deals": self.deals,
            "tables": self.tables,
            "commitment_ok": self.commitment_ok,
            "problems": list(self.problems),
        }


def deal_audit(*, deal: Deal, engine: games.Game[object] | None = None) -> DealAudit:
    """Re-play a deal from its seed (or hands) and its log through the engine: every action
    legal and by the right seat, the points right; and check that the stored rows (points,
    tricks, decisions, passes) say the same as the replay."""
    table = deal.table
    tournament = table.tournament
    engine = engine or _engine(
        tournament.game, tournament.preset, tournament.options, tournament.deals_per_table
    )
    problems: list[str] = []
    where = f"table {table.pk} (round {table.round.number}, table {table.number}) deal {deal.index}"
    entry = deal.log
    if entry.get("index") != deal.index or entry.get("deal") != deal.record:
        problems.append(f"{where}: the log does not describe this deal")
    if deal.seed is not None and deal.seed != table.deal_seed:
        problems.append(
            f"{where}: dealt from seed {deal.seed}, the table's seed is {table.deal_seed}"
        )
    try:
        verdict = verify_deal(engine, entry, table.deal_seed)
    except GameError as exc:
        problems.append(f"{where}: unreadable log: {exc}")
        return DealAudit(deal.pk, table.pk, deal.index, False, tuple(problems))
    if not verdict.ok:
        step = f" (action {verdict.step})" if verdict.step is not None else ""
        problems.append(f"{where}{step}: {verdict.message}")
        return DealAudit(deal.pk, table.pk, deal.index, False, tuple(problems))
    state = engine.deal_from_record(deal.index, deal.record)
    actions = entry["actions"]
    assert isinstance(actions, list)
    for _, action in actions:
        state.apply_action(action)
    if deal.points != state.points():
        problems.append(f"{where}: the row says {deal.points}, the replay {state.points()}")
    rows = [(t.leader, list(t.cards), t.winner, t.points) for t in deal.tricks.order_by("number")]
    replayed = [(t.leader, list(t.cards), t.winner, t.points) for t in state.tricks()]
    if rows != replayed:
        problems.append(f"{where}: the trick rows differ from the replay")
    decisions = [[d.seat, d.action] for d in deal.decision_set.order_by("step")]
    if decisions != [list(a) for a in actions]:
        problems.append(f"{where}: the decision rows differ from the log")
    if deal.passes != _passes(engine, actions):
        problems.append(f"{where}: the passes differ from the log")
    return DealAudit(deal.pk, table.pk, deal.index, not problems, tuple(problems))


def tournament_audit(*, tournament: Tournament) -> TournamentAudit:
    """Audit every recorded deal of a tournament, each table's totals and places, and, once
    the seed is revealed, the commitment and every table's deal seed."""
    problems: list[str] = []
    commitment_ok: bool | None = None
    seed = tournament.revealed_seed
    if seed is not None:
        commitment_ok = formats.commitment_matches(seed, tournament.commitment)
        if not commitment_ok:
            problems.append("the revealed seed does not match the published commitment")
    engine = _engine(
        tournament.game, tournament.preset, tournament.options, tournament.deals_per_table
    )
    tables = (
        Table.objects.filter(tournament=tournament, status=Table.Status.DONE)
        .select_related("round", "tournament")
        .order_by("round__number", "number")
    )
    deal_count = table_count = 0
    for table in tables:
        table_count += 1
        where = f"round {table.round.number} table {table.number}"
        if seed is not None:
            expected = formats.table_deal_seed(
                seed,
                round_number=table.round.number,
                table_number=table.number,
                duplicate=tournament.duplicate,
            )
            if expected != table.deal_seed:
                problems.append(f"{where}: its deal seed does not come from the revealed seed")
        deal_points = []
        deals = list(Deal.objects.filter(table=table).order_by("index"))
        if [d.index for d in deals] != list(range(tournament.deals_per_table)):
            problems.append(f"{where}: expected deals 0..{tournament.deals_per_table - 1}")
        for deal in deals:
            deal.table = table
            deal_count += 1
            audit = deal_audit(deal=deal, engine=engine)
            problems.extend(audit.problems)
            deal_points.append(list(deal.points))
        if not deal_points:
            continue
        scores = engine.match_scores(deal_points)
        places = engine.places(scores)
        seats = list(table.seats.order_by("position"))
        if [s.score for s in seats] != scores or [s.place for s in seats] != places:
            problems.append(
                f"{where}: seats say scores {[s.score for s in seats]} places "
                f"{[s.place for s in seats]}, the deals give {scores} and {places}"
            )
    return TournamentAudit(
        tournament.pk, not problems, deal_count, table_count, tuple(problems), commitment_ok
    )


# ---------------------------------------------------------------------------------------------
# Running a tournament in this process (the demo, tests, management commands)
# ---------------------------------------------------------------------------------------------


def tournament_run_here(*, tournament: Tournament, worker: str = "inline") -> int:
    """Play every table of a running tournament in this process, round after round, until
    it is finished (the demo does this; workers do it in production). Returns tables played.
    Tasks queued meanwhile find their tables done and do nothing."""
    played = 0
    while True:
        tournament.refresh_from_db(fields=["status"])
        if tournament.status != Tournament.Status.RUNNING:
            return played
        pending = list(
            Table.objects.filter(tournament=tournament, status=Table.Status.PENDING)
            .order_by("round__number", "number")
            .values_list("pk", flat=True)
        )
        if not pending:
            return played
        for table_id in pending:
            outcome = table_run(table_id=table_id, worker=worker, token=f"{worker}-{table_id}")
            if outcome.outcome == "failed":
                raise ApplicationError(f"table {table_id} failed: {outcome.detail}")
            played += outcome.outcome == "recorded"
