"""A faulty test bot: plays the first legal action and dies at its 40th decision of every
table (as the bot of issue 22 did)."""

import os

from tapis_bot import Bot, run


class CrashLate(Bot):
    name = "crash-late"
    decisions = 0

    def act(self, observation, legal_actions):
        self.decisions += 1
        if self.decisions == 40:
            os._exit(3)
        return legal_actions[0]


if __name__ == "__main__":
    run(CrashLate())
