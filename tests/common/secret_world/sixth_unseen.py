"""The sixth unseen part: written on 2026-12-06 after the rules learnt from the fifth unseen part's misses,
and committed before the filter ever ran on it.

No new kinds: two of each of the 278 kinds, in contexts no other part uses (GitHub Actions $GITHUB_ENV,
CloudFormation parameters, ConfigMaps, Ansible inventories, Chef attributes, Spring ${VAR:default},
Gradle buildConfigField, xcconfig, Perl, Clojure, C and C++ constants, SQL and Redis commands that set a
password, wget and HTTPie headers, chat in Finnish, Hungarian, Romanian, Ukrainian, Malay, Tagalog and
Swahili), with the earlier disguise families. Look-alikes no other part has: CI expressions, certificate
and key fingerprints, Azure resource ids, service-account emails, Redis run ids, password hashes (argon2,
apr1), lone JWT headers, base64 of JSON config, MongoDB ObjectIds, advisory ids.
"""

import base64
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    HEX,
    KINDS,
    LOWER_ALNUM,
    Kind,
    chars,
    digits,
    uuid4,
)
from tests.common.secret_world.fourth_unseen import FOURTH_KINDS
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes
from tests.common.secret_world.third_formats import THIRD_KINDS

SIXTH_UNSEEN_SEED = 6_6_061_2026
KIND_SAMPLES = 2
LOOK_ALIKE_SAMPLES = 40


def _camel(env: str) -> str:
    parts = env.lower().split("_")
    return parts[0] + "".join(part.title() for part in parts[1:])


SIXTH_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f'      - run: echo "{env}={v}" >> $GITHUB_ENV',
    lambda rng, env, v: f"Parameters:\n  {env}:\n    Type: String\n    Default: {v}",
    lambda rng, env, v: f'kind: ConfigMap\ndata:\n  {env}: "{v}"',
    lambda rng, env, v: f"[web]\nweb1.acme.io {env.lower()}={v}",
    lambda rng, env, v: f"node.default['orders']['{env.lower()}'] = '{v}'",
    lambda rng, env, v: f"orders:\n  {_camel(env)}: ${{{env}:{v}}}",
    lambda rng, env, v: f'buildConfigField("String", "{env}", "\\"{v}\\"")',
    lambda rng, env, v: f"{env} = {v}",
    lambda rng, env, v: f"$ENV{{{env}}} = '{v}';",
    lambda rng, env, v: f'(def {env.lower().replace("_", "-")} "{v}")',
    lambda rng, env, v: f'#define {env} "{v}"',
    lambda rng, env, v: f'constexpr auto {_camel(env)} = "{v}";',
    lambda rng, env, v: f'static {env}: &str = "{v}";',
    lambda rng, env, v: f'wget --header="{env.replace("_", "-")}: {v}" https://api.acme.io/v1/export',
    lambda rng, env, v: f'http :8000/v1/me {env.replace("_", "-")}:"{v}"',
    lambda rng, env, v: f"{env} on {v}, älä jaa sitä.",
    lambda rng, env, v: f"A {env}: {v}, ne oszd meg.",
    lambda rng, env, v: f"{env} este {v}, nu o distribui.",
    lambda rng, env, v: f"{env} — це {v}, не поширюйте.",
    lambda rng, env, v: f"{env} ialah {v}, jangan kongsi.",
    lambda rng, env, v: f"Ang {env} ay {v}, huwag ibahagi.",
    lambda rng, env, v: f"{env} ni {v}, usishiriki.",
)

SIXTH_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"ALTER USER app WITH PASSWORD '{v}';",
    lambda rng, env, v: f"CREATE USER 'app'@'%' IDENTIFIED BY '{v}';",
    lambda rng, env, v: f"redis-cli CONFIG SET requirepass {v}",
    lambda rng, env, v: f"(new one: {v})",
    lambda rng, env, v: f"key={v}",
    lambda rng, env, v: f"```\n{v}\n```",
)

SIXTH_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"  - run: ./migrate --url '{v}'",
    lambda rng, env, v: f"Stara konfiguracja:\n{v}",
)

SIXTH_DISGUISES = {
    "plain": 0.40,
    "zero-width": 0.07,
    "bidi-control": 0.05,
    "fullwidth": 0.07,
    "percent-encoded": 0.08,
    "base64-encoded": 0.08,
    "split-line": 0.10,
    "soft-hyphen": 0.06,
    "placeholder-word": 0.09,
}


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    start = len(prefix) if prefix and secret.startswith(prefix) else 1
    if len(secret) - 2 <= start:
        return secret
    position = rng.randrange(start + 1, len(secret) - 1)
    if disguise == "zero-width":
        return secret[:position] + rng.choice(("\u200d", "\u2060\u200b", "\ufeff")) + secret[position:]
    if disguise == "bidi-control":
        return secret[:position] + rng.choice(("\u202a", "\u2066", "\u061c")) + secret[position:]
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad" + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\n\t\t", "\\\n", "\r\n ")) + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.2 else c
            for c in secret
        )
    if disguise == "placeholder-word":
        word = rng.choice(("EXAMPLE", "testing", "xxxxxxxx", "SAMPLE", "dummy", "fake"))
        spots = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
        if not spots:
            return secret
        at = rng.choice(spots)
        return secret[:at] + word + secret[at + len(word) :]
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str) -> str:
    if disguise == "percent-encoded":
        return rng.choice(
            (
                f"https://gitlab.acme.io/-/issues/new?issue[description]={quote(text, safe='')}",
                f"Referer: https://acme.io/share?note={quote(text, safe='')}",
            )
        )
    if disguise == "base64-encoded":
        encoded = base64.b64encode(text.encode()).decode()
        return rng.choice(
            (
                f"binaryData:\n  settings.txt: {encoded}",
                f'{{"content": "{encoded}", "path": "ops/notes.txt"}}',
                f"atob('{encoded}')",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(SIXTH_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(SIXTH_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(SIXTH_NAMED_CONTEXTS + SIXTH_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _ci_expressions(rng: random.Random) -> str:
    return rng.choice(
        (
            '      - run: echo "SHA=${{ github.sha }}" >> $GITHUB_ENV',
            "          token: ${{ secrets.GITHUB_TOKEN }}",
            f'      - run: echo "BUILD_ID={digits(rng, 9)}" >> $GITHUB_ENV',
            "Parameters:\n  DbPassword:\n    Type: String\n    NoEcho: true",
        )
    )


def _fingerprints(rng: random.Random) -> str:
    colon_hex = ":".join(chars(rng, "0123456789ABCDEF", 2) for _ in range(20))
    return rng.choice(
        (
            f"SHA1: {colon_hex}",
            f"256 SHA256:{base64.b64encode(rng.randbytes(32)).decode().rstrip('=')} mina@laptop (ED25519)",
            f"pub   rsa4096 2024-01-01 [SC]\n      {chars(rng, '0123456789ABCDEF', 40)}",
            f"sha256 Fingerprint={colon_hex}",
        )
    )


def _cloud_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"/subscriptions/{uuid4(rng)}/resourceGroups/orders/providers/Microsoft.Web/sites/orders-api",
            f"orders-deployer@acme-prod-{digits(rng, 6)}.iam.gserviceaccount.com",
            f"arn:aws:cloudformation:eu-west-1:{digits(rng, 12)}:stack/orders/{uuid4(rng)}",
            f"system:serviceaccount:orders:deployer-{chars(rng, LOWER_ALNUM, 5)}",
        )
    )


def _redis_and_mongo(rng: random.Random) -> str:
    return rng.choice(
        (
            f"# Server\nredis_version:7.2.4\nrun_id:{chars(rng, HEX, 40)}\ntcp_port:6379",
            f'{{"_id": ObjectId("{chars(rng, HEX, 24)}"), "status": "paid"}}',
            f"GHSA-{chars(rng, '23456789cfghjmpqrvwx', 4)}-{chars(rng, '23456789cfghjmpqrvwx', 4)}-{chars(rng, '23456789cfghjmpqrvwx', 4)} fixed in 2.31.1",
        )
    )


def _password_hashes(rng: random.Random) -> str:
    return rng.choice(
        (
            f"$argon2id$v=19$m=65536,t=3,p=4${base64.b64encode(rng.randbytes(16)).decode().rstrip('=')}${base64.b64encode(rng.randbytes(32)).decode().rstrip('=')}",
            f"mina:$apr1${chars(rng, ALNUM, 8)}${chars(rng, ALNUM + './', 22)}",
            f"pbkdf2_sha256$720000${chars(rng, ALNUM, 22)}${base64.b64encode(rng.randbytes(32)).decode()}",
        )
    )


def _jwt_headers_and_json(rng: random.Random) -> str:
    config = base64.b64encode(
        f'{{"region": "eu-west-1", "replicas": {rng.randrange(1, 9)}, "features": ["search", "export"]}}'.encode()
    ).decode()
    return rng.choice(
        (
            "The token header eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 says RS256.",
            f"binaryData:\n  config.json: {config}",
            f"atob('{config}')",
        )
    )


def _documented_examples(rng: random.Random) -> str:
    return rng.choice(
        (
            "ALTER USER app WITH PASSWORD 'new_password';",
            "CREATE USER 'app'@'%' IDENTIFIED BY 'password';",
            'redis-cli CONFIG SET requirepass ""',
            'wget --header="PRIVATE-TOKEN: <your_access_token>" https://gitlab.example.com/api/v4/projects',
            'http :8000/v1/me Authorization:"Bearer $TOKEN"',
            "Parameters:\n  DbPassword:\n    Default: changeme",
        )
    )


def _code(rng: random.Random) -> str:
    return rng.choice(
        (
            '#define API_KEY_HEADER "X-Api-Key"',
            "constexpr auto tokenTtl = 3600;",
            'static TOKEN_URL: &str = "https://auth.acme.io/oauth/token";',
            '(def api-key (System/getenv "API_KEY"))',
            "$ENV{PATH} = '/usr/local/bin:/usr/bin';",
            'buildConfigField("String", "API_BASE_URL", "\\"https://api.acme.io\\"")',
        )
    )


def _chat(rng: random.Random) -> str:
    return rng.choice(
        (
            "Salasana on holvissa, älä liitä sitä chattiin.",
            "A jelszó a széfben van, ne másold be a chatbe.",
            "Parola este în seif, nu o lipi în chat.",
            "Пароль у сховищі, не вставляйте його в чат.",
            "Kata laluan ada dalam peti besi, jangan tampal dalam sembang.",
            "Nasa vault ang password, huwag i-paste sa chat.",
            "Nenosiri liko kwenye vault, usilibandike kwenye gumzo.",
        )
    )


def _config(rng: random.Random) -> str:
    return rng.choice(
        (
            f'kind: ConfigMap\ndata:\n  LOG_LEVEL: "info"\n  WORKERS: "{rng.randrange(2, 17)}"',
            f"[web]\nweb1.acme.io ansible_host=10.0.{rng.randrange(0, 255)}.{rng.randrange(1, 255)} ansible_user=deploy",
            "node.default['orders']['port'] = 8080",
            f"PRODUCT_BUNDLE_IDENTIFIER = io.acme.orders\nDEVELOPMENT_TEAM = {chars(rng, string.ascii_uppercase + string.digits, 10)}",
        )
    )


def _encoded_text(rng: random.Random) -> str:
    plain = rng.choice(("Kiitos tilauksesta!", "Köszönjük!", "Mulțumim!", "Дякуємо!", "Terima kasih!"))
    return rng.choice(
        (
            f"https://acme.io/share?note={quote(plain, safe='')}",
            f'{{"content": "{base64.b64encode(plain.encode()).decode()}", "path": "ops/notes.txt"}}',
        )
    )


def _pem_public(rng: random.Random) -> str:
    return (
        "-----BEGIN PUBLIC KEY-----\n"
        + "\n".join(chars(rng, BASE64, 64) for _ in range(3))
        + "\n-----END PUBLIC KEY-----"
    )


SIXTH_LOOK_ALIKES = {
    "ci-expressions": _ci_expressions,
    "fingerprints": _fingerprints,
    "cloud-ids": _cloud_ids,
    "redis-mongo-advisory-ids": _redis_and_mongo,
    "password-hashes": _password_hashes,
    "jwt-headers-and-json": _jwt_headers_and_json,
    "documented-examples": _documented_examples,
    "code-naming-a-secret": _code,
    "chat-about-secrets": _chat,
    "config-without-secrets": _config,
    "encoded-ordinary-text": _encoded_text,
    "public-keys": _pem_public,
    "masked": lambda rng: f"requirepass ******** (set {rng.randrange(2, 30)} days ago)",
}


def sixth_unseen_part() -> list[Sample]:
    rng = random.Random(SIXTH_UNSEEN_SEED)
    names = list(SIXTH_DISGUISES)
    weights = [SIXTH_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in (*FOURTH_KINDS, *THIRD_KINDS, *MORE_KINDS, *KINDS)
        for _ in range(KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in SIXTH_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)
