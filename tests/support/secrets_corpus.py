"""The secrets corpus for the privacy tests (issue #7 item 5): realistic shapes of the credentials that
end up in transcripts and resource files, grouped by family, each embedded in the context it usually
comes with (an .env line, a config file, a curl command, a connection string, prose).

Builds on ``redact_corpus.POSITIVES`` (one sample per redaction kind) and adds cloud credentials
(AWS, GCP, Azure), more provider keys, tokens and connection strings. Every secret is assembled from
pieces at import time (no scanner flags this file) and none is real.

``SECRETS``: list of ``Secret(family, kind, context, value)``; ``value`` is what must never be stored
or sent to a model. ``ORDINARY``: prose and code lines that must pass unchanged (false positives).
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

from support.redact_corpus import NEGATIVES, POSITIVES

_rng = random.Random(7)
_AN = string.ascii_letters + string.digits
_B64 = _AN + "+/"
_B64URL = _AN + "-_"
_HEX = "0123456789abcdef"
_UP = string.ascii_uppercase + string.digits


def r(n: int, alphabet: str = _AN) -> str:
    s = "".join(_rng.choice(alphabet) for _ in range(n))
    return "k7" + s[2:]  # a letter and a digit, as real keys have


@dataclass(frozen=True)
class Secret:
    family: str  # cloud | provider | vcs-chat | jwt | private-key | connection | generic
    kind: str
    context: str  # the text as it appears (contains value)
    value: str

    @property
    def probes(self) -> list[str]:
        """Substrings that prove a leak: the value, or for multi-line values each long line of it."""
        lines = [ln.strip() for ln in self.value.replace("\\n", "\n").splitlines() if len(ln.strip()) >= 16]
        return lines if len(lines) > 1 else [self.value]


SECRETS: list[Secret] = []


def add(family: str, kind: str, value: str, template: str = "{}") -> None:
    SECRETS.append(Secret(family, kind, template.format(value), value))


def _pem(label: str, lines: int = 6) -> str:
    body = "\n".join(r(64, _B64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


# ---- the base corpus, one per redaction kind ----------------------------------------------------
_FAMILY = {
    "aws-access-key": "cloud",
    "aws-secret-key": "cloud",
    "google-api-key": "cloud",
    "anthropic-key": "provider",
    "openai-key": "provider",
    "stripe-key": "provider",
    "stripe-webhook-secret": "provider",
    "huggingface-token": "provider",
    "sendgrid-key": "provider",
    "groq-key": "provider",
    "digitalocean-token": "cloud",
    "shopify-token": "provider",
    "npm-token": "vcs-chat",
    "pypi-token": "vcs-chat",
    "github-token": "vcs-chat",
    "gitlab-token": "vcs-chat",
    "slack-token": "vcs-chat",
    "slack-webhook": "vcs-chat",
    "telegram-bot-token": "vcs-chat",
    "jwt": "jwt",
    "private-key": "private-key",
    "url-password": "connection",
    "bearer-token": "generic",
    "basic-auth": "generic",
    "password": "generic",
}
for _kind, _text, _secret in POSITIVES:
    SECRETS.append(Secret(_FAMILY.get(_kind, "generic"), _kind, _text, _secret))

# ---- cloud: AWS ----------------------------------------------------------------------------------
_aws_id, _aws_secret = "AK" + "IA" + r(16, _UP).upper(), r(40, _B64)
add("cloud", "aws-access-key", _aws_id, "[default]\naws_access_key_id = {}\n")
add(
    "cloud",
    "aws-secret-key",
    _aws_secret,
    "[default]\naws_access_key_id = " + _aws_id + "\naws_secret_access_key = {}\n",
)
add("cloud", "aws-secret-key", r(40, _B64), 'export AWS_SECRET_ACCESS_KEY="{}"')
add(
    "cloud",
    "aws-secret-key",
    r(40, _B64),
    '{{"AccessKeyId": "'
    + "AS"
    + "IA"
    + r(16, _UP).upper()
    + '", "SecretAccessKey": "{}", "Expiration": "2026-06-20T12:00:00Z"}}',
)
add("cloud", "aws-session-token", "IQoJb3JpZ2luX2Vj" + r(300, _B64) + "==", "AWS_SESSION_TOKEN={}")
add("cloud", "aws-access-key", "AS" + "IA" + r(16, _UP).upper(), "The key {} was used from an unknown IP.")

# ---- cloud: GCP ----------------------------------------------------------------------------------
_gcp_pem = _pem("PRIVATE " + "KEY", 8)
_sa = {
    "type": "service_account",
    "project_id": "acme-prod",
    "private_key_id": r(40, _HEX),
    "private_key": _gcp_pem + "\n",
    "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
    "client_id": "1" + r(20, string.digits),
}
SECRETS.append(Secret("cloud", "gcp-service-account", json.dumps(_sa, indent=2), _gcp_pem.replace("\n", "\\n")))
add("cloud", "google-api-key", "AI" + "za" + r(35, _B64URL), "https://maps.googleapis.com/maps/api/geocode/json?key={}")
add("cloud", "gcp-oauth-secret", "GOC" + "SPX-" + r(28, _B64URL), '"client_secret": "{}"')
add("cloud", "gcp-oauth-token", "ya" + "29." + r(120, _B64URL), "Authorization: Bearer {}")
add("cloud", "gcp-oauth-token", "ya" + "29.a0" + r(150, _B64URL), "access token: {} (expires in 3599 s)")

# ---- cloud: Azure --------------------------------------------------------------------------------
_az_key = base64.b64encode(bytes(_rng.randrange(256) for _ in range(64))).decode()
add(
    "cloud",
    "azure-storage-key",
    _az_key,
    "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={};EndpointSuffix=core.windows.net",
)
add(
    "cloud",
    "azure-storage-key",
    base64.b64encode(bytes(_rng.randrange(256) for _ in range(64))).decode(),
    "AZURE_STORAGE_KEY={}",
)
add(
    "cloud",
    "azure-sas",
    "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-07-01&sig=" + r(43, _B64) + "%3D",
    "https://acmestore.blob.core.windows.net/backups?{}",
)
add("cloud", "azure-client-secret", r(3) + "8Q~" + r(34, _AN + "~._-"), "AZURE_CLIENT_SECRET={}")
add(
    "cloud",
    "azure-client-secret",
    r(3) + "7Q~" + r(34, _AN + "~._-"),
    'az login --service-principal -u app -p "{}" --tenant t',
)
add(
    "cloud",
    "azure-servicebus",
    r(43, _B64) + "=",
    "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}",
)

# ---- model / API providers ----------------------------------------------------------------------
add("provider", "anthropic-key", "sk-" + "ant-api03-" + r(93, _B64URL) + "AA", "ANTHROPIC_API_KEY={}")
add("provider", "anthropic-key", "sk-" + "ant-api03-" + r(93, _B64URL) + "AA", "client = Anthropic(api_key='{}')")
add("provider", "openai-key", "sk-" + "proj-" + r(156, _B64URL), "OPENAI_API_KEY={}")
add("provider", "openai-key", "sk-" + r(20) + "T3Blbk" + "FJ" + r(20), 'openai.api_key = "{}"')
add("provider", "openai-key", "sk-" + "svcacct-" + r(120, _B64URL), "my key is {} please use it")
add("provider", "google-gemini-key", "AI" + "za" + r(35, _B64URL), "GEMINI_API_KEY={}")
add("provider", "huggingface-token", "hf" + "_" + r(34), "huggingface-cli login --token {}")
add("provider", "groq-key", "gs" + "k_" + r(52), "GROQ_API_KEY={}")
add("provider", "stripe-key", "sk" + "_live_" + r(99), "stripe.api_key = '{}'")
add("provider", "sendgrid-key", "SG" + "." + r(22, _B64URL) + "." + r(43, _B64URL), "SENDGRID_API_KEY={}")
add("provider", "twilio-key", "SK" + r(32, _HEX), "TWILIO_API_KEY={}  TWILIO_API_SECRET=" + r(32))
add("provider", "mailgun-key", "key-" + r(32, _HEX), "MAILGUN_API_KEY={}")
add("provider", "replicate-token", "r8" + "_" + r(37), "REPLICATE_API_TOKEN={}")

# ---- VCS, CI, chat ------------------------------------------------------------------------------
add("vcs-chat", "github-token", "gh" + "p_" + r(36), "git remote set-url origin https://{}@github.com/acme/app.git")
add("vcs-chat", "github-token", "github" + "_pat_" + r(22) + "_" + r(59), "GH_TOKEN={} gh pr list")
add("vcs-chat", "github-token", "gh" + "s_" + r(36), "Authorization: token {}")
add(
    "vcs-chat",
    "gitlab-token",
    "gl" + "pat-" + r(20, _B64URL),
    'curl --header "PRIVATE-TOKEN: {}" https://gitlab.com/api/v4/projects',
)
add("vcs-chat", "gitlab-token", "gl" + "ptt-" + r(40, _HEX), "CI trigger token {}")
add("vcs-chat", "slack-token", "xo" + "xb-" + "2345678901-" + "3456789012345-" + r(24), "SLACK_BOT_TOKEN={}")
add(
    "vcs-chat",
    "slack-token",
    "xo" + "xp-" + "2345678901-" + "2345678901-" + "3456789012345-" + r(32, _HEX),
    "user token: {}",
)
add(
    "vcs-chat",
    "slack-webhook",
    "https://hooks.slack.com/" + "services/T01ABCDEF/B02GHIJKL/" + r(24),
    'curl -X POST -d \'{{"text":"hi"}}\' {}',
)
add(
    "vcs-chat",
    "discord-webhook",
    "https://discord.com/api/" + "webhooks/123456789012345678/" + r(68, _B64URL),
    "DISCORD_WEBHOOK={}",
)
add("vcs-chat", "npm-token", "np" + "m_" + r(36), "//registry.npmjs.org/:_authToken={}")


# ---- JWTs ---------------------------------------------------------------------------------------
def _b64u(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


add(
    "jwt",
    "jwt",
    _b64u({"alg": "RS256", "typ": "JWT"}) + "." + _b64u({"sub": "u1", "exp": 1893456000}) + "." + r(342, _B64URL),
    "Authorization: Bearer {}",
)
add(
    "jwt",
    "jwt",
    _b64u({"alg": "HS256"}) + "." + _b64u({"role": "service_role", "iss": "supabase"}) + "." + r(43, _B64URL),
    "SUPABASE_SERVICE_ROLE_KEY={}",
)
add(
    "jwt",
    "jwt",
    _b64u({"alg": "HS256", "typ": "JWT"}) + "." + _b64u({"user": "bob"}) + "." + r(43, _B64URL),
    "the cookie was session={}; Path=/",
)

# ---- private keys -------------------------------------------------------------------------------
add("private-key", "private-key", _pem("RSA PRIVATE " + "KEY"), "$ cat ~/.ssh/id_rsa\n{}\n")
add("private-key", "private-key", _pem("OPENSSH PRIVATE " + "KEY", 7), "{}")
add("private-key", "private-key", _pem("EC PRIVATE " + "KEY", 3), "key.pem:\n{}")
add("private-key", "private-key", _pem("ENCRYPTED PRIVATE " + "KEY", 5), "{}")
add("private-key", "private-key", _pem("PGP PRIVATE KEY " + "BLOCK", 6), "{}")

# ---- connection strings ---------------------------------------------------------------------------
add("connection", "url-password", "Pg" + r(14), "DATABASE_URL=postgresql://app_user:{}@db.prod.internal:5432/app")
add("connection", "url-password", "My" + r(12), "mysql://root:{}@127.0.0.1:3306/shop")
add("connection", "url-password", "Mg" + r(16), "mongodb+srv://admin:{}@cluster0.ab1cd.mongodb.net/?retryWrites=true")
add("connection", "url-password", "Rd" + r(20), "REDIS_URL=rediss://default:{}@redis.example.com:6380")
add("connection", "url-password", "Am" + r(12), "amqp://guest:{}@rabbit:5672/")
add("connection", "url-password", "Sm" + r(10), "smtp://mailer:{}@smtp.example.com:587")
add(
    "connection",
    "ado-password",
    "Sq" + r(14) + "!",
    "Server=tcp:acme.database.windows.net,1433;Database=app;User ID=sa;Password={};Encrypt=True;",
)
add("connection", "odbc-password", "Od" + r(12), "Driver={{ODBC Driver 18}};Server=db;UID=report;PWD={};")
add("connection", "jdbc-password", "Jd" + r(12), "jdbc:postgresql://db:5432/app?user=app&password={}&ssl=true")
add(
    "connection",
    "dsn-password",
    "Ds" + r(12),
    "host=db.internal port=5432 dbname=app user=app password={} sslmode=require",
)

# ---- generic credentials in config ------------------------------------------------------------------
add("generic", "password", "hunter2-" + r(8), "DB_PASSWORD={}")
add("generic", "password", "Tr0ub4dor&" + r(4), 'password: "{}"')
add("generic", "password", r(24), "  secret_key: {}")
add("generic", "password", r(32, _HEX), "SECRET_KEY='{}'")
add("generic", "password", r(20), 'api_key = "{}"')
add("generic", "bearer-token", r(48, _B64URL), 'curl -H "Authorization: Bearer {}" https://api.acme.dev/v1/me')
add("generic", "basic-auth", base64.b64encode(b"admin:" + r(12).encode()).decode(), "Authorization: Basic {}")
add("generic", "password", r(16), '<add key="ApiKey" value="{}" />')
add("generic", "password", "P@ss" + r(10), "--password={}")
add("generic", "password", "s3" + r(14), "mysql -u root -p{} shop")


# ---- ordinary prose and code (false positives) ----------------------------------------------------
ORDINARY: list[str] = list(NEGATIVES) + [
    "We decided to rotate the AWS keys monthly and keep them in the vault.",
    "The GCP service account needs the roles/storage.objectViewer role.",
    "Azure Storage account keys are 64 bytes, base64 encoded.",
    "Use `aws configure` to set your access key id and secret access key.",
    "Set password_min_length to 12 in the settings.",
    "git commit -m 'Fix token refresh when the session expires'",
    "The JWT header says alg=RS256; verify it with the JWKS endpoint.",
    "Connection: keep-alive",
    "postgresql://localhost/app",
    "DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;EndpointSuffix=core.windows.net",
    "client_secret = os.environ['AZURE_CLIENT_SECRET']",
    "PWD=$(pwd)",
    "cd $PWD && make",
    "sig = hmac.new(key, msg, hashlib.sha256).hexdigest()",
    "token_count = len(tokens)",
    "The ssh-keygen command writes id_ed25519 and id_ed25519.pub.",
    "kubectl create secret generic db --from-literal=user=app",
    "SELECT * FROM api_keys WHERE revoked_at IS NULL;",
    "response = requests.post(url, json=payload, timeout=30)",
    "Passwords must be rotated every 90 days.",
    "我们把密钥放进了 vault，不写进代码。",
]
