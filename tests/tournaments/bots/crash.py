"""A faulty test bot: dies at the third decision."""

import os

from tapis_bot import Bot, run


class Crash(Bot):
    name = "crash"
    decisions = 0

    def act(self, observation, legal_actions):
        self.decisions += 1
        if self.decisions == 3:
            os._exit(3)
        return legal_actions[0]


if __name__ == "__main__":
    run(Crash())
