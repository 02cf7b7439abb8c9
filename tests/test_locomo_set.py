"""The LoCoMo set's loader (bench/sets/locomo.py) on a small file in LoCoMo's shape: one note per session
dated in its path, relevance from the evidence ids as written (including the data's odd spellings),
adversarial and evidence-less questions left out; and the benchmark's search keeps each question inside
its own conversation's folder."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from reme_cc.base.config import Config
from reme_cc.base.workspace import Workspace
from reme_cc.index import Index

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conversation(sample_id: str, a: str, b: str, sessions: list[tuple[str, list[str]]], qa: list[dict]) -> dict:
    conv = {"speaker_a": a, "speaker_b": b}
    for n, (stamp, lines) in enumerate(sessions, 1):
        conv[f"session_{n}_date_time"] = stamp
        conv[f"session_{n}"] = [
            {"speaker": (a, b)[i % 2], "dia_id": f"D{n}:{i + 1}", "text": text} for i, text in enumerate(lines)
        ]
    return {"sample_id": sample_id, "conversation": conv, "qa": qa}


@pytest.fixture
def locomo_file(tmp_path, monkeypatch):
    data = [
        _conversation(
            "conv-1",
            "Ann",
            "Bob",
            [
                ("1:56 pm on 8 May, 2023", ["I adopted a kitten named Pixel.", "Lovely!"]),
                ("10:00 am on 25 May, 2023", ["We hiked Mount Tam on Sunday.", "Great view?"]),
                ("9:55 am on 2 June, 2023", ["Pixel learned to open doors.", "Ha!"]),
            ],
            [
                {"question": "What is Ann's kitten called?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
                {"question": "Where did Ann hike?", "evidence": ["D:2:1"], "category": 2},
                {"question": "What did Pixel learn?", "evidence": ["D1:1; D3:1"], "category": 1},
                {"question": "What is Bob's dog called?", "evidence": ["D1:2"], "category": 5},
                {"question": "Who is Ann?", "evidence": [], "category": 3},
            ],
        ),
        _conversation(
            "conv-2",
            "Cleo",
            "Dan",
            [("3:00 pm on 1 July, 2023", ["My kitten is called Ann's kitten Pixel too, what a kitten.", "Odd."])],
            [{"question": "Who has a kitten?", "evidence": ["D1:1"], "category": 4}],
        ),
    ]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("REME_LOCOMO", str(path))
    return path


def test_sessions_become_dated_notes_and_evidence_their_relevance(locomo_file):
    locomo = _module("locomo_set", BENCH / "sets" / "locomo.py")
    files, queries = locomo.generate()
    first = "daily/conv-1/2023-05-08/session-01.md"
    assert sorted(files) == [
        first,
        "daily/conv-1/2023-05-25/session-02.md",
        "daily/conv-1/2023-06-02/session-03.md",
        "daily/conv-2/2023-07-01/session-01.md",
    ]
    assert files[first].startswith("# Ann and Bob, session 1 (1:56 pm on 8 May, 2023)\n\n**Ann**: I adopted")
    last_day = dt.date(2023, 6, 2)
    assert queries == [
        ("What is Ann's kitten called?", {first}, last_day, "daily/conv-1"),
        ("Where did Ann hike?", {"daily/conv-1/2023-05-25/session-02.md"}, last_day, "daily/conv-1"),
        ("What did Pixel learn?", {first, "daily/conv-1/2023-06-02/session-03.md"}, last_day, "daily/conv-1"),
        ("Who has a kitten?", {"daily/conv-2/2023-07-01/session-01.md"}, dt.date(2023, 7, 1), "daily/conv-2"),
    ]
    assert [q for q, *_ in locomo.generate(temporal_only=True)[1]] == ["Where did Ann hike?"]


def test_missing_file_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("REME_LOCOMO", str(tmp_path / "absent.json"))
    locomo = _module("locomo_set", BENCH / "sets" / "locomo.py")
    with pytest.raises(FileNotFoundError, match="REME_LOCOMO"):
        locomo.generate()


def test_each_question_searches_only_its_conversation(locomo_file, tmp_path):
    sys.path.insert(0, str(BENCH))
    retrieval = _module("retrieval_bench", BENCH / "retrieval.py")
    files, queries = retrieval.load_set("locomo", "")
    ws = Workspace(tmp_path / "ws")
    for rel, text in files.items():
        ws.write_text(rel, text)
    idx = Index(ws, Config().replace(embedding="none"), background_embedding=False)
    try:
        idx.sync()
        # conv-2's note repeats the words of conv-1's first question: without the folder it ranks first
        question = queries[0]
        assert retrieval.notes_of(idx, question[:3], 5)[0].startswith("daily/conv-2/")
        ranked = retrieval.notes_of(idx, question, 5)
        assert ranked[0] == "daily/conv-1/2023-05-08/session-01.md"
        assert all(p.startswith("daily/conv-1/") for p in ranked)
    finally:
        idx.close()
