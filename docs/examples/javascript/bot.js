// The JavaScript example bot: protocol 1 (docs/protocol.md) for Node.js, standard library only.
//
// Plays the first legal action of every decision, in every game, and rebuilds the lists sent
// as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
// checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
// Run: node bot.js
"use strict";
const readline = require("node:readline");

const DELTA_LISTS = ["history", "tricks"];
let kept = {}; // the whole lists rebuilt so far in this deal, by name

function send(reply) {
  process.stdout.write(JSON.stringify(reply) + "\n");
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  switch (message.type) {
    case "hello":
      send({ type: "ready", name: "example-javascript" });
      break;
    case "act": {
      const observation = message.observation;
      for (const key of DELTA_LISTS) {
        const start = observation[key + "_start"];
        if (start !== undefined) kept[key] = (kept[key] || []).slice(0, start).concat(observation[key]);
      }
      send({ id: message.id, action: message.legal_actions[0] });
      break;
    }
    case "deal_end": {
      const tricks = kept.tricks || [];
      const played = message.summary.tricks || [];
      const ok = tricks.every((trick, i) => JSON.stringify(trick) === JSON.stringify(played[i]));
      const history = (kept.history || []).length;
      process.stderr.write(
        `deal ${message.deal}: ${tricks.length} tricks, ${history} history entries, ${ok ? "ok" : "MISMATCH"}\n`,
      );
      kept = {};
      break;
    }
    case "bye":
      process.exit(0);
    // game_end, and notices of later versions: nothing to do
  }
});
