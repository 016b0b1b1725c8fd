"""Credential formats as their providers document them, each with a generator of fresh random values.

Written from the providers' own descriptions of their tokens (prefix, length, alphabet, checksum where one
is documented), not from the filter's rules: the corpus measures the filter against the formats in use.
Values are generated at test time from a seeded generator, so no credential-shaped string is committed.

Each generator returns a ``Credential``: ``value`` is what a person pastes (a token, or a URL or connection
string that carries one), ``secret`` the part of it that must not be stored. ``named`` kinds are values
nobody can tell from a hash or an id without the name they are kept under (``TWILIO_AUTH_TOKEN=<hex>``),
so the corpus only ever shows them under such a name.
"""

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
BASE64 = ALNUM + "+/"
BASE64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def chars(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def digits(rng: random.Random, length: int) -> str:
    return str(rng.randrange(10 ** (length - 1), 10**length))


def uuid4(rng: random.Random) -> str:
    h = chars(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def base62(number: int, width: int) -> str:
    out = ""
    while number:
        number, rest = divmod(number, 62)
        out = (string.digits + string.ascii_letters)[rest] + out
    return out.rjust(width, "0")


@dataclass(frozen=True)
class Credential:
    value: str
    secret: str


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    # The variable a project keeps it in: env files, CI settings, YAML.
    env: str
    make: Callable[[random.Random], Credential]
    # The fixed start of the secret ("ghp_"): in-token disguises change what follows it.
    prefix: str = ""
    named: bool = False
    # A value with its own frame (URL, connection string, key file): shown as is, or under its variable.
    framed: bool = False


def token(prefix: str, *parts: tuple[str, int] | str) -> Callable[[random.Random], Credential]:
    """A prefixed token: ``parts`` are (alphabet, length) runs or literal separators."""

    def make(rng: random.Random) -> Credential:
        body = "".join(part if isinstance(part, str) else chars(rng, *part) for part in parts)
        return Credential(prefix + body, prefix + body)

    return make


def github(prefix: str) -> Callable[[random.Random], Credential]:
    # GitHub (2021 token formats): 30 random base62 characters and a 6-character base62 CRC32 checksum.
    def make(rng: random.Random) -> Credential:
        entropy = chars(rng, ALNUM, 30)
        value = prefix + entropy + base62(zlib.crc32(entropy.encode()), 6)
        return Credential(value, value)

    return make


def framed(build: Callable[[random.Random], tuple[str, str]]) -> Callable[[random.Random], Credential]:
    def make(rng: random.Random) -> Credential:
        value, secret = build(rng)
        return Credential(value, secret)

    return make


def password(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return chars(rng, ALNUM, rng.randrange(16, 33))
    word = rng.choice(("Harbor", "Velvet", "Orchid", "Falcon", "Maple", "Cobalt", "Juniper"))
    return word + rng.choice("!#*@?") + digits(rng, 4) + rng.choice(("", "x", "Q", "!!"))


def host(rng: random.Random) -> str:
    return rng.choice(("db.internal", "10.0.3.17", "pg-prod.eu-west-1.rds.amazonaws.com", "localhost"))


def _db_url(scheme: str, port: int, user: str = "app") -> Callable[[random.Random], tuple[str, str]]:
    def build(rng: random.Random) -> tuple[str, str]:
        secret = password(rng)
        return f"{scheme}://{user}:{quote(secret, safe='')}@{host(rng)}:{port}/orders", quote(secret, safe="")

    return build


def _mongodb(rng: random.Random) -> tuple[str, str]:
    secret = password(rng)
    cluster = f"cluster0.{chars(rng, LOWER_ALNUM, 5)}.mongodb.net"
    return f"mongodb+srv://svc-orders:{secret}@{cluster}/?retryWrites=true&w=majority", secret


def _redis(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, ALNUM, 32)
    return f"redis://:{secret}@cache.internal:6379/0", secret


def _ado(rng: random.Random) -> tuple[str, str]:
    secret = password(rng)
    return (
        f"Server=tcp:orders-{chars(rng, LOWER_ALNUM, 4)}.database.windows.net,1433;Initial Catalog=orders;"
        f"User ID=sqladmin;Password={secret};Encrypt=True;TrustServerCertificate=False",
        secret,
    )


def _odbc(rng: random.Random) -> tuple[str, str]:
    secret = password(rng)
    return (
        f"Driver={{ODBC Driver 18 for SQL Server}};Server=sql01;Database=ledger;UID=report;PWD={secret};",
        secret,
    )


def _jdbc(rng: random.Random) -> tuple[str, str]:
    secret = password(rng)
    return f"jdbc:postgresql://db.internal:5432/orders?user=app&password={secret}&ssl=true", secret


def _azure_connection_string(rng: random.Random) -> tuple[str, str]:
    key = b64(rng.randbytes(64))
    return (
        f"DefaultEndpointsProtocol=https;AccountName=st{chars(rng, LOWER_ALNUM, 10)};AccountKey={key};"
        "EndpointSuffix=core.windows.net",
        key,
    )


def _azure_sas(rng: random.Random) -> tuple[str, str]:
    # Azure: a SAS is a URL whose sig= parameter is the base64 HMAC-SHA256 of the string-to-sign, URL-encoded.
    sig = quote(b64(rng.randbytes(32)), safe="")
    return (
        f"https://st{chars(rng, LOWER_ALNUM, 8)}.blob.core.windows.net/exports/report.csv?sv=2022-11-02&ss=b"
        f"&srt=co&sp=rl&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig={sig}",
        sig,
    )


def _gcp_service_account(rng: random.Random) -> tuple[str, str]:
    # A service-account key file: the private key is PKCS#8 PEM with its line breaks escaped in JSON.
    lines = [chars(rng, BASE64, 64) for _ in range(rng.randrange(6, 12))]
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(
        ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + lines[0][32:], *lines[1:]]
    )
    pem += "\n-----END PRIVATE KEY-----\n"
    document = {
        "type": "service_account",
        "project_id": f"orders-{digits(rng, 6)}",
        "private_key_id": chars(rng, HEX, 40),
        "private_key": pem,
        "client_email": f"deployer@orders-{digits(rng, 6)}.iam.gserviceaccount.com",
    }
    text = json.dumps(document, indent=rng.choice((None, 2)))
    return text, lines[1]


def _pem(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "))
    lines = [chars(rng, BASE64, 64) for _ in range(rng.randrange(4, 10))]
    text = f"-----BEGIN {kind}PRIVATE KEY-----\n" + "\n".join(lines) + f"\n-----END {kind}PRIVATE KEY-----"
    return text, lines[1]


def _pgp(rng: random.Random) -> tuple[str, str]:
    lines = [chars(rng, BASE64, 64) for _ in range(rng.randrange(4, 10))]
    text = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
        + "\n".join(lines)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    return text, lines[1]


def _jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": rng.choice(("HS256", "RS256")), "typ": "JWT"}).encode())
    claims = {
        "sub": uuid4(rng),
        "role": rng.choice(("service_role", "admin", "user")),
        "iat": rng.randrange(10**9, 2 * 10**9),
    }
    return f"{header}.{b64url(json.dumps(claims).encode())}.{b64url(rng.randbytes(32))}"


def _jwt_credential(rng: random.Random) -> Credential:
    value = _jwt(rng)
    return Credential(value, value)


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, ALNUM, 24)
    return (
        f"https://hooks.slack.com/services/T{chars(rng, UPPER_ALNUM, 10)}/B{chars(rng, UPPER_ALNUM, 10)}/{secret}",
        secret,
    )


def _discord_webhook(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, BASE64URL, 68)
    return f"https://discord.com/api/webhooks/{digits(rng, 19)}/{secret}", secret


def _teams_webhook(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, HEX, 32)
    return (
        f"https://contoso.webhook.office.com/webhookb2/{uuid4(rng)}@{uuid4(rng)}/IncomingWebhook/{secret}/{uuid4(rng)}",
        secret,
    )


def _discord_bot(rng: random.Random) -> Credential:
    # Discord: base64 of the bot's user id, a base64 timestamp, an HMAC.
    value = f"{b64url(digits(rng, 19).encode())}.{chars(rng, BASE64URL, 6)}.{chars(rng, BASE64URL, 38)}"
    return Credential(value, value)


def _telegram(rng: random.Random) -> Credential:
    # Telegram Bot API: "<bot id>:<35 characters>", the second part starting with "AA".
    value = f"{digits(rng, 10)}:AA{chars(rng, BASE64URL, 33)}"
    return Credential(value, value)


def _braintree(rng: random.Random) -> Credential:
    value = f"access_token$production${chars(rng, LOWER_ALNUM, 16)}${chars(rng, HEX, 32)}"
    return Credential(value, value)


def _sentry_dsn(rng: random.Random) -> tuple[str, str]:
    key = chars(rng, HEX, 32)
    return f"https://{key}@o{digits(rng, 6)}.ingest.sentry.io/{digits(rng, 7)}", key


def _grafana_cloud(rng: random.Random) -> Credential:
    payload = b64(
        json.dumps(
            {"o": digits(rng, 6), "n": "deploy", "k": chars(rng, ALNUM, 24), "m": {"r": "eu"}}
        ).encode()
    )
    value = "glc_" + payload
    return Credential(value, value)


def _sentry_org(rng: random.Random) -> Credential:
    payload = b64(
        json.dumps(
            {"iat": rng.randrange(10**9, 2 * 10**9), "url": "https://sentry.io", "org": "acme"}
        ).encode()
    )
    value = "sntrys_" + payload + "_" + chars(rng, BASE64, 43)
    return Credential(value, value)


def _one_password(rng: random.Random) -> Credential:
    payload = b64url(
        json.dumps(
            {
                "signInAddress": "acme.1password.com",
                "userAuth": {"method": "SRPg-4096"},
                "email": chars(rng, LOWER_ALNUM, 26) + "@1passwordserviceaccounts.com",
                "srpX": chars(rng, HEX, 64),
            }
        ).encode()
    )
    value = "ops_" + payload
    return Credential(value, value)


def _mapbox(rng: random.Random) -> Credential:
    payload = b64url(json.dumps({"u": "acme", "a": chars(rng, LOWER_ALNUM, 25)}).encode())
    value = f"sk.{payload}.{chars(rng, BASE64URL, 22)}"
    return Credential(value, value)


def _basic_auth(rng: random.Random) -> tuple[str, str]:
    encoded = b64(f"deploy:{password(rng)}".encode())
    return f"Authorization: Basic {encoded}", encoded


def _named(alphabet: str, length: int) -> Callable[[random.Random], Credential]:
    return token("", (alphabet, length))


def _uuid_credential(rng: random.Random) -> Credential:
    value = uuid4(rng)
    return Credential(value, value)


KINDS: tuple[Kind, ...] = (
    # --- cloud ---
    Kind("aws-access-key-id", "cloud", "AWS_ACCESS_KEY_ID", token("AKIA", (BASE32, 16)), prefix="AKIA"),
    Kind(
        "aws-temporary-access-key-id",
        "cloud",
        "AWS_ACCESS_KEY_ID",
        token("ASIA", (BASE32, 16)),
        prefix="ASIA",
    ),
    Kind("aws-secret-access-key", "cloud", "AWS_SECRET_ACCESS_KEY", _named(BASE64, 40), named=True),
    Kind("gcp-service-account-key", "cloud", "GOOGLE_CREDENTIALS", framed(_gcp_service_account), framed=True),
    Kind("gcp-api-key", "cloud", "GOOGLE_API_KEY", token("AIza", (BASE64URL, 35)), prefix="AIza"),
    Kind(
        "gcp-oauth-client-secret",
        "cloud",
        "GOOGLE_CLIENT_SECRET",
        token("GOCSPX-", (BASE64URL, 28)),
        prefix="GOCSPX-",
    ),
    Kind(
        "azure-storage-connection-string",
        "cloud",
        "AZURE_STORAGE_CONNECTION_STRING",
        framed(_azure_connection_string),
        framed=True,
    ),
    Kind(
        "azure-storage-account-key",
        "cloud",
        "AZURE_STORAGE_ACCOUNT_KEY",
        token("", (BASE64, 86), "=="),
        named=True,
    ),
    Kind("azure-sas-url", "cloud", "EXPORT_URL", framed(_azure_sas), framed=True),
    # Entra ID client secrets: 3 characters, a digit and "Q~", then 31 to 34 more.
    Kind(
        "azure-client-secret",
        "cloud",
        "AZURE_CLIENT_SECRET",
        token("", (ALNUM, 3), "8Q~", (ALNUM + "_~.-", 34)),
        named=True,
    ),
    Kind(
        "alibaba-access-key-id",
        "cloud",
        "ALIBABA_CLOUD_ACCESS_KEY_ID",
        token("LTAI", (ALNUM, 20)),
        prefix="LTAI",
    ),
    Kind("ibm-cloud-api-key", "cloud", "IBMCLOUD_API_KEY", _named(BASE64URL, 44), named=True),
    Kind("cloudflare-api-token", "cloud", "CLOUDFLARE_API_TOKEN", _named(BASE64URL, 40), named=True),
    Kind("digitalocean-token", "cloud", "DIGITALOCEAN_TOKEN", token("dop_v1_", (HEX, 64)), prefix="dop_v1_"),
    Kind("heroku-api-key", "cloud", "HEROKU_API_KEY", token("HRKU-AA", (BASE64URL, 58)), prefix="HRKU-AA"),
    Kind("heroku-legacy-api-key", "cloud", "HEROKU_API_KEY", _uuid_credential, named=True),
    Kind("netlify-token", "cloud", "NETLIFY_AUTH_TOKEN", token("nfp_", (ALNUM, 36)), prefix="nfp_"),
    Kind("vercel-token", "cloud", "VERCEL_TOKEN", _named(ALNUM, 24), named=True),
    Kind("supabase-token", "cloud", "SUPABASE_ACCESS_TOKEN", token("sbp_", (HEX, 40)), prefix="sbp_"),
    Kind("supabase-service-role-jwt", "cloud", "SUPABASE_SERVICE_ROLE_KEY", _jwt_credential, prefix="eyJ"),
    Kind("fly-token", "cloud", "FLY_API_TOKEN", token("FlyV1 fm2_", (BASE64, 180)), prefix="FlyV1 fm2_"),
    # --- CI ---
    Kind("github-classic-pat", "ci", "GITHUB_TOKEN", github("ghp_"), prefix="ghp_"),
    Kind("github-oauth-token", "ci", "GH_TOKEN", github("gho_"), prefix="gho_"),
    Kind("github-app-token", "ci", "GITHUB_TOKEN", github("ghs_"), prefix="ghs_"),
    Kind("github-user-to-server-token", "ci", "GH_TOKEN", github("ghu_"), prefix="ghu_"),
    Kind(
        "github-fine-grained-pat",
        "ci",
        "GITHUB_PAT",
        token("github_pat_", (ALNUM, 22), "_", (ALNUM, 59)),
        prefix="github_pat_",
    ),
    Kind("gitlab-pat", "ci", "GITLAB_TOKEN", token("glpat-", (BASE64URL, 20)), prefix="glpat-"),
    Kind("gitlab-runner-token", "ci", "CI_RUNNER_TOKEN", token("glrt-", (BASE64URL, 20)), prefix="glrt-"),
    Kind("gitlab-trigger-token", "ci", "TRIGGER_TOKEN", token("glptt-", (HEX, 40)), prefix="glptt-"),
    Kind(
        "circleci-pat",
        "ci",
        "CIRCLECI_TOKEN",
        token("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)),
        prefix="CCIPAT_",
    ),
    Kind("circleci-legacy-token", "ci", "CIRCLE_TOKEN", _named(HEX, 40), named=True),
    Kind("travis-token", "ci", "TRAVIS_API_TOKEN", _named(ALNUM, 22), named=True),
    Kind("buildkite-token", "ci", "BUILDKITE_API_TOKEN", token("bkua_", (HEX, 40)), prefix="bkua_"),
    Kind("bitbucket-app-password", "ci", "BITBUCKET_APP_PASSWORD", token("ATBB", (ALNUM, 32)), prefix="ATBB"),
    Kind(
        "azure-devops-pat",
        "ci",
        "AZURE_DEVOPS_PAT",
        _named(string.ascii_lowercase + "234567", 52),
        named=True,
    ),
    # --- chat ---
    Kind(
        "slack-bot-token",
        "chat",
        "SLACK_BOT_TOKEN",
        token("xoxb-", (string.digits, 12), "-", (string.digits, 13), "-", (ALNUM, 24)),
        prefix="xoxb-",
    ),
    Kind(
        "slack-user-token",
        "chat",
        "SLACK_USER_TOKEN",
        token(
            "xoxp-", (string.digits, 12), "-", (string.digits, 12), "-", (string.digits, 13), "-", (HEX, 32)
        ),
        prefix="xoxp-",
    ),
    Kind(
        "slack-app-token",
        "chat",
        "SLACK_APP_TOKEN",
        token("xapp-1-A", (UPPER_ALNUM, 10), "-", (string.digits, 13), "-", (HEX, 64)),
        prefix="xapp-1-",
    ),
    Kind("slack-webhook", "chat", "SLACK_WEBHOOK_URL", framed(_slack_webhook), framed=True),
    Kind("discord-bot-token", "chat", "DISCORD_BOT_TOKEN", _discord_bot),
    Kind("discord-webhook", "chat", "DISCORD_WEBHOOK_URL", framed(_discord_webhook), framed=True),
    Kind("telegram-bot-token", "chat", "TELEGRAM_BOT_TOKEN", _telegram),
    Kind("teams-webhook", "chat", "TEAMS_WEBHOOK_URL", framed(_teams_webhook), framed=True),
    # --- payment ---
    Kind(
        "stripe-secret-key", "payment", "STRIPE_SECRET_KEY", token("sk_live_", (ALNUM, 99)), prefix="sk_live_"
    ),
    Kind(
        "stripe-restricted-key",
        "payment",
        "STRIPE_API_KEY",
        token("rk_live_", (ALNUM, 99)),
        prefix="rk_live_",
    ),
    Kind(
        "stripe-webhook-secret",
        "payment",
        "STRIPE_WEBHOOK_SECRET",
        token("whsec_", (ALNUM, 32)),
        prefix="whsec_",
    ),
    Kind(
        "square-access-token", "payment", "SQUARE_ACCESS_TOKEN", token("EAAA", (BASE64URL, 60)), prefix="EAAA"
    ),
    Kind(
        "square-app-secret",
        "payment",
        "SQUARE_APPLICATION_SECRET",
        token("sq0csp-", (BASE64URL, 43)),
        prefix="sq0csp-",
    ),
    Kind(
        "braintree-access-token",
        "payment",
        "BRAINTREE_ACCESS_TOKEN",
        _braintree,
        prefix="access_token$production$",
    ),
    Kind("paypal-client-secret", "payment", "PAYPAL_CLIENT_SECRET", _named(BASE64URL, 80), named=True),
    Kind(
        "shopify-access-token", "payment", "SHOPIFY_ACCESS_TOKEN", token("shpat_", (HEX, 32)), prefix="shpat_"
    ),
    Kind(
        "shopify-shared-secret", "payment", "SHOPIFY_API_SECRET", token("shpss_", (HEX, 32)), prefix="shpss_"
    ),
    Kind(
        "flutterwave-secret-key",
        "payment",
        "FLW_SECRET_KEY",
        token("FLWSECK-", (HEX, 32), "-X"),
        prefix="FLWSECK-",
    ),
    # --- databases ---
    Kind("postgres-url", "database", "DATABASE_URL", framed(_db_url("postgres", 5432)), framed=True),
    Kind("mysql-url", "database", "DATABASE_URL", framed(_db_url("mysql", 3306, "root")), framed=True),
    Kind("amqp-url", "database", "BROKER_URL", framed(_db_url("amqps", 5671, "worker")), framed=True),
    Kind("mongodb-srv-url", "database", "MONGODB_URI", framed(_mongodb), framed=True),
    Kind("redis-url", "database", "REDIS_URL", framed(_redis), framed=True),
    Kind("ado-connection-string", "database", "ConnectionStrings__Orders", framed(_ado), framed=True),
    Kind("odbc-connection-string", "database", "ODBC_DSN", framed(_odbc), framed=True),
    Kind("jdbc-url", "database", "JDBC_URL", framed(_jdbc), framed=True),
    Kind(
        "planetscale-password",
        "database",
        "PLANETSCALE_PASSWORD",
        token("pscale_pw_", (BASE64URL, 43)),
        prefix="pscale_pw_",
    ),
    # --- package registries ---
    Kind("npm-token", "registry", "NPM_TOKEN", token("npm_", (ALNUM, 36)), prefix="npm_"),
    Kind(
        "pypi-token",
        "registry",
        "PYPI_TOKEN",
        token("pypi-AgEIcHlwaS5vcmc", (BASE64URL, 150)),
        prefix="pypi-AgEIcHlwaS5vcmc",
    ),
    Kind("rubygems-key", "registry", "GEM_HOST_API_KEY", token("rubygems_", (HEX, 48)), prefix="rubygems_"),
    Kind("nuget-key", "registry", "NUGET_API_KEY", token("oy2", (LOWER_ALNUM, 43)), prefix="oy2"),
    Kind(
        "dockerhub-pat",
        "registry",
        "DOCKERHUB_TOKEN",
        token("dckr_pat_", (BASE64URL, 27)),
        prefix="dckr_pat_",
    ),
    Kind("crates-token", "registry", "CARGO_REGISTRY_TOKEN", token("cio", (ALNUM, 32)), prefix="cio"),
    Kind("artifactory-api-key", "registry", "ARTIFACTORY_API_KEY", token("AKCp", (ALNUM, 69)), prefix="AKCp"),
    Kind(
        "clojars-token",
        "registry",
        "CLOJARS_DEPLOY_TOKEN",
        token("CLOJARS_", (LOWER_ALNUM, 60)),
        prefix="CLOJARS_",
    ),
    # --- observability ---
    Kind("datadog-api-key", "observability", "DD_API_KEY", _named(HEX, 32), named=True),
    Kind("datadog-app-key", "observability", "DATADOG_APPLICATION_KEY", _named(HEX, 40), named=True),
    Kind(
        "newrelic-user-key",
        "observability",
        "NEW_RELIC_API_KEY",
        token("NRAK-", (UPPER_ALNUM, 27)),
        prefix="NRAK-",
    ),
    Kind(
        "newrelic-license-key",
        "observability",
        "NEW_RELIC_LICENSE_KEY",
        token("", (HEX, 36), "NRAL"),
        named=True,
    ),
    Kind("sentry-dsn", "observability", "SENTRY_DSN", framed(_sentry_dsn), framed=True),
    Kind(
        "sentry-user-token",
        "observability",
        "SENTRY_AUTH_TOKEN",
        token("sntryu_", (HEX, 64)),
        prefix="sntryu_",
    ),
    Kind("sentry-org-token", "observability", "SENTRY_AUTH_TOKEN", _sentry_org, prefix="sntrys_"),
    Kind(
        "grafana-service-account",
        "observability",
        "GRAFANA_TOKEN",
        token("glsa_", (ALNUM, 32), "_", (HEX, 8)),
        prefix="glsa_",
    ),
    Kind("grafana-cloud-token", "observability", "GRAFANA_CLOUD_TOKEN", _grafana_cloud, prefix="glc_"),
    Kind(
        "dynatrace-token",
        "observability",
        "DT_API_TOKEN",
        token("dt0c01.", (UPPER_ALNUM, 24), ".", (UPPER_ALNUM, 64)),
        prefix="dt0c01.",
    ),
    Kind("splunk-hec-token", "observability", "SPLUNK_HEC_TOKEN", _uuid_credential, named=True),
    # --- AI providers ---
    Kind(
        "openai-project-key",
        "ai",
        "OPENAI_API_KEY",
        token("sk-proj-", (BASE64URL, 74), "T3BlbkFJ", (BASE64URL, 74)),
        prefix="sk-proj-",
    ),
    Kind(
        "openai-legacy-key",
        "ai",
        "OPENAI_API_KEY",
        token("sk-", (ALNUM, 20), "T3BlbkFJ", (ALNUM, 20)),
        prefix="sk-",
    ),
    Kind(
        "openai-service-account-key",
        "ai",
        "OPENAI_API_KEY",
        token("sk-svcacct-", (BASE64URL, 74), "T3BlbkFJ", (BASE64URL, 74)),
        prefix="sk-svcacct-",
    ),
    Kind(
        "anthropic-key",
        "ai",
        "ANTHROPIC_API_KEY",
        token("sk-ant-api03-", (BASE64URL, 93), "AA"),
        prefix="sk-ant-api03-",
    ),
    Kind(
        "anthropic-admin-key",
        "ai",
        "ANTHROPIC_ADMIN_KEY",
        token("sk-ant-admin01-", (BASE64URL, 93), "AA"),
        prefix="sk-ant-admin01-",
    ),
    Kind("huggingface-token", "ai", "HF_TOKEN", token("hf_", (string.ascii_letters, 34)), prefix="hf_"),
    Kind("groq-key", "ai", "GROQ_API_KEY", token("gsk_", (ALNUM, 52)), prefix="gsk_"),
    Kind("replicate-token", "ai", "REPLICATE_API_TOKEN", token("r8_", (ALNUM, 37)), prefix="r8_"),
    Kind("cohere-key", "ai", "COHERE_API_KEY", _named(ALNUM, 40), named=True),
    Kind("mistral-key", "ai", "MISTRAL_API_KEY", _named(ALNUM, 32), named=True),
    Kind("perplexity-key", "ai", "PERPLEXITY_API_KEY", token("pplx-", (ALNUM, 48)), prefix="pplx-"),
    Kind("xai-key", "ai", "XAI_API_KEY", token("xai-", (ALNUM, 80)), prefix="xai-"),
    Kind("deepseek-key", "ai", "DEEPSEEK_API_KEY", token("sk-", (HEX, 32)), prefix="sk-"),
    Kind(
        "langsmith-key",
        "ai",
        "LANGSMITH_API_KEY",
        token("lsv2_pt_", (HEX, 32), "_", (HEX, 10)),
        prefix="lsv2_pt_",
    ),
    # --- messaging and other SaaS ---
    Kind("twilio-api-key", "saas", "TWILIO_API_KEY", token("SK", (HEX, 32)), prefix="SK"),
    Kind("twilio-auth-token", "saas", "TWILIO_AUTH_TOKEN", _named(HEX, 32), named=True),
    Kind("databricks-token", "saas", "DATABRICKS_TOKEN", token("dapi", (HEX, 32)), prefix="dapi"),
    Kind(
        "sendgrid-key",
        "saas",
        "SENDGRID_API_KEY",
        token("SG.", (BASE64URL, 22), ".", (BASE64URL, 43)),
        prefix="SG.",
    ),
    Kind("mailgun-key", "saas", "MAILGUN_API_KEY", token("key-", (HEX, 32)), prefix="key-"),
    Kind(
        "mailchimp-key",
        "saas",
        "MAILCHIMP_API_KEY",
        token("", (HEX, 32), "-us", (string.digits, 2)),
        named=True,
    ),
    Kind("postmark-token", "saas", "POSTMARK_SERVER_TOKEN", _uuid_credential, named=True),
    Kind("vault-service-token", "saas", "VAULT_TOKEN", token("hvs.", (BASE64URL, 90)), prefix="hvs."),
    Kind("vault-batch-token", "saas", "VAULT_TOKEN", token("hvb.", (BASE64URL, 138)), prefix="hvb."),
    Kind(
        "kubeadm-bootstrap-token",
        "saas",
        "KUBEADM_TOKEN",
        token("", (LOWER_ALNUM, 6), ".", (LOWER_ALNUM, 16)),
    ),
    Kind("jwt", "saas", "ACCESS_TOKEN", _jwt_credential, prefix="eyJ"),
    Kind("pem-private-key", "saas", "TLS_KEY", framed(_pem), framed=True),
    Kind("pgp-private-key", "saas", "GPG_PRIVATE_KEY", framed(_pgp), framed=True),
    Kind(
        "atlassian-api-token",
        "saas",
        "JIRA_API_TOKEN",
        token("ATATT3xFfGF0", (BASE64URL, 170), "=", (HEX, 8)),
        prefix="ATATT3xFfGF0",
    ),
    Kind("linear-key", "saas", "LINEAR_API_KEY", token("lin_api_", (ALNUM, 40)), prefix="lin_api_"),
    Kind("notion-legacy-token", "saas", "NOTION_TOKEN", token("secret_", (ALNUM, 43)), prefix="secret_"),
    Kind(
        "notion-token", "saas", "NOTION_TOKEN", token("ntn_", (string.digits, 11), (ALNUM, 35)), prefix="ntn_"
    ),
    Kind("doppler-service-token", "saas", "DOPPLER_TOKEN", token("dp.st.prd.", (ALNUM, 40)), prefix="dp.st."),
    Kind("doppler-personal-token", "saas", "DOPPLER_TOKEN", token("dp.pt.", (ALNUM, 43)), prefix="dp.pt."),
    Kind("pulumi-token", "saas", "PULUMI_ACCESS_TOKEN", token("pul-", (HEX, 40)), prefix="pul-"),
    Kind("terraform-cloud-token", "saas", "TFE_TOKEN", token("", (ALNUM, 14), ".atlasv1.", (ALNUM, 67))),
    Kind("postman-key", "saas", "POSTMAN_API_KEY", token("PMAK-", (HEX, 24), "-", (HEX, 34)), prefix="PMAK-"),
    Kind(
        "age-secret-key",
        "saas",
        "SOPS_AGE_KEY",
        token("AGE-SECRET-KEY-1", (BECH32, 58)),
        prefix="AGE-SECRET-KEY-1",
    ),
    Kind("1password-service-account", "saas", "OP_SERVICE_ACCOUNT_TOKEN", _one_password, prefix="ops_"),
    Kind("airtable-pat", "saas", "AIRTABLE_TOKEN", token("pat", (ALNUM, 14), ".", (HEX, 64)), prefix="pat"),
    Kind("figma-token", "saas", "FIGMA_TOKEN", token("figd_", (BASE64URL, 40)), prefix="figd_"),
    Kind("dropbox-token", "saas", "DROPBOX_ACCESS_TOKEN", token("sl.", (BASE64URL, 138)), prefix="sl."),
    Kind(
        "contentful-pat",
        "saas",
        "CONTENTFUL_MANAGEMENT_TOKEN",
        token("CFPAT-", (BASE64URL, 43)),
        prefix="CFPAT-",
    ),
    Kind("mapbox-secret-token", "saas", "MAPBOX_SECRET_TOKEN", _mapbox, prefix="sk.eyJ"),
    Kind("okta-token", "saas", "OKTA_API_TOKEN", token("00", (BASE64URL, 40)), named=True),
    Kind(
        "hubspot-pat",
        "saas",
        "HUBSPOT_ACCESS_TOKEN",
        lambda rng: Credential(*(2 * ("pat-na1-" + uuid4(rng),))),
        prefix="pat-na1-",
    ),
    Kind("snyk-token", "saas", "SNYK_TOKEN", _uuid_credential, named=True),
    Kind("sonarqube-token", "saas", "SONAR_TOKEN", token("squ_", (HEX, 40)), prefix="squ_"),
    Kind("readme-key", "saas", "README_API_KEY", token("rdme_", (HEX, 70)), prefix="rdme_"),
    Kind("prefect-key", "saas", "PREFECT_API_KEY", token("pnu_", (ALNUM, 36)), prefix="pnu_"),
    Kind("basic-auth-header", "saas", "AUTH_HEADER", framed(_basic_auth), framed=True),
    Kind("generic-hex-api-key", "saas", "api_key", _named(HEX, 32), named=True),
    Kind("generic-hex-client-secret", "saas", "client_secret", _named(HEX, 40), named=True),
    Kind(
        "generic-password", "saas", "DB_PASSWORD", lambda rng: Credential(*(2 * (password(rng),))), named=True
    ),
)
