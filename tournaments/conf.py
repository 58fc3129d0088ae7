"""Operating settings of the tournaments app, read from Django settings with defaults.

Every name can be set in config/settings.py, or else in the environment (or left to its default
here):

``TAPIS_SANDBOX``
    How workers run uploaded bots: ``"bwrap"`` (the sandbox, the default) or ``"none"`` (no
    isolation at all: only for trusted bots on a development machine).
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
    ``VAR_DIR/bot-cache``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, cast

from django.conf import settings


def _setting(name: str, default: str) -> str:
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name) or default
    return str(value)


def sandbox_mode() -> Literal["bwrap", "none"]:
    mode = _setting("TAPIS_SANDBOX", "bwrap")
    if mode not in ("bwrap", "none"):
        raise ValueError(f"TAPIS_SANDBOX must be 'bwrap' or 'none', not {mode!r}")
    return cast(Literal["bwrap", "none"], mode)


def lease_seconds() -> float:
    return float(_setting("TAPIS_TABLE_LEASE_SECONDS", "60"))


def max_attempts() -> int:
    return int(_setting("TAPIS_TABLE_MAX_ATTEMPTS", "3"))


def pending_requeue_seconds() -> float:
    return float(_setting("TAPIS_PENDING_REQUEUE_SECONDS", "600"))


def bot_cache_dir() -> Path:
    configured = _setting("TAPIS_BOT_CACHE_DIR", "")
    if configured:
        return Path(configured)
    return Path(getattr(settings, "VAR_DIR", "/tmp")) / "bot-cache"
