"""What every operation runs against: the workspace, its settings, its index (opened lazily), its
note service — wired together here, the lowest layer that knows both the notes and the index — and,
for the memory pipelines, the agent runner their surface hands them (``agents``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from collections.abc import Callable

from ..base.config import Config
from ..base.errors import ReMeError
from ..notes.store import MARKDOWN_EXTS, NoteStore
from ..base.workspace import Workspace

if TYPE_CHECKING:  # pragma: no cover
    from ..index import Index


class AgentRunner(Protocol):
    """Starts memory agents (recorder, dream, resource) with registry tools. It serves tools, so it
    lives above them (``reme_cc/surfaces/agent.py``: ``RUNNER``); a pipeline gets it through its Context."""

    def load(self, name: str) -> Any: ...  # the agent's spec from its prompt file

    def spec(self, name: str, description: str, prompt: str, tools: list[str] | None = None) -> Any: ...

    async def run(self, ctx: Context, agent: Any, prompt: str, **options: Any) -> Any: ...

    def run_sync(self, ctx: Context, agent: Any, prompt: str, **options: Any) -> Any: ...

    def describe(self, run: Any) -> str: ...


@dataclass
class Context:
    workspace: Workspace
    config: Config = field(default_factory=Config)
    _index: Index | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _notes: NoteStore | None = None
    _scope: dict[str, Any] = field(default_factory=dict)  # tools/recall_scope.py's cache: team Contexts, known projects
    agents: AgentRunner | None = None  # set by the surface that starts a pipeline
    budget: Any = None  # a repository's team memory: index.budget.Budget (bounded, indexed in the background)

    @classmethod
    def open(cls, root: str | None = None, config: Config | None = None) -> Context:
        ws = Workspace(root)
        return cls(ws, config or Config.load(ws.root))

    @property
    def index(self) -> Index:
        with self._lock:
            if self._index is None:
                from ..index import Index  # lazy, downward: opening the index costs a database

                self._index = Index(self.workspace, self.config, budget=self.budget)
            return self._index

    @property
    def has_index(self) -> bool:
        return self._index is not None

    @property
    def notes(self) -> NoteStore:
        """The note service every change goes through; its changes update this Context's index."""
        with self._lock:
            if self._notes is None:
                self._notes = self.new_notes(after=lambda paths: self.changed(*paths))
            return self._notes

    def new_notes(self, *, after: Callable[[list[str]], None]) -> NoteStore:
        """A note service of this workspace that hands the paths it changed to ``after``: ``notes``
        updates the index at once, a recorder run collects them for when it is over."""
        store = NoteStore(self.workspace, backlinks=self._backlinks)
        store.observe(after=after)
        return store

    @property
    def runner(self) -> AgentRunner:
        if self.agents is None:
            raise ReMeError(
                "this operation starts memory agents but was given no agent runner; "
                "start it through `reme-cc` (reme_cc.surfaces.agent.with_agents)"
            )
        return self.agents

    def changed(self, *paths: str) -> None:
        """Tell the index that these workspace paths were written, moved or deleted."""
        if paths:
            self.index.update_paths(list(paths))

    def _backlinks(self, targets: set[str], prefix: str | None) -> tuple[list[str], set[str]]:
        """Markdown files whose wikilinks point at ``targets`` (or into the folder ``prefix``), from the
        link index, synced first so edits made outside reme count; and the written targets of those
        links (short forms like ``[[光伏产业链]]`` that resolved to a target included)."""
        index = self.index
        index.sync()
        links = [link for t in targets for link in index.inbound_links(t)]
        if prefix:
            links += index.inbound_links(prefix, prefix=True)
        sources = sorted({link.source for link in links if link.source.endswith(MARKDOWN_EXTS)})
        return sources, {link.target for link in links}

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
        for value in self._scope.values():
            if isinstance(value, Context):
                value.close()
        self._scope.clear()
