"""Operating settings of the tournaments app, as config/settings.py reads them from the
environment (README.md and docs/operations.md document each one).

``TAPIS_SANDBOX``
    How workers run uploaded bots: ``"bwrap"`` (the sandbox, the default) or ``"none"`` (no
    isolation at all: only for trusted bots on a development machine, and only when
    ``TAPIS_ALLOW_UNSANDBOXED`` is on too; production refuses it).
``TAPIS_BOT_ZYGOTES``
    Whether workers fork sandboxed Python bots from a zygote of their version
    (judge/launchers/zygote.py) rather than starting a sandbox for every table. Default on.
``TAPIS_PIN_TABLES``
    Whether each table runs on a CPU of its own (``run_table(cpu="free")``). Default on.
``TAPIS_TABLE_LEASE_SECONDS``
    How long a claimed table stays claimed without news from its worker. The worker renews
    the lease every third of it while it plays; the sweep re-queues a table whose lease ran out
    (its worker died). Default 60.
``TAPIS_TABLE_MAX_ATTEMPTS``
    Attempts of one table that its own play ended (the worker seen alive after the lease ran
    out: its process died under the table) before the sweep marks it failed. An infrastructure
    fault (a worker killed or cut off, a local disk error) gives its attempt back. Default 3.
``TAPIS_TABLE_MAX_CLAIMS``
    Claims of one table, whatever ended them, before the sweep marks it failed: a table that
    kills every worker it meets ends flagged, not re-run for ever. Default 10.
``TAPIS_BROKER_VISIBILITY_TIMEOUT``
    Seconds Redis keeps a delivered, unacknowledged message before it delivers it again. A
    table's time budget must stay well below it (tournaments with a longer budget are refused:
    :func:`max_table_budget`). Default 43200 (12 h).
``TAPIS_SWEEP_SECONDS``
    The sweep's period: every worker runs it, the first to claim the period does. Default 30.
``TAPIS_WORKER_HEARTBEAT_SECONDS``
    How often each worker records its own heartbeat. Default 10.
``TAPIS_PENDING_REQUEUE_SECONDS``
    A table still pending this long after it was queued is queued again by the sweep (its
    message was lost, e.g. with a broker restart). Default 600.
``TAPIS_VALIDATION_LEASE_SECONDS``
    A version still validating this long after a worker took it lost that worker (a build
    and a validation table take a few minutes at most): the sweep sends it again, and rejects
    it after ``TAPIS_TABLE_MAX_ATTEMPTS`` workers took it without an answer. Default 900.
``TAPIS_BOT_CACHE_DIR``
    Where workers keep bot uploads (by SHA-256) to hand them to the judge. Default
    ``var/bot-cache``.
``TAPIS_MATCH_BATCHES``
    The most batches of all matches (judge matches between two versions) in flight at once,
    so matches never starve tournament tables. Default 1.
``TAPIS_PRACTICE_ACTIVE``
    Practice runs ("try it") an author may have waiting or playing. Default 2.
``TAPIS_PRACTICE_PER_HOUR``
    Practice runs an author may start in an hour. Default 20.
``TAPIS_PRACTICE_IN_FLIGHT``
    Practice tables of all authors in flight at once. Default 2.
``TAPIS_VALIDATIONS_IN_FLIGHT``
    Validations of new versions (all authors) sent to the workers or running at once, taken in
    turns by author: a tournament's table waits behind at most this many. Default 2.
``TAPIS_UPLOADS_PER_HOUR``
    Versions an author may upload in an hour. Default 20.
``TAPIS_UPLOAD_BYTES``
    Bytes an author's uploads and their stored builds may take in all. Default 268435456
    (256 MiB).
``TAPIS_PRACTICE_BANK_SECONDS``
    A practice table's time bank per seat, so a slow bot times out in its try as it would in
    a tournament. Default 2.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from django.conf import settings

from judge.sandbox import require_sandbox

logger = logging.getLogger(__name__)


def sandbox_mode() -> Literal["bwrap", "none"]:
    """The sandbox mode for uploaded bots; "none" only when explicitly allowed, and loudly."""
    mode = settings.TAPIS_SANDBOX
    require_sandbox(mode, allow_unsandboxed=settings.TAPIS_ALLOW_UNSANDBOXED)
    if mode == "none":
        logger.warning("TAPIS_SANDBOX=none: uploaded bots run WITHOUT ANY ISOLATION")
        return "none"
    return "bwrap"


def bot_zygotes() -> bool:
    return bool(settings.TAPIS_BOT_ZYGOTES)


def pin_tables() -> bool:
    return bool(settings.TAPIS_PIN_TABLES)


def lease_seconds() -> float:
    return float(settings.TAPIS_TABLE_LEASE_SECONDS)


def max_attempts() -> int:
    return int(settings.TAPIS_TABLE_MAX_ATTEMPTS)


def pending_requeue_seconds() -> float:
    return float(settings.TAPIS_PENDING_REQUEUE_SECONDS)


def validation_lease_seconds() -> float:
    return float(settings.TAPIS_VALIDATION_LEASE_SECONDS)


def bot_cache_dir() -> Path:
    return Path(settings.TAPIS_BOT_CACHE_DIR)


def max_claims() -> int:
    return int(settings.TAPIS_TABLE_MAX_CLAIMS)


def broker_visibility_timeout() -> float:
    return float(settings.TAPIS_BROKER_VISIBILITY_TIMEOUT)


# Between a table's hard time limit (budget + 120 s) and the broker's redelivery: the sweep's
# period and a margin, so that a message is never delivered again while its table may play.
BUDGET_MARGIN_SECONDS = 600.0


def max_table_budget() -> float:
    """The longest time budget a table may have: below the broker's visibility timeout, so
    that Redis never delivers a table's message again while the table may still be played."""
    return broker_visibility_timeout() - BUDGET_MARGIN_SECONDS


def sweep_seconds() -> float:
    return float(settings.TAPIS_SWEEP_SECONDS)


def heartbeat_seconds() -> float:
    return float(settings.TAPIS_WORKER_HEARTBEAT_SECONDS)


def worker_sweeps() -> bool:
    """Whether a worker's timer runs the sweep (when it is due) beside its heartbeat."""
    return bool(settings.TAPIS_WORKER_SWEEP)


def batches_in_flight_cap() -> int:
    return max(1, int(settings.TAPIS_MATCH_BATCHES))


def practice_active_cap() -> int:
    return max(1, int(settings.TAPIS_PRACTICE_ACTIVE))


def practice_hourly_cap() -> int:
    return max(1, int(settings.TAPIS_PRACTICE_PER_HOUR))


def practice_in_flight_cap() -> int:
    return max(1, int(settings.TAPIS_PRACTICE_IN_FLIGHT))


def practice_bank_seconds() -> float:
    return max(0.0, float(settings.TAPIS_PRACTICE_BANK_SECONDS))


def validations_in_flight_cap() -> int:
    return max(1, int(settings.TAPIS_VALIDATIONS_IN_FLIGHT))


def uploads_hourly_cap() -> int:
    return max(1, int(settings.TAPIS_UPLOADS_PER_HOUR))


def upload_bytes_cap() -> int:
    return max(1, int(settings.TAPIS_UPLOAD_BYTES))
