"""Independent secret corpus, part fourteen: credentials generated from the formats the providers document
(prefixes, lengths, alphabets, checksums where documented, file shapes), written without reading the filter.

Each kind says where its format comes from. Values are random from a fixed seed; none is a real token.
"""

import base64
import binascii
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 14_061_2026
SAMPLES_PER_KIND = 10
LOOKALIKES_PER_KIND = 22

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
UPPER_HEX = "0123456789ABCDEF"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BASE32_UPPER = string.ascii_uppercase + "234567"
BASE32_LOWER = string.ascii_lowercase + "234567"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def rs(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def uuid4(r: random.Random) -> str:
    h = rs(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def base62(n: int, width: int) -> str:
    digits = string.digits + string.ascii_uppercase + string.ascii_lowercase
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = digits[d] + out
    return out.rjust(width, "0")


def crc_token(r: random.Random, prefix: str) -> str:
    # GitHub's token format post (2021) and npm's granular tokens: 30 random base62 characters followed by a
    # 6-character base62 CRC32 checksum of those characters.
    body = rs(r, ALNUM, 30)
    return prefix + body + base62(binascii.crc32(body.encode()), 6)


def jwt(r: random.Random, header: dict[str, str], claims: dict[str, object], sig_bytes: int = 32) -> str:
    head = b64u(json.dumps(header, separators=(",", ":")).encode())
    body = b64u(json.dumps(claims, separators=(",", ":")).encode())
    return f"{head}.{body}.{b64u(r.randbytes(sig_bytes))}"


def pem_body(r: random.Random, nbytes: int) -> str:
    raw = base64.b64encode(r.randbytes(nbytes)).decode()
    return "\n".join(raw[i : i + 64] for i in range(0, len(raw), 64))


def middle_line(pem: str) -> str:
    lines = [line for line in pem.splitlines() if len(line) == 64 and "-" not in line]
    return lines[len(lines) // 2]


def words_password(r: random.Random) -> str:
    words = [
        "maple",
        "orbit",
        "copper",
        "tundra",
        "violet",
        "harbor",
        "quartz",
        "lantern",
        "meadow",
        "falcon",
    ]
    return r.choice(words).capitalize() + r.choice("!#%*-_.") + r.choice(words) + str(r.randint(10, 9999))


# A generator returns the value as pasted and the core: the random part inside it that disguises work on.
Gen = Callable[[random.Random], tuple[str, str]]


def tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> Gen:
    def gen(r: random.Random) -> tuple[str, str]:
        v = prefix + rs(r, alphabet, n) + suffix
        return v, v

    return gen


def same(f: Callable[[random.Random], str]) -> Gen:
    def gen(r: random.Random) -> tuple[str, str]:
        v = f(r)
        return v, v

    return gen


@dataclass(frozen=True)
class CredKind:
    name: str
    group: str
    var: str
    gen: Gen
    multiline: bool = False


def azure_conn(r: random.Random) -> tuple[str, str]:
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol, AccountName, AccountKey
    # (base64 of a 64-byte key, 88 chars), EndpointSuffix.
    key = base64.b64encode(r.randbytes(64)).decode()
    acct = "st" + rs(r, LOWER_ALNUM, 10)
    v = f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net"
    return v, key[:-2]


def azure_sas(r: random.Random) -> tuple[str, str]:
    # Azure "Create a service SAS": sv, ss, srt, sp, se, st, spr and sig = base64 HMAC-SHA256, URL-encoded
    # (the AWS DataSync AzureBlobSasConfiguration page shows the same shape, "sig=...%2F...%3D").
    sig = base64.b64encode(r.randbytes(32)).decode()
    core = sig[:-1]
    v = (
        f"sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2027-0{r.randint(1, 9)}-15T18:00:00Z"
        f"&st=2026-12-01T10:00:00Z&spr=https&sig={quote(core, safe='')}%3D"
    )
    return v, quote(core, safe="")


def gcp_sa_json(r: random.Random) -> tuple[str, str]:
    # Google Cloud "Create and delete service account keys": JSON key file with type, project_id,
    # private_key_id (40 hex), private_key (PKCS#8 PEM), client_email.
    project = rs(r, string.ascii_lowercase, 6) + "-" + str(r.randint(100000, 999999))
    pem = "-----BEGIN PRIVATE KEY-----\n" + pem_body(r, 1190) + "\n-----END PRIVATE KEY-----\n"
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": rs(r, HEX, 40),
        "private_key": pem,
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": str(r.randint(10**20, 10**21)),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    text = json.dumps(doc, indent=2)
    line = middle_line(pem)
    return text, line


def pem_key(label: str, nbytes: int) -> Gen:
    # RFC 7468 textual encoding: BEGIN/END label lines around 64-column base64.
    def gen(r: random.Random) -> tuple[str, str]:
        pem = f"-----BEGIN {label}-----\n" + pem_body(r, nbytes) + f"\n-----END {label}-----"
        return pem, middle_line(pem)

    return gen


def openssh_key(r: random.Random) -> tuple[str, str]:
    # OpenSSH PROTOCOL.key: "openssh-key-v1\0" magic, base64 at 70 columns between BEGIN/END lines.
    raw = base64.b64encode(b"openssh-key-v1\x00" + r.randbytes(380)).decode()
    lines = [raw[i : i + 70] for i in range(0, len(raw), 70)]
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    return pem, lines[len(lines) // 2]


def url_cred(scheme: str, user: str, host: str, tail: str, pw: Callable[[random.Random], str]) -> Gen:
    # RFC 3986 userinfo: scheme://user:password@host, as the database drivers document their URLs.
    def gen(r: random.Random) -> tuple[str, str]:
        p = pw(r)
        return f"{scheme}://{user}:{p}@{host}{tail}", p

    return gen


def kv_cred(fmt: str, pw: Callable[[random.Random], str]) -> Gen:
    def gen(r: random.Random) -> tuple[str, str]:
        p = pw(r)
        return fmt.format(p=p, h=rs(r, LOWER_ALNUM, 6)), p

    return gen


def basic_auth(user: str) -> Gen:
    # RFC 7617: "Authorization: Basic" + base64(user ":" password); the core is the encoded credentials.
    def gen(r: random.Random) -> tuple[str, str]:
        enc = base64.b64encode(f"{user}:{rs(r, ALNUM, 20)}".encode()).decode()
        return f"Basic {enc}", enc

    return gen


def docker_auth(r: random.Random) -> tuple[str, str]:
    # Docker docs "docker login": ~/.docker/config.json "auths" entries hold base64(username:password).
    enc = base64.b64encode(f"ci-bot:dckr_pat_{rs(r, URLSAFE, 27)}".encode()).decode()
    return '{"auths": {"https://index.docker.io/v1/": {"auth": "' + enc + '"}}}', enc


def discord_bot(r: random.Random) -> str:
    # Discord developer docs: bot token = base64(user id) "." timestamp "." HMAC, three dot-separated parts.
    uid = base64.b64encode(str(r.randint(10**17, 10**18)).encode()).decode().rstrip("=")
    return f"{uid}.{rs(r, URLSAFE, 6)}.{rs(r, URLSAFE, 38)}"


def slack_webhook(r: random.Random) -> tuple[str, str]:
    # Slack "Sending messages using incoming webhooks": hooks.slack.com/services/T.../B.../<24 secret chars>.
    s = rs(r, ALNUM, 24)
    return f"https://hooks.slack.com/services/T{rs(r, UPPER_ALNUM, 10)}/B{rs(r, UPPER_ALNUM, 10)}/{s}", s


def discord_webhook(r: random.Random) -> tuple[str, str]:
    # Discord "Webhook resource": /api/webhooks/{webhook.id}/{webhook.token}.
    s = rs(r, URLSAFE, 68)
    return f"https://discord.com/api/webhooks/{r.randint(10**17, 10**18)}/{s}", s


def teams_webhook(r: random.Random) -> tuple[str, str]:
    # Microsoft Teams incoming webhook URL: webhookb2/<group>@<tenant>/IncomingWebhook/<32 hex>/<uuid>.
    s = rs(r, HEX, 32)
    host = rs(r, string.ascii_lowercase, 7)
    return (
        f"https://{host}.webhook.office.com/webhookb2/{uuid4(r)}@{uuid4(r)}/IncomingWebhook/{s}/{uuid4(r)}/V2"
        + rs(r, URLSAFE, 40),
        s,
    )


def k8s_sa_token(r: random.Random) -> str:
    # Kubernetes service account tokens are RS256 JWTs with iss "kubernetes/serviceaccount".
    claims = {
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": "ci",
        "sub": "system:serviceaccount:ci:deployer",
        "jti": uuid4(r),
    }
    return jwt(r, {"alg": "RS256", "kid": rs(r, URLSAFE, 43)}, claims, 256)


def supabase_service(r: random.Random) -> str:
    # Supabase "API keys": the service_role key is an HS256 JWT with role service_role; never expose it.
    ref = rs(r, string.ascii_lowercase, 20)
    return jwt(r, {"alg": "HS256", "typ": "JWT"}, {"iss": "supabase", "ref": ref, "role": "service_role"})


def turso_token(r: random.Random) -> str:
    # Turso/libSQL database auth tokens are EdDSA-signed JWTs ("turso db tokens create").
    return jwt(r, {"alg": "EdDSA", "typ": "JWT"}, {"a": "rw", "iat": 1764000000, "id": uuid4(r)}, 64)


def teamcity_token(r: random.Random) -> str:
    # TeamCity access tokens: eyJ0eXAiOiAiVENWMiJ9 (base64 of {"typ": "TCV2"}) then two base64url parts.
    return f"eyJ0eXAiOiAiVENWMiJ9.{rs(r, URLSAFE, 36)}.{rs(r, URLSAFE, 48)}"


def elastic_api_key(r: random.Random) -> tuple[str, str]:
    # Elasticsearch "Create API key" returns id + api_key; requests send ApiKey base64(id:api_key).
    enc = base64.b64encode(f"{rs(r, URLSAFE, 20)}:{rs(r, URLSAFE, 22)}".encode()).decode()
    return f"ApiKey {enc}", enc


def sendgrid(r: random.Random) -> str:
    # SendGrid API keys: "SG." + 22-char key id + "." + 43-char secret (base64url).
    return f"SG.{rs(r, URLSAFE, 22)}.{rs(r, URLSAFE, 43)}"


def slack_bot(r: random.Random) -> str:
    # Slack token types: bot tokens xoxb-<team>-<bot>-<24 alnum>.
    return f"xoxb-{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-{rs(r, ALNUM, 24)}"


def slack_user(r: random.Random) -> str:
    return f"xoxp-{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-{r.randint(10**10, 10**13)}-{rs(r, HEX, 32)}"


def slack_app(r: random.Random) -> str:
    # Slack app-level tokens for Socket Mode: xapp-1-A<id>-<digits>-<64 hex>.
    return f"xapp-1-A{rs(r, UPPER_ALNUM, 10)}-{r.randint(10**12, 10**13)}-{rs(r, HEX, 64)}"


def telegram(r: random.Random) -> str:
    # Telegram Bot API: token "123456789:AA..." = bot id, colon, 35 base64url chars.
    return f"{r.randint(10**8, 10**10)}:AA{rs(r, URLSAFE, 33)}"


def matrix_token(r: random.Random) -> str:
    # Synapse access tokens: syt_<base64 localpart>_<20 random>_<6-char crc>.
    return f"syt_{b64u(b'ops-bot')}_{rs(r, ALNUM, 20)}_{rs(r, ALNUM, 6)}"


def braintree(r: random.Random) -> str:
    # Braintree/PayPal access tokens: access_token$production$<merchant>$<32 hex>.
    return f"access_token$production${rs(r, LOWER_ALNUM, 16)}${rs(r, HEX, 32)}"


def mercadopago(r: random.Random) -> str:
    # Mercado Pago credentials: production Access Token APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    return f"APP_USR-{rs(r, string.digits, 16)}-{rs(r, string.digits, 6)}-{rs(r, HEX, 32)}-{rs(r, string.digits, 9)}"


def adyen(r: random.Random) -> str:
    # Adyen API credentials: keys start with AQE and hold three base64 parts joined by "-".
    return f"AQE{rs(r, B64, 97)}=-{rs(r, B64, 43)}=-{rs(r, ALNUM, 16)}"


def atlassian(r: random.Random) -> str:
    # Atlassian API tokens (2023+): ATATT3xFfGF0 + ~180 base64url + "=" + 8 hex checksum; support.atlassian.com
    # "Manage API tokens" says the length varies and to store them "just like a password".
    return f"ATATT3xFfGF0{rs(r, URLSAFE, 170)}={rs(r, UPPER_HEX, 8)}"


def astra(r: random.Random) -> str:
    # DataStax Astra application tokens: AstraCS:<24 letters>:<64 hex>.
    return f"AstraCS:{rs(r, string.ascii_letters, 24)}:{rs(r, HEX, 64)}"


def terraform_cloud(r: random.Random) -> str:
    # Terraform Cloud user/team tokens: 14 chars ".atlasv1." 67 chars.
    return f"{rs(r, ALNUM, 14)}.atlasv1.{rs(r, ALNUM, 67)}"


def dynatrace(r: random.Random) -> str:
    # Dynatrace "Access tokens": dt0c01.<24-char public part>.<64-char secret part>, uppercase base32.
    return f"dt0c01.{rs(r, BASE32_UPPER, 24)}.{rs(r, BASE32_UPPER, 64)}"


def airtable(r: random.Random) -> str:
    # Airtable personal access tokens: pat<14 chars>.<64 hex>.
    return f"pat{rs(r, ALNUM, 14)}.{rs(r, HEX, 64)}"


def asana(r: random.Random) -> str:
    # Asana personal access tokens: 2/<user gid>/<token gid>:<32 hex>.
    return f"2/{rs(r, string.digits, 16)}/{rs(r, string.digits, 16)}:{rs(r, HEX, 32)}"


def salesforce(r: random.Random) -> str:
    # Salesforce OAuth access tokens: org id (00D...) "!" then an opaque base64-ish session part.
    return f"00D{rs(r, ALNUM, 12)}!AQ{rs(r, ALNUM, 4)}.{rs(r, ALNUM + '._', 90)}"


def onepassword(r: random.Random) -> str:
    # 1Password service account tokens: "ops_" + base64 JSON ("eyJ...").
    body = b64u(
        json.dumps({"signInAddress": "my.1password.com", "userAuth": {"secret": rs(r, ALNUM, 40)}}).encode()
    )
    return "ops_" + body + rs(r, URLSAFE, 40)


def intercom(r: random.Random) -> str:
    # Intercom access tokens: base64 of "tok:" + uuid + ":1:0" ("dG9rOj..." prefix).
    return base64.b64encode(f"tok:{uuid4(r)}:1:0".encode()).decode()


def grafana_cloud(r: random.Random) -> str:
    # Grafana Cloud access policy tokens: glc_ + base64 of a JSON document {"o":..,"n":..,"k":..,"m":..}.
    doc = {
        "o": str(r.randint(10**5, 10**6)),
        "n": "stack-write",
        "k": rs(r, ALNUM, 24),
        "m": {"r": "prod-eu-west-2"},
    }
    return "glc_" + base64.b64encode(json.dumps(doc, separators=(",", ":")).encode()).decode()


def sentry_org(r: random.Random) -> str:
    # Sentry organization auth tokens: sntrys_ + base64 JSON payload + "_" + 43-char secret.
    payload = b64u(json.dumps({"iat": 1764000000, "url": "https://sentry.io", "org": "acme"}).encode())
    return f"sntrys_{payload}_{rs(r, URLSAFE, 43)}"


def pypi_token(r: random.Random) -> str:
    # PyPI API tokens: "pypi-" + a macaroon whose base64 starts with AgEIcHlwaS5vcmc (location "pypi.org").
    return "pypi-AgEIcHlwaS5vcmc" + rs(r, URLSAFE, 160)


def openai_legacy(r: random.Random) -> str:
    # OpenAI user keys (pre-2024): sk- + 20 + "T3BlbkFJ" (base64 "OpenAI") + 20.
    return f"sk-{rs(r, ALNUM, 20)}T3BlbkFJ{rs(r, ALNUM, 20)}"


def openai_project(r: random.Random) -> str:
    # OpenAI project keys: sk-proj- + ~156 base64url with T3BlbkFJ inside.
    return f"sk-proj-{rs(r, URLSAFE, 74)}T3BlbkFJ{rs(r, URLSAFE, 74)}"


def gitlab_token(prefix: str) -> Gen:
    # GitLab "Token prefixes" docs: glpat-, glrt-, gldt-, glptt- followed by 20 base64url characters
    # (gitlab-org/gitlab issues 342327, 383198 and MR 138438 introduce glpat-, glrt-, gldt-).
    return tok(prefix, URLSAFE, 20)


def fly_token(r: random.Random) -> str:
    # Fly.io "fly tokens create": FlyV1 fm2_<base64 macaroon>,fm2_<...>.
    return f"FlyV1 fm2_lJPE{rs(r, B64, 120)},fm2_lJPE{rs(r, B64, 60)}"


def pgpass(r: random.Random) -> tuple[str, str]:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password.
    p = rs(r, ALNUM, 18)
    return f"db-{rs(r, LOWER_ALNUM, 5)}.internal:5432:orders:app_rw:{p}", p


def netrc(r: random.Random) -> tuple[str, str]:
    # Heroku CLI docs: ~/.netrc "machine api.heroku.com login <email> password <API key>"; help.heroku.com
    # PBGP6IDE and the Dev Center show UUID tokens (auth:token, authorizations:create); newer keys are HRKU-.
    p = r.choice([uuid4(r), "HRKU-AA" + rs(r, URLSAFE, 58)])
    return f"machine api.heroku.com\n  login ops@example.org\n  password {p}", p


def npmrc(r: random.Random) -> tuple[str, str]:
    # npm docs "npmrc": per-registry auth as //registry.npmjs.org/:_authToken=<token>.
    t = crc_token(r, "npm_")
    return f"//registry.npmjs.org/:_authToken={t}", t


def pypirc(r: random.Random) -> tuple[str, str]:
    # PyPI help "API tokens": in .pypirc set username = __token__ and password = the pypi- token.
    t = pypi_token(r)
    return f"[distutils]\nindex-servers = pypi\n\n[pypi]\n  username = __token__\n  password = {t}", t


def kubeconfig(r: random.Random) -> tuple[str, str]:
    # kubectl kubeconfig: users[].user.token holds a bearer token (here a bootstrap token
    # "[a-z0-9]{6}.[a-z0-9]{16}" as documented under "Authenticating with Bootstrap Tokens").
    t = f"{rs(r, LOWER_ALNUM, 6)}.{rs(r, LOWER_ALNUM, 16)}"
    v = (
        "apiVersion: v1\nkind: Config\nusers:\n- name: kubeadm-join\n  user:\n"
        f"    token: {t}\nclusters:\n- name: prod\n  cluster:\n    server: https://10.0.4.2:6443"
    )
    return v, t


def hexkey(n: int) -> Gen:
    return tok("", HEX, n)


def aws_pair(r: random.Random) -> tuple[str, str]:
    # AWS IAM "Managing access keys": access key id AKIA + 16 base32 chars, secret access key 40 chars.
    s = rs(r, B64, 40)
    return f"AKIA{rs(r, BASE32_UPPER, 16)} {s}", s


def id_and_secret(id_fmt: Callable[[random.Random], str], secret: Gen, sep: str = " / ") -> Gen:
    # The id half is not secret on its own; the core is the secret half.
    def gen(r: random.Random) -> tuple[str, str]:
        ident = id_fmt(r)
        v, core = secret(r)
        return f"{ident}{sep}{v}", core

    return gen


def rand(alphabet: str, n: int, prefix: str = "") -> Callable[[random.Random], str]:
    return lambda r: prefix + rs(r, alphabet, n)


C, CI, CH, P, D, R, OBS, A, S = (
    "cloud",
    "ci",
    "chat",
    "payment",
    "database",
    "registry",
    "observability",
    "ai",
    "saas",
)

KINDS: list[CredKind] = [
    # --- cloud ---
    CredKind("aws_access_key_pair", C, "AWS_SECRET_ACCESS_KEY", aws_pair),
    # AWS STS docs: temporary credentials add a session token; current ones begin "IQoJb3JpZ2luX2Vj".
    CredKind("aws_session_token", C, "AWS_SESSION_TOKEN", tok("IQoJb3JpZ2luX2Vj", B64, 340)),
    # Google "API keys" docs: AIza followed by 35 base64url characters.
    CredKind("gcp_api_key", C, "GOOGLE_API_KEY", tok("AIza", URLSAFE, 35)),
    CredKind(
        "gcp_service_account_json", C, "GOOGLE_APPLICATION_CREDENTIALS_JSON", gcp_sa_json, multiline=True
    ),
    # Google OAuth client secrets (2021 format): GOCSPX- + 28 base64url.
    CredKind("gcp_oauth_client_secret", C, "GOOGLE_CLIENT_SECRET", tok("GOCSPX-", URLSAFE, 28)),
    CredKind("azure_storage_connection_string", C, "AZURE_STORAGE_CONNECTION_STRING", azure_conn),
    CredKind("azure_sas_token", C, "AZURE_SAS", azure_sas),
    # Entra ID app client secrets: 3 chars, a digit, "Q~", then 34 characters of [A-Za-z0-9_~.-].
    CredKind(
        "azure_client_secret",
        C,
        "AZURE_CLIENT_SECRET",
        same(lambda r: rs(r, ALNUM, 3) + str(r.randint(0, 9)) + "Q~" + rs(r, ALNUM + "_~.-", 34)),
    ),
    # Azure DevOps PATs: 52 lowercase base32 characters.
    CredKind("azure_devops_pat", C, "AZURE_DEVOPS_EXT_PAT", tok("", BASE32_LOWER, 52)),
    # DigitalOcean "Personal access tokens": dop_v1_ + 64 hex; OAuth tokens doo_v1_.
    CredKind("digitalocean_pat", C, "DIGITALOCEAN_TOKEN", tok("dop_v1_", HEX, 64)),
    CredKind("digitalocean_oauth_token", C, "DO_OAUTH_TOKEN", tok("doo_v1_", HEX, 64)),
    # Alibaba Cloud AccessKey: id LTAI + 20 alnum, secret 30 alnum.
    CredKind(
        "alibaba_access_key",
        C,
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        id_and_secret(rand(ALNUM, 20, "LTAI"), tok("", ALNUM, 30)),
    ),
    # Tencent Cloud API keys: SecretId AKID + 32, SecretKey 32 alnum.
    CredKind(
        "tencent_cloud_secret_key",
        C,
        "TENCENTCLOUD_SECRET_KEY",
        id_and_secret(rand(ALNUM, 32, "AKID"), tok("", ALNUM, 32)),
    ),
    # Huawei Cloud AK/SK: AK 20 uppercase alnum, SK 40 alnum.
    CredKind(
        "huawei_cloud_sk", C, "HUAWEICLOUD_SDK_SK", id_and_secret(rand(UPPER_ALNUM, 20), tok("", ALNUM, 40))
    ),
    # IBM Cloud API keys: 44 base64url characters.
    CredKind("ibm_cloud_api_key", C, "IBMCLOUD_API_KEY", tok("", URLSAFE, 44)),
    # Yandex Cloud API keys begin AQVN; IAM tokens begin "t1.".
    CredKind("yandex_cloud_api_key", C, "YC_API_KEY", tok("AQVN", URLSAFE, 36)),
    CredKind("yandex_iam_token", C, "YC_IAM_TOKEN", tok("t1.9euelZ", URLSAFE, 150)),
    # Cloudflare API tokens: 40 base64url; Global API Key: 37 lowercase hex.
    CredKind("cloudflare_api_token", C, "CLOUDFLARE_API_TOKEN", tok("", URLSAFE, 40)),
    CredKind("cloudflare_global_api_key", C, "CF_API_KEY", hexkey(37)),
    # Linode/Akamai personal access tokens: 64 hex.
    CredKind("linode_token", C, "LINODE_TOKEN", hexkey(64)),
    # Vultr API keys: 36 uppercase alnum.
    CredKind("vultr_api_key", C, "VULTR_API_KEY", tok("", UPPER_ALNUM, 36)),
    # Hetzner Cloud API tokens: 64 alnum.
    CredKind("hetzner_cloud_token", C, "HCLOUD_TOKEN", tok("", ALNUM, 64)),
    # Scaleway: access key SCW + 17 uppercase, the secret key is a UUID.
    CredKind("scaleway_secret_key", C, "SCW_SECRET_KEY", same(uuid4)),
    # OVHcloud API: application secret and consumer key, 32 alnum each.
    CredKind("ovh_application_secret", C, "OVH_APPLICATION_SECRET", tok("", ALNUM, 32)),
    # Oracle OCI auth tokens: 20 characters including punctuation.
    CredKind("oci_auth_token", C, "OCI_AUTH_TOKEN", tok("", ALNUM + "()<>:;.#_+-{}[]", 20)),
    # Heroku platform API keys (2024 format): HRKU-AA + 58 base64url; the CLI writes them into .netrc.
    CredKind("heroku_api_key_netrc", C, "", netrc, multiline=True),
    # Vercel access tokens: 24 alnum.
    CredKind("vercel_token", C, "VERCEL_TOKEN", tok("", ALNUM, 24)),
    # Netlify personal access tokens: nfp_ + 36 alnum.
    CredKind("netlify_pat", C, "NETLIFY_AUTH_TOKEN", tok("nfp_", ALNUM, 36)),
    CredKind("flyio_token", C, "FLY_API_TOKEN", same(fly_token)),
    CredKind("kubeconfig_bootstrap_token", C, "", kubeconfig, multiline=True),
    CredKind("kubernetes_service_account_jwt", C, "K8S_TOKEN", same(k8s_sa_token)),
    # Vault tokens: hvs. (service), hvb. (batch) + base62 body.
    CredKind("vault_service_token", C, "VAULT_TOKEN", tok("hvs.", ALNUM, 90)),
    CredKind("vault_batch_token", C, "VAULT_TOKEN", tok("hvb.", URLSAFE, 138)),
    CredKind("terraform_cloud_token", C, "TFE_TOKEN", same(terraform_cloud)),
    # Pulumi access tokens: pul- + 40 hex.
    CredKind("pulumi_access_token", C, "PULUMI_ACCESS_TOKEN", tok("pul-", HEX, 40)),
    CredKind("rsa_private_key_pem", C, "TLS_KEY", pem_key("RSA PRIVATE KEY", 1190), multiline=True),
    CredKind("ec_private_key_pem", C, "JWT_SIGNING_KEY", pem_key("EC PRIVATE KEY", 121), multiline=True),
    CredKind("openssh_private_key", C, "DEPLOY_KEY", openssh_key, multiline=True),
    # --- ci ---
    CredKind("github_pat_classic", CI, "GITHUB_TOKEN", same(lambda r: crc_token(r, "ghp_"))),
    CredKind("github_oauth_token", CI, "GH_TOKEN", same(lambda r: crc_token(r, "gho_"))),
    CredKind("github_app_user_token", CI, "GH_USER_TOKEN", same(lambda r: crc_token(r, "ghu_"))),
    CredKind(
        "github_app_installation_token", CI, "GH_INSTALLATION_TOKEN", same(lambda r: crc_token(r, "ghs_"))
    ),
    CredKind("github_refresh_token", CI, "GH_REFRESH_TOKEN", same(lambda r: crc_token(r, "ghr_"))),
    # GitHub fine-grained PATs: github_pat_ + 22 + "_" + 59 base62.
    CredKind(
        "github_fine_grained_pat",
        CI,
        "GITHUB_PAT",
        same(lambda r: f"github_pat_11{rs(r, UPPER_ALNUM, 20)}_{rs(r, ALNUM, 59)}"),
    ),
    CredKind("gitlab_pat", CI, "GITLAB_TOKEN", gitlab_token("glpat-")),
    CredKind("gitlab_runner_token", CI, "CI_RUNNER_TOKEN", gitlab_token("glrt-")),
    CredKind("gitlab_deploy_token", CI, "GITLAB_DEPLOY_TOKEN", gitlab_token("gldt-")),
    CredKind("gitlab_trigger_token", CI, "TRIGGER_TOKEN", tok("glptt-", HEX, 40)),
    # Bitbucket app passwords: ATBB + 32 alnum (+ 8 hex checksum).
    CredKind(
        "bitbucket_app_password",
        CI,
        "BITBUCKET_APP_PASSWORD",
        same(lambda r: "ATBB" + rs(r, ALNUM, 28) + rs(r, UPPER_HEX, 8)),
    ),
    # CircleCI changelog "New format for API access tokens": CCIPAT_<base58 UUID>_<40 hex>
    # (circleci.com/changelog/new-format-for-api-access-tokens).
    CredKind(
        "circleci_personal_token",
        CI,
        "CIRCLECI_TOKEN",
        same(lambda r: f"CCIPAT_{rs(r, BASE58, 22)}_{rs(r, HEX, 40)}"),
    ),
    # Buildkite API access tokens: bkua_ + 40 hex; agent tokens bkagent_.
    CredKind("buildkite_api_token", CI, "BUILDKITE_API_TOKEN", tok("bkua_", HEX, 40)),
    # Jenkins user API tokens: "11" + 32 hex (34 chars).
    CredKind("jenkins_api_token", CI, "JENKINS_API_TOKEN", tok("11", HEX, 32)),
    CredKind("teamcity_access_token", CI, "TEAMCITY_TOKEN", same(teamcity_token)),
    # SonarQube tokens: squ_ (user), sqp_ (project), sqa_ (global analysis) + 40 hex.
    CredKind(
        "sonarqube_token",
        CI,
        "SONAR_TOKEN",
        same(lambda r: r.choice(["squ_", "sqp_", "sqa_"]) + rs(r, HEX, 40)),
    ),
    # Octopus Deploy API keys: API- + 32 uppercase alnum.
    CredKind("octopus_api_key", CI, "OCTOPUS_API_KEY", tok("API-", UPPER_ALNUM, 32)),
    # Doppler service tokens dp.st.<env>.<40+>; personal dp.pt.
    CredKind(
        "doppler_token",
        CI,
        "DOPPLER_TOKEN",
        same(lambda r: r.choice(["dp.st.prd.", "dp.pt."]) + rs(r, ALNUM, 43)),
    ),
    # Travis CI API tokens: 22 base64url.
    CredKind("travis_api_token", CI, "TRAVIS_API_TOKEN", tok("", URLSAFE, 22)),
    # Codecov upload tokens are UUIDs that Codecov says to keep as secrets.
    CredKind("codecov_upload_token", CI, "CODECOV_TOKEN", same(uuid4)),
    CredKind(
        "jenkins_url_password",
        CI,
        "",
        url_cred("https", "admin", "jenkins.corp.internal:8443", "/job/deploy/", rand(ALNUM, 16)),
    ),
    # --- chat ---
    CredKind("slack_bot_token", CH, "SLACK_BOT_TOKEN", same(slack_bot)),
    CredKind("slack_user_token", CH, "SLACK_USER_TOKEN", same(slack_user)),
    CredKind("slack_app_token", CH, "SLACK_APP_TOKEN", same(slack_app)),
    CredKind("slack_webhook_url", CH, "SLACK_WEBHOOK_URL", slack_webhook),
    CredKind("discord_bot_token", CH, "DISCORD_TOKEN", same(discord_bot)),
    CredKind("discord_webhook_url", CH, "DISCORD_WEBHOOK", discord_webhook),
    CredKind("telegram_bot_token", CH, "TELEGRAM_BOT_TOKEN", same(telegram)),
    CredKind("teams_webhook_url", CH, "TEAMS_WEBHOOK_URL", teams_webhook),
    # Twilio: Account SID AC + 32 hex (an id), Auth Token 32 hex (secret).
    CredKind(
        "twilio_auth_token", CH, "TWILIO_AUTH_TOKEN", id_and_secret(rand(HEX, 32, "AC"), hexkey(32), ":")
    ),
    # Twilio API keys: SID SK + 32 hex, secret 32 alnum.
    CredKind(
        "twilio_api_key_secret",
        CH,
        "TWILIO_API_SECRET",
        id_and_secret(rand(HEX, 32, "SK"), tok("", ALNUM, 32), ":"),
    ),
    # Mattermost personal access tokens: 26 lowercase alnum.
    CredKind("mattermost_pat", CH, "MM_TOKEN", tok("", LOWER_ALNUM, 26)),
    # Zulip API keys: 32 alnum in zuliprc.
    CredKind("zulip_api_key", CH, "ZULIP_API_KEY", tok("", ALNUM, 32)),
    # LINE Messaging API: long-lived channel access tokens ~172 base64 chars ending "=".
    CredKind("line_channel_access_token", CH, "LINE_CHANNEL_ACCESS_TOKEN", tok("", B64, 171, "=")),
    CredKind("matrix_access_token", CH, "MATRIX_ACCESS_TOKEN", same(matrix_token)),
    # Vonage (Nexmo) API secret: 16 alnum next to an 8-hex API key.
    CredKind("vonage_api_secret", CH, "VONAGE_API_SECRET", tok("", ALNUM, 16)),
    # Pushover application tokens: 30 lowercase alnum starting with "a".
    CredKind("pushover_app_token", CH, "PUSHOVER_TOKEN", tok("a", LOWER_ALNUM, 29)),
    # --- payment ---
    # Stripe "API keys": secret sk_live_, restricted rk_live_, webhook signing secrets whsec_.
    CredKind("stripe_secret_key", P, "STRIPE_SECRET_KEY", tok("sk_live_51", ALNUM, 97)),
    CredKind("stripe_restricted_key", P, "STRIPE_RESTRICTED_KEY", tok("rk_live_51", ALNUM, 97)),
    CredKind("stripe_webhook_secret", P, "STRIPE_WEBHOOK_SECRET", tok("whsec_", ALNUM, 32)),
    # PayPal REST apps: client id and client secret, each 80 base64url chars.
    CredKind("paypal_client_secret", P, "PAYPAL_CLIENT_SECRET", tok("E", URLSAFE, 79)),
    CredKind("braintree_access_token", P, "BRAINTREE_ACCESS_TOKEN", same(braintree)),
    # Square access tokens: EAAA + 60 base64url; application secrets sq0csp- + 43.
    CredKind("square_access_token", P, "SQUARE_ACCESS_TOKEN", tok("EAAA", URLSAFE, 60)),
    CredKind("square_app_secret", P, "SQUARE_APPLICATION_SECRET", tok("sq0csp-", URLSAFE, 43)),
    CredKind("adyen_api_key", P, "ADYEN_API_KEY", same(adyen)),
    # Razorpay: key id rzp_live_ + 14 (public in checkout), key secret 24 alnum.
    CredKind(
        "razorpay_key_secret",
        P,
        "RAZORPAY_KEY_SECRET",
        id_and_secret(rand(ALNUM, 14, "rzp_live_"), tok("", ALNUM, 24), ":"),
    ),
    # Paystack secret keys: sk_live_ + 40 hex.
    CredKind("paystack_secret_key", P, "PAYSTACK_SECRET_KEY", tok("sk_live_", HEX, 40)),
    # Flutterwave secret keys: FLWSECK- + 32 hex + -X.
    CredKind("flutterwave_secret_key", P, "FLW_SECRET_KEY", tok("FLWSECK-", HEX, 32, "-X")),
    CredKind("mercadopago_access_token", P, "MP_ACCESS_TOKEN", same(mercadopago)),
    # Mollie API keys: live_ + 30 alnum.
    CredKind("mollie_api_key", P, "MOLLIE_API_KEY", tok("live_", ALNUM, 30)),
    # Midtrans server keys: Mid-server- + 24 base64url.
    CredKind("midtrans_server_key", P, "MIDTRANS_SERVER_KEY", tok("Mid-server-", URLSAFE, 24)),
    # Xendit secret keys: xnd_production_ + 60 alnum.
    CredKind("xendit_secret_key", P, "XENDIT_SECRET_KEY", tok("xnd_production_", ALNUM, 60)),
    # GoCardless live access tokens: live_ + 40 base64url.
    CredKind("gocardless_access_token", P, "GOCARDLESS_ACCESS_TOKEN", tok("live_", URLSAFE, 40)),
    # Plaid secrets: 30 hex per environment.
    CredKind("plaid_secret", P, "PLAID_SECRET", hexkey(30)),
    # YooKassa (ЮKassa) secret keys: live_ + 43 base64url.
    CredKind("yookassa_secret_key", P, "YOOKASSA_SECRET_KEY", tok("live_", URLSAFE, 43)),
    # Wise API tokens: UUIDs, to be kept secret.
    CredKind("wise_api_token", P, "WISE_API_TOKEN", same(uuid4)),
    # Alipay Open Platform: the app private key (RSA2) in PEM or bare base64.
    CredKind("alipay_app_private_key", P, "ALIPAY_PRIVATE_KEY", pem_key("PRIVATE KEY", 1190), multiline=True),
    # --- database ---
    CredKind(
        "postgres_url",
        D,
        "DATABASE_URL",
        url_cred("postgresql", "app", "db.prod.internal:5432", "/orders?sslmode=require", rand(ALNUM, 24)),
    ),
    CredKind(
        "mysql_url", D, "MYSQL_URL", url_cred("mysql", "root", "10.1.2.3:3306", "/shop", words_password)
    ),
    CredKind(
        "mongodb_srv_url",
        D,
        "MONGODB_URI",
        url_cred(
            "mongodb+srv",
            "svc-api",
            "cluster0.x7k2p.mongodb.net",
            "/?retryWrites=true&w=majority",
            rand(ALNUM, 16),
        ),
    ),
    CredKind(
        "redis_url",
        D,
        "REDIS_URL",
        url_cred("rediss", "default", "cache-01.example.cloud:6380", "/0", rand(ALNUM, 32)),
    ),
    CredKind(
        "amqp_url",
        D,
        "CELERY_BROKER_URL",
        url_cred("amqps", "worker", "mq.internal:5671", "/prod", rand(ALNUM, 20)),
    ),
    CredKind(
        "clickhouse_dsn",
        D,
        "CLICKHOUSE_DSN",
        url_cred("clickhouse", "default", "ch.internal:9440", "/events?secure=true", rand(ALNUM, 22)),
    ),
    CredKind("pgpass_line", D, "", pgpass, multiline=True),
    # SQL Server ADO.NET connection strings: Server=...;User Id=...;Password=...;
    CredKind(
        "mssql_connection_string",
        D,
        "ConnectionStrings__Default",
        kv_cred(
            "Server=tcp:sql-{h}.database.windows.net,1433;Initial Catalog=crm;User ID=crmadmin;Password={p};Encrypt=True;",
            words_password,
        ),
    ),
    # JDBC URLs accept password= as a parameter.
    CredKind(
        "jdbc_password_param",
        D,
        "SPRING_DATASOURCE_URL",
        kv_cred("jdbc:postgresql://pg-{h}:5432/billing?user=billing&password={p}&ssl=true", rand(ALNUM, 20)),
    ),
    # Oracle easy connect on the sqlplus command line: user/password@//host:port/service.
    CredKind(
        "oracle_sqlplus_password",
        D,
        "",
        kv_cred("sqlplus scott/{p}@//ora-{h}.corp:1521/ORCLPDB1", rand(ALNUM, 14)),
    ),
    # PlanetScale passwords pscale_pw_ + 43, service tokens pscale_tkn_.
    CredKind("planetscale_password", D, "DATABASE_PASSWORD", tok("pscale_pw_", URLSAFE, 43)),
    CredKind("elasticsearch_api_key", D, "ES_API_KEY", elastic_api_key),
    CredKind("astra_db_token", D, "ASTRA_DB_APPLICATION_TOKEN", same(astra)),
    # Fauna secrets: fn + 38 base64url.
    CredKind("fauna_secret", D, "FAUNA_SECRET", tok("fnA", URLSAFE, 37)),
    # InfluxDB v2 API tokens: 86 base64url characters ending "==".
    CredKind("influxdb_token", D, "INFLUX_TOKEN", tok("", URLSAFE, 86, "==")),
    CredKind("turso_auth_token", D, "TURSO_AUTH_TOKEN", same(turso_token)),
    CredKind("supabase_service_role_key", D, "SUPABASE_SERVICE_ROLE_KEY", same(supabase_service)),
    # Snowflake: password in the connector URL.
    CredKind(
        "snowflake_url_password",
        D,
        "SNOWFLAKE_URL",
        url_cred(
            "snowflake",
            "ETL_USER",
            "xy12345.eu-central-1",
            "/ANALYTICS/PUBLIC?warehouse=ETL_WH",
            words_password,
        ),
    ),
    # --- registry ---
    # npm granular access tokens: npm_ + 36 base62 with CRC32 checksum, written to .npmrc as _authToken.
    CredKind("npm_token", R, "NPM_TOKEN", same(lambda r: crc_token(r, "npm_"))),
    CredKind("pypi_token", R, "TWINE_PASSWORD", same(pypi_token)),
    # Docker Hub personal access tokens: dckr_pat_ + 27 base64url.
    CredKind("dockerhub_pat", R, "DOCKERHUB_TOKEN", tok("dckr_pat_", URLSAFE, 27)),
    CredKind("npmrc_auth_line", R, "", npmrc),
    CredKind("pypirc_token", R, "", pypirc, multiline=True),
    CredKind("docker_config_auth", R, "", docker_auth, multiline=True),
    # RubyGems API keys: rubygems_ + 48 hex.
    CredKind("rubygems_api_key", R, "GEM_HOST_API_KEY", tok("rubygems_", HEX, 48)),
    # NuGet API keys: oy2 + 43 lowercase base32.
    CredKind("nuget_api_key", R, "NUGET_API_KEY", tok("oy2", BASE32_LOWER, 43)),
    # crates.io API tokens: cio + 32 alnum.
    CredKind("crates_io_token", R, "CARGO_REGISTRY_TOKEN", tok("cio", ALNUM, 32)),
    # JFrog Artifactory: API keys AKCp + 69 alnum; reference tokens cmVmdGtu (base64 "reftkn").
    CredKind("jfrog_api_key", R, "ARTIFACTORY_API_KEY", tok("AKCp8", ALNUM, 68)),
    CredKind("jfrog_reference_token", R, "JFROG_ACCESS_TOKEN", tok("cmVmdGtuOjAxOjE3", ALNUM, 48)),
    # Quay.io robot accounts: org+robot name with a 64-char uppercase token.
    CredKind("quay_robot_token", R, "QUAY_ROBOT_TOKEN", tok("", UPPER_ALNUM, 64)),
    # Harbor robot accounts: robot$name with a 32-char secret.
    CredKind("harbor_robot_secret", R, "HARBOR_ROBOT_SECRET", tok("", ALNUM, 32)),
    # Sonatype Central / OSSRH user token password in Maven settings.xml.
    CredKind("maven_central_token_password", R, "OSSRH_PASSWORD", tok("", URLSAFE, 44)),
    # --- observability ---
    # Datadog: API keys 32 hex, application keys 40 hex.
    CredKind("datadog_api_key", OBS, "DD_API_KEY", hexkey(32)),
    CredKind("datadog_app_key", OBS, "DD_APP_KEY", hexkey(40)),
    # New Relic: user keys NRAK- + 27 uppercase alnum; license keys 36 hex + NRAL.
    CredKind("newrelic_user_key", OBS, "NEW_RELIC_API_KEY", tok("NRAK-", UPPER_ALNUM, 27)),
    CredKind("newrelic_license_key", OBS, "NEW_RELIC_LICENSE_KEY", tok("", HEX, 36, "NRAL")),
    CredKind("sentry_org_token", OBS, "SENTRY_AUTH_TOKEN", same(sentry_org)),
    # Sentry user auth tokens: sntryu_ + 64 hex.
    CredKind("sentry_user_token", OBS, "SENTRY_AUTH_TOKEN", tok("sntryu_", HEX, 64)),
    CredKind("grafana_cloud_token", OBS, "GRAFANA_CLOUD_TOKEN", same(grafana_cloud)),
    # Grafana service account tokens: glsa_ + 32 alnum + _ + 8 hex.
    CredKind(
        "grafana_service_account_token",
        OBS,
        "GRAFANA_TOKEN",
        same(lambda r: f"glsa_{rs(r, ALNUM, 32)}_{rs(r, HEX, 8)}"),
    ),
    # Honeycomb ingest keys: hcaik_ + 58 lowercase alnum; configuration keys 22 alnum.
    CredKind("honeycomb_ingest_key", OBS, "HONEYCOMB_API_KEY", tok("hcaik_01", LOWER_ALNUM, 56)),
    # Splunk HTTP Event Collector tokens are UUIDs sent as "Authorization: Splunk <token>".
    CredKind("splunk_hec_token", OBS, "SPLUNK_HEC_TOKEN", same(uuid4)),
    # PagerDuty REST API keys: 20 characters of [A-Za-z0-9_+-].
    CredKind("pagerduty_api_key", OBS, "PAGERDUTY_TOKEN", tok("u+", URLSAFE + "+", 18)),
    # Opsgenie API keys are UUIDs sent as "GenieKey <key>".
    CredKind("opsgenie_api_key", OBS, "OPSGENIE_API_KEY", same(uuid4)),
    CredKind("dynatrace_token", OBS, "DT_API_TOKEN", same(dynatrace)),
    # Axiom API tokens: xaat- + UUID; personal tokens xapt-.
    CredKind("axiom_token", OBS, "AXIOM_TOKEN", same(lambda r: "xaat-" + uuid4(r))),
    # Sumo Logic access keys: id 14 alnum, key 64 alnum.
    CredKind(
        "sumologic_access_key",
        OBS,
        "SUMO_ACCESS_KEY",
        id_and_secret(rand(ALNUM, 14, "su"), tok("", ALNUM, 64), ":"),
    ),
    # Rollbar project access tokens (post_server_item): 32 hex.
    CredKind("rollbar_server_token", OBS, "ROLLBAR_ACCESS_TOKEN", hexkey(32)),
    # PostHog personal API keys: phx_ + 43 alnum.
    CredKind("posthog_personal_key", OBS, "POSTHOG_PERSONAL_API_KEY", tok("phx_", ALNUM, 43)),
    # --- ai ---
    CredKind("openai_project_key", A, "OPENAI_API_KEY", same(openai_project)),
    CredKind("openai_legacy_key", A, "OPENAI_API_KEY", same(openai_legacy)),
    # Anthropic API keys: sk-ant-api03- + 93 base64url + "AA".
    CredKind("anthropic_api_key", A, "ANTHROPIC_API_KEY", tok("sk-ant-api03-", URLSAFE, 93, "AA")),
    # Hugging Face user access tokens: hf_ + 34 letters.
    CredKind("huggingface_token", A, "HF_TOKEN", tok("hf_", string.ascii_letters, 34)),
    # Cohere API keys: 40 alnum.
    CredKind("cohere_api_key", A, "CO_API_KEY", tok("", ALNUM, 40)),
    # Mistral API keys: 32 alnum.
    CredKind("mistral_api_key", A, "MISTRAL_API_KEY", tok("", ALNUM, 32)),
    # Groq API keys: gsk_ + 52 alnum.
    CredKind("groq_api_key", A, "GROQ_API_KEY", tok("gsk_", ALNUM, 52)),
    # Replicate API tokens: r8_ + 37 alnum.
    CredKind("replicate_token", A, "REPLICATE_API_TOKEN", tok("r8_", ALNUM, 37)),
    # Together AI API keys: 64 hex (older) under TOGETHER_API_KEY.
    CredKind("together_api_key", A, "TOGETHER_API_KEY", hexkey(64)),
    # Perplexity API keys: pplx- + 48 alnum.
    CredKind("perplexity_api_key", A, "PPLX_API_KEY", tok("pplx-", ALNUM, 48)),
    # Gemini API keys are Google API keys: AIza + 35.
    CredKind("gemini_api_key", A, "GEMINI_API_KEY", tok("AIzaSy", URLSAFE, 33)),
    # DeepSeek API keys: sk- + 32 hex.
    CredKind("deepseek_api_key", A, "DEEPSEEK_API_KEY", tok("sk-", HEX, 32)),
    # xAI API keys: xai- + 80 alnum.
    CredKind("xai_api_key", A, "XAI_API_KEY", tok("xai-", ALNUM, 80)),
    # OpenRouter keys: sk-or-v1- + 64 hex.
    CredKind("openrouter_key", A, "OPENROUTER_API_KEY", tok("sk-or-v1-", HEX, 64)),
    # LangSmith API keys: lsv2_pt_ (personal) / lsv2_sk_ (service) + 32 hex + _ + 10 hex.
    CredKind(
        "langsmith_api_key",
        A,
        "LANGSMITH_API_KEY",
        same(lambda r: f"lsv2_{r.choice(['pt', 'sk'])}_{rs(r, HEX, 32)}_{rs(r, HEX, 10)}"),
    ),
    # Pinecone API keys: pcsk_ + 5 + _ + 63 alnum.
    CredKind(
        "pinecone_api_key",
        A,
        "PINECONE_API_KEY",
        same(lambda r: f"pcsk_{rs(r, ALNUM, 5)}_{rs(r, ALNUM, 63)}"),
    ),
    # Weights & Biases API keys: 40 hex (wandb login).
    CredKind("wandb_api_key", A, "WANDB_API_KEY", hexkey(40)),
    # Azure OpenAI resource keys: 32 hex sent in the api-key header.
    CredKind("azure_openai_key", A, "AZURE_OPENAI_API_KEY", hexkey(32)),
    # ElevenLabs API keys: sk_ + 48 hex.
    CredKind("elevenlabs_api_key", A, "ELEVENLABS_API_KEY", tok("sk_", HEX, 48)),
    # Voyage AI API keys: pa- + 43 base64url.
    CredKind("voyage_api_key", A, "VOYAGE_API_KEY", tok("pa-", URLSAFE, 43)),
    # --- saas ---
    CredKind("sendgrid_api_key", S, "SENDGRID_API_KEY", same(sendgrid)),
    # Mailgun private API keys: key- + 32 hex (legacy) or 32 hex-8 hex-8 hex.
    CredKind(
        "mailgun_api_key",
        S,
        "MAILGUN_API_KEY",
        same(
            lambda r: r.choice([f"key-{rs(r, HEX, 32)}", f"{rs(r, HEX, 32)}-{rs(r, HEX, 8)}-{rs(r, HEX, 8)}"])
        ),
    ),
    # Mailchimp API keys: 32 hex + "-us" + datacenter.
    CredKind(
        "mailchimp_api_key", S, "MAILCHIMP_API_KEY", same(lambda r: f"{rs(r, HEX, 32)}-us{r.randint(1, 21)}")
    ),
    # Postmark server tokens: UUIDs sent in X-Postmark-Server-Token.
    CredKind("postmark_server_token", S, "POSTMARK_SERVER_TOKEN", same(uuid4)),
    # Shopify changelog (2020): access tokens grew from 32 to 38 chars with shpat_/shpca_/shppa_, app secrets
    # with shpss_ (shopify.dev/changelog/length-of-the-shopify-access-token-is-increasing).
    CredKind("shopify_admin_token", S, "SHOPIFY_ACCESS_TOKEN", tok("shpat_", HEX, 32)),
    CredKind("shopify_shared_secret", S, "SHOPIFY_API_SECRET", tok("shpss_", HEX, 32)),
    CredKind("atlassian_api_token", S, "JIRA_API_TOKEN", same(atlassian)),
    # Notion integration secrets: ntn_ + 46 alnum (secret_ + 43 before 2024).
    CredKind(
        "notion_integration_secret",
        S,
        "NOTION_TOKEN",
        same(lambda r: r.choice([f"ntn_{rs(r, ALNUM, 46)}", f"secret_{rs(r, ALNUM, 43)}"])),
    ),
    # Linear personal API keys: lin_api_ + 40 alnum.
    CredKind("linear_api_key", S, "LINEAR_API_KEY", tok("lin_api_", ALNUM, 40)),
    CredKind("airtable_pat", S, "AIRTABLE_TOKEN", same(airtable)),
    CredKind("asana_pat", S, "ASANA_TOKEN", same(asana)),
    # HubSpot private app tokens: pat-<region>-<uuid>.
    CredKind(
        "hubspot_private_app_token",
        S,
        "HUBSPOT_ACCESS_TOKEN",
        same(lambda r: f"pat-{r.choice(['na1', 'eu1'])}-{uuid4(r)}"),
    ),
    # Zendesk API tokens: 40 alnum, used as email/token:<token> in basic auth.
    CredKind("zendesk_api_token", S, "ZENDESK_API_TOKEN", tok("", ALNUM, 40)),
    # Figma personal access tokens: figd_ + 40 base64url.
    CredKind("figma_pat", S, "FIGMA_TOKEN", tok("figd_", URLSAFE, 40)),
    # Dropbox short-lived access tokens: sl. + ~135 base64url.
    CredKind("dropbox_access_token", S, "DROPBOX_TOKEN", tok("sl.B", URLSAFE, 135)),
    # Okta API tokens: 00 + 40 base64url.
    CredKind("okta_api_token", S, "OKTA_API_TOKEN", tok("00", URLSAFE, 40)),
    # Auth0 application client secrets: 64 base64url.
    CredKind("auth0_client_secret", S, "AUTH0_CLIENT_SECRET", tok("", URLSAFE, 64)),
    # Contentful management tokens: CFPAT- + 43 base64url.
    CredKind("contentful_management_token", S, "CONTENTFUL_MANAGEMENT_TOKEN", tok("CFPAT-", URLSAFE, 43)),
    # Typeform personal tokens: tfp_ + 44 + _ + 14.
    CredKind(
        "typeform_token", S, "TYPEFORM_TOKEN", same(lambda r: f"tfp_{rs(r, URLSAFE, 44)}_{rs(r, ALNUM, 14)}")
    ),
    CredKind("salesforce_access_token", S, "SF_ACCESS_TOKEN", same(salesforce)),
    CredKind("onepassword_service_account_token", S, "OP_SERVICE_ACCOUNT_TOKEN", same(onepassword)),
    CredKind("intercom_access_token", S, "INTERCOM_ACCESS_TOKEN", same(intercom)),
    # LaunchDarkly server-side SDK keys: sdk- + UUID; API access tokens api- + UUID.
    CredKind("launchdarkly_sdk_key", S, "LAUNCHDARKLY_SDK_KEY", same(lambda r: "sdk-" + uuid4(r))),
    CredKind("basic_auth_header", S, "AUTHORIZATION_HEADER", basic_auth("svc-reporting")),
    # A vendor we don't name: 32 hex under a name that says what it is.
    CredKind("unnamed_vendor_hex_token", S, "ACMEPAY_AUTH_TOKEN", hexkey(32)),
    CredKind("generic_api_key_random", S, "api_key", tok("", ALNUM, 40)),
    CredKind("generic_password_words", S, "password", same(words_password)),
]


# Where agents put credentials in memories. Each context takes the variable name, the value and the
# generator; kinds without a name of their own get one from the context.
Context = Callable[[str, str, random.Random], str]

HOSTS = ["build-07", "api-eu-2", "ci-runner-3", "worker-a", "bastion", "jupyter-1"]


def _n(var: str) -> str:
    return var or "TOKEN"


def _scheme(value: str) -> str:
    # Values that carry their own HTTP auth scheme (Basic, ApiKey, FlyV1) go into the header as they are.
    return value if value.startswith(("Basic ", "ApiKey ", "FlyV1 ")) else f"Bearer {value}"


INLINE: list[Context] = [
    lambda v, x, r: f"{_n(v)}={x}",
    lambda v, x, r: f'export {_n(v)}="{x}"',
    lambda v, x, r: (
        f"Incident 2026-11-{r.randint(10, 28)}: prod deploy failed because the rotated credential "
        f"was not in the vault. Working value for now: {x} (rotate after the postmortem)."
    ),
    lambda v, x, r: f"$ curl -sS -H 'Authorization: {_scheme(x)}' https://api.internal.example/v2/status",
    lambda v, x, r: f"{_n(v).lower()}: {x}\nregion: eu-west-1\ntimeout_seconds: 30",
    lambda v, x, r: '{\n  "env": "staging",\n  "' + _n(v).lower() + '": "' + x + '",\n  "retries": 3\n}',
    lambda v, x, r: f'[default]\n{_n(v).lower()} = "{x}"\nendpoint = "https://api.example.net"',
    lambda v, x, r: (
        f'resource "kubernetes_secret" "app" {{\n  data = {{\n    {_n(v).lower()} = "{x}"\n  }}\n}}'
    ),
    lambda v, x, r: f"- name: Deploy\n  env:\n    {_n(v)}: {x}\n  run: ./scripts/deploy.sh",
    lambda v, x, r: f'os.environ["{_n(v)}"] = "{x}"  # notebook cell 4, remove before sharing',
    lambda v, x, r: f'const client = new Client({{ token: "{x}", timeout: 5000 }});',
    lambda v, x, r: f'<add key="{_n(v)}" value="{x}" />',
    lambda v, x, r: f'config.{_n(v).lower()} = "{x}"  # config/initializers/vendor.rb',
    lambda v, x, r: f'let {_n(v).lower()} = "{x}"; // src/main.rs, TODO move to env',
    lambda v, x, r: f"| service | credential | owner |\n|---|---|---|\n| billing | `{x}` | @maria |",
    lambda v, x, r: f"Hallo Team, der neue Schlüssel für staging ist {x} – bitte nicht ins Repo committen.",
    lambda v, x, r: f"Salut, voici le jeton pour la démo de demain : {x}. Je le révoque vendredi.",
    lambda v, x, r: f"Oye, te paso la clave que me pediste: {x} (es la de producción, cuidado).",
    lambda v, x, r: f"Segue o token do ambiente de homologação: {x} — expira em 30 dias.",
    lambda v, x, r: f"本番環境のキーはこれです：{x}　共有は社内だけでお願いします。",
    lambda v, x, r: f"生产环境的密钥：{x}，用完请在控制台里吊销。",
    lambda v, x, r: f"Вот токен для деплоя: {x} — потом перевыпусти, пожалуйста.",
    lambda v, x, r: f"운영 서버 토큰 공유합니다: {x} 다음 주에 교체 예정입니다.",
    lambda v, x, r: f"Ciao, ecco la chiave per il bot: {x} (valida fino a fine mese).",
    lambda v, x, r: f"Cześć, token do CI: {x} — wrzuć go do sekretów repo.",
    lambda v, x, r: f"Merhaba, test ortamı için anahtar: {x} lütfen kimseyle paylaşma.",
    lambda v, x, r: f"Hoi, hier is de sleutel voor de koppeling: {x}",
    lambda v, x, r: f"Chào anh, đây là khóa API cho môi trường thật: {x}",
    lambda v, x, r: f"Halo, ini kunci untuk server produksi: {x} jangan disebar ya.",
    lambda v, x, r: f"नमस्ते, प्रोडक्शन की कुंजी यह है: {x} कृपया इसे साझा न करें।",
    lambda v, x, r: f"مرحباً، هذا هو المفتاح الخاص بالخادم: {x}",
    lambda v, x, r: (
        f'Traceback (most recent call last):\n  File "app/client.py", line 88, in connect\n'
        f'    raise AuthError(f"rejected credential {{cred}}")\nAuthError: rejected credential {x}'
    ),
    lambda v, x, r: (
        f"2026-12-0{r.randint(1, 5)}T0{r.randint(1, 9)}:12:44Z {r.choice(HOSTS)} worker[{r.randint(100, 9999)}]: "
        f"DEBUG outgoing request headers={{'Authorization': 'Bearer {x}', 'Accept': 'application/json'}}"
    ),
    lambda v, x, r: (
        f"Screenshot of the provider console (transcribed):\n  Name: deploy-bot\n  Created: 3 days ago\n"
        f"  Value: {x}\n  [Copy] [Revoke]"
    ),
    lambda v, x, r: (
        f"Subject: Re: access for the audit\n\nHi Jonas,\n\nas discussed, the credential is {x}\n\nBest,\nPriya"
    ),
    lambda v, x, r: (
        f"PR #{r.randint(100, 999)}: fix webhook retries\n\nTo reproduce locally set {_n(v)}={x} and run make e2e."
    ),
    lambda v, x, r: f"docker run --rm -e {_n(v)}={x} ghcr.io/acme/worker:1.{r.randint(0, 9)}",
    lambda v, x, r: f"  {r.randint(400, 900)}  echo '{x}' | gh secret set {_n(v)} --repo acme/api",
    lambda v, x, r: f'[[services]]\nname = "exporter"\n{_n(v).lower()} = "{x}"',
    lambda v, x, r: f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  {_n(v)}: "{x}"',
    lambda v, x, r: f"Runbook step 3: log in with {x} and confirm the dashboard loads.",
    lambda v, x, r: f'<property name="{_n(v).lower()}">{x}</property>',
    lambda v, x, r: f"set -x output:\n+ {_n(v)}={x}\n+ ./bin/sync --all",
]

# Multi-line values (PEM keys, JSON key files, kubeconfigs, .netrc) need contexts that keep lines.
BLOCK: list[Context] = [
    lambda v, x, r: f"Saved the key here so we stop losing it:\n\n```\n{x}\n```",
    lambda v, x, r: f"$ cat > /tmp/key <<'EOF'\n{x}\nEOF\n$ chmod 600 /tmp/key",
    lambda v, x, r: "tls:\n  key: |\n" + "\n".join("    " + line for line in x.splitlines()),
    lambda v, x, r: (
        f"Ticket OPS-{r.randint(1000, 9999)}: the file from the old laptop was\n{x}\nMoved to the vault now."
    ),
    lambda v, x, r: f"Notiz (Migration): Inhalt der Datei\n{x}\nNach der Umstellung löschen.",
    lambda v, x, r: f'variable "{_n(v).lower()}" {{\n  default = <<-EOT\n{x}\n  EOT\n}}',
    lambda v, x, r: f"迁移记录：旧服务器上的文件内容如下\n{x}",
]


def disguise_core(core: str, disguise: str, r: random.Random) -> str:
    mid = len(core) // 2
    if disguise == "zero_width":
        zw = r.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
        spots = sorted(r.sample(range(2, len(core) - 1), min(3, len(core) - 3)), reverse=True)
        for i in spots[: r.randint(1, 3)]:
            core = core[:i] + zw + core[i:]
        return core
    if disguise == "soft_hyphen":
        return core[:mid] + "\u00ad" + core[mid:]
    if disguise == "fullwidth":
        every = r.random() < 0.5
        # Some letters or all of them; the middle one always, so the disguise is never a no-op.
        return "".join(
            chr(ord(c) + 0xFEE0)
            if c.isascii() and c.isalnum() and (every or i == mid or r.random() < 0.3)
            else c
            for i, c in enumerate(core)
        )
    if disguise == "bidi":
        mark = r.choice(["\u202e", "\u2066", "\u200f", "\u202d", "\u061c"])
        return core[: mid - 3] + mark + core[mid - 3 :]
    if disguise == "split":
        brk = r.choice(["\n", "\\\n    ", "\n  ", " \\\n"])
        return core[:mid] + brk + core[mid:]
    if disguise == "percent":
        return "".join(f"%{ord(c):02X}" for c in core)
    raise ValueError("unknown disguise")


PLACEHOLDER_WORDS = {
    "hex": ["deadbeef", "00000000", "cafebabe", "12345678"],
    "upper": ["EXAMPLE", "XXXXXXXX", "TESTTEST", "DUMMY", "SAMPLE"],
    "lower": ["example", "xxxxxxxx", "sample", "testtest", "dummy", "changeme"],
    "mixed": ["EXAMPLE", "xxxx", "sample", "test", "dummy", "Example", "XXXX", "changeme"],
}


def with_placeholder(core: str, r: random.Random) -> str:
    # The random token happens to contain a word people use in placeholders; it is still a live credential.
    letters = {c for c in core if c.isalpha()}
    if set(core) <= set(HEX + "-_."):
        word = r.choice(PLACEHOLDER_WORDS["hex"])
    elif not any(c.islower() for c in letters):
        word = r.choice(PLACEHOLDER_WORDS["upper"])
    elif not any(c.isupper() for c in letters):
        word = r.choice(PLACEHOLDER_WORDS["lower"])
    else:
        word = r.choice(PLACEHOLDER_WORDS["mixed"])
    start = max(len(core) // 2, len(core) - len(word) - 4)
    start = min(start, len(core) - len(word))
    return core[:start] + word + core[start + len(word) :]


def secret_piece(core: str) -> str:
    n = max(8, min(24, len(core) // 3))
    start = (len(core) - n) // 2
    return core[start : start + n]


DISGUISES = ["zero_width", "soft_hyphen", "fullwidth", "bidi", "percent", "base64", "split", "placeholder"]


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _base64_text(kind: CredKind, value: str, r: random.Random) -> tuple[str, str]:
    # Either the value alone or the whole NAME=value line is base64-encoded; returns (text, raw line).
    name = kind.var or "CREDENTIAL"
    if kind.multiline or r.random() < 0.5:
        enc = _b64(value)
        text = r.choice(
            [
                f"apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  {name.lower()}: {enc}",
                f"Base64 from the config map (decode before use): {enc}",
                f'{{"name": "{name.lower()}", "value_b64": "{enc}"}}',
            ]
        )
        return text, value
    line = f"{name}={value}"
    text = r.choice(
        [
            f"$ echo {_b64(line)} | base64 -d >> .env",
            f"Das .env als base64, weil der Chat Sonderzeichen frisst: {_b64(line)}",
            f"ENV_BUNDLE={_b64(line)}",
        ]
    )
    return text, line


def _percent_text(kind: CredKind, value: str, core: str, r: random.Random) -> tuple[str, str]:
    name = kind.var.lower() or "token"
    if r.random() < 0.5 and not kind.multiline:
        # The whole name=value pair rides percent-encoded inside another URL's query.
        inner = quote(f"{name}={value}", safe="")
        text = f"GET /oauth/callback?next=%2Fsettings%3F{inner}&state={rs(r, HEX, 12)} 302 Location logged by nginx"
        return text, f"{name}={value}"
    enc = value.replace(core, disguise_core(core, "percent", r), 1)
    text = r.choice(INLINE)(kind.var, enc, r)
    return text, value


def credential_samples(r: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for index, kind in enumerate(KINDS):
        plan = ["plain"] * 4 + [DISGUISES[(index * 3 + j) % len(DISGUISES)] for j in range(6)]
        contexts = BLOCK if kind.multiline else INLINE
        for disguise in plan:
            value, core = kind.gen(r)
            if disguise == "placeholder":
                new_core = with_placeholder(core, r)
                value, core = value.replace(core, new_core, 1), new_core
            secret = secret_piece(core)
            if disguise == "base64":
                text, raw = _base64_text(kind, value, r)
            elif disguise == "percent":
                text, raw = _percent_text(kind, value, core, r)
            else:
                shown = value
                if disguise not in ("plain", "placeholder"):
                    shown = value.replace(core, disguise_core(core, disguise, r), 1)
                ctx = r.choice(contexts)
                # Render the undisguised text with the same random draws, to keep the raw value on the side.
                state = r.getstate()
                text = ctx(kind.var, shown, r)
                twin = random.Random()
                twin.setstate(state)
                raw = ctx(kind.var, value, twin)
            out.append((Sample(kind.name, kind.group, text, disguise, secret), raw))
    return out


# Look-alikes: random-looking values that are public or references, often next to words like key, token, id.
Lookalike = Callable[[random.Random], str]


def _sha(r: random.Random, n: int = 40) -> str:
    return rs(r, HEX, n)


def _ulid(r: random.Random) -> str:
    return "01J" + rs(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 23)


LOOKALIKES: dict[str, list[Lookalike]] = {
    "git_commit_sha": [
        lambda r: f"Fixed in commit {_sha(r)} (cherry-picked onto release/2.{r.randint(1, 9)}).",
        lambda r: f"git revert {_sha(r)[:12]} && git push origin main",
        lambda r: f"Bisect result: {_sha(r)} is the first bad commit\nAuthor: Lena <lena@example.org>",
    ],
    "sha256_release_checksum": [
        lambda r: f"kenfold-1.{r.randint(0, 9)}.0-linux-amd64.tar.gz\nsha256: {_sha(r, 64)}",
        lambda r: f"{_sha(r, 64)}  terraform_1.9.{r.randint(0, 8)}_linux_amd64.zip",
        lambda r: f'RUN echo "{_sha(r, 64)}  /tmp/helm.tgz" | sha256sum -c -',
    ],
    "sha512_digest": [
        lambda r: f"SHA512 ({rs(r, string.ascii_lowercase, 6)}.iso) = {_sha(r, 128)}",
        lambda r: f'checksum_sha512 = "{_sha(r, 128)}"',
    ],
    "uuid_request_id": [
        lambda r: f"X-Request-Id: {uuid4(r)}\nHTTP/1.1 502 Bad Gateway",
        lambda r: f"Support ticket: the failing request id was {uuid4(r)}, retried at 10:04.",
        lambda r: f'{{"level":"error","request_id":"{uuid4(r)}","msg":"upstream timeout"}}',
        lambda r: f"Primary key of the orphaned row: {uuid4(r)} (table memories).",
    ],
    "ulid_and_ksuid": [
        lambda r: f"event_id={_ulid(r)} type=order.created",
        lambda r: f"Segment message id (KSUID): {rs(r, ALNUM, 27)}; batch {_ulid(r)}",
    ],
    "stripe_object_ids": [
        lambda r: f"Refunded charge ch_{rs(r, ALNUM, 24)} for customer cus_{rs(r, ALNUM, 14)}.",
        lambda r: f"Idempotency-Key: {uuid4(r)}\nPaymentIntent pi_{rs(r, ALNUM, 24)} status=succeeded",
        lambda r: f"webhook evt_{rs(r, ALNUM, 24)} for connected account acct_{rs(r, ALNUM, 16)}",
    ],
    "stripe_publishable_key": [
        # Stripe docs: publishable keys are meant for client-side code and are not secret.
        lambda r: f'<script>const stripe = Stripe("pk_live_51{rs(r, ALNUM, 97)}");</script>',
        lambda r: f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_test_51{rs(r, ALNUM, 97)}",
    ],
    "slack_ids": [
        lambda r: (
            f"Post alerts to channel C{rs(r, UPPER_ALNUM, 10)} and mention user U{rs(r, UPPER_ALNUM, 10)}."
        ),
        lambda r: (
            f"team_id T{rs(r, UPPER_ALNUM, 10)}, bot_id B{rs(r, UPPER_ALNUM, 10)}, ts {r.randint(10**9, 2 * 10**9)}.{r.randint(100000, 999999)}"
        ),
    ],
    "aws_arn_and_account": [
        lambda r: f"arn:aws:iam::{rs(r, string.digits, 12)}:role/github-actions-deploy",
        lambda r: f"Account ID {rs(r, string.digits, 12)}; KMS key id {uuid4(r)} (alias/prod-secrets).",
        lambda r: (
            f"arn:aws:secretsmanager:eu-west-1:{rs(r, string.digits, 12)}:secret:prod/db-{rs(r, ALNUM, 6)}"
        ),
    ],
    "trace_ids": [
        lambda r: f"traceparent: 00-{_sha(r, 32)}-{_sha(r, 16)}-01",
        lambda r: f"Jaeger trace id {_sha(r, 32)} shows the slow span in auth-service.",
    ],
    "base64_plain_text": [
        lambda r: _b64(
            r.choice(
                [
                    "Hello, this is the weekly report for the infra team.",
                    "user=alice role=viewer",
                    '{"theme":"dark","lang":"de"}',
                    "The quick brown fox jumps over the lazy dog",
                ]
            )
        ),
        lambda r: f"Decoded the cookie: preferences={_b64('sidebar=collapsed;tz=Europe/Berlin')}",
    ],
    "base64_image": [
        lambda r: f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{rs(r, B64, 120)}=" alt="logo">',
        lambda r: f"background: url(data:image/gif;base64,R0lGODlhAQABAIAAAP{rs(r, B64, 40)}==);",
    ],
    "npm_integrity": [
        lambda r: (
            f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{rs(r, B64, 86)}=="\n}}'
        ),
        lambda r: (
            f'<script src="https://cdn.example.com/lib.js" integrity="sha384-{rs(r, B64, 64)}" crossorigin="anonymous"></script>'
        ),
    ],
    "lockfile_hashes": [
        lambda r: f'[[package]]\nname = "serde"\nversion = "1.0.215"\nchecksum = "{_sha(r, 64)}"',
        lambda r: (
            f'files = [\n    {{file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:{_sha(r, 64)}"}},\n]'
        ),
        lambda r: f"golang.org/x/net v0.31.0 h1:{rs(r, B64, 43)}=",
    ],
    "documented_placeholders": [
        # AWS docs use these exact example credentials; Stripe and others show bracketed placeholders.
        lambda r: (
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        ),
        lambda r: 'stripe.api_key = "sk_test_<your_secret_key>"',
        lambda r: "export OPENAI_API_KEY=<your-api-key-here>",
        lambda r: "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  # replace with your token",
        lambda r: "SLACK_BOT_TOKEN=xoxb-your-bot-token",
        lambda r: 'password: "********"',
        lambda r: "DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/DBNAME",
    ],
    "env_references": [
        lambda r: "API_KEY=${API_KEY}\nDB_PASSWORD=${DB_PASSWORD:?missing}",
        lambda r: "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        lambda r: 'token = os.environ["GITHUB_TOKEN"]',
        lambda r: (
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password"
        ),
        lambda r: "with:\n  token: ${{ secrets.NPM_TOKEN }}",
        lambda r: 'api_key = config("STRIPE_SECRET_KEY")  # from django-environ',
        lambda r: "secret_key = data.aws_secretsmanager_secret_version.app.secret_string",
        lambda r: 'const apiKey = process.env.ANTHROPIC_API_KEY ?? "";',
    ],
    "ssh_public_key": [
        lambda r: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rs(r, B64, 43)} deploy@ci",
        lambda r: (
            f"Added to authorized_keys: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{rs(r, B64, 300)} lena@laptop"
        ),
    ],
    "pem_public_key": [
        lambda r: "-----BEGIN PUBLIC KEY-----\n" + pem_body(r, 294) + "\n-----END PUBLIC KEY-----",
        lambda r: (
            "Webhook verification public key:\n-----BEGIN PUBLIC KEY-----\n"
            + pem_body(r, 91)
            + "\n-----END PUBLIC KEY-----"
        ),
    ],
    "key_fingerprints": [
        lambda r: f"The public key fingerprint is SHA256:{rs(r, B64, 43)}.",
        lambda r: f"GPG signing key {rs(r, UPPER_HEX, 40)} (commits are verified).",
        lambda r: f"Host key fingerprint (ED25519) SHA256:{rs(r, B64, 43)} matches the runbook.",
    ],
    "asset_hashes": [
        lambda r: f"static/js/main.{_sha(r, 8)}.chunk.js  {r.randint(10, 300)} kB",
        lambda r: f".css-{rs(r, LOWER_ALNUM, 6)} {{ display: flex; }} /* emotion class hash */",
        lambda r: f"dist/assets/index-{rs(r, URLSAFE, 8)}.js",
    ],
    "youtube_ids": [
        lambda r: f"Talk recording: https://www.youtube.com/watch?v={rs(r, URLSAFE, 11)}",
        lambda r: f"Demo video id {rs(r, URLSAFE, 11)} (unlisted, fine to share).",
    ],
    "docker_digests": [
        lambda r: f"image: ghcr.io/acme/api@sha256:{_sha(r, 64)}",
        lambda r: f"Digest: sha256:{_sha(r, 64)}\nStatus: Downloaded newer image for postgres:17",
    ],
    "nix_store_paths": [
        lambda r: f"/nix/store/{rs(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.7/bin/python",
    ],
    "ipfs_cids": [
        lambda r: f"Pinned at ipfs://bafybei{rs(r, BASE32_LOWER, 52)}",
        lambda r: f"CIDv0 Qm{rs(r, BASE58, 44)}",
    ],
    "prose_about_secrets": [
        lambda r: "Rotate the GitHub token every 90 days and store it in the org secrets, never in the repo.",
        lambda r: (
            "Die API-Schlüssel liegen im Vault unter secret/data/payments; niemals in Tickets kopieren."
        ),
        lambda r: (
            "Reminder: the Stripe secret key starts with sk_live_ — if you see one in a log, revoke it."
        ),
        lambda r: "Token count for the prompt was 12,480 tokens; the key insight is to trim the context.",
        lambda r: "La contraseña de la base de datos se gestiona con SOPS; pide acceso a plataforma.",
        lambda r: "トークンは1Passwordの「Infra」保管庫にあります。チャットに貼らないでください。",
    ],
    "sentry_dsn_public": [
        # Sentry docs (docs.sentry.io/product/sentry-basics/dsn-explainer): "DSNs are safe to keep public".
        lambda r: (
            f"SENTRY_DSN=https://{_sha(r, 32)}@o{r.randint(10**5, 10**6)}.ingest.sentry.io/{r.randint(10**6, 10**7)}"
        ),
    ],
    "posthog_project_key_public": [
        # PostHog docs: the project API key (phc_) is write-only and meant for the frontend.
        lambda r: f"posthog.init('phc_{rs(r, ALNUM, 43)}', {{ api_host: 'https://eu.i.posthog.com' }})",
    ],
    "analytics_ids": [
        lambda r: f"gtag('config', 'G-{rs(r, UPPER_ALNUM, 10)}');",
        lambda r: f"Google Tag Manager container GTM-{rs(r, UPPER_ALNUM, 7)} added to the layout.",
    ],
    "k8s_resource_names": [
        lambda r: (
            f"pod/api-{rs(r, '0123456789bcdfghjklmnpqrstvwxz', 10)}-{rs(r, 'bcdfghjklmnpqrstvwxz2456789', 5)} CrashLoopBackOff"
        ),
        lambda r: f"configmap/app-config-{rs(r, LOWER_ALNUM, 10)} created (kustomize hash suffix)",
    ],
    "azure_resource_ids": [
        lambda r: (
            f"/subscriptions/{uuid4(r)}/resourceGroups/rg-prod/providers/Microsoft.KeyVault/vaults/kv-prod"
        ),
        lambda r: f"Tenant ID: {uuid4(r)}\nClient ID: {uuid4(r)}\n(client secret is in Key Vault)",
    ],
    "idempotency_and_primary_keys": [
        lambda r: f"Idempotency key {uuid4(r)} was reused, so the API returned the first response.",
        lambda r: f"SELECT * FROM orders WHERE id = '{_sha(r, 24)}'; -- Mongo ObjectId, primary key",
        lambda r: f"cache key: user:{r.randint(1, 99999)}:feed:{_sha(r, 16)}",
    ],
}


FRAMES = [
    "docs/setup.md, line {n}:\n{text}",
    "Copied from the onboarding wiki (revision {n}):\n{text}",
    "{text}\n(see ticket DOC-{n})",
    "Review comment on PR #{n}: this is fine as is.\n{text}",
    "Notiz aus dem Pairing, Schritt {n}:\n{text}",
]

# Kinds whose makers are fixed texts: a frame with a random number keeps their samples distinct.
FIXED_TEXT_KINDS = {"base64_plain_text", "documented_placeholders", "env_references", "prose_about_secrets"}


def lookalike_samples(r: random.Random) -> list[Sample]:
    out = []
    for kind, makers in LOOKALIKES.items():
        for i in range(LOOKALIKES_PER_KIND):
            text = makers[i % len(makers)](r)
            if kind in FIXED_TEXT_KINDS:
                text = r.choice(FRAMES).format(n=r.randint(2, 9999), text=text)
            out.append(Sample(kind, "lookalike", text))
    return out


def fourteenth_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with the text before disguising (the same text for look-alikes)."""
    r = random.Random(SEED)
    return credential_samples(r) + [(s, s.text) for s in lookalike_samples(r)]


def fourteenth_part() -> list[Sample]:
    return [sample for sample, _ in fourteenth_part_with_raw()]
