"""Tool 4's rule checks: pure code over one item, English and Chinese, each failed rule named.

The seed's four (`stem_length`, `choice_count`, `answer_in_choices`, `duplicate_choices`, plus `true_false_answer`
and `keywords_in_stem`: a short answer whose expected words the question already says, all of them) are structural: one of them alone makes the rule score fall below 0.70 (reject). The item-writing flaws code can see
(Haladyna, Downing & Rodriguez 2002) each take the item below 0.85 (revise), `vague_terms` less:

| rule | fails when |
|---|---|
| `all_none_of_the_above` | an option is "all/none of the above" (以上都是 / 以上都不是 / 以上皆是 …) |
| `absolute_terms` | distractors say always/never/all/none (总是/从不/所有/一定 …) and the key does not; a true/false statement does |
| `vague_terms` | often/sometimes/usually (经常/有时/通常 …) in the stem or an option |
| `negative_stem` | the question asks NOT/EXCEPT/LEAST (不是/错误的/除…以外 …) without caps, bold or 【】 |
| `longest_option_is_key` | the key is clearly longer than every distractor |
| `key_repeats_stem` | the key repeats a word of the stem that no distractor repeats |
| `grammatical_cue` | "a/an" or "is/are" before the blank fits the key but not every distractor (English) |

To keep false positives low, each rule looks only where the flaw is: code in backticks or quotes is ignored, one-word
options (values such as `None`) are not statements, a "not" inside an if/when clause is not a negative question, and
"at least", "false positive", Python's `except` clause are not negatives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "FLAW_RULES",
    "QUESTION_TYPES",
    "RULES",
    "STEM_MAX_CHARS",
    "Item",
    "RuleFailure",
    "check_item",
    "has_cjk",
    "rule_score",
]

QUESTION_TYPES = ("multiple_choice", "true_false", "short_answer")
STEM_MAX_CHARS = 250
STEM_MIN_WIDTH = 8
MIN_CHOICES, MAX_CHOICES = 4, 5
TRUE_WORDS = frozenset({"true", "t", "yes", "正确", "对", "是", "真"})
FALSE_WORDS = frozenset({"false", "f", "no", "错误", "错", "否", "假"})


@dataclass(frozen=True, kw_only=True)
class Item:
    """One item as tool 4 sees it."""

    stem: str
    question_type: str
    choices: tuple[str, ...] | None = None
    correct_answer: str | None = None

    @property
    def key_index(self) -> int | None:
        """The position of the correct answer among the choices (trimmed, case-insensitive), or None."""
        if not self.choices or self.correct_answer is None:
            return None
        wanted = _norm(self.correct_answer)
        return next((i for i, c in enumerate(self.choices) if _norm(c) == wanted), None)

    @property
    def distractors(self) -> list[str]:
        key = self.key_index
        return [c for i, c in enumerate(self.choices or ()) if i != key]


@dataclass(frozen=True)
class RuleFailure:
    """A rule the item fails: its name, the weight taken off the rule score, values for its message."""

    rule: str
    weight: float
    values: dict[str, Any] = field(default_factory=dict)


Check = Callable[[Item], dict[str, Any] | None]
"""A rule's check: None when the item passes, else the values its message names (may be empty)."""


@dataclass(frozen=True)
class Rule:
    name: str
    weight: float
    check: Check


# --- text helpers -------------------------------------------------------------------------------------------------

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|'[^'\s][^']*'")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip()).casefold()


def _plain(text: str) -> str:
    """The text without code or quoted words (a quoted `None` or "all" is a value, not a claim)."""
    return _QUOTED.sub(" ", text)


def _width(text: str) -> int:
    """Display width: a CJK character counts two, so lengths compare across languages."""
    text = text.strip()
    return len(text) + len(_CJK.findall(text))


def _is_statement(option: str) -> bool:
    """Whether an option says something (not a bare value): three words or more, or six CJK characters."""
    plain = _plain(option)
    return len(re.findall(r"[A-Za-z]+", plain)) >= 3 or len(_CJK.findall(plain)) >= 6


_STOP = frozenset(
    "the a an of to in on for and or but is are was were be been being it its this that these those which what who whom "
    "whose when where why how with by from as at into than then there their they them you your we our can could should "
    "would will may might must do does did done not no yes has have had following best most more less following".split()
)


def _stem_word(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content(text: str) -> set[str]:
    """Content words (English, stemmed crudely, four letters or more) and Chinese character pairs."""
    plain = text.casefold()
    words = {_stem_word(w) for w in re.findall(r"[a-z][a-z0-9]+", plain) if len(w) >= 4 and w not in _STOP}
    pairs = set()
    for run in re.findall(r"[\u3400-\u9fff]+", plain):
        pairs |= {run[i : i + 2] for i in range(len(run) - 1)}
    return words | pairs


# --- the seed's four (structural) ---------------------------------------------------------------------------------


def _stem_length(item: Item) -> dict[str, Any] | None:
    n = len(item.stem.strip())
    if n > STEM_MAX_CHARS or _width(item.stem) < STEM_MIN_WIDTH:
        return {"length": n, "max": STEM_MAX_CHARS}
    return None


def _choice_count(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice":
        return None
    n = len(item.choices or ())
    return None if MIN_CHOICES <= n <= MAX_CHOICES else {"count": n, "min": MIN_CHOICES, "max": MAX_CHOICES}


def _answer_in_choices(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice" or not item.choices:
        return None
    return {"answer": item.correct_answer or ""} if item.key_index is None else None


def _duplicate_choices(item: Item) -> dict[str, Any] | None:
    seen: set[str] = set()
    repeated = [c for c in item.choices or () if _norm(c) in seen or seen.add(_norm(c))]  # type: ignore[func-returns-value]
    return {"choices": ", ".join(repeated)} if repeated else None


def _true_false_answer(item: Item) -> dict[str, Any] | None:
    if item.question_type != "true_false":
        return None
    answer = _norm(item.correct_answer or "")
    return None if answer in TRUE_WORDS | FALSE_WORDS else {"answer": item.correct_answer or ""}


def _keywords_in_stem(item: Item) -> dict[str, Any] | None:
    """A short answer's expected words that the question already says, every one of them: the key names nothing a
    reader must know ("What share of the body is water?" keyed `water, body, share`). A keyword with no content word
    (a number, a short term such as `DNA`) is never counted as said, so such a key passes."""
    if item.question_type != "short_answer" or not (item.correct_answer or "").strip():
        return None
    stem = _content(_plain(item.stem))
    words = [k.strip() for k in re.split(r"[,，、;；]", item.correct_answer or "") if k.strip()]
    said = [k for k in words if any(_content(v) and _content(v) <= stem for v in k.split("|"))]
    return {"words": ", ".join(said)} if words and len(said) == len(words) else None


# --- item-writing flaws -------------------------------------------------------------------------------------------

_ABOVE_EN = re.compile(
    r"\b(all|none|both|neither)\s+(of\s+)?(the\s+)?(above|these|those|preceding|(options|choices|answers)\s+above)\b",
    re.I,
)
_ABOVE_ZH = re.compile(
    r"(以上|上述|前述)(选项|答案|说法)?(都|皆|均|全|全部)?(是|不是|对|不对|正确|不正确|错误|非|选)|(以上|上述)皆非|(以上|上述)都|全部正确|都不正确"
)


def _all_none_of_the_above(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice":
        return None
    hits = [c for c in item.choices or () if _ABOVE_EN.search(c) or _ABOVE_ZH.search(c)]
    return {"option": hits[0]} if hits else None


_ABSOLUTE_EN = re.compile(
    r"\b(always|never|all|none|every|everything|nothing|totally|absolutely|completely|entirely|invariably|impossible|guaranteed)\b",
    re.I,
)
_ABSOLUTE_ZH = re.compile(
    r"总是|从不|从来不|从未|所有(?![者权制])|一定|绝对|永远|全部|完全|必定|必然|任何情况|毫无|一切"
)  # 所有者 is "owner"


def _absolute_words(text: str) -> list[str]:
    plain = _plain(text)
    plain = _ABOVE_EN.sub(" ", _ABOVE_ZH.sub(" ", plain))
    plain = re.sub(r"\bNone\b|\bat all\b", " ", plain)  # Python's None is a value; "at all" is emphasis
    return [m.group(0) for m in _ABSOLUTE_EN.finditer(plain)] + [m.group(0) for m in _ABSOLUTE_ZH.finditer(plain)]


def _absolute_terms(item: Item) -> dict[str, Any] | None:
    if item.question_type == "true_false":
        # A sweeping claim signals "false" to the test-wise; it is a cue only when the key is indeed False.
        words = _absolute_words(item.stem) if _norm(item.correct_answer or "") in FALSE_WORDS else []
        return {"words": ", ".join(dict.fromkeys(words))} if words else None
    if item.question_type != "multiple_choice" or item.key_index is None:
        return None
    key = item.choices[item.key_index]  # type: ignore[index]
    if _absolute_words(key):
        return None
    words = [w for d in item.distractors if _is_statement(d) for w in _absolute_words(d)]
    return {"words": ", ".join(dict.fromkeys(w.lower() for w in words))} if words else None


_VAGUE_EN = re.compile(
    r"\b(often|sometimes|usually|frequently|occasionally|generally|typically|rarely|seldom|mostly|normally(?!\s+distributed))\b",
    re.I,
)
_VAGUE_ZH = re.compile(r"经常|有时|通常|偶尔|一般来说|往往|很少|大多|常常|多数情况")


def _vague_terms(item: Item) -> dict[str, Any] | None:
    texts = [item.stem, *[c for c in item.choices or () if _is_statement(c)]]
    words = [m.group(0).lower() for t in texts for rx in (_VAGUE_EN, _VAGUE_ZH) for m in rx.finditer(_plain(t))]
    return {"words": ", ".join(dict.fromkeys(words))} if words else None


_AUX = r"(?:is|are|was|were|does|do|did|can|could|would|should|will|has|have|must|might|may)"
_NEGATIVE_EN = re.compile(
    # the negative belongs to the question's own verb ("Which of these is NOT…"), not to a clause inside it
    rf"\b(?:which|what|who|where|how)\b(?:\s+[\w'-]+){{0,5}}?\s+{_AUX}(?:(?P<nt>n't)|\s+(?P<not>not))\b(?!\s+only)"
    r"|\b(?P<except>except)\b(?=\s*(?:[:?.…_]|$))"
    r"|\b(?:which|what)\b.*?\b(?P<least>least)\s+(?:likely|common|important|appropriate|suitable|useful|effective|relevant|accurate|probable)\b"
    r"|\b(?:which|what)\b.*?\b(?:is|are)\s+(?P<false>false|incorrect|untrue|wrong|not\s+true|not\s+correct)\b(?!\s+(?:positive|negative))",
    re.I,
)
_NEGATIVE_ZH = re.compile(
    r"(?<!而)不是|不属于|不包括|不包含|不正确|不能|不会|不可以|不应|不需要|不符合|不恰当|不适合|不必|错误的|除了?[^，。？]{0,30}(之外|以外)"
)
_CLAUSE_EN = re.compile(r"\b(if|when|whenever|unless|because|although|though|since|once|while|after|before)\b", re.I)
_CLAUSE_ZH = re.compile(r"如果|假如|若|当|因为|即使|虽然")
_EMPHASIS = re.compile(r"\*\*[^*]+\*\*|__[^_]+__|<(b|strong|em|u)>.*?</\1>|【[^】]+】|「[^」]+」", re.I)


def _question_sentence(stem: str) -> str:
    """The sentence that asks: the last one with a question mark, else the last sentence."""
    parts = [p for p in re.split(r"(?<=[.!。！])\s*", stem.strip()) if p.strip()]
    asking = [p for p in parts if "?" in p or "？" in p]
    return (asking or parts or [stem])[-1]


def _negative_stem(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice":
        return None
    sentence = _plain(_question_sentence(item.stem))
    emphasized = " ".join(m.group(0) for m in _EMPHASIS.finditer(sentence))
    for rx, clause in ((_NEGATIVE_EN, _CLAUSE_EN), (_NEGATIVE_ZH, _CLAUSE_ZH)):
        for match in rx.finditer(sentence):
            named = [k for k, v in match.groupdict().items() if v] if rx is _NEGATIVE_EN else []
            word, start = (match.group(named[0]), match.start(named[0])) if named else (match.group(0), match.start())
            if (
                (rx is _NEGATIVE_EN and word.replace("'", "").isupper())
                or word in emphasized
                or clause.search(sentence[:start])
            ):
                continue  # NOT / EXCEPT in capitals, **not**, 【不是】 are emphasized; an if/when clause is not the question
            return {"word": word}
    return None


def _longest_option_is_key(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice" or item.key_index is None or len(item.choices or ()) < 3:
        return None
    key = _width(item.choices[item.key_index])  # type: ignore[index]
    longest_other = max(_width(d) for d in item.distractors)
    return (
        {"key_width": key, "other_width": longest_other}
        if key >= 1.4 * longest_other and key - longest_other >= 12
        else None
    )


def _key_repeats_stem(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice" or item.key_index is None:
        return None
    stem = _content(_plain(item.stem))
    shared = _content(item.choices[item.key_index]) & stem  # type: ignore[index]
    if any(_content(d) & stem for d in item.distractors):
        return None  # the distractors repeat the stem too: no cue
    cjk_pairs = {w for w in shared if has_cjk(w)}
    if shared - cjk_pairs or len(cjk_pairs) >= 2:
        return {"words": ", ".join(sorted(shared))}
    return None


_BLANK = r"(?:\s*(?:_{2,}|\.{3}|…|\(\s*\)))?"
_ARTICLE_AT_BLANK = re.compile(rf"\b(a|an){_BLANK}\s*[.?:]?\s*$|\b(a|an)\s+(?:_{{2,}}|\.{{3}}|…|\(\s*\))", re.I)
_VERB_AT_BLANK = re.compile(rf"\b(is|are){_BLANK}\s*[.?:]?\s*$", re.I)


def _wants_an(option: str) -> bool:
    word = re.search(r"[A-Za-z]+", option)
    return bool(word) and word.group(0)[0].lower() in "aeiou"  # type: ignore[union-attr]


def _plural(option: str) -> bool | None:
    """Whether a short noun phrase is plural (None when it is not one: a number, a verb phrase, a long option)."""
    words = re.findall(r"[A-Za-z]+", option)
    if not words or len(words) > 3 or words[0].lower() == "to" or has_cjk(option):
        return None
    last = words[-1].lower()
    return last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3


def _grammatical_cue(item: Item) -> dict[str, Any] | None:
    if item.question_type != "multiple_choice" or item.key_index is None or has_cjk(item.stem):
        return None
    key = item.choices[item.key_index]  # type: ignore[index]
    article = _ARTICLE_AT_BLANK.search(item.stem)
    if article:
        wants_an = (article.group(1) or article.group(2)).lower() == "an"
        fits = [_wants_an(d) == wants_an for d in item.distractors]
        if _wants_an(key) == wants_an and not all(fits):
            return {"cue": (article.group(1) or article.group(2))}
    verb = _VERB_AT_BLANK.search(item.stem)
    if verb:
        wants_plural = verb.group(1).lower() == "are"
        numbers = [_plural(d) for d in item.distractors]
        if _plural(key) == wants_plural and any(n is not None and n != wants_plural for n in numbers):
            return {"cue": verb.group(1)}
    return None


STRUCTURAL_WEIGHT = 0.35
FLAW_WEIGHT = 0.16

RULES: tuple[Rule, ...] = (
    Rule("stem_length", 0.2, _stem_length),
    Rule("choice_count", STRUCTURAL_WEIGHT, _choice_count),
    Rule("answer_in_choices", 0.5, _answer_in_choices),
    Rule("duplicate_choices", STRUCTURAL_WEIGHT, _duplicate_choices),
    Rule("true_false_answer", 0.5, _true_false_answer),
    Rule("keywords_in_stem", STRUCTURAL_WEIGHT, _keywords_in_stem),
    Rule("all_none_of_the_above", FLAW_WEIGHT, _all_none_of_the_above),
    Rule("absolute_terms", FLAW_WEIGHT, _absolute_terms),
    Rule("vague_terms", 0.1, _vague_terms),
    Rule("negative_stem", FLAW_WEIGHT, _negative_stem),
    Rule("longest_option_is_key", FLAW_WEIGHT, _longest_option_is_key),
    Rule("key_repeats_stem", FLAW_WEIGHT, _key_repeats_stem),
    Rule("grammatical_cue", FLAW_WEIGHT, _grammatical_cue),
)
FLAW_RULES = tuple(r.name for r in RULES[6:])


def check_item(item: Item, rules: Sequence[Rule] = RULES) -> list[RuleFailure]:
    """Every rule `item` fails, in the order of `rules`."""
    failures = []
    for rule in rules:
        values = rule.check(item)
        if values is not None:
            failures.append(RuleFailure(rule.name, rule.weight, values))
    return failures


def rule_score(failures: Sequence[RuleFailure]) -> float:
    """1.0 less each failed rule's weight, at least 0."""
    return round(max(0.0, 1.0 - sum(f.weight for f in failures)), 4)
