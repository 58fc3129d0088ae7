"""The Python example bot: protocol 1 by hand, standard library only (docs/protocol.md).

Plays the first legal action of every decision, in every game, and rebuilds the lists sent as
deltas (``history``, ``tricks``). At each deal's end it checks its rebuilt tricks against the
deal's summary and says so on stderr (its log). Run: ``tapis play docs/examples/python/bot.py``.
"""

import json
import sys

DELTA_LISTS = ("history", "tricks")


def main():
    kept = {}  # the whole lists rebuilt so far in this deal, by name
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            reply = {"type": "ready", "name": "example-python"}
        elif kind == "act":
            observation = message["observation"]
            for key in DELTA_LISTS:
                start = observation.get(key + "_start")
                if start is not None:  # whole = rebuilt[:start] + sent
                    kept[key] = kept.get(key, [])[:start] + observation[key]
            reply = {"id": message["id"], "action": message["legal_actions"][0]}
        elif kind == "deal_end":
            tricks = kept.get("tricks", [])
            played = message["summary"].get("tricks", [])
            verdict = "ok" if played[: len(tricks)] == tricks else "MISMATCH"
            history = len(kept.get("history", []))
            print(
                f"deal {message['deal']}: {len(tricks)} tricks, {history} history entries, "
                f"{verdict}",
                file=sys.stderr,
            )
            kept = {}
            continue
        elif kind == "bye":
            return
        else:
            continue  # game_end, and notices of later versions
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
