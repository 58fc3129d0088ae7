"""Static files as the demo serves them (whitenoise, DEBUG off, from where they are) and as
production does (the collected, hashed files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client, override_settings

from tests.test_settings import PRODUCTION, dump_settings


@pytest.mark.django_db
def test_a_static_file_edited_while_the_demo_runs_is_sent_whole(tmp_path: Path) -> None:
    style = tmp_path / "edited.css"
    style.write_text("body { color: red; }\n")
    with override_settings(STATICFILES_DIRS=[tmp_path]):
        client = Client()  # its handler, whitenoise included, starts with the first request
        first = client.get("/static/edited.css")
        assert first.status_code == 200
        assert b"".join(first.streaming_content) == style.read_bytes()  # type: ignore[attr-defined]

        edited = "body { color: red; }\nmain { margin: 0 auto; max-width: 60rem; }\n"
        style.write_text(edited)
        again = client.get("/static/edited.css")
        assert again.status_code == 200
        # Its length now, not the one read at startup (a server sends that many bytes).
        assert int(again["Content-Length"]) == len(edited)
        assert b"".join(again.streaming_content).decode() == edited  # type: ignore[attr-defined]


def test_production_serves_the_collected_files_listed_at_startup() -> None:
    values = dump_settings(
        PRODUCTION, "WHITENOISE_AUTOREFRESH", "WHITENOISE_USE_FINDERS", "STORAGES"
    )
    assert values["WHITENOISE_AUTOREFRESH"] == "False"
    assert values["WHITENOISE_USE_FINDERS"] == "False"
    assert "CompressedManifestStaticFilesStorage" in str(values["STORAGES"])
