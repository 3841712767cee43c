"""The fact check of a final reply, beside the claim check: every fact a person reads comes from what the run found.

A *fact* is a number, a date, an identifier (a token mixing letters and digits: `K562`, `a_000001`, `A1`) or a name
of the app's domain (`FactRules.names`: e.g. the cell lines of an inventory). A fact in a final reply must appear in
the turn's *sources*: the tools' results (and their refusals, which are code's words about the data), the plans
staged or applied, the questions asked and their answers, the person's words (this turn's and the earlier turns'
of the thread, with what was shown to them) and the app's declared facts (`FactRules.declared`); two numbers it
compares must compare so (`false_comparisons`: not "569 rows, less than the required 100"). A reply stating
another is written again with the reason, and refused again it is replaced by code's statement of what the tools
found (`FactRules.say_found`, else `compose_reply`), in the person's language.

The same module keeps words meant for the model from reaching a person (`model_words`): a reply that repeats a
tool's hint, a refusal's reason, the system instructions, an error code or a tool's name is refused the same way;
and a reply with an English sentence to a person who wrote Chinese (`wrong_language`) too.

Apps declare what counts as a fact and how their results read with a `FactRules` on their `Agent` (`Agent.facts`);
the runtime's check is the same for every app.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher

from ..i18n import ZH_NUMERALS, chinese_number, has_chinese
from ._claims import ReplyCheck, ReplyRefused, TurnFacts, compose_reply

__all__ = [
    "FactRules",
    "check_facts",
    "check_language",
    "check_model_words",
    "echoes",
    "facts_in",
    "false_comparisons",
    "model_words",
    "unfounded",
    "unfounded_names",
    "wrong_language",
]


@dataclass(frozen=True, kw_only=True)
class FactRules:
    """What counts as a fact in an agent's replies, and how its tools' results read to a person.

    `names`: the domain's names (read when a reply is checked: e.g. every cell line, short name and plasmid of the
    inventory); a reply naming one must have it from a source. `declared`: facts the app states are always true
    (e.g. the tank's box count and layout). `ignore`: a pattern of the words that are not facts of the domain (e.g.
    measurements such as "37 °C"); they are left out before facts are looked for. `say_found`: code's statement of
    what the turn's tools found, in `facts.lang` (None: it has nothing to say, and `compose_reply` is shown).
    """

    names: Callable[[], Iterable[str]] | None = None
    declared: Callable[[], Iterable[str]] | None = None
    ignore: re.Pattern[str] | None = None
    say_found: Callable[[TurnFacts], str | None] | None = None

    def replacement(self, facts: TurnFacts) -> str:
        """What code says instead of a refused reply: the tools' findings, else what the turn did; after a write the
        turn tried and had refused, that nothing was changed and why, then the findings ("Position 1 in box 2 is
        held …" before box 2's free positions)."""
        said = self.say_found(facts) if self.say_found is not None and not (facts.staged or facts.applied) else None
        if facts.refused_writes and not (facts.staged or facts.applied):
            done = compose_reply(facts)
            return f"{done}{'' if facts.lang == 'zh-CN' else ' '}{said}" if said and said not in done else done
        return said or compose_reply(facts)


# ---- finding facts ----------------------------------------------------------------------------------------------

_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_ZH_DATE = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]")
_IDENT = re.compile(
    r"(?<![A-Za-z0-9_\-.])(?=[\w.\-]*[A-Za-z])(?=[\w.\-]*\d)[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]", re.ASCII
)
"""A token mixing ASCII letters and digits (K562, HEK293T, a_000001, p251120-4, A1)."""
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)", re.ASCII)
_RANGE = re.compile(r"(?<![\d\-])(\d{1,4})\s*[-–~]\s*(\d{1,4})(?![\d\-])")
_WORDS = {
    w: n
    for n, ws in enumerate(
        [
            ("zero", "no", "none"),
            ("one", "a", "an", "single"),
            ("two", "both", "pair", "couple"),
            ("three",),
            ("four",),
            ("five",),
            ("six",),
            ("seven",),
            ("eight",),
            ("nine",),
            ("ten",),
        ]
    )
    for w in ws
}
_ZH_RUN = re.compile(f"[{ZH_NUMERALS}]+")


def _dates(text: str) -> tuple[set[str], str]:
    """The dates of `text` (as YYYY-MM-DD) and the text without them."""
    found: set[str] = set()

    def take(match: re.Match[str]) -> str:
        y, m, d = (int(g) for g in match.groups())
        found.add(f"{y:04d}-{m:02d}-{d:02d}")
        return " "

    text = _ISO.sub(take, text)
    text = _ZH_DATE.sub(take, text)
    return found, text


def _fold(text: str) -> str:
    return text.casefold()


@dataclass(frozen=True)
class _Found:
    dates: set[str]
    idents: set[str]
    numbers: set[float]
    names: set[str]


def facts_in(text: str, *, names: Iterable[str] = (), ignore: re.Pattern[str] | None = None) -> _Found:
    """The facts `text` states: its dates, identifiers, numbers and the given domain `names` it mentions."""
    if ignore is not None:
        text = ignore.sub(" ", text)
    dates, rest = _dates(text)
    folded = _fold(rest)
    said_names = {n for n in names if n and _mentions(folded, _fold(n))}
    idents = {m.group(0) for m in _IDENT.finditer(rest)}
    without = _IDENT.sub(" ", rest)
    numbers = {float(m.group(0)) for m in _NUMBER.finditer(without)}
    return _Found(dates, idents, numbers, said_names)


def _mentions(folded_text: str, folded_name: str) -> bool:
    """Whether the name occurs in the text at ASCII word edges (CJK characters are edges)."""
    return re.search(rf"(?<![a-z0-9_\-]){re.escape(folded_name)}(?![a-z0-9_]|-[a-z0-9])", folded_text) is not None


class _Sources:
    """Everything a fact may come from, searchable."""

    def __init__(self, texts: Iterable[str]) -> None:
        joined = "\n".join(t for t in texts if t)
        self.dates, rest = _dates(joined)
        self.text = _fold(joined)
        self.numbers: set[float] = {float(m.group(0)) for m in re.finditer(r"\d+(?:\.\d+)?", rest)}
        for date in self.dates:  # a date's parts are numbers it states ("frozen in 2025")
            self.numbers |= {float(p) for p in date.split("-")}
        for match in _RANGE.finditer(rest):  # "7-9, 14-18": every position of a range was found
            low, high = int(match.group(1)), int(match.group(2))
            if low < high <= low + 500:
                self.numbers |= {float(n) for n in range(low, high + 1)}
        words = re.findall(r"[a-z]+", self.text)
        self.numbers |= {float(_WORDS[w]) for w in words if w in _WORDS}
        for run in _ZH_RUN.findall(joined):  # "十二" states 12; each numeral of "一二" is a number of its own
            self.numbers |= {float(n) for n in (chinese_number(run), *map(chinese_number, run)) if n is not None}

    def has_ident(self, ident: str) -> bool:
        return _mentions(self.text, _fold(ident))


def _sources(facts: TurnFacts, declared: Iterable[str]) -> _Sources:
    texts: list[str] = [facts.prompt or "", facts.earlier, *declared]
    for call in facts.calls:
        texts += [call.data, call.message or ""]  # not its arguments: those are the model's words
    texts += [*facts.staged, *facts.applied, *facts.questions]
    return _Sources(texts)


def unfounded(text: str, facts: TurnFacts, rules: FactRules) -> list[str]:
    """The facts `text` states that no source of the turn holds (see the module docstring), as written."""
    found, sources = _found_and_sources(text, facts, rules)
    missing = sorted(d for d in found.dates if d not in sources.dates)
    missing += _unfounded_names(found, sources)
    missing += [_number(n) for n in sorted(found.numbers) if n not in sources.numbers]
    return missing


def unfounded_names(text: str, facts: TurnFacts, rules: FactRules) -> list[str]:
    """The identifiers `text` states that no source of the turn holds and that are none of the domain's names, as
    written: what a question's options may not offer (a line the inventory holds may be offered before it was looked
    up; a count or a position the person may choose need not have been found; "NA1001" of a tank that holds NA1000
    alone is invented)."""
    names = list(rules.names()) if rules.names is not None else []
    found, sources = _found_and_sources(text, facts, rules, names)
    known = _fold(" \n".join(names))
    return [i for i in _unfounded_names(found, sources) if i not in found.names and not _mentions(known, _fold(i))]


def _found_and_sources(
    text: str, facts: TurnFacts, rules: FactRules, names: list[str] | None = None
) -> tuple[_Found, _Sources]:
    """The facts `text` states and the turn's sources; `names`: the domain's, when the caller has read them."""
    if names is None:
        names = list(rules.names()) if rules.names is not None else []
    found = facts_in(text, names=names, ignore=rules.ignore)
    return found, _sources(facts, rules.declared() if rules.declared is not None else ())


def _unfounded_names(found: _Found, sources: _Sources) -> list[str]:
    missing = sorted(n for n in found.names if not _mentions(sources.text, _fold(n)))
    return missing + sorted(i for i in found.idents if not sources.has_ident(i) and i not in missing)


def _number(n: float) -> str:
    return str(int(n)) if n == int(n) else str(n)


_LESS = r"less|fewer|lower|smaller"
_MORE = r"more|greater|larger|higher|bigger"
_QUANTITY = r"(?<![A-Za-z0-9_.])(?P<{}>\d+(?:\.\d+)?)(?![A-Za-z0-9_]|\.\d)"
_COMPARISON = re.compile(
    _QUANTITY.format("a")  # a number, its unit, then what is said of it: "569 rows, which is", "40 行，"
    + r"(?:\s*(?:(?!(?:have|has|had|with|hold|holds|contain|contains|get|gets)\b)[A-Za-z%]+\s*){0,2}[,，(（]?\s*(?:(?:which|that)\s+(?:is|are)\s+|(?:is|are)\s+)?"
    r"(?:still\s+|far\s+|much\s+|well\s+)?"
    r"|\s*[\u4e00-\u9fff]{0,2}\s*[，,]?\s*(?:这|即)?\s*(?:远|还|仍)?"
    rf")(?:\b(?:(?P<less>(?:{_LESS})\s+than|below)|(?P<more>(?:{_MORE})\s+than|above|exceed(?:s|ing)?))\b"
    r"|(?P<zh_less>少于|小于|低于|不足|不到)|(?P<zh_more>多于|大于|高于|超过))"
    r"(?P<between>[^.!?。！？\n\d]{0,25}?)"  # … compared with another number in the same sentence
     + _QUANTITY.format("b"),
    re.I,
)
_LABEL = re.compile(
    r"(?:\b(?:box|position|pos|slot|rack|record|task|step|row|line|id|no\.?)|#|盒|位置|号|第|行)\s*$", re.I
)
"""A number after one of these is a label ("more than box 10"), not a quantity compared."""


def false_comparisons(text: str) -> list[str]:
    """The comparisons of two numbers `text` states that are false, as written ("569 rows, which is less than the
    required 100"; "只有 569 行，少于要求的 100 行"): the first number said to be less, fewer, lower, more, greater …
    than the second when it is not."""
    wrong: list[str] = []
    for match in _COMPARISON.finditer(text):
        if _LABEL.search(match.group("between")):
            continue
        a, b = float(match.group("a")), float(match.group("b"))
        less = match.group("less") or match.group("zh_less")
        if (a >= b) if less else (a <= b):
            wrong.append(match.group(0).strip())
    return wrong


def check_facts(rules: FactRules) -> ReplyCheck:
    """The runtime's fact check under an app's `rules`: a reply stating a fact no source holds is refused
    (`ReplyRefused`, with the rules' replacement)."""

    def check(text: str, facts: TurnFacts) -> None:
        wrong = false_comparisons(text)
        if wrong:
            raise ReplyRefused(
                f'Your reply says "{wrong[0]}", which is not so: compare the two numbers again. Say only what the '
                "tool results above show, in one or two short sentences in the user's language.",
                replacement=rules.replacement(facts),
                check="facts",
            )
        missing = unfounded(text, facts, rules)
        if missing:
            listed = ", ".join(missing[:6])
            raise ReplyRefused(
                f"Your reply states {listed}, which no tool result of this turn and nothing the user said holds. "
                "Say only what the tool results above show (names, numbers, positions and dates exactly as they "
                "are there), in one or two short sentences in the user's language; if they show nothing, say so.",
                replacement=rules.replacement(facts),
                check="facts",
            )

    return check


# ---- words meant for the model ----------------------------------------------------------------------------------

_SPAN_WORDS = 6
"""A reply sharing this many words in a row with a text meant for the model repeats it (hints are long)."""
_SPAN_CJK = 10
_TO_THE_MODEL = re.compile(
    r"\b(?:ask|tell|inform|(?:confirm|check)\s+with)\s+the\s+user\b|\b[Tt]he\s+user(?:'s|\s+(?:said|wrote|asked|named|must|will|should|can|is|has|needs?|wants?))\b"
    r"|\bcall\s+(?:the\s+)?(?:question\s+)?tool\b|\btool\s+results?\b|\bONE\s+question\b|调用.{0,6}工具|询问用户|用户说"
    # the same in Chinese, as the model translates a retry prompt ("请先使用工具（写入用户批准的更改）…工具的结果")
    r"|使用.{0,4}工具|工具的?(?:结果|调用)|用户(?:批准|确认|同意)的"
    # the reply framed as a text the model was asked to write ("Your response should be "…"", "Here is the reply:")
    r"|\b[Yy]our\s+(?:response|reply)\s+(?:should|could|would|must)\b|\b[Hh]ere(?:'s|\s+is)\s+(?:the|a|my)\s+(?:reply|response)\b"
    r"|(?:你的|您的)?(?:回复|回答)应(?:该)?(?:是|为)"
    # the engine's own retry prompt said back (pydantic-ai's framing and fences)
    r"|<\/?pyai:|\bfailed the application's validation\b|\bautomated feedback\b"
    # the model answering the retry prompt instead of the person ("好的，我会重新写一遍，确保所有内容都是中文。")
    r"|\b(?:I(?:'ll|\s+will)|[Ll]et\s+me)\s+(?:re-?write|rephrase|redo|write\s+(?:it|this|that|the\s+reply)\s+again)\b"
    r"|\b(?:making|make)\s+sure\s+(?:everything|it\s+all|all\s+of\s+it)\s+is\s+in\s+(?:English|Chinese)\b"
    r"|我(?:会|来|将|再)?(?:重新写|重写|改写)|确保.{0,6}(?:都是|全是|全部是|都用)(?:中文|英文)"
    # a retry prompt translated and said back (tenth set: "你的回复说“可以使用”，但任务 task_2_4被阻止…说说为什么，从笔记中，
    # 然后问一个引导问题。"): the model's own reply spoken of, and the prompt's "guiding question"
    r"|\b[Yy]our\s+(?:previous\s+|last\s+|first\s+)?(?:response|reply)\s+(?:says|said|claims|states)\b"
    r"|(?:你的|您的)(?:上一条|上一个|前一个)?(?:回复|回答)(?:里|中)?(?:说|称|写)|\bguiding\s+question\b|引导(?:性)?的?问题"
    # the model's notes spoken of, and what it was told to tell the person (fourteenth set: "你的笔记中提到的…是针对你，
    # 而不是学生。请向学生解释这些信息")
    r"|\b[Yy]our\s+notes\b|你的笔记|请向(?:用户|学生)(?:解释|说明|介绍|讲)",
)
_CODE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def _spans(text: str) -> set[str]:
    """The runs of words (Latin) and characters (CJK) of `text` long enough to be a repeat."""
    folded = _fold(text)
    words = re.findall(r"[a-z0-9']+", folded)
    spans = {" ".join(words[i : i + _SPAN_WORDS]) for i in range(len(words) - _SPAN_WORDS + 1)}
    for run in re.findall(r"[\u4e00-\u9fff]+", folded):
        spans |= {run[i : i + _SPAN_CJK] for i in range(len(run) - _SPAN_CJK + 1)}
    return spans


def _person_words(text: str) -> str:
    """What a person reads of a reply: the text itself, or, for a reply that is a JSON object (an app's structured
    reply, e.g. seed 003's `{voice_response, tool_calls}`), its string values — not its keys, and not the names of
    the tools it calls (`"tool": …`), which are the app's protocol."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return text
    try:
        data = json.loads(stripped)
    except ValueError:
        return text
    words: list[str] = []

    def walk(value: object, key: str | None = None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key != "tool":
            words.append(value)

    walk(data)
    return "\n".join(words)


def model_words(text: str, facts: TurnFacts) -> str | None:
    """The words of `text` that were meant for the model, not the person (a hint, a refusal's reason, the
    instructions, an error code or tool name, talk of "the user" and "tool results"), or None."""
    text = _person_words(text)
    known_codes = {c.error_code for c in facts.calls if c.error_code} | {c.name for c in facts.calls}
    known_codes |= set(facts.tool_names)
    for match in _CODE.finditer(text):
        if match.group(0) in known_codes:
            return match.group(0)
    spaced = sorted({c.replace("_", " ") for c in known_codes if "_" in c}, key=len, reverse=True)
    if spaced:  # "The query inventory result shows …": a tool's name said as words, as the source of an answer
        named = re.search(
            rf"\b(?:{'|'.join(map(re.escape, spaced))})\s+(?:tool|results?|function|call|output)\b", text, re.I
        )
        if named:
            return named.group(0)
    said = _TO_THE_MODEL.search(text)
    if said and not (facts.prompt and said.group(0).casefold() in facts.prompt.casefold()):
        return said.group(0)
    meant = set().union(*(_spans(m) for m in facts.model_meant)) if facts.model_meant else set()
    if meant:
        for span in _spans(text):
            if span in meant:
                return span
    return None


def echoes(text: str, words: str) -> bool:
    """Whether a reply `text` only says a person's `words` back, in any order and any case ("hela还有吗" → "还有
    Hela 吗？"; "What is a KeyError?" → "What is a KeyError"): every letter of it is theirs and it is about as long,
    or, for words of some length, it is theirs with a word or two changed."""
    said, asked = _letters(text), _letters(words)
    if not said:
        return False
    if said in asked or (set(said) <= set(asked) and len(said) <= len(asked) + 2 and len(said) * 2 >= len(asked)):
        return True
    # their words said back with a word or two changed ("做 task_2_2 时我写了 …" → "在做 task_2_2 时，我写了 …"):
    # alike, and adding at most a few letters of its own, no digit among them (a number added is an answer)
    added = Counter(said) - Counter(asked)
    if len(asked) < 12 or sum(added.values()) > 3 or any(c.isdigit() for c in added):
        return False
    return SequenceMatcher(None, said, asked, autojunk=False).ratio() >= _ECHO_RATIO


_ECHO_RATIO = 0.9
"""How alike (difflib's ratio of their letters) a reply and a person's words are when the reply says them back."""


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _check_for(
    find: Callable[[str, TurnFacts], str | None], reason: Callable[[str], str], name: str
) -> Callable[[Callable[[TurnFacts], str]], ReplyCheck]:
    """A runtime check that refuses a reply in which `find` finds something (`reason` says why, to the model), with
    code's `replacement`; counted as check `name`."""

    def with_replacement(replacement: Callable[[TurnFacts], str] = compose_reply) -> ReplyCheck:
        def check(text: str, facts: TurnFacts) -> None:
            found = find(text, facts)
            if found is not None:
                raise ReplyRefused(reason(found), replacement=replacement(facts), check=name)

        return check

    return with_replacement


check_model_words = _check_for(
    model_words,
    lambda found: (
        f'Your reply repeats words meant for you, not the user ("{found}"). Speak to the user directly, in '
        "their language: say what was found or done, or ask them one plain question."
    ),
    "model_words",
)
"""The runtime's check that no words meant for the model reach the person (see `model_words`)."""

check_said_something = _check_for(
    lambda text, _facts: None if text.strip() else "nothing",
    lambda _found: "Your reply was empty. Answer the user: say what was found or done, or ask them one plain question.",
    "empty",
)
"""The runtime's check that a reply says something: a model (or its server) may answer with no text and no call."""


# ---- the person's language --------------------------------------------------------------------------------------

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_LATIN_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_ENGLISH = frozenset(
    "the a an is are was were be been to of and or in on for with you your it its this that these those can could "
    "will would should must not do does did have has there we our please i they them their what which when how if "
    "but before after from as at by".split()
)
_NOT_WORDS = re.compile(r"`[^`\n]*`|https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_LATIN_SENTENCE = 4
"""Latin words (two of them English function words) that make a sentence English rather than a name or a term."""


def wrong_language(text: str, facts: TurnFacts) -> str | None:
    """The first sentence of `text` in English when the person wrote Chinese (`facts.lang` zh-CN and Chinese in
    their words), or None: a sentence of four or more Latin words, two of them English function words, and no
    Chinese. A sentence that quotes what the turn's tools, plans, questions or earlier turns said (e.g. a record's
    English note, an item's stem) is not counted: it is theirs as written. (Chinese to a person who writes English is
    not checked: the embedded model answers English in English, and test doubles answer either language.)"""
    if facts.lang != "zh-CN" or not has_chinese(facts.prompt):
        return None  # a person writing English, even in a Chinese session, may be answered in English
    words = _NOT_WORDS.sub(" ", _person_words(text))
    sources = _fold(_quotable(facts))
    for sentence in (m.group(0) for m in _SENTENCE.finditer(words)):
        latin = _LATIN_WORD.findall(sentence)
        english = sum(1 for w in latin if w.casefold() in _ENGLISH)
        if len(latin) < _LATIN_SENTENCE or english < 2 or has_chinese(sentence):
            continue
        if len(latin) >= _SPAN_WORDS:
            quoted = bool(_spans(sentence) & _spans(sources))
        else:
            quoted = " ".join(w.casefold() for w in latin) in " ".join(_LATIN_WORD.findall(sources))
        if not quoted:
            return sentence.strip()
    return None


def _quotable(facts: TurnFacts) -> str:
    """What the turn's tools, plans, questions and earlier turns said: a reply may quote it in its own language."""
    texts = [facts.earlier, *facts.staged, *facts.applied, *facts.questions]
    for call in facts.calls:
        texts += [call.data, call.message or ""]
    return "\n".join(t for t in texts if t)


check_language = _check_for(
    wrong_language,
    lambda found: (
        f'Your reply has a sentence in English ("{found[:80]}"); the user wrote Chinese. Write the whole '
        "reply in Chinese (简体中文)."
    ),
    "language",
)
"""The runtime's check that a reply to a person who wrote Chinese is in Chinese (see `wrong_language`)."""
