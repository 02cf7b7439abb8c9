"""Issue #7 item 5 — secrets and privacy.

A corpus of realistic secrets (support/secrets_corpus.py: cloud keys for AWS/GCP/Azure, provider API
keys, GitHub/GitLab/Slack tokens, JWTs, private keys, connection strings with passwords) is placed

* in a Claude Code transcript, which goes through the REAL Stop and SessionEnd hooks (system python3)
  and the detached recorder they start, against the fake Anthropic API;
* in files under resource/, turned into cards by ``reme-cc resource`` (the real CLI process, the
  resource agent through the Claude Code CLI) against the fake API;
* in a hand-written daily note, read by a dream.

Then: no secret is in any file under session/, daily/ or digest/, and no secret is in any request body
the fake API received (prompts, tool results, everything). The raw resource files stay byte-identical
(they are the user's own). The fake model is hostile on purpose: it echoes everything it was shown into
what it writes, so a secret that reached it would also land in the workspace.

Figures printed: corpus size and recall per family, false-positive rate on prose and standard-library code.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

from reme_cc.notes.redact import redact, scrub
from support.fake_api import FakeAPI, Request, Reply, content_text, text, tool_use
from support.redact_corpus import repository_lines
from support.secrets_corpus import ORDINARY, SECRETS, Secret

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "reme_hook.py"
SYSTEM_PYTHON = shutil.which("python3") or sys.executable
STORED = ("session", "daily", "digest")


# ---- helpers --------------------------------------------------------------------------------------
def leaks_in(data: str, secrets: list[Secret] = SECRETS) -> list[str]:
    """'kind: probe…' for every secret some probe of which occurs in ``data`` (raw or JSON-escaped)."""
    out = []
    for s in secrets:
        for p in s.probes:
            if p in data or json.dumps(p)[1:-1] in data:
                out.append(f"{s.kind}: {p[:24]}…")
                break
    return out


def stored_leaks(ws_root: Path) -> dict[str, list[str]]:
    """Every file under session/, daily/, digest/ that holds a secret."""
    found = {}
    for layer in STORED:
        for f in sorted((ws_root / layer).rglob("*")):
            if f.is_file():
                hits = leaks_in(f.read_bytes().decode("utf-8", "replace"))
                if hits:
                    found[f.relative_to(ws_root).as_posix()] = hits
    return found


def request_leaks(api: FakeAPI) -> list[str]:
    """Secrets in what we sent: the whole body except the model's own earlier turns (a scripted model
    that "remembers" a key sees its own words echoed back; that is not us sending it)."""
    found = []
    for i, req in enumerate(api.requests):
        body = dict(req.body)
        if isinstance(body.get("messages"), list):
            body["messages"] = [
                m for m in body["messages"] if not (isinstance(m, dict) and m.get("role") == "assistant")
            ]
        hits = leaks_in(json.dumps(body, ensure_ascii=False) if body else req.raw.decode("utf-8", "replace"))
        if hits:
            found.append(f"request {i} ({req.path}): {hits[:5]}")
    return found


def everything_shown(req: Request) -> str:
    """All text the model was given in this request (system, user turns, tool results)."""
    parts = [req.system_text] + [content_text(m.get("content")) for m in req.messages]
    return "\n".join(parts)


def hook_env(ws_root: Path, api: FakeAPI, home: Path, **extra: str) -> dict[str, str]:
    from support.claude_cli import sdk_env

    env = {k: v for k, v in os.environ.items() if not k.startswith(("REME_", "CLAUDE", "ANTHROPIC"))}
    env.update(sdk_env(api, home))
    env.update(
        {
            "REME_WORKSPACE": str(ws_root),
            "REME_EMBEDDING": "none",
            "REME_AUTO_DREAM": "false",
            "REME_PYTHON": sys.executable,
            "REME_AGENT_RETRIES": "0",
            "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        }
    )
    env.update(extra)
    return env


# ---- pattern coverage and false positives ---------------------------------------------------------
def test_pattern_coverage_per_family():
    per: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    missed = []
    for s in SECRETS:
        out = scrub(s.context)
        caught = not leaks_in(out, [s])
        per[s.family][0] += caught
        per[s.family][1] += 1
        if not caught:
            missed.append(f"{s.kind}: {s.context[:80]!r} -> {out[:80]!r}")
    total = sum(c for c, _ in per.values())
    print(
        f"\nsecrets corpus: {len(SECRETS)} secrets, {len({s.kind for s in SECRETS})} kinds; recall "
        f"{total}/{len(SECRETS)} = {total / len(SECRETS):.1%}; per family: "
        + ", ".join(f"{f} {c}/{n}" for f, (c, n) in sorted(per.items()))
    )
    assert len(SECRETS) >= 100 and {"cloud", "provider", "vcs-chat", "jwt", "private-key", "connection"} <= set(per)
    assert not missed, "\n".join(missed)


def test_false_positives_on_prose_and_code():
    """False positives on the ordinary samples (none allowed), on the repository's own corpus (the
    asserted rate: the same on every machine), and on the interpreter's standard library as an extra
    when it is there (Debian's python3 ships a fraction of it; its test/ folders hold fake passwords)."""
    changed = [line for line in ORDINARY if scrub(line) != line]
    assert not changed, changed
    corpus = repository_lines()
    repo_hits = [f"{p}: {line.strip()[:90]}" for p, line in corpus if redact(line) != line]
    root = Path(sysconfig.get_paths()["stdlib"])
    full = os.environ.get("REME_PRIVACY_FULL") == "1"  # by hand: the whole standard library
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    files = files if full else files[::8]
    lines = hits = 0
    examples = []
    for p in files:
        for line in p.read_text("utf-8", "replace").splitlines():
            lines += 1
            if redact(line) != line:
                hits += 1
                examples.append(f"{p.relative_to(root)}: {line.strip()[:90]}")
    rate = hits / max(lines, 1)
    print(
        f"\nfalse positives: {len(repo_hits)} of {len(corpus)} repository lines "
        f"({len(repo_hits) / len(corpus):.2e}); {hits} of {lines} stdlib lines ({rate:.2e}); "
        f"ordinary prose/code samples: 0 of {len(ORDINARY)}; e.g. {(repo_hits + examples)[:3]}"
    )
    assert len(corpus) > 10_000
    assert len(repo_hits) / len(corpus) < 1e-4, repo_hits
    if lines >= 10_000:
        assert rate < 1e-4, examples[:20]


# ---- transcripts: the real hooks and the detached recorder ------------------------------------------
def _entry(kind: str, uid: str, content: Any, ts: str) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uid,
        "parentUuid": None,
        "timestamp": ts,
        "sessionId": "priv-1",
        "cwd": "/home/user/project",
        "message": {"role": kind, "content": content},
    }


def secret_transcript(path: Path) -> None:
    """Each secret four times: typed by the user, in a Bash command, printed by a tool, said by the
    assistant; plus a subagent transcript."""
    rows = [_entry("user", "u-start", "Let's set up the deployment credentials.", "2026-06-20T09:00:00Z")]
    for i, s in enumerate(SECRETS):
        ts = f"2026-06-20T09:{1 + i // 60:02d}:{i % 60:02d}Z"
        rows.append(_entry("user", f"u{i}", f"Here is the config, use it:\n{s.context}\nthanks", ts))
        rows.append(
            _entry(
                "assistant",
                f"a{i}",
                [
                    {"type": "text", "text": f"I'll save it. ({s.context})"},
                    {
                        "type": "tool_use",
                        "id": f"t{i}",
                        "name": "Bash",
                        "input": {"command": f"cat >> .env <<'EOF'\n{s.context}\nEOF", "env": {"DB_PASSWORD": s.value}},
                    },
                ],
                ts,
            )
        )
        rows.append(
            _entry(
                "user",
                f"r{i}",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"t{i}",
                        "content": [{"type": "text", "text": f"{s.context}\n(saved)"}],
                    }
                ],
                ts,
            )
        )
    rows.append(
        _entry(
            "user", "u-end", "Done, thanks. Please remember we deploy with the vault script.", "2026-06-20T10:00:00Z"
        )
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    sub = path.with_suffix("") / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        "".join(
            json.dumps(_entry("assistant", f"s{i}", f"found {s.context}", "2026-06-20T09:30:00Z")) + "\n"
            for i, s in enumerate(SECRETS)
        )
    )


def echo_recorder(req: Request) -> Reply:
    """A hostile recorder model: its card body is everything it was shown."""
    if req.tool_results(last_only=True):
        return text("recorded")
    shown = everything_shown(req)
    return tool_use("daily_write", {"name": "Deployment credentials", "description": shown[:2000], "content": shown})


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_transcript_secrets_never_stored_nor_sent(tmp_path):
    ws_root, home = tmp_path / "ws", tmp_path / "home"
    src = tmp_path / "projects" / "priv-1.jsonl"
    src.parent.mkdir(parents=True)
    secret_transcript(src)
    payload = {"session_id": "priv-1", "transcript_path": str(src), "cwd": "/home/user/project"}
    with FakeAPI(default=echo_recorder) as api:
        env = hook_env(ws_root, api, home, REME_AGENT_BACKEND="anthropic", REME_RECORD_MIN_MESSAGES="100000")
        for event in ("Stop", "SessionEnd"):
            proc = subprocess.run(
                [SYSTEM_PYTHON, "-S", str(HOOK), event],
                input=json.dumps({**payload, "hook_event_name": event}).encode(),
                capture_output=True,
                env=env,
                timeout=30,
                cwd="/",
            )
            assert proc.returncode == 0 and proc.stdout == b"", proc
        deadline = time.monotonic() + 120  # SessionEnd started the detached recorder
        cursor = ws_root / "metadata" / "auto_memory" / "claude_code-priv-1.json"
        while time.monotonic() < deadline and not cursor.exists():
            time.sleep(0.2)
        logs = {p.name: p.read_text()[-1500:] for p in (ws_root / "metadata" / "logs").glob("*.log")}
        assert cursor.exists(), logs
        cards = list((ws_root / "daily").rglob("Deployment credentials.md"))
        assert cards, logs
        assert api.messages_requests(), "the recorder never called the model"
        assert "vault script" in everything_shown(api.messages_requests()[0])  # the conversation did reach it
        assert "[REDACTED:" in cards[0].read_text()  # ... redacted
        assert not request_leaks(api), request_leaks(api)
    copies = list((ws_root / "session" / "claude_code").rglob("*.jsonl"))
    assert len(copies) == 2  # main + subagent
    assert not stored_leaks(ws_root), stored_leaks(ws_root)


# ---- resources: `reme-cc resource` with the resource agent through the Claude CLI ----------------------
def resource_files() -> dict[str, str]:
    half = len(SECRETS) // 2
    env_file = "\n".join(
        s.context.replace("\n", " ") if s.family != "private-key" else s.context for s in SECRETS[:half]
    )
    notes = "# Infra notes\n\n" + "\n\n".join(f"- {s.kind}: {s.context}" for s in SECRETS[half:])
    sa = next(s for s in SECRETS if s.kind == "gcp-service-account")
    return {
        "resource/2026-06-20/prod.env.txt": env_file + "\n",
        "resource/2026-06-20/infra-notes.md": notes + "\n",
        "resource/2026-06-20/service-account.json": sa.context + "\n",
    }


def echo_resource_agent(req: Request) -> Reply:
    """A hostile resource agent: reads the raw file with its tool if it has one, then puts everything it
    saw in the card, plus secrets it "remembers" from elsewhere."""
    if "mcp__reme__read" in req.tool_names and not req.tool_results():
        path = next(
            (
                ln.split('path="', 1)[1].split('"', 1)[0]
                for ln in req.last_user_text.splitlines()
                if ln.startswith("<resource path=")
            ),
            "resource/x",
        )
        return tool_use("mcp__reme__read", {"path": path})
    shown = everything_shown(req) + "\n" + "\n".join(s.context for s in SECRETS[::10])  # ... and "remembers" some
    return text(
        f"---\nname: Infra secrets echo\ndescription: {' '.join(shown.split())[:300]}\n---\n# Echo\n\n{shown}\n"
    )


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_resource_secrets_stay_in_the_raw_file_only(tmp_path):
    from reme_cc.base.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    files = resource_files()
    for rel, body in files.items():
        ws.write_text(rel, body)
    raw_before = {rel: ws.read_bytes(rel) for rel in files}
    with FakeAPI(default=echo_resource_agent) as api:
        env = hook_env(ws.root, api, tmp_path / "home")
        proc = subprocess.run(
            [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "resource", "--date", "2026-06-20"],
            capture_output=True,
            text=True,
            env=env,
            timeout=240,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "3 created" in proc.stdout, proc.stdout
        reqs = api.messages_requests()
        # the resource agent has no tools: what it sees is exactly its prompt (the file's text, redacted)
        assert len(reqs) == 3 and all(not r.tool_names for r in reqs), [r.tool_names for r in reqs]
        assert all("[REDACTED:" in r.last_user_text for r in reqs)
        assert not request_leaks(api), request_leaks(api)
    assert {rel: ws.read_bytes(rel) for rel in files} == raw_before  # the user's files are untouched
    cards = sorted((ws.root / "daily" / "2026-06-20").glob("*.md"))
    assert len(cards) == 3 and all("[REDACTED:" in c.read_text() for c in cards)
    assert not stored_leaks(ws.root), stored_leaks(ws.root)


# ---- the dream: a secret typed by hand into a daily note -----------------------------------------
@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_dream_never_sends_nor_digests_a_secret(ctx, monkeypatch, tmp_path):
    from reme_cc.memory import dream
    from support.claude_cli import sdk_env
    from support.dream_script import T, extractor_turn, final, node_md, script_dream

    ws = ctx.workspace
    picked = [s for s in SECRETS if s.family in ("cloud", "provider", "connection", "private-key")][::3]
    day = "daily/2026-06-20/deploy-notes.md"
    ws.write_text(
        day,
        "---\nname: Deploy notes\ndescription: how we deploy\n---\n# Deploy\n\n"
        + "\n\n".join(s.context for s in picked)
        + "\n\nWe deploy with the vault script.\n",
    )
    node = "digest/procedure/deploy.md"
    leaked_body = "Deploy with the vault script.\n\n" + "\n".join(s.context for s in picked)  # a model that remembers

    with FakeAPI() as api:
        for k, v in sdk_env(api, tmp_path / "home").items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("REME_AGENT_RETRIES", "0")
        unit = {"name": "Deploy", "bucket": "procedure", "summary": "deploy with the vault script", "paths": [day]}
        plan = [
            tool_use(T + "write", {"path": node, "content": node_md("Deploy", "deploy procedure", leaked_body, [day])}),
            final("CREATE", node),
        ]
        script_dream(api, extractions=[extractor_turn([unit])], plans={"Deploy": plan})
        summary = asyncio.run(dream.run_dream(ctx, dream.DreamOptions(date="2026-06-20", resources=False)))
        assert summary.error is None and summary.created == 1, summary.text()
        assert "vault script" in everything_shown(api.messages_requests()[0])
        assert not request_leaks(api), request_leaks(api)
    assert "[REDACTED:" in ws.read_bytes(node).decode()
    digest_leaks = {k: v for k, v in stored_leaks(ws.root).items() if k.startswith("digest/")}
    assert not digest_leaks, digest_leaks
