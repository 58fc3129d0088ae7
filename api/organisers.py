"""The organiser right: membership of the ``organisers`` group (made by api/migrations/0003).

An organiser creates tournaments and runs their own (api/permissions.py decides who may do
what; staff run every tournament). ``manage.py organiser USER [--remove]`` and the users'
admin actions call these two services.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group

from api.permissions import ORGANISERS_GROUP

# What the group's members may do in the admin, were they given staff status: tournaments
# only (the pages need none of these: is_organiser checks the group itself).
ORGANISER_PERMISSIONS = (
    "tournaments.add_tournament",
    "tournaments.change_tournament",
    "tournaments.view_tournament",
    "tournaments.view_entry",
    "tournaments.view_table",
)


def organisers_group() -> Group:
    """The group (made by the migration; made again here if an operator deleted it)."""
    group, _ = Group.objects.get_or_create(name=ORGANISERS_GROUP)
    return group


def organiser_grant(*, user: Any) -> bool:
    """Make ``user`` an organiser; False if they already were one."""
    group = organisers_group()
    if group.user_set.filter(pk=user.pk).exists():
        return False
    group.user_set.add(user)
    return True


def organiser_revoke(*, user: Any) -> bool:
    """Take the organiser right away (their tournaments stay theirs); False if they had not."""
    group = organisers_group()
    if not group.user_set.filter(pk=user.pk).exists():
        return False
    group.user_set.remove(user)
    return True
