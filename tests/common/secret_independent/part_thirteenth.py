"""Part thirteen of the independent corpus: credentials generated from what the providers document about their
formats (prefix, length, alphabet, file shape), disguised the way careless pastes and deliberate attempts
disguise them, inside memory texts an agent might store; plus look-alikes that sit in the same kind of text
next to words like "key", "token" or "secret" without being secret.

Written without reading the filter's rules. Each generator names its source beside it.
"""

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 13_061_2026
PER_KIND = 10
LOOKALIKES_PER_KIND = 24

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = UPPER + "234567"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class _Gen:
    """Random pieces from one seeded generator, so the whole corpus follows from SEED."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def a(self, n: int) -> str:
        return self.s(ALNUM, n)

    def h(self, n: int) -> str:
        return self.s(HEX, n)

    def d(self, n: int) -> str:
        return self.r.choice("123456789") + self.s(DIGITS, n - 1)

    def uuid(self) -> str:
        x = self.h(32)
        return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-{self.r.choice('89ab')}{x[17:20]}-{x[20:]}"

    def b64bytes(self, n: int) -> str:
        return base64.b64encode(bytes(self.r.randrange(256) for _ in range(n))).decode()

    def b64url_bytes(self, n: int) -> str:
        return base64.urlsafe_b64encode(bytes(self.r.randrange(256) for _ in range(n))).decode().rstrip("=")

    def word(self) -> str:
        return self.r.choice(WORDS)

    def host(self) -> str:
        return self.r.choice(HOSTS)

    def user(self) -> str:
        return self.r.choice(USERS)

    def jwt(self, payload: dict) -> tuple[str, str]:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = (
            base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
        )
        sig = self.b64url_bytes(32)
        return f"{head}.{body}.{sig}", sig

    def pem(self, label: str, nbytes: int) -> tuple[str, str]:
        body = self.b64bytes(nbytes)
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        core = lines[len(lines) // 2]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", core


WORDS = [
    "maple",
    "harbor",
    "violet",
    "copper",
    "lantern",
    "orbit",
    "willow",
    "falcon",
    "cedar",
    "meadow",
    "pepper",
    "summit",
    "glacier",
    "thistle",
    "ember",
    "quartz",
    "saffron",
    "tundra",
    "juniper",
    "nimbus",
]
HOSTS = [
    "db-prod-1.internal",
    "10.0.4.17",
    "pg.eu-central-1.rds.amazonaws.com",
    "mongo-replica-2.svc.cluster.local",
    "orders-db.acme.io",
    "127.0.0.1",
    "staging-sql.corp.local",
    "analytics.db.hetzner.net",
]
USERS = ["app_rw", "svc_orders", "deploy", "postgres", "admin", "reporting", "etl_runner", "billing"]


@dataclass(frozen=True)
class _Kind:
    name: str
    group: str
    # Returns (value as pasted, the core that is disguised and whose middle must not survive).
    gen: Callable[[_Gen], tuple[str, str]]
    var: str
    multiline: bool = False


def _same(f: Callable[[_Gen], str]) -> Callable[[_Gen], tuple[str, str]]:
    def gen(g: _Gen) -> tuple[str, str]:
        v = f(g)
        return v, v

    return gen


def _password(g: _Gen) -> str:
    return f"{g.word().capitalize()}{g.r.choice('!#%*-_.')}{g.word()}{g.d(4)}{g.r.choice('!?$')}"


def _url_cred(
    scheme: str, port: int, path: str, user: str | None = None
) -> Callable[[_Gen], tuple[str, str]]:
    def gen(g: _Gen) -> tuple[str, str]:
        pw = g.a(g.r.randint(16, 28))
        return f"{scheme}://{user if user is not None else g.user()}:{pw}@{g.host()}:{port}{path}", pw

    return gen


def _pem_kind(label: str, nbytes: int) -> Callable[[_Gen], tuple[str, str]]:
    return lambda g: g.pem(label, nbytes)


def _gcp_sa_json(g: _Gen) -> tuple[str, str]:
    pem, core = g.pem("PRIVATE KEY", 1190)
    project = f"{g.word()}-{g.word()}-{g.d(6)}"
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": g.h(40),
        "private_key": pem + "\n",
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": g.d(21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(doc, indent=2), core


def _aws_pair(g: _Gen) -> tuple[str, str]:
    secret = g.s(B64, 40)
    return f"aws_access_key_id = AKIA{g.s(BASE32, 16)}\naws_secret_access_key = {secret}", secret


def _azure_storage(g: _Gen) -> tuple[str, str]:
    key = g.b64bytes(64)
    acct = f"{g.word()}{g.d(3)}"
    return (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        key,
    )


def _azure_sas(g: _Gen) -> tuple[str, str]:
    sig = g.a(43) + "%3D"
    return (
        f"https://{g.word()}store.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2027-01-01T00:00:00Z&st=2026-11-30T00:00:00Z&spr=https&sig={sig}",
        sig,
    )


def _slack_webhook(g: _Gen) -> tuple[str, str]:
    last = g.a(24)
    return (
        f"https://hooks.slack.com/services/T{g.s(UPPER + DIGITS, 10)}/B{g.s(UPPER + DIGITS, 10)}/{last}",
        last,
    )


def _discord_webhook(g: _Gen) -> tuple[str, str]:
    last = g.s(B64URL, 68)
    return f"https://discord.com/api/webhooks/{g.d(19)}/{last}", last


def _teams_webhook(g: _Gen) -> tuple[str, str]:
    part = g.h(32)
    return (
        f"https://{g.word()}.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{part}/{g.uuid()}",
        part,
    )


def _discord_bot(g: _Gen) -> tuple[str, str]:
    uid = base64.b64encode(g.d(18).encode()).decode().rstrip("=")
    last = g.s(B64URL, 38)
    return f"{uid}.{g.s(B64URL, 6)}.{last}", last


def _twilio_key(g: _Gen) -> tuple[str, str]:
    secret = g.a(32)
    return f"SK{g.h(32)}:{secret}", secret


def _docker_auth(g: _Gen) -> tuple[str, str]:
    auth = base64.b64encode(f"{g.user()}:{g.a(22)}".encode()).decode()
    return (
        '{\n  "auths": {\n    "registry.example-corp.io": {\n      "auth": "' + auth + '"\n    }\n  }\n}',
        auth,
    )


def _basic_auth(g: _Gen) -> tuple[str, str]:
    auth = base64.b64encode(f"{g.user()}:{_password(g)}".encode()).decode()
    return f"Authorization: Basic {auth}", auth


def _pgpass(g: _Gen) -> tuple[str, str]:
    pw = _password(g)
    return f"{g.host()}:5432:{g.word()}:{g.user()}:{pw}", pw


def _netrc(g: _Gen) -> tuple[str, str]:
    pw = g.a(40)
    return f"machine git.{g.word()}-corp.com\n  login {g.user()}\n  password {pw}", pw


def _npmrc(g: _Gen) -> tuple[str, str]:
    tok = "npm_" + g.a(36)
    return f"//registry.npmjs.org/:_authToken={tok}", tok


def _pypirc(g: _Gen) -> tuple[str, str]:
    tok = "pypi-AgEIcHlwaS5vcmc" + g.s(B64URL, 140)
    return f"[pypi]\n  username = __token__\n  password = {tok}", tok[20:]


def _maven(g: _Gen) -> tuple[str, str]:
    pw = g.a(32)
    return (
        f"<server>\n  <id>nexus-releases</id>\n  <username>{g.user()}</username>\n  <password>{pw}</password>\n</server>",
        pw,
    )


def _mssql(g: _Gen) -> tuple[str, str]:
    pw = _password(g)
    return (
        f"Server=tcp:{g.word()}.database.windows.net,1433;Initial Catalog=orders;User ID={g.user()};Password={pw};Encrypt=True;",
        pw,
    )


def _jdbc(g: _Gen) -> tuple[str, str]:
    pw = g.a(20)
    return f"jdbc:mysql://{g.host()}:3306/shop?user={g.user()}&password={pw}&useSSL=true", pw


def _kube_sa_jwt(g: _Gen) -> tuple[str, str]:
    tok, sig = g.jwt(
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "sub": "system:serviceaccount:ci:deployer",
        }
    )
    return tok, sig


def _supabase(g: _Gen) -> tuple[str, str]:
    return g.jwt({"iss": "supabase", "ref": g.s(LOWER, 20), "role": "service_role", "iat": 1700000000})


def _kubeconfig_bootstrap(g: _Gen) -> tuple[str, str]:
    tok = f"{g.s(LOWER + DIGITS, 6)}.{g.s(LOWER + DIGITS, 16)}"
    return tok, tok


def _oci_config(g: _Gen) -> tuple[str, str]:
    return g.pem("RSA PRIVATE KEY", 1190)


def _salesforce(g: _Gen) -> tuple[str, str]:
    tail = g.s(ALNUM + "._", 96)
    return f"00D{g.a(12)}!{tail}", tail


def _paypal(g: _Gen) -> tuple[str, str]:
    tail = g.h(32)
    return f"access_token$production${g.s(LOWER + DIGITS, 16)}${tail}", tail


def _astra(g: _Gen) -> tuple[str, str]:
    tail = g.h(64)
    return f"AstraCS:{g.a(24)}:{tail}", tail


def _mercadopago(g: _Gen) -> tuple[str, str]:
    mid = g.h(32)
    return f"APP_USR-{g.d(16)}-{g.d(6)}-{mid}-{g.d(9)}", mid


def _razorpay(g: _Gen) -> tuple[str, str]:
    secret = g.a(24)
    return f"key_id=rzp_live_{g.a(14)}\nkey_secret={secret}", secret


def _alibaba(g: _Gen) -> tuple[str, str]:
    secret = g.a(30)
    return f"AccessKeyId: LTAI{g.a(20)}\nAccessKeySecret: {secret}", secret


def _tencent(g: _Gen) -> tuple[str, str]:
    secret = g.a(32)
    return f"SecretId=AKID{g.a(32)}\nSecretKey={secret}", secret


def _intercom(g: _Gen) -> tuple[str, str]:
    tok = base64.b64encode(f"tok:{g.uuid()}:1:0".encode()).decode().rstrip("=")
    return tok, tok


def _trello(g: _Gen) -> tuple[str, str]:
    tok = "ATTA" + g.h(64) + g.s(UPPER + DIGITS, 8)
    return tok, tok


def _matrix(g: _Gen) -> tuple[str, str]:
    user = base64.b64encode(g.user().encode()).decode().rstrip("=")
    tail = g.a(20)
    return f"syt_{user}_{tail}_{g.a(6)}", tail


def _age(g: _Gen) -> tuple[str, str]:
    tok = "AGE-SECRET-KEY-1" + g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58)
    return tok, tok[16:]


def _dynatrace(g: _Gen) -> tuple[str, str]:
    tail = g.s(UPPER + DIGITS, 64)
    return f"dt0c01.{g.s(UPPER + DIGITS, 24)}.{tail}", tail


def _airtable(g: _Gen) -> tuple[str, str]:
    tail = g.h(64)
    return f"pat{g.a(14)}.{tail}", tail


def _postman(g: _Gen) -> tuple[str, str]:
    tok = f"PMAK-{g.h(24)}-{g.h(34)}"
    return tok, tok


def _grafana_sa(g: _Gen) -> tuple[str, str]:
    tok = f"glsa_{g.a(32)}_{g.h(8)}"
    return tok, tok


def _grafana_cloud(g: _Gen) -> tuple[str, str]:
    # Access policy tokens are "glc_" + base64 of a small JSON naming the org, the token and its secret key.
    doc = {"o": g.d(6), "n": f"{g.word()}-{g.word()}", "k": g.a(24), "m": {"r": "prod-eu-west-2"}}
    tok = "glc_" + base64.b64encode(json.dumps(doc, separators=(",", ":")).encode()).decode()
    return tok, tok[4:]


def _langsmith(g: _Gen) -> tuple[str, str]:
    tok = f"lsv2_pt_{g.h(32)}_{g.h(10)}"
    return tok, tok


def _pinecone(g: _Gen) -> tuple[str, str]:
    tok = f"pcsk_{g.a(6)}_{g.a(63)}"
    return tok, tok


def _clickup(g: _Gen) -> tuple[str, str]:
    tok = f"pk_{g.d(8)}_{g.s(UPPER + DIGITS, 32)}"
    return tok, tok


def _slack_xapp(g: _Gen) -> tuple[str, str]:
    tok = f"xapp-1-A{g.s(UPPER + DIGITS, 10)}-{g.d(13)}-{g.h(64)}"
    return tok, tok


def _asana(g: _Gen) -> tuple[str, str]:
    tail = g.h(32)
    return f"2/{g.d(16)}/{g.d(16)}:{tail}", tail


def _typeform(g: _Gen) -> tuple[str, str]:
    tok = f"tfp_{g.s(B64URL, 44)}_{g.s(B64URL, 14)}"
    return tok, tok


def _sq_oauth(g: _Gen) -> tuple[str, str]:
    tok = "sq0csp-" + g.s(B64URL, 43)
    return tok, tok


def _openssh(g: _Gen) -> tuple[str, str]:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACA" + g.b64bytes(
        250
    )
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    core = lines[2]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(
        lines
    ) + "\n-----END OPENSSH PRIVATE KEY-----", core


def _fly(g: _Gen) -> tuple[str, str]:
    tail = g.b64bytes(120)
    return f"FlyV1 fm2_{tail}", tail[:80]


def _elastic_apikey(g: _Gen) -> tuple[str, str]:
    enc = base64.b64encode(f"{g.s(B64URL, 20)}:{g.s(B64URL, 22)}".encode()).decode()
    return f"ApiKey {enc}", enc


def _onepassword(g: _Gen) -> tuple[str, str]:
    tail = g.b64url_bytes(300)
    return "ops_eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIs" + tail, tail[:120]


def _vault(g: _Gen) -> tuple[str, str]:
    tok = "hvs.CAESI" + g.s(B64URL, 86)
    return tok, tok[4:]


def _yandex(g: _Gen) -> tuple[str, str]:
    tok = "y0_AgAAAA" + g.s(B64URL, 50)
    return tok, tok


def _heroku(g: _Gen) -> tuple[str, str]:
    tok = "HRKU-AA" + g.s(B64URL, 58)
    return tok, tok


def _s(prefix: str, alphabet: str, n: int, suffix: str = "") -> Callable[[_Gen], tuple[str, str]]:
    return _same(lambda g: prefix + g.s(alphabet, n) + suffix)


# fmt: off
KINDS_13: list[_Kind] = [
    # --- cloud ---
    # AWS IAM docs: access key id AKIA + 16 upper base32, secret access key 40 chars of base64 alphabet.
    _Kind("aws_secret_access_key", "cloud", _aws_pair, "AWS_SECRET_ACCESS_KEY"),
    # AWS STS docs: session tokens are long base64 blobs, typically starting FwoGZXIvYXdzE / IQoJb3JpZ2luX2Vj.
    _Kind("aws_session_token", "cloud", _s("IQoJb3JpZ2luX2VjE", B64, 300), "AWS_SESSION_TOKEN"),
    # Google Cloud docs: API keys are 39 chars, "AIza" + 35 of [A-Za-z0-9_-].
    _Kind("gcp_api_key", "cloud", _s("AIza", B64URL, 35), "GOOGLE_API_KEY"),
    # Google Cloud docs: service account key JSON file with type, private_key (PKCS#8 PEM), client_email.
    _Kind("gcp_service_account_json", "cloud", _gcp_sa_json, "GOOGLE_APPLICATION_CREDENTIALS_JSON", True),
    # Google OAuth docs: client secrets issued since 2021 start "GOCSPX-" + 28 chars.
    _Kind("gcp_oauth_client_secret", "cloud", _s("GOCSPX-", B64URL, 28), "GOOGLE_CLIENT_SECRET"),
    # Azure Storage docs: connection string DefaultEndpointsProtocol=...;AccountName=...;AccountKey=<88 base64>.
    _Kind("azure_storage_connection_string", "cloud", _azure_storage, "AZURE_STORAGE_CONNECTION_STRING"),
    # Azure docs "Create a service SAS": sv, ss, srt, sp, se, st, spr and the signature sig=<base64, url-encoded>.
    _Kind("azure_sas_url", "cloud", _azure_sas, "BACKUP_SAS_URL"),
    # Microsoft Entra docs (how-to-add-credentials) publish no grammar for a client secret value, only that it is
    # shown once and must be kept secret; the shape seen in practice is 3 chars, a digit, "Q~", then 31-34 chars.
    _Kind(
        "azure_client_secret",
        "cloud",
        _same(lambda g: g.a(3) + g.s(DIGITS, 1) + "Q~" + g.s(ALNUM + "_~.-", 34)),
        "AZURE_CLIENT_SECRET",
    ),
    # DigitalOcean docs: personal access tokens "dop_v1_" + 64 hex; OAuth tokens "doo_v1_".
    _Kind("digitalocean_pat", "cloud", _s("dop_v1_", HEX, 64), "DIGITALOCEAN_ACCESS_TOKEN"),
    _Kind("digitalocean_oauth", "cloud", _s("doo_v1_", HEX, 64), "DO_OAUTH_TOKEN"),
    # Linode (Akamai) docs: personal access tokens are 64 hex characters.
    _Kind("linode_token", "cloud", _s("", HEX, 64), "LINODE_TOKEN"),
    # Hetzner Cloud docs: API token is 64 alphanumeric characters (HCLOUD_TOKEN).
    _Kind("hetzner_cloud_token", "cloud", _s("", ALNUM, 64), "HCLOUD_TOKEN"),
    # Alibaba Cloud docs: AccessKey ID "LTAI" + 20, AccessKey Secret 30 alphanumeric.
    _Kind("alibaba_access_key_secret", "cloud", _alibaba, "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
    # Tencent Cloud docs: SecretId "AKID" + 32, SecretKey 32 alphanumeric.
    _Kind("tencent_secret_key", "cloud", _tencent, "TENCENTCLOUD_SECRET_KEY"),
    # IBM Cloud docs: API keys are 44 chars of [A-Za-z0-9_-].
    _Kind("ibm_cloud_api_key", "cloud", _s("", B64URL, 44), "IBMCLOUD_API_KEY"),
    # Oracle OCI docs: ~/.oci/oci_api_key.pem, an RSA private key in PEM.
    _Kind("oci_api_private_key", "cloud", _oci_config, "OCI_KEY_FILE", True),
    # Cloudflare docs: API tokens 40 chars [A-Za-z0-9_-]; Global API Key 37 lowercase hex.
    _Kind("cloudflare_api_token", "cloud", _s("", B64URL, 40), "CLOUDFLARE_API_TOKEN"),
    _Kind("cloudflare_global_api_key", "cloud", _s("", HEX, 37), "CF_API_KEY"),
    # Scaleway docs: secret key is a UUID (SCW_SECRET_KEY), access key "SCW" + 17 upper.
    _Kind("scaleway_secret_key", "cloud", _same(lambda g: g.uuid()), "SCW_SECRET_KEY"),
    # Vultr docs: API key 36 uppercase alphanumeric.
    _Kind("vultr_api_key", "cloud", _s("", UPPER + DIGITS, 36), "VULTR_API_KEY"),
    # Yandex ID docs: OAuth tokens "y0_" + base64url (e.g. y0_AgAAAA...).
    _Kind("yandex_oauth_token", "cloud", _yandex, "YC_TOKEN"),
    # Heroku: API keys now prefixed "HRKU-" (GitLab MR 248117 "Add Heroku API key validity check" cites it).
    _Kind("heroku_api_key", "cloud", _heroku, "HEROKU_API_KEY"),
    # Netlify docs: personal access tokens "nfp_" + 36 alphanumeric.
    _Kind("netlify_pat", "cloud", _s("nfp_", ALNUM, 36), "NETLIFY_AUTH_TOKEN"),
    # Fly.io docs: `fly tokens create` prints "FlyV1 fm2_..." macaroon tokens.
    _Kind("flyio_token", "cloud", _fly, "FLY_API_TOKEN"),
    # Supabase docs: service_role key is a JWT with "role":"service_role", must never reach the browser.
    _Kind("supabase_service_role_jwt", "cloud", _supabase, "SUPABASE_SERVICE_ROLE_KEY"),
    # Kubernetes docs "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}.
    _Kind("k8s_bootstrap_token", "cloud", _kubeconfig_bootstrap, "BOOTSTRAP_TOKEN"),
    # Kubernetes docs: service account tokens are JWTs signed by the API server.
    _Kind("k8s_service_account_jwt", "cloud", _kube_sa_jwt, "KUBE_TOKEN"),
    # --- ci ---
    # GitHub docs "About authentication": ghp_, gho_, ghu_, ghs_, ghr_ + 36 alphanumeric; fine-grained github_pat_.
    _Kind("github_pat_classic", "ci", _s("ghp_", ALNUM, 36), "GITHUB_TOKEN"),
    _Kind("github_pat_fine_grained", "ci", _same(lambda g: f"github_pat_{g.a(22)}_{g.a(59)}"), "GH_TOKEN"),
    _Kind("github_oauth_token", "ci", _s("gho_", ALNUM, 36), "GITHUB_OAUTH_TOKEN"),
    _Kind("github_app_installation_token", "ci", _s("ghs_", ALNUM, 36), "GITHUB_APP_TOKEN"),
    _Kind("github_refresh_token", "ci", _s("ghr_", ALNUM, 76), "GITHUB_REFRESH_TOKEN"),
    # GitLab docs "Token overview": glpat- (PAT), glrt- (runner auth), glptt- (pipeline trigger), gldt- (deploy).
    _Kind("gitlab_pat", "ci", _s("glpat-", B64URL, 20), "GITLAB_TOKEN"),
    _Kind("gitlab_runner_token", "ci", _s("glrt-", B64URL, 20), "RUNNER_TOKEN"),
    _Kind("gitlab_trigger_token", "ci", _s("glptt-", HEX, 40), "TRIGGER_TOKEN"),
    _Kind("gitlab_deploy_token", "ci", _s("gldt-", B64URL, 20), "DEPLOY_TOKEN"),
    # CircleCI changelog "New format for API Access Tokens" (2023-07-06): CCIPAT_<base58 UUID>_<40 hex>,
    # project tokens CCIPRJ_.
    _Kind("circleci_pat", "ci", _same(lambda g: f"CCIPAT_{g.s(BASE58, 22)}_{g.h(40)}"), "CIRCLE_TOKEN"),
    _Kind("circleci_project_token", "ci", _same(lambda g: f"CCIPRJ_{g.s(BASE58, 22)}_{g.h(40)}"), "CIRCLECI_PROJECT_TOKEN"),
    # Buildkite docs: API access tokens "bkua_" + 40 hex; agent tokens are long random strings.
    _Kind("buildkite_api_token", "ci", _s("bkua_", HEX, 40), "BUILDKITE_API_TOKEN"),
    # Atlassian docs: Bitbucket app passwords start "ATBB".
    _Kind("bitbucket_app_password", "ci", _s("ATBB", ALNUM, 32), "BITBUCKET_APP_PASSWORD"),
    # Jenkins docs: API tokens are 34 hex chars ("11" + 32 hex), used as user:token.
    _Kind("jenkins_api_token", "ci", _s("11", HEX, 32), "JENKINS_API_TOKEN"),
    # Azure DevOps docs: PATs were 52 chars of lowercase base32.
    _Kind("azure_devops_pat", "ci", _s("", "abcdefghijklmnopqrstuvwxyz234567", 52), "AZURE_DEVOPS_EXT_PAT"),
    # HashiCorp Terraform Cloud docs: tokens "<14>.atlasv1.<67>".
    _Kind("terraform_cloud_token", "ci", _same(lambda g: f"{g.a(14)}.atlasv1.{g.a(67)}"), "TFE_TOKEN"),
    # Pulumi docs: access tokens "pul-" + 40 hex.
    _Kind("pulumi_access_token", "ci", _s("pul-", HEX, 40), "PULUMI_ACCESS_TOKEN"),
    # Doppler docs: service tokens "dp.st.<config>." + 40; personal "dp.pt." + 43.
    _Kind("doppler_service_token", "ci", _same(lambda g: f"dp.st.prd.{g.a(40)}"), "DOPPLER_TOKEN"),
    # HashiCorp Vault docs: service tokens "hvs." + base64url, batch "hvb.".
    _Kind("vault_service_token", "ci", _vault, "VAULT_TOKEN"),
    # SonarQube docs: user tokens "squ_" + 40 hex, project analysis tokens "sqp_".
    _Kind("sonarqube_user_token", "ci", _s("squ_", HEX, 40), "SONAR_TOKEN"),
    # Drone docs: personal token 32 alphanumeric (DRONE_TOKEN).
    _Kind("drone_token", "ci", _s("", ALNUM, 32), "DRONE_TOKEN"),
    # --- chat ---
    # Slack docs "Token types": xoxb- bot, xoxp- user, xapp- app-level; incoming webhooks hooks.slack.com/services.
    _Kind("slack_bot_token", "chat", _same(lambda g: f"xoxb-{g.d(12)}-{g.d(13)}-{g.a(24)}"), "SLACK_BOT_TOKEN"),
    _Kind("slack_user_token", "chat", _same(lambda g: f"xoxp-{g.d(12)}-{g.d(12)}-{g.d(13)}-{g.h(32)}"), "SLACK_USER_TOKEN"),
    _Kind("slack_app_token", "chat", _slack_xapp, "SLACK_APP_TOKEN"),
    _Kind("slack_webhook_url", "chat", _slack_webhook, "SLACK_WEBHOOK_URL"),
    # Discord developer docs: bot token = base64(user id).timestamp.hmac; webhooks /api/webhooks/<id>/<token>.
    _Kind("discord_bot_token", "chat", _discord_bot, "DISCORD_TOKEN"),
    _Kind("discord_webhook_url", "chat", _discord_webhook, "DISCORD_WEBHOOK"),
    # Telegram Bot API docs: "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11", digits ":" 35 chars starting AA.
    _Kind("telegram_bot_token", "chat", _same(lambda g: f"{g.d(10)}:AA{g.s(B64URL, 33)}"), "TELEGRAM_BOT_TOKEN"),
    # Microsoft Teams docs: incoming webhook URLs on *.webhook.office.com/webhookb2/...
    _Kind("teams_webhook_url", "chat", _teams_webhook, "TEAMS_WEBHOOK_URL"),
    # Mattermost docs: personal access tokens 26 lowercase alphanumeric.
    _Kind("mattermost_token", "chat", _s("", LOWER + DIGITS, 26), "MM_TOKEN"),
    # Twilio docs: Auth Token 32 hex; API Key SID "SK" + 32 hex with a separate secret.
    _Kind("twilio_auth_token", "chat", _s("", HEX, 32), "TWILIO_AUTH_TOKEN"),
    _Kind("twilio_api_key_secret", "chat", _twilio_key, "TWILIO_API_SECRET"),
    # Vonage docs: API secret 16 alphanumeric next to an 8-hex API key.
    _Kind("vonage_api_secret", "chat", _s("", ALNUM, 16), "VONAGE_API_SECRET"),
    # LINE Messaging API docs: long-lived channel access tokens ~172 chars ending "=".
    _Kind("line_channel_access_token", "chat", _s("", B64, 171, "="), "LINE_CHANNEL_ACCESS_TOKEN"),
    # Matrix Synapse: access tokens "syt_<base64 user>_<random>_<crc>".
    _Kind("matrix_access_token", "chat", _matrix, "MATRIX_ACCESS_TOKEN"),
    # Rocket.Chat docs: personal access tokens 43 chars with X-Auth-Token header.
    _Kind("rocketchat_pat", "chat", _s("", B64URL, 43), "ROCKETCHAT_AUTH_TOKEN"),
    # Kakao developers docs: REST API key 32 hex, server-side only.
    _Kind("kakao_rest_api_key", "chat", _s("", HEX, 32), "KAKAO_REST_API_KEY"),
    # Zoom docs: Server-to-Server OAuth client secret, 32 alphanumeric.
    _Kind("zoom_client_secret", "chat", _s("", ALNUM, 32), "ZOOM_CLIENT_SECRET"),
    # --- payment ---
    # Stripe docs "API keys": sk_live_ secret, rk_live_ restricted, whsec_ webhook signing secret.
    _Kind("stripe_secret_key", "payment", _s("sk_live_", ALNUM, 99), "STRIPE_SECRET_KEY"),
    _Kind("stripe_restricted_key", "payment", _s("rk_live_", ALNUM, 99), "STRIPE_RESTRICTED_KEY"),
    _Kind("stripe_webhook_secret", "payment", _s("whsec_", ALNUM, 32), "STRIPE_WEBHOOK_SECRET"),
    # Braintree/PayPal: access tokens "access_token$production$<merchant>$<32 hex>".
    _Kind("paypal_braintree_access_token", "payment", _paypal, "BRAINTREE_ACCESS_TOKEN"),
    # Square docs: production access tokens "EAAA" + 60; OAuth application secret "sq0csp-".
    _Kind("square_access_token", "payment", _s("EAAA", B64URL, 60), "SQUARE_ACCESS_TOKEN"),
    _Kind("square_oauth_secret", "payment", _sq_oauth, "SQUARE_APP_SECRET"),
    # Adyen docs: API keys start "AQE" and are long base64-like strings.
    _Kind("adyen_api_key", "payment", _same(lambda g: "AQE" + g.s(B64, 100)), "ADYEN_API_KEY"),
    # Razorpay docs (India): key id rzp_live_ + 14, key secret 24 alphanumeric.
    _Kind("razorpay_key_secret", "payment", _razorpay, "RAZORPAY_KEY_SECRET"),
    # Paystack docs (Nigeria): secret keys sk_live_ + 40 hex.
    _Kind("paystack_secret_key", "payment", _s("sk_live_", HEX, 40), "PAYSTACK_SECRET_KEY"),
    # Flutterwave docs: secret keys "FLWSECK-" + 32 hex + "-X".
    _Kind("flutterwave_secret_key", "payment", _s("FLWSECK-", HEX, 32, "-X"), "FLW_SECRET_KEY"),
    # Mercado Pago docs (LatAm): access tokens "APP_USR-<digits>-<digits>-<32 hex>-<digits>".
    _Kind("mercadopago_access_token", "payment", _mercadopago, "MP_ACCESS_TOKEN"),
    # Mollie docs (EU): API keys "live_" + 30 alphanumeric.
    _Kind("mollie_api_key", "payment", _s("live_", ALNUM, 30), "MOLLIE_API_KEY"),
    # Shopify docs: admin API access tokens "shpat_" + 32 hex, app shared secret "shpss_".
    _Kind("shopify_admin_token", "payment", _s("shpat_", HEX, 32), "SHOPIFY_ACCESS_TOKEN"),
    _Kind("shopify_shared_secret", "payment", _s("shpss_", HEX, 32), "SHOPIFY_API_SECRET"),
    # Plaid docs: secret 30 hex per environment.
    _Kind("plaid_secret", "payment", _s("", HEX, 30), "PLAID_SECRET"),
    # Midtrans docs (Indonesia): server key "Mid-server-" + 24.
    _Kind("midtrans_server_key", "payment", _s("Mid-server-", B64URL, 24), "MIDTRANS_SERVER_KEY"),
    # Xendit docs (SE Asia): secret keys "xnd_production_" + 60.
    _Kind("xendit_secret_key", "payment", _s("xnd_production_", ALNUM, 60), "XENDIT_SECRET_KEY"),
    # GoCardless docs (UK): access tokens "live_" + 40 [A-Za-z0-9_-].
    _Kind("gocardless_access_token", "payment", _s("live_", B64URL, 40), "GOCARDLESS_ACCESS_TOKEN"),
    # Authorize.net docs: transaction key 16 alphanumeric.
    _Kind("authorizenet_transaction_key", "payment", _s("", ALNUM, 16), "AUTHNET_TRANSACTION_KEY"),
    # --- database ---
    # PostgreSQL docs (libpq URI): postgresql://user:password@host:port/dbname.
    _Kind("postgres_url", "database", _url_cred("postgresql", 5432, "/orders?sslmode=require"), "DATABASE_URL"),
    # MySQL Connector docs: mysql://user:password@host:3306/db.
    _Kind("mysql_url", "database", _url_cred("mysql", 3306, "/shop"), "MYSQL_URL"),
    # MongoDB docs: mongodb+srv://user:password@cluster/... connection strings.
    _Kind("mongodb_srv_url", "database", _url_cred("mongodb+srv", 27017, "/app?retryWrites=true&w=majority"), "MONGODB_URI"),
    # Redis docs: redis://[:password@]host:port.
    _Kind("redis_url", "database", _url_cred("rediss", 6380, "/0", user=""), "REDIS_URL"),
    # Neo4j docs: neo4j+s://user:password@host:7687.
    _Kind("neo4j_url", "database", _url_cred("neo4j+s", 7687, "", user="neo4j"), "NEO4J_URI"),
    # AMQP (RabbitMQ docs): amqps://user:pass@host:5671/vhost.
    _Kind("amqp_url", "database", _url_cred("amqps", 5671, "/prod"), "CELERY_BROKER_URL"),
    # PostgreSQL docs: ~/.pgpass lines hostname:port:database:username:password.
    _Kind("pgpass_line", "database", _pgpass, "PGPASSFILE"),
    # Microsoft docs: SQL Server ADO.NET connection string with Password=.
    _Kind("mssql_connection_string", "database", _mssql, "ConnectionStrings__Default"),
    # MySQL Connector/J docs: jdbc:mysql://host/db?user=..&password=..
    _Kind("jdbc_password_url", "database", _jdbc, "SPRING_DATASOURCE_URL"),
    # PlanetScale docs: passwords "pscale_pw_" + 43, service tokens "pscale_tkn_".
    _Kind("planetscale_password", "database", _s("pscale_pw_", B64URL, 43), "PLANETSCALE_PASSWORD"),
    # DataStax Astra docs: application tokens "AstraCS:<24>:<64 hex>".
    _Kind("astra_db_token", "database", _astra, "ASTRA_DB_APPLICATION_TOKEN"),
    # InfluxDB docs: API tokens 86 base64 chars ending "==".
    _Kind("influxdb_token", "database", _s("", B64URL, 86, "=="), "INFLUX_TOKEN"),
    # Generic: a database password under a secret name.
    _Kind("db_password_assignment", "database", _same(_password), "DB_PASSWORD"),
    # --- registry ---
    # npm docs: granular/automation tokens "npm_" + 36; .npmrc //registry.npmjs.org/:_authToken=.
    _Kind("npm_token", "registry", _s("npm_", ALNUM, 36), "NPM_TOKEN"),
    _Kind("npmrc_auth_line", "registry", _npmrc, "NPMRC"),
    # PyPI docs: API tokens are macaroons "pypi-AgEIcHlwaS5vcmc..."; .pypirc username __token__.
    _Kind("pypi_token", "registry", _same(lambda g: "pypi-AgEIcHlwaS5vcmc" + g.s(B64URL, 150)), "PYPI_API_TOKEN"),
    _Kind("pypirc_file", "registry", _pypirc, "PYPIRC", True),
    # Docker docs: Docker Hub PATs "dckr_pat_" + 27; ~/.docker/config.json "auth": base64(user:password).
    _Kind("dockerhub_pat", "registry", _s("dckr_pat_", B64URL, 27), "DOCKERHUB_TOKEN"),
    _Kind("docker_config_auth", "registry", _docker_auth, "DOCKER_CONFIG_JSON", True),
    # RubyGems docs: API keys "rubygems_" + 48 hex.
    _Kind("rubygems_api_key", "registry", _s("rubygems_", HEX, 48), "GEM_HOST_API_KEY"),
    # nuget.org API keys: "oy2" + 43 lowercase base32 (docs: "keep your API key a secret ... like a password").
    _Kind("nuget_api_key", "registry", _s("oy2", LOWER + DIGITS, 43), "NUGET_API_KEY"),
    # crates.io: API tokens "cio" + 32 alphanumeric.
    _Kind("crates_io_token", "registry", _s("cio", ALNUM, 32), "CARGO_REGISTRY_TOKEN"),
    # JFrog docs: Artifactory API keys "AKCp" + 69; reference tokens "cmVmdGtu" (base64 of "reftkn").
    _Kind("artifactory_api_key", "registry", _s("AKCp", ALNUM, 69), "ARTIFACTORY_API_KEY"),
    _Kind("artifactory_reference_token", "registry", _s("cmVmdGtuOjAxOj", ALNUM, 50), "JFROG_ACCESS_TOKEN"),
    # Cloudsmith docs: API keys 40 hex.
    _Kind("cloudsmith_api_key", "registry", _s("", HEX, 40), "CLOUDSMITH_API_KEY"),
    # .netrc (curl/git docs): machine/login/password.
    _Kind("netrc_password", "registry", _netrc, "NETRC", True),
    # Maven docs: settings.xml <server><password>.
    _Kind("maven_settings_password", "registry", _maven, "MAVEN_SETTINGS", True),
    # --- observability ---
    # Datadog docs: API key 32 hex (DD_API_KEY), application key 40 hex (DD_APP_KEY).
    _Kind("datadog_api_key", "observability", _s("", HEX, 32), "DD_API_KEY"),
    _Kind("datadog_app_key", "observability", _s("", HEX, 40), "DD_APP_KEY"),
    # New Relic docs: user keys "NRAK-" + 27 upper alnum; license keys 40 chars ending "NRAL".
    _Kind("newrelic_user_key", "observability", _s("NRAK-", UPPER + DIGITS, 27), "NEW_RELIC_API_KEY"),
    _Kind("newrelic_license_key", "observability", _s("", HEX, 36, "NRAL"), "NEW_RELIC_LICENSE_KEY"),
    # Sentry docs: user auth tokens "sntryu_" + 64 hex.
    _Kind("sentry_user_token", "observability", _s("sntryu_", HEX, 64), "SENTRY_AUTH_TOKEN"),
    # Grafana docs: service account tokens "glsa_" + 32 + "_" + 8 hex; Grafana Cloud "glc_" + base64.
    _Kind("grafana_sa_token", "observability", _grafana_sa, "GRAFANA_TOKEN"),
    _Kind("grafana_cloud_token", "observability", _grafana_cloud, "GRAFANA_CLOUD_API_KEY"),
    # Honeycomb docs: ingest keys "hcaik_" + 58.
    _Kind("honeycomb_ingest_key", "observability", _s("hcaik_", LOWER + DIGITS, 58), "HONEYCOMB_API_KEY"),
    # Splunk docs: HEC tokens are GUIDs, sent as "Authorization: Splunk <token>".
    _Kind("splunk_hec_token", "observability", _same(lambda g: g.uuid()), "SPLUNK_HEC_TOKEN"),
    # PagerDuty docs: REST API keys 20 chars.
    _Kind("pagerduty_api_key", "observability", _s("u+", B64URL, 18), "PAGERDUTY_TOKEN"),
    # Dynatrace docs: tokens "dt0c01." + 24 + "." + 64.
    _Kind("dynatrace_token", "observability", _dynatrace, "DT_API_TOKEN"),
    # Elastic docs: API keys sent as "ApiKey base64(id:api_key)".
    _Kind("elastic_api_key", "observability", _elastic_apikey, "ELASTIC_API_KEY"),
    # Axiom docs: API tokens "xaat-" + UUID.
    _Kind("axiom_token", "observability", _same(lambda g: "xaat-" + g.uuid()), "AXIOM_TOKEN"),
    # PostHog docs: personal API keys "phx_" + 43 (project keys phc_ are public, see look-alikes).
    _Kind("posthog_personal_key", "observability", _s("phx_", ALNUM, 43), "POSTHOG_PERSONAL_API_KEY"),
    # Rollbar docs: access tokens 32 hex (server-side post_server_item).
    _Kind("rollbar_server_token", "observability", _s("", HEX, 32), "ROLLBAR_ACCESS_TOKEN"),
    # Opsgenie docs: API keys are GUIDs ("Authorization: GenieKey <key>").
    _Kind("opsgenie_api_key", "observability", _same(lambda g: g.uuid()), "OPSGENIE_API_KEY"),
    # --- ai ---
    # OpenAI docs: keys "sk-" ; project keys "sk-proj-" + long base64url with "T3BlbkFJ" inside.
    _Kind("openai_project_key", "ai", _same(lambda g: f"sk-proj-{g.s(B64URL, 74)}T3BlbkFJ{g.s(B64URL, 74)}"), "OPENAI_API_KEY"),
    _Kind("openai_legacy_key", "ai", _same(lambda g: f"sk-{g.a(20)}T3BlbkFJ{g.a(20)}"), "OPENAI_KEY"),
    # Anthropic docs: API keys "sk-ant-api03-" + 93 + "AA".
    _Kind("anthropic_api_key", "ai", _s("sk-ant-api03-", B64URL, 93, "AA"), "ANTHROPIC_API_KEY"),
    # Hugging Face docs: user access tokens "hf_" + 34 letters.
    _Kind("huggingface_token", "ai", _s("hf_", UPPER + LOWER, 34), "HF_TOKEN"),
    # Cohere docs: API keys 40 alphanumeric (CO_API_KEY).
    _Kind("cohere_api_key", "ai", _s("", ALNUM, 40), "CO_API_KEY"),
    # Replicate docs: API tokens "r8_" + 37.
    _Kind("replicate_token", "ai", _s("r8_", ALNUM, 37), "REPLICATE_API_TOKEN"),
    # Groq docs: API keys "gsk_" + 52.
    _Kind("groq_api_key", "ai", _s("gsk_", ALNUM, 52), "GROQ_API_KEY"),
    # Mistral docs: API keys 32 alphanumeric.
    _Kind("mistral_api_key", "ai", _s("", ALNUM, 32), "MISTRAL_API_KEY"),
    # Perplexity docs: API keys "pplx-" + 48.
    _Kind("perplexity_api_key", "ai", _s("pplx-", ALNUM, 48), "PERPLEXITY_API_KEY"),
    # Together AI docs: API keys 64 hex.
    _Kind("together_api_key", "ai", _s("", HEX, 64), "TOGETHER_API_KEY"),
    # xAI docs: API keys "xai-" + 80.
    _Kind("xai_api_key", "ai", _s("xai-", ALNUM, 80), "XAI_API_KEY"),
    # OpenRouter docs: keys "sk-or-v1-" + 64 hex.
    _Kind("openrouter_key", "ai", _s("sk-or-v1-", HEX, 64), "OPENROUTER_API_KEY"),
    # LangSmith docs: personal tokens "lsv2_pt_" + 32 hex + "_" + 10 hex.
    _Kind("langsmith_key", "ai", _langsmith, "LANGCHAIN_API_KEY"),
    # Pinecone console keys "pcsk_" + id + "_" + secret; the Admin API schema APIKeyWithSecret documents newer
    # keys as "pckey_<public-label>_<unique-key>", the whole string being the secret.
    _Kind("pinecone_api_key", "ai", _pinecone, "PINECONE_API_KEY"),
    _Kind("pinecone_admin_created_key", "ai", _same(lambda g: f"pckey_{g.word()}{g.d(3)}_{g.a(64)}"), "PINECONE_KEY"),
    # Weights & Biases docs: API keys 40 hex (WANDB_API_KEY).
    _Kind("wandb_api_key", "ai", _s("", HEX, 40), "WANDB_API_KEY"),
    # ElevenLabs docs: API keys "sk_" + 48 hex.
    _Kind("elevenlabs_api_key", "ai", _s("sk_", HEX, 48), "ELEVENLABS_API_KEY"),
    # Voyage AI docs: API keys "pa-" + 43.
    _Kind("voyage_api_key", "ai", _s("pa-", B64URL, 43), "VOYAGE_API_KEY"),
    # Azure OpenAI docs: resource keys 32 hex sent as "api-key" header.
    _Kind("azure_openai_key", "ai", _s("", HEX, 32), "AZURE_OPENAI_API_KEY"),
    # DeepSeek docs: keys "sk-" + 32 hex.
    _Kind("deepseek_api_key", "ai", _s("sk-", HEX, 32), "DEEPSEEK_API_KEY"),
    # --- saas ---
    # SendGrid docs: "SG." + 22 + "." + 43.
    _Kind("sendgrid_api_key", "saas", _same(lambda g: f"SG.{g.s(B64URL, 22)}.{g.s(B64URL, 43)}"), "SENDGRID_API_KEY"),
    # Mailgun docs: private API keys "key-" + 32 hex (older), or 32 hex + "-" + 8 hex + "-" + 8 hex.
    _Kind("mailgun_api_key", "saas", _s("key-", HEX, 32), "MAILGUN_API_KEY"),
    # Mailchimp docs: API keys 32 hex + "-us" + datacenter.
    _Kind("mailchimp_api_key", "saas", _same(lambda g: f"{g.h(32)}-us{g.r.randint(1, 21)}"), "MAILCHIMP_API_KEY"),
    # Postmark docs: server tokens are GUIDs (X-Postmark-Server-Token).
    _Kind("postmark_server_token", "saas", _same(lambda g: g.uuid()), "POSTMARK_SERVER_TOKEN"),
    # Notion docs: internal integration secrets "secret_" + 43, newer "ntn_" + 46.
    _Kind("notion_integration_secret", "saas", _s("ntn_", ALNUM, 46), "NOTION_TOKEN"),
    # Airtable docs: personal access tokens "pat" + 14 + "." + 64 hex.
    _Kind("airtable_pat", "saas", _airtable, "AIRTABLE_TOKEN"),
    # Linear docs: personal API keys "lin_api_" + 40.
    _Kind("linear_api_key", "saas", _s("lin_api_", ALNUM, 40), "LINEAR_API_KEY"),
    # Figma docs: personal access tokens "figd_" + 40.
    _Kind("figma_pat", "saas", _s("figd_", B64URL, 40), "FIGMA_TOKEN"),
    # HubSpot docs: private app tokens "pat-na1-" + UUID.
    _Kind("hubspot_private_app_token", "saas", _same(lambda g: f"pat-{g.r.choice(['na1', 'eu1'])}-{g.uuid()}"), "HUBSPOT_ACCESS_TOKEN"),
    # Asana docs: personal access tokens "2/<user gid>/<app gid>:<32 hex>".
    _Kind("asana_pat", "saas", _asana, "ASANA_PAT"),
    # Okta docs: API tokens "00" + 40, sent as "SSWS <token>".
    _Kind("okta_api_token", "saas", _s("00", B64URL, 40), "OKTA_API_TOKEN"),
    # Auth0 docs: client secrets 64 chars [A-Za-z0-9_-].
    _Kind("auth0_client_secret", "saas", _s("", B64URL, 64), "AUTH0_CLIENT_SECRET"),
    # Contentful docs: CMA personal tokens "CFPAT-" + 43.
    _Kind("contentful_pat", "saas", _s("CFPAT-", B64URL, 43), "CONTENTFUL_MANAGEMENT_TOKEN"),
    # Dropbox docs: short-lived access tokens "sl." + ~135.
    _Kind("dropbox_access_token", "saas", _s("sl.", B64URL, 135), "DROPBOX_ACCESS_TOKEN"),
    # Intercom docs: access tokens are base64 of "tok:<uuid>:1:0" ("dG9rOj...").
    _Kind("intercom_access_token", "saas", _intercom, "INTERCOM_ACCESS_TOKEN"),
    # Typeform docs: personal tokens "tfp_" + ...
    _Kind("typeform_pat", "saas", _typeform, "TYPEFORM_TOKEN"),
    # Salesforce docs: session ids / access tokens "00D<org id>!<...>".
    _Kind("salesforce_access_token", "saas", _salesforce, "SF_ACCESS_TOKEN"),
    # ClickUp docs: personal tokens "pk_<user id>_<32 upper alnum>".
    _Kind("clickup_token", "saas", _clickup, "CLICKUP_API_TOKEN"),
    # Trello docs: user tokens "ATTA" + 64 hex + 8.
    _Kind("trello_token", "saas", _trello, "TRELLO_TOKEN"),
    # Postman docs: API keys "PMAK-" + 24 hex + "-" + 34 hex.
    _Kind("postman_api_key", "saas", _postman, "POSTMAN_API_KEY"),
    # Algolia docs: Admin API key 32 hex must stay server-side.
    _Kind("algolia_admin_key", "saas", _s("", HEX, 32), "ALGOLIA_ADMIN_API_KEY"),
    # Mapbox docs: secret tokens "sk.eyJ1..." (public ones "pk." are look-alikes).
    _Kind("mapbox_secret_token", "saas", _same(lambda g: f"sk.eyJ1Ijoi{g.s(B64URL, 30)}In0.{g.s(B64URL, 22)}"), "MAPBOX_SECRET_TOKEN"),
    # 1Password docs: service account tokens "ops_eyJ...".
    _Kind("onepassword_sa_token", "saas", _onepassword, "OP_SERVICE_ACCOUNT_TOKEN"),
    # age docs: identities "AGE-SECRET-KEY-1" + 58 bech32 upper.
    _Kind("age_secret_key", "saas", _age, "SOPS_AGE_KEY"),
    # OpenSSH PROTOCOL.key: "-----BEGIN OPENSSH PRIVATE KEY-----" base64 of "openssh-key-v1".
    _Kind("openssh_private_key", "saas", _openssh, "SSH_PRIVATE_KEY", True),
    # RFC 7468 / PKCS#8 and SEC1 private keys in PEM.
    _Kind("pkcs8_private_key", "saas", _pem_kind("PRIVATE KEY", 1190), "TLS_KEY", True),
    _Kind("ec_private_key", "saas", _pem_kind("EC PRIVATE KEY", 121), "JWT_SIGNING_KEY", True),
    # RFC 7617: Authorization: Basic base64(user:password).
    _Kind("basic_auth_header", "saas", _basic_auth, "AUTH_HEADER"),
    # Django docs: SECRET_KEY, 50 random chars from get_random_secret_key().
    _Kind("django_secret_key", "saas", _s("", LOWER + DIGITS + "!@#$%^&*(-_=+)", 50), "DJANGO_SECRET_KEY"),
    # Generic vendor tokens under a secret-looking name (issue 37: SOMEVENDOR_AUTH_TOKEN=<32 hex>).
    _Kind("vendor_auth_token_hex", "saas", _s("", HEX, 32), "ACMEPAY_AUTH_TOKEN"),
    _Kind("generic_api_key", "saas", _s("", ALNUM, 40), "api_key"),
    _Kind("generic_password_words", "saas", _same(_password), "password"),
]
# fmt: on


# --- where agents paste them ---------------------------------------------------------------------------------
# A context takes (generator, variable name, value) and returns the memory text; every one keeps the value
# verbatim so that the disguise can then act on it.
Context = Callable[[_Gen, str, str], str]

_LINE_CONTEXTS: list[Context] = [
    lambda g, n, v: f"# .env.production (copied from the old box)\n{n}={v}\nLOG_LEVEL=info",
    lambda g, n, v: f'$ export {n}="{v}"\n$ ./scripts/deploy.sh --env prod\ndeploy: ok (41s)',
    lambda g, n, v: f"app:\n  name: {g.word()}-api\n  {n.lower()}: {v}\n  timeout_s: 30",
    lambda g, n, v: json.dumps({"service": f"{g.word()}-worker", n.lower(): v, "retries": 3}, indent=2),
    lambda g, n, v: f'[{g.word()}]\n{n.lower()} = "{v}"\nregion = "eu-west-1"',
    lambda g, n, v: f"[default]\nendpoint=https://api.{g.word()}.io\n{n.lower()}={v}",
    lambda g, n, v: f"docker run -d --name {g.word()} -e {n}={v} -p 8080:8080 ghcr.io/acme/{g.word()}:1.8",
    lambda g, n, v: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {g.word()}-creds\ntype: Opaque\n"
        f'stringData:\n  {n}: "{v}"'
    ),
    lambda g, n, v: (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {n}: {v}  # TODO move to secrets"
    ),
    lambda g, n, v: (
        f">>> import os\n>>> os.environ['{n}'] = '{v}'\n>>> client = Client()\n>>> client.ping()\nTrue"
    ),
    lambda g, n, v: (
        f"const config = {{\n  {n.lower()}: '{v}',\n  baseUrl: 'https://api.{g.word()}.com',\n}};"
    ),
    lambda g, n, v: f'client := {g.word()}.NewClient("{v}") // {n}\nresp, err := client.Do(ctx, req)',
    lambda g, n, v: f'let token = "{v}"; // {n}, hardcoded for the spike\nlet client = Client::new(token);',
    lambda g, n, v: f"{n.lower().replace('_', '.')}={v}\nspring.profiles.active=prod",
    lambda g, n, v: f'{{\n  "Logging": {{ "LogLevel": {{ "Default": "Warning" }} }},\n  "{n}": "{v}"\n}}',
    lambda g, n, v: (
        f"curl -sS https://api.{g.word()}.com/v2/items \\\n  -H \"Authorization: Bearer {v}\" | jq '.[0]'"
    ),
    lambda g, n, v: f'variable "{n.lower()}" {{\n  type    = string\n  default = "{v}"\n}}',
    lambda g, n, v: (
        f'Traceback (most recent call last):\n  File "/srv/app/sync.py", line 88, in push\n'
        f"    r.raise_for_status()\nrequests.exceptions.HTTPError: 401 Client Error: Unauthorized\n"
        f"  request headers: {{'User-Agent': 'python-requests/2.32', 'Authorization': 'Bearer {v}'}}"
    ),
    lambda g, n, v: f"2026-11-30T12:00:{g.r.randint(10, 59)}Z DEBUG httpclient init {n.lower()}={v} pool=8",
    lambda g, n, v: f"| service | variable | value |\n|---|---|---|\n| {g.word()} | `{n}` | `{v}` |",
    lambda g, n, v: (
        f"Incident {g.d(4)} notes: the {g.word()} job failed after the rotation. Restored service by setting "
        f"{n} to {v} on the worker pool. Follow-up: move it into the vault."
    ),
    lambda g, n, v: (
        f"## PR: switch {g.word()} integration to the new account\n\nFor local testing set `{n}={v}` "
        f"(sandbox only, will rotate after merge)."
    ),
    lambda g, n, v: (
        f"In [3]: %env {n}={v}\nIn [4]: df = load_events()\nIn [5]: df.shape\nOut[5]: ({g.d(5)}, 12)"
    ),
    lambda g, n, v: (
        f"[transcribed from screenshot of the {g.word()} dashboard]\nAPI credentials\n  Name: ci-bot\n"
        f"  Value: {v}   (Copy)\n  Created: 2 days ago"
    ),
    lambda g, n, v: (
        f"From: ops@{g.word()}.example\nSubject: new credentials\n\nHi all,\nthe new value for {n} is "
        f"{v}\nPlease update your local setup before Monday.\nThanks"
    ),
    lambda g, n, v: f'<appSettings>\n  <add key="{n}" value="{v}" />\n</appSettings>',
    lambda g, n, v: f"<?php\ndefine('{n}', '{v}');\n$client = new Client({n});",
    lambda g, n, v: f'ENV["{n}"] ||= "{v}"\nclient = Vendor::Client.new',
    lambda g, n, v: f'PS C:\\src\\{g.word()}> $env:{n} = "{v}"\nPS C:\\src\\{g.word()}> npm run start',
    lambda g, n, v: f'variables:\n  {n}: "{v}"\nstages: [build, deploy]',
    lambda g, n, v: f"services:\n  api:\n    image: {g.word()}:latest\n    environment:\n      - {n}={v}",
    lambda g, n, v: f'[Service]\nEnvironment="{n}={v}"\nExecStart=/usr/local/bin/{g.word()}d',
    lambda g, n, v: f"memory: {g.word()} staging uses {n.lower()} `{v}`; prod one is in 1Password.",
    lambda g, n, v: (
        f"apiVersion: v1\nkind: Config\nusers:\n- name: {g.word()}-admin\n  user:\n    token: {v}\n"
        f"contexts:\n- name: prod\n  context: {{cluster: prod, user: {g.word()}-admin}}"
    ),
    lambda g, n, v: f"~/.git-credentials\nhttps://{g.user()}:{v}@git.{g.word()}.dev",
    lambda g, n, v: f"FROM python:3.12-slim\nENV {n}={v}\nRUN pip install -r requirements.txt",
    lambda g, n, v: f'{n.lower()}: "{v}"  # group_vars/prod.yml, not vaulted yet',
    lambda g, n, v: (
        f"Error: Request failed with status code 403\n    at createError (node_modules/axios/lib/core/createError.js:16)\n"
        f"  config: {{ headers: {{ 'x-api-key': '{v}' }} }}"
    ),
    lambda g, n, v: (
        f"org.springframework.web.client.HttpClientErrorException$Unauthorized: 401\n"
        f"\tat com.acme.{g.word()}.Client.call(Client.java:{g.r.randint(40, 300)})\n"
        f"Caused by: bad credential {n.lower()}={v}"
    ),
    lambda g, n, v: f"deploy:\n\t{n}={v} ./bin/release --channel stable",
    lambda g, n, v: (
        f"- [x] rotated the {g.word()} key -> new value `{v}` (old one revoked)\n- [ ] update the wiki"
    ),
    lambda g, n, v: f"<key>{n}</key>\n<string>{v}</string>",
    lambda g, n, v: f'local {n} = "{v}"  -- neovim plugin config',
    lambda g, n, v: f"set -x output:\n+ {g.word()}-cli login --token {v}\n+ {g.word()}-cli deploy",
]

# Chat messages that paste the value with no variable name beside it, in several human languages.
_CHAT_CONTEXTS: list[Context] = [
    lambda g, n, v: f"Tomás: aquí tienes el token que me pediste {v} — caduca el viernes",
    lambda g, n, v: f"Claire : voici la clé pour la préprod {v} ne la partage pas stp",
    lambda g, n, v: f"Jonas: hier ist der Schlüssel für das Staging: {v}",
    lambda g, n, v: f"佐藤: 本番のトークンはこれです {v} 後でローテーションします",
    lambda g, n, v: f"王伟：新的密钥是 {v}，用完请删掉",
    lambda g, n, v: f"Дмитрий: держи токен {v} только не коммить его",
    lambda g, n, v: f"João: segue a chave {v} (é a de produção, cuidado)",
    lambda g, n, v: f"민수: 토큰 여기 있어요 {v} 내일 교체할게요",
    lambda g, n, v: f"Ayşe: anahtar bu {v} — yarın değiştireceğim",
    lambda g, n, v: f"Budi: ini tokennya {v} jangan di-share ya",
    lambda g, n, v: f"Giulia: ecco la chiave {v}, scade a fine mese",
    lambda g, n, v: f"Sanne: hier is het token {v} graag na gebruik verwijderen",
    lambda g, n, v: f"Kasia: masz tutaj klucz {v} zmienię go jutro",
    lambda g, n, v: f"Rahul: yeh lo token {v} kal rotate kar dunga",
    lambda g, n, v: f"Linh: token đây nhé {v} nhớ xoá sau khi dùng",
    lambda g, n, v: f"أحمد: هذا هو المفتاح {v} لا تشاركه",
    lambda g, n, v: f"@channel quick one, use {v} for the demo tenant until we get SSO",
    lambda g, n, v: f"Erik: testa med {v} så länge",
]

# Values that span lines or carry their own names go where a block of text goes.
_BLOCK_CONTEXTS: list[Context] = [
    lambda g, n, v: f"Saved for later ({n}):\n```\n{v}\n```",
    lambda g, n, v: f"cat > /tmp/{g.word()}.conf <<'EOF'\n{v}\nEOF\nchmod 600 /tmp/{g.word()}.conf",
    lambda g, n, v: (
        f"Found this committed in the {g.word()} repo history, must rotate:\n\n{v}\n\n"
        f"Owner: platform team. Ticket SEC-{g.d(4)}."
    ),
    lambda g, n, v: (
        f"Runbook step 4 — restore the credentials file:\n\n{v}\n\nStep 5: systemctl restart {g.word()}"
    ),
    lambda g, n, v: f"Kenji: 設定ファイルの中身です\n{v}\n確認お願いします",
    lambda g, n, v: f"Lucía: te paso el fichero completo\n{v}\nsaludos",
    lambda g, n, v: (
        f'resource "local_file" "creds" {{\n  filename = "creds"\n  content  = <<EOT\n{v}\nEOT\n}}'
    ),
    lambda g, n, v: f"Note to self: contents of the {n} we use on the build agent:\n{v}",
]


def _contexts_for(kind: _Kind, value: str) -> list[Context]:
    if kind.multiline or "\n" in value or " " in value:
        return _BLOCK_CONTEXTS
    return _LINE_CONTEXTS + _CHAT_CONTEXTS


# --- disguises -----------------------------------------------------------------------------------------------
_ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
_BIDI = ["\u202e", "\u202d", "\u202a", "\u202b", "\u2066", "\u2067", "\u2068", "\u200e", "\u200f", "\u061c"]
_PLACEHOLDER_WORDS = [
    "EXAMPLE",
    "example",
    "xxxx",
    "XXXX",
    "sample",
    "test",
    "TEST",
    "dummy",
    "fake",
    "changeme",
]
DISGUISES = ["zero_width", "soft_hyphen", "fullwidth", "bidi", "percent", "base64", "split", "placeholder"]


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _insert(core: str, mid: int, piece: str) -> str:
    return core[:mid] + piece + core[mid:]


def _with_placeholder(g: _Gen, core: str) -> str | None:
    """Overwrites a run of letters and digits in the latter part of the token with a placeholder-looking word,
    as a random token sometimes happens to contain one; None when the token's alphabet cannot hold it."""
    if all(c in HEX for c in core) or all(c in HEX.upper() + DIGITS for c in core):
        return None
    has_lower = any(c.islower() for c in core)
    has_upper = any(c.isupper() for c in core)
    words = [
        w for w in _PLACEHOLDER_WORDS if (has_lower or not w.islower()) and (has_upper or not w.isupper())
    ]
    if not words:
        return None
    word = g.r.choice(words)
    start = len(core) // 3
    for i in range(start, len(core) - len(word)):
        if core[i : i + len(word)].isalnum() and core[i : i + len(word)].isascii():
            return core[:i] + word + core[i + len(word) :]
    return None


def _disguise_text(g: _Gen, disguise: str, text: str, value: str, core: str) -> str:
    mid = len(core) // 2
    if disguise == "zero_width":
        new = _insert(core, mid, g.r.choice(_ZERO_WIDTH))
        if g.r.random() < 0.4:
            new = _insert(new, mid // 2, g.r.choice(_ZERO_WIDTH))
        return text.replace(core, new, 1)
    if disguise == "soft_hyphen":
        new = _insert(core, mid, "\u00ad")
        if g.r.random() < 0.5:
            new = _insert(new, mid + len(core) // 4, "\u00ad")
        return text.replace(core, new, 1)
    if disguise == "fullwidth":
        if g.r.random() < 0.5:
            new = _fullwidth(core)
        else:
            new = "".join(_fullwidth(c) if g.r.random() < 0.35 or i == mid else c for i, c in enumerate(core))
        return text.replace(core, new, 1)
    if disguise == "bidi":
        mark = g.r.choice(_BIDI)
        close = (
            "\u202c"
            if mark in "\u202e\u202d\u202a\u202b"
            else ("\u2069" if mark in "\u2066\u2067\u2068" else "")
        )
        return text.replace(core, _insert(core, mid, mark + close), 1)
    if disguise == "percent":
        if g.r.random() < 0.5:
            return text.replace(core, "".join(f"%{b:02X}" for b in core.encode()), 1)
        line = next(ln for ln in text.split("\n") if core in ln)
        return text.replace(line, quote(line, safe=""), 1)
    if disguise == "base64":
        if g.r.random() < 0.5 and "\n" not in value:
            line = next(ln for ln in text.split("\n") if core in ln)
            encoded = base64.b64encode(line.encode()).decode()
            return text.replace(line, f"echo {encoded} | base64 -d", 1)
        return text.replace(value, base64.b64encode(value.encode()).decode(), 1)
    if disguise == "split":
        sep = g.r.choice(["\n", "\\\n    ", "\n  ", "\n\t", "\r\n"])
        return text.replace(core, _insert(core, mid, sep), 1)
    raise ValueError("unknown disguise")


def _secret_piece(core: str) -> str:
    n = min(len(core), max(8, min(20, len(core) // 2)))
    start = (len(core) - n) // 2
    return core[start : start + n]


def _credentials(g: _Gen) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for kind in KINDS_13:
        # Four of ten plain, the other six spread over the disguises in turn.
        plan = ["plain"] * 4 + g.r.sample(DISGUISES, 6)
        g.r.shuffle(plan)
        for disguise in plan:
            value, core = kind.gen(g)
            if disguise == "placeholder":
                replaced = _with_placeholder(g, core)
                if replaced is None:
                    disguise = g.r.choice(["zero_width", "split", "fullwidth"])
                else:
                    value, core = value.replace(core, replaced, 1), replaced
            raw = g.r.choice(_contexts_for(kind, value))(g, kind.var, value)
            text = (
                raw if disguise in ("plain", "placeholder") else _disguise_text(g, disguise, raw, value, core)
            )
            sample = Sample(
                kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=_secret_piece(core)
            )
            out.append((sample, raw))
    return out


# --- look-alikes: public values that sit beside words like key, token, id or secret ---------------------------
NIX32 = "0123456789abcdfghijklmnpqrsvwxyz"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _la_git(g: _Gen) -> str:
    sha = g.h(40)
    return g.r.choice(
        [
            f"commit {sha}\nAuthor: {g.user()} <{g.user()}@example.org>\n\n    fix token refresh race",
            f"Reverted the key rotation change in {sha[:12]}; the real fix is {g.h(40)}.",
            f"git cherry-pick {sha}  # secret scanner false positive fix",
        ]
    )


def _la_sha256(g: _Gen) -> str:
    return g.r.choice(
        [
            f"SHA256SUMS\n{g.h(64)}  kenfold-1.{g.r.randint(0, 9)}.0-linux-amd64.tar.gz\n{g.h(64)}  kenfold.sig",
            f"Release notes: verify the download, checksum sha256={g.h(64)}",
            f"sha256 of the signing key file (not the key): {g.h(64)}",
        ]
    )


def _la_sha512(g: _Gen) -> str:
    return f"{g.r.choice(['artifact', 'backup', 'export'])} digest sha512:{g.h(128)}"


def _la_uuid(g: _Gen) -> str:
    return g.r.choice(
        [
            f"row primary key id={g.uuid()} was duplicated by the import",
            f"tenant id {g.uuid()}, subscription id {g.uuid()} (Azure portal, overview tab)",
            f"Idempotency-Key: {g.uuid()}\nContent-Type: application/json",
            f"x-request-id: {g.uuid()} — token endpoint returned 429",
        ]
    )


def _la_ulid(g: _Gen) -> str:
    return f"event id 01J{g.s(CROCKFORD, 23)} (ULID) arrived before the key rotation event 01J{g.s(CROCKFORD, 23)}"


def _la_ksuid(g: _Gen) -> str:
    return f"segment message_id={g.r.choice('123')}{g.s(ALNUM, 26)} (KSUID), token count 1,204"


def _la_stripe_ids(g: _Gen) -> str:
    return g.r.choice(
        [
            f"Refunded charge ch_{g.a(24)} for customer cus_{g.a(14)} (payment intent pi_{g.a(24)})",
            f"price_{g.a(24)} belongs to prod_{g.a(14)}; webhook event evt_{g.a(24)} replayed",
            f"connected account acct_{g.a(16)} onboarding complete, invoice in_{g.a(24)}",
        ]
    )


def _la_public_client_keys(g: _Gen) -> str:
    # Providers document these as safe in the browser: Stripe publishable, PostHog project, Mapbox public token.
    return g.r.choice(
        [
            f"NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_{g.a(99)}",
            f"posthog.init('phc_{g.a(43)}', {{ api_host: 'https://eu.posthog.com' }})",
            f"mapboxgl.accessToken = 'pk.eyJ1Ijoi{g.s(B64URL, 30)}In0.{g.s(B64URL, 22)}'; // public token",
            f"Sentry.init({{ dsn: 'https://{g.h(32)}@o{g.d(6)}.ingest.sentry.io/{g.d(7)}' }})",
            f"GOOGLE_OAUTH_CLIENT_ID={g.d(12)}-{g.s(LOWER + DIGITS, 32)}.apps.googleusercontent.com",
        ]
    )


def _la_slack_ids(g: _Gen) -> str:
    return (
        f"post alerts to channel C0{g.s(UPPER + DIGITS, 9)} in workspace T0{g.s(UPPER + DIGITS, 9)}, "
        f"mention U0{g.s(UPPER + DIGITS, 9)}"
    )


def _la_aws_arn(g: _Gen) -> str:
    acct = g.d(12)
    return g.r.choice(
        [
            f"role arn:aws:iam::{acct}:role/{g.word()}-deployer, account id {acct}",
            f"secret lives at arn:aws:secretsmanager:eu-west-1:{acct}:secret:prod/{g.word()}-{g.a(6)}",
            f"KMS key id arn:aws:kms:us-east-1:{acct}:key/{g.uuid()}",
        ]
    )


def _la_trace(g: _Gen) -> str:
    return g.r.choice(
        [
            f"traceparent: 00-{g.h(32)}-{g.h(16)}-01",
            f"trace id {g.h(32)} span {g.h(16)}: token validation took 812ms",
            f"X-Amzn-Trace-Id: Root=1-{g.h(8)}-{g.h(24)}",
        ]
    )


def _la_base64_text(g: _Gen) -> str:
    sentence = f"The {g.word()} report for {g.word()} is ready; no credentials inside, just numbers {g.d(5)}."
    return f"payload (base64): {base64.b64encode(sentence.encode()).decode()}"


def _la_base64_image(g: _Gen) -> str:
    return f'<img alt="logo" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{g.b64bytes(90)}">'


def _la_npm_integrity(g: _Gen) -> str:
    name = g.word()
    return (
        f'"node_modules/{name}": {{\n  "version": "2.{g.r.randint(0, 9)}.1",\n'
        f'  "resolved": "https://registry.npmjs.org/{name}/-/{name}-2.0.1.tgz",\n'
        f'  "integrity": "sha512-{g.b64bytes(64)}"\n}}'
    )


def _la_lockfile_hashes(g: _Gen) -> str:
    return g.r.choice(
        [
            f"golang.org/x/crypto v0.{g.r.randint(10, 30)}.0 h1:{g.b64bytes(32)}",
            f'[[package]]\nname = "{g.word()}"\nversion = "0.4.1"\nchecksum = "{g.h(64)}"',
            f"{g.word()}==1.2.0 \\\n    --hash=sha256:{g.h(64)}",
        ]
    )


# Exactly as the providers' documentation prints them.
_DOC_PLACEHOLDERS = [
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "STRIPE_SECRET_KEY=sk_test_<your key>",
    "export OPENAI_API_KEY=<your-api-key>",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SLACK_BOT_TOKEN=xoxb-your-bot-token",
    "ANTHROPIC_API_KEY=your-api-key-here",
    "curl -H 'Authorization: Bearer YOUR_ACCESS_TOKEN' https://api.example.com/v1/me",
    "DATABASE_URL=postgresql://user:password@localhost:5432/mydb",
    "password: changeme",
    "TWILIO_AUTH_TOKEN=your_auth_token",
    "api_key: <INSERT_API_KEY_HERE>",
    "HF_TOKEN=hf_...",
]


def _la_doc_placeholder(g: _Gen) -> str:
    return f"From the {g.word()} quickstart, step {g.r.randint(2, 9)} (copy and fill in):\n{g.r.choice(_DOC_PLACEHOLDERS)}"


def _la_env_reference(g: _Gen) -> str:
    return f"# {g.word()}-{g.word()} service, config line {g.r.randint(3, 80)}\n" + g.r.choice(
        [
            "API_KEY=${API_KEY}",
            "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
            'token = os.environ["TOKEN"]',
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-creds\n        key: password",
            "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            "DB_PASSWORD=$(cat /run/secrets/db_password)",
            "OPENAI_API_KEY=op://Engineering/OpenAI/credential",
            'api_key = settings.get("api_key")  # loaded from vault at startup',
            'SECRET_KEY: \'{{ lookup("hashi_vault", "secret=kv/data/app:secret_key") }}\'',
            "const token = process.env.SLACK_BOT_TOKEN ?? '';",
        ]
    )


def _la_ssh_public(g: _Gen) -> str:
    return g.r.choice(
        [
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} {g.user()}@laptop",
            f"authorized_keys:\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{g.s(B64, 300)} deploy@ci",
        ]
    )


def _la_pem_public(g: _Gen) -> str:
    label = g.r.choice(["PUBLIC KEY", "CERTIFICATE"])
    body = g.b64bytes(294)
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"JWT verification key (public, safe to share):\n-----BEGIN {label}-----\n{lines}\n-----END {label}-----"


def _la_fingerprint(g: _Gen) -> str:
    return g.r.choice(
        [
            f"public key fingerprint SHA256:{g.s(B64, 43)} (ED25519)",
            f"GPG key fingerprint {g.s(HEX.upper(), 40)}, key id {g.s(HEX.upper(), 16)}",
            f"TLS cert SHA-1 thumbprint {':'.join(g.s(HEX.upper(), 2) for _ in range(20))}",
        ]
    )


def _la_web_assets(g: _Gen) -> str:
    return g.r.choice(
        [
            f"dist/assets/index-{g.s(B64URL, 8)}.js  142.1 kB\ndist/assets/index-{g.s(B64URL, 8)}.css  12.3 kB",
            f"webpack: chunk main.{g.h(20)}.js emitted, contenthash {g.h(20)}",
            f"Content-Security-Policy: script-src 'self' 'sha256-{g.b64bytes(32)}'",
        ]
    )


def _la_youtube(g: _Gen) -> str:
    return f"demo recording: https://www.youtube.com/watch?v={g.s(B64URL, 11)} (token refresh walkthrough)"


def _la_docker_digest(g: _Gen) -> str:
    return f"image: ghcr.io/acme/{g.word()}@sha256:{g.h(64)}"


def _la_nix(g: _Gen) -> str:
    return f"/nix/store/{g.s(NIX32, 32)}-openssl-3.0.13/lib/libcrypto.so.3"


def _la_ipfs(g: _Gen) -> str:
    return g.r.choice(
        [
            f"pinned to IPFS: bafybei{g.s('abcdefghijklmnopqrstuvwxyz234567', 52)}",
            f"ipfs://Qm{g.s(BASE58, 44)}",
        ]
    )


def _la_prose(g: _Gen) -> str:
    return f"[{g.word()} handbook, section {g.r.randint(1, 12)}.{g.r.randint(1, 9)}] " + g.r.choice(
        [
            "Policy: rotate the GitHub token every 90 days and never paste it in chat.",
            "The Stripe secret key lives in the vault; ask #payments for access, do not copy it to .env files.",
            "Reminder: the API key for the staging tenant expires on Friday; request a new one from the portal.",
            "Règle : on ne met jamais de mot de passe dans le dépôt, on passe par le coffre-fort.",
            "Regel: Tokens werden nur über den Secret Manager verteilt, nie per Slack.",
            "メモ: APIキーは Secrets Manager に保存し、ログに出さないこと。",
            "Nota: la clave de servicio se rota cada trimestre; el responsable es el equipo de plataforma.",
            "Token budget: 128k context, 4,096 max output tokens; the secret sauce is the reranker.",
        ]
    )


def _la_token_count(g: _Gen) -> str:
    return f"usage: prompt_tokens={g.d(4)} completion_tokens={g.d(3)} total_tokens={g.d(4)} (model {g.word()}-large)"


def _la_objectid(g: _Gen) -> str:
    return f'db.sessions.find({{ _id: ObjectId("{g.h(24)}") }})  // the session key field is empty here'


def _la_k8s_names(g: _Gen) -> str:
    return (
        f"pod/{g.word()}-api-{g.s(LOWER[:10] + DIGITS, 10)}-{g.s(LOWER + DIGITS, 5)} CrashLoopBackOff; "
        f"uid {g.uuid()}; secret name {g.word()}-tls"
    )


def _la_git_lfs(g: _Gen) -> str:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{g.h(64)}\nsize {g.d(7)}"


def _la_cache_keys(g: _Gen) -> str:
    return g.r.choice(
        [
            f"cache key: node-modules-{g.h(64)}",
            f"redis key session:{g.h(32)} TTL 3600",
            f"S3 object key uploads/2026/11/{g.uuid()}.png",
        ]
    )


_LOOKALIKES: list[tuple[str, Callable[[_Gen], str]]] = [
    ("git_commit_sha", _la_git),
    ("sha256_checksum", _la_sha256),
    ("sha512_digest", _la_sha512),
    ("uuid_identifier", _la_uuid),
    ("ulid", _la_ulid),
    ("ksuid", _la_ksuid),
    ("stripe_object_id", _la_stripe_ids),
    ("public_client_key", _la_public_client_keys),
    ("slack_object_id", _la_slack_ids),
    ("aws_arn_account", _la_aws_arn),
    ("trace_id", _la_trace),
    ("base64_text", _la_base64_text),
    ("base64_image", _la_base64_image),
    ("npm_integrity", _la_npm_integrity),
    ("lockfile_hash", _la_lockfile_hashes),
    ("documented_placeholder", _la_doc_placeholder),
    ("secret_reference", _la_env_reference),
    ("ssh_public_key", _la_ssh_public),
    ("pem_public_key", _la_pem_public),
    ("key_fingerprint", _la_fingerprint),
    ("web_asset_hash", _la_web_assets),
    ("youtube_id", _la_youtube),
    ("docker_image_digest", _la_docker_digest),
    ("nix_store_path", _la_nix),
    ("ipfs_cid", _la_ipfs),
    ("prose_about_secrets", _la_prose),
    ("token_count", _la_token_count),
    ("mongodb_objectid", _la_objectid),
    ("k8s_resource_name", _la_k8s_names),
    ("git_lfs_pointer", _la_git_lfs),
    ("cache_or_object_key", _la_cache_keys),
]


def _lookalikes(g: _Gen) -> list[Sample]:
    return [
        Sample(kind=name, group="lookalike", text=make(g))
        for name, make in _LOOKALIKES
        for _ in range(LOOKALIKES_PER_KIND)
    ]


def thirteenth_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with its text before disguising (the look-alikes' text twice), for the shape test."""
    g = _Gen(random.Random(SEED))
    return _credentials(g) + [(s, s.text) for s in _lookalikes(g)]


def thirteenth_part() -> list[Sample]:
    return [sample for sample, _ in thirteenth_part_with_raw()]
