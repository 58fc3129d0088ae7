"""URLs of the REST API, mounted at /api/v1/ (see docs/api.md and /api/v1/docs/)."""

from django.urls import URLPattern, URLResolver, path, re_path

from api import statistics_views, views
from api.docs import DocsView, SchemaView

app_name = "api"

urlpatterns: list[URLPattern | URLResolver] = [
    # First: the most requested path (a URL is matched against the patterns in order).
    path("deals/<int:pk>/", views.DealReplay.as_view(), name="deal-replay"),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("docs/", DocsView.as_view(), name="docs"),
    # Accounts
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("auth/signup/", views.SignupView.as_view(), name="signup"),
    path("auth/me/", views.MeView.as_view(), name="me"),
    # Games
    path("games/", views.GameList.as_view(), name="game-list"),
    path("games/<str:name>/", views.GameDetail.as_view(), name="game-detail"),
    # Bots
    path("bots/", views.BotList.as_view(), name="bot-list"),
    path("bots/<int:pk>/", views.BotDetail.as_view(), name="bot-detail"),
    path("bots/<int:pk>/versions/", views.BotVersionList.as_view(), name="version-list"),
    path(
        "bots/<int:pk>/versions/<int:number>/",
        views.BotVersionDetail.as_view(),
        name="version-detail",
    ),
    path(
        "bots/<int:pk>/versions/<int:number>/code/",
        views.BotVersionCode.as_view(),
        name="version-code",
    ),
    path(
        "bots/<int:pk>/versions/<int:number>/try/",
        views.VersionTry.as_view(),
        name="version-try",
    ),
    path("practice/<int:pk>/", views.PracticeDetail.as_view(), name="practice-detail"),
    path("bots/<int:pk>/ratings/", views.BotRatingHistory.as_view(), name="bot-ratings"),
    # Tournaments
    path("tournaments/", views.TournamentList.as_view(), name="tournament-list"),
    path("tournaments/<int:pk>/", views.TournamentDetail.as_view(), name="tournament-detail"),
    path("tournaments/<int:pk>/open/", views.TournamentOpen.as_view(), name="tournament-open"),
    path("tournaments/<int:pk>/start/", views.TournamentStart.as_view(), name="tournament-start"),
    path(
        "tournaments/<int:pk>/cancel/", views.TournamentCancel.as_view(), name="tournament-cancel"
    ),
    path("tournaments/<int:pk>/entries/", views.EntryList.as_view(), name="entry-list"),
    path("tournaments/<int:pk>/standings/", views.Standings.as_view(), name="standings"),
    path("tournaments/<int:pk>/progress/", views.ProgressView.as_view(), name="progress"),
    path(
        "tournaments/<int:pk>/crosstable/",
        statistics_views.Crosstable.as_view(),
        name="crosstable",
    ),
    path("resolution/", statistics_views.Resolution.as_view(), name="resolution"),
    path("matches/", statistics_views.MatchList.as_view(), name="match-list"),
    path("matches/<int:pk>/", statistics_views.MatchDetail.as_view(), name="match-detail"),
    path("matches/<int:pk>/cancel/", statistics_views.MatchCancel.as_view(), name="match-cancel"),
    path("tournaments/<int:pk>/rounds/", views.RoundList.as_view(), name="round-list"),
    path("tournaments/<int:pk>/tables/", views.TableList.as_view(), name="table-list"),
    # Tables and deals
    path("tables/<int:pk>/", views.TableDetail.as_view(), name="table-detail"),
    path("tables/<int:pk>/log/", views.TableLog.as_view(), name="table-log"),
    path("tables/<int:pk>/seats/<int:seat>/log/", views.SeatLogView.as_view(), name="seat-log"),
    path("deals/<int:pk>/audit/", views.DealAuditView.as_view(), name="deal-audit"),
    # Rankings
    path("rankings/", views.RankingList.as_view(), name="ranking-list"),
    # Anything else under /api/v1/: a JSON 404.
    re_path(r"^[\s\S]*$", views.NotFoundView.as_view(), name="not-found"),
]
