"""The consultation ledger as people read it: each consultation (seed 000) rendered as a markdown record, written
atomically beside the store (`$CONSULTA_HOME/consultations/consult_0001.md`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._files import write_atomic
from ..i18n import t
from ..runtime import ConsultationRecord

__all__ = ["consultation_markdown", "write_consultation_markdown"]


def _block(value: Any) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```"


def consultation_markdown(record: ConsultationRecord, *, lang: str = "en") -> str:
    """The whole consultation: who was asked what and why, with which context, what they answered, which binding
    rules held and what the orchestrator must now do, and when it happened."""
    request = record.request
    lines = [
        f"# {record.id} · {record.expert_id} · {request.get('expected_output_type', '')}",
        "",
        f"- {t('ledger.status', lang)}: {record.status}",
        f"- {t('ledger.scenario', lang)}: {request.get('scenario_id', '')}",
        f"- {t('ledger.run', lang)}: {record.run_id or '-'} · {t('ledger.tool_call', lang)}: {record.tool_call_id or '-'}"
        f" · {t('ledger.expert_run', lang)}: {record.expert_run_id or '-'}",
        f"- {t('ledger.time', lang)}: {record.started_at} → {record.finished_at} ({record.duration_ms:.0f} ms, "
        f"{t('ledger.attempts', lang, n=record.attempts)})",
        "",
        f"## {t('ledger.question', lang)}",
        "",
        str(request.get("question", "")),
        "",
        f"## {t('ledger.reasoning', lang)}",
        "",
        str(request.get("reasoning", "")),
        "",
        f"## {t('ledger.context', lang)}",
        "",
        _block({k: v for k, v in (request.get("context") or {}).items() if v is not None}),
        "",
        f"## {t('ledger.output', lang)}",
        "",
        _block(record.expert_output) if record.expert_output is not None else f"_{record.error or '-'}_",
        "",
        f"## {t('ledger.rules', lang)}",
        "",
    ]
    lines += [f"- `{r['rule_name']}` → {r['action']}" for r in record.binding_rules] or [
        f"_{t('ledger.no_rules', lang)}_"
    ]
    if record.instruction_updates:
        lines += ["", f"## {t('ledger.updates', lang)}", "", _block(record.instruction_updates)]
    return "\n".join(lines) + "\n"


def write_consultation_markdown(record: ConsultationRecord, folder: Path, *, lang: str = "en") -> Path:
    """Write the record to `folder/<id>.md` atomically (a reader never sees half a file); returns the path."""
    path = folder / f"{record.id}.md"
    write_atomic(path, consultation_markdown(record, lang=lang).encode("utf-8"))
    return path
