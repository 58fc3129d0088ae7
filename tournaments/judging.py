"""What the judge is handed for a table: the rules engine, each seat's bot, the time limits
and the most a table may take. Reads and pure computations, no writes (but the worker's bot
cache, filled from the database)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import games
from judge.launchers import runtimes
from judge.launchers.package import PackageError
from judge.runner import BotSpec, Limits
from tournaments import conf
from tournaments.models import BotArtifact, BotVersion, Table, Tournament

log = logging.getLogger(__name__)


def engine_for(
    *, game: str, preset: str | None, options: Mapping[str, object], deals: int
) -> games.Game[object]:
    """The engine of a tournament's rules, for tables of ``deals`` deals."""
    return games.load(game, preset, **{**options, "fixed_deals": deals})


def tournament_engine(*, tournament: Tournament, deals: int | None = None) -> games.Game[object]:
    """The engine of a tournament's rules (for tables of ``deals`` deals: by default its own)."""
    return engine_for(
        game=tournament.game,
        preset=tournament.preset,
        options=tournament.options,
        deals=tournament.deals_per_table if deals is None else deals,
    )


def bot_version_path(*, version: BotVersion) -> Path:
    """The version's upload as a file a worker can hand to the judge (cached by SHA-256)."""
    directory = conf.bot_cache_dir() / version.sha256
    path = directory / (version.filename or "bot.py")
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == version.sha256:
        return path
    data = bytes(BotVersion.objects.values_list("content", flat=True).get(pk=version.pk))
    if hashlib.sha256(data).hexdigest() != version.sha256:
        raise RuntimeError(f"{version}: the stored upload does not match its SHA-256")
    directory.mkdir(parents=True, exist_ok=True)
    # A name of its own (O_EXCL): the pool processes of a worker, forked from one parent, may
    # share a thread ident, and two of them may fetch the same version at once.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def bot_version_artifact(*, version: BotVersion, refuse: bool = False) -> None:
    """Put a compiled version's stored build into this worker's build cache, where the judge
    finds it. One of another toolchain, or one this worker refuses, is built again in the
    sandbox; if that fails too, the cache is left without it and the judge builds it at the
    seat (its failure is the seat's fault), unless ``refuse``: then BuildError or PackageError
    (the validation's rejection)."""
    if not version.toolchain or not runtimes.RUNTIMES[version.runtime].compiled:
        return
    build = BotArtifact.objects.filter(version=version).defer("data").first()
    if build is None or runtimes.cached(version.runtime, build.sources_sha256):
        return
    artifact = runtimes.Artifact(
        runtime=version.runtime,
        entry="",
        sources_sha256=build.sources_sha256,
        toolchain=build.toolchain,
        data=bytes(BotArtifact.objects.values_list("data", flat=True).get(pk=build.pk)),
        log="",
        seconds=build.seconds,
    )
    try:
        runtimes.seed(bot_version_path(version=version), artifact, mode=conf.sandbox_mode())
    except (runtimes.BuildError, PackageError) as exc:
        if refuse:
            raise
        log.warning("%s: its build is left to the seat: %s", version, exc)


def bot_spec(*, version: BotVersion, entry_id: int | None = None) -> BotSpec:
    """The judge's spec of a version's bot, as entry ``entry_id`` plays it (None: outside a
    tournament, at its validation)."""
    if version.builtin:
        return BotSpec(builtin=version.builtin, label=version.label)
    # The judge's zygotes serve one instance: one version of one entry, never two uploads of the
    # same bytes nor two entries of the same version.
    owner = f"entry {entry_id}" if entry_id is not None else "validation"
    bot_version_artifact(version=version)
    path = bot_version_path(version=version)
    return BotSpec(path=path, label=version.label, instance=f"bot version {version.pk}, {owner}")


def tournament_limits(*, tournament: Tournament) -> Limits:
    return Limits(
        startup=tournament.startup_seconds,
        decision=tournament.decision_seconds,
        bank=tournament.bank_seconds,
        max_faults=tournament.max_faults,
        replacement=tournament.house_bot,
    )


def table_time_budget(*, tournament: Tournament) -> float:
    """The most a table may take when every bot uses all its time (seconds)."""
    per_deal = tournament_engine(tournament=tournament).decisions_per_deal
    seats = tournament.table_size
    return (
        seats * (tournament.startup_seconds + tournament.bank_seconds)
        + tournament.deals_per_table * per_deal * tournament.decision_seconds
        + tournament.deals_per_table * 1.0  # the engine and the database
        + 30.0
    )


def table_bots(*, table: Table) -> list[BotSpec]:
    """The bot of each seat: the entry's frozen version, or a house bot."""
    specs = []
    for seat in table.seats.select_related("entry__version__bot").order_by("position"):
        if seat.entry is None or seat.substitute:
            label = f"house:{seat.house_bot}"
            specs.append(BotSpec(builtin=seat.house_bot, label=label))
        else:
            specs.append(bot_spec(version=seat.entry.version, entry_id=seat.entry_id))
    return specs
