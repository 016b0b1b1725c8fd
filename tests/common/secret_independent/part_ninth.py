"""Ninth independent part of the secret corpus: credentials generated from the formats the providers document
(prefixes, lengths, alphabets, connection-string and key-file shapes), placed in memory texts an agent writes,
some disguised, beside look-alikes that are public values sitting next to the same words.

Written without reading the filter's rules. Every value is random (fixed seed); none is a real credential.
"""

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 9_061_2026

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = UPPER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
BASE32_UPPER = BASE32_LOWER.upper()
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def rs(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def uuid(r: random.Random) -> str:
    h = rs(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def compact_json(obj: object) -> str:
    # Tokens that embed JSON (JWTs, Mapbox, Grafana Cloud, 1Password) encode it without spaces.
    return json.dumps(obj, separators=(",", ":"))


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# A generated credential: the raw text as the provider issues it, and the span of its random part, where the
# disguises go and from which the piece that must not survive is taken.
@dataclass(frozen=True)
class Raw:
    text: str
    start: int
    end: int


def tok(prefix: str, body: str, suffix: str = "") -> Raw:
    return Raw(prefix + body + suffix, len(prefix), len(prefix) + len(body))


def around(text: str, body: str) -> Raw:
    i = text.index(body)
    return Raw(text, i, i + len(body))


def pem(r: random.Random, label: str, n_lines: int = 12) -> tuple[str, str]:
    body_lines = [rs(r, B64, 64) for _ in range(n_lines)] + [rs(r, B64, 40) + "=="]
    return f"-----BEGIN {label}-----\n" + "\n".join(body_lines) + f"\n-----END {label}-----", body_lines[4]


def jwt(r: random.Random, claims: dict[str, object], alg: str = "HS256") -> tuple[str, str]:
    # RFC 7519 compact serialization: base64url of compact JSON, signature 32 bytes (HS256), 256 (RS256), 64 (EdDSA).
    header = b64url(compact_json({"alg": alg, "typ": "JWT"}).encode())
    payload = b64url(compact_json(claims).encode())
    sig = rs(r, B64URL, {"HS256": 43, "RS256": 342, "EdDSA": 86}[alg])
    return f"{header}.{payload}.{sig}", sig


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    names: tuple[str, ...]  # variable names people give it
    make: Callable[[random.Random], Raw]
    block: bool = False  # multi-line value (PEM, key file): only block contexts fit


# --- generators for the structured kinds ---------------------------------------------------------------------


def aws_pair(r: random.Random) -> Raw:
    # AWS IAM docs: access key id "AKIA" + 16 upper base32, secret access key 40 chars of base64 alphabet.
    kid = "AKIA" + rs(r, BASE32_UPPER, 16)
    secret = rs(r, B64, 40)
    return around(f"aws_access_key_id = {kid}\naws_secret_access_key = {secret}", secret)


def aws_session(r: random.Random) -> Raw:
    # AWS STS docs: temporary credentials, "ASIA" key id plus a long session token starting "FwoGZXIvYXdzE"/"IQoJb3JpZ2lu".
    secret = rs(r, B64, 40)
    token = "IQoJb3JpZ2luX2VjE" + rs(r, B64, 300)
    kid = "ASIA" + rs(r, BASE32_UPPER, 16)
    return around(f"AWS_ACCESS_KEY_ID={kid} AWS_SECRET_ACCESS_KEY={secret} AWS_SESSION_TOKEN={token}", secret)


def gcp_sa_json(r: random.Random) -> Raw:
    # Google Cloud IAM docs: service account key file, JSON with type, project_id, private_key_id, private_key (PEM).
    key, line = pem(r, "PRIVATE KEY", 16)
    doc = {
        "type": "service_account",
        "project_id": f"{r.choice(['acme', 'orbit', 'lumen'])}-prod-{r.randint(100, 999)}",
        "private_key_id": rs(r, HEX, 40),
        "private_key": key + "\n",
        "client_email": f"deployer@{r.choice(['acme', 'orbit'])}-prod.iam.gserviceaccount.com",
        "client_id": rs(r, DIGITS, 21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    text = json.dumps(doc, indent=2)
    return around(text, line)


def azure_storage(r: random.Random) -> Raw:
    # Azure Storage docs: "DefaultEndpointsProtocol=https;AccountName=...;AccountKey=<88 base64>;EndpointSuffix=core.windows.net".
    key = rs(r, B64, 86) + "=="
    acct = rs(r, LOWER_ALNUM, 12)
    return around(
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        key[:86],
    )


def azure_sas(r: random.Random) -> Raw:
    # Azure docs "Create a service SAS": query parameters sv, ss, srt, sp, se, st, spr, sig (HMAC-SHA256, base64, URL-encoded).
    sig = rs(r, ALNUM, 30) + "%2B" + rs(r, ALNUM, 9) + "%3D"
    acct = rs(r, LOWER_ALNUM, 10)
    url = (
        f"https://{acct}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2026-12-31T23:59:59Z&st=2026-11-01T00:00:00Z&spr=https&sig={sig}"
    )
    return around(url, sig[:30])


def azure_service_bus(r: random.Random) -> Raw:
    # Azure Service Bus docs: "Endpoint=sb://<ns>.servicebus.windows.net/;SharedAccessKeyName=...;SharedAccessKey=<44 base64>".
    key = rs(r, B64, 43) + "="
    ns = rs(r, LOWER, 8)
    return around(
        f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}",
        key[:43],
    )


def azure_cosmos(r: random.Random) -> Raw:
    # Azure Cosmos DB docs: "AccountEndpoint=https://<acct>.documents.azure.com:443/;AccountKey=<88 base64>;".
    key = rs(r, B64, 86) + "=="
    return around(
        f"AccountEndpoint=https://{rs(r, LOWER, 9)}.documents.azure.com:443/;AccountKey={key};", key[:86]
    )


def azure_client_secret(r: random.Random) -> Raw:
    # Microsoft Purview "Microsoft Entra client secret" SIT page: up to 40 chars of [a-z0-9_.~-], e.g. "abc8Q~...".
    return tok(rs(r, ALNUM, 3) + "8Q~", rs(r, ALNUM + "_.~-", 34))


def alibaba(r: random.Random) -> Raw:
    # Alibaba Cloud RAM docs: AccessKey ID "LTAI" + 20 alnum, AccessKey Secret 30 alnum.
    secret = rs(r, ALNUM, 30)
    return around(f"AccessKeyId: LTAI5t{rs(r, ALNUM, 18)}\nAccessKeySecret: {secret}", secret)


def tencent(r: random.Random) -> Raw:
    # Tencent Cloud CAM docs: SecretId "AKID" + 32 alnum, SecretKey 32 alnum.
    secret = rs(r, ALNUM, 32)
    return around(f"SecretId=AKID{rs(r, ALNUM, 32)} SecretKey={secret}", secret)


def huawei(r: random.Random) -> Raw:
    # Huawei Cloud IAM docs: AK 20 upper alnum, SK 40 alnum (credentials.csv).
    sk = rs(r, ALNUM, 40)
    return around(f"User Name,Access Key Id,Secret Access Key\nops-bot,{rs(r, UPPER_ALNUM, 20)},{sk}", sk)


def ovh(r: random.Random) -> Raw:
    # OVHcloud API docs: application key 16, application secret 32, consumer key 32 alnum (ovh.conf).
    sec = rs(r, ALNUM, 32)
    return around(
        f"[ovh-eu]\napplication_key={rs(r, ALNUM, 16)}\napplication_secret={sec}\nconsumer_key={rs(r, ALNUM, 32)}",
        sec,
    )


def postgres_url(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, r.randint(16, 28))
    host = r.choice(
        ["db.internal", "pg-prod-1.c9akciq32.eu-west-1.rds.amazonaws.com", "10.0.3.17", "postgres"]
    )
    return around(
        f"postgresql://{r.choice(['app', 'kenfold', 'svc_orders'])}:{pw}@{host}:5432/{r.choice(['main', 'orders'])}",
        pw,
    )


def mysql_url(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 20)
    return around(
        f"mysql://root:{pw}@{r.choice(['mysql-0.mysql', '127.0.0.1', 'aurora.cluster-x.rds.amazonaws.com'])}:3306/shop",
        pw,
    )


def mongo_url(r: random.Random) -> Raw:
    # MongoDB docs: "mongodb+srv://<user>:<password>@cluster0.<id>.mongodb.net/?retryWrites=true&w=majority".
    pw = rs(r, ALNUM, 18)
    return around(
        f"mongodb+srv://atlasAdmin:{pw}@cluster0.{rs(r, LOWER_ALNUM, 5)}.mongodb.net/?retryWrites=true&w=majority",
        pw,
    )


def redis_url(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 32)
    return around(f"rediss://default:{pw}@{rs(r, LOWER, 6)}-{r.randint(10000, 99999)}.upstash.io:6379", pw)


def pgpass(r: random.Random) -> Raw:
    # PostgreSQL docs: ~/.pgpass lines "hostname:port:database:username:password".
    pw = rs(r, ALNUM + "!#%", 22)
    body = pw[2:18]
    return around(f"db-replica.internal:5432:*:report_reader:{pw}", body)


def mssql(r: random.Random) -> Raw:
    # ADO.NET docs: "Server=tcp:<srv>.database.windows.net,1433;Initial Catalog=..;User ID=..;Password=..;Encrypt=True;".
    pw = rs(r, ALNUM, 14) + r.choice("!$#") + rs(r, DIGITS, 3)
    return around(
        f"Server=tcp:{rs(r, LOWER, 7)}.database.windows.net,1433;Initial Catalog=billing;User ID=sqladmin;Password={pw};Encrypt=True;",
        pw[:14],
    )


def oracle_jdbc(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 16)
    return around(f"jdbc:oracle:thin:HR/{pw}@//ora-prod.corp:1521/ORCLPDB1", pw)


def amqp_url(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 24)
    return around(f"amqps://events:{pw}@{rs(r, LOWER, 8)}.rmq.cloudamqp.com/{rs(r, LOWER, 8)}", pw)


def neo4j(r: random.Random) -> Raw:
    pw = rs(r, ALNUM + "_-", 43)
    return around(f"neo4j+s://neo4j:{pw}@{rs(r, HEX, 8)}.databases.neo4j.io", pw)


def elastic_api_key(r: random.Random) -> Raw:
    # Elasticsearch docs: "Authorization: ApiKey <base64(id:api_key)>" with id 20 chars and api_key 22 chars.
    enc = b64(f"{rs(r, B64URL, 20)}:{rs(r, B64URL, 22)}".encode())
    return around(f"Authorization: ApiKey {enc}", enc[4:40])


def astra(r: random.Random) -> Raw:
    # DataStax Astra docs: application token "AstraCS:<24 letters>:<64 hex>".
    return tok(f"AstraCS:{rs(r, ALNUM, 24)}:", rs(r, HEX, 64))


def snowflake(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 12) + rs(r, DIGITS, 4)
    return around(
        f"snowflake://etl_user:{pw}@{rs(r, LOWER, 7)}-{rs(r, LOWER, 7)}/analytics/public?warehouse=COMPUTE_WH",
        pw,
    )


def clickhouse_xml(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 20)
    return around(
        f"<users>\n  <ingest>\n    <password>{pw}</password>\n    <networks><ip>::/0</ip></networks>\n  </ingest>\n</users>",
        pw,
    )


def npmrc(r: random.Random) -> Raw:
    # npm docs: granular/classic tokens "npm_" + 36 alnum, stored in .npmrc as "//registry.npmjs.org/:_authToken=".
    body = rs(r, ALNUM, 36)
    return around(f"//registry.npmjs.org/:_authToken=npm_{body}", body)


def pypirc(r: random.Random) -> Raw:
    # PyPI docs: API tokens "pypi-" + macaroon base64 starting "AgEIcHlwaS5vcmc", used with username __token__.
    body = "AgEIcHlwaS5vcmcCJ" + rs(r, B64URL, 160)
    return around(f"[pypi]\nusername = __token__\npassword = pypi-{body}", body[17:])


def docker_config(r: random.Random) -> Raw:
    # Docker docs: ~/.docker/config.json "auths": {"<registry>": {"auth": base64("user:password")}}.
    pw = rs(r, ALNUM, 24)
    enc = b64(f"ci-robot:{pw}".encode())
    text = json.dumps({"auths": {"registry.gitlab.com": {"auth": enc}}}, indent=2)
    return around(text, enc[8:])


def netrc(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 32)
    return around(
        f"machine {r.choice(['api.heroku.com', 'git.corp.example', 'nexus.internal'])}\n  login ops@corp.example\n  password {pw}",
        pw,
    )


def maven_settings(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 26)
    return around(
        f"<server>\n  <id>nexus-releases</id>\n  <username>deploy</username>\n  <password>{pw}</password>\n</server>",
        pw,
    )


def basic_auth(r: random.Random) -> Raw:
    # RFC 7617: "Authorization: Basic base64(user:password)".
    enc = b64(f"{r.choice(['admin', 'svc-deploy', 'jenkins'])}:{rs(r, ALNUM, 20)}".encode())
    return around(f"Authorization: Basic {enc}", enc[6:])


def smtp_url(r: random.Random) -> Raw:
    pw = rs(r, ALNUM, 20)
    return around(f"smtp://postmaster%40mg.corp.example:{pw}@smtp.mailgun.org:587", pw)


def https_creds(r: random.Random) -> Raw:
    body = rs(r, ALNUM, 36)
    return around(
        f"https://x-access-token:ghs_{body}@github.com/{rs(r, LOWER, 6)}/{rs(r, LOWER, 8)}.git", body
    )


def kubeconfig_token(r: random.Random) -> Raw:
    # Kubernetes docs: service-account tokens are JWTs (RS256) under users[].user.token in kubeconfig.
    tokn, sig = jwt(
        r,
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "sub": "system:serviceaccount:ci:deployer",
        },
        alg="RS256",
    )
    return around(f"users:\n- name: deployer\n  user:\n    token: {tokn}", sig)


def k8s_bootstrap(r: random.Random) -> Raw:
    # Kubernetes docs "Authenticating with Bootstrap Tokens": "[a-z0-9]{6}.[a-z0-9]{16}".
    return tok(rs(r, LOWER_ALNUM, 6) + ".", rs(r, LOWER_ALNUM, 16))


def ssh_private(r: random.Random) -> Raw:
    key, line = pem(r, "OPENSSH PRIVATE KEY", 6)
    key = key.replace(
        key.split("\n")[1], "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", 1
    )
    return around(key, line)


def rsa_private(r: random.Random) -> Raw:
    key, line = pem(r, "RSA PRIVATE KEY", 20)
    return around(key, line)


def ec_private(r: random.Random) -> Raw:
    key, line = pem(r, "EC PRIVATE KEY", 5)
    return around(key, line)


def pgp_private(r: random.Random) -> Raw:
    lines = [rs(r, B64, 64) for _ in range(14)]
    text = (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBGV"
        + rs(r, B64, 57)
        + "\n"
        + "\n".join(lines)
        + "\n="
        + rs(r, B64, 4)
        + "\n-----END PGP PRIVATE KEY BLOCK-----"
    )
    return around(text, lines[6])


def oci_config(r: random.Random) -> Raw:
    key, line = pem(r, "PRIVATE KEY", 10)
    fp = ":".join(rs(r, HEX, 2) for _ in range(16))
    return around(
        f"[DEFAULT]\nuser=ocid1.user.oc1..aaaa{rs(r, LOWER_ALNUM, 56)}\nfingerprint={fp}\ntenancy=ocid1.tenancy.oc1..aaaa{rs(r, LOWER_ALNUM, 56)}\nregion=eu-frankfurt-1\n# key_file contents:\n{key}",
        line,
    )


def supabase_service(r: random.Random) -> Raw:
    # Supabase docs: the service_role key is a JWT (role "service_role") that bypasses RLS; must stay server-side.
    tokn, sig = jwt(
        r,
        {
            "iss": "supabase",
            "ref": rs(r, LOWER, 20),
            "role": "service_role",
            "iat": 1700000000,
            "exp": 2015576000,
        },
    )
    return around(tokn, sig)


def turso(r: random.Random) -> Raw:
    # Turso docs: database auth tokens are JWTs (EdDSA) passed as TURSO_AUTH_TOKEN.
    tokn, sig = jwt(r, {"a": "rw", "iat": 1733000000, "id": uuid(r)}, alg="EdDSA")
    return around(tokn, sig)


def slack_webhook(r: random.Random) -> Raw:
    # Slack docs: "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX".
    return tok(
        f"https://hooks.slack.com/services/T{rs(r, UPPER_ALNUM, 10)}/B{rs(r, UPPER_ALNUM, 10)}/",
        rs(r, ALNUM, 24),
    )


def discord_webhook(r: random.Random) -> Raw:
    return tok(f"https://discord.com/api/webhooks/{rs(r, DIGITS, 19)}/", rs(r, B64URL, 68))


def discord_bot(r: random.Random) -> Raw:
    # Discord developer docs: bot token = base64(user id) "." timestamp (6) "." HMAC (27-38), sent as "Bot <token>".
    uid = b64(rs(r, "123456789", 18).encode()).rstrip("=")
    return tok(f"{uid}.{rs(r, B64URL, 6)}.", rs(r, B64URL, 38))


def teams_webhook(r: random.Random) -> Raw:
    # Microsoft Teams docs: incoming webhook URL ".webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/<32 hex>/<guid>".
    h = rs(r, HEX, 32)
    return around(
        f"https://{rs(r, LOWER, 6)}.webhook.office.com/webhookb2/{uuid(r)}@{uuid(r)}/IncomingWebhook/{h}/{uuid(r)}",
        h,
    )


def twilio_api_key(r: random.Random) -> Raw:
    # Twilio docs: API key SID "SK" + 32 hex, and its secret (32 alnum) shown once.
    sec = rs(r, ALNUM, 32)
    return around(f"SK{rs(r, HEX, 32)}:{sec}", sec)


def mercadopago(r: random.Random) -> Raw:
    # Mercado Pago docs: production access token "APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>".
    h = rs(r, HEX, 32)
    return around(f"APP_USR-{rs(r, DIGITS, 16)}-{rs(r, DIGITS, 6)}-{h}-{rs(r, DIGITS, 9)}", h)


def braintree(r: random.Random) -> Raw:
    # Braintree docs: "access_token$production$<merchant id>$<32 hex>".
    h = rs(r, HEX, 32)
    return around(f"access_token$production${rs(r, LOWER_ALNUM, 16)}${h}", h)


def razorpay(r: random.Random) -> Raw:
    # Razorpay docs: Key Id "rzp_live_" + 14 alnum, Key Secret 24 alnum.
    sec = rs(r, ALNUM, 24)
    return around(f"key_id=rzp_live_{rs(r, ALNUM, 14)}\nkey_secret={sec}", sec)


def airtable(r: random.Random) -> Raw:
    # Airtable docs: personal access tokens "pat" + 14 chars + "." + 64 hex.
    return tok(f"pat{rs(r, ALNUM, 14)}.", rs(r, HEX, 64))


def asana(r: random.Random) -> Raw:
    # Asana docs: personal access tokens "2/<user gid>/<token gid>:<32 hex>" (older "1/...").
    return tok(f"2/{rs(r, DIGITS, 16)}/{rs(r, DIGITS, 16)}:", rs(r, HEX, 32))


def atlassian(r: random.Random) -> Raw:
    # Atlassian docs: API tokens "ATATT3xFfGF0" + ~180 base64url chars, ending "=" + 8 hex checksum.
    return tok("ATATT3xFfGF0", rs(r, B64URL, 170), "=" + rs(r, HEX, 8).upper())


def zendesk(r: random.Random) -> Raw:
    # Zendesk docs: API token used as "<email>/token:<40 alnum>" in basic auth.
    t = rs(r, ALNUM, 40)
    return around(f"support@corp.example/token:{t}", t)


def salesforce_secret(r: random.Random) -> Raw:
    # Salesforce connected app docs: consumer secret 64 hex-upper-like; consumer key "3MVG9" + 80 chars.
    sec = rs(r, "0123456789ABCDEF", 64)
    return around(f"consumer_key=3MVG9{rs(r, ALNUM + '._', 80)}\nconsumer_secret={sec}", sec)


def mapbox_secret(r: random.Random) -> Raw:
    # Mapbox docs: secret tokens "sk.eyJ1Ijo..." (public ones are "pk.").
    payload = b64url(compact_json({"u": rs(r, LOWER, 8), "a": rs(r, LOWER_ALNUM, 25)}).encode())
    sig = rs(r, B64URL, 22)
    return around(f"sk.{payload}.{sig}", sig)


def grafana_cloud(r: random.Random) -> Raw:
    # Grafana Cloud docs: access policy tokens "glc_" + base64 of a JSON {"o":..,"n":..,"k":..,"m":..}.
    enc = b64(
        compact_json(
            {"o": rs(r, DIGITS, 6), "n": "ci-push", "k": rs(r, ALNUM, 24), "m": {"r": "prod-eu-west-2"}}
        ).encode()
    )
    return around("glc_" + enc, enc[20:60])


def onepassword_sa(r: random.Random) -> Raw:
    # 1Password docs: service account tokens "ops_" + base64 JSON (starts "eyJ").
    enc = b64(
        compact_json(
            {
                "signInAddress": "my.1password.eu",
                "userAuth": {"method": "SRPg-4096"},
                "email": rs(r, LOWER, 12) + "@1passwordserviceaccounts.eu",
                "srpX": rs(r, HEX, 64),
                "muk": {"k": rs(r, B64URL, 43)},
            }
        ).encode()
    )
    return around("ops_" + enc, enc[80:140])


def jenkins(r: random.Random) -> Raw:
    # Jenkins docs: API tokens "11" + 32 hex, used as the password of user:token basic auth.
    h = rs(r, HEX, 32)
    return around(f"https://deploy:11{h}@jenkins.corp.example/job/release/buildWithParameters", h)


def teamcity(r: random.Random) -> Raw:
    # JetBrains TeamCity docs: access tokens are "eyJ0eXAiOiAiVENWMiJ9." + base64 parts.
    return tok("eyJ0eXAiOiAiVENWMiJ9.", rs(r, B64URL, 36) + "." + rs(r, B64URL, 48))


def t(prefix: str, alphabet: str, n: int, suffix: str = "") -> Callable[[random.Random], Raw]:
    return lambda r: tok(prefix, rs(r, alphabet, n), suffix)


def u(prefix: str = "") -> Callable[[random.Random], Raw]:
    def make(r: random.Random) -> Raw:
        v = uuid(r)
        return tok(prefix, v)

    return make


KINDS: list[Kind] = [
    # ---- cloud ----
    Kind("aws_secret_access_key", "cloud", ("AWS_SECRET_ACCESS_KEY",), aws_pair, block=True),
    Kind("aws_sts_session", "cloud", ("AWS_SESSION_TOKEN",), aws_session, block=True),
    Kind(
        "gcp_service_account_json", "cloud", ("GOOGLE_APPLICATION_CREDENTIALS_JSON",), gcp_sa_json, block=True
    ),
    # Google Cloud docs "API keys": "AIza" + 35 of [A-Za-z0-9_-].
    Kind("google_api_key", "cloud", ("GOOGLE_API_KEY", "MAPS_KEY"), t("AIza", B64URL, 35)),
    # Google OAuth docs (2021 format change): client secrets "GOCSPX-" + 28 chars.
    Kind("google_oauth_client_secret", "cloud", ("GOOGLE_CLIENT_SECRET",), t("GOCSPX-", B64URL, 28)),
    # Google OAuth docs: refresh tokens start "1//0".
    Kind("google_refresh_token", "cloud", ("refresh_token",), t("1//0", B64URL, 98)),
    Kind("azure_storage_connection_string", "cloud", ("AZURE_STORAGE_CONNECTION_STRING",), azure_storage),
    Kind("azure_sas_token", "cloud", ("BACKUP_SAS_URL",), azure_sas),
    Kind("azure_service_bus_connection", "cloud", ("SERVICEBUS_CONNECTION",), azure_service_bus),
    Kind("azure_cosmos_connection", "cloud", ("COSMOS_CONNECTION_STRING",), azure_cosmos),
    Kind("azure_client_secret", "cloud", ("AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"), azure_client_secret),
    # DigitalOcean docs: personal access tokens "dop_v1_" + 64 hex, OAuth "doo_v1_".
    Kind("digitalocean_pat", "cloud", ("DIGITALOCEAN_TOKEN",), t("dop_v1_", HEX, 64)),
    Kind("digitalocean_oauth", "cloud", ("DO_OAUTH_TOKEN",), t("doo_v1_", HEX, 64)),
    Kind("alibaba_access_key", "cloud", ("ALIBABA_CLOUD_ACCESS_KEY_SECRET",), alibaba, block=True),
    Kind("tencent_secret_key", "cloud", ("TENCENTCLOUD_SECRET_KEY",), tencent, block=True),
    Kind("huawei_ak_sk", "cloud", ("HUAWEICLOUD_SDK_SK",), huawei, block=True),
    Kind("ovh_application_secret", "cloud", ("OVH_APPLICATION_SECRET",), ovh, block=True),
    # IBM Cloud docs: API keys 44 chars of [A-Za-z0-9_-].
    Kind("ibm_cloud_api_key", "cloud", ("IBMCLOUD_API_KEY",), t("", B64URL, 44)),
    # Linode docs: personal access tokens 64 hex.
    Kind("linode_token", "cloud", ("LINODE_TOKEN",), t("", HEX, 64)),
    # Vultr docs: API key 36 upper alnum.
    Kind("vultr_api_key", "cloud", ("VULTR_API_KEY",), t("", UPPER_ALNUM, 36)),
    # Hetzner Cloud docs: API tokens 64 alnum.
    Kind("hetzner_cloud_token", "cloud", ("HCLOUD_TOKEN",), t("", ALNUM, 64)),
    # Scaleway docs: the secret key is a UUID (SCW_SECRET_KEY).
    Kind("scaleway_secret_key", "cloud", ("SCW_SECRET_KEY",), u()),
    # Cloudflare docs: API tokens 40 chars [A-Za-z0-9_-]; Global API Key 37 hex.
    Kind("cloudflare_api_token", "cloud", ("CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"), t("", B64URL, 40)),
    Kind("cloudflare_global_key", "cloud", ("CF_API_KEY", "X-Auth-Key"), t("", HEX, 37)),
    # Yandex Cloud docs: API keys start "AQVN" (40 chars), OAuth tokens "y0_".
    Kind("yandex_cloud_api_key", "cloud", ("YC_API_KEY",), t("AQVN", B64URL, 36)),
    # Heroku API tokens carry the "HRKU-" prefix (GitLab MR 248117 "Add Heroku API key validity check").
    Kind("heroku_api_key", "cloud", ("HEROKU_API_KEY",), t("HRKU-AA", B64URL, 58)),
    # Fly.io docs: tokens "FlyV1 fm2_" + base64.
    Kind("flyio_token", "cloud", ("FLY_API_TOKEN",), t("FlyV1 fm2_", B64, 120)),
    # Netlify docs: personal access tokens "nfp_" + 36 alnum.
    Kind("netlify_pat", "cloud", ("NETLIFY_AUTH_TOKEN",), t("nfp_", ALNUM, 36)),
    # Vercel docs: access tokens 24 alnum under VERCEL_TOKEN.
    Kind("vercel_token", "cloud", ("VERCEL_TOKEN",), t("", ALNUM, 24)),
    # Render docs: API keys "rnd_" + 32 alnum.
    Kind("render_api_key", "cloud", ("RENDER_API_KEY",), t("rnd_", ALNUM, 32)),
    Kind("supabase_service_role", "cloud", ("SUPABASE_SERVICE_ROLE_KEY",), supabase_service),
    # HashiCorp Vault docs: service tokens "hvs." + base62 (>= 90), batch "hvb.".
    Kind("vault_service_token", "cloud", ("VAULT_TOKEN",), t("hvs.", ALNUM, 92)),
    # Terraform Cloud docs: user/team tokens "<14>.atlasv1.<67>".
    Kind(
        "terraform_cloud_token",
        "cloud",
        ("TF_TOKEN_app_terraform_io",),
        lambda r: tok(rs(r, ALNUM, 14) + ".atlasv1.", rs(r, ALNUM, 67)),
    ),
    # Pulumi docs: access tokens "pul-" + 40 hex.
    Kind("pulumi_access_token", "cloud", ("PULUMI_ACCESS_TOKEN",), t("pul-", HEX, 40)),
    # Doppler docs: service tokens "dp.st." + env + 40 alnum; personal "dp.pt.".
    Kind("doppler_token", "cloud", ("DOPPLER_TOKEN",), t("dp.st.prd.", ALNUM, 43)),
    Kind("onepassword_service_account", "cloud", ("OP_SERVICE_ACCOUNT_TOKEN",), onepassword_sa),
    Kind("oci_api_signing_key", "cloud", ("OCI_CONFIG",), oci_config, block=True),
    Kind("kubeconfig_sa_token", "cloud", ("KUBECONFIG",), kubeconfig_token, block=True),
    Kind("k8s_bootstrap_token", "cloud", ("KUBEADM_TOKEN", "bootstrap_token"), k8s_bootstrap),
    # ---- ci ----
    # GitHub docs "About authentication": ghp_ (classic PAT), gho_ (OAuth), ghu_ (user-to-server), ghs_ (server-to-server), ghr_ (refresh): 36 base62.
    Kind("github_classic_pat", "ci", ("GITHUB_TOKEN", "GH_TOKEN"), t("ghp_", ALNUM, 36)),
    Kind("github_oauth_token", "ci", ("GH_OAUTH_TOKEN",), t("gho_", ALNUM, 36)),
    Kind("github_app_installation_token", "ci", ("INSTALLATION_TOKEN",), t("ghs_", ALNUM, 36)),
    Kind("github_refresh_token", "ci", ("GITHUB_REFRESH_TOKEN",), t("ghr_", ALNUM, 76)),
    # GitHub docs: fine-grained PATs "github_pat_" + 22 + "_" + 59.
    Kind(
        "github_fine_grained_pat",
        "ci",
        ("GITHUB_PAT",),
        lambda r: tok("github_pat_11" + rs(r, UPPER_ALNUM, 20) + "_", rs(r, ALNUM, 59)),
    ),
    Kind("git_https_credentials", "ci", ("REMOTE_URL",), https_creds),
    # GitLab docs "Token prefixes": glpat- (PAT), glrt- (runner), gldt- (deploy), glptt- (trigger), 20+ chars.
    Kind("gitlab_pat", "ci", ("GITLAB_TOKEN", "PRIVATE-TOKEN"), t("glpat-", B64URL, 20)),
    Kind("gitlab_runner_token", "ci", ("RUNNER_TOKEN",), t("glrt-", B64URL, 20)),
    Kind("gitlab_deploy_token", "ci", ("CI_DEPLOY_PASSWORD",), t("gldt-", B64URL, 20)),
    Kind("gitlab_trigger_token", "ci", ("TRIGGER_TOKEN",), t("glptt-", HEX, 40)),
    # Bitbucket docs: app passwords "ATBB" + 32 chars.
    Kind("bitbucket_app_password", "ci", ("BITBUCKET_APP_PASSWORD",), t("ATBB", ALNUM, 32)),
    # CircleCI docs: personal API tokens "CCIPAT_" + ...; project tokens "CCIPRJ_".
    Kind(
        "circleci_token",
        "ci",
        ("CIRCLECI_TOKEN",),
        lambda r: tok("CCIPAT_" + rs(r, ALNUM, 22) + "_", rs(r, HEX, 40)),
    ),
    Kind("jenkins_api_token", "ci", ("JENKINS_URL",), jenkins),
    # Buildkite docs: agent tokens and API tokens "bkua_" + 40 hex.
    Kind("buildkite_api_token", "ci", ("BUILDKITE_API_TOKEN",), t("bkua_", HEX, 40)),
    # Azure DevOps docs: PATs 52 chars of lowercase base32.
    Kind("azure_devops_pat", "ci", ("AZURE_DEVOPS_EXT_PAT", "ADO_PAT"), t("", BASE32_LOWER, 52)),
    Kind("teamcity_token", "ci", ("TEAMCITY_TOKEN",), teamcity),
    # SonarQube docs: user tokens "squ_" + 40 hex, project "sqp_", global analysis "sqa_".
    Kind("sonarqube_token", "ci", ("SONAR_TOKEN",), t("squ_", HEX, 40)),
    # Snyk docs: API token is a UUID under SNYK_TOKEN.
    Kind("snyk_token", "ci", ("SNYK_TOKEN",), u()),
    # Travis CI docs: API token 22 chars.
    Kind("travis_token", "ci", ("TRAVIS_API_TOKEN",), t("", ALNUM, 22)),
    # ---- chat ----
    # Slack docs "Token types": xoxb- (bot), xoxp- (user), xapp- (app-level).
    Kind(
        "slack_bot_token",
        "chat",
        ("SLACK_BOT_TOKEN",),
        lambda r: tok(f"xoxb-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-", rs(r, ALNUM, 24)),
    ),
    Kind(
        "slack_user_token",
        "chat",
        ("SLACK_USER_TOKEN",),
        lambda r: tok(f"xoxp-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 12)}-{rs(r, DIGITS, 13)}-", rs(r, HEX, 32)),
    ),
    Kind(
        "slack_app_token",
        "chat",
        ("SLACK_APP_TOKEN",),
        lambda r: tok(f"xapp-1-A{rs(r, UPPER_ALNUM, 10)}-{rs(r, DIGITS, 13)}-", rs(r, HEX, 64)),
    ),
    Kind("slack_webhook", "chat", ("SLACK_WEBHOOK_URL",), slack_webhook),
    Kind("discord_bot_token", "chat", ("DISCORD_TOKEN",), discord_bot),
    Kind("discord_webhook", "chat", ("DISCORD_WEBHOOK",), discord_webhook),
    # Telegram Bot API docs: "<bot id>:<35 chars>" e.g. "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11".
    Kind(
        "telegram_bot_token",
        "chat",
        ("TELEGRAM_BOT_TOKEN", "TG_TOKEN"),
        lambda r: tok(f"{rs(r, DIGITS, 10)}:AA", rs(r, B64URL, 33)),
    ),
    Kind("teams_webhook", "chat", ("TEAMS_WEBHOOK_URL",), teams_webhook),
    Kind("twilio_api_key_secret", "chat", ("TWILIO_API_SECRET",), twilio_api_key),
    # Twilio docs: Auth Token 32 hex beside the Account SID "AC" + 32 hex.
    Kind("twilio_auth_token", "chat", ("TWILIO_AUTH_TOKEN",), t("", HEX, 32)),
    # SendGrid docs: "SG." + 22 + "." + 43.
    Kind(
        "sendgrid_api_key",
        "chat",
        ("SENDGRID_API_KEY",),
        lambda r: tok(f"SG.{rs(r, B64URL, 22)}.", rs(r, B64URL, 43)),
    ),
    # Mailgun docs: private API key "key-" + 32 hex (newer: 32 hex + "-" + 8 hex + "-" + 8 hex).
    Kind("mailgun_api_key", "chat", ("MAILGUN_API_KEY",), t("key-", HEX, 32)),
    # Mailchimp docs: API key 32 hex + "-us<dc>".
    Kind(
        "mailchimp_api_key",
        "chat",
        ("MAILCHIMP_API_KEY",),
        lambda r: tok("", rs(r, HEX, 32), f"-us{r.randint(1, 21)}"),
    ),
    # Postmark docs: server token is a UUID sent as X-Postmark-Server-Token.
    Kind("postmark_server_token", "chat", ("POSTMARK_SERVER_TOKEN",), u()),
    Kind("smtp_credentials_url", "chat", ("EMAIL_URL",), smtp_url),
    # LINE Messaging API docs: long-lived channel access token, ~172 base64 chars.
    Kind("line_channel_access_token", "chat", ("LINE_CHANNEL_ACCESS_TOKEN",), t("", B64, 171, "=")),
    # Vonage docs: API secret 16 alnum.
    Kind("vonage_api_secret", "chat", ("VONAGE_API_SECRET", "NEXMO_API_SECRET"), t("", ALNUM, 16)),
    # Pusher Channels docs: app secret 20 hex.
    Kind("pusher_secret", "chat", ("PUSHER_APP_SECRET",), t("", HEX, 20)),
    # Matrix spec / Synapse: access tokens "syt_<base64 user>_<20>_<6>".
    Kind(
        "matrix_access_token",
        "chat",
        ("MATRIX_ACCESS_TOKEN",),
        lambda r: tok(
            f"syt_{b64(rs(r, LOWER, 6).encode()).rstrip('=')}_", rs(r, ALNUM, 20), f"_{rs(r, ALNUM, 6)}"
        ),
    ),
    # Intercom docs: access tokens are base64 starting "dG9rOj" ("tok:").
    Kind(
        "intercom_access_token",
        "chat",
        ("INTERCOM_ACCESS_TOKEN",),
        lambda r: tok("dG9rOj", rs(r, B64, 54), "="),
    ),
    # Kakao developers: REST API key 32 hex (server-side secret for admin key).
    Kind("kakao_admin_key", "chat", ("KAKAO_ADMIN_KEY",), t("", HEX, 32)),
    # ---- payment ----
    # Stripe docs "API keys": secret "sk_live_", restricted "rk_live_", webhook signing secret "whsec_".
    Kind("stripe_secret_key", "payment", ("STRIPE_SECRET_KEY",), t("sk_live_51", ALNUM, 97)),
    Kind("stripe_restricted_key", "payment", ("STRIPE_RESTRICTED_KEY",), t("rk_live_51", ALNUM, 97)),
    Kind("stripe_webhook_secret", "payment", ("STRIPE_WEBHOOK_SECRET",), t("whsec_", ALNUM, 32)),
    # PayPal docs: REST client secret 80 chars [A-Za-z0-9_-]; access tokens "A21AA".
    Kind("paypal_client_secret", "payment", ("PAYPAL_CLIENT_SECRET",), t("E", B64URL, 79)),
    Kind("paypal_access_token", "payment", ("PAYPAL_ACCESS_TOKEN",), t("A21AA", B64URL, 92)),
    # Square docs: production access tokens "EAAA" + 60; OAuth application secret "sq0csp-" + 43.
    Kind("square_access_token", "payment", ("SQUARE_ACCESS_TOKEN",), t("EAAA", B64URL, 60)),
    Kind("square_oauth_secret", "payment", ("SQUARE_APP_SECRET",), t("sq0csp-", B64URL, 43)),
    # Adyen docs: API keys start "AQE" and are ~ 200 chars.
    Kind("adyen_api_key", "payment", ("ADYEN_API_KEY",), t("AQEyhmfxK4PJbhZKw0m/n3Q5qf3Ve", B64, 150)),
    Kind("braintree_access_token", "payment", ("BRAINTREE_ACCESS_TOKEN",), braintree),
    Kind("razorpay_key_secret", "payment", ("RAZORPAY_KEY_SECRET",), razorpay, block=True),
    # Paystack docs: secret keys "sk_live_" + 40 hex.
    Kind("paystack_secret_key", "payment", ("PAYSTACK_SECRET_KEY",), t("sk_live_", HEX, 40)),
    # Flutterwave docs: "FLWSECK-" + 32 hex + "-X".
    Kind("flutterwave_secret_key", "payment", ("FLW_SECRET_KEY",), t("FLWSECK-", HEX, 32, "-X")),
    Kind("mercadopago_access_token", "payment", ("MP_ACCESS_TOKEN",), mercadopago),
    # Mollie docs: API keys "live_" + 30 alnum.
    Kind("mollie_api_key", "payment", ("MOLLIE_API_KEY",), t("live_", ALNUM, 30)),
    # Xendit docs: secret keys "xnd_production_" + 50.
    Kind("xendit_secret_key", "payment", ("XENDIT_SECRET_KEY",), t("xnd_production_", ALNUM, 50)),
    # Midtrans docs: server key "Mid-server-" + 24.
    Kind("midtrans_server_key", "payment", ("MIDTRANS_SERVER_KEY",), t("Mid-server-", B64URL, 24)),
    # GoCardless docs: live access tokens "live_" + 40.
    Kind("gocardless_access_token", "payment", ("GOCARDLESS_ACCESS_TOKEN",), t("live_", B64URL, 40)),
    # Plaid docs: secret 30 hex per environment.
    Kind("plaid_secret", "payment", ("PLAID_SECRET",), t("", HEX, 30)),
    # Checkout.com docs "API keys": secret keys for server-to-server calls, prefixed "sk_" (sandbox "sk_sbox_");
    # the body, 26 lowercase base32, is from vendor key listings.
    Kind("checkout_secret_key", "payment", ("CKO_SECRET_KEY",), t("sk_", BASE32_LOWER, 26)),
    # ---- database ----
    Kind("postgres_url", "database", ("DATABASE_URL",), postgres_url),
    Kind("mysql_url", "database", ("MYSQL_URL",), mysql_url),
    Kind("mongodb_srv_url", "database", ("MONGODB_URI",), mongo_url),
    Kind("redis_url", "database", ("REDIS_URL",), redis_url),
    Kind("pgpass_line", "database", ("~/.pgpass",), pgpass, block=True),
    Kind("mssql_connection_string", "database", ("ConnectionStrings__Default",), mssql),
    Kind("oracle_jdbc_url", "database", ("spring.datasource.url",), oracle_jdbc),
    Kind("amqp_url", "database", ("CLOUDAMQP_URL",), amqp_url),
    Kind("neo4j_url", "database", ("NEO4J_URI",), neo4j),
    Kind("elasticsearch_api_key", "database", ("ES_API_KEY",), elastic_api_key, block=True),
    Kind("astra_db_token", "database", ("ASTRA_DB_APPLICATION_TOKEN",), astra),
    Kind("snowflake_url", "database", ("SNOWFLAKE_URL",), snowflake),
    Kind("clickhouse_password", "database", ("users.xml",), clickhouse_xml, block=True),
    # PlanetScale docs: passwords "pscale_pw_" + 43, service tokens "pscale_tkn_".
    Kind("planetscale_password", "database", ("PLANETSCALE_PASSWORD",), t("pscale_pw_", B64URL, 43)),
    # InfluxDB docs: API tokens 86 base64 chars + "==".
    Kind("influxdb_token", "database", ("INFLUX_TOKEN",), t("", B64URL, 86, "==")),
    Kind("turso_auth_token", "database", ("TURSO_AUTH_TOKEN",), turso),
    # ---- registry ----
    Kind("npm_token", "registry", (".npmrc",), npmrc, block=True),
    Kind("pypi_token", "registry", (".pypirc",), pypirc, block=True),
    # Docker docs: personal access tokens "dckr_pat_" + 27.
    Kind("docker_hub_pat", "registry", ("DOCKERHUB_TOKEN",), t("dckr_pat_", B64URL, 27)),
    Kind("docker_config_auth", "registry", ("config.json",), docker_config, block=True),
    # RubyGems docs: API keys "rubygems_" + 48 hex.
    Kind("rubygems_api_key", "registry", ("GEM_HOST_API_KEY",), t("rubygems_", HEX, 48)),
    # NuGet docs: API keys "oy2" + 43 lowercase alnum.
    Kind("nuget_api_key", "registry", ("NUGET_API_KEY",), t("oy2", LOWER_ALNUM, 43)),
    # crates.io docs: API tokens "cio" + 32 alnum.
    Kind("crates_io_token", "registry", ("CARGO_REGISTRY_TOKEN",), t("cio", ALNUM, 32)),
    # JFrog docs: API keys "AKCp" + 69; reference tokens "cmVmdGtu" (base64 "reftkn").
    Kind("jfrog_api_key", "registry", ("ARTIFACTORY_API_KEY",), t("AKCp8", ALNUM, 68)),
    Kind("jfrog_reference_token", "registry", ("JFROG_ACCESS_TOKEN",), t("cmVmdGtuOjAxOj", ALNUM, 50)),
    # Clojars docs: deploy tokens "CLOJARS_" + 60 hex.
    Kind("clojars_deploy_token", "registry", ("CLOJARS_PASSWORD",), t("CLOJARS_", HEX, 60)),
    Kind("netrc_password", "registry", ("~/.netrc",), netrc, block=True),
    Kind("maven_settings_password", "registry", ("settings.xml",), maven_settings, block=True),
    # Quay docs: robot account token 64 upper alnum.
    Kind("quay_robot_token", "registry", ("QUAY_ROBOT_TOKEN",), t("", UPPER_ALNUM, 64)),
    # ---- observability ----
    # Datadog docs: API key 32 hex, application key 40 hex.
    Kind("datadog_api_key", "observability", ("DD_API_KEY",), t("", HEX, 32)),
    Kind("datadog_app_key", "observability", ("DD_APP_KEY",), t("", HEX, 40)),
    # New Relic docs: user keys "NRAK-" + 27 upper alnum; license keys 40 chars ending "NRAL".
    Kind("newrelic_user_key", "observability", ("NEW_RELIC_API_KEY",), t("NRAK-", UPPER_ALNUM, 27)),
    Kind("newrelic_license_key", "observability", ("NEW_RELIC_LICENSE_KEY",), t("eu01xx", HEX, 30, "NRAL")),
    # Sentry docs: user auth tokens "sntryu_" + 64 hex; org tokens "sntrys_".
    Kind("sentry_auth_token", "observability", ("SENTRY_AUTH_TOKEN",), t("sntryu_", HEX, 64)),
    # Grafana docs: service account tokens "glsa_" + 32 + "_" + 8 hex.
    Kind(
        "grafana_service_account",
        "observability",
        ("GRAFANA_TOKEN",),
        lambda r: tok("glsa_", rs(r, ALNUM, 32), "_" + rs(r, HEX, 8)),
    ),
    Kind("grafana_cloud_token", "observability", ("GRAFANA_CLOUD_TOKEN",), grafana_cloud),
    # Honeycomb docs: API keys 22 alnum (classic 32 hex), header x-honeycomb-team.
    Kind("honeycomb_api_key", "observability", ("HONEYCOMB_API_KEY",), t("", ALNUM, 22)),
    # Splunk docs: HEC token UUID, header "Authorization: Splunk <token>".
    Kind("splunk_hec_token", "observability", ("SPLUNK_HEC_TOKEN",), u()),
    # Dynatrace docs: "dt0c01." + 24 upper alnum + "." + 64 upper alnum.
    Kind(
        "dynatrace_token",
        "observability",
        ("DT_API_TOKEN",),
        lambda r: tok(f"dt0c01.{rs(r, UPPER_ALNUM, 24)}.", rs(r, UPPER_ALNUM, 64)),
    ),
    # PagerDuty docs: REST API keys 20 chars, user tokens "u+" prefix.
    Kind("pagerduty_api_key", "observability", ("PAGERDUTY_TOKEN",), t("u+", B64URL, 18)),
    # Opsgenie docs: API key UUID, header "Authorization: GenieKey <key>".
    Kind("opsgenie_api_key", "observability", ("OPSGENIE_API_KEY",), u()),
    # Rollbar docs: access tokens 32 hex (post_server_item).
    Kind("rollbar_access_token", "observability", ("ROLLBAR_ACCESS_TOKEN",), t("", HEX, 32)),
    # LaunchDarkly docs: SDK keys "sdk-" + UUID, API access tokens "api-" + UUID.
    Kind("launchdarkly_sdk_key", "observability", ("LAUNCHDARKLY_SDK_KEY",), u("sdk-")),
    # PostHog docs: personal API keys "phx_" + 43 (project keys "phc_" are public).
    Kind("posthog_personal_key", "observability", ("POSTHOG_PERSONAL_API_KEY",), t("phx_", ALNUM, 43)),
    # Axiom docs: API tokens "xaat-" + UUID.
    Kind("axiom_token", "observability", ("AXIOM_TOKEN",), u("xaat-")),
    # ---- ai ----
    # OpenAI docs: project keys "sk-proj-"; legacy keys contain "T3BlbkFJ".
    Kind(
        "openai_project_key",
        "ai",
        ("OPENAI_API_KEY",),
        lambda r: tok("sk-proj-", rs(r, B64URL, 74), "T3BlbkFJ" + rs(r, B64URL, 74)),
    ),
    Kind(
        "openai_legacy_key",
        "ai",
        ("OPENAI_KEY",),
        lambda r: tok("sk-", rs(r, ALNUM, 20), "T3BlbkFJ" + rs(r, ALNUM, 20)),
    ),
    # Anthropic docs: "sk-ant-api03-" + 93 + "AA".
    Kind("anthropic_api_key", "ai", ("ANTHROPIC_API_KEY",), t("sk-ant-api03-", B64URL, 93, "AA")),
    Kind("anthropic_admin_key", "ai", ("ANTHROPIC_ADMIN_KEY",), t("sk-ant-admin01-", B64URL, 93, "AA")),
    # Hugging Face docs: user access tokens "hf_" + 34 letters.
    Kind("huggingface_token", "ai", ("HF_TOKEN",), t("hf_", string.ascii_letters, 34)),
    # Cohere docs: API key 40 alnum (CO_API_KEY).
    Kind("cohere_api_key", "ai", ("CO_API_KEY", "COHERE_API_KEY"), t("", ALNUM, 40)),
    # Replicate docs: "r8_" + 37.
    Kind("replicate_token", "ai", ("REPLICATE_API_TOKEN",), t("r8_", ALNUM, 37)),
    # Groq docs: "gsk_" + 52.
    Kind("groq_api_key", "ai", ("GROQ_API_KEY",), t("gsk_", ALNUM, 52)),
    # Mistral docs: API key 32 alnum.
    Kind("mistral_api_key", "ai", ("MISTRAL_API_KEY",), t("", ALNUM, 32)),
    # Perplexity docs: "pplx-" + 48.
    Kind("perplexity_api_key", "ai", ("PERPLEXITY_API_KEY",), t("pplx-", ALNUM, 48)),
    # DeepSeek / DashScope docs: "sk-" + 32 hex.
    Kind("deepseek_api_key", "ai", ("DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY"), t("sk-", HEX, 32)),
    # OpenRouter docs: "sk-or-v1-" + 64 hex.
    Kind("openrouter_api_key", "ai", ("OPENROUTER_API_KEY",), t("sk-or-v1-", HEX, 64)),
    # xAI docs: "xai-" + 80.
    Kind("xai_api_key", "ai", ("XAI_API_KEY",), t("xai-", ALNUM, 80)),
    # Fireworks docs: "fw_" + 24.
    Kind("fireworks_api_key", "ai", ("FIREWORKS_API_KEY",), t("fw_", ALNUM, 24)),
    # Together docs: "tgp_v1_" + 43.
    Kind("together_api_key", "ai", ("TOGETHER_API_KEY",), t("tgp_v1_", B64URL, 43)),
    # Pinecone docs: "pcsk_" + 5 + "_" + 64.
    Kind(
        "pinecone_api_key",
        "ai",
        ("PINECONE_API_KEY",),
        lambda r: tok(f"pcsk_{rs(r, ALNUM, 5)}_", rs(r, ALNUM, 64)),
    ),
    # LangSmith docs: "lsv2_pt_" + 32 hex + "_" + 10 hex.
    Kind(
        "langsmith_api_key",
        "ai",
        ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"),
        lambda r: tok("lsv2_pt_", rs(r, HEX, 32), "_" + rs(r, HEX, 10)),
    ),
    # Weights & Biases docs: API key 40 hex (WANDB_API_KEY, ~/.netrc api.wandb.ai).
    Kind("wandb_api_key", "ai", ("WANDB_API_KEY",), t("", HEX, 40)),
    # ElevenLabs docs: "sk_" + 48 hex.
    Kind("elevenlabs_api_key", "ai", ("ELEVENLABS_API_KEY", "xi-api-key"), t("sk_", HEX, 48)),
    # Azure OpenAI docs: key 32 hex in header "api-key".
    Kind("azure_openai_key", "ai", ("AZURE_OPENAI_API_KEY",), t("", HEX, 32)),
    # Zhipu (BigModel) docs: "<32 hex>.<16 alnum>".
    Kind(
        "zhipu_api_key", "ai", ("ZHIPUAI_API_KEY",), lambda r: tok("", rs(r, HEX, 32), "." + rs(r, ALNUM, 16))
    ),
    # Voyage AI docs: "pa-" + 43.
    Kind("voyage_api_key", "ai", ("VOYAGE_API_KEY",), t("pa-", B64URL, 43)),
    # ---- saas ----
    # Shopify docs: admin API tokens "shpat_" + 32 hex, app shared secrets "shpss_".
    Kind("shopify_admin_token", "saas", ("SHOPIFY_ACCESS_TOKEN",), t("shpat_", HEX, 32)),
    Kind("shopify_shared_secret", "saas", ("SHOPIFY_API_SECRET",), t("shpss_", HEX, 32)),
    Kind("atlassian_api_token", "saas", ("JIRA_API_TOKEN",), atlassian),
    # Notion docs: integration tokens "ntn_" + 11 digits + 35 (older "secret_" + 43).
    Kind(
        "notion_token", "saas", ("NOTION_TOKEN",), lambda r: tok("ntn_" + rs(r, DIGITS, 11), rs(r, ALNUM, 35))
    ),
    Kind("airtable_pat", "saas", ("AIRTABLE_TOKEN",), airtable),
    # Linear docs: "lin_api_" + 40.
    Kind("linear_api_key", "saas", ("LINEAR_API_KEY",), t("lin_api_", ALNUM, 40)),
    Kind("asana_pat", "saas", ("ASANA_PAT",), asana),
    # Figma docs: personal access tokens "figd_" + 40.
    Kind("figma_pat", "saas", ("FIGMA_TOKEN",), t("figd_", B64URL, 40)),
    # HubSpot docs: private app tokens "pat-na1-" / "pat-eu1-" + UUID.
    Kind("hubspot_private_app", "saas", ("HUBSPOT_ACCESS_TOKEN",), u("pat-eu1-")),
    Kind("zendesk_api_token", "saas", ("ZENDESK_API_TOKEN",), zendesk),
    Kind("salesforce_consumer_secret", "saas", ("SF_CONSUMER_SECRET",), salesforce_secret, block=True),
    # Dropbox docs: short-lived access tokens "sl." + ~140.
    Kind("dropbox_access_token", "saas", ("DROPBOX_TOKEN",), t("sl.B", B64URL, 136)),
    Kind("mapbox_secret_token", "saas", ("MAPBOX_SECRET_TOKEN",), mapbox_secret),
    # Algolia docs: admin API key 32 hex (keep secret; search-only keys are public).
    Kind("algolia_admin_key", "saas", ("ALGOLIA_ADMIN_API_KEY",), t("", HEX, 32)),
    # Contentful docs: personal access tokens "CFPAT-" + 43.
    Kind("contentful_pat", "saas", ("CONTENTFUL_MANAGEMENT_TOKEN",), t("CFPAT-", B64URL, 43)),
    # Okta docs: API tokens "00" + 40.
    Kind("okta_api_token", "saas", ("OKTA_API_TOKEN", "SSWS"), t("00", B64URL, 40)),
    # Auth0 docs: client secret 64 chars [A-Za-z0-9_-].
    Kind("auth0_client_secret", "saas", ("AUTH0_CLIENT_SECRET",), t("", B64URL, 64)),
    # Postman docs: API keys "PMAK-" + 24 hex + "-" + 34 hex.
    Kind(
        "postman_api_key",
        "saas",
        ("POSTMAN_API_KEY",),
        lambda r: tok(f"PMAK-{rs(r, HEX, 24)}-", rs(r, HEX, 34)),
    ),
    # ngrok docs: authtokens "2" + 26 + "_" + 21.
    Kind(
        "ngrok_authtoken",
        "saas",
        ("NGROK_AUTHTOKEN",),
        lambda r: tok("2" + rs(r, ALNUM, 26) + "_", rs(r, ALNUM, 21)),
    ),
    # Typeform docs: personal tokens "tfp_" + 44 + "_" + 14.
    Kind(
        "typeform_token",
        "saas",
        ("TYPEFORM_TOKEN",),
        lambda r: tok("tfp_", rs(r, ALNUM, 44), "_" + rs(r, ALNUM, 14)),
    ),
    # Gitea/Forgejo docs: access tokens 40 hex.
    Kind("gitea_token", "saas", ("GITEA_TOKEN",), t("", HEX, 40)),
    Kind("ssh_private_key", "saas", ("id_ed25519",), ssh_private, block=True),
    Kind("rsa_private_key", "saas", ("tls.key",), rsa_private, block=True),
    Kind("ec_private_key", "saas", ("server.key",), ec_private, block=True),
    Kind("pgp_private_key", "saas", ("signing.asc",), pgp_private, block=True),
    Kind("basic_auth_header", "saas", ("Authorization",), basic_auth, block=True),
    # A password chosen by a person under a secret name: words and digits, no provider shape at all.
    Kind(
        "password_under_secret_name",
        "saas",
        ("password", "DB_PASSWORD", "admin_pass", "SMTP_PASSWORD"),
        lambda r: tok(
            "",
            r.choice(["Velvet", "Orchard", "Granite", "Maple", "Tundra", "Copper"])
            + r.choice(["River", "Falcon", "Lantern", "Harbor", "Pepper"])
            + rs(r, DIGITS, 4)
            + r.choice("!#$%&*")
            + rs(r, ALNUM, 4),
        ),
    ),
    # A generic 32-hex value under a vendor's secret name, the shape many smaller vendors use.
    Kind(
        "hex32_under_secret_name",
        "saas",
        ("ACME_AUTH_TOKEN", "api_key", "X-Api-Key", "client_secret"),
        t("", HEX, 32),
    ),
]


# --- contexts ----------------------------------------------------------------------------------------------------
# Each takes (rng, name, value) and returns the memory text. Inline contexts suit one-line values, block
# contexts suit both.

CHAT_INLINE: list[Callable[[str], str]] = [
    lambda v: f"hier der neue Schlüssel für staging: {v} – bitte nicht ins Wiki kopieren",
    lambda v: f"je te mets le jeton ici en attendant le coffre : {v}",
    lambda v: f"ojo, este es el token de producción: {v} (lo rotamos el viernes)",
    lambda v: f"本番用のトークンです: {v} 共有は社内のみでお願いします",
    lambda v: f"把这个密钥填到配置里：{v}，明天再换",
    lambda v: f"новый токен для деплоя: {v} — старый уже отозван",
    lambda v: f"segue a chave que o fornecedor mandou: {v}",
    lambda v: f"ecco la chiave per il bot: {v}",
    lambda v: f"bunu CI'a ekle: {v} sonra sil",
    lambda v: f"이거 운영 키야 {v} 노출 조심",
    lambda v: f"@dana can you try with {v}? the old one 401s",
    lambda v: f"kopieer dit even naar de vault: {v}",
    lambda v: f"klucz do API: {v} — działa tylko z VPN",
    lambda v: f"tämä on uusi avain {v}",
    lambda v: f"यह नया टोकन है: {v}",
    lambda v: f"هذا المفتاح الجديد: {v}",
    lambda v: f"Đây là token mới: {v}",
    lambda v: f"ini kunci API-nya {v} jangan disebar ya",
]


def inline_contexts(r: random.Random, name: str, v: str) -> str:
    lang = r.choice(["py", "js", "go", "rb", "java", "cs", "php", "rs", "kt", "sh"])
    opts: list[Callable[[], str]] = [
        lambda: f"{name}={v}",
        lambda: f"export {name}='{v}'",
        lambda: f"$ docker run --rm -e {name}={v} ghcr.io/acme/worker:1.42 migrate",
        lambda: f'curl -sS -H "Authorization: Bearer {v}" https://api.vendor.example/v2/projects | jq .',
        lambda: (
            f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\nstringData:\n  {name}: "{v}"'
        ),
        lambda: f"[default]\n{name.lower()} = {v}\nregion = eu-central-1",
        lambda: f'[tool.deploy]\n{name.lower()} = "{v}"\nretries = 3',
        lambda: json.dumps({"service": "billing", "env": "prod", name: v}, indent=2, ensure_ascii=False),
        lambda: f'resource "vendor_integration" "main" {{\n  name  = "prod"\n  token = "{v}"\n}}',
        lambda: f'<appSettings>\n  <add key="{name}" value="{v}" />\n</appSettings>',
        lambda: f"      - name: Deploy\n        env:\n          {name}: {v}\n        run: ./deploy.sh",
        lambda: f'deploy:\n  stage: release\n  variables:\n    {name}: "{v}"\n  script:\n    - make release',
        lambda: {
            "py": f'client = Client(api_key="{v}")  # TODO move to env before merging',
            "js": f"const client = new Client({{ apiKey: '{v}' }}); // temp for the demo",
            "go": f'cfg := vendor.Config{{Token: "{v}"}}',
            "rb": f'Vendor.configure {{ |c| c.api_key = "{v}" }}',
            "java": f'private static final String API_KEY = "{v}";',
            "cs": f'var client = new VendorClient("{v}");',
            "php": f"'api_key' => '{v}',",
            "rs": f'let client = Client::new("{v}");',
            "kt": f'val token = "{v}"',
            "sh": f'TOKEN="{v}" ./scripts/sync.sh --dry-run',
        }[lang],
        lambda: (
            f"Incident 2026-11-{r.randint(10, 28)}: the worker used a hard-coded key `{v}` found in the image layer; rotated at 14:05 UTC."
        ),
        lambda: (
            f"PR #{r.randint(100, 999)} description: switch the exporter to the new credential ({v}) until the vault path is ready."
        ),
        lambda: (
            f'Traceback (most recent call last):\n  File "sync.py", line 88, in <module>\n    resp = session.get(url, headers={{"Authorization": "Bearer {v}"}})\nrequests.exceptions.HTTPError: 403 Client Error: Forbidden'
        ),
        lambda: (
            f"2026-11-{r.randint(10, 28)}T08:{r.randint(10, 59)}:12Z WARN auth rejected credential={v} status=401 retry=3"
        ),
        lambda: f"| env | key |\n|-----|-----|\n| staging | {v} |\n| prod | (vault) |",
        lambda: (
            f"Screenshot of the settings page, transcribed:\n  API access\n  Your key: {v}\n  [Copy] [Regenerate]"
        ),
        lambda: (
            f"Subject: credentials for the integration\n\nHi Marta,\n\nas agreed, here is the key for the sandbox: {v}\n\nBest, Jo"
        ),
        lambda: f"In [12]: os.environ['{name}'] = '{v}'\nIn [13]: client.ping()\nOut[13]: True",
        lambda: f"{name}: {v}",
        lambda: f"$ history | tail -3\n  511  cd infra\n  512  {name}={v} terraform apply\n  513  git status",
        lambda: r.choice(CHAT_INLINE)(v),
        lambda: r.choice(CHAT_INLINE)(v),
        lambda: f"spring.security.oauth2.client.registration.vendor.client-secret={v}",
        lambda: f'<add name="Vendor" connectionString="{v}" />',
        lambda: f"services:\n  worker:\n    image: acme/worker:latest\n    environment:\n      - {name}={v}",
        lambda: f"ENV {name}={v}",
        lambda: f'[Service]\nEnvironment="{name}={v}"\nExecStart=/usr/local/bin/exporter',
        lambda: f'PS C:\\src\\app> $env:{name} = "{v}"',
        lambda: f"set -gx {name} {v}",
        lambda: f"# helm values-prod.yaml\nvendor:\n  enabled: true\n  {name.lower()}: {v}",
        lambda: (
            f'- name: configure vendor\n  ansible.builtin.lineinfile:\n    path: /etc/app.env\n    line: "{name}={v}"'
        ),
        lambda: (
            f"Commented on issue #{r.randint(10, 400)}: still failing for me with `{v}`, any idea? (logs attached)"
        ),
        lambda: f"Memory: user prefers the EU endpoint; the credential they gave for the sandbox is {v}",
        lambda: (
            f"panic: vendor: unauthorized (key {v})\n\ngoroutine 1 [running]:\nmain.main()\n\t/app/main.go:42 +0x1d"
        ),
    ]
    return r.choice(opts)()


def block_contexts(r: random.Random, name: str, v: str) -> str:
    opts: list[Callable[[], str]] = [
        lambda: f"Saved {name} for the migration box:\n\n{v}\n",
        lambda: f"```\n$ cat {name}\n{v}\n```",
        lambda: (
            f"Runbook step 4 — restore the credentials file ({name}) exactly as below, then restart the agent:\n{v}"
        ),
        lambda: (
            f"Notes from pairing with Sam: the job failed because {name} was missing. Content we used:\n{v}\nStill TODO: move it to the secret store."
        ),
        lambda: f"Bonjour, voici le fichier {name} demandé :\n{v}\nMerci de le supprimer après usage.",
        lambda: f"{name} の中身（一時的にここに置きます）:\n{v}",
        lambda: (
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  {name.strip('~/.')}: |\n"
            + "\n".join("    " + line for line in v.split("\n"))
        ),
        lambda: (
            f'resource "local_file" "creds" {{\n  filename = "/etc/app/creds"\n  content  = <<-EOT\n{v}\n  EOT\n}}'
        ),
    ]
    return r.choice(opts)()


# --- disguises ---------------------------------------------------------------------------------------------------

ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = [
    "\u202a",
    "\u202b",
    "\u202d",
    "\u202e",
    "\u202c",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
]
PLACEHOLDER_WORDS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXX", "changeme", "Test"]
HEX_PLACEHOLDERS = ["deadbeef", "00000000", "12345678", "abcdef00", "feedface"]
DISGUISES = [
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "url_encoded",
    "base64",
    "split_lines",
    "placeholder_word",
]


def insert_inside(r: random.Random, raw: Raw, pieces: list[str], count: int) -> str:
    s = raw.text
    positions = sorted(
        r.sample(range(raw.start + 1, raw.end), min(count, raw.end - raw.start - 1)), reverse=True
    )
    for p in positions:
        s = s[:p] + r.choice(pieces) + s[p:]
    return s


def fullwidth(r: random.Random, raw: Raw) -> str:
    def fw(c: str) -> str:
        return chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c

    if r.random() < 0.5:  # every character of the value
        return "".join(fw(c) for c in raw.text)
    s = list(raw.text)
    for i in r.sample(range(raw.start, raw.end), max(1, (raw.end - raw.start) // 5)):
        s[i] = fw(s[i])
    return "".join(s)


def with_placeholder(r: random.Random, raw: Raw) -> Raw:
    """Writes a placeholder-looking word over the middle of the random part, in the token's own alphabet, so
    the token keeps its documented shape (a UUID keeps its dashes, a hex key stays hex)."""
    body = raw.text[raw.start : raw.end]
    letters = body.replace("-", "")
    if all(c in HEX for c in letters):
        word = r.choice(HEX_PLACEHOLDERS)
    elif all(c in HEX.upper() for c in letters):
        word = r.choice(HEX_PLACEHOLDERS).upper()
    elif all(c in UPPER_ALNUM for c in letters):
        word = r.choice(["EXAMPLE", "XXXX", "TEST", "DUMMY", "SAMPLE"])
    elif all(c in LOWER_ALNUM for c in letters):
        word = r.choice(["xxxx", "test", "sample", "dummy"])
    else:
        word = r.choice(PLACEHOLDER_WORDS)
    if len(body) < len(word) + 8:
        word = word[:4]
    # Near the middle, where the piece that must not survive is taken.
    at = max(1, min(len(body) - len(word) - 1, (len(body) - len(word)) // 2 + r.randint(-3, 3)))
    chars = list(body)
    uuid_shaped = "-" in body and all(c in HEX for c in letters)
    i = at
    for c in word:
        while uuid_shaped and chars[i] == "-":  # a UUID keeps its dashes where they are
            i += 1
        chars[i] = c
        i += 1
    return Raw(raw.text[: raw.start] + "".join(chars) + raw.text[raw.end :], raw.start, raw.end)


def secret_piece(r: random.Random, raw: Raw) -> str:
    n = raw.end - raw.start
    length = min(n, max(8, min(20, n // 2)))
    start = raw.start + (n - length) // 2
    return raw.text[start : start + length]


@dataclass(frozen=True)
class Credential:
    sample: Sample
    # The text before disguising, kept so the shape test can check the secret piece is really there.
    undisguised: str


def render(r: random.Random, kind: Kind, raw: Raw, disguise: str) -> tuple[str, str]:
    """Returns (text, undisguised_text)."""
    name = r.choice(kind.names)
    seed_state = r.getstate()

    def place(value: str) -> str:
        r.setstate(seed_state)  # the same context for the disguised and the undisguised text
        return (
            block_contexts(r, name, value) if kind.block or "\n" in value else inline_contexts(r, name, value)
        )

    undisguised = place(raw.text)
    if disguise in ("plain", "placeholder_word"):
        return undisguised, undisguised
    sub = random.Random(r.random())
    if disguise == "zero_width":
        value = insert_inside(sub, raw, ZERO_WIDTH, sub.randint(1, 3))
    elif disguise == "soft_hyphen":
        value = insert_inside(sub, raw, ["\u00ad"], sub.randint(1, 2))
    elif disguise == "bidi":
        value = insert_inside(sub, raw, BIDI, sub.randint(1, 2))
    elif disguise == "fullwidth":
        value = fullwidth(sub, raw)
    elif disguise == "split_lines":
        at = sub.randint(raw.start + 4, raw.end - 4)
        brk = sub.choice(["\n", "\n    ", "\\\n", "\\\n  ", "\n\t"])
        value = raw.text[:at] + brk + raw.text[at:]
    elif disguise == "url_encoded":
        mode = sub.random()
        if mode < 0.7 or kind.block:
            # Percent-encode every byte, or only the reserved ones when the value has some (otherwise quoting
            # would leave it unchanged and the sample would be plain under another label).
            quoted = quote(raw.text, safe="")
            full = "".join(f"%{b:02X}" for b in raw.text.encode())
            value = quoted if mode >= 0.4 and quoted != raw.text else full
        else:
            enc = quote(f"{name.lower()}={raw.text}", safe="")
            return (
                f"redirect after login: https://app.example.com/oauth/cb?state={rs(sub, HEX, 16)}&next=%2Fsettings%3F{enc}",
                undisguised,
            )
    else:  # base64
        if sub.random() < 0.5:
            value = b64(raw.text.encode())
        else:
            blob = b64(f"{name}={raw.text}".encode())
            wrap = sub.choice(
                [
                    f"kubectl get secret app-env -o yaml\ndata:\n  env: {blob}",
                    f"echo {blob} | base64 -d >> .env",
                    f"Die Umgebungsvariablen (base64, aus dem Pod kopiert): {blob}",
                    f'{{"encoded_env": "{blob}"}}',
                ]
            )
            return wrap, undisguised
    r.setstate(seed_state)
    return (
        block_contexts(r, name, value) if kind.block or "\n" in raw.text else inline_contexts(r, name, value)
    ), undisguised


PER_KIND = 10


def credentials(r: random.Random) -> list[Credential]:
    out: list[Credential] = []
    for kind in KINDS:
        # Four plain samples of ten, the others spread over the disguises so each kind meets most of them.
        chosen = ["plain"] * 4 + r.sample(DISGUISES, PER_KIND - 4)
        for disguise in chosen:
            raw = kind.make(r)
            if disguise == "placeholder_word":
                raw = with_placeholder(r, raw)
            secret = secret_piece(r, raw)
            text, undisguised = render(r, kind, raw, disguise)
            out.append(Credential(Sample(kind.name, kind.group, text, disguise, secret), undisguised))
    return out


# --- look-alikes -------------------------------------------------------------------------------------------------


def _sha(r: random.Random) -> str:
    return rs(r, HEX, 40)


LOOKALIKES: dict[str, Callable[[random.Random], str]] = {
    "git_commit_sha": lambda r: r.choice(
        [
            f"commit {_sha(r)}\nAuthor: Lee <lee@corp.example>\n\n    fix token refresh race",
            f"Fixed in {_sha(r)[:12]} (backported to 2.3 as {_sha(r)[:12]}).",
            f"git revert {_sha(r)} # broke the secret rotation job",
            f"Merge pull request #{r.randint(100, 999)} from acme/rotate-keys — merge commit {_sha(r)}",
        ]
    ),
    "sha256_release_checksum": lambda r: r.choice(
        [
            f"{rs(r, HEX, 64)}  kenfold-1.{r.randint(0, 9)}.0-linux-amd64.tar.gz",
            f"SHA256 (release.zip) = {rs(r, HEX, 64)}",
            f"Release notes v2.{r.randint(0, 20)}: verify the download, checksum sha256:{rs(r, HEX, 64)}",
        ]
    ),
    "sha512_digest": lambda r: f"sha512sum of the backup archive: {rs(r, HEX, 128)}",
    "uuid_primary_key": lambda r: r.choice(
        [
            f"the row with primary key {uuid(r)} has a null tenant_id",
            f"request_id={uuid(r)} latency_ms={r.randint(3, 900)}",
            f"Idempotency-Key: {uuid(r)}",
            f"UPDATE orders SET status='paid' WHERE id = '{uuid(r)}';",
        ]
    ),
    "ulid": lambda r: f"event id {r.choice('01')}{rs(r, CROCKFORD, 25)} replayed from the outbox",
    "ksuid": lambda r: f"segment ksuid {rs(r, ALNUM, 27)} written by the ingester",
    "stripe_public_object_id": lambda r: r.choice(
        [
            f"Refund issued for {r.choice(['pi_', 'ch_'])}3{rs(r, ALNUM, 23)} (customer cus_{rs(r, ALNUM, 14)})",
            f"price_1{rs(r, ALNUM, 23)} is the annual plan; prod_{rs(r, ALNUM, 14)} the product",
            f"subscription sub_1{rs(r, ALNUM, 23)} canceled at period end; invoice in_1{rs(r, ALNUM, 23)}",
        ]
    ),
    # Stripe docs: publishable keys (pk_live_) are meant to be embedded in web pages.
    "stripe_publishable_key": lambda r: (
        f"<script>const stripe = Stripe('pk_live_51{rs(r, ALNUM, 97)}');</script>"
    ),
    "slack_ids": lambda r: (
        f"posted to channel C0{rs(r, UPPER_ALNUM, 9)} by user U0{rs(r, UPPER_ALNUM, 9)} in team T0{rs(r, UPPER_ALNUM, 8)}"
    ),
    "aws_arn_account": lambda r: r.choice(
        [
            f"role arn:aws:iam::{rs(r, DIGITS, 12)}:role/deploy-{rs(r, LOWER, 5)} assumed by the pipeline",
            f"secret lives at arn:aws:secretsmanager:eu-west-1:{rs(r, DIGITS, 12)}:secret:prod/db-{rs(r, ALNUM, 6)}",
            f"account id {rs(r, DIGITS, 12)}, instance i-0{rs(r, HEX, 16)} in vpc-0{rs(r, HEX, 16)}, sg-0{rs(r, HEX, 16)}",
        ]
    ),
    "trace_ids": lambda r: r.choice(
        [
            f"traceparent: 00-{rs(r, HEX, 32)}-{rs(r, HEX, 16)}-01",
            f"X-Amzn-Trace-Id: Root=1-{rs(r, HEX, 8)}-{rs(r, HEX, 24)}",
            f"trace id {rs(r, HEX, 32)} span {rs(r, HEX, 16)} shows the token refresh took 2.3 s",
            f"x-request-id: {rs(r, B64URL, 22)}",
        ]
    ),
    "base64_text_or_image": lambda r: r.choice(
        [
            f"![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{rs(r, B64, 120)}=)",
            "payload (base64): "
            + b64(
                r.choice(
                    [
                        "hello from the staging cluster, all green",
                        "The quick brown fox jumps over the lazy dog",
                        "status: ok; queue depth 0; last run 04:00 UTC",
                    ]
                ).encode()
            ),
        ]
    ),
    "npm_integrity_hash": lambda r: (
        f'"node_modules/{r.choice(["lodash", "react", "zod", "undici"])}": {{\n  "version": "4.{r.randint(0, 20)}.{r.randint(0, 9)}",\n  "integrity": "sha512-{rs(r, B64, 86)}=="\n}}'
    ),
    "lockfile_hashes": lambda r: r.choice(
        [
            f"golang.org/x/crypto v0.{r.randint(10, 30)}.0 h1:{rs(r, B64, 43)}=",
            f"requests==2.32.3 \\\n    --hash=sha256:{rs(r, HEX, 64)}",
            f'checksum = "{rs(r, HEX, 64)}"',
        ]
    ),
    # The values the providers' own docs print as examples, copied as shown.
    "documented_placeholder": lambda r: r.choice(
        [
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "STRIPE_SECRET_KEY=sk_test_<your key>",
            "export OPENAI_API_KEY=<your-api-key>",
            'SLACK_BOT_TOKEN="xoxb-your-bot-token"',
            "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "api_key: YOUR_API_KEY_HERE",
            'password = "changeme"  # replaced by the installer',
            "Authorization: Bearer <token>",
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "DATABASE_URL=postgres://user:password@localhost:5432/dbname",
        ]
    ),
    "secret_reference_not_value": lambda r: r.choice(
        [
            f"{r.choice(['API_KEY', 'STRIPE_SECRET_KEY', 'DB_PASSWORD'])}=${{{r.choice(['API_KEY', 'STRIPE_SECRET_KEY', 'DB_PASSWORD'])}}}",
            "db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
            'token = os.environ["GITHUB_TOKEN"]',
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-creds\n        key: password",
            "        with:\n          token: ${{ secrets.NPM_TOKEN }}",
            "const key = process.env.OPENAI_API_KEY ?? throwMissing('OPENAI_API_KEY');",
            'password = "{{ vault_db_password }}"',
            "client_secret: vault:secret/data/oauth#client_secret",
            f"api_key_file = /run/secrets/vendor_api_key_{r.randint(1, 9)}",
        ]
    ),
    "ssh_public_key": lambda r: r.choice(
        [
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rs(r, B64, 43)} deploy@ci",
            f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{rs(r, B64, 200)} ops@bastion",
        ]
    ),
    "pem_public_key_or_cert": lambda r: r.choice(
        [
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(rs(r, B64, 64) for _ in range(6))
            + "\n-----END PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----\nMIID"
            + rs(r, B64, 60)
            + "\n"
            + "\n".join(rs(r, B64, 64) for _ in range(8))
            + "\n-----END CERTIFICATE-----",
        ]
    ),
    "key_fingerprint": lambda r: r.choice(
        [
            f"public key fingerprint SHA256:{rs(r, B64, 43)} (ED25519) — matches the one in the wiki",
            f"GPG key fingerprint {' '.join(rs(r, '0123456789ABCDEF', 4) for _ in range(10))}",
            f"oci api key fingerprint {':'.join(rs(r, HEX, 2) for _ in range(16))}",
        ]
    ),
    "frontend_asset_hash": lambda r: r.choice(
        [
            f'<link rel="stylesheet" href="/static/css/main.{rs(r, HEX, 8)}.css">',
            f"chunk {r.randint(100, 999)}.{rs(r, HEX, 20)}.js failed to load",
            f"Content-Security-Policy: script-src 'self' 'sha256-{rs(r, B64, 43)}='",
        ]
    ),
    "youtube_video_id": lambda r: (
        f"talk recording: https://www.youtube.com/watch?v={rs(r, B64URL, 11)} (token auth at 14:20)"
    ),
    "docker_image_digest": lambda r: f"image: ghcr.io/acme/api@sha256:{rs(r, HEX, 64)}",
    "nix_store_path": lambda r: (
        f"/nix/store/{rs(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.{r.randint(0, 3)}.{r.randint(0, 9)}"
    ),
    "ipfs_cid": lambda r: r.choice(
        [f"ipfs://Qm{rs(r, BASE58, 44)}", f"pinned bafybei{rs(r, BASE32_LOWER, 52)}"]
    ),
    "prose_about_secrets": lambda r: r.choice(
        [
            "Rotate the GitHub token every 90 days and never paste it into chat.",
            "The API key for the payment provider lives in Vault under kv/prod/payments; ask Priya for access.",
            "Reminder: the Slack bot token was rotated on Monday, the old one is revoked.",
            "Secret scanning flagged a Stripe key in PR 412; it was a test-mode placeholder, no action.",
            "Wir speichern Passwörter nur im Passwortmanager, niemals im Repo.",
            "Los tokens de acceso caducan a la hora; el refresh token dura 30 días.",
            "パスワードは1Passwordで共有してください。",
            "Use `gh auth token` to print the current token instead of storing it.",
        ]
    ),
    "llm_token_count": lambda r: (
        f"usage: prompt_tokens={r.randint(100, 90000)} completion_tokens={r.randint(10, 4000)} model=claude-sonnet-4-{r.randint(0, 9)} request id req_{rs(r, ALNUM, 24)}"
    ),
    # PostHog docs: project API keys (phc_) are public, used in the browser snippet.
    "posthog_project_key": lambda r: (
        f"posthog.init('phc_{rs(r, ALNUM, 43)}', {{ api_host: 'https://eu.i.posthog.com' }})"
    ),
    # Mapbox docs: public tokens "pk." are meant for client-side maps.
    "mapbox_public_token": lambda r: (
        f"mapboxgl.accessToken = 'pk.{b64url(compact_json({'u': rs(r, LOWER, 8), 'a': rs(r, LOWER_ALNUM, 25)}).encode())}.{rs(r, B64URL, 22)}';"
    ),
    # Sentry docs: "DSNs are safe to keep public" (the key in it only allows sending events).
    "sentry_dsn": lambda r: (
        f"SENTRY_DSN=https://{rs(r, HEX, 32)}@o{rs(r, DIGITS, 6)}.ingest.sentry.io/{rs(r, DIGITS, 7)}"
    ),
    # Algolia docs: the search-only API key is meant for the frontend; the admin key is the secret one.
    "algolia_search_only_key": lambda r: (
        f"const search = algoliasearch('{rs(r, UPPER_ALNUM, 10)}', '{rs(r, HEX, 32)}'); // search-only key, public"
    ),
    # Google reCAPTCHA docs: the site key is embedded in the page; the secret key is not.
    "recaptcha_site_key": lambda r: f'<div class="g-recaptcha" data-sitekey="6L{rs(r, B64URL, 38)}"></div>',
    # Supabase docs: the anon key is safe in a browser when row level security is on.
    "supabase_anon_key": lambda r: (
        "SUPABASE_ANON_KEY="
        + b64url(compact_json({"alg": "HS256", "typ": "JWT"}).encode())
        + "."
        + b64url(
            compact_json(
                {"iss": "supabase", "ref": rs(r, LOWER, 20), "role": "anon", "iat": 1700000000}
            ).encode()
        )
        + "."
        + rs(r, B64URL, 43)
        + "  # public, RLS enforced"
    ),
    # Twilio docs: the Account SID identifies the account; the auth token is the secret.
    "twilio_account_sid": lambda r: f"Account SID AC{rs(r, HEX, 32)} (the auth token is in the vault)",
    "oauth_client_id": lambda r: r.choice(
        [
            f"client_id: {rs(r, DIGITS, 12)}-{rs(r, LOWER_ALNUM, 32)}.apps.googleusercontent.com",
            f"GitHub App client ID Iv1.{rs(r, HEX, 16)}",
        ]
    ),
    "crypto_address": lambda r: r.choice(
        [
            f"donations: 0x{rs(r, HEX, 40)}",
            f"send refunds to bc1q{rs(r, BASE32_LOWER.replace('b', '').replace('i', '').replace('o', ''), 38)}",
        ]
    ),
    "k8s_resource_names": lambda r: (
        f"pod web-{rs(r, LOWER_ALNUM, 10)}-{rs(r, LOWER_ALNUM, 5)} OOMKilled; configmap kube-root-ca.crt; secret name app-token-{rs(r, LOWER_ALNUM, 5)}"
    ),
    "public_id_near_secret_words": lambda r: r.choice(
        [
            f"the token count for doc {rs(r, HEX, 24)} exceeded the limit",
            f"primary key {rs(r, DIGITS, 18)} duplicated after the import",
            f"key id kid={rs(r, B64URL, 43)} from the JWKS endpoint (public)",
            f"secret scanning alert #{r.randint(1, 300)} closed as false positive for commit {_sha(r)}",
        ]
    ),
}

LOOKALIKES_PER_KIND = 22


def lookalikes(r: random.Random) -> list[Sample]:
    # Kinds with a short list of fixed texts (documented placeholders, prose) would repeat; a repeated text
    # would count one false positive several times, so each text appears once.
    seen: set[str] = set()
    out: list[Sample] = []
    for name, make in LOOKALIKES.items():
        for _ in range(LOOKALIKES_PER_KIND):
            text = make(r)
            if text not in seen:
                seen.add(text)
                out.append(Sample(name, "lookalike", text))
    return out


def ninth_credentials(seed: int = SEED) -> list[Credential]:
    return credentials(random.Random(seed))


def ninth_part(seed: int = SEED) -> list[Sample]:
    r = random.Random(seed)
    return [c.sample for c in credentials(r)] + lookalikes(r)
