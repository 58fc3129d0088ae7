"""A bot for the API tests: it plays the first legal action (the SDK is in the sandbox)."""

from tapis_bot import Bot, run


class FirstLegal(Bot):
    name = "api-first-legal"

    def act(self, observation, legal_actions):
        return legal_actions[0]


if __name__ == "__main__":
    run(FirstLegal())
