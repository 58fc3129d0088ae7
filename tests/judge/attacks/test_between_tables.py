"""Nothing survives from one table to the next (issue 11, section 1).

The bot of between_tables/traces.py looks at its start for what an earlier table may have left
by every channel a sandbox could keep (files, folders, extended attributes and timestamps of
/tmp and /dev/shm, named pipes, named and abstract unix sockets, System V and POSIX IPC,
loopback traffic, leftover processes), then leaves something by each of them, and reports on
its stderr (the seat's log); between_tables/in_flight.py leaves a unix socket that no process
holds. They play table after table with zygotes on: as the same bot version, as two
versions (two authors' uploads) with identical bytes (one cached file), and at the tables of a
duplicate round of a real tournament. No table may find anything, each table's bot is pid 1
of its own pid namespace, and no forked bot holds a capability.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge import BotSpec, TableResult, run_table
from judge.launchers import zygote
from judge.runner import SDK_DIR

pytestmark = pytest.mark.usefixtures("bwrap_works")

TRACES = Path(__file__).resolve().parent / "between_tables" / "traces.py"
IN_FLIGHT = Path(__file__).resolve().parent / "between_tables" / "in_flight.py"
# Channels the sandbox lets a bot write: each must be left at a table and gone at the next
# (the others, refused outright, are reported as CANNOT and looked for all the same).
WRITABLE = {
    "file",
    "folder",
    "fifo",
    "socket",
    "abstract_socket",
    "xattr_tmp",
    "times_tmp",
    "sysv_semaphore",
    "process",
}
ALL_CHANNELS = WRITABLE | {
    "shm_file",
    "xattr_shm",
    "times_shm",
    "sysv_shm",
    "sysv_queue",
    "posix_queue",
    "posix_semaphore",
    "loopback_traffic",
}


@pytest.fixture(autouse=True)
def no_idle_zygotes() -> Iterator[None]:
    zygote.retire_all()
    yield
    zygote.retire_all()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[zygote.Zygote]:
    """The zygote of each bot forked from one, in the order of play."""
    zygotes: list[zygote.Zygote] = []
    fork = zygote.Zygote.fork

    def recorded_fork(self: zygote.Zygote, cpus: set[int] | None = None) -> zygote.ForkedBot:
        zygotes.append(self)
        return fork(self, cpus)

    monkeypatch.setattr(zygote.Zygote, "fork", recorded_fork)
    return zygotes


def cache(bot: Path, tmp_path: Path) -> Path:
    """The bot as the tournaments cache an upload: one file per SHA-256, whoever uploaded it."""
    data = bot.read_bytes()
    directory = tmp_path / "bot-cache" / hashlib.sha256(data).hexdigest()
    directory.mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "bot-cache", directory):
        folder.chmod(0o755)
    path = directory / bot.name
    shutil.copy(bot, path)
    path.chmod(0o644)
    return path


def check_log(log: str) -> int:
    """Assert that a table's bot found nothing and left everything it could; its pid."""
    lines = log.splitlines()
    found = [line for line in lines if line.startswith("FOUND")]
    assert found == [], log
    left = {line.split()[1] for line in lines if line.startswith("LEFT")}
    refused = {line.split()[1] for line in lines if line.startswith("CANNOT")}
    assert left >= WRITABLE, log
    assert left | refused == ALL_CHANNELS, log
    (privileges,) = [line.split() for line in lines if line.startswith("PRIVILEGES")]
    # no capability (effective, permitted, bounding), no unshare
    assert privileges[1:] == [*["0000000000000000"] * 3, "EPERM"], log
    # its /proc: its processes only, no figure of the whole host (docs/sandbox.md)
    (proc,) = [line.split()[1:] for line in lines if line.startswith("PROC")]
    assert proc == ["self", "thread-self"], log
    (pid,) = [int(line.split()[1]) for line in lines if line.startswith("PID")]
    return pid


def play(spec: BotSpec, seed: int) -> TableResult:
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[spec, "builtin:lowest", "builtin:lowest", "builtin:lowest"],
        deals=1,
        seed=seed,
        sandbox="bwrap",
        sdk_dir=SDK_DIR,
        zygotes=True,
    )
    assert result.faults == (), result.faults
    return result


def test_the_same_version_finds_nothing_of_its_last_table(
    tmp_path: Path, served: list[zygote.Zygote]
) -> None:
    spec = BotSpec(path=cache(TRACES, tmp_path), instance="bot version 1")
    pids = [check_log(play(spec, seed).seats[0].log) for seed in (1, 2, 3)]
    assert len(served) == 3
    assert served[0] is served[1] is served[2]  # one zygote served the three tables
    assert len(set(pids)) == 1  # each bot is the first process of a pid namespace of its own


def test_two_versions_with_identical_bytes_share_nothing(
    tmp_path: Path, served: list[zygote.Zygote]
) -> None:
    path = cache(TRACES, tmp_path)
    for instance, seed in (
        ("bot version 1", 1),
        ("bot version 2", 1),
        ("bot version 1", 2),
    ):
        check_log(play(BotSpec(path=path, instance=instance), seed).seats[0].log)
    assert len(served) == 3
    assert served[0] is not served[1]  # never one process or sandbox for both
    assert served[0] is served[2]  # the first version's zygote, kept for its next table


def test_a_socket_left_in_flight_is_gone_at_the_next_table(
    tmp_path: Path, served: list[zygote.Zygote]
) -> None:
    spec = BotSpec(path=cache(IN_FLIGHT, tmp_path), instance="bot version 1")
    logs = [play(spec, seed).seats[0].log for seed in (1, 2, 3)]
    for log in logs:
        assert "FOUND" not in log, log
        assert "LEFT socket_in_flight" in log, log
    assert len(served) == 3  # forked each time: from the same zygote, or from a new one if the
    # kernel had not collected the socket when the zygote was cleaned (it is then retired)


def test_a_forked_bot_cannot_execute_a_file_it_wrote(
    tmp_path: Path, served: list[zygote.Zygote]
) -> None:
    """The /tmp a zygote mounts for each table is noexec too (attacks/bots/exec_written.py)."""
    attacks = Path(__file__).resolve().parent / "bots"
    package = tmp_path / "exec_written"
    package.mkdir()
    for name in ("exec_written.py", "_attack.py"):
        shutil.copyfile(attacks / name, package / name)
    (package / "tapis.json").write_text('{"runtime": "python3", "entry": "exec_written.py"}')
    for folder in (tmp_path, package):
        folder.chmod(0o755)
    log = play(BotSpec(path=package, instance="bot version 1"), 1).seats[0].log
    assert len(served) == 1  # forked by a zygote, not started alone
    assert "ATTACK attack blocked: execve /tmp/x-elf" in log, log
    assert "ATTACK attack blocked: execve /tmp/x-script" in log, log
    assert "SUCCEEDED" not in log, log
    assert "ERROR" not in log, log


@pytest.mark.django_db(transaction=True)
def test_the_tables_of_a_duplicate_round_share_nothing(
    settings: pytest.FixtureRequest,
    tmp_path: Path,
    served: list[zygote.Zygote],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.tournaments.factories import BotFactory, UserFactory, enter, make_tournament
    from tournaments import queue, services
    from tournaments.models import BotVersion, Seat, Table, Tournament

    # Every table played here, by this process's zygotes: none sent to a Celery worker that
    # another test of the session may have left running.
    monkeypatch.setattr(queue, "table_enqueue", lambda **_: None)
    tmp_path.chmod(0o755)
    settings.TAPIS_BOT_ZYGOTES = True
    settings.TAPIS_SANDBOX = "bwrap"
    settings.TAPIS_BOT_CACHE_DIR = tmp_path / "bot-cache"
    tournament = make_tournament(rounds=2, deals_per_table=1, duplicate=True)
    data = TRACES.read_bytes()
    for number in range(8):  # eight authors upload the very same bytes
        bot = BotFactory.create(owner=UserFactory.create(), game="hearts", name=f"t{number}")
        version = BotVersion.objects.create(
            bot=bot,
            number=1,
            content=data,
            filename="traces.py",
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            status=BotVersion.Status.READY,
            report={"ok": True},
        )
        enter(tournament, version)
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    tables = Table.objects.filter(tournament=tournament)
    assert tables.count() == 4  # two rounds of two tables that play the same deals
    assert len(set(tables.filter(round__number=1).values_list("deal_seed", flat=True))) == 1
    seats = list(Seat.objects.filter(table__tournament=tournament))
    assert len(seats) == 16
    for seat in seats:
        check_log(seat.log)
    # Every bot forked from a zygote (none started alone), and in each round (the tables play
    # in order), eight zygotes for the eight versions: none served two tables of a round.
    assert len(served) == 16
    for round_served in (served[:8], served[8:]):
        assert len({id(z) for z in round_served}) == 8
        assert len({z.key.instance for z in round_served}) == 8


MOUNTINFO_BOT = """\
import sys
from tapis_bot import Bot, run
for line in open("/proc/self/mountinfo"):
    if not line.split()[4].startswith(("/proc/", "/dev/")):
        sys.stderr.write("MOUNT " + line)


class First(Bot):
    name = "first"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
"""


@pytest.mark.parametrize("zygotes", [False, True], ids=["alone", "forked"])
def test_mountinfo_shows_no_path_of_the_worker(bot_root: Path, zygotes: bool) -> None:
    """A bot's /proc/self/mountinfo names its binds' sources: neither the project's path, nor
    the table's work folder (shared by its seats), nor the bot's package, nor the worker's
    folders of zygotes and of the compiled SDK (docs/sandbox.md, "Host-wide channels")."""
    bot = bot_root / "package-of-author-7" / "bot.py"
    bot.parent.mkdir(mode=0o755)
    bot.write_text(MOUNTINFO_BOT)
    bot.chmod(0o644)
    workdir = bot_root / "table-folder-4c1d"
    workdir.mkdir(mode=0o711)
    spec = BotSpec(path=bot, instance="mountinfo 1")
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[spec, spec, "builtin:lowest", "builtin:lowest"],
        deals=1,
        seed=1,
        sandbox="bwrap",
        sdk_dir=SDK_DIR,
        workdir=workdir,
        zygotes=zygotes,
    )
    assert result.faults == (), result.faults
    repo = str(Path(__file__).resolve().parents[3])
    worker = ("tapis-zygotes-", "tapis-sdk-", "tapis-starter-")  # the worker's own folders
    for seat in result.seats[:2]:
        mounts = [line for line in seat.log.splitlines() if line.startswith("MOUNT ")]
        assert any(line.split()[5] == "/bot" for line in mounts), seat.log
        for secret in (
            repo,
            str(bot_root),
            "table-folder-4c1d",
            "package-of-author-7",
            "seat",
            *worker,
        ):
            assert secret not in seat.log, (secret, seat.log)
