// The run-time attacks of tests/judge/attacks/bots/*.py, in JavaScript (Node.js): one program,
// the attack named by /bot/params.json (written by the test). Never run it outside the sandbox.
//
// Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when the
// sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise plays
// the first legal action of every decision.
//
// The collusion attacks (collude_*) run in two seats of one table (0 and 1), which try to reach
// each other outside the judge: seat 0 sets a channel up at hello, seat 1 looks for it at each
// of its first decisions, and seat 0 says at the game's end whether anything arrived. Node has
// no System V IPC, POSIX message queue, sigqueue or raw system call API: collude_shm here is
// POSIX shared memory only, which is a file in /dev/shm (what shm_open opens).
"use strict";
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const childProcess = require("node:child_process");

const PARAMS = JSON.parse(fs.readFileSync(path.join(__dirname, "params.json"), "utf8"));
const NAME = PARAMS.name;

function evidence(outcome, detail) {
  fs.writeSync(2, `ATTACK ${NAME} ${outcome}: ${detail}\n`);
}
const blocked = (detail) => evidence("blocked", detail);
const succeeded = (detail) => evidence("SUCCEEDED", detail);

// An exception means that the sandbox stopped it, a return that it did not.
function mustFail(label, action) {
  let result;
  try {
    result = action();
  } catch (error) {
    blocked(`${label}: ${error.code || error.message}`);
    return;
  }
  succeeded(`${label}: ${String(result).slice(0, 200)}`);
}

// A program that succeeds only if the attack got through: status 0 is "it ran".
function mustNotRun(label, file, args = []) {
  const result = childProcess.spawnSync(file, args, { timeout: 5000 });
  // refused by the task limit, it tested nothing
  if (result.error) evidence(result.error.code === "EAGAIN" ? "ERROR" : "blocked", `${label}: ${result.error.code}`);
  else if (result.status === 0) succeeded(`${label}: it ran`);
  else blocked(`${label}: status ${result.status} ${String(result.stderr).trim().slice(0, 120)}`);
}

function connect(host, port) {
  // a connection attempt that ends either way before the answer to hello is due
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (outcome) => {
      socket.destroy();
      resolve(outcome);
    };
    socket.on("connect", () => done(null));
    socket.on("error", (error) => done(error));
    socket.setTimeout(2000, () => done(new Error("timeout")));
  });
}

async function attackNetwork() {
  const targets = [
    ["127.0.0.1", 5432],
    ["127.0.0.1", 6379],
    ["127.0.0.1", PARAMS.port],
    ["::1", 5432],
    ["1.1.1.1", 443],
  ];
  for (const [host, port] of targets) {
    const error = await connect(host, port);
    if (error) blocked(`connect ${host}:${port}: ${error.code || error.message}`);
    else succeeded(`connect ${host}:${port}`);
  }
}

function attackReadProject() {
  for (const file of [
    `${PARAMS.repo}/pyproject.toml`,
    `${PARAMS.repo}/config/settings.py`,
    "/work/main/manage.py",
    "/etc/passwd",
    "/root/.bashrc",
    `/proc/${PARAMS.judge_pid}/environ`,
  ]) {
    mustFail(`read ${file}`, () => fs.readFileSync(file).subarray(0, 60));
  }
  for (const folder of [PARAMS.repo, "/work", "/root", "/home", "/var", "/srv"]) {
    mustFail(`list ${folder}`, () => fs.readdirSync(folder).join(",") || raise("empty"));
  }
}

function raise(message) {
  throw new Error(message);
}

function attackSecrets() {
  const keys = ["SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"];
  const found = Object.keys(process.env).filter((k) => keys.includes(k));
  for (const file of ["/proc/self/environ", "/proc/1/environ"]) {
    const data = fs.readFileSync(file, "latin1");
    found.push(...keys.filter((k) => data.includes(k)).map((k) => `${k} in ${file}`));
  }
  const others = fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid);
  const cmdline = fs.readFileSync("/proc/1/cmdline", "latin1");
  const detail = `secrets ${found}, pid ${process.pid}, other processes [${others}], pid 1 ${cmdline.includes("/bot/") ? "is the bot" : cmdline}`;
  // Node's own threads are tasks of its process, not other processes.
  if (found.length || others.length || process.pid !== 1 || !cmdline.includes("/bot/")) succeeded(detail);
  else blocked(detail);
}

function attackReadOtherBot() {
  const mark = "VICTIM-" + "SECRET";
  const hits = [];
  const skip = new Set(["/proc", "/usr", "/sys", "/dev"]);
  const walk = (folder, depth) => {
    if (depth > 12) return;
    let entries;
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const file = path.join(folder, entry.name);
      if (skip.has(file)) continue;
      if (entry.isDirectory()) walk(file, depth + 1);
      else if (entry.isFile()) {
        try {
          if (fs.readFileSync(file).includes(mark)) hits.push(file);
        } catch {}
      }
    }
  };
  walk("/", 0);
  try {
    if (fs.readFileSync(`${PARAMS.workdir}/seat1/main.py`).includes(mark)) hits.push("seat1");
  } catch {}
  if (hits.length) succeeded(`found another bot's code at ${hits}`);
  else blocked("searched /: no other bot");
}

function attackWriteOutside() {
  for (const target of [
    "/bot/pwned",
    "/bot/main.js",
    "/pwned",
    "/usr/pwned",
    "/usr/bin/node",
    "/etc/pwned",
    "/dev/shm/pwned",
    "/proc/sysrq-trigger",
    "/proc/sys/kernel/core_pattern",
    `${PARAMS.dropbox}/pwned`,
    `${PARAMS.repo}/pwned`,
  ]) {
    mustFail(`write ${target}`, () => fs.writeFileSync(target, "pwned") || target);
  }
  mustFail("mkdir /bot/dir", () => fs.mkdirSync("/bot/dir") || "made");
  mustFail("chmod /bot", () => fs.chmodSync("/bot", 0o777) || "changed");
  fs.writeFileSync(PARAMS.host_tmp_marker, "pwned"); // the sandbox's own /tmp
  blocked("wrote the /tmp marker: private to the sandbox (the test checks the host)");
}

function attackFillTmp() {
  const chunk = Buffer.alloc(1 << 20, "x");
  let written = 0;
  try {
    for (let i = 0; i < 1024; i++) {
      const fd = fs.openSync(`/tmp/fill${i}`, "w");
      try {
        for (let k = 0; k < 4; k++) written += fs.writeSync(fd, chunk);
      } finally {
        fs.closeSync(fd);
      }
    }
  } catch (error) {
    blocked(`/tmp full after ${written >> 20} MiB: ${error.code}`);
    return;
  }
  succeeded(`wrote ${written >> 20} MiB to /tmp`);
}

function attackForkBomb() {
  // every child is a Node of its own (threads count against the bot's processes too)
  const script = `require("node:child_process"); process.title = ${JSON.stringify(PARAMS.process_name)}; setInterval(() => {}, 1e6);`;
  let spawned = 0;
  let error = null;
  const children = [];
  while (spawned < 200) {
    const child = childProcess.spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    const failure = new Promise((resolve) => child.on("error", resolve));
    if (child.pid === undefined) {
      error = failure;
      break;
    }
    children.push(child);
    spawned++;
  }
  if (error !== null && spawned < 64) blocked(`spawn refused after ${spawned} children`);
  else succeeded(`spawned ${spawned} children`);
}

function attackMemory() {
  const held = [];
  try {
    for (let i = 0; i < 4096; i++) held.push(Buffer.alloc(16 << 20, 1)); // up to 64 GiB
  } catch (error) {
    const size = 16 * held.length;
    held.length = 0;
    blocked(`${error.constructor.name} after ${size} MiB: ${error.message}`);
    return;
  }
  succeeded(`allocated ${16 * held.length} MiB`);
}

function attackDaemon() {
  const script = `
    const fs = require("node:fs");
    process.title = ${JSON.stringify(PARAMS.process_name)};
    setInterval(() => {
      for (const file of [${JSON.stringify(PARAMS.dropbox + "/daemon-alive")}, ${JSON.stringify(PARAMS.host_tmp_marker)}]) {
        try { fs.writeFileSync(file, String(Date.now())); } catch {}
      }
    }, 50);`;
  const child = childProcess.spawn(process.execPath, ["-e", script], {
    detached: true, // a session of its own
    stdio: "ignore",
  });
  child.unref();
  // alive once it wrote its marker (in this sandbox's own /tmp, the one path it can write)
  const deadline = Date.now() + 3000;
  while (!fs.existsSync(PARAMS.host_tmp_marker) && Date.now() < deadline) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
  }
  if (fs.existsSync(PARAMS.host_tmp_marker)) blocked("daemon started; the test checks that it died with the table");
  else evidence("ERROR", "the daemon never wrote its marker");
}

function attackKill() {
  mustFail("kill the judge's pid", () => process.kill(PARAMS.judge_pid, "SIGKILL"));
  if (NAME === "kill_all") {
    mustFail("kill -9 -1", () => process.kill(-1, "SIGKILL"));
    mustFail("kill -STOP -1", () => process.kill(-1, "SIGSTOP"));
  } else {
    try {
      process.kill(process.ppid, "SIGKILL"); // 0: its own process group, of which it is pid 1
    } catch {}
    blocked(`kill -9 ${process.ppid} reached nobody but this bot, which as pid 1 ignores it`);
  }
}

// Objects on V8's own heap until it is full: --max-old-space-size (from the memory limit) stops
// it, and V8 ends the process ("JavaScript heap out of memory").
function attackHeap() {
  evidence("attempting", "filling the V8 heap");
  const held = [];
  for (let i = 0; i < 1e6; i++) held.push(new Array(1 << 20).fill(i));
  succeeded(`held ${held.length} arrays of 8 MiB`);
}

// Write a program (an ELF copy of /usr/bin/true, a #! script) into every writable folder and
// try to execute it: directly, and through the dynamic loader.
function attackExecWritten() {
  let written = 0;
  for (const folder of ["/tmp", "/dev/shm", "/bot", "/", "/dev"]) {
    const elf = `${folder}/x-elf`;
    const script = `${folder}/x-script`;
    try {
      fs.copyFileSync("/usr/bin/true", elf);
      fs.chmodSync(elf, 0o755);
      written++;
      mustNotRun(`execve ${elf}`, elf);
      mustNotRun(`ld.so ${elf}`, "/lib64/ld-linux-x86-64.so.2", [elf]);
    } catch {}
    try {
      fs.writeFileSync(script, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
      fs.chmodSync(script, 0o755);
      written++;
      mustNotRun(`execve ${script}`, script);
    } catch {}
  }
  if (!written) evidence("ERROR", "wrote no program anywhere");
}

const ATTACKS = {
  net_postgres: attackNetwork,
  net_redis: attackNetwork,
  net_public: attackNetwork,
  net_listener: attackNetwork,
  read_project: attackReadProject,
  read_secret_key: attackSecrets,
  read_proc1_environ: attackSecrets,
  read_parent_env: attackSecrets,
  read_other_bot: attackReadOtherBot,
  write_outside: attackWriteOutside,
  fill_tmp: attackFillTmp,
  fork_bomb: attackForkBomb,
  memory_balloon: attackMemory,
  heap_balloon: attackHeap,
  daemon: attackDaemon,
  kill_parent: attackKill,
  kill_all: attackKill,
  exec_written: attackExecWritten,
};


// Two seats of one table: the channels of tests/judge/attacks/bots/collude_*.py that Node has.
const COLLUDE_TRIES = 10;
const collusion = { seat: -1, tries: 0, servers: [], received: 0 };
const colludeName = (seat) => `tapis-collude-${PARAMS.token}${seat === undefined ? "" : `-${seat}`}`;
const SOCKETS = [`\0${colludeName()}`, `/tmp/${colludeName()}`]; // abstract, then in /tmp
const NOTE_FOLDERS = ["/tmp", "/dev/shm", "/var/tmp", "/bot"];

async function colludeStart(seat) {
  collusion.seat = seat;
  if (NAME === "collude_socket" && seat === 0) {
    for (const address of SOCKETS) {
      const server = net.createServer((connection) => {
        succeeded(`a partner connected to ${JSON.stringify(address)}`);
        connection.destroy();
      });
      await new Promise((resolve) => {
        server.on("error", (error) => {
          evidence("ERROR", `cannot listen on ${JSON.stringify(address)}: ${error.code}`);
          resolve();
        });
        server.listen(address, resolve);
      });
      collusion.servers.push(server);
    }
  } else if (NAME === "collude_shm" && seat === 0) {
    mustFail("POSIX shm create (/dev/shm)", () => fs.writeFileSync(`/dev/shm/${colludeName()}`, "x") || "made");
  } else if (NAME === "collude_tmp") {
    for (const folder of NOTE_FOLDERS) {
      try {
        fs.writeFileSync(`${folder}/${colludeName(seat)}`, "my hand: ...");
      } catch {}
    }
  } else if (NAME === "collude_signals" && seat === 0) {
    process.on("SIGUSR1", () => collusion.received++);
  } else if (NAME === "collude_signals") {
    const reached = [];
    // Node's threads have pids of this namespace too: a signal to one reaches this very process
    const own = new Set(fs.readdirSync("/proc/self/task").map(Number));
    for (let pid = 1; pid < 4096; pid++) {
      if (pid === process.pid || own.has(pid)) continue;
      try {
        process.kill(pid, "SIGUSR1");
        reached.push(pid);
      } catch {}
    }
    mustFail("kill -USR1 -1", () => process.kill(-1, "SIGUSR1"));
    if (reached.length) succeeded(`signalled pids ${reached.slice(0, 20)}`);
    else blocked("no other process to signal");
  }
}

async function colludeAct() {
  const { seat } = collusion;
  // the notes: both seats look for the other's; every other channel: seat 1 for seat 0's
  if ((seat === 0 && NAME !== "collude_tmp") || collusion.tries >= COLLUDE_TRIES) return;
  collusion.tries++;
  const last = collusion.tries === COLLUDE_TRIES;
  if (NAME === "collude_socket") {
    for (const address of SOCKETS) {
      const error = await new Promise((resolve) => {
        const socket = net.connect(address, () => {
          socket.end("my hand: ...");
          resolve(null);
        });
        socket.on("error", resolve);
      });
      if (!error) succeeded(`connected to the partner at ${JSON.stringify(address)}`);
      else if (last) blocked(`${JSON.stringify(address)}: ${collusion.tries} tries, ${error.code}`);
    }
  } else if (NAME === "collude_shm") {
    if (fs.existsSync(`/dev/shm/${colludeName()}`)) succeeded("found the partner's POSIX shm");
    else if (last) blocked(`${collusion.tries} tries: no shared memory of the partner`);
  } else if (NAME === "collude_tmp") {
    const seen = NOTE_FOLDERS.filter((folder) => fs.existsSync(`${folder}/${colludeName(1 - seat)}`));
    if (seen.length) succeeded(`read the partner's note in ${seen}`);
    else if (last) blocked(`${collusion.tries} tries: no note from the partner`);
  }
}

function colludeEnd() {
  if (collusion.seat !== 0) return;
  if (NAME === "collude_socket") blocked("nobody ever connected");
  else if (NAME === "collude_signals") {
    if (collusion.received) succeeded(`received ${collusion.received} signals`);
    else blocked("received no signal");
  }
}

// the protocol
function send(text) {
  fs.writeSync(1, text);
}

function answer(message, action, idDelta = 0) {
  send(JSON.stringify({ id: message.id + idDelta, action }) + "\n");
}

// At the first act: misbehave instead of answering. Returns true if it did.
function misbehave(message) {
  switch (NAME) {
    case "flood_stdout": {
      const chunk = Buffer.alloc(1 << 20, "x");
      for (let i = 0; i < 10; i++) fs.writeSync(1, chunk);
      return true;
    }
    case "huge_line": {
      fs.writeSync(1, `{"id":${message.id},"action":"`);
      const chunk = Buffer.alloc(1000000, "A");
      for (let i = 0; i < 100; i++) fs.writeSync(1, chunk);
      fs.writeSync(1, '"}\n');
      return true;
    }
    case "invalid_utf8":
      fs.writeSync(1, Buffer.concat([Buffer.from(`{"id":${message.id},"action":"`), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}\n')]));
      return true;
    case "illegal_card":
      answer(message, "ZZ");
      return true;
    case "wrong_id":
      answer(message, message.legal_actions[0], 1000);
      return true;
    case "cpu_spin":
      evidence("attempting", "spinning");
      for (;;) {}
    case "sleep_forever":
      evidence("attempting", "sleeping forever");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // blocks forever
      return true;
    default:
      return false;
  }
}

async function main() {
  if (NAME === "exit_at_once") {
    evidence("attempting", "exiting");
    process.exit(0);
  }
  let acts = 0;
  let buffered = "";
  const handle = async (message) => {
    if (message.type === "hello") {
      if (ATTACKS[NAME]) await ATTACKS[NAME]();
      if (NAME.startsWith("collude_")) await colludeStart(message.seat);
      const ready = '{"type":"ready","name":"attacker-javascript"}\n';
      // one write: the early answer is surely there before the first request
      send(NAME === "answer_early" ? ready + '{"id":1,"action":"2C"}\n' : ready);
      if (NAME === "close_stdout") {
        fs.closeSync(1);
        evidence("attempting", "stdout closed");
      }
      if (NAME === "flood_stderr") {
        const chunk = "e".repeat(1 << 16) + "\n";
        for (let i = 0; i < 160; i++) fs.writeSync(2, chunk);
      }
    } else if (message.type === "act") {
      // an illegal card or a wrong id at every act, as in Python: the seat is replaced
      const again = NAME === "illegal_card" || NAME === "wrong_id";
      if (NAME.startsWith("collude_")) await colludeAct();
      if (!((acts++ === 0 || again) && misbehave(message))) answer(message, message.legal_actions[0]);
    } else if (message.type === "game_end") {
      if (NAME.startsWith("collude_")) colludeEnd();
    } else if (message.type === "bye") {
      process.exit(0);
    }
  };
  // read stdin in order, one message at a time (an attack may await)
  for await (const chunk of process.stdin) {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line) await handle(JSON.parse(line));
    }
  }
}

main();
