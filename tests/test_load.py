"""Issue #7 item 6: the stdio MCP server under load (loopback/stdio only, bounded loops).

* one server, 50 concurrent search calls from its client, 4 rounds;
* 4 clients at once (4 servers on the same workspace), 50 calls in flight each, 2 rounds;
* memory over REME_LOAD_CALLS mixed calls (CI 1,000; ``bench/soak.py --load-calls 10000`` by hand).

No call may fail; p95 latencies and RSS growth are printed (run with -s) and loosely bounded, so a
pathology (a leak, calls queueing for seconds) fails while a busy CI machine does not.
"""

from __future__ import annotations

import json
import os

import pytest

from support.load import concurrent_searches, make_corpus, memory_over_calls

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

CALLS = int(os.environ.get("REME_LOAD_CALLS", "1000"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("load") / "ws", files=200)


def show(name: str, fig: dict) -> None:
    print(f"\n{name}: {json.dumps(fig)}")


def test_one_client_50_concurrent_searches(corpus):
    fig = concurrent_searches(corpus, clients=1, rounds=4, burst_size=50)
    show("1 client x 50 in flight", fig)
    assert fig["errors"] == 0, fig["error_samples"]
    assert fig["calls"] == 200 and fig["exit_codes"] == [0]
    assert fig["p95_ms"] < 5000, fig  # 50 queued calls on one worker: ~0.2 s here; seconds = a pathology


def test_four_clients_at_once(corpus):
    fig = concurrent_searches(corpus, clients=4, rounds=2, burst_size=50)
    show("4 clients x 50 in flight", fig)
    assert fig["errors"] == 0, fig["error_samples"]
    assert fig["calls"] == 400 and fig["exit_codes"] == [0, 0, 0, 0]
    assert fig["p95_ms"] < 8000, fig


def test_memory_stable_over_many_calls(corpus):
    fig = memory_over_calls(corpus, calls=CALLS, burst_size=50, warmup=min(200, CALLS // 5))
    show(f"RSS over {CALLS} calls", fig)
    assert fig["errors"] == 0, fig["error_samples"]
    assert fig["calls"] == CALLS and fig["exit_code"] == 0
    # measured: < 2 MB over 1,000 calls after warm-up; a per-call leak of a few KB shows up here
    assert fig["growth_mb"] < 25 + CALLS / 1000, fig


def test_warm_up_loads_the_tokenizer(tmp_path, monkeypatch):
    """A server on an index that is already in sync used to load jieba inside the first Chinese query:
    every call queued behind it waited ~2.5 s (4 servers, first burst: p95 3.7 s instead of 0.5 s)."""
    from reme_cc.index import keyword
    from reme_cc.surfaces.server import Runtime

    root = make_corpus(tmp_path / "ws", files=20)
    monkeypatch.setenv("REME_EMBEDDING", "none")
    first = Runtime(str(root))
    assert first.ready.wait(120)
    first.close()
    monkeypatch.setattr(keyword, "_ready", False)  # as in a fresh process
    runtime = Runtime(str(root))
    try:
        assert runtime.ready.wait(120)
        assert keyword._ready, "the server's warm-up did not load the jieba dictionary"
    finally:
        runtime.close()
