"""Inventory files written by SnowFox (seed 001) open unchanged, are queried and written in their own layout, and an
unusable file is one readable message naming the file, the line and the fix."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from consulta.apps.ln2._audit import read_audit
from consulta.apps.ln2._inventory import InventoryFile, InventoryFileError, load_inventory
from consulta.apps.ln2._operations import AddEntry, BatchThaw, RecordThaw, Rollback, ThawEntry, apply_plan, preview
from consulta.apps.ln2._queries import empty_positions, inventory_stats, query_inventory, search_records
from consulta.frontends.cli import main
from consulta.runtime import ConsultaError, ToolError

from .test_inventory import TINY, snapshot

SNOWFOX = Path(__file__).parent / "snowfox"  # the files as SnowFox ships them (MIT, LICENSE beside them)
OLDER, FULL, MIN = "sample_inventory.yaml", "valid_inventory_full.yaml", "valid_inventory_min.yaml"
TODAY = dt.date(2026, 11, 1)


def copy(name: str, folder: Path) -> Path:
    target = folder / name
    shutil.copyfile(SNOWFOX / name, target)
    target.chmod(0o644)
    return target


def parsed(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def keys_and_values(data: Any, prefix: tuple[Any, ...] = ()) -> dict[tuple[Any, ...], Any]:
    """Every leaf of a parsed document by its path (mapping keys and list indexes)."""
    if isinstance(data, dict):
        leaves = {prefix: {}} if not data else {}
        for key, value in data.items():
            leaves |= keys_and_values(value, (*prefix, key))
        return leaves
    if isinstance(data, list) and data:
        leaves = {}
        for index, value in enumerate(data):
            leaves |= keys_and_values(value, (*prefix, index))
        return leaves
    return {prefix: data}


# --------------------------------------------------------------------------------------------------------------
# Opening


@pytest.mark.parametrize("name", [OLDER, FULL, MIN])
def test_every_snowfox_file_opens_and_renders_back_byte_for_byte(name: str) -> None:
    file = InventoryFile.load(SNOWFOX / name)
    assert file.render() == (SNOWFOX / name).read_bytes()


def test_older_sample_without_box_count_has_the_boxes_its_records_use() -> None:
    file = InventoryFile.load(SNOWFOX / OLDER)
    inv = file.inventory
    assert file.dialect.name == "batch" and not inv.one_tube_per_record
    assert (inv.layout.rows, inv.layout.cols, inv.meta.box_count) == (9, 9, 3)  # boxes 1..3 are used
    assert [(r.id, r.parent_cell_line, r.short_name, r.box, r.positions) for r in inv.records] == [
        (1, "NCCIT", "NCCIT_ctrl_A", 1, [1]),
        (2, "NCCIT", "NCCIT_ctrl_A", 1, [2]),
        (3, "K562", "K562_dTAG_B", 2, [15]),
        (4, "HeLa", "HeLa_archive_C", 3, []),
    ]
    k562 = inv.record(3)
    assert (k562.plasmid_name, k562.plasmid_id, k562.frozen_at) == ("pGEMT-N-RTCB-dTAG", "p260101-1", "2026-02-03")
    hela = inv.record(4)
    assert hela.consumed and [(e.action, e.positions, e.note) for e in hela.thaw_events] == [
        ("thaw", [21], "revived for assay")
    ]


def test_newer_layout_is_one_tube_per_record_with_custom_fields() -> None:
    file = InventoryFile.load(SNOWFOX / FULL)
    inv = file.inventory
    assert file.dialect.name == "tube" and inv.one_tube_per_record
    assert (inv.layout.rows, inv.layout.cols, inv.meta.box_count) == (9, 9, 2)
    assert [(r.id, r.parent_cell_line, r.box, r.positions, r.frozen_at) for r in inv.records] == [
        (1, "K562", 1, [1], "2024-01-10"),
        (2, "HeLa", 1, [], "2023-11-08"),
        (3, "U2OS", 2, [20], "2024-03-02"),
    ]
    assert inv.record(1).custom == {"batch": "BATCH-001", "operator": "alice"}
    # A takeout is a removal; a move is not (the tube is still held).
    assert [(e.action, e.date, e.positions) for e in inv.record(2).thaw_events] == [("takeout", "2024-06-17", [14])]
    assert inv.record(3).thaw_events == [] and not inv.record(3).consumed


def test_newer_minimal_file_without_box_count() -> None:
    file = InventoryFile.load(SNOWFOX / MIN)
    inv = file.inventory
    assert file.dialect.name == "tube" and inv.meta.box_count == 1
    assert [(r.id, r.parent_cell_line, r.positions, r.custom) for r in inv.records] == [(1, "K562", [1], {})]


def test_queries_work_on_snowfox_files() -> None:
    full, older = load_inventory(SNOWFOX / FULL), load_inventory(SNOWFOX / OLDER)
    found = query_inventory(full, cell_line="K562")
    assert [hit["id"] for hit in found["records"]] == [1]
    assert found["records"][0]["custom"] == {"batch": "BATCH-001", "operator": "alice"}
    assert query_inventory(full, cell_line="HeLa")["consumed_hidden"] == 1
    assert [hit["id"] for hit in search_records(full, "bob")["records"]] == [2]  # a custom field's value
    assert [hit["id"] for hit in search_records(full, "BATCH-003")["records"]] == [3]
    assert [hit["id"] for hit in query_inventory(older, plasmid="p260101-1")["records"]] == [3]
    stats = inventory_stats(full)
    assert (stats["capacity"], stats["occupied"], stats["active_records"]) == (162, 2, 2)
    assert [box["free"] for box in empty_positions(full)["boxes"]] == [80, 80]
    assert [box["box"] for box in inventory_stats(older)["boxes"]] == [1, 2, 3]


# --------------------------------------------------------------------------------------------------------------
# Writing back in the file's own layout


def _changed_leaves(before: Any, after: Any) -> tuple[set, set, set]:
    old, new = keys_and_values(before), keys_and_values(after)
    return set(old) - set(new), set(new) - set(old), {k for k in set(old) & set(new) if old[k] != new[k]}


@pytest.mark.parametrize("name", [OLDER, FULL, MIN])
def test_a_thaw_changes_only_the_tube_and_its_events(tmp_path: Path, name: str) -> None:
    path = copy(name, tmp_path)
    before = parsed(path)
    apply_plan(path, [RecordThaw(record_id=1, positions=[1], date="2026-03-01")], plan_id="p", actor="t", today=TODAY)
    after = parsed(path)
    record = before["inventory"][0]
    held, events = ("positions", "thaw_events") if "positions" in record else ("position", "storage_events")

    def untouched(data: Any) -> dict[tuple[Any, ...], Any]:
        return {
            leaf: v
            for leaf, v in keys_and_values(data).items()
            if leaf[:3] not in {("inventory", 0, held), ("inventory", 0, events)}
        }

    assert untouched(after) == untouched(before)  # every other key and value, custom fields and meta included
    assert list(after["inventory"][0]) == [*record, *([] if events in record else [events])]  # same keys, same order
    assert after["inventory"][0][held] in ([], None)
    assert after["inventory"][0][events][-1]["positions"] == [1]


def test_thaw_and_add_on_the_newer_layout_write_its_own_keys(tmp_path: Path) -> None:
    path = copy(FULL, tmp_path)
    before_text, before = path.read_text(encoding="utf-8"), parsed(path)
    plan = [
        RecordThaw(record_id=1, positions=[1], date="2026-03-01", note="assay"),
        AddEntry(parent_cell_line="HeLa", box=2, positions=[5, 6], frozen_at="2026-03-02"),
    ]
    result = apply_plan(path, plan, plan_id="p1", actor="test", today=TODAY)
    after = parsed(path)
    removed, added, changed = _changed_leaves(before, after)
    assert removed == {("inventory", 0, "storage_events")}  # was null, is now a list
    assert changed == {("inventory", 0, "position")}
    assert {leaf for leaf in added if leaf[1] == 0} == {
        ("inventory", 0, "storage_events", 0, *key) for key in (("action",), ("date",), ("positions", 0), ("note",))
    }
    assert after["meta"] == before["meta"]  # layout keys and custom_fields as they were
    assert after["inventory"][0]["position"] is None
    assert after["inventory"][0]["storage_events"] == [
        {"action": "takeout", "date": "2026-03-01", "positions": [1], "note": "assay"}
    ]
    # Two tubes are two records, written with the same keys in the same order as the others.
    assert after["inventory"][3:] == [
        {
            "id": 4,
            "box": 2,
            "position": 5,
            "stored_at": "2026-03-02",
            "cell_line": "HeLa",
            "note": None,
            "batch": None,
            "operator": None,
            "storage_events": None,
        },
        {
            "id": 5,
            "box": 2,
            "position": 6,
            "stored_at": "2026-03-02",
            "cell_line": "HeLa",
            "note": None,
            "batch": None,
            "operator": None,
            "storage_events": None,
        },
    ]
    text = path.read_text(encoding="utf-8")
    for foreign in ("thaw_events", "positions: [5", "parent_cell_line", "frozen_at", "box_count: 1"):
        assert foreign not in text
    assert "    position: null\n" in text and 'stored_at: "2026-03-02"' in text  # its nulls and quotes
    # Records stay separated by a blank line, the new ones too.
    assert text.count("\n\n") == before_text.count("\n\n") + 2
    assert "\n\n  - id: 4\n" in text and "\n\n  - id: 5\n" in text
    assert result.summaries[1].startswith("Add record 4, 5: HeLa")
    assert load_inventory(path).record(1).consumed


def test_batch_thaw_on_the_newer_layout_appends_to_existing_events(tmp_path: Path) -> None:
    path = copy(FULL, tmp_path)
    before = parsed(path)
    apply_plan(
        path,
        [BatchThaw(entries=[ThawEntry(record_id=3, positions=[20])], date="2026-03-01", action="discard")],
        plan_id="p",
        actor="t",
        today=TODAY,
    )
    after = parsed(path)
    removed, added, changed = _changed_leaves(before, after)
    assert removed == set() and changed == {("inventory", 2, "position")}
    assert after["inventory"][2]["storage_events"] == [
        {"action": "move", "date": "2024-04-01", "positions": [11]},
        {"action": "takeout", "date": "2026-03-01", "positions": [20]},
    ]


def test_thaw_on_the_older_sample_keeps_its_layout_and_comment(tmp_path: Path) -> None:
    path = copy(OLDER, tmp_path)
    before_text, before = path.read_text(encoding="utf-8"), parsed(path)
    apply_plan(
        path,
        [
            RecordThaw(record_id=3, positions=[15], date="2026-03-01"),
            AddEntry(parent_cell_line="K562", box=3, positions=[5, 6], frozen_at="2026-03-02"),
        ],
        plan_id="p",
        actor="t",
        today=TODAY,
    )
    after = parsed(path)
    removed, added, changed = _changed_leaves(before, after)
    assert removed == {("inventory", 2, "positions", 0)}  # [15] -> []
    assert changed == set() and "box_count" not in after["meta"]
    assert after["inventory"][2]["positions"] == [] and after["inventory"][2]["thaw_events"] == [
        {"date": "2026-03-01", "action": "thaw", "positions": [15]}
    ]
    assert after["inventory"][4] == {
        "id": 5,
        "parent_cell_line": "K562",
        "box": 3,
        "positions": [5, 6],
        "frozen_at": "2026-03-02",
    }
    text = path.read_text(encoding="utf-8")
    assert "# Tube-level model: one record == one physical tube.\n" in text
    assert "    plasmid_name: null\n" in text  # its nulls stay spelled `null`
    assert text.count("\n\n") == before_text.count("\n\n") + 1 and "\n\n  - id: 5\n" in text
    assert "    note: keep for validation\n    thaw_events:\n" in text  # the event before the blank line


@pytest.mark.parametrize("name", [OLDER, FULL, MIN])
def test_rollback_restores_a_snowfox_file_byte_for_byte(tmp_path: Path, name: str) -> None:
    path = copy(name, tmp_path)
    original = path.read_bytes()
    apply_plan(path, [RecordThaw(record_id=1, positions=[1], date="2026-03-01")], plan_id="p1", actor="t", today=TODAY)
    assert path.read_bytes() != original
    audit_id = read_audit(path).entries[-1].audit_id
    apply_plan(path, [Rollback(audit_id=audit_id)], plan_id="p2", actor="t", today=TODAY)
    assert path.read_bytes() == original


def test_a_full_box_in_the_newer_layout_is_refused_like_any_other(tmp_path: Path) -> None:
    path = copy(FULL, tmp_path)
    inv = load_inventory(path)
    with pytest.raises(ToolError) as info:
        preview(inv, [AddEntry(parent_cell_line="A", box=2, positions=[20], frozen_at="2026-01-01")], today=TODAY)
    assert info.value.error_code == "position_occupied"
    with pytest.raises(ToolError) as info:
        preview(inv, [AddEntry(parent_cell_line="A", box=3, positions=[1], frozen_at="2026-01-01")], today=TODAY)
    assert info.value.error_code == "invalid_box"


# --------------------------------------------------------------------------------------------------------------
# Files that cannot be used


def _write(folder: Path, content: bytes | None) -> Path:
    path = folder / "inv.yaml"
    if content is not None:
        path.write_bytes(content)
    return path


FULL_TEXT = (SNOWFOX / FULL).read_text(encoding="utf-8")

BROKEN = [
    # (id, file content (None: no file; "DIR": a folder), words in the message, line or None)
    ("yaml-syntax", TINY.replace("positions: [5]", "positions: [5, 6"), ["YAML syntax error"], 21),
    ("empty", "", ["is empty"], None),
    ("only-comments", "# nothing yet\n", ["is empty"], None),
    ("top-level-list", "- id: 1\n- id: 2\n", ["top level is a list"], 1),
    ("no-inventory", "meta:\n  box_layout: {rows: 3, cols: 3}\n", ["`inventory` list", "missing"], 1),
    ("no-box-layout", "# lab\nmeta:\n  box_count: 2\ninventory: []\n", ["`meta.box_layout`", "missing"], 2),
    ("inventory-not-a-list", "meta:\n  box_layout: {rows: 3, cols: 3}\ninventory:\n  id: 1\n", ["must be a list"], 3),
    ("duplicate-ids", TINY.replace("id: 5", "id: 3"), ["record id 3 is used twice"], 38),
    ("shared-position", TINY.replace("positions: [5]", "positions: [1]"), ["held by both record 1 and record 2"], 20),
    ("outside-the-box", TINY.replace("positions: [9]", "positions: [10]"), ["position 10, outside 1..9"], 41),
    ("newer-outside-the-box", FULL_TEXT.replace("position: 20", "position: 82"), ["position 82, outside 1..81"], 43),
    ("newer-missing-date", FULL_TEXT.replace('    stored_at: "2024-03-02"\n', ""), ["inventory.2.stored_at"], 41),
    (
        "newer-bad-event",
        FULL_TEXT.replace("action: takeout", "action: lost"),
        ["inventory.1.storage_events.0.action"],
        37,
    ),
    ("newer-bad-box-count", FULL_TEXT.replace("box_count: 2", "box_count: 0"), ["meta.box_layout.box_count"], 5),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ["not a text file"], None),
    ("not-utf8", "meta: {note: 'caf\xe9'}\n".encode("latin-1"), ["not UTF-8"], None),
    ("directory", "DIR", ["is a folder"], None),
    ("missing", None, ["does not exist"], None),
]


@pytest.mark.parametrize(("content", "words", "line"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_an_unusable_file_is_one_readable_message_and_nothing_is_written(
    tmp_path: Path, content: str | bytes | None, words: list[str], line: int | None
) -> None:
    if content == "DIR":
        path = tmp_path / "inventories"
        path.mkdir()
        (path / "lab.yaml").write_text("inventory: []\n", encoding="utf-8")
    else:
        path = _write(tmp_path, content.encode() if isinstance(content, str) else content)
    before = snapshot(tmp_path)
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.load(path)
    err = info.value
    text = str(err)
    assert "\n" not in text and str(path) in text and err.path == path
    for word in words:
        assert word in err.message
    assert err.fix and text.endswith(err.fix) and err.hint == err.fix
    assert err.line == line
    if line is not None:
        assert f"(line {line})" in text
    # A plan on that file changes nothing either, and says the same.
    with pytest.raises(InventoryFileError) as again:
        apply_plan(
            path, [RecordThaw(record_id=1, positions=[1], date="2026-01-01")], plan_id="p", actor="t", today=TODAY
        )
    assert str(again.value) == text
    assert snapshot(tmp_path) == before


def test_the_fixes_say_what_to_do(tmp_path: Path) -> None:
    def fix(content: str) -> str:
        with pytest.raises(InventoryFileError) as info:
            InventoryFile.from_bytes(content.encode(), path=tmp_path / "inv.yaml")
        return info.value.fix

    assert "`inventory: []`" in fix("meta:\n  box_layout: {rows: 3, cols: 3}\n")
    assert "`box_layout: {rows: 9, cols: 9}`" in fix("meta: {}\ninventory: []\n")
    assert "unused id, e.g. 5" in fix(TINY.replace("id: 5", "id: 3"))
    assert "Positions run 1..9 in a 3×3 box" in fix(TINY.replace("positions: [9]", "positions: [10]"))
    assert "`meta.box_count`" in fix(TINY.replace("box: 2\n    positions: [9]", "box: 3\n    positions: [9]"))
    assert "Add `stored_at`" in fix(FULL_TEXT.replace('    stored_at: "2024-03-02"\n', ""))
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "lab.yaml").write_text("x", encoding="utf-8")
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.load(folder)
    assert str(folder / "lab.yaml") in info.value.fix


def test_the_error_is_both_a_tool_error_and_a_consulta_error() -> None:
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.from_bytes(b"", path=Path("/x/inv.yaml"))
    err = info.value
    assert isinstance(err, ToolError) and isinstance(err, ConsultaError)
    assert err.to_result() == {
        "ok": False,
        "error_code": "inventory_file_error",
        "message": "The inventory file /x/inv.yaml is empty.",
        "_hint": err.fix,
    }


def test_the_terminal_shows_a_bad_inventory_as_one_message_and_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, TINY.replace("id: 5", "id: 3").encode())
    for name, value in {"CONSULTA_HOME": str(tmp_path / "home"), "CONSULTA_LANG": "en", "COLUMNS": "400"}.items():
        monkeypatch.setenv(name, value)
    argv = ["consulta", "chat", "ln2", "--inventory", str(path), "--model", "scripted:none.yaml", "-p", "hello"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:  # anything else would reach the terminal as a traceback
        main()
    assert exited.value.code == 2
    output = capsys.readouterr()
    assert f"{path} (line 38) is not valid: record id 3 is used twice" in output.out + output.err
    assert "unused id, e.g. 5" in output.out + output.err


def test_an_empty_newer_layout_file_gets_records_in_that_layout(tmp_path: Path) -> None:
    text = FULL_TEXT.split("inventory:\n")[0] + "inventory: []\n"
    path = _write(tmp_path, text.encode())
    file = InventoryFile.load(path)
    assert file.dialect.name == "tube" and file.inventory.meta.box_count == 2
    apply_plan(
        path,
        [AddEntry(parent_cell_line="K562", box=2, positions=[7], frozen_at="2026-01-05", note="n")],
        plan_id="p",
        actor="t",
        today=TODAY,
    )
    assert parsed(path)["inventory"] == [
        {
            "id": 1,
            "box": 2,
            "position": 7,
            "stored_at": "2026-01-05",
            "cell_line": "K562",
            "note": "n",
            "batch": None,
            "operator": None,
            "storage_events": None,
        }
    ]
    assert path.read_text(encoding="utf-8").startswith(text.split("inventory:")[0])
