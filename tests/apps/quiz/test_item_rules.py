"""Tool 4's rule checks on good and bad items in English and Chinese: each flaw is caught and named, and items that
only look like it (a conditional "not", Python's `except`, a quoted `None`, an emphasized 【不是】) pass."""

from __future__ import annotations

import pytest

from consulta.apps.quiz._item_rules import FLAW_RULES, Item, check_item, rule_score


def failed(
    stem: str, choices: list[str] | None = None, answer: str | None = None, kind: str = "multiple_choice"
) -> list[str]:
    item = Item(stem=stem, question_type=kind, choices=tuple(choices) if choices else None, correct_answer=answer)
    return [f.rule for f in check_item(item)]


GOOD = [
    ("Which SQL clause filters groups after aggregation?", ["WHERE", "HAVING", "GROUP BY", "ORDER BY"], "HAVING"),
    ("What does len([]) return in Python?", ["0", "None", "-1", "It raises IndexError"], "0"),
    (
        "What happens when a key is not found in a dict with d[key]?",
        ["KeyError is raised", "None is returned", "0 is returned", "An empty dict is returned"],
        "KeyError is raised",
    ),
    ("Which of the following is NOT a Python built-in type?", ["list", "dict", "array", "tuple"], "array"),
    (
        "Which HTTP status code means the resource was not found if the path is wrong?",
        ["200", "301", "404", "500"],
        "404",
    ),
    (
        "What does the `except` clause of a try statement handle?",
        [
            "Exceptions raised in its try block",
            "Syntax errors in the module",
            "Warnings printed earlier",
            "Signals from the OS",
        ],
        "Exceptions raised in its try block",
    ),
    (
        "Which metric discounts future cash flows to today's value?",
        ["NPV", "ROI", "Payback period", "Gross margin"],
        "NPV",
    ),
    (
        "An ______ stores key-value pairs for fast lookup.",
        ["associative array", "ordered queue", "integer stack", "open file"],
        "associative array",
    ),
    ("下列哪一项【不是】Python 的内置类型？", ["列表", "字典", "数组", "元组"], "数组"),
    ("如果字典中不存在该键，d[key] 会怎样？", ["抛出 KeyError", "返回 None", "返回 0", "返回空字典"], "抛出 KeyError"),
    (
        "净现值（NPV）为正说明什么？",
        ["项目收益超过资本成本", "项目没有风险", "项目回收期很短", "项目规模很大"],
        "项目收益超过资本成本",
    ),
    ("在 SQL 中，哪个子句用于在聚合后筛选分组？", ["WHERE", "HAVING", "GROUP BY", "ORDER BY"], "HAVING"),
]


@pytest.mark.parametrize(("stem", "choices", "answer"), GOOD)
def test_good_items_pass_every_rule(stem: str, choices: list[str], answer: str) -> None:
    assert failed(stem, choices, answer) == []


BAD = [
    (
        "all_none_of_the_above",
        "Which are valid Python types?",
        ["int", "str", "float", "All of the above"],
        "All of the above",
    ),
    (
        "all_none_of_the_above",
        "Which protocol is connectionless?",
        ["TCP", "SCTP", "QUIC", "None of these"],
        "None of these",
    ),
    ("all_none_of_the_above", "哪些是 Python 的内置类型？", ["int", "str", "float", "以上都是"], "以上都是"),
    ("all_none_of_the_above", "哪种协议是无连接的？", ["TCP", "SCTP", "QUIC", "以上都不是"], "以上都不是"),
    (
        "absolute_terms",
        "Which statement about indexes is right?",
        [
            "Indexes always make every query faster",
            "Indexes speed up reads and slow down writes",
            "Indexes never use disk space",
            "Every column must have an index",
        ],
        "Indexes speed up reads and slow down writes",
    ),
    (
        "absolute_terms",
        "关于索引，下列说法正确的是？",
        [
            "索引总是能提高所有操作的性能",
            "索引可以加快查询但会增加写入开销",
            "索引从不占用存储空间",
            "每一列都一定要建立索引",
        ],
        "索引可以加快查询但会增加写入开销",
    ),
    ("vague_terms", "Which approach is usually best for caching?", ["LRU", "FIFO", "Random", "LFU"], "LRU"),
    ("vague_terms", "哪种缓存策略通常最好？", ["LRU", "FIFO", "随机", "LFU"], "LRU"),
    (
        "negative_stem",
        "Which of the following is not a Python built-in type?",
        ["list", "dict", "array", "tuple"],
        "array",
    ),
    (
        "negative_stem",
        "All of the following are ACID properties except:",
        ["Atomicity", "Isolation", "Durability", "Scalability"],
        "Scalability",
    ),
    ("negative_stem", "下列哪一项不是 Python 的内置类型？", ["列表", "字典", "数组", "元组"], "数组"),
    (
        "negative_stem",
        "关于事务，下列说法错误的是？",
        ["事务可以回滚", "事务具有原子性", "事务会自动加速查询", "事务可以提交"],
        "事务会自动加速查询",
    ),
    (
        "longest_option_is_key",
        "What is a database index?",
        [
            "A data structure that speeds up lookups on a column at some cost to writes",
            "A table",
            "A view",
            "A trigger",
        ],
        "A data structure that speeds up lookups on a column at some cost to writes",
    ),
    (
        "longest_option_is_key",
        "什么是数据库索引？",
        ["一种以额外写入开销为代价加快按列查找的数据结构", "一张表", "一个视图", "一个触发器"],
        "一种以额外写入开销为代价加快按列查找的数据结构",
    ),
    (
        "key_repeats_stem",
        "What is a Python list comprehension used to create?",
        ["A new list from an iterable", "A tuple", "A generator object", "A set"],
        "A new list from an iterable",
    ),
    (
        "key_repeats_stem",
        "事务的原子性指的是什么？",
        ["原子性指全部完成或全部不做", "加快查询", "节省空间", "加密数据"],
        "原子性指全部完成或全部不做",
    ),
    ("grammatical_cue", "The unit of electrical resistance is an", ["ohm", "volt", "ampere", "watt"], "ohm"),
    ("grammatical_cue", "The building blocks of a relational table are", ["rows", "schema", "index", "cursor"], "rows"),
]


@pytest.mark.parametrize(("rule", "stem", "choices", "answer"), BAD)
def test_each_flaw_is_caught_and_named(rule: str, stem: str, choices: list[str], answer: str) -> None:
    assert rule in failed(stem, choices, answer)


def test_every_flaw_rule_is_exercised_in_both_languages() -> None:
    covered = {(rule, any("\u4e00" <= ch <= "\u9fff" for ch in stem)) for rule, stem, _, _ in BAD}
    for rule in FLAW_RULES:
        assert (rule, False) in covered, rule
        if rule != "grammatical_cue":  # articles and is/are cues are English grammar
            assert (rule, True) in covered, rule


@pytest.mark.parametrize(
    ("stem", "flagged"),
    [
        ("What is a false positive in testing?", False),
        ("What is the least significant bit of 6?", False),
        ("Which principle is called least privilege?", False),
        ("Which HTTP status code means the resource was not found?", False),
        ("When a row is not locked, which isolation level allows a dirty read?", False),
        ("Which statement about locks is false?", True),
        ("Which of these data structures doesn't allow duplicates?", True),
        ("Which process does not need a lock?", True),
        ("Which option is least likely to cause a deadlock?", True),
        ("Which process does **not** need a lock?", False),
        ("Which process does <b>not</b> need a lock?", False),
        ("Which process does NOT need a lock?", False),
        ("当索引不存在时，下列哪种查询最慢？", False),
        ("下列关于锁的说法，哪一项是错误的？", True),
        ("除了原子性以外，下列哪一项也属于 ACID？", True),
        ("下列关于锁的说法，哪一项是【错误的】？", False),
        ("反驳时攻击提出观点的人，而不是观点本身，这属于哪种谬误？", False),  # 而不是: "rather than"
    ],
)
def test_negative_stems(stem: str, flagged: bool) -> None:
    assert ("negative_stem" in failed(stem, ["one lock", "two locks", "no lock", "a queue"], "one lock")) is flagged


def test_the_seeds_four_structural_rules() -> None:
    assert failed("Q?", ["a", "a", "b"], "c") == [
        "stem_length",
        "choice_count",
        "answer_in_choices",
        "duplicate_choices",
    ]
    assert failed("x" * 251, kind="short_answer") == ["stem_length"]
    assert failed("Which port does HTTPS use by default?", ["443", "80", "8080", "21", "22", "25"], "443") == [
        "choice_count"
    ]
    assert failed("Which port does HTTPS use by default?", ["443", "80", "8080", " 443 "], "443") == [
        "duplicate_choices"
    ]
    assert failed("Which port does HTTPS use by default?", ["443", "80", "8080", "21"], " 443 ") == []  # trimmed match


def test_a_short_answer_whose_expected_words_only_repeat_the_question_fails() -> None:
    def short(stem: str, keywords: str) -> list[str]:
        return failed(stem, answer=keywords, kind="short_answer")

    assert short("What percentage of the human body is composed of water?", "water, body, percentage") == [
        "keywords_in_stem"
    ]
    assert short("二次函数的图像的顶点坐标是什么？", "顶点坐标, 二次函数") == ["keywords_in_stem"]
    assert short("What percentage of the human body is water?", "60%, water") == []  # the number is the answer
    assert short("What does a tighter string do to the sound's pitch?", "higher, pitch") == []
    assert short("What carries genetic information in a cell?", "DNA") == []  # too short to tell: passes
    assert short("把吉他弦拧紧后声音有什么变化？", "音调|音高, 高") == []


def test_true_false_items() -> None:
    assert failed("Python lists are mutable.", kind="true_false", answer="True") == []
    assert failed("Python 的列表是可变的。", kind="true_false", answer="正确") == []
    assert failed("Python lists are mutable.", kind="true_false", answer="maybe") == ["true_false_answer"]
    assert failed("Python lists are always sorted.", kind="true_false", answer="False") == ["absolute_terms"]
    assert failed("Python 的列表总是有序排列的。", kind="true_false", answer="错误") == ["absolute_terms"]


def test_terms_that_only_look_absolute_or_vague() -> None:
    # 所有者权益 is "owners' equity"; "normally distributed" names a distribution; a sweeping claim that is True is no cue
    assert (
        failed(
            "哪张财务报表反映企业在某一时点的财务状况？",
            ["资产负债表", "利润表", "现金流量表", "所有者权益变动表"],
            "资产负债表",
        )
        == []
    )
    assert failed(
        "What does the central limit theorem say about sample means?",
        [
            "They are approximately normally distributed for large samples",
            "They equal the population mean",
            "They have zero variance",
            "They follow the population's distribution",
        ],
        "They are approximately normally distributed for large samples",
    ) == ["longest_option_is_key"]
    assert failed("In a B-tree index, all leaf pages are at the same depth.", kind="true_false", answer="True") == []
    assert failed("In a B-tree index, all leaf pages are at different depths.", kind="true_false", answer="False") == [
        "absolute_terms"
    ]


def test_rule_score_structural_rejects_flaw_revises() -> None:
    item = Item(stem="Q?", question_type="multiple_choice", choices=("a", "b", "c", "d"), correct_answer="e")
    assert rule_score(check_item(item)) < 0.70
    flawed = Item(
        stem="Which of the following is not a Python built-in type?",
        question_type="multiple_choice",
        choices=("list", "dict", "array", "tuple"),
        correct_answer="array",
    )
    assert 0.70 <= rule_score(check_item(flawed)) < 0.85
    assert rule_score([]) == 1.0


def test_every_failed_rule_reads_as_one_line_in_both_languages() -> None:
    from consulta.apps.quiz._item_rules import RULES
    from consulta.i18n import t

    items = [Item(stem=s, question_type="multiple_choice", choices=tuple(c), correct_answer=a) for _, s, c, a in BAD]
    items += [
        Item(stem="Q?", question_type="multiple_choice", choices=("a", "a", "b"), correct_answer="c"),
        Item(stem="Is it?", question_type="true_false", correct_answer="maybe"),
        Item(stem="What share of the body is water?", question_type="short_answer", correct_answer="water, body"),
    ]
    seen = set()
    for item in items:
        for failure in check_item(item):
            seen.add(failure.rule)
            for lang in ("en", "zh-CN"):
                line = t(f"quiz.judge.rule.{failure.rule}", lang, **failure.values)
                assert line and "\n" not in line and "{" not in line
    assert seen == {r.name for r in RULES}
