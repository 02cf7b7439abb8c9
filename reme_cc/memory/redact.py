"""Secret redaction and private-span removal for text that is about to be stored.

Standard library only: the hooks run it with the system python3 before the plugin env exists.
Everything the hooks copy out of a Claude Code transcript passes through ``scrub`` BEFORE it is
written, so a key pasted into a prompt or printed by a tool never reaches the workspace.

Design: one combined regex (a single left-to-right pass over the text, however many patterns)
whose alternatives are named ``k<N>``; a pattern may mark the part to hide with a ``v<N>`` group so
context such as ``password=`` or ``Bearer`` is kept and only the value becomes ``[REDACTED:<kind>]``.
Patterns prefer provider-specific shapes (fixed prefixes, lengths, character classes) over entropy
guesses to keep false positives on ordinary code and prose low.
"""

from __future__ import annotations

import re

# (kind, pattern). A ``(?P<v>...)`` group (renamed per pattern below) marks what to hide; without it
# the whole match is hidden. Order matters where shapes overlap (sk-ant- before the generic sk-).
_PATTERNS: list[tuple[str, str]] = [
    (
        "private-key",
        # A whole block; or, when the END line is missing (an excerpt cut it off), the header and the
        # base64 body that follows it (a header merely mentioned in prose is left alone).
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?"
        r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:[^\n]{0,100}\n){0,3}?\s*[A-Za-z0-9+/=]{40,}[A-Za-z0-9+/=\s]*)",
    ),
    ("anthropic-key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}"),
    (
        "openai-key",
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])"
        r"[A-Za-z0-9_-]{32,}",
    ),
    ("github-token", r"(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}"),
    ("github-token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}"),
    ("gitlab-token", r"(?<![A-Za-z0-9_])gl(?:pat|ptt|dt|rt|cbt|soat|ft|imt|oas)-[A-Za-z0-9_-]{20,}"),
    ("slack-token", r"(?<![A-Za-z0-9_])xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    ("discord-webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}"),
    ("aws-access-key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    (
        "aws-secret-key",
        r"(?i:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|aws_?secret)"
        r"[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    ),
    ("google-api-key", r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ("gcp-oauth-token", r"(?<![A-Za-z0-9_-])ya29\.[0-9A-Za-z_-]{20,}"),
    ("gcp-oauth-secret", r"(?<![A-Za-z0-9_-])GOCSPX-[0-9A-Za-z_-]{20,}"),
    # Azure: storage / Service Bus keys inside connection strings, SAS signatures, Entra client secrets
    ("azure-key", r"(?i:AccountKey|SharedAccessKey)=(?P<v>[A-Za-z0-9+/]{20,}={0,2})"),
    ("azure-sas", r"[?&]sig=(?P<v>[A-Za-z0-9%+/=]{20,})"),
    ("azure-client-secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"),
    ("stripe-key", r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("stripe-webhook-secret", r"(?<![A-Za-z0-9_])whsec_[0-9A-Za-z]{24,}"),
    ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi-token", r"(?<![A-Za-z0-9_])pypi-AgE[A-Za-z0-9_-]{50,}"),
    ("sendgrid-key", r"(?<![A-Za-z0-9_])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ("groq-key", r"(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{40,}"),
    ("digitalocean-token", r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}"),
    ("shopify-token", r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("telegram-bot-token", r"(?<![A-Za-z0-9_:])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # Authorization headers: keep the scheme word, hide the credential.
    ("bearer-token", r"(?i:\bbearer)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"),
    ("basic-auth", r"(?i:\bauthorization:\s*basic)\s+(?P<v>[A-Za-z0-9+/]{12,}=*)"),
    # ODBC/ADO `PWD=…;` (not a shell's PWD=/path or $(pwd), nor Python's `pwd = …`);
    # .NET `<add key="ApiKey" value="…"/>`; `mysql -pPASSWORD` (with a space after -p mysql prompts)
    ("password", r"(?<![A-Za-z_.])(?i:pwd)=(?!(?:None|True|False|null|nil)\b)"
                 r"(?P<v>[^\s;,'\"/~$.(][^\s;,'\"()]{3,127})(?=[;'\"}]|\s|$)"),
    ("password", r"(?i:key=\"[\w.:-]*(?:password|secret|apikey|api_key|token)[\w.:-]*\"\s+value=\")"
                 r"(?P<v>[^\"]{6,200})\""),
    ("password", r"\bmysql(?:dump|admin)?\b[^\n]{0,80}?\s-p(?P<v>[^\s'\"$-][^\s'\"]{3,127})"),
    # scheme://user:password@host  (also DSNs such as postgres://, redis://, mongodb+srv://)
    ("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@\"'<>]{1,64}:(?P<v>[^\s@/\"'<>]{1,128})@"),
    # password=..., "api_key": "...", DB_PASSWORD=..., client_secret: '...'.
    # Quoted values: any 4+ chars without spaces. Unquoted: 8+ chars mixing letters and digits, so
    # `password = get_password()` or `max_tokens=128000` are left alone.
    (
        "password",
        r"(?<![:/])(?i:(?:password|passwd|passphrase|secret|api_?key|apikey|access_?key|secret_?key|"
        r"private_?key|client_?secret|(?:account|storage|master|signing|encryption)_?key|"
        r"(?:auth|access|refresh|api|bot|session|secret|bearer|github|gitlab|npm|"
        r"slack|discord|telegram)_?token))"
        r"[\"']?\s*(?:=|:|:=|=>)\s*"
        r"(?:(?P<q>[\"'])(?P<v>(?=[^\s\"'<>{}$%]*(?:[0-9]|[-!@#^&*+=.:/~]))[^\s\"'<>{}$%]{6,200})(?P=q)"
        r"|(?P<u>(?=[^\s\"',;()<>{}\[\]]*[0-9])(?=[^\s\"',;()<>{}\[\]]*[A-Za-z])[^\s\"',;()<>{}\[\]]{8,200})"
        r"(?![(\w\[.]))",
    ),
]


def _compile() -> tuple[re.Pattern[str], dict[str, str], dict[str, list[str]]]:
    parts: list[str] = []
    kinds: dict[str, str] = {}
    values: dict[str, list[str]] = {}
    for i, (kind, pat) in enumerate(_PATTERNS):
        # Give each pattern's inner groups unique names so they can live in one alternation.
        pat = re.sub(r"\(\?P<(\w+)>", lambda m: f"(?P<{m.group(1)}{i}>", pat)
        pat = re.sub(r"\(\?P=(\w+)\)", lambda m: f"(?P={m.group(1)}{i})", pat)
        name = f"k{i}"
        kinds[name] = kind
        values[name] = [g for g in (f"v{i}", f"u{i}") if f"(?P<{g}>" in pat]
        parts.append(f"(?P<{name}>{pat})")
    return re.compile("|".join(parts)), kinds, values


_SECRETS: re.Pattern[str] | None = None  # compiled on first use (~10 ms): no-op hook runs skip it
_KINDS: dict[str, str] = {}
_VALUE_GROUPS: dict[str, list[str]] = {}


def _secrets() -> re.Pattern[str]:
    global _SECRETS, _KINDS, _VALUE_GROUPS
    if _SECRETS is None:
        _SECRETS, _KINDS, _VALUE_GROUPS = _compile()
    return _SECRETS

# Cheap gate: text with none of these substrings cannot match any pattern, so the big regex is
# skipped (most transcript strings are short prose).
_HINTS = re.compile(
    r"PRIVATE KEY|sk-|gh[pousr]_|github_pat_|gl[a-z]{1,4}-|xox|discord|ya29\.|GOCSPX-|sig=|Q~|(?i:pwd|mysql)|"
    r"hooks\.slack|AKIA|ASIA|ABIA|ACCA|AIza|_live_|_test_|"
    r"whsec_|hf_|npm_|pypi-|SG\.|gsk_|_v1_|shp|:AA|eyJ|://|(?i:bearer|basic|pass|secret|key|token)"
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    return redact_counts(text)[0]


def redact_counts(text: str) -> tuple[str, dict[str, int]]:
    """Like ``redact`` and also how many secrets of each kind were hidden."""
    counts: dict[str, int] = {}
    if not text or not _HINTS.search(text):
        return text, counts
    secrets = _secrets()

    def sub(m: re.Match[str]) -> str:
        name = m.lastgroup or ""
        kind = _KINDS.get(name, "secret")
        for g in _VALUE_GROUPS.get(name, ()):
            if m.group(g) is not None:
                s, e = m.span(g)
                # `OPENAI_API_KEY=sk-proj-…`: name the provider rather than the generic context.
                inner = secrets.search(m.string, s, e)
                if inner is not None and inner.start() == s and not _VALUE_GROUPS.get(inner.lastgroup or ""):
                    kind = _KINDS.get(inner.lastgroup or "", kind)
                counts[kind] = counts.get(kind, 0) + 1
                return m.string[m.start() : s] + f"[REDACTED:{kind}]" + m.string[e : m.end()]
        counts[kind] = counts.get(kind, 0) + 1
        return f"[REDACTED:{kind}]"

    return secrets.sub(sub, text), counts


_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
_BASE64_BLOB = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{512,}={0,2}(?![A-Za-z0-9+/=])")


def remove_private(text: str) -> str:
    """Drop ``<private>…</private>`` spans; an unterminated span runs to the end of the text."""
    if "<" not in text:
        return text
    return _PRIVATE.sub("", text)


def strip_base64(text: str) -> str:
    """Replace data: URIs and long raw base64 runs (pasted images, archives) by a placeholder."""
    if len(text) < 512 and "base64," not in text:
        return text
    text = _DATA_URI.sub(lambda m: f"[base64 {m.group(1) or 'data'} omitted]", text)
    return _BASE64_BLOB.sub("[base64 data omitted]", text)


def scrub(text: str) -> str:
    """Everything a stored string goes through: private spans, base64 payloads, secrets."""
    return redact(strip_base64(remove_private(text)))
