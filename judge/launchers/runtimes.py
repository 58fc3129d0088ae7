"""The bot runtimes: how a version in each language is built and started (docs/protocol.md,
"Runtimes"; docs/sandbox.md, "Runtimes").

A runtime is named by a package's manifest (``tapis.json``: ``runtime``, ``entry`` and, for a
compiled runtime, ``sources``) or by a single file's extension. Interpreted runtimes
(``python3``, ``javascript``) run their sources; compiled ones (``c``, ``cpp``, ``rust``,
``go``, ``java``) are built once, in the same bubblewrap sandbox as a bot but with limits of
their own (:data:`BUILD_LIMITS`, :data:`BUILD_WALL_SECONDS`), and the sandbox's program is then
the build's output, the artifact, bound read-only at ``/bot``.

The build runs ``/bin/sh -c SCRIPT`` with the sources read-only at ``/bot``: the script copies
them to ``/tmp/b/src``, runs the compiler there, and writes the artifact as an uncompressed tar
on its stdout, every compiler message going to stderr. So the build needs nothing from the
sandbox that a bot does not have, and nothing it writes reaches the host but that tar, which is
read with a size cap and unpacked with the checks of :func:`unpack_artifact` (regular files and
folders only, no path leaving the directory).

An :class:`Artifact` carries the SHA-256 of the sources it was built from and the toolchain's
version (:func:`toolchain`): a worker whose toolchain differs rebuilds rather than run a build
of another compiler (:func:`artifact_for`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import logging
import os
import select
import shlex
import shutil
import subprocess
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from judge.sandbox import SandboxError, SandboxLimits, spawn_bot
from judge.sandbox.system import python_paths

log = logging.getLogger(__name__)

BOT_ROOT: Final = "/bot"
GSON_JAR: Final = "/usr/share/java/gson.jar"
CARGO_REGISTRY: Final = "/usr/share/cargo/registry"  # Debian's packaged crates

# The build's limits: compilers need more memory, processes (threads count) and files than a
# bot; the wall time bounds a compiler that loops (template recursion, #include "/dev/zero").
BUILD_LIMITS: Final = SandboxLimits(
    cpu_seconds=120,
    memory_bytes=2 * 2**30,
    max_processes=64,
    max_file_size=64 * 2**20,
    max_open_files=256,
    tmp_bytes=384 * 2**20,
)
BUILD_WALL_SECONDS: Final = 180.0
MAX_ARTIFACT_BYTES: Final = 32 * 2**20  # the tar the build writes
MAX_ARTIFACT_FILES: Final = 1000
BUILD_LOG_BYTES: Final = 64 * 1024  # compiler messages kept (the report shows the end)

# Address space a runtime reserves at start beyond what it uses, measured in the sandbox (the
# smallest RLIMIT_AS with which each starts): Node 714 MiB whatever its heap (V8's code range and
# heap reservations), a Go program 698 MiB (heap arenas, page summaries), the JVM about 370 MiB
# beyond its heap with JVM_FLAGS (code cache, class space, metaspace, its shared archive). Their
# bots' RLIMIT_AS is their memory limit plus this much; what they use is bounded by their
# cgroup's memory limit (v2 or v1: the memory limit itself) where the host has one, and by
# their runtime's own flags (heap_limit) everywhere. docs/sandbox.md, "Memory per runtime".
RESERVED: Final[dict[str, int]] = {
    "javascript": 768 * 2**20,
    "go": 768 * 2**20,
    "java": 512 * 2**20,
}
# Threads a runtime starts by itself before the bot's first line, measured (a running example bot,
# /proc/PID/task): the JVM 14 (its VM, compiler, collector and service threads: at the default
# limit of 16 a Java bot could start one thread of its own), Node 7 (libuv's pool, V8's workers),
# Go 4. Its bots may start this many more tasks than the limit (docs/sandbox.md, "Memory per
# runtime"; tests/judge/test_runtimes.py starts 12 threads in a Java bot).
RESERVED_TASKS: Final[dict[str, int]] = {"java": 16, "javascript": 8, "go": 8}
DEFAULT_MEMORY: Final = SandboxLimits().memory_bytes
GO_PROCESSORS: Final = "GOMAXPROCS=2"  # see Runtime.command


def heap_limit(runtime: str, memory_bytes: int) -> int:
    """The heap a managed runtime is told to stay within, in MiB, for a memory limit of
    ``memory_bytes``: half of it for the JVM's and V8's heaps (the rest is their code, classes,
    stacks, off-heap buffers), three quarters for Go's GOMEMLIMIT (its whole runtime).

    >>> heap_limit("javascript", 512 * 2**20), heap_limit("java", 256 * 2**20)
    (256, 128)
    >>> heap_limit("go", 512 * 2**20)
    384
    """
    mib = memory_bytes // 2**20
    return max(16, mib * 3 // 4 if runtime == "go" else mib // 2)


def run_limits(runtime: str, limits: SandboxLimits) -> SandboxLimits:
    """The limits a bot of ``runtime`` runs under: ``limits``, with room in its address space
    for what the runtime reserves at start (:data:`RESERVED`) and in its task count for the
    threads it starts by itself (:data:`RESERVED_TASKS`); its memory limit (the cgroup's) is
    unchanged.

    >>> run_limits("javascript", SandboxLimits()).address_space_bytes // 2**20
    1280
    >>> java = run_limits("java", SandboxLimits())
    >>> java.address_space_bytes // 2**20, java.max_processes, java.memory_bytes // 2**20
    (1024, 32, 512)
    >>> run_limits("c", SandboxLimits()) == SandboxLimits()
    True
    """
    reserved = RESERVED.get(runtime, 0)
    if reserved:
        limits = dataclasses.replace(limits, address_space_bytes=limits.memory_bytes + reserved)
    tasks = RESERVED_TASKS.get(runtime, 0)
    if tasks:
        limits = dataclasses.replace(limits, max_processes=limits.max_processes + tasks)
    return limits


class BuildError(ValueError):
    """A version that does not build: the message says why, for its author."""


TOOL_PATH = "/usr/bin:/bin"  # where toolchain programs are looked for


def _resolve_tool(name: str) -> str:
    """The real path of a toolchain program: Debian reaches several through /etc/alternatives,
    which the sandbox does not have, so the sandbox is handed the target under /usr."""
    found = shutil.which(name, path=TOOL_PATH)
    if found is None:
        return f"/usr/bin/{name}"  # the build then fails with "not found", in its log
    real = os.path.realpath(found)
    return real if real.startswith("/usr/") else found


_host_tool = functools.cache(_resolve_tool)


@dataclasses.dataclass(frozen=True, slots=True)
class Runtime:
    """One language: the extensions a single file of it has, and whether it is compiled."""

    name: str
    extensions: tuple[str, ...]
    compiled: bool
    version_commands: tuple[tuple[str, ...], ...]

    def command(self, entry: str, memory_bytes: int = DEFAULT_MEMORY) -> tuple[str, ...]:
        """The argv that starts a bot of this runtime, its program (sources or artifact) at
        ``/bot``; ``entry`` is the manifest's entry (for Java the class comes from it). A managed
        runtime is told its heap limit (:func:`heap_limit`) for a memory limit of
        ``memory_bytes``."""
        heap = heap_limit(self.name, memory_bytes)
        if self.name == "python3":
            # -S: no site module; -u: unbuffered pipes (docs/protocol.md)
            return ("/usr/bin/python3", "-S", "-u", f"{BOT_ROOT}/{entry}")
        if self.name == "javascript":
            return (_host_tool("node"), f"--max-old-space-size={heap}", f"{BOT_ROOT}/{entry}")
        if self.name == "java":
            classpath = f"{GSON_JAR}:{BOT_ROOT}"
            flags = (*JVM_FLAGS, f"-Xmx{heap}m")
            # The protocol on descriptor 3, the JVM's descriptor 1 on the log: JAVA_LAUNCHER.
            # MALLOC_ARENA_MAX: glibc gives each new thread a malloc arena of 64 MiB of address
            # space, and RLIMIT_AS would refuse the ninth thread of a Java bot.
            shell = 'export MALLOC_ARENA_MAX=2; exec "$0" "$@" 3>&1 1>&2'
            java = ("/bin/sh", "-c", shell, _host_tool("java"))
            launcher = ("-cp", classpath, JAVA_LAUNCHER_CLASS, java_class(entry))
            return (*java, *flags, *launcher)
        if self.name == "go":
            # GOMEMLIMIT: a soft limit, the collector works harder as it nears it.
            # GOMAXPROCS=2 (not the CPUs the bot may run on: one at a pinned table): with as
            # many processors as running goroutines, Go's sysmon thread takes the processor of
            # a goroutine blocked reading stdin after 20 us, and so keeps waking every 20 us
            # while the bot waits for its next request; a spare one lets it sleep (25% less CPU
            # per deal at a pinned table, docs/sandbox.md).
            return ("/usr/bin/env", f"GOMEMLIMIT={heap}MiB", GO_PROCESSORS, f"{BOT_ROOT}/bot")
        return (f"{BOT_ROOT}/bot",)


def system_paths(runtime: str) -> tuple[str, ...]:
    """The host paths a bot of ``runtime`` needs besides its own files, which the sandbox binds
    (with the libraries they load: judge/sandbox/system.py) instead of all of ``/usr``, and
    keeps in the page cache (docs/sandbox.md, "Host-wide channels")."""
    return _system_paths(runtime)


@functools.cache
def _system_paths(runtime: str) -> tuple[str, ...]:
    if runtime == "python3":
        return python_paths()
    if runtime == "javascript":
        return (_host_tool("node"),)
    if runtime == "java":
        java = Path(_host_tool("java"))
        home = java.parents[1]
        jdk = (str(java), str(home / "lib"), str(home / "conf"), str(home / "release"))
        conf = tuple(str(path) for path in sorted(Path("/etc").glob("java-*-openjdk")))
        return (*jdk, *conf, GSON_JAR)
    if runtime == "go":
        return ("/usr/bin/env",)
    return ()  # C, C++, Rust: the native libraries (judge/sandbox/system.py)


# The JVM in little address space: a serial collector (no GC threads), a small code cache and
# class space (it reserves 240 MiB and 1 GiB by default), and the C1 compiler only (a quicker
# start; card bots seldom run long enough for C2 to pay); its heap (-Xmx) from the memory limit.
JVM_FLAGS: Final = (
    # The JVM's own warnings ("Failed to start thread" at the process limit...) go to stdout by
    # default, into the protocol: to stderr, the bot's log, instead.
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
    "-XX:+DisplayVMOutputToStderr",
    # A fatal error's report (hs_err) to stderr, the bot's log, not a file in /tmp that goes with
    # the table; its first lines go to descriptor 1 whatever the flags (JAVA_LAUNCHER).
    "-XX:+ErrorFileToStderr",
    "--add-opens=java.base/java.io=ALL-UNNAMED",  # for JAVA_LAUNCHER's descriptor 3
    "-XX:-UsePerfData",  # no /tmp/hsperfdata file, which the JVM would lock (seccomp.py)
    "-XX:+UseSerialGC",
    "-Xss1m",
    "-XX:ReservedCodeCacheSize=32m",
    "-XX:CompressedClassSpaceSize=32m",
    "-XX:MaxMetaspaceSize=64m",
    "-XX:TieredStopAtLevel=1",
    "-Xshare:auto",
)

# Every Java build holds the class tapis.Launcher (its source beside this module), the entry
# point the JVM is started with: it points System.out at descriptor 3, the protocol, and runs the
# bot's main class. The JVM's own descriptor 1 is the bot's log, so that the first lines of a
# fatal error's report, which JDK 17 writes there whatever its flags, never reach the protocol.
JAVA_LAUNCHER: Final = Path(__file__).with_name("Launcher.java").read_text()
JAVA_LAUNCHER_CLASS: Final = "tapis.Launcher"
JAVA_LAUNCHER_DIGEST: Final = hashlib.sha256(JAVA_LAUNCHER.encode()).hexdigest()[:12]

RUNTIMES: Final[dict[str, Runtime]] = {
    runtime.name: runtime
    for runtime in (
        Runtime("python3", (".py",), False, (("python3", "--version"),)),
        Runtime("javascript", (".js",), False, (("node", "--version"),)),
        Runtime("c", (".c",), True, (("gcc", "--version"),)),
        Runtime("cpp", (".cpp", ".cc", ".cxx"), True, (("g++", "--version"),)),
        Runtime("rust", (".rs",), True, (("rustc", "--version"), ("cargo", "--version"))),
        Runtime("go", (".go",), True, (("go", "version"),)),
        Runtime("java", (".java",), True, (("javac", "-version"), ("java", "-version"))),
    )
}
EXTENSIONS: Final[dict[str, str]] = {
    extension: runtime.name for runtime in RUNTIMES.values() for extension in runtime.extensions
}


def runtime_for_file(name: str) -> str | None:
    """The runtime of a single source file, from its extension (None: not a source file)."""
    return EXTENSIONS.get(PurePosixPath(name).suffix.lower())


def java_class(entry: str) -> str:
    """The main class of a Java entry: its file name without ``.java``, in the package its path
    names (``com/example/Bot.java`` is ``com.example.Bot``)."""
    return PurePosixPath(entry).with_suffix("").as_posix().replace("/", ".")


def toolchain(runtime: str) -> str:
    """The toolchain's version as its programs say it (the first line of each), e.g.
    ``gcc (Debian 12.2.0-14) 12.2.0``; an artifact built by another is never run here.

    Asked again whenever one of its programs (or Rust's crate folder) changed on disk: a worker
    whose toolchain is upgraded in place, without a restart, does not go on labelling builds,
    nor picking them from its cache, with the old version."""
    return _toolchain(runtime, _stamps(runtime))


def _stamps(runtime: str) -> tuple[tuple[str, int, int], ...]:
    """(path, mtime in ns, size) of each program that says the runtime's version."""
    paths = [_resolve_tool(command[0]) for command in RUNTIMES[runtime].version_commands]
    if runtime == "rust":
        paths.append(CARGO_REGISTRY)
    stamps = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            stamps.append((path, 0, 0))
        else:
            stamps.append((path, info.st_mtime_ns, info.st_size))
    return tuple(stamps)


@functools.cache
def _toolchain(runtime: str, stamps: tuple[tuple[str, int, int], ...]) -> str:
    lines = []
    for command, (path, _, _) in zip(RUNTIMES[runtime].version_commands, stamps, strict=False):
        try:
            done = subprocess.run(
                [path, *command[1:]],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            lines.append(f"{command[0]}: unavailable ({exc})")
            continue
        text = (done.stdout or done.stderr).strip()
        lines.append(text.splitlines()[0] if text else f"{command[0]}: no version")
    if runtime == "rust":
        crate = sorted(p.name for p in Path(CARGO_REGISTRY).glob("serde_json-*"))
        lines.append(", ".join(crate) or "serde_json: missing")
    if runtime == "java":  # built into every Java build: another launcher, another build
        lines.append(f"{JAVA_LAUNCHER_CLASS} {JAVA_LAUNCHER_DIGEST}")
    return "; ".join(lines)


@dataclasses.dataclass(frozen=True, slots=True)
class Artifact:
    """A build's output: a tar of the files the runtime runs at ``/bot``."""

    runtime: str
    entry: str
    sources_sha256: str
    toolchain: str
    data: bytes
    log: str
    seconds: float


def sources_digest(directory: Path) -> str:
    """SHA-256 over a package's files (paths and contents, in path order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix().encode()
        digest.update(len(rel).to_bytes(4, "big") + rel)
        data = path.read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _quote(paths: Sequence[str]) -> str:
    """Paths for a compiler's command line, each as ``./NAME``: never read as an option (gcc
    and javac ignore ``--``; ``@FILE`` is a file of options to both)."""
    return " ".join(shlex.quote(f"./{p}") for p in paths)


def build_script(runtime: str, entry: str, sources: Sequence[str]) -> str:
    """The shell script that builds in the sandbox: sources at /bot, tar of out/ on stdout."""
    files = _quote(sources)
    if runtime == "c":
        compile_ = f"{_host_tool('gcc')} -std=gnu17 -O2 -pipe -o ../out/bot {files} -lcjson -lm"
    elif runtime == "cpp":
        compile_ = f"{_host_tool('g++')} -std=c++20 -O2 -pipe -o ../out/bot {files} -lm"
    elif runtime == "go":
        target = "." if "go.mod" in sources else files
        # GOENV=off, GOFLAGS and GOWORK: no flags (-toolexec, -x) from a file or the
        # environment, no workspace file of the package's.
        compile_ = (
            "export GOCACHE=/tmp/b/gocache GOPATH=/tmp/b/gopath GOPROXY=off "
            "CGO_ENABLED=0 GOTOOLCHAIN=local GOTELEMETRY=off GOENV=off GOFLAGS= GOWORK=off; "
            f"{_host_tool('go')} build -p 2 -o ../out/bot {target}"
        )
    elif runtime == "java":
        launcher = "/tmp/b/launcher/tapis/Launcher.java"
        compile_ = (
            f"mkdir -p {os.path.dirname(launcher)}; "
            f"cat > {launcher} <<'TAPIS_LAUNCHER_END'\n{JAVA_LAUNCHER}TAPIS_LAUNCHER_END\n"
            f"{_host_tool('javac')} -J-XX:+UseSerialGC -J-Xmx512m -J-XX:ReservedCodeCacheSize=64m "
            "-J-XX:CompressedClassSpaceSize=64m -J-XX:TieredStopAtLevel=1 -encoding UTF-8 "
            f"-proc:none -cp {GSON_JAR} -d ../out {files} {launcher}"
        )
    elif runtime == "rust":
        # A single .rs file gets a Cargo.toml with serde_json; cargo works offline from
        # Debian's crates (a "directory" source replacing crates.io).
        manifest = (
            '[package]\\nname = "bot"\\nversion = "0.1.0"\\nedition = "2021"\\n\\n'
            '[dependencies]\\nserde_json = "1"\\n'
        )
        compile_ = (
            "export CARGO_HOME=/tmp/b/cargo CARGO_TARGET_DIR=/tmp/b/target "
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=gcc CARGO_BUILD_JOBS=2 "
            "CARGO_TERM_COLOR=never CARGO_PROFILE_RELEASE_STRIP=debuginfo; mkdir -p $CARGO_HOME; "
            'printf \'[source.crates-io]\\nreplace-with = "debian"\\n[source.debian]\\n'
            f'directory = "{CARGO_REGISTRY}"\\n[net]\\noffline = true\\n\' '
            "> $CARGO_HOME/config.toml; "
            "if [ ! -f Cargo.toml ]; then mkdir -p src.tmp && "
            f"cp {_quote([entry])} src.tmp/main.rs && "
            f"printf '{manifest}' > Cargo.toml && rm -rf src && mv src.tmp src; fi; "
            f"{_host_tool('cargo')} build --release --offline --quiet || exit 1; "
            "for f in /tmp/b/target/release/*; do "
            'if [ -f "$f" ] && [ -x "$f" ]; then cp "$f" ../out/bot; break; fi; done; '
            "test -f ../out/bot || { echo 'cargo built no program (a [[bin]] target)'; exit 1; }"
        )
    else:
        raise BuildError(f"{runtime!r} is not a compiled runtime")
    # The artifact's pipe (descriptor 3) is closed for the compiler and what it runs (a build
    # script, a procedural macro): only tar writes it, once every other process is gone.
    return (
        "set -e; umask 022; exec 3>&1 1>&2; mkdir -p /tmp/b/src /tmp/b/out; "
        f"cp -R {BOT_ROOT}/. /tmp/b/src/; cd /tmp/b/src; "
        f"( {compile_} ) 3>&- </dev/null; "
        "kill -KILL -1 2>/dev/null || true; "
        "tar -C /tmp/b/out -cf - . >&3"
    )


def build(
    source_dir: Path,
    runtime: str,
    entry: str,
    sources: Sequence[str],
    *,
    mode: str = "bwrap",
    limits: SandboxLimits = BUILD_LIMITS,
    wall_seconds: float = BUILD_WALL_SECONDS,
) -> Artifact:
    """Build a checked, unpacked package in the sandbox; BuildError (with the compiler's
    messages) if it does not build. ``source_dir`` must be readable by the sandbox uid (as
    :func:`judge.package.prepare` leaves it)."""
    if not RUNTIMES[runtime].compiled:
        raise BuildError(f"{runtime!r} is not a compiled runtime")
    script = build_script(runtime, entry, sources)
    started = time.perf_counter()
    try:
        process = spawn_bot(
            ["/bin/sh", "-c", script],
            bot_dir=source_dir,
            mode=mode,  # type: ignore[arg-type]
            limits=limits,
            cwd="/tmp",
            writable_exec=True,  # build scripts and procedural macros run from /tmp
        )
    except SandboxError as exc:
        raise BuildError(f"the build sandbox could not start: {exc}") from exc
    out, err, reason = b"", b"", ""
    try:
        process.stdin.close()
        streams = {process.stdout.fileno(): "out", process.stderr.fileno(): "err"}
        for fd in streams:
            os.set_blocking(fd, False)
        deadline = time.monotonic() + wall_seconds
        while streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                reason = f"the build took over {wall_seconds:.0f} s (wall time) and was stopped"
                break
            ready, _, _ = select.select(list(streams), [], [], remaining)
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    del streams[fd]
                elif streams[fd] == "out":
                    out += chunk
                    if len(out) > MAX_ARTIFACT_BYTES:
                        reason = f"the build's output is over {MAX_ARTIFACT_BYTES} bytes"
                        streams.clear()
                        break
                elif len(err) < BUILD_LOG_BYTES:
                    err += chunk
        status = None if reason else process.wait(max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        status, reason = None, f"the build took over {wall_seconds:.0f} s (wall time)"
    finally:
        process.kill()
    seconds = time.perf_counter() - started
    log = err[:BUILD_LOG_BYTES].decode("utf-8", "replace")
    if not reason and status != 0:
        reason = _failure(status, log)
    if reason:
        raise BuildError(f"{runtime} build failed: {reason}\n{trim_log(log)}".rstrip())
    try:
        _check_tar(out)
    except BuildError as exc:
        raise BuildError(f"{runtime} build failed: {exc}") from None
    digest = sources_digest(source_dir)
    return Artifact(runtime, entry, digest, toolchain(runtime), out, log, seconds)


def _failure(status: int | None, log: str) -> str:
    if status is not None and status < 0:
        return f"the compiler was killed by signal {-status} (out of CPU time or memory?)"
    if "memory exhausted" in log or "out of memory" in log.lower():
        return "the compiler ran out of memory"
    return f"the compiler exited with status {status}"


def trim_log(log: str, limit: int = 4000) -> str:
    """The compiler's messages for a report: the first errors matter most."""
    log = log.strip()
    if len(log) <= limit:
        return log
    return log[:limit] + f"\n[tapis: {len(log) - limit} more characters of compiler messages]"


def _check_tar(data: bytes) -> list[tarfile.TarInfo]:
    """The members of a build's tar, or BuildError: regular files and folders only, each path
    once (a file is no folder of another), no control character, none leaving the folder."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            members = archive.getmembers()
    except (tarfile.TarError, ValueError) as exc:
        raise BuildError(f"the build's output is not a tar ({exc})") from None
    if len(members) > MAX_ARTIFACT_FILES:
        raise BuildError(f"the build made more than {MAX_ARTIFACT_FILES} files")
    paths: dict[str, tarfile.TarInfo] = {}
    for member in members:
        key = _member_path(member)
        if key in paths:
            raise BuildError(f"{member.name!r}: the path appears twice in the build's output")
        paths[key] = member
    for key, member in paths.items():
        for parent in PurePosixPath(key).parents:
            if str(parent) in paths and not paths[str(parent)].isdir():
                raise BuildError(f"{member.name!r}: {str(parent)!r} is both a file and a folder")
    if not any(member.isfile() for member in members):
        raise BuildError("the build made no file")
    return members


def _member_path(member: tarfile.TarInfo) -> str:
    """A tar member's path, normalised (``./a`` is ``a``), or BuildError if it is odd."""
    name = member.name
    if not name or any(ord(ch) < 32 or ch == "\x7f" for ch in name):
        raise BuildError(f"{name!r}: an empty name or a control character in the build's output")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise BuildError(f"{name!r}: a path outside the build's folder")
    if not (member.isfile() or member.isdir()):
        raise BuildError(f"{name!r}: only files and folders may be built")
    return str(path)


def unpack_artifact(data: bytes, dest: Path) -> Path:
    """Unpack an artifact's tar into ``dest`` (emptied first), read-only for everyone: folders
    and programs 555, other files 444. The sandbox binds it read-only at ``/bot``. BuildError
    (nothing left in ``dest``) if the tar is refused (:func:`_check_tar`) or cannot be
    unpacked."""
    members = _check_tar(data)
    if dest.exists():
        remove_tree(dest)
    dest.mkdir(parents=True, mode=0o755)
    try:
        _unpack(data, members, dest)
    except (OSError, tarfile.TarError, ValueError) as exc:
        remove_tree(dest)
        raise BuildError(f"the build's output cannot be unpacked ({exc})") from None
    return dest


def _unpack(data: bytes, members: list[tarfile.TarInfo], dest: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        for member in members:
            target = dest.joinpath(*PurePosixPath(member.name).parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            assert source is not None
            with source, open(target, "xb") as out:
                shutil.copyfileobj(source, out)
            os.chmod(target, 0o555 if member.mode & 0o100 else 0o444)
    for root, dirs, _ in os.walk(dest):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o555)
    os.chmod(dest, 0o555)


def remove_tree(directory: Path) -> None:
    """Remove a read-only tree (an unpacked artifact)."""
    for root, dirs, _ in os.walk(directory):
        os.chmod(root, 0o755)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
    shutil.rmtree(directory, ignore_errors=True)


def _cache_key(runtime: str, sources_sha256: str) -> str:
    """The cache's folder of a build: its sources (the manifest, so the entry, among them)
    and this worker's toolchain."""
    text = f"{runtime}\0{sources_sha256}\0{toolchain(runtime)}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached(runtime: str, sources_sha256: str) -> bool:
    """Whether this worker's build cache has the artifact of these sources, by its toolchain."""
    return (build_cache() / _cache_key(runtime, sources_sha256) / ".tapis-built").exists()


def artifact_for(
    source_dir: Path,
    runtime: str,
    entry: str,
    sources: Sequence[str],
    cache: Path,
    *,
    stored: Artifact | None = None,
    mode: str = "bwrap",
) -> Path:
    """The unpacked artifact of a package, from the cache directory ``cache``, else from the
    ``stored`` artifact (the service's), else built now. A cached or stored artifact is used
    only if its sources' SHA-256 and its toolchain are this package's and this worker's: a
    build of another compiler is rebuilt, never run, and so is a stored one whose tar this
    worker refuses. BuildError if it does not build or its output is refused."""
    digest = sources_digest(source_dir)
    tool = toolchain(runtime)
    target = cache / _cache_key(runtime, digest)
    if (target / ".tapis-built").exists():
        return target / "bot"
    if stored is not None and stored.sources_sha256 == digest and stored.toolchain == tool:
        try:
            return _install(stored.data, target)
        except BuildError as exc:  # a stored build this worker refuses: built again here
            log.warning("stored build of %s refused (%s): building it again", digest[:12], exc)
    return _install(build(source_dir, runtime, entry, sources, mode=mode).data, target)


def _install(data: bytes, target: Path) -> Path:
    """Unpack an artifact into the cache folder ``target`` through a staging folder of its own,
    removed if anything fails (BuildError if the tar is refused)."""
    staging = target.with_name(f".{target.name}.{os.getpid()}.{time.monotonic_ns()}")
    staging.mkdir(parents=True, mode=0o711)
    try:
        unpack_artifact(data, staging / "bot")
        (staging / ".tapis-built").touch()
        staging.rename(target)
    except BaseException:
        remove_tree(staging)
        if (target / ".tapis-built").exists():  # another process built it meanwhile
            return target / "bot"
        raise
    return target / "bot"


def is_program(path: Path) -> bool:
    """Whether a file is a compiled program rather than a source (ELF, Mach-O, PE, class)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(4)
    except OSError:
        return False
    return head in (b"\x7fELF", b"\xca\xfe\xba\xbe", b"\xcf\xfa\xed\xfe") or head[:2] == b"MZ"


def build_cache() -> Path:
    """Where this worker keeps unpacked artifacts (``TAPIS_BUILD_CACHE``, else a folder of the
    system's temporary directory): reachable by the sandbox uids (711), written only here."""
    configured = os.environ.get("TAPIS_BUILD_CACHE")
    path = Path(configured) if configured else Path("/tmp") / f"tapis-builds-{os.geteuid()}"
    path.mkdir(parents=True, exist_ok=True, mode=0o711)
    os.chmod(path, 0o711)
    return path


def launch(
    directory: Path,
    runtime: str,
    entry: str,
    sources: Sequence[str],
    limits: SandboxLimits,
    *,
    mode: str = "bwrap",
    stored: Artifact | None = None,
) -> tuple[Path, SandboxLimits]:
    """What the sandbox binds at /bot for a prepared package (its sources, or for a compiled
    runtime its artifact, built now if no cached or stored one fits) and the limits it runs
    under (:func:`run_limits`)."""
    limits = run_limits(runtime, limits)
    if not RUNTIMES[runtime].compiled:
        return directory, limits
    cache = build_cache()
    return artifact_for(directory, runtime, entry, sources, cache, stored=stored, mode=mode), limits


def seed(package: Path, artifact: Artifact, *, mode: str = "bwrap") -> Path:
    """Put a stored artifact of ``package`` (an upload) into this worker's build cache and
    return it unpacked; built again in the sandbox if this worker's toolchain is not the
    artifact's (or the artifact is not of these sources)."""
    import tempfile

    from judge.launchers.package import prepare, remove

    with tempfile.TemporaryDirectory(prefix="tapis-seed-") as tmp:
        os.chmod(tmp, 0o711)
        prepared = prepare(package, Path(tmp, "src"))
        try:
            return artifact_for(
                prepared.directory,
                prepared.runtime,
                prepared.entry,
                prepared.sources,
                build_cache(),
                stored=artifact,
                mode=mode,
            )
        finally:
            remove(prepared.directory)
