"""The tests' live server serves the site, not the repository: Django's live server serves
MEDIA_ROOT at MEDIA_URL, and with both left empty that was every file of the working directory
at its path, ahead of the site's own answer (``/README.md``, ``/config/settings.py``)."""

from __future__ import annotations

from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest


@pytest.mark.django_db(transaction=True)
def test_the_live_server_serves_no_file_of_the_repository(live_server: Any) -> None:
    for path in ("/README.md", "/config/settings.py", "/pyproject.toml"):
        with pytest.raises(HTTPError) as refused:
            urlopen(live_server.url + path)
        assert refused.value.code == 404, path
        body = refused.value.read().decode()
        assert "Nothing here" in body  # the site's own page
