"""The members' pages through Django's test client: what each form does, what it refuses and
where it says so, and that it keeps the values entered (the permission matrix is in
test_members_permissions.py, the browser stories in test_members_browser.py)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from api.models import ApiToken
from api.permissions import ORGANISERS_GROUP, is_organiser
from judge.seats import LOG_CUT_NOTE
from tests.api.conftest import BOT_FILE, FAST_HASHERS, make_user, ready_version
from tests.pages.members_world import MembersWorld, members_world_for_module
from tournaments import services
from tournaments.models import Bot, BotVersion, Entry, Table, Tournament
from tournaments.pages import accounts as accounts_pages
from tournaments.tournament_settings import TournamentSettings


@pytest.fixture(scope="module")
def _module_world(django_db_setup: None, django_db_blocker: Any) -> Iterator[MembersWorld]:
    yield from members_world_for_module(django_db_blocker)


@pytest.fixture
def world(_module_world: MembersWorld, db: None, settings: Any) -> MembersWorld:
    settings.TAPIS_ALLOW_SIGNUP = True
    settings.PASSWORD_HASHERS = FAST_HASHERS
    from django.core.cache import cache

    cache.clear()  # axes' counts of failed logins
    return _module_world


def error_next_to(html: str, field: str) -> str:
    """The error shown next to ``field`` (its <p class="error" id="id_FIELD_error">)."""
    match = re.search(rf'<p class="error" id="id_{field}_error"[^>]*>(.*?)</p>', html, re.S)
    assert match, f"no error next to {field}"
    return match.group(1).strip()


# ---------------------------------------------------------------------------------------------
# Accounts
# ---------------------------------------------------------------------------------------------


TOKEN_SHOWN = re.compile(r'<pre id="api-token" class="break">([^<]+)</pre>')


def test_signup_logs_in_and_shows_the_token_once(world: MembersWorld) -> None:
    client = Client()
    response = client.post(
        reverse("tournaments:signup"),
        {"username": "newcomer", "email": "n@example.org", "password": "a-long-Passw0rd!"},
    )
    # POST, redirect, GET: the POST's answer holds no secret, and reloading the page the
    # browser lands on sends no form again.
    assert response.status_code == 302
    assert response["Location"] == reverse("tournaments:token-shown")
    assert b"api-token" not in response.content
    assert client.head(response["Location"]).status_code == 405  # spends nothing
    shown = client.get(response["Location"])
    assert "no-store" in shown["Cache-Control"]
    html = shown.content.decode()
    assert "Welcome, newcomer" in html
    key = TOKEN_SHOWN.search(html)
    assert key is not None
    user = User.objects.get(username="newcomer")
    assert ApiToken.objects.get(user=user).prefix == key.group(1)[:8]
    # A reload shows it no more: My account, which has its prefix only.
    reload = client.get(response["Location"], follow=True)
    assert reload.redirect_chain == [(reverse("tournaments:account"), 302)]
    account = reload.content.decode()
    assert "My account: newcomer" in account
    assert "shown once, when it is made" in account
    assert key.group(1) not in account
    assert key.group(1)[:8] in account
    assert ApiToken.objects.filter(user=user).count() == 1
    assert key.group(1) not in str(dict(client.session))  # forgotten once shown


def test_signup_refuses_a_look_alike_name_next_to_it_and_keeps_the_values(
    world: MembersWorld,
) -> None:
    response = Client().post(
        reverse("tournaments:signup"),
        {"username": "AUTHOR", "email": "me@example.org", "password": "a-long-Passw0rd!"},
    )
    html = response.content.decode()
    assert "it looks like &#x27;author&#x27;" in error_next_to(html, "username")
    assert 'value="me@example.org"' in html
    weak = Client().post(
        reverse("tournaments:signup"), {"username": "fresh-name", "password": "123"}
    )
    assert "too short" in error_next_to(weak.content.decode(), "password")
    assert not User.objects.filter(username__in=["fresh-name"]).exists()


def test_signups_from_one_address_are_limited(world: MembersWorld, settings: Any) -> None:
    settings.TAPIS_SIGNUPS_PER_HOUR = 1
    url = reverse("tournaments:signup")
    first = Client().post(url, {"username": "first-one", "password": "a-long-Passw0rd!"})
    assert first.status_code == 302
    again = Client().post(url, {"username": "second-one", "password": "a-long-Passw0rd!"})
    assert "signed up 1 account in the last hour, the most allowed" in again.content.decode()
    assert not User.objects.filter(username="second-one").exists()


def test_signup_closed(world: MembersWorld, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = False
    response = Client().post(
        reverse("tournaments:signup"), {"username": "nobody", "password": "a-long-Passw0rd!"}
    )
    assert response.status_code == 403
    assert b"Sign-up is closed" in response.content
    assert not User.objects.filter(username="nobody").exists()


def test_login_failures_are_limited_as_everywhere(world: MembersWorld, settings: Any) -> None:
    client = Client()
    url = reverse("tournaments:login")
    wrong = client.post(url, {"username": "author", "password": "wrong"})
    assert wrong.status_code == 200
    assert b"Please enter a correct username and password" in wrong.content
    for _ in range(settings.AXES_FAILURE_LIMIT):
        last = client.post(url, {"username": "author", "password": "wrong"})
    assert last.status_code == 429
    refused = client.post(url, {"username": "author", "password": "author-secret-pw"})
    assert refused.status_code == 429
    assert b"Too many failed logins" in refused.content


def test_login_then_logout(world: MembersWorld) -> None:
    client = Client()
    response = client.post(
        reverse("tournaments:login"), {"username": "author", "password": "author-secret-pw"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("tournaments:account")
    assert client.get(reverse("tournaments:account")).status_code == 200
    client.post(reverse("tournaments:logout"))
    assert client.get(reverse("tournaments:account")).status_code == 302


def test_password_change(world: MembersWorld) -> None:
    client = world.client("author")
    refused = client.post(
        reverse("tournaments:password-change"),
        {"old_password": "nope", "new_password1": "x", "new_password2": "x"},
    )
    assert "incorrect" in error_next_to(refused.content.decode(), "old_password")
    done = client.post(
        reverse("tournaments:password-change"),
        {
            "old_password": "author-secret-pw",
            "new_password1": "Another-long-pw-1",
            "new_password2": "Another-long-pw-1",
        },
    )
    assert done.status_code == 302
    user = User.objects.get(username="author")
    assert user.check_password("Another-long-pw-1")


def test_password_reset_by_mail(world: MembersWorld, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = User.objects.get(username="author")
    user.email = "author@example.org"
    user.save(update_fields=["email"])
    client = Client()
    sent = client.post(reverse("tournaments:password-reset"), {"email": "author@example.org"})
    assert sent.status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", mail.outbox[0].body)
    assert link is not None
    form = client.get(link.group(1), follow=True)
    assert b"Set a new password" in form.content
    done = client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link.group(1),
        {"new_password1": "Reset-long-pw-77", "new_password2": "Reset-long-pw-77"},
    )
    assert done.status_code == 302
    user.refresh_from_db()
    assert user.check_password("Reset-long-pw-77")


def test_no_reset_mail_without_an_email_url(world: MembersWorld, settings: Any) -> None:
    settings.TAPIS_PASSWORD_RESET = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    page = Client().post(reverse("tournaments:password-reset"), {"email": "a@example.org"})
    assert b"This service sends no e-mail" in page.content
    assert mail.outbox == []


def test_token_made_shown_once_and_revoked(world: MembersWorld) -> None:
    client = world.client("author")
    made = client.post(reverse("tournaments:token-create"))
    assert made.status_code == 302
    assert b"api-token" not in made.content
    key = TOKEN_SHOWN.search(client.get(made["Location"]).content.decode())
    assert key is not None
    assert TOKEN_SHOWN.search(client.get(made["Location"], follow=True).content.decode()) is None
    api = Client(HTTP_AUTHORIZATION=f"Token {key.group(1)}")
    assert api.get("/api/v1/auth/me/").status_code == 200
    client.post(reverse("tournaments:token-revoke"))
    assert api.get("/api/v1/auth/me/").status_code == 401
    assert not ApiToken.objects.filter(user__username="author").exists()


def test_a_new_token_waits_a_few_minutes_and_never_in_the_session(
    world: MembersWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = world.client("author")
    made = client.post(reverse("tournaments:token-create"))
    session = json.dumps(dict(client.session.items()))
    key = TOKEN_SHOWN.search(client.get(made["Location"]).content.decode())
    assert key is not None
    assert key.group(1) not in session  # the session held a handle, not the token

    # Not shown after its lifetime: the cache forgot it (the clock moved on past it).
    made = client.post(reverse("tournaments:token-create"))
    later = time.time() + accounts_pages.NEW_TOKEN_SECONDS + 1
    monkeypatch.setattr(time, "time", lambda: later)
    page = client.get(made["Location"], follow=True).content.decode()
    assert TOKEN_SHOWN.search(page) is None
    assert "shown once, when it is made (for 5 minutes)" in page


def test_account_lists_bots_entries_and_tournaments(world: MembersWorld) -> None:
    author = world.client("author").get(reverse("tournaments:account")).content.decode()
    assert "alpha" in author
    assert "beta" in author
    assert "Finished cup" in author
    assert "Organising tournaments needs the organiser right" in author
    organiser = world.client("organiser").get(reverse("tournaments:account")).content.decode()
    for name in ("Draft cup", "Open cup", "Running cup", "Finished cup"):
        assert name in organiser
    assert "Create a tournament" in organiser


# ---------------------------------------------------------------------------------------------
# The organiser right
# ---------------------------------------------------------------------------------------------


def test_the_organisers_group_comes_from_the_migration_with_its_permissions(db: None) -> None:
    group = Group.objects.get(name=ORGANISERS_GROUP)
    codenames = set(group.permissions.values_list("codename", flat=True))
    assert {"add_tournament", "change_tournament", "view_tournament"} <= codenames


def test_manage_py_organiser_grants_and_removes(world: MembersWorld) -> None:
    user = User.objects.get(username="other")
    assert not is_organiser(user)
    call_command("organiser", "other")
    assert is_organiser(User.objects.get(pk=user.pk))
    call_command("organiser", "other", "--remove")
    assert not is_organiser(User.objects.get(pk=user.pk))


def test_the_admin_action_grants_the_right(world: MembersWorld) -> None:
    staff = make_user("boss", staff=True)
    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    other = User.objects.get(username="other")
    response = client.post(
        "/admin/auth/user/", {"action": "grant_organiser", "_selected_action": [other.pk]}
    )
    assert response.status_code == 302
    assert is_organiser(User.objects.get(pk=other.pk))


# ---------------------------------------------------------------------------------------------
# Bot authors
# ---------------------------------------------------------------------------------------------


def test_create_a_bot_and_a_refused_name_next_to_it(world: MembersWorld) -> None:
    client = world.client("author")
    refused = client.post(
        reverse("tournaments:bot-new"),
        {"name": "alpha", "game": "hearts", "description": "kept"},
    )
    html = refused.content.decode()
    assert "you already have a bot named &#x27;alpha&#x27;" in error_next_to(html, "name")
    assert "kept</textarea>" in html
    made = client.post(reverse("tournaments:bot-new"), {"name": "delta", "game": "roi"})
    bot = Bot.objects.get(owner__username="author", name="delta")
    assert made["Location"] == reverse("tournaments:my-bot", args=[bot.pk])
    assert bot.game == "roi"


def test_upload_refusals_are_shown_next_to_the_file(world: MembersWorld) -> None:
    client = world.client("author")
    url = reverse("tournaments:my-bot", args=[world.bot.pk])
    wrong = client.post(url, {"file": SimpleUploadedFile("notes.txt", b"hello")})
    assert wrong.status_code == 400
    shown = error_next_to(wrong.content.decode(), "file")
    assert "a bot is a source file (.py .js .c" in shown
    assert "or a .zip package" in shown
    broken = client.post(url, {"file": SimpleUploadedFile("bot.zip", b"not a zip")})
    assert broken.status_code == 400
    assert error_next_to(broken.content.decode(), "file")
    assert world.bot.versions.count() == 1


def test_an_author_over_the_upload_limit_is_told_next_to_the_file(
    world: MembersWorld, settings: Any
) -> None:
    settings.TAPIS_UPLOADS_PER_HOUR = 1
    client = world.client("author")
    url = reverse("tournaments:my-bot", args=[world.bot.pk])
    world.bot.versions.update(created_at=timezone.now())
    refused = client.post(url, {"file": SimpleUploadedFile("mine.py", BOT_FILE.read_bytes())})
    assert refused.status_code == 400
    shown = error_next_to(refused.content.decode(), "file")
    assert "you uploaded 1 version in the last hour, the most allowed" in shown
    assert world.bot.versions.count() == 1


def test_an_upload_is_pending_and_its_page_polls_until_validated(world: MembersWorld) -> None:
    client = world.client("author")
    url = reverse("tournaments:my-bot", args=[world.bot.pk])
    response = client.post(url, {"file": SimpleUploadedFile("mine.py", BOT_FILE.read_bytes())})
    version = world.bot.versions.get(number=2)
    assert version.status == BotVersion.Status.PENDING
    assert response["Location"] == reverse("tournaments:my-version", args=[world.bot.pk, 2])
    page = client.get(response["Location"]).content.decode()
    assert "waiting for a worker" in page
    status_url = reverse("tournaments:my-version-status", args=[world.bot.pk, 2])
    assert f'hx-get="{status_url}"' in page
    assert client.get(status_url).status_code == 200  # keep polling
    # Validated (here, in this process, in the sandbox): the fragment stops the polling.
    services.bot_version_validate(version_id=version.pk)
    done = client.get(status_url)
    assert done.status_code == 286
    text = done.content.decode()
    assert "Validation report" in text
    assert "played" in text
    assert "decisions cleanly" in text


def test_the_entry_form_lists_only_what_may_enter(world: MembersWorld) -> None:
    client = world.client("author")
    url = reverse("tournaments:tournament-enter", args=[world.open.pk])
    html = client.get(url).content.decode()
    assert ready_version(world.bot).label in html
    assert "beta v1" not in html  # pending
    response = client.post(url, {"version": ready_version(world.bot).pk})
    assert response.status_code == 302
    assert Entry.objects.filter(tournament=world.open, version__bot=world.bot).exists()
    # One entry per author: the form offers nothing more, and says why.
    again = client.get(url).content.decode()
    assert "one entry per author" in again
    assert f"You have entered <strong>{ready_version(world.bot).label}</strong>" in again
    assert 'id="id_version"' not in again


def test_withdraw_before_the_start_and_not_after_the_end(world: MembersWorld) -> None:
    client = world.client("other")
    entry = world.open.entries.get(version__bot=world.other_bot)
    client.post(reverse("tournaments:entry-withdraw", args=[entry.pk]))
    entry.refresh_from_db()
    assert entry.withdrawn
    finished = world.finished.entries.get(version__bot=world.other_bot)
    page = client.post(reverse("tournaments:entry-withdraw", args=[finished.pk]), follow=True)
    assert b"the tournament is finished" in page.content
    finished.refresh_from_db()
    assert not finished.withdrawn


def test_the_seat_log_page_shows_the_log_faults_times_and_the_cut(world: MembersWorld) -> None:
    seat = world.author_seat(world.table_done)
    seat.log = "thinking...\n" + LOG_CUT_NOTE.format(cap=10, dropped=5)
    seat.save(update_fields=["log"])
    url = reverse("tournaments:seat-log", args=[world.table_done.pk, seat.position])
    html = world.client("author").get(url).content.decode()
    assert "thinking..." in html
    assert "The log was cut" in html
    assert "Decisions" in html
    assert str(seat.decisions) in html
    assert f"/api/v1/tables/{world.table_done.pk}/seats/{seat.position}/log/" in html
    hidden = world.client("author").get(
        reverse(
            "tournaments:seat-log", args=[world.failed.pk, world.author_seat(world.failed).position]
        )
    )
    assert hidden.status_code == 403
    assert b"shown once it is finished" in hidden.content
    mine = world.client("author").get(reverse("tournaments:my-bot", args=[world.bot.pk]))
    assert url in mine.content.decode()


# ---------------------------------------------------------------------------------------------
# Organisers
# ---------------------------------------------------------------------------------------------


def roi_form(**changes: Any) -> dict[str, Any]:
    data = {
        "game": "roi",
        "name": "Roi night",
        "preset": "classic",
        "rounds": 1,
        "deals_per_table": 10,
        "seating": "random",
        "decision_seconds": 1,
        "bank_seconds": 10,
        "startup_seconds": 5,
        "max_faults": 3,
        "house_bot": "heuristic",
    }
    data.update(changes)
    return data


def test_the_form_is_built_from_the_engines_options(world: MembersWorld) -> None:
    html = world.client("organiser").get(reverse("tournaments:tournament-new") + "?game=hearts")
    text = html.content.decode()
    assert '<select name="option_pass_schedule"' in text
    assert '<option value="left-right-across">' in text
    assert 'name="option_pass_count"' in text
    assert "an integer from 1 to 5" in text
    assert 'name="rounds"' in text
    assert 'min="1"' in text
    assert 'max="100"' in text
    assert "option_players" not in text
    assert "option_fixed_deals" not in text


def test_the_forms_options_read_as_words_for_people(world: MembersWorld) -> None:
    html = world.client("organiser").get(reverse("tournaments:tournament-new") + "?game=hearts")
    text = html.content.decode()
    assert '<label for="id_option_td_bonus">TD bonus</label>' in text
    assert '<label for="id_option_pass_count">Pass count</label>' in text
    # A yes-or-no option's default as the form shows it, and the presets that set another.
    assert "Default: Off (classic-fr, classic-fr-sourdine, two-player: On)." in text
    assert '<option value="true">On</option>' in text
    assert "Default: 100 (classic-fr, classic-fr-sourdine, two-player: 50)." in text
    assert "Default: False" not in text
    assert "td bonus" not in text


def test_the_engines_refusals_are_shown_next_to_their_option(world: MembersWorld) -> None:
    client = world.client("organiser")
    url = reverse("tournaments:tournament-new")
    roi = client.post(url, roi_form(deals_per_table=7))
    assert roi.status_code == 400
    message = error_next_to(roi.content.decode(), "deals_per_table")
    assert "10" in message  # the Roi is played in whole games of 10 deals
    assert 'value="Roi night"' in roi.content.decode()  # kept
    hearts = client.post(
        url,
        {**roi_form(game="hearts", preset="whisthub", deals_per_table=4), "option_pass_count": 9},
    )
    assert "pass_count" in error_next_to(hearts.content.decode(), "option_pass_count")
    bound = client.post(url, roi_form(rounds=0))
    assert "rounds must be from 1 to 100" in error_next_to(bound.content.decode(), "rounds")
    assert not Tournament.objects.filter(name="Roi night").exists()
    made = client.post(url, roi_form(option_queen_penalty=12))
    tournament = Tournament.objects.get(name="Roi night")
    assert made["Location"] == reverse("tournaments:organise", args=[tournament.pk])
    assert tournament.status == Tournament.Status.DRAFT
    assert tournament.options == {"queen_penalty": 12}


def test_open_start_twice_and_cancel(world: MembersWorld) -> None:
    client = world.client("organiser")
    act = lambda t, a: client.post(  # noqa: E731
        reverse("tournaments:organise-action", args=[t.pk, a]), follow=True
    ).content.decode()
    assert "Registration is open." in act(world.draft, "open")
    assert "The tournament is started" in act(world.open, "start")
    second = act(world.open, "start")
    assert "Not done: the tournament is running; only an open one can start." in second
    assert Table.objects.filter(tournament=world.open).count() == 1  # seated once
    assert "The tournament is cancelled." in act(world.draft, "cancel")


def test_remove_an_entry_with_a_reason(world: MembersWorld) -> None:
    entry = world.open.entries.get(version__bot=world.other_bot)
    page = world.client("organiser").post(
        reverse("tournaments:organise-remove-entry", args=[world.open.pk, entry.pk]),
        {"how": "disqualify", "reason": "plays for a friend"},
        follow=True,
    )
    assert "disqualify done" in page.content.decode()
    entry.refresh_from_db()
    assert entry.disqualified
    assert entry.flag_reason == "plays for a friend"
    assert "disqualified: plays for a friend" in page.content.decode()


def test_a_failed_table_is_shown_with_its_reason_and_re_run(world: MembersWorld) -> None:
    client = world.client("organiser")
    page = client.get(reverse("tournaments:organise", args=[world.running.pk])).content.decode()
    assert "RuntimeError: the judge fell over" in page
    assert "Re-run table 1" in page
    done = client.post(
        reverse("tournaments:organise-rerun", args=[world.running.pk, world.failed.pk]),
        follow=True,
    )
    assert "is queued again" in done.content.decode()
    world.failed.refresh_from_db()
    assert world.failed.status == Table.Status.PENDING
    assert world.failed.attempts == 0
    again = client.post(
        reverse("tournaments:organise-rerun", args=[world.running.pk, world.failed.pk]),
        follow=True,
    )
    assert "is pending: only a failed table can be re-run." in again.content.decode()


def settings_form_values(tournament: Tournament) -> dict[str, Any]:
    """What the settings page's form sends when nothing is changed: its initial values."""
    from tournaments import member_selectors
    from tournaments.pages.forms import TournamentSettingsForm

    game = member_selectors.tournament_game(tournament=tournament)
    form = TournamentSettingsForm(tournament=tournament, game=game)
    values = {name: form[name].value() for name in form.fields}
    return {
        name: value.strftime("%Y-%m-%dT%H:%M") if hasattr(value, "strftime") else value
        for name, value in values.items()
        if value not in (None, False)
    }


def test_settings_sent_back_unchanged_change_nothing(world: MembersWorld) -> None:
    client = world.client("organiser")
    draft = Tournament.objects.get(pk=world.draft.pk)  # as in the database
    services.tournament_update(
        tournament=draft,
        table_size=5,
        preset="classic-fr",
        options={"pass_count": 2},
        place_points=[9, 5, 3, 1, 0],
        registration_closes_at=timezone.now() + timedelta(days=2),
    )
    draft.refresh_from_db()
    before = TournamentSettings.of(draft)
    url = reverse("tournaments:organise-settings", args=[draft.pk])
    page = client.get(url).content.decode()
    assert 'value="9, 5, 3, 1, 0"' in page
    assert 'name="option_pass_count" value="2"' in page
    saved = client.post(url, settings_form_values(draft))
    assert saved.status_code == 302, error_texts(saved.content.decode())
    draft.refresh_from_db()
    assert TournamentSettings.of(draft).replace(registration_closes_at=None) == before.replace(
        registration_closes_at=None
    )
    assert abs(draft.registration_closes_at - before.registration_closes_at) < timedelta(
        minutes=1
    )  # the form's precision


@pytest.mark.parametrize(
    ("game", "preset", "deals", "options"),
    [
        ("hearts", "classic-fr", 4, {"td_bonus": True, "moon": "self-minus-26", "pass_count": 2}),
        ("hearts", "two-player", 4, {"td_bonus": False}),
        ("roi", "classic", 10, {"floor_at_zero": False, "queen_penalty": 12}),
        ("dutch", "classic", 2, {"decks": 2, "players": 5}),
    ],
)
def test_every_games_settings_go_round_the_form_unchanged(
    world: MembersWorld, game: str, preset: str, deals: int, options: dict[str, Any]
) -> None:
    """Choices, booleans, numbers and a table size that is not the preset's: the form shows
    each as the organiser chose it, and sends it back as it was."""
    tournament = services.tournament_create(
        organiser=world.users["organiser"],
        settings=TournamentSettings(
            name="Round trip", game=game, preset=preset, rounds=2, deals_per_table=deals,
            options=options,
        ),
    )  # fmt: skip
    before = TournamentSettings.of(tournament)
    url = reverse("tournaments:organise-settings", args=[tournament.pk])
    saved = world.client("organiser").post(url, settings_form_values(tournament))
    assert saved.status_code == 302, error_texts(saved.content.decode())
    tournament.refresh_from_db()
    assert TournamentSettings.of(tournament) == before


def error_texts(html: str) -> list[str]:
    return re.findall(r'role="alert">(.*?)</', html, re.S)


def test_settings_change_checked_as_at_creation_values_kept(world: MembersWorld) -> None:
    client = world.client("organiser")
    draft = Tournament.objects.get(pk=world.draft.pk)  # as in the database
    seed, commitment = draft.seed, draft.commitment
    url = reverse("tournaments:organise-settings", args=[draft.pk])
    data = settings_form_values(draft)
    refused = client.post(url, {**data, "name": "Bigger cup", "option_pass_count": 9})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "pass_count" in error_next_to(html, "option_pass_count")  # the engine's words
    assert 'value="Bigger cup"' in html
    assert 'name="option_pass_count" value="9"' in html
    draft.refresh_from_db()
    assert draft.name == "Draft cup"
    bound = client.post(url, {**data, "rounds": 0})
    assert "rounds must be from 1 to 100" in error_next_to(bound.content.decode(), "rounds")
    saved = client.post(
        url, {**data, "name": "Bigger cup", "rounds": 5, "option_pass_count": 2}, follow=True
    )
    assert "The settings are saved." in saved.content.decode()
    draft.refresh_from_db()
    assert (draft.name, draft.rounds, draft.options) == ("Bigger cup", 5, {"pass_count": 2})
    assert (draft.seed, draft.commitment) == (seed, commitment)


def test_an_open_tournament_changes_with_its_entries_kept(world: MembersWorld) -> None:
    client = world.client("organiser")
    opened = Tournament.objects.get(pk=world.open.pk)
    entries = set(opened.entries.values_list("pk", flat=True))
    url = reverse("tournaments:organise-settings", args=[opened.pk])
    data = {**settings_form_values(opened), "deals_per_table": 8}
    assert client.post(url, data).status_code == 302
    opened.refresh_from_db()
    assert opened.deals_per_table == 8
    assert set(opened.entries.values_list("pk", flat=True)) == entries


def test_settings_that_no_longer_pass_can_still_be_changed(
    world: MembersWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A limit lowered since the tournament was made (the longest table's time): the page
    offers the form, whose refusal says what to change."""
    from tournaments import conf

    monkeypatch.setattr(conf, "max_table_budget", lambda: 10.0)
    client = world.client("organiser")
    draft = Tournament.objects.get(pk=world.draft.pk)
    url = reverse("tournaments:organise-settings", args=[draft.pk])
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="rounds"' in page.content.decode()
    refused = client.post(url, settings_form_values(draft))
    assert refused.status_code == 400
    assert "at most 10 s is allowed" in error_next_to(refused.content.decode(), "deals_per_table")


def test_settings_no_longer_change_once_started(world: MembersWorld) -> None:
    client = world.client("organiser")
    running = Tournament.objects.get(pk=world.running.pk)
    url = reverse("tournaments:organise-settings", args=[running.pk])
    page = client.get(url)
    assert page.status_code == 409
    assert "the tournament is running; only a draft or open one can change" in (
        page.content.decode()
    )
    assert 'name="rounds"' not in page.content.decode()
    rounds = running.rounds
    sent = client.post(url, {**settings_form_values(running), "rounds": rounds + 1})
    assert sent.status_code == 409
    running.refresh_from_db()
    assert running.rounds == rounds
    organise = client.get(reverse("tournaments:organise", args=[running.pk])).content.decode()
    assert "Change its settings" not in organise


def test_an_action_sent_by_htmx_answers_the_page_body_and_its_message(
    world: MembersWorld,
) -> None:
    client = world.client("organiser")
    url = reverse("tournaments:organise-action", args=[world.draft.pk, "open"])
    answer = client.post(url, headers={"HX-Request": "true"})
    assert answer.status_code == 200
    html = answer.content.decode()
    assert '<div id="messages" hx-swap-oob="innerHTML">' in html
    assert "Registration is open." in html
    assert "Start the tournament" in html  # the page's body as it is now
    assert "<html" not in html
    again = client.post(url, headers={"HX-Request": "true"}).content.decode()
    assert "Not done: the tournament is open; this needs it to be draft." in again
    # Without htmx: a redirect to the page, which shows the message once.
    plain = client.post(url)
    assert plain.status_code == 302
    assert plain["Location"] == reverse("tournaments:organise", args=[world.draft.pk])


def test_a_failed_tables_reason_is_its_last_line_with_the_traceback_folded(
    world: MembersWorld,
) -> None:
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/srv/tapis/judge/runner.py", line 228, in run_table\n'
        "games.errors.OptionError: unknown option 'jokers' for hearts\n"
    )
    Table.objects.filter(pk=world.failed.pk).update(error=traceback)
    page = world.client("organiser").get(reverse("tournaments:organise", args=[world.running.pk]))
    html = page.content.decode()
    assert (
        '<p class="failure">games.errors.OptionError: unknown option &#x27;jokers&#x27; for '
        "hearts</p><details><summary>What the worker recorded</summary>"
    ) in html
    assert "/srv/tapis/judge/runner.py" in html


def test_the_progress_polling_ends_with_the_whole_body_once_over(world: MembersWorld) -> None:
    client = world.client("organiser")
    running = client.get(reverse("tournaments:organise-progress", args=[world.running.pk]))
    assert running.status_code == 200
    assert "HX-Retarget" not in running.headers
    assert "Round 1 of" in running.content.decode()
    over = client.get(reverse("tournaments:organise-progress", args=[world.finished.pk]))
    assert over.status_code == 286  # htmx stops polling
    assert (over.headers["HX-Retarget"], over.headers["HX-Reswap"]) == (
        "#organise-body",
        "innerHTML",
    )
    html = over.content.decode()
    assert "finished" in html
    assert "Cancel the tournament" not in html
    assert ">Remove<" not in html
    assert 'id="organise-progress"' in html
    assert "hx-get" not in html


def test_a_tournament_cancelled_before_its_start_shows_no_progress(world: MembersWorld) -> None:
    client = world.client("organiser")
    client.post(reverse("tournaments:organise-action", args=[world.draft.pk, "cancel"]))
    html = client.get(reverse("tournaments:organise", args=[world.draft.pk])).content.decode()
    assert "Progress" not in html
    assert 'id="organise-state"><span class="status status-cancelled">' in html


def test_staff_add_a_tournament_in_the_admin_with_the_same_checks(world: MembersWorld) -> None:
    staff = make_user("root", staff=True)
    staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    assert client.get("/admin/tournaments/tournament/add/").status_code == 200
    data = {
        "name": "Admin cup",
        "game": "roi",
        "preset": "classic",
        "options": "{}",
        "table_size": 4,
        "rounds": 1,
        "deals_per_table": 7,
        "seating": "random",
        "place_points": "[]",
        "decision_seconds": 1,
        "bank_seconds": 10,
        "startup_seconds": 5,
        "max_faults": 3,
        "house_bot": "heuristic",
        **{
            f"{prefix}-{key}": value
            for prefix in ("entries", "round_set", "tables")
            for key, value in (("TOTAL_FORMS", 0), ("INITIAL_FORMS", 0))
        },
    }
    refused = client.post("/admin/tournaments/tournament/add/", data)
    assert refused.status_code == 200
    assert not Tournament.objects.filter(name="Admin cup").exists()
    assert b"10" in refused.content
    client.post("/admin/tournaments/tournament/add/", {**data, "deals_per_table": 10})
    made = Tournament.objects.get(name="Admin cup")
    assert made.organiser == staff
    assert made.commitment
    assert made.status == Tournament.Status.DRAFT
