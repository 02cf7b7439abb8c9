"""Temporal set, generated (seeded): dated notes over 18 months (2025-06 .. 2026-11) about subjects that
recur — weekly standups, deploy-script changes, incidents, dependency upgrades, database migrations,
cache decisions (in Chinese), weekend on-call — so the same subject is in many notes at different
dates, and questions whose answer is the note of one period: "what did we change in the deploy script
last week", "which incident did we have in March 2026", "上周的站会决定了什么", "yesterday's migration".

Each question has its own today (the day it is asked; the period is relative to it) and the notes of
its subject dated in its period as the answer (one note by construction, so a question can only be
answered by its date). Control questions name a note's own detail and no date (they must rank as
without the period rule), a few of them with words that only look like dates (3.11, "May I", 10:30).

Dates live where reme reads them: the day folder (daily/YYYY-MM-DD/<slug>.md) for cards, the
frontmatter ``date`` for decision notes (decisions/<slug>.md).

``generate()`` -> ({path: text}, [(question, {answer paths}, today)])."""

from __future__ import annotations

import calendar
import datetime as dt
import random

SEED = 25
FIRST, LAST = dt.date(2025, 6, 2), dt.date(2026, 11, 27)
DAY = dt.timedelta(days=1)
POSTMORTEMS = 10
PEOPLE = ["Ana", "Bo", "Chen", "Dev", "Eli", "Fay", "Gus", "Hana"]
MONTH = calendar.month_name

# ---- what each subject's notes say (one detail per note; a control question asks for it) ---------------
STANDUP_ITEMS = [
    ("moved the invoice PDF rendering to a background worker", "who moved invoice pdf rendering to a worker"),
    ("agreed to freeze the tax API until the audit", "when was the tax api frozen for the audit"),
    ("dropped support for the legacy SOAP endpoint", "the standup where we dropped the soap endpoint"),
    (
        "split the billing service's test suite into unit and contract tests",
        "splitting billing tests into contract tests",
    ),
    ("decided to retry failed card charges after 24 hours", "how long do we wait before retrying a failed card charge"),
    ("chose Stripe webhooks over polling for payment status", "why webhooks instead of polling for payment status"),
    ("added an on-call rotation for the billing service", "when did billing get an on-call rotation"),
    ("started writing ADRs for billing decisions", "when did we start architecture decision records"),
    ("postponed the multi-currency work to next quarter", "multi currency postponed"),
    ("agreed that refunds need two approvals above 500 EUR", "refund approval rule above 500 euros"),
    ("decided to keep invoices for ten years", "invoice retention period"),
    ("planned the move of cron jobs to the scheduler service", "moving billing cron jobs to the scheduler"),
    ("agreed on idempotency keys for every POST endpoint", "idempotency keys on post endpoints"),
    ("decided to round amounts with banker's rounding", "which rounding do we use for amounts"),
    ("removed the nightly CSV export nobody used", "the unused nightly csv export"),
    ("made the dunning emails configurable per customer", "per customer dunning email settings"),
]
STANDUP_BLOCKERS = [
    "waiting on the finance team's sign-off",
    "blocked by the flaky sandbox of the payment provider",
    "needs a review from security",
    "waiting for the staging database refresh",
    "blocked on the VAT rules for Norway",
    "needs a decision from product",
]
ZH_STANDUP_ITEMS = [
    ("决定把推送通知的发送改成批量", "推送通知批量发送是哪次站会定的"),
    ("把登录页改成支持短信验证码", "短信验证码登录"),
    ("决定暂停 iPad 适配", "iPad 适配暂停"),
    ("崩溃率超过千分之二就回滚版本", "崩溃率超过多少要回滚"),
    ("图片上传改为先压缩再上传", "图片先压缩再上传"),
    ("首页改用骨架屏加载", "首页骨架屏"),
    ("决定每两周发一次应用商店版本", "应用商店多久发一次版"),
    ("深色模式推迟到下个季度", "深色模式推迟"),
    ("埋点统一改用新的事件命名规范", "埋点事件命名规范"),
    ("决定下线旧版的 H5 支付页", "旧版 H5 支付页下线"),
]
DEPLOY_CHANGES = [
    (
        "added a canary step that sends 5% of traffic to the new version for 10 minutes",
        "canary step in the deploy script",
    ),
    ("moved the database migrations before the image push", "run migrations before pushing the image"),
    ("posts to Slack when a rollback happens", "slack message on rollback"),
    ("replaced rsync of static assets with an S3 sync", "static assets uploaded with s3 sync instead of rsync"),
    ("pinned the base image by digest instead of tag", "base image pinned by digest"),
    ("waits 60 seconds for the health check before switching traffic", "health check wait before switching"),
    ("exits on unset variables (set -euo pipefail)", "set -euo pipefail in the deploy script"),
    ("uploads the assets in parallel with xargs -P 8", "parallel asset upload"),
    ("got a --dry-run flag that prints every command", "dry run flag for the deploy"),
    ("runs remote commands through SSM instead of ssh", "ssm instead of ssh for remote commands"),
    ("retries the ECR login three times", "retrying the container registry login"),
    ("tags every release image with the git sha", "release images tagged with the commit sha"),
    ("keeps the previous two releases for instant rollback", "how many old releases do we keep for rollback"),
    ("warms the CDN cache for the top 100 pages after a deploy", "cdn warm up after deploy"),
    ("refuses to deploy on Fridays after 3 pm unless --force is given", "no deploys on friday afternoon"),
    ("writes a deploy log line to the audit table", "deploy audit log entry"),
    ("checks that the changelog mentions the version", "changelog check before deploy"),
    ("drains the workers before restarting them", "draining workers on deploy"),
    ("reads secrets from the parameter store instead of .env files", "secrets from parameter store in deploy"),
    ("builds the frontend once and reuses it for every region", "frontend built once for all regions"),
    ("runs smoke tests against the green environment before the switch", "smoke tests on green"),
    ("sends the release notes to the #releases channel", "release notes posted to the releases channel"),
    ("compresses the source maps and uploads them to Sentry", "source maps uploaded to sentry"),
    ("skips the asset upload when nothing under static/ changed", "skipping unchanged static assets"),
]
INCIDENTS = [
    ("the TLS certificate of the API gateway expired", "renewed it by hand and added an expiry alert 21 days ahead"),
    ("the log volume on the worker hosts filled up", "rotated the logs hourly and moved them to a bigger volume"),
    ("a runaway cron job sent the same newsletter twice", "added a lock file to the cron job"),
    ("a DNS change at the registrar dropped the MX records", "restored the records and put DNS in Terraform"),
    ("Redis evicted session keys under memory pressure", "moved sessions to their own Redis with noeviction"),
    ("a feature flag turned on the new checkout for everyone", "flag changes now need a second person"),
    ("the Postgres connection pool was exhausted", "put PgBouncer in transaction mode in front of it"),
    ("the image resizer leaked memory and was OOM-killed", "pinned libvips and restart the resizer daily"),
    ("clock skew on two hosts broke JWT validation", "enabled chrony on every host and allow 30 s leeway"),
    ("the payment provider had an outage", "queued the charges and replayed them after recovery"),
    ("Kafka consumer lag reached two hours", "doubled the partitions and the consumers"),
    ("the login rate limiter blocked a whole office behind one IP", "limits per account as well as per IP"),
    ("an S3 bucket policy change hid all product images", "reverted the policy and added a check in CI"),
    ("a schema migration locked the orders table for 9 minutes", "migrations now use lock_timeout and batches"),
    ("the autoscaler scaled the API down to zero pods", "set a minimum of three replicas"),
    ("the email provider API key expired", "moved the key to the secret store with a rotation reminder"),
    ("a bad index made the search endpoint time out", "dropped the index and added query plan checks"),
    ("the CDN cached a logged-in page for everyone", "marked account pages private, no-store"),
    ("disk IOPS on the database hit the provisioned limit", "moved to gp3 with 12k IOPS"),
    ("a dependency update broke PDF invoices", "pinned the PDF library and added a rendering test"),
]
UPGRADES = {
    "Django": ["4.2.14", "4.2.16", "5.0.8", "5.0.9", "5.1.1", "5.1.3", "5.1.4", "5.2"],
    "React": ["18.2.0", "18.3.1", "19.0.0", "19.1.0"],
    "pydantic": ["2.7.4", "2.8.2", "2.9.2", "2.10.3", "2.11.1"],
    "tokio": ["1.38", "1.39", "1.40", "1.41", "1.43"],
    "Postgres": ["15.7", "16.3", "16.4", "17.0"],
}
ZH_CACHE = [
    ("商品详情缓存的 TTL 从 10 分钟改成 2 分钟", "商品详情缓存 TTL 改成几分钟"),
    ("购物车不再缓存，直接读数据库", "购物车为什么不缓存了"),
    ("缓存键加上价格表版本号，改价后自动失效", "缓存键加版本号"),
    ("热点商品用本地内存缓存，其余走 Redis", "本地内存缓存热点商品"),
    ("搜索结果缓存改成按用户分组", "搜索结果缓存按用户分组"),
    ("缓存穿透用布隆过滤器挡住", "布隆过滤器防缓存穿透"),
    ("缓存击穿时只让一个请求回源", "缓存击穿只让一个请求回源"),
    ("首页推荐缓存改为每小时预热一次", "首页推荐缓存预热"),
    ("删除缓存改成延迟双删", "延迟双删"),
    ("Redis 集群从 3 个分片扩到 6 个", "Redis 分片扩容"),
    ("用户资料缓存改为写入时更新", "用户资料缓存写入时更新"),
    ("配置中心的缓存改成 30 秒轮询", "配置缓存轮询间隔"),
]
MIGRATION_CHANGES = [
    ("added a nullable column discount_code to orders", "discount code column on orders"),
    ("created the table refunds with a foreign key to payments", "refunds table"),
    ("added an index on invoices(customer_id, created_at)", "index on invoices customer and date"),
    ("renamed users.fullname to users.display_name", "renaming fullname to display name"),
    ("dropped the unused table legacy_sessions", "dropping legacy sessions table"),
    ("backfilled orders.currency with EUR", "backfilling order currency"),
    ("split addresses out of customers into their own table", "addresses in their own table"),
    ("changed payments.amount from float to numeric(12,2)", "amount column from float to numeric"),
    ("added a check constraint quantity > 0 on order_items", "check constraint on quantity"),
    ("created a partial index on subscriptions where active", "partial index on active subscriptions"),
    ("added soft delete (deleted_at) to products", "soft delete for products"),
    ("moved audit events into a partitioned table by month", "partitioned audit table"),
    ("added a unique constraint on coupons(code)", "unique coupon codes"),
    ("converted the status column to an enum type", "status column as enum"),
]
ONCALL = [
    ("paged at 3 am by the disk alert on the search cluster", "paged at night for the search cluster disk"),
    ("the queue backlog alert fired twice, both false alarms", "false queue backlog alarms"),
    ("restarted the stuck export worker on Saturday", "stuck export worker restart"),
    ("the payment webhook endpoint returned 502s for 20 minutes", "payment webhook 502 errors on call"),
    ("rotated the expiring SSH host keys", "rotating ssh host keys on call"),
    ("a customer import of 2 million rows slowed the API", "huge customer import slowing the api"),
    ("the status page showed a false outage", "status page false outage"),
    ("the backup job failed and was rerun by hand", "backup job rerun by hand"),
]


# ---- the notes ------------------------------------------------------------------------------------------
def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())[:60]


def _card(name: str, project: str, lines: list[str], zh: bool = False) -> str:
    head = "## 经过" if zh else "## What happened"
    return f"---\nname: {name}\ndescription: {lines[0]}\nproject: {project}\n---\n# {name}\n\n{head}\n" + "".join(
        f"- {x}\n" for x in lines
    )


def _days(start: dt.date, step: int, weekday: int) -> list[dt.date]:
    """Every ``step`` days from the first ``weekday`` on or after ``start``, until LAST."""
    day = start + ((weekday - start.weekday()) % 7) * DAY
    out = []
    while day <= LAST:
        out.append(day)
        day += step * DAY
    return out


def _spread(rng: random.Random, count: int) -> list[dt.date]:
    """``count`` weekdays spread over the 18 months, one in each of ``count`` equal stretches."""
    span = (LAST - FIRST).days
    out = []
    for i in range(count):
        day = FIRST + (span * i // count + rng.randrange(max(1, span // count - 3))) * DAY
        out.append(day - max(0, day.weekday() - 4) * DAY)  # a weekend day moves back to Friday
    return out


Note = tuple[str, dt.date, str, str, str]  # (subject, date, path, text, control question)


def notes() -> list[Note]:
    rng = random.Random(SEED)
    out: list[Note] = []

    def add(subject: str, day: dt.date, name: str, text: str, control: str, folder: str = "") -> None:
        path = folder or f"daily/{day.isoformat()}/{_slug(name)}.md"
        out.append((subject, day, path, text, control))

    for i, day in enumerate(_days(FIRST, 7, 0)):  # billing-api standup, every Monday
        item, control = STANDUP_ITEMS[i % len(STANDUP_ITEMS)]
        who = rng.sample(PEOPLE, 3)
        lines = [
            f"Weekly billing standup: we {item}.",
            f"{who[0]} is {rng.choice(STANDUP_BLOCKERS)}; {who[1]} demoed the week's work.",
            f"{who[2]} takes notes next week.",
        ]
        add(
            "standup", day, f"Billing standup {i + 1}", _card(f"Billing standup {i + 1}", "billing-api", lines), control
        )
    for i, day in enumerate(_days(FIRST, 14, 3)):  # mobile-app 站会, every other Thursday, in Chinese
        item, control = ZH_STANDUP_ITEMS[i % len(ZH_STANDUP_ITEMS)]
        who = rng.sample(PEOPLE, 2)
        lines = [f"移动端双周站会：{item}。", f"{who[0]} 汇报了上线进度，{who[1]} 负责跟进测试。"]
        add(
            "zhanhui",
            day,
            f"移动端站会 {i + 1}",
            _card(f"移动端站会第{i + 1}次", "mobile-app", lines, zh=True),
            control,
        )
    for i, day in enumerate(_spread(rng, len(DEPLOY_CHANGES))):
        change, control = DEPLOY_CHANGES[i]
        lines = [f"Changed the deploy script (scripts/deploy.sh): it now {change}.", "Tested on staging first."]
        add("deploy", day, f"Deploy script: {change}", _card("Deploy script change", "shopfront", lines), control)
    for i, day in enumerate(_spread(rng, len(INCIDENTS))):
        cause, fix = INCIDENTS[i]
        minutes = rng.choice([12, 18, 25, 40, 55, 70, 95])
        lines = [f"Incident: {cause}.", f"About {minutes} minutes of errors for users.", f"Fix: {fix}."]
        add(
            "incident",
            day,
            f"Incident {cause}",
            _card("Production incident", "shopfront", lines),
            f"the incident where {cause}",
        )
    # each package's upgrades in version order, the packages interleaved
    steps = [(i, pkg, old, new) for pkg, vs in UPGRADES.items() for i, (old, new) in enumerate(zip(vs, vs[1:]))]
    releases = [(pkg, old, new) for _, pkg, old, new in sorted(steps)]
    for day, (pkg, old, new) in zip(_spread(rng, len(releases)), releases):
        lines = [f"Upgraded {pkg} from {old} to {new}.", "Ran the full test suite; no code changes were needed."]
        add(
            f"upgrade:{pkg}",
            day,
            f"{pkg} {new} upgrade",
            _card("Dependency upgrade", "billing-api", lines),
            f"the {pkg} {new} upgrade",
        )
    for i, day in enumerate(_spread(rng, len(ZH_CACHE))):  # decision notes, dated in frontmatter
        what, control = ZH_CACHE[i]
        name = f"缓存决定 {i + 1}"
        text = f"---\nname: {name}\ndate: {day.isoformat()}\nproject: shopfront\n---\n# {name}\n\n我们决定：{what}。\n"
        add("cache", day, name, text, control, folder=f"digest/wiki/cache-{i + 1:02d}.md")
    for i, day in enumerate(_spread(rng, 2 * len(MIGRATION_CHANGES))):
        change, control = MIGRATION_CHANGES[i % len(MIGRATION_CHANGES)]
        number = 40 + i
        lines = [f"Database migration {number:04d}: {change}.", "Ran it on staging first; it took under a minute."]
        add(
            "migration", day, f"Migration {number:04d}", _card(f"Migration {number:04d}", "billing-api", lines), control
        )
    for i, (_, day, _, _, _) in enumerate([n for n in out if n[0] == "incident"][:: len(INCIDENTS) // POSTMORTEMS]):
        # written the next week about the incident: its date is not the incident's (a period rule must not bury it)
        cause, fix = INCIDENTS[i * (len(INCIDENTS) // POSTMORTEMS)]
        written = day - day.weekday() * DAY + (7 + rng.randrange(3)) * DAY
        lines = [
            f"Postmortem of last week's outage, when {cause}.",
            f"Root cause and timeline reviewed with {rng.choice(PEOPLE)}; action item: {fix}.",
        ]
        add("postmortem", written, f"Postmortem {i + 1}", _card(f"Postmortem {i + 1}", "shopfront", lines), "")
    for i, day in enumerate(_days(FIRST + 5 * DAY, 21, 5)):  # weekend on-call, every third Saturday
        what, control = ONCALL[i % len(ONCALL)]
        lines = [f"Weekend on-call: {what}.", f"Handed over to {rng.choice(PEOPLE)} on Monday."]
        add("oncall", day, f"On-call weekend {i + 1}", _card(f"On-call weekend {i + 1}", "shopfront", lines), control)
    return out


# ---- the questions ------------------------------------------------------------------------------------
ASK = {
    "standup": ["what did we decide in the billing standup {when}", "billing standup {when}: what was agreed"],
    "zhanhui": ["{when}移动端站会决定了什么", "{when}的站会上定了什么"],
    "deploy": ["what did we change in the deploy script {when}", "deploy script change {when}"],
    "incident": ["which incident did we have {when}", "what went wrong in production {when}"],
    "cache": ["{when}我们决定了什么关于缓存的事", "{when}缓存方面做了什么决定"],
    "migration": ["database migration {when}", "what did the database migration {when} change"],
    "oncall": ["what happened on call {when}", "weekend on-call {when}"],
    "upgrade": ["which version of {pkg} did we upgrade to {when}", "{pkg} upgrade {when}"],
}
ZH = {"zhanhui", "cache"}
ASKED = {"standup": 25, "zhanhui": 20, "deploy": 20, "incident": 20, "cache": 12, "migration": 20, "oncall": 15}


def _week(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - day.weekday() * DAY
    return monday, monday + 6 * DAY


def _month(day: dt.date) -> tuple[dt.date, dt.date]:
    return day.replace(day=1), day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _phrasings(rng: random.Random, day: dt.date, zh: bool, weekend: bool) -> list[tuple[str, dt.date, tuple]]:
    """(words, today, period) ways of naming ``day``'s period, each with a today it is relative to."""
    week_after = _week(day)[0] + (7 + rng.randrange(7)) * DAY
    month_after = _month(day)[1] + (1 + rng.randrange(25)) * DAY
    later = day + (30 + rng.randrange(200)) * DAY
    n = 2 + rng.randrange(4)
    if zh:
        cn_weekday = "一二三四五六日"[day.weekday()]
        return [
            ("上周", week_after, _week(day)),
            ("昨天", day + DAY, (day, day)),
            (f"{n}天前", day + n * DAY, (day, day)),
            ("上个月", month_after, _month(day)),
            (f"{day.year}年{day.month}月", later, _month(day)),
            (f"{day.month}月{day.day}日", day + (20 + rng.randrange(150)) * DAY, (day, day)),
            (f"上周{cn_weekday}", _week(day)[0] + (7 + rng.randrange(7)) * DAY, (day, day)),
            ("本周", day + rng.randrange(7 - day.weekday()) * DAY, _week(day)),
        ]
    nth = (day.day - 1) // 7  # the day's Saturday is the nth of its month
    words = ["first", "second", "third", "fourth"]
    english = [
        ("last week", week_after, _week(day)),
        ("yesterday", day + DAY, (day, day)),
        (f"{n} days ago", day + n * DAY, (day, day)),
        ("two weeks ago", _week(day)[0] + (14 + rng.randrange(7)) * DAY, _week(day)),
        ("last month", month_after, _month(day)),
        (f"in {MONTH[day.month]} {day.year}", later, _month(day)),
        (f"on {day.isoformat()}", later, (day, day)),
        (f"on {MONTH[day.month]} {day.day}, {day.year}", later, (day, day)),
        ("this week", day + rng.randrange(7 - day.weekday()) * DAY, _week(day)),
        (f"last {calendar.day_name[day.weekday()]}", day + (1 + rng.randrange(6)) * DAY, (day, day)),
    ]
    if weekend and nth < 4:
        english.append(
            (f"the {words[nth]} weekend of {MONTH[day.month]} {day.year}", later, (day, day + DAY)),
        )
    return english


def generate() -> tuple[dict[str, str], list[tuple[str, set[str], dt.date]]]:
    rng = random.Random(SEED + 1)
    all_notes = notes()
    files = {path: text for _, _, path, text, _ in all_notes}
    by_subject: dict[str, list[Note]] = {}
    for note in all_notes:
        by_subject.setdefault(note[0], []).append(note)
    queries: list[tuple[str, set[str], dt.date]] = []
    for subject, group in sorted(by_subject.items()):
        kind = subject.partition(":")[0]
        if kind == "postmortem":
            continue
        pkg = subject.partition(":")[2]
        for note in rng.sample(group, min(len(group), ASKED.get(kind, 4))):
            _, day, path, _, _ = note
            options = _phrasings(rng, day, kind in ZH, kind == "oncall")
            rng.shuffle(options)
            for when, today, (start, end) in options:  # the first that singles the note out among its subject's
                if {p for _, d, p, _, _ in group if start <= d <= end} == {path}:
                    template = rng.choice(ASK[kind])
                    queries.append((template.format(when=when, pkg=pkg), {path}, today))
                    break
    # the postmortem of last week's incident, written this week: the answer is dated outside the period
    for _, written, path, text, _ in by_subject["postmortem"]:
        cause = text.split("outage, when ", 1)[1].split(".\n", 1)[0]
        today = written + rng.randrange(1, 7 - written.weekday()) * DAY if written.weekday() < 6 else written
        queries.append((f"what did the postmortem say about last week's outage when {cause}", {path}, today))
    # controls: a note's own detail, no date (today: the day after the last note)
    today = LAST + DAY
    for subject, group in sorted(by_subject.items()):
        for _, _, path, _, control in rng.sample(group, min(len(group), 3 if subject.startswith("upgrade") else 5)):
            if control and sum(c == control for *_, c in all_notes) == 1:
                queries.append((control, {path}, today))
    lookalikes = [  # (question, the control question of its note)
        ("May I see the incident where the TLS certificate of the API gateway expired",
         "the incident where the TLS certificate of the API gateway expired"),
        ("at 10:30 the Postgres connection pool was exhausted, what was the fix",
         "the incident where the Postgres connection pool was exhausted"),
        ("we march on: which deploy script change added a canary step", "canary step in the deploy script"),
        ("the Django 5.0.8 upgrade on python 3.11", "the Django 5.0.8 upgrade"),
    ]  # fmt: skip
    for question, control in lookalikes:
        queries.append((question, {p for *_, p, _, c in all_notes if c == control}, today))
    return files, queries
