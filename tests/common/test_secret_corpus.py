"""The secret filter against a corpus of our own: credentials in the places people paste them, and look-alikes.

The generator is seeded, so every run scans the same texts. Credentials are random in the alphabet and length
of their kind and sit in the contexts they appear in (env files, credentials files, JSON and YAML config,
shell commands, URLs, code, prose). Look-alikes are what such texts hold besides credentials: commit SHAs,
UUIDs, digests in lock files, base64 data, names without values, placeholders, code reading the environment.
A credential counts as caught only when findings cover all of it, since redaction must leave none behind.
"""

import base64
import random
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from kenfold_common.secrets import find_secrets

SEED = 20260927
SAMPLES_PER_KIND = 16
ALNUM = string.ascii_letters + string.digits
BASE64 = ALNUM + "+/"
BASE64URL = ALNUM + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Credential:
    kind: str
    text: str
    secret: str


@dataclass(frozen=True)
class LookAlike:
    kind: str
    text: str


def chars(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def in_context(rng: random.Random, name: str, value: str) -> str:
    """``value`` assigned to ``name`` the way one of the usual files or languages writes it."""
    lower = name.lower()
    camel = lower.split("_")[0] + "".join(part.title() for part in lower.split("_")[1:])
    forms = [
        f"{name}={value}",
        f'export {name}="{value}"',
        f"  {lower}: {value}",
        f'{{"{camel}": "{value}", "region": "eu-west-1"}}',
        f'{lower} = "{value}"',
        f"ENV {name}={value}",
        f"      - {name}={value}",
        f"const {camel} = '{value}';",
    ]
    return rng.choice(forms)


def prose(rng: random.Random, value: str) -> str:
    return pick(
        rng,
        f"The staging job uses {value} until the rotation on Friday.",
        f"Found it: {value} (from the old wiki page).",
        f"curl works again with {value}, see the notes above.",
        f"운영 토큰은 {value}입니다.",
    )


def aws_secret_key(rng: random.Random) -> str:
    # About half of all real secret keys hold at least one "/".
    key = list(chars(rng, ALNUM + "+", 40))
    if rng.random() < 0.5:
        key[rng.randrange(1, 39)] = "/"
    return "".join(key)


def human_password(rng: random.Random) -> str:
    word = pick(
        rng,
        "Summer",
        "Winter",
        "Autumn",
        "Spring",
        "Welcome",
        "Dragon",
        "Monkey",
        "Coffee",
        "Tiger",
        "Rocket",
    )
    # Password policies ask for at least 8 characters.
    year = str(rng.randrange(1990, 2030)) if rng.random() < 0.7 else str(rng.randrange(100, 999))
    symbol = pick(rng, "!", "#", "@", "$", "*", "?", "")
    # Not "$" first: a shell or an env file would read that as a variable, and so does the filter.
    first = symbol if symbol in "!#*" else ""
    return pick(rng, word + year + symbol, first + word + year, word + symbol + year)


def jwt(rng: random.Random) -> str:
    def part(payload: str) -> str:
        return base64.urlsafe_b64encode(payload.encode()).rstrip(b"=").decode()

    claims = f'{{"sub":"{chars(rng, HEX, 12)}","iat":{rng.randrange(1_600_000_000, 1_800_000_000)}}}'
    return part('{"alg":"HS256","typ":"JWT"}') + "." + part(claims) + "." + chars(rng, BASE64URL, 43)


def private_key(rng: random.Random) -> str:
    kind = pick(rng, "RSA ", "EC ", "OPENSSH ", "")
    body = "\n".join(chars(rng, BASE64, 64) for _ in range(rng.randrange(3, 8)))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


# Each maker returns the text a person pastes and the credential inside it.
def aws_access_key(rng: random.Random) -> tuple[str, str]:
    key = pick(rng, "AKIA", "ASIA") + chars(rng, UPPER_DIGITS, 16)
    return pick(rng, in_context(rng, "AWS_ACCESS_KEY_ID", key), prose(rng, key)), key


def aws_secret_access_key(rng: random.Random) -> tuple[str, str]:
    key, key_id = aws_secret_key(rng), "ASIA" + chars(rng, UPPER_DIGITS, 16)
    text = pick(
        rng,
        f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {key}\n",
        f"AWS_SECRET_ACCESS_KEY={key}",
        f'{{"Credentials": {{"AccessKeyId": "{key_id}", "SecretAccessKey": "{key}"}}}}',
        f"  aws_secret_access_key: {key}",
        f"aws configure set aws_secret_access_key {key}",
    )
    return text, key


def aws_session_token(rng: random.Random) -> tuple[str, str]:
    token = "IQoJb3JpZ2luX2Vj" + chars(rng, BASE64, rng.randrange(300, 700)) + pick(rng, "", "=", "==")
    text = pick(
        rng,
        f"aws_session_token = {token}",
        f"export AWS_SESSION_TOKEN={token}",
        f'"SessionToken": "{token}",',
    )
    return text, token


def github_token(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.7:
        token = pick(rng, "ghp_", "gho_", "ghs_", "ghu_") + chars(rng, ALNUM, 36)
    else:
        token = "github_pat_" + chars(rng, ALNUM, 22) + "_" + chars(rng, ALNUM, 59)
    return pick(rng, prose(rng, token), in_context(rng, "GITHUB_TOKEN", token)), token


def gitlab_token(rng: random.Random) -> tuple[str, str]:
    token = pick(rng, "glpat-", "gldt-", "glft-") + chars(rng, BASE64URL, 20)
    return pick(rng, prose(rng, token), in_context(rng, "GITLAB_TOKEN", token)), token


def gitlab_runner_token(rng: random.Random) -> tuple[str, str]:
    token = pick(
        rng,
        "GR1348941" + chars(rng, BASE64URL, 20),
        "glptt-" + chars(rng, HEX, 40),
        "glrt-" + chars(rng, BASE64URL, 20),
    )
    text = pick(
        rng,
        f"gitlab-runner register --url https://gitlab.example.com --registration-token {token}",
        f'  token = "{token}"',
        f"curl -X POST -F token={token} -F ref=main https://gitlab.example.com/api/v4/projects/7/trigger/pipeline",
    )
    return text, token


def slack_token(rng: random.Random) -> tuple[str, str]:
    token = pick(
        rng,
        f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-{chars(rng, ALNUM, 24)}",
        f"xoxp-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**11, 10**12)}-{chars(rng, HEX, 32)}",
        f"xapp-1-A{chars(rng, UPPER_DIGITS, 10)}-{rng.randrange(10**12, 10**13)}-{chars(rng, HEX, 64)}",
    )
    return pick(rng, prose(rng, token), in_context(rng, "SLACK_BOT_TOKEN", token)), token


def slack_webhook(rng: random.Random) -> tuple[str, str]:
    path = f"T{chars(rng, UPPER_DIGITS, 8)}/B{chars(rng, UPPER_DIGITS, 10)}/{chars(rng, ALNUM, 24)}"
    url = "https://hooks.slack.com/services/" + path
    return f'curl -X POST -d \'{{"text":"deployed"}}\' {url}', url


def stripe_key(rng: random.Random) -> tuple[str, str]:
    key = pick(rng, "sk_live_", "rk_live_", "sk_test_") + chars(rng, ALNUM, rng.randrange(24, 99))
    return pick(rng, in_context(rng, "STRIPE_API_KEY", key), prose(rng, key)), key


def webhook_signing_secret(rng: random.Random) -> tuple[str, str]:
    secret = "whsec_" + chars(rng, ALNUM, 32)
    return in_context(rng, "STRIPE_WEBHOOK_SIGNING", secret), secret


def google_api_key(rng: random.Random) -> tuple[str, str]:
    key = "AIza" + chars(rng, BASE64URL, 35)
    url = f"https://maps.googleapis.com/maps/api/geocode/json?address=Seoul&key={key}"
    return pick(rng, url, in_context(rng, "GOOGLE_MAPS", key)), key


def google_oauth_client_secret(rng: random.Random) -> tuple[str, str]:
    secret = "GOCSPX-" + chars(rng, BASE64URL, 28)
    client_id = f"{rng.randrange(10**11, 10**12)}-{chars(rng, HEX, 32)}.apps.googleusercontent.com"
    text = pick(
        rng,
        f'{{"installed": {{"client_id": "{client_id}", "client_secret": "{secret}"}}}}',
        in_context(rng, "GOOGLE_OAUTH", secret),
    )
    return text, secret


def google_oauth_token(rng: random.Random) -> tuple[str, str]:
    token = "ya29." + chars(rng, BASE64URL, rng.randrange(120, 220))
    curl = f'curl -H "Authorization: Bearer {token}" https://www.googleapis.com/drive/v3/files'
    return pick(rng, curl, prose(rng, token)), token


def npm_token(rng: random.Random) -> tuple[str, str]:
    token = "npm_" + chars(rng, ALNUM, 36)
    return pick(rng, f"//registry.npmjs.org/:_authToken={token}", in_context(rng, "NPM_TOKEN", token)), token


def npmrc_auth_token(rng: random.Random) -> tuple[str, str]:
    # Registries other than npmjs issue UUIDs or base64 blobs.
    uuid = f"{chars(rng, HEX, 8)}-{chars(rng, HEX, 4)}-4{chars(rng, HEX, 3)}-a{chars(rng, HEX, 3)}-{chars(rng, HEX, 12)}"
    token = pick(rng, uuid, chars(rng, BASE64, 62) + "==")
    return (
        f"@acme:registry=https://npm.acme.dev/\n//npm.acme.dev/:_authToken={token}\nalways-auth=true",
        token,
    )


def openai_key(rng: random.Random) -> tuple[str, str]:
    key = "sk-proj-" + chars(rng, BASE64URL, 156) if rng.random() < 0.5 else "sk-" + chars(rng, ALNUM, 48)
    return pick(rng, in_context(rng, "OPENAI_API_KEY", key), prose(rng, key)), key


def anthropic_key(rng: random.Random) -> tuple[str, str]:
    key = "sk-ant-api03-" + chars(rng, BASE64URL, 93) + "AA"
    return in_context(rng, "ANTHROPIC_API_KEY", key), key


def huggingface_token(rng: random.Random) -> tuple[str, str]:
    token = "hf_" + chars(rng, ALNUM, 34)
    return pick(rng, f"huggingface-cli login --token {token}", prose(rng, token)), token


def pypi_token(rng: random.Random) -> tuple[str, str]:
    token = "pypi-AgEIcHlwaS5vcmc" + chars(rng, BASE64URL, rng.randrange(120, 180))
    return f"[pypi]\n  username = __token__\n  password = {token}\n", token


def json_web_token(rng: random.Random) -> tuple[str, str]:
    token = jwt(rng)
    return pick(
        rng, f"Authorization: Bearer {token}", prose(rng, token), in_context(rng, "ID_TOKEN", token)
    ), token


def pem_private_key(rng: random.Random) -> tuple[str, str]:
    key = private_key(rng)
    return pick(rng, f"deploy key:\n{key}\n", f'SSH_KEY="{key}"'), key


def url_password(rng: random.Random) -> tuple[str, str]:
    # A URL carries "@" and the like percent-encoded.
    password = quote(pick(rng, chars(rng, ALNUM, 24), human_password(rng)), safe="")
    text = pick(
        rng,
        f"DATABASE_URL=postgres://app:{password}@db.internal:5432/app",
        f"mongodb+srv://svc_orders:{password}@cluster0.ab1cd.mongodb.net/orders",
        f"redis://:{password}@cache.internal:6379/0",
        f"git clone https://deploy:{password}@git.example.org/acme/site.git",
    )
    return text, password


def authorization_header(rng: random.Random) -> tuple[str, str]:
    value = chars(rng, ALNUM, 40)
    text = pick(
        rng,
        f"curl -H 'Authorization: Bearer {value}' https://api.example.org/v1/jobs",
        f'headers = {{"Authorization": "Token {value}"}}',
        f"Authorization: Basic {value}",
    )
    return text, value


def secret_named_field(rng: random.Random) -> tuple[str, str]:
    name = pick(
        rng,
        "ENCRYPTION_KEY",
        "SECRET_KEY",
        "SECRET_KEY_BASE",
        "JWT_SECRET",
        "CLIENT_SECRET",
        "API_KEY",
        "WEBHOOK_SECRET",
        "SIGNING_KEY",
        "APP_KEY",
        "MASTER_KEY",
        "AUTH_TOKEN",
        "DB_PASS",
        "SMTP_PASSWORD",
    )
    value = pick(
        rng,
        chars(rng, ALNUM, 32),
        chars(rng, HEX, 64),  # openssl rand -hex 32
        chars(rng, HEX, 128),  # rails secret
        base64.b64encode(rng.randbytes(32)).decode(),  # openssl rand -base64 32
        chars(rng, ALNUM + "!#%&*+=?^~", 24),
    )
    return in_context(rng, name, value), value


def password_field(rng: random.Random) -> tuple[str, str]:
    password = human_password(rng)
    text = pick(
        rng,
        f"DB_PASS={password}",
        f"  password: {password}",
        f'{{"username": "admin", "password": "{password}"}}',
        f"POSTGRES_PASSWORD={password}",
        f"--admin-password {password}",
        f"spring.datasource.password={password}",
    )
    return text, password


def command_line_password(rng: random.Random) -> tuple[str, str]:
    password = pick(rng, human_password(rng), chars(rng, ALNUM, 20))
    text = pick(
        rng,
        f"mysql -h db.internal -u root -p{password} shop",
        f"mysqldump -u backup -p'{password}' --all-databases > all.sql",
        f"docker login -u ci -p {password} registry.example.org",
        f"echo ok && podman login -u bot -p {password} quay.io",
        f"sshpass -p '{password}' ssh deploy@10.0.3.7",
    )
    return text, password


def kenfold_key(rng: random.Random) -> tuple[str, str]:
    key = "kf_" + chars(rng, BASE64URL, 43)
    return pick(rng, in_context(rng, "KENFOLD_API_KEY", key), prose(rng, key)), key


CREDENTIAL_MAKERS: tuple[Callable[[random.Random], tuple[str, str]], ...] = (
    aws_access_key,
    aws_secret_access_key,
    aws_session_token,
    github_token,
    gitlab_token,
    gitlab_runner_token,
    slack_token,
    slack_webhook,
    stripe_key,
    webhook_signing_secret,
    google_api_key,
    google_oauth_client_secret,
    google_oauth_token,
    npm_token,
    npmrc_auth_token,
    openai_key,
    anthropic_key,
    huggingface_token,
    pypi_token,
    json_web_token,
    pem_private_key,
    url_password,
    authorization_header,
    secret_named_field,
    password_field,
    command_line_password,
    kenfold_key,
)


def commit_sha(rng: random.Random) -> str:
    sha = chars(rng, HEX, 40)
    return pick(
        rng,
        f"commit {sha}\nAuthor: Mina Park <mina@example.org>",
        f"fixed in {sha[:7]}, reverted in {chars(rng, HEX, 7)}",
        f"git checkout {sha} && make test",
        f'"sha": "{sha}", "ref": "refs/heads/main"',
        f"https://github.com/acme/site/blob/{sha}/app/settings.py#L42",
        "token=" + sha,  # a commit SHA pasted under a token name is still not a credential
    )


def uuid_value(rng: random.Random) -> str:
    uuid = f"{chars(rng, HEX, 8)}-{chars(rng, HEX, 4)}-4{chars(rng, HEX, 3)}-8{chars(rng, HEX, 3)}-{chars(rng, HEX, 12)}"
    return pick(
        rng,
        f"request_id={uuid} status=500",
        f'{{"id": "{uuid}", "type": "decision"}}',
        f"memory {uuid} superseded",
        f"SESSION_ID={uuid.upper()}",
        f"idempotency_key: {uuid}",
    )


def base64_data(rng: random.Random) -> str:
    sentence = pick(
        rng,
        "The deploy pipeline runs migrations before switching traffic.",
        "Retry the job with exponential backoff, at most five times.",
        "배포 전에 마이그레이션을 먼저 실행합니다.",
        f"build {rng.randrange(1000, 9999)} passed on runner {rng.randrange(1, 99)}",
    )
    encoded = base64.b64encode(sentence.encode()).decode()
    return pick(
        rng,
        f"data: {encoded}",
        f'{{"content": "{encoded}", "encoding": "base64"}}',
        f"echo {encoded} | base64 -d",
        f"  body: {encoded}",
    )


def name_without_value(rng: random.Random) -> str:
    name = pick(
        rng,
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASS",
        "ENCRYPTION_KEY",
        "STRIPE_SECRET_KEY",
        "GITHUB_TOKEN",
    )
    return pick(
        rng,
        f"export {name}",
        f"{name}=",
        f"Set {name} in the CI settings; never commit it.",
        f"env: [{name}, LOG_LEVEL]",
        f"unset {name}",
        f"The {name.lower()} is kept in 1Password under 'prod'.",
        f"  {name.lower()}:",
    )


def placeholder(rng: random.Random) -> str:
    name = pick(rng, "API_TOKEN", "DB_PASSWORD", "CLIENT_SECRET", "ENCRYPTION_KEY", "DB_PASS", "SECRET_KEY")
    value = pick(
        rng,
        "${" + name + "}",
        "$" + name,
        "<your-key>",
        "<" + name.lower() + ">",
        "x" * rng.randrange(16, 41),
        "X" * rng.randrange(16, 41),
        "changeme",
        "change-me-in-production",
        "{{ secrets." + name + " }}",
        "%" + name + "%",
        "********",
        "REDACTED",
        "your-api-key-here",
        "insert-token-here",
        "dummy" + str(rng.randrange(100, 999)),
    )
    return pick(
        rng, in_context(rng, name, value), f"Authorization: Bearer {value}", f"postgres://app:{value}@db/app"
    )


def documented_example(rng: random.Random) -> str:
    return pick(
        rng,
        "ghp_" + "x" * 36,
        "AKIA" + "X" * 16,
        "AKIA" + "IOSFODNN7" + "EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "EXAMPLEKEY",
        "sk_live_" + "x" * 24,
        "glpat-" + "x" * 20,
        "xoxb-" + "your-bot-token",
        "sk-proj-" + "X" * 48,
        "whsec_" + "x" * 32,
        "GOCSPX-" + "x" * 28,
        "https://examplePublicKey@o0.ingest.sentry.io/0",
        "-----BEGIN " + "OPENSSH PRIVATE KEY" + "-----\n...\n-----END OPENSSH PRIVATE KEY-----",
        "mysql -u root -p",
        'docker login -u "$CI_REGISTRY_USER" -p "$CI_REGISTRY_PASSWORD" $CI_REGISTRY',
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    )


def environment_read(rng: random.Random) -> str:
    name = pick(
        rng,
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASS",
        "STRIPE_SECRET_KEY",
        "ENCRYPTION_KEY",
        "SECRET_KEY_BASE",
        "API_TOKEN",
    )
    return pick(
        rng,
        f'secret_access_key = os.environ["{name}"]',
        f'password = os.getenv("{name}")',
        f"const secretKey = process.env.{name};",
        f'secret_key_base = ENV.fetch("{name}")',
        f'String apiToken = System.getenv("{name}");',
        f'let api_key = std::env::var("{name}")?;',
        f"password = settings.{name}",
        f'encryption_key = config("{name}")',
        f'token: str = Field(..., alias="{name.lower()}")',
        f"DB_PASS=$(aws secretsmanager get-secret-value --secret-id prod/{name.lower()} --query SecretString)",
    )


def lock_file_hash(rng: random.Random) -> str:
    return pick(
        rng,
        f'"integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}"',
        f'{{file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:{chars(rng, HEX, 64)}"}}',
        f"django==5.1.4 --hash=sha256:{chars(rng, HEX, 64)}",
        f'checksum = "{chars(rng, HEX, 64)}"',
        f"github.com/lib/pq v1.10.9 h1:{base64.b64encode(rng.randbytes(32)).decode()}",
        f"  integrity sha1-{base64.b64encode(rng.randbytes(20)).decode()}",
        f"image: postgres@sha256:{chars(rng, HEX, 64)}",
    )


def ordinary_config(rng: random.Random) -> str:
    return pick(
        rng,
        f"PASSWORD_MIN_LENGTH={rng.randrange(8, 20)}",
        f"TOKEN_TTL_SECONDS={rng.randrange(60, 86400)}",
        f"max_tokens: {rng.randrange(256, 8192)}",
        "password_hasher: argon2",
        f"docker run -p {rng.randrange(1024, 9999)}:80 nginx:1.27",
        f"ssh -p {rng.randrange(1024, 9999)} deploy@10.0.{rng.randrange(0, 255)}.{rng.randrange(1, 255)}",
        f"mkdir -p build/out-{rng.randrange(2020, 2030)}",
        "postgres://app:app@localhost:5432/app",
        f"DATABASE_URL=postgres://localhost:{rng.randrange(5432, 5500)}/app",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, BASE64, 43)} mina@laptop",
        f"pk_live_{chars(rng, ALNUM, 24)}",  # a Stripe publishable key is public by design
        f"version: {rng.randrange(1, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 30)}",
        f'"password": "$2b$12${chars(rng, BASE64, 53)}"',  # a bcrypt hash in a fixture
        f"trace_id={chars(rng, HEX, 32)} span_id={chars(rng, HEX, 16)}",
        f"{pick(rng, 'bypass', 'compass', 'passthrough')}={pick(rng, 'true', 'Summer2021')}",
        "password = forms.CharField(widget=forms.PasswordInput)",
        f"the token expires after {rng.randrange(60, 7200)}s",
    )


def ordinary_prose(rng: random.Random) -> str:
    return pick(
        rng,
        "Use pnpm, not npm, in this repository; the CI token is rotated monthly by the platform team.",
        "last-write-wins is the conflict rule; the newest handoff replaces the older one.",
        f"Rotated the AWS keys on {rng.randrange(2020, 2027)}-0{rng.randrange(1, 9)}-1{rng.randrange(0, 9)}; ask Mina for access.",
        "The password manager holds everything; the passphrase policy needs 4 words.",
        "task-queue-restart-2024-11-30-workers drained without errors",
        "배포 전에 마이그레이션을 먼저 실행하고, 실패하면 롤백합니다.",
        f"See RFC {rng.randrange(1000, 9999)} section {rng.randrange(1, 9)}.{rng.randrange(1, 9)} for bearer token usage.",
    )


def sentry_dsn(rng: random.Random) -> str:
    # Sentry documents the DSN as safe to keep public: it only lets a client send events.
    key = chars(rng, HEX, 32)
    dsn = f"https://{key}@o{rng.randrange(10**5, 10**7)}.ingest.sentry.io/{rng.randrange(10**6, 10**7)}"
    return in_context(rng, "SENTRY_DSN", dsn)


LOOK_ALIKE_MAKERS: tuple[Callable[[random.Random], str], ...] = (
    commit_sha,
    sentry_dsn,
    uuid_value,
    base64_data,
    name_without_value,
    placeholder,
    documented_example,
    environment_read,
    lock_file_hash,
    ordinary_config,
    ordinary_prose,
)
LOOK_ALIKES_PER_KIND = 36


def credential_corpus() -> list[Credential]:
    rng = random.Random(SEED)
    corpus = []
    for make in CREDENTIAL_MAKERS:
        for _ in range(SAMPLES_PER_KIND):
            text, secret = make(rng)
            corpus.append(Credential(kind=make.__name__, text=text, secret=secret))
    return corpus


def look_alike_corpus() -> list[LookAlike]:
    rng = random.Random(SEED + 1)
    return [
        LookAlike(kind=make.__name__, text=make(rng))
        for make in LOOK_ALIKE_MAKERS
        for _ in range(LOOK_ALIKES_PER_KIND)
    ]


def is_caught(credential: Credential) -> bool:
    """Whether findings cover every character of the credential, so redaction leaves nothing of it."""
    start = credential.text.index(credential.secret)
    covered = set()
    for finding in find_secrets(credential.text):
        covered.update(range(finding.start, finding.end))
    return covered >= set(range(start, start + len(credential.secret)))


def test_corpus_is_large_and_varied() -> None:
    credentials, look_alikes = credential_corpus(), look_alike_corpus()

    assert len(credentials) >= 300 and len(look_alikes) >= 300
    assert len({credential.kind for credential in credentials}) >= 20
    assert credential_corpus() == credentials, "the generator is deterministic"


def test_filter_catches_99_percent_of_credentials() -> None:
    credentials = credential_corpus()
    missed = [credential for credential in credentials if not is_caught(credential)]

    assert len(missed) <= 0.01 * len(credentials), (
        f"caught {len(credentials) - len(missed)} of {len(credentials)}; missed by kind: "
        f"{dict(Counter(credential.kind for credential in missed))}; first: {[c.text for c in missed[:3]]}"
    )


def test_filter_flags_at_most_half_a_percent_of_look_alikes() -> None:
    look_alikes = look_alike_corpus()
    flagged = [look_alike for look_alike in look_alikes if find_secrets(look_alike.text)]

    assert len(flagged) <= 0.005 * len(look_alikes), (
        f"flagged {len(flagged)} of {len(look_alikes)}; by kind: "
        f"{dict(Counter(look_alike.kind for look_alike in flagged))}; first: {[f.text for f in flagged[:3]]}"
    )
