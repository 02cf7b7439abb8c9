"""The dream integrator's recall: 34 existing digest nodes (preferences, procedures, wiki) and, for
each, a new unit that states the same thing in other words — a paraphrase, the other language
(en<->zh), or different wording of the same preference or procedure. The integrator searches with
the unit's name and summary; the existing node must come back in its top 3 (else it becomes a
duplicate node). Daily notes sit beside the digest, as in a real workspace; recall is over digest/."""

from __future__ import annotations

# (path, name, description, body) of the existing node; then (unit name, unit summary)
PAIRS: list[tuple[str, str, str, str, str, str]] = [
    (
        "digest/personal/prefers-pnpm.md",
        "Prefers pnpm",
        "The user uses pnpm for JavaScript projects.",
        "The user installs JavaScript dependencies with pnpm, never npm or yarn, because of its strict node_modules.",
        "JS package manager choice",
        "For Node projects the user wants pnpm instead of npm.",
    ),
    (
        "digest/personal/short-answers.md",
        "Short, direct answers",
        "The user wants brief replies without marketing tone.",
        "Keep answers short and direct; no marketing phrases, no long preambles.",
        "回答风格",
        "用户希望回答简短直接，不要营销式的措辞。",
    ),
    (
        "digest/personal/no-retry-flaky.md",
        "Fix flaky tests at the cause",
        "Never paper over flaky tests with retries.",
        "Flaky tests are fixed at their cause; rerun plugins such as pytest-rerunfailures are not accepted.",
        "Attitude to intermittent test failures",
        "The user rejects automatic reruns of unstable tests and wants the root cause fixed.",
    ),
    (
        "digest/personal/uv-for-python.md",
        "uv for Python projects",
        "New Python projects use uv for locking and installs.",
        "The user prefers uv over pip-tools and poetry for new Python projects: `uv lock`, `uv sync`.",
        "Python 依赖管理工具",
        "新的 Python 项目用户选 uv 来锁定和安装依赖。",
    ),
    (
        "digest/personal/argv-not-shell.md",
        "Never build shell command strings",
        "Subprocesses get argv lists.",
        "Commands are started with a list of arguments, never a formatted shell string, to avoid quoting bugs.",
        "Running external commands safely",
        "Pass arguments as a list to subprocess rather than composing a command line.",
    ),
    (
        "digest/personal/auto-rollback.md",
        "Automatic rollback on canary failure",
        "Canary steps roll back by themselves.",
        "The user insists that a failing canary rolls back automatically, without a manual approval step.",
        "金丝雀失败怎么处理",
        "用户坚持灰度失败时自动回滚，不需要人工确认。",
    ),
    (
        "digest/personal/coverage-floor.md",
        "Coverage is a floor, not the goal",
        "Coverage thresholds plus behaviour tests.",
        "85 % overall and 90 % on new code are minimums; critical paths also need behaviour tests.",
        "View on test coverage numbers",
        "The user treats coverage percentages as a minimum bar and still wants behavioural tests for key paths.",
    ),
    (
        "digest/personal/toml-config.md",
        "TOML for configuration files",
        "Config files are TOML.",
        "Configuration is written in TOML (tomllib), not YAML (implicit typing) or JSON (no comments).",
        "配置文件格式偏好",
        "配置文件用 TOML，不用 YAML 或 JSON。",
    ),
    (
        "digest/personal/dark-terminal.md",
        "Dark terminal theme",
        "The user works in a dark terminal theme.",
        "Screenshots and examples should assume a dark terminal background (Solarized Dark).",
        "Terminal colours",
        "The user's shell uses a dark colour scheme, Solarized Dark.",
    ),
    (
        "digest/personal/commit-style.md",
        "Conventional commits",
        "Commit messages follow Conventional Commits.",
        "Commits use `feat:`, `fix:`, `chore:` prefixes; the changelog is generated from them.",
        "提交信息格式",
        "提交说明要用 feat:/fix: 这样的前缀，changelog 据此生成。",
    ),
    (
        "digest/personal/morning-focus.md",
        "No meetings before noon",
        "Mornings are kept for focused work.",
        "The user blocks 9-12 for deep work and declines meetings in that window.",
        "Schedule preference",
        "The user keeps mornings free of meetings to concentrate.",
    ),
    (
        "digest/personal/typescript-strict.md",
        "TypeScript strict mode",
        "All TS projects enable strict.",
        "`strict: true` and `noUncheckedIndexedAccess` are on in every tsconfig.",
        "TS 编译选项",
        "用户所有 TypeScript 项目都开启 strict 严格模式。",
    ),
    (
        "digest/procedure/release-process.md",
        "Release process",
        "How a release is cut and rolled out.",
        "1. `git cliff --tag vX.Y.Z -o CHANGELOG.md`\n2. deploy green, smoke tests\n3. switch the load balancer, keep blue 24 h.",
        "Shipping a new version",
        "Tag, generate the changelog from commits, blue/green deploy with smoke tests, keep the old side a day.",
    ),
    (
        "digest/procedure/db-failover.md",
        "Manual database failover",
        "Patroni switchover runbook.",
        "Check replication lag (< 1 GB), `patronictl switchover`, verify reconnects, page the DBA otherwise.",
        "数据库主备切换步骤",
        "先看复制延迟，小于 1GB 才用 patronictl 切换，确认应用重连。",
    ),
    (
        "digest/procedure/terraform-unlock.md",
        "Clearing a stuck Terraform lock",
        "When apply waits on the state lock.",
        "Find the lock holder, make sure that CI job is dead, then `terraform force-unlock <id>`.",
        "Terraform hangs acquiring state lock",
        "Confirm the holder job is gone before running force-unlock.",
    ),
    (
        "digest/procedure/backfill.md",
        "Running a backfill",
        "Backfills run in daily partitions.",
        "`airflow dags backfill -s START -e END`, `max_active_runs=2`, watch warehouse credits.",
        "补数流程",
        "补历史数据按天分区跑，并发限制为 2，注意仓库额度。",
    ),
    (
        "digest/procedure/key-rotation.md",
        "Rotating API keys",
        "Steps to rotate a leaked or old key.",
        "Create the new key in the vault, roll the services, revoke the old key, check the audit log.",
        "Replacing credentials after a leak",
        "Issue a new secret, redeploy, revoke the old one and review access logs.",
    ),
    (
        "digest/procedure/flaky-test-debug.md",
        "Debugging a flaky test",
        "How to find the cause of an intermittent failure.",
        "Run it 50 times with `--count 50` and random order off, look for startup races and shared state.",
        "排查偶发失败的测试",
        "把测试重复跑几十次，关闭随机顺序，找启动竞争和共享状态。",
    ),
    (
        "digest/procedure/pg-upgrade.md",
        "Postgres major upgrade",
        "pg_upgrade on a snapshot first.",
        "Snapshot, `pg_upgrade --link` on the copy to time it, reindex GIN indexes, then production in a window.",
        "Moving the database to a new major version",
        "Rehearse pg_upgrade with --link on a snapshot, then do production in a maintenance window.",
    ),
    (
        "digest/procedure/oom-pods.md",
        "Pods OOMKilled",
        "What to do when pods die with exit code 137.",
        "Profile peak memory (memray), set requests/limits above the peak, bound input sizes.",
        "容器内存不足被杀",
        "Pod 退出码 137 时先测峰值内存，再调高 limit 并限制输入大小。",
    ),
    (
        "digest/procedure/docker-cache.md",
        "Fast Docker builds in CI",
        "Layer order and registry cache.",
        "Copy lock files before sources; BuildKit `--cache-to type=registry`.",
        "Speeding up image builds",
        "Put dependency lock files early in the Dockerfile and export the build cache to the registry.",
    ),
    (
        "digest/procedure/webhook-handling.md",
        "Handling webhooks",
        "Verify, dedupe, enqueue, answer fast.",
        "Verify the signature before parsing, dedupe by event id, queue the work, return 200 within 2 s.",
        "处理第三方回调",
        "先校验签名再解析，按事件 id 去重，放进队列，2 秒内返回 200。",
    ),
    (
        "digest/procedure/cert-renewal.md",
        "Renewing TLS certificates",
        "cert-manager renewal and alerts.",
        "Check cert-manager events, fix DNS01 permissions, `cmctl renew`; alert 14 days before expiry.",
        "Expired HTTPS certificate",
        "Look at cert-manager's events, restore the DNS solver's rights, force a renewal.",
    ),
    (
        "digest/wiki/rrf.md",
        "Reciprocal rank fusion",
        "Combining rankings by 1/(k + rank).",
        "RRF adds w/(k+rank) over the rankings a document appears in; k = 60 is usual.",
        "倒数排名融合",
        "把多个排序按 1/(k+名次) 相加合并，常用 k=60。",
    ),
    (
        "digest/wiki/sliding-window.md",
        "Sliding-window rate limiting",
        "Counting requests in a moving window.",
        "A sorted set per key holds timestamps; requests older than the window are dropped before counting.",
        "Throttling with a moving time window",
        "Rate limiter that keeps request timestamps and counts those inside the last minute.",
    ),
    (
        "digest/wiki/point-in-time-join.md",
        "Point-in-time joins",
        "Avoiding label leakage in feature joins.",
        "Features are joined as of the label's timestamp, never by key alone, or the model sees the future.",
        "特征穿越",
        "特征要按标签时间点做 as-of 关联，否则训练数据泄露未来信息。",
    ),
    (
        "digest/wiki/n-plus-one.md",
        "N+1 queries",
        "One query per row of a list.",
        "An ORM loading a relation per row; fixed by selectinload/joinedload and guarded by max-query tests.",
        "ORM issuing a query per item",
        "Lists that lazily load relations row by row; eager loading fixes it.",
    ),
    (
        "digest/wiki/kafka-keys.md",
        "Choosing Kafka partition keys",
        "Keys must spread load evenly.",
        "A low-cardinality key (country) makes hot partitions; use a high-cardinality key such as session id.",
        "Kafka 分区键怎么选",
        "分区键要基数高、分布均匀，用国家做键会产生热点分区。",
    ),
    (
        "digest/wiki/gradient-checkpointing.md",
        "Gradient checkpointing",
        "Trading compute for GPU memory.",
        "Activations are recomputed in the backward pass; ~20 % slower, much less memory.",
        "Saving GPU memory during training",
        "Recompute activations during backprop to fit larger batches at some speed cost.",
    ),
    (
        "digest/wiki/omp-threads.md",
        "OpenMP thread contention",
        "Too many compute threads on shared cores.",
        "Libraries default to all cores; with web workers beside them they spin in barriers. Set threads explicitly.",
        "线程数过多导致变慢",
        "计算库默认占满所有核，和 web 进程抢 CPU，要显式设置线程数。",
    ),
    (
        "digest/wiki/csv-bom.md",
        "CSV for Excel needs a BOM",
        "UTF-8 CSV files open correctly in Excel with a BOM.",
        "Excel reads BOM-less CSV in the locale code page; write `utf-8-sig`.",
        "Garbled Chinese in spreadsheets",
        "Exported CSVs showed mojibake in Excel until we wrote them as utf-8-sig.",
    ),
    (
        "digest/wiki/cron-timezones.md",
        "Timezones in schedulers",
        "Schedules state their timezone.",
        "Servers run in UTC; every schedule names its timezone explicitly, or DST shifts jobs.",
        "定时任务与夏令时",
        "服务器用 UTC，调度显式写时区，否则夏令时会让任务提前或推后。",
    ),
    (
        "digest/wiki/trusted-publishing.md",
        "PyPI trusted publishing",
        "Publishing without API tokens.",
        "CI exchanges an OIDC token for a short-lived upload credential; no stored PyPI token.",
        "Uploading packages without secrets",
        "Use the OIDC-based publisher so the release workflow needs no long-lived token.",
    ),
    (
        "digest/wiki/versioned-cache-keys.md",
        "Versioned cache keys",
        "Invalidation by bumping a version in the key.",
        "Instead of deleting entries (which races with readers), the key embeds a version that writes bump.",
        "缓存失效方案",
        "在缓存键里带版本号，修改时递增版本，而不是删除缓存。",
    ),
]

DAILY = [
    ("daily/2026-04-02/pnpm-setup.md", "Set up the monorepo with pnpm workspaces and fixed a hoisting issue."),
    ("daily/2026-04-03/canary.md", "配置了 Argo Rollouts 的灰度步骤，失败自动回滚。"),
    ("daily/2026-04-05/rrf-notes.md", "Read about reciprocal rank fusion and tried k = 60 on the search bench."),
    ("daily/2026-04-06/webhook.md", "Reviewed the webhook handler: signature check, idempotency, queue."),
]


def generate() -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    files = {}
    for path, name, desc, body, _, _ in PAIRS:
        files[path] = (
            f"---\nname: {name}\ndescription: {desc}\n---\n{body}\n\n## Sources\n"
            f"- Observed in [[daily/2026-04-01/session.md]].\n"
        )
    for path, text in DAILY:
        files[path] = f"---\nname: {path.rsplit('/', 1)[-1][:-3]}\ndescription: {text}\n---\n{text}\n"
    queries = [(f"{uname}: {usummary}", {path}) for path, _, _, _, uname, usummary in PAIRS]
    return files, queries
