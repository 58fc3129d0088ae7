"""A test bot that never answers in time: it sleeps a minute at every decision (the judge
plays the first legal action for it, and hands its seat to a built-in bot after its faults)."""

import time

from tapis_bot import Bot, run


class Sleeper(Bot):
    name = "sleeper"

    def act(self, observation, legal_actions):
        time.sleep(60)
        return legal_actions[0]


if __name__ == "__main__":
    run(Sleeper())
