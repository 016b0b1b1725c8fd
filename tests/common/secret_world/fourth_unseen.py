"""The fourth unseen part: written on 2026-12-06 after the rules learnt from the third unseen part's misses,
and committed before the filter ever ran on it.

Credentials: 16 formats no other part has (below, from the providers' descriptions), and two of each of
the 262 older kinds, in contexts no other part uses (CLIs that set secrets, CI and deploy configs, Makefile,
nginx, Elixir, Scala, Lua, Rust builders, REPLs, and prose in Arabic, Hebrew, Thai, Vietnamese,
Indonesian and Hindi). Disguises: the earlier ones plus a right-to-left override, double percent-encoding
and a string split by concatenation ("abc" + "def"). Look-alikes: CLI outputs (kubectl, terraform, aws,
docker, git), lockfile hashes, trace ids, KSUIDs, object ids of many services (Stripe Checkout sessions,
Clerk users, Google Docs, Figma, Notion, Airtable), APNs device tokens, S3 version ids, placeholders.
"""

import base64
import random
import string
from collections.abc import Callable
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    BASE64URL,
    HEX,
    KINDS,
    LOWER_ALNUM,
    UPPER_ALNUM,
    Credential,
    Kind,
    b64,
    chars,
    digits,
    framed,
    token,
    uuid4,
)
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes
from tests.common.secret_world.third_formats import THIRD_KINDS

FOURTH_UNSEEN_SEED = 4_4_061_2026
NEW_KIND_SAMPLES = 8
OLDER_KIND_SAMPLES = 2
LOOK_ALIKE_SAMPLES = 39


def _named(alphabet: str, length: int) -> Callable[[random.Random], Credential]:
    return token("", (alphabet, length))


def _uuid(rng: random.Random) -> Credential:
    value = uuid4(rng)
    return Credential(value, value)


def _unseal(rng: random.Random) -> tuple[str, str]:
    key = b64(rng.randbytes(33))
    return (
        f"Unseal Key 1: {key}\nUnseal Key 2: {b64(rng.randbytes(33))}\n\nInitial Root Token: <redacted>",
        key,
    )


def _jaas(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, ALNUM + "+/", 64)
    return (
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{chars(rng, UPPER_ALNUM, 16)}" password="{secret}";',
        secret,
    )


def _turnstile(rng: random.Random) -> Credential:
    value = "0x4AAAAAAA" + chars(rng, BASE64URL, 24)
    return Credential(value, value)


def _hcaptcha(rng: random.Random) -> Credential:
    value = "0x" + chars(rng, HEX, 40)
    return Credential(value, value)


FOURTH_KINDS: tuple[Kind, ...] = (
    Kind("github-refresh-token", "ci", "GITHUB_REFRESH_TOKEN", token("ghr_", (ALNUM, 76)), prefix="ghr_"),
    Kind("openai-admin-key", "ai", "OPENAI_ADMIN_KEY", token("sk-admin-", (BASE64URL, 100)), prefix="sk-admin-"),
    Kind("hcp-client-secret", "cloud", "HCP_CLIENT_SECRET", _named(ALNUM, 64), named=True),
    Kind("azure-speech-key", "ai", "AZURE_SPEECH_KEY", _named(HEX, 32), named=True),
    Kind("turnstile-secret", "saas", "TURNSTILE_SECRET_KEY", _turnstile, prefix="0x4AAAAAAA"),
    Kind("hcaptcha-secret", "saas", "HCAPTCHA_SECRET", _hcaptcha, named=True),
    Kind("mux-token-secret", "saas", "MUX_TOKEN_SECRET", _named(BASE64, 75), named=True),
    Kind("livekit-api-secret", "chat", "LIVEKIT_API_SECRET", _named(ALNUM, 43), named=True),
    Kind("agora-app-certificate", "chat", "AGORA_APP_CERTIFICATE", _named(HEX, 32), named=True),
    Kind("minio-root-password", "database", "MINIO_ROOT_PASSWORD", _named(ALNUM, 24), named=True),
    Kind("consul-token", "cloud", "CONSUL_HTTP_TOKEN", _uuid, named=True),
    Kind("nomad-token", "cloud", "NOMAD_TOKEN", _uuid, named=True),
    Kind("github-client-secret", "ci", "GITHUB_CLIENT_SECRET", _named(HEX, 40), named=True),
    Kind("vault-unseal-key", "cloud", "VAULT_UNSEAL_KEY", framed(_unseal), framed=True),
    Kind("kafka-sasl-jaas", "database", "KAFKA_SASL_JAAS_CONFIG", framed(_jaas), framed=True),
    Kind("elastic-api-key", "observability", "ELASTIC_API_KEY", _named(BASE64URL, 22), named=True),
)  # fmt: skip


FOURTH_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"heroku config:set {env}={v} -a orders-prod",
    lambda rng, env, v: f"fly secrets set {env}={v}",
    lambda rng, env, v: f"pulumi config set --secret {env.lower()} {v}",
    lambda rng, env, v: f"aws ssm put-parameter --name /prod/{env} --type SecureString --value {v}",
    lambda rng, env, v: (
        f"echo -n '{v}' | gcloud secrets create {env.lower().replace('_', '-')} --data-file=-"
    ),
    lambda rng, env, v: f'kubectl patch secret app -p \'{{"stringData":{{"{env}":"{v}"}}}}\'',
    lambda rng, env, v: (
        f"jobs:\n  build:\n    environment:\n      {env}: {v}\n    docker:\n      - image: cimg/base:2024.01"
    ),
    lambda rng, env, v: f"services:\n  api:\n    environment:\n      {env}: {v}\n      TZ: UTC",
    lambda rng, env, v: f"helm install api ./chart --set-string env.{env}={v}",
    lambda rng, env, v: f"{env} ?= {v}\n\ndeploy:\n\t./deploy.sh",
    lambda rng, env, v: f'config :orders, {env.lower()}: "{v}"',
    lambda rng, env, v: f'val {env.lower()} = sys.env.getOrElse("{env}", "{v}")',
    lambda rng, env, v: f'local {env.lower()} = os.getenv("{env}") or "{v}"',
    lambda rng, env, v: f'Command::new("deploy").env("{env}", "{v}").spawn()?;',
    lambda rng, env, v: f">>> os.environ[\"{env}\"]\n'{v}'",
    lambda rng, env, v: f"[prod]\n{env.lower()}={v}",
    lambda rng, env, v: f"{env} هو {v} ولا تشاركه",
    lambda rng, env, v: f"{env} הוא {v}",
    lambda rng, env, v: f"{env} คือ {v} ห้ามแชร์",
    lambda rng, env, v: f"{env} là {v}, đừng chia sẻ.",
    lambda rng, env, v: f"{env} adalah {v}, jangan dibagikan.",
    lambda rng, env, v: f"{env} है {v}",
    lambda rng, env, v: f"thx! here's the {env}: {v} — rotate after the demo pls",
)

FOURTH_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f'proxy_set_header Authorization "Bearer {v}";',
    lambda rng, env, v: f"> Authorization: token {v}",
    lambda rng, env, v: f"المفتاح: {v}",
    lambda rng, env, v: f'>>> client = Client("{v}")',
    lambda rng, env, v: f'["{v}"]',
    lambda rng, env, v: f"Sent from my phone — the key is {v}",
)

FOURTH_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"$ vault operator init\n{v}" if "Unseal" in v else f"config line: {v}",
    lambda rng, env, v: f"client.properties:\n{v}\nsecurity.protocol=SASL_SSL",
    lambda rng, env, v: f"Found in an old runbook → {v}",
)

FOURTH_DISGUISES = {
    "plain": 0.36,
    "zero-width": 0.06,
    "rtl-override": 0.06,
    "fullwidth": 0.07,
    "percent-encoded": 0.06,
    "double-percent-encoded": 0.05,
    "base64-encoded": 0.08,
    "split-line": 0.08,
    "soft-hyphen": 0.05,
    "placeholder-word": 0.06,
    "string-concatenation": 0.07,
}


def _body_start(secret: str, prefix: str) -> int:
    return len(prefix) if prefix and secret.startswith(prefix) else 1


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    start = _body_start(secret, prefix)
    if len(secret) - 2 <= start:
        return secret
    position = rng.randrange(start + 1, len(secret) - 1)
    if disguise == "zero-width":
        return secret[:position] + rng.choice(("\u200b", "\u200d", "\u2060")) + secret[position:]
    if disguise == "rtl-override":
        return secret[:position] + "\u202e" + secret[position:] + "\u202c"
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad" + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\r\n  ", "\\\n")) + secret[position:]
    if disguise == "string-concatenation":
        return secret[:position] + rng.choice(('" + "', "' + '", '" "')) + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.35 else c
            for c in secret
        )
    if disguise == "placeholder-word":
        word = rng.choice(("sample", "TEST", "xxxxx", "example", "fake"))
        spots = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
        if not spots:
            return secret
        at = rng.choice(spots)
        return secret[:at] + word + secret[at + len(word) :]
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str, env: str, value: str) -> str:
    if disguise == "percent-encoded":
        return f"https://status.example.io/report?text={quote(text, safe='')}"
    if disguise == "double-percent-encoded":
        return f"https://tracker.example.io/r?u={quote(quote(text, safe=''), safe='')}"
    if disguise == "base64-encoded":
        return rng.choice(
            (
                f"kind: Secret\ndata:\n  {env}: {base64.b64encode(value.encode()).decode()}",
                f"user-data (base64): {base64.b64encode(text.encode()).decode()}",
                f'{{"payload": "{base64.b64encode(text.encode()).decode()}"}}',
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(FOURTH_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(FOURTH_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(FOURTH_NAMED_CONTEXTS + FOURTH_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text, kind.env, value)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _kubectl(rng: random.Random) -> str:
    return rng.choice(
        (
            f'metadata:\n  uid: {uuid4(rng)}\n  resourceVersion: "{digits(rng, 8)}"\n  name: orders-{chars(rng, LOWER_ALNUM, 10)}-{chars(rng, LOWER_ALNUM, 5)}',
            f"NAME                      READY   STATUS\norders-{chars(rng, LOWER_ALNUM, 10)}-{chars(rng, LOWER_ALNUM, 5)}   1/1     Running",
            f"secret/orders-db-{chars(rng, LOWER_ALNUM, 8)} created",
        )
    )


def _terraform(rng: random.Random) -> str:
    return rng.choice(
        (
            f'  # aws_s3_bucket.exports will be created\n  + resource "aws_s3_bucket" "exports" {{\n      + id = "acme-exports-{chars(rng, LOWER_ALNUM, 8)}"',
            f'lineage = "{uuid4(rng)}"\nserial = {rng.randrange(1, 400)}',
            f"module.db.aws_db_instance.main: Creation complete after 6m [id=db-{chars(rng, UPPER_ALNUM, 26)}]",
        )
    )


def _aws_output(rng: random.Random) -> str:
    version = base64.b64encode(rng.randbytes(48)).decode()[: rng.randrange(32, 64)]
    return rng.choice(
        (
            f'{{"ETag": "\\"{chars(rng, HEX, 32)}\\"", "VersionId": "{version}"}}',
            f'"ResponseMetadata": {{"RequestId": "{chars(rng, UPPER_ALNUM, 16)}", "HostId": "{base64.b64encode(rng.randbytes(54)).decode()}"}}',
            f"upload: ./dist/app.zip to s3://acme-builds/{chars(rng, HEX, 8)}/app.zip",
        )
    )


def _docker_git(rng: random.Random) -> str:
    return rng.choice(
        (
            f"CONTAINER ID   IMAGE\n{chars(rng, HEX, 12)}   postgres:16",
            f"sha256:{chars(rng, HEX, 64)}",
            f"{chars(rng, HEX, 40)}\tHEAD\n{chars(rng, HEX, 40)}\trefs/tags/v2.1.0",
            f"Merge: {chars(rng, HEX, 7)} {chars(rng, HEX, 7)}",
        )
    )


def _locks(rng: random.Random) -> str:
    return rng.choice(
        (
            f'"narHash": "sha256-{base64.b64encode(rng.randbytes(32)).decode()}"',
            f"CHECKSUMS\n  rack (3.0.8) sha256={chars(rng, HEX, 64)}",
            f"sha256:{chars(rng, HEX, 64)} requests-2.32.3.tar.gz",
        )
    )


def _trace_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"trace_id={chars(rng, HEX, 32)} span_id={chars(rng, HEX, 16)} level=error",
            f"ksuid {chars(rng, ALNUM, 27)}",
            f"apns device token {chars(rng, HEX, 64)}",
        )
    )


def _object_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"https://checkout.stripe.com/c/pay/cs_test_{chars(rng, ALNUM, 58)}",
            f"checkout session cs_live_{chars(rng, ALNUM, 58)} completed",
            f"clerk user user_{chars(rng, ALNUM, 27)} signed in",
            f"https://docs.google.com/document/d/{chars(rng, BASE64URL, 44)}/edit",
            f"https://www.figma.com/file/{chars(rng, ALNUM, 22)}/Checkout-redesign",
            f"https://www.notion.so/acme/Runbook-{chars(rng, HEX, 32)}",
            f"airtable base app{chars(rng, ALNUM, 14)} table tbl{chars(rng, ALNUM, 14)}",
            f"subscription sub_{chars(rng, ALNUM, 24)} renewed, price price_{chars(rng, ALNUM, 24)}",
        )
    )


def _placeholders(rng: random.Random) -> str:
    return rng.choice(
        (
            "heroku config:set STRIPE_SECRET_KEY=sk_live_... -a orders-prod",
            "fly secrets set DATABASE_URL=postgres://USER:PASS@HOST/db",
            "pulumi config set --secret dbPassword <your-password>",
            'echo -n "$TOKEN" | gcloud secrets create api-token --data-file=-',
            "CONSUL_HTTP_TOKEN=00000000-0000-0000-0000-000000000000",
            "HCAPTCHA_SECRET=0x0000000000000000000000000000000000000000",
            "TURNSTILE_SECRET_KEY=1x0000000000000000000000000000000AA",
            "Unseal Key 1: <key>",
        )
    )


def _chat(rng: random.Random) -> str:
    return rng.choice(
        (
            "المفتاح موجود في الخزنة، لا تضعه في الدردشة.",
            "הסיסמה שמורה בכספת, לא בוויקי.",
            "คีย์อยู่ใน vault อย่าแปะในแชท",
            "Mật khẩu nằm trong kho bí mật, đừng dán vào chat.",
            "Kunci API disimpan di vault, jangan ditempel di chat.",
            "टोकन वॉल्ट में है, चैट में मत डालो।",
        )
    )


def _config(rng: random.Random) -> str:
    return rng.choice(
        (
            f"heroku config:set WEB_CONCURRENCY={rng.randrange(2, 9)} -a orders-prod",
            f"fly scale count {rng.randrange(2, 9)}",
            "pulumi config set aws:region eu-west-1",
            f"helm install api ./chart --set-string image.tag={chars(rng, HEX, 7)}",
            f"REPLICAS ?= {rng.randrange(1, 9)}",
            "config :orders, pool_size: 10, queue_target: 50",
            "proxy_set_header X-Request-Id $request_id;",
        )
    )


def _base64_blobs(rng: random.Random) -> str:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randrange(50, 150))).decode()
    return rng.choice(
        (
            f'"avatar": "data:image/png;base64,{png}"',
            f"-----BEGIN CERTIFICATE-----\n{chars(rng, BASE64, 64)}\n{chars(rng, BASE64, 64)}\n-----END CERTIFICATE-----",
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, BASE64, 43)} mina@laptop",
        )
    )


def _encoded_text(rng: random.Random) -> str:
    plain = rng.choice(
        ("deploy finished without errors", "المهمة انتهت بنجاح", "งานเสร็จแล้ว", "Triển khai xong.")
    )
    return rng.choice(
        (
            f"https://status.example.io/report?text={quote(plain, safe='')}",
            f"https://tracker.example.io/r?u={quote(quote(plain, safe=''), safe='')}",
            f"user-data (base64): {base64.b64encode(plain.encode()).decode()}",
        )
    )


def _code(rng: random.Random) -> str:
    return rng.choice(
        (
            'local api_key = os.getenv("API_KEY")',
            'val secret = sys.env("CLIENT_SECRET")',
            'Command::new("deploy").env("RUST_LOG", "info").spawn()?;',
            ">>> os.environ[\"HOME\"]\n'/home/mina'",
            'token = "Bearer " + access_token',
            'password = "" + user_input',
        )
    )


FOURTH_LOOK_ALIKES = {
    "kubectl-output": _kubectl,
    "terraform-output": _terraform,
    "aws-output": _aws_output,
    "docker-and-git-output": _docker_git,
    "lockfile-hashes": _locks,
    "trace-and-device-ids": _trace_ids,
    "object-ids": _object_ids,
    "placeholders": _placeholders,
    "chat-about-secrets": _chat,
    "config-without-secrets": _config,
    "base64-blobs": _base64_blobs,
    "encoded-ordinary-text": _encoded_text,
    "code-naming-a-secret": _code,
}


def fourth_unseen_part() -> list[Sample]:
    rng = random.Random(FOURTH_UNSEEN_SEED)
    names = list(FOURTH_DISGUISES)
    weights = [FOURTH_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in FOURTH_KINDS
        for _ in range(NEW_KIND_SAMPLES)
    ]
    samples += [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in (*THIRD_KINDS, *MORE_KINDS, *KINDS)
        for _ in range(OLDER_KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in FOURTH_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)


def is_fourth_kind(sample: Sample) -> bool:
    return sample.kind in {kind.name for kind in FOURTH_KINDS}
