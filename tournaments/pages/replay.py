"""The deal page: a deal's replay step by step (``/deals/<id>/``), with its duplicate traveller.

The page is whole without JavaScript (the deal as tables); its script (static/replay/) draws the
table from the steps the engine worked out (:mod:`tournaments.replay_steps`)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_safe

from tournaments import page_selectors


# Compressed: a long Dutch round's steps are several hundred kilobytes of repetitive JSON (a
# few tens once compressed). Nothing on the page comes from the request, so compression
# reveals nothing (BREACH needs a secret and reflected input in the same response).
@require_safe
@gzip_page
def deal_replay(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.deal_replay_page(deal_id=pk, user=request.user)
    return render(request, "replay.html", {"page": page, "nav_section": "tournaments"})
