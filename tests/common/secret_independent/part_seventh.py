"""The seventh independent part of the secret corpus: credentials generated from the formats the providers
document, pasted into the texts agents really keep (runbooks, incident notes, shell history, configs of many
ecosystems, chat in many languages), disguised the way careless pastes and deliberate attempts disguise
them, and look-alikes that share those texts without being secret.

Written from provider documentation and nothing else: where each format comes from is said beside it. The
values are random (a fixed seed), never real tokens.
"""

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from tests.common.secret_world.texts import Sample

SEED = 7_061_2026

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
ALPHA = UPPER + LOWER
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
BASE32_UPPER = BASE32_LOWER.upper()
# Crockford base32 (ULIDs) and bech32 (age keys) drop look-alike letters.
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BASE62 = DIGITS + UPPER + LOWER

# Words that make a real random token look like a documentation placeholder at a glance.
PLACEHOLDER_WORDS = ("EXAMPLE", "example", "xxxx", "XXXXXX", "sample", "SAMPLE", "test", "TEST", "dummy")
PLACEHOLDER_WORDS += (
    "DUMMY",
    "changeme",
    "placeholder",
    "fake",
    "FAKE",
    "your",
    "demo",
    "notreal",
    "redacted",
)
# The same idea where the alphabet is hex or digits only.
PLACEHOLDER_HEX = (
    "deadbeef",
    "00000000",
    "12345678",
    "abcdef",
    "cafebabe",
    "feedface",
    "ffffffff",
    "0123456789",
)


def _fit_word(word: str, alphabet: str) -> str | None:
    for candidate in (word, word.lower(), word.upper()):
        if all(c in alphabet for c in candidate):
            return candidate
    return None


class Gen:
    """Random pieces of credentials. The first long secret piece drawn while `word` is set carries that
    placeholder-looking word, so the token stays in its documented alphabet and length."""

    def __init__(self, rng: random.Random, word: str | None = None) -> None:
        self.r = rng
        self.word = word
        self.placed: str | None = None

    def s(self, alphabet: str, n: int) -> str:
        out = [self.r.choice(alphabet) for _ in range(n)]
        if self.word is not None and n >= 14:
            fitted = _fit_word(self.word, alphabet)
            if fitted is None:
                fitting = [w for w in PLACEHOLDER_HEX if all(c in alphabet for c in w)]
                fitted = self.r.choice(fitting) if fitting else None
            if fitted is not None and len(fitted) + 6 <= n:
                at = self.r.randint(3, n - len(fitted) - 3)
                out[at : at + len(fitted)] = fitted
                self.word = None
                self.placed = fitted
        return "".join(out)

    def p(self, alphabet: str, n: int) -> str:
        """A public piece (an id, a host): never carries the word."""
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        h = self.p(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def secret_uuid(self) -> str:
        carries_word = self.word is not None
        h = self.s(HEX, 32)
        if carries_word:
            # Keep every character so the word survives; the token still reads as a UUID.
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def one(self, options: tuple[str, ...] | list[str]) -> str:
        return self.r.choice(options)

    def num(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.p(DIGITS, n - 1)


@dataclass(frozen=True)
class Cred:
    # The credential as pasted: a token, a connection string, a key file.
    text: str
    # The secret part inside `text`: the middle piece and the disguises go there.
    token: str
    # The variable name an agent would keep it under.
    name: str
    # Texts where this credential naturally lives, with {v} for the credential.
    native: tuple[str, ...] = ()
    # Several lines (PEM, JSON key file): it needs block contexts.
    block: bool = False


def cred(text: str, name: str, *native: str, token: str | None = None, block: bool = False) -> Cred:
    return Cred(text=text, token=token if token is not None else text, name=name, native=native, block=block)


def b64(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return base64.b64encode(data).decode()


def b64url(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def base62_checksum(payload: str) -> str:
    # GitHub ("Behind GitHub's new authentication token formats", 2021) and npm tokens end in a 6-character
    # base62 CRC32 of the random part.
    n = zlib.crc32(payload.encode())
    out = ""
    while n:
        n, rem = divmod(n, 62)
        out = BASE62[rem] + out
    return out.rjust(6, "0")


def checksummed(g: Gen, prefix: str) -> str:
    body = g.s(ALNUM, 30)
    return prefix + body + base62_checksum(body)


def jwt(g: Gen, header: dict, payload: dict, sig_len: int = 43) -> str:
    head = b64url(json.dumps(header, separators=(",", ":")))
    body = b64url(json.dumps(payload, separators=(",", ":")))
    return f"{head}.{body}.{g.s(B64URL, sig_len)}"


def pem(g: Gen, label: str, der_prefix: str, n: int, width: int = 64) -> tuple[str, str]:
    """A PEM block with a random body after the documented DER opening; returns it and a middle line."""
    body = der_prefix + g.s(B64, n - len(der_prefix))
    lines = [body[i : i + width] for i in range(0, len(body), width)]
    lines[-1] = lines[-1][: max(4, len(lines[-1]) - 2)] + "=="
    text = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"
    return text, lines[len(lines) // 2]


def words_password(g: Gen) -> str:
    words = ("harbor", "violet", "copper", "tundra", "maple", "orbit", "saffron", "glacier", "pepper")
    words += ("lantern", "quartz", "meadow", "falcon", "ember", "cobalt", "willow", "nimbus", "juniper")
    sep = g.one(("-", "_", ".", "", "!", "#"))
    first, second = g.r.sample(words, 2)
    return f"{first.capitalize()}{sep}{second}{sep}{g.p(DIGITS, g.r.randint(2, 4))}{g.p('!@#%&*?', 1)}"


def hosts(g: Gen) -> str:
    return g.one(("db-prod-1.internal", "10.20.4.17", "pg.eu-west-1.example.net", "mysql.staging.lan"))


USERS = (
    "app",
    "deploy",
    "svc_orders",
    "analytics_ro",
    "admin",
    "ci-bot",
    "grafana",
    "etl",
    "root",
    "billing",
)
ENVS = ("prod", "staging", "dev", "qa", "eu", "us-east", "sandbox-team")


def ssh_private_key(g: Gen) -> Cred:
    # OpenSSH PROTOCOL.key: "openssh-key-v1\0", cipher "none", kdf "none", one ed25519 key; 70-column lines.
    opening = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACB"
    text, line = pem(g, "OPENSSH PRIVATE KEY", opening, 400, width=70)
    return cred(
        text,
        "SSH_PRIVATE_KEY",
        "$ cat ~/.ssh/id_ed25519\n{v}",
        "- name: add deploy key\n  copy:\n    dest: /home/deploy/.ssh/id_ed25519\n    mode: '0600'\n    content: |\n{vi6}",
        token=line,
        block=True,
    )


def rsa_private_key(g: Gen) -> Cred:
    # RFC 8017 RSAPrivateKey (PKCS#1, "BEGIN RSA PRIVATE KEY"): DER starts SEQUENCE, version 0, 2048-bit n.
    text, line = pem(g, "RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 1588)
    return cred(
        text,
        "TLS_PRIVATE_KEY",
        "server.key (the one nginx loads):\n{v}",
        'resource "tls_self_signed_cert" "edge" {\n  private_key_pem = <<EOT\n{v}\nEOT\n}',
        token=line,
        block=True,
    )


def ec_private_key(g: Gen) -> Cred:
    # RFC 5915 ECPrivateKey ("BEGIN EC PRIVATE KEY"): SEQUENCE, version 1, 32-byte OCTET STRING (P-256).
    text, line = pem(g, "EC PRIVATE KEY", "MHcCAQEEI", 224)
    return cred(
        text,
        "JWT_SIGNING_KEY",
        f"ES256 signing key for the token service (es256-{g.p(LOWER_ALNUM, 6)}.pem):\n{{v}}",
        token=line,
        block=True,
    )


def oci_api_key(g: Gen) -> Cred:
    # OCI "Required keys and OCIDs": a PKCS#8 PEM the ~/.oci/config key_file points at; the console adds
    # an "OCI_API_KEY" marker line after it.
    text, line = pem(g, "PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 1624)
    fp = ":".join(g.p(HEX, 2) for _ in range(16))
    return cred(
        text + "\nOCI_API_KEY",
        "OCI_PRIVATE_KEY",
        f"~/.oci/config\n[DEFAULT]\nuser=ocid1.user.oc1..aaaaaaaa{g.p(BASE32_LOWER, 52)}\nfingerprint={fp}\n"
        "key_file=~/.oci/oci_api_key.pem\nregion=eu-frankfurt-1\n\n~/.oci/oci_api_key.pem\n{v}",
        token=line,
        block=True,
    )


def pgp_private_key(g: Gen) -> Cred:
    # RFC 4880 ASCII armor "BEGIN PGP PRIVATE KEY BLOCK" (the key Maven Central signing needs).
    text, line = pem(g, "PGP PRIVATE KEY BLOCK", "lQdGBGR", 2600)
    text = text.replace("\nlQdGBGR", "\n\nlQdGBGR", 1)
    return cred(
        text,
        "MAVEN_GPG_PRIVATE_KEY",
        "gpg --armor --export-secret-keys release@corp.example > signing.asc\n$ cat signing.asc\n{v}",
        token=line,
        block=True,
    )


def gcp_service_account(g: Gen) -> Cred:
    # Google Cloud "Create and delete service account keys": the JSON key file, private_key a PKCS#8 PEM
    # with escaped newlines.
    key, line = pem(g, "PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 1624)
    project = g.one(("acme-data-prod", "ml-pipeline-3812", "kenji-sandbox", "retail-analytics-eu"))
    sa = g.one(("etl-runner", "terraform", "bq-export", "github-deployer"))
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": g.p(HEX, 40),
        "private_key": key + "\n",
        "client_email": f"{sa}@{project}.iam.gserviceaccount.com",
        "client_id": g.p(DIGITS, 21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return cred(
        json.dumps(doc, indent=2),
        "GOOGLE_APPLICATION_CREDENTIALS_JSON",
        "cat > /tmp/sa.json <<'EOF'\n{v}\nEOF\nexport GOOGLE_APPLICATION_CREDENTIALS=/tmp/sa.json",
        "# credentials.json that the notebook reads\n{v}",
        token=line,
        block=True,
    )


def azure_storage(g: Gen) -> Cred:
    # Azure Storage "Configure a connection string": DefaultEndpointsProtocol, AccountName, AccountKey (a
    # base64 512-bit key, 88 characters), EndpointSuffix.
    key = g.s(B64, 86) + "=="
    account = g.one(("stacmeprodlogs", "mediaassets01", "tfstatebackend", "rawingesteu"))
    text = f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey={key};EndpointSuffix=core.windows.net"
    return cred(
        text,
        "AZURE_STORAGE_CONNECTION_STRING",
        '"ConnectionStrings": { "Blob": "{v}" }',
        'az storage blob upload --connection-string "{v}" -c backups -f dump.sql.gz',
        token=key,
    )


def azure_sas(g: Gen) -> Cred:
    # Azure "Create an account SAS": sv, ss, srt, sp, se, st, spr and sig, the HMAC-SHA256 signature
    # (base64, URL-encoded in the query).
    sig = quote(g.s(B64, 43) + "=", safe="")
    account = g.one(("stacmeprodlogs", "mediaassets01", "exportsweu"))
    text = (
        f"https://{account}.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2026-12-31T23:59:59Z&st=2026-11-01T00:00:00Z&spr=https&sig={sig}"
    )
    return cred(text, "AZURE_SAS_URL", "azcopy copy '{v}' ./exports --recursive", token=sig)


def azure_client_secret(g: Gen) -> Cred:
    # Microsoft identity platform client secrets (Azure "identifiable secrets"): 40 characters with the
    # "Q~" marker at positions 4-5.
    secret = g.p(ALNUM, 3) + g.p(DIGITS, 1) + "Q~" + g.s(ALNUM + "_~.-", 34)
    tenant = g.uuid()
    return cred(
        secret,
        "AZURE_CLIENT_SECRET",
        f"AZURE_TENANT_ID={tenant}\nAZURE_CLIENT_ID={g.uuid()}\nAZURE_CLIENT_SECRET={{v}}",
        f"az login --service-principal -u {g.uuid()} -p '{{v}}' --tenant {tenant}",
    )


def azure_cosmos(g: Gen) -> Cred:
    # Azure Cosmos DB "Connection strings": AccountEndpoint and AccountKey (88-character base64 key).
    key = g.s(B64, 86) + "=="
    acct = g.one(("orders-cosmos", "catalog-db", "iot-telemetry"))
    return cred(
        f"AccountEndpoint=https://{acct}.documents.azure.com:443/;AccountKey={key};",
        "COSMOS_CONNECTION",
        token=key,
    )


def azure_service_bus(g: Gen) -> Cred:
    # Azure Service Bus "Get connection string": Endpoint, SharedAccessKeyName, SharedAccessKey (base64
    # 256-bit key, 44 characters).
    key = g.s(B64, 43) + "="
    ns = g.one(("orders-bus", "acme-events", "payments-sb-weu"))
    text = f"Endpoint=sb://{ns}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}"
    return cred(text, "SERVICEBUS_CONNECTION_STRING", token=key)


def aws_secret_key(g: Gen) -> Cred:
    # AWS IAM "Managing access keys": access key id AKIA + 16 characters, secret access key 40 characters
    # (base64 alphabet); ~/.aws/credentials holds both.
    key_id = "AKIA" + g.p(BASE32_UPPER, 16)
    secret = g.s(ALNUM + "+/", 40)
    return cred(
        secret,
        "AWS_SECRET_ACCESS_KEY",
        f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {{v}}\nregion = eu-central-1",
        f"AWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={{v}} aws s3 ls s3://acme-backups/",
        f'provider "aws" {{\n  region     = "us-east-1"\n  access_key = "{key_id}"\n  secret_key = "{{v}}"\n}}',
    )


def aws_session_token(g: Gen) -> Cred:
    # AWS STS GetSessionToken/AssumeRole: a temporary ASIA key id, secret key and a long base64
    # SessionToken (these begin "IQoJb3JpZ2luX2Vj", the encoded "origin_ec" field).
    token = "IQoJb3JpZ2luX2VjE" + g.s(B64, 330) + "=="
    return cred(
        token,
        "AWS_SESSION_TOKEN",
        f"export AWS_ACCESS_KEY_ID=ASIA{g.p(BASE32_UPPER, 16)}\nexport AWS_SECRET_ACCESS_KEY={g.p(ALNUM, 40)}\nexport AWS_SESSION_TOKEN={{v}}",
    )


def kubeconfig_token(g: Gen) -> Cred:
    # Kubernetes "Service account tokens": a signed JWT (RS256) with kubernetes.io claims, used as a
    # kubeconfig user token.
    token = jwt(
        g,
        {"alg": "RS256", "kid": g.p(B64URL, 43)},
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": g.one(("ci", "monitoring", "default")),
            "kubernetes.io/serviceaccount/service-account.name": g.one(
                ("deployer", "argocd-manager", "prom")
            ),
            "sub": "system:serviceaccount:ci:deployer",
        },
        342,
    )
    return cred(
        token,
        "KUBE_TOKEN",
        "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://10.0.0.1:6443\nusers:\n"
        "- name: deployer\n  user:\n    token: {v}\ncontexts:\n- name: prod\n  context: {cluster: prod, user: deployer}",
        "kubectl --server https://k8s.internal:6443 --token={v} get pods -A",
    )


def bootstrap_token(g: Gen) -> Cred:
    # kubeadm "Authenticating with bootstrap tokens": [a-z0-9]{6}.[a-z0-9]{16}, token id and token secret.
    token = g.p(LOWER_ALNUM, 6) + "." + g.s(LOWER_ALNUM, 16)
    return cred(
        token,
        "KUBEADM_TOKEN",
        f"kubeadm join 10.0.0.10:6443 --token {{v}} --discovery-token-ca-cert-hash sha256:{g.p(HEX, 64)}",
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: bootstrap-token-{token[:6]}\n  namespace: kube-system\ntype: bootstrap.kubernetes.io/token\nstringData:\n  token: {{v}}",
    )


def vault_token(g: Gen) -> Cred:
    # HashiCorp Vault "Tokens": service tokens start "hvs.", batch tokens "hvb." (Vault 1.10+).
    prefix = g.one(("hvs.", "hvs.", "hvb."))
    token = prefix + ("CAESI" + g.s(B64URL, 86) if g.r.random() < 0.5 else g.s(B64URL, 24))
    return cred(
        token,
        "VAULT_TOKEN",
        "vault login {v}",
        "VAULT_ADDR=https://vault.internal:8200 VAULT_TOKEN={v} vault kv get secret/payments",
    )


def terraform_cloud(g: Gen) -> Cred:
    # HCP Terraform API tokens: 14 characters, ".atlasv1.", then the secret (credentials.tfrc.json).
    token = g.p(ALNUM, 14) + ".atlasv1." + g.s(ALNUM, 67)
    return cred(
        token,
        "TFE_TOKEN",
        '{\n  "credentials": {\n    "app.terraform.io": {\n      "token": "{v}"\n    }\n  }\n}',
        'credentials "app.terraform.io" {\n  token = "{v}"\n}',
    )


def dop_token(g: Gen) -> Cred:
    # DigitalOcean "Personal access tokens": dop_v1_ + 64 hex (doo_v1_ OAuth, dor_v1_ refresh).
    token = g.one(("dop_v1_", "dop_v1_", "doo_v1_")) + g.s(HEX, 64)
    return cred(token, "DIGITALOCEAN_TOKEN", "doctl auth init --access-token {v}")


def age_key(g: Gen) -> Cred:
    # age specification: secret keys are Bech32 "AGE-SECRET-KEY-1" + 58 uppercase characters.
    token = "AGE-SECRET-KEY-1" + g.s(BECH32, 58)
    return cred(
        token,
        "SOPS_AGE_KEY",
        f"# created: 2026-03-14T10:22:31+01:00\n# public key: age1{g.p(BECH32.lower(), 58)}\n{{v}}",
    )


def under_name(value: str, name: str, *native: str) -> Cred:
    return cred(value, name, *native)


def connection(scheme: str, user: str, password: str, host: str, port: int, path: str, name: str) -> Cred:
    return cred(f"{scheme}://{user}:{password}@{host}:{port}/{path}", name, token=password)


@dataclass(frozen=True)
class CredentialKind:
    name: str
    group: str
    make: Callable[[Gen], Cred]


K = CredentialKind

# Each kind: name, group, generator. The comment above says where its format comes from.
CREDENTIAL_KINDS: tuple[CredentialKind, ...] = (
    # ---- cloud ----
    K("aws_secret_access_key", "cloud", aws_secret_key),
    K("aws_session_token", "cloud", aws_session_token),
    K("gcp_service_account_json", "cloud", gcp_service_account),
    # Google Cloud "API keys": "AIza" + 35 characters [A-Za-z0-9_-].
    K("gcp_api_key", "cloud", lambda g: cred("AIza" + g.s(B64URL, 35), "GOOGLE_MAPS_SERVER_KEY")),
    # Google OAuth clients created since 2022: client secrets start "GOCSPX-" (28 characters follow).
    K(
        "gcp_oauth_client_secret",
        "cloud",
        lambda g: cred(
            "GOCSPX-" + g.s(B64URL, 28),
            "GOOGLE_CLIENT_SECRET",
            f'{{"web":{{"client_id":"{g.num(12)}-{g.p(LOWER_ALNUM, 32)}.apps.googleusercontent.com","client_secret":"{{v}}","redirect_uris":["http://localhost:8080/cb"]}}}}',
        ),
    ),
    # Google OAuth 2.0 access tokens: "ya29." then a long opaque string.
    K(
        "google_oauth_access_token",
        "cloud",
        lambda g: cred("ya29." + g.s(B64URL, 180), "GOOGLE_ACCESS_TOKEN"),
    ),
    K("azure_storage_connection_string", "cloud", azure_storage),
    K("azure_sas_signature", "cloud", azure_sas),
    K("azure_ad_client_secret", "cloud", azure_client_secret),
    K("azure_cosmosdb_key", "cloud", azure_cosmos),
    K("azure_service_bus_key", "cloud", azure_service_bus),
    K("digitalocean_token", "cloud", dop_token),
    # Alibaba Cloud RAM "Create an AccessKey pair": AccessKey ID "LTAI" + 20, AccessKey secret 30 characters.
    K(
        "alibaba_access_key_secret",
        "cloud",
        lambda g: cred(
            g.s(ALNUM, 30),
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
            f"ALIBABA_CLOUD_ACCESS_KEY_ID=LTAI5t{g.p(ALNUM, 18)}\nALIBABA_CLOUD_ACCESS_KEY_SECRET={{v}}",
            f"aliyun configure set --access-key-id LTAI5t{g.p(ALNUM, 18)} --access-key-secret {{v}} --region cn-hangzhou",
        ),
    ),
    # Tencent Cloud CAM "API keys": SecretId "AKID" + 32 characters, SecretKey 32 characters.
    K(
        "tencent_cloud_secret_key",
        "cloud",
        lambda g: cred(
            g.s(ALNUM, 32),
            "TENCENTCLOUD_SECRET_KEY",
            f"TENCENTCLOUD_SECRET_ID=AKID{g.p(ALNUM, 32)}\nTENCENTCLOUD_SECRET_KEY={{v}}",
        ),
    ),
    # Huawei Cloud "Access keys": AK 20 uppercase characters, SK 40 characters (credentials.csv).
    K(
        "huawei_cloud_secret_key",
        "cloud",
        lambda g: cred(
            g.s(ALNUM, 40),
            "HUAWEICLOUD_SDK_SK",
            f'User Name,Access Key Id,Secret Access Key\n"ops-{g.p(LOWER, 4)}",{g.p(UPPER_ALNUM, 20)},{{v}}',
        ),
    ),
    # IBM Cloud "API keys": 44 characters [A-Za-z0-9_-].
    K(
        "ibm_cloud_api_key",
        "cloud",
        lambda g: cred(g.s(B64URL, 44), "IBMCLOUD_API_KEY", "ibmcloud login --apikey {v} -r eu-de"),
    ),
    K("oci_api_signing_key", "cloud", oci_api_key),
    # Linode (Akamai) API v4 personal access tokens: 64 hex characters.
    K(
        "linode_token",
        "cloud",
        lambda g: cred(
            g.s(HEX, 64),
            "LINODE_TOKEN",
            "[DEFAULT]\ndefault-user = ops\n\n[ops]\ntoken = {v}\nregion = eu-central",
        ),
    ),
    # Hetzner Cloud "Generating an API token": 64 alphanumeric characters (HCLOUD_TOKEN).
    K(
        "hetzner_cloud_token",
        "cloud",
        lambda g: cred(g.s(ALNUM, 64), "HCLOUD_TOKEN", "hcloud context create prod  # token: {v}"),
    ),
    # Scaleway IAM API keys: access key "SCW" + 17 characters, secret key a UUID.
    K(
        "scaleway_secret_key",
        "cloud",
        lambda g: cred(
            g.secret_uuid(),
            "SCW_SECRET_KEY",
            f"access_key: SCW{g.p(UPPER_ALNUM, 17)}\nsecret_key: {{v}}\ndefault_organization_id: {g.uuid()}\ndefault_region: fr-par",
        ),
    ),
    # OVHcloud API: application key 16, application secret 32, consumer key 32 characters (ovh.conf).
    K(
        "ovh_application_secret",
        "cloud",
        lambda g: cred(
            g.s(ALNUM, 32),
            "OVH_APPLICATION_SECRET",
            f"[ovh-eu]\napplication_key={g.p(ALNUM, 16)}\napplication_secret={{v}}\nconsumer_key={g.p(ALNUM, 32)}",
        ),
    ),
    # Cloudflare "Create API token": 40 characters [A-Za-z0-9_-], sent as a Bearer token.
    K("cloudflare_api_token", "cloud", lambda g: cred(g.s(B64URL, 40), "CLOUDFLARE_API_TOKEN")),
    # Cloudflare Global API Key: 37 hex characters with X-Auth-Email.
    K(
        "cloudflare_global_api_key",
        "cloud",
        lambda g: cred(
            g.s(HEX, 37),
            "CF_API_KEY",
            'curl -H "X-Auth-Email: ops@acme.example" -H "X-Auth-Key: {v}" https://api.cloudflare.com/client/v4/zones',
        ),
    ),
    # Vultr API keys: 36 uppercase alphanumeric characters.
    K("vultr_api_key", "cloud", lambda g: cred(g.s(UPPER_ALNUM, 36), "VULTR_API_KEY")),
    # Yandex Cloud "API keys": the secret part starts "AQVN" (40 characters in all).
    K(
        "yandex_cloud_api_key",
        "cloud",
        lambda g: cred(
            "AQVN" + g.s(B64URL, 36),
            "YC_API_KEY",
            'curl -H "Authorization: Api-Key {v}" https://llm.api.cloud.yandex.net/foundationModels/v1/completion',
        ),
    ),
    # Heroku Platform API quickstart: `heroku authorizations:create` prints "Token: <uuid>".
    K(
        "heroku_api_key",
        "cloud",
        lambda g: cred(
            g.secret_uuid(),
            "HEROKU_API_KEY",
            "machine api.heroku.com\n  login ops@acme.example\n  password {v}",
            f"$ heroku authorizations:create -d deploy\nClient: <none>\nID: {g.uuid()}\nDescription: deploy\nScope: global\nToken: {{v}}",
        ),
    ),
    # Fly.io "flyctl tokens create": tokens start "FlyV1 fm2_" followed by base64 macaroons.
    K(
        "flyio_token",
        "cloud",
        lambda g: cred("FlyV1 fm2_" + g.s(B64, 180) + ",fm2_" + g.p(B64, 96), "FLY_API_TOKEN"),
    ),
    K("kubeconfig_token", "cloud", kubeconfig_token),
    K("kubernetes_bootstrap_token", "cloud", bootstrap_token),
    K("vault_token", "cloud", vault_token),
    K("terraform_cloud_token", "cloud", terraform_cloud),
    # Pulumi access tokens: "pul-" + 40 hex characters.
    K("pulumi_access_token", "cloud", lambda g: cred("pul-" + g.s(HEX, 40), "PULUMI_ACCESS_TOKEN")),
    # Doppler "Auth token formats": dp.pt. / dp.st.<config>. / dp.sa. + 40-44 alphanumerics.
    K(
        "doppler_token",
        "cloud",
        lambda g: cred(g.one(("dp.pt.", "dp.st.prd.", "dp.sa.", "dp.ct.")) + g.s(ALNUM, 43), "DOPPLER_TOKEN"),
    ),
    K("ssh_private_key", "cloud", ssh_private_key),
    K("rsa_private_key", "cloud", rsa_private_key),
    K("ec_private_key", "cloud", ec_private_key),
    K("age_secret_key", "cloud", age_key),
    # OpenStack clouds.yaml: auth.password in plain text.
    K(
        "openstack_password",
        "cloud",
        lambda g: cred(
            words_password(g),
            "OS_PASSWORD",
            "clouds:\n  ovh-gra:\n    auth:\n      auth_url: https://auth.cloud.ovh.net/v3\n      username: user-"
            + g.p(ALNUM, 12)
            + '\n      password: "{v}"\n      project_name: "'
            + g.p(DIGITS, 16)
            + '"\n    region_name: GRA11',
        ),
    ),
    # Tailscale "Auth keys": tskey-auth-<id>CNTRL-<secret>; API access tokens tskey-api-.
    K(
        "tailscale_key",
        "cloud",
        lambda g: cred(
            g.one(("tskey-auth-", "tskey-api-")) + g.p(ALNUM, 12) + "CNTRL-" + g.s(ALNUM, 33),
            "TS_AUTHKEY",
            "tailscale up --authkey={v} --advertise-tags=tag:ci",
        ),
    ),
    # ---- ci ----
    # GitHub token formats (2021): ghp_ personal, gho_ OAuth, ghs_ server-to-server, ghu_ user-to-server;
    # 30 random base62 characters and a 6-character CRC32.
    K(
        "github_classic_pat",
        "ci",
        lambda g: cred(
            checksummed(g, "ghp_"),
            "GITHUB_TOKEN",
            "https://{v}@github.com/acme/infra.git",
            "git clone https://x-access-token:{v}@github.com/acme/api.git",
        ),
    ),
    K(
        "github_oauth_token",
        "ci",
        lambda g: cred(
            checksummed(g, "gho_"),
            "GH_OAUTH_TOKEN",
            "github.com:\n    user: kenji\n    oauth_token: {v}\n    git_protocol: https",
        ),
    ),
    K("github_app_token", "ci", lambda g: cred(checksummed(g, g.one(("ghs_", "ghu_"))), "GH_APP_TOKEN")),
    # GitHub fine-grained personal access tokens: "github_pat_" + 22 + "_" + 59 characters.
    K(
        "github_fine_grained_pat",
        "ci",
        lambda g: cred(
            "github_pat_" + g.p(UPPER_ALNUM, 22) + "_" + g.s(ALNUM, 59),
            "GH_TOKEN",
            "echo {v} | gh auth login --with-token",
        ),
    ),
    # GitLab "Token overview": personal glpat-, runner authentication glrt-, deploy gldt-, 20 characters.
    K(
        "gitlab_token",
        "ci",
        lambda g: cred(
            g.one(("glpat-", "glpat-", "glrt-", "gldt-")) + g.s(B64URL, 20),
            "GITLAB_TOKEN",
            'curl --header "PRIVATE-TOKEN: {v}" https://gitlab.example.com/api/v4/projects',
            '[[runners]]\n  name = "docker-runner"\n  url = "https://gitlab.com"\n  token = "{v}"\n  executor = "docker"',
        ),
    ),
    # GitLab pipeline trigger tokens: "glptt-" + 40 hex characters.
    K(
        "gitlab_trigger_token",
        "ci",
        lambda g: cred(
            "glptt-" + g.s(HEX, 40),
            "TRIGGER_TOKEN",
            "curl -X POST --fail -F token={v} -F ref=main https://gitlab.example.com/api/v4/projects/42/trigger/pipeline",
        ),
    ),
    # Bitbucket Cloud app passwords: "ATBB" + 32 characters.
    K(
        "bitbucket_app_password",
        "ci",
        lambda g: cred(
            "ATBB" + g.s(ALNUM, 32),
            "BITBUCKET_APP_PASSWORD",
            "git remote set-url origin https://kenji:{v}@bitbucket.org/acme/site.git",
        ),
    ),
    # CircleCI personal API tokens: "CCIPAT_" + 22 + "_" + 40 hex (older tokens: 40 hex).
    K(
        "circleci_token",
        "ci",
        lambda g: cred(
            "CCIPAT_" + g.p(ALNUM, 22) + "_" + g.s(HEX, 40),
            "CIRCLECI_TOKEN",
            'curl -H "Circle-Token: {v}" https://circleci.com/api/v2/me',
        ),
    ),
    # Buildkite API access tokens: "bkua_" + 40 hex; agent tokens under BUILDKITE_AGENT_TOKEN.
    K("buildkite_token", "ci", lambda g: cred("bkua_" + g.s(HEX, 40), "BUILDKITE_API_TOKEN")),
    # Jenkins API tokens (2.129+): "11" + 32 hex, used with the user name in basic auth.
    K(
        "jenkins_api_token",
        "ci",
        lambda g: cred(
            "11" + g.s(HEX, 32),
            "JENKINS_API_TOKEN",
            "curl -u admin:{v} https://jenkins.internal/job/deploy/buildWithParameters?ENV=prod",
        ),
    ),
    # Azure DevOps personal access tokens: 52 characters, lowercase base32.
    K(
        "azure_devops_pat",
        "ci",
        lambda g: cred(
            g.s(BASE32_LOWER, 52),
            "AZURE_DEVOPS_EXT_PAT",
            "echo {v} | az devops login --organization https://dev.azure.com/acme",
        ),
    ),
    # TeamCity access tokens: JWT-like, header "eyJ0eXAiOiAiVENWMiJ9" ({"typ": "TCV2"}).
    K(
        "teamcity_token",
        "ci",
        lambda g: cred("eyJ0eXAiOiAiVENWMiJ9." + g.s(B64URL, 36) + "." + g.p(B64URL, 48), "TEAMCITY_TOKEN"),
    ),
    # Octopus Deploy API keys: "API-" + 26-32 uppercase alphanumerics.
    K("octopus_api_key", "ci", lambda g: cred("API-" + g.s(UPPER_ALNUM, 27), "OCTOPUS_API_KEY")),
    # SonarQube tokens (9.5+): squ_ user, sqp_ project, sqa_ global analysis, + 40 hex.
    K(
        "sonarqube_token",
        "ci",
        lambda g: cred(
            g.one(("squ_", "sqp_", "sqa_")) + g.s(HEX, 40),
            "SONAR_TOKEN",
            "mvn sonar:sonar -Dsonar.host.url=https://sonar.acme.example -Dsonar.token={v}",
        ),
    ),
    # Gitea / Forgejo access tokens: 40 hex characters.
    K(
        "gitea_token",
        "ci",
        lambda g: cred(
            g.s(HEX, 40),
            "GITEA_TOKEN",
            "tea login add --name work --url https://git.acme.example --token {v}",
        ),
    ),
    # Harness personal access tokens: pat.<account id>.<token id>.<secret>.
    K(
        "harness_pat",
        "ci",
        lambda g: cred(f"pat.{g.p(B64URL, 22)}.{g.p(HEX, 24)}.{g.s(ALNUM, 20)}", "HARNESS_API_KEY"),
    ),
    # Snyk API tokens are UUIDs (SNYK_TOKEN).
    K("snyk_token", "ci", lambda g: cred(g.secret_uuid(), "SNYK_TOKEN", "snyk auth {v}")),
    # Drone CI personal tokens: 32 alphanumerics (DRONE_TOKEN).
    K("drone_token", "ci", lambda g: cred(g.s(ALNUM, 32), "DRONE_TOKEN")),
    # ---- chat ----
    # Slack "Token types": xoxb- bot, xoxp- user: numeric ids then a random part.
    K(
        "slack_bot_token",
        "chat",
        lambda g: cred(
            f"xoxb-{g.num(12)}-{g.num(13)}-{g.s(ALNUM, 24)}",
            "SLACK_BOT_TOKEN",
            'curl -H "Authorization: Bearer {v}" https://slack.com/api/chat.postMessage -d channel=C0123 -d text=hi',
        ),
    ),
    K(
        "slack_user_token",
        "chat",
        lambda g: cred(f"xoxp-{g.num(12)}-{g.num(12)}-{g.num(13)}-{g.s(HEX, 32)}", "SLACK_USER_TOKEN"),
    ),
    # Slack app-level tokens: "xapp-1-" + app id + number + 64 hex (Socket Mode).
    K(
        "slack_app_token",
        "chat",
        lambda g: cred(f"xapp-1-A{g.p(UPPER_ALNUM, 10)}-{g.num(13)}-{g.s(HEX, 64)}", "SLACK_APP_TOKEN"),
    ),
    # Slack incoming webhooks: https://hooks.slack.com/services/T.../B.../<24 characters>.
    K(
        "slack_webhook_url",
        "chat",
        lambda g: (
            lambda s: cred(
                f"https://hooks.slack.com/services/T{g.p(UPPER_ALNUM, 10)}/B{g.p(UPPER_ALNUM, 10)}/{s}",
                "SLACK_WEBHOOK_URL",
                token=s,
            )
        )(g.s(ALNUM, 24)),
    ),
    # Discord bot tokens: base64 of the bot's user id, ".", 6 characters, ".", 27+ characters.
    K(
        "discord_bot_token",
        "chat",
        lambda g: cred(
            b64(g.num(19)).rstrip("=") + "." + g.p(B64URL, 6) + "." + g.s(B64URL, 38),
            "DISCORD_TOKEN",
            "client.run('{v}')",
        ),
    ),
    # Discord webhooks: https://discord.com/api/webhooks/<id>/<68-character token>.
    K(
        "discord_webhook_url",
        "chat",
        lambda g: (
            lambda s: cred(f"https://discord.com/api/webhooks/{g.num(19)}/{s}", "DISCORD_WEBHOOK", token=s)
        )(g.s(B64URL, 68)),
    ),
    # Telegram Bot API: "<bot id>:<35 characters>", given by @BotFather.
    K(
        "telegram_bot_token",
        "chat",
        lambda g: cred(
            g.num(10) + ":AA" + g.s(B64URL, 33),
            "TELEGRAM_BOT_TOKEN",
            "curl https://api.telegram.org/bot{v}/getUpdates",
            "BotFather: Done! Congratulations on your new bot. Use this token to access the HTTP API:\n{v}\nKeep your token secure and store it safely.",
        ),
    ),
    # Microsoft Teams incoming webhooks: https://<tenant>.webhook.office.com/webhookb2/<uuid>@<uuid>/IncomingWebhook/<32 hex>/<uuid>.
    K(
        "teams_webhook_url",
        "chat",
        lambda g: (
            lambda s: cred(
                f"https://acme.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{s}/{g.uuid()}",
                "TEAMS_WEBHOOK_URL",
                token=s,
            )
        )(g.s(HEX, 32)),
    ),
    # Mattermost personal access tokens: 26 lowercase alphanumerics.
    K(
        "mattermost_token",
        "chat",
        lambda g: cred(
            g.s(LOWER_ALNUM, 26),
            "MATTERMOST_TOKEN",
            "mmctl auth login https://chat.acme.example --name prod --access-token {v}",
        ),
    ),
    # Twilio: Account SID "AC" + 32 hex (an identifier), Auth Token 32 hex (the secret).
    K(
        "twilio_auth_token",
        "chat",
        lambda g: cred(
            g.s(HEX, 32),
            "TWILIO_AUTH_TOKEN",
            f"TWILIO_ACCOUNT_SID=AC{g.p(HEX, 32)}\nTWILIO_AUTH_TOKEN={{v}}",
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{g.p(HEX, 32)}/Messages.json -u AC{g.p(HEX, 32)}:{{v}}",
        ),
    ),
    # Twilio API keys: SID "SK" + 32 hex and a 32-character secret shown once.
    K(
        "twilio_api_key_secret",
        "chat",
        lambda g: cred(
            g.s(ALNUM, 32), "TWILIO_API_SECRET", f"TWILIO_API_KEY=SK{g.p(HEX, 32)}\nTWILIO_API_SECRET={{v}}"
        ),
    ),
    # LINE Messaging API long-lived channel access tokens: ~172 base64 characters.
    K("line_channel_access_token", "chat", lambda g: cred(g.s(B64, 171) + "=", "LINE_CHANNEL_ACCESS_TOKEN")),
    # Vonage (Nexmo): API key 8 hex, API secret 16 alphanumerics.
    K(
        "vonage_api_secret",
        "chat",
        lambda g: cred(
            g.s(ALNUM, 16), "VONAGE_API_SECRET", f"VONAGE_API_KEY={g.p(HEX, 8)}\nVONAGE_API_SECRET={{v}}"
        ),
    ),
    # Matrix Synapse access tokens: "syt_" + base64 user + "_" + 20 letters + "_" + 6-character checksum.
    K(
        "matrix_access_token",
        "chat",
        lambda g: cred(
            f"syt_{b64url(g.one(('kenji', 'ops-bot', 'alerts')))}_{g.s(ALNUM, 20)}_{g.p(ALNUM, 6)}",
            "MATRIX_ACCESS_TOKEN",
        ),
    ),
    # Zulip ~/.zuliprc: [api] email, key (32 alphanumerics), site.
    K(
        "zulip_api_key",
        "chat",
        lambda g: cred(
            g.s(ALNUM, 32),
            "ZULIP_API_KEY",
            "[api]\nemail=alert-bot@acme.zulipchat.com\nkey={v}\nsite=https://acme.zulipchat.com",
        ),
    ),
    # Webex bot access tokens: 64 characters, "_", 4 characters, "_", organization UUID.
    K(
        "webex_bot_token",
        "chat",
        lambda g: cred(f"{g.s(ALNUM, 64)}_{g.p(UPPER, 4)}_{g.uuid()}", "WEBEX_BOT_TOKEN"),
    ),
    # Pushover application tokens: 30 lowercase alphanumerics.
    K(
        "pushover_token",
        "chat",
        lambda g: cred(
            "a" + g.s(LOWER_ALNUM, 29),
            "PUSHOVER_APP_TOKEN",
            f"curl -s -F token={{v}} -F user=u{g.p(LOWER_ALNUM, 29)} -F message='disk full' https://api.pushover.net/1/messages.json",
        ),
    ),
    # ---- payment ----
    # Stripe "API keys": secret sk_live_, restricted rk_live_ (current keys start 51 + ~97 characters).
    K(
        "stripe_secret_key",
        "payment",
        lambda g: cred(
            "sk_live_51" + g.p(ALNUM, 14) + g.s(ALNUM, 83), "STRIPE_SECRET_KEY", 'stripe.api_key = "{v}"'
        ),
    ),
    K(
        "stripe_restricted_key",
        "payment",
        lambda g: cred("rk_live_51" + g.p(ALNUM, 14) + g.s(ALNUM, 83), "STRIPE_RESTRICTED_KEY"),
    ),
    # Stripe webhook signing secrets: "whsec_" + 32 base64 characters.
    K(
        "stripe_webhook_secret",
        "payment",
        lambda g: cred(
            "whsec_" + g.s(ALNUM, 32),
            "STRIPE_WEBHOOK_SECRET",
            "stripe listen --forward-to localhost:8000/webhooks\n> Ready! Your webhook signing secret is {v} (^C to quit)",
        ),
    ),
    # Braintree / PayPal access tokens: access_token$production$<merchant id>$<32 hex>.
    K(
        "braintree_access_token",
        "payment",
        lambda g: (
            lambda s: cred(
                f"access_token$production${g.p(LOWER_ALNUM, 16)}${s}", "BRAINTREE_ACCESS_TOKEN", token=s
            )
        )(g.s(HEX, 32)),
    ),
    # PayPal REST apps: client id and client secret, 80 characters [A-Za-z0-9_-] starting "E".
    K(
        "paypal_client_secret",
        "payment",
        lambda g: cred(
            "E" + g.s(B64URL, 79),
            "PAYPAL_CLIENT_SECRET",
            f"PAYPAL_CLIENT_ID=A{g.p(B64URL, 79)}\nPAYPAL_CLIENT_SECRET={{v}}",
        ),
    ),
    # Square "Access tokens": production "EAAA" + 60 characters; application secret "sq0csp-" + 43.
    K("square_access_token", "payment", lambda g: cred("EAAA" + g.s(B64URL, 60), "SQUARE_ACCESS_TOKEN")),
    K(
        "square_application_secret",
        "payment",
        lambda g: cred("sq0csp-" + g.s(B64URL, 43), "SQUARE_APP_SECRET"),
    ),
    # Adyen API credentials: keys begin "AQE" and carry base64 parts joined by "-" (X-API-Key header).
    K(
        "adyen_api_key",
        "payment",
        lambda g: cred(
            "AQE" + g.s(B64, 85) + "==-" + g.p(B64, 43) + "=-" + g.p(ALNUM + "<>;,", 16), "ADYEN_API_KEY"
        ),
    ),
    # Razorpay "API keys": key id rzp_live_ + 14 (public in checkout), key secret 24 characters.
    K(
        "razorpay_key_secret",
        "payment",
        lambda g: cred(
            g.s(ALNUM, 24),
            "RAZORPAY_KEY_SECRET",
            f"RAZORPAY_KEY_ID=rzp_live_{g.p(ALNUM, 14)}\nRAZORPAY_KEY_SECRET={{v}}",
        ),
    ),
    # Paystack "API keys": sk_live_ + 40 hex (pk_live_ is public).
    K(
        "paystack_secret_key",
        "payment",
        lambda g: cred(
            "sk_live_" + g.s(HEX, 40),
            "PAYSTACK_SECRET_KEY",
            'curl https://api.paystack.co/transaction/verify/ref_123 -H "Authorization: Bearer {v}"',
        ),
    ),
    # Flutterwave v3 "API keys": FLWSECK- + 32 hex + "-X" (FLWPUBK- is public).
    K(
        "flutterwave_secret_key",
        "payment",
        lambda g: cred("FLWSECK-" + g.s(HEX, 32) + "-X", "FLW_SECRET_KEY"),
    ),
    # Mercado Pago credentials: access token APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    K(
        "mercadopago_access_token",
        "payment",
        lambda g: cred(
            f"APP_USR-{g.p(DIGITS, 16)}-{g.p(DIGITS, 6)}-{g.s(HEX, 32)}-{g.p(DIGITS, 9)}",
            "MERCADOPAGO_ACCESS_TOKEN",
        ),
    ),
    # Mollie "API keys": live_ + 30 alphanumerics.
    K(
        "mollie_api_key",
        "payment",
        lambda g: cred("live_" + g.s(ALNUM, 30), "MOLLIE_API_KEY", '$mollie->setApiKey("{v}");'),
    ),
    # GoCardless access tokens: live_ + 40 characters [A-Za-z0-9_-].
    K(
        "gocardless_access_token",
        "payment",
        lambda g: cred("live_" + g.s(B64URL, 40), "GOCARDLESS_ACCESS_TOKEN"),
    ),
    # Midtrans server keys: "Mid-server-" + 24 characters (client keys "Mid-client-" are public).
    K(
        "midtrans_server_key",
        "payment",
        lambda g: cred("Mid-server-" + g.s(B64URL, 24), "MIDTRANS_SERVER_KEY"),
    ),
    # Xendit secret API keys: "xnd_production_" + ~60 characters.
    K(
        "xendit_secret_key",
        "payment",
        lambda g: cred(
            "xnd_production_" + g.s(ALNUM, 60),
            "XENDIT_SECRET_KEY",
            "curl https://api.xendit.co/balance -u {v}:",
        ),
    ),
    # Plaid "Keys": secret 30 hex per environment; item access tokens access-production-<uuid>.
    K(
        "plaid_secret",
        "payment",
        lambda g: cred(
            g.s(HEX, 30),
            "PLAID_SECRET",
            f'{{"client_id": "{g.p(HEX, 24)}", "secret": "{{v}}", "access_token": "access-production-{g.uuid()}"}}',
        ),
    ),
    # Safaricom Daraja (M-Pesa) apps: consumer key and consumer secret for OAuth client credentials.
    K(
        "mpesa_consumer_secret",
        "payment",
        lambda g: cred(
            g.s(ALNUM, 64),
            "MPESA_CONSUMER_SECRET",
            f"MPESA_CONSUMER_KEY={g.p(ALNUM, 48)}\nMPESA_CONSUMER_SECRET={{v}}\nMPESA_SHORTCODE=174379",
        ),
    ),
    # Wise API tokens: UUIDs, sent as Bearer.
    K(
        "wise_api_token",
        "payment",
        lambda g: cred(
            g.secret_uuid(),
            "WISE_API_TOKEN",
            'curl -H "Authorization: Bearer {v}" https://api.transferwise.com/v4/profiles',
        ),
    ),
    # ---- database ----
    K(
        "postgres_url",
        "database",
        lambda g: connection(
            "postgresql",
            g.one(USERS),
            g.s(ALNUM, 24),
            hosts(g),
            5432,
            "orders?sslmode=require",
            "DATABASE_URL",
        ),
    ),
    K(
        "mysql_url",
        "database",
        lambda g: connection("mysql", g.one(USERS), words_password(g), hosts(g), 3306, "shop", "MYSQL_URL"),
    ),
    # MongoDB "Connection string URI format": mongodb+srv://user:password@cluster.
    K(
        "mongodb_srv_url",
        "database",
        lambda g: (
            lambda pw: cred(
                f"mongodb+srv://{g.one(USERS)}:{pw}@cluster0.{g.p(LOWER_ALNUM, 5)}.mongodb.net/?retryWrites=true&w=majority",
                "MONGODB_URI",
                token=pw,
            )
        )(g.s(ALNUM, 16)),
    ),
    # Redis URIs (redis-py, Upstash): rediss://default:<password>@host:port.
    K(
        "redis_url",
        "database",
        lambda g: (
            lambda pw: cred(
                f"rediss://default:{pw}@{g.one(('usw1-bright-ox', 'eu2-calm-cat', 'apn1-glad-yak'))}-{g.p(DIGITS, 5)}.upstash.io:6379",
                "REDIS_URL",
                token=pw,
            )
        )(g.s(ALNUM, 32)),
    ),
    # PostgreSQL "The password file": hostname:port:database:username:password.
    K(
        "pgpass_line",
        "database",
        lambda g: (
            lambda pw: cred(
                f"{hosts(g)}:5432:*:{g.one(USERS)}:{pw}",
                "PGPASS",
                "$ cat ~/.pgpass\n{v}",
                "echo '{v}' >> ~/.pgpass && chmod 600 ~/.pgpass",
                token=pw,
            )
        )(words_password(g)),
    ),
    # Microsoft JDBC driver: jdbc:sqlserver://host:port;databaseName=..;user=..;password=..
    K(
        "jdbc_sqlserver_password",
        "database",
        lambda g: (
            lambda pw: cred(
                f"jdbc:sqlserver://sql-{g.p(LOWER, 5)}.database.windows.net:1433;databaseName=erp;user=sa_app;password={pw};encrypt=true",
                "SPRING_DATASOURCE_URL",
                token=pw,
            )
        )(g.s(ALNUM + "!#$%", 20)),
    ),
    # ADO.NET SqlClient connection strings: Server=..;User Id=..;Password=..;
    K(
        "adonet_connection_string",
        "database",
        lambda g: (
            lambda pw: cred(
                f"Server=tcp:erp-{g.p(LOWER, 4)}.database.windows.net,1433;Initial Catalog=erp;User ID=appuser;Password={pw};Encrypt=True;",
                "ConnectionStrings__Default",
                token=pw,
            )
        )(words_password(g)),
    ),
    # Oracle Easy Connect with credentials: user/password@//host:port/service.
    K(
        "oracle_easy_connect",
        "database",
        lambda g: (
            lambda pw: cred(
                f"{g.one(('hr', 'scott', 'app_owner'))}/{pw}@//ora-{g.p(LOWER, 4)}.corp.lan:1521/ORCLPDB1",
                "ORACLE_CONN",
                "sqlplus {v}",
                token=pw,
            )
        )(g.s(ALNUM, 18)),
    ),
    # RabbitMQ "URI spec": amqp://user:password@host:port/vhost.
    K(
        "amqp_url",
        "database",
        lambda g: connection(
            "amqps",
            g.one(USERS),
            g.s(ALNUM, 28),
            "b-" + g.uuid() + ".mq.eu-west-1.amazonaws.com",
            5671,
            "%2F",
            "AMQP_URL",
        ),
    ),
    # PlanetScale passwords: "pscale_pw_" + 43 characters; service tokens "pscale_tkn_".
    K(
        "planetscale_password",
        "database",
        lambda g: cred(g.one(("pscale_pw_", "pscale_tkn_")) + g.s(B64URL, 43), "PLANETSCALE_PASSWORD"),
    ),
    # Neon: role passwords generated as "npg_" + 12 characters, inside the connection string.
    K(
        "neon_connection_string",
        "database",
        lambda g: (
            lambda pw: cred(
                f"postgresql://neondb_owner:{pw}@ep-{g.one(('cool', 'still', 'wild'))}-{g.one(('moon', 'river', 'leaf'))}-{g.p(LOWER_ALNUM, 8)}.eu-central-1.aws.neon.tech/neondb?sslmode=require",
                "DATABASE_URL",
                token=pw,
            )
        )("npg_" + g.s(ALNUM, 16)),
    ),
    # Elasticsearch "Create API key": header "Authorization: ApiKey base64(id:api_key)".
    K(
        "elasticsearch_api_key",
        "database",
        lambda g: cred(
            b64(g.p(B64URL, 20) + ":" + g.s(B64URL, 22)),
            "ES_API_KEY",
            'curl -H "Authorization: ApiKey {v}" https://es.acme.example:9243/_cat/indices',
        ),
    ),
    # InfluxDB 2.x API tokens: 86 base64url characters + "==".
    K(
        "influxdb_token",
        "database",
        lambda g: cred(
            g.s(B64URL, 86) + "==",
            "INFLUX_TOKEN",
            "influx config create -n prod -u https://eu-central-1-1.aws.cloud2.influxdata.com -t {v} -o acme",
        ),
    ),
    # DataStax Astra application tokens: "AstraCS:" + 24 letters + ":" + 64 hex.
    K(
        "astra_db_token",
        "database",
        lambda g: cred(f"AstraCS:{g.p(ALPHA, 24)}:{g.s(HEX, 64)}", "ASTRA_DB_APPLICATION_TOKEN"),
    ),
    # ClickHouse Cloud API keys: key id and a key secret beginning "4b1d".
    K(
        "clickhouse_key_secret",
        "database",
        lambda g: cred(
            "4b1d" + g.s(ALNUM, 38),
            "CLICKHOUSE_KEY_SECRET",
            f"CLICKHOUSE_KEY_ID={g.p(ALNUM, 20)}\nCLICKHOUSE_KEY_SECRET={{v}}",
        ),
    ),
    # Supabase "API keys": the service_role key is a JWT with role service_role (bypasses RLS).
    K(
        "supabase_service_role_key",
        "database",
        lambda g: cred(
            jwt(
                g,
                {"alg": "HS256", "typ": "JWT"},
                {
                    "iss": "supabase",
                    "ref": g.p(LOWER, 20),
                    "role": "service_role",
                    "iat": 1_717_000_000,
                    "exp": 2_032_576_000,
                },
            ),
            "SUPABASE_SERVICE_ROLE_KEY",
        ),
    ),
    # Snowflake connector config (connections.toml): account, user, password.
    K(
        "snowflake_password",
        "database",
        lambda g: cred(
            words_password(g),
            "SNOWFLAKE_PASSWORD",
            f'[connections.prod]\naccount = "{g.p(UPPER, 7)}-{g.p(UPPER, 7)}"\nuser = "DBT_RUNNER"\npassword = "{{v}}"\nwarehouse = "TRANSFORM_WH"',
        ),
    ),
    # MongoDB Atlas Admin API keys: public key 8 lowercase characters, private key a UUID.
    K(
        "mongodb_atlas_private_key",
        "database",
        lambda g: cred(
            g.secret_uuid(),
            "MONGODB_ATLAS_PRIVATE_KEY",
            f"atlas config set public_api_key {g.p(LOWER, 8)}\natlas config set private_api_key {{v}}",
        ),
    ),
    # Turso (libSQL) database auth tokens: EdDSA-signed JWTs.
    K(
        "turso_auth_token",
        "database",
        lambda g: cred(
            jwt(g, {"alg": "EdDSA", "typ": "JWT"}, {"a": "rw", "iat": 1_733_000_000, "id": g.uuid()}, 86),
            "TURSO_AUTH_TOKEN",
        ),
    ),
    # ---- registry ----
    # npm "About access tokens": npm_ + 36 characters (GitHub-style checksum), in .npmrc as _authToken.
    K(
        "npm_token",
        "registry",
        lambda g: cred(
            checksummed(g, "npm_"),
            "NPM_TOKEN",
            "//registry.npmjs.org/:_authToken={v}",
            "$ cat ~/.npmrc\n@acme:registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={v}",
        ),
    ),
    # PyPI "API tokens": macaroons, "pypi-AgEIcHlwaS5vcmc" + base64url; .pypirc username __token__.
    K(
        "pypi_token",
        "registry",
        lambda g: cred(
            "pypi-AgEIcHlwaS5vcmc" + g.s(B64URL, 160),
            "TWINE_PASSWORD",
            "[pypi]\n  username = __token__\n  password = {v}",
            "twine upload -u __token__ -p {v} dist/*",
        ),
    ),
    # Docker Hub personal access tokens: "dckr_pat_" + 27 characters.
    K(
        "dockerhub_pat",
        "registry",
        lambda g: cred(
            "dckr_pat_" + g.s(B64URL, 27),
            "DOCKERHUB_TOKEN",
            "echo {v} | docker login -u acmebot --password-stdin",
        ),
    ),
    # Docker config.json: "auths": {registry: {"auth": base64(user:password)}}.
    K(
        "docker_config_auth",
        "registry",
        lambda g: cred(
            b64(f"{g.one(USERS)}:{g.s(ALNUM, 28)}"),
            "DOCKER_AUTH",
            '{\n  "auths": {\n    "ghcr.io": {\n      "auth": "{v}"\n    }\n  }\n}',
            '{"auths":{"registry.gitlab.com":{"auth":"{v}"}}}',
        ),
    ),
    # RubyGems API keys: "rubygems_" + 48 hex (~/.gem/credentials).
    K(
        "rubygems_api_key",
        "registry",
        lambda g: cred("rubygems_" + g.s(HEX, 48), "GEM_HOST_API_KEY", "---\n:rubygems_api_key: {v}"),
    ),
    # NuGet.org API keys: "oy2" + 43 lowercase alphanumerics.
    K(
        "nuget_api_key",
        "registry",
        lambda g: cred(
            "oy2" + g.s(LOWER_ALNUM, 43),
            "NUGET_API_KEY",
            "dotnet nuget push bin/Release/Acme.Core.2.1.0.nupkg --api-key {v} --source https://api.nuget.org/v3/index.json",
        ),
    ),
    # crates.io API tokens: "cio" + 32 alphanumerics (~/.cargo/credentials.toml).
    K(
        "crates_io_token",
        "registry",
        lambda g: cred("cio" + g.s(ALNUM, 32), "CARGO_REGISTRY_TOKEN", '[registry]\ntoken = "{v}"'),
    ),
    # JFrog Artifactory: API keys "AKCp" + 69 characters; reference tokens "cmVmdGtu" (base64 "reftkn").
    K(
        "jfrog_token",
        "registry",
        lambda g: cred(
            g.one(("AKCp8", "cmVmdGtuOjAxOj")) + g.s(ALNUM, 64),
            "ARTIFACTORY_TOKEN",
            "<server>\n  <id>artifactory</id>\n  <username>ci</username>\n  <password>{v}</password>\n</server>",
        ),
    ),
    # Quay.io robot accounts: name "org+robot", token 64 uppercase alphanumerics.
    K(
        "quay_robot_token",
        "registry",
        lambda g: cred(
            g.s(UPPER_ALNUM, 64), "QUAY_ROBOT_TOKEN", "docker login -u='acme+deployer' -p='{v}' quay.io"
        ),
    ),
    # Azure Container Registry admin passwords (identifiable secrets): 52 characters with "+ACR".
    K(
        "acr_password",
        "registry",
        lambda g: cred(
            g.s(ALNUM + "/", 42) + "+ACR" + g.p(ALNUM, 6),
            "ACR_PASSWORD",
            "docker login acmeprod.azurecr.io -u acmeprod -p '{v}'",
        ),
    ),
    # Harbor robot accounts: name robot$project+name, secret 32 alphanumerics.
    K(
        "harbor_robot_secret",
        "registry",
        lambda g: cred(
            g.s(ALNUM, 32),
            "HARBOR_ROBOT_SECRET",
            "docker login harbor.acme.example -u 'robot$platform+ci' -p {v}",
        ),
    ),
    # Hex.pm API keys: 32 hex characters (HEX_API_KEY).
    K(
        "hexpm_api_key",
        "registry",
        lambda g: cred(g.s(HEX, 32), "HEX_API_KEY", "mix hex.publish --yes  # with HEX_API_KEY={v}"),
    ),
    # Cloudsmith API keys: 40 hex characters.
    K("cloudsmith_api_key", "registry", lambda g: cred(g.s(HEX, 40), "CLOUDSMITH_API_KEY")),
    K("pgp_private_key", "registry", pgp_private_key),
    # Maven settings.xml <server><password>: a deploy password in plain text.
    K(
        "maven_settings_password",
        "registry",
        lambda g: cred(
            words_password(g),
            "OSSRH_PASSWORD",
            "<settings>\n  <servers>\n    <server>\n      <id>ossrh</id>\n      <username>acme-release</username>\n      <password>{v}</password>\n    </server>\n  </servers>\n</settings>",
        ),
    ),
    # ---- observability ----
    # Datadog "API and application keys": API key 32 hex, application key 40 hex.
    K(
        "datadog_api_key",
        "observability",
        lambda g: cred(
            g.s(HEX, 32),
            "DD_API_KEY",
            'DD_API_KEY={v} DD_SITE=datadoghq.eu bash -c "$(curl -L https://install.datadoghq.com/scripts/install_script_agent7.sh)"',
        ),
    ),
    K(
        "datadog_app_key",
        "observability",
        lambda g: cred(
            g.s(HEX, 40),
            "DD_APP_KEY",
            f'curl -H "DD-API-KEY: {g.p(HEX, 32)}" -H "DD-APPLICATION-KEY: {{v}}" https://api.datadoghq.com/api/v1/monitor',
        ),
    ),
    # New Relic "API keys": user keys "NRAK-" + 27, license keys 40 characters ending "NRAL".
    K(
        "newrelic_user_key",
        "observability",
        lambda g: cred("NRAK-" + g.s(UPPER_ALNUM, 27), "NEW_RELIC_API_KEY"),
    ),
    K(
        "newrelic_license_key",
        "observability",
        lambda g: cred(
            g.s(HEX, 36) + "NRAL",
            "NEW_RELIC_LICENSE_KEY",
            "common: &default_settings\n  license_key: '{v}'\n  app_name: checkout",
        ),
    ),
    # Sentry auth tokens: organization "sntrys_" + base64 JSON + "_" + signature; user "sntryu_" + 64 hex.
    K(
        "sentry_auth_token",
        "observability",
        lambda g: cred(
            "sntrys_"
            + b64(
                json.dumps(
                    {
                        "iat": 1_730_000_000.1,
                        "url": "https://sentry.io",
                        "region_url": "https://de.sentry.io",
                        "org": "acme",
                    }
                )
            ).rstrip("=")
            + "_"
            + g.s(B64URL, 43)
            if g.r.random() < 0.5
            else "sntryu_" + g.s(HEX, 64),
            "SENTRY_AUTH_TOKEN",
            "[auth]\ntoken={v}",
        ),
    ),
    # Grafana service account tokens: "glsa_" + 32 characters + "_" + 8 hex.
    K(
        "grafana_service_account_token",
        "observability",
        lambda g: cred(f"glsa_{g.s(ALNUM, 32)}_{g.p(HEX, 8)}", "GRAFANA_TOKEN"),
    ),
    # Grafana Cloud access policy tokens: "glc_" + base64 JSON (o, n, k fields).
    K(
        "grafana_cloud_token",
        "observability",
        lambda g: cred(
            "glc_"
            + b64(
                json.dumps(
                    {
                        "o": g.num(6),
                        "n": "stack-" + g.num(6) + "-hm-write",
                        "k": g.s(ALNUM, 24),
                        "m": {"r": "prod-eu-west-2"},
                    },
                    separators=(",", ":"),
                )
            ),
            "GRAFANA_CLOUD_TOKEN",
        ),
    ),
    # Honeycomb configuration keys: 22 alphanumerics in x-honeycomb-team.
    K(
        "honeycomb_api_key",
        "observability",
        lambda g: cred(
            g.s(ALNUM, 22), "HONEYCOMB_API_KEY", 'OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team={v}"'
        ),
    ),
    # Splunk HTTP Event Collector tokens: UUIDs, header "Authorization: Splunk <token>".
    K(
        "splunk_hec_token",
        "observability",
        lambda g: cred(
            g.secret_uuid(),
            "SPLUNK_HEC_TOKEN",
            'curl -k https://splunk.acme.example:8088/services/collector -H "Authorization: Splunk {v}" -d \'{"event": "hello"}\'',
        ),
    ),
    # Dynatrace "Access tokens": dt0c01.<24 characters>.<64 characters>.
    K(
        "dynatrace_token",
        "observability",
        lambda g: cred(f"dt0c01.{g.p(UPPER_ALNUM, 24)}.{g.s(UPPER_ALNUM, 64)}", "DT_API_TOKEN"),
    ),
    # PagerDuty REST API keys: 20 characters (user tokens begin "u+").
    K(
        "pagerduty_api_key",
        "observability",
        lambda g: cred(
            g.one(("u+", "y_", "e+")) + g.s(B64URL, 18),
            "PAGERDUTY_TOKEN",
            'curl -H "Authorization: Token token={v}" https://api.pagerduty.com/incidents',
        ),
    ),
    # PagerDuty Events API v2 integration (routing) keys: 32 hex; anyone with one can open incidents.
    K(
        "pagerduty_routing_key",
        "observability",
        lambda g: cred(
            g.s(HEX, 32),
            "PAGERDUTY_ROUTING_KEY",
            "receivers:\n- name: oncall\n  pagerduty_configs:\n  - routing_key: {v}\n    severity: critical",
        ),
    ),
    # Opsgenie API keys: UUIDs, header "Authorization: GenieKey <key>".
    K(
        "opsgenie_api_key",
        "observability",
        lambda g: cred(
            g.secret_uuid(),
            "OPSGENIE_API_KEY",
            'curl -H "Authorization: GenieKey {v}" https://api.eu.opsgenie.com/v2/alerts',
        ),
    ),
    # Axiom API tokens: "xaat-" + UUID; personal tokens "xapt-".
    K(
        "axiom_token",
        "observability",
        lambda g: cred(g.one(("xaat-", "xapt-")) + g.secret_uuid(), "AXIOM_TOKEN"),
    ),
    # Rollbar project access tokens: 32 hex (post_server_item).
    K(
        "rollbar_access_token",
        "observability",
        lambda g: cred(g.s(HEX, 32), "ROLLBAR_ACCESS_TOKEN", "rollbar.init('{v}', environment='production')"),
    ),
    # PostHog personal API keys: "phx_" + 43 characters (project keys "phc_" are public).
    K(
        "posthog_personal_key",
        "observability",
        lambda g: cred("phx_" + g.s(ALNUM, 43), "POSTHOG_PERSONAL_API_KEY"),
    ),
    # LaunchDarkly server-side SDK keys: "sdk-" + UUID; API access tokens "api-" + UUID.
    K(
        "launchdarkly_key",
        "observability",
        lambda g: cred(g.one(("sdk-", "api-")) + g.secret_uuid(), "LAUNCHDARKLY_SDK_KEY"),
    ),
    # Logz.io shipping tokens: 32 alphanumerics.
    K(
        "logzio_shipping_token",
        "observability",
        lambda g: cred(
            g.s(ALNUM, 32), "LOGZIO_TOKEN", "https://listener-eu.logz.io:8071/?token={v}&type=nginx"
        ),
    ),
    # Better Stack (Logtail) source tokens: 24 alphanumerics.
    K("betterstack_source_token", "observability", lambda g: cred(g.s(ALNUM, 24), "LOGTAIL_SOURCE_TOKEN")),
    # ---- ai ----
    # OpenAI API keys: project keys "sk-proj-", service accounts "sk-svcacct-", admin "sk-admin-", long
    # base64url with "T3BlbkFJ" (base64 "OpenAI") in the middle; legacy keys sk-<20>T3BlbkFJ<20>.
    K(
        "openai_api_key",
        "ai",
        lambda g: cred(
            g.one(("sk-proj-", "sk-proj-", "sk-svcacct-", "sk-admin-"))
            + g.s(B64URL, 74)
            + "T3BlbkFJ"
            + g.p(B64URL, 74),
            "OPENAI_API_KEY",
            'from openai import OpenAI\nclient = OpenAI(api_key="{v}")',
        ),
    ),
    K(
        "openai_legacy_key",
        "ai",
        lambda g: cred("sk-" + g.s(ALNUM, 20) + "T3BlbkFJ" + g.p(ALNUM, 20), "OPENAI_API_KEY"),
    ),
    # Anthropic Console keys: "sk-ant-api03-" + 93 characters + "AA"; admin keys "sk-ant-admin01-".
    K(
        "anthropic_api_key",
        "ai",
        lambda g: cred(
            g.one(("sk-ant-api03-", "sk-ant-api03-", "sk-ant-admin01-")) + g.s(B64URL, 93) + "AA",
            "ANTHROPIC_API_KEY",
            'curl https://api.anthropic.com/v1/messages -H "x-api-key: {v}" -H "anthropic-version: 2023-06-01"',
        ),
    ),
    # Hugging Face User Access Tokens: "hf_" + 34 letters.
    K(
        "huggingface_token",
        "ai",
        lambda g: cred("hf_" + g.s(ALPHA, 34), "HF_TOKEN", "huggingface-cli login --token {v}"),
    ),
    # Cohere API keys: 40 alphanumerics (CO_API_KEY).
    K("cohere_api_key", "ai", lambda g: cred(g.s(ALNUM, 40), "CO_API_KEY", 'co = cohere.ClientV2("{v}")')),
    # Replicate API tokens: "r8_" + 37 characters.
    K("replicate_token", "ai", lambda g: cred("r8_" + g.s(ALNUM, 37), "REPLICATE_API_TOKEN")),
    # Groq API keys: "gsk_" + 52 alphanumerics.
    K("groq_api_key", "ai", lambda g: cred("gsk_" + g.s(ALNUM, 52), "GROQ_API_KEY")),
    # Mistral La Plateforme API keys: 32 alphanumerics.
    K("mistral_api_key", "ai", lambda g: cred(g.s(ALNUM, 32), "MISTRAL_API_KEY")),
    # Perplexity API keys: "pplx-" + 48 alphanumerics.
    K("perplexity_api_key", "ai", lambda g: cred("pplx-" + g.s(ALNUM, 48), "PERPLEXITY_API_KEY")),
    # Google AI Studio (Gemini) API keys: Google API key format "AIza" + 35.
    K(
        "gemini_api_key",
        "ai",
        lambda g: cred("AIza" + g.s(B64URL, 35), "GEMINI_API_KEY", 'genai.configure(api_key="{v}")'),
    ),
    # DeepSeek platform keys: "sk-" + 32 hex.
    K(
        "deepseek_api_key",
        "ai",
        lambda g: cred(
            "sk-" + g.s(HEX, 32),
            "DEEPSEEK_API_KEY",
            'client = OpenAI(api_key="{v}", base_url="https://api.deepseek.com")',
        ),
    ),
    # Together AI API keys: 64 hex (legacy) / "tgp_v1_" + 43 characters.
    K(
        "together_api_key",
        "ai",
        lambda g: cred(
            "tgp_v1_" + g.s(B64URL, 43) if g.r.random() < 0.5 else g.s(HEX, 64), "TOGETHER_API_KEY"
        ),
    ),
    # Fireworks AI API keys: "fw_" + 24 alphanumerics.
    K("fireworks_api_key", "ai", lambda g: cred("fw_" + g.s(ALNUM, 24), "FIREWORKS_API_KEY")),
    # xAI API keys: "xai-" + 80 alphanumerics.
    K("xai_api_key", "ai", lambda g: cred("xai-" + g.s(ALNUM, 80), "XAI_API_KEY")),
    # OpenRouter keys: "sk-or-v1-" + 64 hex.
    K("openrouter_api_key", "ai", lambda g: cred("sk-or-v1-" + g.s(HEX, 64), "OPENROUTER_API_KEY")),
    # LangSmith keys: "lsv2_pt_" personal / "lsv2_sk_" service, 32 hex + "_" + 10 hex.
    K(
        "langsmith_api_key",
        "ai",
        lambda g: cred(
            g.one(("lsv2_pt_", "lsv2_sk_")) + g.s(HEX, 32) + "_" + g.p(HEX, 10), "LANGSMITH_API_KEY"
        ),
    ),
    # Pinecone API keys: "pcsk_" + short id + "_" + secret.
    K("pinecone_api_key", "ai", lambda g: cred(f"pcsk_{g.p(ALNUM, 5)}_{g.s(ALNUM, 64)}", "PINECONE_API_KEY")),
    # Weights & Biases API keys: 40 hex, kept by `wandb login` in ~/.netrc.
    K(
        "wandb_api_key",
        "ai",
        lambda g: cred(g.s(HEX, 40), "WANDB_API_KEY", "machine api.wandb.ai\n  login user\n  password {v}"),
    ),
    # ElevenLabs API keys: "sk_" + 48 hex (xi-api-key header).
    K(
        "elevenlabs_api_key",
        "ai",
        lambda g: cred(
            "sk_" + g.s(HEX, 48),
            "ELEVENLABS_API_KEY",
            'curl -H "xi-api-key: {v}" https://api.elevenlabs.io/v1/voices',
        ),
    ),
    # AssemblyAI API keys: 32 hex (authorization header).
    K(
        "assemblyai_api_key",
        "ai",
        lambda g: cred(g.s(HEX, 32), "ASSEMBLYAI_API_KEY", 'aai.settings.api_key = "{v}"'),
    ),
    # Deepgram API keys: 40 hex ("Authorization: Token <key>").
    K(
        "deepgram_api_key",
        "ai",
        lambda g: cred(
            g.s(HEX, 40),
            "DEEPGRAM_API_KEY",
            'curl -H "Authorization: Token {v}" https://api.deepgram.com/v1/listen',
        ),
    ),
    # Azure OpenAI resource keys: 32 hex characters, "api-key" header.
    K(
        "azure_openai_key",
        "ai",
        lambda g: cred(
            g.s(HEX, 32),
            "AZURE_OPENAI_API_KEY",
            'curl "https://acme-oai.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01" -H "api-key: {v}"',
        ),
    ),
    # Alibaba Model Studio (DashScope) API keys: "sk-" + 32 hex.
    K("dashscope_api_key", "ai", lambda g: cred("sk-" + g.s(HEX, 32), "DASHSCOPE_API_KEY")),
    # Zhipu AI (BigModel) API keys: <32 hex id>.<16-character secret>.
    K("zhipu_api_key", "ai", lambda g: cred(f"{g.p(HEX, 32)}.{g.s(ALNUM, 16)}", "ZHIPUAI_API_KEY")),
    # Langfuse project keys: secret "sk-lf-" + UUID (public "pk-lf-").
    K(
        "langfuse_secret_key",
        "ai",
        lambda g: cred(
            "sk-lf-" + g.secret_uuid(),
            "LANGFUSE_SECRET_KEY",
            f"LANGFUSE_PUBLIC_KEY=pk-lf-{g.uuid()}\nLANGFUSE_SECRET_KEY={{v}}\nLANGFUSE_HOST=https://cloud.langfuse.com",
        ),
    ),
    # Tavily API keys: "tvly-" + 32 alphanumerics.
    K("tavily_api_key", "ai", lambda g: cred("tvly-" + g.s(ALNUM, 32), "TAVILY_API_KEY")),
    # Voyage AI API keys: "pa-" + 43 characters.
    K("voyage_api_key", "ai", lambda g: cred("pa-" + g.s(B64URL, 43), "VOYAGE_API_KEY")),
    # Moonshot AI (Kimi) API keys: "sk-" + 48 alphanumerics.
    K("moonshot_api_key", "ai", lambda g: cred("sk-" + g.s(ALNUM, 48), "MOONSHOT_API_KEY")),
    # ---- saas ----
    # SendGrid API keys: "SG." + 22 characters + "." + 43 characters.
    K(
        "sendgrid_api_key",
        "saas",
        lambda g: cred(
            f"SG.{g.p(B64URL, 22)}.{g.s(B64URL, 43)}",
            "SENDGRID_API_KEY",
            "EMAIL_HOST = 'smtp.sendgrid.net'\nEMAIL_HOST_USER = 'apikey'\nEMAIL_HOST_PASSWORD = '{v}'",
        ),
    ),
    # Mailgun private API keys: "key-" + 32 hex (newer: 32 hex + "-" + 8 hex + "-" + 8 hex).
    K(
        "mailgun_api_key",
        "saas",
        lambda g: cred(
            "key-" + g.s(HEX, 32)
            if g.r.random() < 0.5
            else g.s(HEX, 32) + "-" + g.p(HEX, 8) + "-" + g.p(HEX, 8),
            "MAILGUN_API_KEY",
            "curl -s --user 'api:{v}' https://api.eu.mailgun.net/v3/mg.acme.example/messages",
        ),
    ),
    # Mailchimp Marketing API keys: 32 hex + "-" + data center ("-us21").
    K(
        "mailchimp_api_key",
        "saas",
        lambda g: cred(g.s(HEX, 32) + f"-us{g.r.randint(1, 21)}", "MAILCHIMP_API_KEY"),
    ),
    # Postmark server tokens: UUIDs, header X-Postmark-Server-Token.
    K(
        "postmark_server_token",
        "saas",
        lambda g: cred(
            g.secret_uuid(),
            "POSTMARK_SERVER_TOKEN",
            'curl https://api.postmarkapp.com/email -H "X-Postmark-Server-Token: {v}"',
        ),
    ),
    # Brevo (Sendinblue) API v3 keys: "xkeysib-" + 64 hex + "-" + 16 characters.
    K("brevo_api_key", "saas", lambda g: cred(f"xkeysib-{g.s(HEX, 64)}-{g.p(ALNUM, 16)}", "BREVO_API_KEY")),
    # Shopify "Access tokens": Admin API shpat_, custom app shpca_, app shared secret shpss_, + 32 hex.
    K(
        "shopify_token",
        "saas",
        lambda g: cred(
            g.one(("shpat_", "shpat_", "shpca_", "shpss_")) + g.s(HEX, 32),
            "SHOPIFY_ACCESS_TOKEN",
            'curl -H "X-Shopify-Access-Token: {v}" https://acme-store.myshopify.com/admin/api/2024-10/orders.json',
        ),
    ),
    # Atlassian API tokens: "ATATT3xFfGF0" + ~180 characters + "=" + 8 hex checksum.
    K(
        "atlassian_api_token",
        "saas",
        lambda g: cred(
            "ATATT3xFfGF0" + g.s(B64URL, 170) + "=" + g.p(HEX.upper(), 8),
            "JIRA_API_TOKEN",
            "curl -u kenji@acme.example:{v} https://acme.atlassian.net/rest/api/3/myself",
        ),
    ),
    # Notion integration secrets: "ntn_" + 46 characters (older "secret_" + 43).
    K(
        "notion_token",
        "saas",
        lambda g: cred(
            "ntn_" + g.p(DIGITS, 11) + g.s(ALNUM, 35) if g.r.random() < 0.6 else "secret_" + g.s(ALNUM, 43),
            "NOTION_TOKEN",
        ),
    ),
    # Airtable personal access tokens: "pat" + 14 characters + "." + 64 hex.
    K("airtable_pat", "saas", lambda g: cred(f"pat{g.p(ALNUM, 14)}.{g.s(HEX, 64)}", "AIRTABLE_TOKEN")),
    # Asana personal access tokens: "2/<user gid>/<token gid>:<32 hex>".
    K("asana_pat", "saas", lambda g: cred(f"2/{g.num(16)}/{g.num(16)}:{g.s(HEX, 32)}", "ASANA_PAT")),
    # Linear personal API keys: "lin_api_" + 40 alphanumerics.
    K("linear_api_key", "saas", lambda g: cred("lin_api_" + g.s(ALNUM, 40), "LINEAR_API_KEY")),
    # Figma personal access tokens: "figd_" + 40 characters.
    K(
        "figma_pat",
        "saas",
        lambda g: cred(
            "figd_" + g.s(B64URL, 40),
            "FIGMA_TOKEN",
            'curl -H "X-Figma-Token: {v}" https://api.figma.com/v1/files/abc123',
        ),
    ),
    # HubSpot private app access tokens: "pat-na1-" / "pat-eu1-" + UUID.
    K(
        "hubspot_private_app_token",
        "saas",
        lambda g: cred(g.one(("pat-na1-", "pat-eu1-")) + g.secret_uuid(), "HUBSPOT_ACCESS_TOKEN"),
    ),
    # Okta API tokens: "00" + 40 characters, header "Authorization: SSWS <token>".
    K(
        "okta_api_token",
        "saas",
        lambda g: cred(
            "00" + g.s(B64URL, 40),
            "OKTA_API_TOKEN",
            'curl -H "Authorization: SSWS {v}" https://acme.okta.com/api/v1/users?limit=25',
        ),
    ),
    # Auth0 application client secrets: 64 characters [A-Za-z0-9_-].
    K(
        "auth0_client_secret",
        "saas",
        lambda g: cred(
            g.s(B64URL, 64),
            "AUTH0_CLIENT_SECRET",
            f"AUTH0_DOMAIN=acme.eu.auth0.com\nAUTH0_CLIENT_ID={g.p(ALNUM, 32)}\nAUTH0_CLIENT_SECRET={{v}}",
        ),
    ),
    # Clerk secret keys: "sk_live_" + base62 (publishable "pk_live_" is public).
    K(
        "clerk_secret_key",
        "saas",
        lambda g: cred(
            "sk_live_" + g.s(ALNUM, 42),
            "CLERK_SECRET_KEY",
            f"NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=pk_live_{b64('clerk.acme.example$').rstrip('=')}\nCLERK_SECRET_KEY={{v}}",
        ),
    ),
    # Typeform personal tokens: "tfp_" + 44 characters + "_" + 14 characters.
    K("typeform_token", "saas", lambda g: cred(f"tfp_{g.s(B64URL, 44)}_{g.p(ALNUM, 14)}", "TYPEFORM_TOKEN")),
    # Dropbox short-lived access tokens: "sl." + ~135 characters.
    K("dropbox_access_token", "saas", lambda g: cred("sl." + g.s(B64URL, 136), "DROPBOX_ACCESS_TOKEN")),
    # Contentful personal access tokens: "CFPAT-" + 43 characters.
    K(
        "contentful_pat",
        "saas",
        lambda g: cred(
            "CFPAT-" + g.s(B64URL, 43),
            "CONTENTFUL_MANAGEMENT_TOKEN",
            "contentful login --management-token {v}",
        ),
    ),
    # Mapbox secret tokens: "sk." + base64 JSON ({"u": user, "a": id}) + "." + 22 characters.
    K(
        "mapbox_secret_token",
        "saas",
        lambda g: cred(
            "sk."
            + b64url(
                json.dumps(
                    {"u": g.one(("acme", "kenji-maps")), "a": g.p(LOWER_ALNUM, 25)}, separators=(",", ":")
                )
            )
            + "."
            + g.s(B64URL, 22),
            "MAPBOX_DOWNLOADS_TOKEN",
            "machine api.mapbox.com\nlogin mapbox\npassword {v}",
        ),
    ),
    # Meta Graph API access tokens: "EAA" + app-specific letter + ~180 alphanumerics.
    K(
        "facebook_access_token",
        "saas",
        lambda g: cred(
            "EAAG" + g.s(ALNUM, 180),
            "FB_ACCESS_TOKEN",
            "curl -G https://graph.facebook.com/v19.0/me/accounts -d access_token={v}",
        ),
    ),
    # X (Twitter) API v2 app-only bearer tokens: "AAAAAAAAAAAAAAAAAAAAA" then percent-encoded base64.
    K(
        "x_bearer_token",
        "saas",
        lambda g: cred(
            "AAAAAAAAAAAAAAAAAAAAA" + g.p(ALNUM, 10) + "AAAAAA" + g.s(ALNUM, 26) + "%3D" + g.p(ALNUM, 50),
            "TWITTER_BEARER_TOKEN",
        ),
    ),
    # Postman API keys: "PMAK-" + 24 hex + "-" + 34 hex.
    K("postman_api_key", "saas", lambda g: cred(f"PMAK-{g.p(HEX, 24)}-{g.s(HEX, 34)}", "POSTMAN_API_KEY")),
    # ngrok authtokens: "2" + 26 characters + "_" + 21 characters (ngrok.yml authtoken).
    K(
        "ngrok_authtoken",
        "saas",
        lambda g: cred(
            "2" + g.p(ALNUM, 26) + "_" + g.s(ALNUM, 21),
            "NGROK_AUTHTOKEN",
            'version: "2"\nauthtoken: {v}\ntunnels:\n  web:\n    proto: http\n    addr: 3000',
            "ngrok config add-authtoken {v}",
        ),
    ),
    # Cloudinary CLOUDINARY_URL: cloudinary://<api key>:<api secret>@<cloud name>.
    K(
        "cloudinary_url",
        "saas",
        lambda g: (
            lambda s: cred(
                f"cloudinary://{g.p(DIGITS, 15)}:{s}@{g.one(('acme-media', 'dxk3f9', 'shopimg'))}",
                "CLOUDINARY_URL",
                token=s,
            )
        )(g.s(B64URL, 27)),
    ),
    # Zendesk API tokens: 40 alphanumerics, basic auth "email/token:<token>".
    K(
        "zendesk_api_token",
        "saas",
        lambda g: cred(
            g.s(ALNUM, 40),
            "ZENDESK_API_TOKEN",
            "curl https://acme.zendesk.com/api/v2/tickets.json -u support@acme.example/token:{v}",
        ),
    ),
    # Salesforce OAuth access tokens: "00D" org id + "!" + session part.
    K(
        "salesforce_access_token",
        "saas",
        lambda g: cred(
            f"00D{g.p(ALNUM, 12)}!{g.s(ALNUM + '._', 96)}",
            "SF_ACCESS_TOKEN",
            "sf org login access-token --instance-url https://acme.my.salesforce.com  # token {v}",
        ),
    ),
    # Algolia Admin API key: 32 hex (the search-only key is public; the admin key is not).
    K(
        "algolia_admin_key",
        "saas",
        lambda g: cred(
            g.s(HEX, 32),
            "ALGOLIA_ADMIN_API_KEY",
            f"ALGOLIA_APP_ID={g.p(UPPER_ALNUM, 10)}\nALGOLIA_ADMIN_API_KEY={{v}}",
        ),
    ),
    # Gmail "Sign in with app passwords": 16 lowercase letters shown in four groups of four.
    K(
        "gmail_app_password",
        "saas",
        lambda g: (
            lambda s: cred(
                " ".join(s[i : i + 4] for i in range(0, 16, 4)),
                "EMAIL_HOST_PASSWORD",
                "smtp.gmail.com:587 user=alerts@acme.example pass={v}",
            )
        )(g.s(LOWER, 16)),
    ),
    # RFC 7617 Basic authentication: "Authorization: Basic base64(user:password)".
    K(
        "basic_auth_header",
        "saas",
        lambda g: cred(
            b64(f"{g.one(USERS)}:{words_password(g)}"),
            "AUTH_HEADER",
            "Authorization: Basic {v}",
            "curl -H 'Authorization: Basic {v}' https://internal-api.acme.example/v1/export",
        ),
    ),
    # SMTP URLs (Django-environ, Symfony Mailer DSN): smtp://user:password@host:port.
    K(
        "smtp_url_password",
        "saas",
        lambda g: (
            lambda pw: cred(
                f"smtp://postmaster%40mg.acme.example:{pw}@smtp.eu.mailgun.org:587", "MAILER_DSN", token=pw
            )
        )(g.s(ALNUM, 24)),
    ),
    # Django settings SECRET_KEY: 50 characters from get_random_secret_key's alphabet.
    K(
        "django_secret_key",
        "saas",
        lambda g: cred(g.s(LOWER_ALNUM + "!@#%^&*(-_=+)", 50), "DJANGO_SECRET_KEY", "SECRET_KEY = '{v}'"),
    ),
    # Value under a secret name, the shape most vendors leave: 32 hex under *_AUTH_TOKEN / api_key.
    K(
        "hex_under_secret_name",
        "saas",
        lambda g: cred(
            g.s(HEX, 32),
            g.one(
                (
                    "ACMEPAY_AUTH_TOKEN",
                    "SHIPBOB_API_KEY",
                    "api_key",
                    "WEBHOOK_SECRET",
                    "x_api_token",
                    "CRM_SECRET",
                )
            ),
        ),
    ),
    # A human password under a password name (words, digits and a symbol).
    K(
        "password_under_name",
        "saas",
        lambda g: cred(
            words_password(g),
            g.one(
                (
                    "DB_PASSWORD",
                    "password",
                    "ADMIN_PASS",
                    "smtp_password",
                    "KEYSTORE_PASSWORD",
                    "rabbitmq_default_pass",
                )
            ),
        ),
    ),
    # A random token under a generic secret name (JWT signing secrets, session keys).
    K(
        "random_under_secret_name",
        "saas",
        lambda g: cred(
            g.s(B64URL, 48),
            g.one(
                (
                    "JWT_SECRET",
                    "SESSION_SECRET",
                    "APP_KEY",
                    "NEXTAUTH_SECRET",
                    "signing_secret",
                    "client_secret",
                )
            ),
        ),
    ),
    # Twitch application client secrets: 30 lowercase alphanumerics.
    K(
        "twitch_client_secret",
        "saas",
        lambda g: cred(
            g.s(LOWER_ALNUM, 30),
            "TWITCH_CLIENT_SECRET",
            f"TWITCH_CLIENT_ID={g.p(LOWER_ALNUM, 30)}\nTWITCH_CLIENT_SECRET={{v}}",
        ),
    ),
    # 1Password service account tokens: "ops_" + base64 JSON (OP_SERVICE_ACCOUNT_TOKEN).
    K(
        "onepassword_service_account_token",
        "saas",
        lambda g: cred("ops_eyJzaWduSW5BZGRyZXNzIjoi" + g.s(B64, 240), "OP_SERVICE_ACCOUNT_TOKEN"),
    ),
)


# ---- where agents paste them ----
# Placeholders: {n} the variable name, {nl} lower-case, {nc} camelCase, {v} the credential (last, so a value
# never gets a filler substituted into it), {vj} the credential escaped for a JSON string, {vi4}/{vi6}
# indented for a YAML block; fillers {date}, {time}, {who}, {ticket}, {host}, {ip}, {sha}, {env}.
LINE_CONTEXTS: tuple[str, ...] = (
    "export {n}={v}",
    "$ history | tail -4\n  501  cd ~/src/billing\n  502  export {n}='{v}'\n  503  make migrate\n  504  make run",
    "# .env.{env}\nDEBUG=false\nALLOWED_HOSTS=api.acme.example\n{n}={v}\nLOG_LEVEL=info",
    "{nl}: {v}\ntimeout_seconds: 30\nretries: 3",
    'service:\n  name: checkout\n  credentials:\n    {nl}: "{v}"\n  region: eu-west-1',
    '{{\n  "service": "ingest",\n  "{nc}": "{vj}",\n  "batchSize": 500\n}}',
    '[default]\nendpoint = "https://{host}"\n{nl} = "{v}"\nverify_tls = true',
    "[credentials]\n{nl} = {v}\n\n[logging]\nlevel = WARN",
    'variable "{nl}" {{\n  type      = string\n  sensitive = true\n  default   = "{v}"\n}}',
    '<appSettings>\n  <add key="{n}" value="{v}" />\n  <add key="Environment" value="{env}" />\n</appSettings>',
    'import os\nos.environ.setdefault("{n}", "{v}")  # TODO move to vault before merge',
    'settings = {{\n    "{nl}": "{v}",  # from {who}, {date}\n    "timeout": 10,\n}}',
    "const config = {{\n  {nc}: process.env.{n} ?? '{v}',\n  retries: 2,\n}};",
    'func init() {{\n\tos.Setenv("{n}", "{v}") // local testing only\n}}',
    'ENV["{n}"] ||= "{v}"',
    "# application-{env}.properties\nspring.application.name=orders\napp.integration.{nc}={v}\nserver.port=8081",
    '{{\n  "Logging": {{ "LogLevel": {{ "Default": "Information" }} }},\n  "Integrations": {{ "{nc}": "{vj}" }}\n}}',
    "<?php\ndefine('{n}', '{v}');\nrequire __DIR__ . '/vendor/autoload.php';",
    'let {nl} = "{v}"; // TODO: read from env',
    'curl -sS -H "Authorization: Bearer {v}" https://{host}/v1/status | jq .',
    "docker run --rm -e {n}={v} -p 8080:8080 ghcr.io/acme/worker:1.14.2",
    "services:\n  worker:\n    image: acme/worker:latest\n    environment:\n      - {n}={v}\n      - QUEUE=default",
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: worker-env\ntype: Opaque\nstringData:\n  {n}: "{v}"',
    "jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {n}: {v}  # FIXME use secrets.{n}\n    steps:\n      - run: ./deploy.sh",
    'variables:\n  {n}: "{v}"\n\ndeploy:\n  stage: deploy\n  script: ./scripts/deploy.sh',
    '{{\n "cells": [{{\n  "cell_type": "code",\n  "source": ["import os\\n", "os.environ[\\"{n}\\"] = \\"{vj}\\"\\n"]\n }}]\n}}',
    "In [3]: {nl} = '{v}'\nIn [4]: client = Client({nl})\nIn [5]: client.ping()\nOut[5]: True",
    "## Incident {ticket} – {date}\n- 14:02 alerts fired for {host}\n- 14:09 {who} re-issued the credential: `{v}`\n- 14:15 error rate back to baseline",
    "### PR: switch the exporter to the new account\nTested locally with `{n}={v}`; reviewers, please don't merge before {date}.",
    'Traceback (most recent call last):\n  File "/app/sync.py", line 88, in push\n    resp.raise_for_status()\nrequests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://{host}/api?{nl}={v}',
    '{{"ts":"{date}T{time}Z","level":"debug","msg":"outgoing request","headers":{{"Authorization":"Bearer {vj}"}},"host":"{host}"}}',
    "| Service | Owner | Credential |\n|---|---|---|\n| ingest | {who} | `{v}` |\n| search | platform | see vault |",
    "From: {who}@acme.example\nSubject: creds for the {env} migration\n\nHi,\nhere is what you asked for: {v}\nPlease delete this mail once you've stored it.\n-- \n{who}",
    "[screenshot of the provider console, transcribed]\nName: ci-{env}\nCreated: {date}\nKey\n{v}\n(Copy)   Regenerate   Revoke",
    '[Service]\nEnvironment="{n}={v}"\nExecStart=/usr/local/bin/agent --config /etc/agent.yml',
    "- name: configure exporter\n  hosts: monitoring\n  vars:\n    {nl}: {v}\n  roles:\n    - exporter",
    "# values-{env}.yaml\nimage:\n  tag: 3.2.1\nsecrets:\n  {nc}: {v}",
    "deploy:\n\t{n}={v} ./scripts/release.sh $(VERSION)",
    '$env:{n} = "{v}"\n.\\Invoke-Sync.ps1 -Verbose',
    "set {n}={v}\r\ncall build.cmd",
    "set -gx {n} {v}",
    '{nl} = "{v}"\nregion = "eu-north-1"',
    "INSERT INTO integration_settings (name, value) VALUES ('{nl}', '{v}');",
    'FROM python:3.12-slim\nENV {n}={v}\nCOPY . /app\nCMD ["python", "-m", "worker"]',
    'buildConfigField("String", "{n}", "\\"{v}\\"")',
    'let {nc} = "{v}"  // Info.plist override for the beta build',
    'config :acme, Acme.Client,\n  {nl}: "{v}",\n  timeout: 15_000',
    "Remembered for this project: the {env} {nl} is {v} (rotates quarterly, owner {who}).",
    "diff --git a/.env.example b/.env.example\n@@ -3,3 +3,3 @@\n-{n}=\n+{n}={v}\n PORT=8080",
    'POST /v2/sync HTTP/1.1\nHost: {host}\nAuthorization: Bearer {v}\nContent-Type: application/json\n\n{{"full": true}}',
    '{{"id": "{sha8}", "name": "{env}", "values": [{{"key": "{nl}", "value": "{vj}", "enabled": true}}]}}',
    "*/15 * * * * {n}={v} /opt/jobs/backup.sh >> /var/log/backup.log 2>&1",
    '"env": {{\n  "{n}": "{vj}",\n  "NODE_ENV": "development"\n}}',
    'proxy_set_header X-Api-Key "{v}";\nproxy_pass http://upstream_api;',
    "kubectl create secret generic worker-env --from-literal={n}={v} -n {env}",
    "gh secret set {n} --body '{v}' --repo acme/platform",
    "aws ssm put-parameter --name /{env}/{nl} --type SecureString --value '{v}'",
    "op item create --category=login --title='{n} {env}' 'credential={v}'",
    "2026-11-0{d} {time} WARN  config loaded from env: {n}={v} (masking disabled in debug mode)",
    "$ printenv | grep -i {nl}\n{n}={v}",
    "{n} = {v}",
    "  {nl}     {v}",
    "heroku config:set {n}={v} -a acme-{env}",
    "fly secrets set {n}={v} -a acme-{env}",
    "vercel env add {n} production <<< '{v}'",
    "README (internal):\n1. Install the CLI.\n2. Log in with `{v}`.\n3. Run `make bootstrap`.",
    '// Config.java\npublic static final String {n} = "{v}";',
    'var client = new ApiClient(new ApiClientOptions {{ {nc} = "{v}" }});',
    'client := acme.NewClient(acme.WithToken("{v}"))',
    "<dict>\n  <key>{n}</key>\n  <string>{v}</string>\n</dict>",
    'data class Settings(val {nc}: String = "{v}")',
    '[[env]]\nname = "{n}"\nvalue = "{v}"',
    '"{nl}" => "{v}",',
    "SET @{nl} = '{v}';",
    "source .venv/bin/activate && {n}='{v}' pytest tests/integration -k smoke",
    "echo '{v}' > ~/.config/acme/{nl} && chmod 600 ~/.config/acme/{nl}",
    'Exception in thread "main" com.acme.client.AuthException: 401 from https://{host}/v2 (credential={v})\n\tat com.acme.client.Http.send(Http.java:212)\n\tat com.acme.sync.Main.main(Main.java:41)',
    "AxiosError: Request failed with status code 403\n    at settle (node_modules/axios/lib/core/settle.js:19:12)\n  config: {{\n    headers: {{ Authorization: 'Bearer {v}', 'User-Agent': 'axios/1.7.7' }}\n  }}",
    "thread 'main' panicked at src/main.rs:48:10:\ncalled `Result::unwrap()` on an `Err` value: Unauthorized {{ {nl}: \"{v}\" }}",
    'time="{date}T{time}Z" level=error msg="upstream rejected credentials" {nl}={v} retry=3',
    "+ curl -fsS -H 'Authorization: token {v}' https://{host}/api/v1/health\ncurl: (22) The requested URL returned error: 401",
    '$ docker inspect worker --format \'{{{{json .Config.Env}}}}\'\n["PATH=/usr/local/bin:/usr/bin","{n}={vj}","LANG=C.UTF-8"]',
    "$ ps aux | grep sync\nsvc      41822  2.1  0.4 812344 66120 ?  Sl  09:12  0:41 /opt/sync/bin/sync --{nl}={v} --interval 60",
    '  # module.integrations.acme_connection.this will be created\n  + resource "acme_connection" "this" {{\n      + name     = "{env}"\n      + {nl}  = "{v}"\n    }}',
    "name,environment,credential,owner\ningest,{env},{v},{who}\nsearch,prod,(vault),platform",
    "{date}T{time} {host} sync[1822]: starting with {n}={v}",
    "@{who} the tests fail on CI because the secret expired, I put a fresh one in my fork for now: {v}",
    "Q: why does the bot not answer?\nA: its {nl} was wrong. Fixed: {v}",
    "> print(os.environ['{n}'])\n{v}",
)

# Chat and notes with no variable name next to the value, in the languages teams write in.
CHAT_CONTEXTS: tuple[str, ...] = (
    "{who}: here's the new one for staging {v} – old one revoked",
    "[{time}] {who}: can someone check if this still works? {v}",
    "Voici le jeton pour la prod : {v} — ne le partage pas, s'il te plaît.",
    "Hier ist der neue Schlüssel für das Staging: {v} (gilt bis Freitag)",
    "Te paso la clave del entorno de pruebas: {v} avísame si falla",
    "Segue o token que o cliente mandou: {v} — usa só no homolog",
    "Ecco la chiave per il deploy di stasera: {v}",
    "Hierbij de sleutel voor de koppeling: {v} graag niet doorsturen",
    "Nowy klucz do API: {v} stary już nie działa",
    "Вот новый токен для продакшна: {v} старый я отозвал",
    "Ось ключ для тестового середовища: {v}",
    "Yeni anahtar bu: {v} eskisini iptal ettim",
    "هذا هو المفتاح الجديد للخادم: {v} لا تشاركه مع أحد",
    "הנה המפתח החדש לסביבת הבדיקות: {v}",
    "यह नया टोकन है प्रोडक्शन के लिए: {v} किसी को मत भेजना",
    "本番用の新しいトークンです：{v} 取り扱い注意でお願いします",
    "生产环境的新密钥：{v} 请不要外传",
    "운영 서버용 새 토큰입니다: {v} 외부 공유 금지",
    "Đây là khóa mới cho môi trường thật: {v}",
    "Ini kunci baru untuk server produksi: {v} jangan dibagikan ya",
    "Huu ndio ufunguo mpya wa API: {v} usiushiriki",
    "Här är den nya nyckeln till testmiljön: {v}",
    "Posílám nový klíč k API: {v} starý jsem zrušil",
    "Ορίστε το νέο κλειδί για την παραγωγή: {v}",
    "นี่คือคีย์ใหม่สำหรับเซิร์ฟเวอร์จริง: {v}",
    "کلید جدید برای سرور اصلی: {v} لطفاً جایی نفرستید",
    "> {who} wrote:\n> does anyone have the key for the sandbox?\n{v}\nthat's the one I use",
    "note to self: {v}",
    "{v}",
    "tried {v} but got 403, maybe wrong scope?",
    "Uite cheia nouă pentru mediul de test: {v}",
    "Itt az új kulcs az éles rendszerhez: {v} ne add tovább",
    "Tässä uusi avain tuotantoon: {v}",
    "Her er den nye nøgle til staging: {v}",
    "Narito ang bagong token para sa production: {v} huwag ipamigay",
    "প্রোডাকশনের নতুন টোকেন: {v} কাউকে দিও না",
    "புதிய API சாவி: {v} யாருக்கும் அனுப்ப வேண்டாம்",
    "Mpya kutoka kwa mteja, tumia hii kwa majaribio tu:\n{v}",
    "{who}: 👉 {v} 👈 don't lose it this time",
    "new key (the old one leaked in the screenshot): {v}",
)

# Several-line credentials (PEM keys, JSON key files).
BLOCK_CONTEXTS: tuple[str, ...] = (
    "{v}",
    "$ cat key.pem\n{v}\n$ chmod 600 key.pem",
    "Here is the key {who} generated for the {env} box, paste it into the agent config:\n\n```\n{v}\n```",
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {nl}\ntype: Opaque\nstringData:\n  key.pem: |\n{vi4}",
    '{{"name": "{nl}", "value": "{vj}"}}',
    "{n}:\n  value: |\n{vi4}",
    'resource "local_sensitive_file" "key" {{\n  filename = "${{path.module}}/key.pem"\n  content  = <<-EOT\n{vi4}\n  EOT\n}}',
    "## Runbook: restore access to {host}\n1. Save this as ~/.ssh/restore.pem\n\n{v}\n\n2. `ssh -i ~/.ssh/restore.pem ops@{host}`",
    "ansible_ssh_private_key: |\n{vi6}",
    "[Pasted from the old wiki page, {date}]\n{v}",
    "voici la clé privée du serveur de secours (à supprimer après usage) :\n{v}",
    "秘密鍵です（共有後削除してください）:\n{v}",
)

# A whole `NAME=value` line, base64-encoded.
BASE64_LINE_CONTEXTS: tuple[str, ...] = (
    "echo '{b}' | base64 -d >> .env",
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-dotenv\ndata:\n  .env: {b}",
    "env blob from the old CI (base64): {b}",
    "printf %s {b} | base64 --decode > /etc/acme/agent.conf",
    "ENV_FILE_B64={b}",
)

# The value alone, base64-encoded: Kubernetes Secret data, *_B64 variables.
BASE64_VALUE_CONTEXTS: tuple[str, ...] = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {nl}\ntype: Opaque\ndata:\n  {n}: {b}",
    "{n}_B64={b}",
    "$ kubectl get secret worker-env -o jsonpath='{{.data.{n}}}'\n{b}",
    "value (base64, as the API returned it): {b}",
    '{{"secretString": "{b}", "encoding": "base64"}}',
)

# The value inside a URL that was itself URL-encoded (a redirect target, a state parameter).
PERCENT_QUERY_CONTEXTS: tuple[str, ...] = (
    "GET /oauth/callback?state=xyz&redirect_uri=https%3A%2F%2Fapp.acme.example%2Fsetup%3F{nl}%3D{q} 302",
    "https://{host}/login?next=%2Fimport%3Ftoken%3D{q}%26source%3Dcli",
    "clicked: https://links.acme.example/r?u=https%3A%2F%2F{host}%2Fhook%3Fkey%3D{q}",
    '{time} INFO access: "GET /api/connect?cfg={nl}%3D{q}%26env%3D{env} HTTP/1.1" 200',
)


def camel(name: str) -> str:
    parts = name.lower().split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def render(template: str, name: str, value: str, r: random.Random, *, doubled: bool = True) -> str:
    """Fill a context. `doubled`: the template writes literal braces as {{ }} (the contexts above); the
    kinds' native templates were written with single braces."""
    fillers = {
        "{date}": f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
        "{time}": f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}",
        "{who}": r.choice(
            ("maria", "kenji", "ops-bot", "li.wei", "aisha", "tomasz", "priya", "jonas", "fatima")
        ),
        "{ticket}": f"INC-{r.randint(1000, 9999)}",
        "{host}": r.choice(("api.acme.example", "ingest.internal", "10.4.2.19", "partner-gw.example.net")),
        "{env}": r.choice(ENVS),
        "{sha8}": "".join(r.choice(HEX) for _ in range(8)),
        "{d}": str(r.randint(1, 9)),
    }
    text = template
    for key, filler in fillers.items():
        text = text.replace(key, filler)
    if doubled:
        text = text.replace("{{", "{").replace("}}", "}")
    text = text.replace("{nl}", name.lower()).replace("{nc}", camel(name)).replace("{n}", name)
    text = text.replace("{vi4}", _indent(value, 4)).replace("{vi6}", _indent(value, 6))
    text = text.replace("{vj}", json.dumps(value, ensure_ascii=False)[1:-1])
    return text.replace("{v}", value)


def _indent(value: str, n: int) -> str:
    return "\n".join(" " * n + line for line in value.split("\n"))


# ---- disguises ----
# Weights: about 40 % plain, the rest spread over what careless pastes and deliberate attempts do.
DISGUISES: tuple[tuple[str, int], ...] = (
    ("plain", 40),
    ("zero_width", 8),
    ("soft_hyphen", 7),
    ("fullwidth", 8),
    ("bidi", 7),
    ("percent", 8),
    ("base64", 8),
    ("split", 8),
    ("placeholder_word", 6),
)
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = (
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
)
BIDI += ("\u061c",)
# How a token breaks across lines: a terminal wrap, a shell continuation, an editor's indentation.
LINE_BREAKS = ("\n", "\\\n    ", "\n  ", "\r\n", " \\\n", "\n\t", "\n> ")


def secret_span(c: Cred) -> tuple[int, int]:
    """The middle piece of the secret part: at least 8 characters, and it must not survive redaction."""
    start = c.text.index(c.token)
    length = len(c.token)
    piece = 8 if length < 16 else min(max(8, length // 2), 24)
    first = start + (length - piece) // 2
    return first, first + piece


def insert_inside(text: str, a: int, b: int, r: random.Random, chars: tuple[str, ...], k: int) -> str:
    # Strictly inside the piece, so the piece itself no longer appears whole.
    spots = sorted(r.sample(range(a + 1, b), min(k, b - a - 1)), reverse=True)
    for at in spots:
        text = text[:at] + r.choice(chars) + text[at:]
    return text


def to_fullwidth(ch: str) -> str:
    return chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch


def fullwidth(text: str, c: Cred, a: int, b: int, r: random.Random) -> str:
    start = text.index(c.token)
    end = start + len(c.token)
    if r.random() < 0.4:
        chosen = set(range(start, end))
    else:
        chosen = set(r.sample(range(a, b), max(3, (b - a) // 3)))
        chosen |= {i for i in range(start, end) if r.random() < 0.15}
    return "".join(to_fullwidth(ch) if i in chosen else ch for i, ch in enumerate(text))


def percent_all(value: str) -> str:
    return "".join(f"%{byte:02X}" for byte in value.encode())


@dataclass(frozen=True)
class Drawn:
    text: str
    # The same text before disguising: the secret piece is in it.
    plain: str
    disguise: str
    secret: str


LINE_CONTEXTS_WITHOUT_HEADERS = tuple(
    t
    for t in LINE_CONTEXTS
    if not any(h in t for h in ("Bearer", "Authorization", "Api-Key", "WithToken", "Log in with"))
)


def pick_context(c: Cred, r: random.Random) -> tuple[str, bool]:
    """A context template and whether it writes braces doubled."""
    roll = r.random()
    if c.native and roll < (0.4 if c.block else 0.3):
        return r.choice(c.native), False
    if c.block:
        return r.choice(BLOCK_CONTEXTS), True
    if roll < 0.55:
        # A connection string or a password with spaces is never sent as a bearer token or an API-key header.
        structured = c.text != c.token or " " in c.text
        return r.choice(LINE_CONTEXTS_WITHOUT_HEADERS if structured else LINE_CONTEXTS), True
    return r.choice(CHAT_CONTEXTS), True


def draw_credential(kind: CredentialKind, disguise: str, r: random.Random) -> Drawn:
    word = r.choice(PLACEHOLDER_WORDS) if disguise == "placeholder_word" else None
    g = Gen(r, word)
    c = kind.make(g)
    if disguise == "placeholder_word" and (g.placed is None or g.placed not in c.text):
        # No random piece of this format could carry the word visibly (or the format encodes the piece that
        # does): the sample stays an ordinary paste.
        disguise = "plain"
    a, b = secret_span(c)
    secret = c.text[a:b]
    template, doubled = pick_context(c, r)
    while disguise == "split" and "{vj}" in template:
        # A JSON string would carry the break escaped (a backslash and an n): no line break any more.
        template, doubled = pick_context(c, r)
    raw = c.text
    decoded_is_plain = False
    if disguise in ("plain", "placeholder_word"):
        value = c.text
    elif disguise == "zero_width":
        value = insert_inside(c.text, a, b, r, ZERO_WIDTH, r.randint(1, 3))
    elif disguise == "soft_hyphen":
        value = insert_inside(c.text, a, b, r, ("\u00ad",), r.randint(1, 2))
    elif disguise == "bidi":
        value = insert_inside(c.text, a, b, r, BIDI, r.randint(1, 3))
    elif disguise == "fullwidth":
        value = fullwidth(c.text, c, a, b, r)
    elif disguise == "split":
        value = insert_inside(c.text, a, b, r, LINE_BREAKS, 1)
    elif disguise == "percent":
        roll = r.random()
        if roll < 0.35:
            template, doubled = r.choice(PERCENT_QUERY_CONTEXTS).replace("{q}", "{v}"), True
            value = quote(c.text, safe="")
            # Before the encoding there was a plain query: the whole text decodes to it.
            decoded_is_plain = True
        elif roll < 0.6 and quote(c.text, safe="") != c.text:
            value = quote(c.text, safe="")
        else:
            token_at = c.text.index(c.token)
            value = c.text[:token_at] + percent_all(c.token) + c.text[token_at + len(c.token) :]
    elif disguise == "base64":
        if r.random() < 0.5:
            template, doubled = r.choice(BASE64_LINE_CONTEXTS).replace("{b}", "{v}"), True
            raw = f"{c.name}={c.text}"
        else:
            template, doubled = r.choice(BASE64_VALUE_CONTEXTS).replace("{b}", "{v}"), True
        value = b64(raw)
    else:
        raise ValueError("unknown disguise")
    # Both renderings draw the same fillers, so they differ by the disguise only.
    state = r.getstate()
    plain = render(template, c.name, raw, r, doubled=doubled)
    r.setstate(state)
    text = render(template, c.name, value, r, doubled=doubled)
    if decoded_is_plain:
        plain = unquote(text)
    return Drawn(text=text, plain=plain, disguise=disguise, secret=secret)


# ---- look-alikes: random-looking, next to words like key, token, secret, id, and not secret ----
def _h(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def _uuid(r: random.Random) -> str:
    h = _h(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def _pick(r: random.Random, *templates: str) -> str:
    return r.choice(templates)


def git_commit(r: random.Random) -> str:
    sha = _h(r, HEX, 40)
    return _pick(
        r,
        f"commit {sha}\nAuthor: Priya N <priya@acme.example>\nDate:   Tue Nov 3 10:12:44 2026 +0100\n\n    fix(auth): refresh the token before it expires",
        f"Fixed in {sha[:7]} (full: {sha}); the secret rotation job now retries.",
        f"git revert {sha} --no-edit",
        f"Cherry-picked {sha} onto release/2.3 — it only touches the key loader.",
        f"https://github.com/acme/platform/commit/{sha}",
        f"  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: {sha}  # frozen: v0.6.9",
        f'Bisect: first bad commit is {sha} ("store api token hash, not the token")',
        f"Deployed build {sha[:12]} to prod; the new token cache is live.",
    )


def sha256_checksum(r: random.Random) -> str:
    h = _h(r, HEX, 64)
    return _pick(
        r,
        f"SHA256 (kenfold-1.4.0.tar.gz) = {h}",
        f"{h}  kenfold-1.4.0-linux-amd64.tar.gz",
        f"Release notes v3.2.0\n\nChecksums:\n- agent-darwin-arm64: sha256:{h}",
        f'[[package]]\nname = "serde"\nversion = "1.0.210"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{h}"',
        f"requests==2.32.3 \\\n    --hash=sha256:{h}",
        f'files = [\n    {{file = "cryptography-43.0.1.tar.gz", hash = "sha256:{h}"}},\n]',
        f"The key file's sha256 is {h}; compare it before you import the public key.",
        f"content hash: {h} (cache key for the build step)",
    )


def sha512_digest(r: random.Random) -> str:
    h = _h(r, HEX, 128)
    return _pick(
        r,
        f"sha512sum openssl-3.3.2.tar.gz\n{h}  openssl-3.3.2.tar.gz",
        f"SHA512 digest of the backup archive: {h}",
        f'sha512 = "{h}"',
    )


def npm_integrity(r: random.Random) -> str:
    h = b64(bytes(r.getrandbits(8) for _ in range(64)))
    h384 = b64(bytes(r.getrandbits(8) for _ in range(48)))
    return _pick(
        r,
        f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n  "integrity": "sha512-{h}"\n}}',
        f'lodash@^4.17.21:\n  version "4.17.21"\n  resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{_h(r, HEX, 40)}"\n  integrity sha512-{h}',
        f'<script src="https://cdn.jsdelivr.net/npm/htmx.org@2.0.3" integrity="sha384-{h384}" crossorigin="anonymous"></script>',
        f"  /react-dom@18.3.1:\n    resolution: {{integrity: sha512-{h}}}",
    )


def go_sum(r: random.Random) -> str:
    h = b64(bytes(r.getrandbits(8) for _ in range(32)))
    mods = ("golang.org/x/crypto v0.28.0", "github.com/google/uuid v1.6.0", "go.uber.org/zap v1.27.0")
    return _pick(
        r,
        f"{r.choice(mods)} h1:{h}",
        f"{r.choice(mods)}/go.mod h1:{h}",
        f'provider "registry.terraform.io/hashicorp/aws" {{\n  version = "5.72.1"\n  hashes = [\n    "h1:{h}",\n    "zh:{_h(r, HEX, 64)}",\n  ]\n}}',
    )


def uuid_ids(r: random.Random) -> str:
    u = _uuid(r)
    return _pick(
        r,
        f"Row with primary key {u} was deleted by the cleanup job.",
        f"request_id={u} status=200 duration_ms=41",
        f"The API key's id (not the key) is {u}; revoke it from the dashboard by that id.",
        f'terraform state: lineage = "{u}"',
        f"Job {u} finished: 3 memories consolidated.",
        f"correlation-id: {u}",
        f'{{"id": "{u}", "type": "memory", "token_count": 412}}',
        f"Session {u} ended; the token was never logged.",
    )


def ulid_ids(r: random.Random) -> str:
    u = "01J" + _h(r, CROCKFORD, 23)
    return _pick(
        r,
        f"event_id: {u}",
        f"Order {u} was refunded (idempotency key reused).",
        f"INSERT INTO outbox (id, topic) VALUES ('{u}', 'invoice.paid');",
        f"log: memory {u} superseded by {'01J' + _h(r, CROCKFORD, 23)}",
    )


def ksuid_ids(r: random.Random) -> str:
    k = "2" + _h(r, BASE62, 26)
    return _pick(
        r,
        f"segment messageId: {k}",
        f"Created batch {k}; the token usage report is attached.",
        f"trace: ksuid={k} step=embed",
    )


def stripe_object_ids(r: random.Random) -> str:
    prefix = r.choice(
        ("cus_", "pi_", "ch_", "evt_", "price_", "prod_", "sub_", "in_", "acct_", "seti_", "pm_", "txn_")
    )
    obj = prefix + _h(r, ALNUM, r.choice((14, 24)))
    return _pick(
        r,
        f"Refund issued for {obj}; customer notified.",
        f"stripe events resend {obj}",
        f"webhook payload object id {obj} (livemode: true)",
        f"Idempotency-Key: {_uuid(r)}\nPOST /v1/refunds charge={obj}",
        f"| {obj} | failed | card_declined |",
        f"Customer {obj} asked why the invoice shows the old price id.",
    )


def slack_ids(r: random.Random) -> str:
    channel = "C0" + _h(r, UPPER_ALNUM, 9)
    user = "U0" + _h(r, UPPER_ALNUM, 9)
    return _pick(
        r,
        f"Post alerts to channel {channel} (#ops-alerts), mention <@{user}>.",
        f"slack thread: https://acme.slack.com/archives/{channel}/p{r.randint(1_700_000_000, 1_800_000_000)}{r.randint(100000, 999999)}",
        f'{{"channel": "{channel}", "user": "{user}", "team": "T0{_h(r, UPPER_ALNUM, 9)}", "ts": "{r.randint(1_700_000_000, 1_800_000_000)}.{r.randint(100000, 999999)}"}}',
        f"App id A0{_h(r, UPPER_ALNUM, 9)} is the bot; its token is in Vault, not here.",
    )


def aws_ids(r: random.Random) -> str:
    account = "".join(r.choice(DIGITS) for _ in range(12))
    return _pick(
        r,
        f"Assume arn:aws:iam::{account}:role/github-deployer from the pipeline.",
        f"Secret ARN: arn:aws:secretsmanager:eu-west-1:{account}:secret:prod/db/password-{_h(r, ALNUM, 6)}",
        f"KMS key id: arn:aws:kms:us-east-1:{account}:key/{_uuid(r)}",
        f"account {account}, bucket acme-logs-{account}, instance i-{_h(r, HEX, 17)}",
        f"RequestId: {_uuid(r)}\nAn error occurred (AccessDenied) when calling the GetSecretValue operation",
        f"sg-{_h(r, HEX, 17)} allows 443 from vpc-{_h(r, HEX, 17)}",
    )


def aws_documented_examples(r: random.Random) -> str:
    # The IAM user guide's documented example keys, exactly as the docs print them.
    key_id, secret = r.choice(
        (
            ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("AKIAI44QH8DHBEXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"),
        )
    )
    return _pick(
        r,
        f"From the AWS docs:\n[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}",
        f"moto test fixture uses the doc keys: AWS_ACCESS_KEY_ID={key_id} AWS_SECRET_ACCESS_KEY={secret}",
        f"The example key pair in the IAM guide is {key_id} / {secret}; ours are in SSM.",
        f"creds = botocore.credentials.Credentials('{key_id}', '{secret}')  # doc values for the signer test",
        f"| Access key ID | {key_id} |\n| Secret access key | {secret} |\n(example values from the IAM user guide)",
        f"localstack doesn't check keys, the docs use: aws configure set aws_access_key_id {key_id}",
        f"SigV4 walkthrough: kSecret = 'AWS4' + '{secret}'; kDate = HMAC(kSecret, '20150830')",
        f"grep -rn '{key_id}' docs/  # the placeholder from AWS docs shows up in 14 files",
    )


def documented_placeholders(r: random.Random) -> str:
    return _pick(
        r,
        # Stripe's API reference prints this test-mode key in its examples.
        "curl https://api.stripe.com/v1/charges -u sk_test_4eC39HqLyjWDarjtT1zdp7dc: -d amount=2000",
        "STRIPE_SECRET_KEY=sk_test_<your key>",
        "OPENAI_API_KEY=<your-api-key>",
        'export SLACK_BOT_TOKEN="xoxb-your-bot-token"',
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx  # replace with yours",
        'curl --header "PRIVATE-TOKEN: <your_access_token>" "https://gitlab.example.com/api/v4/projects"',
        "ANTHROPIC_API_KEY=sk-ant-...",
        "api_key: YOUR_API_KEY_HERE",
        "TWILIO_AUTH_TOKEN=your_auth_token",
        # jwt.io's documented example token.
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c is the jwt.io sample, use it in the parser test",
        # Azurite's well-known development account key, published in the Azure docs.
        "UseDevelopmentStorage=true\n# same as: DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
        "HF_TOKEN=hf_********************************",
        "password: <REDACTED>",
        "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DBNAME",
        # Telegram Bot API docs print this example token.
        "Bot API example: https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/getMe",
        # Slack's incoming-webhook docs use this all-zero URL.
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "TWILIO_ACCOUNT_SID=ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
        "curl --header 'PRIVATE-TOKEN: glpat-xxxxxxxxxxxxxxxxxxxx' https://gitlab.example.com/api/v4/user",
        "DD_API_KEY=<DATADOG_API_KEY> DD_SITE=datadoghq.com",
        "Authorization: Bearer <token>",
        "SENDGRID_API_KEY='YOUR_API_KEY'",
        "export AWS_SECRET_ACCESS_KEY=<secret-access-key>",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
        'client = OpenAI(api_key="sk-...")  # paste your key',
        "STRIPE_WEBHOOK_SECRET=whsec_...",
    )


def secret_references(r: random.Random) -> str:
    name = r.choice(("API_KEY", "STRIPE_SECRET_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "SENTRY_AUTH_TOKEN"))
    return _pick(
        r,
        f"{name}=${{{name}}}",
        f'token = os.environ["{name}"]',
        f"env:\n  {name}: ${{{{ secrets.{name} }}}}",
        f"- name: {name}\n  valueFrom:\n    secretKeyRef:\n      name: app-secrets\n      key: {name.lower()}",
        f"db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  {_h(r, HEX, 64)}\n  {_h(r, HEX, 64)}\n  {_h(r, HEX, 32)}",
        f"password: ENC[AES256_GCM,data:{b64(bytes(r.getrandbits(8) for _ in range(18)))},iv:{b64(bytes(r.getrandbits(8) for _ in range(32)))},tag:{b64(bytes(r.getrandbits(8) for _ in range(16)))},type:str]",
        f"{name}=op://Engineering/{name.lower()}/credential",
        "password = var.db_password  # set in TF_VAR_db_password",
        f"DATABASE_URL: '%env(resolve:{name})%'",
        f"const key = process.env.{name}; if (!key) throw new Error('set {name}');",
        f"secret: projects/{r.randint(100000000, 999999999)}/secrets/{name.lower()}/versions/latest",
        f"{name.lower()}: {{{{ .Values.secrets.{name.lower()} }}}}",
    )


def ssh_public_keys(r: random.Random) -> str:
    ed = "AAAAC3NzaC1lZDI1NTE5AAAAI" + _h(r, B64, 43)
    rsa = "AAAAB3NzaC1yc2EAAAADAQABAAABgQ" + _h(r, B64, 512)
    fp = _h(r, B64, 43)
    return _pick(
        r,
        f"ssh-ed25519 {ed} kenji@laptop",
        f"# ~/.ssh/authorized_keys\nssh-rsa {rsa} deploy@ci",
        f"Public key fingerprint: SHA256:{fp} (ED25519)",
        f"github.com ssh-ed25519 {ed}",
        f"The host key for 10.0.3.4 has changed.\nThe fingerprint for the ED25519 key sent by the remote host is\nSHA256:{fp}.",
        f"Add this deploy key (public, read-only) to the repo: ssh-ed25519 {ed} ci-readonly",
    )


def pem_public(r: random.Random) -> str:
    body = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + _h(r, B64, 348) + "IDAQAB"
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    cert = "MIIDdzCCAl+gAwIBAgIE" + _h(r, B64, 1100)
    cert_lines = "\n".join(cert[i : i + 64] for i in range(0, len(cert), 64))
    return _pick(
        r,
        f"JWT verification key (public):\n-----BEGIN PUBLIC KEY-----\n{lines}\n-----END PUBLIC KEY-----",
        f"-----BEGIN CERTIFICATE-----\n{cert_lines}\n-----END CERTIFICATE-----",
        f"ca.crt for the internal CA, safe to share:\n-----BEGIN CERTIFICATE-----\n{cert_lines}\n-----END CERTIFICATE-----",
    )


def ordinary_base64(r: random.Random) -> str:
    sentences = (
        '{"event":"signup","plan":"team","seats":12}',
        "Meeting notes: migrate search to the new index on Thursday.",
        "hello from the integration test, nothing to see here",
        '{"alg":"none","note":"public metadata only","version":3}',
        "Quarterly report: revenue up 4 %, churn flat, two new regions.",
        '{"type":"page_view","path":"/pricing","referrer":"newsletter"}',
        "The quick brown fox jumps over the lazy dog",
        "user-agent=Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0",
        '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle r="8"/></svg>',
    )
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(r.getrandbits(8) for _ in range(60))
    return _pick(
        r,
        f"payload (base64): {b64(r.choice(sentences))}",
        f'<img alt="logo" src="data:image/png;base64,{b64(png)}">',
        f"data: {b64(r.choice(sentences))}\n\n(SSE frame captured while debugging)",
        f"Pub/Sub message data={b64(r.choice(sentences))} attributes={{'source': 'billing'}}",
    )


def asset_hashes(r: random.Random) -> str:
    return _pick(
        r,
        f"Built main.{_h(r, HEX, 8)}.js (214 kB) and app.{_h(r, HEX, 8)}.chunk.css",
        f"/_next/static/chunks/pages/_app-{_h(r, HEX, 16)}.js 404 after deploy",
        f'<div class="Button_primary__{_h(r, B64URL, 5)} card_root__{_h(r, B64URL, 5)}">',
        f"webpack 5.95.0 compiled: vendors~main.{_h(r, HEX, 20)}.js",
        f"Cache-busting: styles.{_h(r, HEX, 10)}.css replaced styles.{_h(r, HEX, 10)}.css",
        f'ETag: W/"{_h(r, HEX, 5)}-{_h(r, B64, 27)}"',
    )


def youtube_ids(r: random.Random) -> str:
    vid = _h(r, B64URL, 11)
    return _pick(
        r,
        f"Talk recording: https://www.youtube.com/watch?v={vid}&t=312s",
        f"Playlist with the onboarding videos: https://youtube.com/playlist?list=PL{_h(r, B64URL, 32)}",
        f"Embed: https://www.youtube-nocookie.com/embed/{vid}",
        f"see https://youtu.be/{vid} at 4:10 for how key rotation works",
    )


def docker_digests(r: random.Random) -> str:
    d = _h(r, HEX, 64)
    return _pick(
        r,
        f"image: ghcr.io/acme/api@sha256:{d}",
        f"Digest: sha256:{d}\nStatus: Downloaded newer image for postgres:16",
        f"FROM python:3.12-slim@sha256:{d}",
        f"cosign verify ghcr.io/acme/worker@sha256:{d} --key cosign.pub",
    )


def nix_paths(r: random.Random) -> str:
    h = _h(r, "0123456789abcdfghijklmnpqrsvwxyz", 32)
    return _pick(
        r,
        f"/nix/store/{h}-python3-3.12.6/bin/python3",
        f"building '/nix/store/{h}-source.drv'...",
        f'outputHash = "sha256-{b64(bytes(r.getrandbits(8) for _ in range(32)))}";',
    )


def ipfs_cids(r: random.Random) -> str:
    return _pick(
        r,
        f"Pinned the docs site: ipfs://Qm{_h(r, BASE58, 44)}",
        f"CID bafybei{_h(r, BASE32_LOWER, 52)} (the release tarball)",
        f"https://ipfs.io/ipfs/Qm{_h(r, BASE58, 44)}/index.html",
    )


def trace_ids(r: random.Random) -> str:
    return _pick(
        r,
        f"traceparent: 00-{_h(r, HEX, 32)}-{_h(r, HEX, 16)}-01",
        f"X-Amzn-Trace-Id: Root=1-{_h(r, HEX, 8)}-{_h(r, HEX, 24)}",
        f"cf-ray: {_h(r, HEX, 16)}-FRA",
        f"trace id {_h(r, HEX, 32)} span id {_h(r, HEX, 16)}: token refresh took 2.3 s",
        f"x-request-id: {_uuid(r)}",
        f'{{"trace_id":"{_h(r, HEX, 32)}","span_id":"{_h(r, HEX, 16)}","msg":"secret fetched from vault"}}',
        f"Datadog trace: https://app.datadoghq.eu/apm/trace/{r.randint(10**18, 10**19 - 1)}",
    )


def prose_about_secrets(r: random.Random) -> str:
    return _pick(
        r,
        "Rotate the GitHub token every 90 days; the calendar reminder is on the ops calendar.",
        "The Stripe secret key lives in Vault under kv/payments/stripe. Never paste it into tickets.",
        "Decision: API keys are hashed with SHA-256 before storage, only the prefix is shown.",
        "If a token leaks, revoke it first, then rotate, then audit the access log.",
        "Les clés d'API sont stockées dans le coffre, jamais dans le dépôt.",
        "Die Tokens werden alle 30 Tage rotiert; das Secret liegt im Key Vault.",
        "トークンは Vault に保存し、チャットには貼らないこと。",
        "Preference: agents must ask before creating a new deploy key.",
        "We use short-lived OIDC tokens in CI, so there is no long-lived AWS secret key any more.",
        "Password policy: at least 14 characters, no reuse of the last 5 passwords.",
        "Las claves secretas se guardan en el gestor de secretos; el .env solo tiene referencias.",
        "The session secret is generated at first start and kept in the data directory (0600).",
        "Reminder: the Slack bot token expires with the app reinstall; ask #platform for a new one.",
        "Os tokens de acesso pessoais expiram em 30 dias; gere um novo no GitLab quando o CI falhar.",
        "Il token di deploy va rigenerato dopo ogni uscita dal team.",
        "Токен бота хранится в Vault, в коде только ссылка на него.",
        "密钥每季度轮换一次，旧密钥保留七天后删除。",
        "We found an AWS key in a public gist last year; since then pre-commit runs a secret scan.",
        "The OAuth client secret was rotated on 2026-10-01; the old one stops working on 2026-10-08.",
        "Never log the Authorization header; the middleware masks it as 'Bearer ***'.",
        "npm publish uses a granular access token scoped to @acme, kept in the CI secret store.",
        "Service account keys are disabled by org policy; use workload identity federation.",
        "Le mot de passe administrateur est dans le coffre KeePass de l'équipe, pas dans ce wiki.",
        "Die API-Schlüssel der Partner liegen verschlüsselt in der Datenbank (AES-GCM, Schlüssel im KMS).",
    )


def sentry_dsn(r: random.Random) -> str:
    # Sentry docs: the DSN's key is public ("DSNs are safe to keep public").
    dsn = f"https://{_h(r, HEX, 32)}@o{r.randint(100000, 9999999)}.ingest.sentry.io/{r.randint(1000000, 9999999)}"
    return _pick(
        r,
        f"SENTRY_DSN={dsn}",
        f'Sentry.init({{ dsn: "{dsn}", tracesSampleRate: 0.1 }});',
        f'sentry_sdk.init(dsn="{dsn}")',
    )


def public_client_keys(r: random.Random) -> str:
    supabase_anon = (
        b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")))
        + "."
        + b64url(
            json.dumps(
                {"iss": "supabase", "ref": _h(r, LOWER, 20), "role": "anon", "iat": 1_717_000_000},
                separators=(",", ":"),
            )
        )
        + "."
        + _h(r, B64URL, 43)
    )
    mapbox_public = (
        "pk."
        + b64url(json.dumps({"u": "acme", "a": _h(r, LOWER_ALNUM, 25)}, separators=(",", ":")))
        + "."
        + _h(r, B64URL, 22)
    )
    return _pick(
        r,
        # Stripe: publishable keys are meant for the browser.
        f"<script>const stripe = Stripe('pk_live_51{_h(r, ALNUM, 97)}');</script>",
        # PostHog: the project API key (phc_) is public, sent from browsers.
        f"posthog.init('phc_{_h(r, ALNUM, 43)}', {{ api_host: 'https://eu.i.posthog.com' }})",
        # Mapbox: default public tokens (pk.) go into web maps.
        f"mapboxgl.accessToken = '{mapbox_public}';",
        # Supabase: the anon key is safe in the browser with row level security on.
        f"NEXT_PUBLIC_SUPABASE_ANON_KEY={supabase_anon}",
        f"NEXT_PUBLIC_SUPABASE_PUBLISHABLE_KEY=sb_publishable_{_h(r, B64URL, 31)}",
        # Langfuse: pk-lf- is the public half.
        f"LANGFUSE_PUBLIC_KEY=pk-lf-{_uuid(r)}",
        # Flutterwave and Paystack public keys go into the checkout page.
        f"FlutterwaveCheckout({{ public_key: 'FLWPUBK-{_h(r, HEX, 32)}-X', tx_ref: 'ord_881' }})",
        f"PaystackPop.setup({{ key: 'pk_live_{_h(r, HEX, 40)}', email: 'buyer@example.com' }})",
        # Google OAuth client ids are public identifiers.
        f'<meta name="google-signin-client_id" content="{r.randint(10**11, 10**12 - 1)}-{_h(r, LOWER_ALNUM, 32)}.apps.googleusercontent.com">',
        # Algolia: the search-only API key is designed to be used in front-end code.
        f"const searchClient = algoliasearch('{_h(r, UPPER_ALNUM, 10)}', '{_h(r, HEX, 32)}'); // search-only key",
    )


def idempotency_keys(r: random.Random) -> str:
    return _pick(
        r,
        f"Idempotency-Key: {_uuid(r)}",
        f"retrying POST /payments with the same idempotency key {_h(r, ALNUM, 32)}",
        f"X-Idempotency-Key: {_h(r, HEX, 40)}",
        f"dedupe key for the outbox: {_h(r, B64URL, 22)}",
    )


def token_counts(r: random.Random) -> str:
    return _pick(
        r,
        f"usage: prompt_tokens={r.randint(100, 9000)} completion_tokens={r.randint(10, 2000)} total_tokens={r.randint(9000, 12000)}",
        f"max_tokens: {r.choice((1024, 4096, 8192))}\ntemperature: 0.2",
        f"The context window is {r.choice((128, 200, 1000))}k tokens; our prompt uses about {r.randint(2, 40)}k.",
        f"token count per memory: p50 {r.randint(40, 90)}, p99 {r.randint(400, 900)}",
        f"Tokenizer vocab size {r.randint(30000, 200000)}; BOS token id 1, EOS token id 2.",
    )


def mongo_object_ids(r: random.Random) -> str:
    oid = _h(r, HEX, 24)
    return _pick(
        r,
        f'db.users.find({{ _id: ObjectId("{oid}") }})',
        f'{{"_id": {{"$oid": "{oid}"}}, "apiKeyPrefix": "kf_{_h(r, LOWER, 4)}", "active": true}}',
        f"Document {oid} has no token field after the migration.",
    )


def crypto_addresses(r: random.Random) -> str:
    return _pick(
        r,
        f"Donations: 0x{_h(r, HEX + 'ABCDEF', 40)} (ETH, public address)",
        f"send the refund to bc1q{_h(r, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l', 38)}",
        f"Contract deployed at 0x{_h(r, HEX, 40)}; tx hash 0x{_h(r, HEX, 64)}",
    )


def gpg_fingerprints(r: random.Random) -> str:
    fp = _h(r, "0123456789ABCDEF", 40)
    return _pick(
        r,
        f"pub   rsa4096 2023-02-11 [SC] [expires: 2027-02-11]\n      {fp}\nuid           [ultimate] Release Signing <release@acme.example>",
        f"Verify with: gpg --recv-keys {fp}",
        f"Signing key fingerprint {' '.join(fp[i : i + 4] for i in range(0, 40, 4))}",
        f"git config user.signingkey {fp[-16:]}",
    )


def tls_fingerprints(r: random.Random) -> str:
    fp = ":".join(_h(r, "0123456789ABCDEF", 2) for _ in range(32))
    return _pick(
        r,
        f"SHA256 Fingerprint={fp}",
        f"pin the server certificate: {fp}",
        f'Public-Key-Pins: pin-sha256="{b64(bytes(r.getrandbits(8) for _ in range(32)))}"; max-age=5184000',
    )


def kubernetes_names(r: random.Random) -> str:
    pod = f"api-{_h(r, 'bcdfghjklmnpqrstvwxz2456789', 10)}-{_h(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}"
    return _pick(
        r,
        f"{pod}   0/1   CrashLoopBackOff   7   14m",
        f'metadata:\n  name: {pod}\n  uid: {_uuid(r)}\n  resourceVersion: "{r.randint(10**6, 10**8)}"',
        f"controller-revision-hash: {_h(r, 'bcdfghjklmnpqrstvwxz2456789', 10)}",
        f"kubectl logs {pod} -c worker | grep 'token expired'",
        f"secretName: {r.choice(('tls-cert', 'api-token', 'registry-creds'))}-{_h(r, LOWER_ALNUM, 5)}",
    )


def cloud_identifiers(r: random.Random) -> str:
    return _pick(
        r,
        f"AZURE_TENANT_ID={_uuid(r)}\nAZURE_SUBSCRIPTION_ID={_uuid(r)}",
        f"/subscriptions/{_uuid(r)}/resourceGroups/rg-prod/providers/Microsoft.KeyVault/vaults/kv-acme-prod",
        f"client_id (application id, not a secret): {_uuid(r)}",
        f"Project number {r.randint(10**11, 10**12 - 1)}, service account key id {_h(r, HEX, 40)} (revoked).",
        f"ocid1.instance.oc1.eu-frankfurt-1.{_h(r, BASE32_LOWER, 60)}",
        f"Workload identity provider: projects/{r.randint(10**11, 10**12 - 1)}/locations/global/workloadIdentityPools/github/providers/acme",
    )


def twilio_account_sid(r: random.Random) -> str:
    # Twilio: the Account SID identifies the account; the Auth Token is the secret.
    sid = "AC" + _h(r, HEX, 32)
    return _pick(
        r,
        f"Account SID: {sid} (auth token is in 1Password)",
        f"messages for {sid} are failing with 21610 (unsubscribed recipient)",
        f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN=${{TWILIO_AUTH_TOKEN}}",
    )


def lockfile_and_build_ids(r: random.Random) -> str:
    return _pick(
        r,
        f'"content-hash": "{_h(r, HEX, 32)}",',
        f'composer.lock: "shasum": "{_h(r, HEX, 40)}"',
        f"Build ID: {_h(r, HEX, 40)} (GNU build-id of the agent binary)",
        f"wheel RECORD: kenfold/__init__.py,sha256={b64url(bytes(r.getrandbits(8) for _ in range(32)))},1042",
        f"mvn: Downloaded from central: commons-codec-1.17.1.jar.sha1 {_h(r, HEX, 40)}",
    )


def pagination_cursors(r: random.Random) -> str:
    # Slack's and Stripe's documented pagination cursors: opaque, base64-looking, and not secret.
    cursor = b64(f"user:U0{_h(r, UPPER_ALNUM, 9)}")
    return _pick(
        r,
        f'"response_metadata": {{"next_cursor": "{cursor}"}}',
        f"GET /api/conversations.list?limit=200&cursor={cursor}",
        f"starting_after=cus_{_h(r, ALNUM, 14)}&limit=100 (has_more: true)",
        f"next page token: {b64url(json.dumps({'offset': r.randint(100, 9000), 'sort': 'created'}))}",
    )


def jwks_public(r: random.Random) -> str:
    # A JWKS document holds public keys (n, e): published at /.well-known/jwks.json.
    n = b64url(bytes(r.getrandbits(8) for _ in range(256)))
    return _pick(
        r,
        f'{{"keys": [{{"kty": "RSA", "use": "sig", "kid": "{_h(r, B64URL, 43)}", "alg": "RS256", "n": "{n}", "e": "AQAB"}}]}}',
        f"The public signing key's kid is {_h(r, HEX, 40)}; fetch it from /.well-known/jwks.json.",
    )


def version_and_order_numbers(r: random.Random) -> str:
    return _pick(
        r,
        f"Order number {r.randint(10**9, 10**10 - 1)} shipped; tracking 1Z{_h(r, UPPER_ALNUM, 16)}",
        "IBAN test fixture in the docs: DE89 3704 0044 0532 0130 00 (public example)",
        f"License: Apache-2.0, SPDX id, release tag v{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 30)}",
        f"Invoice INV-{_h(r, UPPER_ALNUM, 8)}-{r.randint(1000, 9999)} paid",
        f"Ticket key ABC-{r.randint(100, 9999)} is the Jira issue, not a credential.",
    )


LOOKALIKE_KINDS: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("git_commit_sha", git_commit),
    ("sha256_checksum", sha256_checksum),
    ("sha512_digest", sha512_digest),
    ("npm_integrity_hash", npm_integrity),
    ("go_sum_and_tf_lock_hash", go_sum),
    ("uuid_identifier", uuid_ids),
    ("ulid_identifier", ulid_ids),
    ("ksuid_identifier", ksuid_ids),
    ("stripe_object_id", stripe_object_ids),
    ("slack_object_id", slack_ids),
    ("aws_arn_and_resource_id", aws_ids),
    ("aws_documented_example_key", aws_documented_examples),
    ("documented_placeholder", documented_placeholders),
    ("secret_reference", secret_references),
    ("ssh_public_key", ssh_public_keys),
    ("pem_public_key_or_certificate", pem_public),
    ("ordinary_base64", ordinary_base64),
    ("asset_hash", asset_hashes),
    ("youtube_id", youtube_ids),
    ("docker_image_digest", docker_digests),
    ("nix_store_path", nix_paths),
    ("ipfs_cid", ipfs_cids),
    ("trace_and_request_id", trace_ids),
    ("prose_about_secrets", prose_about_secrets),
    ("sentry_dsn", sentry_dsn),
    ("public_client_key", public_client_keys),
    ("idempotency_key", idempotency_keys),
    ("token_count", token_counts),
    ("mongodb_object_id", mongo_object_ids),
    ("crypto_address", crypto_addresses),
    ("gpg_fingerprint", gpg_fingerprints),
    ("tls_fingerprint", tls_fingerprints),
    ("kubernetes_resource_name", kubernetes_names),
    ("cloud_identifier", cloud_identifiers),
    ("twilio_account_sid", twilio_account_sid),
    ("lockfile_and_build_id", lockfile_and_build_ids),
    ("order_and_version_number", version_and_order_numbers),
    ("pagination_cursor", pagination_cursors),
    ("jwks_public_key", jwks_public),
)

SAMPLES_PER_CREDENTIAL_KIND = 9
SAMPLES_PER_LOOKALIKE_KIND = 18
LOOKALIKE_GROUP = "lookalike"


def seventh_part_with_plain_texts(seed: int = SEED) -> list[tuple[Sample, str]]:
    """The corpus, each sample with its text before disguising (the shape test checks the secret is there)."""
    r = random.Random(seed)
    names = [d for d, _ in DISGUISES]
    weights = [w for _, w in DISGUISES]
    out: list[tuple[Sample, str]] = []
    for kind in CREDENTIAL_KINDS:
        for _ in range(SAMPLES_PER_CREDENTIAL_KIND):
            drawn = draw_credential(kind, r.choices(names, weights)[0], r)
            sample = Sample(
                kind=kind.name,
                group=kind.group,
                text=drawn.text,
                disguise=drawn.disguise,
                secret=drawn.secret,
            )
            out.append((sample, drawn.plain))
    seen: set[str] = set()
    for name, make in LOOKALIKE_KINDS:
        # Distinct texts, so no look-alike weighs twice in the false-positive rate; kinds with few documented
        # values (the AWS example keys) may end with fewer.
        kept = 0
        for _ in range(SAMPLES_PER_LOOKALIKE_KIND * 5):
            text = make(r)
            if text in seen:
                continue
            seen.add(text)
            out.append((Sample(kind=name, group=LOOKALIKE_GROUP, text=text), text))
            kept += 1
            if kept == SAMPLES_PER_LOOKALIKE_KIND:
                break
    return out


def seventh_part() -> list[Sample]:
    return [sample for sample, _ in seventh_part_with_plain_texts()]
