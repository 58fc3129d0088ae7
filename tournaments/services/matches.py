"""Matches: "is v2 better than v1?" (docs/tournaments.md, "Matches").

A match plays duplicate deals between a bot author's candidate version and a baseline (one of
their versions, or a built-in bot): each batch deals ``batch_deals`` deals from its own seed and
plays them twice, the candidate in one seat with house bots in the others, then the baseline in
the same seat of the same cards with the same house bots. On each deal the paired difference is
the candidate's points minus the baseline's (negated when lower is better). After each batch
the sequential test (:func:`tournaments.statistics.sprt.sprt_from_sums`) reads the running sums and
decides H1 (the candidate is better by about ``d1`` points per deal), H0 (by about ``d0``: not
better), or plays another batch, until ``max_deals``.

Batches run on the workers through the tables' queue and in the same sandbox as tournament
tables (the judge's ``run_table``). Fair share: a match has at most one batch in flight (the
next is created when the last is recorded, which the sequential test needs anyway), and all
matches together at most ``TAPIS_MATCH_BATCHES`` (default 1) batches in flight; the matches
waiting for a slot take it in turn, the one with the fewest deals first. So matches never hold
more than that many workers, whatever their number, and a tournament's table waits behind at
most that many short batches, never behind a match's whole length.

Claims are compare-and-set with a lease renewed at each deal's end, like tables; the periodic
sweep (:func:`match_sweep`, run with the tables' sweep) sends again a batch whose worker died or
whose message was lost, and starts the waiting matches.
"""

from __future__ import annotations

import contextlib
import logging
import math
import secrets
import time
import traceback
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

import games
from judge import bots as builtin_bots
from judge.runner import BotSpec, Limits, TableResult, run_table
from tournaments import conf, judging, queue, seeds
from tournaments.errors import DATABASE_ERRORS, ApplicationError
from tournaments.models import BotVersion, Match, MatchBatch
from tournaments.services import fairshare
from tournaments.statistics.spread import preset_spread
from tournaments.statistics.sprt import MIN_DEALS, Verdict, sprt_expected_deals, sprt_from_sums

log = logging.getLogger(__name__)

#: Paired deals a batch by default: two tables of this many deals, a few seconds with
#: built-in bots, well under a minute with uploaded ones at their usual speed.
BATCH_DEALS = 32
MAX_BATCH_DEALS = 200
#: The largest cap a match may ask for.
MAX_DEALS = 20_000
#: Claims of one batch before it is failed (each one died with its worker or lost its lease).
MAX_ATTEMPTS = 3
#: The default H1, in standard deviations of the paired difference per deal (measured for the
#: preset: Spread.paired). With alpha = beta = 0.05 the test then takes about 150 deals when
#: either hypothesis holds (Wald's approximation).
DEFAULT_D1_SPREADS = 0.2


def match_limits(*, house_bot: str) -> Limits:
    """The clock of a match's tables: the judge's defaults, a faulty seat handed to the house
    bot."""
    return Limits(replacement=house_bot)


def _engine(game: str, preset: str | None, deals: int = 1) -> games.Game[object]:
    return judging.engine_for(game=game, preset=preset, options={}, deals=deals)


def batch_time_budget(*, match: Match, deals: int) -> float:
    """The most a batch may take when every bot uses all its time (seconds): two tables."""
    engine = _engine(match.game, match.preset, deals)
    limits = match_limits(house_bot=match.house_bot)
    table = (
        engine.players * (limits.startup + limits.bank)
        + deals * engine.decisions_per_deal * limits.decision
        + deals * 1.0
        + 30.0
    )
    return 2 * table


def _lease_seconds(match: Match) -> float:
    """A batch's lease: renewed at each deal's end, so above the longest deal."""
    engine = _engine(match.game, match.preset)
    longest_deal = engine.decisions_per_deal * match_limits(house_bot=match.house_bot).decision
    return max(conf.lease_seconds(), 2 * longest_deal + 30.0)


def _check_version(version: BotVersion, owner: User, role: str) -> None:
    if version.bot.owner_id != owner.pk:
        raise ApplicationError(
            f"the {role} must be one of your own versions", code="not_owner", extra={"field": role}
        )
    if version.status != BotVersion.Status.READY:
        raise ApplicationError(
            f"{version.label} is {version.status}: only a ready version can play a match",
            code="version_not_ready",
            extra={"field": role},
        )


def match_create(
    *,
    owner: User,
    candidate: BotVersion,
    baseline: BotVersion | None = None,
    baseline_builtin: str = "",
    preset: str | None = None,
    d0: float = 0.0,
    d1: float | None = None,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_deals: int | None = None,
    batch_deals: int = BATCH_DEALS,
    house_bot: str = "heuristic",
) -> Match:
    """A new match of ``candidate`` against ``baseline`` (a version) or ``baseline_builtin``
    (a built-in bot), both the owner's, and its first batch queued (or waiting for a slot).

    ``d0`` and ``d1`` are the two hypotheses in points per deal (the candidate's mean score
    minus the baseline's): by default 0 and a fifth of the preset's measured spread of a paired
    difference; ``max_deals`` by default four times the deals the test takes on average."""
    game = candidate.bot.game
    _check_version(candidate, owner, "candidate")
    if (baseline is None) == (not baseline_builtin):
        raise ApplicationError(
            "give a baseline version or a built-in bot, not both",
            code="invalid",
            extra={"field": "baseline"},
        )
    if baseline is not None:
        _check_version(baseline, owner, "baseline")
        if baseline.bot.game != game:
            raise ApplicationError(
                f"the baseline plays {baseline.bot.game}, the candidate {game}",
                code="invalid",
                extra={"field": "baseline"},
            )
        if baseline.pk == candidate.pk:
            raise ApplicationError(
                "a version against itself tells nothing",
                code="invalid",
                extra={"field": "baseline"},
            )
    for field, name in (("baseline_builtin", baseline_builtin), ("house_bot", house_bot)):
        if field == "baseline_builtin" and not name:
            continue
        try:
            builtin_bots.builtin_class(name, game)
        except (KeyError, ValueError) as exc:
            raise ApplicationError(
                str(exc), code="unknown_builtin", extra={"field": field}
            ) from None
    try:
        engine = _engine(game, preset)
    except games.GameError as exc:
        raise ApplicationError(str(exc), code="invalid_option", extra={"field": "preset"}) from None
    if d1 is None:
        try:
            paired = preset_spread(game, engine.preset).paired()
        except ValueError:
            raise ApplicationError(
                f"{game}/{engine.preset} has no measured spread: give d1",
                code="invalid",
                extra={"field": "d1"},
            ) from None
        d1 = d0 + round(DEFAULT_D1_SPREADS * paired, 2)
    for field, rate in (("alpha", alpha), ("beta", beta)):
        if not (math.isfinite(rate) and 0 < rate < 0.5):
            raise ApplicationError(
                f"{field} must be between 0 and 0.5", code="invalid", extra={"field": field}
            )
    if not (math.isfinite(d0) and math.isfinite(d1) and d1 > d0):
        raise ApplicationError(
            "H1's difference d1 must be above H0's d0", code="invalid", extra={"field": "d1"}
        )
    if max_deals is None:
        paired = max(abs(d1 - d0) * 5, 1e-9)  # the spread d1 was chosen from, or a guess
        with contextlib.suppress(ValueError):
            paired = preset_spread(game, engine.preset).paired()
        expected = sprt_expected_deals(d0=d0, d1=d1, sd=paired, alpha=alpha, beta=beta)
        max_deals = min(MAX_DEALS, max(MIN_DEALS * 2, math.ceil(4 * expected)))
    if not MIN_DEALS <= max_deals <= MAX_DEALS:
        raise ApplicationError(
            f"max_deals must be from {MIN_DEALS} to {MAX_DEALS}",
            code="invalid",
            extra={"field": "max_deals"},
        )
    if not 1 <= batch_deals <= MAX_BATCH_DEALS:
        raise ApplicationError(
            f"batch_deals must be from 1 to {MAX_BATCH_DEALS}",
            code="invalid",
            extra={"field": "batch_deals"},
        )
    with transaction.atomic():
        match = Match.objects.create(
            owner=owner,
            game=game,
            preset=engine.preset,
            candidate=candidate,
            baseline=baseline,
            baseline_builtin=baseline_builtin,
            house_bot=house_bot,
            d0=d0,
            d1=d1,
            alpha=alpha,
            beta=beta,
            max_deals=max_deals,
            batch_deals=batch_deals,
            seed=secrets.randbits(seeds.DEAL_SEED_BITS),
        )
        _dispatch()
    return match


def match_cancel(*, match: Match) -> Match:
    """Stop a running match (its batch in flight is recorded, no new one is played)."""
    if not Match.objects.filter(pk=match.pk, status=Match.Status.RUNNING).update(
        status=Match.Status.CANCELLED, finished_at=timezone.now()
    ):
        raise ApplicationError(
            f"the match is {match.status}: only a running match stops", code="status"
        )
    with transaction.atomic():
        _dispatch()
    match.refresh_from_db()
    return match


# ---------------------------------------------------------------------------------------------
# Batches: dispatch, claim, play, record
# ---------------------------------------------------------------------------------------------

_IN_FLIGHT = (MatchBatch.Status.PENDING, MatchBatch.Status.RUNNING)


def _batch_seed(match: Match, number: int) -> int:
    return seeds.table_deal_seed(match.seed, round_number=number, table_number=1, duplicate=True)


def _dispatch() -> list[int]:
    """Create and send the next batch of the waiting matches while the matches' pool has free
    slots (:func:`~tournaments.services.fairshare.fair_share_dispatch`; call inside a
    transaction: the batches are sent once it commits). A match has one batch in flight at
    most; the waiting ones take the slots the one with the fewest deals first. Returns the new
    batches' ids."""
    running = list(
        Match.objects.select_for_update().filter(status=Match.Status.RUNNING).order_by("pk")
    )
    if not running:
        return []
    busy: set[int] = set()

    def in_flight() -> int:
        busy.update(
            MatchBatch.objects.filter(match__in=running, status__in=_IN_FLIGHT).values_list(
                "match_id", flat=True
            )
        )
        return len(busy)

    def waiting() -> list[Match]:
        return sorted((m for m in running if m.pk not in busy), key=lambda m: (m.deals, m.pk))

    created: list[int] = []

    def start(match: Match) -> bool:
        deals = min(match.batch_deals, match.max_deals - match.deals)
        if deals <= 0:
            return False
        number = MatchBatch.objects.filter(match=match).count() + 1
        players = _engine(match.game, match.preset).players
        batch = MatchBatch.objects.create(
            match=match,
            number=number,
            seed=_batch_seed(match, number),
            seat=(number - 1) % players,
            deals=deals,
            queued_at=timezone.now(),
        )
        _enqueue(batch, match)
        created.append(batch.pk)
        return True

    fairshare.fair_share_dispatch(
        pool=fairshare.MATCHES,
        cap=conf.batches_in_flight_cap(),
        in_flight=in_flight,
        waiting=waiting,
        start=start,
    )
    return created


def _enqueue(batch: MatchBatch, match: Match) -> None:
    budget = batch_time_budget(match=match, deals=batch.deals)
    queue.match_batch_enqueue(
        batch_id=batch.pk, options={"soft_time_limit": budget + 60, "time_limit": budget + 120}
    )


def _claim(batch_id: int, worker: str, token: str, now: datetime) -> MatchBatch | None:
    batch = MatchBatch.objects.select_related("match").filter(pk=batch_id).first()
    if batch is None or batch.match.status != Match.Status.RUNNING:
        return None
    claimable = Q(status=MatchBatch.Status.PENDING) | Q(
        status=MatchBatch.Status.RUNNING, lease_expires_at__lt=now
    )
    updated = MatchBatch.objects.filter(claimable, pk=batch_id, attempts__lt=MAX_ATTEMPTS).update(
        status=MatchBatch.Status.RUNNING,
        claimed_by=worker[:255],
        claim_token=token[:64],
        lease_expires_at=now + timedelta(seconds=_lease_seconds(batch.match)),
        attempts=batch.attempts + 1,
        started_at=now,
    )
    if not updated:
        return None
    batch.refresh_from_db()
    return batch


def _bot(match: Match, version: BotVersion | None, builtin: str) -> BotSpec:
    if version is None:
        return BotSpec(builtin=builtin, label=f"built-in {builtin}")
    if version.builtin:
        return BotSpec(builtin=version.builtin, label=version.label)
    path = judging.bot_version_path(version=version)
    return BotSpec(path=path, label=version.label)


def _play(batch: MatchBatch, token: str) -> tuple[list[float], int]:
    """Play a claimed batch: the candidate's table then the baseline's, same seed, same seat.
    Returns the paired differences (higher is better for the candidate) and the faults of the
    two seats compared."""
    match = batch.match
    lease = _lease_seconds(match)
    renewed = [time.monotonic()]

    def renew(*_: object) -> None:
        # At a deal's end, in the judge's thread: keep the claim while the batch plays.
        if time.monotonic() - renewed[0] < lease / 3:
            return
        renewed[0] = time.monotonic()
        MatchBatch.objects.filter(
            pk=batch.pk, status=MatchBatch.Status.RUNNING, claim_token=token
        ).update(lease_expires_at=timezone.now() + timedelta(seconds=lease))

    players = _engine(match.game, match.preset).players
    house = BotSpec(builtin=match.house_bot, label=f"house:{match.house_bot}")
    results: list[TableResult] = []
    for version, builtin in (
        (match.candidate, ""),
        (match.baseline, match.baseline_builtin),
    ):
        bots = [house] * players
        bots[batch.seat] = _bot(match, version, builtin)
        results.append(
            run_table(
                game=match.game,
                preset=match.preset,
                bots=bots,
                deals=batch.deals,
                seed=batch.seed,
                limits=match_limits(house_bot=match.house_bot),
                sandbox=conf.sandbox_mode(),
                on_progress=renew,
            )
        )
    sign = -1.0 if games.game_class(match.game).lower_is_better else 1.0
    mine, theirs = results
    differences = [
        sign * float(a[batch.seat] - b[batch.seat])
        for a, b in zip(mine.counted_points, theirs.counted_points, strict=True)
    ]
    faults = sum(1 for r in results for f in r.faults if f.seat == batch.seat)
    return differences, faults


def _record(batch: MatchBatch, token: str, differences: list[float], faults: int) -> bool:
    """Record a played batch under its current claim, update the match's sums and test, and
    dispatch what comes next. False if the claim was lost (another worker has the batch)."""
    now = timezone.now()
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=batch.match_id)
        if not MatchBatch.objects.filter(
            pk=batch.pk, status=MatchBatch.Status.RUNNING, claim_token=token
        ).update(
            status=MatchBatch.Status.DONE,
            differences=differences,
            faults=faults,
            finished_at=now,
            lease_expires_at=None,
        ):
            return False
        deals = match.deals + len(differences)
        total = match.total + math.fsum(differences)
        squares = match.total_squares + math.fsum(d * d for d in differences)
        test = sprt_from_sums(
            deals=deals,
            total=total,
            total_squares=squares,
            d0=match.d0,
            d1=match.d1,
            alpha=match.alpha,
            beta=match.beta,
            max_deals=match.max_deals,
        )
        fields: dict[str, object] = {
            "deals": deals,
            "total": total,
            "total_squares": squares,
            "llr": test.llr if math.isfinite(test.llr) else math.copysign(1e9, test.llr),
            "verdict": test.verdict.value,
        }
        if match.status == Match.Status.RUNNING and test.verdict is not Verdict.CONTINUE:
            fields["status"] = (
                Match.Status.CAPPED if test.verdict is Verdict.CAPPED else Match.Status.DECIDED
            )
            fields["finished_at"] = now
        Match.objects.filter(pk=match.pk).update(**fields)
        _dispatch()
    return True


def _fail(batch: MatchBatch, token: str, error: str) -> None:
    with transaction.atomic():
        if MatchBatch.objects.filter(
            pk=batch.pk, status=MatchBatch.Status.RUNNING, claim_token=token
        ).update(status=MatchBatch.Status.FAILED, error=error[-20000:], lease_expires_at=None):
            Match.objects.filter(pk=batch.match_id, status=Match.Status.RUNNING).update(
                status=Match.Status.FAILED,
                error=f"batch {batch.number}: {error}"[-20000:],
                finished_at=timezone.now(),
            )
        _dispatch()


def _release(batch: MatchBatch, token: str, reason: str) -> None:
    """Give a batch back (the infrastructure failed, not the batch): pending for the sweep."""
    MatchBatch.objects.filter(
        pk=batch.pk, status=MatchBatch.Status.RUNNING, claim_token=token
    ).update(
        status=MatchBatch.Status.PENDING,
        attempts=max(batch.attempts - 1, 0),
        claim_token="",
        lease_expires_at=None,
        queued_at=None,
        error=f"given back: {reason}"[:20000],
    )


def match_batch_run(*, batch_id: int, worker: str, token: str) -> dict[str, object]:
    """Claim, play and record one batch: what a batch task does. Safe to run twice (the claim
    is a compare-and-set, only the current claim records). Bots cannot make it fail (the judge
    turns what they do into faults); a bug or a setting the judge refuses fails the batch and
    its match, with the traceback; the database away gives the batch back."""
    batch = _claim(batch_id, worker, token, timezone.now())
    if batch is None:
        return {"batch": batch_id, "outcome": "skipped"}
    try:
        differences, faults = _play(batch, token)
        recorded = _record(batch, token, differences, faults)
    except DATABASE_ERRORS as exc:
        log.exception("match batch %s: the database is away; giving it back", batch_id)
        with contextlib.suppress(*DATABASE_ERRORS):
            _release(batch, token, f"database: {exc}")
        return {"batch": batch_id, "outcome": "released"}
    except Exception as exc:
        log.exception("match batch %s failed", batch_id)
        _fail(batch, token, traceback.format_exc())
        return {"batch": batch_id, "outcome": "failed", "detail": f"{type(exc).__name__}: {exc}"}
    return {"batch": batch_id, "outcome": "recorded" if recorded else "lost"}


def match_batch_fail(*, batch_id: int, token: str, error: str) -> None:
    """Fail a batch that went over its time limit (the task's soft limit)."""
    batch = MatchBatch.objects.filter(pk=batch_id).first()
    if batch is not None:
        _fail(batch, token, error)


def match_sweep(*, now: datetime | None = None) -> list[int]:
    """Send again the batches whose worker died (lease expired: pending again, or failed after
    :data:`MAX_ATTEMPTS`) or whose message seems lost (pending, not sent or sent long ago), and
    start the waiting matches. Compare-and-set throughout: sweeps may overlap. Returns the
    batches sent."""
    now = now or timezone.now()
    sent = []
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    running = Match.Status.RUNNING
    expired = MatchBatch.objects.filter(
        status=MatchBatch.Status.RUNNING, lease_expires_at__lt=now, match__status=running
    ).select_related("match")
    for batch in expired:
        if batch.attempts >= MAX_ATTEMPTS:
            _fail(batch, batch.claim_token, f"{batch.attempts} claims ended without a result")
            continue
        with transaction.atomic():
            if MatchBatch.objects.filter(
                pk=batch.pk, status=MatchBatch.Status.RUNNING, claim_token=batch.claim_token
            ).update(
                status=MatchBatch.Status.PENDING,
                claim_token="",
                lease_expires_at=None,
                queued_at=now,
            ):
                _enqueue(batch, batch.match)
                sent.append(batch.pk)
    pending = MatchBatch.objects.filter(
        Q(queued_at__isnull=True) | Q(queued_at__lt=stale),
        status=MatchBatch.Status.PENDING,
        match__status=running,
    ).select_related("match")
    for batch in pending:
        with transaction.atomic():
            if MatchBatch.objects.filter(
                pk=batch.pk, status=MatchBatch.Status.PENDING, queued_at=batch.queued_at
            ).update(queued_at=now):
                _enqueue(batch, batch.match)
                sent.append(batch.pk)
    with transaction.atomic():
        sent.extend(_dispatch())
    return sent


def match_run_here(*, match: Match, worker: str = "inline") -> int:
    """Play a match's batches in this process until it ends (tests and the demo; workers do it
    in production). Returns the batches played."""
    played = 0
    while True:
        match.refresh_from_db()
        if match.status != Match.Status.RUNNING:
            return played
        batch = (
            MatchBatch.objects.filter(match=match, status=MatchBatch.Status.PENDING)
            .order_by("number")
            .first()
        )
        if batch is None:
            return played
        outcome = match_batch_run(batch_id=batch.pk, worker=worker, token=f"{worker}-{batch.pk}")
        if outcome["outcome"] == "failed":
            raise ApplicationError(f"batch {batch.pk} failed: {outcome.get('detail')}")
        played += 1
