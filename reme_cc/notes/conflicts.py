"""Git merge conflict markers in a note (two people edited the same shared node).

A note holding them is half one version, half the other: the index lists it but does not index its
text or links (searching it would return ``<<<<<<<`` lines as knowledge), and status/doctor report it
until someone resolves the conflict."""

from __future__ import annotations

import re

# A complete conflict: an opening marker, then a separator, then a closing marker, each at a line start.
_OPEN = re.compile(r"^<{7}(?: |$)")
_SEP = re.compile(r"^={7}$")
_CLOSE = re.compile(r"^>{7}(?: |$)")


def conflict_lines(text: str) -> list[int]:
    """1-based line numbers of the opening markers of complete conflicts in ``text`` ([] = none).
    A lone ``=======`` (a Setext heading underline) or ``<<<<<<<`` in prose is not a conflict."""
    found: list[int] = []
    state, start = 0, 0
    for number, line in enumerate(text.splitlines(), 1):
        line = line.rstrip("\r")
        if _OPEN.match(line):
            state, start = 1, number
        elif state == 1 and _SEP.match(line):
            state = 2
        elif state == 2 and _CLOSE.match(line):
            found.append(start)
            state = 0
    return found
