"""An x32 system call (number with bit 0x40000000): the other back door of x86-64."""

from _attack import Attacker, evidence, main, succeeded, syscall


class X32(Attacker):
    def attack(self):
        evidence("attempting", "x32 getpid")
        succeeded(f"x32 getpid returned {syscall(0x40000000 | 39)}")


main(X32())
