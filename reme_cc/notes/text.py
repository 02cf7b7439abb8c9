"""Plain-text helpers every note reader shares: the one binary-file detector."""

from __future__ import annotations


def looks_binary(sample: bytes) -> bool:
    """NUL bytes, or mostly undecodable bytes, mean binary; a few bad bytes are just damaged text.
    Give it the first few KB of a file."""
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    text = sample.decode("utf-8", errors="replace")
    # a multi-byte char cut at the sample end is not damage
    bad = text[:-1].count("\ufffd") if text.endswith("\ufffd") else text.count("\ufffd")
    return bad > max(8, len(text) // 10)
