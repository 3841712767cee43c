"""The seed's consultation texts and record (seed 002 §5–§7), kept as written.

The request an agent makes (`request_text`): `Director，我需要咨询 @{agent}：` with **问题** / **背景** / **我的理解**;
the reply (`reply_text`): `FROM @{agent}:` with **回答** / **补充说明**; the record `consultation/{from}_{to}_{i}.md`
(`record_markdown`): the title `# 咨询记录: {from} → {to} #{i}`, the `| 字段 | 值 |` table, and the sections 问题,
背景, 回复, 结果. A record is created at most once (`_files.create_once`: a second writer, e.g. a resumed run, keeps the
first) and its 结果 is filled when the asker has used the reply (`fill_outcome`); both writes are atomic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ._files import write_atomic

__all__ = [
    "KINDS",
    "OUTCOME_PENDING",
    "ConsultationRequest",
    "Reply",
    "fill_outcome",
    "kind_of",
    "parse_reply",
    "parse_request",
    "record_markdown",
    "record_name",
    "reply_text",
    "request_text",
]

Kind = Literal["知识咨询", "确认咨询", "问题反馈"]
KINDS: tuple[Kind, ...] = ("知识咨询", "确认咨询", "问题反馈")
"""The seed's three kinds of consultation (§3), by purpose."""
OUTCOME_PENDING = "（发起方尚未继续工作。）"
"""The 结果 of a record whose asker has not continued yet."""


class ConsultationRequest(BaseModel):
    """One consultation asked for: who asks whom, the question, and (optional) why and what the asker thinks."""

    from_agent: str
    to_agent: str
    question: str
    background: str = ""
    understanding: str = ""


class Reply(BaseModel):
    """The consulted agent's reply: the answer and (optional) what else to watch for."""

    agent: str
    answer: str
    note: str = Field("", description="补充说明")


def request_text(request: ConsultationRequest) -> str:
    """The seed's request (§5), as the asker's words to the Director."""
    lines = [f"Director，我需要咨询 @{request.to_agent}：", "", f"**问题**：{request.question.strip()}"]
    if request.background.strip():
        lines.append(f"**背景**：{request.background.strip()}")
    if request.understanding.strip():
        lines.append(f"**我的理解**：{request.understanding.strip()}")
    return "\n".join(lines)


_REQUEST = re.compile(r"Director[，,]\s*我需要咨询\s*@(?P<to>[\w-]+)\s*[：:]")
_FIELD = r"\*\*{label}\*\*\s*[：:]\s*(?P<value>.*?)(?=\n\s*\*\*[^*\n]+\*\*\s*[：:]|\n-{{3,}}|\n#{{1,6}}\s|\Z)"


def _field(text: str, label: str) -> str:
    match = re.search(_FIELD.format(label=label), text, re.S)
    return match.group("value").strip() if match else ""


def parse_request(text: str, *, from_agent: str) -> ConsultationRequest | None:
    """The request in `text` (the seed's form), or None when it is not one."""
    head = _REQUEST.search(text)
    if head is None:
        return None
    body = text[head.end() :]
    return ConsultationRequest(
        from_agent=from_agent,
        to_agent=head.group("to"),
        question=_field(body, "问题"),
        background=_field(body, "背景"),
        understanding=_field(body, "我的理解"),
    )


def reply_text(reply: Reply) -> str:
    """The seed's reply (§6)."""
    lines = [f"FROM @{reply.agent}:", "", f"**回答**：{reply.answer.strip()}"]
    if reply.note.strip():
        lines.append(f"**补充说明**：{reply.note.strip()}")
    return "\n".join(lines)


def parse_reply(text: str) -> Reply | None:
    """The reply in `text` (the seed's form), or None when it is not one."""
    head = re.search(r"FROM\s+@(?P<agent>[\w-]+)\s*:", text)
    if head is None:
        return None
    body = text[head.end() :]
    answer = _field(body, "回答")
    return Reply(agent=head.group("agent"), answer=answer, note=_field(body, "补充说明")) if answer else None


_CONFIRM = re.compile(r"(对吗|是否正确|是不是|确认|correct\?|right\?|is it|do i understand|confirm)", re.I)
_FEEDBACK = re.compile(r"(不一致|错误|有问题|不对|缺少|missing|wrong|disagree|inconsistent|error|does not match)", re.I)


def kind_of(request: ConsultationRequest) -> Kind:
    """The seed's kind (§3) read from the question: feedback on a problem, a confirmation, else knowledge."""
    text = f"{request.question} {request.understanding}"
    if _FEEDBACK.search(request.question):
        return "问题反馈"
    if _CONFIRM.search(text) and request.understanding.strip():
        return "确认咨询"
    return "知识咨询"


def record_name(from_agent: str, to_agent: str, index: int) -> str:
    return f"{from_agent}_{to_agent}_{index}.md"


def record_markdown(
    request: ConsultationRequest, reply: Reply, *, index: int, time: str, outcome: str = OUTCOME_PENDING
) -> str:
    """The seed's record (§7.2): title, table, 问题, 背景 (with the asker's understanding), 回复, 结果."""
    background = request.background.strip() or "（未说明）"
    if request.understanding.strip():
        background += f"\n\n我的理解：{request.understanding.strip()}"
    return (
        f"# 咨询记录: {request.from_agent} → {request.to_agent} #{index}\n\n"
        "| 字段 | 值 |\n|------|------|\n"
        f"| 发起方 | {request.from_agent} |\n| 接收方 | {request.to_agent} |\n| 时间 | {time} |\n| 类型 | {kind_of(request)} |\n\n"
        "---\n\n"
        f"## 问题\n\n{request.question.strip()}\n\n"
        f"## 背景\n\n{background}\n\n"
        "---\n\n"
        f"## 回复\n\n{reply_text(reply)}\n\n"
        "---\n\n"
        f"## 结果\n\n{outcome.strip() or OUTCOME_PENDING}\n"
    )


def fill_outcome(path: Path, outcome: str) -> None:
    """Put `outcome` in the record's 结果 section (atomically; the rest of the record unchanged)."""
    text = path.read_text(encoding="utf-8")
    head, sep, _ = text.rpartition("## 结果\n\n")
    if not sep:
        raise ValueError(f"{path.name} has no 结果 section: it is not a consultation record.")
    write_atomic(path, f"{head}{sep}{outcome.strip() or OUTCOME_PENDING}\n".encode())
