"""The site's pages through Django's test client: content, hidden information, permissions."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld
from tournaments.models import Deal, Table

pytestmark = pytest.mark.django_db


def routes(world: SiteWorld) -> list[str]:
    table = Table.objects.filter(tournament=world.finished).order_by("pk").first()
    deal = Deal.objects.filter(table=table).order_by("pk").first()
    assert table is not None
    assert deal is not None
    bot_id = world.finished.entries.order_by("pk").first().version.bot_id  # type: ignore[union-attr]
    return [
        reverse("home"),
        reverse("tournaments:tournament-list"),
        reverse("tournaments:tournament-list") + "?status=finished&game=hearts&page=1",
        reverse("tournaments:tournament-detail", args=[world.finished.pk]),
        reverse("tournaments:tournament-detail", args=[world.open.pk]),
        reverse("tournaments:tournament-audit", args=[world.finished.pk]),
        reverse("tournaments:table-detail", args=[table.pk]),
        reverse("tournaments:deal-audit", args=[deal.pk]),
        reverse("tournaments:bot-detail", args=[bot_id]),
        reverse("tournaments:rankings"),
        reverse("tournaments:docs"),
        reverse("tournaments:docs-page", args=["protocol"]),
    ]


def test_every_page_answers(site_world: SiteWorld, client: Client) -> None:
    for url in routes(site_world):
        response = client.get(url)
        assert response.status_code == 200, url
        assert b'<main id="main"' in response.content, url
