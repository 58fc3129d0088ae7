"""Bots and their versions: create, upload, validate in the sandbox."""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q, QuerySet, Sum
from django.db.models.functions import Length
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
from tournaments.services import fairshare

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
        if not builtin:
            _check_upload_limits(owner_id=bot.owner_id, size=len(data))
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
            validation_queued_at=None,  # an upload waits for its validation's turn
        )
        if not builtin:
            validation_dispatch()
    return version


def _check_upload_limits(*, owner_id: int, size: int) -> None:
    """ApplicationError ``upload_limit`` if an upload of ``size`` bytes would take its author
    over ``TAPIS_UPLOADS_PER_HOUR`` uploads in the last hour or ``TAPIS_UPLOAD_BYTES`` stored
    (uploads and builds). Call inside a transaction: the author's uploads are counted one at a
    time."""
    get_user_model().objects.select_for_update().filter(pk=owner_id).first()
    uploads = BotVersion.objects.filter(bot__owner_id=owner_id, builtin="")
    recent = uploads.filter(created_at__gte=timezone.now() - timedelta(hours=1)).count()
    if recent >= conf.uploads_hourly_cap():
        raise ApplicationError(
            f"you uploaded {recent} version{'s' if recent != 1 else ''} in the last hour, the "
            "most allowed: try again later",
            code="upload_limit",
            extra={"last_hour": recent, "max_per_hour": conf.uploads_hourly_cap()},
        )
    stored = (uploads.aggregate(total=Sum("size"))["total"] or 0) + (
        BotArtifact.objects.filter(version__bot__owner_id=owner_id).aggregate(
            total=Sum(Length("data"))
        )["total"]
        or 0
    )
    if stored + size > conf.upload_bytes_cap():
        raise ApplicationError(
            f"your uploads and their builds take {stored} bytes; with this one they would be over "
            f"the {conf.upload_bytes_cap()} bytes an author may store",
            code="upload_limit",
            extra={"stored_bytes": stored, "max_bytes": conf.upload_bytes_cap()},
        )


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


# What a version's package, build or artifact may raise at its validation: a rejection with
# its reason, never a version left pending (a worker's local disk error among them: the
# report says so, and staff may validate it again).
REFUSALS: tuple[type[Exception], ...] = (PackageError, runtimes.BuildError, OSError)


def bot_version_validate(*, version_id: int) -> BotVersion:
    """Run a pending version in the sandbox at a short table against built-in bots; it becomes
    ready if it played every decision cleanly, rejected otherwise (the report says why: its
    package, its build or its artifact refused, or its play). Running it twice validates once;
    a version whose validation lease ran out (its worker died) is taken over, at most
    ``TAPIS_TABLE_MAX_ATTEMPTS`` times: then it is rejected."""
    now = timezone.now()
    lapsed = now - timedelta(seconds=conf.validation_lease_seconds())
    claimable = Q(status=BotVersion.Status.PENDING) | Q(
        status=BotVersion.Status.VALIDATING, validation_started_at__lt=lapsed
    )
    claimed = BotVersion.objects.filter(
        claimable, pk=version_id, validation_attempts__lt=conf.max_attempts()
    ).update(
        status=BotVersion.Status.VALIDATING,
        validation_started_at=now,
        validation_attempts=F("validation_attempts") + 1,
    )
    if not claimed:
        _reject_used_up(BotVersion.objects.filter(claimable, pk=version_id), now=now)
        return BotVersion.objects.select_related("bot").get(pk=version_id)
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    mine = BotVersion.objects.filter(
        pk=version_id, status=BotVersion.Status.VALIDATING, validation_started_at=now
    )
    try:
        report = _validation_report(version)
    except REFUSALS as exc:
        report = _refusal_report(version, exc)
    except BaseException:
        mine.update(status=BotVersion.Status.PENDING, validation_started_at=None)
        raise
    status = BotVersion.Status.READY if report["ok"] else BotVersion.Status.REJECTED
    with transaction.atomic():
        if mine.update(status=status, report=report, validated_at=timezone.now()):
            if status == BotVersion.Status.REJECTED:
                BotArtifact.objects.filter(version_id=version_id).delete()
            validation_dispatch()
    version.refresh_from_db(fields=["status", "report", "validated_at", "toolchain"])
    return version


def _refusal_report(version: BotVersion, exc: Exception) -> dict[str, JSON]:
    """The report of a version whose package, build or artifact was refused."""
    if isinstance(exc, OSError):
        reason = f"the worker could not prepare the bot: {exc}"
    else:
        reason = str(exc)
    reason, _, messages = reason.partition("\n")
    report: dict[str, JSON] = {"ok": False, "reason": reason, "runtime": version.runtime}
    if messages:
        report["build_log"] = messages
    return report


def _version_reject(
    versions: QuerySet[BotVersion], *, now: datetime, report: dict[str, JSON]
) -> int:
    """Reject the versions of ``versions`` (a compare-and-set) and delete their stored builds."""
    with transaction.atomic():
        ids = list(versions.select_for_update().values_list("pk", flat=True))
        done = BotVersion.objects.filter(pk__in=ids).update(
            status=BotVersion.Status.REJECTED, validated_at=now, report=report
        )
        BotArtifact.objects.filter(version_id__in=ids).delete()
    for pk in ids:
        log.warning("version %s rejected: %s", pk, report["reason"])
    return done


def _reject_used_up(versions: QuerySet[BotVersion], *, now: datetime) -> int:
    """Reject those of ``versions`` whose validation attempts are used up."""
    attempts = conf.max_attempts()
    reason = (
        f"the validation ended {attempts} times without an answer: the worker running it "
        "died, was cut off or failed each time"
    )
    report: dict[str, JSON] = {"ok": False, "reason": reason, "attempts": attempts}
    return _version_reject(
        versions.filter(validation_attempts__gte=attempts), now=now, report=report
    )


def bot_version_sweep(*, now: datetime | None = None) -> list[int]:
    """The sweep's part for versions (run with the tables' sweep): a version whose validation
    lease ran out (its worker died, or was cut off) is sent again; a pending version whose
    message seems lost is sent again; either is rejected once ``TAPIS_TABLE_MAX_ATTEMPTS``
    workers took it without an answer (a version that kills or fails every worker it meets
    ends rejected, not validated for ever). Waiting versions are then sent as the
    validations' fair share allows (:func:`validation_dispatch`). Every change is a
    compare-and-set. Returns the versions sent."""
    now = now or timezone.now()
    lapsed = now - timedelta(seconds=conf.validation_lease_seconds())
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    Status = BotVersion.Status
    expired = BotVersion.objects.filter(status=Status.VALIDATING, validation_started_at__lt=lapsed)
    lost = BotVersion.objects.filter(status=Status.PENDING, validation_queued_at__lt=stale)
    _reject_used_up(expired, now=now)
    _reject_used_up(lost, now=now)
    resent = []
    for pk, started in expired.values_list("pk", "validation_started_at"):
        with transaction.atomic():
            this = expired.filter(pk=pk, validation_started_at=started)
            if this.update(status=Status.PENDING, validation_queued_at=now):
                queue.bot_version_validate(version_id=pk)
                resent.append(pk)
    for pk, queued in lost.values_list("pk", "validation_queued_at"):
        with transaction.atomic():
            if lost.filter(pk=pk, validation_queued_at=queued).update(validation_queued_at=now):
                queue.bot_version_validate(version_id=pk)
                resent.append(pk)
    if resent:
        log.info("sweep: versions sent again for validation: %s", resent)
    return resent + validation_dispatch()


# Validations by where they are: sent to the workers (their message queued) or running, and
# waiting for a slot of the validations' fair share (not sent).
_VALIDATION_SENT_OR_RUNNING = Q(status=BotVersion.Status.VALIDATING) | Q(
    status=BotVersion.Status.PENDING, validation_queued_at__isnull=False
)
_VALIDATION_WAITING = Q(status=BotVersion.Status.PENDING, validation_queued_at__isnull=True)


def validation_dispatch() -> list[int]:
    """Send waiting validations while fewer than ``TAPIS_VALIDATIONS_IN_FLIGHT`` are sent or
    running, by turns of their authors (:func:`fairshare.fair_share_turns`): the validations'
    fair share of the workers, so that a tournament's table waits behind at most that many,
    however many versions are uploaded at once. Called when a version is uploaded or sent
    again, when a validation ends, and by the sweep. Returns the versions sent (once the
    transaction, this one or the caller's, commits)."""
    busy: Counter[int] = Counter()  # each author's validations in flight

    def in_flight() -> int:
        busy.update(
            BotVersion.objects.filter(_VALIDATION_SENT_OR_RUNNING).values_list(
                "bot__owner_id", flat=True
            )
        )
        return busy.total()

    def waiting() -> list[tuple[int, int]]:  # (version, author), after in_flight()
        versions = BotVersion.objects.filter(_VALIDATION_WAITING).order_by("pk")
        return fairshare.fair_share_turns(
            list(versions.values_list("pk", "bot__owner_id")), author=lambda v: v[1], busy=busy
        )

    def start(version: tuple[int, int]) -> bool:
        waiting = BotVersion.objects.filter(_VALIDATION_WAITING, pk=version[0])
        sent = bool(waiting.update(validation_queued_at=timezone.now()))
        if sent:
            queue.bot_version_validate(version_id=version[0])
        return sent

    with transaction.atomic():
        started = fairshare.fair_share_dispatch(
            pool=fairshare.VALIDATIONS,
            cap=conf.validations_in_flight_cap(),
            in_flight=in_flight,
            waiting=waiting,
            start=start,
        )
    return [pk for pk, _ in started]


def bot_version_revalidate(*, version: BotVersion) -> BotVersion:
    """Queue a rejected version for validation again (after a sandbox problem was fixed)."""
    with transaction.atomic():
        updated = BotVersion.objects.filter(
            pk=version.pk, status=BotVersion.Status.REJECTED
        ).update(
            status=BotVersion.Status.PENDING,
            report={},
            validated_at=None,
            validation_queued_at=None,
            validation_attempts=0,
        )
        if not updated:
            raise ApplicationError(
                f"{version.label} is {version.status}: only a rejected version is validated again",
                code="status",
            )
        validation_dispatch()
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
    judging.bot_version_artifact(version=version, refuse=True)  # into this worker's build cache
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
