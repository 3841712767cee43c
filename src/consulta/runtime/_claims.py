"""What a turn did, and the check of a final reply against it: nothing is claimed that did not happen.

When the model writes its final text, the runtime gathers the turn's facts (`TurnFacts`: its tool calls and their
results, the plan staged, applied or rejected, the asks opened, the consultations made) and runs the reply checks
on the text: the runtime's own `check_claims`, for every agent, and then the agent's `check_reply`. A check refuses
a reply by raising ValueError with the reason (the model writes the reply again with it); a `ReplyRefused` also
carries a reply composed in code, shown instead when the model's second try is refused too.

Claims are found with a small lexicon (data below, English and Chinese) in the reply's *assertions*: sentences that
are not questions, not negated and not conditional ("Which box?", "Nothing was changed", "Once you approve …" are
not claims). A claim of an action in progress ("Staging the removal …", "已暂存") needs a plan staged or applied in
the turn; a claim of completion ("has been thawed", "已取出") needs a plan applied. What a write did is then said
by code, from the plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..i18n import has_chinese, normalize_lang, simplified, t, writes_chinese
from ._errors import ToolError
from ._plans import PlanExecutor
from ._records import PlanStatus, RunRecord
from ._store import Store

__all__ = [
    "Claim",
    "ReplyCheck",
    "ReplyRefused",
    "ToolOutcome",
    "TurnFacts",
    "all_checks",
    "assertions",
    "check_claims",
    "compose_reply",
    "find_claims",
    "gather_facts",
    "reply_lang",
    "runaway",
]


@dataclass(frozen=True, kw_only=True)
class ToolOutcome:
    """One tool call of the turn and how it ended (`ok` False: `error_code` says why)."""

    name: str
    kind: Literal["read", "write", "ask", "act", "other"]
    ok: bool
    error_code: str | None = None
    message: str | None = None
    data: str = ""
    """The result as text, for a read or ask call (what the reply may describe; an ask's holds the answers)."""
    args: dict[str, Any] = field(default_factory=dict)
    """The call's arguments (the model's words: never a source of facts)."""
    hint: str | None = None
    """The result's `_hint`: words meant for the model."""


@dataclass(frozen=True, kw_only=True)
class TurnFacts:
    """What one turn of a run did, as the runtime knows it when the model writes its final text."""

    lang: str
    """The reply's language: `zh-CN` for a Chinese user message, else the run's."""
    prompt: str | None = None
    """The user's words that started the turn."""
    calls: tuple[ToolOutcome, ...] = ()
    staged: tuple[str, ...] = ()
    """Previews (in `lang`) of the plan staged in this run and not yet decided."""
    applied: tuple[str, ...] = ()
    """Previews of the plans applied in this run."""
    rejected: bool = False
    """A plan of this run was rejected or cancelled (nothing of it was written)."""
    questions: tuple[str, ...] = ()
    """The questions of the asks opened in this run (not plan approvals)."""
    consultations: tuple[str, ...] = ()
    """The experts consulted in this run."""
    earlier: str = ""
    """The thread's earlier turns as the person saw them: their words and the replies shown."""
    model_meant: tuple[str, ...] = ()
    """Texts meant for the model, never for the person: the instructions, tools' hints and next steps, the reasons
    replies of this turn were refused."""
    tool_names: tuple[str, ...] = ()
    """The agent's tool names."""

    @property
    def data(self) -> str:
        """What the turn's successful read calls returned, as one text."""
        return "\n".join(c.data for c in self.calls if c.kind == "read" and c.ok)

    @property
    def failed_writes(self) -> tuple[ToolOutcome, ...]:
        return tuple(c for c in self.calls if c.kind == "write" and not c.ok)

    @property
    def refused_writes(self) -> tuple[ToolOutcome, ...]:
        """The writes the turn tried and had refused: not those refused because its words asked for no change."""
        return tuple(c for c in self.failed_writes if c.error_code != "not_a_change_request")


ReplyCheck = Callable[[str, TurnFacts], None]
"""A check of an agent's final text against its turn: raise ValueError saying why it is refused (`ReplyRefused` to
give the reply code shows when the model's rewrite is refused again)."""


class ReplyRefused(ValueError):
    """A reply refused with `reason` (told to the model); `replacement`, if given, is shown instead of a second
    refused try — or, `at_once`, instead of this one (code's correction of the text is as good as a rewrite, and a
    rewrite costs a model request)."""

    def __init__(
        self, reason: str, *, replacement: str | None = None, check: str = "reply", at_once: bool = False
    ) -> None:
        super().__init__(reason)
        self.replacement = replacement
        self.check = check
        self.at_once = at_once and replacement is not None
        """Which check refused it (`claims`, `facts`, `model_words`, or an app's own): counted in `ReplyChecked`."""


def all_checks(*checks: ReplyCheck | None) -> ReplyCheck:
    """One check running `checks` in order (None skipped); the first refusal wins."""
    chosen = [c for c in checks if c is not None]

    def check(text: str, facts: TurnFacts) -> None:
        for each in chosen:
            each(text, facts)

    return check


# ---- gathering the facts ----------------------------------------------------------------------------------------


def reply_lang(prompt: str | None, lang: str) -> str:
    """The language to reply in: zh-CN when the user wrote Chinese (not only a Chinese name in English words), else
    the run's (`en` or `zh-CN`)."""
    return "zh-CN" if writes_chinese(prompt) else normalize_lang(lang)


def gather_facts(
    *,
    store: Store,
    run: RunRecord,
    calls: Iterable[ToolOutcome],
    prompt: str | None = None,
    executor: PlanExecutor | None = None,
    earlier: str = "",
    model_meant: tuple[str, ...] = (),
    tool_names: tuple[str, ...] = (),
) -> TurnFacts:
    """The facts of the turn `run` is in: `calls` (from its conversation) with its plans, asks and consultations from
    `store`. Staged previews are rendered again in the reply's language by `executor` when it is given."""
    words = prompt if prompt is not None else run.prompt
    lang = reply_lang(words, run.lang)
    staged: tuple[str, ...] = ()
    applied: list[str] = []
    rejected = False
    for plan in store.list_plans(run_id=run.id):
        if plan.status in (PlanStatus.staging, PlanStatus.pending) and plan.items:
            staged = _previews(plan.items, executor, lang)
        elif plan.status == PlanStatus.applied:
            applied.extend(_previews(plan.items, executor=None, lang=lang))
        elif plan.status in (PlanStatus.rejected, PlanStatus.cancelled):
            rejected = True
    questions = tuple(
        str(q.get("question", ""))
        for a in store.list_asks(status=None, run_id=run.id)
        if a.kind == "question"
        for q in (a.payload.get("questions") or [])
        if isinstance(q, dict)
    )
    consulted = tuple(c.expert_id for c in store.list_consultations(run_id=run.id, limit=1000))
    return TurnFacts(
        lang=lang,
        prompt=words,
        calls=tuple(calls),
        staged=staged,
        applied=tuple(applied),
        rejected=rejected,
        questions=questions,
        consultations=consulted,
        earlier=earlier,
        model_meant=model_meant,
        tool_names=tool_names,
    )


def _previews(items: list[dict[str, Any]], executor: PlanExecutor | None, lang: str) -> tuple[str, ...]:
    if executor is not None and lang != "en":
        try:
            return tuple(executor.validate([i["op"] for i in items], lang=lang))
        except ToolError:
            pass  # the data moved since: the previews as staged
    return tuple(str(i.get("preview") or i.get("tool") or "") for i in items)


# ---- the lexicon -------------------------------------------------------------------------------------------------

ClaimKind = Literal["acting", "done"]
"""`acting`: an action under way or staged (needs a plan staged or applied); `done`: completed (needs one applied)."""

EN_DONE = (
    "thawed",
    "added",
    "removed",
    "taken out",
    "pulled out",
    "undone",
    "reverted",
    "rolled back",
    "recorded",
    "updated",
    "deleted",
    "moved",
    "saved",
    "written",
    "applied",
    "logged",
    "changed",
    "registered",
    "created",
    "stored",
    "retrieved",
    "consumed",
    "completed",
    "done",
    "restored",
    "marked",
    "put back",
    "placed",
    "cancelled",
    "processed",
    "executed",
    "discarded",
    "frozen",
)
"""Past participles of the actions a reply may claim done."""
EN_PAST = (*EN_DONE, "took out", "undid", "wrote", "did", "put")
"""…and their simple past, after "I" or "we"."""
EN_NOW_DONE = (
    "thawed",
    "added",
    "removed",
    "taken out",
    "pulled out",
    "undone",
    "reverted",
    "rolled back",
    "deleted",
    "applied",
    "discarded",
    "restored",
)
"""…that, after "is"/"are"/"was"/"were" ("The tube is thawed", "The last change was undone"), say what the turn did
rather than describe the data ("are stored in"); a sentence with a date the data holds describes the data."""
EN_ACTING = (
    "thawing",
    "adding",
    "removing",
    "taking out",
    "undoing",
    "reverting",
    "rolling back",
    "recording",
    "updating",
    "deleting",
    "moving",
    "staging",
)
"""Present participles of an action under way ("Staging the removal …")."""

ZH_DONE = (
    "丢弃",
    "报废",
    "作废",
    "丢掉",
    "扔掉",
    "销毁",
    "弃掉",
    "拿出",
    "取走",
    "撤销",
    "撤回",
    "取出",
    "添加",
    "记录",
    "更新",
    "删除",
    "完成",
    "解冻",
    "复苏",
    "化冻",
    "冻结",
    "冻存",
    "冻好",
    "冻上",
    "移除",
    "回滚",
    "修改",
    "保存",
    "登记",
    "放入",
    "存入",
    "转移",
    "移动",
    "录入",
    "处理",
    "执行",
    "提交",
    "恢复",
    "新增",
    "写入",
    "标记",
    "取消",
    "办好",
)
"""Chinese verbs of the actions a reply may claim done (after 已/已经, before 了/好了/完毕/成功)."""


def _words(words: Iterable[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_ADVERBS = r"(?:(?:now|just|already|successfully|also|all)\s+)*"
_ZH_GAP = r"(?!有|是|在|满)(?:(?!暂存|于|有)[^，,：:；;]){0,12}?"
"""From 已 up to the verb, within the clause; never what the data says ("已于 <date>", "已有 3 条记录", "已满")."""
_ZH_VERBS = _words(ZH_DONE)

_LEXICON: tuple[tuple[ClaimKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("done", rf"\b(?:has|have|had|'ve)\s+{_ADVERBS}been\s+{_ADVERBS}(?:{_words(EN_DONE)})\b"),
        ("done", rf"\b(?:I|we)(?:\s+have|'ve|\s+had|'d)?\s+{_ADVERBS}(?:{_words(EN_PAST)})\b"),
        ("done", rf"\b(?:is|are)\s+{_ADVERBS}(?:{_words(EN_NOW_DONE)})\b"),
        # "was thawed" is the turn's claim, unless the sentence dates it (history: "was thawed on 2025-01-08")
        ("done", rf"\b(?:was|were)\s+{_ADVERBS}(?:{_words(EN_NOW_DONE)})\b(?![^.!?。！？]*\d{{4}}-\d{{2}}-\d{{2}})"),
        ("done", rf"\bsuccessfully\s+(?:{_words(EN_PAST)})\b|\b(?:{_words(EN_DONE)})\s+successfully\b"),
        ("acting", rf"^\s*(?:now\s+|ok(?:ay)?,?\s+)?(?:{_words(EN_ACTING)})\b"),
        ("acting", rf"\b(?:I|we)(?:'m|'re|\s+am|\s+are)\s+(?:now\s+)?(?:{_words(EN_ACTING)})\b"),
        (
            "acting",
            r"\b(?:has|have|'ve|is|are)\s+(?:now\s+|just\s+)?(?:been\s+)?staged\b|\bI(?:'ve|\s+have)\s+staged\b|^\s*staged\b",
        ),
        ("done", r"已(?:经)?(?:为|帮|给|替)(?:您|你)"),
        # "我扔掉管A20，4号盒第3格。": the reply says I did it, no 已 or 了 (seen after a look-up alone)
        (
            "done",
            r"(?:^|(?<=[。！？!?，,；;\n]))\s*我(?:们)?(?:刚刚?|刚才)?(?:为您|为你|帮您|帮你|给您|给你)?"
            rf"(?:{_ZH_VERBS})(?!不|没)",
        ),
        ("done", rf"已(?:经)?{_ZH_GAP}(?:{_ZH_VERBS})"),
        ("done", rf"(?:成功|顺利)(?:地)?(?:{_ZH_VERBS})|(?:{_ZH_VERBS})[^，,：:；;]{{0,12}}?(?:好了|完毕|成功|完成了)"),
        # the passive, or "marked as", unless the sentence dates it (seen: "管子25、26…被标记为丢弃" after a look-up)
        (
            "done",
            r"(?:^|(?<=[。！？!?\n]))(?![^。！？!?\n]*(?:\d{4}-\d{2}|\d{4}年))[^。！？!?\n]*?"
            rf"(?:(?<![会将要可能管支])被|(?<![未没])(?:标记|标|记)为)(?:标记为|标为|记为)?(?:{_ZH_VERBS})",
        ),
        ("acting", rf"已(?:经)?(?:为您|为你)?暂存|暂存了|正在(?:为您)?(?:暂存|{_ZH_VERBS})|^\s*暂存"),
    )
)

EN_WILL = (
    "thaw",
    "add",
    "remove",
    "take out",
    "undo",
    "revert",
    "roll back",
    "record",
    "update",
    "delete",
    "move",
    "stage",
    "freeze",
    "put",
    "discard",
    "store",
    "log",
    "register",
)
"""The actions a reply may promise ("I'll add a tube to box 5"): a promise is an action under way."""
_PROMISE = re.compile(
    rf"\b(?:I|we)(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|\s+are\s+going\s+to)\s+"
    rf"(?:now\s+|then\s+|just\s+|go\s+ahead\s+and\s+)?(?:{_words(EN_WILL)})\b"
    rf"|我(?:们)?(?:会|将|这就|马上|现在就|来)(?:为您|为你|帮您|帮你|给您|给你)?(?:{_ZH_VERBS})",
    re.IGNORECASE,
)
"""A promise to act ("I'll add …", "I will thaw …", "我这就为您取出 …"): said while nothing is staged, the person
waits for an action the turn never set up (seen: "I'll add a new K562-GFP tube in box 5 positions 80 and 81" after
a refused call, nothing staged)."""

_SENTENCE = re.compile(r"[^.!?。！？;；\n]+[.!?。！？;；]*")
_CLAUSE = re.compile(r"[,，、]|\bthat\b", re.IGNORECASE)
"""Clauses: a modal one ("You will be told") is left out, not what it reports ("that the tube has been thawed")."""
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[。.]?\s*$")
_NEGATED = re.compile(
    r"\b(?:not|nothing|never|none|cannot|unable|no\s+longer|yet\s+to)\b|n't\b|\bno\b(?!,)|[没未无别勿]|不(?!同|久|少|仅|过)",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"\b(?:if|once|when|after|unless|until|as\s+soon\s+as)\b|如果|若|一旦|之后|以后|后再|等您|等你|等到|批准后|确认后",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"\b(?:would|could|should|can|may|might|will|shall|please|let\s+me)\b|可以|能|将会|会|请|要不要|是否", re.IGNORECASE
)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\d{4}年\d{1,2}月\d{1,2}日")


_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）")
"""A parenthesis: an aside ("(no tube left)") does not negate or condition the sentence around it."""


def assertions(text: str) -> list[str]:
    """The sentences of `text` that assert something: not questions, not negated, not conditional (asides in
    parentheses left out of that judgement)."""
    return [
        s.strip()
        for s in _SENTENCE.findall(text)
        if s.strip()
        and not _QUESTION.search(s)
        and not _NEGATED.search(_ASIDE.sub(" ", s))
        and not _CONDITIONAL.search(_ASIDE.sub(" ", s))
    ]


@dataclass(frozen=True)
class Claim:
    kind: ClaimKind
    phrase: str
    """The words that make the claim, as the reply has them."""


def find_claims(text: str, data: str = "") -> list[Claim]:
    """The action claims of `text`. A sentence naming a date that `data` (what read tools returned) holds describes
    the data, not the turn ("Tube 3 was thawed on 2024-06-01"), unless it says something is staged or under way:
    that is never history (held-out: "Staged the freezing of C2C12-WT … at 2025-05-05." with nothing staged)."""
    text = simplified(text)  # "已復甦" claims as "已复苏" does
    claims: list[Claim] = []
    for sentence in assertions(text):
        history = any(d in data for d in _DATE.findall(sentence))
        if promised := _PROMISE.search(sentence):  # what the reply says it will do is under way (or should be)
            claims.append(Claim("acting", promised.group(0).strip()))
            continue
        # What could or will be done is not what was: modal clauses are left out.
        said = "，".join(c for c in _CLAUSE.split(sentence) if not _MODAL.search(c))
        for kind, pattern in _LEXICON:
            found = pattern.search(said)
            if found:
                if not (history and kind == "done"):
                    claims.append(Claim(kind, found.group(0).strip()))
                break
    return claims


_RUNAWAY = (re.compile(r"\d{20,}"), re.compile(r"(\w[^\n]{0,15}?)(?:\s*\1){9,}"))


def runaway(text: str) -> str | None:
    """A runaway string in `text` (a long run of digits, a token repeated ten times or more), or None."""
    for pattern in _RUNAWAY:
        found = pattern.search(text)
        if found:
            return found.group(0)[:40]
    return None


# ---- the check and the reply code composes ----------------------------------------------------------------------


def check_claims(text: str, facts: TurnFacts, *, say_instead: Callable[[TurnFacts], str] | None = None) -> None:
    """The runtime's check of every final reply: refuse (ReplyRefused, with the reply composed from the facts) a
    runaway string, a reply that does not say (in the person's language) that the turn's staged plan waits for
    approval, a claim of an action no write of the turn backs, and a claim of completion while the plan only waits
    for approval. `say_instead` (default `compose_reply`) is what code says in its place: an agent's own statement of
    its findings says what the turn did when it staged, applied or was refused a change."""
    say_instead = say_instead or compose_reply
    if (run := runaway(text)) is not None:
        raise ReplyRefused(
            f"Your reply has a runaway string ({run!r}…). Write one or two short sentences.",
            replacement=say_instead(facts),
            check="claims",
        )
    for claim in find_claims(text, facts.data):
        if facts.applied:
            return  # the turn's plan was applied: what it did may be said done
        if facts.staged and claim.kind == "done":
            raise ReplyRefused(
                f'Your reply says "{claim.phrase}", but the change is only staged: nothing is written until the user '
                "approves the plan. Say, in one short sentence, what is staged and that it waits for approval.",
                replacement=say_instead(facts),
                check="claims",
            )
        if not facts.staged:
            raise ReplyRefused(
                f'Your reply says "{claim.phrase}", but nothing in this turn did that: no change was staged or applied. '
                "Never say something was done that no tool did. To act, call the tool first (writes are staged for "
                "the user's approval); to ask, use the question tool; otherwise say what the tools' results show.",
                replacement=say_instead(facts),
                check="claims",
            )
    if (
        facts.refused_writes
        and not (facts.staged or facts.applied or facts.questions)
        and not (_SAYS_UNDONE.search(text) and (_ASKS.search(text) or _says_why(text, facts)))
    ):
        raise ReplyRefused(
            "The change you tried was refused (see its result): nothing was changed, and your reply does not say so "
            "and why. Say in one short sentence that nothing was changed and why (what the refusal names), or ask "
            "the user one question.",
            replacement=say_instead(facts),
            check="claims",
        )
    if facts.staged and not (facts.applied or facts.questions) and (unsaid := _staging_unsaid(text, facts.lang)):
        raise ReplyRefused(
            f"A change is staged in this turn and waits for the user's approval, but your reply {unsaid}. Say, in one "
            "short sentence in the user's language, what is staged and that it waits for approval.",
            replacement=say_instead(facts),
            check="claims",
        )


_SAYS_UNDONE = re.compile(
    r"\b(?:not|no|nothing|none|cannot|unable|already|occupied|taken|held|full|exists?)\b|n't\b|[?？]"
    r"|没|不|未|无|已|占|满|吗",
    re.IGNORECASE,
)
"""A reply that says a change was not made, or why, or asks: what a turn whose writes were all refused may reply
(seen on the embedded model: "I see, I'll look for a free position in box 3." after position 90 of a 9×9 box was
refused)."""

_ASKS = re.compile(r"[?？]\s*$|吗[?？。]?\s*$")
_PARTICULAR = re.compile(r"\d+|[A-Za-z][\w.-]*\d[\w.-]*|[A-Z][a-z]*[A-Z][\w.-]*")


def _says_why(text: str, facts: TurnFacts) -> bool:
    """Whether a reply after refused writes names something a refusal named (a box, a position, a line: "没有 9 号盒"
    → 9), when the refusals name anything (seen: "没有放着记录，没有放任何记录。" after "没有 9 号盒")."""
    named = {m.casefold() for c in facts.refused_writes for m in _PARTICULAR.findall(c.message or "")}
    return not named or any(m.casefold() in named for m in _PARTICULAR.findall(text))


_AWAITS = re.compile(r"approv|confirm|staged|stage|review|批准|确认|审批|暂存|同意", re.IGNORECASE)


def _staging_unsaid(text: str, lang: str) -> str | None:
    """How a reply on a turn whose plan waits for approval fails to say so (None: it says so): it is not in the
    person's language, or it speaks of no approval at all ("I'm sorry, I can't help with that"; "There are 2 tubes
    left in box 3" after staging their thaw). The person reads it beside the plan they are asked to approve."""
    if lang == "zh-CN" and not has_chinese(text):
        return "is not in the user's language (Chinese)"
    if not _AWAITS.search(text):
        return "does not say so"
    return None


def compose_reply(facts: TurnFacts) -> str:
    """What the turn did, said by code in the reply's language: the plan applied, staged or rejected; else that
    nothing was changed (and why the last write was refused, if one was)."""
    lang = facts.lang

    def items(previews: list[str]) -> str:  # a preview's own full stop would double the sentence's
        return ("；" if lang == "zh-CN" else "; ").join(p.rstrip("。.;； ") for p in previews)

    if facts.applied:
        return t("claims.applied", lang, items=items(facts.applied))
    if facts.staged:
        return t("claims.staged", lang, items=items(facts.staged))
    if facts.rejected:
        return t("claims.rejected", lang)
    failed = facts.refused_writes or facts.failed_writes
    if failed:
        # the first refusal is of what the person asked; later ones are of the model's own tries (seen: "没有 9 号盒"
        # then box 1 position 1, which the model picked, "already holds record 1")
        last = failed[0]
        if last.error_code in _UNCLEAR or not last.message or (lang == "zh-CN" and not has_chinese(last.message)):
            # the refusal's own words are the model's (what to pass, "the user"), or not in the person's language:
            # code says it plainly
            return t("claims.refused_unclear", lang)
        reason = _NOT_STAGED.sub("", last.message).rstrip(".。 ")  # "Nothing was changed: Not staged: …" says it twice
        return t("claims.refused_write", lang, reason=reason)
    return t("claims.nothing", lang)


_NOT_STAGED = re.compile(r"^\s*(?:[A-Za-z_]\w*\[\d+\]\s*:\s*)?(?:Not staged:\s*)?", re.IGNORECASE)
"""What a refusal's message opens with that a person need not read: the argument it is of ("entries[0]: "), and
"Not staged:" (the reply says "Nothing was changed:" already)."""

_UNCLEAR = frozenset(
    {
        "ungrounded_argument",
        "repeated_call",
        "not_a_change_request",
        "invalid_arguments",
        "unknown_tool",
        "tool_exception",
        "question_not_alone",
    }
)
"""Refusals whose message speaks to the model (what to pass, what to call): a person is told plainly instead."""
