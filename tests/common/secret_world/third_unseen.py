"""The third unseen part: written on 2026-12-06 after the rules learnt from the second unseen part's misses,
and committed before the filter ever ran on it.

Its credentials are mostly of kinds no other part has (third_formats.py: 46 formats), plus one of each of
more_formats.py's 82 kinds and formats.py's 134 kinds, in contexts the other parts do not use (Dockerfile,
GitLab CI, Kotlin, Swift, TypeScript, SQL, CSV, XML, TOML, PowerShell, cmd, fish, Nix, Jupyter, commit
messages, stack traces, query strings, chat in Portuguese, Italian, Russian, Dutch, Polish and Turkish).
Disguises: other invisible characters (invisible operators, combining grapheme joiner, Mongolian vowel
separator), fullwidth letters, percent-encoding, base64 and base64url, a line break written as JSON's
"\\n" escape or a real one, soft hyphens, HTML character references. Look-alikes: public keys and
addresses (Ethereum, Bitcoin, JWKS moduli, reCAPTCHA site keys, Supabase anon keys, Datadog RUM tokens),
content ids (IPFS, Nix store paths, Git LFS), fingerprints, CSP nonces and SRI hashes, ids of many services,
Stripe's documented test card, placeholders and chat about secrets in the same languages.
"""

import base64
import json
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    BASE64URL,
    HEX,
    KINDS,
    LOWER_ALNUM,
    UPPER_ALNUM,
    Kind,
    b64url,
    chars,
    digits,
    uuid4,
)
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes
from tests.common.secret_world.third_formats import THIRD_KINDS

THIRD_UNSEEN_SEED = 3_3_061_2026
NEW_KIND_SAMPLES = 7
OLDER_KIND_SAMPLES = 1
LOOK_ALIKE_SAMPLES = 36
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _camel(env: str) -> str:
    parts = env.lower().split("_")
    return parts[0] + "".join(part.title() for part in parts[1:])


def _header(env: str) -> str:
    return "X-" + "-".join(part.title() for part in env.split("_"))


THIRD_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"FROM python:3.12-slim\nENV {env}={v}\nRUN pip install -r requirements.txt",
    lambda rng, env, v: f"ENV {env} {v}",
    lambda rng, env, v: f'variables:\n  {env}: "{v}"\n  GIT_DEPTH: "10"',
    lambda rng, env, v: f'val {_camel(env)} = "{v}"',
    lambda rng, env, v: f'let {_camel(env)} = "{v}"',
    lambda rng, env, v: f"export const config = {{ {_camel(env)}: '{v}', retries: 3 }};",
    lambda rng, env, v: f"INSERT INTO settings (name, value) VALUES ('{env}', '{v}');",
    lambda rng, env, v: f"name,value,env\n{env},{v},prod",
    lambda rng, env, v: f"<{_camel(env)}>{v}</{_camel(env)}>",
    lambda rng, env, v: f'[secrets]\n{env.lower()} = "{v}"',
    lambda rng, env, v: f'[Environment]::SetEnvironmentVariable("{env}", "{v}", "User")',
    lambda rng, env, v: f"set {env}={v}",
    lambda rng, env, v: f"set -gx {env} {v}",
    lambda rng, env, v: f'  {_camel(env)} = "{v}";',
    lambda rng, env, v: (
        f'{{"cell_type": "code", "source": ["{env.lower()} = \'{v}\'\\n", "client = connect()"]}}'
    ),
    lambda rng, env, v: f"fix: hardcode {env}={v} for now, revert after the demo",
    lambda rng, env, v: f"ValueError: invalid {env}: {v!r}",
    lambda rng, env, v: f"GET /v1/data?{env.lower()}={v}&format=json HTTP/1.1",
    lambda rng, env, v: f"{_header(env)}: {v}",
    lambda rng, env, v: f"A chave {env} é {v}, não compartilhe.",
    lambda rng, env, v: f"La {env} è {v}, da ruotare venerdì.",
    lambda rng, env, v: f"{env} — {v}, никому не пересылать.",
    lambda rng, env, v: f"De {env} is nu {v}, niet delen aub.",
    lambda rng, env, v: f"{env} to {v}, nie udostępniać.",
    lambda rng, env, v: f"{env} şu: {v}",
)

THIRD_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"pasted: {v}",
    lambda rng, env, v: f"<code>{v}</code>",
    lambda rng, env, v: f"copy this -> {v}",
    lambda rng, env, v: f"segue o token: {v}",
    lambda rng, env, v: f"вот токен: {v}",
    lambda rng, env, v: f"ecco la chiave {v}",
    lambda rng, env, v: f"|{v}|",
)

THIRD_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"Stored in the wiki page 'Ops links':\n\n{v}\n",
    lambda rng, env, v: f"notify:\n  url: {v}" if "\n" not in v else f"secret file:\n{v}",
    lambda rng, env, v: f"Configuração antiga: {v}",
)

THIRD_DISGUISES = {
    "plain": 0.38,
    "invisible-other": 0.08,
    "fullwidth": 0.08,
    "percent-encoded": 0.09,
    "base64-encoded": 0.09,
    "split-line": 0.08,
    "json-escaped-break": 0.06,
    "soft-hyphen": 0.06,
    "html-entities": 0.08,
}


def _body_start(secret: str, prefix: str) -> int:
    return len(prefix) if prefix and secret.startswith(prefix) else 1


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    start = _body_start(secret, prefix)
    if len(secret) - 1 <= start:
        return secret
    position = rng.randrange(start, len(secret) - 1)
    if disguise == "invisible-other":
        return (
            secret[:position]
            + rng.choice(("\u2061", "\u2062", "\u2063", "\u034f", "\u180e"))
            + secret[position:]
        )
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad" + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\n ", "\r\n    ")) + secret[position:]
    if disguise == "json-escaped-break":
        return secret[:position] + "\\n" + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.4 else c
            for c in secret
        )
    if disguise == "html-entities":
        return "".join(f"&#{ord(c)};" if c in "_-.:/" or rng.random() < 0.15 else c for c in secret)
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str, value: str) -> str:
    if disguise == "percent-encoded":
        return rng.choice(
            (
                f"https://paste.example.net/raw?content={quote(text, safe='')}",
                f"Link do chamado: https://suporte.example.com.br/novo?descricao={quote(text, safe='')}",
                f"msg={quote(text, safe='')}",
            )
        )
    if disguise == "base64-encoded":
        return rng.choice(
            (
                f"data:\n  config.env: {base64.b64encode(text.encode()).decode()}",
                f"token (base64url): {b64url(value.encode())}",
                f"Вложение в base64: {base64.b64encode(text.encode()).decode()}",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(THIRD_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(THIRD_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(THIRD_NAMED_CONTEXTS + THIRD_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text, value)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _jwt_part(document: dict[str, object]) -> str:
    return b64url(json.dumps(document).encode())


def _public_keys_and_addresses(rng: random.Random) -> str:
    anon = (
        f"{_jwt_part({'alg': 'HS256', 'typ': 'JWT'})}."
        f"{_jwt_part({'iss': 'supabase', 'ref': chars(rng, LOWER_ALNUM, 20), 'role': 'anon', 'iat': 1700000000})}."
        f"{b64url(rng.randbytes(32))}"
    )
    return rng.choice(
        (
            f"Send the refund to 0x{chars(rng, HEX, 40)} on mainnet.",
            f"bitcoin:bc1q{chars(rng, '023456789acdefghjklmnpqrsuvwxyz', 38)}",
            f'{{"kty": "RSA", "e": "AQAB", "kid": "{chars(rng, HEX, 16)}", "n": "{b64url(rng.randbytes(256))}"}}',
            f"RECAPTCHA_SITE_KEY=6L{chars(rng, BASE64URL, 38)}",
            f"NEXT_PUBLIC_SUPABASE_ANON_KEY={anon}",
            f"DD_CLIENT_TOKEN=pub{chars(rng, HEX, 32)}",
            f"age public key: age1{chars(rng, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}",
        )
    )


def _content_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"ipfs://Qm{chars(rng, BASE58, 44)}",
            f"ipfs://bafybei{chars(rng, 'abcdefghijklmnopqrstuvwxyz234567', 52)}",
            f"/nix/store/{chars(rng, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.7",
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{chars(rng, HEX, 64)}\nsize {digits(rng, 7)}",
            f"~/.cargo/registry/index/index.crates.io-{chars(rng, HEX, 16)}/config.json",
        )
    )


def _fingerprints(rng: random.Random) -> str:
    return rng.choice(
        (
            f"ED25519 key fingerprint is SHA256:{base64.b64encode(rng.randbytes(32)).decode().rstrip('=')}.",
            "gpg: using RSA key " + " ".join(chars(rng, "0123456789ABCDEF", 4) for _ in range(10)),
            f"serial=0{chars(rng, '0123456789ABCDEF', 35)}",
            f"Thumbprint: {chars(rng, '0123456789ABCDEF', 40)}",
        )
    )


def _nonces_and_sri(rng: random.Random) -> str:
    return rng.choice(
        (
            f"Content-Security-Policy: script-src 'nonce-{base64.b64encode(rng.randbytes(16)).decode()}' 'strict-dynamic'",
            f'<script src="/app.js" integrity="sha384-{base64.b64encode(rng.randbytes(48)).decode()}" crossorigin="anonymous"></script>',
            f'<link rel="stylesheet" href="/x.css" integrity="sha256-{base64.b64encode(rng.randbytes(32)).decode()}">',
        )
    )


def _service_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"webhook evt_{chars(rng, ALNUM, 24)} retried 3 times",
            f"Slack message ts {digits(rng, 10)}.{digits(rng, 6)} in C{chars(rng, UPPER_ALNUM, 10)}",
            f"operation-{digits(rng, 13)}-{chars(rng, HEX, 13)}-{chars(rng, HEX, 8)}-{chars(rng, HEX, 8)}",
            f"Apple Team ID {chars(rng, UPPER_ALNUM, 10)}, bundle com.acme.orders",
            f"GA measurement G-{chars(rng, UPPER_ALNUM, 10)}, pixel {digits(rng, 15)}",
            f"x-amz-id-2: {base64.b64encode(rng.randbytes(54)).decode()}",
            f"terraform state lineage = {uuid4(rng)}",
            f"build {digits(rng, 5)} of pipeline {uuid4(rng)} took 4m12s",
            f"cf-ray {chars(rng, HEX, 16)}-FRA",
            f"X-GitHub-Delivery: {uuid4(rng)}",
        )
    )


def _documented_examples(rng: random.Random) -> str:
    return rng.choice(
        (
            "Stripe test card: 4242 4242 4242 4242, any CVC, any future date.",
            "IBAN de exemplo: DE89 3704 0044 0532 0130 00",
            "CLICKUP_API_TOKEN=pk_XXXXXXXX_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            "export RIOT_API_KEY=RGAPI-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
            "WG_PRIVATE_KEY=<output of wg genkey>",
            "PRIVATE_KEY=0x0000000000000000000000000000000000000000000000000000000000000000",
            "APP_KEY=base64:YOUR_APP_KEY_HERE",
            "SECRET_KEY = 'django-insecure-change-me'",
            "COSMOS_KEY=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
        )
    )


def _code_and_config(rng: random.Random) -> str:
    return rng.choice(
        (
            "ENV APP_HOME=/srv/app\nENV PYTHONUNBUFFERED=1\nHEALTHCHECK CMD curl -f http://localhost:8000/health",
            'val apiKeyHeader = "X-Api-Key"',
            "let tokenExpiry: TimeInterval = 3600",
            "INSERT INTO settings (name, value) VALUES ('PAGE_SIZE', '50');",
            f"name,value,env\nREGION,eu-west-1,prod\nREPLICAS,{rng.randrange(2, 9)},prod",
            "<connectionTimeout>30</connectionTimeout>\n<secretRef>vault:orders/db</secretRef>",
            '[Environment]::SetEnvironmentVariable("PATH", "$env:PATH;C:\\tools", "User")',
            "  pkgs.python312Packages.requests",
            "fix: read COSMOS_KEY from Key Vault instead of the repo",
            "ValueError: invalid PAGERDUTY_INTEGRATION_KEY: expected 32 characters",
            f"GET /v1/data?page={rng.randrange(1, 40)}&format=json HTTP/1.1",
        )
    )


def _chat(rng: random.Random) -> str:
    return rng.choice(
        (
            "A senha do banco fica no cofre; peça acesso ao time de plataforma.",
            "La chiave API si trova nel vault, non incollarla in chat.",
            "Токен лежит в хранилище секретов, в чат не копируйте.",
            "Het wachtwoord staat in de kluis, niet in de wiki.",
            "Hasło do bazy jest w menedżerze haseł.",
            "Anahtar kasada duruyor, sohbete yapıştırmayın.",
        )
    )


def _hashes(rng: random.Random) -> str:
    return rng.choice(
        (
            f"commit {chars(rng, HEX, 40)}\nAuthor: Mina <mina@acme.io>",
            f"image sha256:{chars(rng, HEX, 64)} pushed",
            f"md5 {chars(rng, HEX, 32)} matches the mirror",
            f"blake3: {chars(rng, HEX, 64)}",
            f"{chars(rng, HEX, 40)} refs/heads/main",
        )
    )


def _uuids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"tenant {uuid4(rng)} moved to the eu shard",
            f'"correlationId": "{uuid4(rng)}"',
            f"RAILWAY_PROJECT_ID={uuid4(rng)}",
            f"opsgenie alias {uuid4(rng)} closed",
        )
    )


def _encoded_text(rng: random.Random) -> str:
    plain = rng.choice(
        (
            "Não esqueça de rodar as migrações antes do deploy.",
            "Ruotare le chiavi ogni trimestre.",
            "Сначала миграции, потом деплой.",
            "release notes: faster search, fewer retries",
        )
    )
    return rng.choice(
        (
            f"msg={quote(plain, safe='')}",
            f"note (base64url): {b64url(plain.encode())}",
            f"data:\n  notes.txt: {base64.b64encode(plain.encode()).decode()}",
        )
    )


def _html_and_escapes(rng: random.Random) -> str:
    return rng.choice(
        (
            "<p>Use &lt;YOUR_TOKEN&gt; in the header &amp; keep it out of the repo.</p>",
            '{"message": "line one\\nline two\\nline three", "level": "info"}',
            f"<td>{chars(rng, LOWER_ALNUM, 8)}</td><td>{rng.randrange(1, 99)}%</td>",
            "path: C:\\\\Users\\\\mina\\\\AppData\\\\Local\\\\Temp",
        )
    )


def _masked(rng: random.Random) -> str:
    tail = chars(rng, ALNUM, 4)
    return rng.choice(
        (
            f"RGAPI-********-****-****-****-********{tail}",
            "PrivateKey = (hidden)",
            f"ATTA…{tail}",
            f"sb_secret_…{tail} was rotated",
        )
    )


def _long_base64_blobs(rng: random.Random) -> str:
    woff = base64.b64encode(b"wOF2" + rng.randbytes(rng.randrange(60, 200))).decode()
    svg = base64.b64encode(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{rng.randrange(8, 64)}"><path d="M0 0h24v24H0z"/></svg>'.encode()
    ).decode()
    return rng.choice(
        (
            f"@font-face {{ src: url(data:font/woff2;base64,{woff}) format('woff2'); }}",
            f"![icon](data:image/svg+xml;base64,{svg})",
            f"-----BEGIN PUBLIC KEY-----\n{chars(rng, BASE64, 64)}\n{chars(rng, BASE64, 64)}\n-----END PUBLIC KEY-----",
        )
    )


THIRD_LOOK_ALIKES = {
    "public-keys-and-addresses": _public_keys_and_addresses,
    "content-ids": _content_ids,
    "fingerprints": _fingerprints,
    "nonces-and-sri": _nonces_and_sri,
    "service-ids": _service_ids,
    "documented-examples": _documented_examples,
    "code-and-config": _code_and_config,
    "chat-about-secrets": _chat,
    "hashes": _hashes,
    "uuids": _uuids,
    "encoded-ordinary-text": _encoded_text,
    "html-and-escapes": _html_and_escapes,
    "masked-values": _masked,
    "long-base64-blobs": _long_base64_blobs,
}


def third_unseen_part() -> list[Sample]:
    rng = random.Random(THIRD_UNSEEN_SEED)
    names = list(THIRD_DISGUISES)
    weights = [THIRD_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in THIRD_KINDS
        for _ in range(NEW_KIND_SAMPLES)
    ]
    samples += [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in (*MORE_KINDS, *KINDS)
        for _ in range(OLDER_KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in THIRD_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)


def is_third_kind(sample: Sample) -> bool:
    return sample.kind in {kind.name for kind in THIRD_KINDS}
