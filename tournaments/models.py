"""Models of the tournaments app."""

from __future__ import annotations

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time each Celery worker ran the ``worker_heartbeat`` task.

    Celery beat enqueues that task every minute (``CELERY_BEAT_SCHEDULE``): a worker whose
    ``last_seen`` grows old is not taking tasks from the queue.
    """

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    beats = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["hostname"]

    def __str__(self) -> str:
        return f"{self.hostname} (last seen {self.last_seen:%Y-%m-%d %H:%M:%S %Z})"
