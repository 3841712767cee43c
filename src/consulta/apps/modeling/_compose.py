"""The paper composed by code: the team's words where they are (the reader's analysis, the modeler's assumptions,
the writer's abstract, discussion and conclusion), every number copied from the result files as they are written
(tables of `results/*.csv`), and the figures that exist embedded. The writer's sentences (abstract, discussion,
conclusion) never carry a digit: one that does is left out (the writer is told the numbers are code's, and a small
model's "the coefficients are 0" is a claim no check of numbers catches). `strict` does the same to every sentence
of the team (after a gate found a number in the paper that no file holds): then every number is code's.

Nothing said about the data that the cleaning did not do: the cleaning (`scripts/clean_data.py`) never removes or
caps outliers, so a sentence of the team that says it did is left out (what it did is `data_account`, code's).
A sentence cut off where its field's bound stopped the model (`whole_sentences`) is left out too.

Nothing said about a model that did not run: when the tasks' families made the results, the model section begins
with code's line per task (`models`), and a sentence of the team that names a family of the library no task ran
(`not_run`: the modeler and the researcher wrote before the families were chosen) is left out.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ._checks import PaperNumber, number_tracer, paper_numbers
from ._files import write_atomic
from ._tasks import TaskAnswer

__all__ = ["PaperParts", "compose_paper", "whole_sentences"]

MAX_TABLE_ROWS = 24
_SENTENCE = re.compile(r"(?:[^。！？.!?\n]|\.(?=\w))+[。！？.!?]?")
"""A sentence: up to its stop; a dot inside a word or a number ("task1_queue.json", "0.5") is no stop (seen on the
embedded model: "… 通过读取`results/task1_queue.json`文件来获取这些信息。" split at ".json", its digit half dropped,
left "json`文件来获取这些信息。" in the abstract)."""
_UNDONE = re.compile(
    r"(outlier|anomal|异常值|离群).{0,40}?(remov|drop|delet|exclud|discard|cap|winsor|剔除|删除|去除|去掉|处理)"
    r"|(remov|drop|delet|exclud|discard|cap|winsor|剔除|删除|去除|去掉|处理).{0,40}?(outlier|anomal|异常值|离群)",
    re.I,
)
"""A claim about the data the cleaning never makes true (it does not touch outliers)."""
_END = re.compile(r"[。！？!?]|\.(?!\d)")


class PaperParts(BaseModel):
    """What the team wrote for the paper (any of it may be empty: code's words stand in)."""

    title: str
    lang: str = "zh-CN"
    summary: str = ""
    tasks: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    method: str = ""
    model_description: str = ""
    model_formula: str = ""
    data_notes: str = ""
    data_account: list[str] = Field(default_factory=list)
    """What the cleaning did, in code's sentences (`_findings.data_account`); `data_notes` stands in when empty."""
    findings: list[str] = Field(default_factory=list)
    """The main results in code's sentences (`_findings.findings`), shown before the result tables."""
    headline: list[str] = Field(default_factory=list)
    """The findings the abstract repeats after the writer's words."""
    abstract: str = ""
    discussion: str = ""
    conclusion: str = ""
    captions: list[str] = Field(default_factory=list)
    figures: list[str] = Field(default_factory=lambda: ["fit.png", "forecast.png"])
    """The figures (names in `figures/`) in the order the paper shows them; `captions` follow the same order."""
    consultations: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    """The model each task's results come from, in code's words: the model section's first lines."""
    not_run: list[str] = Field(default_factory=list)
    """Names of models no result comes from: a sentence of the team naming one is left out."""
    answers: list[TaskAnswer] = Field(default_factory=list)
    """Each task of the statement with what the results say about it, or why they cannot (`_tasks.answer_of`): a
    section of its own each."""


_WORDS = {
    "zh-CN": {
        "abstract": "摘要", "analysis": "问题分析", "tasks": "需要回答的问题", "assumptions": "模型假设", "model": "模型",
        "data": "数据处理", "results": "结果", "answers": "逐题回答", "task": "问题 {n}", "discussion": "讨论", "conclusion": "结论", "record": "附录：团队的咨询记录",
        "no_abstract": "本文根据题目给出的数据建立模型，结果见结果文件与下列表格、图形。",
        "no_discussion": "模型的局限：它只利用了题目给出的数据，假设未来与过去的规律相同。",
        "no_conclusion": "各项数值均来自结果文件，见第 {section} 节。", "file": "文件", "fig_fit": "模型拟合", "fig_forecast": "预测", "fig_effects": "各解释变量的重要性", "join": "",
        "none": "（无）",
    },
    "en": {
        "abstract": "Abstract", "analysis": "Problem analysis", "tasks": "Questions to answer", "assumptions": "Assumptions", "model": "Model",
        "data": "Data", "results": "Results", "answers": "Answers by task", "task": "Task {n}", "discussion": "Discussion", "conclusion": "Conclusion", "record": "Appendix: the team's consultations",
        "no_abstract": "We model the problem from its data; the results are the result files, shown in the tables and figures below.",
        "no_discussion": "Limits: the model uses only the data given and assumes the future follows the past.",
        "no_conclusion": "Every number above is taken from the result files (section {section}).", "file": "file", "fig_fit": "Model fit",
        "fig_forecast": "Projection", "fig_effects": "Importance of each covariate", "none": "(none)", "join": " ",
    },
}  # fmt: skip


def whole_sentences(text: str, *, bound: int) -> str:
    """`text` without the sentence a field's bound cut off: a text as long as its field allows (`bound` characters:
    the model's grammar stopped it there) ends at its last sentence end; one with no sentence end is dropped."""
    text = text.strip()
    if len(text) < bound - 1:
        return text
    ends = [m.end() for m in _END.finditer(text)]
    return text[: ends[-1]].strip() if ends else ""


_ENDED = re.compile(r"[。！？.!?:：;；…]([)）\]】\"”'’*`]*)$")


def _ended(text: str, lang: str) -> str:
    """A paragraph of the team's prose ended as a sentence ends: a whole answer the model wrote without its stop
    ("使用Dijkstra算法计算最短路径", under its field's bound) reads as a cut sentence in a paper; "" stays ""."""
    text = text.strip()
    if not text or _ENDED.search(text):
        return text
    return text + ("。" if lang.startswith("zh") or re.search(r"[\u4e00-\u9fff]$", text) else ".")


def _clean(
    text: str, strict: bool, not_run: Sequence[str] = (), traced: Callable[[PaperNumber], bool] | None = None
) -> str:
    """The team's text without claims the cleaning never made true, nor sentences naming a model that did not run
    (`not_run`), nor sentences stating a number no result file, the problem nor the data holds (`traced`: the paper
    gate's own test; seen on the embedded model, twice in five runs: the reader's analysis, written before any
    result, said "3,200 + 1,000 = 4,200 tonnes", "the second largest group having 50 customers", and the gate sent
    the paper back); with `strict`, its sentences that carry a digit left out too."""
    text = text.strip()

    def said(sentence: str) -> bool:
        return (
            bool(_UNDONE.search(sentence))
            or any(name.lower() in sentence.lower() for name in not_run)
            or (traced is not None and not all(map(traced, paper_numbers(sentence))))
        )

    if not strict and not said(text):
        return text
    kept = (s for s in _SENTENCE.findall(text) if not said(s))
    return "".join(s for s in kept if not (strict and re.search(r"\d", s))).strip()


def _once(texts: list[str]) -> list[str]:
    """`texts` (the abstract, the discussion, the conclusion) with a text that repeats an earlier one made "" (code's
    words stand in): seen on the embedded model, one sentence written as all three sections."""
    seen: set[str] = set()
    out = []
    for text in texts:
        key = re.sub(r"\W+", "", text).lower()
        out.append("" if key and key in seen else text)
        seen.add(key)
    return out


def _table(path: Path) -> str:
    """The CSV as a Markdown table, cells as the file writes them (at most MAX_TABLE_ROWS rows)."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return ""
    header, body = rows[0], rows[1 : MAX_TABLE_ROWS + 1]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def compose_paper(workspace: Path, parts: PaperParts, *, strict: bool = False) -> Path:
    """Write `paper/paper.md` (atomically) from `parts` and the workspace's result files and figures."""
    workspace = Path(workspace)
    lang = "zh-CN" if parts.lang.startswith("zh") else "en"
    w = _WORDS[lang]
    traced = number_tracer(workspace)
    abstract, discussion, conclusion = _once(
        [_ended(_clean(t, True, parts.not_run), lang) for t in (parts.abstract, parts.discussion, parts.conclusion)]
    )
    out = [
        f"# {parts.title}",
        "",
        f"## {w['abstract']}",
        "",
        w["join"].join([abstract or w["no_abstract"], *parts.headline]),
        "",
    ]
    out += [f"## 1 {w['analysis']}", "", _ended(_clean(parts.summary, strict, (), traced), lang) or w["none"], ""]
    tasks = [t for t in (_clean(t, strict, (), traced) for t in parts.tasks) if t]
    if tasks:
        out += [f"**{w['tasks']}**", "", *[f"- {t}" for t in tasks], ""]
    assumptions = list(
        dict.fromkeys(a for a in (_clean(a, strict, parts.not_run, traced) for a in parts.assumptions) if a)
    )
    out += [f"## 2 {w['assumptions']}", "", *([f"- {a}" for a in assumptions] or [w["none"]]), ""]
    out += [f"## 3 {w['model']}", ""]
    if parts.models:
        out += [*(f"- {line}" for line in parts.models), ""]
    for text in (parts.method, parts.model_description):
        if _clean(text, strict, parts.not_run, traced):
            out += [_ended(_clean(text, strict, parts.not_run, traced), lang), ""]
    if parts.model_formula:
        out += [f"$$ {parts.model_formula} $$", ""]
    out += [f"## 4 {w['data']}", ""]
    out += (
        [*(f"- {line}" for line in parts.data_account), ""]
        if parts.data_account
        else [_ended(_clean(parts.data_notes, strict, (), traced), lang) or w["none"], ""]
    )
    out += [f"## 5 {w['results']}", ""]
    if parts.findings:
        out += [*(f"- {line}" for line in parts.findings), ""]
    for path in sorted((workspace / "results").glob("*.csv")):
        out += [f"{w['file']} `results/{path.name}`:", "", _table(path), ""]
    for i, name in enumerate(parts.figures):
        if (workspace / "figures" / name).is_file():
            caption = _clean(parts.captions[i], True, parts.not_run) if i < len(parts.captions) else ""
            out += [f"![{caption or w.get('fig_' + Path(name).stem, name)}](../figures/{name})", ""]
    section = 6
    if parts.answers:
        out += [f"## {section} {w['answers']}", ""]
        for i, answer in enumerate(parts.answers, 1):
            out += [f"### {section}.{i} {w['task'].format(n=answer.task.number)}", "", f"*{answer.task.text}*", ""]
            out += [answer.text, ""]
        section += 1
    out += [
        f"## {section} {w['discussion']}",
        "",
        discussion or w["no_discussion"],
        "",
    ]
    out += [
        f"## {section + 1} {w['conclusion']}",
        "",
        conclusion or w["no_conclusion"].format(section=6 if parts.answers else 5),
        "",
    ]
    if parts.consultations:
        out += [f"## {w['record']}", "", *[f"- `{c}`" for c in parts.consultations], ""]
    path = workspace / "paper" / "paper.md"
    write_atomic(path, "\n".join(out).encode("utf-8"))
    return path
