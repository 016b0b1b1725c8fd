"""The eleventh independent part: credentials generated from what the providers document about their formats,
written without reading the filter, in memory texts an agent might keep, disguised, next to look-alikes.

Every value is random (a fixed seed); none is a real token. A sample is a credential only where the provider
says the value must be kept secret: public ids, publishable keys, DSNs and documented placeholders are
look-alikes.
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

SEED = 11_061_2026
PER_KIND = 10

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
HEX = "0123456789abcdef"
HEXU = "0123456789ABCDEF"
B64 = AN + "+/"
URLSAFE = AN + "-_"
LAN = LO + DG
UAN = UP + DG
B32 = "abcdefghijklmnopqrstuvwxyz234567"
BASE62 = DG + UP + LO

# Words that make a random token look like a placeholder; a token is only given one its alphabet can hold.
PLACEHOLDER_WORDS = [
    "EXAMPLE",
    "xxxx",
    "sample",
    "test",
    "dummy",
    "XXXXXXXX",
    "changeme",
    "fake",
    "deadbeef",
    "0000",
]


class Rand:
    """Random pieces of tokens; while `word` is set, the first long enough run that can hold it gets it."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.word = ""

    def s(self, alphabet: str, n: int) -> str:
        out = "".join(self.rng.choice(alphabet) for _ in range(n))
        if self.word and n >= len(self.word) + 10 and all(c in alphabet for c in self.word):
            # Near the middle, so the word falls inside the piece the sample names as secret.
            i = n // 2 - len(self.word) // 2
            out = out[:i] + self.word + out[i + len(self.word) :]
            self.word = ""
        return out

    def d(self, n: int) -> str:
        return self.rng.choice("123456789") + "".join(self.rng.choice(DG) for _ in range(n - 1))

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.rng.choice('89ab')}{h[17:20]}-{h[20:]}"

    def password(self) -> str:
        words = [
            "river",
            "Falcon",
            "copper",
            "Mango",
            "tundra",
            "Velvet",
            "orbit",
            "Quartz",
            "lemon",
            "Harbor",
        ]
        return (
            self.rng.choice(words)
            + self.rng.choice("-_.!#")
            + self.s(AN, 6)
            + self.rng.choice(words)
            + self.d(3)
            + self.rng.choice("!@%*")
        )

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)


def mid(piece: str, trim: int = 2, most: int = 40) -> str:
    """A middle part of a random piece: what must not survive redaction even when the ends do."""
    inner = piece[trim : len(piece) - trim] if len(piece) - 2 * trim >= 8 else piece
    if len(inner) > most:
        start = (len(inner) - most) // 2
        inner = inner[start : start + most]
    return inner


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def b64url(text: str | bytes) -> str:
    return b64(text).replace("+", "-").replace("/", "_").rstrip("=")


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


def tok(r: Rand, *parts: str | tuple[str, int]) -> tuple[str, str]:
    """A token from literal parts and (alphabet, length) random parts; the secret is the longest random one."""
    value, longest = "", ""
    for part in parts:
        piece = part if isinstance(part, str) else r.s(*part)
        value += piece
        if not isinstance(part, str) and len(piece) > len(longest):
            longest = piece
    return value, mid(longest)


def jwt(r: Rand, payload: dict[str, object], alg: str = "HS256", sig_len: int = 43) -> tuple[str, str]:
    head = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")))
    body = b64url(json.dumps(payload, separators=(",", ":")))
    sig = r.s(URLSAFE, sig_len)
    return f"{head}.{body}.{sig}", mid(sig)


def pem_body(r: Rand, lead: str, total: int) -> tuple[list[str], str]:
    flat = lead + r.s(B64, total - len(lead))
    lines = [flat[i : i + 64] for i in range(0, len(flat), 64)]
    middle = lines[len(lines) // 2]
    return lines, middle[10:50]


def pem(r: Rand, label: str, lead: str, total: int) -> tuple[str, str]:
    lines, secret = pem_body(r, lead, total)
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", secret


# --- generators, one per documented format -----------------------------------------------------------------


def github_classic(prefix: str) -> Callable[[Rand], tuple[str, str]]:
    # GitHub docs ("Behind GitHub's new authentication token formats"): ghp_/gho_/ghu_/ghs_/ghr_ prefix,
    # 30 base62 characters, then a 6-character base62 CRC32 checksum of them.
    def gen(r: Rand) -> tuple[str, str]:
        body = r.s(AN, 30)
        return f"{prefix}{body}{base62(zlib.crc32(body.encode()), 6)}", mid(body)

    return gen


def npm_token(r: Rand) -> tuple[str, str]:
    # npm docs/blog ("New npm token format"): npm_ + 36 base62, the last 6 a CRC32 checksum like GitHub's.
    body = r.s(AN, 30)
    return f"npm_{body}{base62(zlib.crc32(body.encode()), 6)}", mid(body)


def aws_secret(r: Rand) -> tuple[str, str]:
    # AWS IAM docs: access key id AKIA + 16 of [A-Z2-7]; secret access key 40 characters of base64 alphabet.
    key_id = "AKIA" + r.s(UP + "234567", 16)
    secret = r.s(B64, 40)
    return f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}", mid(secret)


def aws_session(r: Rand) -> tuple[str, str]:
    # AWS STS docs: session tokens are long base64; current ones begin IQoJb3JpZ2luX2Vj ("\x02\n\torigin_ec").
    return tok(r, "IQoJb3JpZ2luX2VjE", (B64, 340), "=")


def gcp_service_account(r: Rand) -> tuple[str, str]:
    # Google Cloud IAM docs: a service account key file is JSON with type, private_key_id (40 hex) and a
    # PKCS#8 PEM private_key with \n escapes.
    lines, secret = pem_body(r, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1620)
    project = r.pick(["billing-prod", "ml-sandbox-22", "acme-data", "kenfold-ci"]) + "-" + r.d(6)
    key = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": r.s(HEX, 40),
        "private_key": "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n",
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": r.d(21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(key, indent=2), secret


def azure_storage(r: Rand) -> tuple[str, str]:
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol, AccountName, AccountKey
    # (a base64 512-bit key, 88 characters ending ==), EndpointSuffix.
    key = r.s(B64, 86) + "=="
    acct = r.pick(["stprodlogs", "acmeblob", "mlartifacts", "backupweu"]) + r.d(3)
    value = (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return value, mid(key)


def azure_sas(r: Rand) -> tuple[str, str]:
    # Azure docs "Create an account SAS": sv, ss, srt, sp, se, st, spr and sig, the URL-encoded base64
    # HMAC-SHA256 signature that grants the access.
    sig = r.s(AN, 40)
    sig_full = sig + "%3D"
    acct = r.pick(["stexports", "mediaweu", "tenantfiles"]) + r.d(2)
    value = (
        f"https://{acct}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=sco&sp=rwdlacx"
        f"&se=2027-01-31T18:00:00Z&st=2026-12-01T09:00:00Z&spr=https&sig={sig_full}"
    )
    return value, mid(sig)


def azure_service_bus(r: Rand) -> tuple[str, str]:
    # Azure Service Bus docs: Endpoint=sb://<ns>.servicebus.windows.net/;SharedAccessKeyName=...;
    # SharedAccessKey=<44 base64>.
    key = r.s(B64, 43) + "="
    ns = r.pick(["orders-bus", "telemetry-ns", "acme-events"])
    return (
        f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={key}",
        mid(key),
    )


def azure_cosmos(r: Rand) -> tuple[str, str]:
    # Azure Cosmos DB docs: AccountEndpoint=https://<acct>.documents.azure.com:443/;AccountKey=<88 base64>;
    key = r.s(B64, 86) + "=="
    acct = r.pick(["catalog-db", "sessions-cosmos", "iot-hub-state"])
    return f"AccountEndpoint=https://{acct}.documents.azure.com:443/;AccountKey={key};", mid(key)


def url_password(
    scheme: str, host: str, port: str, path: str, user: str = ""
) -> Callable[[Rand], tuple[str, str]]:
    # The URI forms the database docs give: scheme://user:password@host:port/db (RFC 3986 userinfo).
    def gen(r: Rand) -> tuple[str, str]:
        pw = r.s(AN, 8) + r.password().replace("@", "").replace("%", "").replace("#", "").replace("!", "")
        name = user or r.pick(["app", "svc_orders", "analytics", "admin", "reporting"])
        return f"{scheme}://{name}:{pw}@{host}{port}{path}", mid(pw, trim=1)

    return gen


def pgpass(r: Rand) -> tuple[str, str]:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password.
    pw = r.s(AN, 20)
    host = r.pick(["db.internal", "10.0.4.17", "pg-primary.prod.svc", "localhost"])
    return f"{host}:5432:{r.pick(['orders', 'kenfold', '*'])}:{r.pick(['app', 'postgres'])}:{pw}", mid(pw)


def dotnet_sql(r: Rand) -> tuple[str, str]:
    # Microsoft docs (SqlConnection.ConnectionString): Server=...;Database=...;User Id=...;Password=...;
    pw = r.password() + r.s(AN, 4)
    return (
        f"Server=tcp:{r.pick(['sql-prod', 'erp-db'])}.database.windows.net,1433;Initial Catalog=erp;"
        f"Persist Security Info=False;User ID=erp_app;Password={pw};Encrypt=True;",
        mid(pw, trim=1),
    )


def jdbc(r: Rand) -> tuple[str, str]:
    # Microsoft JDBC driver docs: jdbc:sqlserver://host:port;databaseName=...;user=...;password=...;
    pw = r.s(AN, 18)
    return f"jdbc:sqlserver://mssql01.corp:1433;databaseName=Payroll;user=payroll_rw;password={pw};", mid(pw)


def netrc(r: Rand) -> tuple[str, str]:
    # .netrc (GNU inetutils / curl docs): machine <host> login <user> password <secret>.
    pw = r.s(AN, 24)
    host = r.pick(["api.heroku.com", "git.internal.corp", "ftp.partner.example.net", "artifacts.acme.io"])
    return f"machine {host}\n  login deploy@acme.io\n  password {pw}", mid(pw)


def docker_auth(r: Rand) -> tuple[str, str]:
    # Docker docs (config.json credentials store): "auths": {"<registry>": {"auth": base64("user:password")}}.
    pw = r.s(AN, 22)
    auth = b64(f"ci-bot:{pw}")
    reg = r.pick(["https://index.docker.io/v1/", "registry.gitlab.com", "ghcr.io", "harbor.acme.internal"])
    return json.dumps({"auths": {reg: {"auth": auth}}}, indent=2), mid(auth, trim=4)


def basic_auth(r: Rand) -> tuple[str, str]:
    # RFC 7617: Authorization: Basic base64(user-id ":" password).
    pw = r.s(AN, 20)
    enc = b64(f"{r.pick(['admin', 'svc-sync', 'jenkins'])}:{pw}")
    return f"Authorization: Basic {enc}", mid(enc, trim=4)


def kubeconfig(r: Rand) -> tuple[str, str]:
    # Kubernetes docs: a service account token is a JWT (RS256) placed under users[].user.token.
    token, secret = jwt(
        r,
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "sub": "system:serviceaccount:ci:deployer",
        },
        alg="RS256",
        sig_len=342,
    )
    return token, secret


def bootstrap(r: Rand) -> tuple[str, str]:
    # Kubernetes docs "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}; the second part is secret.
    a, b = r.s(LAN, 6), r.s(LAN, 16)
    return f"{a}.{b}", b[2:14]


def supabase_service(r: Rand) -> tuple[str, str]:
    # Supabase docs: the service_role key is a JWT with role "service_role"; it bypasses RLS, keep it server-side.
    return jwt(
        r,
        {"iss": "supabase", "ref": r.s(LO, 20), "role": "service_role", "iat": 1718000000, "exp": 2033576000},
    )


def turso(r: Rand) -> tuple[str, str]:
    # Turso docs: database auth tokens are EdDSA-signed JWTs.
    return jwt(r, {"a": "rw", "iat": 1733000000, "id": r.uuid()}, alg="EdDSA", sig_len=86)


def elastic_api_key(r: Rand) -> tuple[str, str]:
    # Elasticsearch docs (create API key): "encoded" is base64(id ":" api_key), sent as Authorization: ApiKey.
    enc = b64(f"{r.s(URLSAFE, 20)}:{r.s(URLSAFE, 22)}")
    return enc, mid(enc, trim=4)


def rsa_pem(r: Rand) -> tuple[str, str]:
    # RFC 7468 / PKCS#1: an RSA private key PEM block, base64 DER beginning MIIE.
    return pem(r, "RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1580)


def ec_pem(r: Rand) -> tuple[str, str]:
    # RFC 5915: EC PRIVATE KEY, base64 DER beginning MHcCAQEEI.
    return pem(r, "EC PRIVATE KEY", "MHcCAQEEI", 164)


def openssh(r: Rand) -> tuple[str, str]:
    # OpenSSH PROTOCOL.key: -----BEGIN OPENSSH PRIVATE KEY----- with base64 of "openssh-key-v1\0...".
    return pem(
        r,
        "OPENSSH PRIVATE KEY",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        400,
    )


def alipay_key(r: Rand) -> tuple[str, str]:
    # Alipay open platform docs: the app private key is pasted as one line of PKCS#8 base64, no PEM header.
    body = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ" + r.s(B64, 1500)
    return body, body[700:740]


def pair(left_name: str, left: str, right_name: str, right: str) -> str:
    return f"{left_name}={left}\n{right_name}={right}"


def alibaba(r: Rand) -> tuple[str, str]:
    # Alibaba Cloud RAM docs: AccessKey ID starts LTAI (24 chars), AccessKey Secret 30 alphanumerics.
    sec = r.s(AN, 30)
    return pair(
        "ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAI" + r.s(AN, 20), "ALIBABA_CLOUD_ACCESS_KEY_SECRET", sec
    ), mid(sec)


def tencent(r: Rand) -> tuple[str, str]:
    # Tencent Cloud CAM docs: SecretId AKID + 32 alphanumerics, SecretKey 32 alphanumerics.
    sec = r.s(AN, 32)
    return pair("TENCENTCLOUD_SECRET_ID", "AKID" + r.s(AN, 32), "TENCENTCLOUD_SECRET_KEY", sec), mid(sec)


def huawei(r: Rand) -> tuple[str, str]:
    # Huawei Cloud IAM docs: AK 20 uppercase alphanumerics, SK 40 alphanumerics.
    sec = r.s(AN, 40)
    return pair("HUAWEICLOUD_SDK_AK", r.s(UAN, 20), "HUAWEICLOUD_SDK_SK", sec), mid(sec)


def scaleway(r: Rand) -> tuple[str, str]:
    # Scaleway docs: access key SCW + 17 uppercase alphanumerics; the secret key is a UUID.
    sec = r.uuid()
    return pair("SCW_ACCESS_KEY", "SCW" + r.s(UAN, 17), "SCW_SECRET_KEY", sec), mid(sec, trim=0)


def twilio_api(r: Rand) -> tuple[str, str]:
    # Twilio docs "API keys": SID SK + 32 hex (an identifier), secret 32 alphanumerics shown once.
    sec = r.s(AN, 32)
    return pair("TWILIO_API_KEY", "SK" + r.s(HEX, 32), "TWILIO_API_SECRET", sec), mid(sec)


def twilio_auth(r: Rand) -> tuple[str, str]:
    # Twilio docs: Account SID AC + 32 hex (identifier), Auth Token 32 hex (secret).
    sec = r.s(HEX, 32)
    return pair("TWILIO_ACCOUNT_SID", "AC" + r.s(HEX, 32), "TWILIO_AUTH_TOKEN", sec), mid(sec)


def razorpay(r: Rand) -> tuple[str, str]:
    # Razorpay docs: key id rzp_live_ + 14 (sent to Checkout, public); key secret 24 alphanumerics.
    sec = r.s(AN, 24)
    return pair("RAZORPAY_KEY_ID", "rzp_live_" + r.s(AN, 14), "RAZORPAY_KEY_SECRET", sec), mid(sec)


def akamai(r: Rand) -> tuple[str, str]:
    # Akamai EdgeGrid docs (.edgerc): client_secret base64 44, client_token/access_token akab-xxxx-xxxx.
    sec = r.s(B64, 43) + "="
    return (
        f"[default]\nclient_secret = {sec}\nhost = akab-{r.s(LAN, 16)}-{r.s(LAN, 16)}.luna.akamaiapis.net\n"
        f"access_token = akab-{r.s(LAN, 16)}-{r.s(LAN, 16)}\nclient_token = akab-{r.s(LAN, 16)}-{r.s(LAN, 16)}",
        mid(sec),
    )


def sumo(r: Rand) -> tuple[str, str]:
    # Sumo Logic docs "Access keys": access id su + 12, access key 64 alphanumerics.
    sec = r.s(AN, 64)
    return pair("SUMO_ACCESS_ID", "su" + r.s(AN, 12), "SUMO_ACCESS_KEY", sec), mid(sec)


def sentry_org(r: Rand) -> tuple[str, str]:
    # Sentry docs: org auth tokens sntrys_ + base64 JSON claims + _ + 43 base64 secret.
    claims = b64(
        json.dumps({"iat": 1733000000.1, "url": "https://sentry.io", "org": r.pick(["acme", "kenfold"])})
    )
    sec = r.s(AN, 43)
    return f"sntrys_{claims.rstrip('=')}_{sec}", mid(sec)


def slack_webhook(r: Rand) -> tuple[str, str]:
    # Slack docs "Sending messages using incoming webhooks": hooks.slack.com/services/T.../B.../<24 secret>.
    sec = r.s(AN, 24)
    return f"https://hooks.slack.com/services/T{r.s(UAN, 9)}/B{r.s(UAN, 10)}/{sec}", mid(sec)


def discord_webhook(r: Rand) -> tuple[str, str]:
    # Discord docs (Webhook resource): /api/webhooks/{webhook.id}/{webhook.token}, the token being secret.
    sec = r.s(URLSAFE, 68)
    return f"https://discord.com/api/webhooks/{r.d(19)}/{sec}", mid(sec)


def discord_bot(r: Rand) -> tuple[str, str]:
    # Discord developer docs: bot token = base64(user id) . timestamp (6) . HMAC (27-38).
    uid = b64(r.d(18)).rstrip("=")
    sec = r.s(URLSAFE, 38)
    return f"{uid}.{r.s(URLSAFE, 6)}.{sec}", mid(sec)


def teams_webhook(r: Rand) -> tuple[str, str]:
    # Microsoft Teams docs: <tenant>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<32 hex>/<id>.
    sec = r.s(HEX, 32)
    return (
        f"https://acme.webhook.office.com/webhookb2/{r.uuid()}@{r.uuid()}/IncomingWebhook/{sec}/{r.uuid()}",
        mid(sec),
    )


def dingtalk(r: Rand) -> tuple[str, str]:
    # DingTalk custom robot docs: robot/send?access_token=<64 hex>; the signing secret is SEC + 64 hex.
    sec = r.s(HEX, 64)
    return f"https://oapi.dingtalk.com/robot/send?access_token={sec}", mid(sec)


def feishu(r: Rand) -> tuple[str, str]:
    # Feishu/Lark custom bot docs: open-apis/bot/v2/hook/<uuid>; whoever has the URL can post.
    sec = r.uuid()
    return f"https://open.feishu.cn/open-apis/bot/v2/hook/{sec}", mid(sec, trim=0)


def matrix(r: Rand) -> tuple[str, str]:
    # Synapse access tokens: syt_<base64 localpart>_<20 random>_<6 crc>.
    sec = r.s(AN, 20)
    return f"syt_{b64url(r.pick(['alice', 'ops-bot', 'deploy']))}_{sec}_{r.s(AN, 6)}", mid(sec, trim=1)


def braintree(r: Rand) -> tuple[str, str]:
    # Braintree docs (OAuth access tokens): access_token$production$<16>$<32 hex>.
    sec = r.s(HEX, 32)
    return f"access_token$production${r.s(LAN, 16)}${sec}", mid(sec)


def mercadopago(r: Rand) -> tuple[str, str]:
    # Mercado Pago docs: production access token APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    sec = r.s(HEX, 32)
    return f"APP_USR-{r.d(16)}-{r.d(6)}-{sec}-{r.d(9)}", mid(sec)


def adyen(r: Rand) -> tuple[str, str]:
    # Adyen docs "API credentials": API keys begin AQE and are long, with base64 pieces joined by "=-".
    sec = r.s(B64, 88)
    return f"AQE{r.s(AN, 5)}{sec}==-{r.s(B64, 43)}=-{r.s(AN, 10)}", mid(sec)


def paddle(r: Rand) -> tuple[str, str]:
    # Paddle Billing docs: API keys pdl_live_apikey_<26 ulid-like>_<22>_<3>.
    sec = r.s(AN, 22)
    return f"pdl_live_apikey_{r.s(LAN, 26)}_{sec}_{r.s(AN, 3)}", mid(sec, trim=1)


def astra(r: Rand) -> tuple[str, str]:
    # DataStax Astra docs: application tokens AstraCS:<24 alnum>:<64 hex>.
    sec = r.s(HEX, 64)
    return f"AstraCS:{r.s(AN, 24)}:{sec}", mid(sec)


def dynatrace(r: Rand) -> tuple[str, str]:
    # Dynatrace docs "Access tokens": dt0c01.<24 public part>.<64 secret part>, uppercase alphanumerics.
    sec = r.s(UAN, 64)
    return f"dt0c01.{r.s(UAN, 24)}.{sec}", mid(sec)


def anthropic(r: Rand) -> tuple[str, str]:
    # Anthropic console keys: sk-ant-api03- + 93 base64url + AA.
    return tok(r, "sk-ant-api03-", (URLSAFE, 93), "AA")


def openai_project(r: Rand) -> tuple[str, str]:
    # OpenAI project keys: sk-proj- followed by a long base64url run containing T3BlbkFJ ("OpenAI" in base64).
    a, b = r.s(URLSAFE, 74), r.s(URLSAFE, 74)
    return f"sk-proj-{a}T3BlbkFJ{b}", mid(a)


def zhipu(r: Rand) -> tuple[str, str]:
    # Zhipu BigModel docs: API key "<32 hex id>.<16 secret>".
    sec = r.s(AN, 16)
    return f"{r.s(HEX, 32)}.{sec}", mid(sec, trim=1)


def mapbox_secret(r: Rand) -> tuple[str, str]:
    # Mapbox docs: secret tokens start sk. (public ones pk.), then base64url JSON and a signature.
    head = b64url(json.dumps({"u": r.pick(["acme", "maps-team"]), "a": r.s(LAN, 25)}))
    sec = r.s(URLSAFE, 22)
    return f"sk.{head}.{sec}", mid(sec, trim=1)


def onepassword(r: Rand) -> tuple[str, str]:
    # 1Password docs: service account tokens ops_ + base64 JSON.
    inner = b64(
        json.dumps(
            {
                "signInAddress": "my.1password.com",
                "userAuth": {"method": "SRPg-4096"},
                "email": f"{r.s(LAN, 12)}@1passwordserviceaccounts.com",
                "srpX": r.s(HEX, 64),
                "muk": {"k": r.s(URLSAFE, 43)},
            }
        )
    )
    return "ops_" + inner.rstrip("="), inner[200:240]


def age_key(r: Rand) -> tuple[str, str]:
    # age spec: AGE-SECRET-KEY-1 + 58 uppercase bech32 characters.
    return tok(r, "AGE-SECRET-KEY-1", ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))


def django_secret(r: Rand) -> tuple[str, str]:
    # Django docs (SECRET_KEY): 50 random characters from get_random_secret_key's alphabet.
    return tok(r, "django-insecure-" if r.rng.random() < 0.3 else "", (LAN + "!@#%^&*(-_=+)", 50))


# --- the kinds ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    label: str  # how a person names it in a note
    var: str  # the variable it lives under in configs
    gen: Callable[[Rand], tuple[str, str]]
    block: bool = False  # multi-line or JSON: only contexts that hold a block


def T(*parts: str | tuple[str, int]) -> Callable[[Rand], tuple[str, str]]:
    return lambda r: tok(r, *parts)


KINDS: list[Kind] = [
    # cloud
    Kind("aws_secret_access_key", "cloud", "AWS access key pair", "AWS_CREDENTIALS", aws_secret, block=True),
    Kind("aws_session_token", "cloud", "AWS session token", "AWS_SESSION_TOKEN", aws_session),
    Kind(
        "gcp_service_account_json",
        "cloud",
        "GCP service account key",
        "GOOGLE_CREDENTIALS",
        gcp_service_account,
        block=True,
    ),
    # Google Cloud docs "API keys": AIza + 35 base64url; keep them out of code.
    Kind("gcp_api_key", "cloud", "Google API key", "GOOGLE_API_KEY", T("AIza", (URLSAFE, 35))),
    # Google Identity docs: OAuth client secrets now begin GOCSPX- + 28.
    Kind(
        "gcp_oauth_client_secret",
        "cloud",
        "Google OAuth client secret",
        "GOOGLE_CLIENT_SECRET",
        T("GOCSPX-", (URLSAFE, 28)),
    ),
    Kind(
        "azure_storage_connection_string",
        "cloud",
        "Azure storage connection string",
        "AZURE_STORAGE_CONNECTION_STRING",
        azure_storage,
    ),
    Kind("azure_sas_url", "cloud", "Azure SAS URL", "BACKUP_SAS_URL", azure_sas),
    # Microsoft Entra docs: client secrets are 40 chars, 3 + "8Q~" + 34 of [A-Za-z0-9_~.-].
    Kind(
        "azure_client_secret",
        "cloud",
        "Entra app client secret",
        "AZURE_CLIENT_SECRET",
        T((AN, 3), "8Q~", (AN + "_~.-", 34)),
    ),
    Kind(
        "azure_service_bus",
        "cloud",
        "Service Bus connection string",
        "SERVICEBUS_CONNECTION",
        azure_service_bus,
    ),
    Kind("azure_cosmos", "cloud", "Cosmos DB connection string", "COSMOS_CONNECTION_STRING", azure_cosmos),
    # DigitalOcean docs: personal access tokens dop_v1_ + 64 hex; OAuth doo_v1_, refresh dor_v1_.
    Kind("digitalocean_pat", "cloud", "DigitalOcean token", "DIGITALOCEAN_TOKEN", T("dop_v1_", (HEX, 64))),
    Kind(
        "digitalocean_refresh",
        "cloud",
        "DigitalOcean refresh token",
        "DO_REFRESH_TOKEN",
        T("dor_v1_", (HEX, 64)),
    ),
    Kind("alibaba_access_key", "cloud", "Alibaba Cloud AccessKey", "ALIYUN_KEYS", alibaba, block=True),
    Kind("tencent_secret_key", "cloud", "Tencent Cloud SecretKey", "TENCENT_KEYS", tencent, block=True),
    Kind("huawei_ak_sk", "cloud", "Huawei Cloud AK/SK", "HUAWEI_KEYS", huawei, block=True),
    # IBM Cloud docs: API keys are 44 characters of base64url.
    Kind("ibm_cloud_api_key", "cloud", "IBM Cloud API key", "IBMCLOUD_API_KEY", T((URLSAFE, 44))),
    # Linode docs: personal access tokens 64 hex.
    Kind("linode_token", "cloud", "Linode token", "LINODE_TOKEN", T((HEX, 64))),
    # Vultr docs: API key 36 uppercase alphanumerics.
    Kind("vultr_api_key", "cloud", "Vultr API key", "VULTR_API_KEY", T((UAN, 36))),
    # Hetzner Cloud docs: API tokens 64 alphanumerics.
    Kind("hetzner_token", "cloud", "Hetzner Cloud token", "HCLOUD_TOKEN", T((AN, 64))),
    Kind("scaleway_secret_key", "cloud", "Scaleway secret key", "SCW_KEYS", scaleway, block=True),
    # Cloudflare docs: API tokens 40 base64url; the Global API Key is 37 hex.
    Kind("cloudflare_api_token", "cloud", "Cloudflare API token", "CLOUDFLARE_API_TOKEN", T((URLSAFE, 40))),
    Kind("cloudflare_global_key", "cloud", "Cloudflare global API key", "CLOUDFLARE_API_KEY", T((HEX, 37))),
    # Heroku docs (2024 token format): HRKU- prefix on API keys.
    Kind("heroku_api_key", "cloud", "Heroku API key", "HEROKU_API_KEY", T("HRKU-AA", (URLSAFE, 58))),
    # Heroku Dev Center "Getting Started with the Platform API": `heroku authorizations:create` prints a UUID token.
    Kind(
        "heroku_authorization_token",
        "cloud",
        "Heroku authorization token",
        "HEROKU_API_TOKEN",
        lambda r: (t := r.uuid(), mid(t, trim=0)),
    ),
    # Yandex Cloud docs: API keys begin AQVN, IAM tokens t1.
    Kind("yandex_api_key", "cloud", "Yandex Cloud API key", "YC_API_KEY", T("AQVN", (URLSAFE, 36))),
    # Fly.io docs: `fly tokens create` prints "FlyV1 fm2_" + long base64.
    Kind("flyio_token", "cloud", "Fly.io deploy token", "FLY_API_TOKEN", T("FlyV1 fm2_", (B64, 180))),
    # Netlify docs: personal access tokens nfp_ + 36.
    Kind("netlify_pat", "cloud", "Netlify token", "NETLIFY_AUTH_TOKEN", T("nfp_", (AN, 36))),
    # Vercel docs: access tokens 24 alphanumerics.
    Kind("vercel_token", "cloud", "Vercel token", "VERCEL_TOKEN", T((AN, 24))),
    # HashiCorp Terraform Cloud docs: <14>.atlasv1.<67>.
    Kind(
        "terraform_cloud_token",
        "cloud",
        "Terraform Cloud token",
        "TFE_TOKEN",
        T((AN, 14), ".atlasv1.", (AN, 67)),
    ),
    # Pulumi docs: access tokens pul- + 40 hex.
    Kind("pulumi_token", "cloud", "Pulumi access token", "PULUMI_ACCESS_TOKEN", T("pul-", (HEX, 40))),
    # HashiCorp Vault docs "Tokens": service tokens hvs. + 90+ base64url; batch tokens hvb.
    Kind("vault_service_token", "cloud", "Vault token", "VAULT_TOKEN", T("hvs.", (URLSAFE, 92))),
    Kind("vault_batch_token", "cloud", "Vault batch token", "VAULT_BATCH_TOKEN", T("hvb.", (URLSAFE, 138))),
    Kind("kubeconfig_sa_token", "cloud", "Kubernetes service account token", "K8S_TOKEN", kubeconfig),
    Kind("k8s_bootstrap_token", "cloud", "kubeadm bootstrap token", "BOOTSTRAP_TOKEN", bootstrap),
    # OVHcloud docs: application secret and consumer key, 32 alphanumerics each.
    Kind("ovh_application_secret", "cloud", "OVH application secret", "OVH_APPLICATION_SECRET", T((AN, 32))),
    # Backblaze B2 docs: application keys K + 30 characters.
    Kind("backblaze_app_key", "cloud", "B2 application key", "B2_APPLICATION_KEY", T("K00", (AN + "/+", 28))),
    Kind("akamai_edgerc", "cloud", "Akamai .edgerc", "EDGERC", akamai, block=True),
    # Render docs: API keys rnd_ + 32.
    Kind("render_api_key", "cloud", "Render API key", "RENDER_API_KEY", T("rnd_", (AN, 32))),
    Kind("rsa_private_key", "cloud", "RSA private key", "TLS_KEY", rsa_pem, block=True),
    Kind("ec_private_key", "cloud", "EC private key", "SIGNING_KEY", ec_pem, block=True),
    Kind("openssh_private_key", "cloud", "SSH private key", "DEPLOY_KEY", openssh, block=True),
    Kind("age_secret_key", "cloud", "age identity", "SOPS_AGE_KEY", age_key),
    # ci
    Kind("github_pat_classic", "ci", "GitHub token", "GITHUB_TOKEN", github_classic("ghp_")),
    Kind("github_oauth", "ci", "GitHub OAuth token", "GH_OAUTH_TOKEN", github_classic("gho_")),
    Kind(
        "github_app_installation",
        "ci",
        "GitHub App installation token",
        "GH_APP_TOKEN",
        github_classic("ghs_"),
    ),
    Kind("github_refresh", "ci", "GitHub refresh token", "GH_REFRESH_TOKEN", github_classic("ghr_")),
    # GitHub docs: fine-grained tokens github_pat_ + 22 + _ + 59.
    Kind(
        "github_fine_grained",
        "ci",
        "GitHub fine-grained token",
        "GH_TOKEN",
        T("github_pat_11", (UAN, 20), "_", (AN, 59)),
    ),
    # GitLab docs "Token prefixes": glpat- PAT, glrt- runner, glptt- trigger, gldt- deploy, 20 base64url.
    Kind("gitlab_pat", "ci", "GitLab token", "GITLAB_TOKEN", T("glpat-", (URLSAFE, 20))),
    Kind("gitlab_runner", "ci", "GitLab runner token", "RUNNER_TOKEN", T("glrt-", (URLSAFE, 20))),
    Kind("gitlab_trigger", "ci", "GitLab trigger token", "TRIGGER_TOKEN", T("glptt-", (HEX, 40))),
    Kind("gitlab_deploy", "ci", "GitLab deploy token", "CI_DEPLOY_PASSWORD", T("gldt-", (URLSAFE, 20))),
    # CircleCI docs: personal API tokens CCIPAT_<22>_<40 hex>.
    Kind("circleci_pat", "ci", "CircleCI token", "CIRCLECI_TOKEN", T("CCIPAT_", (AN, 22), "_", (HEX, 40))),
    # Buildkite docs: API access tokens bkua_ + 40 hex.
    Kind("buildkite_token", "ci", "Buildkite API token", "BUILDKITE_API_TOKEN", T("bkua_", (HEX, 40))),
    # Bitbucket docs: app passwords ATBB + 32 + 8 hex.
    Kind(
        "bitbucket_app_password",
        "ci",
        "Bitbucket app password",
        "BITBUCKET_APP_PASSWORD",
        T("ATBB", (AN, 32), (HEXU, 8)),
    ),
    # Jenkins: API tokens are 34 hex beginning 11.
    Kind("jenkins_api_token", "ci", "Jenkins API token", "JENKINS_API_TOKEN", T("11", (HEX, 32))),
    # Azure DevOps docs: PATs 52 characters of lowercase base32.
    Kind("azure_devops_pat", "ci", "Azure DevOps PAT", "AZURE_DEVOPS_EXT_PAT", T((B32, 52))),
    # SonarQube docs: squ_ user tokens, sqp_ project tokens, 40 hex.
    Kind("sonarqube_token", "ci", "SonarQube token", "SONAR_TOKEN", T("squ_", (HEX, 40))),
    # Octopus Deploy docs: API-<26..32 uppercase alnum>.
    Kind("octopus_api_key", "ci", "Octopus API key", "OCTOPUS_API_KEY", T("API-", (UAN, 30))),
    # Harness docs: pat.<account>.<24 hex>.<20>.
    Kind(
        "harness_pat",
        "ci",
        "Harness PAT",
        "HARNESS_API_KEY",
        T("pat.", (URLSAFE, 22), ".", (HEX, 24), ".", (AN, 20)),
    ),
    # Drone docs: user tokens 32 alphanumerics.
    Kind("drone_token", "ci", "Drone token", "DRONE_TOKEN", T((AN, 32))),
    # Snyk docs: API token is a UUID under SNYK_TOKEN.
    Kind("snyk_token", "ci", "Snyk token", "SNYK_TOKEN", lambda r: (t := r.uuid(), mid(t, trim=0))),
    # chat
    # Slack docs "Token types": xoxb- bot, xoxp- user, xapp- app-level.
    Kind(
        "slack_bot_token",
        "chat",
        "Slack bot token",
        "SLACK_BOT_TOKEN",
        T("xoxb-", (DG, 12), "-", (DG, 13), "-", (AN, 24)),
    ),
    Kind(
        "slack_user_token",
        "chat",
        "Slack user token",
        "SLACK_USER_TOKEN",
        T("xoxp-", (DG, 12), "-", (DG, 12), "-", (DG, 13), "-", (HEX, 32)),
    ),
    Kind(
        "slack_app_token",
        "chat",
        "Slack app-level token",
        "SLACK_APP_TOKEN",
        T("xapp-1-A", (UAN, 10), "-", (DG, 13), "-", (HEX, 64)),
    ),
    Kind("slack_webhook", "chat", "Slack webhook", "SLACK_WEBHOOK_URL", slack_webhook),
    Kind("discord_bot_token", "chat", "Discord bot token", "DISCORD_TOKEN", discord_bot),
    Kind("discord_webhook", "chat", "Discord webhook", "DISCORD_WEBHOOK", discord_webhook),
    # Telegram Bot API docs: <bot id>:<35 base64url>, e.g. 123456:ABC-DEF...
    Kind(
        "telegram_bot_token",
        "chat",
        "Telegram bot token",
        "TELEGRAM_BOT_TOKEN",
        lambda r: tok(r, r.d(10), ":AA", (URLSAFE, 33)),
    ),
    Kind("teams_webhook", "chat", "Teams webhook", "TEAMS_WEBHOOK_URL", teams_webhook),
    # Mattermost docs: personal access tokens 26 lowercase alphanumerics.
    Kind("mattermost_token", "chat", "Mattermost token", "MM_TOKEN", T((LAN, 26))),
    Kind("twilio_api_secret", "chat", "Twilio API key", "TWILIO_KEYS", twilio_api, block=True),
    Kind("twilio_auth_token", "chat", "Twilio auth token", "TWILIO_CREDS", twilio_auth, block=True),
    # LINE Messaging API docs: channel secret 32 hex; channel access token long-lived ~172 base64.
    Kind(
        "line_channel_token",
        "chat",
        "LINE channel access token",
        "LINE_CHANNEL_ACCESS_TOKEN",
        T((B64, 171), "="),
    ),
    # Zulip docs: API keys 32 alphanumerics in zuliprc.
    Kind("zulip_api_key", "chat", "Zulip API key", "ZULIP_API_KEY", T((AN, 32))),
    Kind("matrix_access_token", "chat", "Matrix access token", "MATRIX_ACCESS_TOKEN", matrix),
    # Vonage docs: API secret 16 alphanumerics.
    Kind("vonage_api_secret", "chat", "Vonage API secret", "VONAGE_API_SECRET", T((AN, 16))),
    # WeChat Official Accounts docs: AppSecret 32 hex.
    Kind("wechat_appsecret", "chat", "WeChat AppSecret", "WECHAT_APP_SECRET", T((HEX, 32))),
    Kind("dingtalk_robot", "chat", "DingTalk robot webhook", "DINGTALK_WEBHOOK", dingtalk),
    Kind("feishu_webhook", "chat", "Feishu bot webhook", "FEISHU_WEBHOOK", feishu),
    # Pusher Channels docs: app secret 20 hex.
    Kind("pusher_secret", "chat", "Pusher app secret", "PUSHER_APP_SECRET", T((HEX, 20))),
    # payment
    # Stripe docs "API keys": sk_live_ secret, rk_live_ restricted, whsec_ webhook signing secrets.
    Kind("stripe_secret_key", "payment", "Stripe secret key", "STRIPE_SECRET_KEY", T("sk_live_51", (AN, 97))),
    Kind(
        "stripe_restricted_key",
        "payment",
        "Stripe restricted key",
        "STRIPE_RESTRICTED_KEY",
        T("rk_live_51", (AN, 97)),
    ),
    Kind(
        "stripe_webhook_secret",
        "payment",
        "Stripe webhook secret",
        "STRIPE_WEBHOOK_SECRET",
        T("whsec_", (AN, 32)),
    ),
    # PayPal developer docs: REST app client secret, 80 base64url characters.
    Kind(
        "paypal_client_secret",
        "payment",
        "PayPal client secret",
        "PAYPAL_CLIENT_SECRET",
        T("E", (URLSAFE, 79)),
    ),
    Kind("braintree_access_token", "payment", "Braintree access token", "BT_ACCESS_TOKEN", braintree),
    # Square docs: production access tokens EAAA + 60; OAuth application secrets sq0csp- + 43.
    Kind(
        "square_access_token",
        "payment",
        "Square access token",
        "SQUARE_ACCESS_TOKEN",
        T("EAAA", (URLSAFE, 60)),
    ),
    Kind(
        "square_oauth_secret",
        "payment",
        "Square application secret",
        "SQUARE_APP_SECRET",
        T("sq0csp-", (URLSAFE, 43)),
    ),
    Kind("adyen_api_key", "payment", "Adyen API key", "ADYEN_API_KEY", adyen),
    Kind("razorpay_key_secret", "payment", "Razorpay key secret", "RAZORPAY_KEYS", razorpay, block=True),
    # Paystack docs: secret keys sk_live_ + 40 hex.
    Kind(
        "paystack_secret", "payment", "Paystack secret key", "PAYSTACK_SECRET_KEY", T("sk_live_", (HEX, 40))
    ),
    # Flutterwave docs: FLWSECK-<32 hex>-X.
    Kind(
        "flutterwave_secret",
        "payment",
        "Flutterwave secret key",
        "FLW_SECRET_KEY",
        T("FLWSECK-", (HEX, 32), "-X"),
    ),
    Kind("mercadopago_token", "payment", "Mercado Pago access token", "MP_ACCESS_TOKEN", mercadopago),
    # Midtrans docs: server keys Mid-server- + 24.
    Kind(
        "midtrans_server_key",
        "payment",
        "Midtrans server key",
        "MIDTRANS_SERVER_KEY",
        T("Mid-server-", (URLSAFE, 24)),
    ),
    # Xendit docs: secret keys xnd_production_ + 60.
    Kind(
        "xendit_secret", "payment", "Xendit secret key", "XENDIT_SECRET_KEY", T("xnd_production_", (AN, 60))
    ),
    # Mollie docs: live API keys live_ + 30.
    Kind("mollie_live_key", "payment", "Mollie API key", "MOLLIE_API_KEY", T("live_", (AN, 30))),
    # YooKassa docs: secret keys live_ + 43 base64url.
    Kind(
        "yookassa_secret", "payment", "YooKassa secret key", "YOOKASSA_SECRET_KEY", T("live_", (URLSAFE, 43))
    ),
    Kind("paddle_api_key", "payment", "Paddle API key", "PADDLE_API_KEY", paddle),
    Kind("alipay_private_key", "payment", "Alipay app private key", "ALIPAY_APP_PRIVATE_KEY", alipay_key),
    # database
    Kind(
        "postgres_url",
        "database",
        "Postgres URL",
        "DATABASE_URL",
        url_password("postgresql", "db.prod.internal", ":5432", "/orders"),
    ),
    Kind(
        "mysql_url",
        "database",
        "MySQL URL",
        "MYSQL_URL",
        url_password("mysql", "mysql-7.corp", ":3306", "/shop"),
    ),
    Kind(
        "mongodb_srv",
        "database",
        "MongoDB Atlas URI",
        "MONGODB_URI",
        url_password("mongodb+srv", "cluster0.x7k2p.mongodb.net", "", "/?retryWrites=true&w=majority"),
    ),
    Kind(
        "redis_url",
        "database",
        "Redis URL",
        "REDIS_URL",
        url_password("rediss", "eu1-fresh-owl-31337.upstash.io", ":6379", "", user="default"),
    ),
    Kind(
        "amqp_url",
        "database",
        "RabbitMQ URL",
        "CLOUDAMQP_URL",
        url_password("amqps", "rattlesnake.rmq.cloudamqp.com", "", "/vhost"),
    ),
    Kind("pgpass_line", "database", ".pgpass line", "PGPASSFILE", pgpass),
    Kind(
        "sqlserver_connection",
        "database",
        "SQL Server connection string",
        "ConnectionStrings__Default",
        dotnet_sql,
    ),
    Kind("jdbc_password", "database", "JDBC URL", "SPRING_DATASOURCE_URL", jdbc),
    # PlanetScale docs: passwords pscale_pw_ + 43, service tokens pscale_tkn_.
    Kind(
        "planetscale_password",
        "database",
        "PlanetScale password",
        "DATABASE_PASSWORD",
        T("pscale_pw_", (URLSAFE, 43)),
    ),
    Kind(
        "supabase_service_role",
        "database",
        "Supabase service_role key",
        "SUPABASE_SERVICE_ROLE_KEY",
        supabase_service,
    ),
    Kind("astra_token", "database", "Astra DB token", "ASTRA_DB_APPLICATION_TOKEN", astra),
    Kind("turso_token", "database", "Turso auth token", "TURSO_AUTH_TOKEN", turso),
    Kind("elastic_api_key", "database", "Elasticsearch API key", "ES_API_KEY", elastic_api_key),
    # InfluxDB docs: API tokens 86 base64 characters ending ==.
    Kind("influxdb_token", "database", "InfluxDB token", "INFLUX_TOKEN", T((URLSAFE, 86), "==")),
    # Fauna docs: secrets begin fn.
    Kind("fauna_secret", "database", "Fauna secret", "FAUNA_SECRET", T("fnA", (URLSAFE, 37))),
    # Pinecone docs: API keys pcsk_<5>_<64>.
    Kind(
        "pinecone_api_key",
        "database",
        "Pinecone API key",
        "PINECONE_API_KEY",
        T("pcsk_", (AN, 5), "_", (AN, 64)),
    ),
    # Firebase docs: legacy database secrets 40 alphanumerics.
    Kind("firebase_db_secret", "database", "Firebase database secret", "FIREBASE_DB_SECRET", T((AN, 40))),
    # registry
    Kind("npm_token", "registry", "npm token", "NPM_TOKEN", npm_token),
    # PyPI docs: API tokens pypi- + macaroon base64 beginning AgEIcHlwaS5vcmc ("pypi.org").
    Kind("pypi_token", "registry", "PyPI token", "TWINE_PASSWORD", T("pypi-AgEIcHlwaS5vcmc", (URLSAFE, 160))),
    # Docker docs: personal access tokens dckr_pat_ + 27.
    Kind("docker_hub_pat", "registry", "Docker Hub PAT", "DOCKERHUB_TOKEN", T("dckr_pat_", (URLSAFE, 27))),
    Kind(
        "docker_config_auth",
        "registry",
        "docker config.json auth",
        "DOCKER_CONFIG_JSON",
        docker_auth,
        block=True,
    ),
    # RubyGems docs: API keys rubygems_ + 48 hex.
    Kind("rubygems_key", "registry", "RubyGems API key", "GEM_HOST_API_KEY", T("rubygems_", (HEX, 48))),
    # NuGet docs: API keys oy2 + 43 lowercase alphanumerics.
    Kind("nuget_api_key", "registry", "NuGet API key", "NUGET_API_KEY", T("oy2", (LAN, 43))),
    # crates.io: tokens cio + 32.
    Kind("crates_io_token", "registry", "crates.io token", "CARGO_REGISTRY_TOKEN", T("cio", (AN, 32))),
    # JFrog docs: API keys AKCp + 69; reference tokens begin cmVmdGtu ("reftkn").
    Kind(
        "artifactory_api_key", "registry", "Artifactory API key", "ARTIFACTORY_API_KEY", T("AKCp", (AN, 69))
    ),
    Kind(
        "jfrog_reference_token",
        "registry",
        "JFrog reference token",
        "JFROG_ACCESS_TOKEN",
        T("cmVmdGtuOjAxOjE3", (AN, 48)),
    ),
    # Quay docs: robot tokens 64 uppercase alphanumerics, login <org>+<robot>.
    Kind("quay_robot_token", "registry", "Quay robot token", "QUAY_ROBOT_TOKEN", T((UAN, 64))),
    # Clojars docs: deploy tokens CLOJARS_ + 60 hex.
    Kind("clojars_token", "registry", "Clojars deploy token", "CLOJARS_PASSWORD", T("CLOJARS_", (HEX, 60))),
    Kind("netrc_password", "registry", ".netrc entry", "NETRC", netrc, block=True),
    # Hex docs: API keys 32 hex.
    Kind("hex_api_key", "registry", "Hex API key", "HEX_API_KEY", T((HEX, 32))),
    # observability
    # Datadog docs: API keys 32 hex, application keys 40 hex.
    Kind("datadog_api_key", "observability", "Datadog API key", "DD_API_KEY", T((HEX, 32))),
    Kind("datadog_app_key", "observability", "Datadog application key", "DD_APP_KEY", T((HEX, 40))),
    # New Relic docs: license keys 40 chars ending NRAL; user keys NRAK- + 27.
    Kind(
        "newrelic_license",
        "observability",
        "New Relic license key",
        "NEW_RELIC_LICENSE_KEY",
        T((HEX, 36), "NRAL"),
    ),
    Kind(
        "newrelic_user_key", "observability", "New Relic user key", "NEW_RELIC_API_KEY", T("NRAK-", (UAN, 27))
    ),
    Kind("sentry_org_token", "observability", "Sentry auth token", "SENTRY_AUTH_TOKEN", sentry_org),
    # Sentry docs: user auth tokens sntryu_ + 64 hex.
    Kind("sentry_user_token", "observability", "Sentry user token", "SENTRY_TOKEN", T("sntryu_", (HEX, 64))),
    # Grafana docs: service account tokens glsa_<32>_<8 hex>; Cloud access policy tokens glc_ + base64.
    Kind(
        "grafana_sa_token",
        "observability",
        "Grafana service account token",
        "GRAFANA_TOKEN",
        T("glsa_", (AN, 32), "_", (HEX, 8)),
    ),
    Kind(
        "grafana_cloud_token",
        "observability",
        "Grafana Cloud token",
        "GRAFANA_CLOUD_TOKEN",
        T("glc_", (B64, 120), "="),
    ),
    # Honeycomb docs: ingest keys hcaik_ + 58.
    Kind(
        "honeycomb_ingest",
        "observability",
        "Honeycomb ingest key",
        "HONEYCOMB_API_KEY",
        T("hcaik_", (LAN, 58)),
    ),
    # Splunk docs: HEC tokens are UUIDs sent as "Authorization: Splunk <token>".
    Kind(
        "splunk_hec",
        "observability",
        "Splunk HEC token",
        "SPLUNK_HEC_TOKEN",
        lambda r: (t := r.uuid(), mid(t, trim=0)),
    ),
    Kind("sumo_access_key", "observability", "Sumo Logic access key", "SUMO_KEYS", sumo, block=True),
    Kind("dynatrace_token", "observability", "Dynatrace token", "DT_API_TOKEN", dynatrace),
    # PagerDuty docs: REST API keys 20 chars (u+ user tokens); Events integration keys 32 hex.
    Kind(
        "pagerduty_api_key", "observability", "PagerDuty API key", "PAGERDUTY_TOKEN", T("u+", (URLSAFE, 18))
    ),
    Kind("pagerduty_routing_key", "observability", "PagerDuty routing key", "PD_ROUTING_KEY", T((HEX, 32))),
    # Opsgenie docs: API keys are UUIDs ("Authorization: GenieKey <key>").
    Kind(
        "opsgenie_key",
        "observability",
        "Opsgenie API key",
        "OPSGENIE_API_KEY",
        lambda r: (t := r.uuid(), mid(t, trim=0)),
    ),
    # Axiom docs: API tokens xaat- + UUID.
    Kind(
        "axiom_token",
        "observability",
        "Axiom token",
        "AXIOM_TOKEN",
        lambda r: (t := "xaat-" + r.uuid(), mid(t[5:], trim=0)),
    ),
    # Rollbar docs: access tokens 32 hex (post_server_item is secret).
    Kind("rollbar_token", "observability", "Rollbar server token", "ROLLBAR_ACCESS_TOKEN", T((HEX, 32))),
    # PostHog docs: personal API keys phx_ + 43 (the project key phc_ is public).
    Kind(
        "posthog_personal",
        "observability",
        "PostHog personal API key",
        "POSTHOG_PERSONAL_API_KEY",
        T("phx_", (AN, 43)),
    ),
    # LaunchDarkly docs: server-side SDK keys sdk-<uuid>, keep secret; API tokens api-<uuid>.
    Kind(
        "launchdarkly_sdk",
        "observability",
        "LaunchDarkly SDK key",
        "LD_SDK_KEY",
        lambda r: (t := "sdk-" + r.uuid(), mid(t[4:], trim=0)),
    ),
    # ai
    Kind("openai_project_key", "ai", "OpenAI key", "OPENAI_API_KEY", openai_project),
    # OpenAI legacy keys: sk- + 20 + T3BlbkFJ + 20.
    Kind("openai_legacy_key", "ai", "OpenAI key", "OPENAI_KEY", T("sk-", (AN, 20), "T3BlbkFJ", (AN, 20))),
    Kind("anthropic_key", "ai", "Anthropic key", "ANTHROPIC_API_KEY", anthropic),
    # Google AI Studio docs: Gemini API keys are Google Cloud API keys, AIza + 35 base64url.
    Kind("gemini_api_key", "ai", "Gemini API key", "GEMINI_API_KEY", T("AIza", (URLSAFE, 35))),
    # Hugging Face docs: user access tokens hf_ + 34.
    Kind("huggingface_token", "ai", "Hugging Face token", "HF_TOKEN", T("hf_", (AN, 34))),
    # Cohere: API keys 40 alphanumerics.
    Kind("cohere_key", "ai", "Cohere key", "CO_API_KEY", T((AN, 40))),
    # Mistral: API keys 32 alphanumerics.
    Kind("mistral_key", "ai", "Mistral key", "MISTRAL_API_KEY", T((AN, 32))),
    # Groq docs: gsk_ + 52.
    Kind("groq_key", "ai", "Groq key", "GROQ_API_KEY", T("gsk_", (AN, 52))),
    # Replicate docs: r8_ + 37.
    Kind("replicate_token", "ai", "Replicate token", "REPLICATE_API_TOKEN", T("r8_", (AN, 37))),
    # Perplexity docs: pplx- + 48.
    Kind("perplexity_key", "ai", "Perplexity key", "PPLX_API_KEY", T("pplx-", (AN, 48))),
    # Together AI: 64 hex.
    Kind("together_key", "ai", "Together key", "TOGETHER_API_KEY", T((HEX, 64))),
    # DeepSeek / DashScope docs: sk- + 32 hex.
    Kind("deepseek_key", "ai", "DeepSeek key", "DEEPSEEK_API_KEY", T("sk-", (HEX, 32))),
    Kind("dashscope_key", "ai", "DashScope (Qwen) key", "DASHSCOPE_API_KEY", T("sk-", (HEX, 32))),
    # xAI docs: xai- + 80.
    Kind("xai_key", "ai", "xAI key", "XAI_API_KEY", T("xai-", (AN, 80))),
    # OpenRouter docs: sk-or-v1- + 64 hex.
    Kind("openrouter_key", "ai", "OpenRouter key", "OPENROUTER_API_KEY", T("sk-or-v1-", (HEX, 64))),
    # Fireworks docs: fw_ + 24.
    Kind("fireworks_key", "ai", "Fireworks key", "FIREWORKS_API_KEY", T("fw_", (AN, 24))),
    # LangSmith docs: lsv2_pt_<32 hex>_<10 hex>.
    Kind(
        "langsmith_key", "ai", "LangSmith key", "LANGSMITH_API_KEY", T("lsv2_pt_", (HEX, 32), "_", (HEX, 10))
    ),
    # ElevenLabs: sk_ + 48 hex.
    Kind("elevenlabs_key", "ai", "ElevenLabs key", "ELEVENLABS_API_KEY", T("sk_", (HEX, 48))),
    # Deepgram: 40 hex.
    Kind("deepgram_key", "ai", "Deepgram key", "DEEPGRAM_API_KEY", T((HEX, 40))),
    # Azure OpenAI docs: keys 32 hex, sent as api-key header.
    Kind("azure_openai_key", "ai", "Azure OpenAI key", "AZURE_OPENAI_API_KEY", T((HEX, 32))),
    # Weights & Biases: API keys 40 hex.
    Kind("wandb_key", "ai", "W&B key", "WANDB_API_KEY", T((HEX, 40))),
    Kind("zhipu_key", "ai", "Zhipu GLM key", "ZHIPUAI_API_KEY", zhipu),
    # Moonshot docs: sk- + 48.
    Kind("moonshot_key", "ai", "Moonshot key", "MOONSHOT_API_KEY", T("sk-", (AN, 48))),
    # saas
    # SendGrid docs: SG.<22>.<43>.
    Kind(
        "sendgrid_key",
        "saas",
        "SendGrid key",
        "SENDGRID_API_KEY",
        T("SG.", (URLSAFE, 22), ".", (URLSAFE, 43)),
    ),
    # Mailgun docs: private API keys key- + 32 hex (newer: 32 hex-8-8).
    Kind("mailgun_key", "saas", "Mailgun key", "MAILGUN_API_KEY", T("key-", (HEX, 32))),
    # Mailchimp docs: 32 hex + -us<dc>.
    Kind(
        "mailchimp_key",
        "saas",
        "Mailchimp key",
        "MAILCHIMP_API_KEY",
        lambda r: tok(r, (HEX, 32), f"-us{r.d(2)}"),
    ),
    # Postmark docs: server tokens are UUIDs (X-Postmark-Server-Token).
    Kind(
        "postmark_token",
        "saas",
        "Postmark server token",
        "POSTMARK_SERVER_TOKEN",
        lambda r: (t := r.uuid(), mid(t, trim=0)),
    ),
    # Brevo docs: xkeysib-<64 hex>-<16>.
    Kind("brevo_key", "saas", "Brevo key", "BREVO_API_KEY", T("xkeysib-", (HEX, 64), "-", (AN, 16))),
    # Resend docs: re_ + 8 + _ + 24.
    Kind("resend_key", "saas", "Resend key", "RESEND_API_KEY", T("re_", (AN, 8), "_", (AN, 24))),
    # Shopify docs: shpat_ admin tokens, shpss_ shared secrets, 32 hex.
    Kind(
        "shopify_admin_token", "saas", "Shopify admin token", "SHOPIFY_ACCESS_TOKEN", T("shpat_", (HEX, 32))
    ),
    Kind(
        "shopify_shared_secret", "saas", "Shopify shared secret", "SHOPIFY_API_SECRET", T("shpss_", (HEX, 32))
    ),
    # Atlassian docs: API tokens ATATT3xFfGF0 + long base64url + 8 hex checksum.
    Kind(
        "atlassian_api_token",
        "saas",
        "Atlassian API token",
        "JIRA_API_TOKEN",
        T("ATATT3xFfGF0", (URLSAFE, 170), "=", (HEXU, 8)),
    ),
    # Notion docs: internal integration secrets ntn_ + 46 (older secret_ + 43).
    Kind("notion_secret", "saas", "Notion integration secret", "NOTION_TOKEN", T("ntn_", (AN, 46))),
    # Airtable docs: personal access tokens pat<14>.<64 hex>.
    Kind("airtable_pat", "saas", "Airtable PAT", "AIRTABLE_TOKEN", T("pat", (AN, 14), ".", (HEX, 64))),
    # Linear docs: lin_api_ + 40.
    Kind("linear_key", "saas", "Linear API key", "LINEAR_API_KEY", T("lin_api_", (AN, 40))),
    # HubSpot docs: private app tokens pat-na1-<uuid>.
    Kind(
        "hubspot_token",
        "saas",
        "HubSpot private app token",
        "HUBSPOT_ACCESS_TOKEN",
        lambda r: (t := "pat-na1-" + r.uuid(), mid(t[8:], trim=0)),
    ),
    # Okta docs: API tokens 00 + 40 base64url.
    Kind("okta_token", "saas", "Okta API token", "OKTA_API_TOKEN", T("00", (URLSAFE, 40))),
    # Auth0 docs: client secrets 64 base64url.
    Kind("auth0_client_secret", "saas", "Auth0 client secret", "AUTH0_CLIENT_SECRET", T((URLSAFE, 64))),
    # Figma docs: personal access tokens figd_ + 40.
    Kind("figma_pat", "saas", "Figma token", "FIGMA_TOKEN", T("figd_", (URLSAFE, 40))),
    # Dropbox docs: short-lived tokens sl. + ~140 base64url.
    Kind("dropbox_token", "saas", "Dropbox token", "DROPBOX_ACCESS_TOKEN", T("sl.", (URLSAFE, 138))),
    # ClickUp docs: pk_<user id>_<32 uppercase alnum>.
    Kind(
        "clickup_token",
        "saas",
        "ClickUp token",
        "CLICKUP_API_TOKEN",
        lambda r: tok(r, f"pk_{r.d(8)}_", (UAN, 32)),
    ),
    # Contentful docs: CFPAT- + 43.
    Kind(
        "contentful_pat",
        "saas",
        "Contentful token",
        "CONTENTFUL_MANAGEMENT_TOKEN",
        T("CFPAT-", (URLSAFE, 43)),
    ),
    # Postman docs: PMAK-<24 hex>-<34 hex>.
    Kind("postman_key", "saas", "Postman API key", "POSTMAN_API_KEY", T("PMAK-", (HEX, 24), "-", (HEX, 34))),
    Kind("mapbox_secret_token", "saas", "Mapbox secret token", "MAPBOX_SECRET_TOKEN", mapbox_secret),
    # X (Twitter) docs: app bearer tokens AAAAAAAAAAAAAAAAAAAAA + ~90 url-encoded base64.
    Kind(
        "twitter_bearer",
        "saas",
        "X bearer token",
        "TWITTER_BEARER_TOKEN",
        T("AAAAAAAAAAAAAAAAAAAAA", (AN, 30), "%3D", (AN, 50)),
    ),
    # Meta docs: access tokens begin EAA.
    Kind("facebook_token", "saas", "Facebook page token", "FB_PAGE_ACCESS_TOKEN", T("EAAG", (AN, 180))),
    Kind(
        "onepassword_sa_token",
        "saas",
        "1Password service account token",
        "OP_SERVICE_ACCOUNT_TOKEN",
        onepassword,
    ),
    # Doppler docs: service tokens dp.st.<config>.<40>.
    Kind("doppler_token", "saas", "Doppler service token", "DOPPLER_TOKEN", T("dp.st.prd.", (AN, 40))),
    # Zendesk docs: API tokens 40 alphanumerics (user/token basic auth).
    Kind("zendesk_token", "saas", "Zendesk API token", "ZENDESK_API_TOKEN", T((AN, 40))),
    Kind("basic_auth_header", "saas", "basic auth header", "AUTH_HEADER", basic_auth),
    Kind("django_secret_key", "saas", "Django SECRET_KEY", "DJANGO_SECRET_KEY", django_secret),
    # Generic: an in-house service's token under a secret name, 32 hex or random words and digits.
    Kind("generic_hex_under_name", "saas", "internal API token", "INVOICING_AUTH_TOKEN", T((HEX, 32))),
    Kind(
        "generic_password",
        "saas",
        "service password",
        "SMTP_PASSWORD",
        lambda r: (p := r.password(), mid(p, trim=1)),
    ),
]


# --- contexts ------------------------------------------------------------------------------------------------

# A context takes (rand, variable name, value, label) and returns the memory text.
Context = Callable[[Rand, str, str, str], str]


def _lower(var: str) -> str:
    return var.lower()


LINE_CONTEXTS: list[Context] = [
    lambda r, v, x, lab: f"{v}={x}",
    lambda r, v, x, lab: f"export {v}='{x}'",
    lambda r, v, x, lab: f"$ {v}={x} ./scripts/deploy.sh --env prod\nDeploying... done (42s)",
    lambda r, v, x, lab: (
        f'# .env.production (copied from the old box)\nNODE_ENV=production\n{v}="{x}"\nPORT=8080'
    ),
    lambda r, v, x, lab: (
        f'services:\n  api:\n    image: acme/api:1.14\n    environment:\n      {v}: "{x}"\n      LOG_LEVEL: info'
    ),
    lambda r, v, x, lab: f'[default]\n{_lower(v)} = "{x}"\nregion = "eu-west-1"',
    lambda r, v, x, lab: json.dumps({"name": "billing-worker", "env": {v: x, "RETRIES": "3"}}, indent=2),
    lambda r, v, x, lab: (
        f'resource "kubernetes_secret" "app" {{\n  metadata {{ name = "app" }}\n  data = {{\n    {_lower(v)} = "{x}"\n  }}\n}}'
    ),
    lambda r, v, x, lab: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\nstringData:\n  {v}: {x}"
    ),
    lambda r, v, x, lab: f'<appSettings>\n  <add key="{v}" value="{x}" />\n</appSettings>',
    lambda r, v, x, lab: f'client = Client(api_key="{x}")  # TODO move to settings before merging',
    lambda r, v, x, lab: f'const client = new Client({{ token: "{x}", timeout: 5000 }});',
    lambda r, v, x, lab: f'os.Setenv("{v}", "{x}") // temporary, see incident-2291',
    lambda r, v, x, lab: f'let {_lower(v)} = "{x}"; // rust integration test',
    lambda r, v, x, lab: f"curl -sS -H 'Authorization: Bearer {x}' https://api.internal.acme.io/v2/status",
    lambda r, v, x, lab: (
        f"Incident 4417 notes: the {lab} leaked in the build log was `{x}`; revoked at 14:05 UTC."
    ),
    lambda r, v, x, lab: f"| service | {lab} |\n|---|---|\n| reports | {x} |",
    lambda r, v, x, lab: f"Runbook step 3: set {v} to {x} in the staging vault, then restart the worker.",
    lambda r, v, x, lab: f"2026-11-30T08:12:44Z ERROR auth failed for token={x} status=401 path=/v1/jobs",
    lambda r, v, x, lab: (
        f'Traceback (most recent call last):\n  File "sync.py", line 88, in push\n    raise AuthError(f"rejected {x}")\nAuthError: rejected {x}'
    ),
    lambda r, v, x, lab: f"- name: Publish\n  env:\n    {v}: {x}\n  run: make publish",
    lambda r, v, x, lab: f"In [7]: {_lower(v)} = '{x}'\nIn [8]: df = fetch(key={_lower(v)})",
    lambda r, v, x, lab: f"Screenshot (settings page, transcribed):\n  {lab}\n  {x}\n  [Copy]   [Revoke]",
    lambda r, v, x, lab: (
        f"PR #812: switch the nightly job to the new {lab}. For reviewers: {x} (staging only, please don't share)"
    ),
    lambda r, v, x, lab: (
        f"Hi Sam,\n\nas discussed, here is the {lab} for the partner sandbox: {x}\n\nBest,\nIrene"
    ),
    lambda r, v, x, lab: f"[{v.lower()}]\nvalue = {x}\n; rotated 2026-10-02",
    lambda r, v, x, lab: f"kubectl create secret generic app --from-literal={v}={x} -n prod",
    lambda r, v, x, lab: f"heroku config:set {v}={x} -a acme-api",
    lambda r, v, x, lab: f'gh secret set {v} --body "{x}" --repo acme/infra',
    lambda r, v, x, lab: f'<property name="{_lower(v)}">{x}</property>',
    lambda r, v, x, lab: f"{_lower(v)}: !!str {x}\ntimeout_s: 30",
    lambda r, v, x, lab: f'$env:{v} = "{x}"; .\\build.ps1',
]

# Chat in several human languages, the token with no variable next to it.
CHAT_CONTEXTS: list[Context] = [
    lambda r, v, x, lab: f"@channel the {lab} for staging is {x} — don't paste it anywhere else",
    lambda r, v, x, lab: f"voici la clé ({lab}) pour la démo de demain : {x}",
    lambda r, v, x, lab: f"hier ist der Schlüssel, bitte nicht weitergeben: {x}",
    lambda r, v, x, lab: f"te paso el token: {x} (caduca el viernes)",
    lambda r, v, x, lab: f"segue o token do ambiente de testes: {x}",
    lambda r, v, x, lab: f"这是测试环境的密钥：{x}，用完请删除",
    lambda r, v, x, lab: f"本番用のトークンです：{x} 共有しないでください",
    lambda r, v, x, lab: f"운영 키 공유드립니다: {x}",
    lambda r, v, x, lab: f"вот ключ от прод-окружения: {x}",
    lambda r, v, x, lab: f"ecco la chiave che mi hai chiesto {x}",
    lambda r, v, x, lab: f"dit is de sleutel voor de koppeling: {x}",
    lambda r, v, x, lab: f"yeni anahtar bu: {x}",
    lambda r, v, x, lab: f"user said: 'it keeps failing with {x}, any idea?'",
    lambda r, v, x, lab: f"note to self: {x}",
    lambda r, v, x, lab: f"{x}",
]

BLOCK_CONTEXTS: list[Context] = [
    lambda r, v, x, lab: f"Saved the {lab} the customer sent, so we can reproduce:\n\n```\n{x}\n```",
    lambda r, v, x, lab: f"$ cat ~/.config/acme/{_lower(v)}.txt\n{x}\n$",
    lambda r, v, x, lab: f"{v}<<EOF\n{x}\nEOF",
    lambda r, v, x, lab: (
        f"Runbook: restore access\n1. Paste this into the secrets manager as `{v}`:\n{x}\n2. Redeploy."
    ),
    lambda r, v, x, lab: (
        "- name: write credentials\n  copy:\n    dest: /etc/app/creds\n    content: |\n"
        + "\n".join("      " + line for line in x.splitlines())
    ),
    lambda r, v, x, lab: f"Slack thread, #infra: (Mei) pasting the {lab} here until the vault is back:\n{x}",
    lambda r, v, x, lab: f"Ticket OPS-{r.d(4)}: ce fichier traînait sur le serveur de build :\n{x}",
]

# Contexts for the file-format kinds, where a real file carries the value.
FILE_CONTEXTS: dict[str, list[Context]] = {
    "npm_token": [
        lambda r, v, x, lab: f"# ~/.npmrc\n//registry.npmjs.org/:_authToken={x}\nalways-auth=true",
        lambda r, v, x, lab: f"npm config set //registry.npmjs.org/:_authToken {x}",
    ],
    "pypi_token": [
        lambda r, v, x, lab: (
            f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {x}"
        ),
        lambda r, v, x, lab: f"twine upload -u __token__ -p {x} dist/*",
    ],
    "kubeconfig_sa_token": [
        lambda r, v, x, lab: f"users:\n- name: ci-deployer\n  user:\n    token: {x}\ncontexts:\n- name: prod",
    ],
    "k8s_bootstrap_token": [
        lambda r, v, x, lab: (
            f"kubeadm join 10.0.0.10:6443 --token {x} --discovery-token-ca-cert-hash sha256:{r.s(HEX, 64)}"
        ),
    ],
    "docker_hub_pat": [
        lambda r, v, x, lab: f"echo '{x}' | docker login -u acmeci --password-stdin",
    ],
    "crates_io_token": [lambda r, v, x, lab: f'# ~/.cargo/credentials.toml\n[registry]\ntoken = "{x}"'],
    "gitlab_pat": [lambda r, v, x, lab: f"git clone https://oauth2:{x}@gitlab.com/acme/platform.git"],
    "github_pat_classic": [
        lambda r, v, x, lab: f"git remote set-url origin https://x-access-token:{x}@github.com/acme/api.git"
    ],
    "zulip_api_key": [
        lambda r, v, x, lab: f"[api]\nemail=bot@acme.zulipchat.com\nkey={x}\nsite=https://acme.zulipchat.com"
    ],
    "splunk_hec": [
        lambda r, v, x, lab: (
            f"curl -k https://splunk:8088/services/collector -H 'Authorization: Splunk {x}' -d '{{\"event\":\"hi\"}}'"
        )
    ],
    "opsgenie_key": [
        lambda r, v, x, lab: (
            f"curl -X POST https://api.opsgenie.com/v2/alerts -H 'Authorization: GenieKey {x}'"
        )
    ],
    "azure_openai_key": [
        lambda r, v, x, lab: f"curl $ENDPOINT/openai/deployments/gpt4o/chat/completions -H 'api-key: {x}'"
    ],
    "postmark_token": [lambda r, v, x, lab: f"X-Postmark-Server-Token: {x}"],
}


# --- disguises -----------------------------------------------------------------------------------------------

DISGUISES = [
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split",
    "placeholder",
]
WEIGHTS = [40, 8, 7, 8, 7, 8, 8, 7, 7]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u200f", "\u200e", "\u202c", "\u2069"]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def insert_at(text: str, positions: list[int], chars: list[str]) -> str:
    out = text
    for pos, ch in sorted(zip(positions, chars, strict=True), reverse=True):
        out = out[:pos] + ch + out[pos:]
    return out


def _each_line_with(text: str, secret: str, change: Callable[[str], str]) -> str:
    return "\n".join(change(line) if secret in line else line for line in text.split("\n"))


def _inside(r: Rand, secret: str, chars: list[str]) -> str:
    """The secret with the given characters put at distinct places strictly inside it."""
    pos = r.rng.sample(range(2, len(secret) - 1), len(chars))
    return insert_at(secret, pos, chars)


def disguise(r: Rand, how: str, text: str, value: str, secret: str) -> str:
    """The text with every occurrence of the credential disguised; a context may repeat the value."""
    rng = r.rng
    single = value in text and "\n" not in value
    if how in ("plain", "placeholder"):
        return text
    if how == "zero_width":
        return text.replace(
            secret, _inside(r, secret, [rng.choice(INVISIBLE) for _ in range(rng.randint(1, 3))])
        )
    if how == "soft_hyphen":
        return text.replace(secret, _inside(r, secret, ["\u00ad"] * rng.randint(1, 2)))
    if how == "bidi":
        return text.replace(secret, _inside(r, secret, [rng.choice(BIDI[:6]), rng.choice(BIDI[6:])]))
    if how == "fullwidth":
        if single and rng.random() < 0.5:
            return text.replace(value, fullwidth(value))
        a = rng.randint(0, len(secret) // 2)
        return text.replace(secret, secret[:a] + fullwidth(secret[a:]))
    if how == "split":
        cut = len(secret) // 2
        brk = rng.choice(["\n", "\\\n    ", "\n  ", "\n\t"])
        return text.replace(secret, secret[:cut] + brk + secret[cut:])
    if how == "percent":
        if rng.random() < 0.4:
            # The whole line URL-encoded: NAME%3Dvalue, the token's own characters left as they are.
            encoded = _each_line_with(text, secret, lambda line: quote(line, safe=""))
            if encoded != text:
                return encoded
        target = value if single else secret
        every = "".join(f"%{b:02X}" for b in target.encode())
        encoded = quote(target, safe="")
        return text.replace(target, every if encoded == target or rng.random() < 0.4 else encoded)
    if how == "base64":
        if single and rng.random() < 0.5:
            return text.replace(value, b64(value))
        return _each_line_with(text, secret, b64)
    raise ValueError("unknown disguise; use one of DISGUISES")


def credential_samples(rng: random.Random) -> list[tuple[Sample, str]]:
    r = Rand(rng)
    out: list[tuple[Sample, str]] = []
    for kind in KINDS:
        for i in range(PER_KIND):
            how = rng.choices(DISGUISES, WEIGHTS)[0]
            if how == "placeholder":
                words = PLACEHOLDER_WORDS[:]
                rng.shuffle(words)
                # The first word the token's alphabet can hold is woven in; if none fits it stays plain.
                for word in words:
                    r.word = word
                    state = rng.getstate()
                    value, secret = kind.gen(r)
                    if not r.word and word in value:
                        break
                    rng.setstate(state)
                else:
                    r.word = ""
                    how = "plain"
                    value, secret = kind.gen(r)
                r.word = ""
            else:
                value, secret = kind.gen(r)
            if kind.name in FILE_CONTEXTS and i % 3 == 0:
                ctx = rng.choice(FILE_CONTEXTS[kind.name])
            elif kind.block or "\n" in value:
                ctx = rng.choice(BLOCK_CONTEXTS)
            elif i % 3 == 2:
                ctx = rng.choice(CHAT_CONTEXTS)
            else:
                ctx = rng.choice(LINE_CONTEXTS)
            raw = ctx(r, kind.var, value, kind.label)
            text = disguise(r, how, raw, value, secret)
            out.append((Sample(kind.name, kind.group, text, how, secret), raw))
    return out


# --- look-alikes ---------------------------------------------------------------------------------------------


def _lookalike_texts(r: Rand) -> dict[str, Callable[[], str]]:
    s, d, u = r.s, r.d, r.uuid

    def b64_text() -> str:
        return b64(
            r.pick(
                [
                    "Hello from the nightly report",
                    '{"user":"alice","role":"viewer"}',
                    "The quick brown fox jumps over the lazy dog",
                ]
            )
        )

    return {
        "git_sha": lambda: r.pick(
            [
                f"Fixed in commit {s(HEX, 40)} (cherry-picked onto release/2.3)",
                f"git revert {s(HEX, 40)}",
                f"bisect: first bad commit is {s(HEX, 12)}; the key change was in the cache layer",
            ]
        ),
        "sha256_digest": lambda: r.pick(
            [
                f"sha256sum kenfold-1.4.2.tar.gz\n{s(HEX, 64)}  kenfold-1.4.2.tar.gz",
                f"Release notes v3.1: checksums (SHA-256)\n- linux-amd64: {s(HEX, 64)}",
                f"Verified the download, SHA256 = {s(HEXU, 64)}",
            ]
        ),
        "sha512_digest": lambda: f"SHA512 ({r.pick(['app.zip', 'model.bin'])}) = {s(HEX, 128)}",
        "npm_integrity": lambda: (
            f'"node_modules/{r.pick(["lodash", "react", "zod"])}": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{s(B64, 86)}=="\n}}'
        ),
        "uuid": lambda: r.pick(
            [
                f"Request {u()} failed with 503, retried twice",
                f"primary key of the orders row: {u()}",
                f"idempotency key {u()} reused, Stripe returned the first response",
            ]
        ),
        "ulid": lambda: (
            f"event_id={r.pick('0123456789')}{s('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 25)} job=reindex status=ok"
        ),
        "ksuid": lambda: f"segment message id {s(AN, 27)} dropped (duplicate)",
        "stripe_public_ids": lambda: r.pick(
            [
                f"Refund issued for charge ch_{s(AN, 24)} on customer cus_{s(AN, 14)}",
                f"payment_intent pi_{s(AN, 24)} succeeded; client asked for the invoice in_{s(AN, 24)}",
                f"Publishable key for the checkout page (safe in the browser): pk_live_{s(AN, 99)}",
            ]
        ),
        "slack_ids": lambda: (
            f"Posted in channel C{s(UAN, 10)} by user U{s(UAN, 10)}, thread ts {d(10)}.{d(6)}"
        ),
        "aws_arn_and_account": lambda: r.pick(
            [
                f"Role: arn:aws:iam::{d(12)}:role/ci-deployer (account id {d(12)})",
                f"Bucket policy principal arn:aws:iam::{d(12)}:root; KMS key id {u()}",
                f"aws sts get-caller-identity -> UserId AIDA{s(UP + '234567', 17)}, Account {d(12)}",
            ]
        ),
        "trace_ids": lambda: (
            f"traceparent: 00-{s(HEX, 32)}-{s(HEX, 16)}-01  (trace id for the slow checkout)"
        ),
        "request_ids": lambda: r.pick(
            [
                f"x-amz-request-id: {s(UAN, 16)}\nx-amz-id-2: {s(B64, 76)}",
                f"cf-ray: {s(HEX, 16)}-FRA",
                f"X-Request-ID {s(HEX, 32)} in the nginx log",
            ]
        ),
        "base64_plain": lambda: r.pick(
            [
                f"The webhook body arrives base64-encoded: {b64_text()}",
                f"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{s(B64, 60)}",
            ]
        ),
        "documented_placeholders": lambda: r.pick(
            [
                "AWS docs example: AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "STRIPE_SECRET_KEY=sk_test_<your key>",
                'export OPENAI_API_KEY="sk-..."  # paste your own key here',
                "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "api_key: YOUR_API_KEY_HERE",
                "password: <password>",
                "DATABASE_URL=postgresql://user:password@localhost:5432/mydb",
                "SLACK_BOT_TOKEN=xoxb-your-token",
            ]
        ),
        "secret_references": lambda: r.pick(
            [
                "API_KEY=${API_KEY}",
                "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
                'token = os.environ["GITHUB_TOKEN"]',
                "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
                "SENTRY_AUTH_TOKEN: ${{ secrets.SENTRY_AUTH_TOKEN }}",
                "api_key = var.datadog_api_key\npassword = data.aws_secretsmanager_secret_version.db.secret_string",
                "const token = process.env.SLACK_BOT_TOKEN ?? '';",
                "OPENAI_API_KEY=op://Engineering/OpenAI/credential",
            ]
        ),
        "ssh_public_key": lambda: (
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{s(B64, 43)} {r.pick(['alice@laptop', 'deploy@ci'])}"
        ),
        "pem_public_key": lambda: (
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
            + s(B64, 20)
            + "\n"
            + "\n".join(s(B64, 64) for _ in range(5))
            + "\nIDAQAB\n-----END PUBLIC KEY-----"
        ),
        "key_fingerprint": lambda: (
            f"Host key fingerprint is SHA256:{s(B64, 43)}. Public key fingerprint matches the one in the wiki."
        ),
        "css_webpack_hashes": lambda: r.pick(
            [
                f'<link rel="stylesheet" href="/static/main.{s(HEX, 20)}.css" integrity="sha384-{s(B64, 64)}">',
                f"chunk {d(3)}.{s(HEX, 8)}.js 212 KiB [emitted] [immutable] contenthash {s(HEX, 20)}",
            ]
        ),
        "youtube_ids": lambda: f"Watch the talk: https://www.youtube.com/watch?v={s(URLSAFE, 11)}&t={d(3)}s",
        "docker_digest": lambda: f"image: ghcr.io/acme/api@sha256:{s(HEX, 64)}",
        "nix_store_path": lambda: f"/nix/store/{s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.1",
        "ipfs_cid": lambda: f"pinned to ipfs://bafybei{s('abcdefghijklmnopqrstuvwxyz234567', 51)}",
        "sentry_dsn_public": lambda: (
            f"SENTRY_DSN=https://{s(HEX, 32)}@o{d(6)}.ingest.sentry.io/{d(7)}  # DSNs are not secret"
        ),
        "public_client_keys": lambda: r.pick(
            [
                f"ALGOLIA_SEARCH_ONLY_KEY={s(HEX, 32)}  # search-only key, public by design",
                f"NEXT_PUBLIC_POSTHOG_KEY=phc_{s(AN, 43)}",
                f"mapboxgl.accessToken = 'pk.{b64url(json.dumps({'u': 'acme', 'a': s(LAN, 25)}))}.{s(URLSAFE, 22)}';",
                f"FIREBASE_WEB_CONFIG apiKey is public but restricted by referrer; measurementId G-{s(UAN, 10)}",
            ]
        ),
        "supabase_anon_key": lambda: (
            "SUPABASE_ANON_KEY (safe in the browser with RLS)="
            + jwt(r, {"iss": "supabase", "ref": s(LO, 20), "role": "anon", "iat": 1718000000})[0]
        ),
        "prose_about_secrets": lambda: r.pick(
            [
                "Rotate the GitHub token every 90 days and never paste it into chat.",
                "Policy: Stripe restricted keys only for the reporting job; the secret key stays in Vault.",
                "The token count for this prompt was 18,442; the key insight is caching the embeddings.",
                "Remember: the AWS secret access key is shown once; store it in the password manager.",
                "Die API-Schlüssel werden jeden Monat rotiert; niemals ins Repo committen.",
                "密钥请放在 KMS 里，不要写进配置文件。",
                f"Primary key migration 00{d(2)}_add_index done; token bucket limit set to {d(3)} rps.",
            ]
        ),
        "lockfile_hashes": lambda: (
            f'[[package]]\nname = "{r.pick(["requests", "numpy", "idna"])}"\nversion = "2.32.3"\nfiles = [\n  {{file = "pkg-2.32.3-py3-none-any.whl", hash = "sha256:{s(HEX, 64)}"}},\n]'
        ),
        "object_ids": lambda: r.pick(
            [
                f'MongoDB _id ObjectId("{s(HEX, 24)}") missing from the export',
                f"Notion page id {s(HEX, 32)} moved to the archive",
                f"GCP project number {d(12)}, instance id {d(19)}",
                f"Azure subscription {u()} / tenant {u()}",
            ]
        ),
        "cache_keys": lambda: (
            f"cache key v2:user:{d(6)}:{s(HEX, 16)} evicted; session key prefix sess_ is rotated by the framework"
        ),
        "gpg_fingerprint": lambda: f"Release signing key (public): gpg --recv-keys {s(HEXU, 40)}",
    }


def lookalike_samples(rng: random.Random, per_kind: int = 22) -> list[Sample]:
    r = Rand(rng)
    texts = _lookalike_texts(r)
    # A note's opening varies so the fixed documented strings do not repeat word for word.
    openings = [
        "",
        "README: ",
        "docs/setup.md says:\n",
        "From the wiki — ",
        "Note: ",
        "PR review comment: ",
        "memo: ",
    ]
    return [
        Sample(name, "lookalike", r.pick(openings) + make())
        for name, make in texts.items()
        for _ in range(per_kind)
    ]


def eleventh_part_with_raw() -> tuple[list[tuple[Sample, str]], list[Sample]]:
    """The credentials, each with its text before disguising, and the look-alikes."""
    rng = random.Random(SEED)
    return credential_samples(rng), lookalike_samples(rng)


def eleventh_part() -> list[Sample]:
    credentials, lookalikes = eleventh_part_with_raw()
    return [sample for sample, _ in credentials] + lookalikes
