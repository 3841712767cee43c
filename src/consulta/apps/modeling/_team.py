"""The team (seed 002 §4): each agent's role, what it is asked in each mode, and the typed answer it gives.

An agent answers the Director with one typed answer (its role's model below), in one of four modes, named in its
instructions as `@{agent}/{mode}` (the scripted test double picks an agent's script by these words):
`work` (its phase's work), `work+reply` (the same work, after a consultation's reply), `answer` (a colleague
consulted it) and `answer+reply` (its answer, after its own consultation's reply). Every answer may ask the Director
to consult a colleague (`consult_agent`, `consult_question`: the Director writes them as the seed's request, §5,
with the asker's task as its 背景) and, after a reply, says how it used it (`used_reply`: the record's 结果).

Strings are bounded (a small model's grammar stops at the bound instead of rambling).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = [
    "AGENTS",
    "ROLES",
    "Answer",
    "CodeTranslatorWork",
    "DataEngineerWork",
    "Mode",
    "ModelTrainerWork",
    "ModelerWork",
    "ReaderWork",
    "ResearcherWork",
    "Role",
    "TeamAnswer",
    "ValidatorWork",
    "VisualizerWork",
    "WriterWork",
    "instructions",
    "output_type",
    "scenario_type",
]

Mode = Literal["work", "work+reply", "answer", "answer+reply"]
LINE_LENGTH = 80
Line = Annotated[str, Field(max_length=LINE_LENGTH)]
"""One item of a list: bounded like every string (an unbounded item lets a small model run away)."""


class Role(BaseModel):
    title: str
    duty: str
    typical: str = ""
    """Whom it typically consults about what (seed §4), as a hint."""


ROLES: dict[str, Role] = {
    "reader": Role(
        title="问题解读", duty="读懂题目与数据，归纳要回答的问题和交付物。", typical="问题理解不确定时咨询 advisor"
    ),
    "researcher": Role(
        title="方法调研", duty="为问题推荐可行的建模方法并说明理由。", typical="确认问题细节时咨询 reader"
    ),
    "modeler": Role(
        title="建模",
        duty="给出模型假设、模型形式、预测目标列与解释变量。",
        typical="方法选择咨询 researcher；数据是否支持某特征咨询 data_engineer",
    ),
    "data_engineer": Role(
        title="数据工程", duty="清洗数据：去重、排序、补齐缺失，说明做了什么。", typical="特征定义不清楚时咨询 modeler"
    ),
    "code_translator": Role(
        title="代码实现",
        duty="把模型写成可运行的 Python 代码（或使用团队模板）。",
        typical="数学公式不清楚时咨询 modeler",
    ),
    "model_trainer": Role(
        title="模型训练", duty="训练模型、选择检验期长度，产出结果文件。", typical="代码问题咨询 code_translator"
    ),
    "validator": Role(
        title="质量验证",
        duty="在关卡处检查产出，给出 APPROVED、CONDITIONAL 或 REJECTED 及理由。",
        typical="发现问题时可咨询任何 Agent",
    ),
    "writer": Role(
        title="论文写作",
        duty="写论文的摘要、讨论与结论（数字由代码从结果文件填入）。",
        typical="需要图表咨询 visualizer；模型解释咨询 modeler",
    ),
    "visualizer": Role(title="可视化", duty="为结果作图，给出图题与坐标含义。"),
    "advisor": Role(title="顾问", duty="以数学建模竞赛经验回答同伴的疑问。"),
}
AGENTS: tuple[str, ...] = tuple(ROLES)


class TeamAnswer(BaseModel):
    """Every typed answer: its role's fields first, then (added by `output_type`, last so a small model writes its
    work before them) `consult_agent` and `consult_question` — a consultation to make — and, after a reply,
    `used_reply`: how the reply was used (the record's 结果)."""

    model_config = ConfigDict(extra="ignore")


_CONSULT = {
    "consult_agent": (str, Field("", max_length=24, description="需要咨询同伴时写它的名字，否则留空")),
    "consult_question": (str, Field("", max_length=80, description="要问同伴的问题（不咨询则留空）")),
}
_USED = {"used_reply": (str, Field("", max_length=80, description="你如何使用了同伴的回复"))}


class ReaderWork(TeamAnswer):
    summary: str = Field("", max_length=240, description="问题的要点")
    tasks: list[Line] = Field(default_factory=list, max_length=5, description="要回答的问题，每条一句")


class ResearcherWork(TeamAnswer):
    methods: list[Line] = Field(default_factory=list, max_length=4, description="可行的方法")
    recommendation: str = Field("", max_length=160, description="推荐哪种方法及理由")


class ModelerWork(TeamAnswer):
    assumptions: list[Line] = Field(default_factory=list, max_length=5, description="模型假设，每条一句")
    model_description: str = Field("", max_length=200, description="模型形式")
    target: str = Field("", max_length=40, description="要预测或拟合的列名")
    covariates: list[Line] = Field(default_factory=list, max_length=8, description="解释变量的列名")
    scenario_column: str = Field("", max_length=40, description="情景分析要改变的列名（可空）")
    scenario_factor: float = Field(1.0, description="情景中该列乘以的系数")
    population: float = Field(0.0, description="总人口（传染病模型用，可为 0）")
    reporting_rate: float = Field(0.0, description="报告率 0–1（传染病模型用，可为 0）")


class DataEngineerWork(TeamAnswer):
    cleaning_notes: str = Field("", max_length=120, description="清洗数据时要做的事")


class CodeTranslatorWork(TeamAnswer):
    explanation: str = Field("", max_length=120, description="代码的思路")
    code: str = Field("", max_length=1500, description="code/model.py 的完整代码；留空则用团队模板")


class ModelTrainerWork(TeamAnswer):
    holdout: int = Field(0, ge=0, le=120, description="检验期的期数（0：默认）")
    notes: str = Field("", max_length=100, description="训练说明")


class VisualizerWork(TeamAnswer):
    target_label: str = Field("", max_length=30, description="图中目标量的名称")
    captions: list[Line] = Field(default_factory=list, max_length=2, description="两幅图的图题：拟合图、预测图")


class WriterWork(TeamAnswer):
    abstract: str = Field("", max_length=200, description="摘要（不要写数字，数字由代码填）")
    discussion: str = Field("", max_length=200, description="讨论：模型的优缺点")
    conclusion: str = Field("", max_length=150, description="结论")


class ValidatorWork(TeamAnswer):
    status: Literal["APPROVED", "CONDITIONAL", "REJECTED"] = "APPROVED"
    reasons: list[Line] = Field(default_factory=list, max_length=4, description="理由，每条一句；REJECTED 必须给出")


class Answer(TeamAnswer):
    answer: str = Field("", max_length=200, description="回答")
    note: str = Field("", max_length=100, description="补充说明（可空）")


_WORK: dict[str, type[TeamAnswer]] = {
    "reader": ReaderWork, "researcher": ResearcherWork, "modeler": ModelerWork, "data_engineer": DataEngineerWork,
    "code_translator": CodeTranslatorWork, "model_trainer": ModelTrainerWork, "visualizer": VisualizerWork,
    "writer": WriterWork, "validator": ValidatorWork, "advisor": Answer,
}  # fmt: skip


@cache
def scenario_type(columns: tuple[str, ...]) -> type[TeamAnswer]:
    """The modeler's answer naming the case a problem asks to predict: pairs of a covariate (one of `columns`, so
    the grammar cannot name another) and the value the problem gives it; an empty list when it gives none."""
    value = create_model(
        "ScenarioValue", column=(Literal[columns], ...), value=(float, Field(description="题目中给出的数字"))
    )  # type: ignore[valid-type]
    values = (
        list[value],
        Field(
            default_factory=list,
            max_length=len(columns),
            description="题目给出的情形：每个给出的列及其数值；没有则留空",
        ),
    )  # type: ignore[valid-type]
    return create_model("ScenarioWork", __base__=TeamAnswer, __doc__=scenario_type.__doc__, values=values)


@cache
def output_type(agent: str, mode: Mode) -> type[TeamAnswer]:
    """The typed answer `agent` gives in `mode`: its role's fields, then the consultation fields (and after a reply,
    `used_reply`)."""
    base = Answer if mode.startswith("answer") else _WORK[agent]
    fields: dict[str, Any] = {**(_USED if mode.endswith("+reply") else {}), **_CONSULT}
    name = base.__name__ + ("AfterReply" if mode.endswith("+reply") else "")
    return create_model(name, __base__=base, __doc__=base.__doc__, **fields)


def instructions(agent: str, mode: Mode, *, task: str) -> str:
    """The agent's instructions for one answer: its role, the mode's words, the task, and how to consult."""
    role = ROLES[agent]
    others = "、".join(a for a in AGENTS if a != agent)
    consult = (
        f"如果确实需要同伴的知识，可以请 Director 咨询一位同伴（{others}）：填写 consult_agent 与 consult_question。"
        f"{role.typical}。不需要就留空。"
    )
    modes = {
        "work": "完成你这一阶段的工作。",
        "work+reply": "你之前请 Director 咨询了同伴，回复在下面。用它完成你的工作，并在 used_reply 中说明你如何使用了回复。",
        "answer": "一位同伴通过 Director 咨询你。直接回答问题（answer），需要时补充说明（note）。",
        "answer+reply": "你在回答同伴之前咨询了另一位同伴，回复在下面。现在回答原来的问题，并在 used_reply 中说明你如何使用了回复。",
    }
    return f"@{agent}/{mode}\n你是数学建模团队的 {agent}（{role.title}）：{role.duty}\n{modes[mode]}\n{task}\n{consult}\n只根据给出的材料回答，不要编造数字。"
