"""A tournament's life: create and change its settings, open, enter bots, start, seat each
round, finish, cancel."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

import games
from games.errors import GameError, OptionError
from games.options import option_label
from judge import bots as builtin_bots
from judge.runner import Limits
from tournaments import conf, formats, judging, queue, scoring, seeds, selectors
from tournaments.errors import ApplicationError
from tournaments.models import (
    BotVersion,
    Entry,
    Round,
    Seat,
    Table,
    Tournament,
    TournamentSummary,
)
from tournaments.services._sql import as_points
from tournaments.services.ratings import ratings_update
from tournaments.statistics.stored import crosstable_as_json, standings_as_json
from tournaments.tournament_settings import (
    BOUNDS,
    DEFAULTS,
    OPTIONS_AS_SETTINGS,
    TournamentSettings,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User

log = logging.getLogger(__name__)


# The error code of a setting out of its bounds (the time limits and faults share one).
_BOUND_CODES = {
    "name": "invalid",
    "rounds": "rounds",
    "deals_per_table": "deals_per_table",
    "table_size": "table_size",
    "place_points": "place_points",
}


def tournament_create(*, organiser: User, settings: TournamentSettings) -> Tournament:
    """A draft tournament. Every setting is checked here: its bounds, the rules (preset and
    overrides, through the engine), the fixed length, the seating format, place points, time
    limits. The secret seed is drawn and its commitment published."""
    values = _checked_settings(settings)
    seed = seeds.new_tournament_seed()
    return Tournament.objects.create(
        organiser=organiser, seed=str(seed), commitment=seeds.seed_commitment(seed), **values
    )


def tournament_settings_checked(*, settings: TournamentSettings) -> dict[str, Any]:
    """The model field values of these settings, checked as :func:`tournament_create` checks
    them (ApplicationError if refused): for services that make a tournament of their own
    (practice runs)."""
    return _checked_settings(settings)


def tournament_check(*, settings: TournamentSettings) -> None:
    """Raise ApplicationError if :func:`tournament_create` would refuse these settings (a
    form's validation: the admin's add form)."""
    _checked_settings(settings)


def tournament_settings_problems(*, settings: TournamentSettings) -> list[ApplicationError]:
    """Every refusal :func:`tournament_create` would make of these settings, not only the
    first (a form lists them all at once): each refused setting is set back to its default (a
    refused rule option dropped) and the rest checked again."""
    problems: list[ApplicationError] = []
    refused: set[str] = set()
    while True:
        try:
            _checked_settings(settings)
        except ApplicationError as error:
            problems.append(error)
            target = _refused_setting(error, settings)
            if target is None or target in refused:
                return problems
            refused.add(target)
            settings = _set_back(settings, target)
        else:
            return problems


# The setting a refusal that names none concerns, by its code (None: stop checking there).
_SETTING_BY_CODE = {
    "seating": "seating",
    "place_points": "place_points",
    "limits": "limits",
    "registration": "registration_closes_at",
    "table_size": "table_size",
}


def _refused_setting(error: ApplicationError, settings: TournamentSettings) -> str | None:
    field, option = error.extra.get("field"), error.extra.get("option")
    if isinstance(field, str):
        return field
    if isinstance(option, str):
        return f"option:{option}" if option in (settings.options or {}) else option
    return _SETTING_BY_CODE.get(error.code)


def _set_back(settings: TournamentSettings, target: str) -> TournamentSettings:
    """These settings with ``target`` at its default (a rule option: without it)."""
    if target.startswith("option:"):
        name = target.removeprefix("option:")
        return settings.replace(
            options={k: v for k, v in (settings.options or {}).items() if k != name}
        )
    if target == "limits":
        limits = ("decision_seconds", "bank_seconds", "startup_seconds", "max_faults", "house_bot")
        return settings.replace(**{name: DEFAULTS[name] for name in limits})
    if target == "name":
        return settings.replace(name="")
    if target == "deals_per_table" and settings.game in games.game_names():
        # The fewest deals the game takes (the Roi: one whole game of 10).
        return settings.replace(deals_per_table=games.game_class(settings.game).deals_multiple)
    if target in DEFAULTS:
        return settings.replace(**{target: DEFAULTS[target]})
    if target in BOUNDS:  # a setting with no default (rounds): its lowest value
        return settings.replace(**{target: int(BOUNDS[target].low)})
    return settings


# The settings tournament_create takes and tournament_update changes.
TOURNAMENT_SETTINGS = TournamentSettings.names()
# Settings whose change makes the stored place points (one per seat) meaningless.
_SEATING_SETTINGS = frozenset({"game", "preset", "options", "table_size"})


def tournament_update(*, tournament: Tournament, **changes: Any) -> Tournament:
    """Change the settings of a tournament that has not started (draft or open).

    The new settings are checked exactly as :func:`tournament_create` checks them; the seed
    and its commitment do not change. The game cannot change once bots are entered; place
    points go back to the default when the game, preset, options or table size change without
    new ones, and the preset to the game's default when the game changes without one."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        values = _updated_settings(locked, changes)
        for name, value in values.items():
            setattr(locked, name, value)
        locked.save(update_fields=list(values))
    tournament.refresh_from_db()
    return tournament


def tournament_check_update(*, tournament: Tournament, **changes: Any) -> None:
    """Raise ApplicationError if :func:`tournament_update` would refuse these changes."""
    _updated_settings(Tournament.objects.get(pk=tournament.pk), changes)


def _updated_settings(tournament: Tournament, changes: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(changes) - set(TOURNAMENT_SETTINGS))
    if unknown:
        raise ApplicationError(
            f"unknown tournament settings: {', '.join(unknown)}",
            code="invalid",
            extra={"field": unknown[0]},
        )
    if tournament.status not in (Tournament.Status.DRAFT, Tournament.Status.OPEN):
        raise ApplicationError(
            f"the tournament is {tournament.status}; only a draft or open one can change",
            code="status",
            extra={"status": tournament.status},
        )
    game_changes = changes.get("game", tournament.game) != tournament.game
    if game_changes and Entry.objects.filter(tournament=tournament).exists():
        raise ApplicationError(
            "bots are entered: the game cannot change", code="entries", extra={"field": "game"}
        )
    settings = TournamentSettings.of(tournament)
    if _SEATING_SETTINGS & set(changes) and "place_points" not in changes:
        settings = settings.replace(place_points=None)
    if game_changes and "preset" not in changes:
        settings = settings.replace(preset=None)
    return _checked_settings(settings.replace(**changes))


def _checked_settings(settings: TournamentSettings) -> dict[str, Any]:
    """Check a tournament's settings; the model field values, or ApplicationError."""
    for field, message in settings.bound_problems():
        raise ApplicationError(
            message, code=_BOUND_CODES.get(field, "limits"), extra={"field": field}
        )
    engine, overrides = _checked_rules(settings)
    if settings.seating not in formats.format_names():
        raise ApplicationError(
            f"unknown seating format {settings.seating!r}; formats are: "
            + ", ".join(formats.format_names()),
            code="seating",
        )
    try:
        points = (
            scoring.check_place_points(settings.place_points, engine.players)
            if settings.place_points is not None
            else scoring.default_place_points(engine.players)
        )
    except scoring.FormatError as exc:
        raise ApplicationError(str(exc), code="place_points") from None
    try:
        builtin_bots.builtin_class(settings.house_bot, engine.name)
        Limits(
            startup=settings.startup_seconds,
            decision=settings.decision_seconds,
            bank=settings.bank_seconds,
            max_faults=settings.max_faults,
            replacement=settings.house_bot,
        )
    except ValueError as exc:
        raise ApplicationError(str(exc), code="limits") from None
    opens, closes = settings.registration_opens_at, settings.registration_closes_at
    if opens is not None and closes is not None and closes <= opens:
        raise ApplicationError("registration must close after it opens", code="registration")
    values = settings.replace(
        name=settings.name.strip() or f"{engine.name} tournament",
        game=engine.name,
        preset=engine.preset,
        options=overrides,
        table_size=engine.players,
        place_points=list(points),
    ).as_dict()
    _check_time_budget(values)
    return values


def _check_time_budget(values: Mapping[str, Any]) -> None:
    """A table may take at most ``conf.max_table_budget()`` seconds: the broker delivers an
    unacknowledged message again after its visibility timeout, and a table still playing
    then must not be handed to a second worker."""
    budget = judging.table_time_budget(tournament=Tournament(**values))
    most = conf.max_table_budget()
    if budget > most:
        raise ApplicationError(
            f"a table of these settings may take {budget:,.0f} s when every bot uses all its "
            f"time; at most {most:,.0f} s is allowed: fewer deals per table or shorter time "
            "limits",
            code="time_budget",
            extra={"budget_seconds": round(budget), "max_seconds": round(most)},
        )


def _checked_rules(settings: TournamentSettings) -> tuple[games.Game[object], dict[str, object]]:
    """The engine of these settings' rules and the option overrides it was built with (the
    table size becomes the ``players`` option when it is not the preset's)."""
    overrides = dict(settings.options or {})
    if "fixed_deals" in overrides:
        raise ApplicationError(
            "the number of deals is set by deals_per_table, not by the fixed_deals option",
            code="invalid_option",
            extra={"option": "fixed_deals"},
        )
    game, preset, deals = settings.game, settings.preset, settings.deals_per_table
    try:
        rules = games.game_class(game)
        multiple = rules.deals_multiple
        if deals % multiple:
            raise ApplicationError(
                f"the {rules.title} is played in whole games of {multiple} deals, so the number of "
                f"deals must be a multiple of {multiple} ({multiple}, {2 * multiple}, "
                f"{3 * multiple}...), not {deals}",
                code="invalid_option",
                extra={"option": "deals_per_table"},
            )
        engine = judging.engine_for(game=game, preset=preset, options=overrides, deals=deals)
        if settings.table_size is not None and settings.table_size != engine.players:
            overrides["players"] = settings.table_size
            engine = judging.engine_for(game=game, preset=preset, options=overrides, deals=deals)
    except OptionError as exc:
        raise _option_refusal(exc) from None
    except GameError as exc:
        raise ApplicationError(str(exc), code="invalid_option") from None
    if engine.players != (settings.table_size or engine.players):
        raise ApplicationError(
            f"{game}/{engine.preset} is played by {engine.players}, not {settings.table_size}",
            code="table_size",
        )
    return engine, overrides


def _option_refusal(exc: OptionError) -> ApplicationError:
    """The engine's refusal of an option, in an organiser's words: the option's label and
    name ("Trick penalty (option trick_penalty) must be an integer from 0 to 1000, not -1"),
    or the setting that sets it ("Table size must be one of 4, not 5"); the same words on the
    pages, through the API and in the admin."""
    option, predicate = exc.option, exc.predicate
    setting = OPTIONS_AS_SETTINGS.get(option or "")
    if option is None or predicate is None:
        message = str(exc)
    elif setting is not None:
        message = f"{option_label(setting)} {predicate}"
    else:
        message = f"{option_label(option)} (option {option}) {predicate}"
    return ApplicationError(message, code="invalid_option", extra={"option": setting or option})


def _transition(tournament: Tournament, sources: Iterable[str], target: str, **fields: Any) -> None:
    """Compare-and-set the tournament's status; ApplicationError if it was not in ``sources``."""
    allowed = list(sources)
    updated = Tournament.objects.filter(pk=tournament.pk, status__in=allowed).update(
        status=target, **fields
    )
    if not updated:
        current = Tournament.objects.values_list("status", flat=True).get(pk=tournament.pk)
        raise ApplicationError(
            f"the tournament is {current}; this needs it to be {' or '.join(allowed)}",
            code="status",
            extra={"status": current},
        )
    tournament.refresh_from_db()


def tournament_open(*, tournament: Tournament) -> Tournament:
    """Open registration (draft -> open)."""
    _transition(tournament, [Tournament.Status.DRAFT], Tournament.Status.OPEN)
    return tournament


def tournament_cancel(*, tournament: Tournament) -> Tournament:
    """Cancel a tournament that is not finished. Tables in play finish but are not recorded."""
    _transition(
        tournament,
        [Tournament.Status.DRAFT, Tournament.Status.OPEN, Tournament.Status.RUNNING],
        Tournament.Status.CANCELLED,
        finished_at=timezone.now(),
    )
    return tournament


def entry_register(*, tournament: Tournament, version: BotVersion, user: User) -> Entry:
    """Enter a ready bot version (frozen for the whole tournament). ``user`` is who asks: the
    bot's owner, or staff entering it for them."""
    now = timezone.now()
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if locked.status != Tournament.Status.OPEN:
            raise ApplicationError(
                f"registration is closed: the tournament is {locked.status}", code="status"
            )
        if locked.registration_opens_at and now < locked.registration_opens_at:
            raise ApplicationError("registration has not opened yet", code="registration")
        if locked.registration_closes_at and now > locked.registration_closes_at:
            raise ApplicationError("registration has closed", code="registration")
        version = BotVersion.objects.select_related("bot").get(pk=version.pk)
        if version.status != BotVersion.Status.READY:
            raise ApplicationError(
                f"{version.label} is {version.status}: only a ready version can enter",
                code="version_not_ready",
            )
        if version.bot.game != locked.game:
            raise ApplicationError(
                f"{version.bot.name} plays {version.bot.game}, this tournament {locked.game}",
                code="wrong_game",
            )
        if version.bot.owner_id != user.pk and not getattr(user, "is_staff", False):
            raise ApplicationError("you can only enter your own bots", code="not_owner")
        if Entry.objects.filter(tournament=locked, version=version).exists():
            raise ApplicationError(f"{version.label} is already entered", code="duplicate_entry")
        if (
            not locked.allow_multiple_entries
            and Entry.objects.filter(
                tournament=locked, user_id=version.bot.owner_id, withdrawn=False
            ).exists()
        ):
            raise ApplicationError(
                "this tournament allows one entry per user", code="one_entry_per_user"
            )
        # The entry is the bot owner's, even when staff entered it for them.
        return Entry.objects.create(
            tournament=locked, version=version, user_id=version.bot.owner_id
        )


def entry_withdraw(*, entry: Entry, reason: str = "") -> Entry:
    """Withdraw an entry. Before the start it is simply not seated; during the tournament its
    seats not yet played are played by a house bot, and the entry is flagged (unranked)."""
    return _entry_flag(entry=entry, field="withdrawn", reason=reason or "withdrawn")


def entry_disqualify(*, entry: Entry, reason: str) -> Entry:
    """Disqualify an entry: like a withdrawal, decided by the organiser."""
    return _entry_flag(entry=entry, field="disqualified", reason=reason or "disqualified")


def _entry_flag(*, entry: Entry, field: str, reason: str) -> Entry:
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=entry.tournament_id)
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            raise ApplicationError(f"the tournament is {tournament.status}", code="status")
        updated = Entry.objects.filter(pk=entry.pk, **{field: False}).update(
            **{field: True}, flag_reason=reason[:300], flagged_at=timezone.now()
        )
        if updated:
            Seat.objects.filter(entry=entry, table__status=Table.Status.PENDING).update(
                substitute=True, house_bot=tournament.house_bot
            )
    entry.refresh_from_db()
    return entry


def tournament_start(*, tournament: Tournament) -> Round:
    """Close registration, seat round 1 and queue its tables (open -> running). The seed's
    commitment was published when the tournament was created; the seed stays secret."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        active = Entry.objects.filter(tournament=locked, withdrawn=False, disqualified=False)
        count = active.count()
        if locked.status != Tournament.Status.OPEN:
            raise ApplicationError(
                f"the tournament is {locked.status}; only an open one can start", code="status"
            )
        if count < 2:
            raise ApplicationError("a tournament needs at least two entries", code="too_few")
        if locked.duplicate and count <= locked.table_size:
            raise ApplicationError(
                "duplicate play compares tables: it needs more entries than one table seats",
                code="too_few",
            )
        try:  # settings checked at creation; a row edited behind the services may not hold
            judging.tournament_engine(tournament=locked)
        except GameError as exc:
            raise ApplicationError(
                f"the engine refuses this tournament's rules ({exc}): change its settings first",
                code="invalid_option",
            ) from None
        _transition(
            locked, [Tournament.Status.OPEN], Tournament.Status.RUNNING, started_at=timezone.now()
        )
        first = round_advance(tournament=locked)
        assert first is not None
    tournament.refresh_from_db()
    return first


def round_advance(*, tournament: Tournament) -> Round | None:
    """Seat the next round from the standings and queue its tables (a practice run's table is
    left for :func:`~tournaments.services.practice.practice_dispatch`); after the last round,
    finish the tournament. Idempotent: a round is seated once."""
    with transaction.atomic():
        locked = Tournament.objects.select_for_update().get(pk=tournament.pk)
        if locked.status != Tournament.Status.RUNNING:
            return None
        number = locked.current_round + 1
        if number > locked.rounds:
            tournament_finish(tournament=locked)
            return None
        existing = Round.objects.filter(tournament=locked, number=number).first()
        if existing is not None:
            return existing
        entries = list(
            Entry.objects.filter(
                tournament=locked, withdrawn=False, disqualified=False
            ).values_list("pk", flat=True)
        )
        if not entries:
            tournament_finish(tournament=locked)
            return None
        seating = formats.seat_round(
            locked.seating,
            round_number=number,
            entries=entries,
            table_size=locked.table_size,
            seed=locked.seed_int,
            history=selectors.tournament_outcomes(tournament=locked, before_round=number),
            lower_is_better=selectors.tournament_lower_is_better(tournament=locked),
        )
        round_ = Round.objects.create(tournament=locked, number=number)
        now = timezone.now()
        tables = Table.objects.bulk_create(
            [
                Table(
                    tournament=locked,
                    round=round_,
                    number=t,
                    deal_seed=seeds.table_deal_seed(
                        locked.seed_int,
                        round_number=number,
                        table_number=t,
                        duplicate=locked.duplicate,
                    ),
                    # A practice table waits for its turn (services.practice_dispatch).
                    queued_at=None if locked.practice else now,
                )
                for t in range(1, len(seating) + 1)
            ]
        )
        Seat.objects.bulk_create(
            [
                Seat(
                    table=table,
                    position=position,
                    entry_id=slot,
                    house_bot=locked.house_bot if slot is None else "",
                )
                for table, slots in zip(tables, seating, strict=True)
                for position, slot in enumerate(slots)
            ]
        )
        Tournament.objects.filter(pk=locked.pk).update(current_round=number)
        tournament.current_round = number
        if not locked.practice:
            for table in tables:
                queue.table_enqueue(table=table, tournament=locked)
        return round_


def tournament_finish(*, tournament: Tournament) -> Tournament:
    """Finish a running tournament: reveal its seed, freeze the final standings, update the
    ratings, store its summary and queue its audit (stored for its audit page; none of these
    three for a practice run). Runs once (compare-and-set on the status)."""
    now = timezone.now()
    with transaction.atomic():
        updated = Tournament.objects.filter(
            pk=tournament.pk, status=Tournament.Status.RUNNING
        ).update(status=Tournament.Status.FINISHED, finished_at=now, seed_revealed_at=now)
        tournament.refresh_from_db()
        if not updated:
            return tournament
        lines = selectors.standings_for_tournament(tournament=tournament)
        entries = []
        for line in lines:
            line.entry.final_rank = line.rank
            line.entry.final_points = as_points(line.points)
            entries.append(line.entry)
        Entry.objects.bulk_update(entries, ["final_rank", "final_points"])
        if not tournament.practice:  # a practice run is never rated, and has no pages of standings
            ratings_update(tournament=tournament)
            tournament_summary_store(tournament=tournament)
            queue.tournament_audit_store(tournament_id=tournament.pk)
    return tournament


def tournament_summary_store(*, tournament: Tournament) -> TournamentSummary:
    """Compute a finished tournament's final standings and statistics (the standings with
    their intervals, the crosstable, the spread per deal its preset's measure reads) and store
    them
    (:class:`~tournaments.models.TournamentSummary`), so that its pages and the API read them
    instead of computing them. Done once by :func:`tournament_finish`; run again, it writes
    the same figures (they are a function of the recorded results and fixed seeds)."""
    if tournament.status != Tournament.Status.FINISHED:
        raise ApplicationError(
            f"the tournament is {tournament.status}: only a finished one has a summary",
            code="status",
        )
    figures = selectors.tournament_figures(tournament=tournament)
    lines = selectors.tournament_standing_lines(tournament=tournament)
    summary, _ = TournamentSummary.objects.update_or_create(
        tournament=tournament,
        defaults={
            "lines": scoring.standings_as_json(lines),
            "standings": standings_as_json(figures.standings),
            "crosstable": crosstable_as_json(figures.crosstable),
            "spread": figures.spread.as_json(),
            "computed_at": timezone.now(),
        },
    )
    return summary
