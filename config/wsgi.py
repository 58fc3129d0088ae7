"""WSGI entry point (gunicorn config.wsgi:application)."""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

django_application = get_wsgi_application()

# The replay endpoint's lean path in front of Django (it needs Django set up first).
from api.replays import LeanReplays  # noqa: E402

application = LeanReplays(django_application)
