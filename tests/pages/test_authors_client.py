"""Issue 22, bot authors, through Django's test client: a version's page shows what its
validation found (the compiler's messages, only the parts that happened), and a refusal says
which limit was broken, where."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.api.conftest import builtin_bot, enter, make_tournament, make_user
from tests.tournaments.factories import BOTS_DIR
from tournaments import services
from tournaments.models import BotVersion


def _validated(filename: str, source: bytes, *, game: str = "hearts") -> BotVersion:
    author = make_user("author")
    bot = services.bot_create(owner=author, name="mine", game=game)
    version = services.bot_version_create(bot=bot, content=source, filename=filename)
    return services.bot_version_validate(version_id=version.pk)


def _page(version: BotVersion) -> str:
    client = Client()
    client.force_login(version.bot.owner)
    url = reverse("tournaments:my-version", args=[version.bot_id, version.number])
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_a_failed_build_shows_the_compilers_messages_and_no_table(db: None) -> None:
    version = _validated("bot.c", b"int main(void) { return undeclared_thing; }\n")
    assert version.status == BotVersion.Status.REJECTED
    html = _page(version)
    assert "What the compiler said" in html
    assert "undeclared_thing" in html  # gcc's message, with the name it did not know
    assert "error:" in html
    # No table was played: no table line, no decision figures, no stderr of a bot.
    for absent in ("<dt>Table</dt>", "Decisions played", "Decision time", "preset :"):
        assert absent not in html


def test_a_timeout_names_the_limit_and_the_bank(db: None) -> None:
    version = _validated("sleeper.py", (BOTS_DIR / "sleeper.py").read_bytes())
    assert version.status == BotVersion.Status.REJECTED
    reason = version.report["reason"]
    assert reason == (
        "timeout at deal 1, decision 1: no answer within the limit of 1 s a decision"
        " plus the bank of 5 s"
    )
    html = _page(version)
    assert reason in html


def test_a_crash_names_the_deal_and_the_decision(db: None) -> None:
    version = _validated("crash.py", (BOTS_DIR / "crash.py").read_bytes())
    assert version.status == BotVersion.Status.REJECTED
    assert version.report["reason"].startswith("crash at deal 1, decision 3: "), version.report
    assert version.report["reason"] in _page(version)


def test_sign_up_is_offered_only_while_the_service_takes_accounts(db: None, settings: Any) -> None:
    signup = reverse("tournaments:signup")
    settings.TAPIS_ALLOW_SIGNUP = True
    home = Client().get("/").content.decode()
    assert home.count(f'href="{signup}"') == 2  # the navigation and the home page
    form = Client().get(signup).content.decode()
    # The password's rules, before any submit, and read with the field (aria-describedby).
    rules = re.search(r'<p class="help small muted" id="id_password_helptext">(.*?)</p>', form)
    assert rules
    assert "at least 8 characters" in rules.group(1)
    assert 'aria-describedby="id_password_helptext"' in form
    settings.TAPIS_ALLOW_SIGNUP = False
    assert f'href="{signup}"' not in Client().get("/").content.decode()


def test_the_enter_block_is_for_a_member_and_an_open_tournament(db: None) -> None:
    organiser = make_user("host", organiser=True)
    cup = make_tournament(organiser, name="Open cup")
    draft = make_tournament(organiser, open_it=False, name="Draft cup")
    member = Client()
    member.force_login(make_user("author"))
    url = reverse("tournaments:tournament-detail", args=[cup.pk])
    assert 'id="tournament-enter"' not in Client().get(url).content.decode()
    shown = member.get(url).content.decode()
    assert 'id="tournament-enter"' in shown
    assert "until the organiser starts the tournament" in shown  # no deadline set
    assert "You have no ready Hearts" in shown
    services.tournament_open(tournament=draft)
    services.tournament_cancel(tournament=draft)
    gone = member.get(reverse("tournaments:tournament-detail", args=[draft.pk]))
    assert 'id="tournament-enter"' not in gone.content.decode()


# ---------------------------------------------------------------------------------------------
# Organisers
# ---------------------------------------------------------------------------------------------


def _organiser() -> Client:
    client = Client()
    client.force_login(make_user("olga", organiser=True))
    return client


def test_the_create_form_lists_every_refusal_at_once_at_the_top(db: None) -> None:
    form = {
        "game": "hearts",
        "name": "Every mistake",
        "preset": "whisthub",
        "rounds": 0,  # a bound
        "deals_per_table": 4,
        "seating": "random",
        "place_points": "3, 2, x",  # the form's own parsing
        "decision_seconds": 1,
        "bank_seconds": 10,
        "startup_seconds": 5,
        "max_faults": 3,
        "house_bot": "heuristic",
        "registration_opens_at": "2030-01-02T10:00",
        "registration_closes_at": "2030-01-01T10:00",  # before it opens
        "option_pass_count": 9,  # the engine's refusal
    }
    response = _organiser().post(reverse("tournaments:tournament-new"), form)
    assert response.status_code == 400
    html = response.content.decode()
    summary = html[html.index('id="form-errors"') : html.index("</ul>", html.index("form-errors"))]
    assert "4 settings to fix" in summary
    for field in ("rounds", "place_points", "registration_closes_at", "option_pass_count"):
        assert f'href="#id_{field}"' in summary
        assert f'id="id_{field}_error"' in html  # and next to the field itself
    assert "rounds must be from 1 to 100" in summary
    assert "pass_count" in summary
    assert "registration must close after it opens" in summary


def test_the_create_forms_help_reads_as_help(db: None) -> None:
    html = _organiser().get(reverse("tournaments:tournament-new") + "?game=hearts")
    text = html.content.decode()
    helps = re.findall(r'<p class="help small muted"[^>]*>(.*?)</p>', text, re.S)
    assert "From 1 to 100." in helps  # rounds
    assert not [h for h in helps if "must" in h]
    assert 'id="form-errors"' not in text


def test_a_swiss_tournament_whose_entries_fill_one_table_is_warned(db: None) -> None:
    client = _organiser()
    olga = User.objects.get(username="olga")
    swiss = make_tournament(olga, name="Swiss", seating="swiss", rounds=3)
    for i in range(4):
        enter(swiss, builtin_bot(make_user(f"a{i}"), f"bot{i}"))
    url = reverse("tournaments:organise", args=[swiss.pk])
    assert "every round would be the same table" in client.get(url).content.decode()
    enter(swiss, builtin_bot(make_user("a4"), "bot4"))  # 5 entries: two tables
    assert "every round would be the same table" not in client.get(url).content.decode()


# ---------------------------------------------------------------------------------------------
# Starting from the site alone: the example bots and the SDK
# ---------------------------------------------------------------------------------------------

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs"
SDK = DOCS_DIR.parent / "judge" / "sdk" / "tapis_bot.py"


def test_the_examples_guide_links_a_page_of_each_example(db: None) -> None:
    html = Client().get("/docs/examples/").content.decode()
    for folder in ("c", "cpp", "go", "java", "javascript", "python", "rust"):
        assert f'href="/docs/examples/{folder}/"' in html, folder


def test_each_example_is_shown_and_downloadable(db: None) -> None:
    client = Client()
    protocol = client.get("/docs/protocol/").content.decode()
    for folder in (p.name for p in DOCS_DIR.joinpath("examples").iterdir() if p.is_dir()):
        page = client.get(f"/docs/examples/{folder}/")
        assert page.status_code == 200, folder
        for source in DOCS_DIR.joinpath("examples", folder).rglob("*"):
            if source.is_file():
                name = source.relative_to(DOCS_DIR / "examples" / folder).as_posix()
                download = client.get(f"/docs/examples/{folder}/{name}")
                assert download.status_code == 200, name
                assert download.content == source.read_bytes()
                assert "attachment" in download["Content-Disposition"]
        # Its links to the protocol guide's sections (its runtime's) land on them.
        anchors = re.findall(r'href="/docs/protocol/#([\w-]+)"', page.content.decode())
        assert len(anchors) == 2, folder
        for anchor in anchors:
            assert f'id="{anchor}"' in protocol, (folder, anchor)
    python = client.get("/docs/examples/python/").content.decode()
    assert "tapis play --game hearts bot.py" in python
    assert 'href="/docs/examples/python/bot.py"' in python
    # A package example (a folder with tapis.json) is uploaded as a zip: the site makes it.
    rust = client.get("/docs/examples/rust/bot.zip")
    names = zipfile.ZipFile(io.BytesIO(rust.content)).namelist()
    assert sorted(names) == ["Cargo.toml", "src/main.rs", "tapis.json"]


def test_the_sdk_is_downloadable_from_the_protocol_guide(db: None) -> None:
    client = Client()
    assert 'href="/docs/sdk/tapis_bot.py"' in client.get("/docs/protocol/").content.decode()
    assert client.get("/docs/sdk/tapis_bot.py").content == SDK.read_bytes()


def test_nothing_else_of_the_repository_is_served(db: None) -> None:
    client = Client()
    for url in (
        "/docs/sdk/_tapis_zygote.py",
        "/docs/sdk/__init__.py",
        "/docs/examples/python/missing.py",
        "/docs/examples/python/../../../config/settings.py",
        "/docs/examples/python/%2e%2e/%2e%2e/README.md",
        "/docs/examples/nothing/",
        "/docs/examples/python/bot.zip",  # not a package
    ):
        assert client.get(url).status_code == 404, url


def test_the_enter_form_offers_nothing_outside_the_registration_window(db: None) -> None:
    organiser = make_user("host", organiser=True)
    soon = timezone.now() + timedelta(days=1)
    later = make_tournament(organiser, name="Later cup", registration_opens_at=soon)
    author = make_user("author")
    builtin_bot(author, "mine", "heuristic")
    client = Client()
    client.force_login(author)
    html = client.get(reverse("tournaments:tournament-enter", args=[later.pk])).content.decode()
    assert "Registration opens on" in html
    assert 'id="id_version"' not in html  # the service would refuse it
    detail = client.get(reverse("tournaments:tournament-detail", args=[later.pk]))
    assert "Enter a bot" not in detail.content.decode()
