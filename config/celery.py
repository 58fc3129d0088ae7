"""The Celery application of Tapis.

Configured from the Django settings (every ``CELERY_*`` name in config/settings.py) and
finding ``tasks.py`` in every installed app. Start a worker with::

    celery -A config worker --loglevel INFO
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tapis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
