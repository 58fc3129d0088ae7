"""Sleep forever at the first decision."""

import time

from _attack import Attacker, evidence, main


class SleepForever(Attacker):
    when = "act"

    def attack(self):
        evidence("attempting", "sleeping forever")
        while True:
            time.sleep(3600)


main(SleepForever())
