"""Settings come from the environment; production mode refuses the embedded defaults."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
STRONG_SECRET = "k3Jx9-vQ2mZ8pL4wR7tY1uI6oP0aS5dF3gH8jK2lZ9xC4vB7nM1qW6eR0tY5uI3oP8"
PRODUCTION = {
    "TAPIS_ENV": "production",
    "SECRET_KEY": STRONG_SECRET,
    "DEBUG": "false",
    "ALLOWED_HOSTS": "tapis.example.org",
    "DATABASE_URL": "postgresql://tapis:secret@db.example.org:5432/tapis",
    "CELERY_BROKER_URL": "redis://redis.example.org:6379/0",
    "CACHE_URL": "redis://redis.example.org:6379/2",
}


def clean_environment(environment: dict[str, str]) -> dict[str, str]:
    """The test run's environment without any Tapis variable, plus ``environment``.

    Also without ``DJANGO_ALLOW_ASYNC_UNSAFE``, which the browser tests' conftest sets in the
    whole test process and which ``check --deploy`` reports as an error."""
    inherited = settings.ENVIRONMENT_VARIABLES | {"DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in inherited}
    return {**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **environment}


def run_django(environment: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` after ``django.setup()`` in a fresh interpreter, with only the given
    Tapis variables set (none is inherited from the test run)."""
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{code}"],
        cwd=BASE_DIR,
        env=clean_environment(environment),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def dump_settings(environment: dict[str, str], *names: str) -> dict[str, object]:
    code = (
        "import json; from django.conf import settings\n"
        f"print(json.dumps({{n: str(getattr(settings, n)) for n in {list(names)!r}}}))"
    )
    completed = run_django(environment, code)
    assert completed.returncode == 0, completed.stderr
    values: dict[str, object] = json.loads(completed.stdout)
    return values


def test_production_refuses_the_embedded_defaults() -> None:
    completed = run_django({"TAPIS_ENV": "production"}, "")

    assert completed.returncode != 0
    assert "ImproperlyConfigured" in completed.stderr
    assert "refuses to start in production mode" in completed.stderr
    for problem in (
        "SECRET_KEY is not set",
        "ALLOWED_HOSTS is not set",
        "DATABASE_URL is not set",
        "CELERY_BROKER_URL is not set",
    ):
        assert problem in completed.stderr


def test_production_refuses_sqlite_files_broker_weak_secret_and_debug(tmp_path: Path) -> None:
    environment = {
        **PRODUCTION,
        "SECRET_KEY": "django-insecure-short",
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CELERY_BROKER_URL": "filesystem://localhost//",
    }

    completed = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env=clean_environment(environment),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert completed.returncode != 0
    for problem in (
        "SECRET_KEY is too weak",
        "DEBUG must be off",
        "DATABASE_URL points at SQLite",
        "CELERY_BROKER_URL is filesystem://",
        "CELERY_RESULT_BACKEND keeps results in files",
    ):
        assert problem in completed.stderr


def test_production_refuses_a_per_process_cache() -> None:
    completed = run_django({**PRODUCTION, "CACHE_URL": "locmem://"}, "")

    assert completed.returncode != 0
    assert "CACHE_URL is locmem://" in completed.stderr


def test_production_refuses_unsandboxed_bots() -> None:
    completed = run_django({**PRODUCTION, "TAPIS_SANDBOX": "none"}, "")

    assert completed.returncode != 0
    assert "TAPIS_SANDBOX=none" in completed.stderr


def test_unsandboxed_bots_need_an_explicit_allowance(tmp_path: Path) -> None:
    code = "from tournaments import conf\nprint(conf.sandbox_mode())"
    environment = {"TAPIS_VAR_DIR": str(tmp_path), "TAPIS_SANDBOX": "none"}

    refused = run_django(environment, code)
    allowed = run_django({**environment, "TAPIS_ALLOW_UNSANDBOXED": "1"}, code)

    assert refused.returncode != 0
    assert "unsandboxed bots are refused" in refused.stderr
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "none"
    assert "WITHOUT ANY ISOLATION" in allowed.stderr


def test_production_starts_with_real_services() -> None:
    values = dump_settings(PRODUCTION, "DEBUG", "ALLOWED_HOSTS", "CELERY_RESULT_BACKEND")

    assert values == {
        "DEBUG": "False",
        "ALLOWED_HOSTS": "['tapis.example.org']",
        "CELERY_RESULT_BACKEND": "redis://redis.example.org:6379/0",
    }
    completed = run_django(
        PRODUCTION,
        "from django.core.management import call_command; call_command('check')",
    )
    assert completed.returncode == 0, completed.stderr


def test_demo_generates_a_secret_once_and_keeps_everything_under_var(tmp_path: Path) -> None:
    environment = {"TAPIS_VAR_DIR": str(tmp_path)}
    names = ("SECRET_KEY", "DEBUG", "DATABASES", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")

    first = dump_settings(environment, *names)
    second = dump_settings(environment, *names)

    secret_file = tmp_path / "secret_key"
    assert first["SECRET_KEY"] == second["SECRET_KEY"] == secret_file.read_text().strip()
    assert len(str(first["SECRET_KEY"])) >= 50
    assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
    assert first["DEBUG"] == "False"  # the demo too: no debug page for its visitors
    assert str(tmp_path / "tapis.sqlite3") in str(first["DATABASES"])
    assert first["CELERY_BROKER_URL"] == "filesystem://localhost//"
    assert first["CELERY_RESULT_BACKEND"] == f"file://{tmp_path / 'results'}"
    assert (tmp_path / "broker" / "messages").is_dir()


def test_demo_uses_the_given_secret_and_urls(tmp_path: Path) -> None:
    environment = {
        "TAPIS_VAR_DIR": str(tmp_path),
        "SECRET_KEY": "given",
        "DATABASE_URL": "postgresql://u:p@db:5433/name",
        "CELERY_BROKER_URL": "redis://cache:6379/2",
        "ALLOWED_HOSTS": " a.example , b.example,",
        "DEBUG": "off",
    }
    code = (
        "from django.conf import settings as s\n"
        "d = s.DATABASES['default']\n"
        "print(s.SECRET_KEY, s.ALLOWED_HOSTS, s.DEBUG, d['ENGINE'], d['HOST'], d['PORT'],"
        " d['NAME'], s.CELERY_BROKER_URL, s.CELERY_RESULT_BACKEND)"
    )

    completed = run_django(environment, code)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == [
        "given",
        "['a.example',",
        "'b.example']",
        "False",
        "django.db.backends.postgresql",
        "db",
        "5433",
        "name",
        "redis://cache:6379/2",
        "redis://cache:6379/2",
    ]
    assert not (tmp_path / "secret_key").exists()


def test_unknown_mode_is_refused() -> None:
    completed = run_django({"TAPIS_ENV": "staging"}, "")

    assert completed.returncode != 0
    assert "TAPIS_ENV='staging'" in completed.stderr


def test_env_bool(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, expected in [("1", True), ("Yes", True), ("ON", True), ("0", False), ("no", False)]:
        monkeypatch.setenv("TAPIS_TEST_FLAG", raw)
        assert env_bool("TAPIS_TEST_FLAG", default=not expected) is expected
    monkeypatch.delenv("TAPIS_TEST_FLAG")
    assert env_bool("TAPIS_TEST_FLAG", default=True) is True
    monkeypatch.setenv("TAPIS_TEST_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="TAPIS_TEST_FLAG='maybe'"):
        env_bool("TAPIS_TEST_FLAG", default=False)


def test_env_list_and_str(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPIS_TEST_LIST", " a, ,b ")
    assert env_list("TAPIS_TEST_LIST", ["x"]) == ["a", "b"]
    monkeypatch.delenv("TAPIS_TEST_LIST")
    assert env_list("TAPIS_TEST_LIST", ["x"]) == ["x"]
    monkeypatch.setenv("TAPIS_TEST_STR", "  ")
    assert env_str("TAPIS_TEST_STR", "default") == "default"


HTTPS_WARNINGS = ("security.W004", "security.W008", "security.W012", "security.W016")


def check_deploy(environment: dict[str, str]) -> str:
    completed = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=BASE_DIR,
        env=clean_environment(environment),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout + completed.stderr


def test_production_is_https_by_default() -> None:
    """HSTS, the redirect to HTTPS and HTTPS-only cookies: check --deploy warns of none."""
    report = check_deploy(PRODUCTION)
    for warning in HTTPS_WARNINGS:
        assert warning not in report, report
    values = dump_settings(
        PRODUCTION,
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_PROXY_SSL_HEADER",
    )
    assert values == {
        "SESSION_COOKIE_SECURE": "True",
        "CSRF_COOKIE_SECURE": "True",
        "SECURE_SSL_REDIRECT": "True",
        "SECURE_HSTS_SECONDS": str(365 * 24 * 3600),
        "SECURE_PROXY_SSL_HEADER": "('HTTP_X_FORWARDED_PROTO', 'https')",
    }


def test_https_is_off_in_the_demo_and_where_production_says_so() -> None:
    names = ("SESSION_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS")
    off = {
        "SESSION_COOKIE_SECURE": "False",
        "SECURE_SSL_REDIRECT": "False",
        "SECURE_HSTS_SECONDS": "0",
    }
    assert dump_settings({}, *names) == off
    assert dump_settings({**PRODUCTION, "TAPIS_TLS": "0"}, *names) == off
    report = check_deploy({**PRODUCTION, "TAPIS_TLS": "0"})
    for warning in HTTPS_WARNINGS:
        assert warning in report, report
    # TLS ended by gunicorn itself: no proxy header trusted; HSTS for a shorter time.
    values = dump_settings(
        {**PRODUCTION, "TAPIS_PROXY_TLS": "0", "TAPIS_HSTS_SECONDS": "3600"},
        "SECURE_PROXY_SSL_HEADER",
        "SECURE_HSTS_SECONDS",
        "SECURE_SSL_REDIRECT",
    )
    assert values == {
        "SECURE_PROXY_SSL_HEADER": "None",
        "SECURE_HSTS_SECONDS": "3600",
        "SECURE_SSL_REDIRECT": "True",
    }
    completed = run_django({**PRODUCTION, "TAPIS_HSTS_SECONDS": "a year"}, "")
    assert "TAPIS_HSTS_SECONDS='a year'" in completed.stderr


def test_plain_http_is_redirected_but_the_health_check(settings: Any) -> None:
    from django.test import Client

    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    client = Client()
    redirected = client.get("/api/v1/games/")
    assert redirected.status_code == 301
    assert redirected["Location"] == "https://testserver/api/v1/games/"
    assert client.get("/api/v1/games/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
    assert client.get("/healthz").status_code != 301


def test_readme_documents_every_variable_the_settings_read() -> None:
    readme = (BASE_DIR / "README.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", readme, flags=re.MULTILINE))

    assert documented == set(settings.ENVIRONMENT_VARIABLES)


def test_installed_apps() -> None:
    for app in ("django.contrib.admin", "rest_framework", "axes", "api"):
        assert app in settings.INSTALLED_APPS
    for app in ("drf_spectacular", "tournaments", "api"):
        assert app in settings.INSTALLED_APPS
