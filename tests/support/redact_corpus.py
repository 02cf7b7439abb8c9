"""A corpus for measuring secret redaction: true secrets per kind, and ordinary text that must survive.

Secrets are assembled at import time from pieces so this file itself does not look like a leak to
scanners. None of them is real.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

_rng = random.Random(1234)


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    s = "".join(_rng.choice(alphabet) for _ in range(n))
    # make sure there is at least one digit and one letter (as real keys have)
    return "a1" + s[2:]


_HEX = "0123456789abcdef"
_B64URL = string.ascii_letters + string.digits + "-_"
_UPPER = string.ascii_uppercase + string.digits

PRIVATE_KEY = (
    "-----BEGIN "
    + "RSA PRIVATE KEY-----\n"
    + "\n".join(_rand(64, string.ascii_letters + string.digits + "+/") for _ in range(5))
    + "\n-----END "
    + "RSA PRIVATE KEY-----"
)

# (kind, text containing the secret, the secret itself)
POSITIVES: list[tuple[str, str, str]] = []


def _add(kind: str, secret: str, template: str = "here it is: {} thanks") -> None:
    POSITIVES.append((kind, template.format(secret), secret))


_add("anthropic-key", "sk-" + "ant-api03-" + _rand(80, _B64URL))
_add("anthropic-key", "sk-" + "ant-admin01-" + _rand(60, _B64URL), 'ANTHROPIC_API_KEY="{}"')
_add("openai-key", "sk-" + _rand(48))
_add("openai-key", "sk-" + "proj-" + _rand(120, _B64URL), "export OPENAI_API_KEY={}")
_add("github-token", "gh" + "p_" + _rand(36))
_add("github-token", "gh" + "o_" + _rand(36), "token: {}")
_add("github-token", "gh" + "s_" + _rand(36), "git clone https://x-access-token:{}@github.com/o/r")
_add("github-token", "github" + "_pat_" + _rand(22) + "_" + _rand(59))
_add("gitlab-token", "gl" + "pat-" + _rand(20, _B64URL))
_add("slack-token", "xo" + "xb-" + "123456789012-1234567890123-" + _rand(24))
_add("slack-token", "xo" + "xp-" + "1234567890-" + _rand(30))
_add("slack-webhook", "https://hooks.slack.com/" + "services/T00000000/B00000000/" + _rand(24))
_add("aws-access-key", "AK" + "IA" + _rand(16, _UPPER).upper())
_add("aws-access-key", "AS" + "IA" + _rand(16, _UPPER).upper(), "aws_access_key_id = {}")
_add("aws-secret-key", _rand(40, string.ascii_letters + string.digits + "/+"), "aws_secret_access_key = {}")
_add("google-api-key", "AI" + "za" + _rand(35, _B64URL))
_add("stripe-key", "sk" + "_live_" + _rand(24))
_add("stripe-key", "rk" + "_live_" + _rand(24), "STRIPE_KEY={}")
_add("stripe-webhook-secret", "wh" + "sec_" + _rand(32))
_add("huggingface-token", "hf" + "_" + _rand(34))
_add("npm-token", "np" + "m_" + _rand(36), "//registry.npmjs.org/:_authToken={}")
_add("pypi-token", "py" + "pi-AgE" + "IcHlwaS5vcmc" + _rand(70, _B64URL))
_add("sendgrid-key", "SG" + "." + _rand(22, _B64URL) + "." + _rand(43, _B64URL))
_add("groq-key", "gs" + "k_" + _rand(52))
_add("digitalocean-token", "do" + "p_v1_" + _rand(64, _HEX))
_add("shopify-token", "sh" + "pat_" + _rand(32, _HEX))
_add("telegram-bot-token", "123456789:AA" + _rand(33, _B64URL))
_add("jwt", "ey" + "JhbGciOiJIUzI1NiJ9." + "ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0." + _rand(43, _B64URL))
_add("bearer-token", _rand(40, _B64URL + "."), "curl -H 'Authorization: Bearer {}' https://api.example.com")
_add("basic-auth", _rand(32, string.ascii_letters + string.digits), "Authorization: Basic {}")
_add("url-password", "Hunter2" + _rand(8), "DATABASE_URL=postgres://admin:{}@db.internal:5432/app")
_add("url-password", "pa55" + _rand(10), "redis://default:{}@cache:6379/0")
_add("password", "correct-horse-" + _rand(6), 'db_password = "{}"')
_add("password", "S3cr3t" + _rand(6), "DB_PASSWORD={}")
_add("password", "abc" + _rand(12), '{{"api_key": "{}", "user": "bob"}}')
_add("password", "tok" + _rand(20), "SERVICE_AUTH_TOKEN: {}")
_add("password", "q9" + _rand(14), "client_secret='{}'")
_add("private-key", PRIVATE_KEY, "key file:\n{}\nend")

# Issue 13 item 2: values of keys named like a secret, whatever their characters; credentials given to
# commands; headers; prose; JSON tool inputs; key formats besides upper-case PEM.
_LETTERS = "correct" + "horsebatterystaple"
_add("password", _LETTERS, 'DB_PASSWORD="{}"')
_add("password", _LETTERS + "x", "DB_PASSWORD={}")
_add("password", "hunter" + "2", "password: {}")
_add("password", "S3cret" + "Passw0rd", "curl -u admin:{} https://api.example.com/v1/items")
_add("password", _rand(32), "curl -H 'x-api-key: {}' https://api.example.com")
_add("password", _rand(24), "TOKEN={}")
_add("password", "smtp" + _rand(10), "SMTP_PASS={}")
_add("password", "ssh" + _rand(9), "sshpass -p {} ssh deploy@build.example.com")
_add("password", "reg" + _rand(12), "docker login --password {} registry.example.com")
_add("password", "podman" + _rand(8), "podman login -u ci -p {} quay.io")
_add("cookie", "sessionid=" + _rand(32), "Cookie: {}; csrftoken=abc")
_add("password", "hunter" + "2", "by the way my password is {} for the router")
_add("password", "hunter" + "2", '{{"password":"{}"}}')
_add("password", "Xk29!" + "aQ7zz", '{{"pass":"{}"}}')
_add("password", _rand(40), '{{"token":"{}"}}')
_add("password", "sesame" + "street", "login with --passphrase='{}' then")
_add(
    "private-key",
    "-----begin "
    + "rsa private key-----\n"
    + _rand(64, string.ascii_letters + "+/")
    + "\n"
    + _rand(40, string.ascii_letters + "+/")
    + "\n-----end "
    + "rsa private key-----",
)
_add(
    "private-key",
    "---- BEGIN SSH2 "
    + 'ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key-20261201"\n'
    + "\n".join(_rand(70, string.ascii_letters + string.digits + "+/") for _ in range(4))
    + "\n---- END SSH2 "
    + "ENCRYPTED PRIVATE KEY ----",
    "id_rsa.ssh2:\n{}\n",
)
PPK = (
    "PuTTY-User-Key-File-"
    + "3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20261201\nPublic-Lines: 2\n"
    + _rand(64, string.ascii_letters + "+/")
    + "\n"
    + _rand(20, string.ascii_letters)
    + "\nPrivate-Lines: 1\n"
    + _rand(44, string.ascii_letters + "+/")
    + "\nPrivate-MAC: "
    + _rand(64, _HEX)
)
_add("private-key", PPK, "putty.ppk:\n{}\n")

# Ordinary code and prose. Each line is one sample; none should be changed by redaction.
NEGATIVES: list[str] = [
    "The quick brown fox jumps over the lazy dog.",
    "We decided to use SQLite for the memory store because it is embedded and fast.",
    "password = getpass.getpass('Password: ')",
    "password = get_password()",
    "if not password: raise ValueError('password required')",
    "api_key = os.environ['OPENAI_API_KEY']",
    "api_key = os.environ.get('ANTHROPIC_API_KEY', '')",
    "token = request.headers.get('Authorization', '').removeprefix('Bearer ')",
    "max_tokens=128000",
    "max_tokens: int = 4096",
    "input_tokens=1234, output_tokens=567",
    "secret_key = settings.SECRET_KEY",
    "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
    "def check_password(self, raw_password):",
    "The risk-management framework covers sk-learn style pipelines.",
    "pip install scikit-learn numpy pandas",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "uuid: 0e6630ba-166b-4feb-b66e-288e6c00e5fa",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "https://github.com/agentscope-ai/ReMe/blob/main/README.md",
    "http://localhost:8080/api/v1/messages?beta=true",
    "git@github.com:anthropics/claude-code.git",
    "ssh user@host.example.com -p 2222",
    "mailto:someone@example.com",
    "class TokenBucket: pass",
    "The Bearer token is passed in the Authorization header.",
    "Use `Authorization: Bearer $TOKEN` with your own token.",
    "export PATH=$HOME/.local/bin:$PATH",
    "AKIA is the prefix of AWS access key ids.",
    "const skProjects = projects.filter(p => p.active);",
    "ghp_ prefixes mark GitHub personal access tokens.",
    '<div class="sk-spinner sk-spinner-wave"></div>',
    "SELECT id, name FROM users WHERE password_reset_at IS NULL;",
    "test_password_validation_rejects_short_inputs()",
    "PASSWORD_MIN_LENGTH = 12",
    "reset_password_url = reverse('password_reset')",
    "We met on 2026-11-30 at 10:30 and agreed on the API design.",
    "kubectl get secrets -n kube-system",
    "secret: ${{ secrets.GITHUB_TOKEN }}",
    "token: ${{ secrets.NPM_TOKEN }}",
    "eyJ is how base64 of '{\"' starts.",
    "Version 2.1.332 of the CLI adds x-claude-code-session-id headers.",
    "print(f'{user}:{host}')",
    "postgres://localhost:5432/app",
    "redis://cache:6379/0",
    "ftp://ftp.example.com/pub/file.txt",
    "The function returns a dict mapping session_id to the last uuid.",
    "os.environ['REME_WORKSPACE'] = str(tmp_path)",
    "ids = ['AKIDEXAMPLE', 'ABCDEFGHIJKLMNOP']",
    'Authorization: Basic realm="api"',
    "access_token = response.json()['access_token']",
    "refresh_token=refresh_token,",
    "self.api_key = api_key",
    "api_key: str | None = None",
    "secret = None",
    "hf_hub_download(repo_id='bert-base-uncased', filename='config.json')",
    "npm_config_cache=/tmp/npm",
    "xoxo, see you tomorrow",
    "The key is 'sk-' followed by letters.",
    "data = base64.b64encode(raw).decode()",
    "print('-----BEGIN CERTIFICATE-----')",
    "Tokens per second: 1500",
    "TOKEN_LIMIT=100000",
    "ANTHROPIC_BASE_URL=http://127.0.0.1:8123",
    "user_password_field = forms.CharField(widget=forms.PasswordInput)",
    "记住：我们决定使用 SQLite 作为记忆存储。",
    "用户的密码不应该被记录。",
    # code that passes a secret on by name, and commands whose flags only look like credentials
    "connect(host=host, user=user, password=password, timeout=5)",
    "client = Client(api_key=api_key)",
    "token=self.token,",
    "password: str",
    "api_key: Optional[str] = None",
    'echo "$TOKEN" | docker login --password-stdin -u me ghcr.io',
    "docker login --password $REGISTRY_PASSWORD registry.example.com",
    "ssh -p 2222 deploy@host.example.com",
    "mkdir -p ~/.config/reme && cd ~/.config/reme",
    "compass=north; bypass=true",
    "OLDPWD=/home/user/src",
    "The password is required and the token is validated on each request.",
    "Your password was changed.",
    "Set the cookie: see the browser settings.",
    'curl -u "$USER:$PASS" https://api.example.com',
    "password_reset_token_ttl = 3600",
    "if token: return token",
]


# A corpus of ordinary code and prose the repository controls (the same on every machine, whichever
# Python runs the tests): its own sources, docs, agent prompts and the recorded Claude Code transcripts.
# Left out: the redaction module (its comments show secret shapes) and tests/ (which hold fake keys on
# purpose).
_REPO = Path(__file__).resolve().parents[2]
_CORPUS_GLOBS = (
    "reme_cc/**/*.py",
    "bench/**/*.py",
    "hooks/**/*",
    "scripts/**/*",
    "docs/**/*.md",
    "*.md",
    "agents/**/*.md",
    "skills/**/*.md",
    "tests/fixtures/claude_code/**/*.jsonl",
)


def repository_lines() -> list[tuple[str, str]]:
    """(path, line) for every line of the repository corpus."""
    files = sorted(
        {p for g in _CORPUS_GLOBS for p in _REPO.glob(g) if p.is_file()} - {_REPO / "reme_cc/notes/redact.py"}
    )
    return [
        (p.relative_to(_REPO).as_posix(), line) for p in files for line in p.read_text("utf-8", "replace").splitlines()
    ]
