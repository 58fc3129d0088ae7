"""A fork bomb: children that fork and sleep, named so that the test can look for survivors."""

import os
import time

from _attack import PARAMS, Attacker, blocked, main, set_name, succeeded


class ForkBomb(Attacker):
    def attack(self):
        forked = 0
        error = None
        while forked < 10_000:
            try:
                pid = os.fork()
            except OSError as exc:
                error = exc
                break
            if pid == 0:
                set_name(PARAMS["process_name"])
                try:
                    while True:
                        os.fork()  # the bomb proper: every child forks too, until refused
                except OSError:
                    pass
                time.sleep(3600)
                os._exit(0)
            forked += 1
        if error is not None and forked < 64:
            blocked(f"fork refused after {forked} children: errno {error.errno}")
        else:
            succeeded(f"forked {forked} children")


main(ForkBomb())
