"""Climb to the parent process (the judge, or bubblewrap) and read its environment."""

import os

from _attack import Attacker, blocked, main, must_fail, read_file, succeeded


class ReadParentEnv(Attacker):
    def attack(self):
        parent = os.getppid()
        if parent == 0:
            blocked("no parent: this bot is the init of its pid namespace")
        else:
            must_fail(f"/proc/{parent}/environ", lambda: read_file(f"/proc/{parent}/environ"))
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
        if others:
            succeeded(f"other processes are visible: {others}")
        else:
            blocked("no other process in /proc")


main(ReadParentEnv())
