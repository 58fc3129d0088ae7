"""Writes of the tournaments app: keyword-only functions named ``<entity>_<action>``."""

from __future__ import annotations

from django.db.models import F
from django.utils import timezone

from tournaments.models import WorkerHeartbeat


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
