"""The ways a bot is launched, on top of the sandbox (judge.sandbox), as DMOJ's executors sit on
its cptbox: ``package`` checks and unpacks a bot package and says how its runtime starts it,
``pycache`` compiles the SDK ahead for the sandboxed interpreter, ``zygote`` forks a Python bot
from a started sandbox of its version instead of starting one per table."""
