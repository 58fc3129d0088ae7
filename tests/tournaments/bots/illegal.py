"""A faulty test bot: answers a card it does not hold, every time."""

from tapis_bot import Bot, run


class Illegal(Bot):
    name = "illegal"

    def act(self, observation, legal_actions):
        return "ZZ"


if __name__ == "__main__":
    run(Illegal())
