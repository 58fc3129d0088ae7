"""Find another bot's code (its victim mark) anywhere the sandbox can see."""

import glob
import os

from _attack import PARAMS, Attacker, blocked, main, succeeded

MARK = b"VICTIM-" + b"SECRET"  # not spelled out: this very file is in the search


def search(root):
    hits = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [
            d for d in dirs if os.path.join(folder, d) not in ("/proc", "/usr", "/sys", "/dev")
        ]
        for name in files:
            path = os.path.join(folder, name)
            try:
                with open(path, "rb") as f:
                    if MARK in f.read(1 << 20):
                        hits.append(path)
            except OSError:
                pass
    return hits


class ReadOtherBot(Attacker):
    def attack(self):
        hits = search("/")
        guesses = [
            f"{PARAMS['workdir']}/seat1/main.py",
            "/bot/../seat1/main.py",
            *glob.glob("/tmp/tapis-table-*/seat*/main.py"),
            *glob.glob("/proc/*/root/bot/main.py"),
            *glob.glob("/proc/*/cwd/main.py"),
        ]
        for path in guesses:
            try:
                with open(path, "rb") as f:
                    if MARK in f.read():
                        hits.append(path)
            except OSError:
                pass
        if hits:
            succeeded(f"found another bot's code at {hits}")
        else:
            blocked(f"searched / and {len(guesses)} guesses: no other bot")


main(ReadOtherBot())
