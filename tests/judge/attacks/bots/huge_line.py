"""Answer with a single 100 MB line."""

from _raw import misbehave_at_first_act, send


def huge(message):
    send(b'{"id":%d,"action":"' % message["id"] + b"A" * (100 * 10**6) + b'"}\n')


misbehave_at_first_act(huge)
