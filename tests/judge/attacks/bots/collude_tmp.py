"""Two bots at one table pass notes through files in /tmp, /dev/shm and /var/tmp."""

import os

from _attack import PARAMS, Attacker, blocked, main, succeeded

FOLDERS = ("/tmp", "/dev/shm", "/var/tmp")


def note(seat):
    return f"tapis-collude-{PARAMS['token']}-{seat}"


class ColludeTmp(Attacker):
    def attack(self):
        self.tries = 0
        for folder in FOLDERS:
            try:
                with open(f"{folder}/{note(self.seat)}", "w") as f:
                    f.write("my hand: ...")
            except OSError:
                pass

    def on_act(self, observation, legal_actions):
        if self.tries >= 10:
            return
        self.tries += 1
        partner = note(1 - self.seat)
        seen = [f for f in FOLDERS if os.path.exists(f"{f}/{partner}")]
        if seen:
            succeeded(f"read the partner's note in {seen}")
        elif self.tries == 10:
            blocked("10 tries: no note from the partner")


main(ColludeTmp())
