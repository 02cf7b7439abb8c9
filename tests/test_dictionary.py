"""jieba's dictionary shared through a mapped file gives exactly jieba's own tokens (issue 15 item 2/3)."""

from __future__ import annotations

import random

import jieba

from reme_cc.index import dictionary


def _words() -> list[str]:
    rng = random.Random(5)
    base = [
        "宁德时代的固态电池产能",
        "光伏产业链与硅料价格",
        "我们决定下周上线储能电站项目",
        "钠离子电池成本下降",
        "北京大学生前来应聘",
        "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
        "蓝鲸数据库迁移计划",
    ]
    chars = "".join(base)
    return base + ["".join(rng.choice(chars) for _ in range(rng.randint(2, 40))) for _ in range(300)]


def test_shared_table_segments_exactly_like_jiebas_own_dict(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    table = dictionary.load(jieba)
    assert table is not None and dictionary.table_path(jieba).parent == tmp_path / "reme-cc"
    own = jieba.Tokenizer()
    own.initialize()
    shared = jieba.Tokenizer()
    shared.FREQ, shared.total, shared.initialized = table, table.total, True
    assert table.total == own.total and len(table) == len(own.FREQ)
    for text in _words():
        assert list(shared.cut_for_search(text)) == list(own.cut_for_search(text)), text
    assert "时代" in table and table["时代"] == own.FREQ["时代"] and table.get("不是一个词xyz") is None


def test_damaged_table_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = dictionary.table_path(jieba)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"REMEJB01 truncated")
    table = dictionary.load(jieba)
    assert table is not None and table.get("电池") and path.stat().st_size > 1_000_000
