"""LoCoMo set: the 10 long multi-session conversations between two people of LoCoMo (Maharana et al.,
"Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024; snap-research/LoCoMo,
data/locomo10.json, CC BY-NC 4.0). Nothing of it is kept in this repository: the set is built at bench
time from the JSON where it was put (REME_LOCOMO=<path of locomo10.json>, default
/work/bench-locomo/locomo10.json).

How the notes and questions are made (one workspace):
  * each session is one note, ``daily/<conversation>/<its date>/session-NN.md``: a heading with the
    session's date and time, then one ``**speaker**: text`` paragraph per turn (a shared photo as its
    caption, ``[shares a photo: ...]``); the date is in the path, where reme reads a note's date;
  * a question is about its own conversation only, so its search is restricted to that conversation's
    folder (``folder=daily/<conversation>``, applied before ranking) and its today is the
    conversation's last session date (questions say "last week" relative to the conversation);
  * the relevant notes are the sessions of the question's evidence turns ("D3:12" = session 3);
    adversarial questions (category 5, unanswerable by design) and those without evidence are left out
    (1,536 questions); category 2 are the temporal questions (``generate(temporal_only=True)``: 321).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

DEFAULT = "/work/bench-locomo/locomo10.json"
ADVERSARIAL, TEMPORAL = 5, 2


def find_file() -> Path:
    path = Path(os.environ.get("REME_LOCOMO") or DEFAULT)
    if not path.is_file():
        raise FileNotFoundError(
            f"no LoCoMo data at {path}: put data/locomo10.json of the snap-research/LoCoMo repository there "
            "(or set REME_LOCOMO to its path); CC BY-NC 4.0, never copied into this repository"
        )
    return path


def session_date(stamp: str) -> dt.datetime:
    """'1:56 pm on 8 May, 2023' -> datetime."""
    return dt.datetime.strptime(stamp.strip(), "%I:%M %p on %d %B, %Y")


def turn_text(turn: dict) -> str:
    photo = f" [shares a photo: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
    return f"**{turn['speaker']}**: {turn['text']}{photo}"


def generate(temporal_only: bool = False) -> tuple[dict[str, str], list[tuple]]:
    """({path: text}, [(question, {relevant paths}, today, conversation folder)])."""
    files: dict[str, str] = {}
    queries: list[tuple] = []
    for sample in json.loads(find_file().read_text(encoding="utf-8")):
        conv, folder = sample["conversation"], f"daily/{sample['sample_id']}"
        where: dict[int, str] = {}
        for key in sorted((k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])):
            n, when = int(key[8:]), session_date(conv[f"{key}_date_time"])
            where[n] = f"{folder}/{when:%Y-%m-%d}/session-{n:02d}.md"
            body = [f"# {conv['speaker_a']} and {conv['speaker_b']}, session {n} ({conv[f'{key}_date_time']})"]
            files[where[n]] = "\n\n".join(body + [turn_text(t) for t in conv[key]]) + "\n"
        today = session_date(conv[f"session_{max(where)}_date_time"]).date()
        for qa in sample["qa"]:
            # evidence ids are "D3:12", a few written "D:11:26" or several in one string
            gold = {where[int(n)] for e in qa.get("evidence", []) for n in re.findall(r"D:?(\d+):", e)}
            if qa["category"] == ADVERSARIAL or not gold or (temporal_only and qa["category"] != TEMPORAL):
                continue
            queries.append((qa["question"], gold, today, folder))
    return files, queries
