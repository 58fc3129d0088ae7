//! Run-time attacks of tests/judge/attacks/bots/*.py, in Rust: one program, built once for
//! every test (by the real cargo in the build sandbox), the attack named by /bot/params.json,
//! which the test adds to each copy of the build. Never run it outside the sandbox.
//!
//! Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when
//! the sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise
//! plays the first legal action of every decision. It has no dependency (a build is then a few
//! seconds): the C library's calls are declared here, and the few fields it needs (of the
//! protocol: type, id, the first legal action; of its parameters) are read from compact JSON by
//! hand.

use std::ffi::CString;
use std::fs;
use std::io::{self, BufRead, Error, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

extern "C" {
    fn fork() -> i32;
    fn kill(pid: i32, signal: i32) -> i32;
    fn getpid() -> i32;
    fn getppid() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn sleep(seconds: u32) -> u32;
    fn _exit(status: i32) -> !;
    fn prctl(option: i32, arg: *const u8, ...) -> i32;
    fn syscall(number: i64, ...) -> i64;
}

const SIGKILL: i32 = 9;
const SIGSTOP: i32 = 19;

/// A parameter the test gives (/bot/params.json: host paths, ports, tokens), a string.
fn param(key: &str) -> String {
    let text = fs::read_to_string("/bot/params.json").unwrap_or_default();
    field(&text, key).trim_matches('"').to_string()
}

fn number(key: &str) -> i32 {
    param(key).parse().unwrap_or(0)
}

fn evidence(outcome: &str, detail: &str) {
    eprintln!("ATTACK {} {outcome}: {detail}", param("name"));
}

/// An error means that the sandbox stopped it, a value that it did not.
fn must_fail<T: std::fmt::Debug, E: std::fmt::Display>(label: &str, result: Result<T, E>) {
    match result {
        Err(error) => evidence("blocked", &format!("{label}: {error}")),
        Ok(value) => evidence("SUCCEEDED", &format!("{label}: {value:?}")),
    }
}

/// A C call's result: -1 is its errno.
fn checked(rc: i64) -> Result<i64, Error> {
    if rc == -1 {
        Err(Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn set_name() {
    let name = CString::new(param("process_name")).unwrap();
    unsafe { prctl(15, name.as_ptr() as *const u8, 0, 0, 0) }; // PR_SET_NAME
}

/// A forked child that sleeps (under the test's process name); the fork's errno if refused.
fn sleeping_child() -> Result<i32, Error> {
    let pid = checked(unsafe { fork() } as i64)? as i32;
    if pid == 0 {
        set_name();
        unsafe {
            sleep(3600);
            _exit(0)
        }
    }
    Ok(pid)
}

fn network() {
    for address in [
        "127.0.0.1:5432".to_string(),
        "127.0.0.1:6379".to_string(),
        format!("127.0.0.1:{}", number("port")),
        "[::1]:5432".to_string(),
        "1.1.1.1:443".to_string(),
    ] {
        let address: SocketAddr = address.parse().unwrap();
        let label = format!("connect {address}");
        must_fail(&label, TcpStream::connect_timeout(&address, Duration::from_secs(2)));
    }
    must_fail("udp socket", UdpSocket::bind("127.0.0.1:0"));
}

fn read_project() {
    let repo = param("repo");
    let judge_environ = format!("/proc/{}/environ", number("judge_pid"));
    for path in [
        &format!("{repo}/pyproject.toml"),
        &format!("{repo}/config/settings.py"),
        "/work/main/manage.py",
        "/etc/passwd",
        "/etc/shadow",
        "/root/.bashrc",
        &judge_environ,
    ] {
        must_fail(&format!("read {path}"), fs::read(path).map(|data| data.len()));
    }
    for folder in [repo.as_str(), "/work", "/root", "/home", "/var", "/srv"] {
        must_fail(&format!("list {folder}"), fs::read_dir(folder).map(|entries| entries.count()));
    }
}

fn secrets() {
    let keys = ["SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"];
    let mut found: Vec<String> = std::env::vars()
        .filter(|(key, _)| keys.contains(&key.as_str()))
        .map(|(key, _)| key)
        .collect();
    for path in ["/proc/self/environ", "/proc/1/environ"] {
        let data = String::from_utf8_lossy(&fs::read(path).unwrap_or_default()).into_owned();
        found.extend(keys.iter().filter(|key| data.contains(*key)).map(|key| format!("{key} in {path}")));
    }
    // every process this bot can see: itself
    let own = unsafe { getpid() };
    let others: Vec<String> = fs::read_dir("/proc")
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| name.parse::<i32>().map_or(false, |pid| pid != own))
                .collect()
        })
        .unwrap_or_default();
    let parent = unsafe { getppid() };
    let detail = format!("secrets {found:?}, pid {own}, parent {parent}, other processes {others:?}");
    let outcome = if found.is_empty() && others.is_empty() && own == 1 && parent == 0 {
        "blocked"
    } else {
        "SUCCEEDED"
    };
    evidence(outcome, &detail);
}

/// Status 0 is "it ran": the attack got through.
fn run(program: &str, args: &[&str]) -> Result<&'static str, String> {
    match Command::new(program).args(args).status() {
        Ok(status) if status.success() => Ok("it ran"),
        Ok(status) => Err(format!("{status}")),
        Err(error) => Err(format!("{error}")),
    }
}

/// Write a program (an ELF copy of /usr/bin/true, a #! script) into every writable folder and
/// try to execute it: execve, the dynamic loader, an executable memfd.
fn exec_written() {
    let mut written = 0;
    for folder in ["/tmp", "/dev/shm", "/bot", "/", "/dev"] {
        let (elf, script) = (format!("{folder}/x-elf"), format!("{folder}/x-script"));
        let executable = || fs::Permissions::from_mode(0o755);
        if fs::copy("/usr/bin/true", &elf).is_ok() && fs::set_permissions(&elf, executable()).is_ok() {
            written += 1;
            must_fail(&format!("execve {elf}"), run(&elf, &[]));
            must_fail(&format!("ld.so {elf}"), run("/lib64/ld-linux-x86-64.so.2", &[&elf]));
        }
        if fs::write(&script, "#!/bin/sh\nexit 0\n").is_ok()
            && fs::set_permissions(&script, executable()).is_ok()
        {
            written += 1;
            must_fail(&format!("execve {script}"), run(&script, &[]));
        }
    }
    let name = CString::new("x").unwrap();
    let memfd = checked(unsafe { syscall(319, name.as_ptr(), 0) }); // memfd_create, no seal
    must_fail("memfd_create without MFD_NOEXEC_SEAL", memfd.as_ref().map_err(|e| e.to_string()));
    if let Ok(fd) = memfd {
        let path = format!("/proc/self/fd/{fd}");
        let copied = fs::copy("/usr/bin/true", &path);
        must_fail("execve of a memfd", copied.map_err(|e| e.to_string()).and_then(|_| run(&path, &[])));
    }
    if written == 0 {
        evidence("ERROR", "wrote no program anywhere");
    }
}

/// Children that fork in turn until refused, then sleep under the test's process name.
fn fork_bomb() {
    let mut forked = 0;
    let refused = loop {
        match checked(unsafe { fork() } as i64) {
            Err(error) => break Some(error),
            Ok(0) => {
                set_name();
                while unsafe { fork() } >= 0 {}
                unsafe {
                    sleep(3600);
                    _exit(0)
                }
            }
            Ok(_) if forked == 10_000 => break None,
            Ok(_) => forked += 1,
        }
    };
    let detail = format!("fork refused after {forked} children: {refused:?}");
    evidence(if refused.is_some() && forked < 64 { "blocked" } else { "SUCCEEDED" }, &detail);
}

/// Threads that wait until refused; then they end (the bot plays on).
fn thread_bomb() {
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
    let mut threads = Vec::new();
    let refused = loop {
        let wait = wait.clone();
        match std::thread::Builder::new().stack_size(64 << 10).spawn(move || {
            let _ = wait.lock().unwrap().recv();
        }) {
            Ok(thread) if threads.len() < 10_000 => threads.push(thread),
            Ok(_) => break None,
            Err(error) => break Some(error),
        }
    };
    let detail = format!("thread refused after {} threads: {refused:?}", threads.len());
    evidence(if refused.is_some() && threads.len() < 64 { "blocked" } else { "SUCCEEDED" }, &detail);
    drop(release); // every waiting thread's recv ends
    for thread in threads {
        let _ = thread.join();
    }
}

/// 16 MiB blocks, written to, until refused (try_reserve: an error, not an abort).
fn memory_balloon() {
    let mut held: Vec<Vec<u8>> = Vec::new();
    while held.len() < 4096 {
        let mut block: Vec<u8> = Vec::new();
        if let Err(error) = block.try_reserve_exact(16 << 20) {
            let size = 16 * held.len();
            drop(held);
            evidence("blocked", &format!("allocation refused after {size} MiB: {error}"));
            return;
        }
        block.resize(16 << 20, 1);
        held.push(block);
    }
    evidence("SUCCEEDED", "allocated 64 GiB");
}

fn kill_all() {
    let judge = number("judge_pid");
    must_fail("kill the judge's pid", checked(unsafe { kill(judge, SIGKILL) } as i64));
    must_fail("kill -9 -1", checked(unsafe { kill(-1, SIGKILL) } as i64));
    must_fail("kill -STOP -1", checked(unsafe { kill(-1, SIGSTOP) } as i64));
}

fn ptrace() {
    const PTRACE: i64 = 101;
    const TRACEME: i64 = 0;
    const ATTACH: i64 = 16;
    const SEIZE: i64 = 0x4206;
    must_fail("PTRACE_TRACEME", checked(unsafe { syscall(PTRACE, TRACEME, 0, 0, 0) }));
    let child = match sleeping_child() {
        Ok(child) => child as i64,
        Err(error) => return evidence("ERROR", &format!("no child to trace: {error}")),
    };
    must_fail("PTRACE_ATTACH child", checked(unsafe { syscall(PTRACE, ATTACH, child, 0, 0) }));
    must_fail("PTRACE_SEIZE child", checked(unsafe { syscall(PTRACE, SEIZE, child, 0, 0) }));
    let vm_readv = unsafe { syscall(310, child, 0, 0, 0, 0, 0) }; // process_vm_readv
    must_fail("process_vm_readv child", checked(vm_readv));
    unsafe {
        kill(child as i32, SIGKILL);
        waitpid(child as i32, std::ptr::null_mut(), 0);
    }
}

fn attack() {
    match param("name").as_str() {
        "net_postgres" => network(),
        "read_project" => read_project(),
        "read_secret_key" => secrets(),
        "exec_written" => exec_written(),
        "fork_bomb" => fork_bomb(),
        "thread_bomb" => thread_bomb(),
        "memory_balloon" => memory_balloon(),
        "kill_all" => kill_all(),
        "ptrace" => ptrace(),
        _ => {}
    }
}

// the protocol

/// The JSON value that starts at text[0]: up to the end of its brackets or string.
fn json_value(text: &str) -> &str {
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => {
                in_string = !in_string;
                if !in_string && depth == 0 {
                    return &text[..=i];
                }
            }
            '[' | '{' if !in_string => depth += 1,
            ']' | '}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return &text[..=i];
                }
            }
            ',' | ']' | '}' if !in_string && depth == 0 => return &text[..i],
            _ => {}
        }
    }
    text
}

/// The value of a top-level field of the judge's compact JSON (its first occurrence).
fn field<'a>(line: &'a str, key: &str) -> &'a str {
    match line.find(&format!("\"{key}\":")) {
        Some(at) => json_value(&line[at + key.len() + 3..]),
        None => "",
    }
}

fn main() {
    let mut out = io::stdout().lock();
    let mut acts = 0;
    let huge_line = param("name") == "huge_line";
    for line in io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let id = field(&line, "id");
        match field(&line, "type") {
            "\"hello\"" => {
                attack();
                writeln!(out, r#"{{"type":"ready","name":"attacker-rust"}}"#).unwrap();
            }
            "\"act\"" => {
                acts += 1;
                if acts == 1 && huge_line {
                    write!(out, r#"{{"id":{id},"action":""#).unwrap();
                    for _ in 0..100 {
                        out.write_all(&[b'A'; 1_000_000]).unwrap();
                    }
                    writeln!(out, "\"}}").unwrap();
                } else {
                    let legal = &field(&line, "legal_actions")[1..]; // after the '['
                    writeln!(out, r#"{{"id":{id},"action":{}}}"#, json_value(legal)).unwrap();
                }
            }
            "\"bye\"" => return,
            _ => continue,
        }
        out.flush().unwrap();
    }
}
