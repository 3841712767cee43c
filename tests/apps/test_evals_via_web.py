"""The evaluations' web front end (bench/_web.py, `--via web`): an ln2 case and a tutor turn run on a real
`consulta serve` with the scripted model, through the page's API, and judged by the same code as the terminal's; and
the check that what the page shows holds no words meant for the model (the runtime's detector on the stream)."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path

import pytest

import eval_ln2  # bench/ is on pytest's path (pyproject.toml's pythonpath)
import eval_tutor
from _web import model_words_shown, shown_words

SCRIPTS = resources.files("consulta")


def _script(app: str, name: str) -> str:
    with resources.as_file(SCRIPTS.joinpath("apps", app, "data", "scripts", name)) as path:
        return f"scripted:{Path(path)}"


@pytest.mark.subprocess
def test_an_ln2_case_on_the_page_stops_at_its_question_and_is_judged_as_on_the_terminal(tmp_path: Path) -> None:
    # the script looks K562 up, then asks which one: the run waits on the question, as `--ask-policy defer` stops
    case = eval_ln2.Case("zh_web_ambiguous", "ambiguous", ("帮我取一管K562",), "ask")
    out = eval_ln2.run_case(
        case, models_dir=tmp_path, model=_script("ln2", "ambiguous_thaw.yaml"), timeout=60, via="web"
    )
    assert out.failed is None, out.failed
    assert out.calls[-1] == "question" and "query_inventory" in out.calls
    assert out.asked and "K562" in out.asked[0]
    assert out.staged == []  # stopped at the question: the thaw the script goes on to is never staged
    assert out.right, out.why
    assert out.shown_model_words == []


@pytest.mark.subprocess
def test_a_tutor_turn_on_the_page_uploads_its_file_and_follows_the_hand_over(tmp_path: Path) -> None:
    turn = next(t for t in eval_tutor.TURNS if t.name == "start_ok_en")
    row = asyncio.run(
        eval_tutor.one_turn(
            turn,
            model_spec=_script("tutor", "unsuitable_upload.yaml"),
            models_dir=tmp_path,
            via="web",
            timeout=60,
        )
    )
    assert row["error"] is None, row["error"]
    assert row["consultations"] == ["data_inspector/suitability_judgment/done"]  # the upload reached the session
    assert row["assistant_replied"] and "task_2_1" in row["reply"]  # the assistant's run after the hand-over
    assert row["right"], row
    assert row["shown_model_words"] == []


def test_a_hint_the_page_would_show_is_counted() -> None:
    hint = "Please provide the box and positions as the user said them, or ask the user with ONE question."
    events = [
        {"type": "tool_called", "tool_name": "record_thaw", "tool_call_id": "c1", "args": {}},
        {
            "type": "tool_returned",
            "tool_name": "record_thaw",
            "tool_call_id": "c1",
            "ok": False,
            "result": {"ok": False, "error_code": "ungrounded_target", "message": "refused", "_hint": hint},
        },
        {"type": "model_text", "text": hint},
        {"type": "model_text", "text": "Which HeLa tube do you mean: box 1 or box 3?"},
        {"type": "run_ended", "status": "finished", "output": hint},  # not drawn by the page: not counted
    ]
    assert shown_words(events) == [hint, "Which HeLa tube do you mean: box 1 or box 3?"]
    assert len(model_words_shown(events, prompt="Thaw the HeLa tube.", lang="en")) == 1
    assert model_words_shown(events[3:], prompt="Thaw the HeLa tube.", lang="en") == []
