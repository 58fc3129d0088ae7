"""URLs of the REST API, mounted at /api/v1/ (see docs/api.md and /api/v1/docs/)."""

from django.urls import URLPattern, URLResolver, path, re_path

from api.docs import DocsView, SchemaView
from api.views.accounts import MeView, SignupView, TokenView
from api.views.base import NotFoundView
from api.views.bots import (
    BotDetail,
    BotList,
    BotVersionCode,
    BotVersionDetail,
    BotVersionList,
    PracticeDetail,
    VersionTry,
)
from api.views.deals import DealAuditView, DealReplay
from api.views.games import GameDetail, GameList
from api.views.matches import MatchCancel, MatchDetail, MatchList
from api.views.ratings import BotRatingHistory, RankingList
from api.views.statistics import Crosstable, Resolution
from api.views.tables import SeatLogView, TableDetail, TableLog
from api.views.tournaments import (
    EntryList,
    ProgressView,
    RoundList,
    Standings,
    TableList,
    TournamentCancel,
    TournamentDetail,
    TournamentList,
    TournamentOpen,
    TournamentStart,
)

app_name = "api"

urlpatterns: list[URLPattern | URLResolver] = [
    # First: the most requested path (a URL is matched against the patterns in order).
    path("deals/<int:pk>/", DealReplay.as_view(), name="deal-replay"),
    path("schema/", SchemaView.as_view(), name="schema"),
    path("docs/", DocsView.as_view(), name="docs"),
    # Accounts
    path("auth/token/", TokenView.as_view(), name="token"),
    path("auth/signup/", SignupView.as_view(), name="signup"),
    path("auth/me/", MeView.as_view(), name="me"),
    # Games
    path("games/", GameList.as_view(), name="game-list"),
    path("games/<str:name>/", GameDetail.as_view(), name="game-detail"),
    # Bots
    path("bots/", BotList.as_view(), name="bot-list"),
    path("bots/<int:pk>/", BotDetail.as_view(), name="bot-detail"),
    path("bots/<int:pk>/versions/", BotVersionList.as_view(), name="version-list"),
    path(
        "bots/<int:pk>/versions/<int:number>/",
        BotVersionDetail.as_view(),
        name="version-detail",
    ),
    path(
        "bots/<int:pk>/versions/<int:number>/code/",
        BotVersionCode.as_view(),
        name="version-code",
    ),
    path(
        "bots/<int:pk>/versions/<int:number>/try/",
        VersionTry.as_view(),
        name="version-try",
    ),
    path("practice/<int:pk>/", PracticeDetail.as_view(), name="practice-detail"),
    path("bots/<int:pk>/ratings/", BotRatingHistory.as_view(), name="bot-ratings"),
    # Tournaments
    path("tournaments/", TournamentList.as_view(), name="tournament-list"),
    path("tournaments/<int:pk>/", TournamentDetail.as_view(), name="tournament-detail"),
    path("tournaments/<int:pk>/open/", TournamentOpen.as_view(), name="tournament-open"),
    path("tournaments/<int:pk>/start/", TournamentStart.as_view(), name="tournament-start"),
    path("tournaments/<int:pk>/cancel/", TournamentCancel.as_view(), name="tournament-cancel"),
    path("tournaments/<int:pk>/entries/", EntryList.as_view(), name="entry-list"),
    path("tournaments/<int:pk>/standings/", Standings.as_view(), name="standings"),
    path("tournaments/<int:pk>/progress/", ProgressView.as_view(), name="progress"),
    path(
        "tournaments/<int:pk>/crosstable/",
        Crosstable.as_view(),
        name="crosstable",
    ),
    path("resolution/", Resolution.as_view(), name="resolution"),
    path("matches/", MatchList.as_view(), name="match-list"),
    path("matches/<int:pk>/", MatchDetail.as_view(), name="match-detail"),
    path("matches/<int:pk>/cancel/", MatchCancel.as_view(), name="match-cancel"),
    path("tournaments/<int:pk>/rounds/", RoundList.as_view(), name="round-list"),
    path("tournaments/<int:pk>/tables/", TableList.as_view(), name="table-list"),
    # Tables and deals
    path("tables/<int:pk>/", TableDetail.as_view(), name="table-detail"),
    path("tables/<int:pk>/log/", TableLog.as_view(), name="table-log"),
    path("tables/<int:pk>/seats/<int:seat>/log/", SeatLogView.as_view(), name="seat-log"),
    path("deals/<int:pk>/audit/", DealAuditView.as_view(), name="deal-audit"),
    # Rankings
    path("rankings/", RankingList.as_view(), name="ranking-list"),
    # Anything else under /api/v1/: a JSON 404.
    re_path(r"^[\s\S]*$", NotFoundView.as_view(), name="not-found"),
]
