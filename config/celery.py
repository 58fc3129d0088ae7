"""The Celery application of Tapis.

Configured from the Django settings (every ``CELERY_*`` name in config/settings.py) and
finding ``tasks.py`` in every installed app. Start a worker with::

    celery -A config worker --loglevel INFO

Housekeeping tasks (the sweep, the heartbeat) go to a queue of their own,
``<CELERY_TASK_DEFAULT_QUEUE>.housekeeping``, which every worker consumes besides the tables'
(tournaments.worker_process), so that a backlog of tables never delays them.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tapis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any) -> Any:
    """Housekeeping tasks to their own queue (read when sent: tests change the default)."""
    from tournaments import queue

    if name in queue.HOUSEKEEPING_TASKS:
        return {"queue": queue.housekeeping_queue()}
    return None


app.conf.task_routes = (route_task,)

# The worker's own timer (heartbeat, sweep), temporary folders and out-of-rotation.
import tournaments.worker_process  # noqa: E402, F401
