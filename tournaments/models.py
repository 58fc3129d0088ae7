"""Models of the tournaments app: bots and their versions, tournaments, entries, rounds,
tables, seats, every deal with its tricks and decisions, faults, and ratings.

Models hold data and small read-only helpers; every write goes through ``services`` and every
non-trivial read through ``selectors.py``.
"""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models
from django.utils import timezone

from tournaments.tournament_settings import DEFAULTS, NAME_MAX_LENGTH


class WorkerHeartbeat(models.Model):
    """Each Celery worker's own heartbeat: a timer in the worker's main process writes it every
    ``TAPIS_WORKER_HEARTBEAT_SECONDS`` (tournaments.worker_signals), with what it is playing.

    A worker whose ``last_seen`` grows old is dead, paused or cut off; one with a ``problem``
    took itself out of rotation (a local error: full disk, missing runtime) and stopped taking
    tables until an operator restarts it.
    """

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    beats = models.PositiveBigIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    host = models.CharField(max_length=255, blank=True, help_text="The machine's name.")
    pid = models.PositiveIntegerField(null=True, blank=True)
    playing = models.JSONField(default=list, blank=True, help_text="Ids of the tables it plays.")
    problem = models.TextField(
        blank=True, help_text="Why the worker took itself out of rotation (empty: it is not)."
    )

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} (last seen {self.last_seen:%Y-%m-%d %H:%M:%S %Z})"


class Housekeeping(models.Model):
    """When a periodic job (the sweep) last ran, whoever ran it: every worker may, and the
    first whose compare-and-set on ``last_run_at`` succeeds does, once per period."""

    name = models.CharField(max_length=64, unique=True)
    last_run_at = models.DateTimeField(help_text="When a worker last took the period.")
    last_done_at = models.DateTimeField(null=True, blank=True, help_text="When it last ended.")
    runs = models.PositiveBigIntegerField(default=0)
    last_by = models.CharField(max_length=255, blank=True)
    last_report = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} (last run {self.last_run_at:%Y-%m-%d %H:%M:%S %Z})"


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


class Bot(models.Model):
    """A bot of a user, for one game. Its code lives in immutable versions."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots"
    )
    name = models.CharField(max_length=64)
    game = models.CharField(max_length=32, db_index=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="bot_unique_name_per_owner"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.game})"


class BotVersion(models.Model):
    """One upload of a bot's code, or a built-in bot. Never changed once created (only its
    validation status and report move on).

    The upload is kept in the database, not on a local disk, so that workers on any machine can
    run it; ``sha256`` identifies it and lets workers cache it.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        VALIDATING = "validating", "validating"
        READY = "ready", "ready"
        REJECTED = "rejected", "rejected"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    content = models.BinaryField(
        blank=True, editable=False, help_text="The uploaded file (a .py or a .zip), as uploaded."
    )
    filename = models.CharField(max_length=200, blank=True)
    sha256 = models.CharField(max_length=64, db_index=True)
    size = models.PositiveIntegerField(default=0)
    builtin = models.CharField(
        max_length=32,
        blank=True,
        help_text="A built-in bot (random, lowest, heuristic) instead of a file.",
    )
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    report = models.JSONField(default=dict, blank=True, help_text="What the validation found.")
    created_at = models.DateTimeField(default=timezone.now)
    validated_at = models.DateTimeField(null=True, blank=True)
    # The validation's lease, like a table's: when its message was last sent (pending; NULL
    # while it waits for a slot of the validations' fair share) or when a worker took it
    # (validating), and how many workers took it. The sweep sends a version again whose
    # message seems lost or whose worker died, and rejects one whose attempts are used up
    # (tournaments.services.bots.bot_version_sweep, validation_dispatch).
    validation_queued_at = models.DateTimeField(null=True, blank=True)
    validation_started_at = models.DateTimeField(null=True, blank=True)
    validation_attempts = models.PositiveSmallIntegerField(default=0)
    # The language (judge.launchers.runtimes) and, for a compiled one, the toolchain of the
    # build made at validation (its BotArtifact).
    runtime = models.CharField(max_length=16, blank=True, help_text="python3, c, cpp, rust, ...")
    toolchain = models.CharField(
        max_length=300, blank=True, help_text="The compiler's version that built the artifact."
    )

    class Meta:
        ordering = ["bot", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="botversion_unique_number"),
            models.CheckConstraint(
                condition=~models.Q(builtin="") | models.Q(size__gt=0),
                name="botversion_file_or_builtin",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"

    @property
    def label(self) -> str:
        return f"{self.bot.name} v{self.number}"


class BotArtifact(models.Model):
    """The build of a compiled version, made at validation in the sandbox: kept in the database
    so that every worker runs the same program without building it again, unless its toolchain
    differs (then it rebuilds: a build is never run by another toolchain). A table of its own,
    so that reading versions never loads it."""

    version = models.OneToOneField(BotVersion, on_delete=models.CASCADE, related_name="build")
    data = models.BinaryField(editable=False, help_text="The build's output (a tar).")
    sources_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of the sources it was built from."
    )
    toolchain = models.CharField(max_length=300, help_text="The compiler's version.")
    seconds = models.FloatField(default=0.0, help_text="How long the build took.")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"build of {self.version_id}"


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


class Tournament(models.Model):
    """A fixed-length tournament: every table plays ``deals_per_table`` deals.

    A practice run (``practice``) is a tournament of one round, one table and one entry (the
    author's version, built-in bots in the other seats): it goes through the same queue,
    claim, sweep, judge and recording as any table, so that its deals replay like any deal
    (:mod:`tournaments.services.practice`; who sees it: :mod:`tournaments.visibility`)."""

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        OPEN = "open", "open for registration"
        RUNNING = "running", "running"
        FINISHED = "finished", "finished"
        CANCELLED = "cancelled", "cancelled"

    name = models.CharField(max_length=NAME_MAX_LENGTH)
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="organised_tournaments"
    )
    game = models.CharField(max_length=32, db_index=True)
    preset = models.CharField(max_length=64)
    options = models.JSONField(default=dict, blank=True, help_text="Rule option overrides.")
    table_size = models.PositiveSmallIntegerField()
    rounds = models.PositiveSmallIntegerField()
    deals_per_table = models.PositiveSmallIntegerField()
    seating = models.CharField(max_length=32, default=DEFAULTS["seating"])
    duplicate = models.BooleanField(
        default=DEFAULTS["duplicate"],
        help_text="Every table of a round plays the same deals (matchpoints).",
    )
    place_points = models.JSONField(default=list, blank=True)
    decision_seconds = models.FloatField(default=DEFAULTS["decision_seconds"])
    bank_seconds = models.FloatField(default=DEFAULTS["bank_seconds"])
    startup_seconds = models.FloatField(default=DEFAULTS["startup_seconds"])
    max_faults = models.PositiveSmallIntegerField(default=DEFAULTS["max_faults"])
    house_bot = models.CharField(max_length=32, default=DEFAULTS["house_bot"])
    allow_multiple_entries = models.BooleanField(default=DEFAULTS["allow_multiple_entries"])
    practice = models.BooleanField(
        default=False,
        db_index=True,
        help_text="A bot author's practice run (the version page's \"try it\"): one table of "
        "the author's version against built-in bots, its ``organiser`` the author. Shown to "
        "the author (and to staff once over), listed nowhere, never rated.",
    )
    registration_opens_at = models.DateTimeField(null=True, blank=True)
    registration_closes_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.DRAFT, db_index=True
    )
    seed = models.CharField(max_length=40, editable=False, help_text="Secret until the end.")
    commitment = models.CharField(max_length=64, editable=False)
    seed_revealed_at = models.DateTimeField(null=True, blank=True)
    current_round = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(rounds__gte=1), name="tournament_rounds_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(deals_per_table__gte=1), name="tournament_deals_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def seed_int(self) -> int:
        return int(self.seed)

    @property
    def revealed_seed(self) -> int | None:
        """The seed once the tournament is finished (never before)."""
        return int(self.seed) if self.seed_revealed_at is not None else None


class TournamentSummary(models.Model):
    """A finished tournament's final standings (:func:`tournaments.scoring.standings`'s lines)
    and statistics (:func:`tournaments.selectors.tournament_statistics`: the standings with
    their intervals and the crosstable; the spread per deal measured on it), computed once by
    the service that finishes it (:func:`tournaments.services.tournament_summary_store`;
    ``manage.py tournament_summaries`` for the tournaments finished before summaries
    existed), so that no page computes them again. JSON of
    :func:`tournaments.scoring.standings_as_json`,
    :func:`tournaments.statistics.stored.standings_as_json` and
    :func:`~tournaments.statistics.stored.crosstable_as_json`."""

    tournament = models.OneToOneField(
        Tournament, on_delete=models.CASCADE, primary_key=True, related_name="summary"
    )
    lines = models.JSONField()
    standings = models.JSONField()
    crosstable = models.JSONField()
    spread = models.JSONField()  # selectors.TournamentSpread.as_json()
    computed_at = models.DateTimeField(default=timezone.now)
    # Its public audit (services.TournamentAudit.as_json()), made by a task queued when it
    # finished (services.tournament_audit_store): None until then.
    audit = models.JSONField(null=True, blank=True)
    audited_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"summary of tournament {self.tournament_id}"


class Entry(models.Model):
    """A bot version entered in a tournament, frozen for the whole tournament."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    version = models.ForeignKey(BotVersion, on_delete=models.PROTECT, related_name="entries")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="entries"
    )
    withdrawn = models.BooleanField(default=False)
    disqualified = models.BooleanField(default=False)
    flag_reason = models.CharField(max_length=300, blank=True)
    flagged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Filled when the tournament finishes (the selectors compute live standings before).
    final_rank = models.PositiveIntegerField(null=True, blank=True)
    final_points = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)

    class Meta:
        ordering = ["tournament", "pk"]
        verbose_name_plural = "entries"
        constraints = [
            models.UniqueConstraint(fields=["tournament", "version"], name="entry_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.version.label} in {self.tournament.name}"

    @property
    def active(self) -> bool:
        return not (self.withdrawn or self.disqualified)


class Round(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "number"], name="round_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.tournament.name}, round {self.number}"


class Table(models.Model):
    """One table of a round: a match of ``deals_per_table`` deals, played by one worker."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="tables")
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="tables")
    number = models.PositiveSmallIntegerField()
    deal_seed = models.BigIntegerField()
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    claimed_by = models.CharField(max_length=255, blank=True)
    claim_token = models.CharField(max_length=64, blank=True)
    # The kernel (its boot id) of the worker that last claimed it: two tables of one duplicate
    # round never play at once on one kernel (docs/sandbox.md, "Host-wide channels").
    host = models.CharField(max_length=64, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Claims that count against TAPIS_TABLE_MAX_ATTEMPTS: those the table's own play ended
    # (an infrastructure fault gives its attempt back); ``claims`` counts every claim.
    attempts = models.PositiveSmallIntegerField(default=0)
    claims = models.PositiveSmallIntegerField(default=0)
    # When its message was last sent; None: to be sent by the next sweep (a send failed, or a
    # retry waits for it).
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True, help_text="The judge's summary of the table.")
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["round", "number"]
        constraints = [
            models.UniqueConstraint(fields=["round", "number"], name="table_unique_number"),
        ]
        indexes = [models.Index(fields=["status", "lease_expires_at"], name="table_lease_idx")]

    def __str__(self) -> str:
        return f"{self.tournament.name}, round {self.round.number}, table {self.number}"


class Seat(models.Model):
    """A seat of a table: an entry, or a house bot (``entry`` empty) that is never ranked."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    entry = models.ForeignKey(
        Entry, on_delete=models.PROTECT, null=True, blank=True, related_name="seats"
    )
    house_bot = models.CharField(
        max_length=32, blank=True, help_text="The built-in bot playing this seat for the house."
    )
    substitute = models.BooleanField(
        default=False, help_text="A house bot played for a withdrawn or disqualified entry."
    )
    score = models.IntegerField(null=True, blank=True)
    total = models.IntegerField(null=True, blank=True)
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    points = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    faults = models.PositiveIntegerField(default=0)
    replaced = models.BooleanField(
        default=False, help_text="The judge handed the seat to a built-in bot."
    )
    replaced_deal = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="The deal (from 0) from which the seat was replaced: it forfeits the rest of "
        "the table (docs/tournaments.md, 'A fault never pays').",
    )
    decisions = models.PositiveIntegerField(default=0)
    mean_time = models.FloatField(null=True, blank=True)
    bot_name = models.CharField(max_length=100, blank=True, help_text="The name the bot gave.")
    log = models.TextField(blank=True, help_text="What the bot wrote to stderr (capped).")

    # The columns that recording a table fills, in the order it writes them.
    RESULT_FIELDS: ClassVar[tuple[str, ...]] = (
        "score",
        "total",
        "place",
        "points",
        "faults",
        "replaced",
        "replaced_deal",
        "decisions",
        "mean_time",
        "bot_name",
        "log",
    )

    class Meta:
        ordering = ["table", "position"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="seat_unique_position"),
        ]

    def __str__(self) -> str:
        return f"seat {self.position + 1} of {self.table}"

    @property
    def is_house(self) -> bool:
        return self.entry_id is None


class Deal(models.Model):
    """One deal played at a table, with everything needed to replay and audit it."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="deals")
    index = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField(null=True, blank=True)
    record = models.JSONField(help_text="How the deal was dealt (seed, hands, stock...).")
    passes = models.JSONField(null=True, blank=True, help_text="Cards passed by each seat.")
    points = models.JSONField(help_text="Points of each seat in this deal.")
    log = models.JSONField(help_text="The deal's replay log entry: actions, times, faults.")
    decisions = models.PositiveIntegerField(default=0)
    faults = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["table", "index"]
        constraints = [
            models.UniqueConstraint(fields=["table", "index"], name="deal_unique_index"),
        ]

    def __str__(self) -> str:
        return f"deal {self.index + 1} of {self.table}"


class DealReplay(models.Model):
    """A deal's replay as the API serves it (JSON text), written once when its table is
    recorded: a recorded deal never changes, so the API sends these bytes as they are."""

    deal = models.OneToOneField(
        Deal, on_delete=models.CASCADE, primary_key=True, related_name="replay"
    )
    document = models.TextField()

    def __str__(self) -> str:
        return f"replay of deal {self.deal_id}"


class Trick(models.Model):
    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="tricks")
    number = models.PositiveSmallIntegerField()
    leader = models.PositiveSmallIntegerField()
    cards = models.JSONField(help_text="Card names in play order, from the leader.")
    winner = models.PositiveSmallIntegerField()
    points = models.IntegerField()

    class Meta:
        ordering = ["deal", "number"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "number"], name="trick_unique_number"),
        ]

    def __str__(self) -> str:
        return f"trick {self.number + 1} of {self.deal}"


class Decision(models.Model):
    """One action of a deal: who acted, what was played, how long it took, any fault."""

    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="decision_set")
    step = models.PositiveSmallIntegerField()
    seat = models.PositiveSmallIntegerField()
    action = models.JSONField()
    seconds = models.FloatField()
    fault = models.CharField(max_length=32, blank=True)

    class Meta:
        ordering = ["deal", "step"]
        constraints = [
            models.UniqueConstraint(fields=["deal", "step"], name="decision_unique_step"),
        ]

    def __str__(self) -> str:
        return f"step {self.step} of {self.deal}"


class Fault(models.Model):
    """A fault of a bot at a table (timeout, crash, malformed, illegal...)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="fault_set")
    seat = models.PositiveSmallIntegerField()
    entry = models.ForeignKey(
        Entry, on_delete=models.SET_NULL, null=True, blank=True, related_name="faults"
    )
    kind = models.CharField(max_length=32, db_index=True)
    deal_index = models.PositiveSmallIntegerField(null=True, blank=True)
    decision = models.PositiveIntegerField(null=True, blank=True)
    step = models.PositiveIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["table", "pk"]

    def __str__(self) -> str:
        return f"{self.kind} at seat {self.seat + 1} of {self.table}"


# ---------------------------------------------------------------------------------------------
# Ratings
# ---------------------------------------------------------------------------------------------


class Rating(models.Model):
    """A bot's OpenSkill Plackett-Luce rating in one game and preset family."""

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="ratings")
    family = models.CharField(max_length=100, db_index=True)
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField(db_index=True)
    tables = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["family", "-ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "family"], name="rating_unique_family"),
        ]

    def __str__(self) -> str:
        return f"{self.bot.name} in {self.family}: {self.ordinal:.2f}"


class RatingHistory(models.Model):
    """A rating after one table."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="history")
    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="rating_changes"
    )
    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="rating_changes")
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField()
    place = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["rating", "pk"]
        verbose_name_plural = "rating history"

    def __str__(self) -> str:
        return f"{self.rating.bot.name}: {self.ordinal:.2f} after {self.table}"


# ---------------------------------------------------------------------------------------------
# Matches: is v2 better than v1?
# ---------------------------------------------------------------------------------------------


class Match(models.Model):
    """A sequential duplicate match between a bot author's ``candidate`` version and a
    ``baseline`` (one of their versions, or a built-in bot): the two play the same seat of the
    same cards at two tables, house bots in the other seats, in batches, until the sequential
    test (SPRT: H0 the candidate's mean score per deal is ``d0`` above the baseline's, H1 it is
    ``d1`` above, error rates ``alpha`` and ``beta``) decides or ``max_deals`` are played.
    ``deals``, ``total`` and ``total_squares`` are the running sums of the paired differences
    (candidate's score minus baseline's, per deal, higher is better)."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DECIDED = "decided", "decided"
        CAPPED = "capped", "capped"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="matches"
    )
    game = models.CharField(max_length=32)
    preset = models.CharField(max_length=64)
    candidate = models.ForeignKey(
        BotVersion, on_delete=models.PROTECT, related_name="matches_as_candidate"
    )
    baseline = models.ForeignKey(
        BotVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="matches_as_baseline",
    )
    baseline_builtin = models.CharField(
        max_length=32, blank=True, help_text="A built-in bot as the baseline (no version)."
    )
    house_bot = models.CharField(max_length=32, default="heuristic")
    d0 = models.FloatField(help_text="H0: the mean difference in points per deal.")
    d1 = models.FloatField(help_text="H1: the mean difference in points per deal (above d0).")
    alpha = models.FloatField(help_text="The chance of accepting H1 when H0 holds.")
    beta = models.FloatField(help_text="The chance of accepting H0 when H1 holds.")
    max_deals = models.PositiveIntegerField(help_text="The cap of paired deals.")
    batch_deals = models.PositiveIntegerField(help_text="Paired deals a batch.")
    seed = models.BigIntegerField(editable=False)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.RUNNING, db_index=True
    )
    deals = models.PositiveIntegerField(default=0)
    total = models.FloatField(default=0.0)
    total_squares = models.FloatField(default=0.0)
    llr = models.FloatField(default=0.0)
    verdict = models.CharField(max_length=16, default="continue")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(baseline__isnull=False) & models.Q(baseline_builtin=""))
                | (models.Q(baseline__isnull=True) & ~models.Q(baseline_builtin="")),
                name="match_one_baseline",
            ),
            models.CheckConstraint(
                condition=models.Q(d1__gt=models.F("d0")), name="match_d1_gt_d0"
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk}: {self.candidate} against {self.baseline_label}"

    @property
    def baseline_label(self) -> str:
        if self.baseline is not None:
            return self.baseline.label
        return f"built-in {self.baseline_builtin}"


class MatchBatch(models.Model):
    """A batch of a match: ``deals`` deals dealt from ``seed``, played twice (the candidate,
    then the baseline, in seat ``seat``), on a worker through the tables' queue; claimed by
    compare-and-set like a table. ``differences``: the paired difference of each deal."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="batches")
    number = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    seat = models.PositiveSmallIntegerField()
    deals = models.PositiveIntegerField()
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    claimed_by = models.CharField(max_length=255, blank=True)
    claim_token = models.CharField(max_length=64, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    differences = models.JSONField(default=list, blank=True)
    faults = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["match", "number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="matchbatch_unique_number"),
        ]

    def __str__(self) -> str:
        return f"batch {self.number} of match {self.match_id}"
