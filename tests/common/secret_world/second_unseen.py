"""The second unseen part: written on 2026-12-06 after the rules learnt from the first unseen part's misses,
and committed before the filter ever ran on it.

Its credentials are mostly of kinds no other part has (more_formats.py: 82 formats of other providers),
plus one of each of formats.py's 134 kinds, in contexts the other parts do not use: code in Python, Go,
Java, C#, PHP and Ruby, .env and YAML variants, JSON, shell, logs, Markdown, chat in Japanese, German,
Spanish, French, Chinese and Korean. Disguises: zero-width characters, fullwidth letters, percent-encoding
(of the text or of the value alone), base64 (of the text, or of the value alone as a Kubernetes Secret
holds it), split lines, soft hyphens, placeholder words. Look-alikes: hashes, UUIDs, commit SHAs, the
providers' documented example values, code that names a secret, base64 images, ids of many services,
public client keys, config without secrets, chat about secrets in the same languages.
"""

import base64
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64URL,
    HEX,
    KINDS,
    LOWER_ALNUM,
    UPPER_ALNUM,
    Kind,
    chars,
    digits,
    uuid4,
)
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes

SECOND_UNSEEN_SEED = 61_206_2026
NEW_KIND_SAMPLES = 5
OLD_KIND_SAMPLES = 1
LOOK_ALIKE_SAMPLES = 37


def _pascal(env: str) -> str:
    return "".join(part.title() for part in env.lower().split("_"))


def _camel(env: str) -> str:
    pascal = _pascal(env)
    return pascal[0].lower() + pascal[1:]


SECOND_NAMED_CONTEXTS: tuple[Context, ...] = (
    # Python
    lambda rng, env, v: f'os.environ["{env}"] = "{v}"',
    lambda rng, env, v: f'os.environ.setdefault("{env}", "{v}")',
    lambda rng, env, v: f'settings = Settings(\n    debug=False,\n    {env.lower()}="{v}",\n)',
    # Go
    lambda rng, env, v: f'cfg := Config{{\n\tRegion: "eu-west-1",\n\t{_pascal(env)}: "{v}",\n}}',
    lambda rng, env, v: f'viper.SetDefault("{env.lower()}", "{v}")',
    # Java / Spring
    lambda rng, env, v: f'props.setProperty("{env.lower().replace("_", ".")}", "{v}");',
    lambda rng, env, v: f'@Value("${{{env.lower().replace("_", ".")}:{v}}}")\nprivate String {_camel(env)};',
    # C#
    lambda rng, env, v: f'var {_camel(env)} = Environment.GetEnvironmentVariable("{env}") ?? "{v}";',
    lambda rng, env, v: f'builder.Configuration["{_pascal(env)}"] = "{v}";',
    # PHP
    lambda rng, env, v: f"define('{env}', '{v}');",
    lambda rng, env, v: f"    '{env.lower()}' => env('{env}', '{v}'),",
    # Ruby
    lambda rng, env, v: f'config.{env.lower()} = "{v}"',
    lambda rng, env, v: f'{env.lower()} = ENV.fetch("{env}", "{v}")',
    # .env, YAML, JSON, shell
    lambda rng, env, v: f"{env}='{v}' # rotated 2026-11",
    lambda rng, env, v: f"{env.lower()}: >-\n  {v}\ntimeout: 30",
    lambda rng, env, v: f'  "{_camel(env)}": "{v}",\n  "retries": 3',
    lambda rng, env, v: f'read -r {env} <<< "{v}"',
    # logs
    lambda rng, env, v: f'level=debug msg="loaded secret" name={env} value={v}',
    lambda rng, env, v: f"[2026-12-06 01:02:03,114] DEBUG settings: {{'{env}': '{v}', 'DEBUG': False}}",
    # Markdown
    lambda rng, env, v: f"- **{env}**: `{v}`",
    lambda rng, env, v: f"> **Note**\n> {env}: {v}",
    # chat in several languages
    lambda rng, env, v: f"{env} は {v} です。本番用なので共有しないでください。",
    lambda rng, env, v: f"Der {env} ist {v}, bitte nicht weitergeben.",
    lambda rng, env, v: f"La clave {env} es {v} (no compartir).",
    lambda rng, env, v: f"Le {env} de prod est {v} pour l'instant.",
    lambda rng, env, v: f"{env} 是 {v}，别外传。",
    lambda rng, env, v: f"{env}: {v} (이건 임시 값)",
    lambda rng, env, v: f"@oncall fyi {env} -> {v}",
)

SECOND_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"Here you go: {v}",
    lambda rng, env, v: f"<td>{v}</td>",
    lambda rng, env, v: f'tokens = ["{v}"]',
    lambda rng, env, v: f"{v}  # old one, revoked?",
    lambda rng, env, v: f"新しいキー: {v}",
    lambda rng, env, v: f"Neuer Schlüssel für Staging: {v}",
    lambda rng, env, v: f"Aquí está el token nuevo: {v}",
    lambda rng, env, v: f"WARN upstream rejected credential {v} (401)",
)

SECOND_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"connection for the ETL job: {v}",
    lambda rng, env, v: f'engine = create_engine("{v}")',
    lambda rng, env, v: f"运行时用的连接串是 {v}",
)

SECOND_DISGUISES = {
    "plain": 0.38,
    "zero-width": 0.08,
    "fullwidth": 0.08,
    "percent-encoded": 0.10,
    "base64-encoded": 0.10,
    "split-line": 0.12,
    "soft-hyphen": 0.06,
    "placeholder-word": 0.08,
}


def _body_start(secret: str, prefix: str) -> int:
    return len(prefix) if prefix and secret.startswith(prefix) else 1


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    start = _body_start(secret, prefix)
    if len(secret) - 1 <= start:
        return secret
    position = rng.randrange(start, len(secret) - 1)
    if disguise == "zero-width":
        return secret[:position] + rng.choice(("\u200b", "\u2060", "\ufeff", "\u200c")) + secret[position:]
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad" + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\r\n", "\n\t", "\\\n  ")) + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.3 else c
            for c in secret
        )
    if disguise == "placeholder-word":
        word = rng.choice(("EXAMPLE", "sample", "xxxxxx", "test", "DEMO"))
        spots = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
        if not spots:
            return secret
        at = rng.choice(spots)
        return secret[:at] + word + secret[at + len(word) :]
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str, env: str, value: str) -> str:
    if disguise == "percent-encoded":
        return rng.choice(
            (
                f"https://sso.example.org/login?next={quote(text, safe='')}",
                f"curl 'https://api.example.org/v1/check?{env.lower()}={quote(value, safe='')}'",
                f"body={quote(text, safe='')}&submit=1",
            )
        )
    if disguise == "base64-encoded":
        return rng.choice(
            (
                f"apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  {env}: {base64.b64encode(value.encode()).decode()}",
                f"echo '{base64.b64encode(text.encode()).decode()}' | base64 --decode >> .env",
                f"Der Anhang (base64): {base64.b64encode(text.encode()).decode()}",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(SECOND_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(SECOND_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(SECOND_NAMED_CONTEXTS + SECOND_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text, kind.env, value)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _hash(rng: random.Random) -> str:
    sha256, sha1, md5 = chars(rng, HEX, 64), chars(rng, HEX, 40), chars(rng, HEX, 32)
    return rng.choice(
        (
            f"Digest: sha256:{sha256}\nStatus: Downloaded newer image for postgres:16",
            f"{sha256}  kenfold-1.4.2-py3-none-any.whl",
            f'"dist": {{"shasum": "{sha1}", "tarball": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"}}',
            f"golang.org/x/net v0.19.0 h1:{base64.b64encode(rng.randbytes(32)).decode()}",
            f'checksum = "{sha256}"',
            f"MD5 ({rng.choice(('backup.tar', 'dump.sql'))}) = {md5}",
            f"sha1sum: {sha1}",
            f"password_hash: $2b$12${chars(rng, ALNUM + './', 53)}",
        )
    )


def _uuid_look_alike(rng: random.Random) -> str:
    return rng.choice(
        (
            f"AZURE_CLIENT_ID={uuid4(rng)}\nAZURE_TENANT_ID={uuid4(rng)}",
            f'{{"id": "{uuid4(rng)}", "status": "done", "attempts": 2}}',
            f"X-Request-ID: {uuid4(rng)}",
            f'subscription_id = "{uuid4(rng)}"',
            f"INFO job {uuid4(rng)} finished in 231 ms",
            f"workspace_id: {uuid4(rng)}",
        )
    )


def _commit(rng: random.Random) -> str:
    sha = chars(rng, HEX, 40)
    return rng.choice(
        (
            f"      - uses: actions/checkout@{sha}  # v4.2.2",
            f"{sha[:7]} Merge pull request #{digits(rng, 4)} from acme/fix-retries",
            f"GITHUB_SHA={sha}",
            f"$ git rev-parse HEAD\n{sha}",
            f"Die Regression kam mit {sha} rein.",
            f"修正はコミット {sha[:12]} に入っています。",
        )
    )


def _documented_example(rng: random.Random) -> str:
    # Values the providers print in their docs, and the usual stand-ins.
    return rng.choice(
        (
            "OPENAI_API_KEY=sk-proj-XXXXXXXXXXXXXXXXXXXXXXXX",
            "SLACK_BOT_TOKEN=xoxb-000000000000-0000000000000-xxxxxxxxxxxxxxxxxxxxxxxx",
            "TWILIO_ACCOUNT_SID=ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nTWILIO_AUTH_TOKEN=your_auth_token",
            "export API_KEY=YOUR_API_KEY_HERE",
            "token: <paste-your-token>",
            "Authorization: Bearer {{access_token}}",
            "PINECONE_API_KEY=<your-pinecone-api-key>",
            "AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
            'client = Anthropic(api_key="my_api_key")',
            'password: \'{{ lookup("env", "DB_PASSWORD") }}\'',
            "DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/DB",
            "stripe.api_key = 'sk_test_...'",
        )
    )


def _code_naming_a_secret(rng: random.Random) -> str:
    return rng.choice(
        (
            "def rotate_api_key(old_api_key: str) -> str:",
            'API_KEY_HEADER = "X-Api-Key"',
            "SECRET_KEY_FALLBACKS = []",
            "password_reset_token_expiry_hours = 24",
            "let tokenRefreshIntervalMs = 30000;",
            "private readonly ITokenProvider _tokenProvider;",
            "$apiKey = getenv('API_KEY');",
            "@api_key = Rails.application.credentials.dig(:stripe, :api_key)",
            'token := os.Getenv("TOKEN")',
            "DB_PASSWORD_FILE=/run/secrets/db_password",
            "secretName: orders-tls",
            'String apiKey = System.getenv("PAYMENT_API_KEY");',
        )
    )


def _base64_image(rng: random.Random) -> str:
    png = base64.b64encode(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(rng.randrange(40, 160))
    ).decode()
    gif = base64.b64encode(b"GIF89a" + rng.randbytes(rng.randrange(30, 90))).decode()
    return rng.choice(
        (
            f"![logo](data:image/png;base64,{png})",
            f'<img src="data:image/png;base64,{png}" alt="chart">',
            f"background: url(data:image/gif;base64,{gif}) no-repeat;",
            f'{{"thumbnail": "data:image/png;base64,{png}"}}',
        )
    )


def _service_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"customer cus_{chars(rng, ALNUM, 14)} paid invoice in_{chars(rng, ALNUM, 24)}",
            f"payment_intent: pi_{chars(rng, ALNUM, 24)}",
            f"Twilio account {'AC' + chars(rng, HEX, 32)} sent the SMS",
            f"instance i-{chars(rng, HEX, 17)} in sg-{chars(rng, HEX, 17)}",
            f"ami-{chars(rng, HEX, 17)}",
            f"ULID {chars(rng, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 26)}",
            f"nanoid: {chars(rng, BASE64URL, 21)}",
            f"OpenAI org-{chars(rng, ALNUM, 24)}, assistant asst_{chars(rng, ALNUM, 24)}",
            f"response chatcmpl-{chars(rng, ALNUM, 29)} took 2.1 s",
            f"Claude message msg_01{chars(rng, ALNUM, 22)}, tool call toolu_01{chars(rng, ALNUM, 22)}",
            f"vercel deployment dpl_{chars(rng, ALNUM, 28)} is ready",
            f"firebase appId: 1:{digits(rng, 12)}:web:{chars(rng, HEX, 22)}",
            f"sentry event {chars(rng, HEX, 32)}",
            f"discord user id {digits(rng, 18)}",
            f"video https://youtu.be/{chars(rng, BASE64URL, 11)}",
            f"k8s uid: {uuid4(rng)}",
        )
    )


def _public_client_keys(rng: random.Random) -> str:
    # Keys meant to be shown in web pages and apps.
    return rng.choice(
        (
            f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_{chars(rng, ALNUM, 99)}",
            f"posthog.init('phc_{chars(rng, ALNUM, 43)}', {{api_host: 'https://eu.posthog.com'}})",
            f"STRIPE_PUBLISHABLE_KEY=pk_test_{chars(rng, ALNUM, 99)}",
            f"ALGOLIA_APP_ID={chars(rng, UPPER_ALNUM, 10)}",
            f"publishableKey: 'pk_live_{chars(rng, BASE64URL, 40)}'",
        )
    )


def _config_without_secrets(rng: random.Random) -> str:
    return rng.choice(
        (
            f"NODE_ENV=production\nPORT={rng.randrange(3000, 9000)}\nLOG_LEVEL=debug\nREDIS_URL=redis://cache:6379/0",
            f"database:\n  host: db.internal\n  port: 5432\n  name: orders\n  pool_size: {rng.randrange(5, 30)}",
            f'{{"region": "eu-west-1", "bucket": "acme-exports-{digits(rng, 4)}", "kms_key_id": "alias/exports"}}',
            f'app.config["SESSION_COOKIE_SECURE"] = True\napp.config["PERMANENT_SESSION_LIFETIME"] = {rng.randrange(600, 7200)}',
            "| variable | required | source |\n|---|---|---|\n| DB_PASSWORD | yes | Vault `secret/orders/db` |",
            f"spring.datasource.url=jdbc:postgresql://db.internal:5432/orders\nspring.datasource.hikari.maximum-pool-size={rng.randrange(5, 50)}",
        )
    )


def _chat_about_secrets(rng: random.Random) -> str:
    return rng.choice(
        (
            "APIキーはVaultに入っています。メモには書かないでください。",
            "Das Passwort für die Staging-DB liegt im Passwortmanager, nicht im Wiki.",
            "La contraseña se rota cada trimestre; pídela al equipo de plataforma.",
            "Le jeton expire au bout d'une heure, il faut le renouveler via le CLI.",
            "令牌放在密钥管理器里，不要贴到聊天里。",
            "토큰은 비밀 관리자에 있고, 채팅에 붙여 넣지 마세요.",
            "I rotated the Stripe key this morning; the new one is in 1Password under 'Stripe prod'.",
        )
    )


def _masked_values(rng: random.Random) -> str:
    tail = chars(rng, ALNUM, 4)
    return rng.choice(
        (
            f"OPENAI_API_KEY=sk-proj-****{tail}",
            "DB_PASSWORD=••••••••••",
            f"token ghp_…{tail} expires in 7 days",
            f"Key: ****************{tail} (created 2026-11-02)",
            "api_key: '[hidden]'",
        )
    )


def _identifiers_and_words(rng: random.Random) -> str:
    words = ("Token", "Secret", "Key", "Password", "Provider", "Factory", "Manager", "Rotation", "Service")
    name = "".join(rng.sample(words, 4))
    return rng.choice(
        (
            f"class {name}Impl implements {name} {{}}",
            f"test_{'_'.join(w.lower() for w in rng.sample(words, 5))}_is_rejected PASSED",
            f"kubectl get secret orders-{chars(rng, LOWER_ALNUM, 5)} -o yaml",
            f"import {{ {name} }} from './{name[0].lower() + name[1:]}';",
            f"the {name} bean failed to start",
        )
    )


def _encoded_ordinary_text(rng: random.Random) -> str:
    plain = rng.choice(
        (
            "Die Migration läuft vor dem Deploy.",
            "Rotate the signing key every ninety days and record it in the runbook.",
            '{"theme": "dark", "beta": true, "locale": "ja-JP"}',
            "デプロイの前にテストを実行すること。",
        )
    )
    return rng.choice(
        (
            f"note={quote(plain, safe='')}",
            f"X-Note: {base64.b64encode(plain.encode()).decode()}",
            f"data:\n  README: {base64.b64encode(plain.encode()).decode()}",
        )
    )


def _versions_and_urls(rng: random.Random) -> str:
    return rng.choice(
        (
            f"Bumped pydantic to 2.{rng.randrange(0, 12)}.{rng.randrange(0, 9)} and mypy to 1.{rng.randrange(5, 15)}.0",
            f"https://github.com/acme/orders/compare/v1.{rng.randrange(0, 9)}.0...v1.{rng.randrange(10, 19)}.0",
            f"https://storage.googleapis.com/acme-builds/{chars(rng, HEX, 12)}/app.tar.gz",
            f"oci://ghcr.io/acme/charts/orders --version 0.{rng.randrange(1, 40)}.{rng.randrange(0, 9)}",
        )
    )


def _split_hashes(rng: random.Random) -> str:
    # Long hex and base64 wrapped over lines: a certificate fingerprint, a PEM public key, a hex dump.
    return rng.choice(
        (
            "SHA256 Fingerprint="
            + ":".join(chars(rng, "0123456789ABCDEF", 2) for _ in range(16))
            + "\n"
            + ":".join(chars(rng, "0123456789ABCDEF", 2) for _ in range(16)),
            "-----BEGIN CERTIFICATE-----\n"
            + "\n".join(base64.b64encode(rng.randbytes(48)).decode() for _ in range(4))
            + "\n-----END CERTIFICATE-----",
            "\n".join(f"{i * 16:08x}: " + " ".join(chars(rng, HEX, 4) for _ in range(8)) for i in range(4)),
        )
    )


SECOND_LOOK_ALIKES = {
    "hash": _hash,
    "uuid": _uuid_look_alike,
    "commit-sha": _commit,
    "documented-example": _documented_example,
    "code-naming-a-secret": _code_naming_a_secret,
    "base64-image": _base64_image,
    "service-id": _service_ids,
    "public-client-key": _public_client_keys,
    "config-without-secrets": _config_without_secrets,
    "chat-about-secrets": _chat_about_secrets,
    "masked-value": _masked_values,
    "identifiers": _identifiers_and_words,
    "encoded-ordinary-text": _encoded_ordinary_text,
    "versions-and-urls": _versions_and_urls,
    "wrapped-hex-and-base64": _split_hashes,
}


def second_unseen_part() -> list[Sample]:
    rng = random.Random(SECOND_UNSEEN_SEED)
    names = list(SECOND_DISGUISES)
    weights = [SECOND_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in MORE_KINDS
        for _ in range(NEW_KIND_SAMPLES)
    ]
    samples += [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in KINDS
        for _ in range(OLD_KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in SECOND_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)


def is_new_kind(sample: Sample) -> bool:
    return sample.kind in {kind.name for kind in MORE_KINDS}
