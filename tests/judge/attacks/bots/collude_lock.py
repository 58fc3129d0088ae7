"""Two bots at one table signal through a file both see, the same inode in both sandboxes: a
lock on a file of /usr (the host's, read-only in every sandbox), and inotify of another, which
only the partner opens."""

import ctypes
import fcntl
import os

from _attack import Attacker, blocked, main, succeeded

LOCKED = "/usr/bin/true"
WATCHED = "/usr/bin/false"  # seat 1 never opens it itself
IN_OPEN, IN_CLOSE, IN_NONBLOCK = 0x20, 0x18, 0o4000
_libc = ctypes.CDLL(None, use_errno=True)


class ColludeLock(Attacker):
    def attack(self):
        self.tries = 0
        if self.seat == 0:
            self.lock = os.open(LOCKED, os.O_RDONLY)
            try:
                fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held for the whole game
            except OSError as exc:
                blocked(f"cannot lock {LOCKED}: errno {exc.errno}")
            return
        self.watch = _libc.inotify_init1(IN_NONBLOCK)
        if (
            self.watch < 0
            or _libc.inotify_add_watch(self.watch, WATCHED.encode(), IN_OPEN | IN_CLOSE) < 0
        ):
            blocked("no inotify watch")

    def on_act(self, observation, legal_actions):
        if self.tries >= 10:
            return
        self.tries += 1
        if self.seat == 0:
            os.close(os.open(WATCHED, os.O_RDONLY))  # what the partner's inotify would see
            if self.tries == 10:
                blocked("opened the watched file at each decision")
            return
        seen = []
        with open(LOCKED, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                seen.append(f"the partner's lock on {LOCKED}")
        try:
            if self.watch >= 0 and os.read(self.watch, 4096):
                seen.append(f"inotify events on {WATCHED}")
        except BlockingIOError:
            pass
        if seen:
            succeeded(", ".join(seen))
        elif self.tries == 10:
            blocked("10 tries: no lock or open of the partner seen")


main(ColludeLock())
