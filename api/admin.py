"""The admin of accounts: API tokens (their prefix only) and users (look-alike names refused,
login lock-outs lifted)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from api import accounts
from api.authentication import login_unlock
from api.models import ApiToken
from api.organisers import organiser_grant, organiser_revoke
from tournaments.admin.base import ZONED_FORMFIELDS


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Tokens can be seen (by their prefix) and deleted, never made or read here: the database
    holds only their digest."""

    list_display = ["shown_prefix", "user", "created_at"]
    list_select_related = ["user"]
    search_fields = ["user__username"]
    fields = ["shown_prefix", "user", "created_at"]
    readonly_fields = ["shown_prefix", "user", "created_at"]

    @admin.display(description="token")
    def shown_prefix(self, token: ApiToken) -> str:
        return f"{token.prefix}…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class _NameCheck:
    """``clean_username`` of the user forms: no name that looks like another account's."""

    cleaned_data: dict[str, Any]
    instance: Any

    def clean_username(self) -> str:
        username = str(self.cleaned_data.get("username") or "")
        clean_parent = getattr(super(), "clean_username", None)
        if clean_parent is not None:
            username = clean_parent()
        existing = self.instance if self.instance.pk is not None else None
        try:
            accounts.username_check(username=username, user=existing)
        except ValidationError as exc:
            raise forms.ValidationError(exc.messages, code="username_taken") from None
        return username


class UserCreationForm(_NameCheck, auth_forms.AdminUserCreationForm):
    pass


class UserChangeForm(_NameCheck, auth_forms.UserChangeForm):
    pass


admin.site.unregister(User)


@admin.register(User)
class UserAdmin(auth_admin.UserAdmin):
    form = UserChangeForm
    add_form = UserCreationForm
    formfield_overrides = ZONED_FORMFIELDS  # "Time (UTC):" under last login and date joined
    actions = ["lift_login_lockout", "grant_organiser", "revoke_organiser"]

    @admin.action(description="Make the selected users organisers")
    def grant_organiser(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        names = [user.get_username() for user in queryset if organiser_grant(user=user)]
        self.message_user(
            request,
            f"{len(names)} new organiser(s): {', '.join(names) or 'none'}.",
            messages.SUCCESS,
        )

    @admin.action(description="Take the organiser right from the selected users")
    def revoke_organiser(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        names = [user.get_username() for user in queryset if organiser_revoke(user=user)]
        self.message_user(
            request,
            f"{len(names)} user(s) no longer organisers: {', '.join(names) or 'none'}.",
            messages.SUCCESS,
        )

    @admin.action(description="Lift the login lock-out of the selected users")
    def lift_login_lockout(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        names = [user.get_username() for user in queryset]
        for name in names:
            login_unlock(username=name)
        self.message_user(
            request,
            f"Lifted the login lock-out of {len(names)} user(s): {', '.join(names)}.",
            messages.SUCCESS,
        )
