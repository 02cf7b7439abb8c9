"""Secret redaction: coverage of every kind on a synthetic corpus, and no change to ordinary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reme_cc.notes.redact import redact, redact_counts, remove_private, scrub, strip_base64
from support.redact_corpus import NEGATIVES, POSITIVES, PRIVATE_KEY, repository_lines


@pytest.mark.parametrize("kind,text,secret", POSITIVES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(POSITIVES)])
def test_every_kind_is_redacted_with_its_marker(kind, text, secret):
    out, counts = redact_counts(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert counts.get(kind) == 1


def test_context_is_kept_and_only_the_value_hidden():
    assert redact("DB_PASSWORD=S3cretValue9 rest") == "DB_PASSWORD=[REDACTED:password] rest"
    assert redact("Authorization: Bearer abcdefghijklmnopqrstuvwx") == "Authorization: Bearer [REDACTED:bearer-token]"
    out = redact("postgres://app:pa55word99@db:5432/x")
    assert out == "postgres://app:[REDACTED:url-password]@db:5432/x"


def test_provider_kind_wins_over_generic_assignment():
    key = "sk-" + "proj-" + "A1b2C3d4" * 6
    assert redact(f"OPENAI_API_KEY={key}") == "OPENAI_API_KEY=[REDACTED:openai-key]"


@pytest.mark.parametrize("line", NEGATIVES)
def test_ordinary_code_and_prose_is_untouched(line):
    assert redact(line) == line


def test_private_key_mentioned_in_prose_is_kept_but_cut_block_is_hidden():
    prose = "look for the '-----BEGIN RSA PRIVATE KEY-----' header in the file"
    assert redact(prose) == prose
    cut = PRIVATE_KEY[: len(PRIVATE_KEY) // 2]  # an excerpt that lost the END line
    out = redact("key:\n" + cut)
    assert "[REDACTED:private-key]" in out and cut.splitlines()[1] not in out


def test_private_spans():
    assert remove_private("a <private>x</private> b") == "a  b"
    assert remove_private("a <PRIVATE>x\ny</Private> b <private>rest of it") == "a  b "
    assert remove_private("no tags </private> here") == "no tags </private> here"


def test_base64_payloads():
    blob = "iVBORw0KGgo" + "A" * 2000
    assert "AAAA" not in strip_base64(f"see data:image/png;base64,{blob} ok")
    assert strip_base64("x " + blob + " y") == "x [base64 data omitted] y"
    assert strip_base64("short text") == "short text"


def test_false_positive_rate_on_the_repository_corpus():
    """Measured on real code and prose the repository controls (its sources, docs and recorded
    transcripts), so the figure is the same whichever Python runs the tests."""
    corpus = repository_lines()
    changed = [f"{p}: {line.strip()[:100]}" for p, line in corpus if redact(line) != line]
    assert len(corpus) > 10_000
    assert len(changed) / len(corpus) < 1e-4, changed


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_fuzz_never_crashes_and_is_idempotent(text):
    once = scrub(text)
    assert isinstance(once, str)
    assert scrub(once) == once


# Issue 21 item 17: netrc syntax (`machine h login u password p`, one token per line or all on one line).
NETRC_SECRET = "Netrc" + "S3cret77"


@pytest.mark.parametrize(
    "text",
    [
        f"machine api.example.com login alice password {NETRC_SECRET}",
        f"machine api.example.com\n  login alice\n  password {NETRC_SECRET}\n",
        f"password {NETRC_SECRET}",
        f"default login anonymous password {NETRC_SECRET} account x",
        f"machine git.example.com password {NETRC_SECRET} login alice",
        f"cat ~/.netrc\nmachine h login a password '{NETRC_SECRET}'\n",
    ],
)
def test_netrc_passwords_are_redacted(text):
    out, counts = redact_counts(text)
    assert NETRC_SECRET not in out and counts.get("password") == 1, out
    assert all(word in out for word in ("machine", "login", "default", "account", "password") if word in text)


@pytest.mark.parametrize(
    "line",
    [
        "password reset",
        "password hashing with bcrypt",
        "Change the password before the demo.",
        "- password reset link expires after 1 hour",
        "## password policy",
        "login with the password stored in the keychain",
        "machine learning login password protected area",
        "password 2",  # a list item count, no secret shape
    ],
)
def test_netrc_rule_leaves_prose_alone(line):
    assert redact(line) == line
