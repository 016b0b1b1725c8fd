"""Part sixteen of the independent secret corpus: credentials generated from the formats the providers
document (prefixes, lengths, alphabets, connection-string and key-file shapes), written without reading the
filter, inside memory texts an agent might store, plus look-alikes that share those texts but are not secret.

Every value is random (fixed seed); none is a real credential.
"""

import base64
import json
import random
import string
from collections.abc import Callable
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 16_061_2026
PER_KIND = 10
LOOKALIKES_PER_KIND = 24

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIG = string.digits
ALNUM = UPPER + LOWER + DIG
UPPER_ALNUM = UPPER + DIG
LOWER_ALNUM = LOWER + DIG
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


class _Gen:
    """Random pieces from one seeded generator, so the whole corpus follows from the seed."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        h = self.s(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def b64bytes(self, n: int, url: bool = False) -> str:
        raw = bytes(self.r.randrange(256) for _ in range(n))
        enc = base64.urlsafe_b64encode(raw) if url else base64.b64encode(raw)
        return enc.decode()

    def jwt(self, payload: dict) -> tuple[str, str]:
        head = _b64url_json({"alg": "HS256", "typ": "JWT"})
        sig = self.b64bytes(32, url=True).rstrip("=")
        return f"{head}.{_b64url_json(payload)}.{sig}", sig

    def pem(self, label: str, nbytes: int = 1190) -> tuple[str, str]:
        body = self.b64bytes(nbytes)
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", lines[
            len(lines) // 2
        ]


def _b64url_json(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


# A kind's generator returns (value as pasted, the random core the provider treats as secret).
Make = Callable[[_Gen], tuple[str, str]]


def _tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> Make:
    def make(g: _Gen) -> tuple[str, str]:
        core = g.s(alphabet, n)
        return f"{prefix}{core}{suffix}", core

    return make


def _whole(make: Make) -> Make:
    # The whole value is the secret (no public prefix worth excluding).
    def inner(g: _Gen) -> tuple[str, str]:
        v, _ = make(g)
        return v, v

    return inner


def _pw(g: _Gen) -> str:
    # A password people actually choose: words, digits, a symbol, random enough to be unique per sample.
    words = ["Harbor", "maple", "Quokka", "violet", "Tundra", "ember", "Saffron", "orbit", "Juniper", "pixel"]
    return f"{g.r.choice(words)}{g.s(DIG, 3)}{g.r.choice('!#%*')}{g.s(ALNUM, 9)}{g.r.choice(words)}"


def _url(scheme: str, host: str, port: int, db: str, user: str = "app") -> Make:
    def make(g: _Gen) -> tuple[str, str]:
        pw = g.s(ALNUM, 24)
        return f"{scheme}://{user}:{pw}@{host}:{port}/{db}", pw

    return make


def _aws_secret(g: _Gen) -> tuple[str, str]:
    v = g.s(ALNUM + "/+", 40)
    return v, v


def _azure_conn(g: _Gen) -> tuple[str, str]:
    key = g.b64bytes(64)
    acct = "st" + g.s(LOWER_ALNUM, 10)
    return (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        key[:-2],
    )


def _azure_sas(g: _Gen) -> tuple[str, str]:
    sig = g.b64bytes(32)
    return (
        "sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2027-03-01T00:00:00Z&st=2026-12-01T00:00:00Z"
        f"&spr=https&sig={quote(sig, safe='')}",
        # The signature as it appears in the query string (percent-encoded base64).
        quote(sig, safe="")[:-3],
    )


def _gcp_sa(g: _Gen) -> tuple[str, str]:
    pem, line = g.pem("PRIVATE KEY")
    project = "proj-" + g.s(LOWER_ALNUM, 6)
    obj = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": g.s(HEX, 40),
        "private_key": pem + "\n",
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": g.s(DIG, 21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(obj, indent=2), line


def _pem_kind(label: str, nbytes: int = 1190) -> Make:
    def make(g: _Gen) -> tuple[str, str]:
        return g.pem(label, nbytes)

    return make


def _openssh(g: _Gen) -> tuple[str, str]:
    pem, line = g.pem("OPENSSH PRIVATE KEY", 300)
    # An OpenSSH key body starts with the magic "openssh-key-v1\0" (base64 b3BlbnNzaC1rZXktdjEAAAAA).
    return pem.replace("-----\n", "-----\nb3BlbnNzaC1rZXktdjEAAAAA", 1), line


def _jwt_kind(payload: Callable[[_Gen], dict]) -> Make:
    def make(g: _Gen) -> tuple[str, str]:
        return g.jwt(payload(g))

    return make


def _discord_bot(g: _Gen) -> tuple[str, str]:
    uid = base64.b64encode(g.s(DIG, 18).encode()).decode().rstrip("=")
    tail = g.s(B64URL, 38)
    return f"{uid}.{g.s(B64URL, 6)}.{tail}", tail


def _telegram(g: _Gen) -> tuple[str, str]:
    core = g.s(B64URL, 33)
    return f"{g.r.randrange(10**9, 8 * 10**9)}:AA{core}", core


def _slack_webhook(g: _Gen) -> tuple[str, str]:
    core = g.s(ALNUM, 24)
    return f"https://hooks.slack.com/services/T{g.s(UPPER_ALNUM, 10)}/B{g.s(UPPER_ALNUM, 10)}/{core}", core


def _discord_webhook(g: _Gen) -> tuple[str, str]:
    core = g.s(B64URL, 68)
    return f"https://discord.com/api/webhooks/{g.s(DIG, 19)}/{core}", core


def _teams_webhook(g: _Gen) -> tuple[str, str]:
    core = g.s(HEX, 32)
    return (
        f"https://contoso.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{core}/{g.uuid()}",
        core,
    )


def _mercadopago(g: _Gen) -> tuple[str, str]:
    core = g.s(HEX, 32)
    return f"APP_USR-{g.s(DIG, 16)}-{g.s(DIG, 6)}-{core}-{g.s(DIG, 9)}", core


def _github_fine(g: _Gen) -> tuple[str, str]:
    core = g.s(ALNUM, 59)
    return f"github_pat_11{g.s(UPPER_ALNUM, 20)}_{core}", core


def _docker_auth(g: _Gen) -> tuple[str, str]:
    pw = "dckr_pat_" + g.s(B64URL, 27)
    auth = base64.b64encode(f"ci-bot:{pw}".encode()).decode()
    return auth, auth[8:-4]


def _basic_auth(g: _Gen) -> tuple[str, str]:
    token = base64.b64encode(f"deploy:{_pw(g)}".encode()).decode()
    return f"Basic {token}", token[8:-2]


def _elastic_key(g: _Gen) -> tuple[str, str]:
    enc = base64.b64encode(f"{g.s(B64URL, 20)}:{g.s(B64URL, 22)}".encode()).decode()
    return enc, enc[4:-4]


def _pgpass(g: _Gen) -> tuple[str, str]:
    pw = _pw(g)
    return f"db-{g.s(LOWER, 5)}.internal:5432:orders:orders_rw:{pw}", pw


def _netrc(g: _Gen) -> tuple[str, str]:
    pw = g.s(ALNUM, 32)
    return f"machine git.example.net login ci-bot password {pw}", pw


def _mssql(g: _Gen) -> tuple[str, str]:
    pw = _pw(g)
    return (
        f"Server=tcp:sql-{g.s(LOWER, 6)}.database.windows.net,1433;Database=billing;User ID=svc;Password={pw};",
        pw,
    )


def _jdbc_mysql(g: _Gen) -> tuple[str, str]:
    pw = g.s(ALNUM, 20)
    return f"jdbc:mysql://db.{g.s(LOWER, 5)}.local:3306/shop?user=shop&password={pw}&useSSL=true", pw


def _pypi(g: _Gen) -> tuple[str, str]:
    # PyPI API tokens are macaroons: "pypi-" then base64url starting with the encoded "pypi.org" location.
    core = g.s(B64URL, 140)
    return f"pypi-AgEIcHlwaS5vcmcCJD{core}", core


def _pair(prefix_id: str, id_alpha: str, id_len: int, sec_alpha: str, sec_len: int) -> Make:
    # Access-key pairs: the id is printed next to the secret; the secret is the part to hide.
    def make(g: _Gen) -> tuple[str, str]:
        sec = g.s(sec_alpha, sec_len)
        return f"{prefix_id}{g.s(id_alpha, id_len)} / {sec}", sec

    return make


def _azure_client_secret(g: _Gen) -> tuple[str, str]:
    v = g.s(ALNUM, 3) + "8Q~" + g.s(B64URL + "~.", 34)
    return v, v[4:]


def _k8s_bootstrap(g: _Gen) -> tuple[str, str]:
    core = g.s(LOWER_ALNUM, 16)
    return f"{g.s(LOWER_ALNUM, 6)}.{core}", core


def _circleci(g: _Gen) -> tuple[str, str]:
    core = g.s(HEX, 40)
    return f"CCIPAT_{g.s(ALNUM, 22)}_{core}", core


def _placeholder_ok(core: str) -> bool:
    return any(c.isupper() for c in core) and any(c.islower() for c in core) and len(core) >= 20


# (kind, group, variable name, generator). The comment says where the format comes from.
KINDS: list[tuple[str, str, str, Make]] = [
    # --- cloud ---
    # AWS IAM docs: secret access key is 40 chars of base64-like alphabet.
    ("aws_secret_access_key", "cloud", "AWS_SECRET_ACCESS_KEY", _aws_secret),
    # AWS STS docs: session tokens are long base64 blobs (often starting IQoJb3JpZ2luX2Vj).
    ("aws_session_token", "cloud", "AWS_SESSION_TOKEN", _tok("IQoJb3JpZ2luX2VjE", B64, 300)),
    # Google Cloud docs: API keys start with AIza, 39 chars.
    ("gcp_api_key", "cloud", "GOOGLE_API_KEY", _tok("AIza", B64URL, 35)),
    # Google Cloud IAM docs: JSON service-account key file with a PEM private_key.
    ("gcp_service_account_json", "cloud", "GOOGLE_APPLICATION_CREDENTIALS_JSON", _gcp_sa),
    # Azure Storage docs: connection string with AccountKey (base64 of 64 bytes).
    ("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", _azure_conn),
    # Azure Storage docs: SAS token query string, sig= is the HMAC signature.
    ("azure_sas_token", "cloud", "AZURE_SAS", _azure_sas),
    # Entra ID docs: client secrets, current format has "Q~" after 3 chars, 40 chars total.
    ("azure_client_secret", "cloud", "AZURE_CLIENT_SECRET", _azure_client_secret),
    # DigitalOcean docs: personal access tokens dop_v1_ + 64 hex; OAuth tokens doo_v1_.
    ("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", _tok("dop_v1_", HEX, 64)),
    ("digitalocean_oauth", "cloud", "DO_OAUTH_TOKEN", _tok("doo_v1_", HEX, 64)),
    # Alibaba Cloud docs: AccessKey ID LTAI + 20, AccessKey secret 30 alnum.
    (
        "alibaba_access_key_secret",
        "cloud",
        "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
        _pair("LTAI", ALNUM, 20, ALNUM, 30),
    ),
    # Tencent Cloud docs: SecretId AKID + 32, SecretKey 32 alnum.
    ("tencent_secret_key", "cloud", "TENCENTCLOUD_SECRET_KEY", _pair("AKID", ALNUM, 32, ALNUM, 32)),
    # Huawei Cloud docs: AK 20 upper alnum, SK 40 alnum.
    ("huawei_secret_key", "cloud", "HUAWEICLOUD_SDK_SK", _pair("", UPPER_ALNUM, 20, ALNUM, 40)),
    # Oracle OCI docs: API signing key is a PEM RSA private key.
    ("oci_api_private_key", "cloud", "OCI_KEY", _pem_kind("RSA PRIVATE KEY")),
    # IBM Cloud docs: API keys are 44 chars [A-Za-z0-9_-].
    ("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", _whole(_tok("", B64URL, 44))),
    # Linode docs: personal access token 64 hex.
    ("linode_token", "cloud", "LINODE_TOKEN", _whole(_tok("", HEX, 64))),
    # Hetzner Cloud docs: API token 64 alnum.
    ("hetzner_token", "cloud", "HCLOUD_TOKEN", _whole(_tok("", ALNUM, 64))),
    # Scaleway docs: secret key is a UUID.
    ("scaleway_secret_key", "cloud", "SCW_SECRET_KEY", lambda g: (lambda u: (u, u))(g.uuid())),
    # Cloudflare docs: API tokens are 40 chars [A-Za-z0-9_-].
    ("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", _whole(_tok("", B64URL, 40))),
    # Yandex Cloud docs: OAuth tokens start y0_ ; IAM tokens t1.
    ("yandex_oauth_token", "cloud", "YC_TOKEN", _tok("y0_AgAAAAA", B64URL, 48)),
    # Vultr docs: API key 36 upper alnum.
    ("vultr_api_key", "cloud", "VULTR_API_KEY", _whole(_tok("", UPPER_ALNUM, 36))),
    # Kubernetes docs: bootstrap token [a-z0-9]{6}.[a-z0-9]{16}; service-account tokens are JWTs.
    ("k8s_bootstrap_token", "cloud", "token", _k8s_bootstrap),
    (
        "k8s_service_account_jwt",
        "cloud",
        "token",
        _jwt_kind(
            lambda g: {
                "iss": "kubernetes/serviceaccount",
                "kubernetes.io/serviceaccount/namespace": "ci",
                "sub": "system:serviceaccount:ci:deployer",
            }
        ),
    ),
    # HashiCorp Vault docs: service tokens hvs. + ~90 chars; batch tokens hvb.
    ("vault_service_token", "cloud", "VAULT_TOKEN", _tok("hvs.CAESI", B64URL, 86)),
    ("vault_batch_token", "cloud", "VAULT_TOKEN", _tok("hvb.AAAAAQ", B64URL, 120)),
    # Fly.io docs: deploy tokens "FlyV1 fm2_..." (long base64).
    ("flyio_token", "cloud", "FLY_API_TOKEN", _tok("FlyV1 fm2_lJPECAAAAAAAA", B64, 160)),
    # Heroku docs: API key is a UUID (older) under HEROKU_API_KEY.
    ("heroku_api_key", "cloud", "HEROKU_API_KEY", lambda g: (lambda u: (u, u))(g.uuid())),
    # OVHcloud docs: application secret 32 alnum.
    ("ovh_application_secret", "cloud", "OVH_APPLICATION_SECRET", _whole(_tok("", ALNUM, 32))),
    # OpenSSH: private key file format (BEGIN OPENSSH PRIVATE KEY).
    ("ssh_private_key", "cloud", "id_ed25519", _openssh),
    # PKCS#8 PEM private key (TLS certs' keys).
    ("tls_private_key_pkcs8", "cloud", "tls.key", _pem_kind("PRIVATE KEY")),
    ("ec_private_key", "cloud", "ec.key", _pem_kind("EC PRIVATE KEY", 121)),
    # --- ci ---
    # GitHub docs: token prefixes ghp_, gho_, ghu_, ghs_, ghr_ + 36 alnum; fine-grained github_pat_.
    ("github_pat_classic", "ci", "GITHUB_TOKEN", _tok("ghp_", ALNUM, 36)),
    ("github_oauth_token", "ci", "GH_OAUTH", _tok("gho_", ALNUM, 36)),
    ("github_user_to_server", "ci", "GH_USER_TOKEN", _tok("ghu_", ALNUM, 36)),
    ("github_installation_token", "ci", "GH_APP_TOKEN", _tok("ghs_", ALNUM, 36)),
    ("github_refresh_token", "ci", "GH_REFRESH", _tok("ghr_", ALNUM, 76)),
    ("github_fine_grained_pat", "ci", "GITHUB_PAT", _github_fine),
    # GitLab docs "Token overview": glpat-, glrt-, glptt-, gldt-, glft-, glcbt- prefixes.
    ("gitlab_pat", "ci", "GITLAB_TOKEN", _tok("glpat-", B64URL, 20)),
    ("gitlab_runner_token", "ci", "RUNNER_TOKEN", _tok("glrt-", B64URL, 20)),
    ("gitlab_trigger_token", "ci", "TRIGGER_TOKEN", _tok("glptt-", HEX, 40)),
    ("gitlab_deploy_token", "ci", "DEPLOY_TOKEN", _tok("gldt-", B64URL, 20)),
    ("gitlab_feed_token", "ci", "FEED_TOKEN", _tok("glft-", B64URL, 20)),
    # Bitbucket docs: app passwords / API tokens start ATBB.
    ("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", _tok("ATBB", ALNUM, 32)),
    # CircleCI docs: personal API tokens CCIPAT_.
    ("circleci_pat", "ci", "CIRCLECI_TOKEN", _circleci),
    # Buildkite docs: API access tokens bkua_ + 40 hex; agent tokens bkct_? (agent 50 alnum).
    ("buildkite_api_token", "ci", "BUILDKITE_API_TOKEN", _tok("bkua_", HEX, 40)),
    # Jenkins docs: API token 34 hex starting 11.
    ("jenkins_api_token", "ci", "JENKINS_API_TOKEN", _tok("11", HEX, 32)),
    # Azure DevOps docs: PAT 52 chars base32 lower (new ones 84 chars).
    ("azure_devops_pat", "ci", "AZURE_DEVOPS_EXT_PAT", _whole(_tok("", LOWER + "234567", 52))),
    # Terraform Cloud docs: user tokens <14>.atlasv1.<67>.
    ("terraform_cloud_token", "ci", "TF_TOKEN_app_terraform_io", _tok("Xk2fQp9LmZr7Aa.atlasv1.", ALNUM, 67)),
    # Doppler docs: service tokens dp.st., personal dp.pt.
    ("doppler_service_token", "ci", "DOPPLER_TOKEN", _tok("dp.st.prd.", ALNUM, 40)),
    # Pulumi docs: access tokens pul- + 40 hex.
    ("pulumi_access_token", "ci", "PULUMI_ACCESS_TOKEN", _tok("pul-", HEX, 40)),
    # SonarQube docs: user tokens squ_ + 40 hex; project tokens sqp_.
    ("sonarqube_token", "ci", "SONAR_TOKEN", _tok("squ_", HEX, 40)),
    # Netlify docs: personal access tokens nfp_.
    ("netlify_pat", "ci", "NETLIFY_AUTH_TOKEN", _tok("nfp_", ALNUM, 36)),
    # Vercel docs: access token 24 alnum.
    ("vercel_token", "ci", "VERCEL_TOKEN", _whole(_tok("", ALNUM, 24))),
    # Snyk docs: API token is a UUID.
    ("snyk_token", "ci", "SNYK_TOKEN", lambda g: (lambda u: (u, u))(g.uuid())),
    # Codecov docs: upload token UUID.
    ("codecov_token", "ci", "CODECOV_TOKEN", lambda g: (lambda u: (u, u))(g.uuid())),
    # Drone docs: user token 32 alnum.
    ("drone_token", "ci", "DRONE_TOKEN", _whole(_tok("", ALNUM, 32))),
    # --- chat ---
    # Slack docs: bot xoxb-, user xoxp-, app-level xapp-, incoming webhooks hooks.slack.com/services/.
    (
        "slack_bot_token",
        "chat",
        "SLACK_BOT_TOKEN",
        lambda g: (lambda c: (f"xoxb-{g.s(DIG, 12)}-{g.s(DIG, 13)}-{c}", c))(g.s(ALNUM, 24)),
    ),
    (
        "slack_user_token",
        "chat",
        "SLACK_USER_TOKEN",
        lambda g: (lambda c: (f"xoxp-{g.s(DIG, 12)}-{g.s(DIG, 12)}-{g.s(DIG, 13)}-{c}", c))(g.s(HEX, 32)),
    ),
    (
        "slack_app_token",
        "chat",
        "SLACK_APP_TOKEN",
        lambda g: (lambda c: (f"xapp-1-A{g.s(UPPER_ALNUM, 10)}-{g.s(DIG, 13)}-{c}", c))(g.s(HEX, 64)),
    ),
    ("slack_webhook_url", "chat", "SLACK_WEBHOOK_URL", _slack_webhook),
    # Discord docs: bot token = base64(user id).timestamp.hmac; webhook URLs carry the token.
    ("discord_bot_token", "chat", "DISCORD_TOKEN", _discord_bot),
    ("discord_webhook_url", "chat", "DISCORD_WEBHOOK", _discord_webhook),
    # Telegram Bot API docs: <bot id>:<35 chars starting AA>.
    ("telegram_bot_token", "chat", "TELEGRAM_BOT_TOKEN", _telegram),
    # Microsoft Teams docs: incoming webhook URL on webhook.office.com.
    ("teams_webhook_url", "chat", "TEAMS_WEBHOOK", _teams_webhook),
    # Mattermost docs: personal access token 26 lower alnum.
    ("mattermost_token", "chat", "MM_TOKEN", _whole(_tok("", LOWER_ALNUM, 26))),
    # Twilio docs: API key SID SK + 32 hex (an identifier) printed with its 32-char secret (the secret part);
    # account auth token 32 hex.
    ("twilio_api_key_secret", "chat", "TWILIO_API_KEY", _pair("SK", HEX, 32, ALNUM, 32)),
    ("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", _whole(_tok("", HEX, 32))),
    # SendGrid docs: SG.<22>.<43>.
    (
        "sendgrid_api_key",
        "chat",
        "SENDGRID_API_KEY",
        lambda g: (lambda c: (f"SG.{g.s(B64URL, 22)}.{c}", c))(g.s(B64URL, 43)),
    ),
    # Mailgun docs: private API key key-<32 hex> (newer: <32 hex>-<8 hex>-<8 hex>).
    ("mailgun_api_key", "chat", "MAILGUN_API_KEY", _tok("key-", HEX, 32)),
    # Mailchimp docs: API key 32 hex + -usN datacenter.
    ("mailchimp_api_key", "chat", "MAILCHIMP_API_KEY", _tok("", HEX, 32, "-us21")),
    # Postmark docs: server token UUID.
    ("postmark_server_token", "chat", "POSTMARK_SERVER_TOKEN", lambda g: (lambda u: (u, u))(g.uuid())),
    # Zulip docs: API key 32 alnum in zuliprc.
    ("zulip_api_key", "chat", "key", _whole(_tok("", ALNUM, 32))),
    # LINE Messaging API docs: long-lived channel access token (~172 chars base64).
    ("line_channel_access_token", "chat", "LINE_CHANNEL_ACCESS_TOKEN", _whole(_tok("", B64, 172))),
    # Vonage docs: API secret 16 alnum.
    ("vonage_api_secret", "chat", "VONAGE_API_SECRET", _whole(_tok("", ALNUM, 16))),
    # Pusher docs: app secret 20 hex.
    ("pusher_secret", "chat", "PUSHER_APP_SECRET", _whole(_tok("", HEX, 20))),
    # Intercom docs: access tokens dG9rOj... (base64 "tok:").
    ("intercom_access_token", "chat", "INTERCOM_TOKEN", _tok("dG9rOj", B64, 54, "=")),
    # --- payment ---
    # Stripe docs: sk_live_, rk_live_ secret/restricted keys; whsec_ webhook signing secrets.
    ("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", _tok("sk_live_", ALNUM, 99)),
    ("stripe_restricted_key", "payment", "STRIPE_RESTRICTED_KEY", _tok("rk_live_", ALNUM, 99)),
    ("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", _tok("whsec_", ALNUM, 32)),
    # PayPal docs: REST client secret 80 chars [A-Za-z0-9_-].
    ("paypal_client_secret", "payment", "PAYPAL_CLIENT_SECRET", _whole(_tok("", B64URL, 80))),
    # Square docs: production access tokens EAAA + 60.
    ("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", _tok("EAAA", B64URL, 60)),
    # Braintree docs: private key 32 hex.
    ("braintree_private_key", "payment", "BRAINTREE_PRIVATE_KEY", _whole(_tok("", HEX, 32))),
    # Adyen docs: API keys start AQE and are long.
    ("adyen_api_key", "payment", "ADYEN_API_KEY", _tok("AQEyhmfxK4", B64URL + "=", 120)),
    # Razorpay docs: key id rzp_live_ + key secret 24 alnum.
    ("razorpay_key_secret", "payment", "RAZORPAY_KEY_SECRET", _whole(_tok("", ALNUM, 24))),
    # Paystack docs: sk_live_ + 40 hex.
    ("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", _tok("sk_live_", HEX, 40)),
    # Flutterwave docs: FLWSECK- + 32 hex + -X.
    ("flutterwave_secret_key", "payment", "FLW_SECRET_KEY", _tok("FLWSECK-", HEX, 32, "-X")),
    # Mercado Pago docs: access token APP_USR-<digits>-<date>-<32 hex>-<digits>.
    ("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", _mercadopago),
    # Mollie docs: live_ + 30 alnum.
    ("mollie_api_key", "payment", "MOLLIE_API_KEY", _tok("live_", ALNUM, 30)),
    # Midtrans docs: server key Mid-server-<24>.
    ("midtrans_server_key", "payment", "MIDTRANS_SERVER_KEY", _tok("Mid-server-", B64URL, 24)),
    # Xendit docs: secret key xnd_production_ + 60.
    ("xendit_secret_key", "payment", "XENDIT_SECRET_KEY", _tok("xnd_production_", ALNUM, 60)),
    # YooKassa docs: secret key live_ + 43 base64url.
    ("yookassa_secret_key", "payment", "YOOKASSA_SECRET_KEY", _tok("live_", B64URL, 43)),
    # GoCardless docs: live_ access tokens.
    ("gocardless_access_token", "payment", "GOCARDLESS_ACCESS_TOKEN", _tok("live_", B64URL, 40)),
    # Paddle docs (Billing): API keys pdl_live_apikey_.
    ("paddle_api_key", "payment", "PADDLE_API_KEY", _tok("pdl_live_apikey_01", LOWER_ALNUM, 40)),
    # --- database ---
    # PostgreSQL / MySQL / MongoDB / Redis / AMQP connection URIs with user:password@.
    ("postgres_url", "database", "DATABASE_URL", _url("postgresql", "db.prod.internal", 5432, "app")),
    ("mysql_url", "database", "MYSQL_URL", _url("mysql", "mysql-primary", 3306, "shop", "root")),
    (
        "mongodb_srv_url",
        "database",
        "MONGODB_URI",
        _url("mongodb+srv", "cluster0.abcde.mongodb.net", 27017, "admin"),
    ),
    ("redis_url", "database", "REDIS_URL", _url("rediss", "cache.example.net", 6380, "0", "default")),
    ("amqp_url", "database", "CELERY_BROKER_URL", _url("amqps", "rabbit.internal", 5671, "vhost", "celery")),
    ("pgpass_line", "database", "~/.pgpass", _pgpass),
    ("mssql_connection_string", "database", "ConnectionStrings__Default", _mssql),
    ("jdbc_mysql_password", "database", "spring.datasource.url", _jdbc_mysql),
    # PlanetScale docs: passwords pscale_pw_ + 43.
    ("planetscale_password", "database", "PLANETSCALE_PASSWORD", _tok("pscale_pw_", B64URL, 43)),
    # Supabase docs: service_role key is a JWT that bypasses RLS.
    (
        "supabase_service_role",
        "database",
        "SUPABASE_SERVICE_ROLE_KEY",
        _jwt_kind(
            lambda g: {
                "iss": "supabase",
                "ref": g.s(LOWER, 20),
                "role": "service_role",
                "iat": 1700000000,
                "exp": 2015576000,
            }
        ),
    ),
    # Turso docs: database auth tokens are JWTs (EdDSA).
    (
        "turso_auth_token",
        "database",
        "TURSO_AUTH_TOKEN",
        _jwt_kind(lambda g: {"a": "rw", "iat": 1733000000, "id": g.uuid()}),
    ),
    # InfluxDB docs: API token 88 chars base64 ending ==.
    ("influxdb_token", "database", "INFLUX_TOKEN", lambda g: (lambda v: (v, v[:-2]))(g.b64bytes(64))),
    # Firebase (legacy) database secret 40 alnum.
    ("firebase_db_secret", "database", "FIREBASE_DATABASE_SECRET", _whole(_tok("", ALNUM, 40))),
    # Snowflake docs: password in connection params.
    ("snowflake_password", "database", "SNOWFLAKE_PASSWORD", lambda g: (lambda p: (p, p))(_pw(g))),
    # Neo4j: bolt URL with credentials.
    (
        "neo4j_url",
        "database",
        "NEO4J_URI",
        _url("neo4j+s", "abcd1234.databases.neo4j.io", 7687, "neo4j", "neo4j"),
    ),
    # --- registry ---
    # npm docs: granular/automation tokens npm_ + 36; .npmrc //registry/:_authToken=.
    ("npm_token", "registry", "NPM_TOKEN", _tok("npm_", ALNUM, 36)),
    # PyPI docs: API tokens pypi- macaroons.
    ("pypi_token", "registry", "TWINE_PASSWORD", _pypi),
    # Docker docs: PATs dckr_pat_; config.json "auth" is base64(user:password).
    ("docker_hub_pat", "registry", "DOCKERHUB_TOKEN", _tok("dckr_pat_", B64URL, 27)),
    ("docker_config_auth", "registry", "auth", _docker_auth),
    # RubyGems docs: API keys rubygems_ + 48 hex.
    ("rubygems_api_key", "registry", "GEM_HOST_API_KEY", _tok("rubygems_", HEX, 48)),
    # NuGet docs: API keys oy2 + 43 lower alnum.
    ("nuget_api_key", "registry", "NUGET_API_KEY", _tok("oy2", LOWER_ALNUM, 43)),
    # crates.io docs: tokens cio + 32 alnum.
    ("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", _tok("cio", ALNUM, 32)),
    # JFrog docs: API keys AKCp + 69; reference/identity tokens cmVmdGtuOjAxOj (base64 "reftkn:01:").
    ("jfrog_api_key", "registry", "ARTIFACTORY_API_KEY", _tok("AKCp8", ALNUM, 68)),
    ("jfrog_reference_token", "registry", "JFROG_ACCESS_TOKEN", _tok("cmVmdGtuOjAxOj", ALNUM, 50)),
    # Quay docs: robot account token 64 upper alnum.
    ("quay_robot_token", "registry", "QUAY_ROBOT_TOKEN", _whole(_tok("", UPPER_ALNUM, 64))),
    # .netrc with password (git/artifact hosts).
    ("netrc_password", "registry", "~/.netrc", _netrc),
    # Harbor docs: robot account secret 32 alnum.
    ("harbor_robot_secret", "registry", "HARBOR_ROBOT_SECRET", _whole(_tok("", ALNUM, 32))),
    # Packagist docs: API tokens.
    ("packagist_token", "registry", "PACKAGIST_TOKEN", _tok("packagist_uat_", ALNUM, 32)),
    # --- observability ---
    # Datadog docs: API key 32 hex, application key 40 hex.
    ("datadog_api_key", "observability", "DD_API_KEY", _whole(_tok("", HEX, 32))),
    ("datadog_app_key", "observability", "DD_APP_KEY", _whole(_tok("", HEX, 40))),
    # New Relic docs: user keys NRAK- + 27; license keys 40 chars ending NRAL.
    ("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", _tok("NRAK-", UPPER_ALNUM, 27)),
    ("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", _tok("", HEX, 36, "NRAL")),
    # Sentry docs: org auth tokens sntrys_, user tokens sntryu_ + 64 hex.
    ("sentry_org_token", "observability", "SENTRY_AUTH_TOKEN", _tok("sntrys_eyJpYXQiOjE3", B64URL, 120)),
    ("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", _tok("sntryu_", HEX, 64)),
    # Grafana docs: service account tokens glsa_<32>_<8 hex>; cloud tokens glc_.
    (
        "grafana_sa_token",
        "observability",
        "GRAFANA_TOKEN",
        lambda g: (lambda c: (f"glsa_{c}_{g.s(HEX, 8)}", c))(g.s(ALNUM, 32)),
    ),
    ("grafana_cloud_token", "observability", "GRAFANA_CLOUD_TOKEN", _tok("glc_eyJvIjoi", B64, 120)),
    # Dynatrace docs: dt0c01.<24 upper alnum>.<64 upper alnum>.
    (
        "dynatrace_token",
        "observability",
        "DT_API_TOKEN",
        lambda g: (lambda c: (f"dt0c01.{g.s(UPPER_ALNUM, 24)}.{c}", c))(g.s(UPPER_ALNUM, 64)),
    ),
    # Honeycomb docs: ingest keys hcaik_ + 58.
    ("honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", _tok("hcaik_01", LOWER_ALNUM, 56)),
    # Splunk docs: HEC token UUID, sent as "Authorization: Splunk <token>".
    ("splunk_hec_token", "observability", "SPLUNK_HEC_TOKEN", lambda g: (lambda u: (u, u))(g.uuid())),
    # PagerDuty docs: REST API key (20 chars, often u+...), Events v2 integration key 32 hex.
    ("pagerduty_integration_key", "observability", "PAGERDUTY_ROUTING_KEY", _whole(_tok("", HEX, 32))),
    # Opsgenie docs: API key UUID (GenieKey).
    ("opsgenie_api_key", "observability", "OPSGENIE_API_KEY", lambda g: (lambda u: (u, u))(g.uuid())),
    # Elastic docs: encoded API key = base64(id:api_key).
    ("elastic_api_key", "observability", "ELASTIC_API_KEY", _elastic_key),
    # Axiom docs: API tokens xaat- + UUID.
    ("axiom_token", "observability", "AXIOM_TOKEN", lambda g: (lambda u: (f"xaat-{u}", u))(g.uuid())),
    # Rollbar docs: access token 32 hex.
    ("rollbar_token", "observability", "ROLLBAR_ACCESS_TOKEN", _whole(_tok("", HEX, 32))),
    # Sumo Logic docs: access key 64 alnum.
    ("sumologic_access_key", "observability", "SUMO_ACCESS_KEY", _whole(_tok("", ALNUM, 64))),
    # --- ai ---
    # OpenAI docs: project keys sk-proj-; older sk-...T3BlbkFJ...
    ("openai_project_key", "ai", "OPENAI_API_KEY", _tok("sk-proj-", B64URL, 156)),
    (
        "openai_legacy_key",
        "ai",
        "OPENAI_API_KEY",
        lambda g: (lambda a, b: (f"sk-{a}T3BlbkFJ{b}", a + "T3BlbkFJ" + b))(g.s(ALNUM, 20), g.s(ALNUM, 20)),
    ),
    # Anthropic docs: sk-ant-api03- + 93 + AA.
    ("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", _tok("sk-ant-api03-", B64URL, 93, "AA")),
    # Google AI Studio docs: Gemini keys are AIza keys.
    ("gemini_api_key", "ai", "GEMINI_API_KEY", _tok("AIza", B64URL, 35)),
    # Hugging Face docs: user access tokens hf_ + 34 letters.
    ("huggingface_token", "ai", "HF_TOKEN", _tok("hf_", UPPER + LOWER, 34)),
    # Cohere docs: API key 40 alnum.
    ("cohere_api_key", "ai", "CO_API_KEY", _whole(_tok("", ALNUM, 40))),
    # Mistral docs: API key 32 alnum.
    ("mistral_api_key", "ai", "MISTRAL_API_KEY", _whole(_tok("", ALNUM, 32))),
    # Groq docs: gsk_ + 52.
    ("groq_api_key", "ai", "GROQ_API_KEY", _tok("gsk_", ALNUM, 52)),
    # Replicate docs: r8_ + 37.
    ("replicate_token", "ai", "REPLICATE_API_TOKEN", _tok("r8_", ALNUM, 37)),
    # Perplexity docs: pplx- + 48.
    ("perplexity_api_key", "ai", "PERPLEXITY_API_KEY", _tok("pplx-", ALNUM, 48)),
    # OpenRouter docs: sk-or-v1- + 64 hex.
    ("openrouter_key", "ai", "OPENROUTER_API_KEY", _tok("sk-or-v1-", HEX, 64)),
    # xAI docs: xai- + 80.
    ("xai_api_key", "ai", "XAI_API_KEY", _tok("xai-", ALNUM, 80)),
    # DeepSeek docs: sk- + 32 hex.
    ("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", _tok("sk-", HEX, 32)),
    # ElevenLabs docs: sk_ + 48 hex.
    ("elevenlabs_api_key", "ai", "ELEVENLABS_API_KEY", _tok("sk_", HEX, 48)),
    # Pinecone docs: pcsk_<5>_<60>.
    (
        "pinecone_api_key",
        "ai",
        "PINECONE_API_KEY",
        lambda g: (lambda c: (f"pcsk_{g.s(ALNUM, 5)}_{c}", c))(g.s(ALNUM, 60)),
    ),
    # LangSmith docs: lsv2_pt_<32 hex>_<10 hex>.
    (
        "langsmith_api_key",
        "ai",
        "LANGSMITH_API_KEY",
        lambda g: (lambda c: (f"lsv2_pt_{c}_{g.s(HEX, 10)}", c))(g.s(HEX, 32)),
    ),
    # Weights & Biases docs: API key 40 hex.
    ("wandb_api_key", "ai", "WANDB_API_KEY", _whole(_tok("", HEX, 40))),
    # Azure OpenAI docs: key 32 hex.
    ("azure_openai_key", "ai", "AZURE_OPENAI_API_KEY", _whole(_tok("", HEX, 32))),
    # Together AI docs: 64 hex.
    ("together_api_key", "ai", "TOGETHER_API_KEY", _whole(_tok("", HEX, 64))),
    # --- saas ---
    # Shopify docs: shpat_ admin token, shpss_ shared secret, shpca_ custom app, 32 hex.
    ("shopify_admin_token", "saas", "SHOPIFY_ACCESS_TOKEN", _tok("shpat_", HEX, 32)),
    ("shopify_shared_secret", "saas", "SHOPIFY_API_SECRET", _tok("shpss_", HEX, 32)),
    # Atlassian docs: API tokens ATATT3xFfGF0 + long.
    ("atlassian_api_token", "saas", "JIRA_API_TOKEN", _tok("ATATT3xFfGF0", B64URL, 170)),
    # Notion docs: integration secrets secret_ (old) / ntn_ (new).
    ("notion_secret", "saas", "NOTION_TOKEN", _tok("ntn_", ALNUM, 46)),
    # Airtable docs: PAT pat<14>.<64 hex>.
    (
        "airtable_pat",
        "saas",
        "AIRTABLE_TOKEN",
        lambda g: (lambda c: (f"pat{g.s(ALNUM, 14)}.{c}", c))(g.s(HEX, 64)),
    ),
    # Linear docs: lin_api_ + 40.
    ("linear_api_key", "saas", "LINEAR_API_KEY", _tok("lin_api_", ALNUM, 40)),
    # Figma docs: figd_ PATs.
    ("figma_pat", "saas", "FIGMA_TOKEN", _tok("figd_", B64URL, 40)),
    # HubSpot docs: private app tokens pat-na1-<uuid>.
    (
        "hubspot_private_app",
        "saas",
        "HUBSPOT_ACCESS_TOKEN",
        lambda g: (lambda u: (f"pat-na1-{u}", u))(g.uuid()),
    ),
    # Dropbox docs: short-lived tokens sl. + ~140.
    ("dropbox_token", "saas", "DROPBOX_TOKEN", _tok("sl.B", B64URL, 136)),
    # Okta docs: API tokens 00 + 40.
    ("okta_api_token", "saas", "OKTA_API_TOKEN", _tok("00", B64URL, 40)),
    # Auth0 docs: client secret 64 [A-Za-z0-9_-].
    ("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", _whole(_tok("", B64URL, 64))),
    # Postman docs: PMAK-<24 hex>-<34 hex>.
    (
        "postman_api_key",
        "saas",
        "POSTMAN_API_KEY",
        lambda g: (lambda c: (f"PMAK-{g.s(HEX, 24)}-{c}", c))(g.s(HEX, 34)),
    ),
    # Contentful docs: CFPAT- + 43.
    ("contentful_pat", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", _tok("CFPAT-", B64URL, 43)),
    # Algolia docs: admin API key 32 hex.
    ("algolia_admin_key", "saas", "ALGOLIA_ADMIN_KEY", _whole(_tok("", HEX, 32))),
    # Mapbox docs: secret tokens sk.eyJ1...
    (
        "mapbox_secret_token",
        "saas",
        "MAPBOX_SECRET_TOKEN",
        lambda g: (lambda c: (f"sk.eyJ1IjoiYWNtZSIsImEiOiJ{g.s(B64URL, 20)}.{c}", c))(g.s(B64URL, 22)),
    ),
    # Trello docs: tokens ATTA + 64 hex.
    ("trello_token", "saas", "TRELLO_TOKEN", _tok("ATTA", HEX, 64)),
    # ClickUp docs: pk_<digits>_<32 upper alnum>.
    (
        "clickup_token",
        "saas",
        "CLICKUP_API_TOKEN",
        lambda g: (lambda c: (f"pk_{g.s(DIG, 8)}_{c}", c))(g.s(UPPER_ALNUM, 32)),
    ),
    # Twitter/X docs: app bearer token starts AAAAAAAAAAAAAAAAAAAAA.
    ("twitter_bearer_token", "saas", "TWITTER_BEARER_TOKEN", _tok("AAAAAAAAAAAAAAAAAAAAA", ALNUM + "%", 90)),
    # Meta docs: access tokens start EAA.
    ("facebook_access_token", "saas", "FB_ACCESS_TOKEN", _tok("EAAB", ALNUM, 180)),
    # Zendesk docs: API token 40 alnum.
    ("zendesk_api_token", "saas", "ZENDESK_API_TOKEN", _whole(_tok("", ALNUM, 40))),
    # Typeform docs: tfp_ personal tokens.
    ("typeform_token", "saas", "TYPEFORM_TOKEN", _tok("tfp_", B64URL, 44)),
    # RFC 7617 Basic auth header with a real password.
    ("basic_auth_header", "saas", "Authorization", _basic_auth),
    # A human password under a secret name.
    ("password_under_name", "saas", "password", lambda g: (lambda p: (p, p))(_pw(g))),
    # A 32-hex secret under a vendor-ish name.
    ("hex_under_secret_name", "saas", "ACME_AUTH_TOKEN", _whole(_tok("", HEX, 32))),
    # A random 40-char api_key with no documented prefix.
    ("random_api_key_under_name", "saas", "api_key", _whole(_tok("", ALNUM, 40))),
]


BLOCK_KINDS = {
    "gcp_service_account_json",
    "oci_api_private_key",
    "ssh_private_key",
    "tls_private_key_pkcs8",
    "ec_private_key",
}


# --- contexts: what agents store. (name, value) -> text ---
def _token_contexts() -> list[Callable[[str, str], str]]:
    return [
        lambda n, v: f"{n}={v}",
        lambda n, v: f'export {n}="{v}"',
        lambda n, v: f"# .env.production (copied from the old box)\nDEBUG=false\n{n}={v}\nLOG_LEVEL=info",
        lambda n, v: f"{n.lower()}: {v}",
        lambda n, v: f'apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-creds\nstringData:\n  {n}: "{v}"',
        lambda n, v: f'{{"service": "billing", "{n.lower()}": "{v}", "retries": 3}}',
        lambda n, v: f'[default]\nregion = eu-west-1\n{n.lower()} = "{v}"',
        lambda n, v: f'resource "kubernetes_secret" "app" {{\n  data = {{\n    {n.lower()} = "{v}"\n  }}\n}}',
        lambda n, v: f'<add key="{n}" value="{v}" />',
        lambda n, v: f'os.environ["{n}"] = "{v}"  # TODO move to vault before merge',
        lambda n, v: f"$ curl -H 'Authorization: Bearer {v}' https://api.internal/v2/health\n{{\"ok\":true}}",
        lambda n, v: (
            f"Incident 2291 notes: the job failed because {n} expired. New value is {v}; rotated by Priya at 14:05."
        ),
        lambda n, v: (
            f"PR #418: fix flaky deploy. Note for reviewers: I temporarily hardcoded {v} in deploy.sh, will revert."
        ),
        lambda n, v: f"Voilà le token pour la prod : {v} (ne pas le partager)",
        lambda n, v: f"Hier ist der Schlüssel für staging: {v} – bitte nach dem Test löschen.",
        lambda n, v: f"本番用のキーはこれです：{v}",
        lambda n, v: f"生产环境的密钥：{v}，下周轮换",
        lambda n, v: f"Oi, segue a chave que pediste: {v}",
        lambda n, v: f"Вот токен для CI: {v}",
        lambda n, v: f"¿Me pasas esto al equipo? la clave es {v}",
        lambda n, v: f"| env | var | value |\n|---|---|---|\n| prod | `{n}` | `{v}` |",
        lambda n, v: f'In [12]: client = Client(api_key="{v}")\nIn [13]: client.ping()\nOut[13]: True',
        lambda n, v: (
            f'Traceback (most recent call last):\n  File "app/sync.py", line 88, in push\n    raise AuthError(f"rejected credentials {v}")\nAuthError: rejected credentials {v}'
        ),
        lambda n, v: (
            f'2026-11-30T08:12:44Z WARN http_client: retry 2/5 url=https://api.vendor.io/v1 header.authorization="Bearer {v}"'
        ),
        lambda n, v: f'env:\n  - name: {n}\n    value: "{v}"',
        lambda n, v: f"[Screenshot transcribed] Settings > API > Your token\n{v}\n[Copy] [Regenerate]",
        lambda n, v: (
            f"Subject: access for the contractor\n\nHi Tom,\nuse {v} for the sandbox until Friday.\nThanks, Ana"
        ),
        lambda n, v: f"const client = new Client({{ token: '{v}' }});",
        lambda n, v: f'let cfg = Config {{ {n.lower()}: "{v}".into(), ..Default::default() }};',
        lambda n, v: f'<property name="{n.lower()}">{v}</property>',
        lambda n, v: f"history: 1043  docker run -e {n}={v} acme/worker:2.4",
        lambda n, v: f"Remember: the staging {n} is {v}",
    ]


def _block_contexts() -> list[Callable[[str, str], str]]:
    return [
        lambda n, v: f"Saved {n} for the deploy box:\n{v}",
        lambda n, v: f"```\n$ cat ~/keys/{n}\n{v}\n```",
        lambda n, v: (
            "data:\n  " + n.replace("_", "-") + ": |\n" + "\n".join("    " + line for line in v.splitlines())
        ),
        lambda n, v: f"Runbook step 4: paste this into the vault UI ({n}):\n\n{v}\n\nthen restart the pod.",
        lambda n, v: f"Ticket OPS-771 attachment ({n}):\n{v}",
    ]


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u200f", "\u202a"]
PLACEHOLDERS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXX", "changeme"]
DISGUISES = ["zero_width", "soft_hyphen", "fullwidth", "bidi", "percent", "base64", "split", "placeholder"]


def _insert_in_core(value: str, core: str, piece: str, g: _Gen) -> str:
    start = value.find(core)
    pos = start + len(core) // 2 + g.r.randrange(-3, 4)
    return value[:pos] + piece + value[pos:]


def _fullwidth(value: str, core: str, g: _Gen) -> str:
    start = value.find(core)
    everything = g.r.random() < 0.4
    out = []
    for i, c in enumerate(value):
        inside = start <= i < start + len(core)
        if inside and c.isascii() and c.isalnum() and (everything or g.r.random() < 0.35):
            out.append(chr(ord(c) + 0xFEE0))
        else:
            out.append(c)
    return "".join(out)


def _secret_piece(core: str, g: _Gen) -> str:
    n = min(len(core), max(8, min(16, len(core) - 4)))
    start = (len(core) - n) // 2
    return core[start : start + n]


def _credentials(g: _Gen) -> list[tuple[Sample, str]]:
    token_ctx = _token_contexts()
    block_ctx = _block_contexts()
    out: list[tuple[Sample, str]] = []
    for kind, group, name, make in KINDS:
        block = kind in BLOCK_KINDS
        ctxs = block_ctx if block else token_ctx
        for i in range(PER_KIND):
            value, core = make(g)
            disguise = "plain" if g.r.random() < 0.4 else DISGUISES[(i + len(kind)) % len(DISGUISES)]
            if disguise == "placeholder" and not _placeholder_ok(core):
                disguise = "zero_width"
            if disguise == "placeholder":
                # The random token happens to contain a placeholder-looking word; it is still the real value.
                word = g.r.choice(PLACEHOLDERS)
                at = len(core) // 2 - len(word) // 2
                new_core = core[:at] + word + core[at + len(word) :]
                value = value.replace(core, new_core, 1)
                core = new_core
            secret = _secret_piece(core, g)
            ctx = ctxs[g.r.randrange(len(ctxs))]
            raw_text = ctx(name, value)
            if disguise in ("plain", "placeholder"):
                text = raw_text
            elif disguise == "zero_width":
                text = ctx(name, _insert_in_core(value, core, g.r.choice(ZW), g))
            elif disguise == "soft_hyphen":
                text = ctx(name, _insert_in_core(value, core, "\u00ad", g))
            elif disguise == "bidi":
                mark = g.r.choice(BIDI)
                text = ctx(
                    name,
                    _insert_in_core(
                        value, core, mark + ("\u202c" if mark in "\u202e\u202d\u202a" else ""), g
                    ),
                )
            elif disguise == "fullwidth":
                text = ctx(name, _fullwidth(value, core, g))
            elif disguise == "percent":
                if g.r.random() < 0.5:
                    text = f"redirect seen in the proxy log: https://sso.example.org/cb?state=9f2&next={quote(f'{name}={value}', safe='')}"
                else:
                    text = ctx(name, "".join(f"%{b:02X}" for b in value.encode()))
            elif disguise == "base64":
                if g.r.random() < 0.5 or block:
                    enc = base64.b64encode(f"{name}={value}".encode()).decode()
                    text = f"echo '{enc}' | base64 -d >> .env   # restores the prod env line"
                else:
                    text = ctx(name, base64.b64encode(value.encode()).decode())
            else:  # split
                brk = g.r.choice(["\n", "\\\n    ", "\n  ", "\r\n"])
                text = ctx(name, _insert_in_core(value, core, brk, g))
            out.append(
                (Sample(kind=kind, group=group, text=text, disguise=disguise, secret=secret), raw_text)
            )
    return out


# --- look-alikes: public values that share the texts above ---
def _lookalike_makers() -> list[tuple[str, Callable[[_Gen], str]]]:
    def sha(g: _Gen, n: int = 40) -> str:
        return g.s(HEX, n)

    def ulid(g: _Gen) -> str:
        return "01J" + g.s("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 23)

    return [
        (
            "git_commit",
            lambda g: (
                f"Fixed in commit {sha(g)} (token refresh race); cherry-picked to release/2.3 as {sha(g)[:12]}."
            ),
        ),
        ("sha256_release_checksum", lambda g: f"kenfold-1.4.0-linux-amd64.tar.gz\nsha256: {sha(g, 64)}"),
        ("sha512_digest", lambda g: f"SHA512 ({g.s(LOWER, 6)}.iso) = {sha(g, 128)}"),
        (
            "uuid_primary_key",
            lambda g: f"The row's primary key is {g.uuid()}; the foreign key points at {g.uuid()}.",
        ),
        ("ulid_event_id", lambda g: f"event_id={ulid(g)} type=order.created"),
        ("ksuid", lambda g: f"KSUID for the batch: {g.s(ALNUM, 27)} (sortable, public)"),
        (
            "stripe_public_ids",
            lambda g: (
                f"Refund issued: customer cus_{g.s(ALNUM, 14)}, payment intent pi_{g.s(ALNUM, 24)}, charge ch_{g.s(ALNUM, 24)}."
            ),
        ),
        (
            "stripe_publishable_key",
            lambda g: (
                f"frontend .env: NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_{g.s(ALNUM, 99)}  # publishable, safe in the browser"
            ),
        ),
        (
            "idempotency_key",
            lambda g: f"Retried POST /v1/charges with Idempotency-Key: {g.uuid()} — got the cached response.",
        ),
        (
            "slack_channel_ids",
            lambda g: (
                f"Post alerts to channel C{g.s(UPPER_ALNUM, 10)} (team T{g.s(UPPER_ALNUM, 8)}), user U{g.s(UPPER_ALNUM, 10)} is on call."
            ),
        ),
        (
            "aws_arn_account",
            lambda g: (
                f"Role: arn:aws:iam::{g.s(DIG, 12)}:role/deploy-{g.s(LOWER, 5)}; bucket arn:aws:s3:::logs-{g.s(LOWER_ALNUM, 8)}"
            ),
        ),
        (
            "trace_request_ids",
            lambda g: f"trace_id={sha(g, 32)} span_id={sha(g, 16)} x-request-id: {g.uuid()} status=502",
        ),
        (
            "base64_text",
            lambda g: (
                f"The payload field is just base64 of the message: {base64.b64encode(('Order ' + g.s(DIG, 6) + ' shipped to the Lisbon warehouse on Tuesday').encode()).decode()}"
            ),
        ),
        (
            "base64_png",
            lambda g: f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAA{g.b64bytes(90)}">',
        ),
        (
            "npm_integrity",
            lambda g: (
                f'"node_modules/lodash": {{\n  "version": "4.17.21",\n  "integrity": "sha512-{g.b64bytes(64)}"\n}}'
            ),
        ),
        (
            "aws_documented_example",
            lambda g: (
                g.r.choice(
                    [
                        "AWS docs example: aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                        "Example from the IAM guide: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY (not a real key).",
                    ]
                )
                + f" ref {g.s(DIG, 4)}"
            ),
        ),
        (
            "placeholder_in_brackets",
            lambda g: (
                g.r.choice(
                    [
                        "STRIPE_SECRET_KEY=sk_live_<your key>",
                        "OPENAI_API_KEY=<your-api-key>",
                        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                        "SLACK_BOT_TOKEN=xoxb-your-token-here",
                        'password: "********"',
                        "api_key: YOUR_API_KEY_HERE",
                    ]
                )
                + f"  # fill in locally, see README section {g.r.randrange(1, 9)}"
            ),
        ),
        (
            "env_reference",
            lambda g: (
                g.r.choice(
                    [
                        "API_KEY=${API_KEY}",
                        'token = os.environ["GITHUB_TOKEN"]',
                        "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
                        "valueFrom:\n  secretKeyRef:\n    name: db-creds\n    key: password",
                        "DATABASE_URL: ${{ secrets.DATABASE_URL }}",
                        'api_key = Deno.env.get("OPENAI_API_KEY")',
                        "client_secret: \"{{ lookup('env', 'CLIENT_SECRET') }}\"",
                    ]
                )
                + f"\n# set in job {g.s(DIG, 5)}"
            ),
        ),
        (
            "ssh_public_key",
            lambda g: (
                f"Add this public key to authorized_keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} dev@{g.s(LOWER, 6)}"
            ),
        ),
        ("pem_public_key", lambda g: g.pem("PUBLIC KEY", 294)[0]),
        (
            "key_fingerprint",
            lambda g: (
                f"Host key fingerprint SHA256:{g.b64bytes(32).rstrip('=')} (ED25519) — public key fingerprint, verify before connecting."
            ),
        ),
        (
            "css_webpack_hash",
            lambda g: (
                f"dist/assets/index-{g.s(B64URL, 8)}.js  main.{sha(g, 20)}.chunk.js  styles.{sha(g, 20)}.css  .css-{g.s(LOWER_ALNUM, 6)}"
            ),
        ),
        (
            "youtube_id",
            lambda g: (
                f"Demo video: https://www.youtube.com/watch?v={g.s(B64URL, 11)} (token count per minute explained at 04:12)"
            ),
        ),
        ("docker_digest", lambda g: f"image: ghcr.io/acme/api@sha256:{sha(g, 64)}"),
        (
            "nix_store_path",
            lambda g: f"/nix/store/{g.s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-python3-3.12.1",
        ),
        ("ipfs_cid", lambda g: f"Pinned to IPFS: bafybei{g.s('abcdefghijklmnopqrstuvwxyz234567', 52)}"),
        (
            "prose_about_secrets",
            lambda g: (
                g.r.choice(
                    [
                        "Rotate the GitHub token every 90 days and store it only in the secrets manager.",
                        "Never paste the Stripe secret key into chat; use the restricted key with read-only scope.",
                        "The API key lives in 1Password under 'Prod / Vendor'; ask Sam for access.",
                        "Les jetons d'accès expirent après 30 jours, pensez à les renouveler.",
                        "トークンはSecrets Managerに保存し、コードに書かないこと。",
                        "Token count for the prompt was 18432; the model's max is 200k tokens.",
                    ]
                )
                + f" (note {g.s(DIG, 3)})"
            ),
        ),
        (
            "semver_and_build",
            lambda g: (
                f"Build {g.s(DIG, 4)} of v{g.r.randrange(1, 9)}.{g.r.randrange(30)}.{g.r.randrange(30)}+{sha(g, 7)} passed; cache key node-modules-{sha(g, 64)}"
            ),
        ),
        (
            "oauth_client_id",
            lambda g: (
                f"Google OAuth client id (public): {g.s(DIG, 12)}-{g.s(LOWER_ALNUM, 32)}.apps.googleusercontent.com"
            ),
        ),
        (
            "sentry_event_ids",
            lambda g: (
                f"Sentry project id {g.s(DIG, 7)}, issue {g.s(UPPER, 4)}-{g.s(UPPER_ALNUM, 3)}, event id {sha(g, 32)}"
            ),
        ),
    ]


def _lookalikes(g: _Gen) -> list[Sample]:
    out = []
    for kind, make in _lookalike_makers():
        for _ in range(LOOKALIKES_PER_KIND):
            out.append(Sample(kind=kind, group="lookalike", text=make(g)))
    return out


def sixteenth_part_with_raw() -> list[tuple[Sample, str]]:
    """Every sample with the text it had before disguising (the same text for look-alikes)."""
    g = _Gen(SEED)
    creds = _credentials(g)
    looks = [(s, s.text) for s in _lookalikes(g)]
    return creds + looks


def sixteenth_part() -> list[Sample]:
    return [s for s, _ in sixteenth_part_with_raw()]
