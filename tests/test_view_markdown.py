"""The viewer's Markdown rendering (reme_cc/surfaces/view/markdown.py) on hostile and ordinary notes,
parsed back with the standard library's HTML parser: no element or attribute a note did not earn."""

from __future__ import annotations

from html.parser import HTMLParser

from reme_cc.notes.wikilinks import build_stems, resolve_target
from reme_cc.surfaces.view.markdown import MAX_RENDERED, render_markdown

PATHS = ["digest/wiki/canary.md", "daily/2026-06-20/deploy.md"]
STEMS = build_stems(PATHS)


def resolve(target: str) -> str | None:
    return resolve_target(target, PATHS, STEMS).path


def render(text: str) -> str:
    return render_markdown(text, resolve, lambda p: f"about {p}")


class Elements(HTMLParser):
    def __init__(self, html: str):
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def test_raw_html_and_script_are_text():
    html = render(
        "<script>alert(1)</script>\n\npara <img src=x onerror=alert(1)> and <b onclick='x()'>b</b>\n\n"
        "<div>\n<iframe src=//evil></iframe>\n</div>\n"
    )
    tags = {tag for tag, _ in Elements(html).found}
    assert tags <= {"p"}, tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not any(name.startswith("on") for _, attrs in Elements(html).found for name in attrs)


def test_links_keep_only_web_and_mail_schemes():
    html = render(
        "[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,x) [d](https://example.org) "
        "[e](mailto:a@b.c) <javascript:alert(1)> ![img](https://tracker.example/p.gif)"
    )
    hrefs = [attrs.get("href") for tag, attrs in Elements(html).found if tag == "a"]
    assert hrefs == ["https://example.org", "mailto:a@b.c"]
    assert not [t for t, _ in Elements(html).found if t == "img"]  # images are named, never fetched
    assert "[image: img]" in html


def test_wikilinks_anchor_alias_embed_and_missing():
    html = render(
        "See [[canary#Why canaries|why]] and [[daily/2026-06-20/deploy.md]].\n\n![[canary]]\n\n"
        'Gone: [[nowhere]]. Quote: [[canary|" onmouseover="alert(1)]]\n\n`[[canary]] in code`\n'
    )
    anchors = [(attrs.get("href"), attrs.get("class")) for tag, attrs in Elements(html).found if tag == "a"]
    assert anchors[0] == ("/note?path=digest/wiki/canary.md#h-why-canaries", "wikilink")
    assert anchors[1][0] == "/note?path=daily/2026-06-20/deploy.md"
    assert '<span class="embed">' in html and "about digest/wiki/canary.md" in html
    assert '<span class="wikilink missing" title="not found">nowhere</span>' in html
    assert not any(name.startswith("on") for _, attrs in Elements(html).found for name in attrs)
    assert "<code>[[canary]] in code</code>" in html  # the parser skips code: no link made there
    assert len(anchors) == 4  # why, deploy, the embed, the quoted alias


def test_headings_get_the_anchor_ids_links_use():
    html = render("# Title\n\n## Why canaries\n\n## 为什么 Canary\n")
    ids = [attrs.get("id") for tag, attrs in Elements(html).found if tag in ("h1", "h2")]
    assert ids == ["h-title", "h-why-canaries", "h-为什么-canary"]


def test_a_huge_note_is_shown_as_escaped_text():
    html = render("<b>x</b>" * (MAX_RENDERED // 8 + 1))
    assert html.count("<b>") == 0 and "&lt;b&gt;x&lt;/b&gt;" in html and "<pre>" in html
