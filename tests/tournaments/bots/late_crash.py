"""A faulty test bot: plays its first 20 decisions, then dies at the 21st (in the second
deal of a 4-player Hearts table: 14 decisions a deal)."""

import os

from tapis_bot import Bot, run


class LateCrash(Bot):
    name = "late crash"
    decisions = 0

    def act(self, observation, legal_actions):
        self.decisions += 1
        if self.decisions == 21:
            os._exit(3)
        return legal_actions[0]


if __name__ == "__main__":
    run(LateCrash())
