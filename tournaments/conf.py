"""Operating settings of the tournaments app, as config/settings.py reads them from the
environment (README.md and docs/operations.md document each one).

``TAPIS_SANDBOX``
    How workers run uploaded bots: ``"bwrap"`` (the sandbox, the default) or ``"none"`` (no
    isolation at all: only for trusted bots on a development machine, and only when
    ``TAPIS_ALLOW_UNSANDBOXED`` is on too; production refuses it).
``TAPIS_BOT_ZYGOTES``
    Whether workers fork sandboxed Python bots from a zygote of their version
    (judge/zygote.py) rather than starting a sandbox for every table. Default on.
``TAPIS_PIN_TABLES``
    Whether each table runs on a CPU of its own (``run_table(cpu="free")``). Default on.
``TAPIS_TABLE_LEASE_SECONDS``
    How long a claimed table stays claimed without news from its worker. The worker renews
    the lease every third of it while it plays; the sweep re-queues a table whose lease ran out
    (its worker died). Default 60.
``TAPIS_TABLE_MAX_ATTEMPTS``
    Claims of one table before the sweep gives up and marks it failed. Default 3.
``TAPIS_PENDING_REQUEUE_SECONDS``
    A table still pending this long after it was queued is queued again by the sweep (its
    message was lost, e.g. with a broker restart). Default 600.
``TAPIS_BOT_CACHE_DIR``
    Where workers keep bot uploads (by SHA-256) to hand them to the judge. Default
    ``var/bot-cache``.
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


def bot_cache_dir() -> Path:
    return Path(settings.TAPIS_BOT_CACHE_DIR)
