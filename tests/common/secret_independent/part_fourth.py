"""The fourth independent part of the secret corpus: credentials generated from the formats the providers
document (token prefixes, lengths, alphabets, connection-string and key-file shapes), written without
reading the filter's rules, in memory texts of our own invention, with disguises and look-alikes.

Every value is random from a fixed seed; no real token is copied. Where a comment says "vendor docs", the
shape is the one the provider's documentation or its published token-format announcement describes.
"""

import base64
import hashlib
import json
import random
import re
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 4_061_2026

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIG = string.digits
ALNUM = UPPER + LOWER + DIG
LALNUM = LOWER + DIG
UALNUM = UPPER + DIG
HEX = "0123456789abcdef"
UHEX = HEX.upper()
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BASE32 = UPPER + "234567"

# Words that make a real random token look like a placeholder at a glance.
PLACEHOLDER_WORDS = ("EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXX", "Test", "changeme")


def tok(r: random.Random, alphabet: str, n: int, word: str | None = None) -> str:
    """n random characters; with a word, the word sits in the middle when the alphabet can spell it."""
    s = "".join(r.choice(alphabet) for _ in range(n))
    if word and all(c in alphabet for c in word) and n >= len(word) + 8:
        at = (n - len(word)) // 2
        s = s[:at] + word + s[at + len(word) :]
    return s


def mid(s: str, n: int = 14) -> str:
    """A middle piece of a random body: what must not survive redaction."""
    n = max(8, min(n, len(s) - 2 if len(s) > 10 else len(s)))
    at = (len(s) - n) // 2
    return s[at : at + n]


def base62(n: int, width: int) -> str:
    digits = DIG + UPPER + LOWER
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = digits[d] + out
    return out.rjust(width, "0")


def b64s(b: bytes) -> str:
    return base64.b64encode(b).decode()


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt(r: random.Random, claims: dict, alg: str = "RS256", sig_bytes: int = 256) -> str:
    head = b64u(json.dumps({"alg": alg, "typ": "JWT", "kid": tok(r, URLSAFE, 22)}).encode())
    body = b64u(json.dumps(claims).encode())
    return f"{head}.{body}.{b64u(r.randbytes(sig_bytes))}"


def pem_body(r: random.Random, nbytes: int) -> str:
    raw = b64s(r.randbytes(nbytes))
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


# A generator takes the rng and an optional placeholder word and returns (credential text, secret piece).
Gen = Callable[[random.Random, str | None], tuple[str, str]]


@dataclass(frozen=True)
class CredKind:
    kind: str
    group: str
    name: str  # the variable name people store it under
    gen: Gen
    multiline: bool = False


def prefixed(prefix: str, alphabet: str, n: int, suffix: str = "") -> Gen:
    def g(r: random.Random, w: str | None) -> tuple[str, str]:
        body = tok(r, alphabet, n, w)
        return prefix + body + suffix, mid(body)

    return g


def github_classic(prefix: str) -> Gen:
    # GitHub blog "Behind GitHub's new authentication token formats" (2021): prefix ghp_/gho_/ghu_/ghs_/ghr_,
    # 30 random base62 characters and a 6-character base62 CRC32 checksum.
    def g(r: random.Random, w: str | None) -> tuple[str, str]:
        body = tok(r, ALNUM, 30, w)
        return f"{prefix}{body}{base62(zlib.crc32(body.encode()), 6)}", mid(body)

    return g


def gen_github_fine(r, w):
    # GitHub docs: fine-grained personal access tokens start github_pat_, then 22 + "_" + 59 characters.
    a, b = tok(r, ALNUM, 22), tok(r, ALNUM, 59, w)
    return f"github_pat_{a}_{b}", mid(b, 16)


def gen_aws_secret(r, w):
    # AWS IAM docs: secret access key is 40 characters (base64 alphabet), e.g. the documented wJalrXUtnFEMI/...
    s = tok(r, B64, 40, w)
    return s, mid(s, 16)


def gen_aws_pair(r, w):
    # AWS CLI docs: ~/.aws/credentials with aws_access_key_id (AKIA + 16 base32 chars) and the 40-char secret.
    kid = "AKIA" + tok(r, BASE32, 16)
    s = tok(r, B64, 40, w)
    return f"aws_access_key_id = {kid}\naws_secret_access_key = {s}", mid(s, 16)


def gen_gcp_sa(r, w):
    # Google Cloud IAM docs: a service-account key file is JSON with type, project_id, private_key_id,
    # private_key (PKCS#8 PEM), client_email, client_id, token_uri.
    proj = f"{r.choice(['billing', 'etl', 'web', 'ml'])}-{r.randint(100000, 999999)}"
    body = pem_body(r, 1216)
    key = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n"
    doc = {
        "type": "service_account",
        "project_id": proj,
        "private_key_id": tok(r, HEX, 40),
        "private_key": key,
        "client_email": f"deployer@{proj}.iam.gserviceaccount.com",
        "client_id": "".join(r.choice(DIG) for _ in range(21)),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(doc, indent=2), body.split("\n")[3][10:32]


def gen_azure_conn(r, w):
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol=https;AccountName=...;
    # AccountKey=<88-char base64 of 64 bytes>;EndpointSuffix=core.windows.net
    key = b64s(r.randbytes(64))
    acct = "st" + tok(r, LALNUM, 10)
    return (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        key[30:50],
    )


def gen_azure_sas(r, w):
    # Azure docs "Create SAS tokens": sv, ss, srt, sp, se, st, spr, sig (URL-encoded base64 HMAC-SHA256).
    sig = b64s(r.randbytes(32))
    while max(len(x) for x in re.split(r"[+/=]", sig)) < 12:
        sig = b64s(r.randbytes(32))
    enc = quote(sig, safe="")
    q = f"sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2027-0{r.randint(1, 9)}-15T18:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={enc}"
    acct = "st" + tok(r, LALNUM, 9)
    return f"https://{acct}.blob.core.windows.net/backups?{q}", max(re.split(r"[+/=]", sig), key=len)


def gen_azure_client_secret(r, w):
    # Microsoft Entra app client secrets (2022+): 3 chars, a digit, "Q~", then 34 chars of [A-Za-z0-9_.~-].
    tail = tok(r, ALNUM + "_.~-", 34, w)
    return tok(r, ALNUM, 3) + r.choice(DIG) + "Q~" + tail, mid(tail)


def gen_alibaba(r, w):
    # Alibaba Cloud RAM docs: AccessKey ID starts LTAI (24 chars total), AccessKey secret 30 characters.
    kid = "LTAI" + tok(r, ALNUM, 20)
    sec = tok(r, ALNUM, 30, w)
    return f"{kid}\n{sec}", mid(sec)


def gen_tencent(r, w):
    # Tencent Cloud CAM docs: SecretId begins AKID (36 chars), SecretKey 32 characters.
    sid = "AKID" + tok(r, ALNUM, 32, w)
    return sid, mid(sid[4:])


def gen_huawei(r, w):
    # Huawei Cloud docs: access key (AK) 20 uppercase alnum, secret access key (SK) 40 alnum, credentials.csv.
    ak = tok(r, UALNUM, 20)
    sk = tok(r, ALNUM, 40, w)
    return f"{ak},{sk}", mid(sk)


def gen_scaleway(r, w):
    # Scaleway docs: access key "SCW" + 17 chars; secret key is a UUID.
    ak = "SCW" + tok(r, UALNUM, 17)
    u = uuid(r)
    return f"{ak} / {u}", u[9:27]


def uuid(r: random.Random) -> str:
    h = tok(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def gen_k8s_bootstrap(r, w):
    # Kubernetes docs "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}.
    a, b = tok(r, LALNUM, 6), tok(r, LALNUM, 16)
    return f"{a}.{b}", b[2:14]


def gen_k8s_sa_jwt(r, w):
    # Kubernetes docs: service-account tokens are JWTs (RS256) with iss kubernetes/serviceaccount.
    t = jwt(
        r,
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "kubernetes.io/serviceaccount/secret.name": "deployer-token-" + tok(r, LALNUM, 5),
            "sub": "system:serviceaccount:ci:deployer",
        },
    )
    sig = t.rsplit(".", 1)[1]
    return t, mid(sig, 20)


def gen_vault(r, w):
    # HashiCorp Vault 1.10 docs "Token prefixes": service tokens hvs. + base62 (about 90 chars total).
    b = tok(r, ALNUM, 91, w)
    return "hvs." + b, mid(b, 20)


def gen_tfc(r, w):
    # Terraform Cloud/HCP: user/team tokens "<14 chars>.atlasv1.<67 chars>".
    a, b = tok(r, ALNUM, 14), tok(r, ALNUM, 67, w)
    return f"{a}.atlasv1.{b}", mid(b, 16)


def gen_slack_bot(r, w):
    # Slack docs "Token types": bot tokens xoxb-<team digits>-<bot digits>-<24 alnum>.
    body = tok(r, ALNUM, 24, w)
    return f"xoxb-{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-{body}", mid(body)


def gen_slack_user(r, w):
    # Slack docs: user tokens xoxp-<digits>-<digits>-<digits>-<32 hex>.
    body = tok(r, HEX, 32)
    return (
        f"xoxp-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-{r.randint(10**12, 10**13)}-{body}",
        mid(body),
    )


def gen_slack_app(r, w):
    # Slack docs: app-level tokens xapp-1-A<id>-<digits>-<64 hex>.
    body = tok(r, HEX, 64)
    return f"xapp-1-A{tok(r, UALNUM, 10)}-{r.randint(10**12, 10**13)}-{body}", mid(body, 20)


def gen_slack_webhook(r, w):
    # Slack docs "Incoming webhooks": https://hooks.slack.com/services/T.../B.../<24 alnum>.
    body = tok(r, ALNUM, 24, w)
    return f"https://hooks.slack.com/services/T{tok(r, UALNUM, 8)}/B{tok(r, UALNUM, 10)}/{body}", mid(body)


def gen_discord_bot(r, w):
    # Discord developer docs: bot token = base64(user id) . timestamp (6) . HMAC (27-38 chars).
    uid = str(r.randint(10**17, 10**18))
    hm = tok(r, URLSAFE, 38, w)
    return f"{b64u(uid.encode())}.{tok(r, URLSAFE, 6)}.{hm}", mid(hm)


def gen_discord_webhook(r, w):
    # Discord docs "Webhook resource": https://discord.com/api/webhooks/<id>/<token 68 chars>.
    t = tok(r, URLSAFE, 68, w)
    return f"https://discord.com/api/webhooks/{r.randint(10**17, 10**18)}/{t}", mid(t, 20)


def gen_telegram(r, w):
    # Telegram Bot API docs: token "<bot id digits>:<35 chars>", e.g. 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11.
    t = "AA" + tok(r, URLSAFE, 33, w)
    return f"{r.randint(10**8, 10**10)}:{t}", mid(t)


def gen_teams_webhook(r, w):
    # Microsoft Teams incoming webhook URL: <tenant>.webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/<32 hex>/<guid>
    h = tok(r, HEX, 32)
    return (
        f"https://contoso{r.randint(1, 99)}.webhook.office.com/webhookb2/{uuid(r)}@{uuid(r)}/IncomingWebhook/{h}/{uuid(r)}",
        mid(h),
    )


def gen_matrix(r, w):
    # Synapse access tokens: syt_<base64 localpart>_<20 random>_<6 checksum>.
    body = tok(r, ALNUM, 20, w)
    return f"syt_{b64u(b'ops-bot')}_{body}_{tok(r, ALNUM, 6)}", mid(body)


def gen_braintree(r, w):
    # Braintree/PayPal docs: access_token$production$<merchant id 16>$<32 hex>.
    h = tok(r, HEX, 32)
    return f"access_token$production${tok(r, LALNUM, 16)}${h}", mid(h)


def gen_mercadopago(r, w):
    # Mercado Pago docs: production access token APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    h = tok(r, HEX, 32)
    return f"APP_USR-{tok(r, DIG, 16)}-{tok(r, DIG, 6)}-{h}-{tok(r, DIG, 9)}", mid(h)


def gen_adyen(r, w):
    # Adyen docs: API keys begin "AQE", long base64-like strings with "=" and "-" separators.
    a = tok(r, ALNUM, 40, w)
    return f"AQE{tok(r, ALNUM, 30)}{a}=-{b64s(r.randbytes(33))}-{tok(r, ALNUM, 12)}", mid(a)


def gen_razorpay(r, w):
    # Razorpay docs: key id rzp_live_<14>, key secret 24 alnum.
    s = tok(r, ALNUM, 24, w)
    return f"rzp_live_{tok(r, ALNUM, 14)}:{s}", mid(s)


def password(r: random.Random, w: str | None = None) -> str:
    words = ["Harbor", "violet", "Quartz", "mango", "Nimbus", "cobalt", "Falcon", "tundra", "Pepper", "orbit"]
    p = r.choice(words) + r.choice(["-", "_", "!", "."]) + r.choice(words) + str(r.randint(10, 9999))
    p += tok(r, ALNUM, 6, None) + r.choice("#%*$")
    if w:
        p = p[:6] + w + p[6:]
    return p


def url_cred(scheme: str, host_fmt: str, user: str, suffix: str) -> Gen:
    def g(r: random.Random, w: str | None) -> tuple[str, str]:
        p = password(r, w).replace("#", "~").replace("%", "~")
        host = host_fmt.format(r=tok(r, LALNUM, 6), n=r.randint(1, 9))
        return f"{scheme}://{user}:{p}@{host}{suffix}", p[2:-2]

    return g


def gen_pgpass(r, w):
    # PostgreSQL docs "The Password File": hostname:port:database:username:password.
    p = password(r, w).replace(":", "~")
    return f"db-{tok(r, LALNUM, 4)}.internal:5432:orders:app_rw:{p}", p[2:-2]


def gen_jdbc_mssql(r, w):
    # Microsoft JDBC docs: jdbc:sqlserver://host:1433;databaseName=...;user=...;password=...;
    p = password(r, w).replace(";", "~")
    return (
        f"jdbc:sqlserver://sql-{tok(r, LALNUM, 5)}.corp:1433;databaseName=ledger;user=svc_ledger;password={p};encrypt=true",
        p[2:-2],
    )


def gen_azure_sql(r, w):
    # Azure SQL ADO.NET connection string: Server=tcp:<x>.database.windows.net,1433;...;Password=...;
    p = password(r, w).replace(";", "~")
    return (
        f"Server=tcp:{tok(r, LALNUM, 8)}.database.windows.net,1433;Initial Catalog=crm;User ID=crmadmin;Password={p};Encrypt=True;",
        p[2:-2],
    )


def gen_docker_auth(r, w):
    # Docker docs: ~/.docker/config.json "auths": {"registry": {"auth": base64("user:password")}}.
    raw = b64s(f"ci-robot:{password(r, w)}".encode())
    return json.dumps({"auths": {"registry.example-corp.io": {"auth": raw}}}, indent=2), mid(raw, 16)


def gen_netrc(r, w):
    # GNU inetutils / curl docs: .netrc "machine <host> login <user> password <password>".
    p = password(r, w)
    return f"machine git.{tok(r, LALNUM, 5)}.dev login deploy password {p}", p[2:-2]


def gen_npmrc(r, w):
    # npm docs: granular tokens npm_ + 36 base62; .npmrc //registry.npmjs.org/:_authToken=...
    b = tok(r, ALNUM, 36, w)
    return f"//registry.npmjs.org/:_authToken=npm_{b}", mid(b)


def gen_pypi(r, w):
    # PyPI docs "API tokens": pypi- prefix, a macaroon in base64 starting AgEIcHlwaS5vcmc.
    b = b64u(r.randbytes(120))
    return "pypi-AgEIcHlwaS5vcmc" + b, mid(b, 20)


def gen_pypirc(r, w):
    # Packaging docs .pypirc: [pypi] username = __token__ password = pypi-...
    b = b64u(r.randbytes(100))
    return f"[pypi]\nusername = __token__\npassword = pypi-AgENdGVzdC5weXBpLm9yZw{b}", mid(b, 20)


def gen_sentry_dsn(r, w):
    # Sentry docs: DSN https://<public key 32 hex>@o<org>.ingest.sentry.io/<project>; auth token sntryu_.
    h = tok(r, HEX, 64)
    return f"sntryu_{h}", mid(h, 20)


def gen_grafana_sa(r, w):
    # Grafana docs: service-account tokens glsa_<32 alnum>_<8 hex checksum>.
    b = tok(r, ALNUM, 32, w)
    return f"glsa_{b}_{tok(r, HEX, 8)}", mid(b)


def gen_dynatrace(r, w):
    # Dynatrace docs "Access tokens": dt0c01.<24 public chars>.<64 secret chars>.
    s = tok(r, UALNUM, 64)
    return f"dt0c01.{tok(r, UALNUM, 24)}.{s}", mid(s, 20)


def gen_newrelic_license(r, w):
    # New Relic docs: license (ingest) keys are 40 characters ending in NRAL.
    b = tok(r, HEX, 36)
    return b + "NRAL", mid(b)


def gen_openai_legacy(r, w):
    # OpenAI legacy user keys: sk- + 20 + "T3BlbkFJ" + 20 (base62).
    a, b = tok(r, ALNUM, 20, w), tok(r, ALNUM, 20)
    return f"sk-{a}T3BlbkFJ{b}", mid(a, 12)


def gen_openai_proj(r, w):
    # OpenAI project keys: sk-proj- followed by a long base64url body.
    b = tok(r, URLSAFE, 156, w)
    return "sk-proj-" + b, mid(b, 24)


def gen_anthropic(r, w):
    # Anthropic console keys: sk-ant-api03- + 93 base64url chars + "AA".
    b = tok(r, URLSAFE, 93, w)
    return f"sk-ant-api03-{b}AA", mid(b, 20)


def gen_langsmith(r, w):
    # LangSmith docs: personal tokens lsv2_pt_<32 hex>_<10 hex>.
    h = tok(r, HEX, 32)
    return f"lsv2_pt_{h}_{tok(r, HEX, 10)}", mid(h)


def gen_airtable(r, w):
    # Airtable docs "Personal access tokens": pat<14>.<64 hex>.
    h = tok(r, HEX, 64)
    return f"pat{tok(r, ALNUM, 14)}.{h}", mid(h, 20)


def gen_asana(r, w):
    # Asana personal access tokens: 1/<user gid>:<32 hex> (newer: 2/<gid>/<gid>:<32 hex>).
    h = tok(r, HEX, 32)
    return f"2/{r.randint(10**15, 10**16)}/{r.randint(10**15, 10**16)}:{h}", mid(h)


def gen_postman(r, w):
    # Postman docs: API keys PMAK-<24 hex>-<34 hex>.
    h = tok(r, HEX, 34)
    return f"PMAK-{tok(r, HEX, 24)}-{h}", mid(h)


def gen_hubspot(r, w):
    # HubSpot private app tokens: pat-<region>-<uuid>.
    u = uuid(r)
    return f"pat-{r.choice(['na1', 'eu1'])}-{u}", u[4:30]


def gen_mailchimp(r, w):
    # Mailchimp docs: API key <32 hex>-us<dc>.
    h = tok(r, HEX, 32)
    return f"{h}-us{r.randint(1, 21)}", mid(h)


def gen_twitter_bearer(r, w):
    # X/Twitter API v2 app-only bearer tokens: "AAAAAAAAAAAAAAAAAAAAA" + percent-encoded base64 body.
    b = tok(r, ALNUM, 60, w)
    return "AAAAAAAAAAAAAAAAAAAAA" + tok(r, ALNUM, 20) + "%3D" + b, mid(b, 20)


def gen_basic_header(r, w):
    # RFC 7617: Authorization: Basic base64(user:password).
    raw = b64s(f"svc-report:{password(r, w)}".encode())
    return f"Authorization: Basic {raw}", mid(raw, 16)


def gen_ssh_key(r, w):
    # OpenSSH PROTOCOL.key: -----BEGIN OPENSSH PRIVATE KEY----- base64 starting b3BlbnNzaC1rZXktdjE.
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" + b64s(r.randbytes(300))
    lines = "\n".join(body[i : i + 70] for i in range(0, len(body), 70))
    return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{lines}\n-----END OPENSSH PRIVATE KEY-----", body[150:172]


def gen_rsa_pem(r, w):
    # RFC 7468 / PKCS#1: -----BEGIN RSA PRIVATE KEY----- (base64 of DER starting MII...).
    body = "MIIEpAIBAAKCAQEA" + b64s(r.randbytes(1170))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----", body[200:222]


def gen_ec_pem(r, w):
    # RFC 5915: -----BEGIN EC PRIVATE KEY----- (P-256 keys start MHcCAQEE).
    body = "MHcCAQEEI" + b64s(r.randbytes(80))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN EC PRIVATE KEY-----\n{lines}\n-----END EC PRIVATE KEY-----", body[20:40]


def gen_supabase_service(r, w):
    # Supabase docs: service_role key is an HS256 JWT with role "service_role".
    t = jwt(
        r,
        {
            "iss": "supabase",
            "ref": tok(r, LOWER, 20),
            "role": "service_role",
            "iat": 1700000000,
            "exp": 2015000000,
        },
        "HS256",
        32,
    )
    return t, mid(t.rsplit(".", 1)[1], 20)


def gen_flyio(r, w):
    # Fly.io docs: tokens "FlyV1 fm2_<base64 macaroon>".
    b = b64s(r.randbytes(150))
    return f"FlyV1 fm2_{b}", mid(b, 20)


def gen_mongo(r, w):
    # MongoDB docs "Connection strings": mongodb+srv://<user>:<password>@cluster0.<id>.mongodb.net/...
    p = password(r, w).replace("%", "~").replace("#", "~")
    return (
        f"mongodb+srv://app_user:{p}@cluster0.{tok(r, LALNUM, 5)}.mongodb.net/shop?retryWrites=true&w=majority",
        p[2:-2],
    )


def gen_snowflake(r, w):
    # Snowflake SQLAlchemy docs: snowflake://<user>:<password>@<account>/<db>/<schema>?warehouse=...
    p = password(r, w).replace("%", "~").replace("#", "~")
    return (
        f"snowflake://etl_svc:{p}@xy{r.randint(10000, 99999)}.eu-central-1/analytics/public?warehouse=LOAD_WH",
        p[2:-2],
    )


def gen_git_url(r, w):
    # Azure DevOps docs: PATs used as git password; 52 base32-lowercase characters.
    p = tok(r, LOWER + "234567", 52, w)
    return f"https://build:{p}@dev.azure.com/contoso/infra/_git/platform", mid(p, 16)


K = CredKind
KINDS: list[CredKind] = [
    # ---- cloud
    K("aws_access_key_id", "cloud", "AWS_ACCESS_KEY_ID", prefixed("AKIA", BASE32, 16)),  # AWS IAM: AKIA + 16
    K("aws_temp_access_key_id", "cloud", "AWS_ACCESS_KEY_ID", prefixed("ASIA", BASE32, 16)),  # STS: ASIA + 16
    # AWS IAM docs: 40-char secret access key
    K("aws_secret_access_key", "cloud", "AWS_SECRET_ACCESS_KEY", gen_aws_secret),
    # AWS CLI docs: ~/.aws/credentials
    K("aws_credentials_file", "cloud", "", gen_aws_pair, True),
    K("gcp_api_key", "cloud", "GOOGLE_API_KEY", prefixed("AIza", URLSAFE, 35)),  # Google: AIza + 35
    # Google Cloud IAM docs: key file JSON
    K("gcp_service_account_json", "cloud", "GOOGLE_APPLICATION_CREDENTIALS_JSON", gen_gcp_sa, True),
    # Azure Storage docs: AccountKey=
    K("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", gen_azure_conn),
    # Azure docs: SAS query with sig=
    K("azure_sas_url", "cloud", "BACKUP_SAS_URL", gen_azure_sas),
    # Entra ID: <3><digit>Q~<34>
    K("azure_client_secret", "cloud", "AZURE_CLIENT_SECRET", gen_azure_client_secret),
    K(
        "digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", prefixed("dop_v1_", HEX, 64)
    ),  # DO docs: dop_v1_ + 64 hex
    # Alibaba RAM docs: LTAI id + 30-char secret
    K("alibaba_access_key", "cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", gen_alibaba, True),
    # Tencent CAM docs: AKID + 32
    K("tencent_secret_id", "cloud", "TENCENTCLOUD_SECRET_ID", gen_tencent),
    # Huawei docs: AK 20 + SK 40 (credentials.csv)
    K("huawei_ak_sk", "cloud", "HUAWEICLOUD_SDK_SK", gen_huawei),
    # Scaleway docs: SCW + 17, secret is a UUID
    K("scaleway_keys", "cloud", "SCW_SECRET_KEY", gen_scaleway),
    K("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", prefixed("", URLSAFE, 44)),  # IBM: 44-char API key
    K("linode_token", "cloud", "LINODE_TOKEN", prefixed("", HEX, 64)),  # Linode PAT: 64 hex
    K("hetzner_cloud_token", "cloud", "HCLOUD_TOKEN", prefixed("", ALNUM, 64)),  # Hetzner: 64 alnum
    K("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", prefixed("", URLSAFE, 40)),  # CF: 40 chars
    K("yandex_cloud_api_key", "cloud", "YC_API_KEY", prefixed("AQVN", URLSAFE, 36)),  # Yandex: AQVN...
    # Kubernetes docs: [a-z0-9]{6}.[a-z0-9]{16}
    K("k8s_bootstrap_token", "cloud", "token", gen_k8s_bootstrap),
    # Kubernetes docs: RS256 JWT
    K("k8s_service_account_jwt", "cloud", "token", gen_k8s_sa_jwt),
    # Vault 1.10 docs: hvs. prefix
    K("vault_service_token", "cloud", "VAULT_TOKEN", gen_vault),
    # OpenSSH PROTOCOL.key
    K("openssh_private_key", "cloud", "", gen_ssh_key, True),
    # RFC 7468 PKCS#1 PEM
    K("rsa_private_key_pem", "cloud", "", gen_rsa_pem, True),
    # RFC 5915 PEM
    K("ec_private_key_pem", "cloud", "", gen_ec_pem, True),
    # Fly.io docs: FlyV1 fm2_<macaroon>
    K("flyio_token", "cloud", "FLY_API_TOKEN", gen_flyio),
    # ---- ci
    # GitHub token-format blog: ghp_ + 30 + crc32
    K("github_pat_classic", "ci", "GITHUB_TOKEN", github_classic("ghp_")),
    # GitHub token-format blog: gho_
    K("github_oauth_token", "ci", "GH_TOKEN", github_classic("gho_")),
    # GitHub token-format blog: ghs_
    K("github_app_installation_token", "ci", "GITHUB_TOKEN", github_classic("ghs_")),
    # GitHub docs: github_pat_<22>_<59>
    K("github_fine_grained_pat", "ci", "GH_PAT", gen_github_fine),
    K("gitlab_pat", "ci", "GITLAB_TOKEN", prefixed("glpat-", URLSAFE, 20)),  # GitLab docs: glpat- prefix
    K("gitlab_runner_token", "ci", "RUNNER_TOKEN", prefixed("glrt-", URLSAFE, 20)),  # GitLab 16: glrt-
    K("gitlab_trigger_token", "ci", "TRIGGER_TOKEN", prefixed("glptt-", HEX, 40)),  # glptt- + 40 hex
    K("circleci_token", "ci", "CIRCLE_TOKEN", prefixed("", HEX, 40)),  # CircleCI personal token: 40 hex
    K("buildkite_token", "ci", "BUILDKITE_API_TOKEN", prefixed("bkua_", HEX, 40)),  # Buildkite: bkua_ + 40
    K("jenkins_api_token", "ci", "JENKINS_API_TOKEN", prefixed("11", HEX, 32)),  # Jenkins: 11 + 32 hex
    # Azure DevOps docs: PAT as git password
    K("azure_devops_pat_url", "ci", "AZDO_REMOTE", gen_git_url),
    K("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", prefixed("ATBB", ALNUM, 32)),  # ATBB...
    # HCP Terraform: <14>.atlasv1.<67>
    K("terraform_cloud_token", "ci", "TFE_TOKEN", gen_tfc),
    K("pulumi_access_token", "ci", "PULUMI_ACCESS_TOKEN", prefixed("pul-", HEX, 40)),  # Pulumi: pul- + 40 hex
    K("sonarqube_token", "ci", "SONAR_TOKEN", prefixed("squ_", HEX, 40)),  # SonarQube 9.5+: squ_ + 40 hex
    K(
        "doppler_service_token", "ci", "DOPPLER_TOKEN", prefixed("dp.st.prd.", ALNUM, 43)
    ),  # Doppler: dp.st.<config>.<43>
    # ---- chat
    # Slack token types: xoxb-
    K("slack_bot_token", "chat", "SLACK_BOT_TOKEN", gen_slack_bot),
    # Slack token types: xoxp-
    K("slack_user_token", "chat", "SLACK_USER_TOKEN", gen_slack_user),
    # Slack token types: xapp-
    K("slack_app_token", "chat", "SLACK_APP_TOKEN", gen_slack_app),
    # Slack incoming webhooks
    K("slack_webhook_url", "chat", "SLACK_WEBHOOK_URL", gen_slack_webhook),
    # Discord docs: id.ts.hmac
    K("discord_bot_token", "chat", "DISCORD_TOKEN", gen_discord_bot),
    # Discord webhook resource
    K("discord_webhook_url", "chat", "DISCORD_WEBHOOK", gen_discord_webhook),
    # Telegram Bot API: <id>:<35>
    K("telegram_bot_token", "chat", "TELEGRAM_BOT_TOKEN", gen_telegram),
    # Teams incoming webhook URL
    K("teams_webhook_url", "chat", "TEAMS_WEBHOOK_URL", gen_teams_webhook),
    K("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", prefixed("", HEX, 32)),  # Twilio: 32 hex auth token
    K("twilio_api_key_sid", "chat", "TWILIO_API_KEY", prefixed("SK", HEX, 32)),  # Twilio: SK + 32 hex
    # Synapse: syt_<b64 user>_<20>_<6>
    K("matrix_access_token", "chat", "MATRIX_ACCESS_TOKEN", gen_matrix),
    K("mattermost_token", "chat", "MM_ACCESS_TOKEN", prefixed("", LALNUM, 26)),  # Mattermost: 26 chars
    K("zulip_api_key", "chat", "api_key", prefixed("", ALNUM, 32)),  # zuliprc: 32-char key
    # ---- payment
    K("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", prefixed("sk_live_", ALNUM, 99)),  # Stripe docs
    K("stripe_restricted_key", "payment", "STRIPE_RK", prefixed("rk_live_", ALNUM, 99)),  # rk_live_
    # Stripe docs: whsec_ signing secret
    K("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", prefixed("whsec_", ALNUM, 32)),
    # Braintree: access_token$production$...
    K("braintree_access_token", "payment", "BT_ACCESS_TOKEN", gen_braintree),
    K("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", prefixed("EAAA", URLSAFE, 60)),  # Square: EAAA
    # Square: sq0csp- application secret
    K("square_oauth_secret", "payment", "SQUARE_APP_SECRET", prefixed("sq0csp-", URLSAFE, 43)),
    # Adyen: AQE... API key
    K("adyen_api_key", "payment", "ADYEN_API_KEY", gen_adyen),
    # Razorpay: rzp_live_ id + 24 secret
    K("razorpay_key", "payment", "RAZORPAY_KEY", gen_razorpay),
    K("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", prefixed("sk_live_", HEX, 40)),  # Paystack
    K(
        "flutterwave_secret_key", "payment", "FLW_SECRET_KEY", prefixed("FLWSECK-", HEX, 32, "-X")
    ),  # Flutterwave
    # Mercado Pago: APP_USR-...
    K("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", gen_mercadopago),
    K("mollie_api_key", "payment", "MOLLIE_API_KEY", prefixed("live_", ALNUM, 30)),  # Mollie: live_ + 30
    # Xendit docs: xnd_production_ + 60
    K("xendit_secret_key", "payment", "XENDIT_SECRET_KEY", prefixed("xnd_production_", ALNUM, 60)),
    # ---- database
    K(
        # libpq docs: postgresql://user:password@host:port/db
        "postgres_url",
        "database",
        "DATABASE_URL",
        url_cred("postgresql", "pg-{r}.eu-west-1.rds.amazonaws.com", "app", ":5432/app"),
    ),
    # MySQL URI: mysql://user:password@host/db
    K(
        "mysql_url",
        "database",
        "MYSQL_URL",
        url_cred("mysql", "mysql-{n}.{r}.internal", "root", ":3306/shop"),
    ),
    # Redis URI: rediss://user:password@host:port/db
    K(
        "redis_url",
        "database",
        "REDIS_URL",
        url_cred("rediss", "cache-{r}.redis.cache.windows.net", "default", ":6380/0"),
    ),
    # RabbitMQ URI spec: amqps://user:password@host/vhost
    K(
        "amqp_url",
        "database",
        "CLOUDAMQP_URL",
        url_cred("amqps", "{r}.rmq.cloudamqp.com", "vhost_ops", "/vhost_ops"),
    ),
    # MongoDB docs: mongodb+srv://
    K("mongodb_srv_url", "database", "MONGODB_URI", gen_mongo),
    # PostgreSQL docs: .pgpass
    K("pgpass_line", "database", "", gen_pgpass),
    # Microsoft JDBC docs: password=
    K("jdbc_sqlserver", "database", "spring.datasource.url", gen_jdbc_mssql),
    # Azure SQL ADO.NET: Password=
    K("azure_sql_connection", "database", "ConnectionStrings__Default", gen_azure_sql),
    # Snowflake SQLAlchemy URL
    K("snowflake_url", "database", "SNOWFLAKE_URL", gen_snowflake),
    # PlanetScale: pscale_pw_
    K("planetscale_password", "database", "PLANETSCALE_PASSWORD", prefixed("pscale_pw_", URLSAFE, 43)),
    # Supabase docs: service_role HS256 JWT
    K("supabase_service_role_key", "database", "SUPABASE_SERVICE_ROLE_KEY", gen_supabase_service),
    # Neon: napi_ + 64
    K("neon_api_key", "database", "NEON_API_KEY", prefixed("napi_", LALNUM, 64)),
    # a password under a secret name
    K("db_password_value", "database", "DB_PASSWORD", lambda r, w: (p := password(r, w), p[2:-2])),
    # ---- registry
    # npm docs: npm_ + 36 base62
    K("npm_token", "registry", "NPM_TOKEN", prefixed("npm_", ALNUM, 36)),
    # npm docs: .npmrc :_authToken=
    K("npmrc_auth_line", "registry", "", gen_npmrc),
    # PyPI docs: pypi-AgEIcHlwaS5vcmc...
    K("pypi_token", "registry", "PYPI_API_TOKEN", gen_pypi),
    # packaging docs: .pypirc __token__
    K("pypirc_file", "registry", "", gen_pypirc, True),
    # Docker Hub: dckr_pat_ + 27
    K("dockerhub_pat", "registry", "DOCKERHUB_TOKEN", prefixed("dckr_pat_", URLSAFE, 27)),
    # Docker docs: config.json auths.auth
    K("docker_config_auth", "registry", "", gen_docker_auth, True),
    # RubyGems: rubygems_ + 48 hex
    K("rubygems_api_key", "registry", "GEM_HOST_API_KEY", prefixed("rubygems_", HEX, 48)),
    # NuGet: oy2 + 43 lowercase
    K("nuget_api_key", "registry", "NUGET_API_KEY", prefixed("oy2", LALNUM, 43)),
    # crates.io: cio + 32
    K("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", prefixed("cio", ALNUM, 32)),
    # JFrog: AKCp API key
    K("artifactory_api_key", "registry", "ARTIFACTORY_API_KEY", prefixed("AKCp", ALNUM, 69)),
    # curl docs: .netrc machine/login/password
    K("netrc_entry", "registry", "", gen_netrc),
    # ---- observability
    K("datadog_api_key", "observability", "DD_API_KEY", prefixed("", HEX, 32)),  # Datadog: 32 hex
    K("datadog_app_key", "observability", "DD_APP_KEY", prefixed("", HEX, 40)),  # Datadog: 40 hex
    # New Relic docs: NRAK- user keys
    K("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", prefixed("NRAK-", UALNUM, 27)),
    # New Relic docs: 40 chars ending NRAL
    K("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", gen_newrelic_license),
    # Sentry: sntryu_ + 64 hex
    K("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", gen_sentry_dsn),
    # Grafana docs: glsa_<32>_<8 hex>
    K("grafana_service_account_token", "observability", "GRAFANA_TOKEN", gen_grafana_sa),
    # Grafana Cloud: glc_ + base64
    K("grafana_cloud_token", "observability", "GRAFANA_CLOUD_TOKEN", prefixed("glc_", B64, 120)),
    # Dynatrace docs: dt0c01.<24>.<64>
    K("dynatrace_token", "observability", "DT_API_TOKEN", gen_dynatrace),
    K(
        "honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", prefixed("hcxik_", LALNUM, 58)
    ),  # docs.honeycomb.io create-an-api-key: hcxik_ + id + secret, 58
    # Splunk HEC: a GUID token
    K("splunk_hec_token", "observability", "SPLUNK_HEC_TOKEN", lambda r, w: (u := uuid(r), u[4:30])),
    # PagerDuty: 20-char key, user keys u+
    K("pagerduty_api_token", "observability", "PAGERDUTY_TOKEN", prefixed("u+", URLSAFE, 18)),
    # Axiom: xaat- + UUID
    K("axiom_token", "observability", "AXIOM_TOKEN", lambda r, w: (u := "xaat-" + uuid(r), u[8:30])),
    # ---- ai
    # OpenAI legacy: sk-<20>T3BlbkFJ<20>
    K("openai_legacy_key", "ai", "OPENAI_API_KEY", gen_openai_legacy),
    # OpenAI: sk-proj-
    K("openai_project_key", "ai", "OPENAI_API_KEY", gen_openai_proj),
    # Anthropic: sk-ant-api03-...AA
    K("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", gen_anthropic),
    K("huggingface_token", "ai", "HF_TOKEN", prefixed("hf_", UPPER + LOWER, 34)),  # HF: hf_ + 34 letters
    # Cohere: 40-char key
    K("cohere_api_key", "ai", "CO_API_KEY", prefixed("", ALNUM, 40)),
    K("groq_api_key", "ai", "GROQ_API_KEY", prefixed("gsk_", ALNUM, 52)),  # Groq: gsk_ + 52
    K("replicate_token", "ai", "REPLICATE_API_TOKEN", prefixed("r8_", ALNUM, 37)),  # Replicate: r8_
    # Mistral: 32-char key
    K("mistral_api_key", "ai", "MISTRAL_API_KEY", prefixed("", ALNUM, 32)),
    # Perplexity: pplx- + 48
    K("perplexity_api_key", "ai", "PPLX_API_KEY", prefixed("pplx-", ALNUM, 48)),
    # DeepSeek: sk- + 32 hex
    K("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", prefixed("sk-", HEX, 32)),
    # Together: 64 hex
    K("together_api_key", "ai", "TOGETHER_API_KEY", prefixed("", HEX, 64)),
    # xAI: xai- + 80
    K("xai_api_key", "ai", "XAI_API_KEY", prefixed("xai-", ALNUM, 80)),
    # OpenRouter: sk-or-v1- + 64 hex
    K("openrouter_key", "ai", "OPENROUTER_API_KEY", prefixed("sk-or-v1-", HEX, 64)),
    # LangSmith: lsv2_pt_<32>_<10>
    K("langsmith_token", "ai", "LANGSMITH_API_KEY", gen_langsmith),
    # ---- saas
    K("shopify_admin_token", "saas", "SHOPIFY_ACCESS_TOKEN", prefixed("shpat_", HEX, 32)),  # Shopify: shpat_
    # SendGrid docs: SG.<22>.<43>
    K(
        # SendGrid docs: SG.<22>.<43>
        "sendgrid_api_key",
        "saas",
        "SENDGRID_API_KEY",
        lambda r, w: ((a := tok(r, URLSAFE, 43, w)) and f"SG.{tok(r, URLSAFE, 22)}.{a}", mid(a)),
    ),
    K("mailgun_api_key", "saas", "MAILGUN_API_KEY", prefixed("key-", HEX, 32)),  # Mailgun: key- + 32 hex
    # Atlassian: ATATT3xFfGF0...
    K("atlassian_api_token", "saas", "JIRA_API_TOKEN", prefixed("ATATT3xFfGF0", URLSAFE, 180)),
    K(
        "notion_token", "saas", "NOTION_TOKEN", prefixed("ntn_", ALNUM, 46)
    ),  # Notion docs: ntn_ (legacy secret_)
    # Notion legacy: secret_ + 43
    K("notion_legacy_secret", "saas", "NOTION_API_KEY", prefixed("secret_", ALNUM, 43)),
    # Linear: lin_api_ + 40
    K("linear_api_key", "saas", "LINEAR_API_KEY", prefixed("lin_api_", ALNUM, 40)),
    # Airtable docs: pat<14>.<64 hex>
    K("airtable_pat", "saas", "AIRTABLE_TOKEN", gen_airtable),
    # Figma: figd_
    K("figma_pat", "saas", "FIGMA_TOKEN", prefixed("figd_", URLSAFE, 40)),
    # HubSpot: pat-na1-<uuid>
    K("hubspot_private_app_token", "saas", "HUBSPOT_TOKEN", gen_hubspot),
    # Asana: 2/<gid>/<gid>:<32 hex>
    K("asana_pat", "saas", "ASANA_PAT", gen_asana),
    # Postman: PMAK-<24>-<34>
    K("postman_api_key", "saas", "POSTMAN_API_KEY", gen_postman),
    K("okta_api_token", "saas", "OKTA_API_TOKEN", prefixed("00", URLSAFE, 40)),  # Okta SSWS: 00 + 40
    # Mailchimp: <32 hex>-us<dc>
    K("mailchimp_api_key", "saas", "MAILCHIMP_API_KEY", gen_mailchimp),
    # X API: AAAA... bearer
    K("twitter_bearer_token", "saas", "TWITTER_BEARER_TOKEN", gen_twitter_bearer),
    K("dropbox_access_token", "saas", "DROPBOX_TOKEN", prefixed("sl.", URLSAFE, 138)),  # Dropbox: sl.
    # Contentful: CFPAT-
    K("contentful_pat", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", prefixed("CFPAT-", URLSAFE, 43)),
    # Heroku: HRKU- + UUID
    K("heroku_api_key", "saas", "HEROKU_API_KEY", lambda r, w: (u := "HRKU-" + uuid(r), u[8:30])),
    # Netlify: nfp_
    K("netlify_token", "saas", "NETLIFY_AUTH_TOKEN", prefixed("nfp_", ALNUM, 40)),
    # RFC 7617 Basic
    K("basic_auth_header", "saas", "", gen_basic_header),
    # Meta Graph API: EAA... tokens
    K("facebook_page_token", "saas", "FB_PAGE_TOKEN", prefixed("EAAG", ALNUM, 180)),
    # 32 hex under a secret name
    K("generic_api_key_hex", "saas", "api_key", prefixed("", HEX, 32)),
    # base64 under a secret name
    K("generic_auth_token_b64", "saas", "AUTH_TOKEN", prefixed("", B64, 44)),
]


# ----- contexts: (rng, name, value) -> text. Inline ones put the value on one line with its name.
def _name(name: str, alt: str = "API_KEY") -> str:
    return name or alt


INLINE: list[Callable[[random.Random, str, str], str]] = [
    lambda r, n, v: f"{_name(n)}={v}",
    lambda r, n, v: f'export {_name(n)}="{v}"',
    lambda r, n, v: (
        f"Set the staging secret today:\n\n```\n{_name(n)}={v}\n```\nTODO remind Olga to rotate it."
    ),
    lambda r, n, v: (
        f"$ curl -sS -H 'Authorization: Bearer {v}' https://api.internal.example/v2/ping\n{{\"ok\":true}}"
    ),
    lambda r, n, v: f"{_name(n).lower()}: {v}\nregion: eu-west-1\nretries: 3",
    lambda r, n, v: f'[default]\n{_name(n).lower()} = "{v}"\ntimeout = 30',
    lambda r, n, v: f'{{"service": "billing", "{_name(n).lower()}": "{v}", "enabled": true}}',
    lambda r, n, v: f'- name: {_name(n)}\n  value: "{v}"\n- name: LOG_LEVEL\n  value: info',
    lambda r, n, v: f'os.environ["{_name(n)}"] = "{v}"  # quick hack in the notebook, cell 14',
    lambda r, n, v: (
        f"Incident 2026-11-{r.randint(10, 28)}: the worker crashed on start; fixed by setting {_name(n)} to {v} in the systemd unit."
    ),
    lambda r, n, v: (
        f"@here le token pour la démo est {v} — merci de ne pas le partager en dehors de l'équipe"
    ),
    lambda r, n, v: f"Hola equipo, la clave nueva de producción es {v}; la anterior ya está revocada.",
    lambda r, n, v: f"新しいトークンはこちら: {v} (本番用なので扱いに注意)",
    lambda r, n, v: f"Zugangsdaten für das Monitoring: {_name(n)} = {v}",
    lambda r, n, v: f"| env | {_name(n)} |\n|-----|------|\n| prod | {v} |",
    lambda r, n, v: f'<add key="{_name(n)}" value="{v}" />',
    lambda r, n, v: f'variable "{_name(n).lower()}" {{\n  default   = "{v}"\n  sensitive = true\n}}',
    lambda r, n, v: f"  {r.randint(500, 2000)}  gh secret set {_name(n)} --body '{v}'",
    lambda r, n, v: (
        f"2026-12-0{r.randint(1, 5)}T0{r.randint(1, 9)}:12:44Z ERROR auth failed for key={v} status=401 retry=false"
    ),
    lambda r, n, v: f'const client = new Client({{ apiKey: "{v}", timeout: 5000 }});',
    lambda r, n, v: f'let token = "{v}".to_string(); // TODO: load from env before release',
    lambda r, n, v: f'{_name(n)} := "{v}" // Go test helper, moved to vault later',
    lambda r, n, v: (
        f"PR #{r.randint(100, 999)} description: wire the exporter. For local runs use {_name(n)}={v} (ask me for the prod one)."
    ),
    lambda r, n, v: (
        f"Subject: access for the new contractor\n\nHi Priya,\nhere is what you need: {v}\nBest, Tom"
    ),
    lambda r, n, v: (
        f"Screenshot of the admin page (transcribed): Key name: deploy-bot | Created: 3 days ago | Value: {v} | [Copy]"
    ),
    lambda r, n, v: (
        f'Traceback (most recent call last):\n  File "app.py", line 41, in <module>\n    client = connect(token="{v}")\nConnectionError: timed out'
    ),
    lambda r, n, v: f"Привет! Вот ключ для стенда: {v}. Не коммить его, пожалуйста.",
    lambda r, n, v: f"docker run -e {_name(n)}={v} -p 8080:8080 ghcr.io/acme/api:1.4.2",
    lambda r, n, v: f"      env:\n        {_name(n)}: {v}\n      run: make deploy",
    lambda r, n, v: (
        f"User preference: when calling the vendor API, use {v} as the credential (user said it's the sandbox-ish one)."
    ),
]

MULTI: list[Callable[[random.Random, str, str], str]] = [
    lambda r, n, v: f"Saved the key file for the staging deployer:\n\n{v}\n\nIt lives in 1Password too.",
    lambda r, n, v: f"```\n{v}\n```\nThis is what `cat` printed on the bastion host.",
    lambda r, n, v: (
        f"Runbook step 4 — restore credentials on the new runner:\n\ncat > ~/.creds <<'EOF'\n{v}\nEOF\nchmod 600 ~/.creds"
    ),
    lambda r, n, v: f"Nota: la configurazione completa è questa\n{v}\n(da spostare nel secret manager)",
    lambda r, n, v: (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  creds: |\n"
        + "\n".join("    " + line for line in v.splitlines())
    ),
]

DISGUISES = (
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "url_encoded",
    "base64",
    "split_line",
    "placeholder_word",
)
ZW = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u200f", "\u200e")


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _disguise(r: random.Random, how: str, name: str, value: str, secret: str) -> str:
    at = value.find(secret)
    cut = at + len(secret) // 2
    if how == "zero_width":
        ch = r.choice(ZW)
        if r.random() < 0.5:
            return value[:cut] + ch + value[cut:]
        # several invisibles spread through the secret piece
        piece = ch.join(secret[i : i + 4] for i in range(0, len(secret), 4))
        return value[:at] + piece + value[at + len(secret) :]
    if how == "soft_hyphen":
        return value[:cut] + "\u00ad" + value[cut:]
    if how == "bidi":
        ch = r.choice(BIDI)
        return (
            value[:cut] + ch + value[cut:] + ("\u202c" if ch in "\u202e\u202d" and r.random() < 0.5 else "")
        )
    if how == "fullwidth":
        if r.random() < 0.5:
            return _fullwidth(value)
        return value[:at] + _fullwidth(secret) + value[at + len(secret) :]
    if how == "url_encoded":
        if r.random() < 0.5:
            return "".join(f"%{b:02X}" for b in value.encode())
        return quote(f"{_name(name, 'token')}={value}", safe="")
    if how == "base64":
        if r.random() < 0.5:
            return b64s(value.encode())
        return b64s(f"{_name(name, 'TOKEN')}={value}\n".encode())
    if how == "split_line":
        return value[:cut] + r.choice(["\n", "\\\n    ", "\n  ", "\r\n"]) + value[cut:]
    raise ValueError(how)


# Contexts for disguised forms that no longer look like NAME=value.
ENCODED: list[Callable[[random.Random, str, str], str]] = [
    lambda r, n, v: f"https://auth.example-portal.net/callback?state=ab12&redirect=%2Fhome&{v}",
    lambda r, n, v: f"echo '{v}' | base64 -d >> .env   # restores the CI secret",
    lambda r, n, v: f"Blob from the vault export (don't ask): {v}",
    lambda r, n, v: f'{{"payload": "{v}", "encoding": "unknown"}}',
]


def _credentials(r: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    schedule = list(DISGUISES)
    k = 0
    for kind in KINDS:
        plan = ["plain", "plain", "plain"]
        for _ in range(4):
            plan.append(schedule[k % len(schedule)])
            k += 1
        for how in plan:
            word = r.choice(PLACEHOLDER_WORDS) if how == "placeholder_word" else None
            value, secret = kind.gen(r, word)
            assert secret and secret in value and len(secret) >= 8, kind.kind
            if how == "placeholder_word" and word not in value:
                how = "zero_width"  # the alphabet cannot spell the word; disguise another way
            if how in ("plain", "placeholder_word"):
                shown = value
            else:
                shown = _disguise(r, how, kind.name, value, secret)
            if how in ("url_encoded", "base64"):
                ctx = r.choice(ENCODED)
            else:
                ctx = r.choice(MULTI if kind.multiline or "\n" in value else INLINE)
            # The same context with the same draws around the undisguised value: the text before disguising.
            state = r.getstate()
            text = ctx(r, kind.name, shown)
            again = random.Random()
            again.setstate(state)
            raw_text = ctx(again, kind.name, value)
            out.append((Sample(kind.kind, kind.group, text, how, secret), raw_text))
    return out


# ----- look-alikes
def _sha(r: random.Random, n: int = 40) -> str:
    return tok(r, HEX, n)


LOOK: list[tuple[str, Callable[[random.Random], str]]] = [
    (
        "git_sha",
        lambda r: f"Reverted {_sha(r)} because it broke the arm64 build; the fix is in {_sha(r)[:7]}.",
    ),
    (
        "git_log_line",
        lambda r: f"commit {_sha(r)}\nAuthor: Dana <dana@example.org>\n\n    Bump parser to 2.3",
    ),
    (
        "sha256_release",
        lambda r: (
            f"Release v{r.randint(1, 9)}.{r.randint(0, 20)}.0 checksums:\n{_sha(r, 64)}  kenfold-linux-amd64.tar.gz\n{_sha(r, 64)}  kenfold-darwin-arm64.tar.gz"
        ),
    ),
    ("sha512_digest", lambda r: f"sha512sum of the backup: {_sha(r, 128)}"),
    ("md5_checksum", lambda r: f"MD5 ({tok(r, LOWER, 6)}.iso) = {_sha(r, 32)}"),
    ("uuid", lambda r: f"Memory {uuid(r)} supersedes {uuid(r)}; keep both for the audit."),
    ("ulid", lambda r: f"job id 01J{tok(r, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 23)} finished in 4.2s"),
    ("ksuid", lambda r: f"event_id={tok(r, ALNUM, 27)} type=order.created"),
    (
        "stripe_public_ids",
        lambda r: (
            f"Refunded pi_{tok(r, ALNUM, 24)} for customer cus_{tok(r, ALNUM, 14)} (invoice in_{tok(r, ALNUM, 24)})."
        ),
    ),
    (
        "stripe_key_placeholder",
        lambda r: (
            r.choice(["STRIPE_SECRET_KEY=sk_test_<your key here>", "STRIPE_SECRET_KEY=sk_live_..."])
            + f"  # see the dashboard, step {r.randint(1, 9)}"
        ),
    ),
    (
        "slack_ids",
        lambda r: (
            f"Post alerts to channel C{tok(r, UALNUM, 10)} and mention user U{tok(r, UALNUM, 10)}; team T{tok(r, UALNUM, 8)}."
        ),
    ),
    (
        "aws_arn",
        lambda r: (
            f"Role: arn:aws:iam::{tok(r, DIG, 12)}:role/deploy-{tok(r, LOWER, 5)}\nBucket: arn:aws:s3:::logs-{tok(r, LALNUM, 8)}"
        ),
    ),
    ("aws_account_id", lambda r: f"The prod account is {tok(r, DIG, 12)}, staging {tok(r, DIG, 12)}."),
    (
        "aws_documented_example",
        lambda r: r.choice(
            [
                "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # the example values from the AWS docs",
                "AWS docs use AKIAIOSFODNN7EXAMPLE as the sample access key id; do not paste real ones here.",
            ]
        ),
    ),
    ("request_id", lambda r: f"x-request-id: req_{tok(r, ALNUM, 24)}  x-amzn-RequestId: {uuid(r)}"),
    ("trace_id", lambda r: f"traceparent: 00-{_sha(r, 32)}-{_sha(r, 16)}-01"),
    (
        "base64_text",
        lambda r: (
            "decoded the header: "
            + b64s(
                r.choice(
                    [
                        "hello from the build farm, nothing to see",
                        "Quarterly report draft v3 - internal",
                        '{"theme":"dark","lang":"de"}',
                    ]
                ).encode()
                + str(r.randint(0, 999)).encode()
            )
        ),
    ),
    (
        "base64_image",
        lambda r: '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA' + b64s(r.randbytes(60)) + '">',
    ),
    (
        "npm_integrity",
        lambda r: (
            f'"integrity": "sha512-{b64s(r.randbytes(64))}",\n"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz"'
        ),
    ),
    ("yarn_lock_checksum", lambda r: f"  checksum: {_sha(r, 128)}\n  languageName: node"),
    (
        "env_reference",
        lambda r: (
            r.choice(
                [
                    "API_KEY=${API_KEY}",
                    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
                    'token = os.environ["TOKEN"]',
                    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
                    "DB_PASSWORD=$(cat /run/secrets/db_password)",
                    'const key = process.env.STRIPE_SECRET_KEY ?? "";',
                    "secret_key = var.secret_key",
                ]
            )
            + f"  # step {r.randint(1, 40)}"
        ),
    ),
    (
        "k8s_secret_ref",
        lambda r: (
            f"env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-{tok(r, LOWER, 4)}\n        key: password"
        ),
    ),
    (
        "ssh_public_key",
        lambda r: (
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64s(r.randbytes(32))[:43]} dev@laptop-{r.randint(1, 99)}"
        ),
    ),
    (
        "pem_public_key",
        lambda r: (
            f"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b64s(r.randbytes(40))}\n-----END PUBLIC KEY-----"
        ),
    ),
    (
        "css_hash",
        lambda r: (
            f'<link rel="stylesheet" href="/assets/app.{_sha(r, 8)}.css" integrity="sha384-{b64s(r.randbytes(48))}">'
        ),
    ),
    (
        "youtube_id",
        lambda r: (
            f"Talk recording: https://www.youtube.com/watch?v={tok(r, URLSAFE, 11)}&t={r.randint(10, 900)}s"
        ),
    ),
    ("webpack_chunk", lambda r: f"main.{_sha(r, 20)}.js  {r.randint(100, 900)} KiB  [emitted] [immutable]"),
    ("docker_digest", lambda r: f"FROM python:3.12-slim@sha256:{_sha(r, 64)}"),
    (
        "nix_store_path",
        lambda r: (
            f"/nix/store/{tok(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.{r.randint(1, 14)}"
        ),
    ),
    ("ipfs_cid", lambda r: f"pinned at ipfs://bafybei{tok(r, 'abcdefghijklmnopqrstuvwxyz234567', 51)}"),
    (
        "prose_about_secrets",
        lambda r: (
            r.choice(
                [
                    "Rotate the GitHub token every 90 days and store it only in the CI secret store.",
                    "Never paste Stripe live keys in chat; use restricted keys with the smallest scope.",
                    "La clé API doit être renouvelée chaque trimestre, voir la procédure dans le wiki.",
                    "The Slack bot token lives in Vault at secret/chat/bot; ask #platform for access.",
                    "Reminder: AWS access keys older than 90 days get flagged by the audit job.",
                ]
            )
            + f" (note {r.randint(1, 999)})"
        ),
    ),
    (
        "documented_placeholder",
        lambda r: (
            r.choice(
                [
                    "OPENAI_API_KEY=<your-openai-api-key>",
                    "export GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX  # replace",
                    "SLACK_BOT_TOKEN=xoxb-your-token",
                    "DATABASE_URL=postgres://user:password@localhost:5432/mydb",
                    'stripe.api_key = "sk_test_..."',
                    "HF_TOKEN=hf_xxx",
                ]
            )
            + f"  # from README section {r.randint(1, 12)}"
        ),
    ),
    (
        "semver_and_build",
        lambda r: (
            f"built {r.randint(1, 5)}.{r.randint(0, 30)}.{r.randint(0, 99)}+{_sha(r, 7)} on runner-{tok(r, LALNUM, 8)}"
        ),
    ),
    (
        "gcp_resource_name",
        lambda r: (
            f"projects/{tok(r, LOWER, 6)}-{r.randint(100000, 999999)}/locations/europe-west4/clusters/gke-{tok(r, LALNUM, 6)}"
        ),
    ),
    (
        "azure_resource_id",
        lambda r: (
            f"/subscriptions/{uuid(r)}/resourceGroups/rg-web/providers/Microsoft.Web/sites/app-{tok(r, LALNUM, 6)}"
        ),
    ),
    (
        "sentry_issue_ids",
        lambda r: (
            f"Sentry issue {tok(r, UPPER, 4)}-{tok(r, UALNUM, 3)} event {_sha(r, 32)} regressed after deploy."
        ),
    ),
]


def _lookalikes(r: random.Random) -> list[Sample]:
    out = []
    for _ in range(18):
        for kind, make in LOOK:
            out.append(Sample(kind, "lookalike", make(r)))
    return out


def fourth_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with its text before disguising (the look-alikes' raw text is their text)."""
    r = random.Random(SEED)
    creds = _credentials(r)
    looks = [(s, s.text) for s in _lookalikes(r)]
    return creds + looks


def fourth_part() -> list[Sample]:
    return [s for s, _ in fourth_part_with_raw()]


# A digest of the corpus, handy to see at a glance that the seed still gives the same texts.
def fingerprint() -> str:
    return hashlib.sha256("\x00".join(s.text for s in fourth_part()).encode()).hexdigest()
