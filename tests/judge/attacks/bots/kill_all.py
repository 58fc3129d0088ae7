"""kill -9 -1: every process it may signal."""

import os
import signal

from _attack import Attacker, main, must_fail


class KillAll(Attacker):
    def attack(self):
        must_fail("kill -9 -1", lambda: os.kill(-1, signal.SIGKILL))
        must_fail("kill -STOP -1", lambda: os.kill(-1, signal.SIGSTOP))


main(KillAll())
