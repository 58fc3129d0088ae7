"""Forms of the members' pages. They hold no rule: each one's ``submit`` (or ``clean``) calls
the service that the API calls, and an :class:`~tournaments.errors.ApplicationError` it raises
is shown next to the field it names (``extra["field"]`` or ``extra["option"]``), in the
service's (the engine's) own words. The values entered stay in the form when it is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm

from api import accounts
from judge import bots as builtin_bots
from judge.package import MAX_ZIP_BYTES
from tournaments import formats, member_selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import Bot, BotVersion, Entry, Tournament
from tournaments.page_selectors import option_value_words
from tournaments.services import practice as practice_service
from tournaments.tournament_settings import (
    BOUNDS,
    DEFAULTS,
    NAME_MAX_LENGTH,
    OPTIONS_AS_SETTINGS,
    TournamentSettings,
)


def _refuse(form: forms.Form, error: ApplicationError, *, fields: dict[str, str]) -> None:
    """Put ``error`` next to the field it concerns: the one its extra names, else the one its
    code maps to in ``fields``, else above the form."""
    form.add_error(_refused_field(form, error, fields=fields), error.message)


def _refused_field(
    form: forms.Form, error: ApplicationError, *, fields: dict[str, str]
) -> str | None:
    named = error.extra.get("field") or error.extra.get("option")
    target = fields.get(str(named), str(named)) if named else fields.get(error.code)
    return target if target in form.fields else None


# ---------------------------------------------------------------------------------------------
# Accounts
# ---------------------------------------------------------------------------------------------


class LoginForm(AuthenticationForm):
    """Django's login form (axes counts its failures: api/authentication.py)."""


class SignupForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="Letters, digits and @ . + - _ only.")
    email = forms.EmailField(
        required=False, help_text="Optional: only used to send you a password reset link."
    )
    password = forms.CharField(widget=forms.PasswordInput, strip=False)

    def __init__(self, *args: Any, request: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.issued: accounts.IssuedToken | None = None
        # The password's rules are said before a submit, not only in the refusal after one.
        rules = password_validation.password_validators_help_texts()
        self.fields["password"].help_text = " ".join(rules)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.errors:
            return cleaned
        try:
            self.issued = accounts.user_signup(
                username=cleaned["username"],
                password=cleaned["password"],
                email=cleaned.get("email", ""),
                request=self.request,
            )
        except ApplicationError as error:
            _refuse(self, error, fields={})
        return cleaned


# ---------------------------------------------------------------------------------------------
# Bot authors
# ---------------------------------------------------------------------------------------------


class BotForm(forms.Form):
    name = forms.CharField(max_length=64)
    game = forms.ChoiceField()
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def __init__(self, *args: Any, owner: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.fields["game"].choices = member_selectors.game_choices()  # type: ignore[attr-defined]

    def submit(self) -> Bot | None:
        """The new bot, or None with the service's refusal next to its field."""
        if not self.is_valid():
            return None
        try:
            return services.bot_create(owner=self.owner, **self.cleaned_data)
        except ApplicationError as error:
            _refuse(self, error, fields={"bot_name": "name", "unknown_game": "game"})
            return None


class VersionForm(forms.Form):
    file = forms.FileField(
        help_text=(
            "A single source file (.py .c .cpp .rs .go .java .js), or a .zip package with its "
            f"manifest (docs/protocol.md), at most "
            f"{MAX_ZIP_BYTES // 1024 // 1024} MB."
        )
    )

    def __init__(self, *args: Any, bot: Bot, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bot = bot

    def submit(self) -> BotVersion | None:
        if not self.is_valid():
            return None
        upload = self.cleaned_data["file"]
        # One byte over the limit is enough for the service to refuse it in its own words.
        content = upload.read(MAX_ZIP_BYTES + 1)
        try:
            return services.bot_version_create(
                bot=self.bot, content=content, filename=upload.name or ""
            )
        except ApplicationError as error:
            _refuse(self, error, fields={"bot_package": "file", "upload_limit": "file"})
            return None


class PracticeForm(forms.Form):
    """A version's "try it": a few deals against built-in bots (services.practice_create)."""

    preset = forms.ChoiceField(help_text="The rules the table plays.")
    table_size = forms.TypedChoiceField(
        label="Table size",
        coerce=int,
        empty_value=None,
        required=False,
        help_text="Your bot and built-in bots in every other seat.",
    )
    deals = forms.IntegerField(
        min_value=1,
        max_value=practice_service.MAX_DEALS,
        initial=practice_service.DEFAULT_DEALS,
        help_text=f"From 1 to {practice_service.MAX_DEALS}.",
    )
    opponent = forms.ChoiceField(
        label="Opponents",
        initial=practice_service.DEFAULT_OPPONENT,
        help_text="The built-in bot in the other seats.",
    )

    def __init__(self, *args: Any, owner: Any, version: BotVersion, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.version = version
        game = member_selectors.game_entry(game=version.bot.game)
        presets = [(str(p["name"]), str(p["name"])) for p in game.get("presets", [])]
        self.fields["preset"].choices = presets  # type: ignore[attr-defined]
        self.fields["table_size"].choices = [  # type: ignore[attr-defined]
            ("", "the preset's"),
            *((n, f"{n} seats") for n in member_selectors.game_table_sizes(game=game)),
        ]
        self.fields["opponent"].choices = [  # type: ignore[attr-defined]
            (name, f"built-in {name}")
            for name in services.practice_opponents(game=version.bot.game)
        ]

    def submit(self) -> Tournament | None:
        """The practice run, or None with the service's refusal next to its field."""
        if not self.is_valid():
            return None
        try:
            return services.practice_create(
                owner=self.owner, version=self.version, **self.cleaned_data
            )
        except ApplicationError as error:
            _refuse(self, error, fields={})
            return None


class EntryForm(forms.Form):
    version = forms.ModelChoiceField(queryset=BotVersion.objects.none(), empty_label=None)

    def __init__(self, *args: Any, user: Any, tournament: Tournament, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user, self.tournament = user, tournament
        field = self.fields["version"]
        field.queryset = member_selectors.enterable_versions(  # type: ignore[attr-defined]
            user=user, tournament=tournament
        )
        field.label_from_instance = lambda v: v.label  # type: ignore[attr-defined]

    def submit(self) -> Entry | None:
        if not self.is_valid():
            return None
        try:
            return services.entry_register(
                tournament=self.tournament, version=self.cleaned_data["version"], user=self.user
            )
        except ApplicationError as error:
            _refuse(self, error, fields={})
            return None


# ---------------------------------------------------------------------------------------------
# Organisers
# ---------------------------------------------------------------------------------------------


class RemoveEntryForm(forms.Form):
    how = forms.ChoiceField(
        choices=[("withdraw", "Withdraw"), ("disqualify", "Disqualify")], initial="withdraw"
    )
    reason = forms.CharField(max_length=300, required=False)


def _option_field(option: dict[str, Any], presets: list[dict[str, Any]]) -> forms.Field:
    """A form field for one of the engine's declared options: empty means the preset's value.
    Its label and help are words for people: "TD bonus", "Default: Off (classic-fr: On)."."""
    label = option["label"]
    help_text = f"{option['doc']} {_default_in_words(option, presets)}"
    if option["choices"]:
        choices = [("", "(the preset's value)")] + [(str(c), str(c)) for c in option["choices"]]
        return forms.TypedChoiceField(
            choices=choices,
            required=False,
            label=label,
            help_text=help_text,
            coerce=_coerce_like(option["choices"][0]),
            empty_value=None,
        )
    if option["type"] == "bool":
        on, off = option_value_words(True), option_value_words(False)
        return forms.TypedChoiceField(
            choices=[("", "(the preset's value)"), ("true", on), ("false", off)],
            required=False,
            label=label,
            help_text=help_text,
            coerce=lambda value: value == "true",
            empty_value=None,
        )
    help_text = f"Allowed: {option['allowed']}. {help_text}"
    if option["type"] == "int":
        # No bounds here: the engine checks them and says why in its own words.
        return forms.IntegerField(required=False, label=label, help_text=help_text)
    return forms.CharField(required=False, label=label, help_text=help_text)


def _default_in_words(option: dict[str, Any], presets: list[dict[str, Any]]) -> str:
    """The option's default as the form shows values, and the presets that set another:
    "Default: 100 (classic-fr, two-player: 50)."."""
    name, default = option["name"], option["default"]
    others: dict[str, list[str]] = {}
    for preset in presets:
        value = preset["values"].get(name, default)
        if value != default:
            others.setdefault(option_value_words(value), []).append(preset["name"])
    words = "; ".join(f"{', '.join(names)}: {value}" for value, names in others.items())
    return f"Default: {option_value_words(default)}" + (f" ({words})." if words else ".")


def _coerce_like(example: object) -> Callable[[Any], Any]:
    """The submitted text as the type of the option's values (an int choice stays an int)."""
    kind: Callable[[Any], Any] = type(example)
    return kind


OPTION_PREFIX = "option_"
# Refusals that name no field: the field they concern, by code.
_FIELDS_BY_CODE = {
    "seating": "seating",
    "place_points": "place_points",
    "limits": "decision_seconds",
    "registration": "registration_closes_at",
    "time_budget": "deals_per_table",
    "unknown_game": "game",
}


# The value format of <input type="datetime-local"> (the browser shows nothing otherwise).
_LOCAL_DATETIME = "%Y-%m-%dT%H:%M"


def _bounded(name: str, field: forms.Field) -> forms.Field:
    bound = BOUNDS[name]
    field.help_text = bound.help()
    field.widget.attrs.update({"min": bound.low, "max": bound.high})
    return field


class TournamentForm(forms.Form):
    """A tournament's settings for one game, from the engine's declared presets and options
    and the bounds of :mod:`tournaments.tournament_settings`; ``submit`` creates it through
    :func:`tournaments.services.tournament_create`, which checks everything."""

    name = forms.CharField(max_length=NAME_MAX_LENGTH)
    preset = forms.ChoiceField()
    rounds = forms.IntegerField(initial=3)
    deals_per_table = forms.IntegerField(initial=4)
    table_size = forms.IntegerField(required=False, help_text="Empty: the preset's.")
    seating = forms.ChoiceField(initial=DEFAULTS["seating"])
    duplicate = forms.BooleanField(required=False)
    place_points = forms.CharField(
        required=False, help_text="Points for 1st, 2nd... place, comma-separated; empty: default."
    )
    decision_seconds = forms.FloatField(initial=DEFAULTS["decision_seconds"])
    bank_seconds = forms.FloatField(initial=DEFAULTS["bank_seconds"])
    startup_seconds = forms.FloatField(initial=DEFAULTS["startup_seconds"])
    max_faults = forms.IntegerField(initial=DEFAULTS["max_faults"])
    house_bot = forms.ChoiceField(initial=DEFAULTS["house_bot"])
    allow_multiple_entries = forms.BooleanField(required=False)
    registration_opens_at = forms.DateTimeField(
        required=False,
        help_text="In UTC, as every time on the site.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=_LOCAL_DATETIME),
    )
    registration_closes_at = forms.DateTimeField(
        required=False,
        help_text="In UTC.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format=_LOCAL_DATETIME),
    )

    def __init__(self, *args: Any, organiser: Any, game: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.organiser, self.game = organiser, game
        self.fields["preset"].choices = [  # type: ignore[attr-defined]
            (p["name"], f"{p['name']}: {p['doc']}") for p in game["presets"]
        ]
        self.fields["preset"].initial = game["default_preset"]
        self.fields["seating"].choices = [(n, n) for n in formats.format_names()]  # type: ignore[attr-defined]
        self.fields["house_bot"].choices = [  # type: ignore[attr-defined]
            (n, n) for n in builtin_bots.builtin_names(game["name"])
        ]
        for name in BOUNDS:
            _bounded(name, self.fields[name])
        self.option_names: list[str] = []
        for option in game["options"]:
            if option["name"] in OPTIONS_AS_SETTINGS:
                continue
            self.fields[OPTION_PREFIX + option["name"]] = _option_field(option, game["presets"])
            self.option_names.append(option["name"])

    def option_fields(self) -> list[forms.BoundField]:
        return [self[OPTION_PREFIX + name] for name in self.option_names]

    def setting_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in self.fields if not name.startswith(OPTION_PREFIX)]

    def _settings(self) -> TournamentSettings:
        """The settings entered; a field the form refused counts as its default, so that the
        service checks every other setting at the same time."""
        data = {
            **DEFAULTS,
            "name": "",
            "preset": self.game["default_preset"],
            **{n: f.initial for n, f in self.fields.items() if f.initial is not None},
            **self.cleaned_data,
        }
        points = data.get("place_points") or ""
        try:
            place_points = [int(p) for p in points.replace(" ", "").split(",")] if points else None
        except ValueError:
            self.add_error("place_points", "whole numbers separated by commas")
            place_points = None
        options = {
            name: data[OPTION_PREFIX + name]
            for name in self.option_names
            if data.get(OPTION_PREFIX + name) not in (None, "")
        }
        return TournamentSettings(
            name=data["name"],
            game=self.game["name"],
            preset=data["preset"],
            options=options,
            rounds=data["rounds"],
            deals_per_table=data["deals_per_table"],
            table_size=data.get("table_size"),
            seating=data["seating"],
            duplicate=data["duplicate"],
            place_points=place_points,
            decision_seconds=data["decision_seconds"],
            bank_seconds=data["bank_seconds"],
            startup_seconds=data["startup_seconds"],
            max_faults=data["max_faults"],
            house_bot=data["house_bot"],
            allow_multiple_entries=data["allow_multiple_entries"],
            registration_opens_at=data.get("registration_opens_at"),
            registration_closes_at=data.get("registration_closes_at"),
        )

    def submit(self) -> Tournament | None:
        """The new draft tournament (or, for :class:`TournamentSettingsForm`, the tournament
        with its new settings), or None with every refusal next to its field: the form's own
        and the service's, all at once."""
        self.is_valid()
        settings = self._settings()
        for problem in services.tournament_settings_problems(settings=settings):
            self._refuse(problem)
        if self.errors:
            return None
        try:
            return self._save(settings)
        except ApplicationError as error:
            self._refuse(error)
            return None

    def _save(self, settings: TournamentSettings) -> Tournament:
        return services.tournament_create(organiser=self.organiser, settings=settings)

    def _refuse(self, error: ApplicationError) -> None:
        """The service's refusal next to the setting or rule option it names."""
        named = error.extra.get("option")
        fields = {**_FIELDS_BY_CODE, **OPTIONS_AS_SETTINGS}
        if isinstance(named, str) and named in self.option_names:
            fields[named] = OPTION_PREFIX + named
        target = _refused_field(self, error, fields=fields)
        if target is None or target not in self.errors:  # the form's own refusal comes first
            self.add_error(target, error.message)


class TournamentSettingsForm(TournamentForm):
    """The same form on a tournament's current settings (initial values from
    :func:`tournaments.member_selectors.tournament_form_initial`); ``submit`` changes them
    through :func:`tournaments.services.tournament_update`, which checks them as at creation
    and refuses once the tournament has started. The game does not change here."""

    def __init__(
        self, *args: Any, tournament: Tournament, game: dict[str, Any], **kwargs: Any
    ) -> None:
        initial = member_selectors.tournament_form_initial(tournament=tournament)
        for name, value in initial.pop("options").items():
            shown = ("true" if value else "false") if isinstance(value, bool) else value
            initial[OPTION_PREFIX + name] = shown
        super().__init__(
            *args, organiser=tournament.organiser, game=game, initial=initial, **kwargs
        )
        self.tournament = tournament

    def closed(self) -> str | None:
        """Why these settings can no longer change (the service's words: the tournament has
        started), or None. (Settings that no longer pass, say a time budget above a limit
        lowered since, are for the organiser to change: the form says so when it is sent.)"""
        try:
            services.tournament_check_update(tournament=self.tournament)
        except ApplicationError as error:
            if error.code == "status":
                return error.message
        return None

    def _save(self, settings: TournamentSettings) -> Tournament:
        # (a tournament started meanwhile: refused above the form)
        return services.tournament_update(tournament=self.tournament, **settings.as_dict())
