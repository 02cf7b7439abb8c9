"""Secret redaction and private-span removal for text that is about to be stored.

Standard library only: the hooks run it with the system python3 before the plugin env exists.
Everything the hooks copy out of a Claude Code transcript passes through ``scrub`` BEFORE it is
written, so a key pasted into a prompt or printed by a tool never reaches the workspace.

Design: one pass per pattern, in list order (each pattern then gets the regex engine's fast search for
its literal prefix; one combined alternation was 3x slower); a pattern may mark the part to hide with a
``v``/``u``/``w``/``e`` group so context such as ``password=`` or ``Bearer`` is kept and only the
value becomes ``[REDACTED:<kind>]``. Provider patterns come first, so ``OPENAI_API_KEY=sk-proj-…``
is named by its provider and the generic rules leave an already hidden value alone.
Patterns prefer provider-specific shapes (fixed prefixes, lengths, character classes) over entropy
guesses to keep false positives on ordinary code and prose low.

Every scan is linear in its input (a hook has a few seconds for a 200 KB message): repetitions and
lookaheads that may run and then fail are bounded, and blocks with a far end marker (private keys,
``<private>`` spans) are found by scanners that search each stretch of text for the closer once.
"""

from __future__ import annotations

import re

# Shared pieces of the keyed rules below (bounded, so a failed attempt costs at most a few hundred steps).
_ARG = r"(?:(?P<q>[\"'])(?P<v>(?![$\-]|\[REDACTED)[^\"'\n]{1,200})(?P=q)|(?P<u>(?![$\-\"']|\[REDACTED)[^\s\"']{1,200}))"
_FLAG_WORDS = r"password|passwd|pass|passphrase|token|secret|api-key|apikey|access-token|auth-token|client-secret"
# A key named like a secret: `password`, `DB_PASSWORD`, `SMTP_PASS`, `x-api-key`, `"token"`.
# Short words (pwd, pw) need a separator before them, and `pass` must start the key, so `compass=` or
# `OLDPWD=` are no keys. (Cookies have their own rule: a `cookie` key is as often a module name.)
_KEY_NAME = (
    r"(?i:(?:[A-Za-z0-9]{1,40}[_.-]){0,4}"
    r"(?:(?:[a-z0-9]{0,20})(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|client[_-]?secret|(?:account|storage|master|signing|encryption)[_-]?key|"
    r"credentials?)"
    r"|pass|(?<=[_.-])(?:pwd|pw)))"
)
# A value that is itself the start of another assignment (`password: SECRET_KEY='…'`) is not the value:
# the assignment after it is judged on its own.
_ANOTHER_KEY = _KEY_NAME + r"[\"']?[ \t]{0,8}[:=]"
_SYMBOL = r"[0-9!@#$%^&*+=?~]"
_NOT_A_VALUE = (
    r"(?i:str|string|int|integer|bytes|bool|boolean|float|none|null|nil|true|false|any|dict|list|object|"
    r"optional|required|undefined|unset|empty|yes|no|hidden|secret|secrets|password|token|redacted|self|cls)"
)

# (kind, pattern). A ``v`` (or ``u``/``w``/``e``) group marks what to hide; without one the whole
# match is hidden. Order matters where shapes overlap (sk-ant- before the generic sk-).
_PATTERNS: list[tuple[str, str]] = [
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
    (
        "password",
        r"(?<![A-Za-z_.])(?i:pwd)=(?!(?:None|True|False|null|nil)\b)"
        r"(?P<v>[^\s;,'\"/~$.(][^\s;,'\"()]{3,127})(?=[;'\"}]|\s|$)",
    ),
    (
        "password",
        r"(?i:key=\"[\w.:-]{0,80}(?:password|secret|apikey|api_key|token)[\w.:-]{0,80}\"\s{1,20}value=\")"
        r"(?P<v>[^\"]{6,200})\"",
    ),
    ("password", r"\bmysql(?:dump|admin)?\b[^\n]{0,80}?\s-p(?P<v>[^\s'\"$-][^\s'\"]{3,127})"),
    # Commands that take a password as an argument: sshpass -p, docker login -p, curl -u user:password
    ("password", r"\bsshpass\b[^\n]{0,80}?\s-p[ \t]{0,5}" + _ARG),
    ("password", r"\b(?:docker|podman|helm|oras)\b[^\n]{0,40}?\blogin\b[^\n]{0,160}?\s-p[ \t]{1,5}" + _ARG),
    ("password", r"\bcurl\b[^\n]{0,300}?\s(?:-u|--user)[ \t=]{0,5}[\"']?[^\s:'\"]{1,64}:(?P<v>(?!\$)[^\s'\"]{1,128})"),
    # --password X, --token=X, --api-key "X" (not --password-stdin, not --token $TOKEN)
    ("password", r"(?<![\w-])--(?i:" + _FLAG_WORDS + r")(?:=|[ \t]{1,5})" + _ARG),
    # scheme://user:password@host  (also DSNs such as postgres://, redis://, mongodb+srv://)
    ("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@\"'<>]{1,64}:(?P<v>[^\s@/\"'<>]{1,128})@"),
    # Cookie / Set-Cookie headers: the whole value (session ids carry no recognisable shape)
    (
        "cookie",
        r"(?<![\w-])(?i:set-cookie|cookie)[ \t]{0,5}:[ \t]{0,20}(?P<v>(?!\[REDACTED)(?=[^\n=]{0,200}=)[^\s][^\n]{0,3999})",
    ),
    # "my password is hunter2", "our api token was 'x y z'"
    (
        "password",
        r"(?i:\b(?:my|our|your|his|her|their|the)[ \t]{1,3}(?:[a-z]{1,20}[ \t]{1,3})?"
        r"(?:password|passphrase|passcode|passwd|pin|token|secret|api[ -]?key)[ \t]{1,3}(?:is|was|=|:)[ \t]{1,3})"
        r"(?:(?P<q>[\"'`])(?P<v>(?!\[REDACTED)[^\"'`\n]{1,200})(?P=q)"
        r"|(?P<u>(?=[^\s\"'`,;()<>{}\[\]]{0,199}"
        + _SYMBOL
        + r")(?!\[REDACTED)[^\s\"'`,;()<>{}\[\]]{3,200}(?<![.?!:])))",
    ),
    # netrc (~/.netrc, .authinfo): `machine HOST login USER password VALUE`, the tokens on one line or
    # several; and a `password VALUE` line alone when VALUE has a digit or symbol (`password reset`
    # stays). The keywords are lower case, as netrc spells them.
    (
        "password",
        r"(?<![\w-])(?:machine[ \t]{1,10}[^\s]{1,253}|default)"
        r"(?:[ \t\r\n]{1,20}(?:login|account)[ \t]{1,10}[^\s]{1,200}){0,2}[ \t\r\n]{1,20}password[ \t]{1,10}" + _ARG,
    ),
    ("password", r"(?<![\w-])login[ \t]{1,10}[^\s]{1,200}[ \t]{1,10}password[ \t]{1,10}" + _ARG),
    (
        "password",
        r"(?<![^\n])[ \t]{0,20}password[ \t]{1,10}(?P<v>(?=[^\s]{0,199}" + _SYMBOL + r")(?![$\-\"']|\[REDACTED)"
        r"[^\s\"']{6,200})(?=[ \t]{0,20}(?:\r?\n|\Z))",
    ),
    # password=..., "api_key": "...", DB_PASSWORD=..., SMTP_PASS: ..., x-api-key: ..., client_secret: '...':
    # any value of a key named like a secret. Quoted: any characters. `KEY=value` (no space): any
    # characters, except code that passes a variable on (`password=password,`, `token=self.token`,
    # `secret=get()`; an upper-case key such as DB_PASSWORD is an environment variable, not code). Spaced (`password: hunter2`, `api_key = "…"` is quoted above): a value with a
    # digit or symbol; or, at the end of a line, any single word that is not a type or a keyword
    # (`password: str`, `secret = None` are left alone).
    (
        "password",
        r"(?<![A-Za-z0-9_$\[-])(?:(?=[A-Z0-9_.-]{1,200}[\"']?[ \t]{0,8}[:=])(?P<caps>))?"  # DB_PASSWORD: no kwarg
        + _KEY_NAME
        + r"[\"']?[ \t]{0,8}(?:=>|:=|=|:)[ \t]{0,8}"
        r"(?:(?P<q>[\"'])(?P<v>(?!\[REDACTED|[$%{<]|\s|" + _NOT_A_VALUE + r"[\"'])[^\"'\n]{3,200})(?P=q)"
        r"|(?<==)(?P<u>(?!\[REDACTED|[$%{<\[(/~-]|(?i:none|null|nil|true|false|undefined)\b|" + _ANOTHER_KEY + r")"
        r"(?(caps)|(?![A-Za-z_]\w{0,80}[.,)]))"
        r"[^\s\"'`,;()<>{}\[\]]{4,200})(?![(\[\w])"
        r"|(?P<w>(?=[^\s\"'`,;()<>{}\[\]]{0,199}" + _SYMBOL + r")(?!\[REDACTED|[$%{<\[(-]|" + _ANOTHER_KEY + r")"
        r"[^\s\"'`,;()<>{}\[\]]{4,200})(?![(\[.\w])"
        r"|(?:(?<=:)|(?<=:[ \t]))(?P<e>(?!"
        + _NOT_A_VALUE
        + r"\b)(?-i:[a-z][a-z0-9-]{3,100}))(?=[ \t]{0,20}(?:\r?\n|\Z)))",
    ),
]


class _Lazy:
    """A regex compiled on first use: the hooks import this module on every run, and most runs redact
    nothing (compiling everything at import cost the no-op Stop hook ~15 ms)."""

    def __init__(self, pattern: str, flags: int = 0):
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> object:
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)


def _compile() -> list[tuple[str, re.Pattern[str], tuple[str, ...]]]:
    return [
        (kind, rx, tuple(g for g in ("v", "u", "w", "e") if g in rx.groupindex))
        for kind, rx in ((kind, re.compile(pat)) for kind, pat in _PATTERNS)
    ]


_SECRETS: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = []  # compiled on first use (~10 ms)


def _secrets() -> list[tuple[str, re.Pattern[str], tuple[str, ...]]]:
    if not _SECRETS:
        _SECRETS.extend(_compile())
    return _SECRETS


# Cheap gate: text with none of these substrings cannot match any pattern, so the big regex is
# skipped (most transcript strings are short prose).
_HINTS = _Lazy(
    r"PRIVATE KEY|sk-|gh[pousr]_|github_pat_|gl[a-z]{1,4}-|xox|discord|ya29\.|GOCSPX-|sig=|Q~|(?i:pwd|mysql)|"
    r"hooks\.slack|AKIA|ASIA|ABIA|ACCA|AIza|_live_|_test_|"
    r"whsec_|hf_|npm_|pypi-|SG\.|gsk_|_v1_|shp|:AA|eyJ|://|"
    r"(?i:bearer|basic|pass|secret|key|token|cookie|curl|login|credential|\bpin\b|[_.-]pw)"
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    return redact_counts(text)[0]


def redact_counts(text: str, *, keep_lines: bool = False) -> tuple[str, dict[str, int]]:
    """Like ``redact`` and also how many secrets of each kind were hidden. ``keep_lines``: a hidden
    value spanning lines (a private key block) leaves its line breaks, so line numbers stay true."""
    counts: dict[str, int] = {}
    if not text or not _HINTS.search(text):
        return text, counts
    text = _redact_key_blocks(text, counts, keep_lines)
    for kind, rx, value_groups in _secrets():
        text = rx.sub(lambda m: _hide(m, kind, value_groups, counts, keep_lines), text)
    return text, counts


def _marker(kind: str, hidden: str, keep_lines: bool) -> str:
    return f"[REDACTED:{kind}]" + ("\n" * hidden.count("\n") if keep_lines else "")


def _hide(
    m: re.Match[str], kind: str, value_groups: tuple[str, ...], counts: dict[str, int], keep_lines: bool = False
) -> str:
    for g in value_groups:
        if m.group(g) is not None:
            s, e = m.span(g)
            if m.string.startswith("[REDACTED:", s):  # hidden by an earlier, more specific pattern
                return m.group(0)
            counts[kind] = counts.get(kind, 0) + 1
            return m.string[m.start() : s] + _marker(kind, m.string[s:e], keep_lines) + m.string[e : m.end()]
    counts[kind] = counts.get(kind, 0) + 1
    return _marker(kind, m.group(0), keep_lines)


# Private keys: PEM (any case), SSH2 (RFC 4716) and PuTTY .ppk files. A block runs from its header to
# its end marker; when the end marker is missing (an excerpt cut it off) the header and the key body
# after it are hidden, and a header merely mentioned in prose is left alone.
_KEY_HEADER = _Lazy(
    r"(?P<pem>-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)"
    r"|(?P<ssh2>---- BEGIN SSH2[ A-Z0-9]{0,40}PRIVATE KEY ----)"
    r"|(?P<ppk>PuTTY-User-Key-File-[0-9]{1,2}:[^\n]{0,100})",
    re.IGNORECASE,
)
_KEY_END = {
    "pem": _Lazy(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE),
    "ssh2": _Lazy(r"---- END SSH2[ A-Z0-9]{0,40}PRIVATE KEY ----", re.IGNORECASE),
    "ppk": _Lazy(r"Private-MAC:[ \t]{0,5}[0-9A-Fa-f]{0,128}"),
}
_KEY_MAX_CHARS = 65_536  # an end marker farther than this belongs to some other block
# The body after a header whose end is missing: up to 4 header lines (Proc-Type:, Comment:, ...),
# then base64 (raw or with JSON-escaped \n), and further `Name: value` lines of a .ppk file.
_KEY_BODY = _Lazy(
    r"(?:[^\n]{0,100}\n){0,4}?[ \t\r\n]{0,200}(?:\\n)?[A-Za-z0-9+/=]{40,}"
    r"(?:[A-Za-z0-9+/=\s]|\\n|\n[A-Z][A-Za-z-]{1,30}:[^\n]{0,200})*"
    r"|[ \t]{0,10}(?:\r?\n|\\n)[A-Za-z0-9+/=]{1,39}\s{0,10}\Z"  # cut within the body's first line
)


def _redact_key_blocks(text: str, counts: dict[str, int], keep_lines: bool = False) -> str:
    """Hide private-key blocks. Linear: each kind's end marker is searched for once per stretch of text
    (the next end after a header serves every header before it)."""
    if "PRIVATE KEY" not in text.upper() and "PuTTY-User-Key-File" not in text:
        return text
    out: list[str] = []
    pos = 0
    next_end: dict[str, tuple[int, int] | None] = {}  # kind -> (start, end) of the next end marker
    for m in _KEY_HEADER.finditer(text):
        if m.start() < pos:
            continue  # inside a block already hidden
        kind = m.lastgroup or "pem"
        known = next_end.get(kind, (-1, -1))
        if known is not None and known[0] < m.end():
            found = _KEY_END[kind].search(text, m.end())
            known = next_end[kind] = found.span() if found else None
        if known is not None and known[0] - m.end() <= _KEY_MAX_CHARS:
            stop = known[1]
        else:
            body = _KEY_BODY.match(text, m.end())
            if body is None:
                continue
            stop = body.end()
        out.append(text[pos : m.start()] + _marker("private-key", text[m.start() : stop], keep_lines))
        counts["private-key"] = counts.get("private-key", 0) + 1
        pos = stop
    return "".join(out) + text[pos:] if out else text


_DATA_URI = _Lazy(r"data:([\w.+-]+/[\w.+-]+)?(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
_BASE64_BLOB = _Lazy(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{512,}={0,2}(?![A-Za-z0-9+/=])")


# E-mail addresses: hidden where text leaves the user's machine for others to read (``share``), not in
# the user's own copies. An address of a host (`git@github.com:org/x.git`, `ssh deploy@host`) stays:
# it names a machine to reach, not a person.
_EMAIL = _Lazy(
    r"(?<![\w.+%-])(?P<local>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}"
    r"(?![\w.-]*[\w-]|:[\w~/])"
)
_HOST_LOGIN = _Lazy(r"\b(?:ssh|scp|sftp|rsync|mosh)\b[^\n]{0,80}$")


def hide_emails(text: str) -> tuple[str, int]:
    """``text`` with e-mail addresses replaced by ``[REDACTED:email]``, and how many."""
    if "@" not in text:
        return text, 0
    count = 0

    def hide(m: re.Match[str]) -> str:
        nonlocal count
        if _HOST_LOGIN.search(text, max(0, m.start() - 80), m.start()):
            return m.group(0)
        count += 1
        return "[REDACTED:email]"

    return _EMAIL.sub(hide, text), count


# `<private>`, `<private reason="bank">`, `< private >`, `</private >`; the tag name must end there.
_PRIVATE_TAG = _Lazy(r"<[ \t]{0,10}(/?)[ \t]{0,10}private(?![\w-])[^<>\n]{0,200}>", re.IGNORECASE)


def remove_private(text: str) -> str:
    """Drop ``<private>…</private>`` spans, nested ones counted (the outer close ends the span); an
    unterminated span runs to the end of the text; a stray close tag outside any span stays."""
    return remove_private_counts(text)[0]


def remove_private_counts(text: str) -> tuple[str, int]:
    """Like ``remove_private`` and also how many (outermost) spans were dropped."""
    if "<" not in text or "private" not in text.lower():
        return text, 0
    out: list[str] = []
    depth, kept_from, spans = 0, 0, 0
    for m in _PRIVATE_TAG.finditer(text):
        if not m.group(1):  # an opening tag
            if depth == 0:
                out.append(text[kept_from : m.start()])
                spans += 1
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                kept_from = m.end()
    if depth:
        return "".join(out), spans
    return "".join(out) + text[kept_from:], spans


def strip_base64(text: str) -> str:
    """Replace data: URIs and long raw base64 runs (pasted images, archives) by a placeholder."""
    if len(text) < 512 and "base64," not in text:
        return text
    text = _DATA_URI.sub(lambda m: f"[base64 {m.group(1) or 'data'} omitted]", text)
    return _BASE64_BLOB.sub("[base64 data omitted]", text)


def scrub(text: str) -> str:
    """Everything a stored string goes through: private spans, base64 payloads, secrets."""
    return redact(strip_base64(remove_private(text)))
