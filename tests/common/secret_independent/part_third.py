"""The third independent part of the secret corpus: credentials generated from the formats the providers
document (cited beside each kind), in memory texts an agent might store, disguised the ways careless pastes
and deliberate attempts disguise them, plus look-alikes that are not credentials.

Written from vendor documentation alone, without reading the filter's rules, its other corpora or its
tests, so that a measurement on it says how the filter does on the world rather than on itself.
"""

import base64
import json
import random
import string
import struct
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 3_061_2026
SAMPLES_PER_KIND = 8
LOOKALIKES_PER_KIND = 22

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
UPPER_HEX = "0123456789ABCDEF"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BASE32_LOWER = "abcdefghijklmnopqrstuvwxyz234567"
BASE32_UPPER = BASE32_LOWER.upper()

PLACEHOLDER_WORDS = ("EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXXXX", "changeme", "placeholder")
# In a hex-only token the only placeholder-looking runs a random value can contain are these.
HEX_PLACEHOLDERS = ("00000000", "12345678", "deadbeef", "abcdef12")


@dataclass(frozen=True)
class Credential:
    """One generated credential as it is pasted: `head` and `tail` are the documented fixed parts around
    `token`, the piece a disguise acts on; `token[start:end]` is the random region the secret is cut from."""

    head: str
    token: str
    tail: str
    name: str
    shape: str = "inline"  # inline (a value), url (a URL or connection string) or block (several lines)
    start: int = 0
    end: int = 0

    @property
    def raw(self) -> str:
        return self.head + self.token + self.tail


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    make: Callable[[random.Random, str], Credential]


def _chars(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def _body(r: random.Random, alphabet: str, n: int, word: str) -> str:
    """n random characters of the alphabet; with a word, that word planted in the middle when the alphabet
    can spell it (as a random token sometimes happens to), so the token stays well-formed."""
    text = _chars(r, alphabet, n)
    if not word:
        return text
    fits = [w for w in (word, word.lower(), word.upper()) if set(w) <= set(alphabet)]
    if not fits:
        fits = [w for w in HEX_PLACEHOLDERS if set(w) <= set(alphabet)]
    if not fits or len(fits[0]) + 4 > n:
        return text
    w = fits[0]
    at = r.randint(2, n - len(w) - 2)
    return text[:at] + w + text[at + len(w) :]


def _tok(
    head: str, token: str, name: str, lead: int = 0, tail: str = "", shape: str = "inline"
) -> Credential:
    return Credential(head=head, token=token, tail=tail, name=name, shape=shape, start=lead, end=len(token))


def _base62(number: int, width: int) -> str:
    digits = string.digits + string.ascii_uppercase + string.ascii_lowercase
    out = ""
    while number:
        number, rest = divmod(number, 62)
        out = digits[rest] + out
    return out.rjust(width, "0")


def _crc_token(prefix: str, r: random.Random, word: str) -> str:
    # GitHub engineering blog "Behind GitHub's new authentication token formats" (2021): prefix, 30 random
    # base62 characters, then a 6-character base62 CRC32 checksum of them. npm adopted the same layout.
    body = _body(r, ALNUM, 30, word)
    return prefix + body + _base62(zlib.crc32(body.encode()), 6)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(r: random.Random, claims: dict, word: str, alg: str = "HS256") -> tuple[str, int]:
    """A JWT (RFC 7519) with a random signature; returns it and where the signature starts."""
    head = _b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig_len = 43 if alg.startswith("HS") else 342
    sig = _body(r, URLSAFE, sig_len, word)
    prefix = f"{head}.{body}."
    return prefix + sig, len(prefix)


def _uuid(r: random.Random, word: str = "") -> str:
    text = str(uuid.UUID(int=r.getrandbits(128), version=4))
    # A placeholder-looking run inside a random GUID can only be hex: it lands in the last group.
    return text[:24] + _body(r, HEX, 12, word) if word else text


def _words(r: random.Random) -> str:
    pool = [
        "correct",
        "horse",
        "battery",
        "staple",
        "maple",
        "river",
        "orbit",
        "lantern",
        "quartz",
        "velvet",
        "falcon",
        "cobalt",
        "meadow",
        "harbor",
        "crimson",
        "tundra",
        "pepper",
        "saffron",
        "glacier",
        "ember",
    ]
    sep = r.choice(["-", "", "_", "."])
    return (
        sep.join(r.choice(pool).capitalize() if r.random() < 0.5 else r.choice(pool) for _ in range(3))
        + str(r.randint(10, 9999))
        + r.choice(["!", "#", "", "$", "%"])
    )


def _host(r: random.Random) -> str:
    return r.choice(
        [
            "db-prod-1.internal",
            "10.0.4.17",
            "pg.staging.acme.io",
            "orders-db.eu-west-1.rds.amazonaws.com",
            "mysql.svc.cluster.local",
            "127.0.0.1",
            "replica-2.lan",
            "warehouse.corp.example.net",
        ]
    )


def _user(r: random.Random) -> str:
    return r.choice(
        ["app", "admin", "deploy", "svc_orders", "analytics", "root", "kenji", "ci-bot", "postgres"]
    )


def _pem_lines(body: str, width: int = 64) -> str:
    return "\n".join(body[i : i + width] for i in range(0, len(body), width))


# ---------------------------------------------------------------------------------------------------------
# Credential kinds. Each comment names the documented format the generator follows.
# ---------------------------------------------------------------------------------------------------------


def _aws_secret(r, w):
    # AWS IAM user guide "Managing access keys": access key id AKIA + 16 upper base32, secret access key 40
    # characters of base64 alphabet.
    key_id = "AKIA" + _chars(r, BASE32_UPPER, 16)
    return _tok(
        f"aws_access_key_id = {key_id}\naws_secret_access_key = ",
        _body(r, B64, 40, w),
        "aws_secret_access_key",
    )


def _aws_session(r, w):
    # AWS STS docs: temporary credentials are an ASIA… key id plus a long session token (base64, starts
    # "IQoJb3JpZ2luX2Vj" = "\x21\x0a\x09origin_ec" in current tokens).
    token = "IQoJb3JpZ2luX2Vj" + _body(r, B64, 300, w)
    return _tok(
        f"AWS_ACCESS_KEY_ID=ASIA{_chars(r, BASE32_UPPER, 16)}\nAWS_SESSION_TOKEN=",
        token,
        "AWS_SESSION_TOKEN",
        lead=16,
    )


def _gcp_api_key(r, w):
    # Google Cloud "Manage API keys": keys are 39 characters starting AIza.
    return _tok("", "AIza" + _body(r, URLSAFE, 35, w), "GOOGLE_API_KEY", lead=4)


def _gcp_service_account(r, w):
    # Google Cloud IAM "Create and delete service account keys": JSON key file with type service_account,
    # private_key_id (40 hex) and a PKCS#8 PEM private_key whose newlines are escaped in the JSON string.
    project = r.choice(["acme-prod", "billing-4471", "ml-sandbox-22", "kenfold-ci"])
    der = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + _body(r, B64, 1570, w)
    body = "\\n".join(der[i : i + 64] for i in range(0, len(der), 64))
    head = (
        '{\n  "type": "service_account",\n  "project_id": "'
        + project
        + '",\n  "private_key_id": "'
        + _chars(r, HEX, 40)
        + '",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n'
    )
    tail = (
        '\\n-----END PRIVATE KEY-----\\n",\n  "client_email": "deployer@'
        + project
        + '.iam.gserviceaccount.com",\n  "client_id": "'
        + _chars(r, string.digits, 21)
        + '",\n  "token_uri": "https://oauth2.googleapis.com/token"\n}'
    )
    return Credential(head, body, tail, "service_account.json", "block", start=52, end=64)


def _azure_storage(r, w):
    # Azure Storage "Configure a connection string": DefaultEndpointsProtocol=https;AccountName=…;
    # AccountKey=<88 base64 characters, 64 bytes>;EndpointSuffix=core.windows.net
    account = r.choice(["acmeprodlogs", "stkenfold01", "datalake7731", "backupsweu"])
    key = _body(r, B64, 86, w) + "=="
    return Credential(
        f"DefaultEndpointsProtocol=https;AccountName={account};AccountKey=",
        key,
        ";EndpointSuffix=core.windows.net",
        "AZURE_STORAGE_CONNECTION_STRING",
        "url",
        0,
        86,
    )


def _azure_sas(r, w):
    # Azure "Create a service SAS" / learn.microsoft.com "Identify URI and SAS parameters": query parameters
    # sv, ss, srt, sp, se, st, spr and sig, the URL-encoded base64 HMAC-SHA256 signature (44 characters
    # before encoding, so %2B, %2F and a trailing %3D appear).
    sig = quote(_body(r, B64, 43, w) + "=", safe="")
    head = (
        f"https://{r.choice(['acmeprodlogs', 'stmedia02'])}.blob.core.windows.net/exports/report.csv?"
        "sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2027-01-31T18:00:00Z&st=2026-12-01T09:00:00Z&spr=https&sig="
    )
    return Credential(head, sig, "", "AZURE_SAS_URL", "url", 0, len(sig) - 3)


def _azure_client_secret(r, w):
    # Microsoft Entra app registrations: client secrets are 40 characters, the 4th-5th being "Q~" in the
    # current format: 3 characters, a digit, "Q~", then 34 of [A-Za-z0-9_.~-].
    secret = _chars(r, ALNUM, 3) + r.choice(string.digits) + "Q~" + _body(r, URLSAFE + ".~", 34, w)
    return _tok("", secret, "AZURE_CLIENT_SECRET", lead=6)


def _digitalocean(r, w):
    # DigitalOcean API docs "How to Create a Personal Access Token": dop_v1_ followed by 64 hex.
    return _tok("", "dop_v1_" + _body(r, HEX, 64, w), "DIGITALOCEAN_ACCESS_TOKEN", lead=7)


def _alibaba(r, w):
    # Alibaba Cloud RAM "Create an AccessKey pair": AccessKey ID LTAI + 20 alnum, AccessKey secret 30 alnum.
    return _tok(
        f"AccessKeyId: LTAI5t{_chars(r, ALNUM, 18)}\nAccessKeySecret: ",
        _body(r, ALNUM, 30, w),
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
    )


def _tencent(r, w):
    # Tencent Cloud CAM "API key management": SecretId AKID + 32 alnum, SecretKey 32 alnum.
    return _tok(
        f"TENCENTCLOUD_SECRET_ID=AKID{_chars(r, ALNUM, 32)}\nTENCENTCLOUD_SECRET_KEY=",
        _body(r, ALNUM, 32, w),
        "TENCENTCLOUD_SECRET_KEY",
    )


def _huawei(r, w):
    # Huawei Cloud "Access Keys": AK 20 upper alnum, SK 40 alnum, in credentials.csv or env.
    return _tok(
        f"HUAWEICLOUD_SDK_AK={_chars(r, UPPER_ALNUM, 20)}\nHUAWEICLOUD_SDK_SK=",
        _body(r, ALNUM, 40, w),
        "HUAWEICLOUD_SDK_SK",
    )


def _ibm(r, w):
    # IBM Cloud "Managing user API keys": 44 characters of [A-Za-z0-9_-].
    return _tok("", _body(r, URLSAFE, 44, w), "IBMCLOUD_API_KEY")


def _yandex(r, w):
    # Yandex Cloud "API key": secret part starts AQVN, about 40 characters of [A-Za-z0-9_-].
    return _tok("", "AQVN" + _body(r, URLSAFE, 36, w), "YC_API_KEY", lead=4)


def _scaleway(r, w):
    # Scaleway "API keys": access key SCW + 17 upper alnum, secret key a UUID.
    secret = _uuid(r, w)
    return _tok(f"SCW_ACCESS_KEY=SCW{_chars(r, UPPER_ALNUM, 17)}\nSCW_SECRET_KEY=", secret, "SCW_SECRET_KEY")


def _hetzner(r, w):
    # Hetzner Cloud "Generating an API token": 64 alnum characters.
    return _tok("", _body(r, ALNUM, 64, w), "HCLOUD_TOKEN")


def _linode(r, w):
    # Linode/Akamai "Manage personal access tokens": 64 hex characters.
    return _tok("", _body(r, HEX, 64, w), "LINODE_TOKEN")


def _cloudflare(r, w):
    # Cloudflare "Create API token": 40 characters of [A-Za-z0-9_-], sent as Bearer.
    return _tok("", _body(r, URLSAFE, 40, w), "CLOUDFLARE_API_TOKEN")


def _flyio(r, w):
    # Fly.io "fly tokens create": tokens start "FlyV1 fm2_" followed by a long base64 macaroon.
    return _tok("FlyV1 ", "fm2_lJPECAAAAAAA" + _body(r, B64, 180, w), "FLY_API_TOKEN", lead=16)


def _k8s_bootstrap(r, w):
    # Kubernetes "Authenticating with Bootstrap Tokens": [a-z0-9]{6}.[a-z0-9]{16}.
    return _tok(f"{_chars(r, LOWER_ALNUM, 6)}.", _body(r, LOWER_ALNUM, 16, w), "bootstrap_token")


def _kubeconfig(r, w):
    # Kubernetes "Configure Access to Multiple Clusters": users[].user.token, here a service-account JWT
    # signed RS256 as the API server issues them.
    jwt, at = _jwt(
        r,
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "sub": "system:serviceaccount:ci:deployer",
        },
        w,
        "RS256",
    )
    head = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://10.20.0.1:6443\n"
        "users:\n- name: deployer\n  user:\n    token: "
    )
    return Credential(
        head,
        jwt,
        "\ncontexts:\n- name: prod\n  context: {cluster: prod, user: deployer}",
        "kubeconfig",
        "block",
        at,
        len(jwt),
    )


def _openssh_key(r, w):
    # OpenSSH PROTOCOL.key: "openssh-key-v1\0", cipher/kdf "none", one ed25519 key, base64 in 70-char lines.
    def s(b: bytes) -> bytes:
        return struct.pack(">I", len(b)) + b

    pub = bytes(r.getrandbits(8) for _ in range(32))
    seed = bytes(r.getrandbits(8) for _ in range(32))
    blob = s(b"ssh-ed25519") + s(pub)
    check = struct.pack(">I", r.getrandbits(32)) * 2
    private = check + s(b"ssh-ed25519") + s(pub) + s(seed + pub) + s(b"deploy@ci")
    private += bytes(range(1, 1 + (-len(private) % 8)))
    data = (
        b"openssh-key-v1\0" + s(b"none") + s(b"none") + s(b"") + struct.pack(">I", 1) + s(blob) + s(private)
    )
    body = base64.b64encode(data).decode()
    if w:
        body = body[:240] + _body(r, B64, 20, w) + body[260:]
    lines = "\n".join(body[i : i + 70] for i in range(0, len(body), 70))
    return Credential(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        lines,
        "\n-----END OPENSSH PRIVATE KEY-----",
        "id_ed25519",
        "block",
        3 * 71 + 10,
        3 * 71 + 60,
    )


def _rsa_pem(r, w):
    # RFC 7468 / PKCS#1: "-----BEGIN RSA PRIVATE KEY-----", a 2048-bit key's DER starts MIIEpAIBAAKCAQEA.
    body = "MIIEpAIBAAKCAQEA" + _body(r, B64, 1572, w)
    return Credential(
        "-----BEGIN RSA PRIVATE KEY-----\n",
        _pem_lines(body),
        "\n-----END RSA PRIVATE KEY-----",
        "server.key",
        "block",
        20,
        64,
    )


def _ec_pem(r, w):
    # RFC 5915 EC private key PEM; a P-256 key's DER starts MHcCAQEEI.
    body = "MHcCAQEEI" + _body(r, B64, 155, w) + "=="
    return Credential(
        "-----BEGIN EC PRIVATE KEY-----\n",
        _pem_lines(body),
        "\n-----END EC PRIVATE KEY-----",
        "tls.key",
        "block",
        12,
        64,
    )


def _openstack(r, w):
    # OpenStack os-client-config "clouds.yaml": clouds.<name>.auth.password.
    head = (
        "clouds:\n  ovh-gra:\n    auth:\n      auth_url: https://auth.cloud.ovh.net/v3\n"
        f"      username: user-{_chars(r, ALNUM, 12)}\n      password: "
    )
    return Credential(
        head,
        _body(r, ALNUM, 32, w),
        "\n      project_name: '7741200831'\n    region_name: GRA11",
        "clouds.yaml",
        "block",
        0,
        32,
    )


def _github_classic(r, w):
    return _tok("", _crc_token("ghp_", r, w), "GITHUB_TOKEN", lead=4)


def _github_oauth(r, w):
    # Same documented format with the gho_ (OAuth) prefix.
    return _tok("", _crc_token("gho_", r, w), "GH_OAUTH_TOKEN", lead=4)


def _github_app(r, w):
    # ghs_ = GitHub App installation token, same 30+6 layout.
    return _tok("", _crc_token("ghs_", r, w), "GITHUB_APP_TOKEN", lead=4)


def _github_fine(r, w):
    # GitHub docs "fine-grained personal access tokens": github_pat_ + 22 alnum + "_" + 59 alnum.
    return _tok("", f"github_pat_{_chars(r, ALNUM, 22)}_{_body(r, ALNUM, 59, w)}", "GH_PAT", lead=34)


def _gitlab_pat(r, w):
    # GitLab docs "Token prefixes" (gitlab-org/gitlab#342327): personal access tokens start glpat- followed
    # by 20 [A-Za-z0-9_-]; the newer routable tokens are glpat-<base64url payload>.01.<9 alnum checksum>.
    if r.random() < 0.5:
        return _tok("", "glpat-" + _body(r, URLSAFE, 20, w), "GITLAB_TOKEN", lead=6)
    body = _body(r, URLSAFE, 27, w)
    return Credential("", f"glpat-{body}.01.{_chars(r, LOWER_ALNUM, 9)}", "", "GITLAB_TOKEN", "inline", 6, 33)


def _gitlab_runner(r, w):
    # GitLab docs "Token prefixes": runner authentication tokens start glrt-.
    return _tok("", "glrt-" + _body(r, URLSAFE, 20, w), "CI_RUNNER_TOKEN", lead=5)


def _gitlab_trigger(r, w):
    # GitLab docs "Token prefixes": pipeline trigger tokens start glptt- followed by 40 hex.
    return _tok("", "glptt-" + _body(r, HEX, 40, w), "TRIGGER_TOKEN", lead=6)


def _bitbucket(r, w):
    # Atlassian "App passwords" (2022 format): ATBB + 32 alnum ending in an 8-hex checksum.
    return _tok(
        "", "ATBB" + _body(r, ALNUM, 24, w) + _chars(r, UPPER_HEX, 8), "BITBUCKET_APP_PASSWORD", lead=4
    )


def _circleci(r, w):
    # CircleCI "Managing API tokens": personal tokens CCIPAT_ + 22 alnum + "_" + 40 hex.
    return _tok("", f"CCIPAT_{_chars(r, ALNUM, 22)}_{_body(r, HEX, 40, w)}", "CIRCLE_TOKEN", lead=30)


def _buildkite(r, w):
    # Buildkite "API access tokens": bkua_ + 40 hex.
    return _tok("", "bkua_" + _body(r, HEX, 40, w), "BUILDKITE_API_TOKEN", lead=5)


def _jenkins(r, w):
    # Jenkins "Authenticating scripted clients": API tokens are 34 hex starting 11, used as the basic-auth
    # password (curl -u user:token).
    return _tok(f"{_user(r)}:", "11" + _body(r, HEX, 32, w), "JENKINS_API_TOKEN", lead=2)


def _azure_devops(r, w):
    # Azure DevOps "Use personal access tokens": 52 characters of lowercase base32.
    return _tok("", _body(r, BASE32_LOWER, 52, w), "AZURE_DEVOPS_EXT_PAT")


def _terraform(r, w):
    # HashiCorp Terraform Cloud "API tokens": 14 alnum + ".atlasv1." + 67 alnum.
    return _tok(f"{_chars(r, ALNUM, 14)}.atlasv1.", _body(r, ALNUM, 67, w), "TFE_TOKEN")


def _vault(r, w):
    # HashiCorp Vault 1.10+ "Token prefixes": service tokens hvs. + base64url body (about 90 characters).
    return _tok("", "hvs." + _body(r, URLSAFE, 90, w), "VAULT_TOKEN", lead=4)


def _pulumi(r, w):
    # Pulumi "Access tokens": pul- + 40 hex.
    return _tok("", "pul-" + _body(r, HEX, 40, w), "PULUMI_ACCESS_TOKEN", lead=4)


def _doppler(r, w):
    # Doppler "Service tokens": dp.st. + environment + "." + 40+ alnum.
    return _tok("dp.st.prd.", _body(r, ALNUM, 43, w), "DOPPLER_TOKEN")


def _slack_bot(r, w):
    # Slack API "Token types": bot tokens xoxb-<team id digits>-<bot id digits>-<24 alnum>.
    return _tok(
        f"xoxb-{_chars(r, string.digits, 12)}-{_chars(r, string.digits, 13)}-",
        _body(r, ALNUM, 24, w),
        "SLACK_BOT_TOKEN",
    )


def _slack_user(r, w):
    # Slack "Token types": user tokens xoxp-<digits>-<digits>-<digits>-<32 hex>.
    d = string.digits
    return _tok(
        f"xoxp-{_chars(r, d, 12)}-{_chars(r, d, 12)}-{_chars(r, d, 13)}-",
        _body(r, HEX, 32, w),
        "SLACK_USER_TOKEN",
    )


def _slack_webhook(r, w):
    # Slack "Sending messages using incoming webhooks": hooks.slack.com/services/T…/B…/<24 alnum>.
    head = f"https://hooks.slack.com/services/T{_chars(r, UPPER_ALNUM, 10)}/B{_chars(r, UPPER_ALNUM, 10)}/"
    return Credential(head, _body(r, ALNUM, 24, w), "", "SLACK_WEBHOOK_URL", "url", 0, 24)


def _slack_app(r, w):
    # Slack "App-level tokens": xapp-1-A<id>-<digits>-<64 hex>.
    head = f"xapp-1-A{_chars(r, UPPER_ALNUM, 10)}-{_chars(r, string.digits, 13)}-"
    return _tok(head, _body(r, HEX, 64, w), "SLACK_APP_TOKEN")


def _discord_bot(r, w):
    # Discord developer docs: bot token = base64(user id) "." 6-char timestamp "." 27+ char HMAC.
    uid = base64.b64encode(str(r.randint(10**17, 10**18)).encode()).decode().rstrip("=")
    return _tok(f"{uid}.{_chars(r, URLSAFE, 6)}.", _body(r, URLSAFE, 38, w), "DISCORD_BOT_TOKEN")


def _discord_webhook(r, w):
    # Discord "Webhook resource": discord.com/api/webhooks/<snowflake id>/<68-char token>.
    head = f"https://discord.com/api/webhooks/{r.randint(10**17, 10**18)}/"
    return Credential(head, _body(r, URLSAFE, 68, w), "", "DISCORD_WEBHOOK", "url", 0, 68)


def _telegram(r, w):
    # Telegram Bot API: "<bot id digits>:<35 characters>", the secret part starting AA.
    return _tok(f"{r.randint(10**8, 10**10)}:", "AA" + _body(r, URLSAFE, 33, w), "TELEGRAM_BOT_TOKEN", lead=2)


def _teams_webhook(r, w):
    # Microsoft Teams incoming webhooks: <tenant>.webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/
    # <32 hex>/<guid>.
    head = f"https://acme.webhook.office.com/webhookb2/{_uuid(r)}@{_uuid(r)}/IncomingWebhook/"
    return Credential(head, _body(r, HEX, 32, w), f"/{_uuid(r)}", "TEAMS_WEBHOOK_URL", "url", 0, 32)


def _twilio_auth(r, w):
    # Twilio "Auth tokens": Account SID AC + 32 hex, auth token 32 hex.
    return _tok(
        f"TWILIO_ACCOUNT_SID=AC{_chars(r, HEX, 32)}\nTWILIO_AUTH_TOKEN=",
        _body(r, HEX, 32, w),
        "TWILIO_AUTH_TOKEN",
    )


def _twilio_api_key(r, w):
    # Twilio "API keys": key SID SK + 32 hex, with a 32-alnum secret.
    return _tok(
        f"TWILIO_API_KEY=SK{_chars(r, HEX, 32)}\nTWILIO_API_SECRET=",
        _body(r, ALNUM, 32, w),
        "TWILIO_API_SECRET",
    )


def _mattermost(r, w):
    # Mattermost "Personal access tokens": 26 lowercase alnum.
    return _tok("", _body(r, LOWER_ALNUM, 26, w), "MM_ACCESS_TOKEN")


def _line(r, w):
    # LINE Messaging API "Channel access token": long-lived tokens are about 172 base64 characters ending
    # in "=".
    return _tok("", _body(r, B64, 171, w) + "=", "LINE_CHANNEL_ACCESS_TOKEN")


def _matrix(r, w):
    # Synapse access tokens: syt_<base64 localpart>_<20 alnum>_<6 alnum checksum>.
    local = base64.b64encode(r.choice([b"alice", b"bridgebot", b"ops"])).decode().rstrip("=")
    return _tok(f"syt_{local}_", _body(r, ALNUM, 20, w) + "_" + _chars(r, ALNUM, 6), "MATRIX_ACCESS_TOKEN")


def _stripe_secret(r, w):
    # Stripe "API keys": secret keys sk_live_ + alnum (99 characters in current accounts).
    return _tok("", "sk_live_51" + _body(r, ALNUM, 97, w), "STRIPE_SECRET_KEY", lead=10)


def _stripe_restricted(r, w):
    # Stripe "Restricted API keys": rk_live_ + alnum.
    return _tok("", "rk_live_51" + _body(r, ALNUM, 97, w), "STRIPE_RESTRICTED_KEY", lead=10)


def _stripe_webhook(r, w):
    # Stripe "Check the webhook signatures": endpoint secrets whsec_ + 32 alnum.
    return _tok("", "whsec_" + _body(r, ALNUM, 32, w), "STRIPE_WEBHOOK_SECRET", lead=6)


def _braintree(r, w):
    # PayPal Braintree "Access tokens": access_token$production$<merchant id 16>$<32 hex>.
    return _tok(
        f"access_token$production${_chars(r, LOWER_ALNUM, 16)}$",
        _body(r, HEX, 32, w),
        "BRAINTREE_ACCESS_TOKEN",
    )


def _square(r, w):
    # Square developer docs: production access tokens EAAA + 60 characters of [A-Za-z0-9_-].
    return _tok("", "EAAA" + _body(r, URLSAFE, 60, w), "SQUARE_ACCESS_TOKEN", lead=4)


def _adyen(r, w):
    # Adyen "API credentials": API keys start AQE and are about 100+ base64 characters with a version tail.
    return _tok(
        "",
        "AQE" + _body(r, B64, 110, w) + "=-" + _chars(r, B64, 44) + "=-" + _chars(r, ALNUM, 12),
        "ADYEN_API_KEY",
        lead=3,
    )


def _razorpay(r, w):
    # Razorpay (India) "API keys": key id rzp_live_ + 14 alnum, key secret 24 alnum.
    return _tok(
        f"RAZORPAY_KEY_ID=rzp_live_{_chars(r, ALNUM, 14)}\nRAZORPAY_KEY_SECRET=",
        _body(r, ALNUM, 24, w),
        "RAZORPAY_KEY_SECRET",
    )


def _paystack(r, w):
    # Paystack (Nigeria) "API keys": sk_live_ + 40 hex.
    return _tok("", "sk_live_" + _body(r, HEX, 40, w), "PAYSTACK_SECRET_KEY", lead=8)


def _flutterwave(r, w):
    # Flutterwave (Africa) "API keys": FLWSECK- + 32 hex + "-X".
    return _tok("", "FLWSECK-" + _body(r, HEX, 32, w) + "-X", "FLW_SECRET_KEY", lead=8)


def _mercadopago(r, w):
    # Mercado Pago (Latin America) "Credentials": APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    d = string.digits
    return _tok(
        f"APP_USR-{_chars(r, d, 16)}-{_chars(r, d, 6)}-",
        _body(r, HEX, 32, w) + f"-{_chars(r, d, 9)}",
        "MP_ACCESS_TOKEN",
    )


def _mollie(r, w):
    # Mollie (Netherlands) "API keys": live_ + 30 alnum.
    return _tok("", "live_" + _body(r, ALNUM, 30, w), "MOLLIE_API_KEY", lead=5)


def _xendit(r, w):
    # Xendit (Indonesia/Philippines) "API keys": xnd_production_ + base64url body.
    return _tok("", "xnd_production_" + _body(r, URLSAFE, 60, w), "XENDIT_SECRET_KEY", lead=15)


def _plaid(r, w):
    # Plaid "Keys": client_id 24 hex, secret 30 hex.
    return _tok(f"PLAID_CLIENT_ID={_chars(r, HEX, 24)}\nPLAID_SECRET=", _body(r, HEX, 30, w), "PLAID_SECRET")


def _postgres_url(r, w):
    # PostgreSQL docs "Connection URIs": postgresql://user:password@host:port/dbname.
    return Credential(
        f"postgresql://{_user(r)}:",
        _body(r, ALNUM, 24, w),
        f"@{_host(r)}:5432/orders",
        "DATABASE_URL",
        "url",
        0,
        24,
    )


def _mysql_url(r, w):
    # MySQL Connector "Connecting using URI-like strings": mysql://user:password@host:3306/schema.
    pw = _words(r) if not w else _body(r, ALNUM, 20, w)
    return Credential(f"mysql://{_user(r)}:", pw, f"@{_host(r)}:3306/shop", "MYSQL_URL", "url", 0, len(pw))


def _mongodb(r, w):
    # MongoDB "Connection String URI Format": mongodb+srv://user:password@cluster.xxxxx.mongodb.net/.
    tail = f"@cluster0.{_chars(r, LOWER_ALNUM, 5)}.mongodb.net/?retryWrites=true&w=majority"
    return Credential(f"mongodb+srv://{_user(r)}:", _body(r, ALNUM, 16, w), tail, "MONGODB_URI", "url", 0, 16)


def _redis(r, w):
    # Redis "redis-cli -u" / Redis Cloud: rediss://default:password@host:port.
    tail = f"@redis-{r.randint(10000, 19999)}.c{r.randint(1, 300)}.eu-west-1-2.ec2.cloud.redislabs.com:6380"
    return Credential("rediss://default:", _body(r, ALNUM, 32, w), tail, "REDIS_URL", "url", 0, 32)


def _pgpass(r, w):
    # PostgreSQL docs "The Password File": hostname:port:database:username:password.
    return Credential(
        f"{_host(r)}:5432:*:{_user(r)}:", _body(r, ALNUM + "!#%", 22, w), "", ".pgpass", "url", 0, 22
    )


def _sqlserver(r, w):
    # Microsoft SqlClient connection strings: Server=…;Database=…;User Id=…;Password=…;
    pw = _body(r, ALNUM, 18, w) + r.choice("!#@") + str(r.randint(10, 99))
    return Credential(
        f"Server=tcp:{_host(r)},1433;Database=crm;User Id=sa;Password=",
        pw,
        ";Encrypt=True;TrustServerCertificate=False;",
        "ConnectionStrings__Default",
        "url",
        0,
        18,
    )


def _jdbc(r, w):
    # Oracle JDBC / PostgreSQL JDBC: jdbc:postgresql://host/db?user=…&password=….
    return Credential(
        f"jdbc:postgresql://{_host(r)}:5432/ledger?user={_user(r)}&password=",
        _body(r, ALNUM, 20, w),
        "&ssl=true",
        "spring.datasource.url",
        "url",
        0,
        20,
    )


def _planetscale(r, w):
    # PlanetScale "Connection strings": passwords pscale_pw_ + 43 [A-Za-z0-9_-].
    return _tok("", "pscale_pw_" + _body(r, URLSAFE, 43, w), "DATABASE_PASSWORD", lead=10)


def _supabase(r, w):
    # Supabase "API keys": the service_role key is a JWT with role "service_role" (HS256).
    jwt, at = _jwt(
        r,
        {
            "iss": "supabase",
            "ref": _chars(r, string.ascii_lowercase, 20),
            "role": "service_role",
            "iat": 1700000000,
            "exp": 2015576000,
        },
        w,
    )
    return Credential("", jwt, "", "SUPABASE_SERVICE_ROLE_KEY", "inline", at, len(jwt))


def _astra(r, w):
    # DataStax Astra DB "Application tokens": AstraCS:<24 alnum>:<64 hex>.
    return _tok(f"AstraCS:{_chars(r, ALNUM, 24)}:", _body(r, HEX, 64, w), "ASTRA_DB_APPLICATION_TOKEN")


def _elastic(r, w):
    # Elastic "Create API key": the encoded key is base64("<id>:<api_key>"), sent as "ApiKey <encoded>".
    raw = f"{_chars(r, URLSAFE, 20)}:{_body(r, URLSAFE, 22, w)}"
    return _tok("ApiKey ", base64.b64encode(raw.encode()).decode(), "ELASTIC_API_KEY", lead=28)


def _npm(r, w):
    return _tok("//registry.npmjs.org/:_authToken=", _crc_token("npm_", r, w), ".npmrc", lead=4)


def _pypi(r, w):
    # PyPI "API tokens": pypi- followed by a macaroon, base64url starting AgEIcHlwaS5vcmc ("pypi.org").
    return _tok("", "pypi-AgEIcHlwaS5vcmc" + _body(r, URLSAFE, 160, w), "TWINE_PASSWORD", lead=20)


def _pypirc(r, w):
    # Python packaging ".pypirc": [pypi] username = __token__ / password = pypi-….
    token = "pypi-AgENdGVzdC5weXBpLm9yZw" + _body(r, URLSAFE, 150, w)
    return Credential(
        "[distutils]\nindex-servers = testpypi\n\n[testpypi]\nusername = __token__\npassword = ",
        token,
        "\n",
        ".pypirc",
        "block",
        27,
        len(token),
    )


def _docker_pat(r, w):
    # Docker Hub "Personal access tokens": dckr_pat_ + 27 [A-Za-z0-9_-].
    return _tok("", "dckr_pat_" + _body(r, URLSAFE, 27, w), "DOCKERHUB_TOKEN", lead=9)


def _docker_config(r, w):
    # Docker "docker login" credentials store: ~/.docker/config.json auths.<registry>.auth = base64(user:pw).
    pw = _body(r, ALNUM, 28, w)
    auth = base64.b64encode(f"{_user(r)}:{pw}".encode()).decode()
    head = '{\n  "auths": {\n    "registry.gitlab.com": {\n      "auth": "'
    return Credential(head, auth, '"\n    }\n  }\n}', "config.json", "block", len(auth) - 32, len(auth) - 4)


def _nuget(r, w):
    # NuGet.org "API keys": oy2 + 43 lowercase alnum.
    return _tok("", "oy2" + _body(r, LOWER_ALNUM, 43, w), "NUGET_API_KEY", lead=3)


def _rubygems(r, w):
    # RubyGems.org "API key": rubygems_ + 48 hex.
    return _tok("", "rubygems_" + _body(r, HEX, 48, w), "GEM_HOST_API_KEY", lead=9)


def _crates(r, w):
    # crates.io "API tokens": cio + 32 alnum.
    return _tok("", "cio" + _body(r, ALNUM, 32, w), "CARGO_REGISTRY_TOKEN", lead=3)


def _artifactory(r, w):
    # JFrog Artifactory (legacy) API keys: AKCp + 69 alnum.
    return _tok("", "AKCp" + _body(r, ALNUM, 69, w), "ARTIFACTORY_API_KEY", lead=4)


def _netrc(r, w):
    # GNU inetutils / curl ".netrc": machine <host> login <user> password <secret>.
    return Credential(
        f"machine {r.choice(['api.heroku.com', 'git.example.org', 'nexus.corp.lan'])} login "
        f"{_user(r)} password ",
        _body(r, ALNUM, 36, w),
        "\n",
        ".netrc",
        "block",
        0,
        36,
    )


def _maven(r, w):
    # Apache Maven "settings.xml": <servers><server><id/><username/><password/>.
    head = (
        "<settings>\n  <servers>\n    <server>\n      <id>ossrh</id>\n"
        f"      <username>{_user(r)}</username>\n      <password>"
    )
    return Credential(
        head,
        _body(r, ALNUM, 26, w),
        "</password>\n    </server>\n  </servers>\n</settings>",
        "settings.xml",
        "block",
        0,
        26,
    )


def _harbor(r, w):
    # Harbor "Robot accounts": name robot$<project>+<name>, secret 32 alnum.
    return _tok("robot$ci+pusher:", _body(r, ALNUM, 32, w), "HARBOR_ROBOT_SECRET")


def _datadog_api(r, w):
    # Datadog "API and application keys": API keys 32 hex.
    return _tok("", _body(r, HEX, 32, w), "DD_API_KEY")


def _datadog_app(r, w):
    # Datadog: application keys 40 hex.
    return _tok("", _body(r, HEX, 40, w), "DD_APP_KEY")


def _newrelic_license(r, w):
    # New Relic "API keys": ingest license keys are 40 characters ending NRAL.
    return _tok("", _body(r, HEX, 36, w) + "NRAL", "NEW_RELIC_LICENSE_KEY")


def _newrelic_user(r, w):
    # New Relic: user keys NRAK- + 27 upper alnum.
    return _tok("", "NRAK-" + _body(r, UPPER_ALNUM, 27, w), "NEW_RELIC_API_KEY", lead=5)


def _sentry(r, w):
    # Sentry "User auth tokens": sntryu_ + 64 hex.
    return _tok("", "sntryu_" + _body(r, HEX, 64, w), "SENTRY_AUTH_TOKEN", lead=7)


def _grafana_sa(r, w):
    # Grafana "Service account tokens": glsa_ + 32 alnum + "_" + 8 hex checksum.
    return _tok("", "glsa_" + _body(r, ALNUM, 32, w) + "_" + _chars(r, HEX, 8), "GRAFANA_TOKEN", lead=5)


def _grafana_cloud(r, w):
    # Grafana Cloud "Access policies": tokens glc_ + base64 of a JSON {"o":…,"n":…,"k":…,"m":…}.
    payload = json.dumps(
        {
            "o": str(r.randint(10**5, 10**6)),
            "n": "stack-writer",
            "k": _body(r, ALNUM, 24, w),
            "m": {"r": "prod-eu-west-2"},
        },
        separators=(",", ":"),
    )
    token = "glc_" + base64.b64encode(payload.encode()).decode()
    return _tok("", token, "GRAFANA_CLOUD_TOKEN", lead=40)


def _splunk_hec(r, w):
    # Splunk "HTTP Event Collector": token is a GUID sent as "Authorization: Splunk <token>".
    return _tok("Splunk ", _uuid(r, w), "SPLUNK_HEC_TOKEN")


def _pagerduty(r, w):
    # PagerDuty "API access keys": 20 characters of [A-Za-z0-9_+-], often starting u+ for user keys.
    return _tok("", "u+" + _body(r, ALNUM + "_-", 18, w), "PAGERDUTY_TOKEN", lead=2)


def _dynatrace(r, w):
    # Dynatrace "Access tokens": dt0c01.<24 upper alnum public id>.<64 upper alnum secret>.
    return _tok(f"dt0c01.{_chars(r, UPPER_ALNUM, 24)}.", _body(r, UPPER_ALNUM, 64, w), "DT_API_TOKEN")


def _rollbar(r, w):
    # Rollbar "Project access tokens": 32 hex.
    return _tok("", _body(r, HEX, 32, w), "ROLLBAR_ACCESS_TOKEN")


def _honeycomb(r, w):
    # Honeycomb "API keys": configuration keys are 22 alnum characters.
    return _tok("", _body(r, ALNUM, 22, w), "HONEYCOMB_API_KEY")


def _openai_project(r, w):
    # OpenAI "API keys": project keys sk-proj- + base64url body containing "T3BlbkFJ" ("OpenAI" in base64).
    token = "sk-proj-" + _body(r, URLSAFE, 74, w) + "T3BlbkFJ" + _chars(r, URLSAFE, 74)
    return _tok("", token, "OPENAI_API_KEY", lead=8)


def _openai_legacy(r, w):
    # OpenAI legacy user keys: sk- + 20 alnum + T3BlbkFJ + 20 alnum.
    return _tok("", "sk-" + _body(r, ALNUM, 20, w) + "T3BlbkFJ" + _chars(r, ALNUM, 20), "OPENAI_KEY", lead=3)


def _anthropic(r, w):
    # Anthropic Console "API keys": sk-ant-api03- + 93 [A-Za-z0-9_-] + "AA".
    return _tok("", "sk-ant-api03-" + _body(r, URLSAFE, 93, w) + "AA", "ANTHROPIC_API_KEY", lead=13)


def _huggingface(r, w):
    # Hugging Face "User access tokens": hf_ + 34 letters.
    return _tok("", "hf_" + _body(r, string.ascii_letters, 34, w), "HF_TOKEN", lead=3)


def _replicate(r, w):
    # Replicate "API tokens": r8_ + 37 alnum.
    return _tok("", "r8_" + _body(r, ALNUM, 37, w), "REPLICATE_API_TOKEN", lead=3)


def _groq(r, w):
    # Groq "API keys": gsk_ + 52 alnum.
    return _tok("", "gsk_" + _body(r, ALNUM, 52, w), "GROQ_API_KEY", lead=4)


def _perplexity(r, w):
    # Perplexity "API": keys pplx- + 48 alnum.
    return _tok("", "pplx-" + _body(r, ALNUM, 48, w), "PERPLEXITY_API_KEY", lead=5)


def _xai(r, w):
    # xAI console: API keys xai- + 80 alnum.
    return _tok("", "xai-" + _body(r, ALNUM, 80, w), "XAI_API_KEY", lead=4)


def _openrouter(r, w):
    # OpenRouter "API keys": sk-or-v1- + 64 hex.
    return _tok("", "sk-or-v1-" + _body(r, HEX, 64, w), "OPENROUTER_API_KEY", lead=9)


def _mistral(r, w):
    # Mistral La Plateforme "API keys": 32 alnum characters.
    return _tok("", _body(r, ALNUM, 32, w), "MISTRAL_API_KEY")


def _cohere(r, w):
    # Cohere dashboard "API keys": 40 alnum characters.
    return _tok("", _body(r, ALNUM, 40, w), "CO_API_KEY")


def _langsmith(r, w):
    # LangSmith "API keys": lsv2_pt_ + 32 hex + "_" + 10 hex.
    return _tok("", "lsv2_pt_" + _body(r, HEX, 32, w) + "_" + _chars(r, HEX, 10), "LANGSMITH_API_KEY", lead=8)


def _pinecone(r, w):
    # Pinecone "API keys": pcsk_ + 5 alnum + "_" + long alnum secret.
    return _tok(f"pcsk_{_chars(r, ALNUM, 5)}_", _body(r, ALNUM, 63, w), "PINECONE_API_KEY")


def _wandb(r, w):
    # Weights & Biases "API keys": 40 hex, also written to ~/.netrc for api.wandb.ai.
    return _tok("", _body(r, HEX, 40, w), "WANDB_API_KEY")


def _azure_openai(r, w):
    # Azure OpenAI "Keys and Endpoint": 32 hex, sent in the api-key header.
    return _tok("", _body(r, HEX, 32, w), "AZURE_OPENAI_API_KEY")


def _sendgrid(r, w):
    # Twilio SendGrid "API keys": SG.<22 base64url>.<43 base64url>.
    return _tok(f"SG.{_chars(r, URLSAFE, 22)}.", _body(r, URLSAFE, 43, w), "SENDGRID_API_KEY")


def _mailgun(r, w):
    # Mailgun "API keys" (legacy private key): key- + 32 hex.
    return _tok("", "key-" + _body(r, HEX, 32, w), "MAILGUN_API_KEY", lead=4)


def _shopify(r, w):
    # Shopify "Access tokens": Admin API tokens shpat_ + 32 hex.
    return _tok("", "shpat_" + _body(r, HEX, 32, w), "SHOPIFY_ACCESS_TOKEN", lead=6)


def _atlassian(r, w):
    # Atlassian "Manage API tokens": ATATT3xFfGF0 + base64url body + "=" + 8 hex checksum.
    token = "ATATT3xFfGF0" + _body(r, URLSAFE, 170, w) + "=" + _chars(r, UPPER_HEX, 8)
    return _tok("", token, "JIRA_API_TOKEN", lead=12)


def _notion(r, w):
    # Notion "Integrations": internal integration secrets ntn_ + 46 alnum (legacy: secret_ + 43); the
    # ntn_/secret_ prefixes as Notion's developer docs describe them.
    return _tok("", "ntn_" + _body(r, ALNUM, 46, w), "NOTION_TOKEN", lead=4)


def _airtable(r, w):
    # Airtable "Personal access tokens": pat + 14 alnum + "." + 64 hex.
    return _tok(f"pat{_chars(r, ALNUM, 14)}.", _body(r, HEX, 64, w), "AIRTABLE_API_KEY")


def _linear(r, w):
    # Linear "API": personal keys lin_api_ + 40 alnum.
    return _tok("", "lin_api_" + _body(r, ALNUM, 40, w), "LINEAR_API_KEY", lead=8)


def _figma(r, w):
    # Figma "Personal access tokens": figd_ + 40 [A-Za-z0-9_-].
    return _tok("", "figd_" + _body(r, URLSAFE, 40, w), "FIGMA_TOKEN", lead=5)


def _hubspot(r, w):
    # HubSpot "Private apps": access tokens pat-<region>-<uuid>.
    return _tok("pat-na1-", _uuid(r, w), "HUBSPOT_ACCESS_TOKEN")


def _okta(r, w):
    # Okta "API tokens": 00 + 40 characters of [A-Za-z0-9_-], sent as "Authorization: SSWS <token>".
    return _tok("SSWS ", "00" + _body(r, URLSAFE, 40, w), "OKTA_API_TOKEN", lead=2)


def _postmark(r, w):
    # Postmark "Server API token": a GUID in the X-Postmark-Server-Token header.
    return _tok("", _uuid(r, w), "POSTMARK_SERVER_TOKEN")


def _mailchimp(r, w):
    # Mailchimp Marketing API keys: 32 hex + "-us" + datacenter number.
    return _tok("", _body(r, HEX, 32, w) + f"-us{r.randint(1, 21)}", "MAILCHIMP_API_KEY")


def _twitter(r, w):
    # X/Twitter API v2 "Bearer tokens": start with 22 "A"s then a URL-encoded base64 body.
    return _tok(
        "",
        "AAAAAAAAAAAAAAAAAAAAA" + _body(r, ALNUM, 90, w) + "%3D" + _chars(r, ALNUM, 30),
        "TWITTER_BEARER_TOKEN",
        lead=21,
    )


def _dropbox(r, w):
    # Dropbox "OAuth guide": short-lived access tokens sl. + about 135 [A-Za-z0-9_-].
    return _tok("", "sl." + _body(r, URLSAFE, 135, w), "DROPBOX_ACCESS_TOKEN", lead=3)


def _onepassword(r, w):
    # 1Password "Service accounts": tokens ops_ + base64 JWT-like payload (starts eyJ).
    return _tok(
        "", "ops_eyJzaWduSW5BZGRyZXNzIjoi" + _body(r, URLSAFE, 300, w), "OP_SERVICE_ACCOUNT_TOKEN", lead=28
    )


def _contentful(r, w):
    # Contentful "Personal access tokens": CFPAT- + 43 [A-Za-z0-9_-].
    return _tok("", "CFPAT-" + _body(r, URLSAFE, 43, w), "CONTENTFUL_MANAGEMENT_TOKEN", lead=6)


def _algolia(r, w):
    # Algolia "API keys": the Admin API key is 32 hex.
    return _tok(
        f"ALGOLIA_APP_ID={_chars(r, UPPER_ALNUM, 10)}\nALGOLIA_ADMIN_KEY=",
        _body(r, HEX, 32, w),
        "ALGOLIA_ADMIN_KEY",
    )


def _mapbox(r, w):
    # Mapbox "Access tokens": secret tokens sk.eyJ… (base64 JSON header) "." 22 base64url.
    head = "sk." + _b64url(
        json.dumps({"u": r.choice(["acme", "geoteam"]), "a": _chars(r, LOWER_ALNUM, 25)}).encode()
    )
    return _tok(head + ".", _body(r, URLSAFE, 22, w), "MAPBOX_SECRET_TOKEN")


def _heroku(r, w):
    # Heroku "API keys" (2024 format): HRKU- followed by base64url characters (GitLab's secret-detection
    # validity check, gitlab-org/gitlab!248117, keys on the same HRKU- prefix).
    return _tok("", "HRKU-AA" + _body(r, URLSAFE, 58, w), "HEROKU_API_KEY", lead=7)


def _basic_auth(r, w):
    # RFC 7617: Authorization: Basic base64(user ":" password).
    pw = _body(r, ALNUM, 20, w)
    encoded = base64.b64encode(f"{_user(r)}:{pw}".encode()).decode()
    return _tok("Authorization: Basic ", encoded, "AUTH_HEADER", lead=len(encoded) - 24)


def _generic_hex_name(r, w):
    # Vendors that document no prefix: a 32-hex value kept under the vendor's secret variable name.
    vendor = r.choice(["ACMEPAY", "SHIPFAST", "GEOIP", "SMSGATE", "WEATHERLY", "CRMLY"])
    return _tok("", _body(r, HEX, 32, w), f"{vendor}_AUTH_TOKEN")


def _generic_api_key(r, w):
    # Prefixless keys (a random alnum value) under a key name such as api_key or client_secret.
    return _tok(
        "",
        _body(r, ALNUM, r.choice([24, 32, 40]), w),
        r.choice(["api_key", "client_secret", "apiKey", "secret_key", "access_token"]),
    )


def _generic_password(r, w):
    # A human password (words and digits) under a password name.
    pw = _words(r) if not w else _words(r)[:6] + w + str(r.randint(100, 999)) + "!"
    return Credential(
        "", pw, "", r.choice(["password", "DB_PASSWORD", "admin_password", "smtp_pass"]), "inline", 0, len(pw)
    )


KINDS: tuple[Kind, ...] = (
    Kind("aws_secret_access_key", "cloud", _aws_secret),
    Kind("aws_session_token", "cloud", _aws_session),
    Kind("gcp_api_key", "cloud", _gcp_api_key),
    Kind("gcp_service_account_json", "cloud", _gcp_service_account),
    Kind("azure_storage_connection_string", "cloud", _azure_storage),
    Kind("azure_sas_signature", "cloud", _azure_sas),
    Kind("azure_client_secret", "cloud", _azure_client_secret),
    Kind("digitalocean_token", "cloud", _digitalocean),
    Kind("alibaba_access_key_secret", "cloud", _alibaba),
    Kind("tencent_secret_key", "cloud", _tencent),
    Kind("huawei_secret_key", "cloud", _huawei),
    Kind("ibm_cloud_api_key", "cloud", _ibm),
    Kind("yandex_cloud_api_key", "cloud", _yandex),
    Kind("scaleway_secret_key", "cloud", _scaleway),
    Kind("hetzner_cloud_token", "cloud", _hetzner),
    Kind("linode_token", "cloud", _linode),
    Kind("cloudflare_api_token", "cloud", _cloudflare),
    Kind("flyio_token", "cloud", _flyio),
    Kind("heroku_api_key", "cloud", _heroku),
    Kind("kubernetes_bootstrap_token", "cloud", _k8s_bootstrap),
    Kind("kubeconfig_service_account_token", "cloud", _kubeconfig),
    Kind("openssh_private_key", "cloud", _openssh_key),
    Kind("rsa_private_key_pem", "cloud", _rsa_pem),
    Kind("ec_private_key_pem", "cloud", _ec_pem),
    Kind("openstack_clouds_yaml_password", "cloud", _openstack),
    Kind("github_classic_pat", "ci", _github_classic),
    Kind("github_oauth_token", "ci", _github_oauth),
    Kind("github_app_installation_token", "ci", _github_app),
    Kind("github_fine_grained_pat", "ci", _github_fine),
    Kind("gitlab_pat", "ci", _gitlab_pat),
    Kind("gitlab_runner_token", "ci", _gitlab_runner),
    Kind("gitlab_trigger_token", "ci", _gitlab_trigger),
    Kind("bitbucket_app_password", "ci", _bitbucket),
    Kind("circleci_pat", "ci", _circleci),
    Kind("buildkite_token", "ci", _buildkite),
    Kind("jenkins_api_token", "ci", _jenkins),
    Kind("azure_devops_pat", "ci", _azure_devops),
    Kind("terraform_cloud_token", "ci", _terraform),
    Kind("vault_service_token", "ci", _vault),
    Kind("pulumi_token", "ci", _pulumi),
    Kind("doppler_service_token", "ci", _doppler),
    Kind("slack_bot_token", "chat", _slack_bot),
    Kind("slack_user_token", "chat", _slack_user),
    Kind("slack_webhook_url", "chat", _slack_webhook),
    Kind("slack_app_token", "chat", _slack_app),
    Kind("discord_bot_token", "chat", _discord_bot),
    Kind("discord_webhook_url", "chat", _discord_webhook),
    Kind("telegram_bot_token", "chat", _telegram),
    Kind("teams_webhook_url", "chat", _teams_webhook),
    Kind("twilio_auth_token", "chat", _twilio_auth),
    Kind("twilio_api_secret", "chat", _twilio_api_key),
    Kind("mattermost_token", "chat", _mattermost),
    Kind("line_channel_token", "chat", _line),
    Kind("matrix_access_token", "chat", _matrix),
    Kind("stripe_secret_key", "payment", _stripe_secret),
    Kind("stripe_restricted_key", "payment", _stripe_restricted),
    Kind("stripe_webhook_secret", "payment", _stripe_webhook),
    Kind("braintree_access_token", "payment", _braintree),
    Kind("square_access_token", "payment", _square),
    Kind("adyen_api_key", "payment", _adyen),
    Kind("razorpay_key_secret", "payment", _razorpay),
    Kind("paystack_secret_key", "payment", _paystack),
    Kind("flutterwave_secret_key", "payment", _flutterwave),
    Kind("mercadopago_access_token", "payment", _mercadopago),
    Kind("mollie_api_key", "payment", _mollie),
    Kind("xendit_secret_key", "payment", _xendit),
    Kind("plaid_secret", "payment", _plaid),
    Kind("postgres_url_password", "database", _postgres_url),
    Kind("mysql_url_password", "database", _mysql_url),
    Kind("mongodb_srv_password", "database", _mongodb),
    Kind("redis_url_password", "database", _redis),
    Kind("pgpass_line", "database", _pgpass),
    Kind("sqlserver_connection_string", "database", _sqlserver),
    Kind("jdbc_url_password", "database", _jdbc),
    Kind("planetscale_password", "database", _planetscale),
    Kind("supabase_service_role_jwt", "database", _supabase),
    Kind("astra_db_token", "database", _astra),
    Kind("elastic_api_key", "database", _elastic),
    Kind("npm_token", "registry", _npm),
    Kind("pypi_token", "registry", _pypi),
    Kind("pypirc_password", "registry", _pypirc),
    Kind("dockerhub_pat", "registry", _docker_pat),
    Kind("docker_config_auth", "registry", _docker_config),
    Kind("nuget_api_key", "registry", _nuget),
    Kind("rubygems_api_key", "registry", _rubygems),
    Kind("crates_io_token", "registry", _crates),
    Kind("artifactory_api_key", "registry", _artifactory),
    Kind("netrc_password", "registry", _netrc),
    Kind("maven_settings_password", "registry", _maven),
    Kind("harbor_robot_secret", "registry", _harbor),
    Kind("datadog_api_key", "observability", _datadog_api),
    Kind("datadog_app_key", "observability", _datadog_app),
    Kind("newrelic_license_key", "observability", _newrelic_license),
    Kind("newrelic_user_key", "observability", _newrelic_user),
    Kind("sentry_user_token", "observability", _sentry),
    Kind("grafana_service_account_token", "observability", _grafana_sa),
    Kind("grafana_cloud_token", "observability", _grafana_cloud),
    Kind("splunk_hec_token", "observability", _splunk_hec),
    Kind("pagerduty_api_key", "observability", _pagerduty),
    Kind("dynatrace_token", "observability", _dynatrace),
    Kind("rollbar_token", "observability", _rollbar),
    Kind("honeycomb_api_key", "observability", _honeycomb),
    Kind("openai_project_key", "ai", _openai_project),
    Kind("openai_legacy_key", "ai", _openai_legacy),
    Kind("anthropic_api_key", "ai", _anthropic),
    Kind("huggingface_token", "ai", _huggingface),
    Kind("replicate_token", "ai", _replicate),
    Kind("groq_api_key", "ai", _groq),
    Kind("perplexity_api_key", "ai", _perplexity),
    Kind("xai_api_key", "ai", _xai),
    Kind("openrouter_api_key", "ai", _openrouter),
    Kind("mistral_api_key", "ai", _mistral),
    Kind("cohere_api_key", "ai", _cohere),
    Kind("langsmith_api_key", "ai", _langsmith),
    Kind("pinecone_api_key", "ai", _pinecone),
    Kind("wandb_api_key", "ai", _wandb),
    Kind("azure_openai_key", "ai", _azure_openai),
    Kind("sendgrid_api_key", "saas", _sendgrid),
    Kind("mailgun_api_key", "saas", _mailgun),
    Kind("shopify_admin_token", "saas", _shopify),
    Kind("atlassian_api_token", "saas", _atlassian),
    Kind("notion_integration_secret", "saas", _notion),
    Kind("airtable_pat", "saas", _airtable),
    Kind("linear_api_key", "saas", _linear),
    Kind("figma_pat", "saas", _figma),
    Kind("hubspot_private_app_token", "saas", _hubspot),
    Kind("okta_api_token", "saas", _okta),
    Kind("postmark_server_token", "saas", _postmark),
    Kind("mailchimp_api_key", "saas", _mailchimp),
    Kind("twitter_bearer_token", "saas", _twitter),
    Kind("dropbox_access_token", "saas", _dropbox),
    Kind("onepassword_service_account_token", "saas", _onepassword),
    Kind("contentful_pat", "saas", _contentful),
    Kind("algolia_admin_key", "saas", _algolia),
    Kind("mapbox_secret_token", "saas", _mapbox),
    Kind("basic_auth_header", "saas", _basic_auth),
    Kind("hex_under_secret_name", "saas", _generic_hex_name),
    Kind("random_under_key_name", "saas", _generic_api_key),
    Kind("password_under_password_name", "saas", _generic_password),
)


# ---------------------------------------------------------------------------------------------------------
# Where agents paste credentials. A context takes the variable name, the value and a Random of its own (so
# the same choices render the undisguised text the shape test checks) and returns the memory text.
# ---------------------------------------------------------------------------------------------------------

Context = Callable[[str, str, random.Random], str]


def _camel(name: str) -> str:
    parts = name.lower().replace(".", "_").replace("-", "_").split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:] if p)


def _service(r: random.Random) -> str:
    return r.choice(
        [
            "billing",
            "staging deploy",
            "the nightly export",
            "search indexer",
            "mobile backend",
            "the Grafana alerts",
            "customer import",
            "payments sandbox",
            "release pipeline",
        ]
    )


INLINE_CONTEXTS: tuple[Context, ...] = (
    lambda n, v, r: f"export {n}={v}",
    lambda n, v, r: f"Added to .env for the {_service(r)}:\n{n}={v}\nLOG_LEVEL=info\n",
    lambda n, v, r: (
        f'[{r.choice(["default", "production", "secrets"])}]\n{n.lower()} = "{v}"\ntimeout = 30\n'
    ),
    lambda n, v, r: f'env:\n  - name: {n}\n    value: {v}\n  - name: PORT\n    value: "8080"\n',
    lambda n, v, r: json.dumps({"service": "checkout", n: v, "region": "eu-west-1"}, ensure_ascii=False),
    lambda n, v, r: f'client = Client(api_key="{v}")  # {n} copied from the vendor dashboard\n',
    lambda n, v, r: f"const {_camel(n)} = '{v}';\nmodule.exports = {{ {_camel(n)} }};\n",
    lambda n, v, r: f'func init() {{\n\tos.Setenv("{n}", "{v}")\n}}\n',
    lambda n, v, r: (
        f'curl -sS -H "Authorization: Bearer {v}" https://api.internal.example/v2/accounts | jq .'
    ),
    lambda n, v, r: f"docker run --rm -e {n}={v} -p 8080:8080 ghcr.io/acme/worker:1.9.3",
    lambda n, v, r: (
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\ntype: Opaque\nstringData:\n"
        f'  {n}: "{v}"\n'
    ),
    lambda n, v, r: (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {n}: {v}\n    steps:\n      - run: make deploy\n"
    ),
    lambda n, v, r: f"Hey, here's the {n} you asked for: {v} (rotate it after the demo please)",
    lambda n, v, r: f"Hier ist der Schlüssel für {_service(r)}: {v} – bitte nach dem Test wieder löschen.",
    lambda n, v, r: f"Voici la clé pour la prod : {v}. Ne la partage pas sur le canal public.",
    lambda n, v, r: f"Te paso el token ({n}): {v} — caduca el viernes, avísame si falla.",
    lambda n, v, r: f"本番用のトークンはこれです: {v} 共有しないでください。",
    lambda n, v, r: f"Segue a chave de acesso do {_service(r)}: {v} — guarde no cofre depois.",
    lambda n, v, r: f"测试环境的密钥：{v}，用完记得删掉。",
    lambda n, v, r: f"Вот токен для деплоя: {v} — не коммить его в репозиторий.",
    lambda n, v, r: f"La chiave API è {v}, valida fino a fine mese.",
    lambda n, v, r: f"배포용 토큰: {v} 다음 주에 교체 예정입니다.",
    lambda n, v, r: f"Hier is de sleutel voor de acceptatieomgeving: {v}",
    lambda n, v, r: f"Klucz do API: {v} — nie wrzucaj go do gita.",
    lambda n, v, r: f"Staging için anahtar: {v} (haftaya yenilenecek)",
    lambda n, v, r: (
        f"2026-11-{r.randint(10, 30)}T08:{r.randint(10, 59)}:22Z DEBUG http.client send header "
        f"'Authorization: Bearer {v}'"
    ),
    lambda n, v, r: (
        f'Traceback (most recent call last):\n  File "app/billing.py", line {r.randint(20, 300)}, in charge\n'
        f'    client = PaymentClient(key="{v}")\nAuthenticationError: 401 Unauthorized\n'
    ),
    lambda n, v, r: f"| service | variable | value |\n|---|---|---|\n| {_service(r)} | {n} | `{v}` |\n",
    lambda n, v, r: f'<appSettings>\n  <add key="{n}" value="{v}" />\n</appSettings>',
    lambda n, v, r: (
        f'variable "{n.lower()}" {{\n  type      = string\n  default   = "{v}"\n  sensitive = true\n}}\n'
    ),
    lambda n, v, r: f"Remember: the {n} for the {_service(r)} is {v}; the user pasted it in chat on Monday.",
    lambda n, v, r: f"User runs the release with `{n}={v} ./scripts/release.sh --dry-run` first.",
    lambda n, v, r: f"$ {n}={v} npm run publish\n> acme-ui@3.2.0 publish\n",
    lambda n, v, r: f'$env:{n} = "{v}"\n.\\deploy.ps1 -Environment Staging',
    lambda n, v, r: f'std::env::set_var("{n}", "{v}");',
    lambda n, v, r: f"{n.lower().replace('_', '.')}={v}\nserver.port=8443\n",
    lambda n, v, r: f'FROM python:3.12-slim\nENV {n}={v}\nCMD ["python", "-m", "worker"]\n',
    lambda n, v, r: f'variables:\n  {n}: "{v}"\nstages: [build, deploy]\n',
    lambda n, v, r: f"%env {n}={v}\nimport pandas as pd",
    lambda n, v, r: f"INSERT INTO integration_settings (name, value) VALUES ('{n.lower()}', '{v}');",
    lambda n, v, r: (
        f"Subject: new credentials for {_service(r)}\n\nHi team,\nthe new key is {v}\nCheers, Ana"
    ),
    lambda n, v, r: f"git commit -m 'temp: hardcode {n.lower()} {v} until vault is back'",
    lambda n, v, r: f"- decision: keep {n} in the CI settings, not the repo (current value {v})",
    lambda n, v, r: f'settings.py line 88: {n} = os.getenv("{n}", "{v}")',
    lambda n, v, r: f"kubectl create secret generic app --from-literal={n.lower()}={v} -n prod",
)

URL_CONTEXTS: tuple[Context, ...] = (
    lambda n, v, r: f"{n}={v}",
    lambda n, v, r: f'database:\n  url: "{v}"\n  pool: 10\n',
    lambda n, v, r: f'engine = create_engine("{v}", pool_pre_ping=True)',
    lambda n, v, r: f"ERROR worker: could not connect to {v}: connection timed out (attempt 3/5)",
    lambda n, v, r: f"services:\n  api:\n    image: acme/api:2.1\n    environment:\n      {n}: {v}\n",
    lambda n, v, r: f"Connection string for the reporting replica (ask before using): {v}",
    lambda n, v, r: f"Die Verbindungszeichenfolge lautet {v} – nur lesend verwenden.",
    lambda n, v, r: f"接続文字列: {v}（読み取り専用）",
    lambda n, v, r: f'"ConnectionStrings": {{ "Default": "{v}" }}',
    lambda n, v, r: f"Notes from the incident: the app was pointed at {v} instead of the replica.",
)

BLOCK_CONTEXTS: tuple[Context, ...] = (
    lambda n, v, r: f"Saved {n} on the build box:\n```\n{v}\n```\n",
    lambda n, v, r: "data:\n  " + n + ": |\n" + "\n".join("    " + line for line in v.split("\n")) + "\n",
    lambda n, v, r: f"Voilà le fichier {n} du serveur :\n{v}\nMerci de le supprimer après usage.",
    lambda n, v, r: f"Memory: the {n} used by the {_service(r)} contains\n{v}\n",
    lambda n, v, r: f'resource "local_file" "cfg" {{\n  filename = "{n}"\n  content  = <<EOF\n{v}\nEOF\n}}\n',
    lambda n, v, r: f"cat > ~/{n} <<'EOF'\n{v}\nEOF\nchmod 600 ~/{n}",
    lambda n, v, r: f"{n} の内容はこちら:\n{v}\n",
    lambda n, v, r: f"2026-12-01 09:14:03,112 DEBUG config loaded from {n}:\n{v}",
    lambda n, v, r: f"<details><summary>{n}</summary>\n\n```\n{v}\n```\n</details>",
    lambda n, v, r: f'FIXTURE = """\n{v}\n"""  # {n}, copied from prod for the repro',
    lambda n, v, r: f"Aquí está el {n} que me pediste:\n{v}",
    lambda n, v, r: (
        f"- step: write {n}\n  script:\n    - |\n" + "\n".join("      " + x for x in v.split("\n"))
    ),
)


# ---------------------------------------------------------------------------------------------------------
# Disguises.
# ---------------------------------------------------------------------------------------------------------

DISGUISES = (
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split",
    "placeholder_word",
)
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
BIDI = ("\u202e", "\u202d", "\u202a", "\u202b", "\u2066", "\u2067", "\u2068", "\u200e", "\u200f", "\u061c")


def _insert(token: str, at: list[int], pieces: list[str]) -> str:
    for position, piece in sorted(zip(at, pieces, strict=True), reverse=True):
        token = token[:position] + piece + token[position:]
    return token


def _positions(r: random.Random, lo: int, hi: int, count: int) -> list[int]:
    return sorted(r.sample(range(lo + 1, hi), min(count, hi - lo - 1)))


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _disguise(
    r: random.Random, cred: Credential, secret_at: int, secret_len: int, how: str
) -> tuple[str, str]:
    """The disguised fragment and the name it is filed under."""
    token, lo, hi = cred.token, secret_at, secret_at + secret_len
    if how == "zero_width":
        at = _positions(r, lo, hi, r.randint(1, 3))
        return cred.head + _insert(token, at, [r.choice(ZERO_WIDTH) for _ in at]) + cred.tail, cred.name
    if how == "soft_hyphen":
        at = _positions(r, lo, hi, r.randint(1, 2))
        return cred.head + _insert(token, at, ["\u00ad"] * len(at)) + cred.tail, cred.name
    if how == "bidi":
        at = _positions(r, lo, hi, 2)
        pair = r.choice([["\u202e", "\u202c"], ["\u2066", "\u2069"], [r.choice(BIDI), r.choice(BIDI)]])
        return cred.head + _insert(token, at, pair) + cred.tail, cred.name
    if how == "fullwidth":
        if r.random() < 0.5:
            return cred.head + _fullwidth(token) + cred.tail, cred.name
        changed = "".join(
            _fullwidth(c) if lo <= i < hi and r.random() < 0.4 else c for i, c in enumerate(token)
        )
        if changed == token:
            changed = token[:lo] + _fullwidth(token[lo]) + token[lo + 1 :]
        return cred.head + changed + cred.tail, cred.name
    if how == "percent":
        if r.random() < 0.5:
            every = "".join(f"%{b:02X}" for b in token.encode())
            return cred.head + every + cred.tail, cred.name
        query = quote(f"{cred.name.lower()}={cred.raw}", safe="")
        return (
            f"https://app.example.com/oauth/callback?state={_chars(r, HEX, 8)}&next={query}",
            "CALLBACK_URL",
        )
    if how == "base64":
        if r.random() < 0.5:
            return base64.b64encode(cred.raw.encode()).decode(), cred.name + "_B64"
        line = f"{cred.name}={cred.raw}"
        return base64.b64encode(line.encode()).decode(), r.choice(
            ["ENV_FILE_B64", "config_blob", "SEALED_ENV"]
        )
    if how == "split":
        at = (lo + hi) // 2
        sep = r.choice(["\n", "\\\n    ", "\n  ", "\n\t", " \\\n"])
        return cred.head + token[:at] + sep + token[at:] + cred.tail, cred.name
    return cred.raw, cred.name


def _shows_placeholder(token: str) -> bool:
    lowered = token.lower()
    return any(w.lower() in lowered for w in PLACEHOLDER_WORDS + HEX_PLACEHOLDERS)


def _secret_span(r: random.Random, cred: Credential) -> tuple[int, int]:
    """Where the secret piece sits in the token: a middle run of the random region, at most 16 long."""
    start, end = cred.start, cred.end or len(cred.token)
    length = min(16, end - start)
    middle = (start + end - length) // 2
    return middle, length


def _credentials(r: random.Random) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for kind in KINDS:
        for index in range(SAMPLES_PER_KIND):
            how = "plain" if index == 0 or r.random() < 0.35 else r.choice(DISGUISES)
            word = r.choice(PLACEHOLDER_WORDS) if how == "placeholder_word" else ""
            cred = kind.make(r, word)
            if word and not _shows_placeholder(cred.token):
                # The token is an encoding (base64 of user:password, of a JSON): a word planted inside the
                # random part does not show, so this sample takes another disguise.
                how = r.choice(DISGUISES[:-1])
            at, length = _secret_span(r, cred)
            secret = cred.token[at : at + length]
            fragment, name = _disguise(r, cred, at, length, how)
            block = cred.shape == "block" or "\n" in cred.raw
            pool = (
                BLOCK_CONTEXTS
                if block
                else URL_CONTEXTS + INLINE_CONTEXTS
                if cred.shape == "url"
                else INLINE_CONTEXTS
            )
            context = r.choice(pool)
            choices = r.random()
            if how in ("base64", "percent") and "\n" in fragment and not block:
                fragment = fragment.replace("\n", " ")
            text = context(name, fragment, random.Random(choices))
            raw_text = context(cred.name, cred.raw, random.Random(choices))
            out.append(
                (Sample(kind=kind.name, group=kind.group, text=text, disguise=how, secret=secret), raw_text)
            )
    return out


# ---------------------------------------------------------------------------------------------------------
# Look-alikes: random-looking or secret-named text that is not a credential.
# ---------------------------------------------------------------------------------------------------------

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
NIX32 = "0123456789abcdfghijklmnpqrsvwxyz"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _pick(r: random.Random, *texts: str) -> str:
    return r.choice(texts)


def _git_sha(r):
    sha = _chars(r, HEX, 40)
    return _pick(
        r,
        f"commit {sha}\nAuthor: Mei Lin <mei@acme.dev>\nDate:   Tue Nov 24 10:12:03 2026 +0100\n\n    fix flaky retry",
        f"The regression came in with {sha[:12]}; reverting it fixed the nightly build.",
        f"git cherry-pick {sha}",
        f"Deployed v2.3.1+g{sha[:7]} to staging at 14:05.",
        f"Pinned the action to actions/checkout@{sha} per our supply-chain policy.",
    )


def _sha256(r):
    d = _chars(r, HEX, 64)
    return _pick(
        r,
        f"{d}  kenfold-{r.randint(1, 3)}.{r.randint(0, 9)}.{r.randint(0, 20)}.tar.gz",
        f"sha256 of the backup file: {d} (matches the upload)",
        f"echo '{d}  go.tar.gz' | sha256sum -c -",
        f'Cargo.lock: checksum = "{d}"',
        f"pip install --require-hashes foo==1.2 --hash=sha256:{d}",
    )


def _sha512(r):
    d = _chars(r, HEX, 128)
    return _pick(
        r,
        f"SHA512 (release.zip) = {d}",
        f"sha512sum build/app.bin\n{d}  build/app.bin",
        f"Die Prüfsumme (SHA-512) lautet {d}.",
    )


def _release_checksums(r):
    lines = "\n".join(
        f"{_chars(r, HEX, 64)}  tool_{os}_{arch}.tar.gz"
        for os in ("linux", "darwin")
        for arch in ("amd64", "arm64")
    )
    return f"## Checksums for v{r.randint(0, 4)}.{r.randint(0, 30)}.{r.randint(0, 9)}\n```\n{lines}\n```"


def _uuid_look(r):
    u = _uuid(r)
    return _pick(
        r,
        f"request {u} failed with 502 from the upstream",
        f"Tenant id: {u} (the EU one)",
        f'Project("{{{u.upper()}}}") = "Api", "Api\\Api.csproj"',
        f"SELECT * FROM orders WHERE id = '{u}';",
        f"x-amzn-RequestId: {u}",
        f"La commande {u} a été remboursée hier.",
    )


def _ulid(r):
    v = r.choice("01234567") + _chars(r, CROCKFORD, 25)
    return _pick(
        r,
        f"Created event {v} in the outbox table.",
        f"job_id={v} status=done duration=412ms",
        f'{{"id": "{v}", "type": "invoice.created"}}',
    )


def _ksuid(r):
    v = _chars(r, ALNUM, 27)
    return _pick(
        r,
        f"segment message id {v}",
        f"Trace: ksuid={v} stage=enrich",
        f"Upload batch {v} processed 1,204 rows.",
    )


def _stripe_ids(r):
    prefix = r.choice(
        ["cus_", "pi_", "ch_", "pm_", "price_", "prod_", "evt_", "in_", "sub_", "re_", "acct_1"]
    )
    v = prefix + _chars(r, ALNUM, r.choice([14, 16, 24]))
    return _pick(
        r,
        f"Customer {v} disputed the charge; refund approved.",
        f'stripe.PaymentIntent.retrieve("{v}")',
        f"Webhook received for {v} (status succeeded)",
        f"El cliente {v} pidió la factura de noviembre.",
    )


def _slack_ids(r):
    ch = "C0" + _chars(r, UPPER_ALNUM, 9)
    user = "U0" + _chars(r, UPPER_ALNUM, 9)
    ts = f"{r.randint(1_690_000_000, 1_760_000_000)}.{_chars(r, string.digits, 6)}"
    return _pick(
        r,
        f"Post the release notes to channel {ch} and mention <@{user}>.",
        f"chat.postMessage channel={ch} thread_ts={ts}",
        f"Slack user id for Priya: {user}",
    )


def _aws_arn(r):
    account = _chars(r, string.digits, 12)
    return _pick(
        r,
        f"arn:aws:iam::{account}:role/github-deploy",
        f"Account ID: {account} (prod)",
        f"arn:aws:s3:::acme-logs-{account}/alb/",
        f"arn:aws:lambda:eu-west-1:{account}:function:resize-images",
        f"aws sts assume-role --role-arn arn:aws:iam::{account}:role/ReadOnly --role-session-name dbg",
    )


def _trace_ids(r):
    return _pick(
        r,
        f"traceparent: 00-{_chars(r, HEX, 32)}-{_chars(r, HEX, 16)}-01",
        f"cf-ray: {_chars(r, HEX, 16)}-FRA",
        f"X-Request-Id: {_chars(r, HEX, 32)}",
        f"span_id={_chars(r, HEX, 16)} trace_id={_chars(r, HEX, 32)} duration_ms=87",
        f"Datadog trace {r.randint(10**18, 10**19)} shows the slow query.",
    )


def _base64_text(r):
    sentence = r.choice(
        [
            "Meeting moved to Thursday at 10am, room 4.12.",
            "The quick brown fox jumps over the lazy dog.",
            "Please review the migration plan before Friday.",
            "Hello from the staging environment!",
            "Ordre du jour : budget, recrutement, questions diverses.",
        ]
    )
    enc = base64.b64encode(sentence.encode()).decode()
    return _pick(
        r,
        f"The payload field is base64: {enc}",
        f'{{"message": "{enc}", "encoding": "base64"}}',
        f"echo {enc} | base64 -d",
    )


def _base64_image(r):
    png = base64.b64encode(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(r.getrandbits(8) for _ in range(90))
    ).decode()
    return _pick(
        r,
        f'<img alt="logo" src="data:image/png;base64,{png}">',
        f"background: url(data:image/png;base64,{png});",
        f"Inline favicon for the status page: data:image/png;base64,{png}",
    )


def _npm_integrity(r):
    digest = base64.b64encode(bytes(r.getrandbits(8) for _ in range(64))).decode()
    name = r.choice(["lodash", "react-dom", "@babel/core", "esbuild", "zod"])
    return _pick(
        r,
        f'"node_modules/{name}": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{digest}"\n}}',
        f'{name}@^1.0.0:\n  resolved "https://registry.yarnpkg.com/{name}/-/{name}-1.0.0.tgz"\n  integrity sha512-{digest}',
        f'<script src="https://cdn.example.com/{name}.min.js" integrity="sha384-{digest[:64]}" crossorigin="anonymous"></script>',
    )


def _documented_placeholders(r):
    # Values exactly as the providers' docs print them.
    value = r.choice(
        [
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
            'stripe.api_key = "sk_test_<your key>"',
            "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "SLACK_BOT_TOKEN=xoxb-your-bot-token",
            "OPENAI_API_KEY=<your-openai-api-key>",
            "api_key: YOUR_API_KEY",
            "DATABASE_URL=postgresql://user:password@localhost:5432/mydb",
            "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/?retryWrites=true",
            "Authorization: Bearer <token>",
            "ANTHROPIC_API_KEY=your-api-key-here",
            "password: changeme",
        ]
    )
    return _pick(
        r,
        f"From the quickstart:\n```\n{value}\n```",
        f"The README example uses {value} — replace it with yours.",
        f"Doc snippet (placeholder, not a real key): {value}",
        f"Beispiel aus der Doku: {value}",
    )


def _env_references(r):
    return r.choice(
        [
            "API_KEY=${API_KEY}",
            "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
            'token = os.environ["TOKEN"]',
            "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
            "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}",
            "DB_PASSWORD=$(cat /run/secrets/db_password)",
            'const key = process.env.STRIPE_SECRET_KEY ?? "";',
            "secret_key = var.secret_key",
            "password = \"{{ lookup('env', 'DB_PASSWORD') }}\"",
            "OPENAI_API_KEY=op://Engineering/OpenAI/credential",
            "client_secret: vault:secret/data/oauth#client_secret",
            "GITHUB_TOKEN: ${{ github.token }}",
            "api_token = getpass.getpass('API token: ')",
            "spring.datasource.password=${DB_PASSWORD:}",
            "AWS_SECRET_ACCESS_KEY: arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/aws-AbCdEf",
        ]
    )


def _ssh_public(r):
    key = "AAAAC3NzaC1lZDI1NTE5AAAAI" + _chars(r, B64, 43)
    return _pick(
        r,
        f"ssh-ed25519 {key} mei@laptop",
        f"Added to authorized_keys:\nssh-ed25519 {key} deploy@ci",
        f"Public key for the bastion (safe to share): ssh-ed25519 {key}",
        f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{_chars(r, B64, 200)} ops@jump",
    )


def _pem_public(r):
    body = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" + _chars(r, B64, 348) + "IDAQAB"
    kind = r.choice(["PUBLIC KEY", "CERTIFICATE"])
    if kind == "CERTIFICATE":
        body = "MIIDdzCCAl+gAwIBAgIE" + _chars(r, B64, 1100)
    return f"The JWT verification key:\n-----BEGIN {kind}-----\n{_pem_lines(body)}\n-----END {kind}-----"


def _css_hashes(r):
    return _pick(
        r,
        f'<div class="css-{_chars(r, LOWER_ALNUM, 6)} sc-{_chars(r, ALNUM, 6)}">',
        f"Content-Security-Policy: script-src 'self' 'sha256-{base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()}'",
        f'<link rel="stylesheet" href="/static/css/main.{_chars(r, HEX, 8)}.css">',
        f"._{_chars(r, URLSAFE, 5)}_{_chars(r, LOWER_ALNUM, 5)} {{ display: flex; }}",
    )


def _youtube(r):
    v = _chars(r, URLSAFE, 11)
    return _pick(
        r,
        f"Watch the talk: https://www.youtube.com/watch?v={v}",
        f"Demo video: https://youtu.be/{v}?t=42",
        f"El tutorial está en https://www.youtube.com/embed/{v}",
    )


def _webpack(r):
    return _pick(
        r,
        f"dist/main.{_chars(r, HEX, 20)}.js  412 KiB  [emitted] [immutable]",
        f"chunk-vendors.{_chars(r, HEX, 8)}.js failed to load (ChunkLoadError)",
        f"assets/index-{_chars(r, URLSAFE, 8)}.js   148.21 kB │ gzip: 47.90 kB",
    )


def _docker_digest(r):
    d = _chars(r, HEX, 64)
    return _pick(
        r,
        f"image: ghcr.io/acme/api@sha256:{d}",
        f"FROM python:3.12-slim@sha256:{d}",
        f"Digest: sha256:{d}\nStatus: Downloaded newer image for nginx:1.27",
    )


def _nix(r):
    return _pick(
        r,
        f"/nix/store/{_chars(r, NIX32, 32)}-python3-3.12.1/bin/python3",
        f"building '/nix/store/{_chars(r, NIX32, 32)}-hello-2.12.1.drv'...",
        f'hash = "sha256-{base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()}";',
    )


def _ipfs(r):
    return _pick(
        r,
        f"Pinned the dataset at ipfs://Qm{_chars(r, BASE58, 44)}",
        f"CID: bafybei{_chars(r, 'abcdefghijklmnopqrstuvwxyz234567', 52)}",
        f"https://ipfs.io/ipfs/Qm{_chars(r, BASE58, 44)}/readme.md",
    )


def _prose(r):
    return r.choice(
        [
            "Rotate the GitHub token every 90 days and never paste it in chat.",
            "The user wants API keys stored in 1Password, not in .env files.",
            "Reminder: the Stripe secret key lives in the CI secrets store; ask Dana for access.",
            "Die AWS-Zugangsschlüssel werden jede Woche automatisch rotiert.",
            "Les mots de passe de la base sont gérés par Vault, pas par l'équipe.",
            "トークンは90日ごとに更新すること。",
            "Never log the Authorization header; the proxy strips it anyway.",
            "Passwords must be at least 14 characters with no reuse of the last 5.",
            "If a key leaks, revoke it first, then open an incident in #sec-ops.",
            "La clave de Twilio se regenera desde la consola, sección API keys.",
            "Use short-lived OIDC tokens for deploys instead of long-lived cloud keys.",
            "Токены Slack хранятся в секретах Kubernetes, а не в репозитории.",
        ]
    )


def _lfs_pointer(r):
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{_chars(r, HEX, 64)}\n"
        f"size {r.randint(1000, 90_000_000)}"
    )


def _go_sum(r):
    h = base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()
    mod = r.choice(["github.com/spf13/cobra", "golang.org/x/sync", "github.com/jackc/pgx/v5"])
    return _pick(r, f"{mod} v1.{r.randint(0, 9)}.{r.randint(0, 9)} h1:{h}", f"{mod} v0.3.0/go.mod h1:{h}")


def _object_ids(r):
    return _pick(
        r,
        f'{{ "_id": ObjectId("{_chars(r, HEX, 24)}"), "status": "shipped" }}',
        f"Firestore doc users/{_chars(r, ALNUM, 20)} was updated.",
        f"Jira issue key OPS-{r.randint(100, 9999)}, Confluence page {r.randint(10**8, 10**9)}",
        f"S3 key uploads/2026/11/{_uuid(r)}.jpg",
    )


def _public_client_ids(r):
    return _pick(
        r,
        f"OAuth client id (public): {r.randint(10**11, 10**12)}-{_chars(r, LOWER_ALNUM, 32)}.apps.googleusercontent.com",
        f"GitHub App client id Iv1.{_chars(r, HEX, 16)}",
        f"Auth0 domain acme.eu.auth0.com, client_id {_chars(r, ALNUM, 32)} (SPA, public)",
        "Stripe publishable key goes in the frontend only as NEXT_PUBLIC_STRIPE_KEY (see dashboard).",
    )


def _urls_without_password(r):
    return _pick(
        r,
        "git clone git@github.com:acme/infra.git",
        "ssh://git@gitlab.example.com:2222/team/app.git",
        f"postgresql://{_user(r)}@{_host(r)}:5432/orders?sslmode=require",
        "DATABASE_URL=postgresql://app:${DB_PASSWORD}@db:5432/app",
        "redis://localhost:6379/0",
        f"https://{_user(r)}@bitbucket.org/acme/web.git",
    )


def _hex_colors_and_numbers(r):
    return _pick(
        r,
        f"Brand palette: #{_chars(r, HEX, 6)}, #{_chars(r, HEX, 6)}, #{_chars(r, HEX, 6)}",
        f"Invoice INV-{r.randint(10**9, 10**10)} total €{r.randint(10, 9999)}.{r.randint(10, 99)}",
        f"IBAN in the docs example: DE89 3704 0044 0532 0130 00; order #{_chars(r, UPPER_ALNUM, 10)}",
        f"Build number {r.randint(10**5, 10**6)}, artifact id {_chars(r, HEX, 12)}",
    )


LOOKALIKES: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("git_sha", _git_sha),
    ("sha256_digest", _sha256),
    ("sha512_digest", _sha512),
    ("release_checksums", _release_checksums),
    ("uuid", _uuid_look),
    ("ulid", _ulid),
    ("ksuid", _ksuid),
    ("stripe_object_id", _stripe_ids),
    ("slack_ids", _slack_ids),
    ("aws_arn_and_account", _aws_arn),
    ("request_and_trace_ids", _trace_ids),
    ("base64_text", _base64_text),
    ("base64_image", _base64_image),
    ("lockfile_integrity", _npm_integrity),
    ("documented_placeholder", _documented_placeholders),
    ("secret_name_reference", _env_references),
    ("ssh_public_key", _ssh_public),
    ("pem_public_key_or_certificate", _pem_public),
    ("css_and_csp_hashes", _css_hashes),
    ("youtube_id", _youtube),
    ("webpack_chunk_hash", _webpack),
    ("docker_image_digest", _docker_digest),
    ("nix_store_path", _nix),
    ("ipfs_cid", _ipfs),
    ("prose_about_secrets", _prose),
    ("git_lfs_pointer", _lfs_pointer),
    ("go_sum_hash", _go_sum),
    ("database_object_ids", _object_ids),
    ("public_client_ids", _public_client_ids),
    ("url_without_password", _urls_without_password),
    ("numbers_and_colors", _hex_colors_and_numbers),
)


def _lookalikes(r: random.Random) -> list[Sample]:
    return [
        Sample(kind=name, group="lookalike", text=make(r))
        for name, make in LOOKALIKES
        for _ in range(LOOKALIKES_PER_KIND)
    ]


def third_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with the text it had before disguising (the same text for plain samples and look-alikes),
    so the shape test can check each secret was really in it."""
    r = random.Random(SEED)
    pairs = _credentials(r)
    return pairs + [(sample, sample.text) for sample in _lookalikes(r)]


def third_part() -> list[Sample]:
    return [sample for sample, _ in third_part_with_raw()]
