"""bench/eval_tutor.py `--cases FILE`: the held-out turns (bench/data/heldout/tutor_turns.json) load with their
uploads read from the installed packages' public tables, and a file that cannot be used is one line naming it (no
model is run)."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

import eval_tutor as ev  # bench/ is on pytest's path (pyproject.toml's pythonpath)

_BENCH = Path(__file__).resolve().parents[3] / "bench"
HELDOUT = _BENCH / "data" / "heldout" / "tutor_turns.json"


def _load(data: Any) -> Any:
    """The turns of a file holding `data`; a SystemExit's line without the file's name (checked to lead it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "turns.json")
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        try:
            return ev.load_turns(path)
        except SystemExit as error:
            line = str(error.code)
            assert line.startswith(str(path)) and "\n" not in line
            raise SystemExit(line.removeprefix(f"{path}: ")) from None


def test_the_heldout_turns_load_with_public_uploads_in_both_languages() -> None:
    turns = ev.load_turns(HELDOUT)
    assert len(turns) >= 14
    assert {t.lang for t in turns} == {"en", "zh-CN"}
    assert {t.category for t in turns} == {
        "can_i_start",
        "odd_file",
        "error",
        "concept",
        "claim_done",
        "chit_chat",
        "solution_request",
    }
    uploads = {name: text for t in turns for name, text in t.files}
    assert uploads["fair.csv"].startswith('"rate_marriage","age"') and uploads["fair.csv"].count("\n") == 6367
    assert uploads["diabetes.csv"].startswith("59 2 32.1")  # unpacked from the package's .gz
    short = ev.chosen_turns(only=None, limit=3, among=turns)
    assert len(short) == 3 and len({t.category for t in short}) == 3


def test_an_inline_upload_and_a_turn_with_no_task() -> None:
    data = {
        "turns": [
            {
                "name": "t",
                "category": "can_i_start",
                "lang": "en",
                "files": [{"name": "a.csv", "text": "age\n1\n"}],
                "student": "Can I start?",
                "task": None,
                "consult": None,
                "rules": [],
            }
        ]
    }
    turn = _load(data)[0]
    assert turn.files == (("a.csv", "age\n1\n"),) and turn.rules == frozenset() and turn.task is None


GOOD = {
    "name": "t",
    "category": "concept",
    "lang": "en",
    "files": [],
    "student": "What is a merge?",
    "task": "task_2_3",
    "consult": "concept_explanation",
}


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[", "not valid JSON (line 1"),
        ({"turns": []}, 'non-empty list "turns"'),
        ({"turns": [{**GOOD, "expert": "x"}]}, "turn 1 (t): unknown field expert"),
        ({"turns": [{**GOOD, "category": "chat"}]}, "turn 1 (t): category: Input should be"),
        ({"turns": [{**GOOD, "lang": "fr"}]}, "lang: Input should be"),
        ({"turns": [{**GOOD, "task": "task_9_9"}]}, "task 'task_9_9' is not one of the tutor's (task_2_1"),
        ({"turns": [{**GOOD, "consult": "explanation"}]}, "consult 'explanation' is not an output type"),
        ({"turns": [{**GOOD, "student": "  "}]}, "the student's words are empty"),
        ({"turns": [{**GOOD, "files": [{"name": "a.csv"}]}]}, "file 'a.csv' needs either text, or package and path"),
        ({"turns": [{**GOOD, "files": ["a.csv"]}]}, "each file needs a name"),
        (
            {"turns": [{**GOOD, "files": [{"name": "a.csv", "package": "no_such_pkg_x", "path": "a.csv"}]}]},
            "cannot read 'a.csv' from package 'no_such_pkg_x' (ModuleNotFoundError",
        ),
        (
            {"turns": [{**GOOD, "files": [{"name": "a.csv", "package": "statsmodels", "path": "datasets/none.csv"}]}]},
            "cannot read 'datasets/none.csv' from package 'statsmodels' (FileNotFoundError",
        ),
        ({"turns": [GOOD, GOOD]}, "two turns share a name"),
    ],
    ids=[
        "syntax",
        "empty",
        "unknown-field",
        "bad-category",
        "bad-lang",
        "unknown-task",
        "unknown-output-type",
        "blank",
        "file-no-source",
        "file-not-object",
        "no-package",
        "no-file",
        "duplicate",
    ],
)
def test_a_bad_turns_file_is_one_line_naming_it(content: Any, words: str) -> None:
    with pytest.raises(SystemExit) as info:
        _load(content)
    assert words in str(info.value.code)


def test_main_reads_the_file_before_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "turns.json"
    path.write_text("{}", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["eval_tutor.py", "--cases", str(path)])
    with pytest.raises(SystemExit, match="non-empty list"):
        asyncio.run(ev.main())
