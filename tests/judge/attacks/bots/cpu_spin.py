"""Spin on the CPU at every decision (and never answer in time)."""

from _attack import Attacker, evidence, main


class CpuSpin(Attacker):
    when = "act"

    def attack(self):
        evidence("attempting", "spinning")

    def on_act(self, observation, legal_actions):
        while True:
            pass


main(CpuSpin())
