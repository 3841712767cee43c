"""The shared atomic writes (`consulta._files`): the old file or the new one, never a part, and no draft left."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from consulta._files import create_once, replacing, write_atomic


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
