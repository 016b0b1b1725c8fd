"""Memory texts around the credentials of formats.py: where people paste them, how they get disguised, and
the look-alikes that share those texts.

A disguise is what a careless paste or a deliberate attempt does to a token: an invisible character or a
fullwidth letter inside it, URL or base64 encoding, a line break in the middle, a placeholder-looking word
inside an otherwise real-shaped token.
"""

import base64
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    HEX,
    KINDS,
    LOWER_ALNUM,
    Kind,
    b64,
    chars,
    digits,
    uuid4,
)


@dataclass(frozen=True)
class Sample:
    kind: str
    group: str
    text: str
    # For a credential: how it was disguised ("plain" when not) and a piece of it that must not survive
    # redaction. Look-alikes have neither.
    disguise: str = ""
    secret: str = ""

    @property
    def is_credential(self) -> bool:
        return bool(self.secret)


# A context takes the variable name and the value and returns the text; None when it needs no name.
Context = Callable[[random.Random, str, str], str]


def camel(env: str) -> str:
    parts = env.lower().split("_")
    return parts[0] + "".join(part.title() for part in parts[1:])


MAIN_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"{env}={v}",
    lambda rng, env, v: f'export {env}="{v}"',
    lambda rng, env, v: f"# production\n{env}={v}\nLOG_LEVEL=info\n",
    lambda rng, env, v: f"deploy:\n  env:\n    {env.lower()}: {v}\n    region: eu-west-1",
    lambda rng, env, v: f'{{"{camel(env)}": "{v}", "timeout": 30}}',
    lambda rng, env, v: f"docker run -e {env}={v} registry.example.org/app:1.4",
    lambda rng, env, v: f"The deploy uses {env}={v} until the rotation on Friday.",
)

MAIN_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"deploy uses {v} for the nightly job",
    lambda rng, env, v: f"Found it in the old wiki: {v}",
    lambda rng, env, v: f"curl -sf https://api.example.net/v2/status?token={v}",
)


def disguise_in_token(rng: random.Random, secret: str, prefix: str, insert: Callable[[str], str]) -> str:
    start = len(prefix) if secret.startswith(prefix) else 0
    position = rng.randrange(max(start, 1), len(secret) - 1)
    return secret[:position] + insert(secret[position:])


def zero_width(rng: random.Random, secret: str, prefix: str) -> str:
    char = rng.choice(("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"))
    return disguise_in_token(rng, secret, prefix, lambda rest: char + rest)


def soft_hyphen(rng: random.Random, secret: str, prefix: str) -> str:
    return disguise_in_token(rng, secret, prefix, lambda rest: "\u00ad" + rest)


def bidi_control(rng: random.Random, secret: str, prefix: str) -> str:
    char = rng.choice(("\u202a", "\u202c", "\u202d", "\u2066", "\u2069", "\u200e"))
    return disguise_in_token(rng, secret, prefix, lambda rest: char + rest)


def fullwidth(rng: random.Random, secret: str, prefix: str) -> str:
    # Fullwidth forms of ASCII letters and digits (U+FF01..U+FF5E), which NFKC maps back.
    chosen = set(rng.sample(range(len(secret)), k=max(1, len(secret) // 4)))
    return "".join(
        chr(ord(c) + 0xFEE0) if i in chosen and c in string.ascii_letters + string.digits else c
        for i, c in enumerate(secret)
    )


def placeholder_word(rng: random.Random, secret: str, prefix: str) -> str:
    """A placeholder-looking word written over part of a real-shaped token's random body."""
    word = rng.choice(("EXAMPLE", "xxxx", "sample", "test", "XXXXXX", "demo"))
    start = len(prefix) if secret.startswith(prefix) else 0
    body_letters = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
    if not body_letters:
        return secret
    position = rng.choice(body_letters)
    return secret[:position] + word + secret[position + len(word) :]


def split_line(rng: random.Random, secret: str, prefix: str) -> str:
    position = (
        rng.randrange(len(prefix) + 2, len(secret) - 2) if len(secret) > len(prefix) + 4 else len(secret) // 2
    )
    return secret[:position] + rng.choice(("\n", "\n  ", "\\\n", "\r\n")) + secret[position:]


IN_TOKEN: dict[str, Callable[[random.Random, str, str], str]] = {
    "zero-width": zero_width,
    "soft-hyphen": soft_hyphen,
    "bidi-control": bidi_control,
    "fullwidth": fullwidth,
    "placeholder-word": placeholder_word,
    "split-line": split_line,
}


def url_encoded(rng: random.Random, text: str) -> str:
    return rng.choice(("https://hooks.example.net/forward?q=", "redirect_uri=", "")) + quote(text, safe="")


def base64_encoded(rng: random.Random, text: str) -> str:
    encoded = base64.b64encode(text.encode()).decode()
    return rng.choice(
        (f"echo {encoded} | base64 -d > .env", f"config: {encoded}", f"The blob was {encoded} (decode it)")
    )


WHOLE_TEXT: dict[str, Callable[[random.Random, str], str]] = {
    "url-encoded": url_encoded,
    "base64-encoded": base64_encoded,
}


def credential_sample(
    rng: random.Random,
    kind: Kind,
    *,
    named_contexts: Sequence[Context],
    bare_contexts: Sequence[Context],
    disguise: str,
) -> Sample:
    credential = kind.make(rng)
    secret = credential.secret
    value = credential.value
    if disguise in IN_TOKEN:
        disguised = IN_TOKEN[disguise](rng, secret, kind.prefix)
        value = value.replace(secret, disguised, 1)
    contexts = list(named_contexts) if kind.named or kind.framed else [*named_contexts, *bare_contexts]
    if kind.framed and rng.random() < 0.4:
        text = rng.choice((value, f"connect with {value}", f"```\n{value}\n```"))
    else:
        text = rng.choice(contexts)(rng, kind.env, value)
    if disguise in WHOLE_TEXT:
        text = WHOLE_TEXT[disguise](rng, text)
    # The middle of the credential: redaction must leave none of it behind, whatever the disguise.
    middle = secret[len(secret) // 2 - 4 : len(secret) // 2 + 4]
    return as_documented(
        Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise or "plain", secret=middle)
    )


# Values these parts once counted as credentials that their issuer documents as public: Sentry says a DSN
# "is safe to keep public" (it only lets a client send events), as the independent seventh part has it.
PUBLIC_KINDS = frozenset({"sentry-dsn"})


def as_documented(sample: Sample) -> Sample:
    """A sample of a public kind as a look-alike. It stays in the stream, so the same seed still gives the
    same other samples."""
    if sample.kind in PUBLIC_KINDS:
        return Sample(kind=sample.kind, group=sample.group, text=sample.text)
    return sample


def public_as_look_alikes(samples: list[Sample]) -> list[Sample]:
    return [as_documented(sample) for sample in samples]


def credentials(
    rng: random.Random,
    *,
    samples_per_kind: int,
    named_contexts: Sequence[Context],
    bare_contexts: Sequence[Context],
    disguises: dict[str, float],
) -> list[Sample]:
    names = list(disguises)
    weights = [disguises[name] for name in names]
    samples = []
    for kind in KINDS:
        for _ in range(samples_per_kind):
            disguise = rng.choices(names, weights)[0]
            samples.append(
                credential_sample(
                    rng, kind, named_contexts=named_contexts, bare_contexts=bare_contexts, disguise=disguise
                )
            )
    return samples


# --- look-alikes: what the same texts hold that is not a credential ---------------------------------------

KOREAN = (
    "배포 전에 마이그레이션을 먼저 실행하고, 실패하면 롤백 스크립트를 돌린다.",
    "결제 모듈은 비밀 값을 환경 변수에서 읽는다. 값 자체는 금고(vault)에 있다.",
    "이 저장소의 토큰은 매 분기마다 교체한다; 교체 절차는 운영 문서에 있다.",
    "테스트 데이터베이스 비밀번호는 로컬 전용이며 커밋하지 않는다.",
)
WORDS = (
    "deployment",
    "reconciliation",
    "idempotency",
    "authentication",
    "configuration",
    "transactional",
    "serialization",
    "internationalization",
    "observability",
    "backpressure",
)


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def git_sha(rng: random.Random) -> str:
    sha = chars(rng, HEX, 40)
    return rng.choice(
        (
            f"Fixed in {sha[: rng.randrange(7, 13)]}; see the PR for the test.",
            f"git checkout {sha} && make test",
            f"revision: {sha}",
            f"https://github.com/acme/orders/commit/{sha}",
        )
    )


def digest(rng: random.Random) -> str:
    sha256 = chars(rng, HEX, 64)
    return rng.choice(
        (
            f"image: registry.example.org/app@sha256:{sha256}",
            f'checksum = "{sha256}"',
            f"{sha256}  dist/orders-1.4.2.tar.gz",
            f'"integrity": "sha512-{b64(rng.randbytes(64))}"',
            f"file_hash: {sha256}",
            f'ETag: "{chars(rng, HEX, 32)}"',
            f"md5sum: {chars(rng, HEX, 32)}",
        )
    )


def identifiers(rng: random.Random) -> str:
    return rng.choice(
        (
            f"request_id={uuid4(rng)} status=502 upstream=orders",
            f"GET /api/v1/users/{uuid4(rng)}/orders",
            f'db.orders.find({{_id: ObjectId("{chars(rng, HEX, 24)}")}})',
            f"pod/orders-{chars(rng, LOWER_ALNUM, 10)}-{chars(rng, LOWER_ALNUM, 5)} restarted 3 times",
            f"arn:aws:iam::{digits(rng, 12)}:role/deploy-{chars(rng, LOWER_ALNUM, 6)}",
            f"trace {chars(rng, HEX, 32)} span {chars(rng, HEX, 16)}",
            f"container {chars(rng, HEX, 12)} exited with 137",
            f"session_id: {uuid4(rng)}",
            f"Slack channel C{chars(rng, string.ascii_uppercase + string.digits, 10)} for alerts",
        )
    )


def documented_placeholder(rng: random.Random) -> str:
    # The values providers print in their own documentation, and the usual stand-ins.
    return rng.choice(
        (
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE  # from the AWS docs",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE",
            "OPENAI_API_KEY=your-api-key-here",
            "Authorization: Bearer <TOKEN>",
            "GITHUB_TOKEN=${GITHUB_TOKEN}",
            'api_key: "${API_KEY}"',
            "export STRIPE_SECRET_KEY=sk_live_...",
            "token: ghp_" + "x" * 36,
            "SLACK_BOT_TOKEN=xoxb-your-bot-token",
            "kubeadm join 10.0.0.10:6443 --token abcdef.0123456789abcdef",
            "DATABASE_URL=postgres://user:password@localhost:5432/app",
            "password: changeme",
            "DB_PASSWORD=********",
            "ANTHROPIC_API_KEY=sk-ant-...",
            "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "api_key = 'REPLACE_ME'",
            "SENTRY_DSN=https://<key>@o0.ingest.sentry.io/0",
        )
    )


def code_naming_a_secret(rng: random.Random) -> str:
    return rng.choice(
        (
            'api_key = os.environ["API_KEY"]',
            "token = request.headers.get('Authorization')",
            "password = getpass.getpass('DB password: ')",
            "secret_key = settings.SECRET_KEY",
            "const token = process.env.GITHUB_TOKEN;",
            "export AWS_SECRET_ACCESS_KEY=$(vault kv get -field=secret_key secret/aws/deploy)",
            "client = OpenAI(api_key=config.openai_api_key)",
            "valueFrom:\n  secretKeyRef:\n    name: orders-db\n    key: password",
            "if not access_token: raise AuthError('log in again')",
            "STRIPE_SECRET_KEY is read from AWS Secrets Manager (prod/stripe) at start-up",
            "password_min_length: 12",
            "token_ttl_seconds=3600",
        )
    )


def encoded_text(rng: random.Random) -> str:
    prose_text = sentence(rng, rng.randrange(5, 14))
    return rng.choice(
        (
            f"data: {b64(prose_text.encode())}",
            f"The header X-Note was {b64(prose_text.encode())}",
            f"payload={quote(prose_text, safe='')}",
        )
    )


def long_words(rng: random.Random) -> str:
    return rng.choice(
        (
            "AbstractSingletonProxyFactoryBean wraps the TransactionAwareDataSourceProxy.",
            "Rindfleischetikettierungsüberwachungsaufgabenübertragungsgesetz was repealed.",
            "org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationProvider",
            "pneumonoultramicroscopicsilicovolcanoconiosis is the longest word in the list",
            f"{''.join(rng.choice(WORDS).title() for _ in range(5))}Factory",
            "com.example.orders.infrastructure.persistence.PostgresOrderRepositoryImplementation",
        )
    )


def clean_url(rng: random.Random) -> str:
    return rng.choice(
        (
            f"https://github.com/acme/orders/pull/{digits(rng, 4)}?tab=files&diff=split",
            f"https://example.com/blog/launch?utm_source=newsletter&utm_campaign={chars(rng, LOWER_ALNUM, 12)}",
            f"s3://acme-exports-{digits(rng, 4)}/reports/2026/11/{uuid4(rng)}.parquet",
            "postgres://localhost:5432/orders_test",
            "ftp://ftp.example.org/pub/releases/",
            f"https://docs.example.org/api/v{rng.randrange(1, 4)}/auth#tokens",
            "redis://cache.internal:6379/0",
        )
    )


def version(rng: random.Random) -> str:
    return rng.choice(
        (
            f"Upgraded to v{rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 30)}-rc.{rng.randrange(1, 5)}+build.{digits(rng, 8)}",
            f"python==3.12.{rng.randrange(0, 9)} django==5.{rng.randrange(0, 3)}.{rng.randrange(0, 9)}",
            f"node {rng.randrange(18, 24)}.{rng.randrange(0, 20)}.{rng.randrange(0, 9)}, npm 10.{rng.randrange(0, 9)}.0",
        )
    )


def korean(rng: random.Random) -> str:
    return " ".join(rng.sample(KOREAN, k=rng.randrange(1, 4)))


def public_key(rng: random.Random) -> str:
    return rng.choice(
        (
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, BASE64, 43)} deploy@ci",
            f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{chars(rng, BASE64, 300)} alice@laptop",
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(chars(rng, BASE64, 64) for _ in range(4))
            + "\n-----END PUBLIC KEY-----",
            f"STRIPE_PUBLISHABLE_KEY=pk_live_{chars(rng, ALNUM, 99)}",
        )
    )


def multi_line_prose(rng: random.Random) -> str:
    # Line breaks between words of a wrapped paragraph, and between long identifiers, are not split tokens.
    lines = [sentence(rng, rng.randrange(4, 9))[:-1] for _ in range(rng.randrange(3, 7))]
    if rng.random() < 0.5:
        lines = [line.replace(" ", "_") for line in lines]
    return "\n".join(lines)


def names_without_values(rng: random.Random) -> str:
    # Documentation and code that name secrets, tokens and keys next to things that are not their values.
    return rng.choice(
        (
            "| API_KEY | required | Your API key from the dashboard |",
            "| AUTH_TOKEN | string | The token the webhook sends in its header |",
            "The token is refreshed automatically every hour by the sidecar.",
            "password, username and email are required fields on the signup form",
            'os.Setenv("API_KEY", os.Getenv("LEGACY_API_KEY"))',
            f"cache_key: {chars(rng, HEX, 40)}",
            f"idempotency_key: {uuid4(rng)}",
            f"public_key: {chars(rng, HEX, 64)}",
            f'partition_key = "orders#{digits(rng, 6)}"',
            f"access_token_sha256: {chars(rng, HEX, 64)}",
            f"signing_key_id: {uuid4(rng)}",
            "api_key_name: prod-orders-2024",
            "Set `OPENAI_API_KEY` to your key (it starts with `sk-`).",
            "kubectl create secret generic orders-db --from-literal=password=$DB_PASSWORD",
            "The secret is stored in Vault at secret/data/prod/orders, rotated by the platform team.",
            'gh secret set NPM_TOKEN --body "$NPM_TOKEN"',
            f"token: {chars(rng, HEX, 40)}  # the commit the cache was built from",
            "const apiKey: string = process.env.API_KEY ?? '';",
        )
    )


LOOK_ALIKES: dict[str, Callable[[random.Random], str]] = {
    "git-sha": git_sha,
    "digest": digest,
    "identifier": identifiers,
    "documented-placeholder": documented_placeholder,
    "code-naming-a-secret": code_naming_a_secret,
    "encoded-ordinary-text": encoded_text,
    "long-words": long_words,
    "url-without-credentials": clean_url,
    "version-string": version,
    "korean-text": korean,
    "public-key": public_key,
    "wrapped-lines": multi_line_prose,
    "names-without-values": names_without_values,
}


def look_alikes(
    rng: random.Random,
    *,
    samples_per_kind: int,
    extra: dict[str, Callable[[random.Random], str]] | None = None,
) -> list[Sample]:
    makers = {**LOOK_ALIKES, **(extra or {})}
    return [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in makers.items()
        for _ in range(samples_per_kind)
    ]
