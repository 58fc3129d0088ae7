"""Workers: the heartbeat each worker records."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db.models import F
from django.utils import timezone

from tournaments.models import (
    WorkerHeartbeat,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


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
