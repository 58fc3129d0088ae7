"""Flood stdout without a newline (10 MiB, then more), instead of answering."""

from _raw import misbehave_at_first_act, send


def flood(message):
    chunk = b"x" * (1 << 20)
    for _ in range(10):
        send(chunk)


misbehave_at_first_act(flood)
