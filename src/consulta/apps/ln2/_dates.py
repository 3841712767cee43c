"""The month or the day a person's words name, read as people write dates: "February 2026", "Dec '25", "2026年2月",
"25年9月", "09/2025", "last month", "上个月" (a month); "09/30/2025", "30.09.2025", "Sep 30, 2025", "2025年9月30日",
"2025-09-30", "yesterday", "前天" (a day). Record dates are ISO, so a date said is given as the prefix they begin with."""

from __future__ import annotations

import datetime as dt
import re

from ...i18n import ZH_NUMERALS, chinese_number

__all__ = ["said_date", "said_days"]

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_MONTH_EN = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+)?({'|'.join(_MONTHS)})\.?\s+(?:(\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?:of\s+)?"
    r"(\d{4}|['’]\d{2})\b",
    re.IGNORECASE,
)
_DATE_ZH = re.compile(r"(\d{4}|\d{2})\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")
_DATE_ISO = re.compile(r"(?<![A-Za-z0-9-])(\d{4})[-/.](\d{1,2})(?:[-/.](\d{1,2}))?(?![-/.\d])")  # not in "PB-2024-07"
_DATE_SLASHED = re.compile(r"(?<![\d/])(\d{1,2})[/.](\d{1,2})[/.](\d{4})(?![\d/])")
_MONTH_SLASHED = re.compile(r"(?<![\d/.-])(\d{1,2})/(\d{4})(?![\d/])")
_LAST_MONTH = re.compile(r"\b(?:last|previous|past)\s+month\b|上个?月", re.IGNORECASE)
_THIS_MONTH = re.compile(r"\bthis\s+month\b|这个月|本月", re.IGNORECASE)
# a past day said by its distance ("today" is left out: "I need cells today" says when they are wanted, not a date)
_DAYS_AGO = (
    (re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b|前天", re.IGNORECASE), 2),
    (re.compile(r"\byesterday\b|昨天|昨日|昨儿", re.IGNORECASE), 1),
)


def _dated(year: int, month: int, day: int | None = None) -> str | None:
    """YYYY-MM or YYYY-MM-DD, None when no such date."""
    try:
        found = dt.date(year, month, day or 1)
    except ValueError:
        return None
    return found.isoformat() if day else found.isoformat()[:7]


def said_date(words: str, *, today: dt.date | None = None) -> str | None:
    """A month or a day the words name, as record dates begin with it: "February 2026", "Dec '25", "2026年2月",
    "25年9月", "2026-02", "09/2025", "last month", "上个月" → YYYY-MM; "09/30/2025", "30.09.2025", "Sep 30, 2025",
    "2025年9月30日", "2025-09-30", "yesterday", "昨天", "前天" → YYYY-MM-DD (a day and a month that could be either way
    round is no date)."""
    if found := _MONTH_EN.search(words):
        first, name, second, year = found.groups()
        full = int(year[-2:]) + 2000 if len(year) == 3 else int(year)
        return _dated(full, _MONTHS[name.lower()], int(first or second) if (first or second) else None)
    if found := _DATE_ZH.search(words):
        year, month, day = found.groups()
        return _dated(int(year) + (2000 if len(year) == 2 else 0), int(month), int(day) if day else None)
    if found := _DATE_ISO.search(words):
        year, month, day = found.groups()
        return _dated(int(year), int(month), int(day) if day else None)
    if found := _DATE_SLASHED.search(words):
        a, b, year = (int(g) for g in found.groups())
        if a > 12 >= b:
            return _dated(year, b, a)
        if b > 12 >= a or a == b:
            return _dated(year, a, b)
        return None
    if found := _MONTH_SLASHED.search(words):
        return _dated(int(found.group(2)), int(found.group(1)))
    today = today or dt.date.today()
    if _LAST_MONTH.search(words):
        return (today.replace(day=1) - dt.timedelta(days=1)).isoformat()[:7]
    if _THIS_MONTH.search(words):
        return today.isoformat()[:7]
    for said, days in _DAYS_AGO:
        if said.search(words):
            return (today - dt.timedelta(days=days)).isoformat()
    return None


_LAST_DAYS = re.compile(
    r"\b(?:last|past|previous)\s+(\d{1,2}|few|couple\s+of|two|three|seven|ten|fourteen)\s+days\b"
    rf"|(?:最近|近|过去|前)\s*(\d{{1,2}}|[{ZH_NUMERALS}]{{1,3}})\s*天",
    re.IGNORECASE,
)
_THIS_WEEK = re.compile(r"\bthis\s+week\b|这周|本周|这个星期|这礼拜", re.IGNORECASE)
_LAST_WEEK = re.compile(r"\b(?:last|previous)\s+week\b|上周|上个?星期|上礼拜", re.IGNORECASE)
_PAST_WEEK = re.compile(r"\bpast\s+week\b|\bwithin\s+(?:the\s+|a\s+)?week\b|最近一周|近一周|过去一周", re.IGNORECASE)
_COUNTED = {"few": 3, "couple of": 2, "two": 2, "three": 3, "seven": 7, "ten": 10, "fourteen": 14}


def said_days(words: str, *, today: dt.date | None = None) -> tuple[dt.date, dt.date] | None:
    """The days a span the words name covers, first and last: "the last 7 days", "past week", "最近三天" (to today),
    "this week" (Monday to today), "last week", "上周" (the week before, Monday to Sunday); None when they name no
    span."""
    today = today or dt.date.today()
    if found := _LAST_DAYS.search(words):
        english, chinese = found.groups()
        said = english or chinese
        days = (
            (int(said) if said.isdigit() else _COUNTED.get(said.lower(), 0)) if english else chinese_number(said) or 0
        )
        return (today - dt.timedelta(days=days), today) if 0 < days <= 62 else None
    if _THIS_WEEK.search(words):
        return today - dt.timedelta(days=today.weekday()), today
    if _PAST_WEEK.search(words):
        return today - dt.timedelta(days=7), today
    if _LAST_WEEK.search(words):  # the week before this one, Monday to Sunday
        monday = today - dt.timedelta(days=today.weekday())
        return monday - dt.timedelta(days=7), monday - dt.timedelta(days=1)
    return None
