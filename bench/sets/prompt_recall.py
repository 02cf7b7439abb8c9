"""Per-prompt recall set (issue 24): a workspace as a Claude Code user accumulates it, and the prompts
typed into sessions, each labelled with the notes that should (or should not) be put in front of the model.

The workspace (``build(root)``): four projects (ledger-api, a Python web service; logslice, a Rust CLI;
orders-etl, a data pipeline; harbor-ui, a frontend app) with 48 target groups — facts, procedures,
debugging lessons, preferences, decisions; a quarter in Chinese — written in reme's own on-disk formats:
daily cards ``daily/YYYY-MM-DD/<name>.md`` with the recorder's frontmatter (name, description, session_id,
source_conversation, project, project_root, cwd) and sections, digest nodes ``digest/<bucket>/<slug>.md``
with ``## Sources`` and the ``project`` key the dream sets, and the day index pages. Around them 300+
unrelated notes, generated (seeded): cards of twenty other projects and general wiki/personal nodes that
share the common programming words (test, database, config, build, error, deploy, regex, date, parse...).

The cases (``cases()``): ``hit`` prompts as typed in a coding session, paraphrased; ``xling`` prompts in
the other language than their note (zh -> en note, en -> zh note); ``unrelated`` ordinary coding prompts
no note bears on, with the same programming words; ``trivial`` turns ("yes", "继续"). Each has the
session's ``cwd`` (a project root: its folder name is the project reme derives, see memory/project.py),
the acceptable note paths (a digest node and the card it was distilled from are both acceptable; empty
for unrelated and trivial) and a ``split`` (dev to choose thresholds on, test to report).

``build(root, first_days=True)`` writes a new user's first days instead: the projects' 64 notes alone,
no unrelated ones (the same cases are asked of it).

Importing this module needs only the standard library; ``build`` uses reme's own writers' helpers
(frontmatter rendering, day index page) so the files are exactly what reme writes.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("hit", "xling", "unrelated", "trivial")
SPLITS = ("dev", "test")
HOME = "/home/mika/src"
PROJECTS = ("ledger-api", "logslice", "orders-etl", "harbor-ui")
NO_NOTES = "new-tool"  # a folder with no notes of its own (a fresh project)
WORKSPACE = "workspace"
MARKER = ".prompt-recall-set"  # marks a workspace this module built (and may therefore rewrite)
SEED = 24
CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Case:
    prompt: str
    cwd: str
    kind: str  # hit | xling | unrelated | trivial
    expected: tuple[str, ...]  # acceptable note paths (workspace-relative); empty = inject nothing
    split: str  # dev | test


@dataclass
class Note:
    path: str
    meta: dict
    body: str
    group: str = ""  # the target group ("A2"); "" for unrelated notes
    links: list[str] = field(default_factory=list)


def cwd_of(project: str) -> str:
    return f"{HOME}/{project}"


def language(text: str) -> str:
    return "zh" if CJK.search(text) else "en"


def session_id(seed: str) -> str:
    h = hashlib.sha256(seed.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def card_path(date: str, name: str) -> str:
    return f"daily/{date}/{name}.md"


# ---- how the writers lay out a note ------------------------------------------------------------------
_HEADINGS = {
    "en": ("What happened", "Conclusions", "Follow-ups", "Source"),
    "zh": ("经过", "结论", "后续", "来源"),
}


def card(
    group: str,
    project: str,
    date: str,
    name: str,
    description: str,
    happened: list[str],
    conclusions: list[str],
    followups: list[str] = (),  # type: ignore[assignment]
    file_name: str | None = None,
) -> Note:
    """A daily card as the recorder writes it (auto_memory.write_card): frontmatter name, description,
    session_id, source_conversation and the transcript's project keys; body sections; the source link."""
    sid = session_id(f"{project}/{date}/{name}")
    link = f"[[session/claude_code/{sid}.jsonl]]"
    heads = _HEADINGS[language(name + description)]
    parts = [f"## {heads[0]}\n\n" + "\n".join(f"- {x}" for x in happened)]
    if conclusions:
        parts.append(f"## {heads[1]}\n\n" + "\n".join(f"- {x}" for x in conclusions))
    if followups:
        parts.append(f"## {heads[2]}\n\n" + "\n".join(f"- [ ] {x}" for x in followups))
    parts.append(f"## {heads[3]}\n\n{link}")
    meta = {
        "name": name,
        "description": description,
        "session_id": sid,
        "source_conversation": link,
        "project": project,
        "project_root": cwd_of(project),
        "cwd": cwd_of(project),
    }
    # the recorder names the file after the name, cleaned (auto_memory.clean_card_name); target names are clean
    return Note(card_path(date, file_name or name), meta, "\n" + "\n\n".join(parts) + "\n", group)


def node(
    group: str,
    path: str,
    name: str,
    description: str,
    body: str,
    sources: list[tuple[Note, str]],
    project: str | None = None,
) -> Note:
    """A digest node as the integrator writes it (name, description, body, ``## Sources`` linking each
    source with a sentence), with the ``project`` key the dream adds for a project-scoped unit."""
    meta = {"name": name, "description": description}
    if project:
        meta["project"] = project
    lines = [f"- {sentence.format(link=f'[[{src.path}]]')}" for src, sentence in sources]
    text = f"{body.strip()}\n\n## Sources\n\n" + "\n".join(lines) + "\n"
    return Note(path, meta, text, group, [src.path for src, _ in sources])


# ---- the target notes: what the user's memory knows about the four projects ---------------------------
def targets() -> list[Note]:
    la, ls, oe, hu = PROJECTS
    n: list[Note] = []
    # ledger-api: FastAPI + SQLAlchemy + Alembic, Postgres in production, Dramatiq jobs, Fly.io
    n.append(
        card(
            "A1",
            la,
            "2026-09-08",
            "Local dev database for ledger-api",
            "Set up the local development database on the new laptop. Locally the service uses SQLite at "
            "data/dev.db (created by `make db-reset`); staging and production run Postgres 15. DATABASE_URL "
            "overrides the default.",
            [
                "`make db-reset` creates `data/dev.db`, runs `alembic upgrade head` and loads `fixtures/seed.yaml`.",
                "`app/settings.py`: `database_url` defaults to `sqlite:///data/dev.db` when `DATABASE_URL` is unset.",
                "Staging and production use Postgres 15 on Fly (the `ledger-db` app).",
            ],
            [
                "Local DB: the SQLite file `data/dev.db`; delete it and run `make db-reset` for a clean state.",
                "Anything Postgres-specific (JSONB queries, advisory locks) is tested against the docker Postgres.",
            ],
        )
    )
    rel = card(
        "A2",
        la,
        "2026-10-14",
        "Release 1.8.0 of ledger-api",
        "Cut release 1.8.0: bumped the version with bump-my-version, moved the changelog entries, tagged v1.8.0 "
        "and promoted the staging image to production after the smoke checks passed.",
        [
            "`bump-my-version bump minor` changed `pyproject.toml` and `app/__init__.py` to 1.8.0.",
            "Moved the Unreleased items of `CHANGELOG.md` under 1.8.0.",
            "`git tag -s v1.8.0 && git push origin v1.8.0`; `release.yml` built the image and deployed "
            "`ledger-api-staging`.",
            "`scripts/smoke.sh https://ledger-api-staging.fly.dev`, then "
            "`fly deploy --image registry.fly.io/ledger-api:v1.8.0 -a ledger-api-prod`.",
        ],
        ["Production is only deployed from a tag's image that passed the staging smoke checks."],
        ["Automate the promotion step in the workflow."],
    )
    n += [
        rel,
        node(
            "A2",
            "digest/procedure/ledger-api-release.md",
            "Releasing ledger-api",
            "The release checklist of ledger-api: version bump, changelog, signed tag, staging smoke check, "
            "promotion of the same image to production.",
            "1. `bump-my-version bump patch|minor|major` (updates `pyproject.toml` and `app/__init__.py`).\n"
            "2. Move the Unreleased entries of `CHANGELOG.md` under the new version.\n"
            "3. `git tag -s vX.Y.Z` and push the tag: `release.yml` builds the image and deploys `ledger-api-staging`.\n"
            "4. `scripts/smoke.sh https://ledger-api-staging.fly.dev` must pass.\n"
            "5. Promote that image: `fly deploy --image registry.fly.io/ledger-api:vX.Y.Z -a ledger-api-prod`.\n\n"
            "Production is never deployed from a branch build.",
            [(rel, "Done this way for 1.8.0 in {link}.")],
            la,
        ),
    ]
    n.append(
        card(
            "A3",
            la,
            "2026-09-23",
            "Flaky migration test under xdist",
            "tests/test_migrations.py failed in about one CI run out of four. With pytest-xdist every worker ran "
            "`alembic upgrade head` against the same Postgres schema; now each worker gets its own schema.",
            [
                'Failure only with `-n auto`: `DuplicateTable: relation "alembic_version" already exists`.',
                "Two workers raced on the shared `public` schema.",
                "`conftest.py` creates `test_{worker_id}` and sets `search_path` per worker; 30 CI reruns green.",
            ],
            ["Tests that touch the schema are isolated per xdist worker; never share a schema between workers."],
        )
    )
    n.append(
        card(
            "A4",
            la,
            "2026-10-02",
            "调试发票金额差一分钱",
            "排查发票总额偶尔比明细合计少 0.01 的问题。原因是计算税额时把金额转成了 float；改为全程使用 Decimal，"
            "最后用 ROUND_HALF_EVEN 保留两位小数。",
            [
                "复现：三行明细 19.99 × 3，加 7% 税，总额算出 64.16，应为 64.17。",
                "`app/billing/tax.py` 里 `float(line.amount) * rate` 引入了二进制误差。",
                "改成 `Decimal`，汇总后 `quantize(Decimal('0.01'), rounding=ROUND_HALF_EVEN)`；补了 hypothesis 属性测试。",
            ],
            ["金额一律用 Decimal，数据库列用 NUMERIC(12,2)，禁止 float。", "只在最后汇总时舍入一次，不要逐行舍入。"],
        )
    )
    pag = card(
        "A5",
        la,
        "2026-09-15",
        "Pagination design for transactions endpoint",
        "Decided how GET /transactions pages through results: an opaque cursor encoding (created_at, id) instead "
        "of offset and limit, because offsets skipped and repeated rows while transactions were inserted and got "
        "slow past 100k rows.",
        [
            "Measured `OFFSET 200000` at 1.4 s on staging; the keyset query took 6 ms.",
            "Wrote `app/pagination.py` with `encode_cursor` / `decode_cursor` (base64 of JSON).",
        ],
        ["All new list endpoints use the cursor helper; `page` and `offset` parameters are not accepted."],
    )
    n += [
        pag,
        node(
            "A5",
            "digest/wiki/ledger-api-cursor-pagination.md",
            "Cursor pagination in ledger-api",
            "Why ledger-api's list endpoints use opaque cursors, not offsets.",
            "ledger-api's list endpoints page with an opaque cursor (base64 of `created_at` and `id`) plus `limit`. "
            "Offset pagination is not used: rows shift while transactions are inserted, and deep offsets are slow "
            "(1.4 s at offset 200k against 6 ms for the keyset query). Use the helpers in `app/pagination.py`.",
            [(pag, "Decided in {link}.")],
            la,
        ),
    ]
    n.append(
        card(
            "A6",
            la,
            "2026-09-10",
            "Auth token lifetimes",
            "Reviewed authentication in ledger-api: access tokens are JWTs valid 15 minutes; refresh tokens are "
            "random strings kept in Redis for 30 days and rotated on every use.",
            [
                "`app/auth/tokens.py`: `ACCESS_TTL = timedelta(minutes=15)`.",
                "Refresh tokens are stored hashed in Redis under `refresh:{sha256}` with a 30-day TTL.",
                "A reused refresh token revokes its whole family (theft detection).",
            ],
            ["Keep the 15-minute access lifetime; the mobile app refreshes silently."],
        )
    )
    n.append(
        card(
            "A7",
            la,
            "2026-10-21",
            "Memory growth in load test",
            "During the k6 load test the API workers grew from 180 MB to 1.2 GB. The leak came from job callbacks "
            "opening SQLAlchemy sessions that were never closed; sessions now always come from a context manager.",
            [
                "`k6 run load/transfers.js` for 20 minutes; RSS climbed steadily.",
                "`memray` showed `Session` objects kept alive by `app/jobs/notify.py`.",
                "Replaced bare `SessionLocal()` with `with SessionLocal() as db:`; RSS flat at 210 MB.",
            ],
            ["Never create a session without a context manager; checked in review."],
        )
    )
    it = card(
        "A8",
        la,
        "2026-09-29",
        "本地跑集成测试的步骤",
        "整理了在本地运行 ledger-api 集成测试的步骤：先用 docker compose 启动 Postgres 和 Redis，再用 .env.test "
        "的配置执行 make test-integration。",
        [
            "`docker compose -f compose.test.yml up -d postgres redis`。",
            "复制 `.env.test.example` 为 `.env.test`，其中 `DATABASE_URL` 指向 5433 端口。",
            "`make test-integration` 只跑带 `-m integration` 标记的用例，大约 4 分钟。",
        ],
        ["集成测试必须连真实的 Postgres，不能用 SQLite。"],
    )
    n += [
        it,
        node(
            "A8",
            "digest/procedure/ledger-api-集成测试.md",
            "ledger-api 本地运行集成测试",
            "在自己机器上跑 ledger-api 集成测试的三个步骤。",
            "1. `docker compose -f compose.test.yml up -d postgres redis`（Postgres 映射到 5433）。\n"
            "2. 用 `.env.test.example` 生成 `.env.test`。\n"
            "3. `make test-integration`（只跑 `-m integration` 的用例，约 4 分钟）。\n\n"
            "集成测试只对真实 Postgres 有效，SQLite 上通过不算数。",
            [(it, "步骤记录于 {link}。")],
            la,
        ),
    ]
    n.append(
        card(
            "A9",
            la,
            "2026-09-18",
            "Background jobs with Dramatiq instead of Celery",
            "Chose Dramatiq with Redis as the broker for ledger-api's background jobs (statement PDFs, webhook "
            "fan-out) over Celery: fewer moving parts, no beat scheduler, retries with backoff built in.",
            [
                "Compared Celery 5 and Dramatiq on the statement-PDF job.",
                "Celery needed a result backend and beat for our two periodic jobs; Dramatiq with periodiq covers both.",
            ],
            [
                "Decision: Dramatiq, broker Redis DB 2; at most 5 retries with exponential backoff.",
                "Revisit only if we need canvas-style workflows (chords).",
            ],
        )
    )
    n.append(
        card(
            "A10",
            la,
            "2026-10-09",
            "Testing Stripe webhooks locally",
            "Got Stripe webhooks working against the local server: the Stripe CLI forwards events to "
            "/webhooks/stripe and prints a signing secret that goes into STRIPE_WEBHOOK_SECRET in .env.",
            [
                "`stripe listen --forward-to localhost:8000/webhooks/stripe`.",
                "Copied the `whsec_…` it prints into `.env`; it differs from the dashboard's secret.",
                "`stripe trigger invoice.paid` sends a test event.",
            ],
            ["The CLI's signing secret changes with each `stripe listen` session."],
        )
    )
    n.append(
        card(
            "A11",
            la,
            "2026-10-27",
            "时间戳与时区约定",
            "确认 ledger-api 的时间约定：数据库一律存 UTC（timestamptz），API 返回带 Z 的 ISO 8601 字符串，"
            "换算成用户所在时区由前端负责。",
            [
                "发现 `/transactions` 有两处返回了本地时间（`datetime.now()`）。",
                "统一改为 `datetime.now(tz=UTC)`，Pydantic 序列化为 `2026-10-27T08:00:00Z`。",
            ],
            ["后端不做时区换算；禁止使用不带时区的 datetime。"],
        )
    )
    rev = card(
        "A12",
        la,
        "2026-11-03",
        "Review of the accounts response change",
        "Reviewed a change to the /accounts response model. The user insisted that every change to a request or "
        "response model comes with a regenerated OpenAPI snapshot (`make openapi`, committed as openapi.json), "
        "because harbor-ui generates its client from it.",
        [
            "The PR changed `AccountOut` but `openapi.json` was stale; CI's `openapi-diff` job failed.",
            "Ran `make openapi` and committed the new snapshot.",
        ],
        ["User preference: the schema change and the snapshot go in the same commit."],
    )
    n += [
        rev,
        node(
            "A12",
            "digest/personal/ledger-api-openapi-snapshot.md",
            "ledger-api: regenerate the OpenAPI snapshot with every API change",
            "The user wants openapi.json regenerated and committed with each request/response model change.",
            "In ledger-api, any change to a request or response model is committed together with the regenerated "
            "`openapi.json` (`make openapi`). harbor-ui builds its typed client from that file, and CI's "
            "`openapi-diff` job fails on a stale snapshot.",
            [(rev, "Asked for in {link}.")],
            la,
        ),
    ]

    # logslice: a Rust CLI that slices and filters log files
    n.append(
        card(
            "B1",
            ls,
            "2026-09-04",
            "MSRV policy for logslice",
            "Set logslice's minimum supported Rust version to 1.74, the version clap 4.5 needs, declared as "
            "rust-version in Cargo.toml and checked by a CI job.",
            [
                "`cargo msrv find` reported 1.74.0.",
                'Added `rust-version = "1.74"` to `Cargo.toml` and a CI job running `cargo +1.74 check --locked`.',
            ],
            ["MSRV bumps only in minor releases, noted in the changelog."],
        )
    )
    pub = card(
        "B2",
        ls,
        "2026-10-06",
        "Publishing logslice 0.9.0",
        "Published logslice 0.9.0: cargo-release bumped the version and pushed the tag, cargo-dist's GitHub "
        "workflow built the binaries for Linux, macOS and Windows and updated the Homebrew tap, then the crate "
        "went to crates.io.",
        [
            "`cargo release minor --execute` bumped `Cargo.toml`, committed, tagged `v0.9.0` and pushed.",
            "cargo-dist's `release.yml` built Linux musl (x86_64, aarch64), macOS universal and Windows archives.",
            "The workflow pushed the formula to `mika/homebrew-tap`.",
            "`cargo publish` last, once the binaries were up.",
        ],
        ["crates.io comes last: a yanked crate is worse than a missing binary."],
    )
    n += [
        pub,
        node(
            "B2",
            "digest/procedure/logslice-release.md",
            "Releasing logslice",
            "How a logslice version is published: cargo-release, cargo-dist binaries and Homebrew tap, then crates.io.",
            "1. Update `CHANGELOG.md`.\n"
            "2. `cargo release <level> --execute`: bumps `Cargo.toml`, commits, tags `vX.Y.Z` and pushes.\n"
            "3. The tag runs cargo-dist's `release.yml`: Linux musl (x86_64, aarch64), macOS universal and Windows "
            "archives, the GitHub release and the formula in `mika/homebrew-tap`.\n"
            "4. `cargo publish` once the binaries are up.",
            [(pub, "First done this way for 0.9.0: {link}.")],
            ls,
        ),
    ]
    n.append(
        card(
            "B3",
            ls,
            "2026-09-16",
            "Slow filtering on large files",
            "`logslice --grep` on a 2 GB file took 95 s. The pattern was compiled with Regex::new inside the "
            "per-line loop; compiling it once in Filter::new brought it to 2.3 s.",
            [
                "`cargo flamegraph -- --grep 'status=5\\d\\d' big.log` showed 97% of the time in `Regex::new`.",
                "Moved compilation into `Filter::new`; added a criterion bench `filter_big_file`.",
            ],
            ["Compile patterns once per run; clippy's `regex_creation_in_loops` lint is on."],
        )
    )
    n.append(
        card(
            "B4",
            ls,
            "2026-10-13",
            "快照测试在 Windows 上失败",
            "insta 快照测试只在 Windows CI 上失败，原因是 git 检出时把 .snap 文件转换成了 CRLF。"
            "在 .gitattributes 里加上 `*.snap text eol=lf` 后恢复正常。",
            [
                "失败信息显示每行多了一个 `\\r`。",
                "Windows runner 默认 `core.autocrlf=true`。",
                "添加 `.gitattributes`：`*.snap text eol=lf`，重新检出后通过。",
            ],
            ["测试输出统一用 `\\n`；新增的快照文件类型也要写进 .gitattributes。"],
        )
    )
    n.append(
        card(
            "B5",
            ls,
            "2026-10-30",
            "Switching from chrono to jiff",
            "Decided to replace chrono with jiff for timestamp handling in logslice: it handles IANA time zones and "
            "DST gaps correctly, and `--since 2h` spans map directly to jiff::Span.",
            [
                "A log line at `2026-03-29 02:30 Europe/Berlin` (inside the DST gap) parsed silently wrong with chrono.",
                "Prototype with `jiff::civil::DateTime::strptime` and `to_zoned`: a correct error.",
                "Replaced chrono in `src/time.rs`; binary size +180 KB.",
            ],
            ["Decision: jiff for all time handling; chrono removed from the dependencies."],
        )
    )
    n.append(
        card(
            "B6",
            ls,
            "2026-09-25",
            "Benchmark baseline workflow",
            "Set up criterion benchmarks for logslice: `cargo bench --bench parse -- --save-baseline main` on main, "
            "then `-- --baseline main` on a branch to compare; regressions over 5% are flagged in review.",
            [
                "Added `benches/parse.rs` with JSON, logfmt and syslog inputs.",
                "The baseline from main lives under `target/criterion`.",
            ],
            ["A branch more than 5% slower on any parse bench needs a justification in the PR."],
        )
    )
    err = card(
        "B7",
        ls,
        "2026-09-11",
        "Error handling review",
        "Reviewed error handling in logslice. The user wants no unwrap() or expect() in the library crate: errors "
        "are typed with thiserror in logslice-core and wrapped with anyhow context only in the binary.",
        [
            "Found 14 `unwrap()` calls in `logslice-core`; replaced them with `?` and a `ParseError` enum.",
            "`main.rs` adds context with `anyhow::Context`.",
        ],
        ["Preference: unwrap only in tests, and in `main` for impossible cases with a comment."],
    )
    n += [
        err,
        node(
            "B7",
            "digest/personal/logslice-error-handling.md",
            "logslice: no unwrap in library code",
            "How errors are handled in logslice's library crate and binary.",
            "In logslice the library crate (`logslice-core`) never calls `unwrap()` or `expect()`: errors are "
            "`thiserror` enums and bubble up with `?`. Only the binary uses `anyhow` and adds context. Tests may "
            "unwrap.",
            [(err, "Stated during {link}.")],
            ls,
        ),
    ]
    n.append(
        card(
            "B8",
            ls,
            "2026-10-20",
            "aarch64 linker error",
            'Building logslice for aarch64-unknown-linux-gnu failed with "linker `aarch64-linux-gnu-gcc` not '
            'found". Plain cargo cannot link for another architecture without a toolchain; `cross build` works '
            "through its docker image.",
            [
                "`cargo build --target aarch64-unknown-linux-gnu` → `error: linker aarch64-linux-gnu-gcc not found`.",
                "`cargo install cross`; `cross build --release --target aarch64-unknown-linux-gnu` succeeded.",
            ],
            ["Local ARM builds use cross; release binaries come from cargo-dist in CI."],
        )
    )
    n.append(
        card(
            "B9",
            ls,
            "2026-11-05",
            "日志格式自动识别",
            "梳理了 logslice 如何自动识别日志格式：读取前 64 行，依次尝试 JSON、logfmt 和 syslog 正则，"
            "按匹配行数投票，票数最多的格式胜出；`--format` 可以强制指定。",
            [
                "一个混合 JSON 和纯文本的文件被识别成了 syslog。",
                "把投票阈值改为至少 60% 的行匹配，否则报错并提示使用 `--format`。",
            ],
            ["识别不可靠时宁可报错，也不要猜。"],
        )
    )
    n.append(
        card(
            "B10",
            ls,
            "2026-09-30",
            "Panic on broken pipe",
            '`logslice big.log | head` panicked with "failed printing to stdout: Broken pipe". println! panics '
            "on EPIPE; output now goes through a locked BufWriter and io::ErrorKind::BrokenPipe ends the program "
            "quietly with exit code 0.",
            [
                "Reproduced with `logslice big.log | head -1`.",
                "Replaced `println!` with `writeln!(out, ...)?` and matched `BrokenPipe` in `main`.",
            ],
            ["Every output path uses the writer; no `println!` outside `main.rs`."],
        )
    )
    cfg = card(
        "B11",
        ls,
        "2026-11-12",
        "讨论是否加配置文件",
        "讨论了要不要给 logslice 加配置文件。决定不加：默认值只通过命令行参数和 LOGSLICE_ 开头的环境变量设置，"
        "避免再维护一种格式和一套查找路径。",
        ["有用户提 issue 想要 `~/.config/logslice.toml`。", "参考了 ripgrep 的做法（RIPGREP_CONFIG_PATH）。"],
        ["决定：不做配置文件；用 shell alias 或 `LOGSLICE_FORMAT`、`LOGSLICE_COLOR` 等环境变量。"],
    )
    n += [
        cfg,
        node(
            "B11",
            "digest/wiki/logslice-不做配置文件.md",
            "logslice 不支持配置文件",
            "logslice 的默认选项只来自命令行参数和环境变量，不读配置文件。",
            "logslice 不读配置文件。默认选项只来自命令行参数和 `LOGSLICE_` 前缀的环境变量（如 `LOGSLICE_FORMAT`、"
            "`LOGSLICE_COLOR`）；需要固定参数的用户用 shell alias。理由：少一种格式，少一套查找路径和优先级规则。",
            [(cfg, "讨论记录 {link}。")],
            ls,
        ),
    ]

    # orders-etl: Dagster + DuckDB + dbt, a vendor's nightly order files
    n.append(
        card(
            "C1",
            oe,
            "2026-09-03",
            "Vendor file landing zones",
            "Mapped where orders-etl reads and writes: the vendor's SFTP drops are copied to "
            "s3://acme-raw/orders/YYYY/MM/DD/, the cleaned Parquet goes to s3://acme-lake/orders/ partitioned by "
            "order_date.",
            [
                "`assets/ingest.py` copies `/outbound/*.csv.gz` from the vendor SFTP every night.",
                "Raw files are immutable; reprocessing reads them again.",
            ],
            ["Nothing writes into `acme-raw` except the ingest asset."],
        )
    )
    back = card(
        "C2",
        oe,
        "2026-10-12",
        "Backfill of September orders",
        "Re-ran orders-etl for 2026-09-01..2026-09-30 after the vendor corrected prices: a Dagster partition "
        "backfill with at most 4 partitions at a time, then the dbt models downstream.",
        [
            "`dagster job backfill -j orders_daily --partitions 2026-09-01...2026-09-30` with `max_concurrent=4`.",
            "`dbt build --select orders_staging+` after the backfill.",
            "30 partitions in 52 minutes.",
        ],
        ["Backfills run per day partition, never as one range query; 4 at a time keeps DuckDB within memory."],
    )
    n += [
        back,
        node(
            "C2",
            "digest/procedure/orders-etl-backfill.md",
            "Backfilling orders-etl",
            "How to reprocess a range of days in orders-etl: Dagster partition backfill, 4 at a time, then dbt.",
            "1. Launch a partition backfill: `dagster job backfill -j orders_daily --partitions <from>...<to>` "
            "(at most 4 concurrent runs).\n"
            "2. When it finishes, rebuild downstream models: `dbt build --select orders_staging+`.\n"
            "3. Check row counts per day in `marts.orders_daily_counts`.",
            [(back, "Done for September in {link}.")],
            oe,
        ),
    ]
    n.append(
        card(
            "C3",
            oe,
            "2026-10-19",
            "Duplicate orders after vendor resend",
            "The orders mart listed some orders twice after the vendor resent two files. Staging now keeps one row "
            "per order_id, the one with the latest updated_at (qualify row_number() = 1).",
            [
                "1,284 duplicate `order_id`s in `marts.orders` for 2026-10-17.",
                "Both the original and the resent file were ingested (different file names).",
                "Added `qualify row_number() over (partition by order_id order by updated_at desc) = 1` in "
                "`stg_orders.sql` and a dbt `unique` test.",
            ],
            ["Deduplicate in staging on the business key, not on file names."],
        )
    )
    n.append(
        card(
            "C4",
            oe,
            "2026-09-21",
            "DuckDB 内存不足",
            "orders 和 line_items 两张大表 join 时 DuckDB 报 Out of Memory。设置 memory_limit 为 6GB、"
            "指定 temp_directory 允许落盘，并把 threads 降到 4 之后顺利完成。",
            [
                "报错：`Out of Memory Error: could not allocate block of size 256KB`。",
                "机器只有 8 GB 内存，DuckDB 默认用 80%，和 Dagster 进程抢内存。",
                "在 `resources/duckdb.py` 里 `SET memory_limit='6GB'; SET temp_directory='/tmp/duckdb'; SET threads=4;`。",
            ],
            ["连接时统一设置这三个参数，不要依赖默认值。"],
        )
    )
    n.append(
        card(
            "C5",
            oe,
            "2026-09-09",
            "Why DuckDB and dbt, not Spark",
            "Decided the stack of orders-etl: DuckDB with dbt-duckdb on one machine instead of a Spark cluster. "
            "The data is about 30 GB a day, fits on one box, and nobody on the team would run a cluster.",
            [
                "Benchmarked the daily transform: DuckDB 6 min on an 8-core VM; Spark on EMR 11 min plus cluster start.",
                "Estimated cost: €40/month for the VM against ~€600/month for EMR.",
            ],
            ["Decision: DuckDB + dbt; reconsider above ~200 GB a day."],
        )
    )
    n.append(
        card(
            "C6",
            oe,
            "2026-09-14",
            "Nightly schedule and deadline",
            "The orders_daily job runs at 02:30 Europe/Berlin and must finish by 07:00, when finance's morning "
            "report reads the mart; a Dagster sensor pages #data-oncall when it is late.",
            [
                'Schedule: `cron_schedule="30 2 * * *"`, `execution_timezone="Europe/Berlin"`.',
                "Added a freshness check on `marts.orders` with a 07:00 deadline.",
            ],
            ["Typical runtime is 70 minutes, which leaves room for one retry."],
        )
    )
    dq = card(
        "C7",
        oe,
        "2026-10-26",
        "处理 dbt 测试失败",
        "夜间 dbt test 有两个检查失败（amount 为负、currency 为空）。按流程查看 run_results.json，把出问题的原始"
        "文件移到 quarantine/，在 #data-oncall 通报，修复后只重跑受影响的分区。",
        [
            "`target/run_results.json` 显示 `not_negative_amount` 和 `not_null_currency` 失败。",
            "问题来自 10-25 的一个文件，已移到 `s3://acme-raw/quarantine/`。",
            "联系供应商重发，之后重跑 10-25 分区。",
        ],
        ["质量检查失败时阻断下游刷新，不要跳过测试。"],
    )
    n += [
        dq,
        node(
            "C7",
            "digest/procedure/orders-etl-数据质量检查失败.md",
            "orders-etl 数据质量检查失败的处理",
            "夜间 dbt 检查不通过时的处理步骤。",
            "1. 看 `target/run_results.json`，找出失败的检查和对应日期。\n"
            "2. 把有问题的原始文件移到 `s3://acme-raw/quarantine/`。\n"
            "3. 在 #data-oncall 通报，联系供应商重发。\n"
            "4. 只重跑受影响的分区（见 [[digest/procedure/orders-etl-backfill.md]]）。\n\n"
            "检查失败时下游刷新保持阻断，不能跳过。",
            [(dq, "处理记录 {link}。")],
            oe,
        ),
    ]
    n.append(
        card(
            "C8",
            oe,
            "2026-11-09",
            "Late evening orders on the wrong day",
            "Orders placed after 23:00 appeared under the next day in the daily mart. The partition date was taken "
            "from the UTC timestamp while the business day is Europe/Berlin's; the key now converts to local time "
            "first.",
            [
                "Finance reported that 2026-11-07 was missing 312 orders that showed up on 2026-11-08.",
                "`order_date = ts::date` used UTC; changed to `(ts at time zone 'Europe/Berlin')::date`.",
                "Backfilled the last 30 days.",
            ],
            ["Business dates are Europe/Berlin dates; timestamps stay UTC."],
        )
    )
    sql = card(
        "C9",
        oe,
        "2026-09-17",
        "SQL style for the dbt models",
        "Agreed the SQL style of orders-etl's dbt models with the user: lowercase keywords, CTEs instead of nested "
        "subqueries, one model per file, and sqlfluff with the repository's .sqlfluff enforcing it in CI.",
        ["Reformatted `models/staging/*.sql` with `sqlfluff fix`.", "Added a `sqlfluff lint` step to CI."],
        ["The user wants CTEs named after what they hold (`paid_orders`), never `t1` or `sub`."],
    )
    n += [
        sql,
        node(
            "C9",
            "digest/personal/orders-etl-sql-style.md",
            "orders-etl SQL style",
            "How the user wants the dbt SQL of orders-etl written.",
            "In orders-etl the dbt SQL uses lowercase keywords and CTEs instead of nested subqueries, named after "
            "what they hold (`paid_orders`); one model per file. `sqlfluff lint` with the repository's `.sqlfluff` "
            "runs in CI; `sqlfluff fix` formats.",
            [(sql, "Agreed in {link}.")],
            oe,
        ),
    ]
    n.append(
        card(
            "C10",
            oe,
            "2026-10-01",
            "Vendor SFTP credentials",
            "Moved the vendor SFTP private key out of the .env file into AWS Secrets Manager (secret "
            "orders-etl/sftp); the ingest asset reads it at run time through a Dagster resource.",
            [
                "Found the key in a local `.env` that had been shared over chat.",
                "Rotated the key with the vendor; stored the new one as `orders-etl/sftp`.",
            ],
            ["Secrets live only in Secrets Manager; `.env` holds non-secret settings."],
        )
    )
    n.append(
        card(
            "C11",
            oe,
            "2026-11-18",
            "New column in the vendor export",
            "The vendor added a sales_channel column to the orders export. Added it to the data contract "
            "contracts/orders.yml, the staging model and the mart; the contract check had stopped the run.",
            [
                "Ingest failed: `ContractError: unexpected column sales_channel`.",
                "Added the column (string, nullable) to `contracts/orders.yml`, `stg_orders.sql` and `orders.sql`.",
            ],
            ["New vendor columns need a contract change first; the pipeline refuses unknown columns."],
        )
    )

    # harbor-ui: React + TypeScript + Vite, pnpm, Vitest, Playwright, Tailwind
    n.append(
        card(
            "D1",
            hu,
            "2026-09-07",
            "Local dev server setup",
            "Set up harbor-ui locally: Vite runs on port 5180 (5173 belongs to another app), and /api is proxied to "
            "ledger-api on localhost:8000 so cookies work without CORS.",
            [
                "`pnpm dev` failed with EADDRINUSE on 5173.",
                "`server.port = 5180` and `strictPort: true` in `vite.config.ts`; proxy `/api` → `http://localhost:8000`.",
            ],
            ["Frontend: http://localhost:5180; backend ledger-api on 8000."],
        )
    )
    dep = card(
        "D2",
        hu,
        "2026-10-16",
        "Production deploy of harbor-ui 2.3",
        "Deployed harbor-ui 2.3: the PR's Vercel preview was checked, the merge to main built the production "
        "candidate, and it was promoted with vercel promote after checking the Sentry release for new errors.",
        [
            "Went through the QA checklist on the PR's preview URL.",
            "Merge to main → Vercel built the candidate; `vercel promote <url> --scope acme`.",
            "Source maps are uploaded with `sentry-cli sourcemaps upload` in the build step.",
        ],
        ["Production is promoted by hand after the preview and the Sentry check; no automatic promotion."],
    )
    n += [
        dep,
        node(
            "D2",
            "digest/procedure/harbor-ui-deploy.md",
            "Deploying harbor-ui",
            "From merged PR to production for harbor-ui, and how to roll back.",
            "1. Every PR gets a Vercel preview; run the QA checklist on it.\n"
            "2. Merging to main builds the production candidate (source maps go to Sentry in the build).\n"
            "3. Check the Sentry release for new errors, then `vercel promote <deployment-url> --scope acme`.\n"
            "4. Roll back with `vercel rollback` if needed.",
            [(dep, "Done for 2.3 in {link}.")],
            hu,
        ),
    ]
    n.append(
        card(
            "D3",
            hu,
            "2026-09-24",
            "Flaky Playwright tests on CI",
            "Playwright end-to-end tests timed out at random on CI: clicks landed while CSS transitions were still "
            "running, and some steps waited fixed times. Set reducedMotion: 'reduce' and replaced waitForTimeout "
            "with web-first assertions.",
            [
                "3 of 10 CI runs failed in `checkout.spec.ts` and `filters.spec.ts`.",
                "The trace viewer showed clicks on elements still animating.",
                "`use: { reducedMotion: 'reduce' }` in `playwright.config.ts`; removed every `page.waitForTimeout`.",
            ],
            ["Never `waitForTimeout` in e2e tests; use `expect(locator).toBeVisible()` and friends."],
        )
    )
    n.append(
        card(
            "D4",
            hu,
            "2026-09-12",
            "全局状态管理选型",
            "讨论 harbor-ui 的全局状态管理，决定用 Zustand 而不是 Redux Toolkit：需要共享的状态很少"
            "（用户信息、筛选条件），服务端数据交给 TanStack Query。",
            [
                "列出需要全局共享的状态：当前用户、主题、筛选条件。",
                "服务端数据（账户、交易）用 TanStack Query 缓存。",
                "写了 `src/stores/filters.ts` 作为示例。",
            ],
            ["决定：Zustand + TanStack Query，不引入 Redux。"],
        )
    )
    sty = card(
        "D5",
        hu,
        "2026-10-04",
        "Styling conventions review",
        "While reviewing the filter panel, the user asked to drop the new CSS module: harbor-ui styles with "
        "Tailwind utility classes only, shared variants through cva, and components live in PascalCase .tsx files.",
        [
            "Replaced `FilterPanel.module.css` with Tailwind classes.",
            "Extracted the button variants with `cva` into `src/ui/button.ts`.",
        ],
        ["Preference: no CSS modules or styled-components in harbor-ui."],
    )
    n += [
        sty,
        node(
            "D5",
            "digest/personal/harbor-ui-styling.md",
            "harbor-ui: Tailwind only, no CSS modules",
            "How components are styled in harbor-ui.",
            "harbor-ui is styled with Tailwind utility classes only; repeated variants go through `cva` (`src/ui/`). "
            "No CSS modules, no styled-components. Components are PascalCase `.tsx` files.",
            [(sty, "Asked for in {link}.")],
            hu,
        ),
    ]
    n.append(
        card(
            "D6",
            hu,
            "2026-10-23",
            "Bundle size jump",
            "The main JS bundle grew from 310 KB to 890 KB. rollup-plugin-visualizer showed moment and all its "
            "locales pulled in by the chart adapter; switched to the date-fns adapter, back to 330 KB, and added a "
            "size-limit budget in CI.",
            [
                "`pnpm build --mode analyze` opened the visualizer treemap.",
                "`chartjs-adapter-moment` imported moment with 120 locales.",
                "Switched to `chartjs-adapter-date-fns`; `size-limit` fails CI above 400 KB.",
            ],
            ["Check the treemap before adding a dependency that pulls in locales."],
        )
    )
    n.append(
        card(
            "D7",
            hu,
            "2026-11-02",
            "国际化文案流程",
            "整理了 harbor-ui 的国际化流程：文案放在 src/locales/en.json 和 zh-CN.json，用 i18next；"
            "新增文案后运行 pnpm i18n:extract 提取 key，中文由用户自己翻译。",
            [
                "发现 23 处硬编码的英文字符串。",
                "配置 `i18next-parser`，`pnpm i18n:extract` 会把新 key 写进两个 json 文件。",
            ],
            ["组件里不允许出现硬编码文案；key 用 `页面.区块.含义` 的形式。"],
        )
    )
    n.append(
        card(
            "D8",
            hu,
            "2026-10-10",
            "Feature flags in harbor-ui",
            "harbor-ui reads feature flags from Unleash through the proxy client; locally a ?flags=name1,name2 "
            "query parameter or VITE_FLAGS overrides them, which is how new screens are tried before rollout.",
            [
                "`useFlag('new-statements')` wraps `@unleash/proxy-client-react`.",
                "Added the override in `src/flags.ts`, for dev builds only.",
            ],
            ["Overrides are compiled out of production builds."],
        )
    )
    gen = card(
        "D9",
        hu,
        "2026-11-04",
        "API client out of date",
        "Type errors appeared after ledger-api changed the accounts response. Regenerated harbor-ui's typed client "
        "from ledger-api's openapi.json with openapi-typescript (`pnpm gen:api`) and fixed the two components that "
        "used the renamed field.",
        [
            "`pnpm gen:api` reads `../ledger-api/openapi.json` and writes `src/api/schema.d.ts`.",
            "Fixed `AccountCard.tsx` and `AccountList.tsx`.",
        ],
        ["Never edit `schema.d.ts` by hand."],
    )
    n += [
        gen,
        node(
            "D9",
            "digest/procedure/harbor-ui-api-client.md",
            "Regenerating harbor-ui's API client",
            "How harbor-ui's API types are regenerated from ledger-api's OpenAPI file.",
            "harbor-ui's API types come from ledger-api's `openapi.json`: run `pnpm gen:api` (openapi-typescript; "
            "writes `src/api/schema.d.ts`, never edited by hand), then fix the type errors it reveals.",
            [(gen, "Needed after the accounts change in {link}.")],
            hu,
        ),
    ]
    n.append(
        card(
            "D10",
            hu,
            "2026-09-19",
            "document is not defined in Vitest",
            "A component test failed with ReferenceError: document is not defined. Vitest runs in the node "
            "environment by default here; component tests now get jsdom through a workspace project for "
            "src/components/**.",
            [
                "`pnpm test` → `ReferenceError: document is not defined` in `Modal.test.tsx`.",
                "Added a Vitest workspace with a `components` project using `environment: 'jsdom'`.",
            ],
            ["Pure logic tests stay in node (faster); component tests run in jsdom."],
        )
    )
    n.append(
        card(
            "D11",
            hu,
            "2026-11-16",
            "Safari 上日期显示 Invalid Date",
            "交易列表在 iPhone Safari 上日期显示为 Invalid Date。原因是 `new Date('2026-11-16 10:00:00')` 这种带空格的"
            "格式 Safari 不支持；改用 date-fns 的 parseISO，并要求后端返回带 T 的 ISO 字符串。",
            [
                "只在 Safari 上复现，Chrome 正常。",
                "`src/utils/format.ts` 里直接用了 `new Date(str)`。",
                "改为 `parseISO`，加了对应的单元测试。",
            ],
            ["禁止用 `new Date(string)` 解析日期字符串。"],
        )
    )

    # general: the user's own habits, true in every project (their sources are other projects' cards)
    py = card(
        "G1",
        "pyutils",
        "2026-09-06",
        "New package skeleton for pyutils",
        "Started the pyutils package the way the user sets up every Python project: uv init --package with the "
        "src layout, Python 3.12, ruff for lint and format at line length 100, pytest; no poetry, no black.",
        [
            "`uv init --package pyutils --python 3.12`.",
            "`ruff` configured in `pyproject.toml` (line-length 100, rules E, F, I, B).",
            "`pytest` with `-p no:cacheprovider` in `addopts`.",
        ],
        ["The user sets up all Python projects this way."],
    )
    git = card(
        "G2",
        "dotfiles",
        "2026-10-08",
        "整理 git 配置",
        "整理 dotfiles 里的 git 配置时确认了用户的分支习惯：功能分支总是 rebase 到最新的 main 上，不做 merge；"
        "合并前压缩成一个提交。",
        ["`git config --global pull.rebase true`。", "加了别名 `git sync` = `fetch` + `rebase origin/main`。"],
        ["用户习惯：分支 rebase 到 main，不要 merge main 进分支；合并前 squash。"],
    )
    ssh = card(
        "G3",
        "dotfiles",
        "2026-11-21",
        "SSH agent with 1Password",
        "Moved the GitHub SSH key into 1Password and pointed ssh at its agent; the passphrase prompts in tmux came "
        "from shells started before the change, which still had the old SSH_AUTH_SOCK.",
        [
            "`~/.ssh/config`: `Host *` → `IdentityAgent ~/.1password/agent.sock`.",
            "Removed the key file from `~/.ssh`.",
            "Old tmux panes kept asking for the passphrase; new panes worked.",
        ],
        ["If git asks for a passphrase, check which agent socket the shell uses."],
    )
    n += [
        py,
        node(
            "G1",
            "digest/personal/python-project-setup.md",
            "How the user sets up Python projects",
            "The user's standard skeleton for a new Python project.",
            "New Python projects: `uv init --package` with the src layout, Python 3.12, ruff for lint and format "
            "(line length 100), pytest with `-p no:cacheprovider`. No poetry, no black.",
            [(py, "Seen when starting pyutils, {link}.")],
        ),
        git,
        node(
            "G2",
            "digest/personal/git-分支习惯.md",
            "Git 分支习惯",
            "用户在功能分支上 rebase 而不是 merge，合并前 squash。",
            "用户的功能分支总是 rebase 到最新的 main 上，不把 main merge 进分支；合并前压缩成一个提交。"
            "`pull.rebase` 已全局打开，`git sync` 别名做 fetch + rebase。",
            [(git, "见 {link}。")],
        ),
        ssh,
        node(
            "G3",
            "digest/wiki/ssh-agent-1password.md",
            "SSH keys through the 1Password agent",
            "Where the user's SSH keys live and why git may ask for a passphrase.",
            "The user's SSH keys for GitHub are in 1Password; `~/.ssh/config` sets "
            "`IdentityAgent ~/.1password/agent.sock`. When git asks for a passphrase, the shell is using an old "
            "agent socket (a tmux pane started before the change): open a new pane.",
            [(ssh, "Set up in {link}.")],
        ),
    ]
    return n


# ---- prompts that a note bears on: (group, prompt[, project the session runs in]) ----------------------
# Paraphrased as typed mid-session: the user's words, not the note's.
HIT: list[tuple[str, str] | tuple[str, str, str]] = [
    ("A1", "where's the dev db file for this service"),
    ("A1", "I want to wipe my local data and start fresh, what's the command"),
    ("A2", "how do I cut a release again"),
    ("A2", "what are the steps to get a new version out to prod"),
    ("A2", "ok the fix is merged, walk me through publishing 1.9.0"),
    ("A3", "why did the migration test flake last time"),
    ("A3", "parallel test run fails with relation already exists, seen this before?"),
    ("A4", "金额计算为什么不能用 float"),
    ("A5", "should the new list endpoint take page numbers or something else?"),
    ("A5", "I'm adding GET /accounts/{id}/statements, how should it paginate"),
    ("A6", "how long does a login stay valid before the client has to refresh"),
    ("A7", "RAM keeps climbing while I hammer the API with k6, did this happen before?"),
    ("A7", "why does the worker process leak memory"),
    ("A8", "集成测试在自己电脑上怎么跑起来"),
    ("A9", "why aren't we using celery for async work here"),
    ("A9", "which task queue does this project use and why"),
    ("A10", "how can I try the payment provider callbacks on localhost"),
    ("A10", "signature check fails for stripe events in dev, why"),
    ("A11", "接口返回的时间是哪个时区的"),
    ("A12", "I changed the response schema of /accounts, anything else to update before opening the PR?"),
    ("A12", "added a field to the transfer model, what else needs regenerating"),
    ("B1", "what's the oldest compiler version we promise to support"),
    ("B1", "can I rely on features from rust 1.80 in this crate?"),
    ("B2", "how do I put out a new version of the cli"),
    ("B2", "how do the mac and windows binaries get built when we tag"),
    ("B2", "does brew pick up new versions automatically or do I update the formula by hand"),
    ("B3", "--grep is crawling on huge inputs, did we already profile this?"),
    ("B3", "searching a multi-gigabyte log takes forever, any past findings?"),
    ("B4", "为什么快照测试只在 windows 上挂"),
    ("B5", "which crate handles time zones in this tool and why"),
    ("B5", "should I pull in chrono for the --until flag?"),
    ("B6", "how do I check whether my change made parsing slower"),
    ("B6", "compare the performance of this branch against main"),
    ("B7", "is it fine to just unwrap the result here?"),
    ("B7", "how should errors be handled in the core crate"),
    ("B8", "arm64 build dies saying the linker isn't found"),
    ("B9", "日志格式是怎么自动判断的"),
    ("B10", "it crashes when I pipe the output into head"),
    ("B11", "要不要支持 toml 配置文件来设默认参数"),
    ("C1", "which bucket do the incoming vendor files end up in"),
    ("C1", "where's the cleaned parquet output stored"),
    ("C2", "need to rerun the pipeline for last week's data, how"),
    ("C2", "the vendor fixed some old files, how do I reprocess those days"),
    ("C3", "we're seeing the same order twice in the mart, any idea?"),
    ("C4", "duckdb 又爆内存了，上次怎么处理的"),
    ("C5", "why didn't we go with spark for this"),
    ("C5", "at what data volume would we need a proper cluster"),
    ("C6", "when does the nightly run kick off"),
    ("C6", "what's the deadline for the job to be done in the morning"),
    ("C7", "数据校验没过的时候该怎么办"),
    ("C8", "some orders from late at night are counted on the following day, why"),
    ("C8", "finance says daily totals don't match theirs around midnight"),
    ("C9", "how should I format this new model's query"),
    ("C9", "is a nested select ok here or do we prefer something else"),
    ("C10", "where do we keep the login for the vendor's server"),
    ("C11", "vendor added a field to their csv, what do I need to touch"),
    ("C11", "the ingest stopped with an unexpected column error"),
    ("D1", "which port does the frontend dev server come up on"),
    ("D2", "how do we get the frontend live after merging"),
    ("D2", "what's the rollback if the new UI version is broken"),
    ("D3", "browser tests keep timing out randomly in the pipeline"),
    ("D4", "全局状态用的什么库"),
    ("D5", "should I write a separate stylesheet for this component?"),
    ("D5", "how do we do styling in this app"),
    ("D6", "the js bundle suddenly got huge, how did we track that down last time"),
    ("D6", "is there a size check on the build output"),
    ("D7", "新加的文案怎么做翻译"),
    ("D8", "how do I switch on an unreleased feature on my machine"),
    ("D8", "how does the app decide whether a toggle is on"),
    ("D9", "the backend renamed a field, how do I refresh the typescript types for the endpoints"),
    ("D10", "unit test crashes saying document isn't defined"),
    ("D10", "my react component test can't find the DOM"),
    ("D11", "为什么 safari 上时间显示不出来"),
    ("G1", "scaffold a new python package the way I usually like it", NO_NOTES),
    ("G1", "which linter and formatter do I normally use for python", NO_NOTES),
    ("G2", "我平时合并分支是什么习惯", "logslice"),
    ("G3", "git keeps asking me for a passphrase, how did I set up the ssh agent", "harbor-ui"),
    ("A1", "is the local database postgres too or something lighter"),
    ("C10", "is the sftp private key in the .env file?"),
    ("D3", "how did we fix the flaky playwright runs"),
]

# cross-lingual: a Chinese prompt for an English note, an English prompt for a Chinese note
XLING: list[tuple[str, str] | tuple[str, str, str]] = [
    ("A1", "本地开发用的是什么数据库，文件放在哪"),
    ("A4", "why were invoice totals off by a cent sometimes"),
    ("A4", "can I use float for the tax amount here?"),
    ("A6", "登录令牌多久失效"),
    ("A8", "how do I run the integration suite on my machine"),
    ("A11", "what timezone are timestamps in the API responses"),
    ("B4", "the snapshot tests only break on the windows runner, any idea why"),
    ("B8", "arm 平台交叉编译报找不到链接器"),
    ("B9", "how does the tool figure out what kind of log file it's reading"),
    ("B10", "输出接到 head 命令时程序崩溃了"),
    ("B11", "someone wants a dotfile for default options, should I add one?"),
    ("C2", "上周的数据要重新跑一遍，怎么操作"),
    ("C3", "同一个订单在报表里出现了两次"),
    ("C4", "the big join keeps running out of RAM in the transform step"),
    ("C7", "what's the runbook when one of the data checks fails overnight"),
    ("C10", "供应商服务器的登录密钥放在哪里"),
    ("D1", "前端本地跑在哪个端口"),
    ("D3", "端到端测试在 CI 上随机超时，之前怎么解决的"),
    ("D4", "are we using redux or something else for app-wide state?"),
    ("D7", "where do the translated strings live and how do I add a new one"),
    ("D9", "后端接口改了，前端的类型怎么重新生成"),
    ("D11", "dates show up as invalid only on iPhones"),
    ("G2", "should I merge main into my branch or rebase?", "orders-etl"),
    ("G3", "git 每次都要我输入密码短语，怎么回事", "ledger-api"),
]

# ordinary coding prompts no note bears on, sharing the notes' programming words; by the project they are typed in
UNRELATED: dict[str, list[str]] = {
    "ledger-api": [
        "explain this regex: ^(?P<iban>[A-Z]{2}\\d{2}[A-Z0-9]{11,30})$",
        "write a test for parse_date that covers leap years",
        "why is this loop O(n^2)? it's in reconcile_entries",
        "add type hints to the functions in app/utils/strings.py",
        "rename the variable acct to account across this file",
        "what does 'RuntimeError: Event loop is closed' mean in pytest-asyncio",
        "refactor this if/elif chain into a dict lookup",
        "write a pydantic validator that rejects negative quantities",
        "generate a docstring for compute_fee",
        "how do I freeze time in a unit test with freezegun",
        "add a database index on transactions.merchant_id in a new migration",
        "convert this raw SQL query to SQLAlchemy 2.0 select() style",
        "the build fails with ModuleNotFoundError: No module named 'app.core', fix the import",
        "what's the difference between a list comprehension and a generator expression here",
        "split this 300-line function into smaller ones",
        "write a regex that matches semantic version strings",
        "add logging to the retry decorator",
        "why does mypy complain about Optional[str] being passed to len",
        "make this endpoint return 404 instead of 500 when the account is missing",
        "sort these imports and remove the unused ones",
        "how do I parse a CSV with a semicolon delimiter in python",
        "add a config option for the maximum upload size",
        "write a fixture that creates three users",
        "这个正则是什么意思：\\d{4}-\\d{2}-\\d{2}",
        "给 slugify 写个单元测试",
    ],
    "logslice": [
        "explain what this error means: borrowed value does not live long enough",
        "implement Display for the Level enum",
        "write a unit test for split_fields with quoted values",
        "why is this loop O(n^2)? it's the dedup in merge_runs",
        "convert this match statement into if let",
        "what's the difference between String and &str in this function signature",
        "add a --count flag that only prints how many lines matched",
        "clippy says needless_range_loop, how do I rewrite this",
        "make this function generic over any iterator of &str",
        "why does cargo recompile everything every time I switch branches",
        "write a regex for IPv4 addresses",
        "explain Arc<Mutex<T>> vs RwLock here",
        "add doc comments to the public functions in src/lib.rs",
        "how do I read a file line by line without loading it all into memory",
        "rename the struct Entry to Record everywhere",
        "what does #[derive(Default)] generate for this struct",
        "是不是应该把这个 Vec 换成 HashSet",
        "这个 trait object 为什么要加 dyn",
        "fix the test that compares two floats with ==",
        "write a property test for the tokenizer with proptest",
        "how do I print a u64 with thousands separators",
        "what's the idiomatic way to break out of a nested loop",
        "derive Serialize for the Summary struct",
        "the test output is too noisy, how do I run only one test",
        "为什么这段代码会有借用冲突",
    ],
    "orders-etl": [
        "write a pandas function that pivots this dataframe by month",
        "explain this window function: sum(x) over (partition by a order by b rows between 2 preceding and "
        "current row)",
        "why is this pandas apply so slow, vectorise it",
        "write a test for normalize_phone",
        "convert this list of dicts to a DataFrame with typed columns",
        "add argparse to this script with --input and --output",
        "regex to pull the invoice number out of strings like INV-2026-00042",
        "make this function retry three times on ConnectionError",
        "read a gzip-compressed JSON lines file in python",
        "how do I unit test a function that calls boto3 put_object",
        "type annotate this dict of lists",
        "explain what yield from does",
        "optimize this query: select * from events where date(logged_at) = '2026-11-01'",
        "write a docstring for load_rates",
        "generate a Makefile target that cleans the build folder",
        "这个函数的时间复杂度是多少",
        "帮我把这个 for 循环改成列表推导式",
        "what does SettingWithCopyWarning mean",
        "write a function that chunks a list into batches of 500",
        "how do I pretty print a nested dict",
        "the jinja template renders None as the string 'None', how do I avoid that",
        "add a progress bar to this loop with tqdm",
        "should this be a dataclass or a NamedTuple",
        "rename column cust_id to customer_id in this dataframe",
        "what's the error in this f-string, it says unmatched '('",
    ],
    "harbor-ui": [
        "explain this regex: /^[\\w.+-]+@[\\w-]+\\.[\\w.]+$/",
        "convert this class component to a function component with hooks",
        "write a test for useDebounce",
        "why does this useEffect run twice",
        "type this props object properly instead of any",
        "make the table sortable by clicking the column headers",
        "what's the difference between interface and type in TypeScript",
        "debounce the search input by 300ms",
        "fix the eslint warning about a missing dependency in useCallback",
        "add aria labels to the icon buttons",
        "why is this array map returning undefined",
        "convert these promise chains to async/await",
        "add a loading skeleton to the accounts list",
        "这个 TypeScript 报错是什么意思：Type 'string' is not assignable to type 'never'",
        "帮我写一个 useLocalStorage hook",
        "how do I memoize this expensive computation",
        "the build prints a warning about a circular dependency, what does it mean",
        "write a zod schema for this signup form",
        "add keyboard navigation to the dropdown",
        "parse the query string into an object without a library",
    ],
    NO_NOTES: [
        "write a bash one-liner to find the 10 largest files",
        "what does set -euo pipefail do",
        "explain git cherry-pick -x",
        "convert this JSON to YAML",
        "how do I undo the last commit but keep the changes",
        "写一个 Python 脚本批量重命名文件",
        "what's a good name for a function that checks whether a string is a palindrome",
        "write a Dockerfile for a small Flask app",
        "how do I profile a python script",
        "explain the big O of dict lookups in python",
    ],
}

# turns that carry no topic: approvals, continuations, one-word answers
TRIVIAL = [
    "yes",
    "y",
    "go on",
    "好的",
    "looks good, commit",
    "继续",
    "thanks",
    "ok",
    "lgtm",
    "sounds good",
    "do it",
    "yes please",
    "no",
    "nope, leave it",
    "2",
    "option 1",
    "perfect, thanks!",
    "great",
    "continue",
    "proceed",
    "ship it",
    "cool",
    "sure",
    "yep",
    "k",
    "wait",
    "stop",
    "never mind",
    "undo that",
    "try again",
    "谢谢",
    "可以",
    "行",
    "没问题",
    "对的",
    "嗯",
    "继续吧",
    "好，提交吧",
    "不用了",
    "先这样",
    "go ahead",
    "👍",
]


# ---- unrelated notes, generated: other projects' cards and general nodes ------------------------------
# (name, stack, components, dependencies with versions, test command, deploy target, setup command)
OTHERS: list[tuple[str, str, list[str], list[str], str, str, str]] = [
    (
        "kb-search",
        "Rust",
        ["tokenizer", "index writer", "query planner", "snippet builder"],
        ["tantivy 0.22", "axum 0.7", "tokio 1.41"],
        "cargo nextest run",
        "a Hetzner VM under systemd",
        "cargo build",
    ),
    (
        "mobile-wallet",
        "Kotlin",
        ["login screen", "sync service", "card scanner", "push handler"],
        ["Retrofit 2.11", "Room 2.6", "Compose BOM 2024.10"],
        "./gradlew testDebugUnitTest",
        "the Play Store internal track",
        "./gradlew assembleDebug",
    ),
    (
        "infra-live",
        "Terraform",
        ["vpc module", "rds module", "iam roles", "cloudfront distribution"],
        ["the AWS provider 5.70", "Terraform 1.9", "tflint 0.53"],
        "terraform validate && tflint",
        "the prod account through Atlantis",
        "terraform init",
    ),
    (
        "docs-site",
        "Astro",
        ["search page", "sidebar", "changelog page", "code blocks"],
        ["Astro 4.16", "Pagefind 1.1", "Shiki 1.22"],
        "pnpm check",
        "Netlify",
        "pnpm install",
    ),
    (
        "ml-ranker",
        "Python",
        ["feature builder", "trainer", "eval script", "serving api"],
        ["torch 2.5", "lightgbm 4.5", "polars 1.12"],
        "pytest tests/unit",
        "the GPU node pool",
        "uv sync",
    ),
    (
        "chat-bot",
        "TypeScript",
        ["slash command handler", "message parser", "thread summariser", "oauth callback"],
        ["@slack/bolt 3.21", "Node 22", "zod 3.23"],
        "npm test",
        "a Cloud Run service",
        "npm ci",
    ),
    (
        "auth-gateway",
        "Go",
        ["token validator", "session store", "admin api", "audit logger"],
        ["Go 1.23", "chi v5.1", "pgx v5.7"],
        "go test ./...",
        "the internal Kubernetes cluster",
        "go mod download",
    ),
    (
        "home-automation",
        "Python",
        ["mqtt bridge", "thermostat rule", "zigbee pairing", "energy dashboard"],
        ["paho-mqtt 2.1", "Home Assistant 2024.11", "InfluxDB 2.7"],
        "pytest",
        "the Raspberry Pi in the hallway",
        "pip install -r requirements.txt",
    ),
    (
        "blog",
        "Astro",
        ["rss feed", "post layout", "image pipeline", "comments widget"],
        ["Astro 4.16", "sharp 0.33", "giscus 1.5"],
        "pnpm astro check",
        "GitHub Pages",
        "pnpm install",
    ),
    (
        "scraper",
        "Python",
        ["html parser", "robots checker", "crawl scheduler", "proxy pool"],
        ["httpx 0.27", "selectolax 0.3", "playwright 1.48"],
        "pytest -q",
        "a cron box on DigitalOcean",
        "uv sync",
    ),
    (
        "invoice-pdf",
        "Java",
        ["template engine", "pdf writer", "font loader", "rest controller"],
        ["Spring Boot 3.3", "OpenPDF 2.0", "Java 21"],
        "./mvnw verify",
        "the on-prem Tomcat",
        "./mvnw package",
    ),
    (
        "ci-templates",
        "YAML",
        ["python job template", "docker job template", "cache step", "lint job"],
        ["GitLab 17.5", "kaniko 1.23", "renovate 38"],
        "gitlab-ci-local --list",
        "the shared runners",
        "git submodule update",
    ),
    (
        "browser-ext",
        "TypeScript",
        ["content script", "popup", "background worker", "options page"],
        ["webextension-polyfill 0.12", "Vite 5.4", "Vitest 2.1"],
        "pnpm vitest run",
        "the Chrome Web Store",
        "pnpm install",
    ),
    (
        "k8s-operator",
        "Go",
        ["reconciler", "admission webhook", "crd schema", "leader election"],
        ["controller-runtime 0.19", "kubebuilder 4.2", "envtest 1.31"],
        "make test",
        "the platform cluster",
        "make install",
    ),
    (
        "notebooks",
        "Python",
        ["churn analysis", "cohort chart", "sql loader", "report export"],
        ["jupyterlab 4.2", "pandas 2.2", "altair 5.4"],
        "nbval on the notebooks",
        "the shared JupyterHub",
        "conda env create",
    ),
    (
        "pyutils",
        "Python",
        ["retry helper", "text utils", "cli helpers", "settings loader"],
        ["click 8.1", "pydantic 2.9", "hypothesis 6.115"],
        "pytest",
        "PyPI",
        "uv sync",
    ),
    (
        "dotfiles",
        "shell",
        ["nvim config", "tmux config", "zsh prompt", "bootstrap script"],
        ["neovim 0.10", "tmux 3.5", "starship 1.21"],
        "shellcheck *.sh",
        "both laptops",
        "./bootstrap.sh",
    ),
    (
        "game-jam",
        "GDScript",
        ["player controller", "save system", "level loader", "audio mixer"],
        ["Godot 4.3", "GUT 9.3", "butler 15"],
        "godot --headless -s addons/gut/gut_cmdln.gd",
        "itch.io",
        "godot --import",
    ),
    (
        "status-page",
        "Go",
        ["uptime checker", "incident page", "notifier", "badge endpoint"],
        ["Go 1.23", "htmx 2.0", "SQLite 3.46"],
        "go test -race ./...",
        "a Fly machine",
        "go build ./...",
    ),
    (
        "data-contracts",
        "Python",
        ["schema registry client", "avro converter", "validator cli", "compat checker"],
        ["fastavro 1.9", "confluent-kafka 2.6", "typer 0.12"],
        "pytest -x",
        "the internal package index",
        "uv sync",
    ),
]

# (problem, cause, fix) shared by every project: the common words of ordinary coding work
PROBLEMS = [
    ("a timeout after 30 s", "a missing index on the lookup column", "added the index"),
    (
        "a KeyError on startup",
        "a config key renamed in one environment only",
        "renamed it everywhere and validated the config at load",
    ),
    ("wrong dates in the output", "dates parsed without a timezone", "parsed with an explicit zone"),
    ("a flaky test", "a shared fixture mutated by another test", "gave each test its own copy"),
    ("a failed build", "an unpinned transitive dependency", "pinned it in the lock file"),
    ("stale results", "a cache key missing the locale", "added the locale to the key"),
    ("duplicate log lines", "the handler attached twice on reload", "attached it once at start-up"),
    (
        "a parse error on some inputs",
        "a regex without anchors matching too much",
        "anchored the pattern and added cases",
    ),
    ("a crash on empty input", "an unchecked first element", "returned early on empty input"),
    ("a permission denied error", "the cache folder created by root in the image", "created it as the app user"),
    ("a memory spike", "the whole file read at once", "streamed it in chunks"),
    ("a deadlock under load", "two locks taken in different orders", "took them in one fixed order"),
    ("a broken deploy", "the deploy script reading the wrong env file", "passed the env file explicitly"),
    ("too many open files", "responses never closed", "closed them in a finally block"),
    ("a certificate verify failure", "an outdated CA bundle in the base image", "updated the base image"),
    ("slow start-up", "heavy imports at module level", "moved them into the functions that need them"),
    ("an off-by-one in reports", "an inclusive end date treated as exclusive", "made the range half-open everywhere"),
    ("a 429 from the upstream API", "no backoff between retries", "added exponential backoff"),
]
PROBLEMS_ZH = [
    ("接口超时", "查询列上缺少索引", "加了索引"),
    ("启动时报配置错误", "某个环境里的配置项名字改了", "统一了配置项并在加载时校验"),
    ("测试偶尔失败", "多个测试共用一个被修改的夹具", "每个测试使用自己的副本"),
    ("构建失败", "间接依赖没有锁定版本", "在锁文件中固定了版本"),
    ("返回了过期的数据", "缓存键里没有语言信息", "缓存键加上了语言"),
    ("部分输入解析失败", "正则表达式没有锚定，匹配过多", "加上锚点并补充了用例"),
    ("内存突然升高", "一次性读入整个文件", "改为分块流式读取"),
    ("部署失败", "部署脚本读取了错误的环境文件", "显式传入环境文件"),
    ("日期显示错误", "解析日期时没有指定时区", "解析时明确时区"),
]
FEATURES = [
    "export to CSV",
    "dark mode",
    "bulk delete",
    "search filters",
    "audit trail",
    "rate limits",
    "retry queue",
    "health endpoint",
    "pagination of results",
    "webhook delivery",
    "email digests",
    "usage metrics",
    "import wizard",
    "keyboard shortcuts",
    "offline mode",
    "error reporting",
]
FEATURES_ZH = ["导出 CSV", "深色模式", "批量删除", "搜索过滤", "审计日志", "健康检查接口", "使用统计", "错误上报"]
TOOLS = ["py-spy", "perf", "the flame graph", "pprof", "the browser profiler", "EXPLAIN ANALYZE", "a tracing span"]
NUMBERS = [3, 4, 5, 6, 8, 12, 15, 20, 40, 90]


def _other_card(rng: random.Random, project: tuple, date: str) -> tuple[str, str, list[str], list[str], list[str]]:
    """(name, description, happened, conclusions, follow-ups) of one card about ordinary work in ``project``."""
    name, stack, comps, deps, test_cmd, target, setup = project
    comp, dep, feat = rng.choice(comps), rng.choice(deps), rng.choice(FEATURES)
    problem, cause, fix = rng.choice(PROBLEMS)
    a, b = sorted(rng.sample(NUMBERS, 2))
    kind = rng.randrange(10)
    if kind == 0:
        return (
            f"{comp.capitalize()}: {problem}",
            f"The {comp} of {name} showed {problem}. The cause was {cause}; {fix}.",
            [f"Reproduced with `{test_cmd}`.", f"Found {cause}.", f"{fix.capitalize()}; added a regression test."],
            [f"{problem.capitalize()} in the {comp} came from {cause}."],
            [f"Check the other {stack} services for the same pattern."] if rng.random() < 0.4 else [],
        )
    if kind == 1:
        return (
            f"Tests for the {comp}",
            f"Added tests for the {comp} of {name}: {a + 4} cases, coverage of the module from {40 + a}% to "
            f"{70 + b}%. Run with `{test_cmd}`.",
            [f"Wrote table-driven cases for the {comp}.", f"Found {problem} while writing them: {cause}."],
            [f"{fix.capitalize()}."],
            [],
        )
    if kind == 2:
        return (
            f"Upgrade to {dep}",
            f"Upgraded {name} to {dep}. One breaking change in the {comp} needed a code change; the build and "
            f"`{test_cmd}` pass.",
            [
                f"Read the changelog of {dep}.",
                f"The {comp} used a removed API; rewrote that call.",
                f"`{setup}` and `{test_cmd}` on a clean checkout.",
            ],
            [f"Dependencies of {name} are upgraded one at a time."],
            [f"Watch the error rate of the {comp} for a week."],
        )
    if kind == 3:
        return (
            f"Deploy of {name} to {target}",
            f"Deployed {name} to {target}. The first attempt failed with {problem}: {cause}; {fix} and the second "
            "attempt went through.",
            [f"Built with `{setup}`.", f"First deploy: {problem}.", f"{fix.capitalize()}; redeployed."],
            ["The deploy steps are in the project's README."],
            [],
        )
    if kind == 4:
        return (
            f"Config cleanup in the {comp}",
            f"Moved the settings of the {comp} in {name} into one config file with defaults and validation; "
            f"the old environment variables still work for {a} weeks.",
            [f"Listed {a + b} settings read in different places.", "Wrote one settings object with defaults."],
            ["Unknown config keys are an error at start-up, not ignored."],
            ["Remove the old environment variables."],
        )
    if kind == 5:
        return (
            f"Slow {comp}",
            f"The {comp} of {name} got slow: {b * 10} ms per call instead of {a} ms. Profiled with "
            f"{rng.choice(TOOLS)}; the cause was {cause}, and {fix}.",
            [f"Measured {b * 10} ms per call.", f"Profiled with {rng.choice(TOOLS)}.", f"{fix.capitalize()}."],
            [f"Back to {a} ms per call."],
            [],
        )
    if kind == 6:
        return (
            f"Code review of {feat}",
            f"Reviewed the pull request adding {feat} to {name}. Asked for smaller functions, a test for "
            f"{problem} and clearer error messages.",
            [f"The change touched the {comp} and {rng.choice(comps)}.", "Left 9 comments; 2 blocking."],
            ["Merged after the second round."],
            [],
        )
    if kind == 7:
        return (
            f"Design of {feat}",
            f"Sketched how {feat} should work in {name}: it lives in the {comp}, behind a flag, with a database "
            f"table of its own.",
            [f"Wrote a one-page design for {feat}.", f"Discussed where it belongs: the {comp}."],
            [f"First version without {rng.choice(FEATURES)}."],
            [f"Build {feat} next sprint."],
        )
    if kind == 8:
        return (
            f"CI time of {name}",
            f"CI of {name} took {b + 10} minutes. Cached the dependencies and split `{test_cmd}` into {a // 2 + 2} "
            f"parallel jobs; now {a + 2} minutes.",
            ["Measured each CI step.", "Added a dependency cache keyed on the lock file."],
            ["The lock file hash is the cache key."],
            [],
        )
    return (
        f"Logging in the {comp}",
        f"Switched the {comp} of {name} to structured JSON logs with a request id, which made {problem} easy to trace.",
        ["Replaced print statements with the logger.", "Added the request id to every line."],
        ["Log levels: info for requests, warning for retries, error for failures."],
        [],
    )


def _other_card_zh(rng: random.Random, project: tuple, date: str) -> tuple[str, str, list[str], list[str], list[str]]:
    name, _, comps, deps, test_cmd, target, _ = project
    comp, dep, feat = rng.choice(comps), rng.choice(deps), rng.choice(FEATURES_ZH)
    problem, cause, fix = rng.choice(PROBLEMS_ZH)
    kind = rng.randrange(4)
    if kind == 0:
        return (
            f"{comp} {problem}",
            f"{name} 的 {comp} 出现{problem}。原因是{cause}，已{fix}。",
            [f"用 `{test_cmd}` 复现。", f"定位到{cause}。", f"{fix}，补了回归测试。"],
            [f"{problem}的根因是{cause}。"],
            [],
        )
    if kind == 1:
        return (
            f"升级到 {dep}",
            f"把 {name} 升级到 {dep}，{comp} 里有一处不兼容的调用需要修改，测试全部通过。",
            [f"阅读 {dep} 的变更说明。", f"修改了 {comp} 中被移除的接口。"],
            ["依赖一次只升级一个。"],
            [],
        )
    if kind == 2:
        return (
            f"{name} 部署到 {target}",
            f"把 {name} 部署到 {target}。第一次失败，{problem}，原因是{cause}；{fix}后重新部署成功。",
            ["第一次部署失败。", f"{fix}。"],
            ["部署步骤写在 README 里。"],
            [],
        )
    return (
        f"{feat}的设计",
        f"讨论了 {name} 里{feat}的做法：放在 {comp} 中，先用功能开关控制，单独建一张表。",
        [f"写了{feat}的一页设计。"],
        [f"第一版不做{rng.choice(FEATURES_ZH)}。"],
        [f"下个迭代实现{feat}。"],
    )


# general knowledge and habits: (bucket, slug, name, description, body)
GENERAL = [
    (
        "wiki",
        "http-caching-headers",
        "HTTP caching headers",
        "ETag, Cache-Control and when each applies.",
        "`Cache-Control: max-age` lets clients reuse a response without asking; `ETag` with `If-None-Match` makes "
        "the revalidation cheap (304). Private data needs `Cache-Control: private`.",
    ),
    (
        "wiki",
        "idempotency-keys",
        "Idempotency keys",
        "Making POST requests safe to retry.",
        "The client sends a unique `Idempotency-Key`; the server stores the first response under it and returns the "
        "same response for a repeat, so a retried payment is charged once.",
    ),
    (
        "wiki",
        "consistent-hashing",
        "Consistent hashing",
        "Spreading keys over nodes with little movement.",
        "Nodes and keys are placed on a ring; adding a node moves only the keys between it and its neighbour. "
        "Virtual nodes even out the load.",
    ),
    (
        "wiki",
        "bloom-filters",
        "Bloom filters",
        "A compact set with false positives and no false negatives.",
        "k hash functions set k bits per item; a lookup that finds any bit unset proves absence. Size it from the "
        "item count and the false-positive rate wanted.",
    ),
    (
        "wiki",
        "postgres-vacuum",
        "Postgres VACUUM and bloat",
        "Why dead tuples pile up and what autovacuum does.",
        "Updates and deletes leave dead tuples; VACUUM marks their space reusable and autovacuum runs it by "
        "thresholds. Long transactions hold back the cleanup and tables bloat.",
    ),
    (
        "wiki",
        "kafka-consumer-groups",
        "Kafka consumer groups",
        "How partitions are shared between consumers.",
        "Each partition is read by one consumer of a group; adding consumers beyond the partition count does "
        "nothing. A rebalance pauses the group; cooperative rebalancing shortens it.",
    ),
    (
        "wiki",
        "grpc-deadlines",
        "gRPC deadlines",
        "Every call carries a deadline that propagates.",
        "Set a deadline on every client call; servers read it from the context and pass it on, so a slow "
        "downstream cannot hold the whole chain forever.",
    ),
    (
        "wiki",
        "oauth-pkce",
        "OAuth 2.0 with PKCE",
        "The authorization code flow for public clients.",
        "The client sends a hash of a random verifier with the authorization request and the verifier itself when "
        "exchanging the code, so a stolen code is useless.",
    ),
    (
        "wiki",
        "cors-preflight",
        "CORS preflight requests",
        "When browsers send OPTIONS first.",
        "Non-simple requests (custom headers, JSON bodies, PUT/DELETE) trigger an OPTIONS preflight; the server "
        "answers with the allowed origin, methods and headers. `Access-Control-Max-Age` caches the answer.",
    ),
    (
        "wiki",
        "k8s-probes",
        "Liveness and readiness probes",
        "What each Kubernetes probe is for.",
        "Readiness removes a pod from the service while it cannot serve; liveness restarts it when it is stuck. "
        "A liveness probe that checks dependencies restarts healthy pods during an outage.",
    ),
    (
        "wiki",
        "unicode-normalization",
        "Unicode normalization",
        "NFC, NFD and comparing strings.",
        "The same text can be encoded composed (NFC) or decomposed (NFD); normalise before comparing or hashing "
        "user input, e.g. file names coming from macOS.",
    ),
    (
        "wiki",
        "tls-certificate-chains",
        "TLS certificate chains",
        "Why a server must send its intermediates.",
        "Clients trust roots, not intermediates: a server that sends only its leaf certificate works in browsers "
        "that cache intermediates and fails in curl.",
    ),
    (
        "wiki",
        "dns-ttl",
        "DNS TTL and changes",
        "How long a DNS change takes to reach clients.",
        "Resolvers cache records for their TTL; lower the TTL a day before a planned move, then raise it again.",
    ),
    (
        "wiki",
        "lsm-vs-btree",
        "LSM trees and B-trees",
        "Write-optimised against read-optimised storage.",
        "LSM trees buffer writes in memory and merge sorted files in the background (fast writes, compaction "
        "cost); B-trees update pages in place (fast reads, random writes).",
    ),
    (
        "wiki",
        "write-ahead-log",
        "Write-ahead logging",
        "How databases survive crashes.",
        "Changes are appended to a log and flushed before the data pages; after a crash the log is replayed. "
        "fsync on the log is what makes a commit durable.",
    ),
    (
        "wiki",
        "content-security-policy",
        "Content Security Policy",
        "Limiting where a page may load scripts from.",
        "A CSP header lists allowed sources per resource type; nonces allow specific inline scripts. Start with "
        "`Content-Security-Policy-Report-Only` to see what would break.",
    ),
    (
        "wiki",
        "webhook-signatures",
        "Webhook signature verification",
        "Checking that a webhook came from its sender.",
        "Compute the HMAC of the raw body with the shared secret and compare in constant time before parsing; "
        "reject old timestamps to stop replays.",
    ),
    (
        "wiki",
        "rate-limit-algorithms",
        "Rate limiting algorithms",
        "Token bucket, leaky bucket, sliding window.",
        "Token buckets allow bursts up to the bucket size; sliding windows count requests in the last interval "
        "and avoid the burst at a fixed window's edge.",
    ),
    (
        "wiki",
        "blue-green",
        "Blue-green deployments",
        "Switching traffic between two full environments.",
        "The new version runs beside the old one; the load balancer switches at once and switches back to roll "
        "back. Database changes must work with both versions.",
    ),
    (
        "wiki",
        "connection-pooling",
        "Database connection pooling",
        "Why and where to pool connections.",
        "Opening a database connection costs milliseconds and server memory; a pool reuses them. With many "
        "processes, a pooler such as PgBouncer in transaction mode caps the server's connections.",
    ),
    (
        "wiki",
        "redis-eviction",
        "Redis eviction policies",
        "What Redis drops when memory is full.",
        "`maxmemory-policy` decides: `allkeys-lru` for a pure cache, `volatile-lru` when some keys must stay, "
        "`noeviction` for data that must not vanish (writes then fail).",
    ),
    (
        "wiki",
        "git-lfs",
        "Git LFS",
        "Large files in git without bloating the history.",
        "LFS stores pointers in git and the content on a server; clones fetch only the versions checked out. "
        "Track patterns with `git lfs track` before adding the files.",
    ),
    (
        "wiki",
        "circuit-breaker",
        "Circuit breakers",
        "Failing fast when a dependency is down.",
        "After enough failures the breaker opens and calls fail at once; after a pause a few trial calls decide "
        "whether to close it again.",
    ),
    (
        "wiki",
        "event-sourcing",
        "Event sourcing",
        "State as a sequence of events.",
        "Every change is stored as an event; current state is a fold over them, snapshots shorten the replay. "
        "Schema changes of events need upcasters.",
    ),
    (
        "wiki",
        "opentelemetry-spans",
        "OpenTelemetry spans",
        "Traces, spans and context propagation.",
        "A trace is a tree of spans; the context travels in the `traceparent` header. Sample at the head for "
        "cost, at the tail to keep the slow and failed traces.",
    ),
    (
        "wiki",
        "prometheus-histograms",
        "Prometheus histograms and summaries",
        "Which one to use for latency.",
        "Histograms aggregate across instances and let you compute quantiles later; summaries compute quantiles "
        "per instance and cannot be combined.",
    ),
    (
        "wiki",
        "slo-error-budgets",
        "SLOs and error budgets",
        "Turning reliability targets into decisions.",
        "A 99.9% availability SLO allows 43 minutes of failure a month; when the budget is spent, reliability "
        "work goes before features.",
    ),
    (
        "wiki",
        "expand-contract",
        "Renaming a column without downtime",
        "The expand and contract pattern.",
        "Add the new column, write both, backfill, switch reads, stop writing the old one, then drop it: each "
        "step is deployable on its own.",
    ),
    (
        "wiki",
        "mutation-testing",
        "Mutation testing",
        "Measuring whether tests notice changes.",
        "A tool changes the code (flips conditions, removes calls) and reruns the tests; a surviving mutant is a "
        "behaviour no test checks.",
    ),
    (
        "wiki",
        "http2-multiplexing",
        "HTTP/2 multiplexing",
        "Many requests on one connection.",
        "Streams share one TCP connection, so domain sharding and sprites stop helping; head-of-line blocking "
        "moves down to TCP, which HTTP/3 removes.",
    ),
    (
        "wiki",
        "mmap-files",
        "Memory-mapped files",
        "Letting the OS page a file in.",
        "mmap maps a file into the address space; pages load on first touch and the page cache is shared between "
        "processes. Writes through a mapping need msync to be durable.",
    ),
    (
        "wiki",
        "leap-seconds-ntp",
        "Clocks, NTP and leap seconds",
        "Why wall clocks jump.",
        "NTP slews or steps the wall clock; measure durations with a monotonic clock. Cloud providers smear leap "
        "seconds over a day.",
    ),
    (
        "wiki",
        "最终一致性",
        "最终一致性",
        "分布式系统中副本之间的一致性模型。",
        "写入后副本之间短时间内可能不一致，但在没有新写入时最终会收敛。读己之写可以通过会话粘滞或读主库来保证。",
    ),
    (
        "wiki",
        "布隆过滤器误判",
        "布隆过滤器的误判率",
        "如何根据元素数量选择位数组大小和哈希函数个数。",
        "误判率约为 (1 - e^(-kn/m))^k；给定元素数 n 和目标误判率，可以算出位数 m 和哈希个数 k。",
    ),
    (
        "wiki",
        "分库分表",
        "分库分表",
        "数据量增长后的水平拆分方案。",
        "按用户 ID 取模或按范围拆分；跨分片的查询和事务代价高，尽量让一次请求只落在一个分片上。",
    ),
    (
        "wiki",
        "限流与熔断",
        "限流与熔断",
        "保护下游服务的两种手段。",
        "限流控制进入的请求量，熔断在下游持续失败时快速失败；两者配合重试时要加退避，避免雪崩。",
    ),
    (
        "wiki",
        "消息队列顺序性",
        "消息队列的顺序性",
        "什么时候能保证消息按顺序消费。",
        "只有同一分区内有序；需要顺序的消息用同一个键路由到同一分区，消费端单线程处理该分区。",
    ),
    (
        "wiki",
        "灰度发布",
        "灰度发布",
        "按比例逐步放量的发布方式。",
        "先放 1% 流量观察错误率和延迟，再逐步扩大；指标异常时自动回退到旧版本。",
    ),
    (
        "personal",
        "editor-setup",
        "Editor setup",
        "The user's editor and terminal.",
        "The user works in Neovim (lazy.nvim, telescope, the built-in LSP client) inside WezTerm with JetBrains "
        "Mono; screenshots assume a dark theme.",
    ),
    (
        "personal",
        "focus-hours",
        "Focus hours",
        "When the user prefers deep work.",
        "Mornings until 11:00 are kept free of meetings for focused work; reviews happen after lunch.",
    ),
    (
        "personal",
        "mermaid-diagrams",
        "Diagrams in Mermaid",
        "How the user draws architecture diagrams.",
        "Architecture and sequence diagrams are written in Mermaid inside Markdown so they live in the repository "
        "and diff like code.",
    ),
    (
        "personal",
        "键盘布局",
        "键盘与输入法",
        "用户的键盘和输入习惯。",
        "用户用分体键盘，英文 Colemak 布局，中文用双拼；快捷键建议要考虑这个布局。",
    ),
    (
        "personal",
        "阅读习惯",
        "技术阅读习惯",
        "用户获取技术信息的方式。",
        "用户每周五下午读 RSS 里的技术博客，喜欢有数据和复现步骤的文章，不喜欢纯观点文。",
    ),
]


def _dates(rng: random.Random, count: int) -> list[str]:
    import datetime as dt

    start = dt.date(2026, 6, 1)
    return [(start + dt.timedelta(days=rng.randrange(183))).isoformat() for _ in range(count)]


def unrelated_notes() -> list[Note]:
    """Cards of twenty other projects (about a fifth in Chinese), two procedure nodes per project, and
    general wiki/personal nodes; seeded, so every build writes the same files."""
    from reme_cc.memory.auto_memory import clean_card_name

    rng = random.Random(SEED)
    out: list[Note] = []
    paths: set[str] = set()
    for project in OTHERS:
        name, stack, comps, deps, test_cmd, target, setup = project
        cards: list[Note] = []
        titles: set[str] = set()
        for date in _dates(rng, 14):
            for _ in range(8):  # draw again for a title the project already has (or the day, as a file name)
                make = _other_card_zh if rng.random() < 0.2 else _other_card
                title, desc, happened, conclusions, followups = make(rng, project, date)
                path = card_path(date, clean_card_name(title))
                if path not in paths and title not in titles:
                    break
            else:
                continue
            paths.add(path)
            titles.add(title)
            cards.append(card("", name, date, title, desc, happened, conclusions, followups, clean_card_name(title)))
        out += cards
        out.append(
            node(
                "",
                f"digest/procedure/{name}-tests.md",
                f"Running the tests of {name}",
                f"How to set up {name} and run its test suite.",
                f"1. `{setup}`.\n2. `{test_cmd}`.\n3. A failing test is fixed at its cause, not retried.\n\n"
                f"The {rng.choice(comps)} has the slowest tests; run them last.",
                [(rng.choice(cards), "Seen in {link}.")],
                name,
            )
        )
        out.append(
            node(
                "",
                f"digest/procedure/{name}-deploy.md",
                f"Deploying {name}",
                f"How {name} gets to {target}.",
                f"1. Build with `{setup}` and run `{test_cmd}`.\n2. Deploy to {target}.\n"
                f"3. Watch the logs of the {rng.choice(comps)} for ten minutes.\n\n"
                f"Known trap: {rng.choice(PROBLEMS)[0]} when the environment file is missing.",
                [(rng.choice(cards), "Done this way in {link}.")],
                name,
            )
        )
    sources = [n for n in out if n.path.startswith("daily/")]
    for bucket, slug, title, desc, body in GENERAL:
        src = rng.choice(sources)
        sentence = "见 {link}。" if language(title) == "zh" else "First noted in {link}."
        out.append(node("", f"digest/{bucket}/{slug}.md", title, desc, body, [(src, sentence)]))
    return out


# ---- the workspace -----------------------------------------------------------------------------------
def notes(first_days: bool = False) -> list[Note]:
    return targets() if first_days else targets() + unrelated_notes()


def files(first_days: bool = False) -> dict[str, str]:
    """{workspace path: text} of every note and day index page, rendered by reme's own helpers."""
    return dict(_rendered(first_days))


@functools.cache
def _rendered(first_days: bool) -> tuple[tuple[str, str], ...]:  # cached: 600 frontmatter blocks take seconds
    from reme_cc.memory import daily
    from reme_cc.notes.frontmatter import render_note

    out: dict[str, str] = {}
    days: dict[str, list] = {}
    for note in notes(first_days):
        if note.path in out:
            raise ValueError(f"two notes at {note.path}")
        out[note.path] = render_note(note.meta, note.body)
        day = daily.date_of(note.path)
        if day:
            days.setdefault(day, []).append(
                daily.DailyCard(note.path, note.meta["name"], " ".join(note.meta["description"].split()), note.meta)
            )
    for day, cards in days.items():  # the day index pages the dream keeps up to date
        out[daily.index_path(day)] = daily.new_index_page(day, sorted(cards, key=lambda c: c.path))
    return tuple(sorted(out.items()))


def build(root: Path, first_days: bool = False) -> Path:
    """Write the workspace into ``root/workspace`` and return that folder. Idempotent: unchanged files are
    not rewritten (their mtimes stay, so an index over them stays fresh) and notes the set no longer has
    are removed. Refuses a non-empty folder this module did not build. ``first_days``: the projects'
    notes alone."""
    from reme_cc.base.workspace import Workspace

    folder = Path(root) / WORKSPACE
    if folder.is_dir() and any(folder.iterdir()) and not (folder / MARKER).is_file():
        raise FileExistsError(f"{folder} is not empty and was not built by {__name__}; choose another root")
    ws = Workspace(folder)
    (ws.root / MARKER).write_text("built by bench/sets/prompt_recall.py; safe to delete\n", encoding="utf-8")
    wanted = files(first_days)
    for rel, text in wanted.items():
        path = ws.root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            # plain writes: the set is regenerable, and fsyncing 600 files (Workspace.write_text) took 15 s
            ws.resolve(rel).parent.mkdir(parents=True, exist_ok=True)
            ws.resolve(rel).write_text(text, encoding="utf-8")
    for layer in ("daily", "digest"):
        for path in sorted((ws.root / layer).rglob("*.md")):
            if ws.relpath(path) not in wanted:
                path.unlink()
    return ws.root


# ---- the cases -----------------------------------------------------------------------------------------
def _expected() -> dict[str, tuple[str, ...]]:
    """group -> its acceptable paths (a digest node and the card it was distilled from)."""
    out: dict[str, list[str]] = {}
    for note in targets():
        out.setdefault(note.group, []).append(note.path)
    return {g: tuple(sorted(paths)) for g, paths in out.items()}


def _project_of(group: str) -> str:
    return next(n.meta["project"] for n in targets() if n.group == group and "project" in n.meta)


def _split(rows: list[tuple[str, str, str, tuple[str, ...], str]]) -> list[Case]:
    """Half of each kind to dev, half to test, and so of each language: ordered by kind, language, target
    (so a note's prompts are spread over both) and a hash of the prompt, then alternated."""
    rows = sorted(rows, key=lambda r: (r[2], language(r[0]), r[4], hashlib.sha256(r[0].encode()).hexdigest()))
    out, seen = [], {}
    for prompt, cwd, kind, expected, _ in rows:
        i = seen.get(kind, 0)
        seen[kind] = i + 1
        out.append(Case(prompt, cwd, kind, expected, SPLITS[i % 2]))
    return out


def cases() -> list[Case]:
    expected = _expected()
    rows = []
    for kind, table in (("hit", HIT), ("xling", XLING)):
        for group, prompt, *where in table:
            project = where[0] if where else _project_of(group)
            rows.append((prompt, cwd_of(project), kind, expected[group], group))
    for project, prompts in UNRELATED.items():
        rows += [(p, cwd_of(project), "unrelated", (), "") for p in prompts]
    places = (*PROJECTS, NO_NOTES)
    rows += [(p, cwd_of(places[i % len(places)]), "trivial", (), "") for i, p in enumerate(TRIVIAL)]
    return _split(rows)
