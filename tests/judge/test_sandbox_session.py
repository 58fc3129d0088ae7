"""The sandbox and the judge's session: a bot stays in the judge's session (so in its scheduling
autogroup: a round trip across autogroups costs up to 15% more, docs/sandbox.md "Speed"), but
in a process group of its own, and nothing of the judge's terminal is within its reach."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.sandbox import spawn_bot
from tests.judge.test_sandbox import drain, last_json, make_bot

pytestmark = pytest.mark.usefixtures("bwrap_works")

ROOT = Path(__file__).resolve().parents[2]

# What a bot can learn of its session, and what it can do to a terminal.
PROBE = """\
import fcntl, json, os, termios

st = os.stat("/dev/tty")
found = {}
found["tty"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
fd = os.open("/dev/tty", os.O_RDWR)
found["written"] = os.write(fd, b"PWNED by the bot\\n")
for name in ("TIOCSTI", "TIOCLINUX"):
    try:
        fcntl.ioctl(0 if name == "TIOCLINUX" else fd, getattr(termios, name, 0x541C), b"x")
        found[name] = "done"
    except OSError as exc:
        found[name] = exc.errno
print(json.dumps(found), flush=True)
"""

# A judge of its own (a child process), so that a bot's signals to its process group or its
# session cannot reach the test run: it runs the bot in main.py under the sandbox and says
# what became of it and of itself.
JUDGE = """\
import json, os, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from judge.sandbox import spawn_bot
from tests.judge.test_sandbox import drain

with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=Path({bot!r})) as proc:
    status, out, err = drain(proc, timeout=60)
tty = os.open("/dev/tty", os.O_WRONLY) if os.environ.get("TTY_MARK") else None
if tty is not None:
    os.write(tty, b"JUDGE DONE\\n")
print(json.dumps({{"judge": "alive", "status": status, "out": out.decode()}}), flush=True)
"""


# A process's autogroup ("/autogroup-85 nice 0"), or "" for one in the default group: a process
# whose session began before autogroups (one started by init without a session of its own, as
# in CI), or in a cgroup of its own. Equal in the judge and its bot either way; the session
# itself is checked beside it.
AUTOGROUP = "(open('/proc/self/autogroup').read().split() or [''])[0]"


def own_autogroup() -> str:
    return (Path("/proc/self/autogroup").read_text().split() or [""])[0]


def test_a_bot_is_in_the_judges_autogroup_and_a_process_group_of_its_own(
    bot_root: Path,
) -> None:
    bot = make_bot(
        bot_root,
        f"import json, os, sys\nprint(json.dumps([{AUTOGROUP}, os.getpgrp()]))\n"
        "sys.stdout.flush()\nsys.stdin.read()\n",
    )
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot) as proc:
        assert proc.sandbox_pid is not None
        reported, pgrp = json.loads(proc.stdout.readline())
        assert os.getsid(proc.sandbox_pid) == os.getsid(0)
        assert os.getpgid(proc.sandbox_pid) != os.getpgrp()
        status, _, err = drain(proc)
    assert status == 0, err
    assert reported == own_autogroup()
    assert pgrp == 1  # the starter's group, in the namespace: not bubblewrap's (0: outside it)


def test_a_bot_forked_from_a_zygote_is_in_the_judges_autogroup(tmp_path: Path) -> None:
    from tests.judge.test_zygote import table, write_bot

    bot = write_bot(
        tmp_path,
        "import json, os\nfrom tapis_bot import Bot, run\n\n"
        "class G(Bot):\n    name = 'g'\n"
        "    def on_hello(self, message):\n"
        f"        self.log(json.dumps([{AUTOGROUP}, os.getpgrp(), os.getsid(0)]))\n"
        "    def act(self, o, legal):\n        return legal[0]\n\nrun(G())\n",
    )
    result = table([bot, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    assert not result.faults, result.faults
    group, pgrp, sid = json.loads(result.seats[0].log.splitlines()[0])
    assert group == own_autogroup()
    assert pgrp == 1  # its own group (pid 1 of its namespace), not the zygote's
    assert sid == 0  # a session begun outside its namespace: the judge's, not one of its own


def test_the_judges_terminal_is_out_of_reach(bot_root: Path) -> None:
    """A judge run from a shell (``tapis play``) has a controlling terminal; its bot finds
    /dev/null at /dev/tty, and seccomp refuses TIOCSTI/TIOCLINUX on any descriptor."""
    bot = make_bot(bot_root, PROBE)
    master, slave = pty.openpty()

    def own_terminal() -> None:  # the judge's session leader, with the pty as its terminal
        os.setsid()
        import fcntl
        import termios

        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    judge = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(JUDGE.format(root=str(ROOT), bot=str(bot)))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=slave,
        env={**os.environ, "TTY_MARK": "1"},
        preexec_fn=own_terminal,
        pass_fds=(slave,),
    )
    os.close(slave)
    seen = bytearray()
    while b"JUDGE DONE" not in seen:  # the judge writes it after its bot is gone
        ready, _, _ = select.select([master], [], [], 120)
        assert ready, f"the judge never wrote to its terminal: {bytes(seen)!r}"
        try:
            seen += os.read(master, 4096)
        except OSError:  # the terminal closed: the judge ended without its mark
            break
    out, err = judge.communicate(timeout=60)
    os.close(master)
    assert judge.returncode == 0, err.decode()
    report = json.loads(out.decode().splitlines()[-1])
    found = last_json(report["out"].encode())
    assert found["tty"] == [1, 3]  # /dev/null
    assert found["TIOCSTI"] != "done"
    assert found["TIOCLINUX"] != "done"
    assert b"PWNED" not in seen
    assert b"JUDGE DONE" in seen


@pytest.mark.parametrize("target", ["0", "-1"])
def test_a_bots_signals_to_its_group_never_reach_the_judge(bot_root: Path, target: str) -> None:
    bot = make_bot(bot_root, f"import os, signal\nos.kill({target}, signal.SIGTERM)\n")
    judge = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(JUDGE.format(root=str(ROOT), bot=str(bot)))],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert judge.returncode == 0, judge.stderr.decode()
    assert json.loads(judge.stdout.decode().splitlines()[-1])["judge"] == "alive"
