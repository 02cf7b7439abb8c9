"""Daily tools: create a day's index page, list a day's cards, regenerate the day index; and the
recorder's agent-only ``daily_write``."""

from __future__ import annotations

from pydantic import Field

from ..memory import daily as day
from ..memory.auto_memory import write_card
from ..memory.recording import CardTarget
from . import Context, Params, ToolResult, agent_tool, tool


class DateParams(Params):
    date: str | None = Field(None, description="Day as YYYY-MM-DD (default: today)")


class DailyCardInfo(ToolResult):
    path: str
    name: str
    description: str
    frontmatter_error: str | None = None


class DailyCreateResult(ToolResult):
    date: str
    path: str
    created: bool
    notes: list[str] = []

    def text(self) -> str:
        return "\n".join([f"{'Created' if self.created else 'Already exists:'} {self.path}"] + self.notes)


class DailyListResult(ToolResult):
    date: str
    index_path: str
    index_exists: bool
    cards: list[DailyCardInfo]

    def text(self) -> str:
        if not self.cards:
            return f"{self.date}: no daily cards"
        out = [f"{self.date}: {len(self.cards)} card(s)"]
        for c in self.cards:
            out.append(f"- {c.path}  {c.name}" + (f": {c.description}" if c.description else ""))
        return "\n".join(out)


class DailyReindexResult(ToolResult):
    date: str
    path: str
    cards: int
    changed: bool
    notes: list[str] = []

    def text(self) -> str:
        state = "updated" if self.changed else "already up to date"
        return "\n".join([f"{self.path} {state} ({self.cards} card(s) linked)"] + self.notes)


def _info(cards: list[day.DailyCard]) -> list[DailyCardInfo]:
    return [
        DailyCardInfo(path=c.path, name=c.name, description=c.description, frontmatter_error=c.error) for c in cards
    ]


@tool(
    "daily_create",
    "Create the day index page daily/YYYY-MM-DD.md of the ReMe memory workspace (and its card folder) if it "
    "does not exist yet; does nothing when it does.",
    idempotent=True,
    positional=("date",),
)
def daily_create(ctx: Context, params: DateParams) -> DailyCreateResult:
    date = day.validate_date(params.date)
    result = day.ensure_index(ctx.notes, date)
    return DailyCreateResult(date=date, path=result.path, created=result.created, notes=list(result.notes))


@tool(
    "daily_list",
    "List the daily memory cards of one day (daily/YYYY-MM-DD/*.md) with their name and description: what "
    "happened in the sessions and resources of that day.",
    read_only=True,
    idempotent=True,
    positional=("date",),
)
def daily_list(ctx: Context, params: DateParams) -> DailyListResult:
    date = day.validate_date(params.date)
    ws = ctx.workspace
    return DailyListResult(
        date=date,
        index_path=day.index_path(date),
        index_exists=ws.resolve(day.index_path(date)).exists(),
        cards=_info(day.list_cards(ws, date)),
    )


@tool(
    "daily_reindex",
    "Regenerate the day index page daily/YYYY-MM-DD.md so it links every card of that day with its "
    "description. Only the generated block is rewritten; hand-written text around it is kept. Idempotent.",
    idempotent=True,
    positional=("date",),
)
def daily_reindex(ctx: Context, params: DateParams) -> DailyReindexResult:
    date = day.validate_date(params.date)
    result = day.reindex(ctx.notes, date)
    return DailyReindexResult(
        date=date, path=result.path, cards=len(result.cards), changed=result.changed, notes=list(result.notes)
    )


class DailyWriteParams(Params):
    name: str = Field(
        description="Stable topic name of the session's card, used as the file name: a few "
        "words, no date, no '/' (e.g. 'Memory store: SQLite decision')"
    )
    description: str = Field(description="A thorough one-paragraph summary of what happened and was concluded")
    content: str = Field(
        description="The card body in Markdown (no frontmatter): what happened, conclusions, "
        "follow-ups. Replaces the previous body, so carry over what still holds"
    )


class DailyWriteResult(ToolResult):
    path: str
    renamed_from: str | None = None
    created: bool = False

    def text(self) -> str:
        verb = "created" if self.created else ("renamed and updated" if self.renamed_from else "updated")
        return f"{verb} {self.path}" + (f" (was {self.renamed_from})" if self.renamed_from else "")


@agent_tool(
    "daily_write",
    "Write this session's daily card for the date being recorded (create it, or replace the existing "
    "card's summary and body). Call it once with the complete card; giving a better name renames the "
    "card and keeps links to it working. Do not call it for small talk.",
    idempotent=True,
)
def daily_write(ctx: Context, params: DailyWriteParams, *, card: CardTarget | None = None) -> DailyWriteResult:
    done = write_card(card, params.name, params.description, params.content)  # card: bound by the recorder's run
    return DailyWriteResult(path=done.path, renamed_from=done.renamed_from, created=done.created)
