"""Hostile sources at build time: each is built by ``judge.launchers.runtimes.build`` in the real
bubblewrap sandbox with the real build limits, and must be refused with a clear reason (a
``BuildError``), never hang the judge nor reach anything outside the sandbox.

C, C++, Rust and Go here; Java has none of its own: javac runs no code of the bot (``-proc:none``:
no annotation processor) and reads nothing but its sources and the JDK."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from judge.launchers import runtimes
from judge.launchers.package import PackageError, make_read_only, prepare, remove

CARGO_TOML = '[package]\nname = "bot"\nversion = "0.1.0"\nedition = "2021"\n'  # no dependency
GO_MODULE = "github.com/tapis-attacker/judge"
GO_SUM = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
GO_MAIN = f'package main\n\nimport "{GO_MODULE}"\n\nfunc main() {{ judge.Run() }}\n'

# (runtime, files, what the refusal says)
ATTACKS = {
    "compile_error": ("c", {"bot.c": "int main(void) { return x; }\n"}, "exited with status"),
    "template_recursion": (
        "cpp",
        {
            "bot.cpp": "template <int N> struct F { static const int v = F<N + 1>::v; };\n"
            "int main() { return F<0>::v; }\n"
        },
        "template instantiation depth",
    ),
    "huge_initializer": (
        "c",
        {"bot.c": "char big[1L << 30] = {1};\nint main(int n, char **v) { return big[n]; }\n"},
        "build failed",
    ),
    "include_dev_zero": ("c", {"bot.c": '#include "/dev/zero"\nint main(void) {}\n'}, "failed"),
    "include_host_file": (
        "c",
        {"bot.c": '#include "/etc/passwd"\n#include "/work/main/config/settings.py"\n'},
        "No such file",
    ),
    # the host's files through the compiler: Rust's include_str!, Go's replace directive
    "rust_include_host_file": (
        "rust",
        {
            "src/main.rs": 'const PASSWD: &str = include_str!("/etc/passwd");\n'
            'const SETTINGS: &[u8] = include_bytes!("/work/main/config/settings.py");\n'
            'fn main() { println!("{PASSWD} {}", SETTINGS.len()); }\n',
            "Cargo.toml": CARGO_TOML,
        },
        "couldn't read /etc/passwd",
    ),
    "go_replace_host_folder": (
        "go",
        {
            "main.go": GO_MAIN,
            "go.mod": f"module bot\n\ngo 1.19\n\nrequire {GO_MODULE} v1.0.0\n\n"
            f"replace {GO_MODULE} => /work/main/judge\n",
        },
        "replacement directory /work/main/judge does not exist",
    ),
    # code from the network: a Go module to download (its go.sum entry given, as a real one)
    "go_module_download": (
        "go",
        {
            "main.go": GO_MAIN,
            "go.mod": f"module bot\n\ngo 1.19\n\nrequire {GO_MODULE} v1.0.0\n",
            "go.sum": f"{GO_MODULE} v1.0.0 h1:{GO_SUM}\n{GO_MODULE} v1.0.0/go.mod h1:{GO_SUM}\n",
        },
        "module lookup disabled",
    ),
}

BUILD_SCRIPT = """\
use std::net::TcpStream;
fn main() {
    let net = TcpStream::connect("127.0.0.1:5432").is_ok()
        || TcpStream::connect("127.0.0.1:6379").is_ok();
    let passwd = std::fs::read_to_string("/etc/passwd").is_ok();
    let host = std::fs::read_dir("/work").is_ok() || std::fs::read_dir("/root").is_ok();
    if net || passwd || host {
        panic!("ATTACK build_script SUCCEEDED net={net} passwd={passwd} host={host}");
    }
    panic!("ATTACK build_script blocked");
}
"""


def _package(tmp_path: Path, runtime: str, files: dict[str, str]) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    entry = next(iter(files))
    manifest = {"runtime": runtime, "entry": entry, "sources": [entry]}
    (source / "tapis.json").write_text(json.dumps(manifest))
    for name, text in files.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text)
    return source


def _build(tmp_path: Path, runtime: str, files: dict[str, str]) -> str:
    # pytest's own temporary folders are 700: the sandbox uid could not reach the sources
    work = Path(tempfile.mkdtemp(prefix="tapis-build-attack-"))
    work.chmod(0o711)
    prepared = prepare(_package(tmp_path, runtime, files), work / "bot")
    try:
        with pytest.raises(runtimes.BuildError) as refused:
            runtimes.build(prepared.directory, runtime, prepared.entry, prepared.sources)
    finally:
        remove(prepared.directory)
        shutil.rmtree(work, ignore_errors=True)
    return str(refused.value)


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_build_attack_is_refused(bwrap_works: None, tmp_path: Path, attack: str) -> None:
    runtime, files, reason = ATTACKS[attack]
    message = _build(tmp_path, runtime, files)
    assert message.startswith(f"{runtime} build failed: "), message
    assert reason in message, message


def test_a_build_script_reaches_neither_the_network_nor_the_host(
    bwrap_works: None, tmp_path: Path
) -> None:
    files = {
        "src/main.rs": "fn main() {}\n",
        "Cargo.toml": '[package]\nname = "bot"\nversion = "0.1.0"\nedition = "2021"\n'
        'build = "build.rs"\n',
        "build.rs": BUILD_SCRIPT,
    }
    message = _build(tmp_path, "rust", files)
    assert "ATTACK build_script blocked" in message, message
    assert "SUCCEEDED" not in message


# A build script that writes a tar of its own into descriptor 3, the artifact's pipe: a member
# ./bot before the build's own ./bot (no end-of-archive blocks, so a reader goes on).
WRITE_ARTIFACT_BUILD_SCRIPT = r"""
use std::process::Command;
fn main() {
    let _ = Command::new("/bin/sh").arg("-c").arg(
        "mkdir -p /tmp/evil && printf 'ATTACK artifact written' > /tmp/evil/bot && \
         chmod 755 /tmp/evil/bot && \
         tar --format=ustar -C /tmp/evil -cf - ./bot | head -c 1024 >&3",
    ).status();
}
"""


def _built_by_hand(files: dict[str, str]) -> Path:
    """Sources as a folder the sandbox uid can read, without the package's checks (what a
    name the checks let through would be given to the compiler)."""
    work = Path(tempfile.mkdtemp(prefix="tapis-build-attack-"))
    work.chmod(0o711)
    for name, text in files.items():
        (work / "bot" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "bot" / name).write_text(text)
    make_read_only(work / "bot")
    return work / "bot"


def _outcome(directory: Path, runtime: str, entry: str, sources: list[str]) -> str:
    """What a build leaves: its refusal, or its log and its artifact unpacked cleanly."""
    try:
        artifact = runtimes.build(directory, runtime, entry, sources)
    except runtimes.BuildError as exc:
        return f"refused: {exc}"
    finally:
        remove(directory)
        shutil.rmtree(directory.parent, ignore_errors=True)
    unpacked = Path(tempfile.mkdtemp(prefix="tapis-build-attack-out-")) / "bot"
    try:
        runtimes.unpack_artifact(artifact.data, unpacked)  # FileExistsError before the fix
        program = (unpacked / "bot").read_bytes() if (unpacked / "bot").exists() else b""
    finally:
        runtimes.remove_tree(unpacked.parent)
    return f"built: {artifact.log}\n{program[:64]!r}"


def test_a_build_script_cannot_write_the_artifact(bwrap_works: None) -> None:
    """A Rust build.rs that writes into descriptor 3 finds it closed: the artifact is the
    compiler's program, and a tar it could write there would be refused, never unpacked
    half-way (it was a duplicate ./bot, FileExistsError, the version pending for ever)."""
    files = {
        "src/main.rs": "fn main() {}\n",
        "Cargo.toml": CARGO_TOML + 'build = "build.rs"\n',
        "build.rs": WRITE_ARTIFACT_BUILD_SCRIPT,
    }
    outcome = _outcome(_built_by_hand(files), "rust", "src/main.rs", ["src/main.rs"])
    assert "ATTACK" not in outcome, outcome
    assert outcome.startswith("built: "), outcome
    assert "\\x7fELF" in outcome, outcome


# A source named @opts: gcc and javac read such an argument as the file of options opts.
OPTION_FILES = {
    "c": (
        {"bot.c": "int main(void) { return 0; }\n"},
        "-wrapper '/bin/sh,-c,echo RAN$((40+2)) >&2; exit 1'\n",
        "RAN42",
    ),
    "cpp": (
        {"bot.cpp": "int main() { return 0; }\n"},
        "-wrapper '/bin/sh,-c,echo RAN$((40+2)) >&2; exit 1'\n",
        "RAN42",
    ),
    "java": (
        {"Bot.java": "public class Bot { public static void main(String[] a) {} }\n"},
        "-verbose\n",
        "[parsing started",
    ),
}


@pytest.mark.parametrize("runtime", list(OPTION_FILES))
def test_a_source_named_like_a_file_of_options_is_a_file(bwrap_works: None, runtime: str) -> None:
    """A source ``@opts`` is passed as ``./@opts``: the compiler never reads it as options
    (gcc's -wrapper ran a command; javac's -verbose is seen in its messages). The package
    check refuses such a name before any build."""
    files, options, ran = OPTION_FILES[runtime]
    entry = next(iter(files))
    sources = {**files, "opts": options, "@opts": ""}  # the argument @opts reads opts
    outcome = _outcome(_built_by_hand(sources), runtime, entry, [entry, "@opts"])
    assert ran not in outcome, outcome


GO_HELLO = "package main\n\nfunc main() {}\n"
GO_FLAGS = {
    "x": ("-x", "WORK="),
    "toolexec": ('-toolexec=sh -c "echo RAN$((40+2)) >&2; exit 1"', "RAN42"),
}


@pytest.mark.parametrize("flag", list(GO_FLAGS))
def test_a_go_source_named_like_a_flag_is_a_file(bwrap_works: None, flag: str) -> None:
    """``go build`` is given ``./-x``, never the flag ``-x`` (its commands in the log) nor
    ``-toolexec`` (a command of the package's before every tool)."""
    name, ran = GO_FLAGS[flag]
    files = {"main.go": GO_HELLO, name: GO_HELLO}
    outcome = _outcome(_built_by_hand(files), "go", "main.go", [name, "main.go"])
    assert ran not in outcome, outcome


@pytest.mark.parametrize("name", ["@opts", "-x", "src/-toolexec=sh", "@/bot.c"])
def test_a_name_a_compiler_would_read_as_an_option_is_refused(tmp_path: Path, name: str) -> None:
    source = _package(tmp_path, "c", {"bot.c": "int main(void) { return 0; }\n", name: "x"})
    with pytest.raises(PackageError, match="may not start with '-' or '@'"):
        prepare(source, tmp_path / "out")
