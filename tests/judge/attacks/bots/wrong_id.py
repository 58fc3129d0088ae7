"""Answer every request with the wrong id."""

import json

from _raw import messages, ready, send

for message in messages():
    if message.get("type") == "hello":
        ready()
    elif message.get("type") == "act":
        wrong = {"id": message["id"] + 1000, "action": message["legal_actions"][0]}
        send(json.dumps(wrong).encode() + b"\n")
