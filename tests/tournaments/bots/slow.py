"""A test bot: the first legal action, after thinking 30 ms (so a table takes a few seconds)."""

import time

from tapis_bot import Bot, run


class Slow(Bot):
    name = "slow"

    def act(self, observation, legal_actions):
        time.sleep(0.03)
        return legal_actions[0]


if __name__ == "__main__":
    run(Slow())
