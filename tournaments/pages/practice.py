"""Practice runs (a version's "try it"): the form on a ready version's page plays it for a
few deals against built-in bots on a worker; the practice page follows the run live (htmx
polling, stopped once it is over) and then links to the replay of every deal.

The form calls :func:`tournaments.services.practice_create` (the API's service) and shows its
refusal next to the field it names; the pages read through
:func:`tournaments.member_selectors.practice_page`, which asks
:func:`tournaments.visibility.practice_shown` (the author; staff once the run is over).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import HttpResponseStopPolling

from tournaments import member_selectors
from tournaments.errors import NotAllowed
from tournaments.pages.forms import PracticeForm


@login_required
@require_POST
def version_try(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """Start a practice run of one of your versions; refused, the version's page again with
    the refusal next to its field (400)."""
    page = member_selectors.version_page(user=request.user, bot_id=pk, number=number)
    if not page.mine:  # staff see the page, but try their own bots only
        raise NotAllowed("Only the bot's owner tries its versions.")
    form = PracticeForm(request.POST, owner=request.user, version=page.version)
    practice = form.submit()
    if practice is not None:
        return redirect("tournaments:practice", practice.pk)
    context = {
        "page": page,
        "version": page.version,
        "practice_form": form,
        "nav_section": "account",
    }
    return render(request, "members/version.html", context, status=400)


@login_required
@require_safe
def practice_detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = member_selectors.practice_page(user=request.user, practice_id=pk)
    return render(request, "members/practice.html", {"page": page, "nav_section": "account"})


@login_required
@require_safe
def practice_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's state and, once over, its results, for the polling of its page: stops
    polling (286) once the run is over."""
    page = member_selectors.practice_page(user=request.user, practice_id=pk)
    response = render(request, "members/includes/practice_live.html", {"page": page})
    if page.line.over:
        return HttpResponseStopPolling(response.content)
    return response
