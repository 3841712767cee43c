"""What every benchmark here records beside its figures."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["read_cases", "reply_check_figures", "reply_checks_of", "source_version"]


def source_version() -> str:
    """The commit measured (with `+dirty` when src/ has uncommitted changes)."""
    try:
        root = Path(__file__).resolve().parent.parent
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "src"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def reply_checks_of(store: Any, run_ids: Iterable[str]) -> list[tuple[str, bool]]:
    """The runtime's reply checks that fired in these runs, from their `reply_checked` events: (check, whether
    code's reply replaced the model's)."""
    return [
        (str(e.data.get("check")), bool(e.data.get("replaced")))
        for run_id in run_ids
        for e in store.list_events(run_id)
        if e.type == "reply_checked"
    ]


def reply_check_figures(rows: Sequence[tuple[list[tuple[str, bool]], bool]]) -> dict[str, Any]:
    """Over rows of (reply checks fired, the row judged right): in how many rows a check fired (per check), in how
    many code's reply was shown, and how many of those rows were right."""
    fired = [checks for checks, _ in rows if checks]
    replaced = [right for checks, right in rows if any(done for _, done in checks)]
    by_check: dict[str, int] = {}
    for checks in fired:
        for check in {c for c, _ in checks}:
            by_check[check] = by_check.get(check, 0) + 1
    return {
        "reply_checks_fired": len(fired),
        "reply_checks_by": dict(sorted(by_check.items())),
        "replaced": len(replaced),
        "replaced_right": sum(replaced),
    }


def read_cases(path: Path, key: str) -> list[Any]:
    """The non-empty list under `key` of the JSON object in `path` (an evaluation's `--cases FILE`); a file that
    cannot be used is a SystemExit with one line naming it and why."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise SystemExit(f"{path}: cannot read it ({error.__class__.__name__}: {error})") from None
    except json.JSONDecodeError as error:
        raise SystemExit(f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get(key), list) or not data[key]:
        raise SystemExit(f'{path}: expected an object with a non-empty list "{key}"')
    return data[key]
