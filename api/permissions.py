"""Who may do what through the API.

* Anyone reads public tournaments (every status but draft), their entries, rounds, tables and
  standings, the rankings, the games, bots' public profiles, and the replays and logs of
  finished tables. What is still hidden (a table being played, a seed before the end) is
  hidden from everyone, staff included: the views raise :class:`~api.exceptions.Hidden`.
* Only a bot's owner and staff see its versions, validation reports and code; only the owner
  uploads versions and enters them in tournaments.
* Only organisers create tournaments (staff, members of the ``organisers`` group, or users
  with the ``tournaments.add_tournament`` permission); only the tournament's own organiser and
  staff change, open, start or cancel it, and see it while it is a draft.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import Q
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from tournaments import visibility
from tournaments.models import Bot, Tournament

ORGANISERS_GROUP = "organisers"


def is_organiser(user: Any) -> bool:
    """Whether ``user`` may create tournaments."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff or user.has_perm("tournaments.add_tournament"):
        return True
    return bool(user.groups.filter(name=ORGANISERS_GROUP).exists())


def runs_tournament(user: Any, tournament: Tournament) -> bool:
    """Whether ``user`` may change and run ``tournament``: its organiser, or staff."""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or tournament.organiser_id == user.pk)


def owns_bot(user: Any, bot: Bot) -> bool:
    return bool(getattr(user, "is_authenticated", False) and bot.owner_id == user.pk)


def tournament_visibility(user: Any | AnonymousUser) -> Q:
    """The tournaments the tournament endpoints show ``user``: every one but the drafts of
    other organisers, and no practice run (its author reads it through its version's ``try``
    endpoint and its table's and deals' endpoints):
    :func:`tournaments.visibility.tournaments_listed_q` decides."""
    return visibility.tournaments_listed_q(user=user)


class IsOrganiser(BasePermission):
    """Writes need an organiser; anyone reads."""

    message = "Only organisers create tournaments."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.method in SAFE_METHODS or is_organiser(request.user)


class RunsTournament(BasePermission):
    """Writes on a tournament need its organiser (or staff); anyone reads."""

    message = "Only the tournament's organiser or staff may do this."

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        return request.method in SAFE_METHODS or runs_tournament(request.user, obj)


class OwnerOrStaffReads(BasePermission):
    """Only the bot's owner and staff read this (versions, reports, code)."""

    message = "Only the bot's owner or staff may see this."

    def has_object_permission(self, request: Request, view: APIView, obj: Any) -> bool:
        user = request.user
        if request.method in SAFE_METHODS:
            return owns_bot(user, obj) or bool(getattr(user, "is_staff", False))
        return owns_bot(user, obj)
