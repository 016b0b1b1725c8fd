"""Part "dev" of the independent secret corpus: credentials as the providers document them, in the texts an
agent stores as memories, with the disguises a careless paste or a deliberate attempt gives them, and the
look-alikes that share those texts but are not secrets.

Every generator is written from the provider's documented format (the comment beside each kind says where
the shape comes from), never from the filter's rules, which the author has not read. Values are random from
one fixed seed; no real token is copied.
"""

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 20261206
SAMPLES_PER_KIND = 6
LOOKALIKES_PER_KIND = 24

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
HEX = "0123456789abcdef"
HEX_UPPER = "0123456789ABCDEF"
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
BASE32 = UPPER + "234567"
# Base62 in GitHub's order (digits, upper, lower): the alphabet its token checksum is written in.
BASE62 = DIGITS + UPPER + LOWER
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
NIX32 = "0123456789abcdfghijklmnpqrsvwxyz"

GROUPS = ("cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas")
DISGUISES = (
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split",
    "placeholder_word",
)

# Words that make a real random token look like a placeholder when they happen to sit inside it.
PLACEHOLDER_WORDS = (
    "EXAMPLE",
    "xxxx",
    "XXXXXXXX",
    "sample",
    "test",
    "TEST",
    "dummy",
    "Example",
    "changeme",
    "fake",
    "demo",
    "placeholder",
    "deadbeef",
    "00000000",
    "12345678",
    "abcdef",
)

WORDS = (
    "velvet harbor quartz maple orbit cobalt lantern meadow falcon tundra copper ember willow saffron glacier "
    "pepper raven summit canyon hazel marble piano cactus nebula otter juniper violet cedar thunder pebble"
).split()


def pick(rng: random.Random, items):
    return items[rng.randrange(len(items))]


def chars(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + chars(rng, DIGITS, n - 1)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def rand_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.randrange(256) for _ in range(n))


def uuid4(rng: random.Random) -> str:
    h = chars(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{pick(rng, '89ab')}{h[17:20]}-{h[20:]}"


def base62_crc32(body: str) -> str:
    """GitHub and npm token checksum: CRC32 of the random part, base62-encoded, left-padded to 6."""
    value = zlib.crc32(body.encode()) & 0xFFFFFFFF
    out = ""
    while value:
        value, rest = divmod(value, 62)
        out = BASE62[rest] + out
    return out.rjust(6, "0")


def b64_span(raw: str, part: str, encoded: str) -> str:
    """The run of `encoded` (base64 of `raw`, standard or URL-safe) that encodes only bytes of `part`: the
    piece of an encoded credential that carries its secret rather than the JSON or user name around it."""
    start = raw.encode().index(part.encode())
    end = start + len(part.encode())
    first, last = -(-start // 3), end // 3
    return encoded[first * 4 : last * 4]


def pem(label: str, der: bytes, width: int = 64) -> str:
    body = b64(der)
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def jwt(header: dict, payload: dict, signature: bytes) -> str:
    return ".".join(
        (
            b64url(json.dumps(header, separators=(",", ":")).encode()),
            b64url(json.dumps(payload, separators=(",", ":")).encode()),
            b64url(signature),
        )
    )


class Gen:
    """The random source a credential generator draws from.

    `secret` draws the credential's main random part; when a placeholder word is asked for (the
    placeholder_word disguise) and fits the alphabet, it lands inside that part, before any checksum is
    computed, so the token stays well-formed. `mark` names the main part when it is derived (a base64 of
    user:password, a PEM body line).
    """

    def __init__(self, rng: random.Random, placeholder: str | None = None) -> None:
        self.rng = rng
        self.placeholder = placeholder
        self.main = ""

    def secret(self, alphabet: str, n: int) -> str:
        body = chars(self.rng, alphabet, n)
        word = self.placeholder
        if word and len(word) + 6 <= n and set(word) <= set(alphabet):
            at = self.rng.randrange(3, n - len(word) - 2)
            body = body[:at] + word + body[at + len(word) :]
        self.main = body
        return body

    def mark(self, part: str) -> str:
        self.main = part
        return part

    def password(self) -> str:
        rng = self.rng
        words = [pick(rng, WORDS) for _ in range(3)]
        if self.placeholder and self.placeholder.isalpha():
            words[1] = self.placeholder
        words = [w.capitalize() if rng.random() < 0.5 else w for w in words]
        sep = pick(rng, ["-", "_", ".", "", "!", "#"])
        return self.mark(
            sep.join(words) + str(rng.randint(10, 9999)) + pick(rng, ["", "!", "?", "$", "%", "&"])
        )


# A context makes the memory text around a value: (rng, variable name, value) -> text.
Context = Callable[[random.Random, str, str], str]


@dataclass(frozen=True)
class CredKind:
    name: str
    group: str
    make: Callable[[Gen], str]
    # Variable names people store it under; the first is the provider's own (its SDK's or CLI's).
    names: tuple[str, ...]
    # Texts specific to the credential (an HTTP header, a CLI login), used alongside the shared ones.
    extra: tuple[Context, ...] = ()
    # A value that is only a credential because of the name it sits under (32 hex, a UUID, a password).
    needs_name: bool = False
    # A multi-line value (PEM, JSON key file, kubeconfig): line-oriented disguises do not apply.
    block: bool = False


# --- Texts around a value ----------------------------------------------------------------------------------

SERVICES = ("billing", "api", "worker", "ingest", "search", "webhooks", "reports", "auth", "notifier", "etl")
PEOPLE = ("Marta", "Kenji", "Priya", "Lukas", "Amara", "Tomás", "Yuki", "Olu", "Ines", "Dmitri")
HOSTS = ("staging-eu", "prod-us-east", "dev-box", "ci-runner-3", "bastion", "k8s-node-2", "laptop")


def lower(name: str) -> str:
    return name.lower()


def camel(name: str) -> str:
    head, *rest = name.lower().split("_")
    return head + "".join(p.capitalize() for p in rest)


def dotted(name: str) -> str:
    return name.lower().replace("_", ".")


def day(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}"


def clock(rng: random.Random) -> str:
    return f"{day(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


# What agents themselves write down: lessons, session summaries, preferences, handoffs.
AGENT_NOTES: tuple[Context, ...] = (
    lambda r, n, v: (
        f"Learned: when the {pick(r, SERVICES)} build fails with 401, re-export {n}={v} from the team vault and retry."
    ),
    lambda r, n, v: (
        f"Session summary ({day(r)}): fixed the webhook retry; set {n} to {v} in .env.local; tests green."
    ),
    lambda r, n, v: f"User preference: always use the staging {n} ({v}) for local runs, never the prod one.",
    lambda r, n, v: (
        f"Handoff: {n} was {v} until today; next step is to swap it for a scoped token and update the runbook."
    ),
)


# Texts that put the value under a variable name: config files, code, shells, chats that name it.
ASSIGN: tuple[Context, ...] = (
    lambda r, n, v: (
        f"# {pick(r, SERVICES)} on {pick(r, HOSTS)}, copied from the vault on {day(r)}\n{n}={v}\nLOG_LEVEL=info\n"
    ),
    lambda r, n, v: f'export {n}="{v}"\n./scripts/deploy.sh --env {pick(r, ["staging", "prod"])}',
    lambda r, n, v: f"{pick(r, SERVICES)}:\n  {lower(n)}: {v}\n  region: eu-west-1\n  retries: 3\n",
    lambda r, n, v: (
        f'{{"{lower(n)}": "{v}", "timeout_s": {r.randint(5, 60)}, "service": "{pick(r, SERVICES)}"}}'
    ),
    lambda r, n, v: (
        f'[{pick(r, SERVICES)}]\n{lower(n)} = "{v}"\nendpoint = "https://{pick(r, SERVICES)}.internal"\n'
    ),
    lambda r, n, v: f"[{pick(r, SERVICES)}]\n{lower(n)}={v}\nverify_ssl=true\n",
    lambda r, n, v: (
        f'variable "{lower(n)}" {{\n  type      = string\n  sensitive = true\n  default   = "{v}"\n}}'
    ),
    lambda r, n, v: (
        f'<appSettings>\n  <add key="{n}" value="{v}" />\n  <add key="Environment" value="Staging" />\n</appSettings>'
    ),
    lambda r, n, v: (
        f"services:\n  {pick(r, SERVICES)}:\n    image: ghcr.io/acme/{pick(r, SERVICES)}:1.{r.randint(0, 30)}\n    environment:\n      - {n}={v}\n      - PORT=8080\n"
    ),
    lambda r, n, v: (
        f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {pick(r, SERVICES)}-env\ntype: Opaque\nstringData:\n  {n}: "{v}"\n'
    ),
    lambda r, n, v: (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {n}: {v}\n    steps:\n      - uses: actions/checkout@v4\n"
    ),
    lambda r, n, v: f'{n} = "{v}"  # TODO: move to env before merging',
    lambda r, n, v: f'import os\n\nos.environ.setdefault("{n}", "{v}")\nclient = make_client()',
    lambda r, n, v: f"const {camel(n)} = '{v}';\nexport default {{ {camel(n)} }};",
    lambda r, n, v: f'func init() {{\n\tos.Setenv("{n}", "{v}")\n}}',
    lambda r, n, v: f'std::env::set_var("{n}", "{v}");',
    lambda r, n, v: f"# application-{pick(r, ['dev', 'prod'])}.properties\n{dotted(n)}={v}\nserver.port=8443",
    lambda r, n, v: f'$env:{n} = "{v}"\n.\\run.ps1 -Verbose',
    lambda r, n, v: (
        f'FROM python:3.12-slim\nENV {n}={v}\nRUN pip install -r requirements.txt\nCMD ["python", "-m", "app"]'
    ),
    lambda r, n, v: f"[Service]\nEnvironment={n}={v}\nExecStart=/usr/local/bin/{pick(r, SERVICES)}\n",
    lambda r, n, v: f'{lower(n)} = "{v}"\nregion = "eu-central-1"',
    lambda r, n, v: f'- hosts: {pick(r, SERVICES)}\n  vars:\n    {lower(n)}: "{v}"\n  roles:\n    - app',
    lambda r, n, v: (
        f"| variable | value | owner |\n|---|---|---|\n| `{n}` | `{v}` | {pick(r, PEOPLE)} |\n| `REGION` | `eu-west-1` | ops |"
    ),
    lambda r, n, v: f"{clock(r)} DEBUG config.loader loaded {n}={v} source=env pid={r.randint(100, 99999)}",
    lambda r, n, v: (
        f"Traceback (most recent call last):\n  File \"/app/{pick(r, SERVICES)}/client.py\", line {r.randint(20, 400)}, in connect\n    raise AuthError(resp.status)\n  locals: {lower(n)} = '{v}'\nAuthError: 401"
    ),
    lambda r, n, v: f"hey, the {n} for staging is {v} — don't paste it anywhere public pls",
    lambda r, n, v: f"Hier ist der {n} für die Testumgebung: {v} (bitte nach dem Release rotieren)",
    lambda r, n, v: f"Le {n} de prod est {v}, à changer après la démo de jeudi.",
    lambda r, n, v: f"El {n} nuevo es {v} (lo pidió {pick(r, PEOPLE)} para el despliegue).",
    lambda r, n, v: f"{n} は {v} です。本番用なので取り扱い注意。",
    lambda r, n, v: f"O {n} do ambiente de homologação é {v}",
    lambda r, n, v: f"Il {n} per la pipeline è {v}, l'ho messo anche nel wiki.",
    lambda r, n, v: f"De {n} voor acceptatie: {v} — niet committen!",
    lambda r, n, v: f"Nowy {n} dla środowiska testowego: {v}",
    lambda r, n, v: f"Новый {n} для стейджинга: {v}, старый отозван.",
    lambda r, n, v: f"{n} 已经更新为 {v}，旧的明天作废。",
    lambda r, n, v: f"스테이징 {n} 값은 {v} 입니다.",
    lambda r, n, v: f"Yeni {n} değeri: {v} (eskisi iptal edildi)",
    lambda r, n, v: (
        f"Project note ({day(r)}): CI reads {n} from the repo settings; the current value is {v}. Ask {pick(r, PEOPLE)} before rotating."
    ),
    lambda r, n, v: f"{n} ?= {v}\n\ndeploy:\n\t./bin/deploy --token $({n})",
    lambda r, n, v: f"# .envrc\nexport {n}={v}\nlayout python3",
    lambda r, n, v: f"docker run --rm -e {n}={v} -p 8080:8080 acme/{pick(r, SERVICES)}:latest",
    lambda r, n, v: (
        f"helm upgrade --install {pick(r, SERVICES)} ./chart --set env.{n}={v} -n {pick(r, SERVICES)}"
    ),
    lambda r, n, v: (
        f"kubectl create secret generic {pick(r, SERVICES)}-creds --from-literal={lower(n)}={v} -n prod"
    ),
    lambda r, n, v: f'gh secret set {n} --body "{v}" --repo acme/{pick(r, SERVICES)}',
    lambda r, n, v: f"heroku config:set {n}={v} -a acme-{pick(r, SERVICES)}",
    lambda r, n, v: f"fly secrets set {n}={v} --app acme-{pick(r, SERVICES)}",
    lambda r, n, v: f'{{\n  "Logging": {{ "LogLevel": {{ "Default": "Information" }} }},\n  "{n}": "{v}"\n}}',
    lambda r, n, v: f'ENV["{n}"] ||= "{v}"',
    lambda r, n, v: f"<?php\ndefine('{n}', '{v}');",
    lambda r, n, v: f"INSERT INTO settings (key, value) VALUES ('{lower(n)}', '{v}');",
    lambda r, n, v: f"name,value,env\n{n},{v},production\nREGION,eu-west-1,production",
    lambda r, n, v: f"set -x output from the failing job:\n+ {n}={v}\n+ curl -sf https://api.internal/health",
    lambda r, n, v: (
        f"Memory: {pick(r, PEOPLE)} shared the {lower(n).replace('_', ' ')} in chat: {v}. It expires end of quarter."
    ),
    *AGENT_NOTES,
)


# Texts where the value stands alone: chats, logs, commands, notes. Only for values recognisable by shape.
FREE: tuple[Context, ...] = (
    lambda r, n, v: f"here's the token you asked for: {v}",
    lambda r, n, v: f"Ich habe den neuen Schlüssel erzeugt: {v} — gilt 30 Tage.",
    lambda r, n, v: f"Voici la clé pour le bot : {v}",
    lambda r, n, v: f"Te paso la clave: {v}",
    lambda r, n, v: f"新しいキー: {v}",
    lambda r, n, v: f"Ключ для бота: {v}",
    lambda r, n, v: f"Chave gerada agora: {v}",
    lambda r, n, v: f"新的密钥：{v}",
    lambda r, n, v: f"Deploy note {day(r)}: rotated after the incident, new one is {v}",
    lambda r, n, v: f"{clock(r)} WARN http.client 401 from upstream, credential={v} retry=2",
    lambda r, n, v: f"- [x] create token ({v})\n- [ ] add it to the CI settings\n- [ ] delete the old one",
    lambda r, n, v: f'client = make_client(credential="{v}", timeout=30)',
    lambda r, n, v: (
        f'{{"type": "fact", "content": "the {pick(r, SERVICES)} integration authenticates with {v}"}}'
    ),
    lambda r, n, v: f"git commit -m 'temp: hardcode {v} until the vault sidecar works'",
    lambda r, n, v: f'ValueError: credential "{v}" was rejected by the server (HTTP 403)',
    lambda r, n, v: f"@{pick(r, PEOPLE).lower()} can you try with {v}? mine works",
    lambda r, n, v: f"> {v}\nthat's the one from the dashboard, the other was revoked",
    lambda r, n, v: f"TODO(rotate): {v} is still used by the cron on {pick(r, HOSTS)}",
    lambda r, n, v: (
        f"Fact: the {pick(r, SERVICES)} service account authenticates with {v} (created by {pick(r, PEOPLE)})."
    ),
    lambda r, n, v: f"Gotcha: the CLI silently ignores {v} unless it is passed before the subcommand.",
)


def bearer_contexts(scheme: str = "Bearer", header: str = "Authorization") -> tuple[Context, ...]:
    return (
        lambda r, n, v: f'curl -s -H "{header}: {scheme} {v}" https://api.example.net/v1/{pick(r, SERVICES)}',
        lambda r, n, v: (
            f"GET /v1/{pick(r, SERVICES)} HTTP/1.1\nHost: api.example.net\n{header}: {scheme} {v}\nAccept: application/json"
        ),
        lambda r, n, v: f'headers = {{"{header}": "{scheme} {v}", "Content-Type": "application/json"}}',
        lambda r, n, v: f"{clock(r)} DEBUG httpx request headers={{'{header.lower()}': '{scheme} {v}'}}",
    )


def header_contexts(header: str) -> tuple[Context, ...]:
    return (
        lambda r, n, v: f'curl -H "{header}: {v}" https://api.example.net/v2/{pick(r, SERVICES)}',
        lambda r, n, v: f"POST /ingest HTTP/1.1\n{header}: {v}\nContent-Type: application/json",
        lambda r, n, v: f'fetch(url, {{ headers: {{ "{header}": "{v}" }} }})',
    )


# Texts for multi-line values (key files, JSON key files, kubeconfigs).
BLOCK: tuple[Context, ...] = (
    lambda r, n, v: f"Saved the file for the {pick(r, SERVICES)} deploy:\n```\n{v}\n```",
    lambda r, n, v: f"$ cat ~/.config/{pick(r, SERVICES)}/{lower(n)}\n{v}\n$ ",
    lambda r, n, v: f"{lower(n)}: |\n" + "\n".join("  " + line for line in v.split("\n")),
    lambda r, n, v: f'{n} = """\n{v}\n"""',
    lambda r, n, v: f"{lower(n)} = <<EOT\n{v}\nEOT",
    lambda r, n, v: f"Kenji hat mir die Datei geschickt, hier zur Sicherheit:\n{v}\nBitte nicht weitergeben.",
    lambda r, n, v: f"Note for next session: the deploy uses this ({day(r)}):\n\n{v}\n",
)


# --- Credential generators, from the providers' documented formats -----------------------------------------


def github_token(g: Gen, prefix: str) -> str:
    # GitHub blog "Behind GitHub's new authentication token formats" (2021): a 3-letter prefix and "_", 30
    # base62 characters of entropy, then a 6-character base62 CRC32 checksum of those 30.
    body = g.secret(ALNUM, 30)
    return f"{prefix}_{body}{base62_crc32(body)}"


def aws_pair(g: Gen, key_prefix: str = "AKIA") -> str:
    # AWS IAM docs: access key ids are 20 upper-case characters starting AKIA (long-term) or ASIA
    # (temporary); the secret access key is 40 characters of base64's alphabet.
    key_id = key_prefix + chars(g.rng, BASE32, 16)
    secret = g.secret(B64, 40)
    return f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}"


def aws_session(g: Gen) -> str:
    # AWS STS docs: temporary credentials are an ASIA key id, a secret key and a long session token
    # (base64, starting "IQoJb3JpZ2luX2Vj" = b64 of "\x09origin_ec" for current tokens).
    key_id = "ASIA" + chars(g.rng, BASE32, 16)
    secret = g.secret(B64, 40)
    session = "IQoJb3JpZ2luX2VjE" + chars(g.rng, B64, 340) + "=="
    return f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}\nAWS_SESSION_TOKEN={session}"


def pkcs8_rsa_der(g: Gen) -> bytes:
    # RFC 5208 PrivateKeyInfo for rsaEncryption, 2048-bit: the DER header every such key starts with,
    # then key material.
    header = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100")
    return header + rand_bytes(g.rng, 1217 - len(header))


def mark_pem_line(g: Gen, text: str, line: int | None = None) -> str:
    """Take a body line (from the middle unless told) of a PEM block as the part that must not survive."""
    body = text.split("\n")[1:-1]
    with_word = [each for each in body if g.placeholder and g.placeholder in each]
    g.mark(with_word[0] if with_word else body[len(body) // 2 if line is None else line])
    return text


def placeholder_der(g: Gen, der: bytes) -> bytes:
    """Let a placeholder word show in the base64 body: decode the word's base64 position into the bytes."""
    if not g.placeholder or not set(g.placeholder) <= set(B64) or len(g.placeholder) % 4:
        return der
    raw = base64.b64decode(g.placeholder)
    at = (len(der) // 2) // 3 * 3
    return der[:at] + raw + der[at + len(raw) :]


def rsa_private_key(g: Gen) -> str:
    # RFC 7468 / OpenSSL: "-----BEGIN PRIVATE KEY-----", base64 of PKCS#8 DER in 64-character lines.
    return mark_pem_line(g, pem("PRIVATE KEY", placeholder_der(g, pkcs8_rsa_der(g))))


def rsa_traditional_key(g: Gen) -> str:
    # OpenSSL traditional format: "-----BEGIN RSA PRIVATE KEY-----", PKCS#1 RSAPrivateKey DER.
    der = bytes.fromhex("308204a40201000282010100") + rand_bytes(g.rng, 1180)
    return mark_pem_line(g, pem("RSA PRIVATE KEY", placeholder_der(g, der)))


def ec_private_key(g: Gen) -> str:
    # RFC 5915 ECPrivateKey for P-256: 30 77 02 01 01 04 20 <32-byte scalar> a0 0a <prime256v1 oid> a1 44 ...
    der = (
        bytes.fromhex("30770201010420")
        + rand_bytes(g.rng, 32)
        + bytes.fromhex("a00a06082a8648ce3d030107a14403420004")
        + rand_bytes(g.rng, 64)
    )
    return mark_pem_line(g, pem("EC PRIVATE KEY", placeholder_der(g, der)))


def openssh_private_key(g: Gen) -> str:
    # OpenSSH PROTOCOL.key: "openssh-key-v1\0", cipher/kdf "none", one ed25519 key; base64 in 70-char lines.
    rng = g.rng
    pub = rand_bytes(rng, 32)
    blob = (
        b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x33"
        + b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"
        + pub
        + b"\x00\x00\x00\x88"
        + rand_bytes(rng, 8)
        + b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20"
        + pub
        + b"\x00\x00\x00\x40"
        + rand_bytes(rng, 64)
        + b"\x00\x00\x00\x0cdeploy@ci-01\x01\x02\x03"
    )
    # The line before the last holds the 64-byte private half; the middle one mostly the public key.
    return mark_pem_line(g, pem("OPENSSH PRIVATE KEY", placeholder_der(g, blob), width=70), line=-2)


def gcp_service_account(g: Gen) -> str:
    # Google Cloud IAM docs, "Create service account keys": a JSON file with type "service_account",
    # private_key_id (40 hex), private_key (PKCS#8 PEM with \n escapes), client_email, client_id (21 digits).
    rng = g.rng
    project = f"{pick(rng, WORDS)}-{pick(rng, WORDS)}-{rng.randint(100000, 999999)}"
    key = rsa_private_key(g).replace("\n", "\\n")
    sa = f"{pick(rng, SERVICES)}-sa@{project}.iam.gserviceaccount.com"
    return (
        "{\n"
        '  "type": "service_account",\n'
        f'  "project_id": "{project}",\n'
        f'  "private_key_id": "{chars(rng, HEX, 40)}",\n'
        f'  "private_key": "{key}\\n",\n'
        f'  "client_email": "{sa}",\n'
        f'  "client_id": "{digits(rng, 21)}",\n'
        '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",\n'
        '  "token_uri": "https://oauth2.googleapis.com/token"\n'
        "}"
    )


def kubeconfig_sa_token(g: Gen) -> str:
    # Kubernetes docs "Service account tokens": an RS256 JWT (issuer the API server, subject
    # system:serviceaccount:<ns>:<name>) placed under users[].user.token in a kubeconfig.
    rng = g.rng
    ns, name = pick(rng, SERVICES), pick(rng, ["deployer", "ci", "argocd", "reader"])
    now = 1780000000 + rng.randint(0, 9000000)
    token = jwt(
        {"alg": "RS256", "kid": chars(rng, B64URL, 43)},
        {
            "aud": ["https://kubernetes.default.svc.cluster.local"],
            "exp": now + 31536000,
            "iat": now,
            "iss": "https://kubernetes.default.svc.cluster.local",
            "sub": f"system:serviceaccount:{ns}:{name}",
        },
        rand_bytes(rng, 256),
    )
    sig = token.rsplit(".", 1)[1]
    g.mark(sig[100:160])
    return (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    server: https://10.{rng.randint(0, 255)}.0.1:6443\n  name: {ns}\n"
        f"contexts:\n- context:\n    cluster: {ns}\n    user: {name}\n  name: {ns}\ncurrent-context: {ns}\n"
        f"users:\n- name: {name}\n  user:\n    token: {token}"
    )


def kubeadm_bootstrap(g: Gen) -> str:
    # Kubernetes docs "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}, id.secret.
    token_id = chars(g.rng, LOWER_ALNUM, 6)
    return f"{token_id}.{g.secret(LOWER_ALNUM, 16)}"


def azure_storage_conn(g: Gen) -> str:
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol, AccountName,
    # AccountKey (base64 of a 64-byte key, 88 characters), EndpointSuffix.
    account = pick(g.rng, WORDS) + chars(g.rng, LOWER_ALNUM, 6)
    key = g.secret(B64, 86) + "=="
    return f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};EndpointSuffix=core.windows.net"


def azure_sas_url(g: Gen) -> str:
    # Azure Storage docs "Create an account SAS": sv, ss, srt, sp, se, st, spr, then sig = base64 of an
    # HMAC-SHA256 (44 characters), URL-encoded in the query string.
    rng = g.rng
    sig = g.mark(quote(b64(rand_bytes(rng, 32)), safe=""))
    account = pick(rng, WORDS) + chars(rng, LOWER_ALNUM, 5)
    return (
        f"https://{account}.blob.core.windows.net/{pick(rng, SERVICES)}?sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx"
        f"&se={day(rng)}T18:00:00Z&st={day(rng)}T09:00:00Z&spr=https&sig={sig}"
    )


def azure_servicebus_conn(g: Gen) -> str:
    # Azure Service Bus docs "Get the connection string": Endpoint=sb://<ns>.servicebus.windows.net/;
    # SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=<base64 of 32 bytes, 44 chars>.
    ns = pick(g.rng, WORDS) + "-" + pick(g.rng, SERVICES)
    key = g.secret(B64, 43) + "="
    return f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"


def azure_cosmos_conn(g: Gen) -> str:
    # Azure Cosmos DB docs: AccountEndpoint=https://<account>.documents.azure.com:443/;AccountKey=<88 b64>;
    account = pick(g.rng, WORDS) + "-cosmos"
    return f"AccountEndpoint=https://{account}.documents.azure.com:443/;AccountKey={g.secret(B64, 86)}==;"


def azure_client_secret(g: Gen) -> str:
    # Microsoft Entra app registrations: client secrets issued since 2022 are 40 characters, 3 random
    # characters, the identifiable "8Q~", then 34 of [A-Za-z0-9_.~-].
    return chars(g.rng, ALNUM, 3) + "8Q~" + g.secret(ALNUM + "_.~-", 34)


def digitalocean_token(g: Gen, prefix: str) -> str:
    # DigitalOcean docs "Personal access tokens": dop_v1_ (personal), doo_v1_ (OAuth), dor_v1_ (refresh),
    # followed by 64 hex characters.
    return f"{prefix}_v1_{g.secret(HEX, 64)}"


def vault_token(g: Gen) -> str:
    # HashiCorp Vault docs "Tokens" (1.10+): service tokens start "hvs.", then 90+ base62/-_ characters.
    return "hvs." + "CAESI" + g.secret(B64URL, 86)


def terraform_token(g: Gen) -> str:
    # HCP Terraform API tokens: 14 characters, ".atlasv1.", then 67 characters.
    return chars(g.rng, ALNUM, 14) + ".atlasv1." + g.secret(ALNUM, 67)


def alibaba_pair(g: Gen) -> str:
    # Alibaba Cloud RAM docs: AccessKey ID starts "LTAI" (24 characters), AccessKey secret 30 characters.
    return f"AccessKeyId: LTAI{chars(g.rng, ALNUM, 20)}\nAccessKeySecret: {g.secret(ALNUM, 30)}"


def gitlab_token(g: Gen, prefix: str, alphabet: str = B64URL, n: int = 20) -> str:
    # GitLab docs "Token overview / token prefixes": glpat- personal, glrt- runner authentication,
    # glptt- pipeline trigger (40 hex), gldt- deploy token; 20 random characters for the prefixed ones.
    return prefix + g.secret(alphabet, n)


def slack_bot(g: Gen) -> str:
    # Slack docs "Token types": bot tokens xoxb-<team digits>-<bot digits>-<24 alphanumerics>.
    return f"xoxb-{digits(g.rng, 12)}-{digits(g.rng, 13)}-{g.secret(ALNUM, 24)}"


def slack_user(g: Gen) -> str:
    # Slack docs "Token types": user tokens xoxp-<digits>-<digits>-<digits>-<32 hex>.
    rng = g.rng
    return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{g.secret(HEX, 32)}"


def slack_app(g: Gen) -> str:
    # Slack docs "App-level tokens": xapp-1-A<app id>-<digits>-<64 hex>.
    return f"xapp-1-A{chars(g.rng, UPPER_ALNUM, 10)}-{digits(g.rng, 13)}-{g.secret(HEX, 64)}"


def slack_webhook(g: Gen) -> str:
    # Slack docs "Sending messages using incoming webhooks": https://hooks.slack.com/services/T.../B.../<24>.
    rng = g.rng
    return f"https://hooks.slack.com/services/T{chars(rng, UPPER_ALNUM, 10)}/B{chars(rng, UPPER_ALNUM, 10)}/{g.secret(ALNUM, 24)}"


def discord_bot(g: Gen) -> str:
    # Discord developer docs / discord.py: base64 of the bot's snowflake id, ".", 6-character timestamp,
    # ".", HMAC part (38 characters in tokens issued since 2022).
    bot_id = digits(g.rng, 19)
    return f"{b64url(bot_id.encode())}.{chars(g.rng, B64URL, 6)}.{g.secret(B64URL, 38)}"


def discord_webhook(g: Gen) -> str:
    # Discord docs "Intro to Webhooks": https://discord.com/api/webhooks/<snowflake>/<68-character token>.
    return f"https://discord.com/api/webhooks/{digits(g.rng, 19)}/{g.secret(B64URL, 68)}"


def telegram_bot(g: Gen) -> str:
    # Telegram Bot API docs: "<bot id>:<35 characters>", the second part starting "AA" in current tokens.
    return f"{digits(g.rng, 10)}:AA{g.secret(B64URL, 33)}"


def teams_webhook(g: Gen) -> str:
    # Microsoft Teams docs "Create an Incoming Webhook": https://<tenant>.webhook.office.com/webhookb2/
    # <group uuid>@<tenant uuid>/IncomingWebhook/<32 hex>/<uuid>.
    rng = g.rng
    return (
        f"https://acme{chars(rng, LOWER, 4)}.webhook.office.com/webhookb2/{uuid4(rng)}@{uuid4(rng)}"
        f"/IncomingWebhook/{g.secret(HEX, 32)}/{uuid4(rng)}"
    )


def twilio_api_key(g: Gen) -> str:
    # Twilio docs "API keys": an API key SID "SK" + 32 hex and its secret, 32 alphanumerics.
    return f"TWILIO_API_KEY=SK{chars(g.rng, HEX, 32)}\nTWILIO_API_SECRET={g.secret(ALNUM, 32)}"


def matrix_token(g: Gen) -> str:
    # Synapse (Matrix) access tokens: "syt_" + base64 of the localpart + "_" + 20 random + "_" + 6 base62.
    user = pick(g.rng, WORDS) + "bot"
    return f"syt_{b64url(user.encode())}_{g.secret(ALNUM, 20)}_{chars(g.rng, ALNUM, 6)}"


def stripe_key(g: Gen, prefix: str, n: int = 99) -> str:
    # Stripe docs "API keys": secret keys sk_live_, restricted keys rk_live_ (only live keys act on real
    # money); current keys carry 99 characters after the prefix (older ones 24).
    return prefix + g.secret(ALNUM, n)


def braintree_token(g: Gen) -> str:
    # Braintree/PayPal docs: access tokens "access_token$production$<16 alnum>$<32 hex>".
    return f"access_token$production${chars(g.rng, LOWER_ALNUM, 16)}${g.secret(HEX, 32)}"


def square_token(g: Gen) -> str:
    # Square developer docs: production access tokens start "EAAA", 64 characters of [A-Za-z0-9_-].
    return "EAAA" + g.secret(B64URL, 60)


def square_secret(g: Gen) -> str:
    # Square OAuth docs: application secrets "sq0csp-" + 43 characters.
    return "sq0csp-" + g.secret(B64URL, 43)


def flutterwave_secret(g: Gen) -> str:
    # Flutterwave docs "API keys": secret keys FLWSECK-<32 hex>-X (test keys FLWSECK_TEST-).
    return f"FLWSECK-{g.secret(HEX, 32)}-X"


def razorpay_pair(g: Gen) -> str:
    # Razorpay docs "Generate API keys": key id rzp_live_ + 14 alnum and a 24-character key secret.
    return f"key_id: rzp_live_{chars(g.rng, ALNUM, 14)}\nkey_secret: {g.secret(ALNUM, 24)}"


def url_with_password(scheme: str, port: int, path: str, user: str = "") -> Callable[[Gen], str]:
    # RFC 3986 userinfo: scheme://user:password@host:port/path, as the drivers' docs show their DSNs.
    def make(g: Gen) -> str:
        rng = g.rng
        who = user or pick(rng, ["app", "admin", "svc_" + pick(rng, SERVICES), "readonly", "etl"])
        password = g.password() if rng.random() < 0.5 else g.secret(ALNUM, rng.randint(16, 32))
        host = f"{pick(rng, SERVICES)}-db.{pick(rng, ['internal', 'eu-west-1.rds.amazonaws.com', 'acme.io'])}"
        return f"{scheme}://{who}:{password}@{host}:{port}{path}"

    return make


def mongodb_srv(g: Gen) -> str:
    # MongoDB Atlas docs "Connect via drivers": mongodb+srv://<user>:<password>@<cluster>.<id>.mongodb.net/
    rng = g.rng
    return (
        f"mongodb+srv://{pick(rng, SERVICES)}:{g.secret(ALNUM, 20)}@cluster0.{chars(rng, LOWER_ALNUM, 5)}"
        ".mongodb.net/?retryWrites=true&w=majority"
    )


def pgpass_line(g: Gen) -> str:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password, one per line.
    rng = g.rng
    return f"{pick(rng, SERVICES)}-db.internal:5432:{pick(rng, SERVICES)}:app:{g.password()}"


def jdbc_url(g: Gen) -> str:
    # PostgreSQL JDBC docs "Connecting to the database": jdbc:postgresql://host:port/db?user=..&password=..
    rng = g.rng
    return f"jdbc:postgresql://{pick(rng, SERVICES)}-db:5432/{pick(rng, SERVICES)}?user=app&password={g.secret(ALNUM, 22)}&ssl=true"


def sqlserver_conn(g: Gen) -> str:
    # Microsoft docs "SqlConnection.ConnectionString": Server=...;Database=...;User ID=...;Password=...;
    rng = g.rng
    return (
        f"Server=tcp:{pick(rng, WORDS)}-sql.database.windows.net,1433;Initial Catalog={pick(rng, SERVICES)};"
        f"Persist Security Info=False;User ID=sqladmin;Password={g.password()};Encrypt=True;"
    )


def mysql_create_user(g: Gen) -> str:
    # MySQL reference "CREATE USER": CREATE USER 'u'@'host' IDENTIFIED BY 'auth_string'.
    return f"CREATE USER '{pick(g.rng, SERVICES)}'@'%' IDENTIFIED BY '{g.password()}';\nGRANT SELECT ON app.* TO '{pick(g.rng, SERVICES)}'@'%';"


def redis_requirepass(g: Gen) -> str:
    # Redis docs "Redis security" / redis.conf: requirepass <password>.
    return f"bind 0.0.0.0\nport 6379\nrequirepass {g.secret(ALNUM, 32)}\nmaxmemory 2gb"


def supabase_service_role(g: Gen) -> str:
    # Supabase docs "API keys": the service_role key is an HS256 JWT with role "service_role".
    rng = g.rng
    ref = chars(rng, LOWER, 20)
    token = jwt(
        {"alg": "HS256", "typ": "JWT"},
        {
            "iss": "supabase",
            "ref": ref,
            "role": "service_role",
            "iat": 1700000000 + rng.randint(0, 9999999),
            "exp": 2015000000,
        },
        rand_bytes(rng, 32),
    )
    g.mark(token.rsplit(".", 1)[1][5:35])
    return token


def planetscale_password(g: Gen) -> str:
    # PlanetScale docs "Connection strings": passwords pscale_pw_ + 43 characters.
    return "pscale_pw_" + g.secret(B64URL, 43)


def npm_token(g: Gen) -> str:
    # GitHub changelog 2021-09-23 "npm has a new access token format": npm_ + 30 base62 + 6 CRC32 checksum.
    body = g.secret(ALNUM, 30)
    return f"npm_{body}{base62_crc32(body)}"


def pypi_token(g: Gen) -> str:
    # PyPI docs "API tokens": "pypi-" + a base64url macaroon whose first bytes encode "pypi.org"
    # ("AgEIcHlwaS5vcmc"), around 180 characters.
    return "pypi-AgEIcHlwaS5vcmcCJ" + g.secret(B64URL, 64) + chars(g.rng, B64URL, 110)


def docker_config_auth(g: Gen) -> str:
    # Docker docs "docker login / credentials store": ~/.docker/config.json "auths" with "auth" the
    # base64 of "username:password".
    rng = g.rng
    user = pick(rng, WORDS) + str(rng.randint(1, 99))
    password = g.password()
    auth = b64(f"{user}:{password}".encode())
    g.mark(b64_span(f"{user}:{password}", password, auth))
    registry = pick(rng, ["https://index.docker.io/v1/", "ghcr.io", "registry.gitlab.com", "quay.io"])
    return f'{{\n  "auths": {{\n    "{registry}": {{\n      "auth": "{auth}"\n    }}\n  }}\n}}'


def docker_pat(g: Gen) -> str:
    # Docker docs "Personal access tokens": dckr_pat_ + 27 characters of [A-Za-z0-9_-].
    return "dckr_pat_" + g.secret(B64URL, 27)


def artifactory_key(g: Gen) -> str:
    # JFrog docs: API keys start "AKCp" (73 characters in all).
    return "AKCp8" + g.secret(ALNUM, 68)


def rubygems_key(g: Gen) -> str:
    # RubyGems guides "API key scopes": keys rubygems_ + 48 hex.
    return "rubygems_" + g.secret(HEX, 48)


def nuget_key(g: Gen) -> str:
    # NuGet docs "Scoped API keys": 46 characters starting "oy2", lower-case alphanumerics.
    return "oy2" + g.secret(LOWER_ALNUM, 43)


def npmrc_line(g: Gen) -> str:
    # npm docs ".npmrc": //registry.npmjs.org/:_authToken=<token>, per registry.
    return f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={npm_token(g)}\nalways-auth=true"


def pypirc(g: Gen) -> str:
    # PyPA docs "The .pypirc file": [pypi] username = __token__, password = pypi-... token.
    return (
        f"[distutils]\nindex-servers =\n    pypi\n\n[pypi]\nusername = __token__\npassword = {pypi_token(g)}"
    )


def netrc(g: Gen) -> str:
    # GNU inetutils / curl docs ".netrc": machine <host> login <user> password <password>.
    rng = g.rng
    host = pick(rng, ["pkgs.dev.azure.com", "api.heroku.com", "git.acme.io", "nexus.acme.io", "api.wandb.ai"])
    return f"machine {host}\n  login {pick(rng, WORDS)}\n  password {g.secret(ALNUM, rng.randint(24, 40))}"


def maven_settings(g: Gen) -> str:
    # Apache Maven "Settings Reference": <servers><server><id/><username/><password/></server></servers>.
    return (
        "<settings>\n  <servers>\n    <server>\n      <id>ossrh</id>\n      <username>deploy</username>\n"
        f"      <password>{g.password()}</password>\n    </server>\n  </servers>\n</settings>"
    )


def quay_robot(g: Gen) -> str:
    # Quay docs "Robot accounts": login org+robotname with a 64-character upper-case alphanumeric token.
    return g.secret(UPPER_ALNUM, 64)


def newrelic_license(g: Gen) -> str:
    # New Relic docs "License key": 40 characters, ending "NRAL".
    return g.secret(HEX, 36) + "NRAL"


def dynatrace_token(g: Gen) -> str:
    # Dynatrace docs "Access tokens": dt0c01.<24-char public part>.<64-char secret part>, upper alnum.
    return f"dt0c01.{chars(g.rng, UPPER_ALNUM, 24)}.{g.secret(UPPER_ALNUM, 64)}"


def grafana_cloud(g: Gen) -> str:
    # Grafana Cloud docs "Access policies": tokens glc_ + base64 of a JSON {"o": org, "n": name, "k": key,
    # "m": {"r": region}}.
    rng = g.rng
    key = chars(rng, ALNUM, 24)
    doc = json.dumps(
        {
            "o": str(rng.randint(100000, 999999)),
            "n": f"stack-{rng.randint(1000, 9999)}-hm-write",
            "k": key,
            "m": {"r": "prod-eu-west-2"},
        },
        separators=(",", ":"),
    )
    encoded = b64(doc.encode())
    g.mark(b64_span(doc, key, encoded))
    return "glc_" + encoded


def grafana_sa(g: Gen) -> str:
    # Grafana docs "Service accounts": tokens glsa_ + 32 alphanumerics + "_" + 8 hex checksum.
    return f"glsa_{g.secret(ALNUM, 32)}_{chars(g.rng, HEX, 8)}"


def sentry_org_token(g: Gen) -> str:
    # Sentry docs "Auth tokens": organization tokens sntrys_ + base64 of a JSON payload + "_" + secret.
    rng = g.rng
    payload = b64(
        json.dumps(
            {
                "iat": 1700000000 + rng.randint(0, 9999999),
                "url": "https://sentry.io",
                "region_url": "https://de.sentry.io",
                "org": pick(rng, WORDS),
            }
        ).encode()
    )
    return f"sntrys_{payload}_{g.secret(B64URL, 43)}"


def elastic_api_key(g: Gen) -> str:
    # Elasticsearch docs "Create API key": send Authorization: ApiKey base64(id:api_key).
    raw = f"{chars(g.rng, B64URL, 20)}:{chars(g.rng, B64URL, 22)}"
    encoded = b64(raw.encode())
    g.mark(b64_span(raw, raw[21:], encoded))
    return encoded


def openai_project(g: Gen) -> str:
    # OpenAI API keys (project keys since 2024): "sk-proj-", with "T3BlbkFJ" (base64 of "OpenAI") in the
    # middle of the random part.
    return f"sk-proj-{g.secret(B64URL, 74)}T3BlbkFJ{chars(g.rng, B64URL, 74)}"


def openai_legacy(g: Gen) -> str:
    # OpenAI user keys before 2024: "sk-" + 20 + "T3BlbkFJ" + 20 alphanumerics.
    return f"sk-{g.secret(ALNUM, 20)}T3BlbkFJ{chars(g.rng, ALNUM, 20)}"


def anthropic_key(g: Gen) -> str:
    # Anthropic Console API keys: "sk-ant-api03-" + 93 characters [A-Za-z0-9_-] + "AA".
    return f"sk-ant-api03-{g.secret(B64URL, 93)}AA"


def langsmith_key(g: Gen) -> str:
    # LangSmith docs "API keys": personal tokens lsv2_pt_<32 hex>_<10 hex> (service keys lsv2_sk_).
    return f"lsv2_pt_{g.secret(HEX, 32)}_{chars(g.rng, HEX, 10)}"


def mailchimp_key(g: Gen) -> str:
    # Mailchimp Marketing API docs: the key is 32 hex + "-" + the datacenter ("us6").
    return f"{g.secret(HEX, 32)}-us{g.rng.randint(1, 21)}"


def sendgrid_key(g: Gen) -> str:
    # Twilio SendGrid docs "API keys": "SG." + 22-character key id + "." + 43-character secret.
    return f"SG.{chars(g.rng, B64URL, 22)}.{g.secret(B64URL, 43)}"


def atlassian_token(g: Gen) -> str:
    # Atlassian "Manage API tokens": tokens since 2023 start "ATATT3xFfGF0" and end "=" + 8 hex checksum.
    return f"ATATT3xFfGF0{g.secret(B64URL, 60)}{chars(g.rng, B64URL, 120)}={chars(g.rng, HEX_UPPER, 8)}"


def airtable_pat(g: Gen) -> str:
    # Airtable docs "Personal access tokens": "pat" + 14 alphanumerics + "." + 64 hex.
    return f"pat{chars(g.rng, ALNUM, 14)}.{g.secret(HEX, 64)}"


def asana_pat(g: Gen) -> str:
    # Asana docs "Personal access token": "2/<user gid>/<token gid>:<32 hex>".
    return f"2/{digits(g.rng, 16)}/{digits(g.rng, 16)}:{g.secret(HEX, 32)}"


def mapbox_secret(g: Gen) -> str:
    # Mapbox docs "Access tokens": secret tokens "sk." + base64url JSON {"u": user, "a": id} + "." + 22.
    head = b64url(
        json.dumps(
            {"u": pick(g.rng, WORDS), "a": "cl" + chars(g.rng, LOWER_ALNUM, 23)}, separators=(",", ":")
        ).encode()
    )
    return f"sk.{head}.{g.secret(B64URL, 22)}"


def twitter_bearer(g: Gen) -> str:
    # X (Twitter) API docs "OAuth 2.0 Bearer Token": app-only tokens begin with a run of "A" and carry
    # percent-encoded "+", "/" and "=".
    return (
        "AAAAAAAAAAAAAAAAAAAAA"
        + chars(g.rng, ALNUM, 20)
        + "%2B"
        + g.secret(ALNUM, 30)
        + "%3D"
        + chars(g.rng, ALNUM, 50)
    )


def meta_token(g: Gen) -> str:
    # Meta Graph API docs "Access tokens": long-lived user/page tokens start "EAA" + app-specific letters.
    return "EAAG" + g.secret(ALNUM, 60) + chars(g.rng, ALNUM, 120)


def op_service_account(g: Gen) -> str:
    # 1Password docs "Service accounts": tokens "ops_" + base64 of a JSON document.
    rng = g.rng
    srp = chars(rng, HEX, 64)
    doc = json.dumps(
        {
            "signInAddress": "my.1password.com",
            "email": f"{chars(rng, LOWER, 12)}@1passwordserviceaccounts.com",
            "secretKey": "A3-" + chars(rng, UPPER_ALNUM, 6) + "-" + chars(rng, UPPER_ALNUM, 25),
            "srpX": srp,
            "muk": {"alg": "A256GCM", "k": chars(rng, B64URL, 43)},
        }
    )
    encoded = b64url(doc.encode())
    g.mark(b64_span(doc, srp, encoded))
    return "ops_" + encoded


def tailscale_key(g: Gen) -> str:
    # Tailscale docs "Auth keys": tskey-auth-<key id ending CNTRL>-<secret>.
    return f"tskey-auth-k{chars(g.rng, ALNUM, 10)}CNTRL-{g.secret(ALNUM, 33)}"


def basic_auth(g: Gen) -> str:
    # RFC 7617: Authorization: Basic base64(user-id ":" password).
    user = pick(g.rng, ["ops@acme.io", "deploy", "jenkins", "admin", "svc-" + pick(g.rng, SERVICES)])
    password = chars(g.rng, ALNUM, 24)
    encoded = b64(f"{user}:{password}".encode())
    g.mark(b64_span(f"{user}:{password}", password, encoded))
    return encoded


def git_remote(g: Gen) -> str:
    # Git docs "git-clone URLs" with RFC 3986 userinfo: https://<user>:<token>@host/owner/repo.git.
    rng = g.rng
    user = pick(rng, ["oauth2", "x-access-token", "gitlab-ci-token", pick(rng, WORDS)])
    return f"https://{user}:{g.secret(ALNUM, 32)}@{pick(rng, ['git.acme.io', 'bitbucket.org', 'gitea.internal'])}/{pick(rng, WORDS)}/{pick(rng, SERVICES)}.git"


def hex_under_name(n: int) -> Callable[[Gen], str]:
    return lambda g: g.secret(HEX, n)


def alnum_under_name(n: int, alphabet: str = ALNUM) -> Callable[[Gen], str]:
    return lambda g: g.secret(alphabet, n)


def uuid_under_name(g: Gen) -> str:
    return g.mark(uuid4(g.rng))


def prefixed(prefix: str, alphabet: str, n: int, suffix: str = "") -> Callable[[Gen], str]:
    return lambda g: prefix + g.secret(alphabet, n) + suffix


BEARER = bearer_contexts()
AWS_CLI = (
    lambda r, n, v: (
        f"$ cat ~/.aws/credentials\n[{pick(r, ['default', 'prod', 'ci'])}]\n{v}\nregion = eu-west-1"
    ),
    lambda r, n, v: f"Ich habe die Zugangsdaten aus der Konsole kopiert:\n{v}",
)
DSN = (
    lambda r, n, v: f"dbmate --url '{v}' up",
    lambda r, n, v: f'engine = create_engine("{v}", pool_pre_ping=True)',
    lambda r, n, v: f"{clock(r)} ERROR could not connect to {v}: connection refused",
    lambda r, n, v: f"La cadena de conexión de producción: {v}",
)
CONN = (
    lambda r, n, v: f'"ConnectionStrings": {{\n  "Default": "{v}"\n}}',
    lambda r, n, v: f'var client = new Client("{v}");',
    lambda r, n, v: f'az webapp config appsettings set --settings {n}="{v}"',
)

CREDENTIAL_KINDS: tuple[CredKind, ...] = (
    # --- cloud ---
    CredKind("aws_access_key_pair", "cloud", aws_pair, ("AWS_CREDENTIALS",), AWS_CLI, block=True),
    CredKind("aws_temporary_credentials", "cloud", aws_session, ("AWS_ENV",), AWS_CLI, block=True),
    # AWS docs: the secret access key alone, under the SDK's variable name.
    CredKind(
        "aws_secret_access_key",
        "cloud",
        alnum_under_name(40, B64),
        ("AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "AWS_SECRET_KEY"),
        needs_name=True,
    ),
    CredKind(
        "gcp_service_account_json",
        "cloud",
        gcp_service_account,
        ("GOOGLE_APPLICATION_CREDENTIALS_JSON", "GCP_SA_KEY"),
        block=True,
    ),
    # Google Cloud docs "API keys": "AIza" + 35 characters of [A-Za-z0-9_-].
    CredKind(
        "google_api_key",
        "cloud",
        prefixed("AIza", B64URL, 35),
        ("GOOGLE_API_KEY", "GEMINI_API_KEY", "MAPS_API_KEY"),
        header_contexts("X-Goog-Api-Key"),
    ),
    # Google Identity docs: OAuth client secrets since 2021 start "GOCSPX-" + 28 characters.
    CredKind(
        "google_oauth_client_secret",
        "cloud",
        prefixed("GOCSPX-", B64URL, 28),
        ("GOOGLE_CLIENT_SECRET", "client_secret"),
    ),
    # Google OAuth 2.0 docs: access tokens start "ya29." (opaque, ~200 characters).
    CredKind(
        "google_oauth_access_token",
        "cloud",
        prefixed("ya29.a0", B64URL, 150),
        ("GOOGLE_ACCESS_TOKEN",),
        BEARER,
    ),
    CredKind(
        "azure_storage_connection_string",
        "cloud",
        azure_storage_conn,
        ("AZURE_STORAGE_CONNECTION_STRING", "AzureWebJobsStorage"),
        CONN,
    ),
    # Azure Storage docs: the account key alone (88 base64 characters) under AccountKey / the CLI's variable.
    CredKind(
        "azure_storage_account_key",
        "cloud",
        prefixed("", B64, 86, "=="),
        ("AZURE_STORAGE_KEY", "AccountKey", "storage_account_key"),
        needs_name=True,
    ),
    CredKind(
        "azure_sas_url",
        "cloud",
        azure_sas_url,
        ("AZURE_SAS_URL", "BLOB_SAS_URL"),
        (lambda r, n, v: f'azcopy copy ./dist "{v}" --recursive',),
    ),
    CredKind(
        "azure_servicebus_connection_string",
        "cloud",
        azure_servicebus_conn,
        ("SERVICEBUS_CONNECTION_STRING", "ServiceBusConnection"),
        CONN,
    ),
    CredKind(
        "azure_cosmos_connection_string", "cloud", azure_cosmos_conn, ("COSMOS_CONNECTION_STRING",), CONN
    ),
    CredKind(
        "azure_ad_client_secret",
        "cloud",
        azure_client_secret,
        ("AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"),
        (lambda r, n, v: f"az login --service-principal -u {uuid4(r)} -p '{v}' --tenant {uuid4(r)}",),
    ),
    CredKind(
        "digitalocean_pat",
        "cloud",
        lambda g: digitalocean_token(g, "dop"),
        ("DIGITALOCEAN_ACCESS_TOKEN", "DO_TOKEN"),
        (*BEARER, lambda r, n, v: f"doctl auth init --access-token {v}"),
    ),
    CredKind(
        "digitalocean_oauth_token",
        "cloud",
        lambda g: digitalocean_token(g, "doo"),
        ("DIGITALOCEAN_TOKEN",),
        BEARER,
    ),
    # Linode API docs: personal access tokens are 64 hex characters (no prefix).
    CredKind(
        "linode_token", "cloud", hex_under_name(64), ("LINODE_TOKEN", "LINODE_CLI_TOKEN"), needs_name=True
    ),
    # Cloudflare docs "Create API token": 40 characters of [A-Za-z0-9_-]; the global API key is 37 hex.
    CredKind(
        "cloudflare_api_token",
        "cloud",
        alnum_under_name(40, B64URL),
        ("CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"),
        needs_name=True,
    ),
    CredKind(
        "cloudflare_global_api_key",
        "cloud",
        hex_under_name(37),
        ("CLOUDFLARE_API_KEY", "CF_API_KEY", "X-Auth-Key"),
        needs_name=True,
    ),
    # Heroku Dev Center "Authentication": API keys are UUIDs under HEROKU_API_KEY.
    CredKind("heroku_api_key", "cloud", uuid_under_name, ("HEROKU_API_KEY",), needs_name=True),
    # IBM Cloud docs "API keys": 44 characters of [A-Za-z0-9_-] under IBMCLOUD_API_KEY.
    CredKind(
        "ibm_cloud_api_key",
        "cloud",
        alnum_under_name(44, B64URL),
        ("IBMCLOUD_API_KEY", "IC_API_KEY"),
        needs_name=True,
    ),
    CredKind("alibaba_access_key_pair", "cloud", alibaba_pair, ("ALIBABA_CLOUD_CREDENTIALS",), block=True),
    CredKind(
        "hashicorp_vault_token",
        "cloud",
        vault_token,
        ("VAULT_TOKEN",),
        (
            lambda r, n, v: f'curl -H "X-Vault-Token: {v}" https://vault.acme.io/v1/secret/data/app',
            lambda r, n, v: f"vault login {v}",
        ),
    ),
    CredKind(
        "terraform_cloud_token",
        "cloud",
        terraform_token,
        ("TF_TOKEN_app_terraform_io", "TFE_TOKEN"),
        (lambda r, n, v: f'credentials "app.terraform.io" {{\n  token = "{v}"\n}}',),
    ),
    CredKind("tls_private_key_pkcs8", "cloud", rsa_private_key, ("TLS_KEY", "tls.key"), block=True),
    CredKind(
        "rsa_private_key_pkcs1", "cloud", rsa_traditional_key, ("PRIVATE_KEY", "server.key"), block=True
    ),
    CredKind("ec_private_key", "cloud", ec_private_key, ("EC_KEY", "jwt_signing_key"), block=True),
    CredKind(
        "kubeconfig_service_account_token", "cloud", kubeconfig_sa_token, ("KUBECONFIG_DATA",), block=True
    ),
    CredKind(
        "kubeadm_bootstrap_token",
        "cloud",
        kubeadm_bootstrap,
        ("KUBEADM_TOKEN", "token"),
        (
            lambda r, n, v: (
                f"kubeadm join 10.0.0.{r.randint(2, 250)}:6443 --token {v} \\\n    --discovery-token-ca-cert-hash sha256:{chars(r, HEX, 64)}"
            ),
        ),
    ),
    # --- ci ---
    CredKind(
        "github_pat_classic",
        "ci",
        lambda g: github_token(g, "ghp"),
        ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"),
        (*BEARER, lambda r, n, v: f"echo {v} | gh auth login --with-token"),
    ),
    # GitHub docs "Fine-grained personal access tokens": github_pat_ + 22 + "_" + 59 characters.
    CredKind(
        "github_pat_fine_grained",
        "ci",
        lambda g: f"github_pat_{chars(g.rng, ALNUM, 22)}_{g.secret(ALNUM, 59)}",
        ("GITHUB_TOKEN", "GH_PAT"),
        BEARER,
    ),
    CredKind("github_oauth_token", "ci", lambda g: github_token(g, "gho"), ("GITHUB_OAUTH_TOKEN",), BEARER),
    CredKind(
        "github_app_installation_token",
        "ci",
        lambda g: github_token(g, "ghs"),
        ("GITHUB_APP_TOKEN",),
        (lambda r, n, v: f"git clone https://x-access-token:{v}@github.com/acme/{pick(r, SERVICES)}.git",),
    ),
    CredKind("github_refresh_token", "ci", lambda g: github_token(g, "ghr"), ("GITHUB_REFRESH_TOKEN",)),
    CredKind(
        "gitlab_pat",
        "ci",
        lambda g: gitlab_token(g, "glpat-"),
        ("GITLAB_TOKEN", "GL_TOKEN", "CI_JOB_TOKEN_OVERRIDE"),
        (lambda r, n, v: f'curl --header "PRIVATE-TOKEN: {v}" https://gitlab.com/api/v4/projects',),
    ),
    CredKind(
        "gitlab_runner_token",
        "ci",
        lambda g: gitlab_token(g, "glrt-"),
        ("RUNNER_TOKEN",),
        (
            lambda r, n, v: (
                f'[[runners]]\n  name = "{pick(r, HOSTS)}"\n  url = "https://gitlab.com"\n  token = "{v}"\n  executor = "docker"'
            ),
        ),
    ),
    CredKind(
        "gitlab_trigger_token",
        "ci",
        lambda g: gitlab_token(g, "glptt-", HEX, 40),
        ("TRIGGER_TOKEN",),
        (
            lambda r, n, v: (
                f"curl -X POST --fail -F token={v} -F ref=main https://gitlab.com/api/v4/projects/{r.randint(1000, 99999)}/trigger/pipeline"
            ),
        ),
    ),
    CredKind("gitlab_deploy_token", "ci", lambda g: gitlab_token(g, "gldt-"), ("DEPLOY_TOKEN",)),
    CredKind(
        "git_remote_with_token",
        "ci",
        git_remote,
        ("REPO_URL", "GIT_REMOTE"),
        (
            lambda r, n, v: f"git remote set-url origin {v}",
            lambda r, n, v: f"$ git clone {v}\nCloning into '{pick(r, SERVICES)}'...",
        ),
    ),
    CredKind("openssh_private_key", "ci", openssh_private_key, ("DEPLOY_KEY", "SSH_PRIVATE_KEY"), block=True),
    # Buildkite docs "API access tokens": bkua_ + 40 hex.
    CredKind("buildkite_api_token", "ci", prefixed("bkua_", HEX, 40), ("BUILDKITE_API_TOKEN",), BEARER),
    # CircleCI docs "Managing API tokens": personal tokens CCIPAT_ + 22 + "_" + 40 hex.
    CredKind(
        "circleci_personal_token",
        "ci",
        lambda g: f"CCIPAT_{chars(g.rng, ALNUM, 22)}_{g.secret(HEX, 40)}",
        ("CIRCLE_TOKEN", "CIRCLECI_CLI_TOKEN"),
        header_contexts("Circle-Token"),
    ),
    # Jenkins docs "Authenticating scripted clients": API tokens are "11" + 32 hex, used as the basic-auth password.
    CredKind(
        "jenkins_api_token",
        "ci",
        prefixed("11", HEX, 32),
        ("JENKINS_API_TOKEN", "JENKINS_TOKEN"),
        (lambda r, n, v: f"curl -X POST -u admin:{v} https://jenkins.acme.io/job/{pick(r, SERVICES)}/build",),
        needs_name=True,
    ),
    # Azure DevOps docs "Use personal access tokens": 52 characters of base32 lower case.
    CredKind(
        "azure_devops_pat",
        "ci",
        alnum_under_name(52, LOWER + "234567"),
        ("AZURE_DEVOPS_EXT_PAT", "AZDO_PAT", "SYSTEM_ACCESSTOKEN"),
        needs_name=True,
    ),
    # SonarQube docs "Generating and using tokens": squ_ (user), sqp_ (project), sqa_ (global) + 40 hex.
    CredKind(
        "sonarqube_token",
        "ci",
        prefixed("squ_", HEX, 40),
        ("SONAR_TOKEN",),
        (lambda r, n, v: f"mvn sonar:sonar -Dsonar.token={v} -Dsonar.host.url=https://sonar.acme.io",),
    ),
    # Netlify docs "Personal access tokens": nfp_ + 36 characters.
    CredKind("netlify_pat", "ci", prefixed("nfp_", ALNUM, 36), ("NETLIFY_AUTH_TOKEN",)),
    # Vercel docs "Access tokens": 24 alphanumerics under VERCEL_TOKEN.
    CredKind(
        "vercel_token",
        "ci",
        alnum_under_name(24),
        ("VERCEL_TOKEN",),
        (lambda r, n, v: f"vercel deploy --prod --token {v}",),
        needs_name=True,
    ),
    # Codecov docs "Upload token": a UUID under CODECOV_TOKEN.
    CredKind("codecov_upload_token", "ci", uuid_under_name, ("CODECOV_TOKEN",), needs_name=True),
    # --- chat ---
    CredKind("slack_bot_token", "chat", slack_bot, ("SLACK_BOT_TOKEN", "SLACK_TOKEN"), BEARER),
    CredKind("slack_user_token", "chat", slack_user, ("SLACK_USER_TOKEN",), BEARER),
    CredKind("slack_app_token", "chat", slack_app, ("SLACK_APP_TOKEN",)),
    CredKind(
        "slack_webhook_url",
        "chat",
        slack_webhook,
        ("SLACK_WEBHOOK_URL",),
        (
            lambda r, n, v: (
                f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {v}"
            ),
        ),
    ),
    CredKind(
        "discord_bot_token",
        "chat",
        discord_bot,
        ("DISCORD_TOKEN", "DISCORD_BOT_TOKEN"),
        bearer_contexts("Bot"),
    ),
    CredKind("discord_webhook_url", "chat", discord_webhook, ("DISCORD_WEBHOOK",)),
    CredKind(
        "telegram_bot_token",
        "chat",
        telegram_bot,
        ("TELEGRAM_BOT_TOKEN", "TG_TOKEN"),
        (lambda r, n, v: f"curl https://api.telegram.org/bot{v}/getUpdates",),
    ),
    CredKind("teams_incoming_webhook", "chat", teams_webhook, ("TEAMS_WEBHOOK_URL",)),
    CredKind("twilio_api_key_pair", "chat", twilio_api_key, ("TWILIO",), block=True),
    # Twilio docs "Auth token": 32 hex under TWILIO_AUTH_TOKEN, used with the AC... account SID.
    CredKind(
        "twilio_auth_token",
        "chat",
        hex_under_name(32),
        ("TWILIO_AUTH_TOKEN",),
        (
            lambda r, n, v: (
                f"curl -u AC{chars(r, HEX, 32)}:{v} https://api.twilio.com/2010-04-01/Accounts.json"
            ),
        ),
        needs_name=True,
    ),
    CredKind("matrix_access_token", "chat", matrix_token, ("MATRIX_ACCESS_TOKEN",), BEARER),
    # Mattermost docs "Personal access tokens": 26 lower-case alphanumerics.
    CredKind(
        "mattermost_token",
        "chat",
        alnum_under_name(26, LOWER_ALNUM),
        ("MATTERMOST_TOKEN", "MM_ACCESS_TOKEN"),
        needs_name=True,
    ),
    # --- payment ---
    CredKind(
        "stripe_live_secret_key",
        "payment",
        lambda g: stripe_key(g, "sk_live_"),
        ("STRIPE_SECRET_KEY", "STRIPE_API_KEY"),
        (lambda r, n, v: f"curl https://api.stripe.com/v1/charges -u {v}:",),
    ),
    CredKind(
        "stripe_live_secret_key_short",
        "payment",
        lambda g: stripe_key(g, "sk_live_", 24),
        ("STRIPE_KEY",),
        (lambda r, n, v: f'stripe.api_key = "{v}"',),
    ),
    CredKind(
        "stripe_restricted_key",
        "payment",
        lambda g: stripe_key(g, "rk_live_"),
        ("STRIPE_RESTRICTED_KEY",),
        BEARER,
    ),
    # Stripe docs "Check webhook signatures": endpoint secrets whsec_ + 32 characters.
    CredKind("stripe_webhook_secret", "payment", prefixed("whsec_", ALNUM, 32), ("STRIPE_WEBHOOK_SECRET",)),
    CredKind("braintree_access_token", "payment", braintree_token, ("BRAINTREE_ACCESS_TOKEN",)),
    CredKind("square_access_token", "payment", square_token, ("SQUARE_ACCESS_TOKEN",), BEARER),
    CredKind("square_application_secret", "payment", square_secret, ("SQUARE_APP_SECRET",)),
    CredKind("flutterwave_secret_key", "payment", flutterwave_secret, ("FLW_SECRET_KEY",), BEARER),
    CredKind("razorpay_key_pair", "payment", razorpay_pair, ("RAZORPAY",), block=True),
    # PayPal developer docs "Get client ID and secret": the secret is 80 characters of [A-Za-z0-9_-].
    CredKind(
        "paypal_client_secret",
        "payment",
        alnum_under_name(80, B64URL),
        ("PAYPAL_CLIENT_SECRET", "PAYPAL_SECRET"),
        needs_name=True,
    ),
    # Plaid docs "Keys": 30 hex secret under PLAID_SECRET.
    CredKind("plaid_secret", "payment", hex_under_name(30), ("PLAID_SECRET",), needs_name=True),
    # Mollie docs "API keys": live_ + 30 alphanumerics.
    CredKind(
        "mollie_live_key",
        "payment",
        prefixed("live_", ALNUM, 30),
        ("MOLLIE_API_KEY",),
        BEARER,
        needs_name=True,
    ),
    # --- database ---
    CredKind(
        "postgres_url",
        "database",
        url_with_password("postgresql", 5432, "/app?sslmode=require"),
        ("DATABASE_URL", "POSTGRES_DSN"),
        DSN,
    ),
    CredKind(
        "mysql_url", "database", url_with_password("mysql", 3306, "/shop"), ("MYSQL_URL", "DATABASE_URL"), DSN
    ),
    CredKind("mongodb_srv_url", "database", mongodb_srv, ("MONGODB_URI", "MONGO_URL"), DSN),
    CredKind(
        "redis_url",
        "database",
        url_with_password("rediss", 6380, "/0", "default"),
        ("REDIS_URL", "CELERY_BROKER_URL"),
        DSN,
    ),
    CredKind(
        "amqp_url", "database", url_with_password("amqps", 5671, "/vhost"), ("AMQP_URL", "RABBITMQ_URL"), DSN
    ),
    CredKind(
        "pgpass_line",
        "database",
        pgpass_line,
        ("PGPASSFILE",),
        (lambda r, n, v: f"$ cat ~/.pgpass\n{v}\n$ chmod 600 ~/.pgpass",),
    ),
    CredKind("jdbc_url_password", "database", jdbc_url, ("SPRING_DATASOURCE_URL", "JDBC_URL")),
    CredKind(
        "sqlserver_connection_string",
        "database",
        sqlserver_conn,
        ("SQLCONNSTR_Default", "DB_CONNECTION"),
        CONN,
    ),
    CredKind("mysql_create_user", "database", mysql_create_user, ("MIGRATION",), block=True),
    CredKind("redis_requirepass", "database", redis_requirepass, ("REDIS_CONF",), block=True),
    CredKind(
        "supabase_service_role_key", "database", supabase_service_role, ("SUPABASE_SERVICE_ROLE_KEY",), BEARER
    ),
    CredKind("planetscale_password", "database", planetscale_password, ("DATABASE_PASSWORD",)),
    # A database password under its conventional variable name: words, digits and a symbol.
    CredKind(
        "db_password_under_name",
        "database",
        lambda g: g.password(),
        ("DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "password"),
        needs_name=True,
    ),
    # --- registry ---
    CredKind("npm_token", "registry", npm_token, ("NPM_TOKEN", "NODE_AUTH_TOKEN")),
    CredKind("npmrc_auth_line", "registry", npmrc_line, ("NPMRC",), block=True),
    CredKind(
        "pypi_token",
        "registry",
        pypi_token,
        ("TWINE_PASSWORD", "PYPI_API_TOKEN", "UV_PUBLISH_TOKEN"),
        (lambda r, n, v: f"twine upload -u __token__ -p {v} dist/*",),
    ),
    CredKind("pypirc", "registry", pypirc, ("PYPIRC",), block=True),
    CredKind(
        "docker_config_auth",
        "registry",
        docker_config_auth,
        ("DOCKER_CONFIG_JSON", ".dockerconfigjson"),
        block=True,
    ),
    CredKind(
        "docker_hub_pat",
        "registry",
        docker_pat,
        ("DOCKERHUB_TOKEN", "DOCKER_PASSWORD"),
        (lambda r, n, v: f"echo {v} | docker login -u {pick(r, WORDS)} --password-stdin",),
    ),
    CredKind(
        "artifactory_api_key",
        "registry",
        artifactory_key,
        ("ARTIFACTORY_API_KEY",),
        header_contexts("X-JFrog-Art-Api"),
    ),
    CredKind(
        "rubygems_api_key",
        "registry",
        rubygems_key,
        ("GEM_HOST_API_KEY",),
        (lambda r, n, v: f"---\n:rubygems_api_key: {v}",),
    ),
    CredKind(
        "nuget_api_key",
        "registry",
        nuget_key,
        ("NUGET_API_KEY",),
        (
            lambda r, n, v: (
                f"dotnet nuget push bin/Release/*.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json"
            ),
        ),
    ),
    # crates.io docs "cargo login": tokens "cio" + 32 alphanumerics.
    CredKind(
        "crates_io_token",
        "registry",
        prefixed("cio", ALNUM, 32),
        ("CARGO_REGISTRY_TOKEN",),
        (lambda r, n, v: f'[registry]\ntoken = "{v}"',),
    ),
    CredKind("netrc_password", "registry", netrc, ("NETRC",), block=True),
    CredKind("maven_settings_password", "registry", maven_settings, ("MAVEN_SETTINGS",), block=True),
    CredKind(
        "quay_robot_token",
        "registry",
        quay_robot,
        ("QUAY_ROBOT_TOKEN",),
        (lambda r, n, v: f"docker login -u='acme+{pick(r, SERVICES)}' -p='{v}' quay.io",),
        needs_name=True,
    ),
    # --- observability ---
    # Datadog docs "API and application keys": API keys 32 hex, application keys 40 hex.
    CredKind(
        "datadog_api_key",
        "observability",
        hex_under_name(32),
        ("DD_API_KEY", "DATADOG_API_KEY"),
        header_contexts("DD-API-KEY"),
        needs_name=True,
    ),
    CredKind(
        "datadog_app_key",
        "observability",
        hex_under_name(40),
        ("DD_APP_KEY", "DD_APPLICATION_KEY"),
        header_contexts("DD-APPLICATION-KEY"),
        needs_name=True,
    ),
    # New Relic docs "API keys": user keys NRAK- + 27 upper alnum.
    CredKind(
        "newrelic_user_key",
        "observability",
        prefixed("NRAK-", UPPER_ALNUM, 27),
        ("NEW_RELIC_API_KEY",),
        header_contexts("Api-Key"),
    ),
    CredKind(
        "newrelic_license_key",
        "observability",
        newrelic_license,
        ("NEW_RELIC_LICENSE_KEY",),
        (lambda r, n, v: f"newrelic.ini:\n[newrelic]\nlicense_key = {v}\napp_name = {pick(r, SERVICES)}",),
    ),
    CredKind(
        "dynatrace_api_token",
        "observability",
        dynatrace_token,
        ("DT_API_TOKEN",),
        bearer_contexts("Api-Token"),
    ),
    CredKind("grafana_cloud_token", "observability", grafana_cloud, ("GRAFANA_CLOUD_TOKEN",), BEARER),
    CredKind("grafana_service_account_token", "observability", grafana_sa, ("GRAFANA_TOKEN",), BEARER),
    CredKind("sentry_org_token", "observability", sentry_org_token, ("SENTRY_AUTH_TOKEN",)),
    # Sentry docs "User auth tokens": sntryu_ + 64 hex.
    CredKind(
        "sentry_user_token", "observability", prefixed("sntryu_", HEX, 64), ("SENTRY_AUTH_TOKEN",), BEARER
    ),
    CredKind(
        "elastic_api_key",
        "observability",
        elastic_api_key,
        ("ELASTIC_API_KEY", "ES_API_KEY"),
        bearer_contexts("ApiKey"),
        needs_name=True,
    ),
    # Splunk docs "HTTP Event Collector": tokens are UUIDs, sent as "Authorization: Splunk <token>".
    CredKind(
        "splunk_hec_token",
        "observability",
        uuid_under_name,
        ("SPLUNK_HEC_TOKEN",),
        bearer_contexts("Splunk"),
        needs_name=True,
    ),
    # PagerDuty docs "Events API v2": integration (routing) keys are 32 hex.
    CredKind(
        "pagerduty_routing_key",
        "observability",
        hex_under_name(32),
        ("PAGERDUTY_ROUTING_KEY", "PD_INTEGRATION_KEY"),
        needs_name=True,
    ),
    # Honeycomb docs "API keys": 22-character configuration keys, also sent as x-honeycomb-team.
    CredKind(
        "honeycomb_api_key",
        "observability",
        alnum_under_name(22),
        ("HONEYCOMB_API_KEY",),
        (lambda r, n, v: f"OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team={v}",),
        needs_name=True,
    ),
    # Rollbar docs "Access tokens": 32 hex.
    CredKind(
        "rollbar_access_token",
        "observability",
        hex_under_name(32),
        ("ROLLBAR_ACCESS_TOKEN",),
        header_contexts("X-Rollbar-Access-Token"),
        needs_name=True,
    ),
    # Opsgenie docs "API key": a UUID sent as "Authorization: GenieKey <key>".
    CredKind(
        "opsgenie_api_key",
        "observability",
        uuid_under_name,
        ("OPSGENIE_API_KEY",),
        bearer_contexts("GenieKey"),
        needs_name=True,
    ),
    # --- ai ---
    CredKind("openai_project_key", "ai", openai_project, ("OPENAI_API_KEY",), BEARER),
    CredKind("openai_legacy_key", "ai", openai_legacy, ("OPENAI_API_KEY",), BEARER),
    CredKind("anthropic_api_key", "ai", anthropic_key, ("ANTHROPIC_API_KEY",), header_contexts("x-api-key")),
    # Hugging Face docs "User access tokens": hf_ + 34 letters.
    CredKind(
        "huggingface_token",
        "ai",
        prefixed("hf_", string.ascii_letters, 34),
        ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
        (*BEARER, lambda r, n, v: f"huggingface-cli login --token {v}"),
    ),
    # Replicate docs "API tokens": r8_ + 37 alphanumerics.
    CredKind("replicate_token", "ai", prefixed("r8_", ALNUM, 37), ("REPLICATE_API_TOKEN",), BEARER),
    # Groq console docs: keys gsk_ + 52 alphanumerics.
    CredKind("groq_api_key", "ai", prefixed("gsk_", ALNUM, 52), ("GROQ_API_KEY",), BEARER),
    # Perplexity API docs: keys pplx- + 48 alphanumerics.
    CredKind("perplexity_api_key", "ai", prefixed("pplx-", ALNUM, 48), ("PERPLEXITY_API_KEY",), BEARER),
    # xAI docs: keys xai- + 80 alphanumerics.
    CredKind("xai_api_key", "ai", prefixed("xai-", ALNUM, 80), ("XAI_API_KEY",), BEARER),
    # OpenRouter docs "Authentication": keys sk-or-v1- + 64 hex.
    CredKind("openrouter_api_key", "ai", prefixed("sk-or-v1-", HEX, 64), ("OPENROUTER_API_KEY",), BEARER),
    CredKind("langsmith_api_key", "ai", langsmith_key, ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")),
    # Cohere docs: 40 alphanumerics under CO_API_KEY; Mistral docs: 32 alphanumerics under MISTRAL_API_KEY.
    CredKind("cohere_api_key", "ai", alnum_under_name(40), ("CO_API_KEY", "COHERE_API_KEY"), needs_name=True),
    CredKind("mistral_api_key", "ai", alnum_under_name(32), ("MISTRAL_API_KEY",), needs_name=True),
    # DeepSeek platform docs: keys sk- + 32 hex.
    CredKind("deepseek_api_key", "ai", prefixed("sk-", HEX, 32), ("DEEPSEEK_API_KEY",), BEARER),
    # Weights & Biases docs "wandb login": a 40-hex API key (also written to ~/.netrc for api.wandb.ai).
    CredKind(
        "wandb_api_key",
        "ai",
        hex_under_name(40),
        ("WANDB_API_KEY",),
        (lambda r, n, v: f"wandb login {v}",),
        needs_name=True,
    ),
    # --- saas ---
    CredKind("sendgrid_api_key", "saas", sendgrid_key, ("SENDGRID_API_KEY",), BEARER),
    # Mailgun docs "API keys": private keys "key-" + 32 hex.
    CredKind(
        "mailgun_api_key",
        "saas",
        prefixed("key-", HEX, 32),
        ("MAILGUN_API_KEY",),
        (lambda r, n, v: f"curl -s --user 'api:{v}' https://api.mailgun.net/v3/mg.acme.io/messages",),
    ),
    CredKind("mailchimp_api_key", "saas", mailchimp_key, ("MAILCHIMP_API_KEY",)),
    # Shopify docs "Access tokens": shpat_ (Admin API), shpss_ (shared secret), shpca_ (custom app) + 32 hex.
    CredKind(
        "shopify_admin_token",
        "saas",
        prefixed("shpat_", HEX, 32),
        ("SHOPIFY_ACCESS_TOKEN",),
        header_contexts("X-Shopify-Access-Token"),
    ),
    CredKind("shopify_shared_secret", "saas", prefixed("shpss_", HEX, 32), ("SHOPIFY_API_SECRET",)),
    CredKind(
        "atlassian_api_token",
        "saas",
        atlassian_token,
        ("JIRA_API_TOKEN", "ATLASSIAN_TOKEN"),
        (lambda r, n, v: f"curl -u ops@acme.io:{v} https://acme.atlassian.net/rest/api/3/myself",),
    ),
    # Notion docs "Authorization": internal integration secrets ntn_ + 46 characters (older: secret_ + 43).
    CredKind(
        "notion_integration_secret",
        "saas",
        prefixed("ntn_", ALNUM, 46),
        ("NOTION_TOKEN", "NOTION_API_KEY"),
        BEARER,
    ),
    CredKind("notion_legacy_secret", "saas", prefixed("secret_", ALNUM, 43), ("NOTION_TOKEN",), BEARER),
    # Linear docs "API keys": lin_api_ + 40 alphanumerics.
    CredKind(
        "linear_api_key",
        "saas",
        prefixed("lin_api_", ALNUM, 40),
        ("LINEAR_API_KEY",),
        header_contexts("Authorization"),
    ),
    CredKind("airtable_pat", "saas", airtable_pat, ("AIRTABLE_API_KEY", "AIRTABLE_TOKEN"), BEARER),
    # HubSpot docs "Private apps": access tokens pat-<region>- + a UUID.
    CredKind(
        "hubspot_private_app_token",
        "saas",
        lambda g: "pat-eu1-" + g.mark(uuid4(g.rng)),
        ("HUBSPOT_ACCESS_TOKEN",),
        BEARER,
    ),
    # Figma docs "Personal access tokens": figd_ + 40 characters.
    CredKind(
        "figma_pat", "saas", prefixed("figd_", B64URL, 40), ("FIGMA_TOKEN",), header_contexts("X-Figma-Token")
    ),
    # Postman docs "API keys": PMAK- + 24 hex + "-" + 34 hex.
    CredKind(
        "postman_api_key",
        "saas",
        lambda g: f"PMAK-{chars(g.rng, HEX, 24)}-{g.secret(HEX, 34)}",
        ("POSTMAN_API_KEY",),
        header_contexts("X-Api-Key"),
    ),
    CredKind("asana_pat", "saas", asana_pat, ("ASANA_PAT",), BEARER),
    # Dropbox docs "OAuth guide": short-lived access tokens "sl." + ~140 characters.
    CredKind("dropbox_access_token", "saas", prefixed("sl.", B64URL, 138), ("DROPBOX_ACCESS_TOKEN",), BEARER),
    # Okta docs "Create an API token": 42 characters starting "00", sent as "Authorization: SSWS <token>".
    CredKind(
        "okta_api_token",
        "saas",
        prefixed("00", B64URL, 40),
        ("OKTA_API_TOKEN",),
        bearer_contexts("SSWS"),
        needs_name=True,
    ),
    # Contentful docs "Personal access tokens": CFPAT- + 43 characters.
    CredKind(
        "contentful_pat", "saas", prefixed("CFPAT-", B64URL, 43), ("CONTENTFUL_MANAGEMENT_TOKEN",), BEARER
    ),
    CredKind("mapbox_secret_token", "saas", mapbox_secret, ("MAPBOX_SECRET_TOKEN", "MAPBOX_DOWNLOADS_TOKEN")),
    CredKind(
        "twitter_bearer_token", "saas", twitter_bearer, ("TWITTER_BEARER_TOKEN", "X_BEARER_TOKEN"), BEARER
    ),
    CredKind(
        "meta_graph_token",
        "saas",
        meta_token,
        ("FACEBOOK_ACCESS_TOKEN", "META_PAGE_TOKEN"),
        (lambda r, n, v: f"curl 'https://graph.facebook.com/v19.0/me?access_token={v}'",),
    ),
    CredKind("onepassword_service_account_token", "saas", op_service_account, ("OP_SERVICE_ACCOUNT_TOKEN",)),
    # Doppler docs "Service tokens": dp.st.<config>. + 40 alphanumerics; personal dp.pt. + 43.
    CredKind("doppler_token", "saas", prefixed("dp.st.prd.", ALNUM, 40), ("DOPPLER_TOKEN",), BEARER),
    # Pulumi docs "Access tokens": pul- + 40 hex.
    CredKind("pulumi_access_token", "saas", prefixed("pul-", HEX, 40), ("PULUMI_ACCESS_TOKEN",)),
    CredKind(
        "tailscale_auth_key",
        "saas",
        tailscale_key,
        ("TS_AUTHKEY", "TAILSCALE_AUTHKEY"),
        (lambda r, n, v: f"sudo tailscale up --authkey={v} --hostname={pick(r, HOSTS)}",),
    ),
    # Zendesk docs "API token": 40 alphanumerics, used as "<email>/token:<token>".
    CredKind(
        "zendesk_api_token",
        "saas",
        alnum_under_name(40),
        ("ZENDESK_API_TOKEN",),
        (lambda r, n, v: f"curl https://acme.zendesk.com/api/v2/tickets.json -u ops@acme.io/token:{v}",),
        needs_name=True,
    ),
    # Algolia docs "API keys": the Admin API key is 32 hex and must stay server-side.
    CredKind(
        "algolia_admin_key",
        "saas",
        hex_under_name(32),
        ("ALGOLIA_ADMIN_API_KEY", "ALGOLIA_API_KEY"),
        header_contexts("X-Algolia-API-Key"),
        needs_name=True,
    ),
    # Auth0 docs "Application settings": client secrets are 64 characters of [A-Za-z0-9_-].
    CredKind(
        "auth0_client_secret", "saas", alnum_under_name(64, B64URL), ("AUTH0_CLIENT_SECRET",), needs_name=True
    ),
    CredKind(
        "basic_auth_header", "saas", basic_auth, ("BASIC_AUTH",), bearer_contexts("Basic"), needs_name=True
    ),
    # Generic "value under a secret name" forms: a vendor's 32-hex auth token, a random api_key, a password.
    CredKind(
        "vendor_auth_token_hex",
        "saas",
        hex_under_name(32),
        ("ACMEPAY_AUTH_TOKEN", "SMSGATE_AUTH_TOKEN", "VENDOR_SECRET", "api_key", "auth_token"),
        needs_name=True,
    ),
    CredKind(
        "api_key_random",
        "saas",
        alnum_under_name(36),
        ("api_key", "apiKey", "API_KEY", "x_api_key", "client_secret"),
        needs_name=True,
    ),
    CredKind(
        "smtp_password",
        "saas",
        lambda g: g.password(),
        ("SMTP_PASSWORD", "EMAIL_HOST_PASSWORD", "MAIL_PASSWORD"),
        needs_name=True,
    ),
)


# --- Disguises ---------------------------------------------------------------------------------------------

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202e", "\u202c", "\u200e", "\u200f", "\u2066", "\u2067", "\u2069", "\u202a", "\u202d")
LINE_BREAKS = ("\n", "\n    ", "\\\n", "\\\n  ", "\n\t", "\r\n")


def insert_inside(rng: random.Random, value: str, a: int, b: int, marks: tuple[str, ...], count: int) -> str:
    """Insert `count` characters from `marks` strictly inside value[a:b] (the piece that must not survive)."""
    spots = sorted(rng.sample(range(a + 1, b), min(count, b - a - 1)), reverse=True)
    for at in spots:
        value = value[:at] + pick(rng, marks) + value[at:]
    return value


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def disguise_fullwidth(rng: random.Random, value: str, a: int, b: int, block: bool) -> str:
    if not block and rng.random() < 0.5:
        return fullwidth(value)
    spots = set(rng.sample(range(a, b), min(b - a, rng.randint(3, 6))))
    return "".join(fullwidth(c) if i in spots else c for i, c in enumerate(value))


def disguise_bidi(rng: random.Random, value: str, a: int, b: int) -> str:
    if rng.random() < 0.5:
        # An isolate or override pair around part of the token: it displays reordered, the bytes stay.
        at = rng.randrange(a + 1, b - 2)
        end = rng.randrange(at + 1, b)
        opener = pick(rng, ("\u2066", "\u2067", "\u202e", "\u202d"))
        closer = "\u2069" if opener in ("\u2066", "\u2067") else "\u202c"
        return value[:at] + opener + value[at:end] + closer + value[end:]
    return insert_inside(rng, value, a, b, BIDI, rng.randint(1, 2))


def disguise_in_value(rng: random.Random, disguise: str, value: str, a: int, b: int, block: bool) -> str:
    if disguise == "zero_width":
        return insert_inside(rng, value, a, b, ZERO_WIDTH, rng.randint(1, 3))
    if disguise == "soft_hyphen":
        return insert_inside(rng, value, a, b, ("\u00ad",), rng.randint(1, 2))
    if disguise == "fullwidth":
        return disguise_fullwidth(rng, value, a, b, block)
    if disguise == "bidi":
        return disguise_bidi(rng, value, a, b)
    if disguise == "split":
        return insert_inside(rng, value, a + 1, b - 1, LINE_BREAKS, 1)
    return value


def percent_all(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


def b64_wrapped(text: str) -> str:
    # GNU base64 wraps its output at 76 columns.
    encoded = b64(text.encode())
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))


# An encoded form: (encoder of (name, value) -> payload, context of (rng, name, payload) -> text). The text
# before disguising is the same context with the payload left unencoded.
Encoded = tuple[Callable[[str, str], str], Callable[[random.Random, str, str], str]]

PERCENT: tuple[Encoded, ...] = (
    (
        lambda n, v: f"{lower(n)}%3D{quote(v, safe='')}",
        lambda r, n, p: (
            f"https://app.acme.io/login/callback?state={chars(r, ALNUM, 16)}&next=%2Fsettings%3F{p}"
        ),
    ),
    (
        lambda n, v: f"{lower(n)}%3D{quote(v, safe='')}",
        lambda r, n, p: f"{clock(r)} INFO proxy GET /v1/sync?redirect=%2Fhooks%3F{p} status=302",
    ),
    (
        lambda n, v: quote(v, safe=""),
        lambda r, n, p: (
            f"POST /oauth/token HTTP/1.1\nContent-Type: application/x-www-form-urlencoded\n\ngrant_type=client_credentials&{lower(n)}={p}"
        ),
    ),
    (
        lambda n, v: quote(v, safe=""),
        lambda r, n, p: f"curl 'https://api.acme.io/export?format=csv&{lower(n)}={p}'",
    ),
    (
        lambda n, v: percent_all(v),
        lambda r, n, p: f"Encoded it so the chat doesn't mangle it: {p}",
    ),
    (
        lambda n, v: percent_all(f"{n}={v}"),
        lambda r, n, p: f"{clock(r)} WARN waf blocked query string {p}",
    ),
)

BASE64: tuple[Encoded, ...] = (
    (
        lambda n, v: b64(v.encode()),
        lambda r, n, p: (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {pick(r, SERVICES)}\ntype: Opaque\ndata:\n  {n}: {p}\n"
        ),
    ),
    (
        lambda n, v: b64(f"{n}={v}\n".encode()),
        lambda r, n, p: f"echo '{p}' | base64 -d >> .env",
    ),
    (
        lambda n, v: b64(f"LOG_LEVEL=info\n{n}={v}\nREGION=eu-west-1\n".encode()),
        lambda r, n, p: f'{{"service": "{pick(r, SERVICES)}", "env_b64": "{p}"}}',
    ),
    (
        lambda n, v: b64_wrapped(f"{n}={v}"),
        lambda r, n, p: f"$ base64 < secrets.txt\n{p}\n$ ",
    ),
    (
        lambda n, v: b64(v.encode()),
        lambda r, n, p: f"base64 so the scanner leaves it alone: {p}",
    ),
    (
        lambda n, v: b64(v.encode()),
        lambda r, n, p: f"Den Wert habe ich base64-kodiert abgelegt: {p}",
    ),
)

BLOCK_BASE64: tuple[Encoded, ...] = (
    (
        lambda n, v: b64(v.encode()),
        lambda r, n, p: (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {pick(r, SERVICES)}-files\ndata:\n  {n}: {p}\n"
        ),
    ),
    (
        lambda n, v: b64_wrapped(v),
        lambda r, n, p: f"$ base64 {lower(n)}\n{p}",
    ),
)


# --- Assembly ----------------------------------------------------------------------------------------------


def secret_piece(value: str, main: str, word: str | None) -> str:
    """A middle piece of the credential's random part (at least 8 characters), around the placeholder word
    when there is one, so that the piece is the real token and not the word alone. The piece occurs once in
    the value (an OpenSSH key repeats its public half), so a disguise inside it really breaks it."""
    if word and word in main:
        at = main.index(word)
        return main[max(0, at - 4) : at + len(word) + 4]
    size = min(max(8, len(main) // 3), 24)
    middle = (len(main) - size) // 2
    for start in sorted(range(len(main) - size + 1), key=lambda s: abs(s - middle)):
        piece = main[start : start + size]
        if value.count(piece) == 1:
            return piece
    raise ValueError("no piece of the main part occurs only once in the value")


def takes_placeholder(kind: CredKind) -> bool:
    """Whether some placeholder word can show inside the kind's random part (not when that part is derived:
    a base64 of user:password, a JWT signature, a UUID)."""
    trial = random.Random(0)
    for word in PLACEHOLDER_WORDS:
        g = Gen(trial, word)
        kind.make(g)
        if word in g.main:
            return True
    return False


def allowed_disguises(kind: CredKind) -> tuple[str, ...]:
    excluded = {"split", "percent"} if kind.block else set()
    if not takes_placeholder(kind):
        excluded.add("placeholder_word")
    return tuple(d for d in DISGUISES[1:] if d not in excluded)


def choose_context(rng: random.Random, kind: CredKind) -> Context:
    if kind.extra and rng.random() < 0.35:
        return pick(rng, kind.extra)
    if kind.block:
        return pick(rng, BLOCK)
    if kind.needs_name or rng.random() < 0.6:
        return pick(rng, ASSIGN)
    return pick(rng, FREE)


def generate(rng: random.Random, kind: CredKind, disguise: str) -> tuple[str, str, str | None]:
    """The credential, its main random part and the placeholder word inside it (if any)."""
    if disguise == "placeholder_word":
        for word in rng.sample(PLACEHOLDER_WORDS, len(PLACEHOLDER_WORDS)):
            g = Gen(rng, word)
            value = kind.make(g)
            if word in g.main:
                return value, g.main, word
        raise ValueError(f"{kind.name}: no placeholder word fits its alphabet")
    g = Gen(rng)
    value = kind.make(g)
    return value, g.main, None


def credential_sample(rng: random.Random, kind: CredKind, disguise: str) -> tuple[Sample, str]:
    value, main, word = generate(rng, kind, disguise)
    if len(main) < 10 or main not in value:
        raise ValueError(f"{kind.name}: the main random part must be in the value and at least 10 characters")
    piece = secret_piece(value, main, word)
    a = value.index(piece)
    b = a + len(piece)
    name = pick(rng, kind.names)
    context_seed = rng.randrange(2**32)
    if disguise in ("percent", "base64"):
        forms = PERCENT if disguise == "percent" else (BLOCK_BASE64 if kind.block else BASE64)
        encode, around = pick(rng, forms)
        raw = around(random.Random(context_seed), name, value)
        text = around(random.Random(context_seed), name, encode(name, value))
    else:
        context = choose_context(rng, kind)
        raw = context(random.Random(context_seed), name, value)
        disguised = disguise_in_value(rng, disguise, value, a, b, kind.block)
        text = context(random.Random(context_seed), name, disguised)
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=piece), raw


def credential_samples(rng: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    turn = 0
    for index, kind in enumerate(CREDENTIAL_KINDS):
        plain = 2 if index % 2 else 3  # 2.5 of 6 on average: about 40 % plain
        allowed = allowed_disguises(kind)
        for i in range(SAMPLES_PER_KIND):
            if i < plain:
                disguise = "plain"
            else:
                # Rotate through the disguises over the whole corpus so each appears about equally often.
                while DISGUISES[1:][turn % 8] not in allowed:
                    turn += 1
                disguise = DISGUISES[1:][turn % 8]
                turn += 1
            out.append(credential_sample(rng, kind, disguise))
    return out


# --- Look-alikes: random-looking, secret-named or secret-related, but not credentials ----------------------

LookAlike = Callable[[random.Random], str]
FILES = (
    "kenfold-1.4.2.tar.gz",
    "app-linux-amd64.zip",
    "installer.msi",
    "cli_darwin_arm64.tar.gz",
    "model.onnx",
)


def git_sha(r: random.Random) -> str:
    sha = chars(r, HEX, 40)
    return pick(
        r,
        (
            f"Reverted {sha} because it broke the migrations on staging.",
            f"git cherry-pick {sha[:12]} && git push origin hotfix/{pick(r, SERVICES)}",
            f"commit {sha}\nAuthor: {pick(r, PEOPLE)} <dev@acme.io>\nDate:   {day(r)}\n\n    fix flaky retry test",
            f"      - uses: actions/checkout@{sha} # v4.1.{r.randint(0, 7)}",
            f"Der erste fehlerhafte Commit laut git bisect ist {sha}.",
            f"Deployed {pick(r, SERVICES)} at revision {sha[:7]} ({day(r)}).",
            f"pip install git+https://github.com/acme/{pick(r, SERVICES)}@{sha}",
        ),
    )


def sha256_digest(r: random.Random) -> str:
    h = chars(r, HEX, 64)
    f = pick(r, FILES)
    return pick(
        r,
        (
            f"$ sha256sum {f}\n{h}  {f}",
            f"SHA256 ({f}) = {h}",
            f"checksum: sha256:{h}",
            f"Le condensat SHA-256 de {f} est {h}, vérifié.",
            f"Verified the download against the published digest {h}.",
            f'{{"file": "{f}", "sha256": "{h}"}}',
        ),
    )


def sha512_digest(r: random.Random) -> str:
    h = chars(r, HEX, 128)
    f = pick(r, FILES)
    return pick(r, (f"$ shasum -a 512 {f}\n{h}  {f}", f"sha512={h}", f"SHA-512 checksum for {f}: {h}"))


def release_checksums(r: random.Random) -> str:
    rows = "\n".join(f"| {f} | `{chars(r, HEX, 32)}` | `{chars(r, HEX, 64)}` |" for f in r.sample(FILES, 3))
    return pick(
        r,
        (
            f"## Release v{r.randint(1, 4)}.{r.randint(0, 20)}.{r.randint(0, 9)}\n\n| file | md5 | sha256 |\n|---|---|---|\n{rows}",
            f"SHA1SUMS:\n{chars(r, HEX, 40)}  {FILES[0]}\n{chars(r, HEX, 40)}  {FILES[1]}",
            f"MD5 ({pick(r, FILES)}) = {chars(r, HEX, 32)}",
        ),
    )


def uuids(r: random.Random) -> str:
    u = uuid4(r)
    return pick(
        r,
        (
            f"Job {u} failed after 3 retries, see the worker logs.",
            f"tenant_id: {u}\nregion: westeurope",
            f'{{"id": "{u}", "type": "preference", "status": "active"}}',
            f"La migración {u} quedó a medias, hay que relanzarla.",
            f"subscription {u} / resource group rg-{pick(r, SERVICES)}",
            f"Memory {u} supersedes the note about the cache size.",
        ),
    )


def ulids(r: random.Random) -> str:
    u = "01" + chars(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[:8], 1) + chars(r, CROCKFORD, 23)
    return pick(
        r, (f"event {u} queued", f"order_id={u} status=shipped", f"ULID {u} sorts after the previous batch")
    )


def ksuids(r: random.Random) -> str:
    k = pick(r, "0123") + chars(r, ALNUM, 26)
    return pick(r, (f"segment message_id: {k}", f"ksuid={k} created", f"Batch {k} imported 1,204 rows."))


def stripe_object_ids(r: random.Random) -> str:
    # Stripe API reference: object ids (cus_, pi_, ch_, price_, prod_, sub_, in_, evt_, acct_, req_) are
    # identifiers, not credentials.
    ids = {
        p: p + chars(r, ALNUM, r.randint(14, 24))
        for p in ("cus_", "pi_", "ch_", "price_", "prod_", "sub_", "in_", "evt_", "acct_", "req_")
    }
    return pick(
        r,
        (
            f"Refunded {ids['pi_']} for customer {ids['cus_']} (charge {ids['ch_']}).",
            f"Subscription {ids['sub_']} moved to {ids['price_']} of {ids['prod_']}.",
            f"Webhook {ids['evt_']} (invoice.paid) for {ids['in_']} processed twice — idempotency bug.",
            f"Connected account {ids['acct_']}, failing request {ids['req_']}.",
            f'{{"customer": "{ids["cus_"]}", "payment_intent": "{ids["pi_"]}"}}',
        ),
    )


def publishable_keys(r: random.Random) -> str:
    # Stripe docs: publishable keys (pk_live_) are meant for client-side code; Mapbox docs: public tokens
    # (pk.) go in the browser; Sentry docs: a DSN is safe to ship in client code.
    pk = "pk_live_" + chars(r, ALNUM, 99)
    mapbox = (
        "pk.eyJ1Ijoi" + b64url(json.dumps({"u": pick(r, WORDS)}).encode())[10:] + "." + chars(r, B64URL, 22)
    )
    dsn = f"https://{chars(r, HEX, 32)}@o{r.randint(100000, 999999)}.ingest.sentry.io/{r.randint(1000000, 9999999)}"
    return pick(
        r,
        (
            f"const stripe = await loadStripe('{pk}');",
            f"The publishable key {pk} is the one for the checkout page (public by design).",
            f"mapboxgl.accessToken = '{mapbox}';",
            f"Sentry.init({{ dsn: '{dsn}', tracesSampleRate: 0.1 }});",
            f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY={pk}",
        ),
    )


def slack_ids(r: random.Random) -> str:
    channel, user, team = (
        "C0" + chars(r, UPPER_ALNUM, 9),
        "U0" + chars(r, UPPER_ALNUM, 9),
        "T0" + chars(r, UPPER_ALNUM, 8),
    )
    ts = f"{r.randint(1700000000, 1790000000)}.{r.randint(100000, 999999)}"
    return pick(
        r,
        (
            f"Post alerts to channel {channel} (team {team}).",
            f"<@{user}> asked about the deploy in <#{channel}|ops>",
            f"thread_ts={ts} channel={channel}",
            f"https://acme.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        ),
    )


def aws_arns(r: random.Random) -> str:
    account = digits(r, 12)
    return pick(
        r,
        (
            f"arn:aws:iam::{account}:role/{pick(r, SERVICES)}-deploy",
            f"Assume role arn:aws:iam::{account}:role/OrganizationAccountAccessRole in account {account}.",
            f"arn:aws:kms:eu-west-1:{account}:key/{uuid4(r)}",
            f"aws sts get-caller-identity → Account: {account}, UserId: AIDA{chars(r, BASE32, 17)}",
            f"Bucket policy principal: arn:aws:s3:::acme-{pick(r, SERVICES)}-{account}",
            f"arn:aws:secretsmanager:us-east-1:{account}:secret:prod/{pick(r, SERVICES)}/db-{chars(r, ALNUM, 6)}",
        ),
    )


def aws_resource_ids(r: random.Random) -> str:
    ids = {p: f"{p}-0{chars(r, HEX, 16)}" for p in ("i", "vpc", "subnet", "sg", "ami", "vol", "snap", "eni")}
    return pick(
        r,
        (
            f"Instance {ids['i']} in {ids['subnet']} ({ids['vpc']}) lost its security group {ids['sg']}.",
            f"Rebuilt from {ids['ami']}; data volume {ids['vol']} restored from {ids['snap']}.",
            f"aws ec2 describe-network-interfaces --network-interface-ids {ids['eni']}",
        ),
    )


def request_ids(r: random.Random) -> str:
    return pick(
        r,
        (
            f"x-request-id: {uuid4(r)}",
            f"X-Amz-Cf-Id: {chars(r, B64URL, 54)}==",
            f"cf-ray: {chars(r, HEX, 16)}-{pick(r, ['FRA', 'AMS', 'IAD', 'NRT'])}",
            f"X-GitHub-Request-Id: {chars(r, HEX_UPPER, 4)}:{chars(r, HEX_UPPER, 5)}:{chars(r, HEX_UPPER, 7)}:{chars(r, HEX_UPPER, 7)}:{chars(r, HEX_UPPER, 8)}",
            f"Support asked for the request id: {uuid4(r)} at {clock(r)}",
            f"x-amzn-RequestId: {uuid4(r)}",
        ),
    )


def trace_ids(r: random.Random) -> str:
    trace, span = chars(r, HEX, 32), chars(r, HEX, 16)
    return pick(
        r,
        (
            f"traceparent: 00-{trace}-{span}-01",
            f"{clock(r)} ERROR payment failed trace_id={trace} span_id={span}",
            f"dd.trace_id={r.randint(10**18, 10**19 - 1)} dd.span_id={r.randint(10**18, 10**19 - 1)}",
            f"Open the trace in Tempo: https://grafana.acme.io/explore?traceId={trace}",
        ),
    )


SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Meeting notes: move the standup to 10:30 on Thursdays.",
    '{"theme": "dark", "fontSize": 14, "autosave": true}',
    "Hallo Welt, dies ist nur ein Test der Kodierung.",
    "# README\nThis folder holds the exported dashboards.",
    "user preferences: compact view, weekly digest",
)


def base64_text(r: random.Random) -> str:
    encoded = b64(pick(r, SENTENCES).encode())
    return pick(
        r,
        (
            f"apiVersion: v1\nkind: ConfigMap\nbinaryData:\n  notes.txt: {encoded}",
            f"The field was base64 ({encoded}), it just decodes to the default settings.",
            f'{{"attachment": {{"name": "notes.txt", "content_b64": "{encoded}"}}}}',
        ),
    )


def base64_image(r: random.Random) -> str:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rand_bytes(r, r.randint(60, 180))
    gif = b"GIF89a" + rand_bytes(r, r.randint(40, 120))
    return pick(
        r,
        (
            f'<img alt="logo" src="data:image/png;base64,{b64(png)}">',
            f"background-image: url(data:image/gif;base64,{b64(gif)});",
            f"favicon: data:image/png;base64,{b64(png)}",
        ),
    )


def lockfile_hashes(r: random.Random) -> str:
    pkg = pick(r, ("lodash", "react-dom", "esbuild", "zod", "undici", "chalk"))
    version = f"{r.randint(1, 18)}.{r.randint(0, 30)}.{r.randint(0, 9)}"
    return pick(
        r,
        (
            f'"node_modules/{pkg}": {{\n  "version": "{version}",\n  "resolved": "https://registry.npmjs.org/{pkg}/-/{pkg}-{version}.tgz",\n  "integrity": "sha512-{b64(rand_bytes(r, 64))}"\n}}',
            f'{pkg}@^{version}:\n  version "{version}"\n  integrity sha512-{b64(rand_bytes(r, 64))}',
            f"{pick(r, ('requests', 'django', 'httpx'))}=={version} \\\n    --hash=sha256:{chars(r, HEX, 64)}",
            f'[[package]]\nname = "{pick(r, ("serde", "tokio", "rand"))}"\nversion = "{version}"\nchecksum = "{chars(r, HEX, 64)}"',
            f"golang.org/x/{pick(r, ('net', 'sys', 'crypto'))} v0.{r.randint(1, 40)}.0 h1:{b64(rand_bytes(r, 32))}",
        ),
    )


DOCUMENTED_PLACEHOLDERS = (
    # AWS docs "Managing access keys": the documented example key pairs.
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE\nAWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    # Slack docs "Incoming webhooks": the example URL.
    "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    # Telegram Bot API docs: the example token.
    "Telegram's docs show a token like 110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    # jwt.io's default example token.
    "Example from jwt.io: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    # Microsoft docs "Use the Azurite emulator": the well-known development account key.
    "UseDevelopmentStorage=true  # Azurite: AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    # Twilio docs quickstarts.
    "TWILIO_ACCOUNT_SID=ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\nTWILIO_AUTH_TOKEN=your_auth_token",
    "OPENAI_API_KEY=<your-api-key>",
    "export STRIPE_SECRET_KEY=sk_live_<your key here>",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GITLAB_TOKEN=glpat-xxxxxxxxxxxxxxxxxxxx",
    'SLACK_BOT_TOKEN="xoxb-your-bot-token"',
    "ANTHROPIC_API_KEY=sk-ant-...",
    "DATABASE_URL=postgres://user:password@localhost:5432/mydb",
    "MONGODB_URI=mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/",
    "api_key: YOUR_API_KEY_HERE",
    "Replace REPLACE_WITH_YOUR_TOKEN in config.yaml with the token from the dashboard.",
    "HF_TOKEN=hf_********************************",
)


def documented_placeholders(r: random.Random) -> str:
    value = pick(r, DOCUMENTED_PLACEHOLDERS)
    return pick(
        r,
        (
            f"From the quickstart (placeholder values):\n{value}",
            f"README example, not real:\n```\n{value}\n```",
            f"Nota: l'esempio della documentazione è\n{value}",
            value,
        ),
    )


def secret_references(r: random.Random) -> str:
    name = pick(
        r, ("API_KEY", "GITHUB_TOKEN", "STRIPE_SECRET_KEY", "DB_PASSWORD", "OPENAI_API_KEY", "SLACK_TOKEN")
    )
    vault_lines = "\n".join("          " + chars(r, HEX, 80) for _ in range(3))
    return pick(
        r,
        (
            f"{name}=${{{name}}}",
            f'token = os.environ["{name}"]',
            f"const key = process.env.{name};",
            f"env:\n  {name}: ${{{{ secrets.{name} }}}}",
            f"- name: {name}\n  valueFrom:\n    secretKeyRef:\n      name: {pick(r, SERVICES)}-secrets\n      key: {lower(name)}",
            f"db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n{vault_lines}",
            f'password = {{{{ vault "secret/data/{pick(r, SERVICES)}" "password" }}}}',
            f"{lower(name)}_file: /run/secrets/{lower(name)}",
            f"{lower(name)}: ENC[AES256_GCM,data:{b64(rand_bytes(r, 24))},iv:{b64(rand_bytes(r, 32))},tag:{b64(rand_bytes(r, 16))},type:str]",
            f'password: "${{file(\\"/etc/{pick(r, SERVICES)}/password\\")}}"',
            f"{name}=op://Engineering/{pick(r, SERVICES)}/credential",
            f"aws_secret_access_key = {{{{ resolve:secretsmanager:prod/{pick(r, SERVICES)}:SecretString:key }}}}",
        ),
    )


def public_keys(r: random.Random) -> str:
    ed = "AAAAC3NzaC1lZDI1NTE5AAAAI" + b64(b"\x00" + rand_bytes(r, 32))[1:].rstrip("=")
    rsa = "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + chars(r, B64, 500)
    spki = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d03010703420004") + rand_bytes(r, 64)
    fingerprint = ":".join(chars(r, HEX_UPPER, 2) for _ in range(32))
    return pick(
        r,
        (
            f"ssh-ed25519 {ed} {pick(r, PEOPLE).lower()}@{pick(r, HOSTS)}",
            f"Add this to authorized_keys on the bastion:\nssh-rsa {rsa} deploy@ci",
            pem("PUBLIC KEY", spki),
            f"JWT verification key (public):\n{pem('PUBLIC KEY', spki)}",
            f"age recipient: age1{chars(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}",
            f"[Peer]\nPublicKey = {b64(rand_bytes(r, 32))}\nEndpoint = vpn.acme.io:51820",
            f"SHA256 Fingerprint={fingerprint}",
            f"GPG key fingerprint: {' '.join(chars(r, HEX_UPPER, 4) for _ in range(10))}",
        ),
    )


def css_hashes(r: random.Random) -> str:
    return pick(
        r,
        (
            f"Content-Security-Policy: script-src 'self' 'sha256-{b64(rand_bytes(r, 32))}'",
            f'<link rel="stylesheet" href="/static/css/main.{chars(r, HEX, 8)}.css">',
            f'<div class="_card_{chars(r, LOWER_ALNUM, 5)}_1 sc-{chars(r, ALNUM, 6)} css-{chars(r, LOWER_ALNUM, 7)}">',
            f'<script src="/assets/index-{chars(r, B64URL, 8)}.js" integrity="sha384-{b64(rand_bytes(r, 48))}"></script>',
        ),
    )


def youtube_ids(r: random.Random) -> str:
    vid = chars(r, B64URL, 11)
    return pick(
        r,
        (
            f"Talk recording: https://www.youtube.com/watch?v={vid}&t={r.randint(10, 900)}s",
            f"https://youtu.be/{vid}",
            f"Vidéo de la démo : https://www.youtube.com/embed/{vid}",
        ),
    )


def webpack_chunks(r: random.Random) -> str:
    lines = "\n".join(
        f"  {name}.{chars(r, HEX, 20)}.js   {r.randint(10, 900)}.{r.randint(0, 99)} KiB  [emitted] [immutable]"
        for name in r.sample(["main", "vendors", "runtime", "chunk-412", "chunk-9a1"], 3)
    )
    return pick(
        r,
        (
            f"webpack 5.{r.randint(70, 99)}.0 compiled successfully\n{lines}",
            f"dist/assets/vendor-{chars(r, B64URL, 8)}.js  {r.randint(100, 999)} kB │ gzip: {r.randint(30, 99)} kB",
        ),
    )


def docker_digests(r: random.Random) -> str:
    digest = chars(r, HEX, 64)
    image = pick(r, ("nginx", "postgres", "python", "ghcr.io/acme/api", "redis"))
    return pick(
        r,
        (
            f"image: {image}@sha256:{digest}",
            f"$ docker pull {image}:latest\nDigest: sha256:{digest}\nStatus: Downloaded newer image",
            f"FROM {image}@sha256:{digest} AS base",
            f"REPOSITORY   TAG      IMAGE ID       SIZE\n{image}   latest   {chars(r, HEX, 12)}   {r.randint(40, 900)}MB",
        ),
    )


def nix_paths(r: random.Random) -> str:
    path = f"/nix/store/{chars(r, NIX32, 32)}-{pick(r, ('python3-3.12.1', 'openssl-3.0.12', 'nodejs-20.10.0', 'glibc-2.38'))}"
    return pick(r, (path, f"building '{path}.drv'...", f"error: path '{path}' is not valid"))


def ipfs_cids(r: random.Random) -> str:
    v0 = "Qm" + chars(r, BASE58, 44)
    v1 = "bafy" + chars(r, "abcdefghijklmnopqrstuvwxyz234567", 55)
    return pick(
        r,
        (
            f"ipfs://{v0}",
            f"https://ipfs.io/ipfs/{v1}",
            f"Pinned the dataset as {v1}",
            f"ipfs cat {v0}/README.md",
        ),
    )


PROSE = (
    "Rotate the GitHub token every 90 days; the reminder is in the ops calendar.",
    "Never commit .env files — the pre-commit hook checks for them.",
    "The Stripe secret key lives in Vault at secret/payments/stripe, not in the repo.",
    "Den API-Schlüssel nie im Chat teilen, sondern über den Passwortmanager.",
    "Les clés AWS doivent être remplacées par des rôles IAM d'ici fin mars.",
    "La contraseña de la base de datos se rota automáticamente cada semana.",
    "トークンは1Passwordに保存すること。Slackには貼らない。",
    "Ask Priya for access to the shared vault if the deploy token expired.",
    "We use short-lived OIDC tokens in CI, so no long-lived cloud keys are stored anywhere.",
    "Secret scanning flagged a test fixture last week; it was a fake key.",
    "Passwords must be at least 16 characters and are checked against breach lists.",
    "The webhook signing secret is rotated when the endpoint URL changes.",
    "API-ключи храним только в Vault, в репозитории их быть не должно.",
    "密钥统一放在 KMS 里，代码里只引用名称。",
)


def prose(r: random.Random) -> str:
    return pick(
        r, (pick(r, PROSE), f"Preference: {pick(r, PROSE)}", f"Decision ({day(r)}): {pick(r, PROSE)}")
    )


def blockchain_ids(r: random.Random) -> str:
    return pick(
        r,
        (
            f"Send the refund to 0x{chars(r, HEX, 40)} on mainnet.",
            f"tx hash 0x{chars(r, HEX, 64)} confirmed in block {r.randint(10**7, 2 * 10**7)}",
            f"bc1q{chars(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 38)} is the cold wallet address (public).",
        ),
    )


def oauth_client_ids(r: random.Random) -> str:
    # Client ids are public by the OAuth 2.0 spec (RFC 6749 §2.2); only the client secret is confidential.
    return pick(
        r,
        (
            f"GOOGLE_CLIENT_ID={digits(r, 12)}-{chars(r, LOWER_ALNUM, 32)}.apps.googleusercontent.com",
            f"GitHub App client id: Iv1.{chars(r, HEX, 16)}",
            f"client_id: Ov23li{chars(r, ALNUM, 14)}",
            f"AZURE_CLIENT_ID={uuid4(r)}\nAZURE_TENANT_ID={uuid4(r)}",
        ),
    )


def masked_tokens(r: random.Random) -> str:
    return pick(
        r,
        (
            f"GITHUB_TOKEN=ghp_{'*' * 36}",
            f"Key shown in the dashboard: sk-...{chars(r, ALNUM, 4)}",
            f"stripe: sk_live_••••••••••••{chars(r, ALNUM, 4)} (rolled {day(r)})",
            f"AWS key AKIA************{chars(r, UPPER_ALNUM, 4)} was deactivated.",
            f"{clock(r)} INFO auth ok token=[REDACTED] user={pick(r, PEOPLE).lower()}",
            f"Authorization: Bearer ***{chars(r, ALNUM, 4)}",
        ),
    )


def document_ids(r: random.Random) -> str:
    return pick(
        r,
        (
            f"Spec: https://docs.google.com/document/d/{chars(r, B64URL, 44)}/edit",
            f"Snippet: https://gist.github.com/{pick(r, WORDS)}/{chars(r, HEX, 32)}",
            f"Notion page: https://www.notion.so/acme/Runbook-{chars(r, HEX, 32)}",
            f"Figma: https://www.figma.com/file/{chars(r, ALNUM, 22)}/Onboarding",
            f"Sheet: https://docs.google.com/spreadsheets/d/{chars(r, B64URL, 44)}/edit#gid=0",
        ),
    )


def k8s_names(r: random.Random) -> str:
    svc = pick(r, SERVICES)
    return pick(
        r,
        (
            f"kubectl logs {svc}-{chars(r, LOWER_ALNUM, 10)}-{chars(r, LOWER_ALNUM, 5)} -n prod --previous",
            f"NAME                               READY   STATUS\n{svc}-{chars(r, 'bcdfghjklmnpqrstvwxz2456789', 9)}-{chars(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}   1/1     Running",
            f"configmap/{svc}-config-{chars(r, 'bcdfghjklmnpqrstvwxz2456789', 10)} created",
            f"secret/sh.helm.release.v1.{svc}.v{r.randint(2, 40)} (helm release record)",
        ),
    )


LOOKALIKE_KINDS: tuple[tuple[str, LookAlike], ...] = (
    ("git_sha", git_sha),
    ("sha256_digest", sha256_digest),
    ("sha512_digest", sha512_digest),
    ("release_checksums", release_checksums),
    ("uuid", uuids),
    ("ulid", ulids),
    ("ksuid", ksuids),
    ("stripe_object_ids", stripe_object_ids),
    ("publishable_client_keys", publishable_keys),
    ("slack_ids", slack_ids),
    ("aws_arns_and_account_ids", aws_arns),
    ("aws_resource_ids", aws_resource_ids),
    ("request_ids", request_ids),
    ("trace_ids", trace_ids),
    ("base64_of_text", base64_text),
    ("base64_image", base64_image),
    ("lockfile_hashes", lockfile_hashes),
    ("documented_placeholders", documented_placeholders),
    ("secret_references", secret_references),
    ("public_keys", public_keys),
    ("css_and_asset_hashes", css_hashes),
    ("youtube_ids", youtube_ids),
    ("bundle_chunk_hashes", webpack_chunks),
    ("docker_image_digests", docker_digests),
    ("nix_store_paths", nix_paths),
    ("ipfs_cids", ipfs_cids),
    ("prose_about_secrets", prose),
    ("blockchain_public_ids", blockchain_ids),
    ("oauth_client_ids", oauth_client_ids),
    ("masked_tokens", masked_tokens),
    ("document_ids_in_urls", document_ids),
    ("k8s_resource_names", k8s_names),
)


def lookalike_samples(rng: random.Random) -> list[Sample]:
    return [
        Sample(kind=name, group="lookalike", text=make(rng))
        for name, make in LOOKALIKE_KINDS
        for _ in range(LOOKALIKES_PER_KIND)
    ]


def dev_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with its text before disguising (the text itself for plain credentials and look-alikes),
    so a test can check that each credential's secret piece was really in it."""
    rng = random.Random(SEED)
    credentials = credential_samples(rng)
    return credentials + [(sample, sample.text) for sample in lookalike_samples(rng)]


def dev_part() -> list[Sample]:
    return [sample for sample, _ in dev_part_with_raw()]
