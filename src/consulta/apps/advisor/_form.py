"""The seed's form (§1.1) in code, and what one message says for it (§1.2), read in code.

`extract(words)` reads a message: the school and major through the name books (`_names`), the research direction
from a list of directions (and 做X方向 / 研究X), and the preferences of §1.2.4 from lexicons in Chinese and English
(温和 / 严格 / 放养 / 负责, 理论型 / 工程型 / 产业型, 充足 / 一般 / 紧张; "not too strict" is 温和). A name said
after 不是 / 不考 / "not" is a name taken back, not a new one.

`merge(form, extraction)` is the only way the form changes: a value read replaces the one before (a correction,
"不对，是清华", needs nothing else); a message that reads nothing changes nothing; a name taken back and not replaced
empties its slot. `status(form)` is derived, never stored or trusted from a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...i18n import has_chinese
from ._names import Ambiguous, Found, Match, NameResult, Unknown, majors, schools

__all__ = [
    "DIRECTIONS",
    "OPTIONAL_FIELDS",
    "PREFERENCE_VALUES",
    "REQUIRED_FIELDS",
    "Extraction",
    "FormState",
    "FormStatus",
    "Preferences",
    "UserForm",
    "asks_new_conversation",
    "extract",
    "form_changes",
    "merge",
    "status",
]

REQUIRED_FIELDS = ("school", "major")
OPTIONAL_FIELDS = ("research_direction", "personality", "research_style", "funding")
PreferenceField = Literal["personality", "research_style", "funding"]

PREFERENCE_VALUES: dict[str, tuple[str, ...]] = {
    "personality": ("温和", "严格", "放养", "负责"),
    "research_style": ("理论型", "工程型", "产业型"),
    "funding": ("充足", "一般", "紧张"),
}
"""Seed §1.2.4: the values each preference takes (the form keeps them as the seed writes them)."""


class Preferences(BaseModel):
    model_config = ConfigDict(extra="forbid")

    personality: str | None = None
    research_style: str | None = None
    funding: str | None = None


class UserForm(BaseModel):
    """Seed §1.1 `user_form`."""

    model_config = ConfigDict(extra="forbid")

    school: str | None = None
    major: str | None = None
    research_direction: str | None = None
    preferences: Preferences = Field(default_factory=Preferences)

    def has_preference(self) -> bool:
        """Whether any optional field is filled (what `recommend_advisors` needs besides school and major)."""
        return self.research_direction is not None or any(v is not None for v in self.preferences.model_dump().values())


class FormStatus(BaseModel):
    """Seed §1.1 `form_status`, derived from the form."""

    is_complete: bool
    missing_required: list[str]
    filled_optional: list[str]


class FormState(BaseModel):
    """The seed's form JSON: `{"user_form": …, "form_status": …}`."""

    user_form: UserForm
    form_status: FormStatus

    @classmethod
    def of(cls, form: UserForm) -> FormState:
        return cls(user_form=form, form_status=status(form))


def status(form: UserForm) -> FormStatus:
    missing = [name for name in REQUIRED_FIELDS if getattr(form, name) is None]
    filled = ["research_direction"] if form.research_direction is not None else []
    filled += [name for name, value in form.preferences.model_dump().items() if value is not None]
    return FormStatus(is_complete=not missing, missing_required=missing, filled_optional=filled)


# ---- research directions ---------------------------------------------------------------------------------------

DIRECTIONS: dict[str, tuple[str, ...]] = {
    "机器学习": ("machine learning", "ML"),
    "深度学习": ("deep learning",),
    "计算机视觉": ("computer vision", "CV", "视觉"),
    "自然语言处理": ("natural language processing", "NLP"),
    "人工智能": ("artificial intelligence", "AI"),
    "数据挖掘": ("data mining",),
    "强化学习": ("reinforcement learning", "RL"),
    "机器人": ("robotics", "robots"),
    "大模型": ("large language models", "large language model", "LLM", "LLMs", "大语言模型"),
    "推荐系统": ("recommender systems", "recommendation systems"),
    "分布式系统": ("distributed systems",),
    "数据库": ("databases", "database systems"),
    "操作系统": ("operating systems",),
    "计算机网络": ("computer networks", "networking"),
    "编译": ("compilers", "编译器"),
    "量子计算": ("quantum computing",),
    "密码学": ("cryptography",),
    "图像处理": ("image processing",),
    "语音识别": ("speech recognition",),
    "芯片设计": ("chip design", "集成电路设计"),
    "自动驾驶": ("autonomous driving", "self-driving"),
    "生物信息": ("bioinformatics", "生物信息学"),
    "算法": ("algorithms",),
    "图神经网络": ("graph neural networks", "GNN"),
    "计量经济学": ("econometrics",),
    "认知心理学": ("cognitive psychology",),
    "凝聚态物理": ("condensed matter physics", "condensed matter"),
    "有机化学": ("organic chemistry",),
    "金融工程": ("financial engineering",),
}
"""Research directions (the standard name, then other ways to say it), extended by the data's own list."""

_DIRECTION_SAID = re.compile(
    r"(?:做|研究|搞|方向是|方向为|领域是)(?P<d>[\u4e00-\u9fff]{2,8}?)(?:方向|领域|的|，|,|。|$)"
)


# ---- preferences ---------------------------------------------------------------------------------------------

_PREFERENCES: tuple[tuple[PreferenceField, str, str], ...] = (
    # (field, value, pattern); English words at word edges. Order matters only within a field: the first wins.
    ("personality", "温和", r"温和|脾气好|好说话|和蔼|随和|nice|kind(?!\s+of)|gentle|easy-?going|friendly|patient"),
    ("personality", "严格", r"严格|严厉|要求高|要求严|strict|demanding"),
    ("personality", "放养", r"放养|自由度高|给自由|不怎么管|hands-?off|lots of freedom|freedom"),
    ("personality", "负责", r"负责|上心|用心|认真指导|responsible|supportive|caring"),
    ("research_style", "理论型", r"理论型|偏理论|做理论|理论研究|理论方向|theoretical|theory"),
    (
        "research_style",
        "工程型",
        r"工程型|偏工程|做工程|工程实践|工程导向|engineering-?oriented|hands-on engineering|applied|practical",
    ),
    ("research_style", "产业型", r"产业型|偏产业|产业|工业界|企业合作|横向项目|industry|industrial"),
    (
        "funding",
        "充足",
        r"经费(?:很|比较|非常|特别)?(?:充足|多|充裕|足|丰富)|不缺钱|有钱|well-?funded|plenty of funding|lots of funding|good funding|rich funding",
    ),
    (
        "funding",
        "紧张",
        r"经费(?:很|比较|非常)?(?:紧张|少|不多|不足)|缺钱|tight funding|little funding|low funding|poor funding",
    ),
    ("funding", "一般", r"经费(?:还行|一般|普通|中等)|average funding|moderate funding"),
)
_OPPOSITE = {"严格": "温和", "放养": "负责"}
"""A preference said with a negation ("不要太严格", "not hands-off") means its opposite, where it has one."""
_NEGATION = re.compile(
    r"(?:不要太?|别太?|不太|不|没有|not\s+(?:too\s+|very\s+|so\s+)?|don'?t\s+want\s+(?:a\s+|an\s+)?|no\s+)$",
    re.IGNORECASE,
)
_TAKEN_BACK = re.compile(
    r"(?:不是|不考|不想考|不去|不要|不选|别|而不是|not|no longer|instead of|rather than)\s*$", re.IGNORECASE
)
_NEW_CONVERSATION = re.compile(
    r"新对话|新的对话|重新开始|重来|清空|从头开始|new\s+(?:conversation|chat|session)|start\s+(?:over|again|afresh)|reset|clear\s+(?:the\s+)?form",
    re.IGNORECASE,
)


def _compile(pattern: str) -> re.Pattern[str]:
    # English alternatives at word edges; Chinese ones anywhere
    return re.compile(rf"(?<![A-Za-z])(?:{pattern})(?![A-Za-z])", re.IGNORECASE)


_PREFERENCE_RES = tuple((f, v, _compile(p)) for f, v, p in _PREFERENCES)


def asks_new_conversation(words: str) -> bool:
    """Whether the message asks to start over ("新对话", "start over"): the form and the conversation are cleared."""
    return bool(_NEW_CONVERSATION.search(words))


@dataclass
class Extraction:
    """What one message says for the form. `school`/`major` are what was said (a `Match` fills the form; an
    `Ambiguous` or `Unknown` is asked about); `taken_back` are standard names the message said no to."""

    school: NameResult | None = None
    major: NameResult | None = None
    research_direction: str | None = None
    preferences: dict[str, str] = field(default_factory=dict)
    taken_back: set[str] = field(default_factory=set)
    spans: list[tuple[int, int]] = field(default_factory=list)

    def is_empty(self) -> bool:
        return (
            self.school is None
            and self.major is None
            and self.research_direction is None
            and not self.preferences
            and not self.taken_back
        )


def _weak_major(found: Found, text: str, school_ends: Iterable[int]) -> bool:
    """A short major alias (环境, 管理, 工程 …) said in passing (实验室环境好) is not a major: it counts in a message
    that names a school (南大的物理), before 系/专业/学科/方向, after 读/考/学/报/专业是, or as the whole message."""
    said = text[found.start : found.end]
    if len(said) >= 3 or not has_chinese(said):
        return False
    if isinstance(found.result, Match) and found.result.name == said:
        return False  # the full name (法学, 化学)
    before, after = text[: found.start], text[found.end :]
    if (
        school_ends
        or re.match(r"\s*(?:系|专业|学科|类|方向|学院)", after)
        or re.search(r"(?:读|考|学|报|专业是|专业)\s*$", before)
    ):
        return False
    return text.strip(" 。.!！?？,，") != said


def _pick(found: list[Found], text: str, taken_back: set[str]) -> NameResult | None:
    """The one name a message means of a kind: names said after a negation are taken back; two different names left
    make an `Ambiguous` of them (北大还是清华 — asked, not guessed)."""
    kept: list[NameResult] = []
    for f in found:
        if _TAKEN_BACK.search(text[: f.start]) and isinstance(f.result, Match):
            taken_back.add(f.result.name)
            continue
        kept.append(f.result)
    if not kept:
        return None
    matches = list(dict.fromkeys(r.name for r in kept if isinstance(r, Match)))
    if len(matches) > 1:
        return Ambiguous(tuple(matches), " / ".join(r.said for r in kept if isinstance(r, Match)))
    if matches and re.search(r"不对|错了|改成|换成|我是说|应该是|actually|i mean|instead|sorry", text, re.IGNORECASE):
        return next(r for r in kept if isinstance(r, Match))  # a correction: the name said as the fix
    return (
        next((r for r in kept if isinstance(r, Match)), None)
        or next((r for r in kept if isinstance(r, Ambiguous)), None)
        or kept[0]
    )


def extract(words: str, *, directions: Iterable[str] = ()) -> Extraction:
    """What `words` say for the form (see the module docstring); `directions` adds the data's research directions."""
    text = words.strip()
    taken: list[tuple[int, int]] = []
    result = Extraction(spans=taken)
    school_found = schools().find(text, taken=taken)
    school_ends = [f.end for f in school_found]
    # preferences before majors, so 工程型 is a style, not the major 工程
    for name, value, pattern in _PREFERENCE_RES:
        for m in pattern.finditer(text):
            if any(not (m.end() <= s or m.start() >= e) for s, e in taken):
                continue
            negated = _NEGATION.search(text[max(0, m.start() - 12) : m.start()])
            meant = _OPPOSITE.get(value) if negated else value
            taken.append((m.start(), m.end()))
            if meant is not None and name not in result.preferences:
                result.preferences[name] = meant
    direction = _direction(text, taken, directions)
    major_found = [f for f in majors().find(text, taken=taken) if not _weak_major(f, text, school_ends)]
    picked = _pick(school_found, text, result.taken_back)
    result.school = schools().narrow(picked, text) if picked is not None else None
    result.major = _pick(major_found, text, result.taken_back)
    if direction is not None:
        result.research_direction = direction
    return result


def _direction(text: str, taken: list[tuple[int, int]], extra: Iterable[str]) -> str | None:
    """The research direction said: the longest known one (any of its names), else what 做X方向 / 研究X names."""
    forms: list[tuple[str, str]] = [(d, d) for d in extra if d]
    for name, others in DIRECTIONS.items():
        forms += [(name, name), *((o, name) for o in others)]
    for form, name in sorted(forms, key=lambda p: -len(p[0])):
        ascii_form = not has_chinese(form)
        pattern = rf"(?<![A-Za-z]){re.escape(form)}(?![A-Za-z])" if ascii_form else re.escape(form)
        flags = 0 if ascii_form and form.isupper() else re.IGNORECASE
        for m in re.finditer(pattern, text, flags):
            if all(m.end() <= s or m.start() >= e for s, e in taken):
                taken.append((m.start(), m.end()))
                return name
    m = _DIRECTION_SAID.search(text)
    if m and all(m.end("d") <= s or m.start("d") >= e for s, e in taken):
        taken.append((m.start("d"), m.end("d")))
        return m.group("d")
    return None


def merge(form: UserForm, extraction: Extraction) -> UserForm:
    """The form after a message: what it read replaces what was there; a name it took back and did not replace is
    emptied; nothing it did not read changes."""
    values = form.model_dump()
    for name in REQUIRED_FIELDS:
        said = getattr(extraction, name)
        if isinstance(said, Match):
            values[name] = said.name
        elif values[name] is not None and values[name] in extraction.taken_back and said is None:
            values[name] = None
    if extraction.research_direction is not None:
        values["research_direction"] = extraction.research_direction
    values["preferences"].update(extraction.preferences)
    return UserForm.model_validate(values)


def form_changes(before: UserForm, after: UserForm) -> dict[str, object]:
    """The seed's `update_form` params: the fields that changed, preferences nested as the seed nests them."""
    changes: dict[str, object] = {}
    for name in ("school", "major", "research_direction"):
        if getattr(before, name) != getattr(after, name):
            changes[name] = getattr(after, name)
    prefs = {k: v for k, v in after.preferences.model_dump().items() if before.preferences.model_dump()[k] != v}
    if prefs:
        changes["preferences"] = prefs
    return changes


def unresolved(result: NameResult | None) -> Ambiguous | Unknown | None:
    """The name to ask about, if what was said is not one sure name."""
    return result if isinstance(result, Ambiguous | Unknown) else None
