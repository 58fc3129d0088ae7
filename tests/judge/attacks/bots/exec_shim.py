"""A bot that needs to execute a file it wrote: it writes its player to /tmp as a #! script and
replaces itself with it (as a shim for a native bot would). The execve is refused (``noexec``):
the bot dies with the reason in its log, its seat is faulted and replaced."""

import os
import sys

PLAYER = """#!/usr/bin/python3 -S
from tapis_bot import Bot, run


class First(Bot):
    name = "shim"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
"""

sys.stderr.write("ATTACK exec_shim attempting: execve /tmp/bot.py\n")
sys.stderr.flush()
with open("/tmp/bot.py", "w") as out:
    out.write(PLAYER)
os.chmod("/tmp/bot.py", 0o755)
os.execv("/tmp/bot.py", ["/tmp/bot.py"])
