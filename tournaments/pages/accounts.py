"""Accounts on the site: sign up, log in and out, change or reset a password (Django's auth
views, so django-axes limits failed logins as everywhere), and "My account" with the API token
(made and shown once, or revoked), the member's bots, entries and tournaments.

The views only call services (api.accounts) and selectors (tournaments.member_selectors).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from api import accounts
from tournaments import member_selectors
from tournaments.pages.forms import LoginForm, SignupForm

# login() needs the backend when it follows a sign-up (no authenticate() call to name it).
_MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if not accounts.signup_allowed():
        return render(request, "members/signup_closed.html", status=403)
    form = SignupForm(request.POST or None, request=request)
    if request.method == "POST" and form.is_valid() and form.issued is not None:
        login(request, form.issued.user, backend=_MODEL_BACKEND)
        return _show_token_once(request, form.issued.key, welcome=True)
    return render(request, "members/signup.html", {"form": form, "nav_section": "account"})


# A new API token waits for the page that shows it in the cache, for NEW_TOKEN_SECONDS at
# most, under a random handle that the session holds: the token itself is never written to the
# session (its store keeps it until the session expires, weeks later, when that page is not
# opened), and the cache forgets it after a few minutes whatever happens.
_NEW_TOKEN = "tapis_new_token"
NEW_TOKEN_SECONDS = 300


def _new_token_cache_key(handle: str) -> str:
    return f"tapis-new-token:{handle}"


def _show_token_once(request: HttpRequest, key: str, *, welcome: bool = False) -> HttpResponse:
    """POST, redirect, GET: the answer to the POST that made a token is a redirect to
    :func:`token_shown`, which shows it once, within :data:`NEW_TOKEN_SECONDS`. A reload of
    that page, or of the POST's (the browser follows the redirect), neither shows the token
    again nor sends the form again."""
    handle = secrets.token_urlsafe(24)
    cache.set(
        _new_token_cache_key(handle), {"key": key, "welcome": welcome}, timeout=NEW_TOKEN_SECONDS
    )
    request.session[_NEW_TOKEN] = handle
    return redirect("tournaments:token-shown")


@never_cache
@login_required
@require_GET
def token_shown(request: HttpRequest) -> HttpResponse:
    """The API token just made, shown this once and forgotten as it is read (``never_cache``:
    not kept by the browser either); after that, or once it waited more than
    :data:`NEW_TOKEN_SECONDS`, My account. GET only: a HEAD (a link checker, a prefetch) would
    spend it unseen."""
    handle = request.session.pop(_NEW_TOKEN, None)
    held = None
    if isinstance(handle, str):
        held = cache.get(_new_token_cache_key(handle))
        cache.delete(_new_token_cache_key(handle))
    if not isinstance(held, dict) or not isinstance(held.get("key"), str):
        minutes = NEW_TOKEN_SECONDS // 60
        messages.info(
            request,
            f"An API token is shown once, when it is made (for {minutes} minutes): make a new "
            "one if you did not copy it.",
        )
        return redirect("tournaments:account")
    context = {"key": held["key"], "welcome": bool(held.get("welcome")), "nav_section": "account"}
    return render(request, "members/token_shown.html", context)


class LoginView(auth_views.LoginView):
    template_name = "members/login.html"
    authentication_form = LoginForm
    redirect_authenticated_user = True
    extra_context = {"nav_section": "account"}

    def get_context_data(self, **kwargs):  # type: ignore[no-untyped-def]
        context = super().get_context_data(**kwargs)
        context["signup_allowed"] = accounts.signup_allowed()
        context["failure_limit"] = settings.AXES_FAILURE_LIMIT
        return context


class LogoutView(auth_views.LogoutView):
    pass


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "members/password_change.html"
    success_url = reverse_lazy("tournaments:account")
    extra_context = {"nav_section": "account"}

    def form_valid(self, form):  # type: ignore[no-untyped-def]
        messages.success(self.request, "Your password was changed.")
        return super().form_valid(form)


class PasswordResetView(auth_views.PasswordResetView):
    template_name = "members/password_reset.html"
    email_template_name = "members/password_reset_email.txt"
    subject_template_name = "members/password_reset_subject.txt"
    success_url = reverse_lazy("tournaments:password-reset-sent")
    extra_context = {"nav_section": "account"}

    def get_context_data(self, **kwargs):  # type: ignore[no-untyped-def]
        context = super().get_context_data(**kwargs)
        context["reset_enabled"] = settings.TAPIS_PASSWORD_RESET
        return context

    def form_valid(self, form):  # type: ignore[no-untyped-def]
        if not settings.TAPIS_PASSWORD_RESET:
            return self.form_invalid(form)
        return super().form_valid(form)


class PasswordResetSentView(auth_views.PasswordResetDoneView):
    template_name = "members/password_reset_sent.html"
    extra_context = {"nav_section": "account"}


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    template_name = "members/password_reset_confirm.html"
    success_url = reverse_lazy("tournaments:login")
    extra_context = {"nav_section": "account"}

    def form_valid(self, form):  # type: ignore[no-untyped-def]
        messages.success(self.request, "Your password was set: log in with it.")
        return super().form_valid(form)


@login_required
def account(request: HttpRequest) -> HttpResponse:
    page = member_selectors.account_page(user=request.user)
    return render(request, "members/account.html", {"page": page, "nav_section": "account"})


@login_required
@require_POST
def token_create(request: HttpRequest) -> HttpResponse:
    issued = accounts.token_issue(user=request.user)
    return _show_token_once(request, issued.key)


@login_required
@require_POST
def token_revoke(request: HttpRequest) -> HttpResponse:
    if accounts.token_revoke(user=request.user):
        messages.success(request, "Your API tokens were revoked: clients using them are refused.")
    else:
        messages.info(request, "You had no API token.")
    return redirect("tournaments:account")
