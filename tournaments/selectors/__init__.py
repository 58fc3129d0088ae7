"""Reads of the tournaments app: keyword-only functions that return rows or plain values, one
module per entity, their public names gathered here (``from tournaments import selectors``).

- :mod:`~tournaments.selectors.tournaments`: lists, entries, rounds and tables, progress,
  outcomes and standings;
- :mod:`~tournaments.selectors.tables`: a table, its seats and log, a deal;
- :mod:`~tournaments.selectors.bots`: bots, versions and ratings;
- :mod:`~tournaments.selectors.replays`: the stored replays of recorded deals;
- :mod:`~tournaments.selectors.statistics`: standings with confidence, the crosstable, what a
  tournament's settings resolve.

Views, serializers, the admin and services read through these; none of them writes. What may
be shown to whom is decided by :mod:`tournaments.visibility`, which these ask.
"""

from tournaments.selectors.bots import (
    bot_list,
    bot_rating_history,
    bot_version_content,
    bot_versions,
    rating_leaderboard,
    ratings_with_replaced,
)
from tournaments.selectors.replays import (
    StoredReplay,
    as_jsonb,
    deal_replay_document,
    deal_replay_documents,
    deal_replay_stored,
    replays_to_store,
    table_replay_seats,
)
from tournaments.selectors.statistics import (
    MatchProgress,
    ResolutionReport,
    SpreadSource,
    TournamentFigures,
    TournamentSpread,
    TournamentStatistics,
    match_list,
    match_progress,
    preset_spread_source,
    tournament_figures,
    tournament_resolution,
    tournament_results,
    tournament_spread,
    tournament_statistics,
)
from tournaments.selectors.tables import (
    bot_in_words,
    bot_label,
    deal_get,
    deal_replay,
    seat_label,
    table_deal_points,
    table_get,
    table_log,
    table_seats,
)
from tournaments.selectors.tournaments import (
    Progress,
    StandingRow,
    standings_for_tournament,
    standings_version,
    tournament_entries,
    tournament_list,
    tournament_lower_is_better,
    tournament_outcomes,
    tournament_place_points,
    tournament_progress,
    tournament_rounds,
    tournament_standing_lines,
    tournament_tables,
)

__all__ = [
    "MatchProgress",
    "Progress",
    "ResolutionReport",
    "SpreadSource",
    "StandingRow",
    "StoredReplay",
    "TournamentFigures",
    "TournamentSpread",
    "TournamentStatistics",
    "as_jsonb",
    "bot_in_words",
    "bot_label",
    "bot_list",
    "bot_rating_history",
    "bot_version_content",
    "bot_versions",
    "deal_get",
    "deal_replay",
    "deal_replay_document",
    "deal_replay_documents",
    "deal_replay_stored",
    "match_list",
    "match_progress",
    "preset_spread_source",
    "rating_leaderboard",
    "ratings_with_replaced",
    "replays_to_store",
    "seat_label",
    "standings_for_tournament",
    "standings_version",
    "table_deal_points",
    "table_get",
    "table_log",
    "table_replay_seats",
    "table_seats",
    "tournament_entries",
    "tournament_figures",
    "tournament_list",
    "tournament_lower_is_better",
    "tournament_outcomes",
    "tournament_place_points",
    "tournament_progress",
    "tournament_resolution",
    "tournament_results",
    "tournament_rounds",
    "tournament_spread",
    "tournament_standing_lines",
    "tournament_statistics",
    "tournament_tables",
]
