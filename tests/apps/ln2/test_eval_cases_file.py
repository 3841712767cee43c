"""bench/eval_ln2.py `--cases FILE`: the held-out cases (bench/data/heldout/ln2_cases.json) load, each expectation
fits the inventory it runs on (the tubes a thaw takes are there, the positions an add fills are free), and a file
that cannot be used is one line naming it (no model is run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import eval_ln2 as ev  # bench/ is on pytest's path (pyproject.toml's pythonpath)

_ROOT = Path(__file__).resolve().parents[3]
_BENCH = _ROOT / "bench"
HELDOUT = _BENCH / "data" / "heldout" / "ln2_cases.json"


def _inventory(path: Path | None) -> tuple[int, int, dict[int, tuple[int, set[int]]]]:
    """(box count, positions per box, {record id: (box, positions held)}) read straight from the YAML file."""
    data = YAML(typ="safe").load((path or _ROOT / "src/consulta/apps/ln2/data/sample_inventory.yaml").read_text())
    meta = data["meta"]
    layout = meta["box_layout"]
    boxes = meta.get("box_count", layout.get("box_count"))
    records = {}
    for r in data["inventory"] or []:
        held = set(r.get("positions") or ([r["position"]] if r.get("position") else []))
        records[r["id"]] = (r["box"], held)
    return boxes, layout["rows"] * layout["cols"], records


def test_the_heldout_cases_load_in_both_languages_over_every_kind_and_three_inventories() -> None:
    cases = ev.load_cases(HELDOUT)
    assert len(cases) >= 36
    langs = [c.lang for c in cases]
    assert abs(langs.count("zh-CN") - langs.count("en")) <= 4
    assert {c.expect for c in cases} == {"look", "stage", "ask", "no_write", "chat", "question"}
    assert {c.inventory for c in cases} >= {"sample", "empty", "heldout_lab.yaml"}
    assert ev.INVENTORIES["heldout_lab.yaml"] == (_BENCH / "data" / "ln2" / "heldout_lab.yaml").resolve()
    assert any(c.rollback and c.setup_thaw for c in cases) and any(len(c.turns) == 2 for c in cases)
    assert any(len(c.takes) > 1 for c in cases)


@pytest.mark.parametrize("case", ev.load_cases(HELDOUT), ids=lambda c: c.id)
def test_each_expectation_fits_its_inventory(case: Any) -> None:
    boxes, capacity, records = _inventory(ev.INVENTORIES[case.inventory])
    for record, position in case.takes:
        assert position in records[record][1], f"record {record} holds no tube at {position}"
    if case.setup_thaw:
        record, position = case.setup_thaw
        assert position in records[record][1]
    if case.adds:
        box, positions = case.adds
        taken = {p for b, held in records.values() if b == box for p in held}
        assert 1 <= box <= boxes and all(1 <= p <= capacity and p not in taken for p in positions)


def _bad(tmp_path: Path, content: Any) -> str:
    path = tmp_path / "cases.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(SystemExit) as info:
        ev.load_cases(path)
    line = str(info.value.code)
    assert line.startswith(str(path)) and "\n" not in line
    return line


GOOD = {"id": "en_x", "category": "lookup", "turns": ["Any HeLa?"], "expect": "look"}


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON (line 1"),
        ({"cases": []}, 'non-empty list "cases"'),
        ([GOOD], 'non-empty list "cases"'),
        ({"cases": [{**GOOD, "mention": [["HeLa"]]}]}, "case 1 (en_x): unknown field mention"),
        ({"cases": [{**GOOD, "expect": "lookup"}]}, "case 1 (en_x): expect: Input should be"),
        ({"cases": [{**GOOD, "turns": "Any HeLa?"}]}, "turns: Input should be a valid tuple"),
        ({"cases": [{**GOOD, "takes": [[1, "a"]]}]}, "takes.0.1: Input should be a valid integer"),
        ({"cases": [{**GOOD, "id": "x"}]}, "must start with en_ or zh_"),
        ({"cases": [{**GOOD, "turns": [" "]}]}, "non-empty requests"),
        ({"cases": [{**GOOD, "expect": "stage"}]}, "needs takes, adds or rollback"),
        ({"cases": [{**GOOD, "inventory": "nowhere.yaml"}]}, "inventory 'nowhere.yaml' is neither one of sample"),
        ({"cases": [{**GOOD, "inventory": "../../pyproject.toml"}]}, "nor a file under bench/data/ln2/"),
        ({"cases": [GOOD, GOOD]}, "two cases share an id"),
        ({"cases": [5]}, "case 1: expected an object"),
    ],
    ids=[
        "syntax",
        "empty",
        "list",
        "unknown-field",
        "bad-kind",
        "turns-string",
        "bad-take",
        "no-lang",
        "blank-turn",
        "stage-nothing",
        "no-inventory",
        "outside",
        "duplicate",
        "not-object",
    ],
)
def test_a_bad_cases_file_is_one_line_naming_it(tmp_path: Path, content: Any, words: str) -> None:
    assert words in _bad(tmp_path, content)


def test_main_reads_the_file_before_anything_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cases.json"
    path.write_text("[]", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["eval_ln2.py", "--cases", str(path)])
    with pytest.raises(SystemExit, match="non-empty list"):
        ev.main()


def test_saved_outcomes_are_judged_again_against_the_file(tmp_path: Path) -> None:
    cases = ev.load_cases(HELDOUT)
    saved = tmp_path / "saved.json"
    outcome = {
        "id": "en_ho_count_total",
        "calls": ["inventory_stats"],
        "reply": "There are 42 tubes in the tank.",
        "asked": [],
        "staged": [],
        "first_tool_s": 1.0,
        "turn_s": [2.0],
        "wall_s": 3.0,
        "failed": None,
        "sources": ['{"tubes": 42}'],
    }
    saved.write_text(json.dumps({"cases": [outcome, {**outcome, "id": "en_not_in_the_file"}]}), encoding="utf-8")
    [out] = ev.rejudged(saved, cases)
    assert out.case.id == "en_ho_count_total" and out.right, out.why
