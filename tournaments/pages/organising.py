"""Pages of organisers: create a tournament from the engine's declared options, change its
settings on the same form until it starts, then run it from its organiser page (open,
entries, remove an entry, start, cancel, progress, re-run a failed table). For organisers
(api.permissions.is_organiser) and, for a tournament, its own organiser and staff
(api.permissions.runs_tournament, read in tournaments.member_selectors).

Every action is one service call; a refusal (a tournament already started, say) comes back as
a message in the service's words. Sent by htmx (the page's buttons, when JavaScript runs), an
action is answered with the page's body as it is now and its message for the live region;
sent as a plain form, with a redirect to the page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import HttpResponseStopPolling, reswap, retarget

from tournaments import member_selectors, services
from tournaments.errors import ApplicationError, NotAllowed
from tournaments.pages.forms import RemoveEntryForm, TournamentForm, TournamentSettingsForm


def _organiser(request: HttpRequest) -> None:
    if not member_selectors.may_organise(user=request.user):
        raise NotAllowed("Creating tournaments needs the organiser right: ask the operators.")


@login_required
@require_http_methods(["GET", "POST"])
def tournament_new(request: HttpRequest) -> HttpResponse:
    """First the game (``?game=``), then the form of that game's presets and options."""
    _organiser(request)
    catalogue = member_selectors.game_catalogue()
    name = request.POST.get("game") or request.GET.get("game")
    game = next((g for g in catalogue if g["name"] == name), None)
    if game is None:
        return render(
            request,
            "members/tournament_game.html",
            {"games": catalogue, "nav_section": "account"},
        )
    form = TournamentForm(request.POST or None, organiser=request.user, game=game)
    status = 200
    if request.method == "POST":
        tournament = form.submit()
        if tournament is not None:
            messages.success(request, f"{tournament.name} is created as a draft.")
            return redirect("tournaments:organise", tournament.pk)
        status = 400
    return render(
        request,
        "members/tournament_new.html",
        {"form": form, "game": game, "nav_section": "account"},
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def organise_settings(request: HttpRequest, pk: int) -> HttpResponse:
    """Change the settings of a tournament not yet started, on the creation's form; once it
    has started, the page says why they can no longer change (409)."""
    tournament = member_selectors.run_tournament(user=request.user, tournament_id=pk)
    game = member_selectors.tournament_game(tournament=tournament)
    form = TournamentSettingsForm(request.POST or None, tournament=tournament, game=game)
    closed = form.closed()
    status = 409 if closed else 200
    if request.method == "POST" and not closed:
        if form.submit() is not None:
            messages.success(request, "The settings are saved.")
            return redirect("tournaments:organise", pk)
        status = 400
    return render(
        request,
        "members/tournament_settings.html",
        {
            "form": form,
            "game": game,
            "tournament": tournament,
            "closed": closed,
            "nav_section": "account",
        },
        status=status,
    )


@login_required
@require_safe
def organise(request: HttpRequest, pk: int) -> HttpResponse:
    page = member_selectors.organiser_page(user=request.user, tournament_id=pk)
    return render(
        request,
        "members/organise.html",
        {"page": page, "remove_form": RemoveEntryForm(), "nav_section": "account"},
    )


@login_required
@require_safe
def organise_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress and failed tables, for the polling of the organiser page. Once the
    tournament is over: 286 (stop polling) with the page's whole body instead (retargeted),
    whose buttons and entries' forms are then gone."""
    page = member_selectors.organiser_page(user=request.user, tournament_id=pk)
    if not page.over:
        return render(request, "members/includes/organise_progress.html", {"page": page})
    body = render(
        request,
        "members/includes/organise_body.html",
        {"page": page, "remove_form": RemoveEntryForm()},
    )
    return reswap(retarget(HttpResponseStopPolling(body.content), "#organise-body"), "innerHTML")


def _answer(request: HttpRequest, pk: int) -> HttpResponse:
    """After an action (its message added): to htmx, the organiser page's body as it is now
    with the message for the live region; else a redirect to the page (post, redirect, get)."""
    if not request.htmx:  # type: ignore[attr-defined]
        return redirect("tournaments:organise", pk)
    page = member_selectors.organiser_page(user=request.user, tournament_id=pk)
    return render(
        request,
        "members/includes/organise_body.html",
        {"page": page, "remove_form": RemoveEntryForm(), "oob": True},
    )


_ACTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "open": (services.tournament_open, "Registration is open."),
    "start": (services.tournament_start, "The tournament is started: round 1 is seated."),
    "cancel": (services.tournament_cancel, "The tournament is cancelled."),
}


@login_required
@require_POST
def organise_action(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    if action not in _ACTIONS:
        raise Http404("no such action")
    tournament = member_selectors.run_tournament(user=request.user, tournament_id=pk)
    service, done = _ACTIONS[action]
    try:
        service(tournament=tournament)
    except ApplicationError as error:
        messages.error(request, f"Not done: {error.message}.")
    else:
        messages.success(request, done)
    return _answer(request, pk)


@login_required
@require_POST
def organise_remove_entry(request: HttpRequest, pk: int, entry: int) -> HttpResponse:
    tournament = member_selectors.run_tournament(user=request.user, tournament_id=pk)
    found = member_selectors.run_entry(user=request.user, tournament=tournament, entry_id=entry)
    form = RemoveEntryForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose withdraw or disqualify.")
        return _answer(request, pk)
    reason = form.cleaned_data["reason"]
    try:
        if form.cleaned_data["how"] == "disqualify":
            services.entry_disqualify(entry=found, reason=reason)
        else:
            services.entry_withdraw(entry=found, reason=reason)
    except ApplicationError as error:
        messages.error(request, f"Not done: {error.message}.")
    else:
        messages.success(request, f"{found.version.label}: {form.cleaned_data['how']} done.")
    return _answer(request, pk)


@login_required
@require_POST
def organise_rerun(request: HttpRequest, pk: int, table: int) -> HttpResponse:
    tournament = member_selectors.run_tournament(user=request.user, tournament_id=pk)
    found = member_selectors.run_table(tournament=tournament, table_id=table)
    try:
        services.table_rerun(table=found)
    except ApplicationError as error:
        messages.error(request, f"Not done: {error.message}.")
    else:
        where = f"Table {found.number} of round {found.round.number}"
        messages.success(request, f"{where} is queued again.")
    return _answer(request, pk)
