"""ln2 write operations: validation and error codes, plans whose operations see each other, atomic audited apply."""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import re
import threading
from pathlib import Path

import pytest

from consulta.apps.ln2._audit import audit_log_path, backup_dir, lock_path, read_audit
from consulta.apps.ln2._inventory import InventoryFile, load_inventory
from consulta.apps.ln2._operations import (
    AddEntry,
    BatchThaw,
    RecordThaw,
    Rollback,
    ThawEntry,
    apply_plan,
    parse_op,
    preview,
    validate_ops,
)
from consulta.runtime._errors import ToolError

from .test_inventory import TODAY, sha, snapshot, tiny_copy

# The tiny inventory (2 boxes of 3×3): record 1 K562 box 1 [1, 2]; 2 K562-dTAG-BRD4 box 1 [5];
# 3 K562-RTCB box 2 [1, 2, 3]; 4 HeLa box 2 consumed; 5 HEK293T box 2 [9].


def add(**kw) -> AddEntry:
    args = {"parent_cell_line": "Jurkat", "box": 1, "positions": [3], "frozen_at": "2025-07-01"} | kw
    return AddEntry(**args)


def thaw(record_id: int = 1, positions: list[int] | None = None, **kw) -> RecordThaw:
    return RecordThaw(record_id=record_id, positions=positions or [1], date=kw.pop("date", "2025-07-15"), **kw)


BAD_PLANS = [
    # (ops, error_code, field, words the message must contain)
    ([add(box=3)], "invalid_box", "box", ["Box 3", "1..2"]),
    ([add(box=0)], "invalid_box", "box", ["Box 0"]),
    ([add(positions=[10])], "position_out_of_range", "positions", ["Position 10", "1..9 (C3)"]),
    ([add(positions=[0])], "position_out_of_range", "positions", ["Position 0"]),
    ([add(positions=[5])], "position_occupied", "positions", ["5 (B2)", "box 1", "record 2 (K562-dTAG-BRD4)"]),
    ([add(positions=[3, 4, 3])], "duplicate_position", "positions", ["3 (A3)", "twice"]),
    ([add(positions=[])], "missing_required_field", "positions", ["positions is empty"]),
    ([add(parent_cell_line="  ")], "missing_required_field", "parent_cell_line", ["parent_cell_line"]),
    ([add(frozen_at="2025-02-30")], "invalid_date", "frozen_at", ["not a real calendar date"]),
    ([add(frozen_at="01/07/2025")], "invalid_date", "frozen_at", ["YYYY-MM-DD"]),
    ([add(frozen_at="2025-08-02")], "invalid_date", "frozen_at", ["in the future", "2025-08-01"]),
    ([thaw(record_id=99)], "unknown_record", "record_id", ["no record with id 99", "1..5"]),
    (
        [thaw(record_id=1, positions=[5])],
        "position_not_held",
        "positions",
        ["Record 1 (K562-WT)", "5 (B2)", "1 (A1), 2 (A2)"],
    ),
    (
        [thaw(record_id=4, positions=[4])],
        "record_consumed",
        "record_id",
        ["Record 4 (HeLa)", "fully consumed", "discard on 2024-07-01"],
    ),
    ([thaw(positions=[1, 1])], "duplicate_position", "positions", ["twice"]),
    ([thaw(positions=[12])], "position_out_of_range", "positions", ["Position 12"]),
    ([thaw(date="2025-13-01")], "invalid_date", "date", ["not a real calendar date"]),
    ([thaw(date="2024-12-31")], "invalid_date", "date", ["before record 1 was frozen (2025-01-10)"]),
    ([thaw(date="2026-01-01")], "invalid_date", "date", ["in the future"]),
    ([BatchThaw(entries=[], date="2025-07-01")], "missing_required_field", "entries", ["entries is empty"]),
    (
        [
            BatchThaw(
                entries=[ThawEntry(record_id=1, positions=[1]), ThawEntry(record_id=3, positions=[7])],
                date="2025-07-01",
            )
        ],
        "position_not_held",
        "entries[1].positions",
        ["Entry 2:", "Record 3 (K562-RTCB-KO-c3)", "7 (C1)"],
    ),
    (
        [
            BatchThaw(
                entries=[ThawEntry(record_id=1, positions=[1]), ThawEntry(record_id=1, positions=[1])],
                date="2025-07-01",
            )
        ],
        "position_not_held",
        "entries[1].positions",
        ["Entry 2:", "already removes it"],
    ),
    ([], "invalid_argument", None, ["no operations"]),
    ([Rollback(audit_id="a_000001"), thaw()], "invalid_argument", None, ["only operation"]),
    # Operation 2 conflicts with operation 1.
    (
        [add(positions=[3, 4]), add(parent_cell_line="HeLa", positions=[4])],
        "position_occupied",
        "positions",
        ["Operation 2 of 2 (add_entry)", "4 (B1)", "record 6 (Jurkat), added by operation 1 of this plan"],
    ),
    (
        [thaw(positions=[1]), thaw(positions=[1, 2])],
        "position_not_held",
        "positions",
        ["Operation 2 of 2 (record_thaw)", "1 (A1)", "operation 1 of this plan already removes it"],
    ),
    (
        [thaw(record_id=5, positions=[9], action="discard"), thaw(record_id=5, positions=[9])],
        "record_consumed",
        "record_id",
        ["Operation 2 of 2", "an earlier operation of this plan removes its last tubes"],
    ),
]


@pytest.mark.parametrize(
    ("ops", "code", "field", "words"), BAD_PLANS, ids=[f"{p[1]}-{i}" for i, p in enumerate(BAD_PLANS)]
)
def test_bad_plan_raises_and_changes_nothing(tmp_path: Path, ops, code: str, field: str | None, words) -> None:
    path = tiny_copy(tmp_path)
    inv = load_inventory(path)
    before_inv = inv.model_copy(deep=True)
    with pytest.raises(ToolError) as checked:
        validate_ops(inv, ops, today=TODAY)
    assert inv == before_inv  # validation works on a copy
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as applied:
        apply_plan(path, ops, plan_id="p_bad", actor="test", today=TODAY)
    assert snapshot(tmp_path) == before  # same bytes, no backup, no audit line, no temp file
    assert not audit_log_path(path).exists()
    for err in (checked.value, applied.value):
        assert err.error_code == code
        assert err.field == field
        assert err.hint
        for word in words:
            assert word in err.message, (word, err.message)
        if code != "invalid_argument" and field != "entries":  # the plan's shape is the model's mistake, said to it
            zh = err.message_in("zh-CN")  # a person reading Chinese may be told why nothing was done
            assert re.search(r"[\u4e00-\u9fff]", zh) and not re.search(r"\b(?:[Rr]ecord|[Pp]osition|box)\b", zh), zh


def test_error_has_the_seed_result_shape(tmp_path: Path) -> None:
    inv = load_inventory(tiny_copy(tmp_path))
    with pytest.raises(ToolError) as info:
        validate_ops(inv, [add(positions=[5])], today=TODAY)
    assert info.value.to_result() == {
        "ok": False,
        "error_code": "position_occupied",
        "message": "Position 5 (B2) in box 1 is already held by record 2 (K562-dTAG-BRD4).",
        "field": "positions",
        "_hint": "Call empty_positions(box=1) to find a free position.",
    }


def test_later_operation_sees_the_earlier_ones(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    inv = load_inventory(path)
    # Position 5 of box 1 is freed by op 1 and refilled by op 2; op 3 thaws a tube op 2 added.
    ops = [
        thaw(record_id=2, positions=[5], action="discard", note="cracked"),
        add(parent_cell_line="K562", short_name="K562-GFP", positions=[5, 6], note="  "),
        thaw(record_id=6, positions=[6], date="2025-07-20"),
    ]
    state = validate_ops(inv, ops, today=TODAY)
    assert [r.id for r in state.records] == [1, 2, 3, 4, 5, 6]
    assert state.record(2).positions == [] and state.record(6).positions == [5]
    assert state.record(6).note is None  # blank optional text is no text
    assert preview(inv, ops, today=TODAY) == [
        "Discard on 2025-07-15: record 2 (K562-dTAG-BRD4), box 1 at 5 (B2) (no tube left).",
        "Add record 6: K562 / K562-GFP, box 1 at 5 (B2), 6 (B3), frozen 2025-07-01.",
        "Thaw on 2025-07-20: record 6 (K562-GFP), box 1 at 6 (B3) (1 tube left).",
    ]
    apply_plan(path, ops, plan_id="p_1", actor="tester", run_id="r_9", today=TODAY)
    assert load_inventory(path) == state


def test_apply_writes_one_audit_line_per_op_and_a_backup(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    original = path.read_bytes()
    ops = [
        add(plasmid_name="pLenti-GFP", plasmid_id="P0032", positions=[3, 4]),
        BatchThaw(
            entries=[ThawEntry(record_id=1, positions=[1]), ThawEntry(record_id=3, positions=[2, 3])],
            date="2025-07-30",
            action="takeout",
            note="给王老师实验室",
        ),
    ]
    result = apply_plan(path, ops, plan_id="p_1", actor="tester", run_id="r_9", today=TODAY)
    assert result.audit_ids == ["a_000001", "a_000002"]
    assert result.before_sha256 == sha(original)
    assert result.after_sha256 == sha(path.read_bytes()) != sha(original)
    assert (tmp_path / result.backup).read_bytes() == original
    assert result.backup == f".tiny.yaml.backups/{sha(original)}.yaml"
    assert result.summaries[1] == (
        "Take out 3 tubes on 2025-07-30: record 1 (K562-WT), box 1 at 1 (A1) (1 tube left); "
        "record 3 (K562-RTCB-KO-c3), box 2 at 2 (A2), 3 (A3) (1 tube left)."
    )
    lines = audit_log_path(path).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert set(first) == {
        "audit_id",
        "ts",
        "plan_id",
        "run_id",
        "actor",
        "op",
        "args",
        "summary",
        "translations",
        "before_sha256",
        "after_sha256",
        "backup",
    }
    assert first["op"] == "add_entry" and second["op"] == "batch_thaw"
    assert first["args"] == {
        "parent_cell_line": "Jurkat",
        "plasmid_name": "pLenti-GFP",
        "plasmid_id": "P0032",
        "box": 1,
        "positions": [3, 4],
        "frozen_at": "2025-07-01",
    }
    assert first["summary"].startswith("Add record 6: Jurkat (plasmid pLenti-GFP, P0032), box 1 at 3 (A3), 4 (B1)")
    assert (first["plan_id"], first["run_id"], first["actor"]) == ("p_1", "r_9", "tester")
    assert first["ts"].endswith("Z") and dt.datetime.fromisoformat(first["ts"])
    assert first["before_sha256"] == second["before_sha256"] == result.before_sha256
    assert first["after_sha256"] == second["after_sha256"] == result.after_sha256

    inv = load_inventory(path)
    assert inv.record(6).positions == [3, 4] and inv.record(6).plasmid_id == "P0032"
    assert inv.record(1).positions == [2]
    event = inv.record(3).thaw_events[-1]
    assert (event.date, event.action, event.positions) == ("2025-07-30", "takeout", [2, 3])
    assert event.note == "给王老师实验室"

    # A second plan continues the numbering.
    again = apply_plan(path, [thaw(record_id=1, positions=[2])], plan_id="p_2", actor="tester", today=TODAY)
    assert again.audit_ids == ["a_000003"]
    assert [e.plan_id for e in read_audit(path).entries] == ["p_1", "p_1", "p_2"]


def test_atomic_apply_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    for i, pos in enumerate((3, 4, 6), start=1):
        apply_plan(path, [add(positions=[pos])], plan_id=f"p_{i}", actor="t", today=TODAY)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".tiny.yaml.backups", ".tiny.yaml.lock", "tiny.yaml", "tiny.yaml.audit.jsonl"]
    assert len(list(backup_dir(path).iterdir())) == 3
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_expected_sha_guards_against_a_changed_file(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    planned_against = sha(path.read_bytes())
    path.write_text(path.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY, expected_sha256=planned_against)
    assert info.value.error_code == "inventory_changed"
    assert snapshot(tmp_path) == before
    result = apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY, expected_sha256=sha(path.read_bytes()))
    assert result.audit_ids == ["a_000001"]


def test_a_broken_file_is_not_written(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path, "meta: [unclosed\n")
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY)
    assert info.value.error_code == "inventory_file_error"
    assert snapshot(tmp_path) == before


def test_a_held_lock_makes_apply_wait_then_fail(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ToolError) as info:
            apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY, lock_timeout=0.1)
        assert info.value.error_code == "inventory_file_error" and "in progress" in info.value.message
    finally:
        os.close(fd)
    assert apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY).audit_ids == ["a_000001"]


def test_new_record_in_an_empty_inventory(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path, "meta:\n  box_layout: {rows: 2, cols: 2}\n  box_count: 1\ninventory: []\n")
    apply_plan(path, [add(positions=[4], short_name="J-1")], plan_id="p", actor="t", today=TODAY)
    assert path.read_text(encoding="utf-8") == (
        "meta:\n  box_layout: {rows: 2, cols: 2}\n  box_count: 1\ninventory:\n"
        "  - id: 1\n    parent_cell_line: Jurkat\n    short_name: J-1\n    box: 1\n    positions: [4]\n"
        "    frozen_at: '2025-07-01'\n"
    )
    assert InventoryFile.load(path).inventory.record(1).positions == [4]


def test_parse_op() -> None:
    op = parse_op({"op": "record_thaw", "record_id": 3, "positions": 2, "date": dt.date(2025, 7, 1)})
    assert op == RecordThaw(record_id=3, positions=[2], date="2025-07-01")
    assert parse_op({"op": "rollback", "audit_id": "a_000002"}) == Rollback(audit_id="a_000002")
    with pytest.raises(ToolError) as info:
        parse_op({"op": "add_entry", "box": 1, "positions": [1], "frozen_at": "2025-01-01"})
    assert (info.value.error_code, info.value.field) == ("missing_required_field", "add_entry.parent_cell_line")
    with pytest.raises(ToolError) as info:
        parse_op({"op": "melt", "record_id": 1})
    assert info.value.error_code == "invalid_argument"
    with pytest.raises(ToolError) as info:
        parse_op({"op": "record_thaw", "record_id": 1, "positions": [1], "date": "2025-01-01", "action": "lose"})
    assert (info.value.error_code, info.value.field) == ("invalid_argument", "record_thaw.action")


def test_rollback_preview_without_a_file_is_a_plain_statement(tmp_path: Path) -> None:
    inv = load_inventory(tiny_copy(tmp_path))
    assert preview(inv, [Rollback(audit_id="a_000004")]) == [
        "Roll back audit entry a_000004: restore the file to its state before that change."
    ]


def test_a_change_made_without_the_lock_during_apply_is_detected(tmp_path: Path, monkeypatch) -> None:
    from consulta.apps.ln2 import _operations

    path = tiny_copy(tmp_path)
    edited = path.read_bytes() + b"# a person saved the file meanwhile\n"
    real_store_backup = _operations.store_backup

    def store_backup_while_someone_edits(p, data):
        path.write_bytes(edited)
        return real_store_backup(p, data)

    monkeypatch.setattr(_operations, "store_backup", store_backup_while_someone_edits)
    with pytest.raises(ToolError) as info:
        apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY)
    assert info.value.error_code == "inventory_changed"
    assert path.read_bytes() == edited  # their edit is kept, ours is not written
    assert not audit_log_path(path).exists()


def test_a_failed_audit_append_undoes_the_write(tmp_path: Path, monkeypatch) -> None:
    from consulta.apps.ln2 import _operations

    path = tiny_copy(tmp_path)
    original = path.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_operations, "append_audit", disk_full)
    with pytest.raises(ToolError) as info:
        apply_plan(path, [add()], plan_id="p", actor="t", today=TODAY)
    assert info.value.error_code == "inventory_file_error" and "No space left" in info.value.message
    assert path.read_bytes() == original
    assert not audit_log_path(path).exists()


def test_concurrent_plans_are_serialised(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    free = [3, 4, 6, 7, 8, 9]
    errors: list[BaseException] = []

    def writer(pos: int) -> None:
        try:
            apply_plan(path, [add(positions=[pos])], plan_id=f"p_{pos}", actor="t", today=TODAY)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(pos,)) for pos in free]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    inv = load_inventory(path)
    assert sorted(p for r in inv.records if r.id > 5 for p in r.positions) == free
    assert sorted(r.id for r in inv.records) == list(range(1, 12))
    assert [e.audit_id for e in read_audit(path).entries] == [f"a_{i:06d}" for i in range(1, 7)]
