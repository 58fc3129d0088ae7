"""Answer with bytes that are not UTF-8."""

from _raw import misbehave_at_first_act, send


def invalid(message):
    send(b'{"id":%d,"action":"\xff\xfe\xc3\x28"}\n' % message["id"])


misbehave_at_first_act(invalid)
