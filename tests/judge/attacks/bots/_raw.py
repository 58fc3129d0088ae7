"""A bare-bones speaker of the protocol for the bots that misbehave on it on purpose."""

import json
import sys

from _attack import evidence

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def messages():
    """Every message from the judge, until bye or the end of input."""
    for line in stdin:
        message = json.loads(line)
        if message.get("type") == "bye":
            return
        yield message


def send(data):
    stdout.write(data)
    stdout.flush()


def ready():
    send(b'{"type":"ready","name":"raw"}\n')


def answer(message, action=None):
    if action is None:
        action = message["legal_actions"][0]
    send(json.dumps({"id": message["id"], "action": action}).encode() + b"\n")


def misbehave_at_first_act(attack):
    """Play properly, except that the first act gets ``attack(message)`` instead of an answer."""
    done = False
    for message in messages():
        kind = message.get("type")
        if kind == "hello":
            ready()
        elif kind == "act":
            if not done:
                done = True
                evidence("attempting", attack.__name__)
                attack(message)
            else:
                answer(message)
