"""Pages of bot authors: create a bot, upload versions and watch them validated, enter a ready
version in an open tournament or withdraw it before the start, and read the bot's own log at
each table it played.

The views call services (tournaments.services) through the forms of tournaments/pages/forms.py
and read through tournaments.member_selectors, which decides (with tournaments.visibility) what
a member may see.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import HttpResponseStopPolling

from tournaments import member_selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import BotVersion
from tournaments.pages.forms import BotForm, EntryForm, PracticeForm, VersionForm


@login_required
@require_http_methods(["GET", "POST"])
def bot_new(request: HttpRequest) -> HttpResponse:
    form = BotForm(request.POST or None, owner=request.user)
    if request.method == "POST":
        bot = form.submit()
        if bot is not None:
            messages.success(request, f"{bot.name} is created: upload its first version.")
            return redirect("tournaments:my-bot", bot.pk)
    return render(request, "members/bot_new.html", {"form": form, "nav_section": "account"})


@login_required
@require_http_methods(["GET", "POST"])
def my_bot(request: HttpRequest, pk: int) -> HttpResponse:
    """A bot as its owner sees it; POST uploads a version (the owner only, as in the API)."""
    page = member_selectors.bot_page(user=request.user, bot_id=pk)
    form = VersionForm(request.POST or None, request.FILES or None, bot=page.bot)
    status = 200
    if request.method == "POST":
        if not page.mine:
            raise Http404("only the bot's owner uploads versions")
        version = form.submit()
        if version is not None:
            messages.success(request, f"{version.label} is uploaded and queued for validation.")
            return redirect("tournaments:my-version", pk, version.number)
        status = 400
    return render(
        request,
        "members/bot.html",
        {"page": page, "form": form, "nav_section": "account"},
        status=status,
    )


@login_required
@require_safe
def my_version(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """A version with its validation, and for its owner the "try it" form and its practice
    runs (tournaments/pages/practice.py)."""
    page = member_selectors.version_page(user=request.user, bot_id=pk, number=number)
    context = {
        "page": page,
        "version": page.version,
        "practice_form": PracticeForm(owner=request.user, version=page.version),
        "nav_section": "account",
    }
    return render(request, "members/version.html", context)


@login_required
@require_safe
def my_version_status(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    """The version's status and report, for the polling of its page (htmx): stops polling
    (286) once validation is over, with the "try it" section swapped in."""
    page = member_selectors.version_page(user=request.user, bot_id=pk, number=number)
    version = page.version
    context = {
        "page": page,
        "version": version,
        "practice_form": PracticeForm(owner=request.user, version=version),
    }
    response = render(request, "members/includes/version_status_live.html", context)
    if version.status in (BotVersion.Status.READY, BotVersion.Status.REJECTED):
        return HttpResponseStopPolling(response.content)
    return response


@login_required
@require_http_methods(["GET", "POST"])
def tournament_enter(request: HttpRequest, pk: int) -> HttpResponse:
    tournament = member_selectors.open_tournament(tournament_id=pk)
    form = EntryForm(request.POST or None, user=request.user, tournament=tournament)
    if request.method == "POST":
        entry = form.submit()
        if entry is not None:
            messages.success(request, f"{entry.version.label} is entered in {tournament.name}.")
            return redirect("tournaments:tournament-detail", tournament.pk)
    enter = member_selectors.entry_offer(user=request.user, tournament=tournament)
    return render(
        request,
        "members/enter.html",
        {"tournament": tournament, "enter": enter, "form": form, "nav_section": "account"},
    )


@login_required
@require_POST
def entry_withdraw(request: HttpRequest, pk: int) -> HttpResponse:
    entry = member_selectors.own_entry(user=request.user, entry_id=pk)
    try:
        services.entry_withdraw(entry=entry, reason="withdrawn by its author")
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        name = entry.tournament.name
        messages.success(request, f"{entry.version.label} is withdrawn from {name}.")
    return redirect("tournaments:account")


@require_safe
def seat_log(request: HttpRequest, pk: int, seat: int) -> HttpResponse:
    log = member_selectors.seat_log(user=request.user, table_id=pk, position=seat)
    return render(request, "members/seat_log.html", {"log": log, "nav_section": "tournaments"})
