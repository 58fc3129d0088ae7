// The deal replay viewer (templates/replay.html). The page is whole without it: this script
// draws the table at any step from the steps the engine wrote (tournaments/replay_steps.py,
// in #replay-steps) and knows no rule of any game. Each step holds the keys of the table's
// state that changed; the states are rebuilt once, then any step is drawn directly.
//
// A deal of more than data.window steps (the longest Dutch rounds) comes a window of steps at
// a time: the page holds the window of the step it opened at (its first step holds the whole
// table), and going to a step outside it loads that step's window (GET .../steps/<w>/).

const data = JSON.parse(document.getElementById("replay-steps").textContent);
const viewer = document.getElementById("viewer");
const n = data.players;
const game = data.game;
const trickGame = game !== "dutch";
const last = data.total;

// The window of steps the viewer holds: its steps, the table at each, the steps that end a
// trick or a turn.
let loaded = null;
function hold(win) {
  const states = [];
  let current = {};
  for (const st of win.steps) {
    current = Object.assign({}, current, st.d);
    states.push(current);
  }
  const marks = [];
  win.steps.forEach((st, i) => {
    if (st.m) marks.push(win.first + i);
  });
  loaded = { first: win.first, end: win.first + win.steps.length - 1, steps: win.steps, states, marks };
}
hold(data);

function stepAt(k) {
  return loaded.steps[k - loaded.first];
}

// --- cards ----------------------------------------------------------------------------------

const SYMBOLS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const WORDS = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function hidden(text) {
  return el("span", "visually-hidden", text);
}

/** A card face up (``name`` like "QS"), or its back when ``name`` is null. */
function card(name, extra) {
  if (!name) {
    const back = el("span", "pcard back" + (extra ? " " + extra : ""));
    back.dataset.card = "";
    back.append(hidden("a card face down"));
    return back;
  }
  const suit = name[1];
  const rank = name[0] === "T" ? "10" : name[0];
  const face = el("span", `pcard s${suit}` + (extra ? " " + extra : ""), rank);
  face.dataset.card = name;
  const symbol = el("span", null, SYMBOLS[suit]);
  symbol.setAttribute("aria-hidden", "true");
  face.append(symbol, hidden(` of ${WORDS[suit]}`));
  return face;
}

function cardRow(names, options = {}) {
  const row = el("span", "pcards" + (options.className ? " " + options.className : ""));
  for (const name of names) row.append(card(name, options.mark && options.mark.has(name) ? "marked" : ""));
  return row;
}

/** Card names written in a sentence ("seat 1 plays QS") drawn as cards with their symbols. */
function cardsIn(text) {
  const out = document.createDocumentFragment();
  let rest = text;
  const pattern = /\b([2-9TJQKA])([SHDC])\b/;
  let match;
  while ((match = pattern.exec(rest))) {
    out.append(rest.slice(0, match.index), card(match[0], "inline"));
    rest = rest.slice(match.index + match[0].length);
  }
  out.append(rest);
  return out;
}

/** A step's sentence: its cards drawn, and each seat's name, which the engine's side isolates
 * (U+2068 ... U+2069, tournaments/replay_steps.py), as a <bdi>, never read for cards: a bot
 * may be named "QS". */
function sentence(text) {
  const out = document.createDocumentFragment();
  const names = /\u2068([^\u2069]*)\u2069/g;
  let at = 0;
  for (const match of text.matchAll(names)) {
    out.append(cardsIn(text.slice(at, match.index)), el("bdi", null, match[1]));
    at = match.index + match[0].length;
  }
  out.append(cardsIn(text.slice(at)));
  return out;
}

// --- what is shown to whom --------------------------------------------------------------------

let seatView = "all"; // "all", or the seat whose view is drawn
let step = 0;

function sees(seat) {
  return seatView === "all" || Number(seatView) === seat;
}

function stepText(k) {
  const st = stepAt(k);
  if (seatView === "all" || !st.tp) return st.t;
  return Number(seatView) === st.s && st.ta !== false ? st.t : st.tp;
}

// --- drawing ----------------------------------------------------------------------------------

const felt = viewer.querySelector("[data-felt]");
const slider = viewer.querySelector("#replay-step");
const stepNumber = viewer.querySelector("[data-step-number]");
const text = viewer.querySelector("[data-step-text]");
const playButton = viewer.querySelector('[data-go="play"]');
const speed = viewer.querySelector("[data-speed]");
const seatSelect = viewer.querySelector("[data-seat-view]");

// Seat 0 at the bottom, then clockwise as people sit around a table: each seat's angle puts it
// on one side of the felt (a grid: top, left, centre, right, bottom).
function angleOf(seat) {
  return Math.PI / 2 + (2 * Math.PI * seat) / n;
}

function sideOf(seat) {
  const degrees = ((angleOf(seat) * 180) / Math.PI) % 360;
  if (degrees > 45 && degrees < 135) return "bottom";
  if (degrees >= 135 && degrees <= 225) return "left";
  if (degrees > 225 && degrees < 315) return "top";
  return "right";
}

const sides = { top: [], left: [], right: [], bottom: [] };
for (let seat = 0; seat < n; seat++) sides[sideOf(seat)].push(seat);
// Left to right along the top and bottom, top to bottom down the sides.
sides.top.sort((a, b) => Math.cos(angleOf(a)) - Math.cos(angleOf(b)));
sides.bottom.sort((a, b) => Math.cos(angleOf(a)) - Math.cos(angleOf(b)));
sides.left.sort((a, b) => Math.sin(angleOf(a)) - Math.sin(angleOf(b)));
sides.right.sort((a, b) => Math.sin(angleOf(a)) - Math.sin(angleOf(b)));

function place(node, seat, radius) {
  const angle = angleOf(seat);
  node.style.left = `${50 + radius * Math.cos(angle)}%`;
  node.style.top = `${50 + radius * Math.sin(angle)}%`;
}

/** A seat's number as people count (from 1); the steps and the address keep indexes. */
function seatNo(seat) {
  return seat + 1;
}

function seatName(seat) {
  return data.seats[seat];
}

/** The built-in bot that plays ``seat`` at the current step, if it took the seat over. */
function takeoverAt(seat) {
  return (data.takeovers || []).find((t) => t.seat === seat && step >= t.step) || null;
}

function seatBox(state, seat) {
  const box = el("section", "seat");
  box.dataset.seat = String(seat);
  if (state.act === seat) box.classList.add("to-act");
  if (seatView !== "all" && Number(seatView) === seat) box.classList.add("viewed");
  const head = el("h3", "seat-name");
  head.append(el("span", "seat-number", `Seat ${seatNo(seat)}`), " ", el("span", "bot", seatName(seat)));
  if (state.act === seat) head.append(" ", el("span", "badge act", "to act"));
  box.append(head);
  const takeover = takeoverAt(seat);
  if (takeover) {
    box.classList.add("taken-over");
    const note = el("p", "takeover");
    note.dataset.takeover = "";
    note.append(`Played by the `, el("bdi", null, takeover.bot), ` from step ${takeover.step}`);
    box.append(note);
  }
  return box;
}

function facts(pairs) {
  const list = el("dl", "facts-inline");
  for (const [term, value] of pairs) {
    if (value === undefined || value === null || value === "") continue;
    list.append(el("dt", null, term));
    const dd = el("dd");
    dd.append(value);
    list.append(dd);
  }
  return list;
}

function cardsCount(count) {
  return `${count} card${count === 1 ? "" : "s"}`;
}

function drawTrickSeat(state, seat, box) {
  const hand = state[`h${seat}`] || [];
  const handNode = el("div", "hand");
  handNode.dataset.hand = "";
  handNode.append(hidden(`Hand of seat ${seatNo(seat)}: `));
  const received = new Set(state[`r${seat}`] || []);
  if (sees(seat)) {
    handNode.append(cardRow(hand, { mark: received }));
  } else {
    handNode.append(cardRow(hand.map(() => null)));
  }
  box.append(handNode);
  const info = [];
  info.push(["Points taken", String(state.pt ? state.pt[seat] : 0)]);
  if (state.tk) info.push(["Tricks", String(state.tk[seat])]);
  if (game === "hearts") {
    const passed = state[`p${seat}`];
    const to = data.static.pass_to ? data.static.pass_to[seat] : null;
    if (passed) {
      const shown = sees(seat) ? cardRow(passed) : cardsCount(passed.length);
      const what = el("span");
      what.append(shown, ` to seat ${seatNo(to)}`);
      info.push(["Passed", what]);
    } else if (state.ph === "pass" && to !== null) {
      info.push(["Passes", `to seat ${seatNo(to)}`]);
    }
    if (state[`r${seat}`] && sees(seat)) {
      const from = data.static.pass_to.indexOf(seat);
      const what = el("span");
      what.append(cardRow(state[`r${seat}`], { className: "received" }), ` from seat ${seatNo(from)}`);
      info.push(["Received", what]);
    }
    const drawn = state[`dr${seat}`];
    if (drawn && drawn.length) {
      info.push(["Drew", sees(seat) ? cardRow(drawn) : cardsCount(drawn.length)]);
    }
  }
  if (state.pts) info.push(["Points of the deal", el("strong", null, String(state.pts[seat]))]);
  box.append(facts(info));
}

function drawTrickCentre(state, centre) {
  const total = data.tricks.length;
  const wonIndex = state.won;
  let cards;
  let leader;
  let winner = null;
  if (wonIndex !== null && wonIndex !== undefined) {
    const trick = data.tricks[wonIndex];
    cards = trick.cards;
    leader = trick.leader;
    winner = trick;
  } else {
    cards = state.tr || [];
    leader = state.tl;
  }
  const table = el("div", "trick");
  table.dataset.trick = "";
  cards.forEach((name, k) => {
    const seat = (leader + k) % n;
    const spot = el("div", "played");
    spot.dataset.playedBy = String(seat);
    const isWinner = winner && winner.winner === seat;
    spot.append(card(name, isWinner ? "winner" : ""));
    // Who played it: told by its place around the table on a wide screen (and to screen
    // readers), written under the card on a phone, where the cards stand in a row.
    spot.append(el("span", "played-seat", `Seat ${seatNo(seat)}`));
    if (isWinner) spot.append(el("span", "badge win", "wins"));
    place(spot, seat, 30);
    table.append(spot);
  });
  centre.append(table);
  const lines = [];
  const number = Math.min((state.tn || 0) + (winner ? 0 : 1), total || 13);
  if (state.ph === "pass") {
    lines.push(["Phase", `passing ${data.static.pass_count} cards ${data.static.pass_direction}`]);
  } else if (state.ph !== "over") {
    lines.push(["Trick", `${winner ? wonIndex + 1 : number} of ${total}`]);
  }
  if (winner) lines.push(["Won by", `seat ${seatNo(winner.winner)}, ${winner.points} points`]);
  if (game === "hearts") {
    lines.push(["Hearts", state.br ? "broken" : "not broken"]);
    if (data.static.reserve) {
      const shown = state.res || seatView === "all" ? cardRow(data.static.reserve) : cardRow(data.static.reserve.map(() => null));
      const what = el("span");
      what.append(shown, state.res ? " (taken with the first trick)" : " (face down until the first trick is won)");
      lines.push(["Reserve", what]);
    }
    if (state.stk !== undefined) {
      const what = el("span", null, cardsCount(state.stk));
      if (state.stk > 0 && seatView === "all") {
        const top = data.static.stock[data.static.stock.length - state.stk];
        what.append(", top ", card(top));
      }
      lines.push(["Stock", what]);
    }
  }
  if (game === "roi") {
    lines.push(["Contract", `${data.static.contract_number}. ${data.static.contract}`]);
    lines.push(["Trumps", data.static.trump_suit || "none"]);
    lines.push(["Scoring", data.static.scoring]);
    lines.push(["Dealer", `seat ${seatNo(data.static.dealer)}`]);
  }
  if (state.ph === "over" && state.moon !== undefined && state.moon !== null) {
    lines.push(["Moon", el("strong", null, `seat ${seatNo(state.moon)} shot the moon`)]);
  }
  centre.append(facts(lines));
}

function knowersText(mask) {
  if (!mask) return "unseen";
  if (mask === (1 << n) - 1) return "all know";
  const who = [];
  for (let s = 0; s < n; s++) if (mask & (1 << s)) who.push(s);
  return `known: ${who.join(" ")}`;
}

function drawDutchSeat(state, seat, box) {
  const row = state[`h${seat}`] || [];
  const touched = new Set((stepAt(step).hl || []).filter(([s]) => s === seat).map(([, k]) => k));
  const slots = el("ol", "slots");
  slots.dataset.hand = "";
  slots.setAttribute("aria-label", `Slots of seat ${seatNo(seat)}`);
  row.forEach((cell, k) => {
    const slot = el("li", "slot");
    slot.dataset.slot = String(k);
    if (touched.has(k)) slot.classList.add("touched");
    if (cell === null) {
      slot.classList.add("empty");
      slot.append(el("span", "pcard none", "–"), hidden(`slot ${k} empty`));
    } else {
      const [name, knowers] = cell;
      const visible = seatView === "all" || knowers & (1 << Number(seatView));
      slot.append(card(visible ? name : null, knowers && seatView === "all" ? "known" : ""));
      slot.append(el("span", "slot-label", `${k}`));
      if (seatView === "all") slot.append(el("span", "knowers", knowersText(knowers)));
      else if (visible) slot.append(el("span", "knowers", "known"));
    }
    slots.append(slot);
  });
  box.append(slots);
  const info = [];
  if (state.hold && state.hold.s === seat) {
    const visible = seatView === "all" || state.hold.pub || Number(seatView) === seat;
    const what = el("span");
    what.append(card(visible ? state.hold.c : null), state.hold.pub ? " (from the pile)" : " (from the stock)");
    info.push(["Holding", what]);
  }
  if (state.caller === seat) info.push(["Called", el("strong", null, "Dutch")]);
  if (state.turn === seat && state.ph !== "over") info.push(["Turn", "this seat's turn"]);
  if (state.sums) info.push(["Sum", String(state.sums[seat])]);
  if (state.pts) info.push(["Points of the round", el("strong", null, String(state.pts[seat]))]);
  box.append(facts(info));
}

function drawDutchCentre(state, centre) {
  const pile = el("div", "piles");
  const stock = el("div", "pile");
  stock.append(el("span", "pile-name", "Stock"), card(null), el("span", null, cardsCount(state.stk)));
  const discard = el("div", "pile");
  discard.dataset.discard = "";
  discard.append(el("span", "pile-name", "Discard"), state.top ? card(state.top) : el("span", "pcard none", "–"), el("span", null, cardsCount(state.pn)));
  pile.append(stock, discard);
  centre.append(pile);
  const lines = [["Turn", `${state.turns + (state.ph === "over" ? 0 : 1)} (limit ${data.static.turn_limit})`]];
  if (state.claim) {
    const barred = state.claim.barred.length ? `; barred: seat ${state.claim.barred.map(seatNo).join(", ")}` : "";
    lines.push(["Claims", `rank ${state.claim.rank}, put down by seat ${seatNo(state.claim.putter)}${barred}`]);
  }
  if (state.jack) lines.push(["Jack swap", `first card: seat ${seatNo(state.jack.seat)}, slot ${state.jack.slot}`]);
  if (state.caller !== null && state.caller !== undefined) {
    const left = state.left > 0 ? `, ${state.left} last turn${state.left === 1 ? "" : "s"} to play` : "";
    lines.push(["Dutch", `called by seat ${seatNo(state.caller)}${left}`]);
  }
  if (state.ph === "over") lines.push(["End", state.caller === null ? "turn limit reached" : "every other seat played its last turn"]);
  centre.append(facts(lines));
}

function draw() {
  const state = loaded.states[step - loaded.first];
  felt.replaceChildren();
  felt.dataset.step = String(step);
  const centre = el("div", "centre");
  for (const [side, seats] of Object.entries(sides)) {
    const area = el("div", `side side-${side}`);
    for (const seat of seats) {
      const box = seatBox(state, seat);
      if (trickGame) drawTrickSeat(state, seat, box);
      else drawDutchSeat(state, seat, box);
      area.append(box);
    }
    felt.append(area);
  }
  if (trickGame) drawTrickCentre(state, centre);
  else drawDutchCentre(state, centre);
  felt.append(centre);

  slider.value = String(step);
  stepNumber.textContent = String(step);
  const st = stepAt(step);
  text.replaceChildren();
  if (step > 0) text.append(el("span", "step-seat", `Step ${step}: `));
  text.append(sentence(stepText(step)));
  if (step > 0) text.append(el("span", "muted", ` · ${(st.sec || 0).toFixed(3)} s`));
  if (st.f) text.append(" ", el("span", "badge fault", `fault: ${st.f}`));
  drawTimeline();
}

// --- the timeline: each decision's time, faults marked ----------------------------------------

const timeline = viewer.querySelector("[data-timeline]");
let bars = [];
let litBar = null;
function buildTimeline() {
  bars = [];
  litBar = null;
  timeline.replaceChildren();
  const longest = loaded.steps.reduce((most, s) => Math.max(most, s.sec || 0), 0.001);
  loaded.steps.forEach((st, i) => {
    const k = loaded.first + i;
    const bar = el("span", "tick");
    const share = Math.sqrt((st.sec || 0) / longest);
    bar.style.height = `${Math.max(8, Math.round(share * 100))}%`;
    if (st.f) bar.classList.add("fault");
    if (st.m) bar.classList.add("mark");
    bar.title = k === 0 ? "the deal" : `step ${k}: ${(st.sec || 0).toFixed(3)} s${st.f ? `, fault: ${st.f}` : ""}`;
    bars.push(bar);
    timeline.append(bar);
  });
}
buildTimeline();
// The whole strip answers a click, not only the ticks (a short one is a few pixels tall): the
// step under the pointer, by its position along the strip.
timeline.addEventListener("click", (event) => {
  const box = timeline.getBoundingClientRect();
  const share = (event.clientX - box.left) / Math.max(box.width, 1);
  const index = Math.min(bars.length - 1, Math.max(0, Math.floor(share * bars.length)));
  go(loaded.first + index);
  keepInView();
});
function drawTimeline() {
  if (litBar) litBar.classList.remove("now");
  litBar = bars[step - loaded.first];
  litBar.classList.add("now");
}

// --- moving -----------------------------------------------------------------------------------

// A step outside the window held: its window is loaded, then the viewer goes there (to the
// last step asked for, if several were while it loaded). Only the latest load is used: an
// earlier one that answers late (the slider dragged across windows) is dropped.
const stepsUrl = viewer.dataset.stepsUrl;
let wanted = null;
let loading = null;
let requests = 0;
function load(number) {
  if (loading === number) return;
  loading = number;
  const ticket = ++requests;
  fetch(stepsUrl.replace(/\/0\/$/, `/${number}/`), { headers: { Accept: "application/json" } })
    .then((response) => {
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    })
    .then((win) => {
      if (ticket !== requests) return;
      loading = null;
      hold(win);
      buildTimeline();
      const [k, options] = wanted ?? [step, { push: false }];
      wanted = null;
      go(k, options);
    })
    .catch(() => {
      if (ticket !== requests) return;
      loading = null;
      wanted = null;
      pause();
      text.replaceChildren("These steps could not be loaded: reload the page to try again.");
    });
}

function go(k, options = {}) {
  const { push = true } = options;
  const target = Math.max(0, Math.min(last, k));
  if (target < loaded.first || target > loaded.end) {
    wanted = [target, options];
    load(Math.floor(target / data.window));
    return;
  }
  step = target;
  draw();
  if (push) {
    const url = withMoment(new URL(window.location.href));
    url.hash = "";
    window.history.replaceState(null, "", url);
  }
  // The traveller's other pages reopen the replay at this moment too.
  document.querySelectorAll("#traveller .pagination a[href]").forEach((link) => {
    link.href = withMoment(new URL(link.href)).href;
  });
  if (step === last) pause();
}

// An address with this step and view in its query.
function withMoment(url) {
  url.searchParams.set("step", String(step));
  if (seatView === "all") url.searchParams.delete("seat");
  else url.searchParams.set("seat", String(seatView));
  return url;
}

// The next or previous end of a trick or turn in the window held, else the step just past
// the window's edge (which loads the window next to it).
function nextMark() {
  return loaded.marks.find((k) => k > step) ?? Math.min(last, loaded.end + 1);
}

function previousMark() {
  for (let i = loaded.marks.length - 1; i >= 0; i--) if (loaded.marks[i] < step) return loaded.marks[i];
  return step > loaded.first ? loaded.first : Math.max(0, loaded.first - 1);
}

let timer = null;
function pause() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  playButton.dataset.playing = "false";
  playButton.querySelector("[data-play-label]").textContent = "▶ Play";
}

function tick() {
  if (step >= last) {
    pause();
    return;
  }
  go(step + 1);
  timer = setTimeout(tick, Number(speed.value));
}

function play() {
  if (step >= last) go(0);
  playButton.dataset.playing = "true";
  playButton.querySelector("[data-play-label]").textContent = "❚❚ Pause";
  timer = setTimeout(tick, Number(speed.value));
}

function toggle() {
  if (timer === null) play();
  else pause();
}

const ACTIONS = {
  start: () => go(0),
  end: () => go(last),
  prev: () => go(step - 1),
  next: () => go(step + 1),
  "prev-mark": () => go(previousMark()),
  "next-mark": () => go(nextMark()),
  play: toggle,
};

// While people step, the controls and the table stay in one view: when either is out of it,
// the page scrolls to the controls (the viewer fits a laptop's screen, 1280x900).
const bar = viewer.querySelector(".viewer-bar");
function keepInView() {
  const top = bar.getBoundingClientRect().top;
  const bottom = felt.getBoundingClientRect().bottom;
  if (top >= 0 && bottom <= window.innerHeight) return;
  window.scrollBy(0, top - 8);
}

viewer.querySelectorAll("[data-go]").forEach((button) => {
  button.addEventListener("click", () => {
    ACTIONS[button.dataset.go]();
    keepInView();
  });
});
slider.addEventListener("input", () => go(Number(slider.value)));
seatSelect.addEventListener("change", () => {
  seatView = seatSelect.value;
  go(step);
});
speed.addEventListener("change", () => {
  if (timer !== null) {
    pause();
    play();
  }
});

const KEYS = {
  ArrowLeft: "prev",
  ArrowRight: "next",
  PageUp: "prev-mark",
  PageDown: "next-mark",
  Home: "start",
  End: "end",
  " ": "play",
};

document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const action = KEYS[event.key];
  if (!action) return;
  const target = event.target;
  // The keys work whatever has focus (a button just clicked, the slider), but in a field that
  // takes them itself: a list of choices, a text field.
  if (target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
  if (target instanceof HTMLInputElement && target !== slider) return;
  if (target instanceof HTMLElement && target.isContentEditable) return;
  event.preventDefault();
  ACTIONS[action]();
  keepInView();
});

// --- start: the step and the view the address names -------------------------------------------

function fromAddress() {
  const params = new URLSearchParams(window.location.search);
  let k = Number.parseInt(params.get("step") ?? "", 10);
  const hash = /^#step-(\d+)$/.exec(window.location.hash);
  if (hash) k = Number.parseInt(hash[1], 10);
  const seat = params.get("seat");
  if (seat !== null && /^\d+$/.test(seat) && Number(seat) < n) {
    seatView = seat;
    seatSelect.value = seat;
  }
  return Number.isFinite(k) ? k : 0;
}

viewer.hidden = false;
go(fromAddress(), { push: false });
if (window.location.hash.startsWith("#step-")) viewer.scrollIntoView();
viewer.dataset.ready = "true";
