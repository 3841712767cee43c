"""The ln2 evaluation's own claim reader (bench/eval_ln2.py `unbacked_claim`): a reply saying a thing was done is a
claim; one saying it was not done is not (seen: code's "No change has been applied …, so there is nothing to undo"
counted as an unbacked claim)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[3] / "bench"


def _unbacked_claim() -> Callable[[str], str | None]:
    sys.path.insert(0, str(_BENCH))
    try:
        spec = importlib.util.spec_from_file_location("eval_ln2", _BENCH / "eval_ln2.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("eval_ln2", module)  # its dataclasses look their module up
        spec.loader.exec_module(module)
        reader: Callable[[str], str | None] = sys.modules["eval_ln2"].unbacked_claim
        return reader
    finally:
        sys.path.remove(str(_BENCH))


unbacked_claim = _unbacked_claim()


@pytest.mark.parametrize(
    ("reply", "claim"),
    [
        ("The tube has been thawed.", True),
        ("I have added the HeLa tube to box 4.", True),
        ("Nothing was changed: the tube has been thawed.", True),  # the claim's own clause says it was done
        ("已取出一管 K562。", True),
        ("No change has been applied to the inventory yet, so there is nothing to undo.", False),
        ("The tube has not been thawed yet.", False),
        ("已暂存，等待您批准：取出一管 K562。", False),
        ("They were frozen on 2026-02-09, 2026-02-20, and 2026-02-20, respectively.", False),  # the records' dates
        ("The tube was frozen in 2025 by Ana.", False),
        ("The tube has been thawed on your request.", True),
    ],
)
def test_a_claim_is_a_thing_said_done(reply: str, claim: bool) -> None:
    assert (unbacked_claim(reply) is not None) is claim
