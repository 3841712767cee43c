"""What the quiz benchmarks share: how a result is written (atomically) to bench/results/."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["write_result"]

RESULTS = Path(__file__).resolve().parent / "results"


def write_result(result: dict, name: str, *, quick: bool) -> Path:
    """Write `results/<name>.json` (`<name>.quick.json` for a quick run) by write-then-rename, and say so."""
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / (f"{name}.quick.json" if quick else f"{name}.json")
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(out)
    print(f"wrote {out}")
    return out
