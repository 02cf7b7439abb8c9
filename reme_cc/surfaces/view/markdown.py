"""A note's Markdown as safe HTML: raw HTML in a note is shown as text (never passed through), links
keep only web and mail schemes, images are named instead of fetched (offline; no tracking pixels), and
wikilinks — found by the one parser, notes/wikilinks.py, and resolved by its ``resolve_target`` — become
links to the note page (anchors kept, aliases shown, embeds as a titled box)."""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Callable
from urllib.parse import quote

from mistletoe import HTMLRenderer, block_token, span_token
from mistletoe import Document

from ...notes.wikilinks import parse_links

MAX_RENDERED = 300_000  # characters: past this a note is shown as plain text (mistletoe's inline parsing is quadratic)
SAFE_SCHEMES = ("http://", "https://", "mailto:")
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_PRIVATE = re.compile("[\ue000\ue001]")
_render_lock = threading.Lock()  # mistletoe keeps its token types in module state while rendering

Resolve = Callable[[str], "str | None"]  # a wikilink target -> the workspace path it names, or None


def slug(text: str) -> str:
    """A heading's anchor id: how ``[[note#Heading]]`` finds it."""
    return "h-" + re.sub(r"[^\w一-鿿-]+", "-", text.strip().lower()).strip("-")


def note_href(path: str, anchor: str | None = None) -> str:
    return "/note?path=" + quote(path, safe="/") + (f"#{slug(anchor)}" if anchor else "")


class _SafeRenderer(HTMLRenderer):
    def __init__(self) -> None:
        super().__init__(process_html_tokens=False, html_escape_double_quotes=True, html_escape_single_quotes=True)

    def render_heading(self, token: block_token.Heading) -> str:
        inner = self.render_inner(token)
        plain = html.unescape(re.sub(r"<[^>]*>", "", inner))
        return f'<h{token.level} id="{html.escape(slug(plain))}">{inner}</h{token.level}>'

    def render_link(self, token: span_token.Link) -> str:
        inner = self.render_inner(token)
        if not token.target.lower().startswith(SAFE_SCHEMES):
            return f'<span class="dead-link" title="{html.escape(token.target)}">{inner}</span>'
        return f'<a href="{html.escape(token.target)}" rel="noopener noreferrer" target="_blank">{inner}</a>'

    def render_auto_link(self, token: span_token.AutoLink) -> str:
        target = ("mailto:" if token.mailto else "") + token.target
        text = html.escape(token.target)
        if not target.lower().startswith(SAFE_SCHEMES):
            return text
        return f'<a href="{html.escape(target)}" rel="noopener noreferrer" target="_blank">{text}</a>'

    def render_image(self, token: span_token.Image) -> str:
        return f'<span class="image-ref" title="{html.escape(token.src)}">[image: {html.escape(self.render_to_plain(token))}]</span>'


def render_markdown(body: str, resolve: Resolve, describe: Callable[[str], str]) -> str:
    """``body`` (a note's text after its frontmatter) as HTML safe to put in the page. ``resolve`` maps
    a wikilink target to a path; ``describe(path)`` gives an embed's one-line title."""
    body = _PRIVATE.sub("", body)
    if len(body) > MAX_RENDERED:
        return (
            f'<p class="warn">shown as plain text: over {MAX_RENDERED:,} characters</p><pre>{html.escape(body)}</pre>'
        )
    links = parse_links(body)
    pieces: list[str] = []
    out, last = [], 0
    for n, link in enumerate(links):
        out.append(body[last : link.start])
        out.append(f"\ue000{n}\ue001")
        pieces.append(_wikilink_html(link, resolve, describe))
        last = link.end
    out.append(body[last:])
    with _render_lock, _SafeRenderer() as renderer:
        rendered = renderer.render(Document("".join(out)))
    return _PLACEHOLDER.sub(lambda m: pieces[int(m.group(1))], rendered)


def _wikilink_html(link, resolve: Resolve, describe: Callable[[str], str]) -> str:  # noqa: ANN001 - a WikiLink
    path = resolve(link.target)
    shown = link.alias or (link.target + (f"#{link.anchor}" if link.anchor else ""))
    label = html.escape(shown)
    if path is None:
        return f'<span class="wikilink missing" title="not found">{label}</span>'
    href = html.escape(note_href(path, link.anchor))
    if link.embed:
        return (
            f'<span class="embed"><a class="wikilink" href="{href}">{label}</a>'
            f'<span class="embed-desc">{html.escape(describe(path))}</span></span>'
        )
    return f'<a class="wikilink" href="{href}" title="{html.escape(path)}">{label}</a>'
