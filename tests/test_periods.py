"""The period parser (index/periods.py, issue 25, 2): dates and periods in English and Chinese queries,
read relative to a given today; words that only look like dates name none."""

from __future__ import annotations

import time
from datetime import date

import pytest

from reme_cc.index.periods import find_period, weekend

TODAY = date(2026, 12, 2)  # a Wednesday


def d(text: str) -> date:
    return date.fromisoformat(text)


def read(query: str, today: date = TODAY) -> tuple[str, str, str] | None:
    p = find_period(query, today)
    return (p.start.isoformat(), p.end.isoformat(), p.phrase) if p else None


@pytest.mark.parametrize(
    "query, start, end, phrase",
    [
        # explicit days
        ("what happened on 2023-03-05", "2023-03-05", "2023-03-05", "2023-03-05"),
        ("notes of 2023/3/5", "2023-03-05", "2023-03-05", "2023/3/5"),
        ("the deploy at 2025-07-01T10:30:00Z", "2025-07-01", "2025-07-01", "2025-07-01T10:30:00Z"),
        ("what did we do on March 5 2023", "2023-03-05", "2023-03-05", "March 5 2023"),
        ("March 5th, 2023 standup", "2023-03-05", "2023-03-05", "March 5th, 2023"),
        ("5 March 2023", "2023-03-05", "2023-03-05", "5 March 2023"),
        ("the 5th of March 2023", "2023-03-05", "2023-03-05", "5th of March 2023"),
        ("Sept. 14, 2025 incident", "2025-09-14", "2025-09-14", "Sept. 14, 2025"),
        ("the release on March 5", "2026-03-05", "2026-03-05", "on March 5"),
        ("the release on December 20", "2025-12-20", "2025-12-20", "on December 20"),  # not yet this year
        ("2023年3月5日的会议", "2023-03-05", "2023-03-05", "2023年3月5日"),
        ("3月5日的会议", "2026-03-05", "2026-03-05", "3月5日"),
        ("12月25号做了什么", "2025-12-25", "2025-12-25", "12月25号"),
        ("三月五日的会议", "2026-03-05", "2026-03-05", "三月五日"),
        # months and years
        ("Did Andrew have a pet dog during March 2023?", "2023-03-01", "2023-03-31", "March 2023"),
        ("incidents in March 2025", "2025-03-01", "2025-03-31", "March 2025"),
        ("aug 2024 notes", "2024-08-01", "2024-08-31", "aug 2024"),
        ("what did we do in March", "2026-03-01", "2026-03-31", "in March"),
        ("what did we plan in December", "2026-12-01", "2026-12-31", "in December"),
        ("last May", "2026-05-01", "2026-05-31", "last May"),
        ("2023年3月的事故", "2023-03-01", "2023-03-31", "2023年3月"),
        ("3月份的事故", "2026-03-01", "2026-03-31", "3月份"),
        ("十二月的计划", "2026-12-01", "2026-12-31", "十二月"),  # December has begun
        ("十一月的计划", "2026-11-01", "2026-11-30", "十一月"),
        ("what changed in 2023", "2023-01-01", "2023-12-31", "in 2023"),
        ("during the year 2024", "2024-01-01", "2024-12-31", "during the year 2024"),
        ("2024年的总结", "2024-01-01", "2024-12-31", "2024年"),
        ("去年的决定", "2025-01-01", "2025-12-31", "去年"),
        ("前年", "2024-01-01", "2024-12-31", "前年"),
        ("今年做了什么", "2026-01-01", "2026-12-31", "今年"),
        ("this year", "2026-01-01", "2026-12-31", "this year"),
        ("last year", "2025-01-01", "2025-12-31", "last year"),
        # relative days
        ("yesterday's migration", "2026-12-01", "2026-12-01", "yesterday"),
        ("what did I do today", "2026-12-02", "2026-12-02", "today"),
        ("this morning's deploy", "2026-12-02", "2026-12-02", "this morning"),
        ("the day before yesterday", "2026-11-30", "2026-11-30", "the day before yesterday"),
        ("last night", "2026-12-01", "2026-12-01", "last night"),
        ("昨天的迁移", "2026-12-01", "2026-12-01", "昨天"),
        ("前天", "2026-11-30", "2026-11-30", "前天"),
        ("大前天", "2026-11-29", "2026-11-29", "大前天"),
        ("今天", "2026-12-02", "2026-12-02", "今天"),
        ("3 days ago", "2026-11-29", "2026-11-29", "3 days ago"),
        ("three days ago", "2026-11-29", "2026-11-29", "three days ago"),
        ("a day ago", "2026-12-01", "2026-12-01", "a day ago"),
        ("3天前", "2026-11-29", "2026-11-29", "3天前"),
        ("三天之前", "2026-11-29", "2026-11-29", "三天之前"),
        ("last friday", "2026-11-27", "2026-11-27", "last friday"),
        ("last Wednesday", "2026-11-25", "2026-11-25", "last Wednesday"),  # today is one: a week ago
        ("上周五", "2026-11-27", "2026-11-27", "上周五"),
        ("上周日", "2026-11-29", "2026-11-29", "上周日"),
        # weeks, months
        ("what did we change in the deploy script last week", "2026-11-23", "2026-11-29", "last week"),
        ("previous week", "2026-11-23", "2026-11-29", "previous week"),
        ("this week", "2026-11-30", "2026-12-06", "this week"),
        ("earlier this week", "2026-11-30", "2026-12-06", "earlier this week"),
        ("上周我们决定了什么关于缓存的事", "2026-11-23", "2026-11-29", "上周"),
        ("上个星期", "2026-11-23", "2026-11-29", "上个星期"),
        ("本周", "2026-11-30", "2026-12-06", "本周"),
        ("这周的站会", "2026-11-30", "2026-12-06", "这周"),
        ("two weeks ago", "2026-11-16", "2026-11-22", "two weeks ago"),
        ("2周前", "2026-11-16", "2026-11-22", "2周前"),
        ("last month", "2026-11-01", "2026-11-30", "last month"),
        ("this month", "2026-12-01", "2026-12-31", "this month"),
        ("上个月", "2026-11-01", "2026-11-30", "上个月"),
        ("上月", "2026-11-01", "2026-11-30", "上月"),
        ("本月", "2026-12-01", "2026-12-31", "本月"),
        ("2 months ago", "2026-10-01", "2026-10-31", "2 months ago"),
        ("两个月前", "2026-10-01", "2026-10-31", "两个月前"),
        ("a year ago", "2025-01-01", "2025-12-31", "a year ago"),
        ("the past 7 days", "2026-11-25", "2026-12-02", "the past 7 days"),
        ("in the last two weeks", "2026-11-18", "2026-12-02", "the last two weeks"),
        ("past week", "2026-11-25", "2026-12-02", "past week"),
        ("最近7天", "2026-11-25", "2026-12-02", "最近7天"),
        ("过去三天", "2026-11-29", "2026-12-02", "过去三天"),
        # weekends and weeks of a month
        (
            "Where did Andrew go during the first weekend of August 2023?",
            "2023-08-05",
            "2023-08-06",
            "the first weekend of August 2023",
        ),  # fmt: skip
        ("the last weekend of March 2024", "2024-03-30", "2024-03-31", "the last weekend of March 2024"),
        ("the second week of May 2025", "2025-05-08", "2025-05-14", "the second week of May 2025"),
        ("the last week of February 2024", "2024-02-23", "2024-02-29", "the last week of February 2024"),
        ("last weekend", "2026-11-28", "2026-11-29", "last weekend"),
        ("this weekend", "2026-12-05", "2026-12-06", "this weekend"),
        ("上周末", "2026-11-28", "2026-11-29", "上周末"),
        # open ranges
        ("since March 2023", "2023-03-01", "2026-12-02", "since March 2023"),
        ("what changed since 2026-11-20", "2026-11-20", "2026-12-02", "since 2026-11-20"),
        ("after 2025", "2026-01-01", "2026-12-02", "after 2025"),
        ("before 2024", "1900-01-01", "2023-12-31", "before 2024"),
        ("before March 5 2023", "1900-01-01", "2023-03-04", "before March 5 2023"),
        ("3月以来的事故", "2026-03-01", "2026-12-02", "3月以来"),
        ("2024年之前", "1900-01-01", "2023-12-31", "2024年之前"),
    ],
)
def test_reads_the_period(query, start, end, phrase):
    assert read(query) == (start, end, phrase)


@pytest.mark.parametrize(
    "query",
    [
        "python 3.11 upgrade",  # a version
        "version 2023.1 release notes",
        "May I see the cache decision",  # "May" without a day, a year or "in"
        "we march on with the refactor",  # a verb
        "march 5 miles",  # month and number, no preposition, no ordinal
        "the meeting at 10:30",  # a time
        "what is in daily/2023-03-05/standup.md",  # a path
        "ticket-2023-03-05 and v2023-03-05",  # identifiers
        "commit 2023abcd",
        "port 2023 is taken",  # a bare year-like number
        "issue #2024",
        "the PR of Jan and the review by May",  # names
        "error E1234 in the parser",
        "how do I fix this test",
        "we use uv, never pip",
        "3.11.4 and 12/25",
        "1/2 cup of sugar",
        "the 2023-13-45 build",  # not a date
        "2023-02-30",  # no such day
        "每月的账单",  # every month: no period
        "一个月的数据",  # a month's worth: no period
        "三个月的计划",
        "",
    ],
)
def test_words_that_only_look_like_dates_name_none(query):
    assert read(query) is None


def test_rest_drops_the_period_words():
    q = "what did we change in the deploy script last week"
    p = find_period(q, TODAY)
    assert p is not None and p.rest(q) == "what did we change in the deploy script"
    q = "上周我们决定了什么关于缓存的事"
    p = find_period(q, TODAY)
    assert p is not None and p.rest(q) == "我们决定了什么关于缓存的事"


def test_label_says_how_the_query_was_read():
    p = find_period("the first weekend of August 2023", TODAY)
    assert p is not None and p.label() == "dated 2023-08-05..2023-08-06 from 'the first weekend of August 2023'"
    p = find_period("yesterday", TODAY)
    assert p is not None and p.label() == "dated 2026-12-01 from 'yesterday'"


def test_the_longest_phrase_wins():
    # "March 2023" alone is a month; with the day it is the day
    assert read("on March 5, 2023 and in March 2023") == ("2023-03-05", "2023-03-05", "March 5, 2023")


def test_relative_to_the_given_today():
    assert read("last week", date(2024, 1, 3)) == ("2023-12-25", "2023-12-31", "last week")
    assert read("last month", date(2024, 1, 15)) == ("2023-12-01", "2023-12-31", "last month")
    assert read("yesterday", date(2024, 3, 1)) == ("2024-02-29", "2024-02-29", "yesterday")
    assert read("上周", date(2026, 11, 30)) == ("2026-11-23", "2026-11-29", "上周")  # said on a Monday


def test_weekend_arithmetic():
    assert weekend(2023, 8, 1) == (d("2023-08-05"), d("2023-08-06"))
    assert weekend(2024, 6, 1) == (d("2024-06-01"), d("2024-06-02"))  # June 1 2024 is a Saturday
    assert weekend(2024, 6, -1) == (d("2024-06-29"), d("2024-06-30"))
    assert weekend(2024, 3, -1) == (d("2024-03-30"), d("2024-03-31"))


def test_a_query_without_a_date_costs_microseconds():
    queries = ["how do we deploy the frontend", "数据库迁移的步骤", "why is the checkout test flaky", "uv sync"]
    n = 2000
    t0 = time.perf_counter()
    for i in range(n):
        find_period(queries[i % len(queries)], TODAY)
    per_query = (time.perf_counter() - t0) / n
    assert per_query < 50e-6, f"{per_query * 1e6:.1f} µs per query without a date"
