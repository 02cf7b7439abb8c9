"""Dates and periods named in a search query ("in March 2023", "last week", "上周", "3天前"), read as
a range of days relative to a given today. Standard library only, pure functions.

``find_period(query, today)`` returns the one period the query names (the longest phrase that reads
as a date; the first of equal ones), or None. It stays cheap for the common query without a date:
a single pre-check pattern decides before any other is tried. Words that only look like dates do
not count: a version (3.11), a time (10:30), "May I", "march" without a day, a year or "in", a date
inside an identifier or a path (v2023-03-05, daily/2023-03-05).
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from collections.abc import Callable
from dataclasses import dataclass

Date = _dt.date
DAY = _dt.timedelta(days=1)
EARLIEST, LATEST = Date(1900, 1, 1), Date(2099, 12, 31)


@dataclass(frozen=True)
class Period:
    start: Date
    end: Date
    phrase: str  # the query's words that named it, as written
    span: tuple[int, int]  # where they are in the query

    def label(self) -> str:
        days = self.start.isoformat() if self.start == self.end else f"{self.start}..{self.end}"
        return f"dated {days} from '{self.phrase}'"

    def rest(self, query: str) -> str:
        """The query without the words that named the period."""
        return " ".join((query[: self.span[0]] + " " + query[self.span[1] :]).split())


# ---- words -------------------------------------------------------------------------------------------
MONTHS = {
    name: i
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
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [("monday",), ("tuesday",), ("wednesday",), ("thursday",), ("friday",), ("saturday",), ("sunday",)]
    )
    for name in names
}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2,
}  # fmt: skip
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
CN_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}

_M = "(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_WD = "(?P<weekday>" + "|".join(WEEKDAYS) + ")"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")"
_CN_NUM = r"(?P<n>\d{1,3}|[一二两三四五六七八九十]{1,3})"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_B, _E = r"(?<![\w./\-])", r"(?![\w/\-]|[.:,]\d)"  # not inside an identifier, a path, a version, a time
_CB, _CE = r"(?<![\d./\-])", r"(?![\d])"  # Chinese: no word boundaries, only digits matter

# a query without any of these names no period: one search decides for most queries
_HINT = re.compile(
    r"\d|ago|day|night|morning|afternoon|evening|week|month|year|"
    r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|[昨前今去本上这月周天年]",
    re.IGNORECASE,
)


# ---- ranges --------------------------------------------------------------------------------------------
def month_range(year: int, month: int) -> tuple[Date, Date]:
    return Date(year, month, 1), Date(year, month, calendar.monthrange(year, month)[1])


def year_range(year: int) -> tuple[Date, Date]:
    return Date(year, 1, 1), Date(year, 12, 31)


def week_range(day: Date) -> tuple[Date, Date]:
    """The week (Monday to Sunday) that holds ``day``."""
    monday = day - day.weekday() * DAY
    return monday, monday + 6 * DAY


def shift_months(day: Date, months: int) -> tuple[int, int]:
    """(year, month) ``months`` months before ``day``'s month."""
    index = day.year * 12 + day.month - 1 - months
    return index // 12, index % 12 + 1


def latest_month(today: Date, month: int) -> int:
    """The year of the most recent ``month`` that has begun by ``today``."""
    return today.year if month <= today.month else today.year - 1


def weekend(year: int, month: int, which: int) -> tuple[Date, Date]:
    """The ``which``-th (1-based; -1 the last) Saturday-Sunday of a month, by its Saturday."""
    first, last = month_range(year, month)
    saturdays = [first + i * DAY for i in range((last - first).days + 1) if (first + i * DAY).weekday() == 5]
    saturday = saturdays[which - 1 if which > 0 else -1]
    return saturday, saturday + DAY


def _number(word: str) -> int:
    word = " ".join(word.lower().split())
    if word.isdigit():
        return int(word)
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    return _cn_number(word)


def _cn_number(word: str) -> int:
    """一..九十九 in Chinese numerals (十二, 二十, 二十三)."""
    if word.isdigit():
        return int(word)
    tens, _, ones = word.partition("十")
    if "十" not in word:
        return CN_DIGITS.get(word, 0)
    return (CN_DIGITS.get(tens, 0) if tens else 1) * 10 + CN_DIGITS.get(ones, 0)


def _day(year: int, month: int, day: int) -> tuple[Date, Date] | None:
    try:
        d = Date(year, month, day)
    except ValueError:
        return None
    return d, d


# ---- the phrases ----------------------------------------------------------------------------------------
Rule = Callable[[re.Match, Date], "tuple[Date, Date] | None"]


def _g(m: re.Match, name: str) -> str | None:
    return m.groupdict().get(name)


def _iso(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    return _day(int(m["year"]), int(m["mon"]), int(m["day"]))


def _month_day(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    month, day = MONTHS[m["month"].lower()], int(m["day"])
    year = int(m["year"]) if _g(m, "year") else latest_month(today, month)
    if not _g(m, "year") and Date(year, month, min(day, 28)) > today:
        year -= 1  # "on March 30" said on March 2: last year's
    return _day(year, month, day)


def _month(m: re.Match, today: Date) -> tuple[Date, Date]:
    month = MONTHS[m["month"].lower()]
    year = int(m["year"]) if _g(m, "year") else latest_month(today, month)
    which = (_g(m, "which") or "").lower()
    if which == "this":
        year = today.year
    elif which == "last" and month >= today.month:
        year = today.year - 1  # "last May" said in May: a year ago
    return month_range(year, month)


def _year(m: re.Match, today: Date) -> tuple[Date, Date]:
    return year_range(int(m["year"]))


def _nth_weekend(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    month = MONTHS[m["month"].lower()]
    year = int(m["year"]) if _g(m, "year") else latest_month(today, month)
    which = ORDINALS[m["nth"].lower()]
    if m["unit"].lower() == "weekend":
        return weekend(year, month, which)
    first, last = month_range(year, month)
    if which < 0:
        return last - 6 * DAY, last
    start = first + (which - 1) * 7 * DAY
    return start, min(last, start + 6 * DAY)


def _relative_day(m: re.Match, today: Date) -> tuple[Date, Date]:
    back = {
        "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
        "yesterday": 1, "last night": 1, "the day before yesterday": 2,
        "今天": 0, "今日": 0, "昨天": 1, "昨日": 1, "昨晚": 1, "前天": 2, "大前天": 3,
    }[" ".join(m["word"].lower().split())]  # fmt: skip
    return today - back * DAY, today - back * DAY


def _relative_unit(m: re.Match, today: Date) -> tuple[Date, Date]:
    """this/last week, month, year; 本周, 上个月, 去年..."""
    word = " ".join(m["word"].lower().split())
    unit, back = _UNITS[word]
    return _unit_back(today, unit, back)


_UNITS = {
    **{f"{w} {u}": (u, 0) for w in ("this", "earlier this") for u in ("week", "month", "year")},
    **{f"{w} {u}": (u, 1) for w in ("last", "previous") for u in ("week", "month", "year")},
    **{w: ("week", 0) for w in ("本周", "这周", "这个星期", "本星期", "这星期", "这礼拜", "这个礼拜")},
    **{w: ("week", 1) for w in ("上周", "上星期", "上个星期", "上礼拜", "上个礼拜")},
    **{w: ("month", 0) for w in ("本月", "这个月", "这月")},
    **{w: ("month", 1) for w in ("上个月", "上月")},
    **{w: ("year", 0) for w in ("今年", "本年")},
    "去年": ("year", 1),
    "前年": ("year", 2),
}


def _unit_back(today: Date, unit: str, back: int) -> tuple[Date, Date]:
    if unit == "day":
        return today - back * DAY, today - back * DAY
    if unit == "week":
        return week_range(today - 7 * back * DAY)
    if unit == "month":
        return month_range(*shift_months(today, back))
    return year_range(today.year - back)


def _ago(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    n = _number(m["n"])
    unit = m["unit"].lower().rstrip("s")
    unit = {
        "天": "day",
        "日": "day",
        "周": "week",
        "个星期": "week",
        "星期": "week",
        "个月": "month",
        "年": "year",
    }.get(unit, unit)
    if not 1 <= n <= 400:
        return None
    return _unit_back(today, unit, n)


def _past(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    """the past/last N days (weeks, months): up to today."""
    n = _number(m["n"]) if _g(m, "n") else 1
    unit = m["unit"].lower().rstrip("s")
    unit = {"天": "day", "日": "day", "周": "week", "个星期": "week", "星期": "week", "个月": "month"}.get(unit, unit)
    if not 1 <= n <= 400:
        return None
    days = {"day": 1, "week": 7, "month": 30}[unit] * n
    return today - days * DAY, today


def _last_weekday(m: re.Match, today: Date) -> tuple[Date, Date]:
    """last Friday: the most recent Friday before today; 上周五: the Friday of last week."""
    if _g(m, "weekday"):
        back = (today.weekday() - WEEKDAYS[m["weekday"].lower()] - 1) % 7 + 1
        return today - back * DAY, today - back * DAY
    monday = week_range(today)[0] - 7 * DAY
    day = monday + CN_WEEKDAYS[m["cnday"]] * DAY
    return day, day


def _cn_date(m: re.Match, today: Date) -> tuple[Date, Date] | None:
    month = _cn_number(m["mon"])
    if not 1 <= month <= 12:
        return None
    year = int(m["year"]) if _g(m, "year") else None
    if _g(m, "day"):
        day = _cn_number(m["day"])
        if year is None:
            year = latest_month(today, month)
            if Date(year, month, min(day, 28)) > today:
                year -= 1
        return _day(year, month, day)
    return month_range(year if year is not None else latest_month(today, month), month)


def _cn_year(m: re.Match, today: Date) -> tuple[Date, Date]:
    return year_range(int(m["year"]))


class _Renamed:
    """A match read with one group name standing for either of two alternatives."""

    def __init__(self, m: re.Match, name: str, other: str) -> None:
        self.m, self.value = m, m[name] or m[other]

    def __getitem__(self, key: str) -> str:
        return self.value if key == "word" else self.m[key]


def _weekend_rule(m: re.Match, today: Date) -> tuple[Date, Date]:
    word = (m["word"] or m["word2"]).lower()
    last = word == "last" or word.startswith("上")
    saturday = today + (5 - today.weekday()) * DAY  # this week's Saturday
    if last:
        saturday -= 7 * DAY
    return saturday, saturday + DAY


_FULL_M = "(?P<month>" + "|".join(calendar.month_name[1:]) + ")"
_IN_MONTH = r"(?:in|during|throughout|since|before|after|until)"
_IN = r"(?:in|during|throughout|of|for|from|since|before|after|until|till|by)"
_CN_MON = r"(?P<mon>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_CN_DAY = r"(?P<day>[0-3]?\d|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"

RULES: list[tuple[re.Pattern, Rule]] = [
    (re.compile(rf"{_B}{_YEAR}[-/](?P<mon>[01]?\d)[-/](?P<day>[0-3]?\d)(?:T[\d:.]+Z?)?{_E}"), _iso),
    (re.compile(rf"\b{_M}\s+{_DAY},?\s+{_YEAR}{_E}", re.I), _month_day),
    (re.compile(rf"\b(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?{_M},?\s+{_YEAR}{_E}", re.I), _month_day),
    # a month and day without a year: after a preposition or with an ordinal ("march 5" may be a verb)
    (re.compile(rf"\b(?:on|since|before|after|until|by|from)\s+{_M}\s+{_DAY}{_E}(?!,?\s*{_YEAR})", re.I), _month_day),
    (re.compile(rf"\b{_M}\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th){_E}", re.I), _month_day),
    (
        re.compile(
            rf"\b(?:the\s+)?(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(?P<unit>weekend|week)\s+"
            rf"(?:of|in)\s+{_M}(?:,?\s+{_YEAR})?{_E}",
            re.I,
        ),
        _nth_weekend,
    ),
    (re.compile(rf"\b{_M},?\s+{_YEAR}{_E}", re.I), _month),
    # a month alone: its full name after "in"-like words ("of Jan", "for May" are as often names)
    (re.compile(rf"\b(?:{_IN_MONTH}|(?P<which>last|this))\s+{_FULL_M}(?!\s*\d)\b", re.I), _month),
    (re.compile(rf"\b{_IN}\s+(?:the\s+year\s+)?{_YEAR}{_E}(?!\s*[-–/]?\s*\d)", re.I), _year),
    (
        re.compile(
            r"\b(?P<word>the\s+day\s+before\s+yesterday|yesterday|today|tonight|last\s+night|"
            r"this\s+(?:morning|afternoon|evening))\b|(?P<word2>大前天|前天|昨天|昨日|昨晚|今天|今日)",
            re.I,
        ),
        lambda m, today: _relative_day(_Renamed(m, "word", "word2"), today),
    ),
    (
        re.compile(
            r"\b(?P<word>(?:earlier\s+)?this\s+(?:week|month|year)|(?:last|previous)\s+(?:week|month|year))\b"
            r"|(?P<word2>本周|这个?星期|本星期|这个?礼拜|这周|上个?星期|上周|上个?礼拜|本月|这个?月|上个?月|今年|本年|去年|前年)"
            r"(?![一二三四五六日天末])",
            re.I,
        ),
        lambda m, today: _relative_unit(_Renamed(m, "word", "word2"), today),
    ),
    (re.compile(rf"\b{_NUM}\s+(?P<unit>days?|weeks?|months?|years?)\s+ago\b", re.I), _ago),
    (re.compile(rf"{_CB}{_CN_NUM}\s*(?P<unit>天|日|周|个星期|星期|个月|年)(?:以|之)?前"), _ago),
    (re.compile(rf"\b(?:the\s+)?(?:past|last)\s+(?:{_NUM}\s+)?(?P<unit>days?|weeks?|months?)\b", re.I), _past),
    (re.compile(rf"(?:最近|过去|近){_CN_NUM}\s*(?P<unit>天|日|周|个星期|个月)"), _past),
    (re.compile(r"\b(?P<word>last|this)\s+weekend\b|(?P<word2>上个?周末|这个?周末|本周末)", re.I), _weekend_rule),
    (re.compile(rf"\blast\s+{_WD}\b|上周(?P<cnday>[一二三四五六日天])", re.I), _last_weekday),
    (re.compile(rf"{_CB}(?:{_YEAR}\s*年\s*)?{_CN_MON}\s*月份?\s*(?:{_CN_DAY}\s*[日号])?"), _cn_date),
    (re.compile(rf"{_CB}{_YEAR}\s*年(?!\s*\d{{1,2}}\s*月|[一二三四五六七八九十]{{1,2}}月|代|前){_CE}"), _cn_year),
]


_BEFORE = re.compile(r"\b(?P<word>since|after|from|before|until|till|prior\s+to)\s+(?:the\s+)?$", re.I)
_LEAD = re.compile(r"(?P<word>since|after|from|before|until|till)\s", re.I)  # the phrase's own first word
_CN_AFTER = re.compile(r"^\s*(?P<word>以来|之后|以后|之前|以前)")


def find_period(query: str, today: Date) -> Period | None:
    """The period ``query`` names, relative to ``today``; None when it names none."""
    if not _HINT.search(query):
        return None
    best: tuple[int, int, Date, Date] | None = None
    for pattern, rule in RULES:
        for m in pattern.finditer(query):
            got = rule(m, today)
            if got is None:
                continue
            a, b = m.span()
            while a < b and query[a].isspace():
                a += 1
            if best is None or (b - a, -a) > (best[1] - best[0], -best[0]):
                best = (a, b, *got)
    if best is None:
        return None
    a, b, start, end = best
    return _open_ended(query, a, b, start, end, today)


def _open_ended(query: str, a: int, b: int, start: Date, end: Date, today: Date) -> Period:
    """ "since March 2023" (up to today), "before 2024", "3月以来": a prefix or suffix opens the range."""
    head = _LEAD.match(query, a) or _BEFORE.search(query[:a])
    tail = _CN_AFTER.match(query[b:]) if not head else None
    word = (head or tail)["word"].lower() if head or tail else ""
    if word in ("since", "after", "from", "以来", "之后", "以后"):
        start, end = (end + DAY if word in ("after", "之后", "以后") else start), max(today, end)
    elif word:
        start, end = EARLIEST, start - DAY
    if head:
        a = min(a, head.start())
    if tail:
        b += tail.end()
    return Period(start, end, query[a:b].strip(), (a, b))
