"""Exact-identifier set, generated (seeded): ≥ 1,000 distractor cards about ordinary coding work and
60 cards that each hold one rare token — error codes, commit hashes, function names, people, Chinese
proper nouns — written about the same topics as the distractors, so meaning alone cannot find them.
Two queries per token: the token alone, and a phrase a user would type around it."""

from __future__ import annotations

import random

TOPICS = [
    ("deploy", "the deploy to staging failed halfway and was rolled back", "部署到预发环境中途失败，已回滚"),
    (
        "migration",
        "the database migration locked the orders table for several minutes",
        "数据库迁移把订单表锁了好几分钟",
    ),
    ("ci", "the CI pipeline went red because an integration test timed out", "CI 流水线因为集成测试超时变红"),
    ("review", "code review asked for smaller functions and clearer names", "代码评审要求拆小函数、改清楚命名"),
    ("cache", "the cache kept serving stale results after the config change", "配置修改后缓存仍返回旧结果"),
    ("auth", "login started failing for some users after the token refresh change", "改了令牌刷新后部分用户登录失败"),
    ("perf", "the search endpoint got slower after the last release", "上次发布后搜索接口变慢"),
    ("build", "the release build broke on the ARM runners", "发布构建在 ARM 机器上失败"),
]
PEOPLE = [
    "Okonkwo",
    "Szymborska",
    "Nakagawa",
    "Villanueva",
    "Thorsdottir",
    "Abernathy",
    "Kowalczyk",
    "Mbatha",
    "Lindqvist",
    "Castellanos",
    "Oyelaran",
    "Przybylski",
]
ZH_NOUNS = ["蓝鲸", "青鸾", "玄武湖", "白泽", "烛龙", "鹊桥", "赤霄", "九章", "天枢", "琅琊"]
FUNCS = [
    "resolveTenantQuota",
    "flushShardLedger",
    "parse_retry_budget",
    "reconcileBillingCycle",
    "emitAuditTrail",
    "normalize_locale_tag",
    "computeBackoffJitter",
    "hydrate_session_cache",
    "rebalanceWorkerPool",
    "verifyWebhookSignature",
]
SENT = [
    "We spent the afternoon on it and wrote down what we found.",
    "The user asked to keep the fix small and to add a regression test.",
    "Next step: check the dashboards tomorrow morning and close the ticket.",
    "Logs showed the problem started right after the Tuesday release.",
    "We agreed to document the workaround in the runbook.",
    "A retry made it pass once, so the root cause is still open.",
]
ZH_SENT = [
    "下午一起排查并记录了结论。",
    "用户希望修改尽量小，并补一个回归测试。",
    "明天早上再看监控，然后关单。",
    "日志显示问题从周二发布之后开始。",
    "决定把临时方案写进运维手册。",
]


def _tokens(rng: random.Random) -> list[tuple[str, str]]:
    """(kind, token): 12 people, 10 Chinese nouns, 10 functions, 14 error codes, 14 hashes."""
    out = [("person", p) for p in PEOPLE] + [("zh", z) for z in ZH_NOUNS] + [("function", f) for f in FUNCS]
    for _ in range(14):
        out.append(("error", f"E{rng.choice('KQXZ')}{rng.randint(1000, 9999)}"))
    for _ in range(14):
        out.append(("hash", "".join(rng.choice("0123456789abcdef") for _ in range(10))))
    return out


def _needle(kind: str, tok: str, topic: tuple[str, str, str], rng: random.Random) -> tuple[str, str, str]:
    """(body, query around the token)."""
    _, en, zh = topic
    if kind == "person":
        return (
            f"{en.capitalize()}. {tok} from the platform team paired with us and spotted the cause. {rng.choice(SENT)}",
            f"what did {tok} find",
        )
    if kind == "zh":
        return (
            f"{zh}。这次和{tok}项目组一起排查，{tok}那边的同事给了关键日志。{rng.choice(ZH_SENT)}",
            f"{tok}项目组那次排查",
        )
    if kind == "function":
        return (
            f"{en.capitalize()}. The bug was in `{tok}()`, which ignored an empty list. {rng.choice(SENT)}",
            f"bug in {tok}",
        )
    if kind == "error":
        return (
            f"{en.capitalize()}, with error {tok} in the worker logs. {rng.choice(SENT)}",
            f"when did we see error {tok}",
        )
    return (
        f"{en.capitalize()}. Bisecting pointed at commit {tok}, which we reverted. {rng.choice(SENT)}",
        f"why was commit {tok} reverted",
    )


def generate(distractors: int = 1000, seed: int = 7) -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    """({path: text}, [(query, {relevant path})])."""
    rng = random.Random(seed)
    files: dict[str, str] = {}
    for i in range(distractors):
        key, en, zh = rng.choice(TOPICS)
        day = f"2026-{1 + i % 12:02d}-{1 + (i * 7) % 28:02d}"
        if rng.random() < 0.3:
            body = f"{zh}。{rng.choice(ZH_SENT)}{rng.choice(ZH_SENT)}"
        else:
            body = f"{en.capitalize()}. {rng.choice(SENT)} {rng.choice(SENT)}"
        files[f"daily/{day}/{key}-{i}.md"] = (
            f"---\nname: {key} notes {i}\ndescription: {body[:80]}\n---\n# {key}\n{body}\n"
        )
    queries: list[tuple[str, set[str]]] = []
    for j, (kind, tok) in enumerate(_tokens(rng)):
        topic = rng.choice(TOPICS)
        body, around = _needle(kind, tok, topic, rng)
        path = f"daily/2026-{1 + j % 12:02d}-{1 + (j * 5) % 28:02d}/{topic[0]}-n{j}.md"
        files[path] = f"---\nname: {topic[0]} session {j}\ndescription: {topic[1]}\n---\n# {topic[0]}\n{body}\n"
        queries += [(tok, {path}), (around, {path})]
    return files, queries
