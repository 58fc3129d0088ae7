//! The Rust example bot: protocol 1 (docs/protocol.md) with serde_json (Debian's packaged crate,
//! built offline by cargo).
//!
//! Plays the first legal action of every decision, in every game, and rebuilds the lists sent
//! as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
//! checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
//! Build: cargo build --release --offline (see docs/protocol.md, "Rust").
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

const DELTA_LISTS: [&str; 2] = ["history", "tricks"];

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut kept: HashMap<&str, Vec<Value>> = HashMap::new(); // rebuilt so far in this deal
    for line in stdin.lock().lines() {
        let message: Value = serde_json::from_str(&line.expect("stdin")).expect("JSON");
        let reply = match message["type"].as_str() {
            Some("hello") => json!({"type": "ready", "name": "example-rust"}),
            Some("act") => {
                let observation = &message["observation"];
                for key in DELTA_LISTS {
                    if let Some(start) = observation[format!("{key}_start")].as_u64() {
                        let whole = kept.entry(key).or_default();
                        whole.truncate(start as usize);
                        whole.extend(observation[key].as_array().into_iter().flatten().cloned());
                    }
                }
                json!({"id": message["id"], "action": message["legal_actions"][0]})
            }
            Some("deal_end") => {
                let tricks = kept.get("tricks").cloned().unwrap_or_default();
                let played = message["summary"]["tricks"].as_array().cloned().unwrap_or_default();
                let ok = tricks.len() <= played.len() && played[..tricks.len()] == tricks[..];
                let history = kept.get("history").map_or(0, Vec::len);
                eprintln!(
                    "deal {}: {} tricks, {} history entries, {}",
                    message["deal"],
                    tricks.len(),
                    history,
                    if ok { "ok" } else { "MISMATCH" }
                );
                kept.clear();
                continue;
            }
            Some("bye") => return,
            _ => continue, // game_end, and notices of later versions
        };
        writeln!(out, "{reply}").expect("stdout");
        out.flush().expect("stdout");
    }
}
