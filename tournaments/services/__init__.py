"""Writes of the tournaments app: keyword-only functions named ``<entity>_<action>``, one module
per entity, their public names gathered here (``from tournaments import services``).

- :mod:`~tournaments.services.bots`: bots and their versions (create, upload, validate);
- :mod:`~tournaments.services.lifecycle`: a tournament's settings, registration, start, the
  seating of each round, finish and cancel;
- :mod:`~tournaments.services.tables`: claiming, playing, failing and re-running tables, and the
  periodic sweep;
- :mod:`~tournaments.services.recording`: recording a played table and closing its round;
- :mod:`~tournaments.services.ratings`: the ratings a finished tournament updates;
- :mod:`~tournaments.services.recount`: recounting tables recorded before a fault stopped
  paying;
- :mod:`~tournaments.services.audit`: re-playing recorded deals through the engine;
- :mod:`~tournaments.services.workers`: the workers' heartbeats;
- :mod:`~tournaments.services.matches`: matches between two versions ("is v2 better?");
- :mod:`~tournaments.services.practice`: practice runs, a version's "try it";
- :mod:`~tournaments.services.fairshare`: the fair share of the workers that matches and
  practice runs have, beside tournaments.

Every state change is a compare-and-set (``filter(pk=..., status=...).update(...)`` and check
the count) or happens under ``select_for_update`` of the rows concerned, so that two workers,
two admins or a task that runs twice never record anything twice. Tasks are queued only after
the transaction that made their work commits (:mod:`tournaments.queue`).

A refused request raises :class:`~tournaments.errors.ApplicationError`.
"""

from tournaments.conf import practice_in_flight_cap
from tournaments.services.audit import (
    Check,
    DealAudit,
    TournamentAudit,
    Verdict,
    deal_audit,
    tournament_audit,
    tournament_audit_store,
)
from tournaments.services.bots import (
    VALIDATION_DEALS,
    bot_create,
    bot_version_create,
    bot_version_revalidate,
    bot_version_sweep,
    bot_version_validate,
    validation_dispatch,
)
from tournaments.services.lifecycle import (
    TOURNAMENT_SETTINGS,
    entry_disqualify,
    entry_register,
    entry_withdraw,
    round_advance,
    tournament_cancel,
    tournament_check,
    tournament_check_update,
    tournament_create,
    tournament_finish,
    tournament_open,
    tournament_settings_checked,
    tournament_settings_problems,
    tournament_start,
    tournament_summary_store,
    tournament_update,
)
from tournaments.services.matches import (
    match_batch_run,
    match_cancel,
    match_create,
    match_run_here,
    match_sweep,
)
from tournaments.services.practice import (
    practice_create,
    practice_dispatch,
    practice_opponents,
    practice_table_failed,
    practice_tables_in_flight,
)
from tournaments.services.ratings import ratings_update
from tournaments.services.recording import table_record_result
from tournaments.services.recount import Recount, ratings_rebuild, replaced_seats_recount
from tournaments.services.tables import (
    LeaseLost,
    SweepReport,
    TableRun,
    WorkerOutOfRotation,
    kernel_id,
    local_worker_error,
    round_resend_deferred,
    table_claim,
    table_fail,
    table_lease_renew,
    table_play,
    table_release,
    table_rerun,
    table_run,
    table_sweep,
    tournament_run_here,
)
from tournaments.services.workers import (
    housekeeping_claim,
    sweep_if_due,
    worker_heartbeat_record,
    worker_out_of_rotation,
)

__all__ = [
    "TOURNAMENT_SETTINGS",
    "VALIDATION_DEALS",
    "Check",
    "DealAudit",
    "LeaseLost",
    "Recount",
    "SweepReport",
    "TableRun",
    "TournamentAudit",
    "Verdict",
    "WorkerOutOfRotation",
    "bot_create",
    "bot_version_create",
    "bot_version_revalidate",
    "bot_version_sweep",
    "bot_version_validate",
    "deal_audit",
    "entry_disqualify",
    "entry_register",
    "entry_withdraw",
    "housekeeping_claim",
    "kernel_id",
    "local_worker_error",
    "match_batch_run",
    "match_cancel",
    "match_create",
    "match_run_here",
    "match_sweep",
    "practice_create",
    "practice_dispatch",
    "practice_in_flight_cap",
    "practice_opponents",
    "practice_table_failed",
    "practice_tables_in_flight",
    "ratings_rebuild",
    "ratings_update",
    "replaced_seats_recount",
    "round_advance",
    "round_resend_deferred",
    "sweep_if_due",
    "table_claim",
    "table_fail",
    "table_lease_renew",
    "table_play",
    "table_record_result",
    "table_release",
    "table_rerun",
    "table_run",
    "table_sweep",
    "tournament_audit",
    "tournament_audit_store",
    "tournament_cancel",
    "tournament_check",
    "tournament_check_update",
    "tournament_create",
    "tournament_finish",
    "tournament_open",
    "tournament_run_here",
    "tournament_settings_checked",
    "tournament_settings_problems",
    "tournament_start",
    "tournament_summary_store",
    "tournament_update",
    "validation_dispatch",
    "worker_heartbeat_record",
    "worker_out_of_rotation",
]
