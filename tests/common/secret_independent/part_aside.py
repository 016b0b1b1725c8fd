"""The aside part of the independent secret corpus (issue 37, item 1).

Written from the credential formats the providers document (the source of each is beside its kind) by
someone who never read the filter's rules, its other corpora or its figures. Every kind is rendered in
texts an agent might store (notes, config files, shell, CI, logs, chat in several languages), some of
them disguised the way careless pastes and deliberate attempts disguise tokens, next to look-alikes:
strings that look random or sit under secret-sounding names but are not credentials.

All values are random (fixed seed); none is a real credential.
"""

import base64
import binascii
import json
import random
import string
import textwrap
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 61_20_26
SAMPLES_PER_KIND = 8
LOOK_ALIKES_PER_KIND = 24

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32_LOWER = LOWER + "234567"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BASE62 = DIGITS + UPPER + LOWER
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
NIX32 = "0123456789abcdfghijklmnpqrsvwxyz"


def pick(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def b64(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def b64url(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def rand_bytes(r: random.Random, n: int) -> bytes:
    return bytes(r.getrandbits(8) for _ in range(n))


@dataclass(frozen=True)
class Cred:
    """A raw credential and where its random part lies (value[start:end]): disguises go there, and the
    sample's `secret` is a middle piece of it."""

    value: str
    start: int
    end: int


def token(prefix: str, body: str, suffix: str = "") -> Cred:
    return Cred(prefix + body + suffix, len(prefix), len(prefix) + len(body))


def within(value: str, part: str) -> Cred:
    start = value.index(part)
    return Cred(value, start, start + len(part))


def base62(number: int, width: int) -> str:
    out = ""
    while number:
        number, digit = divmod(number, 62)
        out = BASE62[digit] + out
    return out.rjust(width, "0")


def crc32_token(prefix: str) -> tuple[Callable[[random.Random], Cred], Callable[[str], str]]:
    """GitHub's token format (github.blog "Behind GitHub's new authentication token formats", 2021):
    prefix, 30 random base62 characters, then a 6-character base62 CRC32 of the random part. npm's
    granular tokens (npm_) follow the same scheme."""

    def seal(value: str) -> str:
        body = value[len(prefix) : len(prefix) + 30]
        return prefix + body + base62(binascii.crc32(body.encode()), 6)

    def make(r: random.Random) -> Cred:
        return Cred(seal(prefix + pick(r, ALNUM, 30) + "000000"), len(prefix), len(prefix) + 30)

    return make, seal


def jwt(r: random.Random, header: dict[str, str], payload: dict[str, object]) -> Cred:
    """A JWT (RFC 7519): base64url(header).base64url(payload).base64url(signature); the signature is what
    makes it a credential, so that is the random part."""
    head = (
        b64url(json.dumps(header, separators=(",", ":")))
        + "."
        + b64url(json.dumps(payload, separators=(",", ":")))
    )
    signature = b64url(rand_bytes(r, 32))
    return token(head + ".", signature)


def pem(label: str, der_prefix: bytes, r: random.Random, size: int) -> Cred:
    """A PEM block (RFC 7468): base64 of DER in 64-character lines. The DER header makes the first line
    look like a real key's (MIIE..., MHcCAQEE...); the random part is a full line in the middle."""
    body = b64(der_prefix + rand_bytes(r, size))
    lines = textwrap.wrap(body, 64)
    text = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return within(text, lines[len(lines) // 2])


def password(r: random.Random) -> str:
    """What people choose when a service lets them: words, digits and a symbol (one that may stand in a
    URL's user-info unescaped, so the same password fits every context)."""
    words = ["harbor", "Quartz", "violet", "Tundra", "maple", "Falcon", "ember", "Saffron", "cobalt", "Lumen"]
    return (
        r.choice(words)
        + pick(r, DIGITS, r.randint(2, 4))
        + r.choice("!*-_.~$+")
        + r.choice(words)
        + pick(r, DIGITS, 2)
        + pick(r, ALNUM, 4)
    )


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    service: str
    # The variable name people give the value in env files and CI settings.
    var: str
    make: Callable[[random.Random], Cred]
    # Texts the value is written in; None means the named and prose contexts below.
    contexts: tuple["Context", ...] | None = None
    # Recomputes a checksum after a placeholder word replaced part of the random part, so that the
    # disguised token still has the documented shape.
    seal: Callable[[str], str] | None = None


Context = Callable[[random.Random, Kind, str], str]

HOSTS = [
    "api.internal.example",
    "billing-svc.prod.local",
    "10.0.4.17",
    "staging.acme.test",
    "edge-2.eu.example",
]
PEOPLE = ["dana", "mk", "yusuf", "li.wei", "ana-p", "tobias", "priya"]
DATES = [
    "2025-03-04T10:22:31Z",
    "2025-11-19T07:03:12.448Z",
    "2026-01-08 16:41:09",
    "2025-06-30T23:59:01+02:00",
]


def lower_dotted(var: str) -> str:
    return var.lower().replace("_", ".")


# Contexts that name the value (assignments, config files, code, CI): the variable name is part of them.
NAMED: tuple[Context, ...] = (
    lambda r, k, v: f"export {k.var}={v}",
    lambda r, k, v: f"# .env.production — do not commit\nNODE_ENV=production\n{k.var}={v}\nLOG_LEVEL=info",
    lambda r, k, v: f"{k.var}='{v}' ./scripts/deploy.sh --region eu-west-1",
    lambda r, k, v: f'env:\n  - name: {k.var}\n    value: "{v}"\n  - name: PORT\n    value: "8080"',
    lambda r, k, v: json.dumps(
        {"name": "worker", "env": {k.var: v, "DEBUG": "false"}}, indent=2, ensure_ascii=False
    ),
    lambda r, k, v: f'[{k.service.lower().replace(" ", "_")}]\n{k.var.lower()} = "{v}"\ntimeout_seconds = 30',
    lambda r, k, v: f"[default]\nregion = eu-central-1\n{k.var.lower()} = {v}",
    lambda r, k, v: (
        f'import os\n\nos.environ.setdefault("{k.var}", "{v}")  # TODO: move to the vault before merging'
    ),
    lambda r, k, v: (
        f"const client = new {k.service.replace(' ', '')}Client({{\n  apiKey: '{v}',\n  retries: 3,\n}});"
    ),
    lambda r, k, v: (
        f'cfg := Config{{\n\tToken: "{v}", // temporary, remove before commit\n\tTimeout: 10 * time.Second,\n}}'
    ),
    lambda r, k, v: f'let key = "{v}"; // copied from the {k.service} dashboard',
    lambda r, k, v: f'props.setProperty("{lower_dotted(k.var)}", "{v}");',
    lambda r, k, v: (
        f'{{\n  "Logging": {{ "LogLevel": {{ "Default": "Warning" }} }},\n  "{k.service.replace(" ", "")}": {{ "ApiKey": "{v}" }}\n}}'
    ),
    lambda r, k, v: f"docker run --rm -e {k.var}={v} -p 8080:8080 ghcr.io/acme/worker:1.4.2",
    lambda r, k, v: (
        f"services:\n  app:\n    image: acme/app:latest\n    environment:\n      {k.var}: {v}\n      TZ: Europe/Berlin"
    ),
    lambda r, k, v: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\ntype: Opaque\nstringData:\n  {k.var}: {v}"
    ),
    lambda r, k, v: (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {k.var}: {v}\n    steps:\n      - run: make release"
    ),
    lambda r, k, v: f'variables:\n  {k.var}: "{v}"\n\ndeploy:\n  stage: deploy\n  script:\n    - ./deploy.sh',
    lambda r, k, v: (
        f'variable "{k.var.lower()}" {{\n  type      = string\n  default   = "{v}"\n  sensitive = true\n}}'
    ),
    lambda r, k, v: f'FROM python:3.12-slim\nENV {k.var}={v}\nCOPY . /app\nCMD ["python", "-m", "app"]',
    lambda r, k, v: (
        f"{r.choice(DATES)} DEBUG httpx: sending request headers={{'authorization': 'Bearer {v}', 'user-agent': 'app/2.1'}}"
    ),
    lambda r, k, v: (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/jobs/sync.py", line 88, in run\n'
        f'    client = connect(api_key="{v}", timeout=5)\n'
        f"{k.service.replace(' ', '')}AuthError: 401 Unauthorized"
    ),
    lambda r, k, v: (
        f"| env | variable | value |\n|-----|----------|-------|\n| prod | `{k.var}` | `{v}` |\n| dev | `LOG_LEVEL` | `debug` |"
    ),
    lambda r, k, v: (
        f'<appSettings>\n  <add key="{k.var}" value="{v}" />\n  <add key="Region" value="westeurope" />\n</appSettings>'
    ),
    lambda r, k, v: f'$env:{k.var} = "{v}"\n.\\build.ps1 -Configuration Release',
    lambda r, k, v: f"set -gx {k.var} {v}",
    lambda r, k, v: f"[Service]\nUser=app\nEnvironment={k.var}={v}\nExecStart=/usr/local/bin/app serve",
    lambda r, k, v: f"helm upgrade --install app ./chart --set secrets.{k.var.lower()}={v} -n prod",
    lambda r, k, v: f"# group_vars/prod.yml\n{k.var.lower()}: {v}\napp_port: 8443",
    lambda r, k, v: f"<?php\ndefine('{k.var}', '{v}');",
    lambda r, k, v: f"ENV['{k.var}'] ||= '{v}'",
    lambda r, k, v: f"INSERT INTO settings (name, value) VALUES ('{k.var.lower()}', '{v}');",
    lambda r, k, v: f"{lower_dotted(k.var)}={v}\nspring.profiles.active=prod",
    lambda r, k, v: f"%env {k.var}={v}",
    lambda r, k, v: f"diff --git a/.env b/.env\n--- a/.env\n+++ b/.env\n@@ -3 +3 @@\n-{k.var}=\n+{k.var}={v}",
    lambda r, k, v: f"User prefers running the {k.service} sync with `{k.var}={v}` set in ~/.zshrc.",
    lambda r, k, v: (
        f"kubectl create secret generic {k.service.lower().replace(' ', '-')} --from-literal={k.var.lower()}={v} -n apps"
    ),
    lambda r, k, v: f"gh secret set {k.var} --body '{v}' --repo acme/platform",
    lambda r, k, v: f"vercel env add {k.var} production <<< '{v}'",
    lambda r, k, v: f'settings.py:\n{k.var} = "{v}"  # prod',
)

# Contexts that show the bare value: requests, prose and chat in several languages.
BARE: tuple[Context, ...] = (
    lambda r, k, v: f'curl -sS -H "Authorization: Bearer {v}" https://{r.choice(HOSTS)}/v1/me',
    lambda r, k, v: (
        f"GET /v2/items?limit=50 HTTP/1.1\nHost: {r.choice(HOSTS)}\nX-Api-Key: {v}\nAccept: application/json"
    ),
    lambda r, k, v: f'requests.get(url, headers={{"Authorization": f"Bearer {v}"}}, timeout=10)',
    lambda r, k, v: (
        f"Note to self: the {k.service} key for staging is {v}; it expires at the end of the month."
    ),
    lambda r, k, v: (
        f"Decision: CI uses the {k.service} credential {v} until the org-wide one is provisioned."
    ),
    lambda r, k, v: f"Hier ist der {k.service}-Schlüssel für Staging: {v} (bitte nicht weitergeben)",
    lambda r, k, v: (
        f"Voici le jeton {k.service} pour le déploiement : {v}. Je le change la semaine prochaine."
    ),
    lambda r, k, v: (
        f"Te paso la clave de {k.service} de producción: {v} — guárdala en el gestor de contraseñas."
    ),
    lambda r, k, v: f"A chave da API do {k.service} é {v}, usei no script de migração ontem.",
    lambda r, k, v: f"本番環境の{k.service}のキーは {v} です。あとでローテーションします。",
    lambda r, k, v: f"{k.service} 生产环境的密钥：{v}，请不要提交到仓库。",
    lambda r, k, v: f"Токен {k.service} для CI: {v} — потом перевыпущу.",
    lambda r, k, v: f"스테이징 {k.service} 토큰은 {v} 입니다. 다음 주에 교체할게요.",
    lambda r, k, v: f"La chiave {k.service} del cliente è {v}, va ruotata dopo la demo.",
    lambda r, k, v: f"De {k.service}-sleutel voor acceptatie is {v}; niet in de repo zetten.",
    lambda r, k, v: f"Klucz {k.service} do testów: {v} (ważny do piątku).",
    lambda r, k, v: f"{k.service} anahtarı: {v} — yarın yenisiyle değiştireceğim.",
    lambda r, k, v: (
        f"[10:42] {r.choice(PEOPLE)}: can you retry with {v}?\n[10:43] {r.choice(PEOPLE)}: works now, thanks"
    ),
    lambda r, k, v: (
        f"{r.choice(DATES)} WARN auth: rejected credential {v} for {k.service} (HTTP 403), falling back to anonymous"
    ),
    lambda r, k, v: f"Error: {k.service} returned 401 for key {v}. Check that it has the write scope.",
    lambda r, k, v: f"- [ ] rotate {k.service} key (current: `{v}`)\n- [x] update runbook",
    lambda r, k, v: f"> **{k.service}**\n> key: {v}\n> owner: platform team",
)

# Contexts for values that are whole files or multi-line blocks; the kind's `var` is the file's path.
BLOCK: tuple[Context, ...] = (
    lambda r, k, v: f"Saved it to {k.var}:\n\n```\n{v}\n```",
    lambda r, k, v: f"cat > {k.var} <<'EOF'\n{v}\nEOF\nchmod 600 {k.var}",
    lambda r, k, v: "deploy_key: |\n" + textwrap.indent(v, "  "),
    lambda r, k, v: f"Hier die Datei ({k.var}), die du für {k.service} brauchst:\n{v}",
    lambda r, k, v: f"{r.choice(DATES)} INFO loaded {k.service} credentials from {k.var}:\n{v}",
    lambda r, k, v: f"{k.service} の認証ファイル（{k.var}）の中身：\n{v}\n取り扱い注意。",
    lambda r, k, v: json.dumps({"path": k.var, "content": v}, ensure_ascii=False),
    lambda r, k, v: (
        f'resource "local_sensitive_file" "key" {{\n  filename = "{k.var}"\n  content  = <<-EOT\n{v}\n  EOT\n}}'
    ),
)

AKIA = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


def akia(r: random.Random) -> str:
    return "AKIA" + pick(r, AKIA, 16)


def uuid4(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def with_named(*own: Context) -> tuple[Context, ...]:
    return own + NAMED[::3] + BARE[::4]


def header_contexts(header: str) -> tuple[Context, ...]:
    return with_named(
        lambda r, k, v: f"curl -X POST https://{r.choice(HOSTS)}/api -H '{header}{v}' -d @payload.json",
        lambda r, k, v: f'headers = {{"{header.split(":")[0]}": "{header.split(": ", 1)[1]}{v}"}}',
        lambda r, k, v: f"{r.choice(DATES)} DEBUG outgoing request: POST /events {header}{v}",
    )


def url_contexts(template: str) -> tuple[Context, ...]:
    """Contexts for a credential that lives inside a URL or connection string; the template has {v}."""

    def fill(r: random.Random, v: str) -> str:
        return template.format(
            v=v,
            host=r.choice(["db-1.prod.internal", "10.20.0.5", "pg.acme.test"]),
            user=r.choice(PEOPLE).replace(".", ""),
        )

    return (
        lambda r, k, v: f"export {k.var}='{fill(r, v)}'",
        lambda r, k, v: f"{k.var}={fill(r, v)}",
        lambda r, k, v: f'engine = create_engine("{fill(r, v)}", pool_pre_ping=True)',
        lambda r, k, v: f'services:\n  api:\n    environment:\n      {k.var}: "{fill(r, v)}"',
        lambda r, k, v: f"Connection that finally worked for the {k.service} migration: {fill(r, v)}",
        lambda r, k, v: f"{r.choice(DATES)} ERROR pool: could not connect to {fill(r, v)}: timeout after 30s",
        lambda r, k, v: f"接続文字列はこれ → {fill(r, v)}",
        lambda r, k, v: f"La cadena de conexión de {k.service} es {fill(r, v)} (solo lectura).",
        lambda r, k, v: json.dumps(
            {"datasource": {"url": fill(r, v), "maxPoolSize": 10}}, indent=2, ensure_ascii=False
        ),
        lambda r, k, v: f"spring.datasource.url={fill(r, v)}",
    )


def gcp_service_account(r: random.Random) -> Cred:
    key = pem("PRIVATE KEY", bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8"), r, 1180)
    project = r.choice(["acme-prod", "billing-4471", "ml-sandbox-23"])
    text = json.dumps(
        {
            "type": "service_account",
            "project_id": project,
            "private_key_id": pick(r, HEX, 40),
            "private_key": key.value + "\n",
            "client_email": f"deployer@{project}.iam.gserviceaccount.com",
            "client_id": pick(r, DIGITS, 21),
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": "https://oauth2.googleapis.com/token",
        },
        indent=2,
    )
    return within(text, key.value[key.start : key.end])


def openssh_private_key(r: random.Random) -> Cred:
    head = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x003"
    head += b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 "
    body = b64(head + rand_bytes(r, 32 + 120))
    lines = textwrap.wrap(body, 70)
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    return within(text, lines[2])


def pgp_private_key(r: random.Random) -> Cred:
    lines = textwrap.wrap("lQdGBG" + b64(rand_bytes(r, 600)), 64)
    text = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(lines)
        + f"\n={pick(r, B64, 4)}\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    return within(text, lines[len(lines) // 2])


def discord_bot_token(r: random.Random) -> Cred:
    user_id = str(r.randint(10**17, 10**18 - 1))
    return token(b64url(user_id) + "." + pick(r, B64URL, 6) + ".", pick(r, B64URL, 38))


def matrix_token(r: random.Random) -> Cred:
    body = pick(r, ALNUM, 20)
    return token(
        "syt_" + b64url(r.choice(PEOPLE)) + "_", body, "_" + base62(binascii.crc32(body.encode()), 6)
    )


def pypi_token(r: random.Random) -> Cred:
    # A macaroon (PyPI docs, "API tokens"): the serialized form starts with version 2 and the location
    # pypi.org, which is why every token begins pypi-AgEIcHlwaS5vcmc.
    body = (
        b"\x02\x01\x08pypi.org\x02\x01\x02\x00\x02*"
        + b'[1,["'
        + pick(r, HEX, 32).encode()
        + b'"]]'
        + rand_bytes(r, 70)
    )
    encoded = b64url(body)
    value = "pypi-" + encoded
    return Cred(value, len(value) - 60, len(value) - 8)


def basic(r: random.Random, user: str) -> Cred:
    encoded = b64(f"{user}:{password(r)}")
    return token("", encoded)


def encoded_field(prefix: str, raw: str, field: str, encoded: str) -> Cred:
    """The characters of a base64 text that encode only `field` (base64 maps every 3 bytes to 4 characters)."""
    at = raw.index(field)
    start = -(-at // 3) * 4
    end = (at + len(field)) // 3 * 4
    return Cred(prefix + encoded, len(prefix) + start, len(prefix) + end)


def grafana_cloud(r: random.Random) -> Cred:
    payload = {
        "o": str(r.randint(100000, 999999)),
        "n": "stack-" + pick(r, DIGITS, 6) + "-deploy",
        "k": pick(r, ALNUM, 24),
        "m": {"r": "prod-eu-west-2"},
    }
    raw = json.dumps(payload, separators=(",", ":"))
    return encoded_field("glc_", raw, str(payload["k"]), b64(raw))


def onepassword_service_account(r: random.Random) -> Cred:
    payload = {
        "signInAddress": "acme.1password.com",
        "userAuth": {
            "method": "SRPg-4096",
            "alg": "PBES2g-HS256",
            "iterations": 650000,
            "salt": pick(r, B64URL, 22),
        },
        "email": pick(r, LOWER_ALNUM, 12) + "@1passwordserviceaccounts.com",
        "srpX": pick(r, HEX, 64),
        "muk": {
            "alg": "A256GCM",
            "ext": True,
            "k": pick(r, B64URL, 43),
            "key_ops": ["encrypt", "decrypt"],
            "kty": "oct",
            "kid": "mp",
        },
        "secretKey": "A3-"
        + pick(r, UPPER_ALNUM, 6)
        + "-"
        + pick(r, UPPER_ALNUM, 11)
        + "-"
        + pick(r, UPPER_ALNUM, 5)
        + "-"
        + pick(r, UPPER_ALNUM, 5)
        + "-"
        + pick(r, UPPER_ALNUM, 5),
        "deviceUuid": pick(r, LOWER_ALNUM, 26),
    }
    raw = json.dumps(payload, separators=(",", ":"))
    return encoded_field("ops_", raw, str(payload["srpX"]), b64url(raw))


def mapbox_secret(r: random.Random) -> Cred:
    head = (
        "sk."
        + b64url(
            json.dumps(
                {"u": r.choice(PEOPLE).replace(".", ""), "a": "cl" + pick(r, LOWER_ALNUM, 23)},
                separators=(",", ":"),
            )
        )
        + "."
    )
    return token(head, pick(r, B64URL, 22))


def astra(r: random.Random) -> Cred:
    return token("AstraCS:" + pick(r, ALNUM, 24) + ":", pick(r, HEX, 64))


GHP, GHP_SEAL = crc32_token("ghp_")
GHO, GHO_SEAL = crc32_token("gho_")
GHS, GHS_SEAL = crc32_token("ghs_")
NPM, NPM_SEAL = crc32_token("npm_")

AWS_CONTEXTS = with_named(
    lambda r, k, v: (
        f"[default]\naws_access_key_id = {akia(r)}\naws_secret_access_key = {v}\nregion = eu-west-1"
    ),
    lambda r, k, v: f"export AWS_ACCESS_KEY_ID={akia(r)}\nexport AWS_SECRET_ACCESS_KEY={v}",
    lambda r, k, v: f's3 = boto3.client("s3", aws_access_key_id="{akia(r)}", aws_secret_access_key="{v}")',
    lambda r, k, v: (
        f'provider "aws" {{\n  region     = "us-east-1"\n  access_key = "{akia(r)}"\n  secret_key = "{v}"\n}}'
    ),
    lambda r, k, v: f"Backup bucket keys (IAM user backup-bot): {akia(r)} / {v}",
)


def bootstrap_secret(value: str) -> str:
    """The Secret kubeadm stores a bootstrap token in (id and secret apart); an encoded value has no dot to
    split at, and is then written whole as the secret."""
    token_id, dot, token_secret = value.partition(".")
    if not dot:
        token_id, token_secret = value[:6], value
    return (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: bootstrap-token-{token_id}\n  namespace: kube-system\n"
        f"type: bootstrap.kubernetes.io/token\nstringData:\n  token-id: {token_id}\n  token-secret: {token_secret}\n"
        '  usage-bootstrap-authentication: "true"'
    )


KUBE_BOOTSTRAP_CONTEXTS: tuple[Context, ...] = (
    lambda r, k, v: (
        f"kubeadm join 10.0.0.10:6443 --token {v} --discovery-token-ca-cert-hash sha256:{pick(r, HEX, 64)}"
    ),
    lambda r, k, v: f"users:\n- name: kubelet-bootstrap\n  user:\n    token: {v}",
    lambda r, k, v: f"kubectl --server https://10.0.0.10:6443 --token={v} get nodes",
    lambda r, k, v: f"Der Join-Token für die neuen Worker ist {v} (läuft nach 24h ab).",
    lambda r, k, v: f"{r.choice(DATES)} kubelet: using bootstrap token {v} to request a client certificate",
    lambda r, k, v: bootstrap_secret(v),
)

KUBECONFIG_CONTEXTS: tuple[Context, ...] = (
    lambda r, k, v: (
        f"apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://k8s.acme.internal:6443\n  name: prod\nusers:\n- name: ci-deployer\n  user:\n    token: {v}\ncontexts:\n- context: {{cluster: prod, user: ci-deployer}}\n  name: prod"
    ),
    lambda r, k, v: (
        f'curl -k -H "Authorization: Bearer {v}" https://10.96.0.1/api/v1/namespaces/default/pods'
    ),
    lambda r, k, v: f"kubectl config set-credentials ci --token={v}",
    lambda r, k, v: f"Service account token for the dashboard (namespace monitoring): {v}",
    lambda r, k, v: f"{k.var}={v}",
)

SLACK_APP_CONTEXTS = with_named(
    lambda r, k, v: f"app = App(token=os.environ['SLACK_BOT_TOKEN'], app_token=\"{v}\")  # socket mode",
)


def twilio_contexts(kind: str) -> tuple[Context, ...]:
    def sid(r: random.Random) -> str:
        return ("AC" if kind == "auth" else "SK") + pick(r, HEX, 32)

    return with_named(
        lambda r, k, v: f'client = Client("{sid(r)}", "{v}")',
        lambda r, k, v: (
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{pick(r, HEX, 32)}/Messages.json -u {sid(r)}:{v} --data-urlencode 'Body=hi'"
        ),
        lambda r, k, v: f"TWILIO_ACCOUNT_SID=AC{pick(r, HEX, 32)}\n{k.var}={v}",
    )


GIT_URL_CONTEXTS: tuple[Context, ...] = (
    lambda r, k, v: f"git clone https://x-access-token:{v}@github.com/acme/infra.git",
    lambda r, k, v: f"git remote set-url origin https://oauth2:{v}@gitlab.com/acme/api.git",
    lambda r, k, v: f'[url "https://{v}@github.com/"]\n\tinsteadOf = https://github.com/',
    lambda r, k, v: f"pip install git+https://{v}@github.com/acme/private-lib.git@v1.2.0",
)


def kind(
    name: str,
    group: str,
    service: str,
    var: str,
    make: Callable[[random.Random], Cred],
    contexts: tuple[Context, ...] | None = None,
    seal: Callable[[str], str] | None = None,
) -> Kind:
    return Kind(name=name, group=group, service=service, var=var, make=make, contexts=contexts, seal=seal)


KINDS: tuple[Kind, ...] = (
    # ---- cloud ----
    # AWS IAM user guide ("Manage access keys"): secret access key of 40 characters [A-Za-z0-9/+],
    # paired with an access key id AKIA + 16 base32 characters.
    kind(
        "aws_secret_access_key",
        "cloud",
        "AWS",
        "AWS_SECRET_ACCESS_KEY",
        lambda r: token("", pick(r, ALNUM + "/+", 40)),
        AWS_CONTEXTS,
    ),
    # AWS STS docs: temporary credentials carry a session token; those issued today start IQoJb3JpZ2luX2Vj
    # (base64 of their version header).
    kind(
        "aws_session_token",
        "cloud",
        "AWS STS",
        "AWS_SESSION_TOKEN",
        lambda r: token("IQoJb3JpZ2luX2Vj", pick(r, B64, 380)),
    ),
    # Google Cloud docs ("API keys"): 39 characters starting AIza, then [A-Za-z0-9_-].
    kind(
        "gcp_api_key", "cloud", "Google Maps", "GOOGLE_API_KEY", lambda r: token("AIza", pick(r, B64URL, 35))
    ),
    # Google Cloud IAM docs ("Create service account keys"): a JSON key file with a PKCS#8 private_key.
    kind("gcp_service_account_json", "cloud", "GCP", "~/keys/sa-prod.json", gcp_service_account, BLOCK),
    # Azure Storage docs ("Configure a connection string"): AccountKey is base64 of 64 bytes (88 chars).
    kind(
        "azure_storage_connection_string",
        "cloud",
        "Azure Storage",
        "AZURE_STORAGE_CONNECTION_STRING",
        lambda r: token("", b64(rand_bytes(r, 64))),
        (
            *url_contexts(
                "DefaultEndpointsProtocol=https;AccountName=acme{user}data;AccountKey={v};EndpointSuffix=core.windows.net"
            ),
            lambda r, k, v: (
                f"az storage blob upload --account-name acmelogs --account-key {v} -c backups -f dump.sql"
            ),
        ),
    ),
    # Azure Storage docs ("Create a service SAS"): sv, ss, srt, sp, se, st, spr, then sig = URL-encoded
    # base64 of an HMAC-SHA256 (32 bytes).
    kind(
        "azure_sas_token",
        "cloud",
        "Azure Blob",
        "AZURE_SAS_URL",
        lambda r: token("", quote(b64(rand_bytes(r, 32)), safe="")),
        url_contexts(
            "https://acme{user}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-02-01T00:00:00Z&st=2025-12-01T00:00:00Z&spr=https&sig={v}"
        ),
    ),
    # Microsoft identity platform docs: client secrets created since 2021 are 40 characters with "Q~"
    # after the first three.
    kind(
        "azure_ad_client_secret",
        "cloud",
        "Entra ID",
        "AZURE_CLIENT_SECRET",
        lambda r: token("", pick(r, ALNUM, 3) + r.choice("78") + "Q~" + pick(r, ALNUM + "_.~-", 34)),
    ),
    # DigitalOcean docs ("Personal access tokens"): dop_v1_ + 64 hex.
    kind(
        "digitalocean_pat",
        "cloud",
        "DigitalOcean",
        "DIGITALOCEAN_ACCESS_TOKEN",
        lambda r: token("dop_v1_", pick(r, HEX, 64)),
    ),
    # Alibaba Cloud docs ("Create an AccessKey pair"): id LTAI + alphanumerics, secret of 30 alphanumerics.
    kind(
        "alibaba_access_key_secret",
        "cloud",
        "Alibaba Cloud",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        lambda r: token("", pick(r, ALNUM, 30)),
        with_named(
            lambda r, k, v: (
                f"aliyun configure set --access-key-id LTAI5t{pick(r, ALNUM, 18)} --access-key-secret {v} --region cn-hangzhou"
            ),
            lambda r, k, v: f"[default]\naccess_key_id = LTAI5t{pick(r, ALNUM, 18)}\naccess_key_secret = {v}",
        ),
    ),
    # Tencent Cloud CAM docs: SecretId AKID + 32 characters, SecretKey of 32 characters.
    kind(
        "tencent_cloud_secret_key",
        "cloud",
        "Tencent Cloud",
        "TENCENTCLOUD_SECRET_KEY",
        lambda r: token("", pick(r, ALNUM, 32)),
        with_named(lambda r, k, v: f'cred = credential.Credential("AKID{pick(r, ALNUM, 32)}", "{v}")'),
    ),
    # Huawei Cloud IAM docs: access key (AK) of 20 characters, secret access key (SK) of 40.
    kind(
        "huawei_cloud_secret_key",
        "cloud",
        "Huawei Cloud",
        "HUAWEICLOUD_SDK_SK",
        lambda r: token("", pick(r, ALNUM, 40)),
        with_named(
            lambda r, k, v: (
                f"User Name,Access Key Id,Secret Access Key\nobs-sync,{pick(r, UPPER_ALNUM, 20)},{v}"
            )
        ),
    ),
    # Yandex Cloud IAM docs ("API key"): secret part starts AQVN; sent as "Authorization: Api-Key".
    kind(
        "yandex_cloud_api_key",
        "cloud",
        "Yandex Cloud",
        "YC_API_KEY",
        lambda r: token("AQVN", pick(r, B64URL, 36)),
        header_contexts("Authorization: Api-Key "),
    ),
    # Yandex OAuth docs: OAuth tokens start y0_ followed by base64url.
    kind(
        "yandex_oauth_token",
        "cloud",
        "Yandex OAuth",
        "YC_TOKEN",
        lambda r: token("y0_AgAAAA", pick(r, B64URL, 49)),
    ),
    # IBM Cloud docs ("Managing user API keys"): 44 characters [A-Za-z0-9_-].
    kind(
        "ibm_cloud_api_key",
        "cloud",
        "IBM Cloud",
        "IBMCLOUD_API_KEY",
        lambda r: token("", pick(r, B64URL, 44)),
    ),
    # Hetzner Cloud docs ("Generating an API token"): 64 alphanumerics, read by the hcloud CLI as HCLOUD_TOKEN.
    kind(
        "hetzner_cloud_token",
        "cloud",
        "Hetzner Cloud",
        "HCLOUD_TOKEN",
        lambda r: token("", pick(r, ALNUM, 64)),
    ),
    # Linode/Akamai docs ("Manage personal access tokens"): 64 hex.
    kind("linode_pat", "cloud", "Linode", "LINODE_TOKEN", lambda r: token("", pick(r, HEX, 64))),
    # Scaleway docs ("API keys"): access key SCW + 17 characters, secret key a UUID.
    kind(
        "scaleway_secret_key",
        "cloud",
        "Scaleway",
        "SCW_SECRET_KEY",
        lambda r: token("", uuid4(r)),
        with_named(
            lambda r, k, v: (
                f"# ~/.config/scw/config.yaml\naccess_key: SCW{pick(r, UPPER_ALNUM, 17)}\nsecret_key: {v}\ndefault_region: fr-par"
            )
        ),
    ),
    # Cloudflare docs ("Create API token"): 40 characters [A-Za-z0-9_-].
    kind(
        "cloudflare_api_token",
        "cloud",
        "Cloudflare",
        "CLOUDFLARE_API_TOKEN",
        lambda r: token("", pick(r, B64URL, 40)),
    ),
    # Vultr docs: API keys of 36 uppercase alphanumerics.
    kind("vultr_api_key", "cloud", "Vultr", "VULTR_API_KEY", lambda r: token("", pick(r, UPPER_ALNUM, 36))),
    # HashiCorp Vault docs ("Tokens", 1.10+): service tokens start hvs., batch tokens hvb.
    kind(
        "vault_service_token",
        "cloud",
        "Vault",
        "VAULT_TOKEN",
        lambda r: token("hvs.", r.choice(["", "CAESI"]) + pick(r, B64URL, r.choice([24, 86]))),
    ),
    # Kubernetes docs ("Authenticating with Bootstrap Tokens"): [a-z0-9]{6}.[a-z0-9]{16}, the second part secret.
    kind(
        "kubernetes_bootstrap_token",
        "cloud",
        "Kubernetes",
        "KUBEADM_TOKEN",
        lambda r: token(pick(r, LOWER_ALNUM, 6) + ".", pick(r, LOWER_ALNUM, 16)),
        KUBE_BOOTSTRAP_CONTEXTS,
    ),
    # Kubernetes docs ("Service account tokens"): a signed JWT (RS256) whose subject is the service account.
    kind(
        "kubernetes_service_account_token",
        "cloud",
        "Kubernetes",
        "K8S_TOKEN",
        lambda r: jwt(
            r,
            {"alg": "RS256", "kid": pick(r, B64URL, 43)},
            {
                "iss": "https://kubernetes.default.svc.cluster.local",
                "sub": "system:serviceaccount:ci:deployer",
                "aud": ["https://kubernetes.default.svc"],
                "exp": 1767225600 + r.randint(0, 10**7),
            },
        ),
        KUBECONFIG_CONTEXTS,
    ),
    # OpenSSH PROTOCOL.key: "openssh-key-v1" blob, base64 in 70-character lines.
    kind("openssh_private_key", "cloud", "SSH", "~/.ssh/id_ed25519", openssh_private_key, BLOCK),
    # RFC 8017 / RFC 7468: PKCS#1 RSA private key.
    kind(
        "rsa_private_key_pem",
        "cloud",
        "TLS",
        "/etc/nginx/tls/server.key",
        lambda r: pem("RSA PRIVATE KEY", bytes.fromhex("308204a40201000282010100"), r, 1180),
        BLOCK,
    ),
    # RFC 5915: EC private key (prime256v1).
    kind(
        "ec_private_key_pem",
        "cloud",
        "TLS",
        "certs/ec.key",
        lambda r: pem("EC PRIVATE KEY", bytes.fromhex("30770201010420"), r, 112),
        BLOCK,
    ),
    # RFC 5208 / RFC 7468: unencrypted PKCS#8.
    kind(
        "pkcs8_private_key_pem",
        "saas",
        "Apple push",
        "keys/AuthKey.p8",
        lambda r: pem(
            "PRIVATE KEY", bytes.fromhex("308204be020100300d06092a864886f70d0101010500048204a8"), r, 1180
        ),
        BLOCK,
    ),
    # RFC 4880: ASCII-armored secret key block.
    kind("pgp_private_key_block", "saas", "GnuPG", "release-signing.asc", pgp_private_key, BLOCK),
    # ---- ci ----
    # GitHub docs ("About authentication to GitHub", token prefixes) and the 2021 token-format post.
    kind(
        "github_pat_classic",
        "ci",
        "GitHub",
        "GITHUB_TOKEN",
        GHP,
        with_named(*GIT_URL_CONTEXTS) + NAMED[1::5],
        GHP_SEAL,
    ),
    kind("github_oauth_token", "ci", "GitHub OAuth", "GH_OAUTH_TOKEN", GHO, None, GHO_SEAL),
    kind(
        "github_app_installation_token",
        "ci",
        "GitHub App",
        "GH_INSTALLATION_TOKEN",
        GHS,
        GIT_URL_CONTEXTS + NAMED[2::4],
        GHS_SEAL,
    ),
    # GitHub docs: fine-grained tokens github_pat_ + 22 + _ + 59 characters.
    kind(
        "github_fine_grained_pat",
        "ci",
        "GitHub",
        "GH_TOKEN",
        lambda r: token("github_pat_" + pick(r, ALNUM, 22) + "_", pick(r, ALNUM, 59)),
    ),
    # GitLab docs ("Token overview", prefixes): glpat- personal, glrt- runner, glptt- trigger, gldt- deploy.
    kind(
        "gitlab_pat",
        "ci",
        "GitLab",
        "GITLAB_TOKEN",
        lambda r: token("glpat-", pick(r, B64URL, 20)),
        with_named(*GIT_URL_CONTEXTS),
    ),
    kind(
        "gitlab_runner_token",
        "ci",
        "GitLab Runner",
        "RUNNER_TOKEN",
        lambda r: token("glrt-", pick(r, B64URL, 20)),
        with_named(
            lambda r, k, v: (
                f"gitlab-runner register --non-interactive --url https://gitlab.com --token {v} --executor docker"
            ),
            lambda r, k, v: (
                f'[[runners]]\n  name = "docker-1"\n  url = "https://gitlab.com"\n  token = "{v}"'
            ),
        ),
    ),
    kind(
        "gitlab_pipeline_trigger_token",
        "ci",
        "GitLab",
        "TRIGGER_TOKEN",
        lambda r: token("glptt-", pick(r, HEX, 40)),
        with_named(
            lambda r, k, v: (
                f"curl -X POST --fail -F token={v} -F ref=main https://gitlab.com/api/v4/projects/4711/trigger/pipeline"
            )
        ),
    ),
    kind(
        "gitlab_deploy_token",
        "ci",
        "GitLab",
        "CI_DEPLOY_PASSWORD",
        lambda r: token("gldt-", pick(r, B64URL, 20)),
        with_named(
            lambda r, k, v: (
                f"echo {v} | docker login registry.gitlab.com -u gitlab+deploy-token-12 --password-stdin"
            )
        ),
    ),
    # CircleCI changelog ("New format for API access tokens"): CCIPAT_<base58 UUID>_<40 hex>.
    kind(
        "circleci_personal_token",
        "ci",
        "CircleCI",
        "CIRCLE_TOKEN",
        lambda r: token("CCIPAT_" + pick(r, BASE58, 22) + "_", pick(r, HEX, 40)),
        header_contexts("Circle-Token: "),
    ),
    # Buildkite docs ("API access tokens"): bkua_ + 40 hex.
    kind(
        "buildkite_api_token",
        "ci",
        "Buildkite",
        "BUILDKITE_API_TOKEN",
        lambda r: token("bkua_", pick(r, HEX, 40)),
    ),
    # Jenkins docs: API tokens are 34 hex characters starting with the version "11"; used with basic auth.
    kind(
        "jenkins_api_token",
        "ci",
        "Jenkins",
        "JENKINS_API_TOKEN",
        lambda r: token("11", pick(r, HEX, 32)),
        with_named(
            lambda r, k, v: (
                f"curl -X POST -u admin:{v} https://jenkins.acme.internal/job/release/buildWithParameters?TAG=v2.3"
            ),
            lambda r, k, v: (
                f"java -jar jenkins-cli.jar -s https://ci.acme.test/ -auth deploy:{v} build nightly"
            ),
        ),
    ),
    # Atlassian docs ("App passwords"): Bitbucket app passwords start ATBB.
    kind(
        "bitbucket_app_password",
        "ci",
        "Bitbucket",
        "BITBUCKET_APP_PASSWORD",
        lambda r: token("ATBB", pick(r, ALNUM, 32)),
        with_named(
            lambda r, k, v: (
                f"git clone https://{r.choice(PEOPLE).replace('.', '')}:{v}@bitbucket.org/acme/mobile.git"
            )
        ),
    ),
    # Azure DevOps docs ("Use personal access tokens"): 52 characters, lowercase base32.
    kind(
        "azure_devops_pat",
        "ci",
        "Azure DevOps",
        "AZURE_DEVOPS_EXT_PAT",
        lambda r: token("", pick(r, BASE32_LOWER, 52)),
    ),
    # Terraform docs ("CLI configuration", credentials): <14>.atlasv1.<67>.
    kind(
        "terraform_cloud_token",
        "ci",
        "Terraform Cloud",
        "TF_TOKEN_app_terraform_io",
        lambda r: token(pick(r, ALNUM, 14) + ".atlasv1.", pick(r, ALNUM, 67)),
        with_named(
            lambda r, k, v: json.dumps(
                {"credentials": {"app.terraform.io": {"token": v}}}, indent=2, ensure_ascii=False
            ),
            lambda r, k, v: f'credentials "app.terraform.io" {{\n  token = "{v}"\n}}',
        ),
    ),
    # Netlify docs ("Personal access tokens"): nfp_ prefix.
    kind("netlify_pat", "ci", "Netlify", "NETLIFY_AUTH_TOKEN", lambda r: token("nfp_", pick(r, ALNUM, 40))),
    # Vercel docs ("Access tokens"): 24 alphanumerics, read from VERCEL_TOKEN.
    kind("vercel_token", "ci", "Vercel", "VERCEL_TOKEN", lambda r: token("", pick(r, ALNUM, 24))),
    # Pulumi docs ("Access tokens"): pul- + 40 hex.
    kind(
        "pulumi_access_token",
        "ci",
        "Pulumi",
        "PULUMI_ACCESS_TOKEN",
        lambda r: token("pul-", pick(r, HEX, 40)),
    ),
    # Doppler docs ("Token formats"): service tokens dp.st.<config>.<43>.
    kind(
        "doppler_service_token",
        "ci",
        "Doppler",
        "DOPPLER_TOKEN",
        lambda r: token("dp.st." + r.choice(["prd", "stg", "dev_personal"]) + ".", pick(r, ALNUM, 43)),
    ),
    # Codecov docs ("Uploading with a token"): the upload token is a UUID.
    kind("codecov_upload_token", "ci", "Codecov", "CODECOV_TOKEN", lambda r: token("", uuid4(r))),
    # ---- chat ----
    # Slack docs ("Token types"): xoxb- bot, xoxp- user, xapp- app-level tokens.
    kind(
        "slack_bot_token",
        "chat",
        "Slack",
        "SLACK_BOT_TOKEN",
        lambda r: token("xoxb-" + pick(r, DIGITS, 12) + "-" + pick(r, DIGITS, 13) + "-", pick(r, ALNUM, 24)),
    ),
    kind(
        "slack_user_token",
        "chat",
        "Slack",
        "SLACK_USER_TOKEN",
        lambda r: token(
            "xoxp-" + pick(r, DIGITS, 12) + "-" + pick(r, DIGITS, 12) + "-" + pick(r, DIGITS, 13) + "-",
            pick(r, HEX, 32),
        ),
    ),
    kind(
        "slack_app_token",
        "chat",
        "Slack",
        "SLACK_APP_TOKEN",
        lambda r: token(
            "xapp-1-A" + pick(r, UPPER_ALNUM, 10) + "-" + pick(r, DIGITS, 13) + "-", pick(r, HEX, 64)
        ),
        SLACK_APP_CONTEXTS,
    ),
    # Slack docs ("Sending messages using incoming webhooks"): hooks.slack.com/services/T…/B…/<24>.
    kind(
        "slack_webhook_url",
        "chat",
        "Slack",
        "SLACK_WEBHOOK_URL",
        lambda r: token(
            "https://hooks.slack.com/services/T"
            + pick(r, UPPER_ALNUM, 10)
            + "/B"
            + pick(r, UPPER_ALNUM, 10)
            + "/",
            pick(r, ALNUM, 24),
        ),
    ),
    # Discord developer docs: bot token = base64(user id).<timestamp>.<HMAC>; "Authorization: Bot <token>".
    kind(
        "discord_bot_token",
        "chat",
        "Discord",
        "DISCORD_TOKEN",
        discord_bot_token,
        header_contexts("Authorization: Bot "),
    ),
    # Discord docs ("Webhook resource"): /api/webhooks/<id>/<token>.
    kind(
        "discord_webhook_url",
        "chat",
        "Discord",
        "DISCORD_WEBHOOK",
        lambda r: token(f"https://discord.com/api/webhooks/{pick(r, DIGITS, 19)}/", pick(r, B64URL, 68)),
    ),
    # Telegram Bot API docs: "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11" — bot id, colon, 35 characters.
    kind(
        "telegram_bot_token",
        "chat",
        "Telegram",
        "TELEGRAM_BOT_TOKEN",
        lambda r: token(pick(r, DIGITS, 10) + ":", "AA" + pick(r, B64URL, 33)),
        with_named(lambda r, k, v: f"curl https://api.telegram.org/bot{v}/getUpdates"),
    ),
    # Microsoft Teams docs ("Create an Incoming Webhook"): …webhook.office.com/webhookb2/<ids>/IncomingWebhook/<32 hex>/<id>.
    kind(
        "teams_incoming_webhook",
        "chat",
        "Microsoft Teams",
        "TEAMS_WEBHOOK_URL",
        lambda r: token(
            f"https://acme.webhook.office.com/webhookb2/{uuid4(r)}@{uuid4(r)}/IncomingWebhook/",
            pick(r, HEX, 32),
            f"/{uuid4(r)}/V2{pick(r, B64URL, 20)}",
        ),
    ),
    # Mattermost docs ("Incoming webhooks"): /hooks/<26 lowercase alphanumerics>.
    kind(
        "mattermost_webhook",
        "chat",
        "Mattermost",
        "MATTERMOST_HOOK",
        lambda r: token("https://chat.acme.internal/hooks/", pick(r, LOWER_ALNUM, 26)),
    ),
    # Twilio docs ("Auth tokens and how to change them"): 32 hex, used with the Account SID AC…
    kind(
        "twilio_auth_token",
        "chat",
        "Twilio",
        "TWILIO_AUTH_TOKEN",
        lambda r: token("", pick(r, HEX, 32)),
        twilio_contexts("auth"),
    ),
    # Twilio docs ("API keys"): an SK… key SID and a 32-character secret.
    kind(
        "twilio_api_key_secret",
        "chat",
        "Twilio",
        "TWILIO_API_SECRET",
        lambda r: token("", pick(r, ALNUM, 32)),
        twilio_contexts("key"),
    ),
    # LINE Messaging API docs: long-lived channel access tokens, ~172 base64 characters.
    kind(
        "line_channel_access_token",
        "chat",
        "LINE",
        "LINE_CHANNEL_ACCESS_TOKEN",
        lambda r: token("", pick(r, B64, 171) + "="),
    ),
    # Zulip docs ("API keys", .zuliprc): 32 alphanumerics.
    kind(
        "zulip_api_key",
        "chat",
        "Zulip",
        "ZULIP_API_KEY",
        lambda r: token("", pick(r, ALNUM, 32)),
        with_named(
            lambda r, k, v: (
                f"[api]\nemail=deploy-bot@acme.zulipchat.com\nkey={v}\nsite=https://acme.zulipchat.com"
            )
        ),
    ),
    # Synapse (matrix-org/synapse#5588 and later): syt_<base64 user>_<20 random>_<base62 CRC32>.
    kind("matrix_access_token", "chat", "Matrix", "MATRIX_ACCESS_TOKEN", matrix_token),
    # Vonage docs ("API credentials"): 8-hex API key and a 16-character secret.
    kind(
        "vonage_api_secret",
        "chat",
        "Vonage",
        "VONAGE_API_SECRET",
        lambda r: token("", pick(r, ALNUM, 16)),
        with_named(lambda r, k, v: f'client = vonage.Client(key="{pick(r, HEX, 8)}", secret="{v}")'),
    ),
    # Pusher Channels docs: app secret of 20 hex.
    kind("pusher_app_secret", "chat", "Pusher", "PUSHER_APP_SECRET", lambda r: token("", pick(r, HEX, 20))),
)

DB_SHELL: tuple[Context, ...] = (
    lambda r, k, v: f"PGPASSWORD={v} pg_dump -h db-1 -U app app > app.sql",
    lambda r, k, v: f"Das Passwort für {k.service} (Benutzer app) ist {v}",
    lambda r, k, v: f"{k.service} の app ユーザーのパスワード: {v}",
)

KINDS += (
    # ---- payment ----
    # Stripe docs ("API keys"): secret keys sk_live_, restricted keys rk_live_, webhook secrets whsec_.
    kind(
        "stripe_secret_key",
        "payment",
        "Stripe",
        "STRIPE_SECRET_KEY",
        lambda r: token("sk_live_", pick(r, ALNUM, r.choice([24, 99]))),
    ),
    kind(
        "stripe_restricted_key",
        "payment",
        "Stripe",
        "STRIPE_RESTRICTED_KEY",
        lambda r: token("rk_live_", pick(r, ALNUM, r.choice([24, 99]))),
    ),
    kind(
        "stripe_webhook_secret",
        "payment",
        "Stripe",
        "STRIPE_WEBHOOK_SECRET",
        lambda r: token("whsec_", r.choice([pick(r, ALNUM, 32), pick(r, HEX, 64)])),
    ),
    # Braintree docs (PayPal SDK access tokens): access_token$production$<merchant>$<32 hex>.
    kind(
        "braintree_access_token",
        "payment",
        "Braintree",
        "BRAINTREE_ACCESS_TOKEN",
        lambda r: token("access_token$production$" + pick(r, LOWER_ALNUM, 16) + "$", pick(r, HEX, 32)),
    ),
    # Square docs ("Access tokens"): production access tokens begin EAAA.
    kind(
        "square_access_token",
        "payment",
        "Square",
        "SQUARE_ACCESS_TOKEN",
        lambda r: token("EAAA", pick(r, B64URL, 60)),
    ),
    # Adyen docs ("API credentials"): API keys begin AQE, base64 segments joined by "-".
    kind(
        "adyen_api_key",
        "payment",
        "Adyen",
        "ADYEN_API_KEY",
        lambda r: token("AQE", pick(r, B64, 117), "==-" + pick(r, B64, 43) + "=-" + pick(r, ALNUM, 16)),
        header_contexts("X-API-Key: "),
    ),
    # Razorpay docs ("API keys"): key id rzp_live_ + 14, key secret of 24 characters.
    kind(
        "razorpay_key_secret",
        "payment",
        "Razorpay",
        "RAZORPAY_KEY_SECRET",
        lambda r: token("", pick(r, ALNUM, 24)),
        with_named(
            lambda r, k, v: f'client = razorpay.Client(auth=("rzp_live_{pick(r, ALNUM, 14)}", "{v}"))',
            lambda r, k, v: f"curl -u rzp_live_{pick(r, ALNUM, 14)}:{v} https://api.razorpay.com/v1/payments",
        ),
    ),
    # Paystack docs ("API keys"): sk_live_ + 40 hex.
    kind(
        "paystack_secret_key",
        "payment",
        "Paystack",
        "PAYSTACK_SECRET_KEY",
        lambda r: token("sk_live_", pick(r, HEX, 40)),
    ),
    # Flutterwave docs ("Authentication"): FLWSECK-<32 hex>-X (test keys FLWSECK_TEST-…).
    kind(
        "flutterwave_secret_key",
        "payment",
        "Flutterwave",
        "FLW_SECRET_KEY",
        lambda r: token("FLWSECK-", pick(r, HEX, 32), "-X"),
    ),
    # Mercado Pago docs ("Credentials"): APP_USR-<app id>-<date>-<32 hex>-<user id>.
    kind(
        "mercadopago_access_token",
        "payment",
        "Mercado Pago",
        "MP_ACCESS_TOKEN",
        lambda r: token(
            "APP_USR-" + pick(r, DIGITS, 16) + "-" + pick(r, DIGITS, 6) + "-",
            pick(r, HEX, 32),
            "-" + pick(r, DIGITS, 9),
        ),
    ),
    # Mollie docs ("Authentication"): live_ + 30 characters.
    kind(
        "mollie_api_key", "payment", "Mollie", "MOLLIE_API_KEY", lambda r: token("live_", pick(r, ALNUM, 30))
    ),
    # GoCardless docs ("Access tokens"): live_ + 40 characters.
    kind(
        "gocardless_access_token",
        "payment",
        "GoCardless",
        "GOCARDLESS_ACCESS_TOKEN",
        lambda r: token("live_", pick(r, B64URL, 40)),
    ),
    # Midtrans docs ("Retrieving API access keys"): server keys Mid-server-…
    kind(
        "midtrans_server_key",
        "payment",
        "Midtrans",
        "MIDTRANS_SERVER_KEY",
        lambda r: token("Mid-server-", pick(r, B64URL, 24)),
    ),
    # Plaid docs ("Keys"): client_id and a 30-hex secret.
    kind("plaid_secret", "payment", "Plaid", "PLAID_SECRET", lambda r: token("", pick(r, HEX, 30))),
    # PayPal REST docs ("Get client ID and client secret"): 80-character client secret.
    kind(
        "paypal_client_secret",
        "payment",
        "PayPal",
        "PAYPAL_CLIENT_SECRET",
        lambda r: token("E" + r.choice("ABCDEFGHIJKLMNOP"), pick(r, B64URL, 78)),
    ),
    # WeChat Pay docs (APIv3 key): 32 characters set by the merchant.
    kind(
        "wechat_pay_apiv3_key",
        "payment",
        "WeChat Pay",
        "WECHATPAY_APIV3_KEY",
        lambda r: token("", pick(r, ALNUM, 32)),
    ),
    # ---- database ----
    # libpq docs ("Connection URIs"): postgresql://user:password@host:port/dbname.
    kind(
        "postgres_url_password",
        "database",
        "PostgreSQL",
        "DATABASE_URL",
        lambda r: token("", password(r)),
        (
            *url_contexts("postgresql://{user}:{v}@{host}:5432/app?sslmode=require"),
            lambda r, k, v: f"PGPASSWORD='{v}' psql -h db-1.prod.internal -U app app",
        ),
    ),
    # MySQL Connector/J docs: jdbc:mysql://host/db?user=…&password=…; also mysql -p<password>.
    kind(
        "mysql_password",
        "database",
        "MySQL",
        "MYSQL_URL",
        lambda r: token("", password(r)),
        (
            *url_contexts("jdbc:mysql://{host}:3306/shop?user={user}&password={v}&useSSL=true"),
            lambda r, k, v: f"mysql -h 10.0.3.9 -u root -p'{v}' shop < dump.sql",
            lambda r, k, v: f"[client]\nuser=backup\npassword={v}\nhost=db-replica",
        ),
    ),
    # MongoDB docs ("Connection string"): mongodb+srv://user:password@cluster…
    kind(
        "mongodb_srv_password",
        "database",
        "MongoDB Atlas",
        "MONGODB_URI",
        lambda r: token("", password(r)),
        url_contexts("mongodb+srv://{user}:{v}@cluster0.x7k2p.mongodb.net/app?retryWrites=true&w=majority"),
    ),
    # Redis docs (redis-cli, URI scheme): redis://:password@host:port/db, requirepass.
    kind(
        "redis_password",
        "database",
        "Redis",
        "REDIS_URL",
        lambda r: token("", password(r)),
        (
            *url_contexts("rediss://default:{v}@{host}:6380/0"),
            lambda r, k, v: f"redis-cli -h cache-1 -a '{v}' --no-auth-warning INFO",
            lambda r, k, v: f"# redis.conf\nbind 0.0.0.0\nrequirepass {v}",
        ),
    ),
    # PostgreSQL docs ("The Password File"): hostname:port:database:username:password.
    kind(
        "pgpass_password",
        "database",
        "PostgreSQL",
        "~/.pgpass",
        lambda r: token("", password(r)),
        (
            lambda r, k, v: f"~/.pgpass:\ndb-1.prod.internal:5432:app:app:{v}",
            lambda r, k, v: f"echo 'localhost:5432:*:postgres:{v}' >> ~/.pgpass && chmod 600 ~/.pgpass",
            lambda r, k, v: f"Added the replica to .pgpass: `10.0.4.17:5433:reporting:analyst:{v}`",
            lambda r, k, v: f"pgpass に追加した行: db-2:5432:app:migrator:{v}",
            *DB_SHELL,
        ),
    ),
    # SqlClient docs ("Connection strings"): Server=…;User ID=…;Password=…;
    kind(
        "sqlserver_connection_string",
        "database",
        "SQL Server",
        "ConnectionStrings__Default",
        lambda r: token("", password(r)),
        url_contexts(
            "Server=tcp:acme-{user}.database.windows.net,1433;Initial Catalog=orders;User ID=app;Password={v};Encrypt=True;"
        ),
    ),
    # Oracle JDBC docs: jdbc:oracle:thin:user/password@//host:port/service.
    kind(
        "oracle_jdbc_password",
        "database",
        "Oracle",
        "ORACLE_URL",
        lambda r: token("", password(r)),
        (
            *url_contexts("jdbc:oracle:thin:{user}/{v}@//{host}:1521/ORCLPDB1"),
            lambda r, k, v: f"sqlplus scott/{v}@//db-host:1521/ORCL",
        ),
    ),
    # Snowflake docs (SQLAlchemy URL, SnowSQL config): snowflake://user:password@account/db.
    kind(
        "snowflake_password",
        "database",
        "Snowflake",
        "SNOWFLAKE_URL",
        lambda r: token("", password(r)),
        (
            *url_contexts("snowflake://{user}:{v}@acme-xy12345/analytics/public?warehouse=COMPUTE_WH"),
            lambda r, k, v: (
                f"[connections.prod]\naccountname = acme-xy12345\nusername = loader\npassword = {v}"
            ),
        ),
    ),
    # PlanetScale docs ("Connection strings"): passwords pscale_pw_ + 43.
    kind(
        "planetscale_password",
        "database",
        "PlanetScale",
        "PLANETSCALE_URL",
        lambda r: token("pscale_pw_", pick(r, B64URL, 43)),
        url_contexts("mysql://{user}:{v}@aws.connect.psdb.cloud/shop?sslaccept=strict"),
    ),
    # Supabase docs ("API keys"): the service_role key is a JWT (HS256) with role service_role.
    kind(
        "supabase_service_role_key",
        "database",
        "Supabase",
        "SUPABASE_SERVICE_ROLE_KEY",
        lambda r: jwt(
            r,
            {"alg": "HS256", "typ": "JWT"},
            {
                "iss": "supabase",
                "ref": pick(r, LOWER, 20),
                "role": "service_role",
                "iat": 1700000000 + r.randint(0, 10**7),
                "exp": 2000000000 + r.randint(0, 10**7),
            },
        ),
    ),
    # DataStax Astra docs ("Application tokens"): AstraCS:<client id>:<64 hex secret>.
    kind("astra_db_token", "database", "Astra DB", "ASTRA_DB_APPLICATION_TOKEN", astra),
    # InfluxDB docs ("API tokens"): 88 base64 characters ending ==.
    kind(
        "influxdb_token",
        "database",
        "InfluxDB",
        "INFLUX_TOKEN",
        lambda r: token("", pick(r, B64URL, 86), "=="),
        header_contexts("Authorization: Token "),
    ),
    # Elasticsearch docs ("Create API key"): send base64(id:api_key) as "Authorization: ApiKey".
    kind(
        "elasticsearch_api_key",
        "database",
        "Elasticsearch",
        "ELASTIC_API_KEY",
        lambda r: token("", b64(pick(r, B64URL, 20) + ":" + pick(r, B64URL, 22))),
        header_contexts("Authorization: ApiKey "),
    ),
    # A password under a secret-sounding name (ClickHouse docs: CLICKHOUSE_PASSWORD for the client).
    kind(
        "clickhouse_password",
        "database",
        "ClickHouse",
        "CLICKHOUSE_PASSWORD",
        lambda r: token("", password(r)),
    ),
    # ---- registry ----
    # npm docs ("About access tokens"): npm_ + 36, same CRC32 scheme as GitHub's; written to .npmrc.
    kind(
        "npm_access_token",
        "registry",
        "npm",
        "NPM_TOKEN",
        NPM,
        with_named(
            lambda r, k, v: f"//registry.npmjs.org/:_authToken={v}",
            lambda r, k, v: f'echo "//registry.npmjs.org/:_authToken={v}" > ~/.npmrc',
        ),
        NPM_SEAL,
    ),
    # npm docs (npmrc, legacy auth): _auth = base64(username:password) for a private registry.
    kind(
        "npmrc_legacy_auth",
        "registry",
        "Nexus npm",
        ".npmrc",
        lambda r: basic(r, "ci-publisher"),
        (
            lambda r, k, v: (
                f"registry=https://nexus.acme.internal/repository/npm-group/\n_auth={v}\nalways-auth=true"
            ),
            lambda r, k, v: f"//npm.acme.internal/:_auth={v}",
            lambda r, k, v: f"In der .npmrc steht jetzt `_auth={v}`",
            lambda r, k, v: f"npm config set _auth {v}",
            lambda r, k, v: f"NPM_AUTH={v}",
        ),
    ),
    # PyPI docs ("API tokens"): pypi- + a base64url macaroon starting AgEIcHlwaS5vcmc.
    kind(
        "pypi_api_token",
        "registry",
        "PyPI",
        "TWINE_PASSWORD",
        pypi_token,
        with_named(
            lambda r, k, v: f"[pypi]\nusername = __token__\npassword = {v}",
            lambda r, k, v: f"twine upload -u __token__ -p {v} dist/*",
            lambda r, k, v: f"uv publish --token {v}",
        ),
    ),
    # pip/twine docs (.pypirc for a private index): a plain password.
    kind(
        "pypirc_password",
        "registry",
        "private index",
        "~/.pypirc",
        lambda r: token("", password(r)),
        (
            lambda r, k, v: (
                f"[distutils]\nindex-servers = internal\n\n[internal]\nrepository = https://pypi.acme.internal/\nusername = deploy\npassword = {v}"
            ),
            lambda r, k, v: (
                f"pip install --index-url https://deploy:{v}@pypi.acme.internal/simple/ acme-core"
            ),
            lambda r, k, v: f"PIP_INDEX_URL=https://ci:{v}@nexus.acme.test/repository/pypi/simple",
            lambda r, k, v: f"Le mot de passe de l'index PyPI interne est {v}.",
        ),
    ),
    # Docker docs ("Personal access tokens"): dckr_pat_ + 27.
    kind(
        "docker_hub_pat",
        "registry",
        "Docker Hub",
        "DOCKERHUB_TOKEN",
        lambda r: token("dckr_pat_", pick(r, B64URL, 27)),
        with_named(
            lambda r, k, v: f"echo {v} | docker login -u acmebot --password-stdin",
            lambda r, k, v: f"docker login -u acmebot -p {v}",
        ),
    ),
    # Docker docs (config.json "auths"): auth = base64(username:password).
    kind(
        "docker_config_auth",
        "registry",
        "Docker registry",
        "~/.docker/config.json",
        lambda r: basic(r, "robot"),
        (
            lambda r, k, v: json.dumps(
                {"auths": {"registry.acme.internal": {"auth": v}}}, indent=2, ensure_ascii=False
            ),
            lambda r, k, v: f'{{"auths":{{"ghcr.io":{{"auth":"{v}"}}}}}}',
            lambda r, k, v: (
                f'apiVersion: v1\nkind: Secret\ntype: kubernetes.io/dockerconfigjson\nstringData:\n  .dockerconfigjson: \'{{"auths":{{"harbor.acme.test":{{"auth":"{v}"}}}}}}\''
            ),
            lambda r, k, v: f"Registry-Zugang für den Build-Server: auth={v}",
        ),
    ),
    # NuGet docs ("API keys"): oy2 + 43 lowercase alphanumerics.
    kind(
        "nuget_api_key",
        "registry",
        "NuGet",
        "NUGET_API_KEY",
        lambda r: token("oy2", pick(r, LOWER_ALNUM, 43)),
        with_named(
            lambda r, k, v: (
                f"dotnet nuget push bin/Release/*.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json"
            )
        ),
    ),
    # RubyGems docs ("API key scopes"): rubygems_ + 48 hex, in ~/.gem/credentials.
    kind(
        "rubygems_api_key",
        "registry",
        "RubyGems",
        "GEM_HOST_API_KEY",
        lambda r: token("rubygems_", pick(r, HEX, 48)),
        with_named(lambda r, k, v: f"---\n:rubygems_api_key: {v}"),
    ),
    # crates.io docs ("API tokens"): cio + 32 alphanumerics, in ~/.cargo/credentials.toml.
    kind(
        "crates_io_token",
        "registry",
        "crates.io",
        "CARGO_REGISTRY_TOKEN",
        lambda r: token("cio", pick(r, ALNUM, 32)),
        with_named(lambda r, k, v: f'[registry]\ntoken = "{v}"'),
    ),
    # JFrog docs ("API key", deprecated but in use): AKCp + 69 characters.
    kind(
        "jfrog_api_key",
        "registry",
        "Artifactory",
        "ARTIFACTORY_API_KEY",
        lambda r: token("AKCp", pick(r, ALNUM, 69)),
        header_contexts("X-JFrog-Art-Api: "),
    ),
    # Clojars docs ("Deploy tokens"): CLOJARS_ + 60 hex.
    kind(
        "clojars_deploy_token",
        "registry",
        "Clojars",
        "CLOJARS_PASSWORD",
        lambda r: token("CLOJARS_", pick(r, HEX, 60)),
    ),
    # Quay docs ("Robot accounts"): a 64-character uppercase token used with docker login.
    kind(
        "quay_robot_token",
        "registry",
        "Quay",
        "QUAY_ROBOT_TOKEN",
        lambda r: token("", pick(r, UPPER_ALNUM, 64)),
        with_named(lambda r, k, v: f'docker login -u="acme+deployer" -p="{v}" quay.io'),
    ),
    # Maven docs ("Settings reference", servers): <password> in settings.xml.
    kind(
        "maven_settings_password",
        "registry",
        "Maven repository",
        "~/.m2/settings.xml",
        lambda r: token("", password(r)),
        (
            lambda r, k, v: (
                f"<servers>\n  <server>\n    <id>acme-releases</id>\n    <username>deployer</username>\n    <password>{v}</password>\n  </server>\n</servers>"
            ),
            lambda r, k, v: f"ossrhPassword={v}\nsigning.keyId=24875D73",
            lambda r, k, v: f"mvn deploy -Drepo.password={v}",
            lambda r, k, v: f"Maven 仓库 deployer 账号的密码是 {v}",
        ),
    ),
)

NETRC: tuple[Context, ...] = (
    lambda r, k, v: f"machine {k.var}\n  login {r.choice(PEOPLE)}@acme.example\n  password {v}",
    lambda r, k, v: f"echo 'machine {k.var} login deploy password {v}' >> ~/.netrc",
    lambda r, k, v: (
        f"~/.netrc on the build box:\nmachine {k.var} login ci password {v}\nmachine github.com login ci password (see vault)"
    ),
    lambda r, k, v: f"La ligne du .netrc pour {k.service} : machine {k.var} login bot password {v}",
)

KINDS += (
    # ---- observability ----
    # Datadog docs ("API and application keys"): API key 32 hex, application key 40 hex.
    kind(
        "datadog_api_key",
        "observability",
        "Datadog",
        "DD_API_KEY",
        lambda r: token("", pick(r, HEX, 32)),
        header_contexts("DD-API-KEY: "),
    ),
    kind(
        "datadog_app_key",
        "observability",
        "Datadog",
        "DD_APP_KEY",
        lambda r: token("", pick(r, HEX, 40)),
        header_contexts("DD-APPLICATION-KEY: "),
    ),
    # New Relic docs ("API keys"): user keys NRAK- + 27; license keys 40 characters ending NRAL.
    kind(
        "new_relic_user_key",
        "observability",
        "New Relic",
        "NEW_RELIC_API_KEY",
        lambda r: token("NRAK-", pick(r, UPPER_ALNUM, 27)),
        header_contexts("Api-Key: "),
    ),
    kind(
        "new_relic_license_key",
        "observability",
        "New Relic",
        "NEW_RELIC_LICENSE_KEY",
        lambda r: token("", pick(r, HEX, 36), "NRAL"),
        with_named(lambda r, k, v: f"common: &default_settings\n  license_key: '{v}'\n  app_name: checkout"),
    ),
    # Sentry docs ("Auth tokens"): user auth tokens sntryu_ + 64 hex.
    kind(
        "sentry_user_token",
        "observability",
        "Sentry",
        "SENTRY_AUTH_TOKEN",
        lambda r: token("sntryu_", pick(r, HEX, 64)),
        with_named(
            lambda r, k, v: f"sentry-cli --auth-token {v} releases new 2.4.1",
            lambda r, k, v: f"[auth]\ntoken={v}",
        ),
    ),
    # Grafana docs: Cloud access policy tokens glc_ + base64 JSON; service account tokens glsa_.
    kind("grafana_cloud_token", "observability", "Grafana Cloud", "GRAFANA_CLOUD_TOKEN", grafana_cloud),
    kind(
        "grafana_service_account_token",
        "observability",
        "Grafana",
        "GRAFANA_TOKEN",
        lambda r: token("glsa_", pick(r, ALNUM, 32), "_" + pick(r, HEX, 8)),
    ),
    # Dynatrace docs ("Access tokens"): dt0c01.<24-character public id>.<64-character secret portion>.
    kind(
        "dynatrace_api_token",
        "observability",
        "Dynatrace",
        "DT_API_TOKEN",
        lambda r: token("dt0c01." + pick(r, UPPER_ALNUM, 24) + ".", pick(r, UPPER_ALNUM, 64)),
        header_contexts("Authorization: Api-Token "),
    ),
    # Splunk docs ("HTTP Event Collector"): HEC tokens are GUIDs, sent as "Authorization: Splunk <token>".
    kind(
        "splunk_hec_token",
        "observability",
        "Splunk",
        "SPLUNK_HEC_TOKEN",
        lambda r: token("", uuid4(r).upper()),
        header_contexts("Authorization: Splunk "),
    ),
    # Honeycomb docs ("API keys"): configuration keys of 22 characters, X-Honeycomb-Team header.
    kind(
        "honeycomb_api_key",
        "observability",
        "Honeycomb",
        "HONEYCOMB_API_KEY",
        lambda r: token("", pick(r, ALNUM, 22)),
        header_contexts("X-Honeycomb-Team: "),
    ),
    # PagerDuty docs ("API access keys"): 20 characters, "Authorization: Token token=".
    kind(
        "pagerduty_api_key",
        "observability",
        "PagerDuty",
        "PAGERDUTY_TOKEN",
        lambda r: token("", pick(r, ALNUM + "_+-", 20)),
        header_contexts("Authorization: Token token="),
    ),
    # Sumo Logic docs ("Access keys"): access id su… and a 64-character key.
    kind(
        "sumologic_access_key",
        "observability",
        "Sumo Logic",
        "SUMO_ACCESS_KEY",
        lambda r: token("", pick(r, ALNUM, 64)),
        with_named(
            lambda r, k, v: (
                f"curl -u su{pick(r, ALNUM, 12)}:{v} https://api.eu.sumologic.com/api/v1/collectors"
            )
        ),
    ),
    # Opsgenie docs ("API key"): a GUID sent as "Authorization: GenieKey".
    kind(
        "opsgenie_api_key",
        "observability",
        "Opsgenie",
        "OPSGENIE_API_KEY",
        lambda r: token("", uuid4(r)),
        header_contexts("Authorization: GenieKey "),
    ),
    # Rollbar docs ("Access tokens"): 32 hex, post_server_item scope.
    kind(
        "rollbar_access_token",
        "observability",
        "Rollbar",
        "ROLLBAR_ACCESS_TOKEN",
        lambda r: token("", pick(r, HEX, 32)),
        header_contexts("X-Rollbar-Access-Token: "),
    ),
    # ---- ai ----
    # OpenAI docs ("API keys"): project keys sk-proj-…, legacy user keys sk-…; both carry T3BlbkFJ.
    kind(
        "openai_project_key",
        "ai",
        "OpenAI",
        "OPENAI_API_KEY",
        lambda r: token("sk-proj-", pick(r, B64URL, 74), "T3BlbkFJ" + pick(r, B64URL, 74)),
    ),
    kind(
        "openai_legacy_key",
        "ai",
        "OpenAI",
        "OPENAI_KEY",
        lambda r: token("sk-", pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20)),
    ),
    # Anthropic docs ("API keys"): sk-ant-api03- + 93 characters + AA.
    kind(
        "anthropic_api_key",
        "ai",
        "Anthropic",
        "ANTHROPIC_API_KEY",
        lambda r: token("sk-ant-api03-", pick(r, B64URL, 93), "AA"),
        header_contexts("x-api-key: "),
    ),
    # Hugging Face docs ("User access tokens"): hf_ + 34 letters.
    kind(
        "huggingface_token",
        "ai",
        "Hugging Face",
        "HF_TOKEN",
        lambda r: token("hf_", pick(r, UPPER + LOWER, 34)),
        with_named(
            lambda r, k, v: f"huggingface-cli login --token {v}",
            lambda r, k, v: f"git clone https://user:{v}@huggingface.co/acme/private-model",
        ),
    ),
    # Cohere docs: 40 alphanumerics, CO_API_KEY.
    kind("cohere_api_key", "ai", "Cohere", "CO_API_KEY", lambda r: token("", pick(r, ALNUM, 40))),
    # Replicate docs ("API tokens"): r8_ + 37.
    kind(
        "replicate_api_token",
        "ai",
        "Replicate",
        "REPLICATE_API_TOKEN",
        lambda r: token("r8_", pick(r, ALNUM, 37)),
    ),
    # Groq docs: gsk_ + 52.
    kind("groq_api_key", "ai", "Groq", "GROQ_API_KEY", lambda r: token("gsk_", pick(r, ALNUM, 52))),
    # Mistral docs ("API keys"): 32 alphanumerics.
    kind("mistral_api_key", "ai", "Mistral", "MISTRAL_API_KEY", lambda r: token("", pick(r, ALNUM, 32))),
    # Perplexity docs: pplx- + 48.
    kind(
        "perplexity_api_key",
        "ai",
        "Perplexity",
        "PERPLEXITY_API_KEY",
        lambda r: token("pplx-", pick(r, ALNUM, 48)),
    ),
    # DeepSeek docs: sk- + 32 hex, OpenAI-compatible.
    kind("deepseek_api_key", "ai", "DeepSeek", "DEEPSEEK_API_KEY", lambda r: token("sk-", pick(r, HEX, 32))),
    # Together AI docs: 64 hex.
    kind("together_api_key", "ai", "Together AI", "TOGETHER_API_KEY", lambda r: token("", pick(r, HEX, 64))),
    # xAI docs: xai- + 80.
    kind("xai_api_key", "ai", "xAI", "XAI_API_KEY", lambda r: token("xai-", pick(r, ALNUM, 80))),
    # OpenRouter docs: sk-or-v1- + 64 hex.
    kind(
        "openrouter_api_key",
        "ai",
        "OpenRouter",
        "OPENROUTER_API_KEY",
        lambda r: token("sk-or-v1-", pick(r, HEX, 64)),
    ),
    # LangSmith docs ("API keys"): personal tokens lsv2_pt_<32 hex>_<10 hex>.
    kind(
        "langsmith_api_key",
        "ai",
        "LangSmith",
        "LANGSMITH_API_KEY",
        lambda r: token("lsv2_pt_", pick(r, HEX, 32), "_" + pick(r, HEX, 10)),
    ),
    # Pinecone docs ("API keys"): pcsk_<5>_<secret>.
    kind(
        "pinecone_api_key",
        "ai",
        "Pinecone",
        "PINECONE_API_KEY",
        lambda r: token("pcsk_" + pick(r, ALNUM, 5) + "_", pick(r, ALNUM, 63)),
    ),
    # Zhipu BigModel docs: <32 hex id>.<16-character secret>.
    kind(
        "zhipu_api_key",
        "ai",
        "Zhipu GLM",
        "ZHIPUAI_API_KEY",
        lambda r: token(pick(r, HEX, 32) + ".", pick(r, ALNUM, 16)),
    ),
    # Moonshot (Kimi) docs: sk- + 48 alphanumerics, OpenAI-compatible.
    kind(
        "moonshot_api_key",
        "ai",
        "Moonshot Kimi",
        "MOONSHOT_API_KEY",
        lambda r: token("sk-", pick(r, ALNUM, 48)),
    ),
    # Weights & Biases docs: 40 hex, stored by `wandb login` in ~/.netrc for api.wandb.ai.
    kind(
        "wandb_api_key",
        "ai",
        "Weights & Biases",
        "api.wandb.ai",
        lambda r: token("", pick(r, HEX, 40)),
        (
            *NETRC,
            lambda r, k, v: f"WANDB_API_KEY={v} python train.py --epochs 20",
            lambda r, k, v: f"wandb login {v}",
        ),
    ),
    # Azure OpenAI docs: 32-hex keys sent in the api-key header.
    kind(
        "azure_openai_key",
        "ai",
        "Azure OpenAI",
        "AZURE_OPENAI_API_KEY",
        lambda r: token("", pick(r, HEX, 32)),
        header_contexts("api-key: "),
    ),
    # ElevenLabs docs: sk_ + 48 hex, xi-api-key header.
    kind(
        "elevenlabs_api_key",
        "ai",
        "ElevenLabs",
        "ELEVENLABS_API_KEY",
        lambda r: token("sk_", pick(r, HEX, 48)),
        header_contexts("xi-api-key: "),
    ),
    # ---- saas ----
    # SendGrid docs ("API keys"): SG.<22>.<43>.
    kind(
        "sendgrid_api_key",
        "saas",
        "SendGrid",
        "SENDGRID_API_KEY",
        lambda r: token("SG." + pick(r, B64URL, 22) + ".", pick(r, B64URL, 43)),
    ),
    # Mailgun docs ("API keys"): key- + 32 hex (older) in basic auth with user "api".
    kind(
        "mailgun_api_key",
        "saas",
        "Mailgun",
        "MAILGUN_API_KEY",
        lambda r: token("key-", pick(r, HEX, 32)),
        with_named(
            lambda r, k, v: (
                f"curl -s --user 'api:{v}' https://api.eu.mailgun.net/v3/mg.acme.com/messages -F to=ops@acme.com"
            )
        ),
    ),
    # Mailchimp docs ("About API keys"): 32 hex + -us<datacenter>.
    kind(
        "mailchimp_api_key",
        "saas",
        "Mailchimp",
        "MAILCHIMP_API_KEY",
        lambda r: token("", pick(r, HEX, 32), f"-us{r.randint(1, 21)}"),
    ),
    # Postmark docs ("API tokens"): server token, a GUID, in X-Postmark-Server-Token.
    kind(
        "postmark_server_token",
        "saas",
        "Postmark",
        "POSTMARK_SERVER_TOKEN",
        lambda r: token("", uuid4(r)),
        header_contexts("X-Postmark-Server-Token: "),
    ),
    # Atlassian docs ("Manage API tokens"): ATATT3xFfGF0 + ~180 characters + =<8 hex>.
    kind(
        "atlassian_api_token",
        "saas",
        "Jira",
        "JIRA_API_TOKEN",
        lambda r: token("ATATT3xFfGF0", pick(r, B64URL, 170), "=" + pick(r, HEX, 8).upper()),
    ),
    # Notion docs ("Authorization"): internal integration secrets ntn_ (older secret_ + 43).
    kind(
        "notion_integration_secret",
        "saas",
        "Notion",
        "NOTION_TOKEN",
        lambda r: r.choice(
            [token("ntn_" + pick(r, DIGITS, 11), pick(r, ALNUM, 35)), token("secret_", pick(r, ALNUM, 43))]
        ),
    ),
    # Linear docs ("API keys"): lin_api_ + 40.
    kind(
        "linear_api_key", "saas", "Linear", "LINEAR_API_KEY", lambda r: token("lin_api_", pick(r, ALNUM, 40))
    ),
    # Airtable docs ("Personal access tokens"): pat<14>.<64 hex>.
    kind(
        "airtable_pat",
        "saas",
        "Airtable",
        "AIRTABLE_TOKEN",
        lambda r: token("pat" + pick(r, ALNUM, 14) + ".", pick(r, HEX, 64)),
    ),
    # Asana docs ("Personal access token"): 2/<user id>/<token id>:<32 hex>.
    kind(
        "asana_pat",
        "saas",
        "Asana",
        "ASANA_PAT",
        lambda r: token("2/" + pick(r, DIGITS, 16) + "/" + pick(r, DIGITS, 16) + ":", pick(r, HEX, 32)),
    ),
    # Figma docs ("Personal access tokens"): figd_ + 40.
    kind(
        "figma_pat",
        "saas",
        "Figma",
        "FIGMA_TOKEN",
        lambda r: token("figd_", pick(r, B64URL, 40)),
        header_contexts("X-Figma-Token: "),
    ),
    # HubSpot docs ("Private apps"): pat-<region>-<uuid>.
    kind(
        "hubspot_private_app_token",
        "saas",
        "HubSpot",
        "HUBSPOT_ACCESS_TOKEN",
        lambda r: token("pat-" + r.choice(["na1", "eu1"]) + "-", uuid4(r)),
    ),
    # Zendesk docs ("API token"): 40 characters used as <email>/token:<token>.
    kind(
        "zendesk_api_token",
        "saas",
        "Zendesk",
        "ZENDESK_API_TOKEN",
        lambda r: token("", pick(r, ALNUM, 40)),
        with_named(
            lambda r, k, v: f"curl https://acme.zendesk.com/api/v2/tickets.json -u support@acme.com/token:{v}"
        ),
    ),
    # Okta docs ("Create an API token"): 00 + 40 characters, "Authorization: SSWS".
    kind(
        "okta_api_token",
        "saas",
        "Okta",
        "OKTA_API_TOKEN",
        lambda r: token("00", pick(r, B64URL, 40)),
        header_contexts("Authorization: SSWS "),
    ),
    # Auth0 docs (application settings): 64-character client secret.
    kind(
        "auth0_client_secret",
        "saas",
        "Auth0",
        "AUTH0_CLIENT_SECRET",
        lambda r: token("", pick(r, B64URL, 64)),
    ),
    # Dropbox docs ("OAuth guide"): short-lived access tokens sl. + ~140 characters.
    kind(
        "dropbox_access_token",
        "saas",
        "Dropbox",
        "DROPBOX_TOKEN",
        lambda r: token("sl.", pick(r, B64URL, 136)),
    ),
    # Contentful docs ("Personal access tokens"): CFPAT- + 43.
    kind(
        "contentful_pat",
        "saas",
        "Contentful",
        "CONTENTFUL_MANAGEMENT_TOKEN",
        lambda r: token("CFPAT-", pick(r, B64URL, 43)),
    ),
    # Typeform docs ("Personal access token"): tfp_<44>_<14>.
    kind(
        "typeform_pat",
        "saas",
        "Typeform",
        "TYPEFORM_TOKEN",
        lambda r: token("tfp_", pick(r, B64URL, 44), "_" + pick(r, ALNUM, 14)),
    ),
    # Shopify docs ("Access tokens"): Admin API tokens shpat_ + 32 hex.
    kind(
        "shopify_admin_token",
        "saas",
        "Shopify",
        "SHOPIFY_ACCESS_TOKEN",
        lambda r: token("shpat_", pick(r, HEX, 32)),
        header_contexts("X-Shopify-Access-Token: "),
    ),
    # Mapbox docs ("Access tokens"): secret tokens sk.eyJ… (public ones pk. are meant to be public).
    kind("mapbox_secret_token", "saas", "Mapbox", "MAPBOX_DOWNLOADS_TOKEN", mapbox_secret),
    # Postman docs ("API keys"): PMAK-<24 hex>-<34 hex>.
    kind(
        "postman_api_key",
        "saas",
        "Postman",
        "POSTMAN_API_KEY",
        lambda r: token("PMAK-" + pick(r, HEX, 24) + "-", pick(r, HEX, 34)),
        header_contexts("X-Api-Key: "),
    ),
    # Algolia docs ("API keys"): the admin API key, 32 hex.
    kind(
        "algolia_admin_key",
        "saas",
        "Algolia",
        "ALGOLIA_ADMIN_API_KEY",
        lambda r: token("", pick(r, HEX, 32)),
        header_contexts("X-Algolia-API-Key: "),
    ),
    # 1Password docs ("Service accounts"): ops_ + base64url JSON.
    kind(
        "onepassword_service_account_token",
        "saas",
        "1Password",
        "OP_SERVICE_ACCOUNT_TOKEN",
        onepassword_service_account,
    ),
    # Heroku docs ("API tokens", 2024 format): HRKU- prefix.
    kind(
        "heroku_api_key",
        "saas",
        "Heroku",
        "HEROKU_API_KEY",
        lambda r: token("HRKU-AA", pick(r, B64URL, 58)),
        (
            lambda r, k, v: (
                f"machine api.heroku.com\n  login ops@acme.example\n  password {v}\nmachine git.heroku.com\n  login ops@acme.example\n  password {v}"
            ),
            *NAMED[::4],
        ),
    ),
    # RFC 7617: "Authorization: Basic base64(user:password)".
    kind(
        "basic_auth_header",
        "saas",
        "internal API",
        "AUTH_HEADER",
        lambda r: basic(r, r.choice(PEOPLE)),
        (
            lambda r, k, v: f"curl -H 'Authorization: Basic {v}' https://{r.choice(HOSTS)}/admin/metrics",
            lambda r, k, v: f'proxy_set_header Authorization "Basic {v}";',
            lambda r, k, v: (
                f"GET /internal/health HTTP/1.1\nHost: {r.choice(HOSTS)}\nAuthorization: Basic {v}"
            ),
            lambda r, k, v: f"{r.choice(DATES)} DEBUG request headers: {{'Authorization': 'Basic {v}'}}",
            lambda r, k, v: f"Der Basic-Auth-Header für das Grafana-Backend ist `Basic {v}`.",
            lambda r, k, v: f'headers: {{ Authorization: "Basic {v}" }}',
        ),
    ),
    # RFC 3986 user-info: https://user:password@host/…
    kind(
        "url_user_password",
        "saas",
        "webhook relay",
        "CALLBACK_URL",
        lambda r: token("", password(r)),
        url_contexts("https://{user}:{v}@hooks.acme.example/relay/v1") + GIT_URL_CONTEXTS[3:],
    ),
    # netrc(5): machine … login … password …
    kind("netrc_password", "saas", "FTP mirror", "ftp.acme.example", lambda r: token("", password(r)), NETRC),
    # A password under a secret name: what people write for SMTP, LDAP and admin accounts.
    kind("password_under_secret_name", "saas", "SMTP", "SMTP_PASSWORD", lambda r: token("", password(r))),
    # A vendor-less 32-hex value under a secret name (the shape many vendors use: Twilio, Datadog, Algolia…).
    kind(
        "hex_under_secret_name",
        "saas",
        "Acme partner API",
        "ACMEPAY_AUTH_TOKEN",
        lambda r: token("", pick(r, HEX, 32)),
    ),
    # A vendor-less random api_key (base64url, 40).
    kind(
        "random_api_key_under_name",
        "saas",
        "partner",
        "PARTNER_API_KEY",
        lambda r: token("", pick(r, B64URL, 40)),
    ),
)

# ---- disguises ----

DISGUISES = (
    "plain",
    "zero-width",
    "soft-hyphen",
    "fullwidth",
    "bidi-control",
    "percent-encoded",
    "base64",
    "split-line",
    "placeholder-word",
)
# With the first sample of each kind always plain, about 40 % of all credentials are plain.
DISGUISE_WEIGHTS = (34, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6, 8.6)
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = (
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
)
BREAKS = ("\n", "\\\n    ", "\n    ", "\r\n", "\\\n", "\n\t")
Wrap = Callable[[str], str] | None


def middle(cred: Cred) -> tuple[int, int]:
    """The secret piece: the middle of the random part, kept clear of its edges so that a filter which
    redacts a slightly shorter or longer token still has to cover it."""
    n = cred.end - cred.start
    take = n if n <= 12 else min(n - 4, 24)
    start = cred.start + (n - take) // 2
    return start, start + take


def placeholder_words(span: str) -> tuple[str, ...]:
    """Placeholder-looking words that the random part's own alphabet could produce by chance."""
    chars = set(span)
    if chars <= set(HEX):
        return ("deadbeef", "c0ffee", "00000000", "12345678", "abcdef")
    if chars <= set(HEX.upper() + DIGITS):
        return ("DEADBEEF", "C0FFEE", "00000000", "ABCDEF")
    if chars <= set(UPPER_ALNUM):
        return ("EXAMPLE", "XXXXXX", "TEST", "SAMPLE", "DUMMY", "FAKEKEY")
    if chars <= set(LOWER_ALNUM):
        return ("example", "xxxxxx", "test", "sample", "dummy", "placeholder")
    return ("EXAMPLE", "xxxx", "sample", "test", "dummy", "Example", "XXXXXXXX", "YourKey", "changeme")


def with_placeholder(r: random.Random, k: Kind, cred: Cred) -> Cred:
    start, end = middle(cred)
    words = [w for w in placeholder_words(cred.value[cred.start : cred.end]) if len(w) <= end - start - 2]
    word = r.choice(words)
    at = r.randint(start + 1, end - len(word) - 1)
    value = cred.value[:at] + word + cred.value[at + len(word) :]
    if k.seal is not None:
        value = k.seal(value)
    return Cred(value, cred.start, cred.end)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def insert_inside(
    r: random.Random, value: str, start: int, end: int, chars: tuple[str, ...], times: int
) -> str:
    positions = sorted(r.sample(range(start + 1, end), times), reverse=True)
    for at in positions:
        value = value[:at] + r.choice(chars) + value[at:]
    return value


def disguise(r: random.Random, name: str, k: Kind, value: str, start: int, end: int) -> tuple[str, Wrap]:
    """The value to put in the context and, for the disguises that encode the whole text, how to wrap it."""
    if name == "zero-width":
        return insert_inside(r, value, start, end, ZERO_WIDTH, r.randint(1, 3)), None
    if name == "soft-hyphen":
        return insert_inside(r, value, start, end, ("\u00ad",), r.randint(1, 2)), None
    if name == "fullwidth":
        mode = r.choice(["all", "piece", "some"])
        if mode == "all":
            return fullwidth(value), None
        if mode == "piece":
            return value[:start] + fullwidth(value[start:end]) + value[end:], None
        chosen = set(r.sample(range(start, end), max(3, (end - start) // 3)))
        return "".join(fullwidth(c) if i in chosen else c for i, c in enumerate(value)), None
    if name == "bidi-control":
        if r.random() < 0.5:
            return insert_inside(r, value, start, end, BIDI, r.randint(1, 2)), None
        a, b = sorted(r.sample(range(start + 1, end), 2))
        return value[:a] + "\u2066" + value[a:b] + "\u2069" + value[b:], None
    if name == "percent-encoded":
        mode = r.choice(["text", "assignment", "bytes"])
        if mode == "bytes":
            return "".join(f"%{byte:02X}" for byte in value.encode()), None
        if mode == "assignment":
            field = k.var.lower() if k.var.replace("_", "").isalnum() else "token"
            encoded = quote(f"{field}={value}", safe="")
            return (
                value,
                lambda _text: (
                    f"{r.choice(DATES)} INFO GET /oauth/callback?next=%2Fsettings%3F{encoded}&state={pick(r, B64URL, 16)} 302"
                ),
            )
        return (
            value,
            lambda text: (
                r.choice(
                    [
                        "https://share.acme.example/new?text=",
                        "POST /api/notes body=",
                        "mailto:ops@acme.example?body=",
                    ]
                )
                + quote(text, safe="")
            ),
        )
    if name == "base64":
        mode = r.choice(["text", "value", "secret-data"])
        if mode == "value":
            return b64(value), None
        if mode == "secret-data":
            field = k.var.lower().strip("~/.").replace("/", "-") or "token"
            return (
                value,
                lambda _text: (
                    f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {k.service.lower().replace(' ', '-')}\ndata:\n  {field}: {b64(value)}"
                ),
            )
        return value, lambda text: r.choice(
            [
                "echo '{}' | base64 -d > .env.restore",
                "Encoded so the chat does not mangle it: {}",
                "config.b64 = {}",
                "Die Konfiguration als Base64: {}",
            ]
        ).format(b64(text))
    if name == "split-line":
        at = r.randint(start + 2, end - 2)
        return value[:at] + r.choice(BREAKS) + value[at:], None
    return value, None


# ---- look-alikes: not credentials ----

LookAlike = Callable[[random.Random], str]


def sha(r: random.Random, n: int = 40) -> str:
    return pick(r, HEX, n)


def ulid(r: random.Random) -> str:
    return "01" + pick(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[:16], 1) + pick(r, CROCKFORD, 23)


def png_base64(r: random.Random) -> str:
    return b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rand_bytes(r, 90))


PROSE_SENTENCES = (
    "Ship the release notes before Friday and ask the docs team to review the migration guide.",
    "The cache warms up in about two minutes after a deploy; do not page anyone before that.",
    "Meeting notes: we agreed to keep the monolith for billing and split out notifications first.",
    "Die Tests laufen jetzt parallel, der Build dauert nur noch sechs Minuten.",
    "Le tableau de bord affiche maintenant la latence p95 par région.",
)

LOOK_ALIKES: dict[str, tuple[LookAlike, ...]] = {
    # Git object ids (40 hex) where people write them.
    "git_commit_sha": (
        lambda r: f"Fixed in {sha(r)} (backport to release/2.3 pending).",
        lambda r: f"git cherry-pick {sha(r)}",
        lambda r: (
            f"HEAD is now at {sha(r)} Merge pull request #{r.randint(100, 9999)} from acme/fix-timeouts"
        ),
        lambda r: f"- uses: actions/checkout@{sha(r)} # v4.2.2",
        lambda r: f"Bisect says the first bad commit is {sha(r)}; 上一个好的提交是 {sha(r)}.",
    ),
    "sha256_digest": (
        lambda r: f"{sha(r, 64)}  kenfold-1.4.0-x86_64.tar.gz",
        lambda r: f"sha256sum: {sha(r, 64)}",
        lambda r: f"| file | sha256 |\n|---|---|\n| app.zip | `{sha(r, 64)}` |",
        lambda r: f'checksum = "{sha(r, 64)}"',
    ),
    "sha512_release_checksum": (
        lambda r: f"Release v3.1.0\nSHA512 (acme-cli-darwin-arm64) = {sha(r, 128)}",
        lambda r: f"Prüfsumme (SHA-512): {sha(r, 128)}",
    ),
    "uuid": (
        lambda r: f"X-Request-Id: {uuid4(r)}",
        lambda r: f"{r.choice(DATES)} INFO order {uuid4(r)} moved to SHIPPED",
        lambda r: f'{{"tenant_id": "{uuid4(r)}", "plan": "team"}}',
        lambda r: f"Azure subscription: {uuid4(r)} (Pay-As-You-Go)",
        lambda r: f"Ticket-Referenz {uuid4(r).upper()} — bitte im Betreff angeben.",
    ),
    "ulid": (
        lambda r: f"event_id={ulid(r)} type=user.signup",
        lambda r: f"Created job {ulid(r)}; poll /jobs/{ulid(r)} for status.",
    ),
    "ksuid": (
        lambda r: f"segment message id: {pick(r, '0123456789', 1)}{pick(r, BASE62, 26)}",
        lambda r: f"ksuid={pick(r, '12', 1)}{pick(r, BASE62, 26)} created",
    ),
    # Stripe object ids are public identifiers (Stripe docs, "Object IDs"), not keys.
    "stripe_object_id": (
        lambda r: f"Refunded charge ch_{pick(r, ALNUM, 24)} for customer cus_{pick(r, ALNUM, 14)}.",
        lambda r: f"payment_intent: pi_{pick(r, ALNUM, 24)}\nstatus: requires_capture",
        lambda r: f"Price ids: price_{pick(r, ALNUM, 24)} (monthly), price_{pick(r, ALNUM, 24)} (yearly)",
        lambda r: f"Webhook event evt_{pick(r, ALNUM, 24)} arrived twice; idempotency handled it.",
        lambda r: f"subscription sub_{pick(r, ALNUM, 24)} / invoice in_{pick(r, ALNUM, 24)}",
    ),
    "slack_ids": (
        lambda r: (
            f"Post alerts to channel C0{pick(r, UPPER_ALNUM, 9)} (#ops-alerts), mention <@U0{pick(r, UPPER_ALNUM, 9)}>."
        ),
        lambda r: (
            f"team_id=T0{pick(r, UPPER_ALNUM, 8)} channel_id=C0{pick(r, UPPER_ALNUM, 9)} ts=17{pick(r, DIGITS, 8)}.{pick(r, DIGITS, 6)}"
        ),
    ),
    "twilio_account_sid": (
        lambda r: f"Account SID (not secret, it's the username): AC{sha(r, 32)}",
        lambda r: f"messaging_service_sid: MG{sha(r, 32)}",
    ),
    "aws_identifiers": (
        lambda r: f"arn:aws:iam::{pick(r, DIGITS, 12)}:role/github-actions-deploy",
        lambda r: f"Instance i-0{sha(r, 16)} in subnet-0{sha(r, 16)}, sg-0{sha(r, 16)}",
        lambda r: f"AMI ami-0{sha(r, 16)} (Ubuntu 24.04), account {pick(r, DIGITS, 12)}",
        lambda r: (
            f"SecretId: arn:aws:secretsmanager:eu-west-1:{pick(r, DIGITS, 12)}:secret:prod/db-{pick(r, ALNUM, 6)}"
        ),
        lambda r: f"X-Amzn-Trace-Id: Root=1-{sha(r, 8)}-{sha(r, 24)}",
        lambda r: f"x-amz-request-id: {pick(r, UPPER_ALNUM, 16)}",
    ),
    "trace_ids": (
        lambda r: f"traceparent: 00-{sha(r, 32)}-{sha(r, 16)}-01",
        lambda r: f"{r.choice(DATES)} ERROR trace_id={sha(r, 32)} span_id={sha(r, 16)} upstream timeout",
        lambda r: f"dd.trace_id={r.randint(10**18, 10**19)} dd.span_id={r.randint(10**18, 10**19)}",
        lambda r: f"Sentry event {sha(r, 32)}: TypeError in checkout.js",
    ),
    "mongodb_object_id": (
        lambda r: f'db.orders.find({{_id: ObjectId("{sha(r, 24)}")}})',
        lambda r: f"user {sha(r, 24)} merged into {sha(r, 24)}",
    ),
    "base64_text": (
        lambda r: f"The payload field is base64: {b64(r.choice(PROSE_SENTENCES))}",
        lambda r: f"data:\n  README: {b64(r.choice(PROSE_SENTENCES))}",
        lambda r: f"echo {b64(r.choice(PROSE_SENTENCES))} | base64 -d",
    ),
    "base64_image": (
        lambda r: f'<img src="data:image/png;base64,{png_base64(r)}" alt="logo">',
        lambda r: f"background: url(data:image/png;base64,{png_base64(r)});",
    ),
    "lockfile_integrity": (
        lambda r: (
            f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{b64(rand_bytes(r, 64))}"\n}}'
        ),
        lambda r: (
            f'<script src="https://cdn.jsdelivr.net/npm/htmx.org@2.0.4" integrity="sha384-{b64(rand_bytes(r, 48))}" crossorigin="anonymous"></script>'
        ),
        lambda r: f"requests==2.32.3 \\\n    --hash=sha256:{sha(r, 64)}",
        lambda r: f"github.com/spf13/cobra v1.8.1 h1:{b64(rand_bytes(r, 32))}",
        lambda r: f'[[package]]\nname = "serde"\nversion = "1.0.215"\nchecksum = "{sha(r, 64)}"',
    ),
    # The values the providers' docs print as examples, exactly as printed.
    "documented_placeholder": (
        lambda r: (
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ),
        lambda r: "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        lambda r: "Authorization: Bearer FLWSECK_TEST-SANDBOXDEMOKEY-X",
        lambda r: "STRIPE_SECRET_KEY=sk_test_<your key>",
        lambda r: "OPENAI_API_KEY=<your-api-key>",
        lambda r: "SLACK_BOT_TOKEN=xoxb-your-token",
        lambda r: "Set GITHUB_TOKEN to your personal access token (ghp_...).",
        lambda r: 'headers = {"Authorization": "Bearer YOUR_API_KEY"}',
        lambda r: "DATABASE_URL=postgres://user:password@localhost:5432/mydb",
        lambda r: "curl -u api:YOUR_API_KEY https://api.mailgun.net/v3/YOUR_DOMAIN_NAME/messages",
    ),
    "secret_reference": (
        lambda r: "API_KEY=${API_KEY}",
        lambda r: 'token = os.environ["TOKEN"]',
        lambda r: (
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password"
        ),
        lambda r: "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        lambda r: (
            f"db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  {sha(r, 64)}\n  {sha(r, 64)}\n  {sha(r, 40)}"
        ),
        lambda r: "password: process.env.DB_PASSWORD,",
        lambda r: "OP_TOKEN=op://Engineering/Stripe/credential",
        lambda r: "secret_key = vault:secret/data/payments#stripe_key",
        lambda r: 'api_key = get_secret("partner-api-key")  # fetched at startup',
        lambda r: "STRIPE_SECRET_KEY=  # ask #payments for access",
    ),
    "ssh_public_key": (
        lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pick(r, B64, 43)} {r.choice(PEOPLE)}@laptop",
        lambda r: f"authorized_keys:\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{pick(r, B64, 300)}= deploy@ci",
        lambda r: (
            f"Add this deploy key (public): ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBB{pick(r, B64, 86)}="
        ),
    ),
    "pem_public_material": (
        lambda r: (
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(
                textwrap.wrap("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + b64(rand_bytes(r, 240)), 64)
            )
            + "\n-----END PUBLIC KEY-----"
        ),
        lambda r: (
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(textwrap.wrap("MIIDdzCCAl+gAwIBAgIE" + b64(rand_bytes(r, 420)), 64))
            + "\n-----END CERTIFICATE-----"
        ),
    ),
    "pgp_fingerprint": (
        lambda r: f"Release signing key fingerprint: {' '.join(pick(r, HEX.upper(), 4) for _ in range(10))}",
        lambda r: f"gpg --recv-keys {pick(r, HEX.upper(), 40)}",
    ),
    "wireguard_public_key": (
        lambda r: (
            f"[Peer]\nPublicKey = {b64(rand_bytes(r, 32))}\nAllowedIPs = 10.8.0.2/32\nEndpoint = vpn.acme.example:51820"
        ),
    ),
    "crypto_address": (
        lambda r: f"Donations: 0x{sha(r, 40)} (ETH)",
        lambda r: f"Contract deployed at 0x{sha(r, 40)}, tx 0x{sha(r, 64)}",
    ),
    "build_hashes": (
        lambda r: f'<link rel="stylesheet" href="/static/css/main.{sha(r, 8)}.css">',
        lambda r: f"dist/assets/index-{pick(r, B64URL, 8)}.js   142.31 kB │ gzip: 45.12 kB",
        lambda r: f"chunk {{{r.randint(100, 999)}}} vendors.{sha(r, 20)}.js 1.2 MiB [emitted] [immutable]",
        lambda r: f"Content-Security-Policy: script-src 'self' 'sha256-{b64(rand_bytes(r, 32))}'",
        lambda r: f"._container_{pick(r, B64URL, 5)}_1 {{ display: grid; }}",
    ),
    "youtube_ids": (
        lambda r: f"Talk recording: https://www.youtube.com/watch?v={pick(r, B64URL, 11)}&t=95s",
        lambda r: f"Playlist https://youtube.com/playlist?list=PL{pick(r, B64URL, 32)}",
    ),
    "docker_image_digest": (
        lambda r: f"image: ghcr.io/acme/api@sha256:{sha(r, 64)}",
        lambda r: f"FROM python:3.12-slim@sha256:{sha(r, 64)}",
        lambda r: f"{r.choice(DATES)} pulled postgres:16 digest: sha256:{sha(r, 64)}",
    ),
    "nix_store_path": (
        lambda r: f"/nix/store/{pick(r, NIX32, 32)}-python3-3.12.7/bin/python3",
        lambda r: f"these derivations will be built:\n  /nix/store/{pick(r, NIX32, 32)}-hello-2.12.1.drv",
    ),
    "ipfs_cid": (
        lambda r: f"ipfs://bafybei{pick(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)}",
        lambda r: f"Pinned Qm{pick(r, BASE58, 44)} to the cluster.",
    ),
    "mapbox_public_token": (
        # Mapbox docs: public tokens (pk.) are meant for client code.
        lambda r: (
            f"mapboxgl.accessToken = 'pk.{b64url(json.dumps({'u': 'acme', 'a': 'cl' + pick(r, LOWER_ALNUM, 23)}, separators=(',', ':')))}.{pick(r, B64URL, 22)}';"
        ),
    ),
    "analytics_ids": (
        lambda r: f"gtag('config', 'G-{pick(r, UPPER_ALNUM, 10)}');",
        lambda r: (
            f"Google Tag Manager container GTM-{pick(r, UPPER_ALNUM, 7)}, Meta pixel {pick(r, DIGITS, 16)}"
        ),
        lambda r: f"Sentry DSN project id {r.randint(1000000, 9999999)}, org o{r.randint(100000, 999999)}",
    ),
    "kubernetes_names": (
        lambda r: f"pod/api-{sha(r, 10)}-{pick(r, LOWER_ALNUM, 5)} CrashLoopBackOff",
        lambda r: (
            f"replicaset web-{sha(r, 9)} scaled to 3; node ip-10-0-{r.randint(0, 255)}-{r.randint(0, 255)}.ec2.internal"
        ),
        lambda r: f"containerID: containerd://{sha(r, 64)}",
    ),
    "prose_about_secrets": (
        lambda r: "Rotate the GitHub token every 90 days and keep it in the team vault, never in the repo.",
        lambda r: (
            "Reminder: the Stripe secret key lives in AWS Secrets Manager; rotate it after each offboarding."
        ),
        lambda r: "Die API-Schlüssel für Datadog werden jetzt über Vault verteilt, nicht mehr per .env.",
        lambda r: "Les jetons Slack doivent être régénérés après le départ d'un administrateur.",
        lambda r: "パスワードは1Passwordの「Infra」保管庫にあります。チャットに貼らないこと。",
        lambda r: "If a token leaks, revoke it first, then audit the logs for its use.",
        lambda r: "Usa siempre variables de entorno para las claves; nunca las escribas en el código.",
        lambda r: "The `password` field of the login form is masked and never logged.",
    ),
    "version_and_numbers": (
        lambda r: (
            f"Build {r.randint(1000, 9999)}.{r.randint(0, 99)} ({pick(r, HEX, 7)}) on {r.choice(DATES)}"
        ),
        lambda r: f"IBAN-like test data: DE{pick(r, DIGITS, 20)} (from the bank's sandbox docs)",
        lambda r: f"Order #{pick(r, DIGITS, 12)} tracking {pick(r, UPPER_ALNUM, 18)}",
    ),
}


@dataclass(frozen=True)
class Rendered:
    """A sample and the same text with the credential left undisguised, so a shape test can check that the
    secret piece really is part of the credential the text carries."""

    sample: Sample
    plain_text: str


def credential_samples(r: random.Random, k: Kind) -> list[Rendered]:
    out = []
    contexts = k.contexts if k.contexts is not None else NAMED + BARE
    for index in range(SAMPLES_PER_KIND):
        # The first of each kind is plain, so every kind is measured at least once undisguised.
        name = "plain" if index == 0 else r.choices(DISGUISES, DISGUISE_WEIGHTS)[0]
        cred = k.make(r)
        if name == "placeholder-word":
            cred = with_placeholder(r, k, cred)
        start, end = middle(cred)
        context = r.choice(contexts)
        context_seed = r.getrandbits(32)
        plain_text = context(random.Random(context_seed), k, cred.value)
        value, wrap = disguise(r, name, k, cred.value, start, end)
        text = context(random.Random(context_seed), k, value)
        if wrap is not None:
            text = wrap(text)
        sample = Sample(kind=k.name, group=k.group, text=text, disguise=name, secret=cred.value[start:end])
        out.append(Rendered(sample=sample, plain_text=plain_text))
    return out


def look_alike_samples(r: random.Random) -> list[Rendered]:
    out = []
    for name, makers in LOOK_ALIKES.items():
        for _ in range(LOOK_ALIKES_PER_KIND):
            text = r.choice(makers)(r)
            out.append(Rendered(sample=Sample(kind=name, group="look-alike", text=text), plain_text=text))
    return out


def aside_rendered(seed: int = SEED) -> list[Rendered]:
    r = random.Random(seed)
    rendered = [one for k in KINDS for one in credential_samples(r, k)]
    return rendered + look_alike_samples(r)


def aside_part() -> list[Sample]:
    return [one.sample for one in aside_rendered()]
