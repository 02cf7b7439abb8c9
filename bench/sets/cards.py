"""Claude Code-style daily cards about coding work, in the recorder's format (frontmatter name,
description, session_id, source_conversation; sections What happened / Conclusions / Follow-ups /
Source), over a few projects and weeks, with questions a user would ask later in other words.

Written by hand after the shape of real sessions (tests/fixtures/claude_code): debugging, CI, setup,
reviews, migrations, releases; some cards in Chinese. Each question has exactly one relevant card."""

from __future__ import annotations

import hashlib

# (date, project, name, description, what happened, conclusions, follow-ups, questions)
CARDS: list[tuple[str, str, str, str, list[str], list[str], list[str], list[str]]] = [
    (
        "2026-03-02",
        "shopfront",
        "Flaky checkout test in CI",
        "The checkout integration test failed about one run in five on GitHub Actions. The cause was a race between the "
        "payment mock server starting and the first request; the fix waits for the mock's health endpoint.",
        [
            "Reproduced locally with `pytest -p no:randomly tests/integration/test_checkout.py --count 50`: 9 failures.",
            "Found that `MockPayments.start()` returns before the socket listens.",
            "Added `wait_until_healthy(url, timeout=5)` in `conftest.py` and used it in the fixture.",
        ],
        [
            "The flakiness was a startup race, not a timeout: raising the timeout would only hide it.",
            "The user wants every flaky test fixed at the cause, never retried with `pytest-rerunfailures`.",
        ],
        ["Watch the next 20 CI runs of main."],
        [
            "how did we fix the flaky CI test?",
            "why did the checkout test fail randomly on GitHub Actions",
            "does the user allow rerunning flaky tests automatically",
        ],
    ),
    (
        "2026-03-03",
        "shopfront",
        "Dev server port and proxy setup",
        "Set up the local dev environment for the shopfront frontend. Vite runs on port 5174 because 5173 is taken by the "
        "admin app; API calls go through Vite's proxy to the backend on 8081.",
        [
            "`npm run dev` failed with EADDRINUSE on 5173 (the admin app).",
            "Set `server.port = 5174` and `strictPort: true` in `vite.config.ts`.",
            "Proxied `/api` to `http://localhost:8081` so cookies work without CORS.",
        ],
        ["Dev server: http://localhost:5174; backend: 8081; admin app keeps 5173."],
        ["- [ ] Document the ports in CONTRIBUTING.md."],
        [
            "which port does the dev server use?",
            "how do frontend requests reach the backend locally",
            "what port is the admin app on",
        ],
    ),
    (
        "2026-03-04",
        "shopfront",
        "Postgres 16 upgrade plan",
        "Planned the move of the shopfront database from Postgres 13 to 16 using pg_upgrade with --link on a snapshot "
        "first; measured 7 minutes of downtime on the staging copy.",
        [
            "Took an EBS snapshot of staging and ran `pg_upgrade --link` on it: 7 min.",
            "Reindexed the GIN indexes afterwards (`REINDEX INDEX CONCURRENTLY`).",
            "Checked extensions: pg_trgm and uuid-ossp are fine on 16.",
        ],
        [
            "Production upgrade in a Sunday window; expected downtime under 10 minutes.",
            "Logical replication was rejected: too much setup for a 40 GB database.",
        ],
        ["- [ ] Book the Sunday maintenance window.", "- [ ] Rehearse rollback from the snapshot."],
        [
            "how long was the downtime when we tested the database upgrade",
            "why didn't we use logical replication for the database move",
            "which extensions did we check before moving to the new postgres version",
        ],
    ),
    (
        "2026-03-05",
        "shopfront",
        "Rate limiting the login endpoint",
        "Added rate limiting to POST /login after credential-stuffing traffic: 5 attempts per minute per IP and 20 per hour "
        "per account, backed by Redis with a sliding window.",
        [
            "Saw 40k failed logins from 300 IPs in the access logs.",
            "Implemented a sliding-window limiter in `auth/ratelimit.py` with Redis sorted sets.",
            "Returned 429 with a Retry-After header; added tests for both limits.",
        ],
        [
            "Limits: 5/min per IP, 20/hour per account.",
            "Chose sliding window over token bucket to avoid bursts at the window edge.",
        ],
        ["- [ ] Add a Grafana panel for 429s."],
        [
            "what limits did we put on login attempts",
            "why sliding window instead of token bucket",
            "what do clients get back when they are throttled",
        ],
    ),
    (
        "2026-03-06",
        "shopfront",
        "Stale prices from the product cache",
        "Product pages showed old prices for up to an hour after an admin edit. The cache key did not include the price "
        "list version; now edits bump a version counter and the key includes it.",
        [
            "Reproduced: edit price in admin, page still old after 10 min.",
            "Cache key was `product:{id}`; TTL 3600 s.",
            "Changed the key to `product:{id}:v{price_list_version}` and bump the version on save.",
        ],
        ["Versioned keys instead of explicit deletes: deletes raced with concurrent readers repopulating the cache."],
        [],
        ["why were product pages showing old prices", "how does the cache get invalidated when an admin edits a price"],
    ),
    (
        "2026-03-09",
        "shopfront",
        "Release 2.4.0 and changelog",
        "Cut release 2.4.0 of shopfront: new checkout flow, Postgres 16, login rate limiting. Tagged v2.4.0, generated the "
        "changelog with git-cliff, and deployed with the blue/green switch.",
        [
            "Ran `git cliff --tag v2.4.0 -o CHANGELOG.md`.",
            "Deployed green, ran smoke tests, switched the load balancer, kept blue for 24 h.",
        ],
        ["Changelog is generated from conventional commits; hand edits go in the release notes only."],
        ["- [ ] Remove the blue environment on Wednesday."],
        ["what went into release 2.4.0", "how do we generate the changelog", "how was the last release rolled out"],
    ),
    (
        "2026-03-10",
        "shopfront",
        "Sentry noise from bots",
        "Sentry was flooded with 404 errors from scanners probing /wp-admin. Added an ignore rule for known scanner paths "
        "and a before_send filter for user agents containing 'bot'.",
        [
            "Counted 12k events/day, 95% from /wp-admin, /.env and /phpmyadmin.",
            "Added `ignore_transactions` and a `before_send` hook in `sentry.py`.",
        ],
        ["Real 404s from our own links still report; only scanner paths are dropped."],
        [],
        ["how did we stop the error tracker from filling up with scanner traffic"],
    ),
    (
        "2026-03-11",
        "pipeline",
        "Airflow DAG retries and SLAs",
        "The nightly ingest DAG failed silently when the vendor SFTP was down. Added retries (3, exponential from 5 "
        "minutes), an SLA of 06:00 and a Slack alert on SLA miss.",
        [
            "DAG `vendor_ingest` had `retries=0`; the task failed at 02:10 and nobody noticed until noon.",
            "Set `retries=3`, `retry_exponential_backoff=True`, `retry_delay=5min`.",
            "Added `sla=timedelta(hours=4)` and an `sla_miss_callback` posting to #data-alerts.",
        ],
        ["The ingest must finish by 06:00 for the morning reports."],
        ["- [ ] Ask the vendor for a status page."],
        [
            "what happens now when the vendor's sftp is down at night",
            "where do data pipeline alerts go",
            "by when must the nightly import be done",
        ],
    ),
    (
        "2026-03-12",
        "pipeline",
        "Parquet schema drift",
        "A vendor added a column and changed `amount` from int to decimal, which broke the Spark job. Added schema "
        "validation with an explicit contract and `mergeSchema` only for additive changes.",
        [
            "Job failed with `AnalysisException: Parquet column cannot be converted`.",
            "Wrote `contracts/vendor_orders.yaml` with the expected schema.",
            "Validation step rejects type changes and quarantines the file.",
        ],
        ["Additive columns are accepted automatically; type changes need a human."],
        ["- [ ] Tell the vendor about the contract."],
        ["what broke the spark job last week", "which schema changes are accepted without review"],
    ),
    (
        "2026-03-13",
        "pipeline",
        "dbt incremental models",
        "Converted the three largest dbt models to incremental with `unique_key` and a 3-day lookback, which cut the "
        "nightly run from 48 to 11 minutes.",
        [
            "Models: `fct_orders`, `fct_sessions`, `dim_customers_history`.",
            "Used `is_incremental()` with `updated_at > max(updated_at) - interval '3 days'`.",
        ],
        ["3-day lookback covers late-arriving events; a full refresh runs every Sunday."],
        [],
        ["how much faster did the nightly dbt run get", "why do we look back three days in the incremental models"],
    ),
    (
        "2026-03-16",
        "pipeline",
        "Backfill of March sessions",
        "Backfilled session data for March 1-10 after the tracking bug. Ran the backfill in daily partitions with "
        "concurrency 2 to keep warehouse credits under the budget of 400.",
        [
            "`airflow dags backfill -s 2026-03-01 -e 2026-03-10 sessions_daily`.",
            "Limited `max_active_runs=2`; used 310 credits.",
        ],
        ["Backfills run in daily partitions, never as one big query."],
        [],
        ["how many warehouse credits did the backfill use", "how do we run backfills"],
    ),
    (
        "2026-03-17",
        "infra",
        "Terraform state lock stuck",
        "Terraform apply hung on 'Acquiring state lock'. A crashed CI job had left a lock in the DynamoDB table; removed it "
        "with `terraform force-unlock` after checking no apply was running.",
        [
            "Error showed lock ID 7c1e… held by the CI runner from yesterday.",
            "Confirmed in CI that the job was dead, then `terraform force-unlock <id>`.",
        ],
        ["Never force-unlock without checking the holder; CI jobs now have a 30 min timeout."],
        [],
        ["what did we do when terraform was stuck waiting for the lock", "why do CI jobs have a 30 minute timeout"],
    ),
    (
        "2026-03-18",
        "infra",
        "Kubernetes pods OOMKilled",
        "The worker pods were OOMKilled under load. The memory limit was 512Mi while the image-resize step peaks at 900Mi; "
        "raised the limit to 1536Mi and set requests to 1Gi.",
        [
            "`kubectl describe pod` showed `OOMKilled`, exit code 137.",
            "Profiled with memray: Pillow decoding large PNGs peaks at 900 MB.",
            "Changed the Helm values: `resources.limits.memory: 1536Mi`, `requests.memory: 1Gi`.",
        ],
        ["Also capped input images at 40 megapixels to bound memory."],
        [],
        [
            "why were the worker pods getting killed",
            "what memory limit do the workers have now",
            "what is the maximum image size we accept",
        ],
    ),
    (
        "2026-03-19",
        "infra",
        "Cluster autoscaler not scaling down",
        "Nodes stayed up overnight because pods without a PodDisruptionBudget used local storage. Added "
        "`cluster-autoscaler.kubernetes.io/safe-to-evict: true` to the cache pods.",
        ["Autoscaler logs: 'pod with local storage, not safe to evict'.", "Annotated the redis-cache deployment."],
        ["Saves about 6 nodes overnight (~$40/day)."],
        [],
        ["why didn't the cluster shrink at night", "how much do we save by letting nodes scale down"],
    ),
    (
        "2026-03-20",
        "infra",
        "TLS certificate expiry alert",
        "The certificate for api.example.test expired because cert-manager's DNS01 solver lost its Route53 permissions "
        "after an IAM cleanup. Restored the policy and added a 14-day expiry alert.",
        [
            "Clients saw `certificate has expired`; cert-manager events: `AccessDenied route53:ChangeResourceRecordSets`.",
            "Re-attached the policy, renewed with `cmctl renew`.",
        ],
        ["Alert at 14 days before expiry via the blackbox exporter."],
        ["- [ ] Review the IAM cleanup script."],
        ["why did the api certificate expire", "how early do we get warned about certificates"],
    ),
    (
        "2026-03-23",
        "cli-tool",
        "Packaging the CLI with uv",
        "Moved the `fastnote` CLI from setup.py to pyproject with hatchling and uv. Lock file committed; `uv tool install .` "
        "works; Python 3.10 is the minimum.",
        [
            "Replaced setup.py and requirements.txt with pyproject.toml.",
            "`uv lock`, `uv sync`, `uv tool install .` tested on a clean container.",
        ],
        ["Minimum Python 3.10 (match statements used).", "The user prefers uv over pip-tools for new projects."],
        [],
        ["what is the minimum python version for the cli", "which tool does the user prefer for locking dependencies"],
    ),
    (
        "2026-03-24",
        "cli-tool",
        "Windows path bug in fastnote",
        "On Windows `fastnote open` failed for notes with spaces in their path because the editor command was built "
        "with string formatting. Switched to a list argv with `subprocess.run` and `shlex` only on POSIX.",
        [
            "Bug report: `'C:\\Users\\Ana' is not recognized`.",
            "Rewrote `open_in_editor()` to pass a list; added a test with a path containing spaces.",
        ],
        ["Never build shell command strings; always argv lists."],
        [],
        ["why did opening notes fail on windows", "how do we start the user's editor now"],
    ),
    (
        "2026-03-25",
        "cli-tool",
        "Shell completion",
        "Added shell completion for bash, zsh and fish to fastnote via click's built-in completion; documented "
        '`eval "$(_FASTNOTE_COMPLETE=zsh_source fastnote)"`.',
        ["Tested completion of note names by dynamic `shell_complete` callback."],
        ["Completion of note names reads the index, not the disk, to stay under 50 ms."],
        [],
        ["how do I enable tab completion in zsh for the notes tool", "which shells have completion"],
    ),
    (
        "2026-03-26",
        "cli-tool",
        "Release to PyPI with trusted publishing",
        "Published fastnote 0.3.0 to PyPI with GitHub's trusted publishing (OIDC), no API token stored. The release "
        "workflow runs on tags `v*`.",
        [
            "Configured the PyPI trusted publisher for the repo and workflow `release.yml`.",
            "Pushed tag v0.3.0; the workflow built sdist+wheel and uploaded.",
        ],
        ["No long-lived PyPI token anywhere."],
        [],
        ["how is the package published without a token", "what triggers the release workflow"],
    ),
    (
        "2026-03-27",
        "ml-service",
        "Model server latency regression",
        "p95 latency of the recommendation endpoint rose from 80 to 210 ms after the torch upgrade. Cause: intra-op threads "
        "defaulted to all cores and contended with the web workers; set `torch.set_num_threads(2)`.",
        [
            "py-spy showed threads spinning in OpenMP barriers.",
            "Setting `OMP_NUM_THREADS=2` brought p95 back to 85 ms.",
        ],
        ["Thread counts are set explicitly in the container env, never left to defaults."],
        [],
        ["why did recommendations get slow after the upgrade", "what did we set the thread count to"],
    ),
    (
        "2026-03-30",
        "ml-service",
        "Feature store backfill bug",
        "Training data leaked future information: the feature join used event time instead of the as-of time. Rewrote "
        "the join as a point-in-time join; offline AUC fell from 0.91 to 0.84, which matches online.",
        [
            "Noticed offline AUC 0.91 vs online 0.83.",
            "Found `features.join(labels, on='user_id')` without the timestamp condition.",
        ],
        ["Point-in-time joins only; the lower AUC is the honest one."],
        ["- [ ] Add a leakage test to the training pipeline."],
        ["why was the offline metric so much better than production", "what was the honest auc after the fix"],
    ),
    (
        "2026-03-31",
        "ml-service",
        "GPU memory on the training box",
        "Training crashed with CUDA out of memory at batch size 64. Enabled gradient checkpointing and bf16; batch 64 now "
        "fits in 22 GB on the A10G.",
        [
            "`torch.cuda.OutOfMemoryError` at step 1.",
            "Turned on `model.gradient_checkpointing_enable()` and `bf16=True`.",
        ],
        ["Training is ~20% slower with checkpointing, acceptable."],
        [],
        ["how did we make batch size 64 fit on the gpu", "how much slower is training with checkpointing"],
    ),
    (
        "2026-04-01",
        "shopfront",
        "Accessibility audit of checkout",
        "Ran axe and a screen-reader pass over checkout. Fixed missing labels on the card fields, focus lost after "
        "validation errors, and 3.1:1 contrast on the disabled button.",
        [
            "axe found 14 issues; 9 fixed today.",
            "Focus now moves to the first invalid field with `aria-describedby` to the message.",
        ],
        ["Target WCAG 2.1 AA for checkout."],
        ["- [ ] Fix the remaining 5 issues in the address form."],
        ["what accessibility problems did we find in checkout", "which accessibility level are we aiming for"],
    ),
    (
        "2026-04-02",
        "shopfront",
        "Feature flag cleanup",
        "Removed 11 stale feature flags older than 90 days from LaunchDarkly and the code. Added a CI check that fails "
        "when a flag has been 100% on for more than 30 days.",
        ["Listed flags with the API; 11 fully rolled out.", "Deleted the code paths and the flags."],
        ["Flags live at most 30 days after full rollout."],
        [],
        ["how many old flags did we delete", "how long can a flag stay after it's fully on"],
    ),
    (
        "2026-04-03",
        "pipeline",
        "Snowflake cost spike",
        "Warehouse spend doubled. A BI dashboard refreshed every 5 minutes on an XL warehouse. Moved it to a small "
        "warehouse with a 1-hour refresh and set a resource monitor at 80% of the monthly quota.",
        [
            "Query history: 8,600 runs/day of the same dashboard query.",
            "Changed the dashboard schedule; created `RESOURCE MONITOR bi_monitor`.",
        ],
        ["Dashboards refresh hourly at most unless the owner justifies more."],
        [],
        ["why did the data warehouse bill double", "what limit did we put on warehouse spending"],
    ),
    (
        "2026-04-06",
        "infra",
        "Docker build cache in CI",
        "CI image builds took 14 minutes. Enabled BuildKit cache export to the registry (`--cache-to type=registry`) and "
        "reordered the Dockerfile to copy lock files before sources; builds now take 3 minutes.",
        ["Layer for `pip install` was rebuilt on every commit.", "Moved `COPY requirements.lock` above `COPY src/`."],
        ["Lock files first, sources last in every Dockerfile."],
        [],
        ["how did we speed up docker builds in ci", "how long do image builds take now"],
    ),
    (
        "2026-04-07",
        "infra",
        "Log retention and costs",
        "CloudWatch log costs were $1.2k/month. Set retention to 30 days for app logs and 365 for audit logs, and moved "
        "debug logs to S3 with a lifecycle rule.",
        ["Most groups had 'never expire'.", "Wrote a script to set retention on all groups."],
        ["Audit logs are kept a year for compliance."],
        [],
        ["how long do we keep audit logs", "what did we do about expensive logging"],
    ),
    (
        "2026-04-08",
        "cli-tool",
        "Fuzzy search in fastnote",
        "Added fuzzy note search using rapidfuzz with a score cutoff of 70; exact prefix matches are ranked first.",
        ["Tried thefuzz (slow) and rapidfuzz (50x faster)."],
        ["rapidfuzz `WRatio`, cutoff 70, prefix matches first."],
        [],
        ["which library did we pick for fuzzy matching and why", "what score cutoff does fuzzy search use"],
    ),
    (
        "2026-04-09",
        "ml-service",
        "A/B test of the new ranking model",
        "Launched an A/B test of ranking model v7 against v6 on 10% of traffic for two weeks; primary metric is "
        "add-to-cart rate, guardrail is p95 latency under 120 ms.",
        ["Configured the experiment in the flag service with sticky bucketing by user id."],
        ["Minimum detectable effect 1.5% at 80% power needs 14 days."],
        ["- [ ] Read results on April 23."],
        ["what's the main metric of the ranking experiment", "when can we read the ab test results"],
    ),
    (
        "2026-04-10",
        "shopfront",
        "N+1 queries on the orders page",
        "The orders page made 300 SQL queries for 100 orders. Added `selectinload(Order.items)` and "
        "`joinedload(Order.customer)`; page time fell from 1.8 s to 160 ms.",
        [
            "SQLAlchemy echo showed one query per order for items.",
            "Added an assertion test with `assert_max_queries(5)`.",
        ],
        ["Every list endpoint gets a max-queries test."],
        [],
        ["why was the orders page slow", "how do we guard against n plus one queries now"],
    ),
    (
        "2026-04-13",
        "shopfront",
        "Secrets moved to the vault",
        "Moved the app's secrets from .env files on the servers to HashiCorp Vault with the Kubernetes auth method; the "
        "app reads them at start through the agent injector.",
        ["Created policies per service; rotated the DB password during the move."],
        ["No secrets in env files or images anymore."],
        [],
        ["where are the application secrets stored now", "did we rotate the database password"],
    ),
    (
        "2026-04-14",
        "pipeline",
        "Kafka consumer lag",
        "The clickstream consumer fell 2 hours behind. Partitions were unbalanced because the key was the country code; "
        "switched to session id as key and went from 6 to 24 partitions.",
        [
            "Lag graph: partitions for US and DE at 90% of traffic.",
            "New topic with 24 partitions, mirrored, consumers switched.",
        ],
        ["Keys must spread evenly; country is a bad key."],
        [],
        ["why did the clickstream consumer fall behind", "how many partitions does the topic have now"],
    ),
    (
        "2026-04-15",
        "infra",
        "On-call runbook for database failover",
        "Wrote the runbook for a manual Postgres failover with Patroni: check replication lag, `patronictl switchover`, "
        "verify the app reconnects, and page the DBA if lag is over 1 GB.",
        ["Rehearsed on staging: 40 s of write unavailability."],
        ["Switchover only when lag < 1 GB; otherwise wait or page."],
        [],
        ["how do we fail over the database by hand", "how long were writes unavailable in the failover rehearsal"],
    ),
    (
        "2026-04-16",
        "cli-tool",
        "Config file format decision",
        "Chose TOML for fastnote's config (`~/.config/fastnote/config.toml`) over YAML: no implicit typing surprises and "
        "tomllib is in the standard library since 3.11.",
        ["Compared YAML (Norway problem), JSON (no comments), TOML."],
        ["TOML with `tomllib`, `tomli` backport for 3.10."],
        [],
        ["why toml for the config file", "where does the notes tool keep its settings"],
    ),
    (
        "2026-04-17",
        "ml-service",
        "Embedding model swap",
        "Replaced the sentence embedding model with a smaller multilingual one for search: recall@10 stayed at 0.82 "
        "while CPU time per query fell by 60%.",
        ["Benchmarked on 2,000 labelled queries."],
        ["Smaller model is good enough; keep the old one as a fallback config."],
        [],
        ["did switching to the smaller embedding model hurt recall", "how much cpu did the new embedding model save"],
    ),
    (
        "2026-04-20",
        "shopfront",
        "Image CDN and WebP",
        "Product images now go through the CDN with on-the-fly WebP/AVIF conversion; LCP on the product page improved "
        "from 3.4 s to 1.9 s on 4G.",
        ["Configured `Accept`-based format negotiation and `srcset` widths 320/640/1280."],
        ["AVIF for browsers that accept it, WebP otherwise, JPEG fallback."],
        [],
        ["how much did page load improve with the image cdn", "which image widths do we serve"],
    ),
    (
        "2026-04-21",
        "infra",
        "Disk full on the build runner",
        "The self-hosted runner ran out of disk: old Docker images filled 180 GB. Added a nightly `docker system prune "
        "-af --filter until=72h` cron and a disk alert at 85%.",
        ["`df -h` showed /var/lib/docker at 100%."],
        ["Images older than 3 days are pruned every night."],
        [],
        ["why did the build machine run out of space", "how often are old docker images cleaned up"],
    ),
    (
        "2026-04-22",
        "pipeline",
        "PII in the analytics tables",
        "Found raw email addresses in `events.properties`. Added a hashing step (SHA-256 with a pepper) in the ingest "
        "and deleted the historic rows after legal approved.",
        ["Scanned with a regex over 30 days of events: 1.2M emails."],
        ["Emails are hashed at ingest; the pepper lives in the vault."],
        [],
        ["what did we do about email addresses in the event data", "where is the hashing pepper kept"],
    ),
    (
        "2026-04-23",
        "ml-service",
        "Ranking A/B test results",
        "Read the v7 ranking experiment: add-to-cart +2.1% (significant), p95 latency 104 ms within the guardrail. "
        "Rolled v7 out to 100%.",
        ["Checked sample ratio mismatch: none."],
        ["v7 ships; v6 kept as rollback for a month."],
        [],
        ["did the new ranking model win the experiment", "how long do we keep the old ranking model around"],
    ),
    (
        "2026-04-24",
        "shopfront",
        "Dependabot and renovate",
        "Replaced Dependabot with Renovate to group minor updates weekly and automerge patch updates that pass CI.",
        ["Wrote `renovate.json` with groups for eslint, types and testing libs."],
        ["Patch updates automerge; majors need review."],
        [],
        ["which dependency updates are merged automatically", "why did we move off dependabot"],
    ),
    # Chinese cards (中文会话)
    (
        "2026-04-27",
        "shopfront",
        "修复订单导出乱码",
        "运营导出的订单 CSV 在 Excel 里中文乱码。原因是文件没有 BOM，Excel 按 GBK 解析；导出时加上 UTF-8 BOM 后正常。",
        ["复现：用 Excel 打开导出文件，收货人姓名全是乱码。", "在 `export_orders()` 里改为 `encoding='utf-8-sig'`。"],
        ["CSV 导出统一用 utf-8-sig，方便 Excel 直接打开。"],
        [],
        ["why were chinese names garbled in the exported spreadsheet", "订单导出文件现在用什么编码"],
    ),
    (
        "2026-04-28",
        "pipeline",
        "定时任务时区问题",
        "日报任务在夏令时切换后提前了一小时。cron 用的是服务器本地时区；改成 UTC 并在调度里显式写 `timezone='Asia/Shanghai'`。",
        ["排查发现服务器时区是 America/New_York。", "Airflow DAG 改为 `pendulum.timezone('Asia/Shanghai')`。"],
        ["所有调度显式写时区，服务器一律 UTC。"],
        [],
        ["why did the daily report run an hour early", "服务器统一用哪个时区"],
    ),
    (
        "2026-04-29",
        "infra",
        "灰度发布流程",
        "和用户一起定了灰度发布流程：先 5% 流量观察 30 分钟，错误率不超过 0.5% 再到 50%，最后全量；任何一步超标自动回滚。",
        ["用 Argo Rollouts 配置了 canary 步骤和 analysis 模板。"],
        ["错误率阈值 0.5%，每步观察 30 分钟。", "用户坚持自动回滚，不要人工确认。"],
        [],
        [
            "what error rate stops a canary rollout",
            "金丝雀发布每一步观察多久",
            "does the user want a manual approval before rollback",
        ],
    ),
    (
        "2026-04-30",
        "cli-tool",
        "单元测试覆盖率门槛",
        "讨论了 fastnote 的测试覆盖率要求：整体 85%，新代码 90%，在 CI 里用 `coverage report --fail-under=85` 卡住。",
        ["接入 diff-cover 检查新代码覆盖率。"],
        ["用户认为覆盖率只是底线，关键路径还要有行为测试。"],
        [],
        ["what coverage threshold does ci enforce", "新代码的覆盖率要求是多少"],
    ),
    (
        "2026-05-04",
        "ml-service",
        "模型服务冷启动",
        "模型服务扩容时新 Pod 要 90 秒才就绪，因为启动时从 S3 下载 1.2 GB 的权重。改成打进镜像并用 readiness probe 预热后降到 15 秒。",
        ["用 `kubectl get events` 看到 readiness 失败持续 80 秒。"],
        ["权重随镜像发布，不在启动时下载。"],
        [],
        ["why did new model pods take so long to become ready", "模型权重现在放在哪里"],
    ),
    (
        "2026-05-05",
        "shopfront",
        "Code review: payment webhook handler",
        "Reviewed the PR for the payment provider webhook. Asked for signature verification before parsing, idempotency by "
        "event id, and returning 200 quickly with the work queued.",
        [
            "Found the handler parsed JSON before checking the HMAC.",
            "Suggested a `processed_events` table with a unique constraint on event id.",
        ],
        ["Webhooks: verify, dedupe, enqueue, return 200 within 2 s."],
        ["- [ ] Re-review after changes."],
        ["what did I ask for in the webhook review", "how do we avoid processing the same webhook twice"],
    ),
    (
        "2026-05-06",
        "infra",
        "SSH access via bastion removed",
        "Replaced the SSH bastion with AWS SSM Session Manager; port 22 is closed on all instances and sessions are "
        "logged to S3.",
        ["Installed the SSM agent via the base AMI; removed the bastion's security group."],
        ["No inbound SSH anywhere; session logs kept 90 days."],
        [],
        ["how do we get a shell on servers now", "how long are session logs kept"],
    ),
    (
        "2026-05-07",
        "pipeline",
        "Great Expectations checks on revenue",
        "Added data quality checks on the revenue table: non-null order ids, amount >= 0, and daily total within 3 sigma "
        "of the trailing 28 days; failures block the dashboard refresh.",
        ["Wrote the suite `revenue_daily` with 6 expectations."],
        ["A failed check blocks downstream refresh instead of just alerting."],
        [],
        ["what quality checks run on the revenue data", "what happens when a data check fails"],
    ),
    (
        "2026-05-08",
        "cli-tool",
        "Startup time of fastnote",
        "fastnote took 420 ms to print --help. Lazy-imported rich and the search index; now 90 ms.",
        ["`python -X importtime` showed rich and numpy at the top."],
        ["Heavy imports go inside the commands that need them."],
        [],
        ["why was the notes cli slow to start", "how fast does the help screen come up now"],
    ),
]


def _card(
    i: int,
    date: str,
    project: str,
    name: str,
    desc: str,
    happened: list[str],
    conclusions: list[str],
    followups: list[str],
) -> str:
    sid = hashlib.sha256(f"session-{i}".encode()).hexdigest()
    sid = f"{sid[:8]}-{sid[8:12]}-{sid[12:16]}-{sid[16:20]}-{sid[20:32]}"
    zh = any("\u4e00" <= ch <= "\u9fff" for ch in name)
    body = [
        f"---\nname: {name}\ndescription: {desc}\nsession_id: {sid}\nproject: {project}\n"
        f'source_conversation: "[[session/claude_code/{sid}.jsonl]]"\n---',
        f"# {name}",
        "",
        "## 经过" if zh else "## What happened",
        *[f"- {x}" for x in happened],
    ]
    if conclusions:
        body += ["", "## 结论" if zh else "## Conclusions", *[f"- {x}" for x in conclusions]]
    if followups:
        body += ["", "## 后续" if zh else "## Follow-ups", *followups]
    body += ["", "## 来源" if zh else "## Source", f"[[session/claude_code/{sid}.jsonl]]", ""]
    return "\n".join(body)


def generate() -> tuple[dict[str, str], list[tuple[str, set[str]]]]:
    files: dict[str, str] = {}
    queries: list[tuple[str, set[str]]] = []
    for i, (date, project, name, desc, happened, conclusions, followups, questions) in enumerate(CARDS):
        slug = "-".join(name.replace(":", "").replace("/", " ").split()).lower()
        path = f"daily/{date}/{slug}.md"
        files[path] = _card(i, date, project, name, desc, happened, conclusions, followups)
        queries += [(q, {path}) for q in questions]
    return files, queries
