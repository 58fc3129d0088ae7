"""The docker files, checked without a Docker engine: they parse and wire what settings read."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings

BASE_DIR = Path(__file__).resolve().parent.parent
DOCKER = BASE_DIR / "docker"
TAPIS_SERVICES = ("web", "worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    return document


def environment_of(service: dict[str, Any]) -> dict[str, str]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):  # the KEY=value form
        environment = dict(item.split("=", 1) for item in environment)
    return {str(k): "" if v is None else str(v) for k, v in environment.items()}


def interpolate(value: str, variables: dict[str, str]) -> str:
    """Compose's ${NAME}, ${NAME:-default} and ${NAME:?error}, for the test."""

    def replace(match: re.Match[str]) -> str:
        name, operator, argument = match.group(1), match.group(2), match.group(3) or ""
        if variables.get(name):
            return variables[name]
        if operator == ":?":
            raise AssertionError(f"compose needs {name}: {argument}")
        return argument if operator == ":-" else ""

    return re.sub(r"\$\{([A-Z_][A-Z0-9_]*)(:-|:\?)?([^}]*)\}", replace, value)


def command_of(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return command if isinstance(command, list) else shlex.split(command)


def test_compose_names_the_five_services(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"web", "worker", "beat", "postgres", "redis"}
    for name, service in compose["services"].items():
        for dependency in service.get("depends_on", {}):
            assert dependency in compose["services"], f"{name} depends on unknown {dependency}"


def test_tapis_services_set_only_variables_the_settings_read(compose: dict[str, Any]) -> None:
    for name in TAPIS_SERVICES:
        environment = environment_of(compose["services"][name])
        unknown = set(environment) - settings.ENVIRONMENT_VARIABLES
        assert not unknown, f"{name} sets variables Tapis never reads: {sorted(unknown)}"
        assert environment["TAPIS_ENV"] == "production"
        assert environment["DATABASE_URL"].startswith("postgresql://")
        assert "@postgres:5432/" in environment["DATABASE_URL"]
        assert environment["CELERY_BROKER_URL"].startswith("redis://redis:6379/")


def test_compose_serves_plain_http_without_https_settings(compose: dict[str, Any]) -> None:
    """Its web process is reached over plain HTTP on port 8000 (no proxy ending TLS): HTTPS
    settings, on by default in production, would redirect every request and keep cookies
    from the browser."""
    environment = environment_of(compose["services"]["web"])
    assert interpolate(environment["TAPIS_TLS"], {}) == "0"
    assert interpolate(environment["TAPIS_TLS"], {"TAPIS_TLS": "1"}) == "1"


def test_tapis_services_share_one_configuration(compose: dict[str, Any]) -> None:
    environments = [environment_of(compose["services"][name]) for name in TAPIS_SERVICES]
    assert environments[0] == environments[1] == environments[2]


def test_commands_run_the_service(compose: dict[str, Any]) -> None:
    services = compose["services"]
    web = " ".join(command_of(services["web"]))
    assert "gunicorn config.wsgi:application" in web
    # The web processes as docs/operations.md sets them (threads, keep-alive, a socket each).
    # gthread, answering an over-long request line as the API does (config/gunicorn.py).
    for flag in (
        "--worker-class config.gunicorn.ThreadWorker",
        "--threads 8",
        "--keep-alive 30",
        "--reuse-port",
    ):
        assert flag in " ".join(web.split()), flag
    assert "manage.py migrate" in web
    assert command_of(services["worker"])[:4] == ["celery", "-A", "config", "worker"]
    assert command_of(services["beat"])[:4] == ["celery", "-A", "config", "beat"]


def test_build_points_at_the_dockerfile(compose: dict[str, Any]) -> None:
    for name in TAPIS_SERVICES:
        build = compose["services"][name]["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == BASE_DIR
        assert (context / build["dockerfile"]).is_file()


def test_compose_configuration_passes_the_production_checks(compose: dict[str, Any]) -> None:
    """The settings accept what compose gives them (production mode refuses less)."""
    variables = {"SECRET_KEY": "s" * 20 + "ecret-" + "x" * 20 + "-from-the-operator-42"}
    environment = {
        name: interpolate(value, variables)
        for name, value in environment_of(compose["services"]["web"]).items()
    }
    clean = {k: v for k, v in os.environ.items() if k not in settings.ENVIRONMENT_VARIABLES}
    with pytest.raises(AssertionError, match="compose needs SECRET_KEY"):
        interpolate(environment_of(compose["services"]["web"])["SECRET_KEY"], {})

    completed = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env={**clean, **environment},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr


def test_dockerfile_installs_bubblewrap_and_the_project() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text()
    instructions = re.sub(r"\\\n", " ", dockerfile)

    assert re.search(r"^FROM python:3\.1[1-9]", instructions, flags=re.MULTILINE)
    assert re.search(r"^RUN .*apt-get install .*\bbubblewrap\b", instructions, flags=re.MULTILINE)
    assert re.search(r"^RUN .*pip install -r /tmp/requirements\.txt", instructions, flags=re.M)
    assert re.search(r"^COPY \. /app$", instructions, flags=re.MULTILINE)
    assert re.search(r"^RUN pip install --no-deps -e /app$", instructions, flags=re.MULTILINE)
    assert "collectstatic" in instructions
    assert re.search(r'^CMD \["gunicorn", "config\.wsgi:application"', dockerfile, flags=re.M)


def test_dockerfile_installs_the_bot_runtimes_of_the_makefile() -> None:
    """The image runs every runtime a worker of `make test` runs: the same Debian packages."""
    makefile = re.sub(r"\\\n", " ", (BASE_DIR / "Makefile").read_text())
    match = re.search(r"^TOOLCHAINS := (.*)$", makefile, flags=re.MULTILINE)
    assert match, "the Makefile lists the bot runtimes' packages in TOOLCHAINS"
    packages = match.group(1).split()
    assert {"g++", "rustc", "golang-go", "openjdk-17-jdk-headless", "nodejs"} <= set(packages)
    instructions = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    installs = re.findall(r"^RUN .*apt-get install (.*)$", instructions, flags=re.MULTILINE)
    installed = {word for line in installs for word in line.split()}
    assert set(packages) <= installed, sorted(set(packages) - installed)


def test_dockerfile_builds_the_compiled_engine() -> None:
    """The hot engine modules compiled by mypyc in a stage with a C compiler, from the same
    Python and the same games/ as the service image, copied into it (optional: the stage ends
    well without them, and games then runs in pure Python)."""
    dockerfile = (DOCKER / "Dockerfile").read_text()
    instructions = re.sub(r"\\\n", " ", dockerfile)
    stages = re.split(r"^FROM ", instructions, flags=re.MULTILINE)[1:]
    assert len(stages) == 2
    builder, image = stages

    builder_from = re.match(r"python:(3\.\d+)-(\w+) AS (\w+)", builder)
    image_from = re.match(r"python:(3\.\d+)-slim-(\w+)\n", image)
    assert builder_from is not None
    assert image_from is not None
    assert builder_from.group(1, 2) == image_from.group(1, 2)  # one Python, one ABI
    assert re.search(r"^COPY games /app/games$", builder, flags=re.MULTILINE)
    assert re.search(r"^RUN .*pip install .*\bmypy\b.*python -m games\.compile", builder, re.M)
    assert re.search(r"mkdir -p /app/games/_compiled$", builder, flags=re.MULTILINE)
    copied = re.search(
        rf"^COPY --from={builder_from.group(3)} /app/games/_compiled /app/games/_compiled$",
        image,
        flags=re.MULTILINE,
    )
    assert copied is not None
    assert image.index("COPY . /app") < copied.start()
