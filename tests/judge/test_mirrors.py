"""The mirrors the sandbox binds (judge/sandbox/mirrors.py): named for the process that made
them, and swept once that process is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from judge.sandbox import cgroups, mirrors


def gone_process() -> tuple[int, int]:
    """The pid and start time of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    start = cgroups._start_time(child.pid)
    child.kill()
    child.wait()
    assert start is not None
    return child.pid, start


def test_a_mirror_is_named_for_the_process_that_made_it(tmp_path: Path) -> None:
    source = tmp_path / "bot"
    source.mkdir()
    (source / "bot.py").write_text("print('hello')\n")
    target = mirrors.make_mirror(source)
    try:
        pid = os.getpid()
        assert target.name.startswith(mirrors._owner_prefix(pid, cgroups._start_time(pid) or 0))
        assert (target / "bot.py").read_text() == "print('hello')\n"
    finally:
        mirrors.remove_mirror(target)
    assert not target.exists()


def test_the_sweep_removes_the_mirrors_of_processes_gone_and_only_those(tmp_path: Path) -> None:
    pid = os.getpid()
    live = tmp_path / f"{mirrors._owner_prefix(pid, cgroups._start_time(pid) or 0)}{'a' * 24}"
    gone = tmp_path / f"{mirrors._owner_prefix(*gone_process())}{'b' * 24}"
    # the same pid, started at another time: a pid reused is not the owner
    reused = tmp_path / f"{mirrors._owner_prefix(pid, 1)}{'c' * 24}"
    elsewhere = tmp_path / f"1-{pid}at1-{'d' * 24}"  # another pid namespace
    for folder in (live, gone, reused, elsewhere):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "file").write_text("x")
        (folder / "sub").chmod(0o555)  # mirrors keep their sources' modes
    removed = mirrors.sweep_stale_mirrors(tmp_path)
    assert sorted(removed) == sorted([gone, reused])
    assert live.exists()
    assert elsewhere.exists()
    assert not gone.exists()
    assert not reused.exists()
