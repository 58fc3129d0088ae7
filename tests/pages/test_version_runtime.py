"""A version's runtime and toolchain are shown by the API, the admin, the public bot page and
the author's own pages (issue 16)."""

from __future__ import annotations

import hashlib

import pytest
from django.test import Client
from django.urls import reverse

from tests.api.conftest import client_for, make_user
from tournaments import services
from tournaments.models import BotVersion

pytestmark = pytest.mark.django_db

TOOLCHAIN = "gcc (Debian 12.2.0-14) 12.2.0"


@pytest.fixture
def version() -> BotVersion:
    """A ready C version, as its validation leaves it (runtime and toolchain of its build)."""
    author = make_user("c-author")
    bot = services.bot_create(owner=author, name="c-bot", game="hearts")
    data = b"int main(void) { return 0; }\n"
    return BotVersion.objects.create(
        bot=bot,
        number=1,
        content=data,
        filename="bot.c",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        status=BotVersion.Status.READY,
        report={"ok": True},
        runtime="c",
        toolchain=TOOLCHAIN,
    )


def test_the_api_shows_the_runtime_and_toolchain(version: BotVersion) -> None:
    client = client_for(version.bot.owner)
    body = client.get(f"/api/v1/bots/{version.bot_id}/versions/1/").json()
    assert body["runtime"] == "c"
    assert body["toolchain"] == TOOLCHAIN
    listed = client.get(f"/api/v1/bots/{version.bot_id}/versions/").json()
    listed = listed.get("results", listed)
    assert [(v["runtime"], v["toolchain"]) for v in listed] == [("c", TOOLCHAIN)]


def test_the_public_bot_page_shows_them(version: BotVersion, client: Client) -> None:
    page = client.get(reverse("tournaments:bot-detail", args=[version.bot_id]))
    assert page.status_code == 200
    text = page.content.decode()
    assert f'<small title="toolchain">{TOOLCHAIN}</small>' in text
    assert "<td>c<br>" in text


def test_the_authors_pages_show_them(version: BotVersion, client: Client) -> None:
    client.force_login(version.bot.owner)
    bot_page = client.get(reverse("tournaments:my-bot", args=[version.bot_id])).content.decode()
    assert '<th scope="col">Runtime</th>' in bot_page
    assert f'c<br><small title="toolchain">{TOOLCHAIN}</small>' in bot_page
    version_page = client.get(
        reverse("tournaments:my-version", args=[version.bot_id, 1])
    ).content.decode()
    assert "<dt>Runtime</dt><dd>c</dd>" in version_page
    assert f"<dt>Toolchain</dt><dd>{TOOLCHAIN}</dd>" in version_page


def test_the_admin_shows_them(version: BotVersion, admin_client: Client) -> None:
    listing = admin_client.get("/admin/tournaments/botversion/").content.decode()
    assert '<td class="field-runtime">c</td>' in listing
    change = admin_client.get(
        f"/admin/tournaments/botversion/{version.pk}/change/"
    ).content.decode()
    assert TOOLCHAIN in change
    bot = admin_client.get(f"/admin/tournaments/bot/{version.bot_id}/change/").content.decode()
    inline = " ".join(bot.split())  # the inline's cells, whitespace aside
    assert '<td class="field-runtime"> <p>c</p> </td>' in inline
    assert f'<td class="field-toolchain"> <p>{TOOLCHAIN}</p> </td>' in inline
