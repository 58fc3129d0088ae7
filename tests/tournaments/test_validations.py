"""Validations of uploads: every refusal of a package, build or artifact is a rejection with
its reason, attempts are capped on every path, validations take their fair share of the
workers by turns of authors, and uploads are limited per author."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from judge.launchers import runtimes
from judge.launchers.package import prepare, remove
from tests.tournaments.factories import BOTS_DIR, UserFactory
from tournaments import judging, queue, services
from tournaments.errors import ApplicationError
from tournaments.models import Bot, BotArtifact, BotVersion

pytestmark = pytest.mark.django_db(transaction=True)

SOURCE = (BOTS_DIR / "first_legal.py").read_bytes()
C_BOT = b"int main(void) { return 0; }\n"


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The validations sent to the workers (their messages, recorded instead of queued)."""
    messages: list[int] = []
    monkeypatch.setattr(
        queue, "bot_version_validate", lambda version_id: messages.append(version_id)
    )
    return messages


def _bot(owner: Any = None, name: str = "b") -> Bot:
    return services.bot_create(owner=owner or UserFactory.create(), name=name, game="hearts")


def _stored_row(bot: Bot, data: bytes, filename: str, **fields: Any) -> BotVersion:
    """A version row as an older release (or a bypassed check) may have stored it."""
    return BotVersion.objects.create(
        bot=bot,
        number=bot.versions.count() + 1,
        content=data,
        filename=filename,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        **fields,
    )


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_package_refused_at_validation_is_rejected_with_its_reason(sent: list[int]) -> None:
    """A stored upload the package check refuses now (a source named @opts, stored before the
    check refused such names) ends rejected with the reason, not pending for ever."""
    manifest = b'{"runtime": "c", "entry": "bot.c", "sources": ["bot.c", "@opts"]}'
    data = _zip({"tapis.json": manifest, "bot.c": C_BOT, "@opts": b"", "opts": b"-v\n"})
    version = _stored_row(_bot(), data, "bot.zip")
    version = services.bot_version_validate(version_id=version.pk)
    assert version.status == BotVersion.Status.REJECTED, version.report
    assert "may not start with '-' or '@'" in version.report["reason"]


def _duplicate_tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for _ in range(2):
            info = tarfile.TarInfo("./bot")
            info.size, info.mode = 3, 0o755
            archive.addfile(info, io.BytesIO(b"bad"))
    return buffer.getvalue()


def test_a_stored_build_a_worker_refuses_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored build with a duplicate ./bot (written by a build into its own pipe) is built
    again by the worker, never unpacked half-way (FileExistsError), and leaves no staging
    folder."""
    tmp_path.chmod(0o711)
    monkeypatch.setenv("TAPIS_BUILD_CACHE", str(tmp_path / "cache"))
    toolchain = runtimes.toolchain("c")
    version = _stored_row(
        _bot(), C_BOT, "bot.c", status=BotVersion.Status.READY, runtime="c", toolchain=toolchain
    )
    unpacked = prepare(judging.bot_version_path(version=version), tmp_path / "src")
    digest = runtimes.sources_digest(unpacked.directory)
    remove(unpacked.directory)
    BotArtifact.objects.create(
        version=version, data=_duplicate_tar(), sources_sha256=digest, toolchain=toolchain
    )
    judging.bot_version_artifact(version=version)
    assert runtimes.cached("c", digest)
    assert [p.name for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")] == []


def test_validation_attempts_are_capped_on_every_path(
    sent: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A validation that fails its worker each time (here: an error of the worker's own) is
    rejected once its attempts are used up, by the next message or by the sweep; never sent
    again every period for ever."""
    bot = _bot()
    version = services.bot_version_create(bot=bot, content=SOURCE, filename="a.py")

    def worker_fails(version: BotVersion) -> dict[str, Any]:
        raise RuntimeError("the worker failed")

    monkeypatch.setattr(services.bots, "_validation_report", worker_fails)
    for _ in range(3):
        with pytest.raises(RuntimeError):
            services.bot_version_validate(version_id=version.pk)
    version = services.bot_version_validate(version_id=version.pk)  # its message again
    assert version.status == BotVersion.Status.REJECTED
    assert "ended 3 times without an answer" in version.report["reason"]

    other = services.bot_version_create(bot=bot, content=SOURCE + b"\n", filename="b.py")
    BotVersion.objects.filter(pk=other.pk).update(validation_attempts=3)
    later = timezone.now() + timedelta(hours=1)
    assert other.pk not in services.bot_version_sweep(now=later)  # lost, used up: rejected
    other.refresh_from_db()
    assert other.status == BotVersion.Status.REJECTED


def test_validations_take_their_fair_share_by_turns_of_authors(sent: list[int]) -> None:
    """Eight uploads of one author send two validations (TAPIS_VALIDATIONS_IN_FLIGHT); the
    next slot goes to another author's upload, not to the crowd's third."""
    crowd, other = _bot(name="crowd"), _bot(name="other")
    versions = [
        services.bot_version_create(bot=crowd, content=SOURCE + b"#%d\n" % i, filename="c.py")
        for i in range(8)
    ]
    mine = services.bot_version_create(bot=other, content=SOURCE, filename="o.py")
    assert sent == [versions[0].pk, versions[1].pk]
    BotVersion.objects.filter(pk=versions[0].pk).update(status=BotVersion.Status.READY)
    services.validation_dispatch()
    assert sent[2:] == [mine.pk]
    assert services.bot_version_sweep() == []  # the slots are full: nothing more is sent


def test_uploads_are_limited_per_author_per_hour(sent: list[int], settings: Any) -> None:
    settings.TAPIS_UPLOADS_PER_HOUR = 3
    bot = _bot()
    for i in range(3):
        services.bot_version_create(bot=bot, content=SOURCE + b"#%d\n" % i, filename="a.py")
    with pytest.raises(ApplicationError, match="uploaded 3 versions in the last hour") as refused:
        services.bot_version_create(bot=_bot(bot.owner, "two"), content=SOURCE, filename="a.py")
    assert refused.value.code == "upload_limit"
    BotVersion.objects.filter(bot__owner=bot.owner).update(
        created_at=timezone.now() - timedelta(hours=2)
    )
    services.bot_version_create(bot=bot, content=SOURCE, filename="a.py")


def test_stored_bytes_are_limited_per_author(sent: list[int], settings: Any) -> None:
    bot = _bot()
    first = services.bot_version_create(bot=bot, content=SOURCE, filename="a.py")
    BotArtifact.objects.create(version=first, data=b"x" * 1000, sources_sha256="", toolchain="")
    settings.TAPIS_UPLOAD_BYTES = len(SOURCE) + 1000 + len(SOURCE) - 1
    with pytest.raises(
        ApplicationError, match=r"over the \d+ bytes an author may store"
    ) as refused:
        services.bot_version_create(bot=bot, content=SOURCE + b"\n", filename="a.py")
    assert refused.value.code == "upload_limit"
    assert refused.value.extra["stored_bytes"] == len(SOURCE) + 1000
