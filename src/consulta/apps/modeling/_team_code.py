"""The team's code in a run's workspace: a script written with where it came from (`code/PROVENANCE.md`), run in the
OS sandbox off the event loop, and the code translator's draft checked before it may stand in for a template."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

from ._files import write_atomic
from ._memo import Memo
from ._plan import Plan
from ._sandbox_run import ScriptRun, run_script
from ._templates import KINDS

__all__ = ["draft_problem", "run_in_sandbox", "strip_fence", "write_script"]


async def run_in_sandbox(workspace: Path, name: str) -> ScriptRun:
    """Run `code/<name>.py` in the sandbox, in a thread: the event loop (the web page, other runs) goes on meanwhile."""
    return await asyncio.to_thread(run_script, workspace, workspace / "code" / f"{name}.py")


def write_script(workspace: Path, memo: Memo, name: str, source: str, *, origin: str) -> None:
    """Write `code/<name>.py` (atomically, when it changed) and where it came from (`origin`) into the memo and
    `code/PROVENANCE.md`."""
    path = workspace / "code" / f"{name}.py"
    if not path.is_file() or path.read_text(encoding="utf-8") != source:
        write_atomic(path, source.encode("utf-8"))
    provenance = memo["notes"].setdefault("provenance", {})
    if provenance.get(name) != origin:
        provenance[name] = origin
        memo.save()
        lines = [f"- `code/{k}.py`: {v}" for k, v in sorted(provenance.items())]
        write_atomic(
            workspace / "code" / "PROVENANCE.md",
            ("# Where each script came from\n\n" + "\n".join(lines) + "\n").encode("utf-8"),
        )


def strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip() + "\n" if text.strip() else ""


def draft_problem(draft: str, plan: Plan) -> str | None:
    """Why the code translator's draft cannot be the model's code (None: it can be tried)."""
    if not draft.strip():
        return "there was no draft"
    try:
        tree = ast.parse(draft)
    except SyntaxError as error:
        return f"it is not valid Python ({error.msg}, line {error.lineno})"
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    missing = KINDS[plan.kind].functions - defined
    if missing:
        return f"it does not define {', '.join(sorted(missing))}, which code/train.py calls"
    if "PLAN" not in draft:
        return "it does not read the plan (PLAN) the training script shares"
    return None
