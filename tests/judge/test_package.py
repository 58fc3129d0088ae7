"""Bot packages: what is accepted, what is refused and why, and how it is unpacked."""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from judge.launchers import package
from judge.launchers.package import PackageError, check, prepare, remove

MANIFEST = json.dumps({"entry": "main.py", "runtime": "python3"})


def make_zip(
    path: Path, members: dict[str, bytes | str], *, manifest: str | None = MANIFEST
) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        if manifest is not None:
            archive.writestr("tapis.json", manifest)
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def refused(source: Path, tmp_path: Path, reason: str) -> None:
    with pytest.raises(PackageError, match=reason):
        prepare(source, tmp_path / "out")


def test_a_single_file(tmp_path: Path) -> None:
    source = tmp_path / "my_bot.py"
    source.write_text("print('hi')\n")
    bot = prepare(source, tmp_path / "out")
    assert bot.entry == "my_bot.py"
    assert bot.command == ("/usr/bin/python3", "-S", "-u", "/bot/my_bot.py")
    assert (bot.directory / "my_bot.py").read_text() == "print('hi')\n"
    # Readable by the sandbox's uid, writable by nobody.
    assert stat.S_IMODE(os.stat(bot.directory).st_mode) == 0o555
    assert stat.S_IMODE(os.stat(bot.directory / "my_bot.py").st_mode) == 0o444
    remove(bot.directory)
    assert not bot.directory.exists()


def test_an_odd_file_name_becomes_bot_py(tmp_path: Path) -> None:
    source = tmp_path / "my bot (2).py"
    source.write_text("pass\n")
    assert prepare(source, tmp_path / "out").entry == "bot.py"


def test_a_zip_with_folders(tmp_path: Path) -> None:
    source = make_zip(
        tmp_path / "bot.zip",
        {"main.py": "import lib.util\n", "lib/__init__.py": "", "lib/util.py": "X = 1\n"},
    )
    bot = prepare(source, tmp_path / "out")
    assert bot.entry == "main.py"
    assert bot.files == 4  # the manifest counts
    assert (bot.directory / "lib" / "util.py").read_text() == "X = 1\n"
    checked = check(source)
    assert checked.directory == source


def test_the_entry_may_be_in_a_folder(tmp_path: Path) -> None:
    manifest = json.dumps({"entry": "src/run.py"})
    source = make_zip(tmp_path / "bot.zip", {"src/run.py": "pass\n"}, manifest=manifest)
    assert prepare(source, tmp_path / "out").command[-1] == "/bot/src/run.py"


def test_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    (folder / "pkg" / "__pycache__").mkdir(parents=True)
    (folder / "tapis.json").write_text(MANIFEST)
    (folder / "main.py").write_text("pass\n")
    (folder / "pkg" / "a.py").write_text("pass\n")
    (folder / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    bot = prepare(folder, tmp_path / "out")
    assert sorted(p.relative_to(bot.directory).as_posix() for p in bot.directory.rglob("*.py")) == [
        "main.py",
        "pkg/a.py",
    ]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.py", "path traversal"),
        ("lib/../../evil.py", "path traversal"),
        ("/etc/cron.d/evil", "absolute"),
        ("C:/evil.py", "absolute"),
        ("lib\\evil.py", "backslash"),
        ("bad\x01name.py", "control characters"),
        ("a/" * 20 + "deep.py", "nested"),
    ],
)
def test_bad_paths_are_refused(tmp_path: Path, name: str, reason: str) -> None:
    source = make_zip(tmp_path / "bot.zip", {"main.py": "pass\n", name: "x"})
    refused(source, tmp_path, reason)
    assert not (tmp_path / "evil.py").exists()


def test_links_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "bot.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("tapis.json", MANIFEST)
        archive.writestr("main.py", "pass\n")
        link = zipfile.ZipInfo("secrets")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/shadow")
    refused(source, tmp_path, "links are not allowed")


def test_special_files_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "bot.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("tapis.json", MANIFEST)
        archive.writestr("main.py", "pass\n")
        fifo = zipfile.ZipInfo("pipe")
        fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
        archive.writestr(fifo, "")
    refused(source, tmp_path, "not a regular file")


def test_links_in_a_folder_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "tapis.json").write_text(MANIFEST)
    (folder / "main.py").write_text("pass\n")
    (folder / "data").symlink_to("/etc/passwd")
    refused(folder, tmp_path, "links are not allowed")


def test_a_zip_bomb_is_refused(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "bomb.zip", {"main.py": "pass\n", "zeros": b"\0" * (20 << 20)})
    assert source.stat().st_size < 100_000
    refused(source, tmp_path, "zip bomb")


def test_a_zip_that_lies_about_its_sizes_is_refused(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "liar.zip", {"main.py": "pass\n", "data": b"\0" * 300_000})
    data = bytearray(source.read_bytes())
    # Declare 10 bytes for "data" in its local header and in the central directory.
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            name_at = 30 if signature == b"PK\x03\x04" else 46
            if data[start + name_at : start + name_at + 4] == b"data":
                data[start + size_at : start + size_at + 4] = (10).to_bytes(4, "little")
            start += 4
    source.write_bytes(bytes(data))
    with pytest.raises(PackageError, match=r"cannot be unpacked|zip bomb"):
        prepare(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_too_many_files(tmp_path: Path) -> None:
    members: dict[str, bytes | str] = {"main.py": "pass\n"}
    members.update({f"f{i}.txt": "" for i in range(package.MAX_FILES)})
    refused(make_zip(tmp_path / "bot.zip", members), tmp_path, "more than 200 files")


def test_too_big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = make_zip(tmp_path / "bot.zip", {"main.py": "pass\n", "blob": os.urandom(50_000)})
    monkeypatch.setattr(package, "MAX_ZIP_BYTES", 10_000)
    refused(source, tmp_path, "zipped, over the limit")
    single = tmp_path / "big.py"
    single.write_text("#" * 20_000)
    refused(single, tmp_path, "over the limit")


@pytest.mark.parametrize(
    ("manifest", "reason"),
    [
        (None, "no tapis.json manifest"),
        ("{not json", "not valid JSON"),
        ("[]", "an object"),
        ('{"runtime": "python3"}', 'needs "entry"'),
        ('{"entry": "main.py", "runtime": "node"}', "unknown runtime"),
        ('{"entry": "missing.py"}', "not in the zip"),
        ('{"entry": "../main.py"}', "path traversal"),
    ],
)
def test_bad_manifests(tmp_path: Path, manifest: str | None, reason: str) -> None:
    source = make_zip(tmp_path / "bot.zip", {"main.py": "pass\n"}, manifest=manifest)
    refused(source, tmp_path, reason)


def test_duplicates_and_file_folder_clashes(tmp_path: Path) -> None:
    source = tmp_path / "dup.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("tapis.json", MANIFEST)
        archive.writestr("main.py", "pass\n")
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("main.py", "evil\n")
    refused(source, tmp_path, "appears twice")
    clash = make_zip(tmp_path / "clash.zip", {"main.py": "pass\n", "a": "x", "a/b.py": "y"})
    refused(clash, tmp_path, "both a file and a folder")


def test_not_a_package(tmp_path: Path) -> None:
    garbage = tmp_path / "bot.zip"
    garbage.write_bytes(b"PK\x03\x04 not really")
    refused(garbage, tmp_path, "not a readable zip")
    text = tmp_path / "bot.txt"
    text.write_text("hello")
    refused(text, tmp_path, r"a source file \(.py .*\), a \.zip file or a folder")
    refused(tmp_path / "nowhere.py", tmp_path, "cannot read")
