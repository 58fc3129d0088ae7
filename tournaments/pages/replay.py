"""The deal page: a deal's replay step by step (``/deals/<id>/``), with its duplicate traveller.

The page is whole without JavaScript (the deal as tables); its script (static/replay/) draws the
table from the steps the engine worked out (:mod:`tournaments.replay_steps`)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_safe

from tournaments import page_selectors


# Compressed: a long Dutch round's steps are several hundred kilobytes of repetitive JSON (a
# few tens once compressed). Compressing a response that holds a secret (a signed-in member's
# CSRF token, in the logout form) and something from the request is what BREACH needs: the
# only things here from the request are the step, the seat's view and the traveller's page
# asked for, each read as a number (they choose the window of steps and the tables shown, and
# the traveller's links keep the first two), and Django's gzip adds random padding against
# BREACH besides.
@require_safe
@gzip_page
def deal_replay(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.deal_replay_page(
        deal_id=pk,
        user=request.user,
        step=request.GET.get("step"),
        traveller_page=request.GET.get("traveller"),
    )
    return render(
        request,
        "replay.html",
        {"page": page, "nav_section": "tournaments", "traveller_query": _moment(request)},
    )


def _moment(request: HttpRequest) -> str:
    """The moment of the replay the address names (``step=17&seat=2``), urlencoded, numbers
    only: the traveller's pages keep it, so that its page 2 reopens the replay where it was
    (the viewer's script updates those links as it moves)."""
    kept = {
        name: value
        for name in ("step", "seat")
        if (value := request.GET.get(name, "")).isascii() and value.isdigit()
    }
    return urlencode(kept)


@require_safe
@gzip_page
def deal_steps(request: HttpRequest, pk: int, window: int) -> HttpResponse:
    """One window of a deal's steps as JSON, for the page's script (a deal of more than
    page_selectors.STEP_WINDOW steps: the longest Dutch rounds)."""
    text = page_selectors.deal_steps_window(deal_id=pk, user=request.user, window=window)
    return HttpResponse(text, content_type="application/json")
