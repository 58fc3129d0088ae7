"""Pages of the public site (tournaments/pages/), included at the site's root by config/urls.py.

Every page has a stable address; lists take ``?page=N`` and their filters as query strings.
The deal replay viewer answers ``/deals/<id>/``.
"""

from django.urls import URLPattern, URLResolver, path

from tournaments.pages import replay, views

app_name = "tournaments"

urlpatterns: list[URLPattern | URLResolver] = [
    path("tournaments/", views.tournament_list, name="tournament-list"),
    path("tournaments/<int:pk>/", views.tournament_detail, name="tournament-detail"),
    path("tournaments/<int:pk>/live/", views.tournament_live, name="tournament-live"),
    path("tournaments/<int:pk>/audit/", views.tournament_audit, name="tournament-audit"),
    path("tables/<int:pk>/", views.table_detail, name="table-detail"),
    path("deals/<int:pk>/", replay.deal_replay, name="deal"),
    path("deals/<int:pk>/audit/", views.deal_audit, name="deal-audit"),
    path("bots/<int:pk>/", views.bot_detail, name="bot-detail"),
    path("rankings/", views.rankings, name="rankings"),
    path("docs/", views.docs_index, name="docs"),
    path("docs/<slug:slug>/", views.docs_page, name="docs-page"),
]
