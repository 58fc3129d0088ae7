"""Bots and their versions: create, upload, validate in the sandbox."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

import games
from games.base import JSON
from games.errors import GameError
from judge import bots as builtin_bots
from judge.faults import Fault, FaultKind
from judge.launchers import runtimes
from judge.launchers.package import remove
from judge.package import MAX_ZIP_BYTES, PackageError, check, prepare
from judge.runner import Limits, run_table
from tournaments import conf, judging, queue
from tournaments.errors import ApplicationError
from tournaments.models import (
    Bot,
    BotArtifact,
    BotVersion,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)


VALIDATION_DEALS = 2  # deals of a validation table (a whole game for games that need one)


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
        size, filename, data, runtime = 0, "", b"", ""
    else:
        assert content is not None
        data = bytes(content)
        filename = Path(filename or "bot.py").name
        if not filename.endswith(".zip") and runtimes.runtime_for_file(filename) is None:
            extensions = " ".join(runtimes.EXTENSIONS)
            raise ApplicationError(
                f"a bot is a source file ({extensions}) or a .zip package", code="bot_package"
            )
        if not data:
            raise ApplicationError("the uploaded file is empty", code="bot_package")
        if len(data) > MAX_ZIP_BYTES:
            raise ApplicationError(
                f"the upload is {len(data)} bytes; the limit is {MAX_ZIP_BYTES}",
                code="bot_package",
            )
        runtime = _check_package(data, filename)
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
            runtime=runtime,
            validation_queued_at=None if builtin else timezone.now(),
        )
        if not builtin:
            queue.bot_version_validate(version_id=version.pk)
    return version


def _check_package(data: bytes, filename: str) -> str:
    """The package's runtime, or ApplicationError saying why it is refused."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tapis-upload-") as tmp:
        path = Path(tmp, filename)
        path.write_bytes(data)
        try:
            return check(path).runtime
        except PackageError as exc:
            raise ApplicationError(str(exc), code="bot_package") from None


def bot_version_validate(*, version_id: int) -> BotVersion:
    """Run a pending version in the sandbox at a short table against built-in bots; it becomes
    ready if it played every decision cleanly, rejected otherwise (the report says why).
    Running it twice validates once; a version whose validation lease ran out (its worker died)
    is taken over."""
    now = timezone.now()
    lapsed = now - timedelta(seconds=conf.validation_lease_seconds())
    claimed = BotVersion.objects.filter(
        Q(status=BotVersion.Status.PENDING)
        | Q(status=BotVersion.Status.VALIDATING, validation_started_at__lt=lapsed),
        pk=version_id,
    ).update(
        status=BotVersion.Status.VALIDATING,
        validation_started_at=now,
        validation_attempts=F("validation_attempts") + 1,
    )
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    if not claimed:
        return version
    mine = BotVersion.objects.filter(
        pk=version_id, status=BotVersion.Status.VALIDATING, validation_started_at=now
    )
    try:
        report = _validation_report(version)
    except BaseException:
        mine.update(status=BotVersion.Status.PENDING, validation_started_at=None)
        raise
    status = BotVersion.Status.READY if report["ok"] else BotVersion.Status.REJECTED
    mine.update(status=status, report=report, validated_at=timezone.now())
    version.refresh_from_db(fields=["status", "report", "validated_at", "toolchain"])
    return version


def bot_version_sweep(*, now: datetime | None = None) -> list[int]:
    """The sweep's part for versions (run with the tables' sweep): a version whose validation
    lease ran out (its worker died, or was cut off) is sent again, or rejected once
    ``TAPIS_TABLE_MAX_ATTEMPTS`` workers took it without an answer (a version that kills
    every worker it meets ends rejected, not validated for ever); a pending version whose
    message seems lost is sent again. Every change is a compare-and-set. Returns the versions
    sent again."""
    now = now or timezone.now()
    lapsed = now - timedelta(seconds=conf.validation_lease_seconds())
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    Status = BotVersion.Status
    expired = BotVersion.objects.filter(
        status=Status.VALIDATING, validation_started_at__lt=lapsed
    ).values_list("pk", "validation_started_at", "validation_attempts")
    resent = []
    for pk, started, attempts in expired:
        this = BotVersion.objects.filter(
            pk=pk, status=Status.VALIDATING, validation_started_at=started
        )
        if attempts >= conf.max_attempts():
            reason = (
                f"the validation ended {attempts} times without an answer: the worker running it "
                "died or was cut off each time"
            )
            this.update(
                status=Status.REJECTED,
                validated_at=now,
                report={"ok": False, "reason": reason, "attempts": attempts},
            )
            log.warning("version %s rejected: %s", pk, reason)
            continue
        with transaction.atomic():
            if this.update(status=Status.PENDING, validation_queued_at=now):
                queue.bot_version_validate(version_id=pk)
                resent.append(pk)
    lost = BotVersion.objects.filter(
        Q(validation_queued_at__lt=stale)
        | Q(validation_queued_at__isnull=True, created_at__lt=stale),
        status=Status.PENDING,
    ).values_list("pk", "validation_queued_at")
    for pk, queued in lost:
        with transaction.atomic():
            if BotVersion.objects.filter(
                Q(validation_queued_at=queued) if queued else Q(validation_queued_at__isnull=True),
                pk=pk,
                status=Status.PENDING,
            ).update(validation_queued_at=now):
                queue.bot_version_validate(version_id=pk)
                resent.append(pk)
    if resent:
        log.info("sweep: versions sent again for validation: %s", resent)
    return resent


def bot_version_revalidate(*, version: BotVersion) -> BotVersion:
    """Queue a rejected version for validation again (after a sandbox problem was fixed)."""
    with transaction.atomic():
        updated = BotVersion.objects.filter(
            pk=version.pk, status=BotVersion.Status.REJECTED
        ).update(
            status=BotVersion.Status.PENDING,
            report={},
            validated_at=None,
            validation_queued_at=timezone.now(),
            validation_attempts=0,
        )
        if not updated:
            raise ApplicationError(
                f"{version.label} is {version.status}: only a rejected version is validated again",
                code="status",
            )
        queue.bot_version_validate(version_id=version.pk)
    version.refresh_from_db(fields=["status", "report", "validated_at"])
    return version


def _build(version: BotVersion) -> dict[str, JSON] | None:
    """Build a compiled version in the sandbox and keep its artifact (None: nothing to build,
    or built); a report of the failure, the compiler's messages in it, if it does not build."""
    import tempfile

    path = judging.bot_version_path(version=version)
    with tempfile.TemporaryDirectory(prefix="tapis-build-") as tmp:
        os.chmod(tmp, 0o711)  # the sandbox uid reads the sources below it
        prepared = prepare(path, Path(tmp, "src"))
        try:
            if not runtimes.RUNTIMES[prepared.runtime].compiled:
                return None
            artifact = runtimes.build(
                prepared.directory,
                prepared.runtime,
                prepared.entry,
                prepared.sources,
                mode=conf.sandbox_mode(),
            )
        except runtimes.BuildError as exc:
            reason, _, messages = str(exc).partition("\n")
            return {
                "ok": False,
                "reason": reason,
                "runtime": prepared.runtime,
                "toolchain": runtimes.toolchain(prepared.runtime),
                "build_log": messages,
            }
        finally:
            remove(prepared.directory)
    with transaction.atomic():
        BotArtifact.objects.update_or_create(
            version=version,
            defaults={
                "data": artifact.data,
                "sources_sha256": artifact.sources_sha256,
                "toolchain": artifact.toolchain,
                "seconds": artifact.seconds,
            },
        )
        BotVersion.objects.filter(pk=version.pk).update(
            runtime=artifact.runtime, toolchain=artifact.toolchain
        )
    version.runtime, version.toolchain = artifact.runtime, artifact.toolchain
    judging.bot_version_artifact(version=version)  # into this worker's build cache
    return None


def _validation_report(version: BotVersion) -> dict[str, JSON]:
    failed = _build(version)
    if failed is not None:
        return failed
    game = games.load(version.bot.game)
    deals = game.round_deals_up(VALIDATION_DEALS)  # Roi: one whole game (10 deals)
    sparring = "random"
    seed = int(version.sha256[:15], 16)
    limits = Limits(startup=5.0, decision=1.0, bank=5.0, max_faults=1)
    result = run_table(
        game=game.name,
        preset=game.preset,
        bots=[judging.bot_spec(version=version)] + [f"builtin:{sparring}"] * (game.players - 1),
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
    elif seat.faults:
        reason = refusal_reason(seat.faults[0], limits)
    else:
        reason = "the bot was replaced by the judge"
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
        "runtime": version.runtime,
        "toolchain": version.toolchain,
    }


def refusal_reason(fault: Fault, limits: Limits) -> str:
    """Why validation refused a version, in words: the fault, where it happened (deals and
    decisions counted from 1) and, for a timeout, the limits it broke.

    >>> limits = Limits(startup=5.0, decision=1.0, bank=5.0)
    >>> late = Fault(0, FaultKind.TIMEOUT, 1, 6, 40, "no answer within the time allowed")
    >>> where, _, detail = refusal_reason(late, limits).partition(": ")
    >>> where
    'timeout at deal 2, decision 7'
    >>> detail
    'no answer within the limit of 1 s a decision plus the bank of 5 s'
    >>> refusal_reason(Fault(0, FaultKind.CRASH, 0, 2, 9, "the bot exited (status 3)"), limits)
    'crash at deal 1, decision 3: the bot exited (status 3)'
    >>> refusal_reason(Fault(0, FaultKind.TIMEOUT, None, None, None, "no ready"), limits)
    'timeout at start-up: no ready within the start-up limit of 5 s'
    """
    where = "start-up" if fault.deal is None else f"deal {fault.deal + 1}"
    if fault.deal is not None and fault.decision is not None:
        where += f", decision {fault.decision + 1}"
    detail = fault.detail
    if fault.kind is FaultKind.TIMEOUT and fault.deal is None:
        detail = f"no ready within the start-up limit of {limits.startup:g} s"
    elif fault.kind is FaultKind.TIMEOUT:
        limit = f"the limit of {limits.decision:g} s a decision plus the bank of {limits.bank:g} s"
        answered = detail.startswith("no answer")
        detail = f"no answer within {limit}" if answered else f"{detail} ({limit})"
    return f"{fault.kind.value} at {where}: {detail}"
