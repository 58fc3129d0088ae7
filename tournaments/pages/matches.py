"""Pages of matches ("is v2 better than v1?"): a bot author's matches with a form to start one,
and a match's page whose progress (deals, the running estimate and interval, the LLR between
its bounds, the verdict) follows the workers live (htmx polling, stopped once the match ends).

The form calls :func:`tournaments.services.match_create` (the API's service) and shows its
refusal next to the field it names; the pages read through
:func:`tournaments.selectors.match_list` (a member sees their own matches, staff every one).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_safe
from django_htmx.http import HttpResponseStopPolling

import games
from judge import bots as builtin_bots
from tournaments import selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import BotVersion, Match


def _builtin_names() -> list[str]:
    names: list[str] = []
    for game in games.game_names():
        names += [n for n in builtin_bots.builtin_names(game) if n not in names]
    return names


class VersionChoiceField(forms.ModelChoiceField):  # type: ignore[type-arg]
    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.label} ({obj.bot.game})"


class MatchForm(forms.Form):
    candidate = VersionChoiceField(
        queryset=BotVersion.objects.none(), help_text="Your new version (v2)."
    )
    baseline = forms.ChoiceField(
        help_text="What it must beat: another version of yours (v1) or a built-in bot."
    )
    d1 = forms.FloatField(
        required=False,
        label="Gain to detect (points per deal)",
        help_text="H1 of the test; empty: a fifth of the preset's measured spread.",
    )
    max_deals = forms.IntegerField(
        required=False,
        label="Cap of deals",
        help_text="Empty: four times the deals the test takes on average.",
    )

    def __init__(self, *args: Any, owner: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        versions = (
            BotVersion.objects.filter(bot__owner=owner, status=BotVersion.Status.READY)
            .select_related("bot")
            .defer("content")
            .order_by("bot__name", "-number")
        )
        candidate = self.fields["candidate"]
        assert isinstance(candidate, forms.ModelChoiceField)
        candidate.queryset = versions
        baseline = self.fields["baseline"]
        assert isinstance(baseline, forms.ChoiceField)
        baseline.choices = [
            ("Your versions", [(f"v{v.pk}", f"{v.label} ({v.bot.game})") for v in versions]),
            ("Built-in bots", [(f"b{name}", f"built-in {name}") for name in _builtin_names()]),
        ]
        self.match: Match | None = None

    def submit(self) -> Match | None:
        """Start the match through the service; its refusal goes next to its field."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        choice = str(data["baseline"])
        kwargs: dict[str, Any] = {}
        if choice.startswith("v"):
            kwargs["baseline"] = BotVersion.objects.select_related("bot").get(pk=int(choice[1:]))
        else:
            kwargs["baseline_builtin"] = choice[1:]
        for name in ("d1", "max_deals"):
            if data.get(name) is not None:
                kwargs[name] = data[name]
        try:
            self.match = services.match_create(
                owner=self.owner, candidate=data["candidate"], **kwargs
            )
        except ApplicationError as error:
            field = str(error.extra.get("field", ""))
            field = "baseline" if field == "baseline_builtin" else field
            self.add_error(field if field in self.fields else None, error.message)
            return None
        return self.match


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # login_required
    return user


@login_required
@require_http_methods(["GET", "POST"])
def match_list(request: HttpRequest) -> HttpResponse:
    """Your matches, and the form to start one."""
    form = MatchForm(request.POST or None, owner=_user(request))
    status = 200
    if request.method == "POST":
        match = form.submit()
        if match is not None:
            return redirect("tournaments:match-detail", match.pk)
        status = 400
    matches = [
        selectors.match_progress(match=m)
        for m in selectors.match_list(user=request.user).filter(owner=_user(request))[:50]
    ]
    return render(
        request,
        "pages/match_list.html",
        {"form": form, "matches": matches, "nav_section": "account"},
        status=status,
    )


def _progress(request: HttpRequest, pk: int) -> selectors.MatchProgress:
    match = get_object_or_404(selectors.match_list(user=request.user), pk=pk)
    return selectors.match_progress(match=match)


@login_required
@require_safe
def match_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return render(
        request,
        "pages/match_detail.html",
        {"progress": _progress(request, pk), "nav_section": "account"},
    )


@login_required
@require_safe
def match_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The match's progress, for the polling of its page: stops polling (286) once it ended."""
    progress = _progress(request, pk)
    response = render(request, "pages/match_progress.html", {"progress": progress})
    if progress.match.status != Match.Status.RUNNING:
        return HttpResponseStopPolling(response.content)
    return response
