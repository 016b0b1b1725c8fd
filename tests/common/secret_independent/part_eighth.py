"""The eighth independent part: credentials of about 110 providers generated from their documented formats,
pasted into the texts agents store (notes, configs in many formats, shell history, chat in many human
languages, logs, tracebacks, transcribed screenshots), disguised or not, and look-alikes that share those texts.

Written from provider documentation only, without reading the filter's rules. Each kind's comment says where
its format comes from.
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

SEED = 8_061_2026
SAMPLES_PER_KIND = 10
LOOKALIKES_PER_KIND = 22

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
LAN = LO + DG
UAN = UP + DG
HEX = "0123456789abcdef"
HEXU = HEX.upper()
B64 = AN + "+/"
URLSAFE = AN + "-_"
B32L = LO + "234567"
B32U = UP + "234567"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

# Words that make a real random token look like a placeholder; each is only spliced into a random run whose
# alphabet contains all of its characters, so the token keeps its documented alphabet.
PLACEHOLDER_WORDS = [
    "EXAMPLE",
    "example",
    "xxxx",
    "XXXX",
    "sample",
    "SAMPLE",
    "test",
    "TEST",
    "dummy",
    "DUMMY",
    "changeme",
    "placeholder",
    "fake",
    "deadbeef",
    "00000000",
    "12345678",
    "abcdef",
]


class Gen:
    """Random pieces of a credential; with a placeholder word, the first long enough random run gets it."""

    def __init__(self, rng: random.Random, *, placeholder: bool = False) -> None:
        self.r = rng
        self.placeholder = placeholder
        self.word = ""

    def s(self, alphabet: str, n: int) -> str:
        out = "".join(self.r.choice(alphabet) for _ in range(n))
        if self.placeholder and not self.word:
            fits = [w for w in PLACEHOLDER_WORDS if set(w) <= set(alphabet) and n >= len(w) + 6]
            if fits:
                word = self.r.choice(fits)
                at = self.r.randint(2, n - len(word) - 2)
                out = out[:at] + word + out[at + len(word) :]
                self.word = word
        return out

    def d(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + "".join(self.r.choice(DG) for _ in range(n - 1))

    def b(self, n: int) -> bytes:
        return bytes(self.r.randrange(256) for _ in range(n))

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        h = h[:12] + "4" + h[13:16] + self.r.choice("89ab") + h[17:]
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def words(self) -> str:
        pool = [
            "otter",
            "granite",
            "maple",
            "harbor",
            "velvet",
            "cobalt",
            "juniper",
            "lantern",
            "sable",
            "quartz",
        ]
        return "".join(self.r.choice(pool).capitalize() for _ in range(3)) + self.d(4) + self.r.choice("!#%*")


def b64s(data: bytes) -> str:
    return base64.b64encode(data).decode()


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, rem = divmod(n, 62)
        out = (DG + UP + LO)[rem] + out
    return out.rjust(width, "0")


def github_style(g: Gen, prefix: str) -> str:
    # GitHub blog "Behind GitHub's new authentication token formats": prefix, 30 random base62 characters,
    # then a CRC32 checksum of them in 6 base62 characters. npm adopted the same shape for npm_ tokens.
    body = g.s(AN, 30)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


def jwt(g: Gen, header: dict, payload: dict) -> str:
    return ".".join([b64u(json.dumps(header).encode()), b64u(json.dumps(payload).encode()), b64u(g.b(32))])


def pem(g: Gen, label: str, size: int) -> tuple[str, str]:
    body = b64s(g.b(size))
    if g.placeholder:
        body = body[:40] + g.s(AN, 24) + body[64:]
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    # The line holding the placeholder word when there is one, else a middle line.
    core = next((line for line in lines if g.word and g.word in line), lines[len(lines) // 2])
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", core


def openssh_key(g: Gen) -> tuple[str, str]:
    # OpenSSH PROTOCOL.key: the file is base64 of "openssh-key-v1\0" + ciphername "none" + ... + the key pair.
    raw = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01" + g.b(
        300
    )
    body = b64s(raw)
    if g.placeholder:
        body = body[:120] + g.s(AN, 24) + body[144:]
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    # The line holding the placeholder word when there is one, else a middle line.
    core = next((line for line in lines if g.word and g.word in line), lines[len(lines) // 2])
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    return text, core


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    var: str
    # Returns the credential as it is pasted and the random part of it that a disguise alters.
    make: Callable[[Gen], tuple[str, str]]
    # A block is multi-line (PEM, JSON key file): only the contexts that can hold several lines take it.
    block: bool = False


def tok(fn: Callable[[Gen], str]) -> Callable[[Gen], tuple[str, str]]:
    def make(g: Gen) -> tuple[str, str]:
        value = fn(g)
        return value, value

    return make


def aws_pair(g: Gen) -> tuple[str, str]:
    # AWS IAM docs: access key ids are AKIA + 16 base32 capitals, secret access keys 40 characters of base64.
    key_id = "AKIA" + g.s(B32U, 16)
    secret = g.s(B64, 40)
    return f"aws_access_key_id = {key_id}\naws_secret_access_key = {secret}", secret


def aws_session(g: Gen) -> tuple[str, str]:
    # AWS STS docs: temporary credentials are ASIA key ids plus a long session token (base64 starting IQoJb3Jp).
    token = "IQoJb3JpZ2luX2VjE" + g.s(B64, 300)
    secret = g.s(B64, 40)
    text = f"AWS_ACCESS_KEY_ID=ASIA{g.s(B32U, 16)}\nAWS_SECRET_ACCESS_KEY={secret}\nAWS_SESSION_TOKEN={token}"
    return text, secret


def gcp_sa(g: Gen) -> tuple[str, str]:
    # Google Cloud IAM docs: a service account key file is JSON with type, project_id, private_key_id (40 hex)
    # and private_key (a PKCS#8 PEM).
    key, core = pem(g, "PRIVATE KEY", 1216)
    project = g.r.choice(["billing-prod-4417", "kf-analytics", "acme-ml-train"])
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": g.s(HEX, 40),
        "private_key": key + "\n",
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": g.d(21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(doc, indent=2), core


def azure_storage(g: Gen) -> tuple[str, str]:
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol, AccountName, AccountKey
    # (64 random bytes in base64, 88 characters) and EndpointSuffix.
    key = b64s(g.b(64))
    if g.placeholder:
        key = key[:20] + g.s(AN, 30) + key[50:]
    acct = "st" + g.s(LAN, 12)
    text = (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return text, key[4:80]


def azure_sas(g: Gen) -> tuple[str, str]:
    # Azure "Create an account SAS": sv, ss, srt, sp, se, st, spr and sig, an HMAC-SHA256 in URL-encoded base64.
    sig = quote(b64s(g.b(32)), safe="")
    if g.placeholder:
        sig = g.s(AN, 20) + sig[20:]
    acct = "st" + g.s(LAN, 10)
    text = (
        f"https://{acct}.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rl"
        f"&se=2027-01-31T18:00:00Z&st=2026-12-01T10:00:00Z&spr=https&sig={sig}"
    )
    return text, sig


def azure_sb(g: Gen) -> tuple[str, str]:
    # Azure Service Bus docs: Endpoint=sb://<ns>.servicebus.windows.net/;SharedAccessKeyName=...;SharedAccessKey=
    # a 32-byte key in base64 (44 characters).
    key = b64s(g.b(32)) if not g.placeholder else g.s(AN, 43) + "="
    text = (
        f"Endpoint=sb://{g.s(LO, 8)}-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={key}"
    )
    return text, key


def cosmos(g: Gen) -> tuple[str, str]:
    # Azure Cosmos DB docs: AccountEndpoint=https://<account>.documents.azure.com:443/;AccountKey=<88 base64>;
    key = b64s(g.b(64)) if not g.placeholder else g.s(AN, 86) + "=="
    return f"AccountEndpoint=https://{g.s(LO, 9)}.documents.azure.com:443/;AccountKey={key};", key


def conn_url(
    scheme: str, port: int, host: Callable[[Gen], str], tail: str = ""
) -> Callable[[Gen], tuple[str, str]]:
    def make(g: Gen) -> tuple[str, str]:
        pw = g.s(URLSAFE, g.r.randint(20, 32)) if g.r.random() < 0.7 else g.words()
        if g.placeholder and not g.word:
            pw = g.s(AN, 24)
        user = g.r.choice(["app", "admin", "svc_orders", "reporting", "kf"])
        return f"{scheme}://{user}:{quote(pw, safe='')}@{host(g)}:{port}/{tail}", quote(pw, safe="")

    return make


def mongo_srv(g: Gen) -> tuple[str, str]:
    # MongoDB Atlas "Connect via driver": mongodb+srv://<user>:<password>@<cluster>.<id>.mongodb.net/
    pw = g.s(AN, 24)
    return f"mongodb+srv://appUser:{pw}@cluster0.{g.s(LAN, 5)}.mongodb.net/?retryWrites=true&w=majority", pw


def pgpass(g: Gen) -> tuple[str, str]:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password
    pw = g.s(AN, 26)
    return f"db-{g.s(LAN, 6)}.internal:5432:orders:orders_rw:{pw}", pw


def mssql(g: Gen) -> tuple[str, str]:
    # Microsoft ADO.NET / Azure SQL docs: Server=tcp:<server>.database.windows.net,1433;...;Password=...;
    pw = g.s(AN, 14) + g.r.choice("!@#$") + g.s(AN, 6)
    return (
        f"Server=tcp:{g.s(LO, 8)}.database.windows.net,1433;Initial Catalog=sales;User ID=sqladmin;"
        f"Password={pw};Encrypt=True;",
        pw,
    )


def jdbc(g: Gen) -> tuple[str, str]:
    # Microsoft JDBC driver docs: jdbc:sqlserver://host:port;databaseName=...;user=...;password=...;
    pw = g.s(AN, 22)
    return f"jdbc:sqlserver://{g.s(LO, 6)}.corp:1433;databaseName=erp;user=erp_app;password={pw};", pw


def netrc(g: Gen) -> tuple[str, str]:
    # GNU inetutils .netrc: machine <host> login <name> password <token>; Heroku's CLI writes its API key there.
    key = "HRKU-AA" + g.s(URLSAFE, 58)
    return f"machine api.heroku.com\n  login ops@example.org\n  password {key}", key


def docker_config(g: Gen) -> tuple[str, str]:
    # Docker docs "docker login": ~/.docker/config.json keeps auths.<registry>.auth = base64(user:password).
    pw = g.s(AN, 32)
    auth = b64s(f"robot$ci:{pw}".encode())
    return json.dumps({"auths": {"harbor.internal.example.com": {"auth": auth}}}, indent=2), auth


def npmrc_auth(g: Gen) -> tuple[str, str]:
    # npm docs "npmrc": //<registry>/:_auth = base64(user:password) for registries that take basic auth.
    pw = g.words() + g.s(AN, 8)
    auth = b64s(f"builder:{pw}".encode())
    return f"//nexus.corp.example.com/repository/npm-private/:_auth={auth}\nalways-auth=true", auth


def pypirc(g: Gen) -> tuple[str, str]:
    # Python packaging docs ".pypirc": [distutils] index-servers, then [name] repository, username, password.
    pw = g.s(AN, 28)
    text = f"[distutils]\nindex-servers = internal\n\n[internal]\nrepository = https://pkgs.corp.example.com/simple/\nusername = release-bot\npassword = {pw}"
    return text, pw


def kubeconfig_sa(g: Gen) -> tuple[str, str]:
    # Kubernetes docs: service account tokens are RS256 JWTs with iss kubernetes/serviceaccount; a kubeconfig
    # user entry carries them under user.token.
    token = jwt(
        g,
        {"alg": "RS256", "kid": g.s(URLSAFE, 43)},
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "kubernetes.io/serviceaccount/service-account.name": "deployer",
            "sub": "system:serviceaccount:ci:deployer",
        },
    )
    text = f"users:\n- name: deployer\n  user:\n    token: {token}"
    return text, token.rsplit(".", 1)[1]


def kube_bootstrap(g: Gen) -> tuple[str, str]:
    # Kubernetes "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}
    token = g.s(LAN, 6) + "." + g.s(LAN, 16)
    return (
        f"kubeadm join 10.0.0.10:6443 --token {token} --discovery-token-ca-cert-hash sha256:{g.s(HEX, 64)}",
        token,
    )


def basic_header(g: Gen) -> tuple[str, str]:
    # RFC 7617: Authorization: Basic base64(user-id ":" password)
    auth = b64s(f"api:{g.s(AN, 30)}".encode())
    return f"Authorization: Basic {auth}", auth


def twilio(g: Gen) -> tuple[str, str]:
    # Twilio docs: Account SID AC + 32 hex, Auth Token 32 hex.
    token = g.s(HEX, 32)
    return f"TWILIO_ACCOUNT_SID=AC{g.s(HEX, 32)}\nTWILIO_AUTH_TOKEN={token}", token


def twilio_key(g: Gen) -> tuple[str, str]:
    # Twilio "API keys": the SID is SK + 32 hex, the secret 32 alphanumerics shown once.
    secret = g.s(AN, 32)
    return f"api key SK{g.s(HEX, 32)} / secret {secret}", secret


def teams_hook(g: Gen) -> tuple[str, str]:
    # Microsoft Teams incoming webhook URL: https://<tenant>.webhook.office.com/webhookb2/<guid>@<guid>/
    # IncomingWebhook/<32 hex>/<guid>; the URL itself is the credential.
    secret = g.s(HEX, 32)
    url = f"https://contoso.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{secret}/{g.uuid()}"
    return url, secret


def slack_hook(g: Gen) -> tuple[str, str]:
    # Slack "Sending messages using incoming webhooks": https://hooks.slack.com/services/T.../B.../<24 chars>
    secret = g.s(AN, 24)
    return f"https://hooks.slack.com/services/T{g.s(UAN, 10)}/B{g.s(UAN, 10)}/{secret}", secret


def discord_hook(g: Gen) -> tuple[str, str]:
    # Discord developer docs "Webhook resource": /api/webhooks/{webhook.id}/{webhook.token}
    secret = g.s(URLSAFE, 68)
    return f"https://discord.com/api/webhooks/{g.d(19)}/{secret}", secret


def discord_bot(g: Gen) -> str:
    # Discord bot tokens: base64 of the bot's snowflake id, a 6-char timestamp, and a 38-char HMAC part.
    return b64u(g.d(19).encode()) + "." + g.s(URLSAFE, 6) + "." + g.s(URLSAFE, 38)


def mercadopago(g: Gen) -> str:
    # Mercado Pago docs: production access tokens APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    return f"APP_USR-{g.d(16)}-{g.d(6)}-{g.s(HEX, 32)}-{g.d(9)}"


def razorpay(g: Gen) -> tuple[str, str]:
    # Razorpay docs "API keys": key_id rzp_live_<14> is public (checkout uses it); key_secret is 24 characters.
    secret = g.s(AN, 24)
    return f'key_id="rzp_live_{g.s(AN, 14)}"\nkey_secret="{secret}"', secret


def braintree(g: Gen) -> str:
    # Braintree/PayPal access tokens: access_token$production$<16 lowercase alnum>$<32 hex>
    return f"access_token$production${g.s(LAN, 16)}${g.s(HEX, 32)}"


def elastic_apikey(g: Gen) -> tuple[str, str]:
    # Elasticsearch "Create API key": the encoded value is base64(id:api_key), sent as Authorization: ApiKey.
    enc = b64s(f"{g.s(URLSAFE, 20)}:{g.s(URLSAFE, 22)}".encode())
    return f"Authorization: ApiKey {enc}", enc


def astra(g: Gen) -> str:
    # DataStax Astra application tokens: AstraCS:<24 alnum>:<64 hex>
    return f"AstraCS:{g.s(AN, 24)}:{g.s(HEX, 64)}"


def supabase_jwt(g: Gen) -> tuple[str, str]:
    # Supabase docs: the service_role key is a JWT (HS256) with role service_role and must stay server-side.
    token = jwt(
        g,
        {"alg": "HS256", "typ": "JWT"},
        {"iss": "supabase", "ref": g.s(LO, 20), "role": "service_role", "iat": 1714000000, "exp": 2029576000},
    )
    # The signature is the random part; the header and payload are mostly fixed, guessable fields.
    return token, token.rsplit(".", 1)[1]


def turso(g: Gen) -> tuple[str, str]:
    # Turso docs "turso db tokens create": EdDSA-signed JWTs.
    token = jwt(g, {"alg": "EdDSA", "typ": "JWT"}, {"a": "rw", "iat": 1764000000, "id": g.uuid()})
    # The signature is the random part; the header and payload are mostly fixed, guessable fields.
    return token, token.rsplit(".", 1)[1]


def atlassian(g: Gen) -> str:
    # Atlassian API tokens (2023+): ATATT3xFfGF0 + long base64url body + "=" + 8 hex checksum.
    return "ATATT3xFfGF0" + g.s(URLSAFE, 170) + "=" + g.s(HEXU, 8)


def one_password(g: Gen) -> str:
    # 1Password service account tokens: ops_ + base64url of a JSON document (starts eyJ).
    doc = json.dumps(
        {
            "signInAddress": "my.1password.com",
            "email": f"{g.s(LO, 12)}@1passwordserviceaccounts.com",
            "secretKey": "A3-" + g.s(UAN, 6),
            "srpX": g.s(HEX, 64),
            "muk": {"k": g.s(URLSAFE, 43)},
        }
    )
    return "ops_" + b64u(doc.encode())


def asana(g: Gen) -> str:
    # Asana personal access tokens: 2/<user gid>/<gid>:<32 hex>
    return f"2/{g.d(16)}/{g.d(16)}:{g.s(HEX, 32)}"


def salesforce(g: Gen) -> str:
    # Salesforce OAuth access tokens: the org id (00D + 12) then ! then the session part.
    return "00D" + g.s(AN, 12) + "!" + g.s(AN + ".", 96)


T = tok
K = Kind
KINDS: list[Kind] = [
    # --- cloud
    K("aws_access_key_pair", "cloud", "AWS_SECRET_ACCESS_KEY", aws_pair),
    K("aws_sts_session", "cloud", "AWS_SESSION_TOKEN", aws_session, block=True),
    # Google Cloud docs "API keys": AIza followed by 35 characters of [0-9A-Za-z_-].
    K("gcp_api_key", "cloud", "GOOGLE_API_KEY", T(lambda g: "AIza" + g.s(URLSAFE, 35))),
    K("gcp_service_account_json", "cloud", "GOOGLE_APPLICATION_CREDENTIALS_JSON", gcp_sa, block=True),
    # Google OAuth docs: access tokens ya29.<...>, refresh tokens 1//<...>.
    K(
        "google_oauth_access_token",
        "cloud",
        "GOOGLE_ACCESS_TOKEN",
        T(lambda g: "ya29.a0" + g.s(URLSAFE, 150)),
    ),
    K("google_oauth_refresh_token", "cloud", "GOOGLE_REFRESH_TOKEN", T(lambda g: "1//0" + g.s(URLSAFE, 99))),
    # Google Identity docs: OAuth client secrets GOCSPX- + 28 characters.
    K(
        "google_oauth_client_secret",
        "cloud",
        "GOOGLE_CLIENT_SECRET",
        T(lambda g: "GOCSPX-" + g.s(URLSAFE, 28)),
    ),
    K("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", azure_storage),
    K("azure_sas_url", "cloud", "AZURE_SAS_URL", azure_sas),
    K("azure_service_bus_connection", "cloud", "SERVICEBUS_CONNECTION", azure_sb),
    # Microsoft Entra client secrets (2022+ format): 3 characters, "8Q~", then 34 of [A-Za-z0-9_.~-].
    K(
        "azure_ad_client_secret",
        "cloud",
        "AZURE_CLIENT_SECRET",
        T(lambda g: g.s(AN, 3) + "8Q~" + g.s(AN + "_.~-", 34)),
    ),
    # DigitalOcean docs "personal access tokens": dop_v1_ + 64 hex; Spaces keys DO00 + 16 capitals + 43 secret.
    K("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", T(lambda g: "dop_v1_" + g.s(HEX, 64))),
    K("digitalocean_spaces_secret", "cloud", "SPACES_SECRET_ACCESS_KEY", T(lambda g: g.s(B64, 43))),
    # Alibaba Cloud RAM docs: AccessKey ID LTAI + 20 alnum, AccessKey Secret 30 alnum.
    K("alibaba_access_key_secret", "cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", T(lambda g: g.s(AN, 30))),
    # Tencent Cloud CAM docs: SecretId AKID + 32 alnum, SecretKey 32 alnum.
    K("tencent_secret_id", "cloud", "TENCENTCLOUD_SECRET_ID", T(lambda g: "AKID" + g.s(AN, 32))),
    # Huawei Cloud docs: AK 20 capitals/digits, SK 40 alnum.
    K("huawei_cloud_sk", "cloud", "HUAWEICLOUD_SDK_SK", T(lambda g: g.s(AN, 40))),
    # IBM Cloud docs: API keys are 44 characters of [A-Za-z0-9_-].
    K("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", T(lambda g: g.s(URLSAFE, 44))),
    # Oracle OCI docs "Required Keys": the API signing key is a PEM private key ending with an OCI_API_KEY line.
    K(
        "oci_api_signing_key",
        "cloud",
        "OCI_KEY",
        lambda g: (lambda t: (t[0] + "\nOCI_API_KEY", t[1]))(pem(g, "PRIVATE KEY", 1216)),
        block=True,
    ),
    # Linode API docs: personal access tokens are 64 hex.
    K("linode_token", "cloud", "LINODE_TOKEN", T(lambda g: g.s(HEX, 64))),
    # Hetzner Cloud docs: API tokens are 64 alphanumerics (HCLOUD_TOKEN).
    K("hetzner_cloud_token", "cloud", "HCLOUD_TOKEN", T(lambda g: g.s(AN, 64))),
    # Vultr docs: API keys are 36 capitals and digits.
    K("vultr_api_key", "cloud", "VULTR_API_KEY", T(lambda g: g.s(UAN, 36))),
    # Scaleway docs: the secret key of an API key is a UUID (the access key is SCW + 17 capitals).
    K("scaleway_secret_key", "cloud", "SCW_SECRET_KEY", T(lambda g: g.uuid())),
    # Cloudflare docs: API tokens 40 characters [A-Za-z0-9_-]; the legacy Global API Key 37 hex.
    K("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", T(lambda g: g.s(URLSAFE, 40))),
    K("cloudflare_global_key", "cloud", "CF_API_KEY", T(lambda g: g.s(HEX, 37))),
    # OVHcloud API docs: application secret and consumer key 32 alnum.
    K("ovh_application_secret", "cloud", "OVH_APPLICATION_SECRET", T(lambda g: g.s(AN, 32))),
    # Yandex Cloud docs: API keys begin AQVN; IAM tokens t1.<...>.
    K("yandex_cloud_api_key", "cloud", "YC_API_KEY", T(lambda g: "AQVN" + g.s(URLSAFE, 36))),
    K("yandex_iam_token", "cloud", "YC_IAM_TOKEN", T(lambda g: "t1.9euelZ" + g.s(URLSAFE, 140))),
    # Fly.io docs: fly tokens fo1_ + 43 characters.
    K("flyio_token", "cloud", "FLY_API_TOKEN", T(lambda g: "fo1_" + g.s(URLSAFE, 43))),
    # Heroku changelog: API keys HRKU-AA + 58 characters; kept by the CLI in .netrc.
    K("heroku_netrc", "cloud", "HEROKU_API_KEY", netrc, block=True),
    # Vercel docs: access tokens 24 alphanumerics.
    K("vercel_token", "cloud", "VERCEL_TOKEN", T(lambda g: g.s(AN, 24))),
    # Netlify docs: personal access tokens nfp_ + 36 alnum.
    K("netlify_pat", "cloud", "NETLIFY_AUTH_TOKEN", T(lambda g: "nfp_" + g.s(AN, 36))),
    # HashiCorp Vault docs "Tokens": service tokens hvs. + ~90 chars, batch tokens hvb.
    K("vault_service_token", "cloud", "VAULT_TOKEN", T(lambda g: "hvs." + g.s(URLSAFE, 90))),
    K("vault_batch_token", "cloud", "VAULT_TOKEN", T(lambda g: "hvb." + g.s(URLSAFE, 130))),
    K("kubeconfig_sa_token", "cloud", "KUBE_TOKEN", kubeconfig_sa, block=True),
    K("kubeadm_bootstrap_token", "cloud", "BOOTSTRAP_TOKEN", kube_bootstrap),
    K("ssh_private_key_openssh", "cloud", "SSH_PRIVATE_KEY", openssh_key, block=True),
    K("rsa_private_key_pem", "cloud", "TLS_KEY", lambda g: pem(g, "RSA PRIVATE KEY", 1190), block=True),
    K("ec_private_key_pem", "cloud", "EC_KEY", lambda g: pem(g, "EC PRIVATE KEY", 121), block=True),
    # --- ci
    K("github_pat_classic", "ci", "GITHUB_TOKEN", T(lambda g: github_style(g, "ghp_"))),
    K("github_oauth_token", "ci", "GH_OAUTH_TOKEN", T(lambda g: github_style(g, "gho_"))),
    K("github_app_installation_token", "ci", "GH_APP_TOKEN", T(lambda g: github_style(g, "ghs_"))),
    K("github_refresh_token", "ci", "GH_REFRESH_TOKEN", T(lambda g: github_style(g, "ghr_"))),
    # GitHub docs: fine-grained tokens github_pat_ + 22 + _ + 59.
    K(
        "github_fine_grained_pat",
        "ci",
        "GH_PAT",
        T(lambda g: "github_pat_" + g.s(AN, 22) + "_" + g.s(AN, 59)),
    ),
    # GitLab docs "Token prefixes": glpat- (personal), glrt- (runner), gldt- (deploy), glptt- (trigger).
    K("gitlab_pat", "ci", "GITLAB_TOKEN", T(lambda g: "glpat-" + g.s(URLSAFE, 20))),
    K("gitlab_runner_token", "ci", "RUNNER_TOKEN", T(lambda g: "glrt-" + g.s(URLSAFE, 20))),
    K("gitlab_deploy_token", "ci", "CI_DEPLOY_PASSWORD", T(lambda g: "gldt-" + g.s(URLSAFE, 20))),
    K("gitlab_trigger_token", "ci", "TRIGGER_TOKEN", T(lambda g: "glptt-" + g.s(HEX, 40))),
    # Bitbucket docs: app passwords begin ATBB.
    K("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", T(lambda g: "ATBB" + g.s(AN, 32))),
    # Azure DevOps docs: PATs are 52 characters of lowercase base32.
    K("azure_devops_pat", "ci", "AZURE_DEVOPS_EXT_PAT", T(lambda g: g.s(B32L, 52))),
    # CircleCI docs: personal API tokens CCIPAT_<22>_<40 hex>.
    K("circleci_pat", "ci", "CIRCLECI_TOKEN", T(lambda g: "CCIPAT_" + g.s(AN, 22) + "_" + g.s(HEX, 40))),
    # Buildkite docs: API access tokens bkua_ + 40 hex.
    K("buildkite_token", "ci", "BUILDKITE_API_TOKEN", T(lambda g: "bkua_" + g.s(HEX, 40))),
    # Jenkins: API tokens are 11 + 32 hex.
    K("jenkins_api_token", "ci", "JENKINS_API_TOKEN", T(lambda g: "11" + g.s(HEX, 32))),
    # HCP Terraform docs: API tokens <14>.atlasv1.<67>.
    K("terraform_cloud_token", "ci", "TFE_TOKEN", T(lambda g: g.s(AN, 14) + ".atlasv1." + g.s(AN, 67))),
    # Pulumi docs: access tokens pul- + 40 hex.
    K("pulumi_access_token", "ci", "PULUMI_ACCESS_TOKEN", T(lambda g: "pul-" + g.s(HEX, 40))),
    # SonarQube docs: user tokens squ_, project analysis tokens sqp_, + 40 hex.
    K(
        "sonarqube_token",
        "ci",
        "SONAR_TOKEN",
        T(lambda g: g.r.choice(["squ_", "sqp_", "sqa_"]) + g.s(HEX, 40)),
    ),
    # Snyk docs: the API token is a UUID (SNYK_TOKEN).
    K("snyk_token", "ci", "SNYK_TOKEN", T(lambda g: g.uuid())),
    # Codecov docs: repository upload tokens are UUIDs (CODECOV_TOKEN).
    K("codecov_upload_token", "ci", "CODECOV_TOKEN", T(lambda g: g.uuid())),
    # Octopus Deploy docs: API keys API- + 26-32 capitals/digits.
    K("octopus_api_key", "ci", "OCTOPUS_API_KEY", T(lambda g: "API-" + g.s(UAN, 27))),
    # Harness docs: PATs pat.<accountId>.<tokenId>.<secret>.
    K(
        "harness_pat",
        "ci",
        "HARNESS_PLATFORM_API_KEY",
        T(lambda g: f"pat.{g.s(URLSAFE, 22)}.{g.s(HEX, 24)}.{g.s(AN, 20)}"),
    ),
    # Doppler docs: service tokens dp.st.<config>.<40+>, personal dp.pt.
    K("doppler_token", "ci", "DOPPLER_TOKEN", T(lambda g: "dp.st.prd." + g.s(AN, 43))),
    # --- chat
    # Slack docs "Token types": xoxb-, xoxp-, xapp- tokens.
    K("slack_bot_token", "chat", "SLACK_BOT_TOKEN", T(lambda g: f"xoxb-{g.d(12)}-{g.d(13)}-{g.s(AN, 24)}")),
    K(
        "slack_user_token",
        "chat",
        "SLACK_USER_TOKEN",
        T(lambda g: f"xoxp-{g.d(12)}-{g.d(12)}-{g.d(13)}-{g.s(HEX, 32)}"),
    ),
    K(
        "slack_app_token",
        "chat",
        "SLACK_APP_TOKEN",
        T(lambda g: f"xapp-1-A{g.s(UAN, 10)}-{g.d(13)}-{g.s(HEX, 64)}"),
    ),
    K("slack_webhook_url", "chat", "SLACK_WEBHOOK_URL", slack_hook),
    K("discord_bot_token", "chat", "DISCORD_TOKEN", T(discord_bot)),
    K("discord_webhook_url", "chat", "DISCORD_WEBHOOK", discord_hook),
    # Telegram Bot API docs: bot tokens <bot id>:<35 characters>, e.g. 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11.
    K("telegram_bot_token", "chat", "TELEGRAM_BOT_TOKEN", T(lambda g: f"{g.d(10)}:AA{g.s(URLSAFE, 33)}")),
    K("teams_incoming_webhook", "chat", "TEAMS_WEBHOOK_URL", teams_hook),
    # Mattermost docs: personal access tokens 26 lowercase alnum.
    K("mattermost_token", "chat", "MM_TOKEN", T(lambda g: g.s(LAN, 26))),
    # Zulip docs "zuliprc": [api] email, key (32 alnum), site.
    K("zulip_api_key", "chat", "ZULIP_API_KEY", T(lambda g: g.s(AN, 32))),
    # Matrix/Synapse access tokens: syt_<base64 localpart>_<20>_<6 checksum>.
    K(
        "matrix_access_token",
        "chat",
        "MATRIX_ACCESS_TOKEN",
        T(lambda g: f"syt_{b64u(b'opsbot')}_{g.s(AN, 20)}_{g.s(AN, 6)}"),
    ),
    # LINE Messaging API docs: long-lived channel access tokens, ~172 characters of base64 ending in "=".
    K("line_channel_access_token", "chat", "LINE_CHANNEL_ACCESS_TOKEN", T(lambda g: g.s(B64, 171) + "=")),
    K("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", twilio),
    K("twilio_api_key_secret", "chat", "TWILIO_API_SECRET", twilio_key),
    # Vonage docs: API secret 16 alphanumerics.
    K("vonage_api_secret", "chat", "VONAGE_API_SECRET", T(lambda g: g.s(AN, 16))),
    # Pusher Channels docs: app secret 20 hex.
    K("pusher_app_secret", "chat", "PUSHER_APP_SECRET", T(lambda g: g.s(HEX, 20))),
    # Zoom docs: Server-to-Server OAuth client secret 32 alnum.
    K("zoom_client_secret", "chat", "ZOOM_CLIENT_SECRET", T(lambda g: g.s(AN, 32))),
    # Rocket.Chat docs: personal access tokens 43 characters, sent as X-Auth-Token.
    K("rocketchat_token", "chat", "ROCKETCHAT_AUTH_TOKEN", T(lambda g: g.s(URLSAFE, 43))),
    # Intercom docs: access tokens dG9rOj... (base64 of "tok:").
    K(
        "intercom_access_token",
        "chat",
        "INTERCOM_TOKEN",
        T(lambda g: b64s(f"tok:{g.uuid()}:{g.uuid()}".encode()).rstrip("=")),
    ),
    # --- payment
    # Stripe docs "API keys": sk_live_ secret keys and rk_live_ restricted keys; whsec_ webhook signing secrets.
    K("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", T(lambda g: "sk_live_51" + g.s(AN, 97))),
    K("stripe_restricted_key", "payment", "STRIPE_RESTRICTED_KEY", T(lambda g: "rk_live_51" + g.s(AN, 97))),
    K("stripe_test_secret_key", "payment", "STRIPE_TEST_KEY", T(lambda g: "sk_test_51" + g.s(AN, 97))),
    K("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", T(lambda g: "whsec_" + g.s(AN, 32))),
    # Square docs: production access tokens EAAA + 60; OAuth application secrets sq0csp- + 43.
    K("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", T(lambda g: "EAAA" + g.s(URLSAFE, 60))),
    K("square_oauth_secret", "payment", "SQUARE_APP_SECRET", T(lambda g: "sq0csp-" + g.s(URLSAFE, 43))),
    K("braintree_access_token", "payment", "BT_ACCESS_TOKEN", T(braintree)),
    # PayPal REST docs: client secret, 80 characters [A-Za-z0-9_-].
    K("paypal_client_secret", "payment", "PAYPAL_CLIENT_SECRET", T(lambda g: "E" + g.s(URLSAFE, 79))),
    # Adyen docs: API keys begin AQE and are ~150 characters.
    K(
        "adyen_api_key",
        "payment",
        "ADYEN_API_KEY",
        T(lambda g: "AQE" + g.s(AN, 50) + "+" + g.s(AN, 40) + "/" + g.s(AN, 30)),
    ),
    K("razorpay_key_secret", "payment", "RAZORPAY_KEY_SECRET", razorpay),
    # Paystack docs: secret keys sk_live_ + 40 hex.
    K("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", T(lambda g: "sk_live_" + g.s(HEX, 40))),
    # Flutterwave docs: secret keys FLWSECK- + 32 hex + -X.
    K("flutterwave_secret_key", "payment", "FLW_SECRET_KEY", T(lambda g: "FLWSECK-" + g.s(HEX, 32) + "-X")),
    K("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", T(mercadopago)),
    # Mollie docs: live API keys live_ + 30 alnum.
    K("mollie_api_key", "payment", "MOLLIE_API_KEY", T(lambda g: "live_" + g.s(AN, 30))),
    # Midtrans docs: server keys Mid-server-<24>.
    K("midtrans_server_key", "payment", "MIDTRANS_SERVER_KEY", T(lambda g: "Mid-server-" + g.s(URLSAFE, 24))),
    # Xendit docs: secret keys xnd_production_ + 60.
    K("xendit_secret_key", "payment", "XENDIT_SECRET_KEY", T(lambda g: "xnd_production_" + g.s(AN, 60))),
    # GoCardless docs: live access tokens live_ + 40.
    K(
        "gocardless_access_token",
        "payment",
        "GOCARDLESS_ACCESS_TOKEN",
        T(lambda g: "live_" + g.s(URLSAFE, 40)),
    ),
    # Plaid docs: secrets are 30 hex.
    K("plaid_secret", "payment", "PLAID_SECRET", T(lambda g: g.s(HEX, 30))),
    # Paytm docs: merchant key 16 characters.
    K("paytm_merchant_key", "payment", "PAYTM_MERCHANT_KEY", T(lambda g: g.s(AN + "#@&%", 16))),
    # Checkout.com docs: secret keys sk_ + 32 (sandbox sk_sbox_).
    K("checkout_secret_key", "payment", "CKO_SECRET_KEY", T(lambda g: "sk_" + g.s(LAN, 32))),
    # --- database
    K(
        "postgres_url",
        "database",
        "DATABASE_URL",
        conn_url("postgresql", 5432, lambda g: f"pg-{g.s(LAN, 6)}.internal", "orders"),
    ),
    K(
        "mysql_url",
        "database",
        "MYSQL_URL",
        conn_url("mysql", 3306, lambda g: f"mysql-{g.s(LAN, 4)}.rds.amazonaws.com", "shop"),
    ),
    K(
        "redis_url",
        "database",
        "REDIS_URL",
        conn_url("rediss", 6380, lambda g: f"cache-{g.s(LAN, 5)}.redis.cache.windows.net", "0"),
    ),
    K(
        "amqp_url",
        "database",
        "CELERY_BROKER_URL",
        conn_url("amqps", 5671, lambda g: f"{g.s(LO, 6)}.rmq.cloudamqp.com", "vhost"),
    ),
    K("mongodb_srv", "database", "MONGODB_URI", mongo_srv),
    K("pgpass_line", "database", "PGPASSFILE", pgpass),
    K("azure_sql_connection", "database", "SQLCONNSTR_Default", mssql),
    K("jdbc_sqlserver_url", "database", "JDBC_URL", jdbc),
    K("cosmosdb_connection", "database", "COSMOS_CONNECTION", cosmos),
    # PlanetScale docs: passwords pscale_pw_ + 43; service tokens pscale_tkn_.
    K(
        "planetscale_password",
        "database",
        "PLANETSCALE_PASSWORD",
        T(lambda g: "pscale_pw_" + g.s(URLSAFE, 43)),
    ),
    # Neon docs: API keys (NEON_API_KEY) 64 lowercase alnum.
    K("neon_api_key", "database", "NEON_API_KEY", T(lambda g: "napi_" + g.s(LAN, 59))),
    # Supabase docs: new secret keys sb_secret_<...>; legacy service_role JWT.
    K("supabase_secret_key", "database", "SUPABASE_SECRET_KEY", T(lambda g: "sb_secret_" + g.s(URLSAFE, 31))),
    K("supabase_service_role_jwt", "database", "SUPABASE_SERVICE_ROLE_KEY", supabase_jwt),
    K("turso_auth_token", "database", "TURSO_AUTH_TOKEN", turso),
    K("astra_db_token", "database", "ASTRA_DB_APPLICATION_TOKEN", T(astra)),
    K("elasticsearch_api_key", "database", "ES_API_KEY", elastic_apikey),
    # Upstash docs: REST tokens base64, starting AX/AY.
    K(
        "upstash_rest_token",
        "database",
        "UPSTASH_REDIS_REST_TOKEN",
        T(lambda g: "AX" + g.s(AN, 6) + "AAIjcDE" + g.s(URLSAFE, 50)),
    ),
    # InfluxDB docs: API tokens 86 characters of base64url ending ==.
    K("influxdb_token", "database", "INFLUX_TOKEN", T(lambda g: g.s(URLSAFE, 86) + "==")),
    # Fauna docs: secrets fnA + 37.
    K("fauna_secret", "database", "FAUNA_SECRET", T(lambda g: "fnA" + g.s(URLSAFE, 37))),
    # --- registry
    K("npm_token", "registry", "NPM_TOKEN", T(lambda g: github_style(g, "npm_"))),
    K("npmrc_basic_auth", "registry", "NPM_AUTH", npmrc_auth, block=True),
    # PyPI docs "API tokens": pypi- + a macaroon, base64url starting AgEIcHlwaS5vcmc.
    K("pypi_token", "registry", "TWINE_PASSWORD", T(lambda g: "pypi-AgEIcHlwaS5vcmcCJ" + g.s(URLSAFE, 150))),
    K("pypirc_password", "registry", "PYPIRC", pypirc, block=True),
    # Docker docs: personal access tokens dckr_pat_ + 27.
    K("docker_hub_pat", "registry", "DOCKERHUB_TOKEN", T(lambda g: "dckr_pat_" + g.s(URLSAFE, 27))),
    K("docker_config_auth", "registry", "DOCKER_CONFIG_JSON", docker_config, block=True),
    # RubyGems docs: API keys rubygems_ + 48 hex.
    K("rubygems_api_key", "registry", "GEM_HOST_API_KEY", T(lambda g: "rubygems_" + g.s(HEX, 48))),
    # NuGet.org API keys: oy2 + 43 lowercase alnum.
    K("nuget_api_key", "registry", "NUGET_API_KEY", T(lambda g: "oy2" + g.s(LAN, 43))),
    # crates.io tokens: cio + 32 alnum.
    K("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", T(lambda g: "cio" + g.s(AN, 32))),
    # JFrog docs: API keys AKCp + 69; reference tokens cmVmdGtu (base64 "reftkn").
    K("jfrog_api_key", "registry", "ARTIFACTORY_API_KEY", T(lambda g: "AKCp" + g.s(AN, 69))),
    K(
        "jfrog_reference_token",
        "registry",
        "JFROG_ACCESS_TOKEN",
        T(lambda g: "cmVmdGtuOjAxOjE3" + g.s(AN, 48)),
    ),
    # Quay docs: robot account tokens 64 capitals/digits.
    K("quay_robot_token", "registry", "QUAY_ROBOT_TOKEN", T(lambda g: g.s(UAN, 64))),
    # Cloudsmith docs: API keys 40 hex.
    K("cloudsmith_api_key", "registry", "CLOUDSMITH_API_KEY", T(lambda g: g.s(HEX, 40))),
    # Hex.pm docs: API keys 32 hex (HEX_API_KEY).
    K("hexpm_api_key", "registry", "HEX_API_KEY", T(lambda g: g.s(HEX, 32))),
    # --- observability
    # Datadog docs: API keys 32 hex, application keys 40 hex.
    K("datadog_api_key", "observability", "DD_API_KEY", T(lambda g: g.s(HEX, 32))),
    K("datadog_app_key", "observability", "DD_APP_KEY", T(lambda g: g.s(HEX, 40))),
    # New Relic docs: user keys NRAK- + 27; license keys 40 characters ending NRAL.
    K("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", T(lambda g: "NRAK-" + g.s(UAN, 27))),
    K("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", T(lambda g: g.s(HEX, 36) + "NRAL")),
    # Sentry docs: org auth tokens sntrys_ (base64 JSON), user tokens sntryu_ + 64 hex.
    K("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", T(lambda g: "sntryu_" + g.s(HEX, 64))),
    K(
        "sentry_org_token",
        "observability",
        "SENTRY_AUTH_TOKEN",
        T(lambda g: "sntrys_eyJpYXQiOjE3" + g.s(URLSAFE, 120) + "_" + g.s(URLSAFE, 43)),
    ),
    # Grafana docs: service account tokens glsa_<32>_<8 hex>; Cloud access policy tokens glc_ + base64.
    K(
        "grafana_sa_token",
        "observability",
        "GRAFANA_TOKEN",
        T(lambda g: "glsa_" + g.s(AN, 32) + "_" + g.s(HEX, 8)),
    ),
    K(
        "grafana_cloud_token",
        "observability",
        "GRAFANA_CLOUD_TOKEN",
        T(lambda g: "glc_eyJvIjoi" + g.s(B64, 110)),
    ),
    # Honeycomb docs: ingest keys hcaik_ + 58.
    K("honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", T(lambda g: "hcaik_01" + g.s(LAN, 56))),
    # Splunk docs: HEC tokens are GUIDs, sent as Authorization: Splunk <token>.
    K("splunk_hec_token", "observability", "SPLUNK_HEC_TOKEN", T(lambda g: g.uuid())),
    # Dynatrace docs "Access tokens": dt0c01.<24 public>.<64 secret>.
    K(
        "dynatrace_token",
        "observability",
        "DT_API_TOKEN",
        T(lambda g: f"dt0c01.{g.s(UAN, 24)}.{g.s(UAN, 64)}"),
    ),
    # PagerDuty docs: REST API keys 20 characters; Events integration (routing) keys 32 hex.
    K("pagerduty_api_key", "observability", "PAGERDUTY_TOKEN", T(lambda g: "u+" + g.s(URLSAFE, 18))),
    K("pagerduty_routing_key", "observability", "PD_ROUTING_KEY", T(lambda g: g.s(HEX, 32))),
    # Opsgenie docs: API keys are GUIDs (Authorization: GenieKey <key>).
    K("opsgenie_api_key", "observability", "OPSGENIE_API_KEY", T(lambda g: g.uuid())),
    # Rollbar docs: access tokens 32 hex.
    K("rollbar_token", "observability", "ROLLBAR_ACCESS_TOKEN", T(lambda g: g.s(HEX, 32))),
    # Axiom docs: API tokens xaat- + UUID.
    K("axiom_token", "observability", "AXIOM_TOKEN", T(lambda g: "xaat-" + g.uuid())),
    # PostHog docs: personal API keys phx_ (project keys phc_ are public).
    K("posthog_personal_key", "observability", "POSTHOG_PERSONAL_API_KEY", T(lambda g: "phx_" + g.s(AN, 47))),
    # --- ai
    # OpenAI docs: project keys sk-proj-<...>; legacy keys sk-<20>T3BlbkFJ<20>.
    K(
        "openai_project_key",
        "ai",
        "OPENAI_API_KEY",
        T(lambda g: "sk-proj-" + g.s(URLSAFE, 74) + "T3BlbkFJ" + g.s(URLSAFE, 74)),
    ),
    K(
        "openai_legacy_key",
        "ai",
        "OPENAI_API_KEY",
        T(lambda g: "sk-" + g.s(AN, 20) + "T3BlbkFJ" + g.s(AN, 20)),
    ),
    # Anthropic console: API keys sk-ant-api03- + 93 + AA.
    K("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", T(lambda g: "sk-ant-api03-" + g.s(URLSAFE, 93) + "AA")),
    # Hugging Face docs "User access tokens": hf_ + 34 letters.
    K("huggingface_token", "ai", "HF_TOKEN", T(lambda g: "hf_" + g.s(UP + LO, 34))),
    # Cohere: API keys 40 alnum (CO_API_KEY).
    K("cohere_api_key", "ai", "CO_API_KEY", T(lambda g: g.s(AN, 40))),
    # Replicate docs: API tokens r8_ + 37.
    K("replicate_token", "ai", "REPLICATE_API_TOKEN", T(lambda g: "r8_" + g.s(AN, 37))),
    # Groq console: API keys gsk_ + 52.
    K("groq_api_key", "ai", "GROQ_API_KEY", T(lambda g: "gsk_" + g.s(AN, 52))),
    # Mistral: API keys 32 alnum.
    K("mistral_api_key", "ai", "MISTRAL_API_KEY", T(lambda g: g.s(AN, 32))),
    # Perplexity docs: pplx- + 48.
    K("perplexity_api_key", "ai", "PERPLEXITY_API_KEY", T(lambda g: "pplx-" + g.s(AN, 48))),
    # Together AI: 64 hex.
    K("together_api_key", "ai", "TOGETHER_API_KEY", T(lambda g: g.s(HEX, 64))),
    # DeepSeek docs: sk- + 32 hex. DashScope (Alibaba Model Studio) uses the same shape.
    K("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", T(lambda g: "sk-" + g.s(HEX, 32))),
    # xAI console: xai- + 80.
    K("xai_api_key", "ai", "XAI_API_KEY", T(lambda g: "xai-" + g.s(AN, 80))),
    # OpenRouter: sk-or-v1- + 64 hex.
    K("openrouter_key", "ai", "OPENROUTER_API_KEY", T(lambda g: "sk-or-v1-" + g.s(HEX, 64))),
    # Fireworks: fw_ + 24.
    K("fireworks_api_key", "ai", "FIREWORKS_API_KEY", T(lambda g: "fw_" + g.s(AN, 24))),
    # Pinecone: pcsk_<5>_<60>.
    K("pinecone_api_key", "ai", "PINECONE_API_KEY", T(lambda g: "pcsk_" + g.s(AN, 5) + "_" + g.s(AN, 60))),
    # LangSmith docs: lsv2_pt_<32 hex>_<10 hex> (personal), lsv2_sk_ (service).
    K(
        "langsmith_api_key",
        "ai",
        "LANGSMITH_API_KEY",
        T(lambda g: "lsv2_pt_" + g.s(HEX, 32) + "_" + g.s(HEX, 10)),
    ),
    # Zhipu AI (BigModel) docs: API keys <32 hex>.<16 alnum>.
    K("zhipu_api_key", "ai", "ZHIPUAI_API_KEY", T(lambda g: g.s(HEX, 32) + "." + g.s(AN, 16))),
    # Azure OpenAI docs: resource keys 32 hex (api-key header).
    K("azure_openai_key", "ai", "AZURE_OPENAI_API_KEY", T(lambda g: g.s(HEX, 32))),
    # Weights & Biases docs: API keys 40 hex (WANDB_API_KEY).
    K("wandb_api_key", "ai", "WANDB_API_KEY", T(lambda g: g.s(HEX, 40))),
    # ElevenLabs: sk_ + 48 hex.
    K("elevenlabs_api_key", "ai", "ELEVENLABS_API_KEY", T(lambda g: "sk_" + g.s(HEX, 48))),
    # --- saas
    K("atlassian_api_token", "saas", "JIRA_API_TOKEN", T(atlassian)),
    # Notion docs: internal integration secrets ntn_ + 46 (formerly secret_ + 43).
    K(
        "notion_integration_secret",
        "saas",
        "NOTION_TOKEN",
        T(lambda g: g.r.choice(["ntn_", "secret_"]) + g.s(AN, 43)),
    ),
    # Linear docs: personal API keys lin_api_ + 40.
    K("linear_api_key", "saas", "LINEAR_API_KEY", T(lambda g: "lin_api_" + g.s(AN, 40))),
    # Airtable docs: personal access tokens pat<14>.<64 hex>.
    K("airtable_pat", "saas", "AIRTABLE_TOKEN", T(lambda g: "pat" + g.s(AN, 14) + "." + g.s(HEX, 64))),
    K("asana_pat", "saas", "ASANA_ACCESS_TOKEN", T(asana)),
    # Figma docs: personal access tokens figd_ + 40.
    K("figma_pat", "saas", "FIGMA_TOKEN", T(lambda g: "figd_" + g.s(URLSAFE, 40))),
    # HubSpot docs: private app tokens pat-<region>-<uuid>.
    K(
        "hubspot_private_app_token",
        "saas",
        "HUBSPOT_ACCESS_TOKEN",
        T(lambda g: f"pat-{g.r.choice(['na1', 'eu1'])}-{g.uuid()}"),
    ),
    # Okta docs: API tokens 00 + 40, sent as Authorization: SSWS <token>.
    K("okta_api_token", "saas", "OKTA_API_TOKEN", T(lambda g: "00" + g.s(URLSAFE, 40))),
    # Auth0 docs: client secrets 64 characters.
    K("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", T(lambda g: g.s(URLSAFE, 64))),
    # Dropbox docs: short-lived access tokens sl. + ~140.
    K("dropbox_access_token", "saas", "DROPBOX_TOKEN", T(lambda g: "sl.B" + g.s(URLSAFE, 136))),
    # Contentful docs: CMA personal tokens CFPAT- + 43.
    K("contentful_pat", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", T(lambda g: "CFPAT-" + g.s(URLSAFE, 43))),
    # Postman docs: API keys PMAK-<24 hex>-<34 hex>.
    K("postman_api_key", "saas", "POSTMAN_API_KEY", T(lambda g: f"PMAK-{g.s(HEX, 24)}-{g.s(HEX, 34)}")),
    K("onepassword_service_account", "saas", "OP_SERVICE_ACCOUNT_TOKEN", T(one_password)),
    # ClickUp docs: personal tokens pk_<user id>_<32 capitals/digits>.
    K("clickup_token", "saas", "CLICKUP_API_TOKEN", T(lambda g: f"pk_{g.d(8)}_{g.s(UAN, 32)}")),
    # Trello docs: tokens ATTA + 64 hex + 8 hex.
    K("trello_token", "saas", "TRELLO_TOKEN", T(lambda g: "ATTA" + g.s(HEX, 64) + g.s(HEXU, 8))),
    # Mapbox docs: secret tokens sk.eyJ1Ijoi... (public ones pk. are meant for browsers).
    K(
        "mapbox_secret_token",
        "saas",
        "MAPBOX_SECRET_TOKEN",
        T(lambda g: "sk.eyJ1IjoiY2FydG8iLCJhIjoi" + g.s(AN, 25) + "In0." + g.s(URLSAFE, 22)),
    ),
    # Algolia docs: the Admin API key (32 hex) must stay on the server.
    K("algolia_admin_key", "saas", "ALGOLIA_ADMIN_KEY", T(lambda g: g.s(HEX, 32))),
    K("salesforce_access_token", "saas", "SF_ACCESS_TOKEN", T(salesforce)),
    # Shopify docs: Admin API access tokens shpat_ + 32 hex; app shared secrets shpss_.
    K("shopify_admin_token", "saas", "SHOPIFY_ACCESS_TOKEN", T(lambda g: "shpat_" + g.s(HEX, 32))),
    K("shopify_shared_secret", "saas", "SHOPIFY_API_SECRET", T(lambda g: "shpss_" + g.s(HEX, 32))),
    # Meta docs: access tokens begin EAA.
    K("facebook_access_token", "saas", "FB_PAGE_TOKEN", T(lambda g: "EAAG" + g.s(AN, 180))),
    # X (Twitter) docs: app bearer tokens AAAAAAAAAAAAAAAAAAAAA + URL-encoded base64.
    K(
        "twitter_bearer_token",
        "saas",
        "TWITTER_BEARER_TOKEN",
        T(lambda g: "AAAAAAAAAAAAAAAAAAAAA" + g.s(AN, 25) + "%3D" + g.s(AN, 50)),
    ),
    # SendGrid docs: API keys SG.<22>.<43>.
    K(
        "sendgrid_api_key",
        "saas",
        "SENDGRID_API_KEY",
        T(lambda g: "SG." + g.s(URLSAFE, 22) + "." + g.s(URLSAFE, 43)),
    ),
    # Mailgun docs: private API keys key- + 32 hex (newer: <32 hex>-<8 hex>-<8 hex>).
    K(
        "mailgun_api_key",
        "saas",
        "MAILGUN_API_KEY",
        T(lambda g: g.r.choice(["key-" + g.s(HEX, 32), f"{g.s(HEX, 32)}-{g.s(HEX, 8)}-{g.s(HEX, 8)}"])),
    ),
    # Mailchimp docs: API keys <32 hex>-us<dc>.
    K(
        "mailchimp_api_key",
        "saas",
        "MAILCHIMP_API_KEY",
        T(lambda g: g.s(HEX, 32) + "-us" + str(g.r.randint(1, 21))),
    ),
    # Postmark docs: server tokens are UUIDs (X-Postmark-Server-Token).
    K("postmark_server_token", "saas", "POSTMARK_SERVER_TOKEN", T(lambda g: g.uuid())),
    # ngrok docs: authtokens 2<26 base62>_<21 base62>.
    K("ngrok_authtoken", "saas", "NGROK_AUTHTOKEN", T(lambda g: "2" + g.s(AN, 26) + "_" + g.s(AN, 21))),
    # LaunchDarkly docs: server-side SDK keys sdk-<uuid>; API access tokens api-<uuid>.
    K("launchdarkly_sdk_key", "saas", "LD_SDK_KEY", T(lambda g: "sdk-" + g.uuid())),
    # Zendesk docs: API tokens 40 alnum, used as email/token:<token>.
    K("zendesk_api_token", "saas", "ZENDESK_API_TOKEN", T(lambda g: g.s(AN, 40))),
    K("basic_auth_header", "saas", "AUTH_HEADER", basic_header),
    # "Value under a secret name": a vendor-neutral random hex, random string or a words+digits password.
    K("named_hex_auth_token", "saas", "ACMEPAY_AUTH_TOKEN", T(lambda g: g.s(HEX, 32))),
    K("named_random_api_key", "saas", "api_key", T(lambda g: g.s(AN, g.r.randint(24, 40)))),
    K("named_password_words", "saas", "password", T(lambda g: g.words())),
]


# --- contexts -----------------------------------------------------------------------------------------------
# A named context puts the value under its variable name; a free context has the value with no name next to
# it (chat, notes, logs). Each takes its own Random so the raw and the disguised text are the same but for the
# value.


def _camel(name: str) -> str:
    parts = name.lower().split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def _host(r: random.Random) -> str:
    return r.choice(["web-3", "ci-runner-07", "bastion", "build-agent-2", "mbp-jana", "prod-api-1"])


def _date(r: random.Random) -> str:
    return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


NamedContext = Callable[[random.Random, str, str], str]
FreeContext = Callable[[random.Random, str], str]

NAMED: list[NamedContext] = [
    lambda r, n, v: f"{n}={v}",
    lambda r, n, v: f"# staging only, do not commit\nexport {n}='{v}'",
    lambda r, n, v: f'services:\n  worker:\n    image: acme/worker:1.8\n    environment:\n      {n}: "{v}"',
    lambda r, n, v: json.dumps({"name": "billing-sync", "env": {n: v}, "schedule": "*/15 * * * *"}, indent=2),
    lambda r, n, v: f'[tool.deploy]\nregion = "eu-central-1"\n{n.lower()} = "{v}"',
    lambda r, n, v: f"[default]\nregion = us-east-1\n{n.lower()} = {v}",
    lambda r, n, v: f'resource "kubernetes_secret" "app" {{\n  data = {{\n    {n.lower()} = "{v}"\n  }}\n}}',
    lambda r, n, v: f'<appSettings>\n  <add key="{n}" value="{v}" />\n</appSettings>',
    lambda r, n, v: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ntype: Opaque\nstringData:\n  {n}: {v}"
    ),
    lambda r, n, v: (
        f"jobs:\n  release:\n    runs-on: ubuntu-latest\n    env:\n      {n}: {v}\n    steps:\n      - run: make release"
    ),
    lambda r, n, v: f'{n} = "{v}"  # TODO move to the vault before the demo',
    lambda r, n, v: f"const client = createClient({{ {_camel(n)}: '{v}', timeout: 5000 }});",
    lambda r, n, v: f'\tos.Setenv("{n}", "{v}") // tests need it; remove',
    lambda r, n, v: f"{n.lower().replace('_', '.')}={v}\nserver.port=8080",
    lambda r, n, v: f'PS C:\\Users\\dev> $env:{n} = "{v}"',
    lambda r, n, v: f'FROM python:3.12-slim\nENV {n}={v}\nCMD ["python", "-m", "worker"]',
    lambda r, n, v: f'[Service]\nEnvironment="{n}={v}"\nExecStart=/usr/local/bin/agent',
    lambda r, n, v: f"<?php\ndefine('{n}', '{v}');",
    lambda r, n, v: f'ENV["{n}"] ||= "{v}"',
    lambda r, n, v: f"{r.randint(100, 999)}  heroku config:set {n}={v} -a shop-prod",
    lambda r, n, v: f"kubectl -n prod create secret generic app --from-literal={n.lower()}={v}",
    lambda r, n, v: f'gh secret set {n} --body "{v}" --repo acme/platform',
    lambda r, n, v: f"| variable | value | where |\n|---|---|---|\n| `{n}` | `{v}` | prod |",
    lambda r, n, v: f"{_date(r)}T09:{r.randint(10, 59)}:03Z DEBUG settings loaded: {n}={v} region=eu-west-1",
    lambda r, n, v: f"set -x {n} {v}",
    lambda r, n, v: f'{{\n  "Logging": {{ "LogLevel": {{ "Default": "Information" }} }},\n  "{n}": "{v}"\n}}',
    lambda r, n, v: (
        f'- name: Configure client\n  ansible.builtin.lineinfile:\n    path: /etc/app.env\n    line: "{n}={v}"'
    ),
    lambda r, n, v: f'In [12]: os.environ["{n}"] = "{v}"\nIn [13]: client = Client()',
    lambda r, n, v: f"Note to self: the {n} for the staging stack is {v} (rotated {_date(r)})",
    lambda r, n, v: f'let config = Config {{ {n.lower()}: "{v}".into(), retries: 3 }};',
    lambda r, n, v: f"{n.lower()}:\n  value: {v}\n  rotated: {_date(r)}",
    lambda r, n, v: (
        f'Traceback (most recent call last):\n  File "/srv/app/sync.py", line 88, in <module>\n    run({n.lower()}="{v}")\n  File "/srv/app/sync.py", line 41, in run\n    raise AuthError(resp.status_code)\nAuthError: 401'
    ),
]

FREE: list[FreeContext] = [
    lambda r, v: f"Hier ist der Schlüssel, den du wolltest: {v} — bitte nach dem Test löschen.",
    lambda r, v: f"Voilà le jeton pour la préprod : {v}. Je le révoque vendredi.",
    lambda r, v: f"Te paso la clave por aquí porque el vault está caído: {v}",
    lambda r, v: f"Segue o token que o cliente mandou: {v} (válido até sexta)",
    lambda r, v: f"Ecco la chiave che mi hai chiesto: {v}",
    lambda r, v: f"Hier is de sleutel voor de testomgeving: {v}",
    lambda r, v: f"Wklejam klucz do stagingu: {v} — nie udostępniaj dalej",
    lambda r, v: f"Вот ключ от стенда, потом удалю: {v}",
    lambda r, v: f"Ось токен для деплою: {v}",
    lambda r, v: f"Staging anahtarı bu: {v} yarın değiştiriyorum",
    lambda r, v: f"検証環境のキーです: {v} 終わったら消してください",
    lambda r, v: f"这是测试环境的密钥：{v} 用完记得删掉",
    lambda r, v: f"스테이징 키 여기 있어요: {v}",
    lambda r, v: f"यह स्टेजिंग की चाबी है: {v}",
    lambda r, v: f"هذا هو المفتاح الخاص بالبيئة التجريبية: {v}",
    lambda r, v: f"Ini kuncinya buat staging: {v} jangan dibagikan ya",
    lambda r, v: f"Đây là khóa cho môi trường thử nghiệm: {v}",
    lambda r, v: f"Här är nyckeln till testmiljön: {v}",
    lambda r, v: f"@here using this until the vault is back: {v}",
    lambda r, v: (
        f"## Incident {_date(r)}: sync job failing\n\n- 09:14 retried by hand with {v}\n- 09:20 job green, "
        "credential to be rotated"
    ),
    lambda r, v: (
        f"PR description: switch the nightly export to the new account.\n\nTested locally with `{v}`."
    ),
    lambda r, v: (
        f'{r.randint(500, 2000)}  curl -sS -H "Authorization: Bearer {v}" https://api.vendor.example/v2/me'
    ),
    lambda r, v: f"[screenshot of the settings page, transcribed]\nAPI credentials\n{v}\n[Copy] [Regenerate]",
    lambda r, v: (
        f"From: ops@acme.example\nSubject: new credentials\n\nHi team,\n\nthe new one is {v}\n\nCheers, M."
    ),
    lambda r, v: (
        f"{_date(r)} 10:22:01,551 WARNING [auth] falling back to static credential {v} on {_host(r)}"
    ),
    lambda r, v: f"runbook step 4: paste {v} into the dialog, then click Verify",
    lambda r, v: f"```\n{v}\n```\n^ what the customer pasted in the ticket #{r.randint(1000, 9999)}",
    lambda r, v: f"remember: {v} works for the sandbox tenant, not for prod",
]

BLOCK: list[FreeContext] = [
    lambda r, v: f"Saved the key for the deploy box here so I stop asking:\n\n```\n{v}\n```",
    lambda r, v: f"runbook: restore access on {_host(r)}\n1. write this file:\n{v}\n2. restart the agent",
    lambda r, v: "config:\n  credentials: |\n" + "\n".join("    " + line for line in v.splitlines()),
    lambda r, v: (
        f"Ticket #{r.randint(1000, 9999)}: customer attached their file, contents below\n---\n{v}\n---"
    ),
    lambda r, v: f"Voici le fichier de la machine de build, à ne pas partager :\n{v}",
    lambda r, v: f"$ cat ~/.config/acme/credentials\n{v}\n$ ",
    lambda r, v: f"Kopie der Datei vom alten Server ({_date(r)}):\n{v}",
]

# URLs where an encoded value or line ends up as a query parameter.
QUERY: list[Callable[[random.Random, str], str]] = [
    lambda r, q: f"GET /oauth/callback?state=ok&cfg={q} HTTP/1.1 200 (from the proxy log)",
    lambda r, q: f"the webhook was registered as https://hooks.acme.example/in?{q}",
    lambda r, q: f"Sentry breadcrumb: navigation to /settings/import?blob={q}",
]


# --- disguises ----------------------------------------------------------------------------------------------
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
]
DISGUISES = [
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "url_encoded",
    "base64",
    "split_lines",
    "placeholder_word",
]
# Four of each kind's ten samples are plain (40 %); the other six take the disguises in turn.
PLAIN_PER_KIND = 4


def _insert(r: random.Random, core: str, chars: list[str], times: int) -> str:
    out = core
    for _ in range(times):
        at = r.randint(max(1, len(out) // 5), max(2, len(out) * 4 // 5))
        out = out[:at] + r.choice(chars) + out[at:]
    return out


def _fullwidth(r: random.Random, core: str) -> str:
    every = r.random() < 0.5
    return "".join(
        chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() and (every or r.random() < 0.45) else c
        for c in core
    )


def _split(r: random.Random, core: str) -> str:
    at = r.randint(len(core) // 3, max(len(core) // 3 + 1, len(core) * 2 // 3))
    sep = r.choice(["\n", "\\\n    ", "\n  ", "\r\n"])
    return core[:at] + sep + core[at:]


def _percent(core: str) -> str:
    return "".join(f"%{b:02X}" for b in core.encode())


def _secret_piece(core: str, word: str) -> str:
    if word and word in core:
        at = core.index(word)
        start = max(0, at - 4)
        return core[start : at + len(word) + 4]
    half = max(4, min(12, len(core) // 6))
    mid = len(core) // 2
    return core[mid - half : mid + half]


@dataclass(frozen=True)
class RawSample:
    """A sample and the same text with the credential left undisguised, to check the secret is real."""

    sample: Sample
    raw_text: str


def _credential(rng: random.Random, kind: Kind, disguise: str) -> RawSample | None:
    g = Gen(rng, placeholder=disguise == "placeholder_word")
    value, core = kind.make(g)
    if disguise == "placeholder_word" and (not g.word or g.word not in core):
        # The word went into a part that is not the disguised core (a key id, a JWT header) or none fitted.
        return None
    secret = _secret_piece(core, g.word)
    assert len(secret) >= 8 and secret in value, kind.name
    seed = rng.random()
    r = rng  # the disguise's own draws

    def render(v: str, *, free_only: bool = False) -> str:
        ctx = random.Random(seed)
        # The raw value decides the context, so a disguise that adds a line break keeps the same text around.
        if kind.block or "\n" in value:
            return ctx.choice(BLOCK)(ctx, v)
        if free_only or ctx.random() < 0.4:
            return ctx.choice(FREE)(ctx, v)
        return ctx.choice(NAMED)(ctx, kind.var, v)

    if disguise in ("plain", "placeholder_word"):
        text = raw = render(value)
    elif disguise in ("zero_width", "soft_hyphen", "fullwidth", "bidi", "split_lines"):
        if disguise == "zero_width":
            changed = _insert(r, core, ZERO_WIDTH, r.randint(1, 3))
        elif disguise == "soft_hyphen":
            changed = _insert(r, core, ["\u00ad"], r.randint(1, 2))
        elif disguise == "bidi":
            changed = _insert(r, core, BIDI, r.randint(1, 2))
        elif disguise == "fullwidth":
            changed = _fullwidth(r, core)
        else:
            changed = _split(r, core)
        raw = render(value)
        text = render(value.replace(core, changed, 1))
    elif disguise == "url_encoded":
        if kind.block or r.random() < 0.5:
            # The whole value percent-encoded, every byte (what a form post or a log of one shows).
            raw = render(value)
            text = render(_percent(value) if not kind.block else quote(value, safe=""))
        else:
            q = random.Random(seed)
            line = f"{kind.var}={value}"
            ctx = q.choice(QUERY)
            raw = ctx(q, line)
            q = random.Random(seed)
            ctx = q.choice(QUERY)
            text = ctx(q, quote(line, safe=""))
    else:  # base64
        if r.random() < 0.5:
            raw = render(value)
            text = render(b64s(value.encode()))
        else:
            line = f"{kind.var}={value}"
            raw = render(line, free_only=True)
            text = render(b64s(line.encode()), free_only=True)
    return RawSample(Sample(kind.name, kind.group, text, disguise, secret), raw)


# --- look-alikes --------------------------------------------------------------------------------------------
# Public or non-secret values, often next to the words key, token, id or secret. None of them is a credential
# by its provider's documentation.
Lookalike = Callable[[Gen], str]


def _ssh_ed25519_pub(g: Gen) -> str:
    # RFC 8709: the public key blob is string "ssh-ed25519" + string <32 bytes>.
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + g.b(32)
    return f"ssh-ed25519 {b64s(blob)} {g.r.choice(['jana@mbp', 'deploy@ci', 'root@bastion'])}"


def _pem_public(g: Gen) -> str:
    # RFC 8410: an Ed25519 SubjectPublicKeyInfo is 302a300506032b6570032100 + 32 bytes.
    der = bytes.fromhex("302a300506032b6570032100") + g.b(32)
    return f"-----BEGIN PUBLIC KEY-----\n{b64s(der)}\n-----END PUBLIC KEY-----"


def _ulid(g: Gen) -> str:
    return g.r.choice("01") + g.s("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 25)


def _png_data_uri(g: Gen) -> str:
    return "data:image/png;base64," + b64s(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + g.b(60))


_PROSE = [
    "Rotate the GitHub token every 90 days; the calendar reminder is in the team calendar.",
    "Never paste the Stripe secret key into Slack, use the vault link instead.",
    "Token count for the summarization run: {n} prompt tokens, {m} completion tokens.",
    "The idempotency key is the order id, so retries of the same checkout are safe.",
    "Les clés API se renouvellent tous les 90 jours ; la procédure est dans le wiki.",
    "Das Passwort für die Datenbank liegt im Vault unter kv/prod/db, nicht im Repo.",
    "La clave secreta de AWS se rota automáticamente con Secrets Manager.",
    "APIキーは環境変数から読み込むこと。コードに書かない。",
    "密钥每 90 天轮换一次，不要提交到仓库。",
    "We store password hashes with argon2id (m=65536, t=3, p=4), never the passwords.",
    "The secret scanning alert was a false positive: it matched a test fixture.",
    "max_tokens={n}, temperature=0.2, the key comes from OPENAI_API_KEY at runtime.",
]

# Example values the providers print in their own docs, exactly as printed, and the placeholders they tell
# readers to replace. None of them opens anything.
_DOCUMENTED = [
    # AWS IAM docs "Managing access keys": the example key pairs.
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE\nAWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    # Azurite / storage emulator docs: the well-known development account key.
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
    "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
    # jwt.io's example token.
    "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
    "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    # Slack docs use this deliberately unusable token in examples.
    "SLACK_BOT_TOKEN=xoxb-not-a-real-token-this-will-not-work",
    "STRIPE_SECRET_KEY=sk_test_<your key>",
    "export GITHUB_TOKEN=<YOUR-TOKEN>",
    "TWILIO_ACCOUNT_SID=ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\nTWILIO_AUTH_TOKEN=your_auth_token",
    "OPENAI_API_KEY=sk-...",
    "api_key: YOUR_API_KEY_HERE",
    "DD_API_KEY=<DATADOG_API_KEY>",
    "curl -H 'Authorization: Bearer $ANTHROPIC_API_KEY' https://api.anthropic.com/v1/models",
    "password: changeme  # the chart's default, overridden by the secret in prod",
    "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DBNAME",
]


def _documented_placeholder(g: Gen) -> str:
    example = g.r.choice(_DOCUMENTED)
    frame = g.r.choice(
        ["{e}", "From the vendor's quickstart:\n{e}", "```\n{e}\n```\n(copied from the README)"]
    )
    return frame.format(e=example)


_SECRET_NAMES = [
    "API_KEY",
    "DB_PASSWORD",
    "STRIPE_SECRET_KEY",
    "GITHUB_TOKEN",
    "SLACK_BOT_TOKEN",
    "OPENAI_API_KEY",
]


def _secret_reference(g: Gen) -> str:
    name = g.r.choice(_SECRET_NAMES)
    return g.r.choice(
        [
            f"{name}=${{{name}}}",
            f"{name.lower()}: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  {g.s(DG, 64)}",
            f'{name.lower()} = os.environ["{name}"]',
            f"env:\n  - name: {name}\n    valueFrom:\n      secretKeyRef:\n        name: app\n        key: {name.lower()}",
            f"{name}: ${{{{ secrets.{name} }}}}",
            f"{name}=op://prod/app/{name.lower()}",
            f"{name.lower()} = Rails.application.credentials.dig(:{name.lower()})",
            f"{name.lower()} = var.{name.lower()}",
            f'"{name}": "{{{{resolve:secretsmanager:prod/app:SecretString:{name.lower()}}}}}"',
            f"const {name.lower()} = process.env.{name} ?? '';",
        ]
    )


LOOKALIKES: list[tuple[str, Lookalike]] = [
    (
        "git_commit_sha",
        lambda g: g.r.choice(
            [
                "Fixed in commit {h}; the token refresh no longer races.",
                "git cherry-pick {h}",
                "Bisected the key rotation bug to {s}.",
                "Merge pull request #{n} from acme/fix-token-expiry ({s})",
            ]
        ).format(h=g.s(HEX, 40), s=g.s(HEX, 12), n=g.r.randint(100, 9999)),
    ),
    (
        "sha256_release_checksum",
        lambda g: (
            f"{g.s(HEX, 64)}  kenfold-{g.r.randint(1, 3)}.{g.r.randint(0, 20)}.{g.r.randint(0, 9)}-py3-none-any.whl"
        ),
    ),
    (
        "sha512_checksum",
        lambda g: f"SHA512 (node-v22.{g.r.randint(0, 12)}.0-linux-x64.tar.xz) = {g.s(HEX, 128)}",
    ),
    (
        "uuid_primary_key",
        lambda g: g.r.choice(
            [
                "primary key {u} was deleted twice; the second delete is a no-op",
                "Idempotency-Key: {u}",
                "request_id={u} status=502 upstream=payments",
                "memory {u} superseded by a newer note",
            ]
        ).format(u=g.uuid()),
    ),
    ("ulid", lambda g: f"event id {_ulid(g)} (ULID, sorts by time)"),
    ("ksuid", lambda g: f"segment message_id: {g.r.choice('12')}{g.s(AN, 26)}"),
    (
        "stripe_public_object_ids",
        lambda g: g.r.choice(
            [
                "customer cus_{a} paid with pi_{b}",
                "refund re_{b} for charge ch_{b}",
                "publishable key for the checkout page: pk_live_51{c}",
                "payment method pm_{b} attached to cus_{a}",
            ]
        ).format(a=g.s(AN, 14), b=g.s(AN, 24), c=g.s(AN, 97)),
    ),
    (
        "slack_object_ids",
        lambda g: f"post to channel C{g.s(UAN, 10)} as user U{g.s(UAN, 10)} in team T{g.s(UAN, 10)}",
    ),
    (
        "aws_arn_and_account",
        lambda g: g.r.choice(
            [
                "arn:aws:iam::{a}:role/deploy-{s}",
                "account id {a}, KMS key id {u}",
                "arn:aws:secretsmanager:eu-west-1:{a}:secret:prod/db-{s}",
            ]
        ).format(a=g.d(12), s=g.s(AN, 6), u=g.uuid()),
    ),
    (
        "trace_ids",
        lambda g: g.r.choice(
            [
                "traceparent: 00-{t}-{p}-01",
                "trace id {t} span id {p}: 2.3 s in the token refresh call",
                "X-Amzn-Trace-Id: Root=1-{e}-{w}",
            ]
        ).format(t=g.s(HEX, 32), p=g.s(HEX, 16), e=g.s(HEX, 8), w=g.s(HEX, 24)),
    ),
    (
        "base64_plain_text",
        lambda g: (
            "payload (base64): "
            + b64s(
                g.r.choice(
                    [
                        b"the quick brown fox jumps over the lazy dog, twice, for the test",
                        b'{"event":"signup","plan":"team","seats":12,"country":"DE"}',
                        b"hello from the nightly export job, nothing to see here",
                    ]
                )
            )
        ),
    ),
    ("base64_image", _png_data_uri),
    ("npm_integrity", lambda g: f'"integrity": "sha512-{b64s(g.b(64))}"'),
    ("go_sum_hash", lambda g: f"github.com/acme/lib v1.{g.r.randint(0, 9)}.0 h1:{b64s(g.b(32))}"),
    ("documented_placeholders", _documented_placeholder),
    ("secret_references", _secret_reference),
    ("ssh_public_key", _ssh_ed25519_pub),
    ("pem_public_key", _pem_public),
    (
        "key_fingerprints",
        lambda g: g.r.choice(
            [
                "public key fingerprint SHA256:{f}",
                "GPG key fingerprint {h}",
            ]
        ).format(f=b64s(g.b(32)).rstrip("="), h=" ".join(g.s(HEXU, 4) for _ in range(10))),
    ),
    (
        "css_and_chunk_hashes",
        lambda g: g.r.choice(
            [
                "dist/assets/index-{a}.js   142.31 kB",
                '<link rel="stylesheet" href="/static/css/main.{b}.css">',
                "<style>.css-{c}{{display:flex}}</style>",
                "chunk {n} [initial] vendors.{d}.js",
            ]
        ).format(a=g.s(URLSAFE, 8), b=g.s(HEX, 8), c=g.s(LAN, 6), d=g.s(HEX, 20), n=g.r.randint(1, 900)),
    ),
    ("youtube_ids", lambda g: f"watch the talk: https://www.youtube.com/watch?v={g.s(URLSAFE, 11)}"),
    ("docker_image_digest", lambda g: f"image: ghcr.io/acme/api@sha256:{g.s(HEX, 64)}"),
    (
        "nix_store_path",
        lambda g: (
            f"/nix/store/{g.s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.{g.r.randint(1, 15)}"
        ),
    ),
    (
        "ipfs_cid",
        lambda g: g.r.choice(
            ["ipfs://Qm" + g.s(B58, 44), "https://ipfs.io/ipfs/bafybei" + g.s(B32L[:26] + "234567", 52)]
        ),
    ),
    (
        "prose_about_secrets",
        lambda g: g.r.choice(_PROSE).format(n=g.r.randint(100, 9000), m=g.r.randint(10, 900)),
    ),
    ("sentry_dsn_public", lambda g: f"SENTRY_DSN=https://{g.s(HEX, 32)}@o{g.d(6)}.ingest.sentry.io/{g.d(7)}"),
    (
        "public_client_keys",
        lambda g: g.r.choice(
            [
                "posthog.init('phc_{a}', {{api_host: 'https://eu.i.posthog.com'}})",
                "mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJ{b}'",
                "gtag('config', 'G-{c}')",
            ]
        ).format(a=g.s(AN, 43), b=g.s(AN, 30), c=g.s(UAN, 10)),
    ),
    ("mongodb_object_id", lambda g: f'db.orders.find({{"_id": ObjectId("{g.s(HEX, 24)}")}})'),
    (
        "lfs_and_lockfile_hashes",
        lambda g: g.r.choice(
            [
                "oid sha256:{h}\nsize {n}",
                'checksum = "{h}"',
                "    --hash=sha256:{h}",
            ]
        ).format(h=g.s(HEX, 64), n=g.r.randint(1000, 10_000_000)),
    ),
    (
        "k8s_resource_names",
        lambda g: (
            f"pod api-{g.s(LAN, 10)}-{g.s(LAN, 5)} restarted; secret name app-tls-{g.s(LAN, 5)} unchanged"
        ),
    ),
    (
        "crypto_addresses",
        lambda g: g.r.choice(["send the refund to 0x{h}", "donation address bc1q{b}"]).format(
            h=g.s(HEX, 40), b=g.s("023456789acdefghjklmnpqrstuvwxyz", 38)
        ),
    ),
]


def eighth_part_raw() -> list[RawSample]:
    """Every sample with its undisguised text, in a fixed order from the fixed seed."""
    rng = random.Random(SEED)
    out: list[RawSample] = []
    disguised = DISGUISES[1:]
    turn = 0
    for kind in KINDS:
        plan = ["plain"] * PLAIN_PER_KIND
        for _ in range(SAMPLES_PER_KIND - PLAIN_PER_KIND):
            plan.append(disguised[turn % len(disguised)])
            turn += 1
        for disguise in plan:
            sample = _credential(rng, kind, disguise)
            # A value with no random run that can hold a placeholder word takes another disguise instead.
            while sample is None:
                sample = _credential(rng, kind, rng.choice(disguised[:-1]))
            out.append(sample)
    for name, make in LOOKALIKES:
        for _ in range(LOOKALIKES_PER_KIND):
            text = make(Gen(rng))
            out.append(RawSample(Sample(name, "lookalike", text), text))
    return out


def eighth_part() -> list[Sample]:
    return [raw.sample for raw in eighth_part_raw()]
