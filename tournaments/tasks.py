"""Celery tasks of the tournaments app: thin, they call services."""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task

from tournaments.services import worker_heartbeat_record


@shared_task(bind=True, ignore_result=False)
def worker_heartbeat(self: Task) -> dict[str, Any]:
    """Record that the worker running this task is alive (scheduled every minute by beat)."""
    hostname = self.request.hostname or "unknown"
    heartbeat = worker_heartbeat_record(hostname=hostname)
    return {
        "hostname": heartbeat.hostname,
        "last_seen": heartbeat.last_seen.isoformat(),
        "beats": heartbeat.beats,
    }
