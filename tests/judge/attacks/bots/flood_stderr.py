"""Flood stderr (32 MiB) at the first decision, then play properly."""

import sys

from _attack import Attacker, main


class FloodStderr(Attacker):
    def attack(self):
        chunk = "y" * (1 << 20)
        for _ in range(32):
            sys.stderr.write(chunk)
        sys.stderr.flush()


main(FloodStderr())
