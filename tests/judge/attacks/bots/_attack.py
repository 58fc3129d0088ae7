"""Shared by the hostile bots: their parameters, their evidence, and a well-behaved player.

Every hostile bot reports what its attack did on stderr, which ends in the table's bot log:
``ATTACK <name> blocked: ...`` when the sandbox stopped it, ``ATTACK <name> SUCCEEDED: ...``
when it got through, ``ATTACK <name> ERROR: ...`` when the attack itself broke. The tests want
"blocked" and neither of the others. ``/bot/params.json`` holds what the test tells the bot
(host paths, ports, tokens).
"""

import ctypes
import json
import os
import sys
import traceback

from tapis_bot import Bot, run

try:  # /bot/params.json in the sandbox; next to this file in any case
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "params.json")) as _f:
        PARAMS = json.load(_f)
except OSError:
    PARAMS = {}
NAME = PARAMS.get("name", "attack")


def evidence(outcome, detail=""):
    sys.stderr.write(f"ATTACK {NAME} {outcome}: {detail}\n")
    sys.stderr.flush()


def blocked(detail):
    evidence("blocked", detail)


def succeeded(detail):
    evidence("SUCCEEDED", detail)


def must_fail(label, action):
    """Run ``action()``: an exception means that the sandbox stopped it, a return: it did not."""
    try:
        result = action()
    except OSError as exc:
        blocked(f"{label}: {exc.__class__.__name__} errno {exc.errno}")
        return False
    except Exception as exc:  # MemoryError, ValueError...: refused all the same
        blocked(f"{label}: {exc!r}")
        return False
    succeeded(f"{label}: {result!r}"[:300])
    return True


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def syscall(nr, *args):
    """A raw system call; raises OSError like the os module does."""
    ctypes.set_errno(0)
    rc = _libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    if rc == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"syscall {nr} failed")
    return rc


def read_file(path, size=64):
    with open(path, "rb") as f:
        return f.read(size)


def set_name(name):
    """Set this process's name (its /proc/PID/comm, seen from the host) to find it later."""
    _libc.prctl(15, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


class Attacker(Bot):
    """Plays the first legal action, and runs ``attack()`` once: at hello (within the start-up
    limit, more generous than a decision's) or at the first act."""

    name = "attacker"
    when = "hello"

    def __init__(self):
        super().__init__()
        self._attacked = False

    def attack(self):
        raise NotImplementedError

    def on_hello(self, hello):
        if self.when == "hello":
            self._attack()

    def act(self, observation, legal_actions):
        if not self._attacked and self.when == "act":
            self._attack()
        self.on_act(observation, legal_actions)
        return legal_actions[0]

    def on_act(self, observation, legal_actions):
        """Called at every decision (after the attack)."""

    def _attack(self):
        self._attacked = True
        try:
            self.attack()
        except Exception:
            evidence("ERROR", traceback.format_exc().replace("\n", " | "))


def main(bot):
    run(bot)
