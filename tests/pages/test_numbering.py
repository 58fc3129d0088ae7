"""One numbering: a bot that crashes late is named at the same seat, deal and decision, counted
from 1, on the practice page, the table page, the seat log and by ``tapis verify`` on the
table's log (the API keeps indexes from 0: docs/api.md, "Numbers and indexes")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from games.cli import faults_in_words
from judge.cli import main
from tests.tournaments.factories import BotFactory, file_version
from tournaments import services
from tournaments.models import Seat, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

# late_crash.py dies at its 21st decision: the 7th of the second deal (14 decisions a deal).
WHERE = "deal 2, decision 21"


def test_a_late_crash_has_one_number_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = file_version(BotFactory.create(name="latecrash"), "late_crash")
    author = Client()
    author.force_login(version.bot.owner)
    url = reverse("tournaments:version-try", args=[version.bot_id, version.number])
    body = {"preset": "whisthub", "table_size": "", "deals": 3, "opponent": "random"}
    assert author.post(url, body).status_code == 302
    run = Tournament.objects.get(practice=True)
    services.tournament_run_here(tournament=run)
    seat = Seat.objects.get(table__tournament=run, entry__isnull=False)
    fault = seat.table.fault_set.get()
    assert (fault.deal_index, fault.decision) == (1, 20)  # the API's indexes

    practice = author.get(reverse("tournaments:practice", args=[run.pk])).content.decode()
    table = author.get(reverse("tournaments:table-detail", args=[seat.table_id])).content.decode()
    log_url = reverse("tournaments:seat-log", args=[seat.table_id, seat.position])
    seat_log = author.get(log_url).content.decode()
    for html in (practice, table, seat_log):
        assert f"crashed at {WHERE}" in html
        assert "deal 1, decision 20" not in html
        assert "at deal 1:" not in html
    # Its seat is numbered from 1 the same way on every page and by tapis verify.
    named = f"seat {seat.position + 1}"
    assert f"sat at {named}." in practice
    assert f"({named}) crashed" in table
    assert f"at {named}</h1>" in seat_log

    log = author.get(reverse("api:table-log", args=[seat.table_id])).json()
    path = tmp_path / "table.json"
    path.write_text(json.dumps(log))
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"crash at {WHERE}" in out, out
    assert f"seat {seat.position + 1} played by builtin:random after {WHERE}" in out, out
    assert faults_in_words(log) == out.strip().splitlines()[1:]
