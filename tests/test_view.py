"""The memory viewer (`reme-cc view`, reme_cc/surfaces/view/) in a real browser: headless Chromium driven
by selenium against the real command in its own process, on a real workspace (git repository, index,
a dream's commit). Pages load, the graph draws its nodes, a search shows its hits with their why, an
edit and a pin land on disk through the note service, a dream undo restores the files, a hostile note
stays text; and without the token, from a foreign Host, or without the CSRF token, nothing is served or
changed. Screenshots go to a temporary folder (REME_VIEW_SCREENSHOTS=<dir> keeps them there)."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from reme_cc.memory import gitlog

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
NO_BROWSER = (
    "headless Chromium is not installed: `apt-get install chromium chromium-driver` "
    "(./dev test installs them when run as root)"
)
HOSTILE = (
    "# Hostile\n\n<script>document.title='pwned'</script>\n\n<img src=x onerror=\"document.title='pwned'\">\n\n"
    "[click](javascript:document.title='pwned') and <b onmouseover=\"x()\">bold</b>\n"
)


TOPICS = [
    "Postgres migrations",
    "Retry policy",
    "Feature flags",
    "Rate limiting",
    "Schema review",
    "Release checklist",
    "Flaky test triage",
    "Logging levels",
    "Cache invalidation",
    "Tokenizer dictionary",
    "On-call handover",
    "Incident review",
    "Latency budget",
    "Vector search",
    "Commit style",
    "Code review",
    "Kubernetes probes",
    "Secrets handling",
    "Dependency pinning",
    "Benchmark hygiene",
    "Error messages",
    "API versioning",
    "Backups",
    "Observability",
]


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def build_workspace(ws) -> dict[str, bytes]:  # noqa: ANN001 - a Workspace
    """A small memory: a day with two projects' cards, linked digest nodes, a hostile note, a git history
    and one dream run (recorded as memory/dream.py records it). Returns the files the dream changed, as
    they were before it."""
    ws.write_text(
        "daily/2026-06-20/deploy-fix.md",
        "---\nname: Fixed the deploy script\ndescription: the rollout waits for health checks\nproject: alpha\n"
        "session_id: s-111\nsource_conversation: '[[session/claude_code/s-111.jsonl]]'\n---\n"
        "## What happened\nThe canary zebrafinch rollout now waits for health checks.\n",
    )
    ws.write_text(
        "daily/2026-06-20/tokenizer.md",
        "---\nname: Tokenizer notes\ndescription: jieba splits product names\nproject: beta\nsession_id: s-222\n---\n"
        "## What happened\nA custom dictionary fixed the split.\n",
    )
    ws.write_text(
        "daily/2026-06-20.md", "---\nname: 2026-06-20\n---\n# 2026-06-20\n- [[daily/2026-06-20/deploy-fix.md]]\n"
    )
    ws.write_text(
        "digest/procedure/deploy.md",
        "---\nname: How to deploy\ndescription: the rollout procedure\npinned: true\nproject: alpha\n---\n"
        "# How to deploy\n\n## Steps\nRun the zebrafinch canary first; see [[wiki-canary#Why canaries|why canaries]].\n\n"
        "![[digest/wiki/wiki-canary.md]]\n\n## Sources\n- [[daily/2026-06-20/deploy-fix.md]]\n",
    )
    ws.write_text(
        "digest/wiki/wiki-canary.md",
        "---\nname: Canary releases\ndescription: a small share of traffic first\nstale: the linked runbook moved\n---\n"
        "# Canary releases\n\n## Why canaries\nThey catch a bad build early.\n\n## Sources\n- [[daily/2026-06-20/deploy-fix.md]]\n",
    )
    ws.write_text("digest/wiki/hostile.md", "---\nname: Hostile <script>x</script>\n---\n" + HOSTILE)
    ws.write_text(  # a name that would read "Release notes" right to left: shown with its override visible
        "digest/wiki/spoof.md", "---\nname: \u202eseton esaeleR\ndescription: x\n---\nSee [[hostile]].\n"
    )
    for i, name in enumerate(TOPICS):  # enough nodes for the graph to be a graph
        ws.write_text(
            f"digest/wiki/topic-{i}.md",
            f"---\nname: {name}\ndescription: what we learned about {name.lower()}\n---\n"
            f"See [[topic-{(i + 1) % 24}]], [[topic-{(i * 7 + 3) % 24}]] and [[wiki-canary]].\n"
            "\n## Sources\n- [[daily/2026-06-20/tokenizer.md]]\n",
        )
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    (ws.root / ".gitignore").write_text("metadata/\n")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-qm", "init")
    # a dream run: refines one node, creates another; committed with its trailer, its record saved
    before = {rel: ws.read_bytes(rel) for rel in ("digest/wiki/wiki-canary.md",)}
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text(
        "digest/wiki/wiki-canary.md",
        ws.read_bytes("digest/wiki/wiki-canary.md").decode() + "\nRefined by the dream: roll back on error rate.\n",
    )
    ws.write_text(
        "digest/wiki/dreamed.md",
        "---\nname: Dreamed node\ndescription: made by the dream\n---\nNew.\n\n## Sources\n- [[daily/2026-06-20/tokenizer.md]]\n",
    )
    rec.touched("digest/wiki/wiki-canary.md", "digest/wiki/dreamed.md")
    sha = gitlog.git_commit(ws, [c["path"] for c in rec.changes()], "reme dream 2026-06-20: 1 created", "run1")
    summary = {
        "created": 1,
        "corroborated": 0,
        "refined": 1,
        "corrected": 0,
        "failed": 0,
        "nodes": [
            {"action": "REFINE", "path": "digest/wiki/wiki-canary.md"},
            {"action": "CREATE", "path": "digest/wiki/dreamed.md"},
        ],
    }
    gitlog.save_run(ws, "run1", rec, {"date": "2026-06-20", "summary": summary, "commit": sha, "finished": "now"})
    from reme_cc.memory.failures import record_failure

    record_failure(ws, "recorder", "Error: Not logged in. Please run /login")  # as a failing recorder leaves it
    ws.write_text(
        "daily/2026-06-21/secret.md", "---\nname: Secret card\n---\nThe pin is hunter2-walrus, do not keep it.\n"
    )
    # one prompt's recall, logged as the UserPromptSubmit hook logs it
    from reme_cc.base.config import Config
    from reme_cc.memory.context import Context
    from reme_cc.surfaces.recall import recall_for_prompt

    ctx = Context(ws, Config.load(ws.root))
    try:
        ctx.index.sync()
        recall_for_prompt(
            ws, ctx.config, "how do we deploy the zebrafinch canary rollout", str(ws.root), "sess-1", ctx=ctx
        )
        recall_for_prompt(ws, ctx.config, "ok", str(ws.root), "sess-1", ctx=ctx)
    finally:
        ctx.close()
    return before


class Viewer:
    def __init__(self, proc: subprocess.Popen, url: str, ws, errors: Path):  # noqa: ANN001
        self.proc, self.url, self.ws = proc, url, ws
        self.errors = errors  # the server's stderr (a page's internal error prints its traceback there)
        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.port = parts.port


def start_viewer(ws, *args: str, cwd: Path | None = None) -> Viewer:  # noqa: ANN001
    errors = ws.root.parent / f"view-{time.monotonic_ns()}.stderr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reme_cc", "--workspace", str(ws.root), "view", "--no-open", "--json", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        text=True,
        env={**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": "", "REME_EMBEDDING": "none"},
    )
    line = proc.stdout.readline()
    if not line:
        proc.wait(10)
        raise AssertionError(f"the viewer did not start: {errors.read_text()}")
    return Viewer(proc, json.loads(line)["url"], ws, errors)


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    from reme_cc.base.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("view") / "ws")
    before = build_workspace(ws)
    v = start_viewer(ws)
    v.before = before
    yield v
    v.proc.terminate()
    v.proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip(NO_BROWSER)
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is in the test extras: pip install -e '.[test]'"
    )
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1360,900",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    keep = os.environ.get("REME_VIEW_SCREENSHOTS")
    out = Path(keep) if keep else tmp_path_factory.mktemp("screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def login(browser, viewer: Viewer) -> None:  # noqa: ANN001
    browser.get(viewer.url)  # the token becomes a cookie and leaves the address
    assert "token=" not in browser.current_url


def by_css(browser, css: str):  # noqa: ANN001, ANN201
    from selenium.webdriver.common.by import By

    return browser.find_elements(By.CSS_SELECTOR, css)


def click_and_load(browser, element) -> None:  # noqa: ANN001
    """Click, then wait until the next page replaced this one (a form's answer)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    page = by_css(browser, "html")[0]
    element.click()
    WebDriverWait(browser, 15).until(expected_conditions.staleness_of(page))


def wait_for(fn, timeout: float = 10.0):  # noqa: ANN001, ANN201
    end = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > end:
            return value
        time.sleep(0.05)


# ---- in the browser -------------------------------------------------------------------------------------
def test_pages_load(browser, viewer, shots):
    login(browser, viewer)
    expected = {
        "/timeline": "Timeline",
        "/day/2026-06-20": "2026-06-20",
        "/note?path=digest/procedure/deploy.md": "How to deploy",
        "/search?q=zebrafinch": "Search",
        "/dreams": "Dreams",
        "/recall-log": "Recall log",
        "/health": "Health",
    }
    for path, title in expected.items():
        browser.get(viewer.base + path)
        h1 = by_css(browser, "h1")
        assert h1 and h1[0].text.startswith(title), (path, browser.page_source[:500])
        browser.save_screenshot(str(shots / (path.strip("/").split("?")[0].replace("/", "-") + ".png")))
    browser.get(viewer.base + "/health")
    health = by_css(browser, "main")[0].text
    assert "not logged in" in health.lower() and "fix: run /login in Claude Code" in health
    assert "keyword search only" in health and "0 / 200 runs" in health
    browser.get(viewer.base + "/timeline")
    text = by_css(browser, "main")[0].text
    assert "alpha" in text and "beta" in text and "Fixed the deploy script" in text and "session s-111" in text


def test_note_page_links_labels_and_raw(browser, viewer):
    login(browser, viewer)
    browser.get(viewer.base + "/note?path=digest/procedure/deploy.md")
    links = {a.text: a.get_attribute("href") for a in by_css(browser, "article a.wikilink")}
    assert links["why canaries"].endswith("/note?path=digest/wiki/wiki-canary.md#h-why-canaries")  # alias, anchor
    assert by_css(browser, "article .embed a.wikilink")  # the embed, as a titled box
    assert "pinned" in by_css(browser, "h1 .badge.pinned")[0].text
    sources = by_css(browser, "aside .box")[0].text
    assert "Sources" in sources and "Fixed the deploy script" in sources
    browser.get(viewer.base + "/note?path=digest/wiki/wiki-canary.md")
    assert by_css(browser, "h1 .badge.stale")
    assert by_css(browser, "#h-why-canaries")  # the anchor's target
    backlinks = by_css(browser, "aside .backlinks")[0].text
    assert "How to deploy" in backlinks and TOPICS[3] in backlinks
    by_css(browser, "a.button[href^='/raw']")[0].click()
    assert browser.page_source.count("## Why canaries") == 1  # the raw file, as text


def test_graph_draws_its_nodes(browser, viewer, shots):
    login(browser, viewer)
    browser.get(viewer.base + "/graph")
    found = wait_for(lambda: by_css(browser, "#graph"))
    # once in a fresh-clone suite the page had no canvas: say what the page was instead
    assert found, (
        f"no graph canvas on {browser.current_url}: {by_css(browser, 'body')[0].text[:600]!r}; "
        f"the server said: {viewer.errors.read_text()[-2000:]}"
    )
    canvas = found[0]
    assert wait_for(lambda: canvas.get_attribute("data-state") == "ready")
    nodes = int(canvas.get_attribute("data-nodes"))
    assert nodes == 29  # the digest nodes (cards are off by default)
    assert int(canvas.get_attribute("data-links")) > 24
    wait_for(lambda: canvas.get_attribute("data-settled"))
    assert int(canvas.get_attribute("data-drawn")) == nodes  # every node inside the canvas
    browser.save_screenshot(str(shots / "graph.png"))
    from selenium.webdriver.common.action_chains import ActionChains

    # interactive: a drag moves the view, and a click on a node opens its note
    before = browser.execute_script("return remeGraph.at('digest/wiki/wiki-canary.md')")
    ActionChains(browser).scroll_to_element(canvas).perform()
    ActionChains(browser).click_and_hold(canvas).move_by_offset(40, 25).release().perform()
    after = browser.execute_script("return remeGraph.at('digest/wiki/wiki-canary.md')")
    assert abs(after[0] - before[0] - 40) < 2 and abs(after[1] - before[1] - 25) < 2, (before, after)
    x, y = after
    rect = browser.execute_script(
        "var r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height]", canvas
    )
    offset = (round(x - rect[0] - rect[2] / 2), round(y - rect[1] - rect[3] / 2))  # from the canvas centre
    ActionChains(browser).move_to_element_with_offset(canvas, *offset).click().perform()
    assert wait_for(lambda: "/note?path=digest%2Fwiki%2Fwiki-canary.md" in browser.current_url), browser.current_url
    browser.back()
    canvas = by_css(browser, "#graph")[0]
    assert wait_for(lambda: canvas.get_attribute("data-state") == "ready")
    by_css(browser, "input[value=daily]")[0].click()  # with the cards
    by_css(browser, "#graph-filters button")[0].click()
    assert wait_for(lambda: canvas.get_attribute("data-nodes") == "32")  # and the three cards
    from selenium.webdriver.support.ui import Select

    by_css(browser, "input[value=daily]")[0].click()  # digest nodes of project beta: there are none
    Select(by_css(browser, "#graph-filters select")[0]).select_by_value("beta")
    by_css(browser, "#graph-filters button")[0].click()
    assert wait_for(lambda: canvas.get_attribute("data-nodes") == "0" and canvas.get_attribute("data-state") == "ready")
    assert by_css(browser, "#graph-info")[0].text == "no notes match these filters"


def test_search_shows_hits_with_their_why(browser, viewer, shots):
    login(browser, viewer)
    browser.get(viewer.base + "/search?q=zebrafinch+canary&project=all")
    hits = by_css(browser, "li.hit")
    assert hits, browser.page_source[:2000]
    first = hits[0].text
    assert "why:" in first and "keyword" in first and "vector" in first and "score" in first and "project" in first
    paths = " ".join(h.text for h in hits)
    assert "daily/2026-06-20/deploy-fix.md" in paths and "digest/procedure/deploy.md" in paths
    browser.save_screenshot(str(shots / "search.png"))
    assert len(hits) == 10  # a page of hits, then twice as many on asking
    click_and_load(browser, by_css(browser, "p.pager a")[0])
    assert len(by_css(browser, "li.hit")) > 10 and "limit=20" in browser.current_url


def test_what_a_prompt_would_recall_and_the_recall_log(browser, viewer, shots):
    login(browser, viewer)
    browser.get(viewer.base + "/search?prompt=how+do+we+deploy+the+zebrafinch+canary+rollout")
    panel = by_css(browser, "#prompt-recall")[0].text
    assert "bar: keyword share" in panel and ("would inject" in panel)
    assert "deploy" in panel  # the deploy notes are among the candidates, with their evidence
    browser.get(viewer.base + "/recall-log")
    entries = by_css(browser, "ol.log > li")
    assert len(entries) == 2 and "sess-1" in entries[0].text
    assert "nothing injected" in entries[0].text  # "ok" is newest: a trivial turn, and why nothing was given
    assert "nothing clears the bar" in entries[1].text  # and the best candidates with their evidence
    # the session works outside project alpha: its deploy notes are another project's, and the
    # candidates shown are what the search ranked first there, each with its evidence
    assert "relevance" in entries[1].text and "keyword" in entries[1].text
    browser.save_screenshot(str(shots / "recall-log.png"))


def test_forget_shows_the_plan_then_forgets(browser, viewer):
    login(browser, viewer)
    browser.get(viewer.base + "/forget?what=hunter2-walrus")
    plan = by_css(browser, "pre.plan")[0].text
    assert "daily/2026-06-21/secret.md" in plan
    assert "hunter2-walrus" in (viewer.ws.root / "daily/2026-06-21/secret.md").read_text()  # shown, not written
    by_css(browser, "form[method=post][action='/forget'] button")[0].click()
    wait_for(lambda: _alert(browser))
    _alert(browser).accept()
    assert wait_for(lambda: "forgotten:" in browser.page_source)
    assert "hunter2-walrus" not in (viewer.ws.root / "daily/2026-06-21/secret.md").read_text()


def test_hostile_note_stays_text(browser, viewer):
    login(browser, viewer)
    browser.get(viewer.base + "/note?path=digest/wiki/hostile.md")
    article = by_css(browser, "article.markdown")[0]
    assert "<script>document.title='pwned'</script>" in article.text  # shown, as text
    assert "pwned" not in browser.title
    assert not by_css(browser, "article script, article img, article [onerror], article [onmouseover]")
    assert not [a for a in by_css(browser, "article a") if "javascript" in (a.get_attribute("href") or "")]
    assert "<script>x</script>" in by_css(browser, "h1")[0].text
    browser.get(viewer.base + "/note?path=digest/wiki/spoof.md")
    assert by_css(browser, "h1")[0].text.startswith("\\u202eseton")


def test_edit_and_pin_land_on_disk_through_the_note_service(browser, viewer):
    from selenium.webdriver.common.by import By

    login(browser, viewer)
    rel = "digest/wiki/topic-5.md"
    before = (viewer.ws.root / rel).read_bytes()

    def save(text: str) -> None:
        browser.get(viewer.base + "/edit?path=" + rel)
        area = browser.find_element(By.NAME, "text")
        area.clear()
        area.send_keys(text)
        click_and_load(browser, by_css(browser, "form.editor button")[0])

    save("---\nname: Topic 5\n---\nNo links left.\n")  # the note service's evidence rule holds here too
    assert "evidence links" in by_css(browser, "p.error")[0].text
    assert (viewer.ws.root / rel).read_bytes() == before
    edited = (
        "---\nname: Topic 5\ndescription: edited in the viewer\n---\nSee [[topic-6]], [[topic-14]] and [[wiki-canary]]: quokkaspline.\n"
        "\n## Sources\n- [[daily/2026-06-20/tokenizer.md]]\n"
    )
    save(edited)
    assert "saved" in by_css(browser, "p.notice")[0].text
    assert (viewer.ws.root / rel).read_text() == edited  # LF as the file had, not the browser's CRLF

    def graph_names() -> str:
        browser.get(viewer.base + "/graph.json")
        return browser.find_element(By.TAG_NAME, "body").text

    assert wait_for(lambda: '"Topic 5"' in graph_names())  # the catalog read again in the background
    browser.get(viewer.base + "/search?q=quokkaspline&project=all")  # the index heard of it (note service observers)
    assert rel in by_css(browser, "li.hit")[0].text
    browser.get(viewer.base + "/note?path=" + rel)
    click_and_load(browser, by_css(browser, "form[action='/pin'] button")[0])
    assert "pinned: true" in (viewer.ws.root / rel).read_text() and by_css(browser, "h1 .badge.pinned")
    click_and_load(browser, by_css(browser, "form[action='/pin'] button")[0])  # unpin
    assert "pinned" not in (viewer.ws.root / rel).read_text() and not by_css(browser, "h1 .badge.pinned")


def test_edit_refused_when_the_file_changed_meanwhile(browser, viewer):
    from selenium.webdriver.common.by import By

    login(browser, viewer)
    rel = "digest/wiki/topic-7.md"
    browser.get(viewer.base + "/edit?path=" + rel)
    (viewer.ws.root / rel).write_text("---\nname: Topic 7\n---\nchanged by hand meanwhile\n")
    browser.find_element(By.NAME, "text").send_keys("typed")
    click_and_load(browser, by_css(browser, "form.editor button")[0])
    assert "changed since you opened it" in by_css(browser, "p.error")[0].text
    assert (viewer.ws.root / rel).read_text() == "---\nname: Topic 7\n---\nchanged by hand meanwhile\n"


def test_dream_diff_and_undo_restore_the_files(browser, viewer, shots):
    login(browser, viewer)
    browser.get(viewer.base + "/dreams")
    section = by_css(browser, "section.dream")[0]
    assert "REFINE" in section.text and "CREATE" in section.text
    by_css(browser, "section.dream details summary")[0].click()
    assert "+Refined by the dream: roll back on error rate." in by_css(browser, "pre.diff")[0].text
    browser.save_screenshot(str(shots / "dreams.png"))
    by_css(browser, "form[action='/dreams/undo'] button")[0].click()
    wait_for(lambda: _alert(browser))
    _alert(browser).accept()  # app.js asks first
    assert wait_for(lambda: "undid dream run1" in browser.page_source)
    root = viewer.ws.root
    assert (root / "digest/wiki/wiki-canary.md").read_bytes() == viewer.before["digest/wiki/wiki-canary.md"]
    assert not (root / "digest/wiki/dreamed.md").exists()
    assert _git(root, "log", "-1", "--format=%s").startswith('Revert "reme dream 2026-06-20')
    assert not by_css(browser, "form[action='/dreams/undo']")  # nothing left to undo


def _alert(browser):  # noqa: ANN001, ANN202
    from selenium.common.exceptions import NoAlertPresentException

    try:
        return browser.switch_to.alert
    except NoAlertPresentException:
        return None


# ---- what is refused (plain HTTP) ----------------------------------------------------------------------
def request(viewer: Viewer, method: str, path: str, *, headers=None, body: str | None = None):  # noqa: ANN001, ANN201
    conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=10)
    conn.request(method, path, body=body, headers={"Host": f"127.0.0.1:{viewer.port}", **(headers or {})})
    resp = conn.getresponse()
    return resp.status, resp.read().decode("utf-8", "replace"), resp


def session_cookie(viewer: Viewer) -> str:
    status, _, resp = request(viewer, "GET", "/?token=" + viewer.url.split("token=")[1])
    assert status == 303
    return resp.getheader("Set-Cookie").split(";")[0]


def test_requests_without_the_token_or_from_a_foreign_host_are_refused(viewer):
    assert request(viewer, "GET", "/timeline")[0] == 403
    assert request(viewer, "GET", "/raw?path=digest/wiki/topic-1.md")[0] == 403
    assert request(viewer, "GET", "/?token=wrong")[0] == 403
    cookie = session_cookie(viewer)
    assert request(viewer, "GET", "/timeline", headers={"Cookie": cookie})[0] == 200
    status, body, _ = request(viewer, "GET", "/timeline", headers={"Cookie": cookie, "Host": "evil.example:80"})
    assert status == 403 and "Host" in body
    status, _, _ = request(
        viewer, "GET", "/timeline", headers={"Cookie": cookie, "Host": f"evil.example:{viewer.port}"}
    )
    assert status == 403  # DNS rebinding: the right port under another name
    token = viewer.url.split("token=")[1]
    status, _, resp = request(viewer, "GET", f"//evil.example/?token={token}")
    location = resp.getheader("Location")
    assert status == 303 and location.startswith("/") and not location.startswith("//")  # never to another host


def test_a_change_without_the_csrf_token_is_refused(viewer):
    cookie = session_cookie(viewer)
    rel = "digest/wiki/topic-2.md"
    before = (viewer.ws.root / rel).read_bytes()
    form = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
    status, body, _ = request(viewer, "POST", "/pin", headers=form, body=f"path={rel}&pinned=1")
    assert status == 403 and "CSRF" in body
    status, body, _ = request(viewer, "POST", "/pin", headers=form, body=f"path={rel}&pinned=1&csrf=guess")
    assert status == 403
    page = request(viewer, "GET", "/note?path=" + rel, headers={"Cookie": cookie})[1]
    csrf = page.split('name=csrf value="')[1].split('"')[0]
    status, body, _ = request(
        viewer,
        "POST",
        "/pin",
        headers={**form, "Origin": "http://evil.example"},
        body=f"path={rel}&pinned=1&csrf={csrf}",
    )
    assert status == 403 and "Origin" in body
    assert (viewer.ws.root / rel).read_bytes() == before
    status, _, resp = request(viewer, "POST", "/pin", headers=form, body=f"path={rel}&pinned=1&csrf={csrf}")
    assert status == 303 and "pinned: true" in (viewer.ws.root / rel).read_text()  # the same form with it works


def test_read_only_refuses_every_change(viewer):
    ro = start_viewer(viewer.ws, "--read-only")
    try:
        cookie = session_cookie(ro)
        page = request(ro, "GET", "/note?path=digest/wiki/topic-3.md", headers={"Cookie": cookie})[1]
        assert "read-only" in page and 'action="/pin"' not in page and "/edit?" not in page
        csrf = request(ro, "GET", "/timeline", headers={"Cookie": cookie})[1]  # no form carries the token
        assert "name=csrf" not in csrf
        status, body, _ = request(
            ro,
            "POST",
            "/dreams/undo",
            headers={"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
            body="run=run1&csrf=x",
        )
        assert status == 403
    finally:
        ro.proc.terminate()
        ro.proc.wait(10)


def test_pages_carry_a_script_policy_and_no_external_asset(viewer):
    cookie = session_cookie(viewer)
    for path in ("/timeline", "/graph", "/note?path=digest/wiki/hostile.md"):
        status, body, resp = request(viewer, "GET", path, headers={"Cookie": cookie})
        assert status == 200
        assert "script-src 'self'" in resp.getheader("Content-Security-Policy")
        assert not re.search(r"<(script|link)[^>]*(src|href)=\"?(https?:)?//", body)  # every asset is this server's


# ---- the command ----------------------------------------------------------------------------------------
def test_view_prints_the_address_and_opens_the_browser_unless_told_not_to(viewer, tmp_path):
    """webbrowser runs $BROWSER with the address (a script here that writes it down); without a display,
    or with --no-open, nothing is started; a port in use is one clear line."""
    opened = tmp_path / "opened.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    script.chmod(0o755)

    def run(*args: str, display: str) -> subprocess.Popen:
        env = {
            **os.environ,
            "BROWSER": f"{script} %s",
            "DISPLAY": display,
            "WAYLAND_DISPLAY": "",
            "REME_EMBEDDING": "none",
        }
        return subprocess.Popen(
            [sys.executable, "-m", "reme_cc", "--workspace", str(viewer.ws.root), "view", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    for args, display, expect_open in (((), ":99", True), (("--no-open",), ":99", False)):
        proc = run(*args, display=display)
        try:
            line = proc.stdout.readline()
            assert line.startswith("reme memory viewer: http://127.0.0.1:") and "token=" in line, line
            url = line.split(": ", 1)[1].strip()
            if expect_open:
                assert wait_for(lambda: opened.exists() and url in opened.read_text())
            else:
                time.sleep(0.5)
                assert not opened.exists() or url not in opened.read_text()
        finally:
            proc.terminate()
            proc.wait(10)


def test_no_browser_without_a_display_and_a_busy_port_is_one_line(viewer, monkeypatch, capsys):
    from reme_cc.surfaces.cli import main
    from reme_cc.surfaces.view import can_open_browser

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert not can_open_browser()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert can_open_browser()
    assert main(["--workspace", str(viewer.ws.root), "view", "--no-open", "--port", str(viewer.port)]) == 1
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{viewer.port}" in err and "another --port" in err


@pytest.mark.slow
def test_a_graph_of_2000_nodes_is_interactive_within_2_seconds(browser, tmp_path):
    """Issue 27's budget, in the browser: from navigation start to the first drawing of 2,000 digest nodes
    (the page, its script, graph.json, the first layout steps), every node drawn once the layout settles."""
    from reme_cc.base.workspace import Workspace

    ws = Workspace(tmp_path / "big")
    for i in range(2000):
        links = " ".join(f"[[n{(i * 7 + k * 13) % 2000}]]" for k in range(3))
        (ws.root / "digest" / "wiki").mkdir(parents=True, exist_ok=True)
        (ws.root / "digest" / "wiki" / f"n{i}.md").write_text(
            f"---\nname: Node {i}\ndescription: node {i}\n---\nSee {links}.\n", encoding="utf-8"
        )
    v = start_viewer(ws)
    try:
        cookie = session_cookie(v)

        def complete() -> bool:  # the new workspace is indexed in the background: wait for all of it
            data = json.loads(request(v, "GET", "/graph.json", headers={"Cookie": cookie})[1])
            return len(data["nodes"]) == 2000 and len(data["links"]) >= 5000

        assert wait_for(complete, 120)
        login(browser, v)
        browser.get(v.base + "/graph")
        canvas = by_css(browser, "#graph")[0]
        assert wait_for(lambda: canvas.get_attribute("data-state") == "ready", 30), by_css(browser, "#graph-info")[
            0
        ].text
        assert canvas.get_attribute("data-nodes") == "2000" and int(canvas.get_attribute("data-links")) >= 5000
        ready_ms = int(canvas.get_attribute("data-ready-ms"))
        print(f"2,000-node graph interactive {ready_ms} ms after navigation start")
        assert ready_ms < 2000
        assert wait_for(lambda: canvas.get_attribute("data-settled"), 60)
        assert canvas.get_attribute("data-drawn") == "2000"
    finally:
        v.proc.terminate()
        v.proc.wait(10)


def test_team_notes_are_labelled_and_not_editable(viewer, tmp_path):
    """Started in a repository with team memory (.reme/), search spans it as the tools do, and a team
    note says whose it is and offers no edit, pin or forget."""
    repo = tmp_path / "repo"
    (repo / ".reme" / "digest" / "wiki").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".reme" / "digest" / "wiki" / "team.md").write_text(
        "---\nname: Team wombatcache rule\ndescription: shared\n---\nThe wombatcache is flushed nightly.\n"
    )
    v = start_viewer(viewer.ws, cwd=repo)
    try:
        cookie = session_cookie(v)
        page = request(v, "GET", "/search?q=wombatcache&project=all", headers={"Cookie": cookie})[1]
        assert "team memory (written by others)" in page and ".reme/digest/wiki/team.md" in page
        status, note, _ = request(v, "GET", "/note?path=.reme/digest/wiki/team.md", headers={"Cookie": cookie})
        assert status == 200 and "team memory (written by others)" in note and "Team wombatcache rule" in note
        assert "/edit?" not in note and 'action="/pin"' not in note and "/forget?" not in note
        assert request(v, "GET", "/edit?path=.reme/digest/wiki/team.md", headers={"Cookie": cookie})[0] == 409
    finally:
        v.proc.terminate()
        v.proc.wait(10)


def test_a_dream_without_git_shows_its_diff_from_the_saved_copies(tmp_path):
    """No git repository: the run's diff comes from its before-copies against the files, and says so
    when a file changed again since the dream."""
    from reme_cc.base.config import Config
    from reme_cc.base.workspace import Workspace
    from reme_cc.memory.context import Context
    from reme_cc.surfaces.view.data import dream_diff

    ws = Workspace(tmp_path / "ws")
    ws.write_text("digest/wiki/a.md", "first line\n")
    rec = gitlog.ChangeRecorder(ws)
    rec.snapshot(["digest"])
    ws.write_text("digest/wiki/a.md", "first line\nadded by the dream\n")
    ws.write_text("digest/wiki/b.md", "a new node\n")
    rec.touched("digest/wiki/a.md", "digest/wiki/b.md")
    run = gitlog.save_run(ws, "run1", rec, {"date": "2026-06-20"})
    ctx = Context(ws, Config.load(ws.root))
    try:
        diff = dream_diff(ctx, run)
        assert "+added by the dream" in diff and " first line" in diff and "+a new node" in diff
        ws.write_text("digest/wiki/b.md", "edited since\n")
        assert "digest/wiki/b.md: changed again since this dream" in dream_diff(ctx, run)
    finally:
        ctx.close()
