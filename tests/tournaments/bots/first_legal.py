"""A test bot: always the first legal action."""

from tapis_bot import Bot, run


class FirstLegal(Bot):
    name = "first-legal"

    def act(self, observation, legal_actions):
        return legal_actions[0]


if __name__ == "__main__":
    run(FirstLegal())
