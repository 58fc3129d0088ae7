"""A test bot: always the last legal action."""

from tapis_bot import Bot, run


class LastLegal(Bot):
    name = "last-legal"

    def act(self, observation, legal_actions):
        return legal_actions[-1]


if __name__ == "__main__":
    run(LastLegal())
