"""Pages of the public site (tournaments/pages/), included at the site's root by config/urls.py.

Every page has a stable address; lists take ``?page=N`` and their filters as query strings.
The deal replay viewer answers ``/deals/<id>/``.
"""

from django.urls import URLPattern, URLResolver, path

from tournaments.pages import accounts, authoring, matches, organising, practice, replay, views

app_name = "tournaments"

urlpatterns: list[URLPattern | URLResolver] = [
    path("favicon.ico", views.favicon, name="favicon"),
    path("tournaments/", views.tournament_list, name="tournament-list"),
    path("tournaments/<int:pk>/", views.tournament_detail, name="tournament-detail"),
    path("tournaments/<int:pk>/live/", views.tournament_live, name="tournament-live"),
    path("tournaments/<int:pk>/audit/", views.tournament_audit, name="tournament-audit"),
    path("tournaments/<int:pk>/rounds/<int:number>/", views.round_detail, name="round-detail"),
    path(
        "tournaments/<int:pk>/crosstable/",
        views.tournament_crosstable,
        name="tournament-crosstable",
    ),
    path("tables/<int:pk>/", views.table_detail, name="table-detail"),
    path("deals/<int:pk>/", replay.deal_replay, name="deal"),
    path("deals/<int:pk>/steps/<int:window>/", replay.deal_steps, name="deal-steps"),
    path("deals/<int:pk>/audit/", views.deal_audit, name="deal-audit"),
    path("bots/<int:pk>/", views.bot_detail, name="bot-detail"),
    path("rankings/", views.rankings, name="rankings"),
    path("docs/", views.docs_index, name="docs"),
    path("docs/<slug:slug>/", views.docs_page, name="docs-page"),
    path("docs/examples/<slug:folder>/", views.docs_example, name="docs-example"),
    path(
        "docs/examples/<slug:folder>/<path:name>",
        views.docs_example_file,
        name="docs-example-file",
    ),
    path("docs/sdk/<str:name>", views.docs_sdk, name="docs-sdk"),
    # Members (tournaments/pages/accounts.py, authoring.py, organising.py; docs/members.md)
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/logout/", accounts.LogoutView.as_view(), name="logout"),
    path("accounts/password/", accounts.PasswordChangeView.as_view(), name="password-change"),
    path("accounts/reset/", accounts.PasswordResetView.as_view(), name="password-reset"),
    path(
        "accounts/reset/sent/",
        accounts.PasswordResetSentView.as_view(),
        name="password-reset-sent",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        accounts.PasswordResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path("account/", accounts.account, name="account"),
    path("account/token/", accounts.token_create, name="token-create"),
    path("account/token/new/", accounts.token_shown, name="token-shown"),
    path("account/token/revoke/", accounts.token_revoke, name="token-revoke"),
    path("account/bots/new/", authoring.bot_new, name="bot-new"),
    path("account/bots/<int:pk>/", authoring.my_bot, name="my-bot"),
    path("account/bots/<int:pk>/v<int:number>/", authoring.my_version, name="my-version"),
    path(
        "account/bots/<int:pk>/v<int:number>/status/",
        authoring.my_version_status,
        name="my-version-status",
    ),
    path("account/bots/<int:pk>/v<int:number>/try/", practice.version_try, name="version-try"),
    path("practice/<int:pk>/", practice.practice_detail, name="practice"),
    path("practice/<int:pk>/live/", practice.practice_live, name="practice-live"),
    path("account/entries/<int:pk>/withdraw/", authoring.entry_withdraw, name="entry-withdraw"),
    path("tournaments/<int:pk>/enter/", authoring.tournament_enter, name="tournament-enter"),
    path("tables/<int:pk>/seats/<int:seat>/log/", authoring.seat_log, name="seat-log"),
    path("matches/", matches.match_list, name="match-list"),
    path("matches/<int:pk>/", matches.match_detail, name="match-detail"),
    path("matches/<int:pk>/live/", matches.match_live, name="match-live"),
    path("organise/new/", organising.tournament_new, name="tournament-new"),
    path("organise/<int:pk>/", organising.organise, name="organise"),
    path("organise/<int:pk>/progress/", organising.organise_progress, name="organise-progress"),
    path("organise/<int:pk>/settings/", organising.organise_settings, name="organise-settings"),
    path(
        "organise/<int:pk>/<str:action>/",
        organising.organise_action,
        name="organise-action",
    ),
    path(
        "organise/<int:pk>/entries/<int:entry>/remove/",
        organising.organise_remove_entry,
        name="organise-remove-entry",
    ),
    path(
        "organise/<int:pk>/tables/<int:table>/rerun/",
        organising.organise_rerun,
        name="organise-rerun",
    ),
]
