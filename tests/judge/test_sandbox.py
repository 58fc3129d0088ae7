"""The bot sandbox, tested with real bubblewrap and real hostile programs (no mocks).

Each test writes a small bot, runs it with :func:`judge.sandbox.spawn_bot` and
checks what it could and could not do; a probe bot reports its findings as one
JSON line on stdout. Tests that need bubblewrap are skipped only when it truly
cannot run on the machine (the reason is printed).
"""

from __future__ import annotations

import errno
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from judge.sandbox import (
    SANDBOX_UID_BASE,
    SANDBOX_UID_COUNT,
    UNSANDBOXED_WARNING,
    BotProcess,
    SandboxError,
    SandboxLimits,
    parse_cgroup_v2,
    require_sandbox,
    seccomp,
    spawn_bot,
    uid_processes,
)

REPO = Path(__file__).resolve().parents[2]
SIGSYS_EXIT = 128 + signal.SIGSYS  # bubblewrap reports a bot killed by signal N as 128+N
SIGKILL_EXIT = 128 + signal.SIGKILL
SIGXCPU_EXIT = 128 + signal.SIGXCPU


# ----------------------------------------------------------------------------- helpers


def make_bot(root: Path, source: str, name: str = "main.py", dirname: str = "bot") -> Path:
    """A bot directory as a package would be unpacked: dirs 755, files 644."""
    bot_dir = root / dirname
    bot_dir.mkdir(exist_ok=True)
    bot_dir.chmod(0o755)
    path = bot_dir / name
    path.write_text(textwrap.dedent(source))
    path.chmod(0o644)
    return bot_dir


def run(
    bot_dir: Path,
    *args: str,
    limits: SandboxLimits = SandboxLimits(),  # noqa: B008
    stdin: bytes = b"",
    timeout: float = 30.0,
    sdk_dir: Path | None = None,
    command: list[str] | None = None,
) -> tuple[int | None, bytes, bytes]:
    """Run a bot to its end; returns (exit status, stdout, stderr)."""
    argv = command or ["python3", "-S", "/bot/main.py", *args]
    with spawn_bot(argv, bot_dir=bot_dir, limits=limits, sdk_dir=sdk_dir) as proc:
        return drain(proc, stdin=stdin, timeout=timeout)


def drain(
    proc: BotProcess, *, stdin: bytes = b"", timeout: float = 30.0
) -> tuple[int | None, bytes, bytes]:
    """Feed stdin, read stdout and stderr until the sandbox is gone (or timeout)."""
    if stdin:
        proc.stdin.write(stdin)
    proc.stdin.close()
    out, err = bytearray(), bytearray()
    buffers = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in selector.select(remaining):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    buffers[key.fd] += chunk
                else:
                    selector.unregister(key.fd)
    try:
        status: int | None = proc.wait(5)
    except subprocess.TimeoutExpired:
        status = None
    return status, bytes(out), bytes(err)


def last_json(out: bytes) -> dict[str, object]:
    lines = [line for line in out.decode().splitlines() if line.startswith("{")]
    assert lines, f"the probe printed no JSON: {out!r}"
    result: dict[str, object] = json.loads(lines[-1])
    return result


def read_line(proc: BotProcess, timeout: float = 20.0) -> bytes:
    """One line from the bot's stdout, with a timeout."""
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no line from the bot in {timeout} s (got {data!r})"
            if selector.select(remaining):
                chunk = os.read(fd, 1)
                assert chunk, f"the bot closed stdout (got {data!r})"
                data += chunk
    return data


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works(bwrap_works: None) -> None:
    """Every test here needs a working sandbox (tests/judge/conftest.py)."""


# ----------------------------------------------------------------------------- basics


ECHO_BOT = """\
import json, os, sys
print(json.dumps({"type": "ready", "uid": os.getuid(), "pid": os.getpid()}), flush=True)
for line in sys.stdin:
    message = json.loads(line)
    print(json.dumps({"id": message["id"], "action": message["legal"][0]}), flush=True)
"""


def test_a_trivial_bot_answers_through_the_pipes(bot_root: Path) -> None:
    bot = make_bot(bot_root, ECHO_BOT)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as proc:
        hello = json.loads(read_line(proc))
        assert hello["type"] == "ready"
        assert hello["uid"] != 0
        assert hello["pid"] == 1  # its own pid namespace
        for i in range(3):
            proc.stdin.write(json.dumps({"id": i, "legal": [f"card{i}", "x"]}).encode() + b"\n")
            assert json.loads(read_line(proc)) == {"id": i, "action": f"card{i}"}
        assert proc.poll() is None
    assert proc.poll() is not None
    assert uid_processes(proc.uid) == []  # no zombie left for the host's init either


def test_the_bot_runs_as_an_unprivileged_host_uid_of_its_own(bot_root: Path) -> None:
    bot = make_bot(bot_root, ECHO_BOT)
    with (
        spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as first,
        spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as second,
    ):
        read_line(first)
        read_line(second)
        for proc in (first, second):
            assert proc.uid != 0
            pids = uid_processes(proc.uid)
            assert proc.sandbox_pid in pids
            for pid in pids:  # every process of the sandbox, seen from the host
                status = Path(f"/proc/{pid}/status").read_text()
                uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
                assert set(uids.split()[1:]) == {str(proc.uid)}
        if os.geteuid() == 0:
            assert first.uid != second.uid
            for proc in (first, second):
                assert SANDBOX_UID_BASE <= proc.uid < SANDBOX_UID_BASE + SANDBOX_UID_COUNT


def test_python_starts_with_the_usual_flags_and_the_sdk_is_importable(bot_root: Path) -> None:
    sdk = bot_root / "sdk"
    sdk.mkdir(mode=0o755)
    (sdk / "tapis_sdk_probe.py").write_text("NAME = 'sdk here'\n")
    (sdk / "tapis_sdk_probe.py").chmod(0o644)
    bot = make_bot(bot_root, "import sys, tapis_sdk_probe\nprint(tapis_sdk_probe.NAME)\n")
    code, out, err = run(bot, sdk_dir=sdk)
    assert (code, out) == (0, b"sdk here\n"), err
    isolated = make_bot(bot_root, "import sys\nprint(sys.flags.isolated, sys.executable)\n", "i.py")
    code, out, err = run(isolated, command=["python3", "-I", "/bot/i.py"])
    assert (code, out) == (0, b"1 /usr/bin/python3\n"), err


def test_only_the_standard_streams_are_inherited(bot_root: Path) -> None:
    bot = make_bot(
        bot_root, "import os\nprint(sorted(int(f) for f in os.listdir('/proc/self/fd')))\n"
    )
    keep = os.open("/dev/null", os.O_RDONLY)  # inheritable or not, it must not reach the bot
    os.set_inheritable(keep, True)
    try:
        code, out, _ = run(bot)
    finally:
        os.close(keep)
    assert code == 0
    assert json.loads(out) == [0, 1, 2, 3]  # 3 is listdir's own descriptor


# ----------------------------------------------------------------------------- isolation


NET_PROBE = """\
import json, socket, sys
results = {}
for host, port in [("127.0.0.1", 5432), ("127.0.0.1", 6379), ("127.0.0.1", int(sys.argv[1])),
                   ("1.1.1.1", 53), ("8.8.8.8", 443), ("::1", 5432)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        results[f"{host}:{port}"] = "CONNECTED"
    except OSError as exc:
        results[f"{host}:{port}"] = exc.__class__.__name__ + ":" + str(exc.errno)
try:
    results["dns"] = "RESOLVED " + str(socket.getaddrinfo("example.org", 443))
except OSError as exc:
    results["dns"] = "failed:" + str(exc.errno)
for name, family in [("vsock", 40), ("netlink", 16), ("packet", 17), ("inet", 2), ("inet6", 10)]:
    try:
        socket.socket(family, socket.SOCK_RAW if family in (16, 17) else socket.SOCK_STREAM).close()
        results[name] = "OPENED"
    except OSError as exc:
        results[name] = exc.errno
print(json.dumps(results), flush=True)
"""


def test_there_is_no_network(bot_root: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # reachable from here
        code, out, err = run(make_bot(bot_root, NET_PROBE), str(port))
    finally:
        listener.close()
    assert code == 0, err
    results = last_json(out)
    # No IP socket at all, not even on the sandbox's own loopback (seccomp: AF_UNIX only)
    for target in ("127.0.0.1:5432", "127.0.0.1:6379", f"127.0.0.1:{port}", "::1:5432"):
        assert results[target] == f"OSError:{errno.EAFNOSUPPORT}", results
    for target in ("1.1.1.1:53", "8.8.8.8:443"):
        assert results[target] == f"OSError:{errno.EAFNOSUPPORT}", results
    assert str(results["dns"]).startswith("failed"), results
    # non-namespaced or useless families are refused by the seccomp filter
    assert results["vsock"] == results["netlink"] == results["packet"] == errno.EAFNOSUPPORT
    assert results["inet"] == results["inet6"] == errno.EAFNOSUPPORT


READ_PROBE = """\
import json, os, sys
results = {}
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            results[path] = "LISTED " + ",".join(sorted(os.listdir(path)))
        else:
            with open(path, "rb") as f:
                results[path] = "READ " + f.read().decode("latin-1")
    except OSError as exc:
        results[path] = "denied:" + exc.__class__.__name__
results["environ"] = dict(os.environ)
results["proc"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
results["root"] = sorted(os.listdir("/"))
print(json.dumps(results), flush=True)
"""


def test_host_files_secrets_and_environment_stay_out(
    bot_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-" + os.urandom(8).hex()
    monkeypatch.setenv("SECRET_KEY", secret)
    monkeypatch.setenv("DATABASE_URL", f"postgres://tapis:{secret}@127.0.0.1/tapis")
    other = make_bot(bot_root, f"SECRET = {secret!r}\n", dirname="other_bot")
    bot = make_bot(bot_root, READ_PROBE)
    targets = [
        str(REPO / "pyproject.toml"),
        str(REPO),
        "/work",
        "/root",
        "/home",
        str(other / "main.py"),
        "/bot/../other_bot/main.py",
        f"/proc/{os.getpid()}/environ",  # the judge, by its host pid
        "/proc/1/environ",  # the host's init? no: the bot itself, pid 1 of its namespace
        "/proc/self/environ",
        "/etc/passwd",
        "/etc/hostname",
        "/sys/kernel",
        "/var",
        "/run",
    ]
    code, out, err = run(bot, *targets)
    assert code == 0, err
    assert secret.encode() not in out
    results = last_json(out)
    for target in [*targets[:8], "/etc/passwd", "/etc/hostname", "/sys/kernel", "/var", "/run"]:
        assert str(results[target]).startswith("denied"), (target, results[target])
    for target in ("/proc/1/environ", "/proc/self/environ"):
        value = str(results[target])
        assert "SECRET_KEY" not in value
        assert "DATABASE_URL" not in value
    environ = results["environ"]
    assert isinstance(environ, dict)
    assert set(environ) <= {"PATH", "LANG", "HOME", "PYTHONDONTWRITEBYTECODE", "PWD", "LC_CTYPE"}
    assert environ["HOME"] == "/tmp"
    assert environ["PATH"] == "/usr/bin:/bin"
    assert results["proc"] == [1]  # the bot alone: nothing of the host
    assert results["root"] == [
        ".tapis-start",  # the C starter (judge/sandbox/starters.py), read-only: no secret
        "bin",
        "bot",
        "dev",
        "etc",
        "lib",
        "lib64",
        "proc",
        "sbin",
        "tmp",
        "usr",
    ]


WRITE_PROBE = """\
import json, os
results = {}
for path in ["/bot/new.py", "/bot/main.py", "/new", "/usr/new", "/etc/new", "/dev/shm/new",
             "/dev/new", "/proc/new", "/tmp/new"]:
    try:
        with open(path, "w") as f:
            f.write("x")
        results[path] = "WROTE"
    except OSError as exc:
        results[path] = "denied:" + exc.__class__.__name__
for path in ["/bot/dir", "/dir", "/usr/dir"]:
    try:
        os.mkdir(path)
        results[path] = "MADE"
    except OSError as exc:
        results[path] = "denied:" + exc.__class__.__name__
with open("/dev/null", "w") as f:
    f.write("x")
print(json.dumps(results), flush=True)
"""


def test_nothing_is_writable_but_tmp(bot_root: Path) -> None:
    bot = make_bot(bot_root, WRITE_PROBE)
    before = sorted(p.name for p in bot.iterdir())
    code, out, err = run(bot)
    assert code == 0, err
    results = last_json(out)
    assert results.pop("/tmp/new") == "WROTE"
    for path, outcome in results.items():
        assert str(outcome).startswith("denied"), (path, outcome)
    assert sorted(p.name for p in bot.iterdir()) == before
    assert not Path("/new").exists()


def test_tmp_is_private_and_size_limited(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import json, os
        written = 0
        error = None
        try:
            with open("/tmp/fill", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * 65536)
                    f.flush()
                    written += 65536
        except OSError as exc:
            error = exc.errno
        print(json.dumps({"written": written, "errno": error, "tmp": sorted(os.listdir("/tmp"))}))
        """,
    )
    code, out, err = run(bot, limits=SandboxLimits(tmp_bytes=2**20))
    assert code == 0, err
    results = last_json(out)
    assert results["errno"] == errno.ENOSPC
    assert isinstance(results["written"], int)
    assert results["written"] <= 2**20
    assert results["tmp"] == ["fill"]  # nothing of the host's /tmp


def test_file_size_is_limited(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import json
        try:
            with open("/tmp/big", "wb") as f:
                f.write(b"x" * (3 * 2**20))
            print(json.dumps({"errno": None}))
        except OSError as exc:
            print(json.dumps({"errno": exc.errno}))
        """,
    )
    code, out, err = run(bot, limits=SandboxLimits(max_file_size=2**20, tmp_bytes=8 * 2**20))
    assert code == 0, err
    assert last_json(out) == {"errno": errno.EFBIG}


# ----------------------------------------------------------------------------- resources


def test_a_memory_balloon_is_stopped(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import json
        held = []
        try:
            while True:
                held.append(bytearray(16 * 2**20))
        except MemoryError:
            print(json.dumps({"held_mib": 16 * len(held)}), flush=True)
        """,
    )
    code, out, err = run(bot, limits=SandboxLimits(memory_bytes=256 * 2**20))
    assert code == 0, err
    held = last_json(out)["held_mib"]
    assert isinstance(held, int)
    assert 0 < held < 256


def test_a_fork_bomb_is_contained_and_killed(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import json, os, time
        forked, error = 0, None
        while forked < 1000:
            try:
                pid = os.fork()
            except OSError as exc:
                error = exc.errno
                break
            if pid == 0:
                time.sleep(600)
                os._exit(0)
            forked += 1
        print(json.dumps({"forked": forked, "errno": error}), flush=True)
        time.sleep(600)
        """,
    )
    limits = SandboxLimits(max_processes=12)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot, limits=limits) as proc:
        results = json.loads(read_line(proc))
        assert results["errno"] == errno.EAGAIN
        assert 0 < results["forked"] < 12
        assert len(uid_processes(proc.uid)) <= 12
        uid = proc.uid
    assert uid_processes(uid) == []


def test_a_cpu_spin_is_killed_by_the_cpu_limit(bot_root: Path) -> None:
    bot = make_bot(bot_root, "while True:\n    pass\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # On a loaded machine a CPU second may take many seconds of wall time: the timeout of the
    # test is wide, and what is checked is the CPU time the bot got (bubblewrap waits for the
    # bot, so its time counts among the judge's reaped children).
    code, _, _ = run(bot, limits=SandboxLimits(cpu_seconds=1), timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert code in (SIGXCPU_EXIT, SIGKILL_EXIT)
    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert 1.0 <= used < 3.0, used  # the soft limit, at most the hard one (1 s more) + set-up


# ----------------------------------------------------------------------------- system calls


SYSCALL_PROBE = """\
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    if rc == 0 and nr == 56:  # clone(CLONE_NEWUSER) succeeded: this is the child
        os._exit(0)
    return ctypes.get_errno() if rc == -1 else "ALLOWED"
NEWUSER, SIGCHLD = 0x10000000, 17
SHARED = os.open("/usr/bin/true", os.O_RDONLY)
results = {
    "ptrace": call(101, 0, 0, 0, 0),                    # PTRACE_TRACEME
    "process_vm_readv": call(310, os.getpid(), 0, 0, 0, 0, 0),
    "process_vm_writev": call(311, os.getpid(), 0, 0, 0, 0, 0),
    "keyctl": call(250, 0, -3, 1),                       # KEYCTL_GET_KEYRING_ID session
    "add_key": call(248, 0, 0, 0, 0, -2),
    "request_key": call(249, 0, 0, 0, 0),
    "bpf": call(321, 0, 0, 0),
    "perf_event_open": call(298, 0, 0, -1, -1, 0),
    "io_uring_setup": call(425, 1, 0),
    "io_uring_enter": call(426, -1, 0, 0, 0, 0, 0),
    "io_uring_register": call(427, -1, 0, 0, 0),
    "mount": call(165, 0, 0, 0, 0, 0),
    "umount2": call(166, 0, 0),
    "unshare": call(272, 0),
    "setns": call(308, -1, 0),
    "personality": call(135, 0xFFFFFFFF),
    "kexec_load": call(246, 0, 0, 0, 0),
    "kexec_file_load": call(320, -1, -1, 0, 0, 0),
    "userfaultfd": call(323, 0),
    "shmget": call(29, 0, 4096, 0o1600),
    "msgget": call(68, 0, 0o1600),
    "clone_newuser": call(56, NEWUSER | SIGCHLD, 0, 0, 0, 0),
    "clone3": call(435, 0, 0),
    "tiocsti": call(16, 0, 0x5412, 0),
    # locks and file events on the files every sandbox shares (/usr): a channel between bots
    "flock": call(73, SHARED, 2 | 4),                    # LOCK_EX | LOCK_NB
    "fcntl_getlk": call(72, SHARED, 5, 0),
    "fcntl_setlk": call(72, SHARED, 6, 0),
    "fcntl_setlk_high_bits": call(72, SHARED, 0x100000006, 0),  # the kernel reads an int
    "fcntl_ofd_setlk": call(72, SHARED, 37, 0),
    "fcntl_notify": call(72, os.open("/usr/bin", os.O_RDONLY), 1026, 0x80000001),
    "inotify_init": call(253),
    "inotify_init1": call(294, 0),
    "inotify_add_watch": call(254, -1, 0, 0),
    # host-wide counters and figures, the page cache of shared files (docs/sandbox.md)
    "io_setup": call(206, 1, ctypes.addressof(ctypes.c_ulong(0))),
    "io_submit": call(209, 0, 0, 0),
    "sysinfo": call(99, ctypes.addressof(ctypes.create_string_buffer(256))),
    "setsid": call(112),
    "pidfd_open": call(434, os.getpid(), 0),
    "clone_pidfd": call(56, 0x1000 | SIGCHLD, 0, 0, 0, 0),
    "fadvise_dontneed": call(221, SHARED, 0, 0, 4),
    "madvise_pageout": call(28, 0, 4096, 21),
    "madvise_cold": call(28, 0, 4096, 20),
    "madvise_mergeable": call(28, 0, 4096, 12),
    "process_madvise": call(440, -1, 0, 0, 21, 0),
    "pr_set_memory_merge": call(157, 67, 1, 0, 0, 0),
    "mincore": call(27, 0, 4096, 0),
    "cachestat": call(451, SHARED, 0, 0, 0),
    "readahead": call(187, SHARED, 0, 4096),
    "preadv2_nowait": call(327, SHARED, 0, 0, 0, 0, 8),
    "pwritev2_nowait": call(328, SHARED, 0, 0, 0, 0, 8),
    "fcntl_setlease": call(72, SHARED, 1024, 0),
}
print(json.dumps(results), flush=True)
"""


def test_dangerous_system_calls_are_refused(bot_root: Path) -> None:
    code, out, err = run(make_bot(bot_root, SYSCALL_PROBE))
    assert code == 0, err
    results = last_json(out)
    assert results.pop("clone3") == errno.ENOSYS  # so that the C library falls back to clone
    assert results == dict.fromkeys(results, errno.EPERM)
    assert len(results) == 50


def test_ordinary_system_calls_still_work(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import json, os, socket, subprocess, threading, time
        a, b = socket.socketpair()
        a.sendall(b"ping")
        t = threading.Thread(target=time.sleep, args=(0.01,))
        t.start()
        t.join()
        child = subprocess.run(["python3", "-S", "-c", "print(6 * 7)"], capture_output=True)
        fd = os.memfd_create("x", 8)  # MFD_NOEXEC_SEAL: a memfd that cannot execute
        os.write(fd, b"data")
        import fcntl
        blocking = not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK  # fcntl but its locks
        usr = os.open("/usr/bin/true", os.O_RDONLY)  # fadvise and preadv2 but their eviction
        os.posix_fadvise(usr, 0, 0, os.POSIX_FADV_SEQUENTIAL)  # and their probe
        read = os.preadv(usr, [bytearray(4)], 0, os.RWF_HIPRI)
        print(json.dumps({"pair": b.recv(4).decode(), "child": child.stdout.decode().strip(),
                          "blocking": blocking, "read": read}))
        """,
    )
    code, out, err = run(bot)
    assert code == 0, err
    assert last_json(out) == {"pair": "ping", "child": "42", "blocking": True, "read": 4}


def test_a_32_bit_int_0x80_system_call_kills_the_bot(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import ctypes, mmap
        code = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20 (getpid); int 0x80; ret
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(code)
        function = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        print("calling", flush=True)
        print("ESCAPED", function(), flush=True)
        """,
    )
    code, out, _ = run(bot)
    assert out == b"calling\n"
    assert code == SIGSYS_EXIT


def test_an_x32_system_call_kills_the_bot(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        print("calling", flush=True)
        print("ESCAPED", libc.syscall(0x40000000 | 39), flush=True)  # x32 getpid
        """,
    )
    code, out, _ = run(bot)
    assert out == b"calling\n"
    assert code == SIGSYS_EXIT


def test_the_filter_checks_the_architecture_first() -> None:
    program = seccomp.filter_program()
    first = [program[i : i + 8] for i in range(0, 16, 8)]
    # ld [4] (arch); jeq AUDIT_ARCH_X86_64 else kill
    assert first[0] == bytes.fromhex("2000000004000000")
    assert first[1][:2] == bytes.fromhex("1500")
    assert first[1][4:] == bytes.fromhex("3e0000c0")
    kill_process = (0x80000000).to_bytes(4, "little")
    assert program.endswith(bytes.fromhex("06000000") + kill_process)


# ----------------------------------------------------------------------------- process tree


DAEMON_BOT = """\
import os, sys, time
read, write = os.pipe()
if os.fork() == 0:
    try:
        os.setsid()  # refused (docs/sandbox.md, "Host-wide channels")
    except OSError:
        pass
    if os.fork() == 0:  # the daemon: no parent, no streams
        os.write(write, b"up")
        for fd in (0, 1, 2):
            os.close(fd)
        while True:
            time.sleep(1)
    os._exit(0)
os.wait()
os.read(read, 2)
print("daemon started", flush=True)
if sys.argv[1:] == ["stay"]:
    time.sleep(600)
"""


def test_a_double_forked_daemon_dies_with_kill(bot_root: Path) -> None:
    bot = make_bot(bot_root, DAEMON_BOT)
    with spawn_bot(["python3", "-S", "/bot/main.py", "stay"], bot_dir=bot) as proc:
        assert read_line(proc) == b"daemon started\n"
        # bubblewrap (started as prlimit), the bot and its daemon
        assert len(uid_processes(proc.uid)) == 3
        uid = proc.uid
        proc.kill()
        assert uid_processes(uid) == []
        proc.kill()  # idempotent
    assert proc.stdout.closed
    assert proc.stdin.closed
    assert proc.stderr.closed


def test_a_daemon_dies_when_the_bot_exits(bot_root: Path) -> None:
    bot = make_bot(bot_root, DAEMON_BOT)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as proc:
        assert read_line(proc) == b"daemon started\n"
        assert proc.wait(10) == 0
        # the daemon died with the bot; bubblewrap waits, a zombie, for kill() to reap it
        assert uid_processes(proc.uid) == [proc.pid]
    assert uid_processes(proc.uid) == []


def test_kill_9_minus_1_reaches_nobody_else(bot_root: Path) -> None:
    bot = make_bot(bot_root, ECHO_BOT)
    killer = make_bot(
        bot_root,
        """\
        import os, signal
        try:
            os.kill(-1, signal.SIGKILL)  # everyone in its namespace but itself: nobody
            print("sent", flush=True)
        except OSError as exc:
            print(exc.errno, flush=True)
        os.kill(1, signal.SIGKILL)  # itself, the init of its namespace: ignored
        print("alive", flush=True)
        """,
        dirname="killer",
    )
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as victim:
        read_line(victim)
        code, out, _ = run(killer)
        assert (code, out) == (0, f"{errno.ESRCH}\nalive\n".encode())
        assert victim.poll() is None
        victim.stdin.write(b'{"id": 1, "legal": ["QS"]}\n')
        assert json.loads(read_line(victim)) == {"id": 1, "action": "QS"}


def test_two_bots_cannot_reach_each_other(bot_root: Path) -> None:
    token = os.urandom(6).hex()
    first = make_bot(
        bot_root,
        f"""\
        import json, os, socket, sys
        server = socket.socket(socket.AF_UNIX)
        server.bind("\\0tapis-{token}")
        server.listen()
        with open("/tmp/{token}", "w") as f:
            f.write("hello")
        print(json.dumps({{"pid": os.getpid()}}), flush=True)
        sys.stdin.read()
        """,
        dirname="first",
    )
    second = make_bot(
        bot_root,
        f"""\
        import json, os, signal, socket
        results = {{}}
        client = socket.socket(socket.AF_UNIX)
        try:
            client.connect("\\0tapis-{token}")
            results["abstract"] = "CONNECTED"
        except OSError as exc:
            results["abstract"] = exc.errno
        results["tmp"] = os.path.exists("/tmp/{token}")
        results["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        try:
            os.kill(2, signal.SIGKILL)
            results["signal"] = "SENT"
        except OSError as exc:
            results["signal"] = exc.errno
        print(json.dumps(results), flush=True)
        """,
        dirname="second",
    )
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=first) as one:
        read_line(one)
        code, out, err = run(second)
        assert code == 0, err
        results = last_json(out)
        assert results == {
            "abstract": errno.ECONNREFUSED,
            "tmp": False,
            "processes": [1],
            "signal": errno.ESRCH,
        }
        assert one.poll() is None


def test_kill_is_fast(bot_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kill() returns as soon as the tree is gone: none of its waits runs to its time limit
    (5 s for the tree, 1 s for bubblewrap to exit), and bubblewrap exits by itself, reporting
    the bot's SIGKILL, rather than being killed. (Not a wall-clock bound, which a loaded
    machine would break.)"""
    import judge.sandbox

    waits: list[tuple[float, bool]] = []
    wait_readable = judge.sandbox.process.wait_readable

    def recorded(fd: int, timeout: float) -> bool:
        done = wait_readable(fd, timeout)
        waits.append((timeout, done))
        return done

    bot = make_bot(bot_root, "import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    proc = spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot)
    read_line(proc)
    monkeypatch.setattr(judge.sandbox.process, "wait_readable", recorded)
    proc.kill()
    assert waits
    assert all(done for _, done in waits), waits
    assert proc.returncode == SIGKILL_EXIT


# ----------------------------------------------------------------------------- errors, mode none


def test_set_up_errors_raise_sandbox_error(
    bot_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = make_bot(bot_root, "print('hi')\n")
    with pytest.raises(SandboxError, match="not a directory"):
        spawn_bot(["python3", "/bot/main.py"], bot_dir=bot_root / "missing")
    with pytest.raises(SandboxError, match="non-empty"):
        spawn_bot([], bot_dir=bot)
    with pytest.raises(SandboxError, match="unknown sandbox mode"):
        spawn_bot(["python3"], bot_dir=bot, mode="docker")  # type: ignore[arg-type]
    if os.geteuid() == 0:
        private = make_bot(bot_root, "print('hi')\n", dirname="private")
        private.chmod(0o700)
        with pytest.raises(SandboxError, match="not readable by the sandbox uid"):
            spawn_bot(["python3", "/bot/main.py"], bot_dir=private)
    if os.geteuid() == 0:
        hidden = make_bot(tmp_path, "print('hi')\n")  # pytest's tmp_path is under a 700 dir
        with pytest.raises(SandboxError, match="not reachable by the sandbox uid"):
            spawn_bot(["python3", "/bot/main.py"], bot_dir=hidden)
    monkeypatch.setenv("TAPIS_BWRAP", str(bot_root / "no-bwrap"))
    with pytest.raises(SandboxError, match="bubblewrap not found"):
        spawn_bot(["python3", "/bot/main.py"], bot_dir=bot)


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="cpu_seconds"):
        SandboxLimits(cpu_seconds=0)
    with pytest.raises(ValueError, match="memory_bytes"):
        SandboxLimits(memory_bytes=-1)


def test_require_sandbox_refuses_none_unless_allowed() -> None:
    require_sandbox("bwrap", allow_unsandboxed=False)
    require_sandbox("none", allow_unsandboxed=True)
    with pytest.raises(SandboxError, match="refused"):
        require_sandbox("none", allow_unsandboxed=False)
    with pytest.raises(SandboxError, match="unknown"):
        require_sandbox("docker", allow_unsandboxed=True)


def test_mode_none_warns_once_maps_paths_and_applies_rlimits(bot_root: Path) -> None:
    bot = make_bot(
        bot_root,
        """\
        import os, resource, sys
        print(os.getcwd(), sys.argv[0], resource.getrlimit(resource.RLIMIT_AS)[0], flush=True)
        """,
    )
    script = textwrap.dedent(
        f"""\
        from pathlib import Path
        from judge.sandbox import SandboxLimits, spawn_bot, warn_unsandboxed
        warn_unsandboxed()  # as tapis play does before its first bot: printed once in all
        for _ in range(2):
            with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=Path({str(bot)!r}),
                           mode="none", limits=SandboxLimits(memory_bytes=300 * 2**20)) as p:
                print(p.stdout.readline().decode().strip(), flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    expected = f"{bot} {bot}/main.py {300 * 2**20}"
    assert done.stdout.splitlines() == [expected, expected]
    assert done.stderr.count(UNSANDBOXED_WARNING) == 1


def test_mode_none_without_prlimit_still_applies_rlimits(
    bot_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judge.sandbox

    monkeypatch.setattr(judge.sandbox.commands, "_TRUSTED_PATH", str(bot_root))  # no prlimit there
    bot = make_bot(bot_root, "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS))\n")
    limits = SandboxLimits(memory_bytes=300 * 2**20)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot, mode="none", limits=limits) as p:
        assert drain(p)[:2] == (0, f"({300 * 2**20}, {300 * 2**20})\n".encode())


def test_cgroup_v2_location_is_parsed() -> None:
    hybrid = (
        "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n"
        "36 25 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    )
    assert parse_cgroup_v2(hybrid, "4:memory:/x\n0::/\n") == Path("/sys/fs/cgroup/unified")
    container = "40 30 0:40 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"
    assert parse_cgroup_v2(container, "0::/docker/abc/worker\n") == Path("/sys/fs/cgroup/worker")
    assert parse_cgroup_v2(hybrid, "4:memory:/x\n") is None


# ----------------------------------------------------------------------------- noexec

NOEXEC_PROBE = r"""
cp /usr/bin/true /tmp/elf && chmod 755 /tmp/elf
printf '#!/bin/sh\nexit 0\n' > /tmp/script && chmod 755 /tmp/script
/tmp/elf && echo "ran elf" || echo "refused elf"
/tmp/script && echo "ran script" || echo "refused script"
/lib64/ld-linux-x86-64.so.2 /tmp/elf && echo "ran ld.so" || echo "refused ld.so"
while read -r _ _ _ _ point options _; do echo "mount $point $options"; done < /proc/self/mountinfo
grep -E "^(Cap(Prm|Eff|Inh|Bnd|Amb)|NoNewPrivs|Seccomp_filters):" /proc/self/status
echo "pid $$"
"""


@pytest.mark.parametrize("kind", ["c", "python"])
def test_tmp_is_noexec_and_the_starter_leaves_no_privilege(
    kind: str, bot_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Either starter (the C one, built with gcc; the Python one where it cannot be) makes /tmp
    noexec, drops every capability it was given, stacks the bot's seccomp filter and leaves
    the bot pid 1."""
    from judge.sandbox import starters

    monkeypatch.setenv("TAPIS_SANDBOX_STARTER", "python" if kind == "python" else "")
    argv = starters.starter(99)[1]
    assert argv[0] == (starters.IN_SANDBOX if kind == "c" else starters.PYTHON)
    bot = make_bot(bot_root, "")
    code, out, err = run(bot, command=["/bin/sh", "-c", NOEXEC_PROBE])
    assert code == 0, err
    lines = out.decode().splitlines()
    assert {"refused elf", "refused script", "refused ld.so"} <= set(lines), lines
    mounts = dict(line.split()[1:] for line in lines if line.startswith("mount "))
    assert "noexec" in mounts["/tmp"].split(","), mounts
    writable = [p for p, o in mounts.items() if "rw" in o.split(",") and "noexec" not in o]
    assert all(p.startswith("/dev/") and p != "/dev/shm" for p in writable), writable  # nodes
    status = dict(line.split(":\t") for line in lines if ":\t" in line)
    for name in ("CapPrm", "CapEff", "CapInh", "CapBnd", "CapAmb"):
        assert status[name] == "0000000000000000", status
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp_filters"] == "2"  # the starter's, then the bot's on top
    assert "pid 1" in lines


def test_a_build_sandbox_keeps_an_executable_tmp(bot_root: Path) -> None:
    """Builds run what they build (Rust build scripts): no starter, /tmp executable."""
    bot = make_bot(bot_root, "")
    command = ["/bin/sh", "-c", "cp /usr/bin/true /tmp/t && /tmp/t && echo ran"]
    with spawn_bot(command, bot_dir=bot, writable_exec=True) as process:
        assert drain(process)[:2] == (0, b"ran\n")


BUILD_PROBE = """\
import ctypes, fcntl, json, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return ctypes.get_errno() if rc == -1 else "ALLOWED"
usr, lock = os.open("/usr/bin", os.O_RDONLY), os.open("/tmp/lock", os.O_CREAT | os.O_RDWR)
print(json.dumps({
    "inotify_init1": call(294, 0),
    "fcntl_notify": call(72, usr, 1026, 0x80000001),
    "fcntl_setlease": call(72, os.open("/usr/bin/true", os.O_RDONLY), 1024, 0),
    "flock_own_tmp": call(73, lock, 2 | 4),
}))
"""


def test_a_build_locks_its_own_files_but_cannot_watch_usr(bot_root: Path) -> None:
    """A build runs an author's code while tables play: it keeps the locks cargo and go take in
    its /tmp, not file events or leases, with which it could watch /usr (a channel)."""
    bot = make_bot(bot_root, BUILD_PROBE)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot, writable_exec=True) as process:
        code, out, err = drain(process)
    assert code == 0, err
    results = last_json(out)
    assert results.pop("flock_own_tmp") == "ALLOWED"
    assert results == dict.fromkeys(results, errno.EPERM)


def test_the_c_starter_is_not_used_from_a_folder_others_may_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from judge.sandbox import starters

    folder = Path(tempfile.mkdtemp(prefix="tapis-starter-test-"))
    try:
        folder.chmod(0o777)
        monkeypatch.setenv("TAPIS_STARTER_DIR", str(folder))
        starters.native_starter.cache_clear()
        assert starters.native_starter() is None
        folder.chmod(0o700)  # the sandbox uids could not reach it
        starters.native_starter.cache_clear()
        assert starters.native_starter() is None
        folder.chmod(0o711)
        starters.native_starter.cache_clear()
        built = starters.native_starter()
        assert built is not None
        assert built.parent == folder
        assert built.stat().st_mode & 0o777 == 0o555
    finally:
        starters.native_starter.cache_clear()
        shutil.rmtree(folder)


def test_the_status_names_the_starter(monkeypatch: pytest.MonkeyPatch) -> None:
    from judge.sandbox import sandbox_status, starters

    assert sandbox_status().starter == str(starters.native_starter())
    monkeypatch.setattr(starters, "native_starter", lambda: None)
    assert sandbox_status().starter == "python"
