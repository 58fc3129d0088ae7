"""Kill its parent (the judge, bubblewrap) with SIGKILL: by the judge's pid and by getppid()."""

import os
import signal

from _attack import PARAMS, Attacker, blocked, main, must_fail


class KillParent(Attacker):
    def attack(self):
        must_fail("kill the judge's pid", lambda: os.kill(PARAMS["judge_pid"], signal.SIGKILL))
        parent = os.getppid()  # 0: the bot is the init of its pid namespace; kill(0) is its group
        os.kill(parent, signal.SIGKILL)
        blocked(f"kill -9 {parent} reached nobody but this bot, which as pid 1 ignores it")


main(KillParent())
