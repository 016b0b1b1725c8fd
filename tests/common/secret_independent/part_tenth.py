"""Part ten of the independent secret corpus: credentials generated from the formats the providers document
(each kind says where its format comes from), pasted into memory texts an agent might keep, some disguised,
and look-alikes that sit in the same kinds of texts but are not secret.

Written without reading the filter's rules or the other parts, so that it measures the filter against the
world. Every value is random (a fixed seed), none is a real credential.
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

SEED = 10_061_2026

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
BASE32 = UPPER + "234567"
BASE62 = DIGITS + UPPER + LOWER
WORDS = (
    "tulip harbor copper falcon meadow quartz lantern violet saddle ember orbit willow pepper canyon "
    "marble thistle juniper cobalt otter glacier"
).split()


def rnd(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def b64url(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def uuid4(r: random.Random) -> str:
    h = rnd(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def password(r: random.Random) -> str:
    # What people pick when a form says "password": words, digits and a symbol, or a generator's output.
    if r.random() < 0.5:
        words = [r.choice(WORDS).capitalize() for _ in range(r.randint(2, 3))]
        return "-".join(words) + str(r.randint(10, 9999)) + r.choice("!#%*.")
    return rnd(r, ALNUM, r.randint(16, 24))


def base62_crc32(body: str) -> str:
    # GitHub's token format blog post: the last 6 characters are the CRC32 of the random part, base62.
    n = zlib.crc32(body.encode())
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = BASE62[d] + out
    return out.rjust(6, "0")


def jwt(r: random.Random, header: dict, payload: dict, sig_len: int = 43) -> tuple[str, str]:
    sig = rnd(r, URLSAFE, sig_len)
    token = f"{b64url(json.dumps(header, separators=(',', ':')))}.{b64url(json.dumps(payload, separators=(',', ':')))}.{sig}"
    return token, sig


def pem_body(r: random.Random, lead: str, n_bytes: int) -> list[str]:
    body = lead + b64(r.randbytes(n_bytes))
    return [body[i : i + 64] for i in range(0, len(body), 64)]


Gen = Callable[[random.Random], tuple[str, str]]


@dataclass(frozen=True)
class Cred:
    kind: str
    group: str
    # The name people give the value in a config or an environment.
    name: str
    # Returns the value as pasted and the part of it that is secret (random, at least 8 characters).
    make: Gen
    # Multi-line values (key files, JSON keys, kubeconfigs) go into texts that hold a whole file.
    block: bool = False
    # Recomputes a documented checksum after a placeholder-looking word was written into the token.
    fix: Callable[[str], str] | None = None


def tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> Gen:
    def make(r: random.Random) -> tuple[str, str]:
        body = rnd(r, alphabet, n)
        return prefix + body + suffix, body

    return make


def github_style(prefix: str) -> tuple[Gen, Callable[[str], str]]:
    def make(r: random.Random) -> tuple[str, str]:
        body = rnd(r, ALNUM, 30)
        return prefix + body + base62_crc32(body), body + base62_crc32(body)

    def fix(value: str) -> str:
        body = value[len(prefix) : len(prefix) + 30]
        return prefix + body + base62_crc32(body)

    return make, fix


def pair(first: Gen, second: Gen, template: str) -> Gen:
    # An id and its secret pasted together; only the second is secret.
    def make(r: random.Random) -> tuple[str, str]:
        a, _ = first(r)
        b, secret = second(r)
        # Extra random parts some documented shapes repeat: another numeric id, a token id.
        c, d = rnd(r, HEX, 24), rnd(r, DIGITS, 12)
        return template.format(a=a, b=b, a4=a[:4], c=c, d=d), secret

    return make


def url_password(template: str) -> Gen:
    def make(r: random.Random) -> tuple[str, str]:
        pw = password(r)
        host = r.choice(["db-prod-1", "pg-main", "orders-db", "analytics", "core-sql"])
        user = r.choice(["app", "admin", "svc_orders", "reporting", "root", "deploy"])
        pw = quote(pw, safe="!*")
        return template.format(user=user, pw=pw, host=host, n=r.randint(1, 9)), pw

    return make


def pem(label: str, lead: str, n_bytes: int) -> Gen:
    def make(r: random.Random) -> tuple[str, str]:
        lines = pem_body(r, lead, n_bytes)
        text = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
        return text, lines[len(lines) // 2]

    return make


def gcp_service_account(r: random.Random) -> tuple[str, str]:
    lines = pem_body(r, "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 1180)
    key = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(lines) + "\\n-----END PRIVATE KEY-----\\n"
    project = r.choice(["billing-prod-31", "ml-sandbox", "acme-data-eu", "kf-ingest"])
    doc = (
        "{\n"
        '  "type": "service_account",\n'
        f'  "project_id": "{project}",\n'
        f'  "private_key_id": "{rnd(r, HEX, 40)}",\n'
        f'  "private_key": "{key}",\n'
        f'  "client_email": "deployer@{project}.iam.gserviceaccount.com",\n'
        f'  "client_id": "{rnd(r, DIGITS, 21)}",\n'
        '  "token_uri": "https://oauth2.googleapis.com/token"\n'
        "}"
    )
    return doc, lines[len(lines) // 2]


def kubeconfig_sa_token(r: random.Random) -> tuple[str, str]:
    token, sig = jwt(
        r,
        {"alg": "RS256", "kid": rnd(r, URLSAFE, 43)},
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "kubernetes.io/serviceaccount/service-account.name": "deployer",
            "sub": "system:serviceaccount:ci:deployer",
        },
        342,
    )
    cluster = r.choice(["prod-eu", "staging", "gke-main", "k3s-lab"])
    doc = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
        f"    server: https://10.{r.randint(0, 255)}.0.1:6443\n  name: {cluster}\n"
        f"users:\n- name: deployer\n  user:\n    token: {token}\n"
        f"contexts:\n- context:\n    cluster: {cluster}\n    user: deployer\n  name: {cluster}\n"
        f"current-context: {cluster}"
    )
    return doc, sig


def kubeconfig_client_key(r: random.Random) -> tuple[str, str]:
    key_pem, _ = pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 1150)(r)
    data = b64(key_pem)
    doc = (
        "users:\n- name: admin@k8s\n  user:\n"
        f"    client-certificate-data: {b64(r.randbytes(90))}\n"
        f"    client-key-data: {data}"
    )
    return doc, data[len(data) // 2 - 20 : len(data) // 2 + 20]


def docker_config(r: random.Random) -> tuple[str, str]:
    user = r.choice(["ci-bot", "acme", "jdoe"])
    auth = b64(f"{user}:dckr_pat_{rnd(r, URLSAFE, 27)}")
    doc = '{\n  "auths": {\n    "https://index.docker.io/v1/": {\n      "auth": "' + auth + '"\n    }\n  }\n}'
    return doc, auth


def basic_auth(r: random.Random) -> tuple[str, str]:
    value = b64(f"{r.choice(['api', 'svc-sync', 'admin', 'grafana'])}:{password(r)}")
    return f"Basic {value}", value


def azure_storage(r: random.Random) -> tuple[str, str]:
    key = b64(r.randbytes(64))
    account = r.choice(["acmeprodlogs", "kfbackups01", "stdataeu", "mediauploads"])
    return (
        f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};EndpointSuffix=core.windows.net",
        key,
    )


def azure_sas(r: random.Random) -> tuple[str, str]:
    sig = b64(r.randbytes(32))
    return (
        f"https://{r.choice(['acmeprod', 'kfbackup'])}.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co"
        f"&sp=rl&se=2027-03-01T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={quote(sig, safe='')}",
        quote(sig, safe=""),
    )


def cosmos(r: random.Random) -> tuple[str, str]:
    key = b64(r.randbytes(64))
    return (
        f"AccountEndpoint=https://{r.choice(['orders', 'catalog'])}-cosmos.documents.azure.com:443/;AccountKey={key};",
        key,
    )


def sqlserver_ado(r: random.Random) -> tuple[str, str]:
    pw = password(r)
    return (
        f"Server=tcp:{r.choice(['acme-sql', 'kf-core'])}.database.windows.net,1433;Initial Catalog=orders;"
        f"Persist Security Info=False;User ID=sqladmin;Password={pw};Encrypt=True;",
        pw,
    )


def pgpass(r: random.Random) -> tuple[str, str]:
    pw = password(r).replace(":", "")
    return f"{r.choice(['db.internal', '10.0.3.12', 'pg-replica'])}:5432:orders:app:{pw}", pw


def mysql_cli(r: random.Random) -> tuple[str, str]:
    pw = password(r)
    return f"mysql -h {r.choice(['10.1.0.5', 'mysql-prod'])} -u root -p'{pw}' shop", pw


def aws_pair(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, B64, 40)
    return f"aws_access_key_id = AKIA{rnd(r, BASE32, 16)}\naws_secret_access_key = {secret}", secret


def aws_session(r: random.Random) -> tuple[str, str]:
    session = "IQoJb3JpZ2luX2Vj" + rnd(r, B64, 340)
    return (
        f"AWS_ACCESS_KEY_ID=ASIA{rnd(r, BASE32, 16)}\nAWS_SECRET_ACCESS_KEY={rnd(r, B64, 40)}\n"
        f"AWS_SESSION_TOKEN={session}",
        session[100:140],
    )


def discord_bot(r: random.Random) -> tuple[str, str]:
    user_id = str(r.randint(10**17, 10**18))
    tail = rnd(r, URLSAFE, 38)
    return f"{b64url(user_id)}.{rnd(r, URLSAFE, 6)}.{tail}", tail


def braintree(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, HEX, 32)
    return f"access_token$production${rnd(r, LOWER_ALNUM, 16)}${secret}", secret


def mercadopago(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, HEX, 32)
    return f"APP_USR-{rnd(r, DIGITS, 16)}-{rnd(r, DIGITS, 6)}-{secret}-{rnd(r, DIGITS, 9)}", secret


def supabase_service_role(r: random.Random) -> tuple[str, str]:
    return jwt(
        r,
        {"alg": "HS256", "typ": "JWT"},
        {
            "iss": "supabase",
            "ref": rnd(r, LOWER, 20),
            "role": "service_role",
            "iat": 1730000000,
            "exp": 2045576000,
        },
    )


def teamcity(r: random.Random) -> tuple[str, str]:
    tail = rnd(r, URLSAFE, 52)
    return f"eyJ0eXAiOiAiVENWMiJ9.{rnd(r, URLSAFE, 36)}.{tail}", tail


def atlassian(r: random.Random) -> tuple[str, str]:
    body = rnd(r, URLSAFE, 180)
    return f"ATATT3xFfGF0{body}={rnd(r, HEX.upper(), 8)}", body[60:100]


def intercom(r: random.Random) -> tuple[str, str]:
    value = b64(f"tok:{uuid4(r)}:1:0")
    return value, value[8:]


def teams_webhook(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, HEX, 32)
    return (
        f"https://acme.webhook.office.com/webhookb2/{uuid4(r)}@{uuid4(r)}/IncomingWebhook/{secret}/{uuid4(r)}/"
        f"V2{rnd(r, URLSAFE, 42)}",
        secret,
    )


def elastic_api_key(r: random.Random) -> tuple[str, str]:
    value = b64(f"{rnd(r, URLSAFE, 20)}:{rnd(r, URLSAFE, 22)}")
    return f"ApiKey {value}", value


def cloudinary(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, URLSAFE, 27)
    return f"cloudinary://{rnd(r, DIGITS, 15)}:{secret}@{r.choice(['acme', 'shopcdn'])}", secret


def sumo(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, URLSAFE, 120)
    return f"https://endpoint4.collection.us2.sumologic.com/receiver/v1/http/{secret}", secret[40:80]


def dingtalk(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, HEX, 64)
    return f"https://oapi.dingtalk.com/robot/send?access_token={secret}", secret


def pypirc(r: random.Random) -> tuple[str, str]:
    body = rnd(r, URLSAFE, 150)
    return f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{body}", body


def maven_settings(r: random.Random) -> tuple[str, str]:
    pw = rnd(r, B64, 44)
    return (
        "<settings>\n  <servers>\n    <server>\n      <id>ossrh</id>\n"
        f"      <username>{rnd(r, URLSAFE, 8)}</username>\n      <password>{pw}</password>\n"
        "    </server>\n  </servers>\n</settings>",
        pw,
    )


def netrc(r: random.Random) -> tuple[str, str]:
    secret = uuid4(r)
    return f"machine api.heroku.com\n  login ops@acme.io\n  password {secret}", secret


def wandb_netrc(r: random.Random) -> tuple[str, str]:
    secret = rnd(r, HEX, 40)
    return f"machine api.wandb.ai\n  login user\n  password {secret}", secret


def npmrc_auth(r: random.Random) -> tuple[str, str]:
    value = b64(f"deploy:{password(r)}")
    return f"registry=https://nexus.acme.internal/repository/npm/\n_auth={value}\nalways-auth=true", value


GHP = github_style("ghp_")
GHO = github_style("gho_")
GHU = github_style("ghu_")
GHS = github_style("ghs_")
GHR = github_style("ghr_")
NPM = github_style("npm_")

CREDENTIALS: list[Cred] = [
    # --- cloud ---
    # AWS IAM docs: access key id AKIA + 16 base32 characters, secret access key 40 characters.
    Cred("aws_access_key_pair", "cloud", "AWS_CREDENTIALS", aws_pair, block=True),
    # AWS STS docs: temporary keys start ASIA and come with a long session token.
    Cred("aws_session_credentials", "cloud", "AWS_SESSION", aws_session, block=True),
    # Google Cloud docs: a service account key file is JSON holding a PKCS#8 private key.
    Cred(
        "gcp_service_account_json",
        "cloud",
        "GOOGLE_APPLICATION_CREDENTIALS_JSON",
        gcp_service_account,
        block=True,
    ),
    # Google Cloud docs: API keys are AIza followed by 35 characters of [A-Za-z0-9_-]; keep them secret.
    Cred("google_api_key", "cloud", "GOOGLE_API_KEY", tok("AIza", URLSAFE, 35)),
    # Google OAuth client secrets issued since 2021 start with GOCSPX-.
    Cred("google_oauth_client_secret", "cloud", "GOOGLE_CLIENT_SECRET", tok("GOCSPX-", URLSAFE, 28)),
    # Google OAuth docs: refresh tokens as returned to installed apps start with 1//.
    Cred("google_oauth_refresh_token", "cloud", "GOOGLE_REFRESH_TOKEN", tok("1//0g", URLSAFE, 98)),
    # Azure Storage docs: connection string with a base64 AccountKey of 64 bytes.
    Cred("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", azure_storage),
    # Azure Storage docs: a SAS URL's sig= is an HMAC-SHA256, base64, URL-encoded.
    Cred("azure_sas_url", "cloud", "AZURE_SAS_URL", azure_sas),
    # Microsoft Entra docs: client secrets are 40 characters with Q~ at the fourth position.
    Cred(
        "azure_entra_client_secret",
        "cloud",
        "AZURE_CLIENT_SECRET",
        pair(tok("", ALNUM, 3), tok("", ALNUM + "_.~-", 34), "{a}8Q~{b}"),
    ),
    # Alibaba Cloud RAM docs: AccessKey id LTAI + 20 characters, secret 30 characters.
    Cred(
        "alibaba_cloud_access_key",
        "cloud",
        "ALIBABA_CLOUD_CREDENTIALS",
        pair(tok("LTAI", ALNUM, 20), tok("", ALNUM, 30), "access_key_id={a}\naccess_key_secret={b}"),
    ),
    # Tencent Cloud CAM docs: SecretId AKID + 32 characters, SecretKey 32 characters.
    Cred(
        "tencent_cloud_secret",
        "cloud",
        "TENCENTCLOUD_CREDENTIALS",
        pair(tok("AKID", ALNUM, 32), tok("", ALNUM, 32), "SecretId: {a}\nSecretKey: {b}"),
    ),
    # Huawei Cloud IAM docs: AK is 20 upper-case characters, SK 40 characters.
    Cred(
        "huawei_cloud_ak_sk",
        "cloud",
        "HUAWEICLOUD_CREDENTIALS",
        pair(tok("", UPPER_ALNUM, 20), tok("", ALNUM, 40), "HUAWEICLOUD_SDK_AK={a}\nHUAWEICLOUD_SDK_SK={b}"),
    ),
    # Oracle Cloud docs: the API signing key is a PEM private key referenced from ~/.oci/config.
    Cred(
        "oci_api_signing_key",
        "cloud",
        "OCI_PRIVATE_KEY",
        pem("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 1170),
        block=True,
    ),
    # IBM Cloud IAM docs: API keys are 44 characters of [A-Za-z0-9_-].
    Cred("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", tok("", URLSAFE, 44)),
    # Cloudflare docs: API tokens are 40 characters; the Global API Key is 37 hex.
    Cred("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", tok("", URLSAFE, 40)),
    Cred("cloudflare_global_api_key", "cloud", "CF_API_KEY", tok("", HEX, 37)),
    # DigitalOcean docs: personal access tokens dop_v1_ + 64 hex, OAuth tokens doo_v1_.
    Cred("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", tok("dop_v1_", HEX, 64)),
    Cred("digitalocean_oauth_token", "cloud", "DO_OAUTH_TOKEN", tok("doo_v1_", HEX, 64)),
    # Linode (Akamai) docs: personal access tokens are 64 hex characters.
    Cred("linode_pat", "cloud", "LINODE_TOKEN", tok("", HEX, 64)),
    # Hetzner Cloud docs: API tokens are 64 alphanumeric characters.
    Cred("hetzner_cloud_token", "cloud", "HCLOUD_TOKEN", tok("", ALNUM, 64)),
    # Scaleway docs: the secret key is a UUID (the access key SCW + 17 characters is its id).
    Cred(
        "scaleway_secret_key",
        "cloud",
        "SCW_CREDENTIALS",
        pair(
            tok("SCW", UPPER_ALNUM, 17),
            lambda r: (u := uuid4(r), u),
            "SCW_ACCESS_KEY={a}\nSCW_SECRET_KEY={b}",
        ),
    ),
    # OVHcloud API docs: application secret and consumer key are 32 characters.
    Cred("ovh_application_secret", "cloud", "OVH_APPLICATION_SECRET", tok("", ALNUM, 32)),
    # Yandex Cloud docs: API keys start AQVN, IAM tokens t1.
    Cred("yandex_cloud_api_key", "cloud", "YC_API_KEY", tok("AQVN", URLSAFE, 36)),
    # Vultr docs: API keys are 36 upper-case alphanumeric characters.
    Cred("vultr_api_key", "cloud", "VULTR_API_KEY", tok("", UPPER_ALNUM, 36)),
    # Heroku Dev Center: the API token stored in ~/.netrc (a UUID for newer accounts).
    Cred("heroku_api_token_netrc", "cloud", "HEROKU_NETRC", netrc, block=True),
    # Vercel docs: access tokens are 24 alphanumeric characters.
    Cred("vercel_token", "cloud", "VERCEL_TOKEN", tok("", ALNUM, 24)),
    # Netlify docs: personal access tokens start nfp_.
    Cred("netlify_pat", "cloud", "NETLIFY_AUTH_TOKEN", tok("nfp_", ALNUM, 36)),
    # Fly.io docs: tokens are macaroons printed as "FlyV1 fm2_...".
    Cred("flyio_token", "cloud", "FLY_API_TOKEN", tok("FlyV1 fm2_", B64, 180)),
    # Kubernetes docs: bootstrap tokens are [a-z0-9]{6}.[a-z0-9]{16}; the second half is the secret.
    Cred(
        "kubernetes_bootstrap_token",
        "cloud",
        "KUBEADM_TOKEN",
        pair(tok("", LOWER_ALNUM, 6), tok("", LOWER_ALNUM, 16), "{a}.{b}"),
    ),
    # Kubernetes docs: a kubeconfig user may hold a service-account JWT under token:.
    Cred("kubeconfig_sa_token", "cloud", "KUBECONFIG", kubeconfig_sa_token, block=True),
    Cred("kubeconfig_client_key_data", "cloud", "KUBECONFIG", kubeconfig_client_key, block=True),
    # HashiCorp Vault docs: service tokens hvs., batch tokens hvb., 24+ characters.
    Cred("vault_service_token", "cloud", "VAULT_TOKEN", tok("hvs.", ALNUM, 24)),
    Cred("vault_batch_token", "cloud", "VAULT_TOKEN", tok("hvb.AAAAAQ", URLSAFE, 120)),
    # Terraform Cloud docs: API tokens are 14 characters, ".atlasv1.", then 67 characters.
    Cred(
        "terraform_cloud_token",
        "cloud",
        "TFE_TOKEN",
        pair(tok("", ALNUM, 14), tok("", ALNUM, 67), "{a}.atlasv1.{b}"),
    ),
    # Pulumi docs: access tokens pul- + 40 hex.
    Cred("pulumi_access_token", "cloud", "PULUMI_ACCESS_TOKEN", tok("pul-", HEX, 40)),
    # Doppler docs: service tokens dp.st.<config>.<40 chars>.
    Cred("doppler_service_token", "cloud", "DOPPLER_TOKEN", tok("dp.st.prd.", ALNUM, 40)),
    # 1Password docs: service account tokens start ops_ followed by base64 JSON.
    Cred(
        "onepassword_service_account",
        "cloud",
        "OP_SERVICE_ACCOUNT_TOKEN",
        tok("ops_eyJzaWduSW5BZGRyZXNzIjoi", B64, 300),
    ),
    # OpenSSH PROTOCOL.key: private keys are PEM-armoured "openssh-key-v1".
    Cred(
        "openssh_private_key",
        "cloud",
        "SSH_PRIVATE_KEY",
        pem(
            "OPENSSH PRIVATE KEY",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
            330,
        ),
        block=True,
    ),
    # RFC 8017 / OpenSSL: PKCS#1 RSA and SEC1 EC private keys.
    Cred(
        "rsa_private_key_pem",
        "cloud",
        "TLS_KEY",
        pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1170),
        block=True,
    ),
    Cred(
        "ec_private_key_pem", "cloud", "JWT_SIGNING_KEY", pem("EC PRIVATE KEY", "MHcCAQEEI", 110), block=True
    ),
    # --- ci ---
    # GitHub docs and "Behind GitHub's new authentication token formats": prefix, 30 random, CRC32 base62.
    Cred("github_pat_classic", "ci", "GITHUB_TOKEN", GHP[0], fix=GHP[1]),
    Cred("github_oauth_token", "ci", "GH_OAUTH_TOKEN", GHO[0], fix=GHO[1]),
    Cred("github_user_to_server_token", "ci", "GH_USER_TOKEN", GHU[0], fix=GHU[1]),
    Cred("github_app_installation_token", "ci", "GH_APP_TOKEN", GHS[0], fix=GHS[1]),
    Cred("github_refresh_token", "ci", "GH_REFRESH_TOKEN", GHR[0], fix=GHR[1]),
    # GitHub docs: fine-grained PATs github_pat_ + 22 + _ + 59.
    Cred(
        "github_fine_grained_pat",
        "ci",
        "GH_TOKEN",
        pair(tok("", ALNUM, 22), tok("", ALNUM, 59), "github_pat_{a}_{b}"),
    ),
    # GitLab docs "Token overview": glpat-, glrt-, glptt-, gldt- prefixes.
    Cred("gitlab_pat", "ci", "GITLAB_TOKEN", tok("glpat-", URLSAFE, 20)),
    Cred("gitlab_runner_token", "ci", "RUNNER_TOKEN", tok("glrt-", URLSAFE, 20)),
    Cred("gitlab_pipeline_trigger_token", "ci", "TRIGGER_TOKEN", tok("glptt-", HEX, 40)),
    Cred("gitlab_deploy_token", "ci", "DEPLOY_TOKEN", tok("gldt-", URLSAFE, 20)),
    # Bitbucket docs: app passwords / API tokens start ATBB.
    Cred("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", tok("ATBB", ALNUM, 32)),
    # Azure DevOps docs: new PATs are 84 characters with the AZDO signature at 76-80.
    Cred(
        "azure_devops_pat",
        "ci",
        "AZURE_DEVOPS_EXT_PAT",
        pair(tok("", ALNUM, 52), tok("", ALNUM, 24), "{a}{b}AZDO{a4}"),
    ),
    # CircleCI docs: personal API tokens CCIPAT_.
    Cred(
        "circleci_pat", "ci", "CIRCLECI_TOKEN", pair(tok("", ALNUM, 22), tok("", HEX, 40), "CCIPAT_{a}_{b}")
    ),
    # Jenkins docs: API tokens are 34 hex characters starting 11.
    Cred("jenkins_api_token", "ci", "JENKINS_API_TOKEN", tok("11", HEX, 32)),
    # Buildkite docs: API access tokens bkua_ + 40 hex, agent tokens bkct_.
    Cred("buildkite_api_token", "ci", "BUILDKITE_API_TOKEN", tok("bkua_", HEX, 40)),
    # JetBrains TeamCity docs: access tokens are JWT-like with a fixed header.
    Cred("teamcity_access_token", "ci", "TEAMCITY_TOKEN", teamcity),
    # SonarQube docs: user tokens squ_, project tokens sqp_, global analysis tokens sqa_, + 40 hex.
    Cred("sonarqube_user_token", "ci", "SONAR_TOKEN", tok("squ_", HEX, 40)),
    Cred("sonarqube_analysis_token", "ci", "SONAR_TOKEN", tok("sqa_", HEX, 40)),
    # Codecov and Snyk docs: upload token / API token are UUIDs.
    Cred("codecov_upload_token", "ci", "CODECOV_TOKEN", lambda r: (u := uuid4(r), u)),
    Cred("snyk_token", "ci", "SNYK_TOKEN", lambda r: (u := uuid4(r), u)),
    # Octopus Deploy docs: API keys API- + 26 upper-case characters.
    Cred("octopus_api_key", "ci", "OCTOPUS_API_KEY", tok("API-", UPPER_ALNUM, 26)),
    # Harness docs: pat.<account id>.<token id>.<secret>.
    Cred(
        "harness_pat",
        "ci",
        "HARNESS_API_KEY",
        pair(tok("", URLSAFE, 22), tok("", ALNUM, 20), "pat.{a}.{c}.{b}"),
    ),
    # Drone docs: personal tokens are 32 characters.
    Cred("drone_token", "ci", "DRONE_TOKEN", tok("", ALNUM, 32)),
    # --- chat ---
    # Slack docs: bot xoxb-, user xoxp-, app-level xapp- tokens; incoming webhook URLs.
    Cred(
        "slack_bot_token",
        "chat",
        "SLACK_BOT_TOKEN",
        pair(tok("", DIGITS, 12), tok("", ALNUM, 24), "xoxb-{a}-{d}-{b}"),
    ),
    Cred(
        "slack_user_token",
        "chat",
        "SLACK_USER_TOKEN",
        pair(tok("", DIGITS, 12), tok("", HEX, 32), "xoxp-{a}-{d}-{d}{a4}-{b}"),
    ),
    Cred(
        "slack_app_token",
        "chat",
        "SLACK_APP_TOKEN",
        pair(tok("A0", UPPER_ALNUM, 9), tok("", HEX, 64), "xapp-1-{a}-{d}9-{b}"),
    ),
    Cred(
        "slack_incoming_webhook",
        "chat",
        "SLACK_WEBHOOK_URL",
        pair(tok("T0", UPPER_ALNUM, 8), tok("", ALNUM, 24), "https://hooks.slack.com/services/{a}/B0{d}/{b}"),
    ),
    # Discord docs: bot tokens are base64(user id).timestamp.HMAC; webhooks /api/webhooks/<id>/<token>.
    Cred("discord_bot_token", "chat", "DISCORD_TOKEN", discord_bot),
    Cred(
        "discord_webhook",
        "chat",
        "DISCORD_WEBHOOK",
        pair(tok("1", DIGITS, 18), tok("", URLSAFE, 68), "https://discord.com/api/webhooks/{a}/{b}"),
    ),
    # Telegram Bot API docs: <bot id>:<35 characters>, e.g. 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11.
    Cred(
        "telegram_bot_token",
        "chat",
        "TELEGRAM_BOT_TOKEN",
        pair(tok("", DIGITS, 10), tok("AA", URLSAFE, 33), "{a}:{b}"),
    ),
    # Microsoft Teams docs: incoming webhook URLs under webhook.office.com.
    Cred("teams_incoming_webhook", "chat", "TEAMS_WEBHOOK_URL", teams_webhook),
    # Mattermost docs: personal access tokens are 26 lower-case characters.
    Cred("mattermost_pat", "chat", "MM_TOKEN", tok("", LOWER_ALNUM, 26)),
    # Twilio docs: API key SID SK + 32 hex with a separate 32-character secret; auth token 32 hex.
    Cred(
        "twilio_api_key_secret",
        "chat",
        "TWILIO_API",
        pair(tok("SK", HEX, 32), tok("", ALNUM, 32), "TWILIO_API_KEY={a}\nTWILIO_API_SECRET={b}"),
    ),
    Cred("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", tok("", HEX, 32)),
    # Vonage docs: API secret 16 characters next to an 8-hex API key.
    Cred("vonage_api_secret", "chat", "VONAGE_API_SECRET", tok("", ALNUM, 16)),
    # LINE Messaging API docs: channel access token (long, base64-like) and 32-hex channel secret.
    Cred("line_channel_access_token", "chat", "LINE_CHANNEL_ACCESS_TOKEN", tok("", B64, 171, "=")),
    Cred("line_channel_secret", "chat", "LINE_CHANNEL_SECRET", tok("", HEX, 32)),
    # WeChat Official Accounts docs: AppSecret is 32 hex (the AppID wx... is public).
    Cred("wechat_app_secret", "chat", "WECHAT_APPSECRET", tok("", HEX, 32)),
    # DingTalk docs: robot webhook access_token (64 hex) and signing secret SEC + 64 hex.
    Cred("dingtalk_robot_webhook", "chat", "DINGTALK_WEBHOOK", dingtalk),
    Cred("dingtalk_robot_secret", "chat", "DINGTALK_SECRET", tok("SEC", HEX, 64)),
    # Feishu/Lark docs: custom bot webhook /open-apis/bot/v2/hook/<uuid>; the uuid is the secret.
    Cred(
        "feishu_bot_webhook",
        "chat",
        "FEISHU_WEBHOOK",
        pair(
            lambda r: ("", ""),
            lambda r: (u := uuid4(r), u),
            "https://open.feishu.cn/open-apis/bot/v2/hook/{b}",
        ),
    ),
    # Zulip docs: zuliprc holds a 32-character API key.
    Cred("zulip_api_key", "chat", "ZULIP_API_KEY", tok("", ALNUM, 32)),
    # Rocket.Chat docs: X-Auth-Token is 43 characters.
    Cred("rocketchat_auth_token", "chat", "ROCKETCHAT_AUTH_TOKEN", tok("", URLSAFE, 43)),
    # --- payment ---
    # Stripe docs: secret keys sk_live_, restricted keys rk_live_, webhook signing secrets whsec_.
    Cred("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", tok("sk_live_51", ALNUM, 97)),
    Cred("stripe_restricted_key", "payment", "STRIPE_RESTRICTED_KEY", tok("rk_live_51", ALNUM, 97)),
    Cred("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", tok("whsec_", ALNUM, 32)),
    # Braintree docs: PayPal-Braintree access tokens access_token$production$<merchant>$<secret>.
    Cred("braintree_access_token", "payment", "BRAINTREE_ACCESS_TOKEN", braintree),
    # PayPal REST docs: client secret is 80 characters.
    Cred("paypal_client_secret", "payment", "PAYPAL_CLIENT_SECRET", tok("E", URLSAFE, 79)),
    # Square docs: production access tokens EAAA..., OAuth application secrets sq0csp-.
    Cred("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", tok("EAAA", URLSAFE, 60)),
    Cred("square_oauth_secret", "payment", "SQUARE_APP_SECRET", tok("sq0csp-", URLSAFE, 43)),
    # Adyen docs: API keys start AQE and are long base64-like strings.
    Cred("adyen_api_key", "payment", "ADYEN_API_KEY", tok("AQEyhmfxK", B64, 150)),
    # Razorpay docs: key id rzp_live_ (public) with a 24-character key secret.
    Cred(
        "razorpay_key_secret",
        "payment",
        "RAZORPAY",
        pair(tok("rzp_live_", ALNUM, 14), tok("", ALNUM, 24), "key_id: {a}\nkey_secret: {b}"),
    ),
    # Paystack docs: secret keys sk_live_ + 40 hex.
    Cred("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", tok("sk_live_", HEX, 40)),
    # Flutterwave docs: secret keys FLWSECK-<32 hex>-X.
    Cred("flutterwave_secret_key", "payment", "FLW_SECRET_KEY", tok("FLWSECK-", HEX, 32, "-X")),
    # Mercado Pago docs: production access tokens APP_USR-...
    Cred("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", mercadopago),
    # Mollie docs: live API keys live_ + 30 characters.
    Cred("mollie_api_key", "payment", "MOLLIE_API_KEY", tok("live_", ALNUM, 30)),
    # GoCardless docs: live access tokens live_ + 40 characters.
    Cred("gocardless_access_token", "payment", "GOCARDLESS_ACCESS_TOKEN", tok("live_", URLSAFE, 40)),
    # Plaid docs: secrets are 30 hex characters.
    Cred("plaid_secret", "payment", "PLAID_SECRET", tok("", HEX, 30)),
    # Wise docs: API tokens are UUIDs.
    Cred("wise_api_token", "payment", "WISE_API_TOKEN", lambda r: (u := uuid4(r), u)),
    # Midtrans docs: server keys Mid-server-...
    Cred("midtrans_server_key", "payment", "MIDTRANS_SERVER_KEY", tok("Mid-server-", URLSAFE, 24)),
    # Xendit docs: secret keys xnd_production_...
    Cred("xendit_secret_key", "payment", "XENDIT_SECRET_KEY", tok("xnd_production_", ALNUM, 60)),
    # Checkout.com docs: secret keys sk_ + UUID-like (sandbox sk_sbox_).
    Cred("checkout_com_secret_key", "payment", "CKO_SECRET_KEY", lambda r: (f"sk_{(u := uuid4(r))}", u)),
    # --- database ---
    # libpq docs: postgresql://user:password@host:port/db and the ~/.pgpass line.
    Cred(
        "postgres_url",
        "database",
        "DATABASE_URL",
        url_password("postgresql://{user}:{pw}@{host}.internal:5432/orders"),
    ),
    Cred("pgpass_line", "database", "PGPASSFILE", pgpass),
    # MySQL docs: mysql://user:password@host/db and mysql -p'password'.
    Cred("mysql_url", "database", "MYSQL_URL", url_password("mysql://{user}:{pw}@{host}:3306/shop")),
    Cred("mysql_cli_password", "database", "MYSQL_CMD", mysql_cli),
    # MongoDB docs: mongodb+srv://user:password@cluster.
    Cred(
        "mongodb_srv_url",
        "database",
        "MONGODB_URI",
        url_password("mongodb+srv://{user}:{pw}@cluster{n}.x7k2q.mongodb.net/app"),
    ),
    # Redis docs: redis://default:password@host:port.
    Cred(
        "redis_url", "database", "REDIS_URL", url_password("rediss://default:{pw}@{host}.cache.local:6380/0")
    ),
    # Microsoft docs: SQL Server ADO.NET connection strings with Password=.
    Cred("sqlserver_connection_string", "database", "ConnectionStrings__Default", sqlserver_ado),
    # Microsoft JDBC docs: jdbc:sqlserver://...;password=...
    Cred(
        "jdbc_sqlserver_url",
        "database",
        "SPRING_DATASOURCE_URL",
        url_password("jdbc:sqlserver://{host}:1433;databaseName=erp;user={user};password={pw}"),
    ),
    # Azure Cosmos DB docs: AccountEndpoint=...;AccountKey=<88 base64>.
    Cred("cosmosdb_connection_string", "database", "COSMOS_CONNECTION_STRING", cosmos),
    # Snowflake connector docs: snowflake://user:password@account/db.
    Cred(
        "snowflake_url",
        "database",
        "SNOWFLAKE_URL",
        url_password("snowflake://{user}:{pw}@xy12345.eu-central-1/ANALYTICS"),
    ),
    # PlanetScale docs: passwords pscale_pw_, service tokens pscale_tkn_.
    Cred("planetscale_password", "database", "PLANETSCALE_PASSWORD", tok("pscale_pw_", URLSAFE, 43)),
    Cred(
        "planetscale_service_token", "database", "PLANETSCALE_SERVICE_TOKEN", tok("pscale_tkn_", URLSAFE, 43)
    ),
    # Neon docs: role passwords npg_ + 12 characters in the connection string.
    Cred(
        "neon_postgres_url",
        "database",
        "DATABASE_URL",
        lambda r: (
            f"postgresql://neondb_owner:npg_{(p := rnd(r, ALNUM, 12))}@ep-{rnd(r, LOWER, 6)}-{rnd(r, LOWER, 6)}-a1b2c3d4.eu-central-1.aws.neon.tech/neondb?sslmode=require",
            p,
        ),
    ),
    # Supabase docs: the service_role key is a JWT that bypasses row level security; access tokens sbp_.
    Cred("supabase_service_role_key", "database", "SUPABASE_SERVICE_ROLE_KEY", supabase_service_role),
    Cred("supabase_access_token", "database", "SUPABASE_ACCESS_TOKEN", tok("sbp_", HEX, 40)),
    # Databricks docs: personal access tokens dapi + 32 hex.
    Cred("databricks_pat", "database", "DATABRICKS_TOKEN", tok("dapi", HEX, 32)),
    # DataStax Astra docs: application tokens AstraCS:<24>:<64 hex>.
    Cred(
        "astra_db_token",
        "database",
        "ASTRA_DB_APPLICATION_TOKEN",
        pair(tok("", ALNUM, 24), tok("", HEX, 64), "AstraCS:{a}:{b}"),
    ),
    # Elastic docs: API keys sent as "ApiKey base64(id:key)".
    Cred("elasticsearch_api_key", "database", "ELASTIC_API_KEY", elastic_api_key),
    # Upstash docs: REST tokens are long base64 starting A.
    Cred("upstash_redis_rest_token", "database", "UPSTASH_REDIS_REST_TOKEN", tok("AX", B64, 66, "=")),
    # ClickHouse Cloud docs: clickhouse-client --password.
    Cred(
        "clickhouse_password", "database", "CLICKHOUSE_PASSWORD", lambda r: (p := rnd(r, ALNUM + "~_", 18), p)
    ),
    # --- registry ---
    # npm docs: granular tokens npm_ + 36 characters (GitHub-style checksum); .npmrc _auth base64.
    Cred("npm_access_token", "registry", "NPM_TOKEN", NPM[0], fix=NPM[1]),
    Cred("npmrc_legacy_auth", "registry", "NPMRC", npmrc_auth, block=True),
    # PyPI docs: API tokens pypi-AgEIcHlwaS5vcmc... used with username __token__.
    Cred("pypi_api_token", "registry", "PYPIRC", pypirc, block=True),
    # Docker docs: personal access tokens dckr_pat_; config.json "auth" is base64(user:token).
    Cred("docker_hub_pat", "registry", "DOCKERHUB_TOKEN", tok("dckr_pat_", URLSAFE, 27)),
    Cred("docker_config_auth", "registry", "DOCKER_CONFIG_JSON", docker_config, block=True),
    # NuGet docs: API keys oy2 + 43 lower-case characters.
    Cred("nuget_api_key", "registry", "NUGET_API_KEY", tok("oy2", LOWER_ALNUM, 43)),
    # RubyGems docs: API keys rubygems_ + 48 hex.
    Cred("rubygems_api_key", "registry", "GEM_HOST_API_KEY", tok("rubygems_", HEX, 48)),
    # crates.io docs: API tokens cio + 32 characters.
    Cred("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", tok("cio", ALNUM, 32)),
    # JFrog docs: API keys AKCp + 69 characters; reference tokens base64 "reftkn:01:...".
    Cred("artifactory_api_key", "registry", "ARTIFACTORY_API_KEY", tok("AKCp", ALNUM, 69)),
    Cred("jfrog_reference_token", "registry", "JFROG_ACCESS_TOKEN", tok("cmVmdGtuOjAxOjE3", ALNUM, 48)),
    # Sonatype OSSRH docs: the user token password inside Maven's settings.xml.
    Cred("maven_settings_password", "registry", "MAVEN_SETTINGS", maven_settings, block=True),
    # Cloudsmith docs: API keys are 40 hex.
    Cred("cloudsmith_api_key", "registry", "CLOUDSMITH_API_KEY", tok("", HEX, 40)),
    # Gradle Plugin Portal docs: gradle.publish.secret in gradle.properties.
    Cred("gradle_publish_secret", "registry", "gradle.publish.secret", tok("", ALNUM, 32)),
    # Anaconda docs: anaconda.org tokens.
    Cred("anaconda_token", "registry", "ANACONDA_API_TOKEN", tok("", LOWER_ALNUM + "-", 30)),
    # --- observability ---
    # Datadog docs: API keys 32 hex, application keys 40 hex.
    Cred("datadog_api_key", "observability", "DD_API_KEY", tok("", HEX, 32)),
    Cred("datadog_app_key", "observability", "DD_APP_KEY", tok("", HEX, 40)),
    # New Relic docs: user keys NRAK- + 27, license (ingest) keys 36 hex + NRAL.
    Cred("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", tok("NRAK-", UPPER_ALNUM, 27)),
    Cred("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", tok("", HEX, 36, "NRAL")),
    # Sentry docs: user auth tokens sntryu_ + 64 hex, organization tokens sntrys_.
    Cred("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", tok("sntryu_", HEX, 64)),
    Cred("sentry_org_token", "observability", "SENTRY_AUTH_TOKEN", tok("sntrys_eyJpYXQiOj", B64, 120)),
    # Grafana docs: service account tokens glsa_<32>_<8 hex>, Cloud access policy tokens glc_.
    Cred(
        "grafana_service_account_token",
        "observability",
        "GRAFANA_TOKEN",
        pair(tok("", ALNUM, 32), tok("", HEX, 8), "glsa_{a}_{b}"),
    ),
    Cred("grafana_cloud_token", "observability", "GRAFANA_CLOUD_TOKEN", tok("glc_eyJvIjoi", B64, 140)),
    # Honeycomb docs: ingest keys hcaik_.
    Cred("honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", tok("hcaik_", LOWER_ALNUM, 58)),
    # PagerDuty docs: Events API v2 routing keys are 32 characters; REST API keys 20 characters.
    Cred("pagerduty_routing_key", "observability", "PAGERDUTY_ROUTING_KEY", tok("", HEX, 32)),
    Cred("pagerduty_api_key", "observability", "PAGERDUTY_TOKEN", tok("u+", URLSAFE, 18)),
    # Splunk docs: HEC tokens are UUIDs sent as "Authorization: Splunk <token>".
    Cred("splunk_hec_token", "observability", "SPLUNK_HEC_TOKEN", lambda r: (u := uuid4(r), u)),
    # Dynatrace docs: tokens dt0c01.<24 upper>.<64 upper>.
    Cred(
        "dynatrace_token",
        "observability",
        "DT_API_TOKEN",
        pair(tok("", UPPER_ALNUM, 24), tok("", UPPER_ALNUM, 64), "dt0c01.{a}.{b}"),
    ),
    # Opsgenie docs: API keys are UUIDs sent as "GenieKey <key>".
    Cred("opsgenie_api_key", "observability", "OPSGENIE_API_KEY", lambda r: (u := uuid4(r), u)),
    # Rollbar docs: project access tokens 32 hex.
    Cred("rollbar_access_token", "observability", "ROLLBAR_ACCESS_TOKEN", tok("", HEX, 32)),
    # InfluxDB docs: API tokens are 86 characters + "==".
    Cred("influxdb_token", "observability", "INFLUX_TOKEN", tok("", URLSAFE, 86, "==")),
    # Sumo Logic docs: HTTP source URLs hold the secret in the path.
    Cred("sumologic_http_source", "observability", "SUMO_URL", sumo),
    # Axiom docs: API tokens xaat- + UUID.
    Cred("axiom_api_token", "observability", "AXIOM_TOKEN", lambda r: (f"xaat-{(u := uuid4(r))}", u)),
    # Better Stack docs: source tokens 24 characters.
    Cred("betterstack_source_token", "observability", "LOGTAIL_SOURCE_TOKEN", tok("", ALNUM, 24)),
    # --- ai ---
    # OpenAI docs: project keys sk-proj-, legacy keys sk-<20>T3BlbkFJ<20>.
    Cred("openai_project_key", "ai", "OPENAI_API_KEY", tok("sk-proj-", URLSAFE, 156)),
    Cred(
        "openai_legacy_key",
        "ai",
        "OPENAI_API_KEY",
        pair(tok("", ALNUM, 20), tok("", ALNUM, 20), "sk-{a}T3BlbkFJ{b}"),
    ),
    # Anthropic docs: API keys sk-ant-api03-<93>AA.
    Cred("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", tok("sk-ant-api03-", URLSAFE, 93, "AA")),
    # Hugging Face docs: user access tokens hf_ + 34 letters.
    Cred("huggingface_token", "ai", "HF_TOKEN", tok("hf_", UPPER + LOWER, 34)),
    # Cohere and Mistral docs: keys of 40 and 32 characters under their env names.
    Cred("cohere_api_key", "ai", "CO_API_KEY", tok("", ALNUM, 40)),
    Cred("mistral_api_key", "ai", "MISTRAL_API_KEY", tok("", ALNUM, 32)),
    # Groq docs: gsk_ + 52; Replicate: r8_ + 37; Perplexity: pplx- + 48; xAI: xai- + 80.
    Cred("groq_api_key", "ai", "GROQ_API_KEY", tok("gsk_", ALNUM, 52)),
    Cred("replicate_api_token", "ai", "REPLICATE_API_TOKEN", tok("r8_", ALNUM, 37)),
    Cred("perplexity_api_key", "ai", "PPLX_API_KEY", tok("pplx-", ALNUM, 48)),
    Cred("xai_api_key", "ai", "XAI_API_KEY", tok("xai-", ALNUM, 80)),
    # OpenRouter docs: sk-or-v1- + 64 hex.
    Cred("openrouter_api_key", "ai", "OPENROUTER_API_KEY", tok("sk-or-v1-", HEX, 64)),
    # DeepSeek and Alibaba DashScope (Qwen) docs: sk- + 32 hex.
    Cred("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", tok("sk-", HEX, 32)),
    Cred("dashscope_api_key", "ai", "DASHSCOPE_API_KEY", tok("sk-", HEX, 32)),
    # Moonshot (Kimi) docs: sk- + 48 characters.
    Cred("moonshot_api_key", "ai", "MOONSHOT_API_KEY", tok("sk-", ALNUM, 48)),
    # Together AI docs: 64 hex; Fireworks: fw_ + 24; ElevenLabs: sk_ + 48 hex.
    Cred("together_api_key", "ai", "TOGETHER_API_KEY", tok("", HEX, 64)),
    Cred("fireworks_api_key", "ai", "FIREWORKS_API_KEY", tok("fw_", ALNUM, 24)),
    Cred("elevenlabs_api_key", "ai", "ELEVENLABS_API_KEY", tok("sk_", HEX, 48)),
    # Pinecone docs: API keys pcsk_.
    Cred(
        "pinecone_api_key",
        "ai",
        "PINECONE_API_KEY",
        pair(tok("", ALNUM, 5), tok("", ALNUM, 64), "pcsk_{a}_{b}"),
    ),
    # LangSmith docs: personal tokens lsv2_pt_<32 hex>_<10 hex>.
    Cred(
        "langsmith_api_key",
        "ai",
        "LANGSMITH_API_KEY",
        pair(tok("", HEX, 32), tok("", HEX, 10), "lsv2_pt_{a}_{b}"),
    ),
    # Weights & Biases docs: a 40-hex key in ~/.netrc for api.wandb.ai.
    Cred("wandb_api_key", "ai", "WANDB_NETRC", wandb_netrc, block=True),
    # Azure OpenAI docs: api-key header of 32 hex.
    Cred("azure_openai_key", "ai", "AZURE_OPENAI_API_KEY", tok("", HEX, 32)),
    # AssemblyAI docs: 32 hex; Voyage AI: pa- prefix.
    Cred("assemblyai_api_key", "ai", "ASSEMBLYAI_API_KEY", tok("", HEX, 32)),
    Cred("voyage_api_key", "ai", "VOYAGE_API_KEY", tok("pa-", URLSAFE, 43)),
    # --- saas ---
    # SendGrid docs: SG.<22>.<43>; Mailgun: key- + 32 hex; Mailchimp: 32 hex + -us<n>.
    Cred(
        "sendgrid_api_key",
        "saas",
        "SENDGRID_API_KEY",
        pair(tok("", URLSAFE, 22), tok("", URLSAFE, 43), "SG.{a}.{b}"),
    ),
    Cred("mailgun_api_key", "saas", "MAILGUN_API_KEY", tok("key-", HEX, 32)),
    Cred("mailchimp_api_key", "saas", "MAILCHIMP_API_KEY", tok("", HEX, 32, "-us21")),
    # Postmark docs: server tokens are UUIDs sent as X-Postmark-Server-Token.
    Cred("postmark_server_token", "saas", "POSTMARK_SERVER_TOKEN", lambda r: (u := uuid4(r), u)),
    # Shopify docs: Admin API tokens shpat_, shared secrets shpss_, + 32 hex.
    Cred("shopify_admin_token", "saas", "SHOPIFY_ACCESS_TOKEN", tok("shpat_", HEX, 32)),
    Cred("shopify_shared_secret", "saas", "SHOPIFY_API_SECRET", tok("shpss_", HEX, 32)),
    # Atlassian docs: API tokens ATATT3xFfGF0... with an 8-hex checksum.
    Cred("atlassian_api_token", "saas", "JIRA_API_TOKEN", atlassian),
    # Notion docs: integration secrets ntn_ (formerly secret_).
    Cred(
        "notion_integration_secret",
        "saas",
        "NOTION_TOKEN",
        pair(tok("", DIGITS, 11), tok("", ALNUM, 35), "ntn_{a}{b}"),
    ),
    # Linear docs: API keys lin_api_ + 40.
    Cred("linear_api_key", "saas", "LINEAR_API_KEY", tok("lin_api_", ALNUM, 40)),
    # Airtable docs: personal access tokens pat<14>.<64 hex>.
    Cred("airtable_pat", "saas", "AIRTABLE_TOKEN", pair(tok("pat", ALNUM, 14), tok("", HEX, 64), "{a}.{b}")),
    # HubSpot docs: private app tokens pat-na1-<uuid>.
    Cred(
        "hubspot_private_app_token",
        "saas",
        "HUBSPOT_ACCESS_TOKEN",
        lambda r: (f"pat-na1-{(u := uuid4(r))}", u),
    ),
    # Figma docs: personal access tokens figd_.
    Cred("figma_pat", "saas", "FIGMA_TOKEN", tok("figd_", URLSAFE, 40)),
    # Dropbox docs: short-lived access tokens sl. + long string.
    Cred("dropbox_access_token", "saas", "DROPBOX_ACCESS_TOKEN", tok("sl.", URLSAFE, 135)),
    # Intercom docs: access tokens are base64 of "tok:<uuid>...".
    Cred("intercom_access_token", "saas", "INTERCOM_ACCESS_TOKEN", intercom),
    # Contentful docs: CMA personal tokens CFPAT-.
    Cred("contentful_cma_token", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", tok("CFPAT-", URLSAFE, 43)),
    # Okta docs: API tokens 00 + 40 characters, sent as "SSWS <token>".
    Cred("okta_api_token", "saas", "OKTA_API_TOKEN", tok("00", URLSAFE, 40)),
    # Auth0 docs: client secrets of 64 characters.
    Cred("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", tok("", URLSAFE, 64)),
    # Meta Graph API docs: access tokens start EAA.
    Cred("meta_access_token", "saas", "FB_PAGE_ACCESS_TOKEN", tok("EAAG", ALNUM, 180)),
    # Salesforce docs: access tokens <org id>!<long string>.
    Cred(
        "salesforce_access_token",
        "saas",
        "SF_ACCESS_TOKEN",
        pair(tok("00D", ALNUM, 15), tok("AQ", URLSAFE + ".", 96), "{a}!{b}"),
    ),
    # Mapbox docs: secret tokens sk.eyJ1... (pk. tokens are public).
    Cred(
        "mapbox_secret_token",
        "saas",
        "MAPBOX_SECRET_TOKEN",
        pair(tok("", LOWER, 8), tok("", URLSAFE, 22), "sk.eyJ1Ijoi{a}IiwiYSI6ImNs{a}In0.{b}"),
    ),
    # Algolia docs: the admin API key (32 hex) must never reach the front end.
    Cred("algolia_admin_key", "saas", "ALGOLIA_ADMIN_API_KEY", tok("", HEX, 32)),
    # Postman docs: API keys PMAK-<24 hex>-<34 hex>.
    Cred(
        "postman_api_key", "saas", "POSTMAN_API_KEY", pair(tok("", HEX, 24), tok("", HEX, 34), "PMAK-{a}-{b}")
    ),
    # ClickUp docs: personal tokens pk_<user id>_<32 upper>.
    Cred(
        "clickup_token",
        "saas",
        "CLICKUP_TOKEN",
        pair(tok("", DIGITS, 8), tok("", UPPER_ALNUM, 32), "pk_{a}_{b}"),
    ),
    # EasyPost docs: production keys EZAK + 54 hex; Shippo: shippo_live_ + 40 hex.
    Cred("easypost_api_key", "saas", "EASYPOST_API_KEY", tok("EZAK", HEX, 54)),
    Cred("shippo_api_token", "saas", "SHIPPO_API_TOKEN", tok("shippo_live_", HEX, 40)),
    # Twitter/X docs: app-only bearer tokens start with a run of A then URL-encoded base64.
    Cred("x_bearer_token", "saas", "TWITTER_BEARER_TOKEN", tok("AAAAAAAAAAAAAAAAAAAAA", ALNUM, 90)),
    # Cloudinary docs: CLOUDINARY_URL=cloudinary://<key>:<secret>@<cloud>.
    Cred("cloudinary_url", "saas", "CLOUDINARY_URL", cloudinary),
    # Zendesk docs: API tokens of 40 characters used as email/token basic auth.
    Cred("zendesk_api_token", "saas", "ZENDESK_API_TOKEN", tok("", ALNUM, 40)),
    # RFC 7617: a Basic authorization header is base64(user:password).
    Cred("http_basic_auth_header", "saas", "Authorization", basic_auth),
    # Values under secret names, no vendor prefix: what the issue calls "32 hex under a secret name".
    Cred("vendor_auth_token_hex", "saas", "ACME_AUTH_TOKEN", tok("", HEX, 32)),
    Cred("generic_api_key_random", "saas", "api_key", tok("", ALNUM, 32)),
    Cred("generic_password_words", "saas", "password", lambda r: (p := password(r), p)),
    Cred("generic_client_secret_b64", "saas", "client_secret", lambda r: (v := b64(r.randbytes(32)), v)),
]


Filler = dict[str, str]


def filler(r: random.Random) -> Filler:
    return {
        "person": r.choice(
            ["Priya", "Mateo", "Aiko", "Lukas", "Fatima", "Olu", "Chen Wei", "Sofia", "Dmitri", "Amara"]
        ),
        "service": r.choice(
            ["billing-api", "ingest-worker", "checkout", "notifier", "search-sync", "reports"]
        ),
        "env": r.choice(["prod", "staging", "dev", "eu-prod", "qa"]),
        "date": f"2026-{r.randint(1, 11):02d}-{r.randint(1, 28):02d}",
        "time": f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}",
        "ticket": f"{r.choice(['OPS', 'INC', 'PLAT', 'SEC'])}-{r.randint(100, 9999)}",
        "pr": str(r.randint(12, 4800)),
        "line": str(r.randint(10, 400)),
        "region": r.choice(["eu-west-1", "us-east-2", "ap-southeast-1", "sa-east-1", "me-central-1"]),
    }


def camel(name: str) -> str:
    parts = name.replace(".", "_").replace("-", "_").lower().split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


# A context turns (variable name, value, filler) into a memory text.
Context = Callable[[str, str, Filler], str]

NAMED: list[Context] = [
    lambda n, v, f: f"{n}={v}",
    lambda n, v, f: f"# {f['service']} .env.{f['env']}\nLOG_LEVEL=info\n{n}={v}\nPORT=8080",
    lambda n, v, f: f"$ export {n}='{v}'\n$ ./scripts/deploy.sh {f['env']}",
    lambda n, v, f: f'env:\n  - name: {n}\n    value: "{v}"\n  - name: REGION\n    value: {f["region"]}',
    lambda n, v, f: f'{{\n  "service": "{f["service"]}",\n  "{camel(n)}": "{v}",\n  "timeoutMs": 3000\n}}',
    lambda n, v, f: f'[{f["service"]}]\n{n.lower()} = "{v}"\nretries = 3',
    lambda n, v, f: f"; settings.ini for {f['service']}\n[auth]\n{n.lower()}={v}",
    lambda n, v, f: f'{n.lower()} = "{v}"  # TODO move to the secret manager before {f["date"]}',
    lambda n, v, f: f"const {camel(n)} = '{v}';\nexport default {{ {camel(n)} }};",
    lambda n, v, f: f'{camel(n)} := "{v}" // temporary, see {f["ticket"]}',
    lambda n, v, f: f'let {n.lower()}: &str = "{v}";',
    lambda n, v, f: f'private static final String {n.upper().replace(".", "_")} = "{v}";',
    lambda n, v, f: f'"{n}": "{v}",  // appsettings.{f["env"].capitalize()}.json',
    lambda n, v, f: (
        f'resource "kubernetes_secret" "{f["service"]}" {{\n  data = {{\n    {n.lower()} = "{v}"\n  }}\n}}'
    ),
    lambda n, v, f: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {f['service']}\nstringData:\n  {n}: {v}"
    ),
    lambda n, v, f: (
        f"services:\n  {f['service']}:\n    image: acme/{f['service']}:1.8\n    environment:\n      {n}: {v}"
    ),
    lambda n, v, f: f"- name: Deploy\n  run: ./deploy.sh\n  env:\n    {n}: {v}",
    lambda n, v, f: f"ENV {n}={v}",
    lambda n, v, f: (
        f"kubectl create secret generic {f['service']} --from-literal={n.lower()}={v} -n {f['env']}"
    ),
    lambda n, v, f: f"[Service]\nEnvironment={n}={v}\nExecStart=/usr/bin/{f['service']}",
    lambda n, v, f: f'$env:{n} = "{v}"',
    lambda n, v, f: f'{f["service"]}_vars:\n  {n.lower()}: "{v}"',
    lambda n, v, f: f"| setting | value |\n|---|---|\n| region | {f['region']} |\n| {n} | `{v}` |",
    lambda n, v, f: f'<appSettings>\n  <add key="{n}" value="{v}" />\n</appSettings>',
    lambda n, v, f: (
        f"Runbook {f['ticket']}: if the sync stalls, restart {f['service']} with {n}={v} and watch the queue."
    ),
    lambda n, v, f: (
        f"PR #{f['pr']} description: wires {f['service']} to the new provider. Tested locally with {n}={v}"
    ),
    lambda n, v, f: (
        f"{f['date']}T{f['time']}Z DEBUG {f['service']} config loaded {n.lower()}={v} region={f['region']}"
    ),
    lambda n, v, f: (
        "Traceback (most recent call last):\n"
        f'  File "/srv/{f["service"]}/client.py", line {f["line"]}, in connect\n'
        f"    raise AuthError(f'401 for {{{n.lower()}}}')\n"
        f"AuthError: 401 for {v}"
    ),
    lambda n, v, f: f"In [12]: import os\nIn [13]: os.environ['{n}'] = '{v}'\nIn [14]: client = Client()",
    lambda n, v, f: f"helm upgrade {f['service']} ./chart --set secrets.{camel(n)}={v}",
    lambda n, v, f: (
        f"Note to self ({f['date']}): {n} for {f['env']} is {v}; {f['person']} has the other one."
    ),
    lambda n, v, f: f"$ docker run -e {n}={v} acme/{f['service']}:latest",
    lambda n, v, f: f"set -gx {n} {v}",
    lambda n, v, f: f'config :{f["service"].replace("-", "_")}, {n.lower()}: "{v}"',
    lambda n, v, f: f"{n.lower()}: {v}  # copied from the vendor dashboard",
]

# Texts where the value has no name beside it: chat in several languages, screenshots, emails, commands.
BARE: list[Context] = [
    lambda n, v, f: f"{f['person']}: here's the key for the staging bot {v} — don't share it",
    lambda n, v, f: f"Voici le jeton pour le déploiement : {v} (valable jusqu'à vendredi)",
    lambda n, v, f: f"Hier ist der Schlüssel für {f['service']}: {v} — bitte nicht ins Repo committen.",
    lambda n, v, f: f"Te paso la clave de producción: {v} avísame cuando la rotes",
    lambda n, v, f: f"Segue a chave que o {f['person']} mandou: {v}",
    lambda n, v, f: f"本番用のトークンです: {v} 金曜までに入れ替えてください。",
    lambda n, v, f: f"生产环境的密钥是 {v}，用完记得删掉。",
    lambda n, v, f: f"Вот ключ для стенда {f['env']}: {v} — потом перевыпустим.",
    lambda n, v, f: f"스테이징 키 공유합니다: {v}",
    lambda n, v, f: f"Ecco il token per la pipeline: {v}",
    lambda n, v, f: f"Hier de sleutel voor {f['service']}: {v}",
    lambda n, v, f: f"Klucz do API na {f['env']}: {v} (nie wrzucaj do gita)",
    lambda n, v, f: f"{f['service']} için anahtar: {v}",
    lambda n, v, f: f"bhai ye lo {f['env']} wala key: {v} kal tak rotate kar denge",
    lambda n, v, f: f"هذا مفتاح الخدمة: {v}",
    lambda n, v, f: f"Khóa API cho môi trường {f['env']}: {v}",
    lambda n, v, f: f"Här är nyckeln till {f['service']}: {v}",
    lambda n, v, f: (
        f"[screenshot of the provider console, transcribed]\nName: {f['service']}-{f['env']}\nCreated: {f['date']}\n{v}\nCopy   Revoke"
    ),
    lambda n, v, f: (
        f"Subject: access for the {f['service']} integration\n\nHi {f['person']},\n\nas discussed, use {v}\n\nThanks"
    ),
    lambda n, v, f: f'curl -s -H "Authorization: Bearer {v}" https://api.internal/{f["service"]}/health',
    lambda n, v, f: (
        f"> {f['person']} ({f['time']}): {v}\n> {f['person']} ({f['time']}): oops wrong channel, rotating now"
    ),
    lambda n, v, f: (
        f"Incident {f['ticket']} timeline: {f['time']} found {v} in a public gist; revoked at {f['time']}."
    ),
    lambda n, v, f: f"- [ ] rotate {v} after the migration on {f['date']}",
]

# Texts that hold a whole file (keys, kubeconfigs, JSON key files).
BLOCK: list[Context] = [
    lambda n, v, f: f"{v}",
    lambda n, v, f: f"Saved {n} for {f['service']} ({f['env']}):\n```\n{v}\n```",
    lambda n, v, f: f"$ cat ~/.config/{f['service']}/{n.lower()}\n{v}\n$ ",
    lambda n, v, f: (
        f"Handoff for {f['person']}: the {f['env']} deploy reads this file.\n\n{v}\n\nDo not commit it."
    ),
    lambda n, v, f: f"{n}: |\n" + "\n".join("  " + line for line in v.split("\n")),
    lambda n, v, f: f"[screenshot of an editor, transcribed]\n{v}",
    lambda n, v, f: f"cat > /tmp/{f['service']}.cred <<'EOF'\n{v}\nEOF",
]

ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = [
    ("\u202e", "\u202c"),
    ("\u2066", "\u2069"),
    ("\u200f", ""),
    ("\u202d", "\u202c"),
    ("\u2067", "\u2069"),
]
PLACEHOLDER_WORDS = {
    "hex": ["deadbeef", "00000000", "cafebabe", "feedface", "abcdef12"],
    "digits": ["00000000", "12345678", "11111111"],
    "upper": ["EXAMPLE", "XXXXXXXX", "TEST", "DUMMY", "SAMPLE", "CHANGEME"],
    "lower": ["example", "xxxxxxxx", "test", "dummy", "sample", "changeme"],
    "mixed": [
        "EXAMPLE",
        "Example",
        "xxxx",
        "sample",
        "test",
        "dummy",
        "YourKey",
        "changeme",
        "XXXXXXXX",
        "fake",
    ],
}
DISGUISES = [
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent_encoded",
    "base64_value",
    "base64_line",
    "split_line",
    "placeholder_word",
]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def word_for(piece: str, r: random.Random) -> str:
    # Separators do not decide the family: a UUID is hex, whatever its dashes.
    chars = set(piece) - set("-_.~+/=")
    if chars <= set(HEX):
        family = "hex"
    elif chars <= set(DIGITS):
        family = "digits"
    elif chars <= set(UPPER_ALNUM + "234567"):
        family = "upper"
    elif chars <= set(LOWER_ALNUM):
        family = "lower"
    else:
        family = "mixed"
    return r.choice([w for w in PLACEHOLDER_WORDS[family] if len(w) <= len(piece) - 4] or ["0000"])


def middle(secret: str) -> str:
    k = min(16, len(secret))
    start = (len(secret) - k) // 2
    return secret[start : start + k]


def disguise_value(kind: str, value: str, at: int, r: random.Random) -> str:
    # `at` is where the secret piece's middle sits in the value: disguises land inside the secret.
    if kind == "zero_width":
        zw = r.choice(ZERO_WIDTH)
        if r.random() < 0.5:
            return value[:at] + zw + value[at:]
        return value[: at - 3] + zw + value[at - 3 : at + 2] + zw + value[at + 2 :]
    if kind == "soft_hyphen":
        return value[:at] + "\u00ad" + value[at:]
    if kind == "fullwidth":
        if r.random() < 0.5:
            return fullwidth(value)
        return value[: at - 4] + fullwidth(value[at - 4 : at + 4]) + value[at + 4 :]
    if kind == "bidi":
        start, end = r.choice(BIDI)
        return value[:at] + start + value[at : at + 4] + end + value[at + 4 :]
    if kind == "percent_encoded":
        return "".join(f"%{b:02X}" for b in value.encode())
    if kind == "base64_value":
        return b64(value)
    if kind == "split_line":
        brk = r.choice(["\n", "\\\n    ", "\n  ", "\r\n", "\n\t"])
        return value[:at] + brk + value[at:]
    raise ValueError("unknown disguise")


def base64_line(name: str, value: str, f: Filler, r: random.Random) -> str:
    blob = b64(f"{name}={value}\n")
    return r.choice(
        [
            f"echo '{blob}' | base64 -d >> .env",
            f"apiVersion: v1\nkind: Secret\ntype: Opaque\nmetadata:\n  name: {f['service']}-env\ndata:\n  .env: {blob}",
            f"restore the {f['env']} env file from this blob (base64): {blob}",
            f"{f['date']} {f['time']} INFO bootstrap payload={blob}",
        ]
    )


def percent_query(name: str, value: str, f: Filler) -> tuple[str, str]:
    # A callback URL carried inside another URL's query string gets encoded twice: token%3D...
    inner = f"https://app.acme.io/{f['service']}/sync?{name.lower()}={value}"
    raw = f"GET /login?next={inner} 302"
    return f"GET /login?next={quote(inner, safe='')} 302", raw


def credential_samples(r: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for cred in CREDENTIALS:
        for i in range(9):
            f = filler(r)
            value, sensitive = cred.make(r)
            # Two plain samples per kind, then about a third plain: ~40 % plain over the corpus.
            disguise = "plain" if i < 2 or r.random() < 0.3 else r.choice(DISGUISES)
            if disguise == "placeholder_word":
                start = value.index(sensitive)
                word = word_for(sensitive, r)
                at = start + len(sensitive) // 2 - len(word) // 2
                # Written over letters and digits only, so a UUID keeps its dashes and a key its dots.
                letters, k = list(value), at
                for ch in word:
                    while not letters[k].isalnum():
                        k += 1
                    letters[k] = ch
                    k += 1
                value = "".join(letters)
                if cred.fix is not None:
                    value = cred.fix(value)
                sensitive = value[start : start + len(sensitive)]
            piece = middle(sensitive)
            at = value.index(piece) + len(piece) // 2
            block = cred.block or "\n" in value
            # A connection string or "Basic ..." value reads oddly as a bare bearer token in chat: named texts only.
            bare_ok = "://" not in value and " " not in value
            context = r.choice(BLOCK if block else NAMED + BARE if bare_ok else NAMED)
            raw = context(cred.name, value, f)
            if disguise in ("plain", "placeholder_word"):
                text = raw
            elif disguise == "base64_line":
                raw = f"{cred.name}={value}\n"
                text = base64_line(cred.name, value, f, r)
            elif disguise == "percent_encoded" and not block and r.random() < 0.5:
                text, raw = percent_query(cred.name, value, f)
            else:
                text = context(cred.name, disguise_value(disguise, value, at, r), f)
            out.append((Sample(cred.kind, cred.group, text, disguise, piece), raw))
    return out


# --- look-alikes: not secret, in the same kinds of texts ---


def crockford(r: random.Random, n: int) -> str:
    return rnd(r, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", n)


def sha(r: random.Random, n: int = 40) -> str:
    return rnd(r, HEX, n)


LookAlike = Callable[[random.Random, Filler], str]

LOOKALIKES: dict[str, LookAlike] = {
    "git_commit_sha": lambda r, f: r.choice(
        [
            f"Fixed in commit {sha(r)} (backport {sha(r, 7)}), see PR #{f['pr']}.",
            f"git revert {sha(r)}\ngit push origin HEAD:{f['service']}-hotfix",
            f"Bisect result: first bad commit is {sha(r)} — touches the token refresh path.",
            f"HEAD detached at {sha(r, 12)}",
        ]
    ),
    "sha256_release_checksum": lambda r, f: (
        f"Release notes v{r.randint(1, 4)}.{r.randint(0, 20)}.{r.randint(0, 9)} — checksums (SHA-256):\n"
        f"{sha(r, 64)}  {f['service']}-linux-amd64.tar.gz\n{sha(r, 64)}  {f['service']}-darwin-arm64.tar.gz"
    ),
    "sha512_digest": lambda r, f: (
        f"sha512sum backup-{f['date']}.dump\n{sha(r, 128)}  backup-{f['date']}.dump"
    ),
    "npm_integrity_hash": lambda r, f: (
        f'"node_modules/{r.choice(["lodash", "react-dom", "zod", "undici"])}": {{\n'
        f'  "version": "{r.randint(1, 18)}.{r.randint(0, 9)}.{r.randint(0, 9)}",\n'
        f'  "integrity": "sha512-{b64(r.randbytes(64))}"\n}}'
    ),
    "lockfile_hashes": lambda r, f: r.choice(
        [
            f'[[package]]\nname = "serde"\nversion = "1.0.{r.randint(100, 220)}"\nchecksum = "{sha(r, 64)}"',
            f"golang.org/x/crypto v0.{r.randint(10, 40)}.0 h1:{b64(r.randbytes(32))}",
            f"requests==2.32.3 \\\n    --hash=sha256:{sha(r, 64)}",
            f'files = [\n    {{file = "pydantic-2.9.2.tar.gz", hash = "sha256:{sha(r, 64)}"}},\n]',
        ]
    ),
    "uuid_primary_key": lambda r, f: r.choice(
        [
            f"Row with primary key {uuid4(r)} was duplicated by the retry; deleted it.",
            f"Idempotency-Key: {uuid4(r)}\nContent-Type: application/json",
            f"The tenant id for {f['env']} is {uuid4(r)} (not secret, it is in every URL).",
            f"memory id {uuid4(r)} supersedes {uuid4(r)}",
            f"SELECT * FROM orders WHERE id = '{uuid4(r)}';",
        ]
    ),
    "ulid_ksuid": lambda r, f: r.choice(
        [
            f"event_id=01{crockford(r, 24)} type=order.created",
            f"KSUID {rnd(r, ALNUM, 27)} assigned to job {f['ticket']}",
            f"ulid: 01{crockford(r, 24)}",
        ]
    ),
    "stripe_public_object_ids": lambda r, f: r.choice(
        [
            f"Customer cus_{rnd(r, ALNUM, 14)} disputed charge ch_{rnd(r, ALNUM, 24)}; PaymentIntent pi_{rnd(r, ALNUM, 24)}.",
            f"price_{rnd(r, ALNUM, 24)} is the monthly plan, prod_{rnd(r, ALNUM, 14)} the product.",
            f"webhook evt_{rnd(r, ALNUM, 24)} retried 3 times (invoice in_{rnd(r, ALNUM, 24)})",
            f"publishableKey: 'pk_live_51{rnd(r, ALNUM, 97)}'  // Stripe.js, public by design",
        ]
    ),
    "slack_ids": lambda r, f: r.choice(
        [
            f"Post alerts to channel C0{rnd(r, UPPER_ALNUM, 9)} and mention U0{rnd(r, UPPER_ALNUM, 9)}.",
            f"team_id=T0{rnd(r, UPPER_ALNUM, 8)} channel=C0{rnd(r, UPPER_ALNUM, 9)} ts={r.randint(1700000000, 1790000000)}.{rnd(r, DIGITS, 6)}",
        ]
    ),
    "aws_arns_and_ids": lambda r, f: r.choice(
        [
            f"Assume role arn:aws:iam::{rnd(r, DIGITS, 12)}:role/{f['service']}-deployer in account {rnd(r, DIGITS, 12)}.",
            f"x-amzn-RequestId: {uuid4(r)}",
            f"Instance i-{sha(r, 17)} in subnet subnet-{sha(r, 17)}, sg-{sha(r, 17)}",
            f"KMS key arn:aws:kms:{f['region']}:{rnd(r, DIGITS, 12)}:key/{uuid4(r)}",
        ]
    ),
    "documented_placeholders": lambda r, f: r.choice(
        [
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            'curl -H "Authorization: Bearer YOUR-TOKEN" https://api.github.com/user',
            'export OPENAI_API_KEY="your_api_key_here"',
            "Stripe.api_key = '<your secret key>'  # sk_live_... from the dashboard",
            "SLACK_BOT_TOKEN=xoxb-your-token",
            "DD_API_KEY=<DATADOG_API_KEY>",
            'headers = {"x-api-key": "$ANTHROPIC_API_KEY"}',
            "password: ********",
            "token: <redacted>",
        ]
    ),
    "env_references": lambda r, f: r.choice(
        [
            "API_KEY=${API_KEY}",
            f'token = os.environ["{r.choice(["GITHUB_TOKEN", "SLACK_TOKEN", "STRIPE_SECRET_KEY"])}"]',
            "const key = process.env.STRIPE_SECRET_KEY ?? '';",
            "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
            f'password: "{{{{ vault_{f["service"].replace("-", "_")}_password }}}}"',
            "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
            f"aws secretsmanager get-secret-value --secret-id {f['env']}/{f['service']}/db",
        ]
    ),
    "kubernetes_secret_refs": lambda r, f: (
        f"env:\n- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: {f['service']}-secrets\n      key: api-token"
    ),
    "ansible_vault_reference": lambda r, f: (
        "db_password: !vault |\n          $ANSIBLE_VAULT;1.1;AES256\n"
        + "\n".join("          " + sha(r, 80) for _ in range(3))
    ),
    "ssh_public_keys": lambda r, f: r.choice(
        [
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rnd(r, B64, 43)} {f['person'].lower()}@laptop",
            f"Add to authorized_keys: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{rnd(r, B64, 360)} deploy@ci",
            f"Host key fingerprint is SHA256:{rnd(r, B64, 43)} (ED25519) — public key fingerprint, safe to share.",
        ]
    ),
    "pem_public_material": lambda r, f: r.choice(
        [
            "-----BEGIN PUBLIC KEY-----\n"
            + "\n".join(pem_body(r, "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA", 230))
            + "\n-----END PUBLIC KEY-----",
            "Our CA certificate (public):\n-----BEGIN CERTIFICATE-----\n"
            + "\n".join(pem_body(r, "MIIDdzCCAl+gAwIBAgIE", 700))
            + "\n-----END CERTIFICATE-----",
        ]
    ),
    "gpg_fingerprints": lambda r, f: (
        f"gpg --recv-keys {sha(r, 16).upper()}\nFingerprint: {' '.join(sha(r, 4).upper() for _ in range(10))}"
    ),
    "base64_ordinary_data": lambda r, f: r.choice(
        [
            f"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{b64(r.randbytes(120))}",
            f"The payload field is base64 of the message: {b64('Meeting moved to ' + f['date'] + ' at ' + f['time'] + ', room 4B.')}",
            f"font-src data:font/woff2;base64,d09GMgABAAAAA{b64(r.randbytes(90))}",
        ]
    ),
    "bundle_and_css_hashes": lambda r, f: r.choice(
        [
            f'<script src="/static/js/main.{sha(r, 8)}.js"></script>\n<link href="/static/css/main.{sha(r, 8)}.css">',
            f"chunk-vendors.{sha(r, 20)}.js  412 KiB",
            f"Content-Security-Policy: script-src 'self' 'sha256-{b64(r.randbytes(32))}'",
            f".button_{rnd(r, LOWER_ALNUM, 5)}__{rnd(r, URLSAFE, 5)} {{ color: var(--accent); }}",
        ]
    ),
    "video_and_share_ids": lambda r, f: r.choice(
        [
            f"Recording of the postmortem: https://www.youtube.com/watch?v={rnd(r, URLSAFE, 11)}",
            f"Design doc: https://docs.google.com/document/d/1{rnd(r, URLSAFE, 43)}/edit",
            f"Loom: https://www.loom.com/share/{sha(r, 32)}",
        ]
    ),
    "container_image_digests": lambda r, f: f"image: ghcr.io/acme/{f['service']}@sha256:{sha(r, 64)}",
    "nix_store_paths": lambda r, f: (
        f"/nix/store/{rnd(r, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.{r.randint(1, 15)}/lib"
    ),
    "ipfs_cids": lambda r, f: r.choice(
        [
            f"pinned ipfs://Qm{rnd(r, '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 44)}",
            f"CID bafybei{rnd(r, LOWER + '234567', 52)}",
        ]
    ),
    "trace_and_request_ids": lambda r, f: r.choice(
        [
            f"traceparent: 00-{sha(r, 32)}-{sha(r, 16)}-01",
            f"{f['date']}T{f['time']}Z ERROR {f['service']} trace_id={sha(r, 32)} span_id={sha(r, 16)} timeout",
            f"X-Request-Id: {sha(r, 32)}",
            f"cf-ray: {sha(r, 16)}-FRA",
            f"dd.trace_id={rnd(r, DIGITS, 19)} dd.span_id={rnd(r, DIGITS, 19)}",
        ]
    ),
    "prose_about_secrets": lambda r, f: r.choice(
        [
            "Policy: rotate the GitHub token every 90 days and store it only in the secret manager.",
            "Stripe secret keys start with sk_live_; never paste one into a ticket.",
            f"{f['person']} asked where the Datadog API key lives: it is in Vault under kv/observability.",
            "Lesson from the incident: the AWS secret access key was in a notebook cell. Use SSO profiles.",
            "The token count for that prompt was 18,432 (max_tokens=4096).",
            "Primary key and foreign key constraints are added in migration 0007.",
        ]
    ),
    "sentry_dsn_public": lambda r, f: (
        f"SENTRY_DSN=https://{sha(r, 32)}@o{rnd(r, DIGITS, 6)}.ingest.sentry.io/{rnd(r, DIGITS, 7)}  # DSNs are public by design"
    ),
    "public_client_ids": lambda r, f: r.choice(
        [
            f"GOOGLE_CLIENT_ID={rnd(r, DIGITS, 12)}-{rnd(r, LOWER_ALNUM, 32)}.apps.googleusercontent.com",
            f"GitHub App client id: Iv1.{sha(r, 16)}",
            f"NEXT_PUBLIC_MAPBOX_TOKEN=pk.eyJ1IjoiYWNtZSIsImEiOiJj{rnd(r, URLSAFE, 20)}In0.{rnd(r, URLSAFE, 22)}",
            f"TWILIO_ACCOUNT_SID=AC{sha(r, 32)}",
            f"WECHAT_APPID=wx{sha(r, 16)}",
        ]
    ),
    "supabase_anon_key": lambda r, f: (
        "SUPABASE_ANON_KEY="
        + jwt(
            r,
            {"alg": "HS256", "typ": "JWT"},
            {
                "iss": "supabase",
                "ref": rnd(r, LOWER, 20),
                "role": "anon",
                "iat": 1730000000,
                "exp": 2045576000,
            },
        )[0]
        + "  # anon key, safe in the browser with RLS"
    ),
    "blockchain_addresses": lambda r, f: r.choice(
        [
            f"Send the refund to 0x{sha(r, 40)}",
            f"tx hash 0x{sha(r, 64)} confirmed in block {r.randint(10**7, 3 * 10**7)}",
        ]
    ),
    "kubernetes_resource_names": lambda r, f: (
        f"pod/{f['service']}-{rnd(r, 'bcdfghjklmnpqrstvwxz2456789', 10)}-{rnd(r, 'bcdfghjklmnpqrstvwxz2456789', 5)} "
        f"CrashLoopBackOff; replicaset {f['service']}-{rnd(r, 'bcdfghjklmnpqrstvwxz2456789', 10)}"
    ),
    "azure_resource_ids": lambda r, f: (
        f"/subscriptions/{uuid4(r)}/resourceGroups/rg-{f['env']}/providers/Microsoft.Storage/storageAccounts/st{rnd(r, LOWER_ALNUM, 10)}"
    ),
    "git_lfs_pointers": lambda r, f: (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha(r, 64)}\nsize {r.randint(1000, 10**8)}"
    ),
}


# Config texts that carry no hint of a secret, for non-secret values under names with "key", "id", "token".
NEUTRAL = [NAMED[i] for i in (0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 15, 16, 17, 19, 20, 22, 23, 32)]
NON_SECRET_NAMES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("GIT_COMMIT_SHA", lambda r: sha(r)),
    ("IMAGE_DIGEST", lambda r: "sha256:" + sha(r, 64)),
    ("IDEMPOTENCY_KEY", uuid4),
    ("CACHE_KEY", lambda r: sha(r, 64)),
    ("TRACE_ID", lambda r: sha(r, 32)),
    ("PUBLIC_KEY_FINGERPRINT", lambda r: "SHA256:" + rnd(r, B64, 43)),
    ("KMS_KEY_ID", uuid4),
    ("PRIMARY_KEY", lambda r: str(r.randint(10**6, 10**9))),
    ("MAX_TOKENS", lambda r: str(r.choice([1024, 4096, 8192, 32000]))),
    ("BUILD_ID", lambda r: rnd(r, LOWER_ALNUM, 20)),
    ("STRIPE_PUBLISHABLE_KEY", lambda r: "pk_live_51" + rnd(r, ALNUM, 97)),
    ("SENTRY_RELEASE", lambda r: sha(r)),
    ("TOKEN_ENDPOINT", lambda r: "https://auth.acme.io/oauth/token"),
    ("SECRET_NAME", lambda r: r.choice(["prod/billing/db", "kv/ci/npm", "projects/acme/secrets/stripe"])),
]


def non_secret_named(r: random.Random, f: Filler) -> str:
    name, make = r.choice(NON_SECRET_NAMES)
    return r.choice(NEUTRAL)(name, make(r), f)


def multilingual_ids(r: random.Random, f: Filler) -> str:
    return r.choice(
        [
            f"Le commit {sha(r)} corrige la fuite du jeton, merci {f['person']} !",
            f"请看提交 {sha(r)}，它修复了令牌刷新的问题。",
            f"トレースID: {sha(r, 32)} でタイムアウトしています。",
            f"Идентификатор запроса: {uuid4(r)} — посмотри логи.",
            f"El hash SHA-256 del instalador es {sha(r, 64)}",
            f"Der Schlüssel-Fingerabdruck (öffentlich) ist SHA256:{rnd(r, B64, 43)}",
            f"Ordem {uuid4(r)} ficou presa no checkout.",
            f"커밋 {sha(r, 12)} 에서 토큰 개수 계산이 바뀌었습니다.",
        ]
    )


LOOKALIKES["non_secret_values_under_key_names"] = non_secret_named
LOOKALIKES["ids_in_chat_many_languages"] = multilingual_ids


def lookalike_samples(r: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for kind, make in LOOKALIKES.items():
        for _ in range(20):
            text = make(r, filler(r))
            out.append((Sample(kind, "lookalike", text), text))
    return out


def tenth_part_with_raw() -> list[tuple[Sample, str]]:
    """Each sample with its text before any disguise, so a test can check the secret was really there."""
    r = random.Random(SEED)
    return credential_samples(r) + lookalike_samples(r)


def tenth_part() -> list[Sample]:
    return [sample for sample, _ in tenth_part_with_raw()]
