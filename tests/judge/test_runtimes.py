"""The bot runtimes: each example bot of docs/examples/ is built in the sandbox and plays a real
sandboxed table of each game.

The example bots check themselves: at each deal's end they compare the ``tricks`` list they
rebuilt from the deltas with the deal's summary and write ``ok`` or ``MISMATCH`` on stderr.
"""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judge import run_table
from judge.launchers import runtimes
from judge.launchers.package import PackageError, prepare
from judge.results import SeatResult

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

# Each runtime's example as a single source file, or a folder with its manifest (Rust: cargo).
EXAMPLE = {
    "python3": EXAMPLES / "python" / "bot.py",
    "c": EXAMPLES / "c" / "bot.c",
    "cpp": EXAMPLES / "cpp" / "bot.cpp",
    "rust": EXAMPLES / "rust",
    "go": EXAMPLES / "go" / "main.go",
    "java": EXAMPLES / "java" / "Bot.java",
    "javascript": EXAMPLES / "javascript" / "bot.js",
}
NAME = {"python3": "python", **{r: r for r in EXAMPLE if r != "python3"}}

# (game, preset, options, deals): every game, with as few deals as make a whole table
TABLES = [
    ("hearts", "whisthub", {}, 2),
    ("roi", "classic", {}, 10),
    ("dutch", "classic", {"players": 2}, 2),
]


@pytest.mark.parametrize("runtime", list(EXAMPLE))
def test_example_plays_every_game(bwrap_works: None, runtime: str) -> None:
    for game, preset, options, deals in TABLES:
        players = int(options.get("players", 4))
        result = run_table(
            game=game,
            preset=preset,
            options=options,
            bots=[str(EXAMPLE[runtime]), *["builtin:heuristic"] * (players - 1)],
            deals=deals,
            seed=7,
            sandbox="bwrap",
        )
        seat = result.seats[0]
        assert not result.faults, (game, result.faults)
        assert not seat.replaced
        assert seat.name == f"example-{NAME[runtime]}"
        lines = seat.log.splitlines()
        assert len(lines) == deals, seat.log
        assert all(line.endswith(", ok") for line in lines), seat.log
        if game == "dutch":
            assert all(" 0 tricks" in line and " 0 history" not in line for line in lines)
        else:
            assert all(" 0 tricks" not in line for line in lines)


@pytest.mark.parametrize(
    ("name", "runtime"),
    [("bot.c", "c"), ("a.cpp", "cpp"), ("x.rs", "rust"), ("m.go", "go"), ("Bot.java", "java")],
)
def test_a_single_file_gets_its_runtime_from_its_extension(
    tmp_path: Path, name: str, runtime: str
) -> None:
    source = tmp_path / name
    source.write_text("int main() {}\n")
    prepared = prepare(source, tmp_path / "out")
    assert prepared.runtime == runtime
    assert prepared.sources == (prepared.entry,)
    assert prepared.command == runtimes.RUNTIMES[runtime].command(prepared.entry)


def _zip(tmp_path: Path, files: dict[str, bytes]) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    path = tmp_path / "bot.zip"
    path.write_bytes(buffer.getvalue())
    return path


@pytest.mark.parametrize(
    ("manifest", "files", "reason"),
    [
        ({"runtime": "cobol", "entry": "a.cob"}, {"a.cob": b"x"}, "unknown runtime 'cobol'"),
        ({"runtime": "c", "entry": "main.c"}, {"bot.c": b"x"}, "entry file 'main.c'"),
        (
            {"runtime": "c", "entry": "a.c", "sources": ["a.c", "b.c"]},
            {"a.c": b"x"},
            "the source 'b.c'",
        ),
        ({"runtime": "c", "entry": "a.c", "sources": "a.c"}, {"a.c": b"x"}, "is a list"),
        ({"runtime": "c", "entry": "a.c"}, {"a.c": b"\x7fELF\x02\x01\x01"}, "compiled program"),
        (
            {"runtime": "java", "entry": "B.java"},
            {"B.java": b"x", "B.class": b"\xca\xfe\xba\xbe"},
            "compiled program",
        ),
    ],
)
def test_a_zip_with_a_bad_manifest_or_a_program_is_refused(
    tmp_path: Path, manifest: dict[str, object], files: dict[str, bytes], reason: str
) -> None:
    path = _zip(tmp_path, {"tapis.json": json.dumps(manifest).encode(), **files})
    with pytest.raises(PackageError, match=reason):
        prepare(path, tmp_path / "out")


def test_a_binary_uploaded_as_a_source_file_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "bot.c"
    source.write_bytes(Path("/usr/bin/true").read_bytes())
    with pytest.raises(PackageError, match="compiled program"):
        prepare(source, tmp_path / "out")


def test_tapis_play_builds_a_c_source_in_the_sandbox(
    bwrap_works: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.cli import main

    bot = str(EXAMPLE["c"])
    status = main(["play", "--game", "hearts", "--deals", "1", "--seed", "3", "--json", bot])
    assert status == 0
    seats = json.loads(capsys.readouterr().out)["seats"]
    assert seats[0]["name"] == "example-c"
    assert seats[0]["faults"] == []
    assert seats[0]["decisions"] == 14


def test_tapis_play_reports_a_compile_error(
    bwrap_works: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judge.cli import main

    source = tmp_path / "broken.cpp"
    source.write_text("int main() { return undefined_name; }\n")
    tmp_path.chmod(0o755)
    status = main(["play", "--game", "hearts", "--deals", "1", "--json", str(source)])
    assert status == 0  # the table is played: the seat is replaced
    seat = json.loads(capsys.readouterr().out)["seats"][0]
    assert seat["faults"][0]["kind"] == "crash"
    assert "cpp build failed: the compiler exited with status 1" in seat["faults"][0]["detail"]


def _script_tar(text: bytes) -> bytes:
    """An artifact's tar whose program ``bot`` is a shell script (no compiler made it)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("./bot")
        info.size, info.mode = len(text), 0o755
        archive.addfile(info, io.BytesIO(text))
    return buffer.getvalue()


STALE_PROGRAM = b'#!/bin/sh\necho "STALE BUILD RAN" >&2\nexit 3\n'


def _stored(source: Path, tmp_path: Path, toolchain: str) -> runtimes.Artifact:
    """A stored artifact of ``source`` as a worker with ``toolchain`` would have left it; its
    program is a script that says it ran, never what this worker's gcc makes."""
    prepared = prepare(source, tmp_path / "prepared")
    digest = runtimes.sources_digest(prepared.directory)
    data = _script_tar(STALE_PROGRAM)
    return runtimes.Artifact("c", prepared.entry, digest, toolchain, data, "", 0.0)


@pytest.fixture
def build_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty build cache of this worker, reachable by the sandbox uids."""
    cache = Path(tempfile.mkdtemp(prefix="tapis-build-cache-"))
    cache.chmod(0o711)
    monkeypatch.setenv("TAPIS_BUILD_CACHE", str(cache))
    yield cache
    for folder in cache.iterdir():
        runtimes.remove_tree(folder)
    shutil.rmtree(cache, ignore_errors=True)


def test_a_stored_build_of_another_toolchain_is_rebuilt_never_run(
    bwrap_works: None, build_cache: Path, tmp_path: Path
) -> None:
    """A worker whose gcc is not the one that made the stored build (another Debian release,
    say) builds the sources again in its sandbox and plays that: the stored program never
    runs."""
    mine = runtimes.toolchain("c")
    other = "gcc (Debian 99.1.0-1) 99.1.0; built by another worker"
    assert other != mine
    program = runtimes.seed(EXAMPLE["c"], _stored(EXAMPLE["c"], tmp_path, other))
    assert (program / "bot").read_bytes()[:4] == b"\x7fELF"  # this worker's gcc made it
    assert STALE_PROGRAM not in (program / "bot").read_bytes()

    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[str(EXAMPLE["c"]), *["builtin:heuristic"] * 3],
        deals=1,
        seed=5,
        sandbox="bwrap",
    )
    assert result.faults == ()
    assert result.seats[0].name == "example-c"
    assert "STALE BUILD RAN" not in result.seats[0].log


def test_a_stored_build_of_this_toolchain_is_used_as_it_is(
    bwrap_works: None, build_cache: Path, tmp_path: Path
) -> None:
    """Control for the test above: the same stored build, labelled with this worker's
    toolchain, is what the table runs (it is not rebuilt), so a stale one would have run."""
    stored = _stored(EXAMPLE["c"], tmp_path, runtimes.toolchain("c"))
    program = runtimes.seed(EXAMPLE["c"], stored)
    assert (program / "bot").read_bytes() == STALE_PROGRAM
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[str(EXAMPLE["c"]), *["builtin:heuristic"] * 3],
        deals=1,
        seed=5,
        sandbox="bwrap",
    )
    assert result.faults[0].seat == 0
    assert "STALE BUILD RAN" in result.seats[0].log


def test_a_worker_that_cannot_rebuild_refuses_with_the_reason(
    bwrap_works: None, build_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose toolchain differs and whose compiler cannot build (here: no gcc where
    it looks) faults the seat with the build's reason, and still never runs the stored
    program."""
    stored = _stored(EXAMPLE["c"], tmp_path, "gcc (Debian 99.1.0-1) 99.1.0")
    real = runtimes._host_tool
    monkeypatch.setattr(
        runtimes, "_host_tool", lambda name: "/usr/bin/no-such-gcc" if name == "gcc" else real(name)
    )
    with pytest.raises(runtimes.BuildError, match="c build failed: the compiler exited"):
        runtimes.seed(EXAMPLE["c"], stored)
    assert not any(build_cache.iterdir())  # nothing left that a table could run


@pytest.mark.parametrize("runtime", ["javascript", "java", "go"])
def test_a_managed_runtime_gets_address_space_but_the_same_memory_limit(
    runtime: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RLIMIT_AS makes room for what the runtime reserves at start; cgroup v2's memory.max
    (here a stand-in cgroup folder, as a host that delegates one has) stays the memory limit,
    and the runtime's heap flag follows it."""
    from judge.sandbox.cgroups import _Cgroup
    from judge.sandbox.limits import SandboxLimits

    memory = 300 * 2**20
    limits = runtimes.run_limits(runtime, SandboxLimits(memory_bytes=memory))
    rlimits = {option: soft for option, _, soft, _ in limits.rlimits()}
    assert rlimits["as"] == memory + runtimes.RESERVED[runtime]
    assert limits.memory_bytes == memory

    (tmp_path / "cgroup.subtree_control").write_text("cpu memory pids\n")
    monkeypatch.setenv("TAPIS_SANDBOX_CGROUP", str(tmp_path))
    cgroup = _Cgroup.create(limits)
    assert cgroup is not None
    assert (cgroup.path / "memory.max").read_text() == str(memory)

    command = " ".join(runtimes.RUNTIMES[runtime].command("Bot.java", memory))
    heap = {"javascript": "--max-old-space-size=150", "java": "-Xmx150m", "go": "GOMEMLIMIT=225MiB"}
    assert heap[runtime] in command


def first_seat(source: Path, text: bytes, **table: Any) -> SeatResult:
    """The seat of ``text`` (saved as ``source``) at a one-deal Hearts table of the sandbox,
    the other three seats built-in random bots."""
    source.parent.mkdir(parents=True, exist_ok=True)
    source.parent.chmod(0o755)
    source.write_bytes(text)
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[str(source), *["builtin:random"] * 3],
        deals=1,
        seed=1,
        sandbox="bwrap",
        **table,
    )
    return result.seats[0]


GO_PROCESSORS_BOT = b"""\
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\\n')
		if err != nil {
			return
		}
		if strings.Contains(line, `"hello"`) {
			procs := runtime.GOMAXPROCS(0)
			fmt.Printf(`{"type":"ready","name":"procs-%d"}`+"\\n", procs)
			return
		}
	}
}
"""


def test_a_go_bot_at_a_pinned_table_has_a_spare_processor(
    bwrap_works: None, tmp_path: Path
) -> None:
    """Go's scheduler with one processor (a table pinned to one CPU) hands it off at every read
    of stdin and polls every 20 us: the judge gives Go bots two."""
    seat = first_seat(tmp_path / "main.go", GO_PROCESSORS_BOT, cpu="auto")
    assert seat.name == "procs-2", seat.log


JAVA_THREADS_BOT = """\
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;

public class Bot {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        CountDownLatch end = new CountDownLatch(1);
        int started = 0;
        try {
            for (; started < 12; started++) {
                Thread worker = new Thread(() -> {
                    try { end.await(); } catch (InterruptedException e) { }
                });
                worker.setDaemon(true);
                worker.start();
            }
        } catch (Throwable e) {
            System.err.println(e);
        }
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"hello\\"")) {
                String name = "threads-" + started;
                System.out.println("{\\"type\\":\\"ready\\",\\"name\\":\\"" + name + "\\"}");
                System.out.flush();
                return;
            }
        }
    }
}
"""


def test_a_java_bot_may_start_threads_beside_the_jvms(bwrap_works: None, tmp_path: Path) -> None:
    """The JVM starts 14 threads of its own: the task limit leaves a Java bot room for its own
    (runtimes.RESERVED_TASKS), 12 here at the default limit of 16."""
    seat = first_seat(tmp_path / "Bot.java", JAVA_THREADS_BOT.encode())
    assert seat.name == "threads-12", seat.log


def test_other_runtimes_run_within_their_memory_limit_alone() -> None:
    from judge.sandbox.limits import SandboxLimits

    for runtime in ("python3", "c", "cpp", "rust"):
        limits = runtimes.run_limits(runtime, SandboxLimits())
        rlimits = {option: soft for option, _, soft, _ in limits.rlimits()}
        assert rlimits["as"] == limits.memory_bytes == SandboxLimits().memory_bytes


def test_a_toolchain_upgraded_in_place_is_a_new_toolchain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's gcc replaced on disk while it runs (an upgrade in place): the worker's
    toolchain is the new one at once, so its cache's builds of the old one are not used."""
    tools = tmp_path / "bin"
    tools.mkdir()
    gcc = tools / "gcc"
    gcc.write_text('#!/bin/sh\necho "gcc (Debian 12.2.0-14) 12.2.0"\n')
    gcc.chmod(0o755)
    monkeypatch.setattr(runtimes, "TOOL_PATH", str(tools))
    before = runtimes.toolchain("c")
    assert before == "gcc (Debian 12.2.0-14) 12.2.0"
    key = runtimes._cache_key("c", "0" * 64)

    gcc.write_text('#!/bin/sh\necho "gcc (Debian 12.3.0-1) 12.3.0"\n')
    assert runtimes.toolchain("c") == "gcc (Debian 12.3.0-1) 12.3.0"
    assert runtimes._cache_key("c", "0" * 64) != key


JAVA_FATAL_BOT = """\
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;

public class Bot {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"hello\\"")) {
                System.out.println("{\\"type\\":\\"ready\\",\\"name\\":\\"fatal\\"}");
                System.out.flush();
            } else if (line.contains("\\"act\\"")) {
                Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                field.setAccessible(true);
                ((sun.misc.Unsafe) field.get(null)).putAddress(0, 42);  // SIGSEGV in the JVM
            }
        }
    }
}
"""


def test_a_jvms_fatal_error_goes_to_the_bots_log_not_into_the_protocol(
    bwrap_works: None, tmp_path: Path
) -> None:
    """A JVM that crashes (here a bot writing to address 0 through Unsafe) writes its fatal
    error's report to a file by default (in /tmp, which goes with the table), and its first
    lines to descriptor 1 whatever its flags: the judge's launcher keeps descriptor 1 off the
    protocol, the report is in the bot's log, where its author reads it, and the seat's one
    fault is the crash (not a malformed line, nor a report cut by the replacement)."""
    seat = first_seat(tmp_path / "Bot.java", JAVA_FATAL_BOT.encode())
    assert "A fatal error has been detected by the Java Runtime Environment" in seat.log
    assert "Problematic frame" in seat.log
    assert "Bot.main" in seat.log, seat.log[:3000]
    assert [fault.kind for fault in seat.faults] == ["crash"], seat.faults
    assert seat.replaced


def test_the_java_launcher_runs_a_main_class_that_is_not_public(
    bwrap_works: None, tmp_path: Path
) -> None:
    """As the java command does: the judge's launcher (tapis.Launcher) finds main in a class
    without the public modifier, and says plainly when there is no main to run."""
    package_private = JAVA_THREADS_BOT.replace("public class Bot", "class Bot")
    seat = first_seat(tmp_path / "a" / "Bot.java", package_private.encode())
    assert seat.name == "threads-12", seat.log
    seat = first_seat(tmp_path / "b" / "Bot.java", b"class Bot { static void go() {} }\n")
    assert seat.name is None
    assert "no class Bot with a method public static void main(String[] args)" in seat.log
    assert [fault.kind for fault in seat.faults] == ["crash"]


C_ABORT_BOT = b"""\
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    char line[1 << 16];
    if (!fgets(line, sizeof line, stdin)) return 1;
    puts("{\\"type\\":\\"ready\\",\\"name\\":\\"abort\\"}");
    fflush(stdout);
    if (fgets(line, sizeof line, stdin)) abort(); /* a failed assert ends so */
    return 0;
}
"""


def test_a_bot_killed_by_a_signal_is_told_which(bwrap_works: None, tmp_path: Path) -> None:
    """bubblewrap exits with 128 + N for a bot killed by signal N: the crash says the signal.
    The bot is pid 1 of its namespace, so its own abort() is spared SIGABRT and ends in
    SIGSEGV (docs/protocol.md, "Faults")."""
    seat = first_seat(tmp_path / "bot.c", C_ABORT_BOT)
    assert [fault.detail for fault in seat.faults] == [
        "the bot exited with status 139: killed by signal 11 (SIGSEGV)"
    ]


def test_javas_toolchain_names_the_launcher_built_into_each_build() -> None:
    """Every Java build holds the judge's tapis.Launcher: another launcher is another
    toolchain, so a build with the old one is never run (it is built again)."""
    assert runtimes.toolchain("java").endswith(f"; tapis.Launcher {runtimes.JAVA_LAUNCHER_DIGEST}")
    assert "TAPIS_LAUNCHER_END" not in runtimes.JAVA_LAUNCHER  # the build's here-document ends once
    script = runtimes.build_script("java", "Bot.java", ["Bot.java"])
    assert "Bot.java /tmp/b/launcher/tapis/Launcher.java" in script


def _tar(*members: tuple[str, bytes, str]) -> bytes:
    """A tar of (name, content, kind) members, kind one of file, dir, symlink, hardlink, fifo."""
    kinds = {
        "file": tarfile.REGTYPE,
        "dir": tarfile.DIRTYPE,
        "symlink": tarfile.SYMTYPE,
        "hardlink": tarfile.LNKTYPE,
        "fifo": tarfile.FIFOTYPE,
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, content, kind in members:
            info = tarfile.TarInfo(name)
            info.type, info.mode = kinds[kind], 0o755
            if kind == "file":
                info.size = len(content)
            else:
                info.linkname = content.decode()
            archive.addfile(info, io.BytesIO(content) if kind == "file" else None)
    return buffer.getvalue()


PROGRAM = ("./bot", b"#!/bin/sh\n", "file")
ODD_TARS = {
    "the same name twice": (_tar(PROGRAM, PROGRAM), "appears twice"),
    "a name and its ./ form": (_tar(PROGRAM, ("bot", b"x", "file")), "appears twice"),
    "a file used as a folder": (_tar(PROGRAM, ("./bot/x", b"x", "file")), "both a file and"),
    "a folder after a file": (_tar(PROGRAM, ("./bot", b"", "dir")), "appears twice"),
    "a control character": (_tar(PROGRAM, ("./a\nb", b"x", "file")), "control character"),
    "an absolute path": (_tar(PROGRAM, ("/etc/x", b"x", "file")), "outside"),
    "a path leaving the folder": (_tar(PROGRAM, ("./a/../../x", b"x", "file")), "outside"),
    "a link": (_tar(PROGRAM, ("./l", b"/etc/passwd", "symlink")), "only files and folders"),
    "a hard link": (_tar(PROGRAM, ("./h", b"./bot", "hardlink")), "only files and folders"),
    "a fifo": (_tar(PROGRAM, ("./f", b"", "fifo")), "only files and folders"),
    "not a tar": (b"\x01" * 1024, "not a tar"),
}


@pytest.mark.parametrize("case", list(ODD_TARS))
def test_an_odd_artifact_is_refused_before_anything_is_written(tmp_path: Path, case: str) -> None:
    data, reason = ODD_TARS[case]
    with pytest.raises(runtimes.BuildError, match=reason):
        runtimes.unpack_artifact(data, tmp_path / "bot")
    assert not (tmp_path / "bot").exists()


def test_a_refused_stored_build_is_rebuilt_and_leaves_no_staging_folder(
    bwrap_works: None, build_cache: Path, tmp_path: Path
) -> None:
    """A stored build of this toolchain whose tar this worker refuses (a duplicate ./bot,
    FileExistsError half-way before) is built again in the sandbox; nothing of the refused one
    stays in the cache."""
    stored = _stored(EXAMPLE["c"], tmp_path, runtimes.toolchain("c"))
    stored = dataclasses.replace(stored, data=_tar(PROGRAM, PROGRAM))
    program = runtimes.seed(EXAMPLE["c"], stored)
    assert (program / "bot").read_bytes()[:4] == b"\x7fELF"
    assert [p.name for p in build_cache.iterdir()] == [program.parent.name]
