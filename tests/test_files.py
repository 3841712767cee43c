"""The shared atomic writes (`consulta._files`): the old file or the new one, never a part, and no draft left; durable
appends of whole lines."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from consulta._files import append_durable, create_once, replacing, write_atomic


def test_write_atomic_replaces_keeps_the_mode_and_leaves_no_draft(tmp_path: Path) -> None:
    target = tmp_path / "f.yaml"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert oct(target.stat().st_mode & 0o777) == oct(0o640)
    assert [p.name for p in tmp_path.iterdir()] == ["f.yaml"]


def test_write_atomic_makes_missing_folders_and_takes_a_mode(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "f.bin"
    write_atomic(target, b"x", mode=0o644)
    assert target.read_bytes() == b"x"
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_a_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")
    target.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_failure_before_the_rename_leaves_the_old_file_and_no_draft(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")

    def crash() -> None:
        raise RuntimeError("killed here")

    with pytest.raises(RuntimeError, match="killed here"):
        write_atomic(target, b"new", before_replace=crash)
    assert target.read_bytes() == b"old"
    with pytest.raises(ValueError, match="bad digest"), replacing(target) as draft:
        draft.write_bytes(b"half")
        raise ValueError("bad digest")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_replacing_hands_a_path_a_writer_fills_by_name(tmp_path: Path) -> None:
    target = tmp_path / "state.bin"
    with replacing(target, mode=0o600) as draft:
        assert draft.parent == tmp_path and draft.name.startswith(".state.bin.") and draft.name.endswith(".tmp")
        with open(draft, "wb") as out:  # as a C library would
            out.write(b"state")
    assert target.read_bytes() == b"state"
    assert [p.name for p in tmp_path.iterdir()] == ["state.bin"]


def test_create_once_makes_the_file_only_the_first_time(tmp_path: Path) -> None:
    target = tmp_path / "record.md"
    assert create_once(target, b"first") is True
    assert create_once(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["record.md"]


def test_of_writers_racing_to_create_once_exactly_one_wins(tmp_path: Path) -> None:
    target = tmp_path / "record.md"
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(create_once(target, f"writer {i}".encode())))
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert target.read_bytes().startswith(b"writer ")
    assert [p.name for p in tmp_path.iterdir()] == ["record.md"]


def test_append_durable_adds_whole_lines_to_a_new_or_existing_file(tmp_path: Path) -> None:
    journal = tmp_path / "new" / "j.jsonl"
    append_durable(journal, b"one\n")
    append_durable(journal, b"two\nthree\n")
    assert journal.read_bytes() == b"one\ntwo\nthree\n"
    assert journal.stat().st_mode & 0o777 == 0o600
    with pytest.raises(ValueError, match="whole lines"):
        append_durable(journal, b"no newline")
    assert journal.read_bytes() == b"one\ntwo\nthree\n" and list(journal.parent.iterdir()) == [journal]


def test_append_durable_never_continues_a_torn_last_line(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(b'{"a": 1}\n{"b": ')  # a kill mid-write
    append_durable(journal, b'{"c": 3}\n')
    assert journal.read_bytes().split(b"\n") == [b'{"a": 1}', b'{"b": ', b'{"c": 3}', b""]


def test_appenders_in_threads_each_add_whole_lines(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    pad = "x" * 5000  # lines across page boundaries: a write under way grows the file a page at a time

    def append(writer: int) -> None:
        for n in range(40):
            append_durable(journal, f"{writer}:{n}:{pad}\n".encode())

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = journal.read_bytes().decode().split("\n")
    assert lines.pop() == ""  # no torn line was seen where there was none: no blank line either
    assert sorted(lines) == sorted(f"{w}:{n}:{pad}" for w in range(4) for n in range(40))
