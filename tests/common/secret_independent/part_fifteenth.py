"""Independent secret corpus, part fifteen: credentials generated from the formats the providers document,
written without reading the filter's rules, in memory texts an agent would store, with disguises and
look-alikes.

Every value is random (fixed seed); no real token is copied. Each kind's comment says where its shape comes
from (vendor docs as remembered by the writer).
"""

import base64
import random
import string
from collections.abc import Callable
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 15_061_2026
PER_KIND = 10
LOOKALIKES_PER_KIND = 24

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
LOWNUM = LO + DIG
UPNUM = UP + DIG
HEXL = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
B32 = UP + "234567"


class _Gen:
    # One random source for the whole corpus so the same seed gives the same corpus.
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def a(self, n: int) -> str:
        return self.s(ALNUM, n)

    def h(self, n: int) -> str:
        return self.s(HEXL, n)

    def d(self, n: int) -> str:
        return self.r.choice("123456789") + self.s(DIG, n - 1)

    def u(self, n: int) -> str:
        return self.s(URLSAFE, n)

    def uuid(self) -> str:
        x = self.h(32)
        return f"{x[:8]}-{x[8:12]}-4{x[13:16]}-{self.r.choice('89ab')}{x[17:20]}-{x[20:]}"

    def b64raw(self, n: int) -> str:
        return base64.b64encode(self.r.randbytes(n)).decode()

    def words(self) -> str:
        w = [
            "orchid",
            "tundra",
            "pylon",
            "marble",
            "quokka",
            "ferry",
            "saffron",
            "glacier",
            "lantern",
            "otter",
        ]
        return self.r.choice(w).capitalize() + self.r.choice(w) + self.d(4) + self.r.choice("!#%&*")

    def jwt(self, payload: str) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
        return f"{head}.{body}.{self.u(43)}"

    def pem(self, label: str, nbytes: int) -> tuple[str, str]:
        body = self.b64raw(nbytes)
        lines = [body[i : i + 64] for i in range(0, len(body), 64)]
        return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", lines[3]


# A kind: name, group, variable name people give it, whether it is one token (disguisable) and a generator
# returning (value as written, the random core that must not survive).
KindGen = Callable[[_Gen], tuple[str, str]]


def _tok(prefix: str, body: Callable[[_Gen], str], suffix: str = "") -> KindGen:
    def make(g: _Gen) -> tuple[str, str]:
        core = body(g)
        return prefix + core + suffix, core

    return make


def _azure_conn(g: _Gen) -> tuple[str, str]:
    key = g.b64raw(64)
    acct = "st" + g.s(LOWNUM, 10)
    return (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        key,
    )


def _azure_sas(g: _Gen) -> tuple[str, str]:
    sig = g.b64raw(32)
    return (
        f"sv=2022-11-02&ss=b&srt=sco&sp=rwdl&se=2026-12-31T23:59:59Z&st=2026-01-01T00:00:00Z&spr=https&sig={quote(sig, safe='')}",
        quote(sig, safe=""),
    )


def _gcp_sa(g: _Gen) -> tuple[str, str]:
    pem, line = g.pem("PRIVATE KEY", 1190)
    proj = "acme-" + g.s(LOWNUM, 6)
    value = (
        '{{\n  "type": "service_account",\n  "project_id": "{}",\n  "private_key_id": "{}",\n'
        '  "private_key": "{}",\n  "client_email": "deployer@{}.iam.gserviceaccount.com"\n}}'.format(
            proj, g.h(40), pem.replace("\n", "\\n"), proj
        )
    )
    return value, line


def _pem_kind(label: str, nbytes: int) -> KindGen:
    def make(g: _Gen) -> tuple[str, str]:
        return g.pem(label, nbytes)

    return make


def _url(scheme: str, user: str, host: str, tail: str) -> KindGen:
    def make(g: _Gen) -> tuple[str, str]:
        pw = g.a(20)
        return f"{scheme}://{user}:{pw}@{host}{tail}", pw

    return make


def _basic(g: _Gen) -> tuple[str, str]:
    cred = base64.b64encode(f"svc-backup:{g.a(18)}".encode()).decode()
    return f"Authorization: Basic {cred}", cred[4:-4]


def _docker_auth(g: _Gen) -> tuple[str, str]:
    cred = base64.b64encode(f"ci-bot:{g.a(24)}".encode()).decode()
    return f'{{"auths": {{"registry.example.io": {{"auth": "{cred}"}}}}}}', cred[4:-4]


def _discord(g: _Gen) -> tuple[str, str]:
    uid = base64.b64encode(g.d(18).encode()).decode().rstrip("=")
    t = f"{uid}.{g.u(6)}.{g.u(38)}"
    return t, t


def _elastic(g: _Gen) -> tuple[str, str]:
    v = base64.b64encode(f"{g.u(20)}:{g.u(22)}".encode()).decode()
    return v, v


def _kinds() -> list[tuple[str, str, str, bool, KindGen]]:
    return [
        # --- cloud ---
        # vendor docs (AWS IAM): secret access key is 40 chars of base64 alphabet, shown once.
        ("aws_secret_access_key", "cloud", "AWS_SECRET_ACCESS_KEY", True, _tok("", lambda g: g.s(B64, 40))),
        # vendor docs (AWS STS): session tokens are long base64 strings starting with FwoGZXIvYXdzE / IQoJb3JpZ2lu.
        (
            "aws_session_token",
            "cloud",
            "AWS_SESSION_TOKEN",
            True,
            _tok("IQoJb3JpZ2luX2VjE", lambda g: g.s(B64, 300)),
        ),
        # vendor docs (Google Cloud API keys): "AIza" + 35 chars [A-Za-z0-9_-].
        ("gcp_api_key", "cloud", "GOOGLE_API_KEY", True, _tok("AIza", lambda g: g.u(35))),
        # vendor docs (GCP IAM): service-account key file JSON with a PKCS#8 private_key.
        ("gcp_service_account_json", "cloud", "GOOGLE_CREDENTIALS", False, _gcp_sa),
        # vendor docs (Azure Storage): connection string with AccountKey = base64 of 64 bytes (88 chars).
        ("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", False, _azure_conn),
        # vendor docs (Azure SAS): query parameters sv, ss, srt, sp, se, sig (HMAC-SHA256, base64, url-encoded).
        ("azure_sas_token", "cloud", "AZURE_SAS", False, _azure_sas),
        # vendor docs (Entra ID app secrets): 40 chars, third-fourth chars then "Q~" marker.
        (
            "azure_client_secret",
            "cloud",
            "AZURE_CLIENT_SECRET",
            True,
            _tok("", lambda g: g.a(3) + "8Q~" + g.s(ALNUM + "~._-", 34)),
        ),
        # vendor docs (DigitalOcean): personal access tokens "dop_v1_" + 64 hex.
        ("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", True, _tok("dop_v1_", lambda g: g.h(64))),
        # vendor docs (DigitalOcean OAuth): "doo_v1_" + 64 hex.
        ("digitalocean_oauth", "cloud", "DO_OAUTH_TOKEN", True, _tok("doo_v1_", lambda g: g.h(64))),
        # vendor docs (Linode/Akamai API): personal access token, 64 hex.
        ("linode_token", "cloud", "LINODE_TOKEN", True, _tok("", lambda g: g.h(64))),
        # vendor docs (Hetzner Cloud): API token, 64 alphanumerics.
        ("hetzner_cloud_token", "cloud", "HCLOUD_TOKEN", True, _tok("", lambda g: g.a(64))),
        # vendor docs (Alibaba Cloud RAM): AccessKey secret, 30 alphanumerics (id starts LTAI).
        (
            "alibaba_access_key_secret",
            "cloud",
            "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
            True,
            _tok("", lambda g: g.a(30)),
        ),
        # vendor docs (Tencent Cloud CAM): SecretKey, 32 alphanumerics (SecretId starts AKID).
        ("tencent_secret_key", "cloud", "TENCENTCLOUD_SECRET_KEY", True, _tok("", lambda g: g.a(32))),
        # vendor docs (Yandex Cloud): API keys start "AQVN", ~40 chars [A-Za-z0-9_-].
        ("yandex_api_key", "cloud", "YC_API_KEY", True, _tok("AQVN", lambda g: g.u(36))),
        # vendor docs (IBM Cloud IAM): API key, 44 chars [A-Za-z0-9_-].
        ("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", True, _tok("", lambda g: g.u(44))),
        # vendor docs (OCI): API signing key is an RSA private key PEM.
        ("oci_api_signing_key", "cloud", "OCI_KEY", False, _pem_kind("RSA PRIVATE KEY", 1190)),
        # vendor docs (Cloudflare): API tokens are 40 chars [A-Za-z0-9_-].
        ("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", True, _tok("", lambda g: g.u(40))),
        # vendor docs (Cloudflare): legacy Global API Key, 37 hex.
        ("cloudflare_global_api_key", "cloud", "CF_API_KEY", True, _tok("", lambda g: g.h(37))),
        # vendor docs (Scaleway IAM): secret key is a UUID.
        ("scaleway_secret_key", "cloud", "SCW_SECRET_KEY", True, lambda g: (lambda v: (v, v))(g.uuid())),
        # vendor docs (OVHcloud API): application secret, 32 alphanumerics.
        ("ovh_application_secret", "cloud", "OVH_APPLICATION_SECRET", True, _tok("", lambda g: g.a(32))),
        # vendor docs (Vultr): API key, 36 upper-case alphanumerics.
        ("vultr_api_key", "cloud", "VULTR_API_KEY", True, _tok("", lambda g: g.s(UPNUM, 36))),
        # vendor docs (Heroku): API keys "HRKU-" prefixed.
        ("heroku_api_key", "cloud", "HEROKU_API_KEY", True, _tok("HRKU-AA", lambda g: g.u(58))),
        # vendor docs (Netlify): personal access tokens "nfp_" + 36.
        ("netlify_pat", "cloud", "NETLIFY_AUTH_TOKEN", True, _tok("nfp_", lambda g: g.a(36))),
        # vendor docs (Vercel): access token, 24 alphanumerics.
        ("vercel_token", "cloud", "VERCEL_TOKEN", True, _tok("", lambda g: g.a(24))),
        # vendor docs (Fly.io): macaroon tokens "FlyV1 fm2_" + base64.
        ("flyio_token", "cloud", "FLY_API_TOKEN", True, _tok("FlyV1 fm2_", lambda g: g.s(B64, 180))),
        # vendor docs (Kubernetes bootstrap tokens): [a-z0-9]{6}.[a-z0-9]{16}.
        (
            "kubernetes_bootstrap_token",
            "cloud",
            "token",
            True,
            _tok("", lambda g: g.s(LOWNUM, 6) + "." + g.s(LOWNUM, 16)),
        ),
        # vendor docs (Kubernetes service-account tokens): JWT bearer tokens in kubeconfig `token:`.
        (
            "kubernetes_sa_token",
            "cloud",
            "token",
            True,
            lambda g: (lambda t: (t, t.split(".")[2]))(
                g.jwt('{"iss":"kubernetes/serviceaccount","sub":"system:serviceaccount:ci:deployer"}')
            ),
        ),
        # vendor docs (HashiCorp Vault 1.10+): service tokens "hvs." + base62.
        ("vault_service_token", "cloud", "VAULT_TOKEN", True, _tok("hvs.", lambda g: g.a(24))),
        # vendor docs (HashiCorp Vault): batch tokens "hvb." + long base62.
        ("vault_batch_token", "cloud", "VAULT_TOKEN", True, _tok("hvb.", lambda g: g.a(90))),
        # --- ci ---
        # vendor docs (GitHub): classic PAT "ghp_" + 36 base62.
        ("github_pat_classic", "ci", "GITHUB_TOKEN", True, _tok("ghp_", lambda g: g.a(36))),
        # vendor docs (GitHub): fine-grained PAT "github_pat_" + 22 + "_" + 59.
        (
            "github_pat_fine_grained",
            "ci",
            "GH_TOKEN",
            True,
            _tok("github_pat_", lambda g: g.a(22) + "_" + g.a(59)),
        ),
        # vendor docs (GitHub): OAuth access token "gho_".
        ("github_oauth_token", "ci", "GITHUB_OAUTH_TOKEN", True, _tok("gho_", lambda g: g.a(36))),
        # vendor docs (GitHub Apps): installation token "ghs_".
        ("github_app_installation_token", "ci", "GITHUB_APP_TOKEN", True, _tok("ghs_", lambda g: g.a(36))),
        # vendor docs (GitHub Apps): user refresh token "ghr_".
        ("github_refresh_token", "ci", "GITHUB_REFRESH_TOKEN", True, _tok("ghr_", lambda g: g.a(36))),
        # vendor docs (GitLab): personal access token "glpat-" + 20 [A-Za-z0-9_-].
        ("gitlab_pat", "ci", "GITLAB_TOKEN", True, _tok("glpat-", lambda g: g.u(20))),
        # vendor docs (GitLab 16): runner authentication token "glrt-".
        ("gitlab_runner_token", "ci", "CI_RUNNER_TOKEN", True, _tok("glrt-", lambda g: g.u(20))),
        # vendor docs (GitLab): deploy token "gldt-".
        ("gitlab_deploy_token", "ci", "DEPLOY_TOKEN", True, _tok("gldt-", lambda g: g.u(20))),
        # vendor docs (GitLab): pipeline trigger token "glptt-" + 40 hex.
        ("gitlab_trigger_token", "ci", "TRIGGER_TOKEN", True, _tok("glptt-", lambda g: g.h(40))),
        # vendor docs (Bitbucket): app passwords start "ATBB".
        ("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", True, _tok("ATBB", lambda g: g.a(32))),
        # vendor docs (CircleCI): personal API tokens "CCIPAT_".
        ("circleci_pat", "ci", "CIRCLE_TOKEN", True, _tok("CCIPAT_", lambda g: g.a(22) + "_" + g.h(40))),
        # vendor docs (Buildkite): API access tokens "bkua_" + 40 hex.
        ("buildkite_token", "ci", "BUILDKITE_API_TOKEN", True, _tok("bkua_", lambda g: g.h(40))),
        # vendor docs (Jenkins): user API token, 34 hex ("11" + 32).
        ("jenkins_api_token", "ci", "JENKINS_API_TOKEN", True, _tok("11", lambda g: g.h(32))),
        # vendor docs (Azure DevOps): PAT, 52 chars base32 lowercase.
        (
            "azure_devops_pat",
            "ci",
            "AZURE_DEVOPS_EXT_PAT",
            True,
            _tok("", lambda g: g.s("abcdefghijklmnopqrstuvwxyz234567", 52)),
        ),
        # vendor docs (SonarQube 9.5+): user tokens "squ_" + 40 hex.
        ("sonarqube_token", "ci", "SONAR_TOKEN", True, _tok("squ_", lambda g: g.h(40))),
        # vendor docs (Terraform Cloud): "<14>.atlasv1.<67>".
        (
            "terraform_cloud_token",
            "ci",
            "TFE_TOKEN",
            True,
            _tok("", lambda g: g.a(14) + ".atlasv1." + g.a(67)),
        ),
        # vendor docs (Pulumi): access tokens "pul-" + 40 hex.
        ("pulumi_access_token", "ci", "PULUMI_ACCESS_TOKEN", True, _tok("pul-", lambda g: g.h(40))),
        # vendor docs (Doppler): service tokens "dp.st." + env + 40.
        ("doppler_service_token", "ci", "DOPPLER_TOKEN", True, _tok("dp.st.prd.", lambda g: g.a(40))),
        # vendor docs (Snyk): API token is a UUID.
        ("snyk_token", "ci", "SNYK_TOKEN", True, lambda g: (lambda v: (v, v))(g.uuid())),
        # vendor docs (Travis CI): API token, 22 chars.
        ("travis_api_token", "ci", "TRAVIS_API_TOKEN", True, _tok("", lambda g: g.u(22))),
        # --- chat ---
        # vendor docs (Slack): bot tokens "xoxb-" + team id digits + "-" + digits + "-" + 24 alnum.
        (
            "slack_bot_token",
            "chat",
            "SLACK_BOT_TOKEN",
            True,
            _tok("xoxb-", lambda g: g.d(11) + "-" + g.d(13) + "-" + g.a(24)),
        ),
        # vendor docs (Slack): user tokens "xoxp-".
        (
            "slack_user_token",
            "chat",
            "SLACK_USER_TOKEN",
            True,
            _tok("xoxp-", lambda g: g.d(11) + "-" + g.d(12) + "-" + g.d(13) + "-" + g.h(32)),
        ),
        # vendor docs (Slack): app-level tokens "xapp-1-".
        (
            "slack_app_token",
            "chat",
            "SLACK_APP_TOKEN",
            True,
            _tok("xapp-1-A", lambda g: g.s(UPNUM, 10) + "-" + g.d(13) + "-" + g.h(64)),
        ),
        # vendor docs (Slack incoming webhooks): hooks.slack.com/services/T…/B…/<24>.
        (
            "slack_webhook_url",
            "chat",
            "SLACK_WEBHOOK_URL",
            True,
            lambda g: (
                lambda k: (f"https://hooks.slack.com/services/T{g.s(UPNUM, 8)}/B{g.s(UPNUM, 10)}/{k}", k)
            )(g.a(24)),
        ),
        # vendor docs (Discord): bot token = base64(user id) . 6 . 38.
        ("discord_bot_token", "chat", "DISCORD_TOKEN", True, _discord),
        # vendor docs (Discord webhooks): /api/webhooks/<id>/<68 token>.
        (
            "discord_webhook_url",
            "chat",
            "DISCORD_WEBHOOK",
            True,
            lambda g: (lambda k: (f"https://discord.com/api/webhooks/{g.d(18)}/{k}", k))(g.u(68)),
        ),
        # vendor docs (Telegram Bot API): "<bot id>:<35 chars>", 35 starting "AA".
        (
            "telegram_bot_token",
            "chat",
            "TELEGRAM_BOT_TOKEN",
            True,
            lambda g: (lambda k: (f"{g.d(10)}:AA{k}", k))(g.u(33)),
        ),
        # vendor docs (Microsoft Teams incoming webhook): webhook.office.com/webhookb2/…/IncomingWebhook/<32 hex>/….
        (
            "teams_webhook_url",
            "chat",
            "TEAMS_WEBHOOK",
            True,
            lambda g: (
                lambda k: (
                    f"https://contoso.webhook.office.com/webhookb2/{g.uuid()}@{g.uuid()}/IncomingWebhook/{k}/{g.uuid()}",
                    k,
                )
            )(g.h(32)),
        ),
        # vendor docs (Twilio): API key secret, 32 alnum (SID starts SK).
        ("twilio_api_key_secret", "chat", "TWILIO_API_SECRET", True, _tok("", lambda g: g.a(32))),
        # vendor docs (Twilio): account auth token, 32 hex.
        ("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Mattermost): personal access tokens, 26 lowercase alnum.
        ("mattermost_token", "chat", "MM_TOKEN", True, _tok("", lambda g: g.s(LOWNUM, 26))),
        # vendor docs (Zulip): API key, 32 alnum in zuliprc.
        ("zulip_api_key", "chat", "ZULIP_API_KEY", True, _tok("", lambda g: g.a(32))),
        # vendor docs (LINE Messaging API): long-lived channel access token, ~172 base64 chars.
        (
            "line_channel_access_token",
            "chat",
            "LINE_CHANNEL_ACCESS_TOKEN",
            True,
            _tok("", lambda g: g.s(B64, 171) + "="),
        ),
        # vendor docs (Vonage): API secret, 16 alnum.
        ("vonage_api_secret", "chat", "VONAGE_API_SECRET", True, _tok("", lambda g: g.a(16))),
        # --- payment ---
        # vendor docs (Stripe): live secret keys "sk_live_".
        ("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", True, _tok("sk_live_51", lambda g: g.a(97))),
        # vendor docs (Stripe): restricted keys "rk_live_".
        ("stripe_restricted_key", "payment", "STRIPE_API_KEY", True, _tok("rk_live_51", lambda g: g.a(97))),
        # vendor docs (Stripe): webhook signing secret "whsec_".
        (
            "stripe_webhook_secret",
            "payment",
            "STRIPE_WEBHOOK_SECRET",
            True,
            _tok("whsec_", lambda g: g.a(32)),
        ),
        # vendor docs (PayPal REST): client secret, 80 [A-Za-z0-9_-].
        ("paypal_client_secret", "payment", "PAYPAL_CLIENT_SECRET", True, _tok("E", lambda g: g.u(79))),
        # vendor docs (Square): production access tokens "EAAA" + 60.
        ("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", True, _tok("EAAA", lambda g: g.u(60))),
        # vendor docs (Adyen): API keys start "AQE" and are long.
        ("adyen_api_key", "payment", "ADYEN_API_KEY", True, _tok("AQE", lambda g: g.s(ALNUM + "+/=", 120))),
        # vendor docs (Razorpay): key secret, 24 alnum (key id rzp_live_).
        ("razorpay_key_secret", "payment", "RAZORPAY_KEY_SECRET", True, _tok("", lambda g: g.a(24))),
        # vendor docs (Paystack): secret key "sk_live_" + 40 hex.
        ("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", True, _tok("sk_live_", lambda g: g.h(40))),
        # vendor docs (Flutterwave): "FLWSECK-" + 32 hex + "-X".
        (
            "flutterwave_secret_key",
            "payment",
            "FLW_SECRET_KEY",
            True,
            _tok("FLWSECK-", lambda g: g.h(32), "-X"),
        ),
        # vendor docs (Mercado Pago): access token APP_USR-<16>-<6>-<32 hex>-<9>.
        (
            "mercadopago_access_token",
            "payment",
            "MP_ACCESS_TOKEN",
            True,
            _tok("APP_USR-", lambda g: g.d(16) + "-" + g.d(6) + "-" + g.h(32) + "-" + g.d(9)),
        ),
        # vendor docs (Braintree): private key, 32 hex.
        ("braintree_private_key", "payment", "BRAINTREE_PRIVATE_KEY", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Mollie): live API key "live_" + 30.
        ("mollie_api_key", "payment", "MOLLIE_API_KEY", True, _tok("live_", lambda g: g.a(30))),
        # vendor docs (GoCardless): live access token "live_" + 40.
        (
            "gocardless_access_token",
            "payment",
            "GOCARDLESS_ACCESS_TOKEN",
            True,
            _tok("live_", lambda g: g.u(40)),
        ),
        # vendor docs (Midtrans): server key "Mid-server-" + 24.
        (
            "midtrans_server_key",
            "payment",
            "MIDTRANS_SERVER_KEY",
            True,
            _tok("Mid-server-", lambda g: g.u(24)),
        ),
        # vendor docs (Checkout.com): secret keys "sk_" + 26 lowercase base32-ish.
        ("checkout_secret_key", "payment", "CKO_SECRET_KEY", True, _tok("sk_", lambda g: g.s(LOWNUM, 26))),
        # vendor docs (Shopify): Admin API access token "shpat_" + 32 hex.
        ("shopify_access_token", "payment", "SHOPIFY_ACCESS_TOKEN", True, _tok("shpat_", lambda g: g.h(32))),
        # vendor docs (Shopify): app shared secret "shpss_" + 32 hex.
        ("shopify_shared_secret", "payment", "SHOPIFY_API_SECRET", True, _tok("shpss_", lambda g: g.h(32))),
        # vendor docs (Xendit): secret key "xnd_production_" + 60.
        (
            "xendit_secret_key",
            "payment",
            "XENDIT_SECRET_KEY",
            True,
            _tok("xnd_production_", lambda g: g.a(60)),
        ),
        # --- database ---
        # vendor docs (PostgreSQL libpq): postgresql://user:password@host:port/db.
        (
            "postgres_url",
            "database",
            "DATABASE_URL",
            False,
            _url("postgresql", "app", "db.internal:5432", "/orders?sslmode=require"),
        ),
        # vendor docs (MySQL connector): mysql://user:password@host/db.
        ("mysql_url", "database", "MYSQL_URL", False, _url("mysql", "root", "10.0.3.7:3306", "/shop")),
        # vendor docs (MongoDB Atlas): mongodb+srv://user:password@cluster.
        (
            "mongodb_srv_url",
            "database",
            "MONGODB_URI",
            False,
            _url("mongodb+srv", "atlasAdmin", "cluster0.x7k2p.mongodb.net", "/?retryWrites=true&w=majority"),
        ),
        # vendor docs (Redis): redis://default:password@host:6379.
        (
            "redis_url",
            "database",
            "REDIS_URL",
            False,
            _url("rediss", "default", "cache-prod.upstash.io:6379", ""),
        ),
        # vendor docs (RabbitMQ): amqp://user:password@host/vhost.
        ("amqp_url", "database", "BROKER_URL", False, _url("amqps", "celery", "mq.internal:5671", "/prod")),
        # vendor docs (PostgreSQL .pgpass): host:port:database:user:password.
        (
            "pgpass_line",
            "database",
            "",
            False,
            lambda g: (lambda p: (f"db-replica.internal:5432:analytics:report_ro:{p}", p))(g.a(22)),
        ),
        # vendor docs (SQL Server): ADO.NET connection string with Password=.
        (
            "sqlserver_connection_string",
            "database",
            "ConnectionStrings__Default",
            False,
            lambda g: (
                lambda p: (
                    f"Server=tcp:sql-prod.database.windows.net,1433;Database=crm;User ID=crmapp;Password={p};Encrypt=True;",
                    p,
                )
            )(g.a(20)),
        ),
        # vendor docs (Supabase): service_role key is a JWT.
        (
            "supabase_service_role_key",
            "database",
            "SUPABASE_SERVICE_ROLE_KEY",
            True,
            lambda g: (lambda t: (t, t.split(".")[2]))(
                g.jwt(f'{{"iss":"supabase","ref":"{g.s(LO, 20)}","role":"service_role"}}')
            ),
        ),
        # vendor docs (PlanetScale): passwords "pscale_pw_" + 43.
        (
            "planetscale_password",
            "database",
            "DATABASE_PASSWORD",
            True,
            _tok("pscale_pw_", lambda g: g.u(43)),
        ),
        # vendor docs (Firebase): legacy database secret, 40 alnum.
        ("firebase_database_secret", "database", "FIREBASE_DB_SECRET", True, _tok("", lambda g: g.a(40))),
        # vendor docs (Snowflake connector): password in connection parameters.
        (
            "snowflake_password",
            "database",
            "SNOWFLAKE_PASSWORD",
            True,
            lambda g: (lambda p: (p, p))(g.words() + g.a(6)),
        ),
        # vendor docs (Neon): postgres URL with npg_ password.
        (
            "neon_url",
            "database",
            "DATABASE_URL",
            False,
            lambda g: (
                lambda p: (
                    f"postgresql://neondb_owner:npg_{p}@ep-cool-river-a1b2c3.eu-central-1.aws.neon.tech/neondb?sslmode=require",
                    p,
                )
            )(g.a(12)),
        ),
        # vendor docs (Turso): database auth tokens are JWTs.
        (
            "turso_auth_token",
            "database",
            "TURSO_AUTH_TOKEN",
            True,
            lambda g: (lambda t: (t, t.split(".")[2]))(g.jwt(f'{{"a":"rw","id":"{g.uuid()}"}}')),
        ),
        # --- registry ---
        # vendor docs (npm): granular/automation tokens "npm_" + 36.
        ("npm_token", "registry", "NPM_TOKEN", True, _tok("npm_", lambda g: g.a(36))),
        # vendor docs (npm .npmrc): //registry.npmjs.org/:_authToken=<token>.
        (
            "npmrc_auth_token",
            "registry",
            "",
            False,
            lambda g: (lambda k: (f"//registry.npmjs.org/:_authToken=npm_{k}", k))(g.a(36)),
        ),
        # vendor docs (PyPI): API tokens "pypi-AgEIcHlwaS5vcmc" + macaroon base64.
        ("pypi_token", "registry", "TWINE_PASSWORD", True, _tok("pypi-AgEIcHlwaS5vcmc", lambda g: g.u(160))),
        # vendor docs (.pypirc): [pypi] username/password.
        (
            "pypirc_password",
            "registry",
            "",
            False,
            lambda g: (lambda k: (f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{k}", k))(
                g.u(150)
            ),
        ),
        # vendor docs (Docker Hub): personal access tokens "dckr_pat_" + 27.
        ("dockerhub_pat", "registry", "DOCKERHUB_TOKEN", True, _tok("dckr_pat_", lambda g: g.u(27))),
        # vendor docs (Docker config.json): "auth" is base64(user:password).
        ("docker_config_auth", "registry", "", False, _docker_auth),
        # vendor docs (RubyGems): API keys "rubygems_" + 48 hex.
        ("rubygems_api_key", "registry", "GEM_HOST_API_KEY", True, _tok("rubygems_", lambda g: g.h(48))),
        # vendor docs (NuGet): API keys "oy2" + 43 lowercase base32.
        (
            "nuget_api_key",
            "registry",
            "NUGET_API_KEY",
            True,
            _tok("oy2", lambda g: g.s("abcdefghijklmnopqrstuvwxyz234567", 43)),
        ),
        # vendor docs (crates.io): API tokens "cio" + 32.
        ("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", True, _tok("cio", lambda g: g.a(32))),
        # vendor docs (JFrog Artifactory): API keys "AKCp" + 69.
        ("artifactory_api_key", "registry", "ARTIFACTORY_API_KEY", True, _tok("AKCp", lambda g: g.a(69))),
        # vendor docs (JFrog): reference tokens start "cmVmdGtu" (base64 "reftkn").
        (
            "jfrog_reference_token",
            "registry",
            "JFROG_ACCESS_TOKEN",
            True,
            _tok("cmVmdGtuOjAxOjE3", lambda g: g.a(48)),
        ),
        # vendor docs (curl/.netrc): machine <host> login <user> password <pw>.
        (
            "netrc_password",
            "registry",
            "",
            False,
            lambda g: (lambda p: (f"machine nexus.corp.example login deploy password {p}", p))(g.a(24)),
        ),
        # vendor docs (Composer auth.json): http-basic password.
        (
            "composer_auth_password",
            "registry",
            "",
            False,
            lambda g: (
                lambda p: (
                    f'{{"http-basic": {{"repo.packagist.com": {{"username": "token", "password": "{p}"}}}}}}',
                    p,
                )
            )(g.h(40)),
        ),
        # vendor docs (Quay.io): robot account tokens, 64 upper alnum.
        ("quay_robot_token", "registry", "QUAY_ROBOT_TOKEN", True, _tok("", lambda g: g.s(UPNUM, 64))),
        # vendor docs (Hex.pm): API keys, 32 hex.
        ("hexpm_api_key", "registry", "HEX_API_KEY", True, _tok("", lambda g: g.h(32))),
        # --- observability ---
        # vendor docs (Datadog): API key, 32 hex.
        ("datadog_api_key", "observability", "DD_API_KEY", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Datadog): application key, 40 hex.
        ("datadog_app_key", "observability", "DD_APP_KEY", True, _tok("", lambda g: g.h(40))),
        # vendor docs (New Relic): user keys "NRAK-" + 27 upper alnum.
        (
            "newrelic_user_key",
            "observability",
            "NEW_RELIC_API_KEY",
            True,
            _tok("NRAK-", lambda g: g.s(UPNUM, 27)),
        ),
        # vendor docs (New Relic): license key, 40 chars ending "NRAL".
        (
            "newrelic_license_key",
            "observability",
            "NEW_RELIC_LICENSE_KEY",
            True,
            _tok("", lambda g: g.h(36), "NRAL"),
        ),
        # vendor docs (Sentry): org auth tokens "sntrys_" + base64 payload.
        (
            "sentry_org_token",
            "observability",
            "SENTRY_AUTH_TOKEN",
            True,
            _tok("sntrys_eyJpYXQiOjE3", lambda g: g.s(B64, 120)),
        ),
        # vendor docs (Sentry): user auth tokens "sntryu_" + 64 hex.
        ("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", True, _tok("sntryu_", lambda g: g.h(64))),
        # vendor docs (Grafana): service account tokens "glsa_" + 32 + "_" + 8 hex.
        (
            "grafana_sa_token",
            "observability",
            "GRAFANA_TOKEN",
            True,
            _tok("glsa_", lambda g: g.a(32) + "_" + g.h(8)),
        ),
        # vendor docs (Grafana Cloud): access policy tokens "glc_" + base64.
        (
            "grafana_cloud_token",
            "observability",
            "GRAFANA_CLOUD_TOKEN",
            True,
            _tok("glc_eyJvIjoi", lambda g: g.s(ALNUM, 100)),
        ),
        # vendor docs (Honeycomb): ingest keys "hcaik_" + 58.
        (
            "honeycomb_ingest_key",
            "observability",
            "HONEYCOMB_API_KEY",
            True,
            _tok("hcaik_", lambda g: g.s(LOWNUM, 58)),
        ),
        # vendor docs (Splunk HEC): token is a UUID.
        (
            "splunk_hec_token",
            "observability",
            "SPLUNK_HEC_TOKEN",
            True,
            lambda g: (lambda v: (v, v))(g.uuid()),
        ),
        # vendor docs (Dynatrace): "dt0c01." + 24 + "." + 64.
        (
            "dynatrace_token",
            "observability",
            "DT_API_TOKEN",
            True,
            _tok("dt0c01.", lambda g: g.s(UPNUM, 24) + "." + g.s(UPNUM, 64)),
        ),
        # vendor docs (PagerDuty): REST API key, 20 chars.
        ("pagerduty_api_key", "observability", "PAGERDUTY_TOKEN", True, _tok("u+", lambda g: g.u(18))),
        # vendor docs (Opsgenie): API key is a UUID.
        (
            "opsgenie_api_key",
            "observability",
            "OPSGENIE_API_KEY",
            True,
            lambda g: (lambda v: (v, v))(g.uuid()),
        ),
        # vendor docs (Elastic): API key credential = base64(id:api_key).
        ("elastic_api_key", "observability", "ELASTIC_API_KEY", True, _elastic),
        # vendor docs (Rollbar): access tokens, 32 hex.
        ("rollbar_access_token", "observability", "ROLLBAR_ACCESS_TOKEN", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Logz.io): shipping token, 32 letters.
        ("logzio_token", "observability", "LOGZIO_TOKEN", True, _tok("", lambda g: g.s(LO + UP, 32))),
        # --- ai ---
        # vendor docs (OpenAI): project keys "sk-proj-" + long urlsafe.
        (
            "openai_project_key",
            "ai",
            "OPENAI_API_KEY",
            True,
            _tok("sk-proj-", lambda g: g.u(74) + "T3BlbkFJ" + g.u(74)),
        ),
        # vendor docs (OpenAI, legacy): "sk-" + 20 + "T3BlbkFJ" + 20.
        (
            "openai_legacy_key",
            "ai",
            "OPENAI_API_KEY",
            True,
            _tok("sk-", lambda g: g.a(20) + "T3BlbkFJ" + g.a(20)),
        ),
        # vendor docs (Anthropic): "sk-ant-api03-" + 93 + "AA".
        (
            "anthropic_api_key",
            "ai",
            "ANTHROPIC_API_KEY",
            True,
            _tok("sk-ant-api03-", lambda g: g.u(93), "AA"),
        ),
        # vendor docs (Hugging Face): user access tokens "hf_" + 34 letters.
        ("huggingface_token", "ai", "HF_TOKEN", True, _tok("hf_", lambda g: g.s(LO + UP, 34))),
        # vendor docs (Replicate): API tokens "r8_" + 37.
        ("replicate_token", "ai", "REPLICATE_API_TOKEN", True, _tok("r8_", lambda g: g.a(37))),
        # vendor docs (Groq): API keys "gsk_" + 52.
        ("groq_api_key", "ai", "GROQ_API_KEY", True, _tok("gsk_", lambda g: g.a(52))),
        # vendor docs (Mistral): API key, 32 alnum.
        ("mistral_api_key", "ai", "MISTRAL_API_KEY", True, _tok("", lambda g: g.a(32))),
        # vendor docs (Cohere): API key, 40 alnum.
        ("cohere_api_key", "ai", "CO_API_KEY", True, _tok("", lambda g: g.a(40))),
        # vendor docs (Perplexity): "pplx-" + 48.
        ("perplexity_api_key", "ai", "PPLX_API_KEY", True, _tok("pplx-", lambda g: g.a(48))),
        # vendor docs (DeepSeek): "sk-" + 32 hex.
        ("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", True, _tok("sk-", lambda g: g.h(32))),
        # vendor docs (OpenRouter): "sk-or-v1-" + 64 hex.
        ("openrouter_api_key", "ai", "OPENROUTER_API_KEY", True, _tok("sk-or-v1-", lambda g: g.h(64))),
        # vendor docs (xAI): "xai-" + 80.
        ("xai_api_key", "ai", "XAI_API_KEY", True, _tok("xai-", lambda g: g.a(80))),
        # vendor docs (Together AI): 64 hex.
        ("together_api_key", "ai", "TOGETHER_API_KEY", True, _tok("", lambda g: g.h(64))),
        # vendor docs (Fireworks): "fw_" + 24.
        ("fireworks_api_key", "ai", "FIREWORKS_API_KEY", True, _tok("fw_", lambda g: g.a(24))),
        # vendor docs (Pinecone): "pcsk_" + id + "_" + secret.
        ("pinecone_api_key", "ai", "PINECONE_API_KEY", True, _tok("pcsk_", lambda g: g.a(6) + "_" + g.a(60))),
        # vendor docs (LangSmith): "lsv2_pt_" + 32 hex + "_" + 10 hex.
        (
            "langsmith_api_key",
            "ai",
            "LANGSMITH_API_KEY",
            True,
            _tok("lsv2_pt_", lambda g: g.h(32) + "_" + g.h(10)),
        ),
        # vendor docs (ElevenLabs): "sk_" + 48 hex.
        ("elevenlabs_api_key", "ai", "ELEVENLABS_API_KEY", True, _tok("sk_", lambda g: g.h(48))),
        # vendor docs (AssemblyAI): 32 hex.
        ("assemblyai_api_key", "ai", "ASSEMBLYAI_API_KEY", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Google AI Studio / Gemini): "AIza" API keys.
        ("gemini_api_key", "ai", "GEMINI_API_KEY", True, _tok("AIzaSy", lambda g: g.u(33))),
        # --- saas ---
        # vendor docs (SendGrid): "SG." + 22 + "." + 43.
        (
            "sendgrid_api_key",
            "saas",
            "SENDGRID_API_KEY",
            True,
            _tok("SG.", lambda g: g.u(22) + "." + g.u(43)),
        ),
        # vendor docs (Mailgun): "key-" + 32 hex.
        ("mailgun_api_key", "saas", "MAILGUN_API_KEY", True, _tok("key-", lambda g: g.h(32))),
        # vendor docs (Mailchimp): 32 hex + "-us" + datacenter.
        ("mailchimp_api_key", "saas", "MAILCHIMP_API_KEY", True, _tok("", lambda g: g.h(32), "-us14")),
        # vendor docs (Postmark): server token, UUID.
        (
            "postmark_server_token",
            "saas",
            "POSTMARK_SERVER_TOKEN",
            True,
            lambda g: (lambda v: (v, v))(g.uuid()),
        ),
        # vendor docs (Notion): internal integration secrets "ntn_" (older "secret_").
        ("notion_integration_secret", "saas", "NOTION_TOKEN", True, _tok("ntn_", lambda g: g.a(46))),
        # vendor docs (Airtable): PAT "pat" + 14 + "." + 64 hex.
        ("airtable_pat", "saas", "AIRTABLE_API_KEY", True, _tok("pat", lambda g: g.a(14) + "." + g.h(64))),
        # vendor docs (Linear): "lin_api_" + 40.
        ("linear_api_key", "saas", "LINEAR_API_KEY", True, _tok("lin_api_", lambda g: g.a(40))),
        # vendor docs (Figma): PAT "figd_" + 40.
        ("figma_pat", "saas", "FIGMA_TOKEN", True, _tok("figd_", lambda g: g.u(40))),
        # vendor docs (HubSpot): private app tokens "pat-na1-" + UUID.
        (
            "hubspot_private_app_token",
            "saas",
            "HUBSPOT_ACCESS_TOKEN",
            True,
            lambda g: (lambda v: ("pat-na1-" + v, v))(g.uuid()),
        ),
        # vendor docs (Atlassian): API tokens "ATATT3xFfGF0" + long.
        (
            "atlassian_api_token",
            "saas",
            "JIRA_API_TOKEN",
            True,
            _tok("ATATT3xFfGF0", lambda g: g.u(170) + "=" + g.s(UPNUM, 8)),
        ),
        # vendor docs (Okta): API tokens "00" + 40.
        ("okta_api_token", "saas", "OKTA_API_TOKEN", True, _tok("00", lambda g: g.u(40))),
        # vendor docs (Auth0): client secret, 64 [A-Za-z0-9_-].
        ("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", True, _tok("", lambda g: g.u(64))),
        # vendor docs (Dropbox): short-lived tokens "sl." + long.
        ("dropbox_access_token", "saas", "DROPBOX_TOKEN", True, _tok("sl.B", lambda g: g.u(135))),
        # vendor docs (Typeform): "tfp_" + 44.
        ("typeform_pat", "saas", "TYPEFORM_TOKEN", True, _tok("tfp_", lambda g: g.a(44))),
        # vendor docs (Contentful): "CFPAT-" + 43.
        ("contentful_pat", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", True, _tok("CFPAT-", lambda g: g.u(43))),
        # vendor docs (Algolia): admin API key, 32 hex.
        ("algolia_admin_key", "saas", "ALGOLIA_ADMIN_KEY", True, _tok("", lambda g: g.h(32))),
        # vendor docs (Mapbox): secret tokens "sk.eyJ1Ijoi" + base64 . 22.
        (
            "mapbox_secret_token",
            "saas",
            "MAPBOX_SECRET_TOKEN",
            True,
            _tok("sk.eyJ1IjoiYWNtZSIsImEiOiJ", lambda g: g.a(22) + "J9." + g.u(22)),
        ),
        # vendor docs (1Password): service account tokens "ops_eyJ" + base64.
        (
            "onepassword_sa_token",
            "saas",
            "OP_SERVICE_ACCOUNT_TOKEN",
            True,
            _tok("ops_eyJzaWduSW5BZGRyZXNzIjoi", lambda g: g.s(ALNUM, 200)),
        ),
        # vendor docs (age): "AGE-SECRET-KEY-1" + 58 bech32 upper.
        (
            "age_secret_key",
            "saas",
            "SOPS_AGE_KEY",
            True,
            _tok("AGE-SECRET-KEY-1", lambda g: g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        ),
        # vendor docs (OpenSSH): private key file.
        ("openssh_private_key", "saas", "", False, _pem_kind("OPENSSH PRIVATE KEY", 400)),
        # vendor docs (OpenPGP): armored private key block.
        ("pgp_private_key", "saas", "", False, _pem_kind("PGP PRIVATE KEY BLOCK", 700)),
        # vendor docs (Django): SECRET_KEY, 50 chars from a punctuation-rich alphabet.
        (
            "django_secret_key",
            "saas",
            "SECRET_KEY",
            True,
            _tok("django-insecure-", lambda g: g.s(LOWNUM + "!@#%^&*(-_=+)", 50)),
        ),
        # HS256 shared secret (RFC 7518 asks for ≥ 256 bits): random under JWT_SECRET.
        ("jwt_hmac_secret", "saas", "JWT_SECRET", True, _tok("", lambda g: g.s(B64, 64))),
        # RFC 7617: Authorization: Basic base64(user:password).
        ("basic_auth_header", "saas", "", False, _basic),
        # RFC 3986 userinfo: https://user:password@host.
        (
            "url_userinfo_password",
            "saas",
            "",
            False,
            _url("https", "jenkins", "ci.corp.example", "/job/deploy/build"),
        ),
        # Generic password under a secret name, words + digits, as password managers suggest.
        ("generic_password", "saas", "password", True, lambda g: (lambda p: (p, p))(g.words())),
        # Generic vendor API key: 32 hex under an *_AUTH_TOKEN name.
        ("generic_hex_auth_token", "saas", "ACMEPAY_AUTH_TOKEN", True, _tok("", lambda g: g.h(32))),
        # Generic api_key: random alnum under an api_key field.
        ("generic_api_key", "saas", "api_key", True, _tok("", lambda g: g.a(40))),
    ]


# Contexts for a one-token credential: (name, value) -> text. Some never show the name, as in chat.
def _named_contexts() -> list[Callable[[str, str], str]]:
    return [
        lambda n, v: f"{n}={v}",
        lambda n, v: f'export {n}="{v}"',
        lambda n, v: f"$ {n}={v} ./scripts/deploy.sh --env prod\nDeploying… done in 41s",
        lambda n, v: f'```yaml\nenv:\n  - name: {n}\n    value: "{v}"\n```',
        lambda n, v: f'[default]\n{n.lower()} = "{v}"\nregion = "eu-west-1"',
        lambda n, v: f'{{"service": "billing", "{n.lower()}": "{v}", "retries": 3}}',
        lambda n, v: f'resource "kubernetes_secret" "app" {{\n  data = {{\n    {n.lower()} = "{v}"\n  }}\n}}',
        lambda n, v: f'<add key="{n}" value="{v}" />',
        lambda n, v: f'os.environ.setdefault("{n}", "{v}")  # temporary, remove before merge',
        lambda n, v: f'const client = new Client({{ apiKey: "{v}" }}); // {n} from the staging vault',
        lambda n, v: f"| variable | value |\n|---|---|\n| {n} | `{v}` |\n| REGION | eu-central-1 |",
        lambda n, v: f"Runbook step 3: set {n} to {v} in the CI settings, then re-run the pipeline.",
        lambda n, v: f"2026-11-03T09:14:22Z WARN config loaded {n}={v} from .env.local (should be in vault)",
        lambda n, v: (
            f'Traceback (most recent call last):\n  File "app/main.py", line 88, in connect\n    client = Api(token="{v}")\nAuthError: 401 Unauthorized'
        ),
        lambda n, v: f"docker run -e {n}={v} -p 8080:8080 ghcr.io/acme/worker:1.4.2",
        lambda n, v: f"PR #812 description: rotates the leaked key. Old value was {v} — revoke after deploy.",
        lambda n, v: (
            f"Screenshot transcription (settings page):\n  Name: prod-integration\n  Token: {v}\n  Created: 3 days ago"
        ),
        lambda n, v: f'let {n.lower()} = "{v}".to_string();',
        lambda n, v: f'System.setProperty("{n.lower()}", "{v}");',
        lambda n, v: f"Notebook cell [14]:\n%env {n}={v}\nimport pandas as pd",
        lambda n, v: f'curl -H "Authorization: Bearer {v}" https://api.vendor.example/v1/me',
        lambda n, v: f"Hey, here's the token for the staging bot: {v} (don't share it)",
        lambda n, v: f"Voici la clé pour l'environnement de recette : {v} — à changer lundi.",
        lambda n, v: f"Ich hab den Schlüssel gefunden: {v}\nBitte nach dem Test widerrufen.",
        lambda n, v: f"这是生产环境的密钥：{v}，用完请删除。",
        lambda n, v: f"本番のトークンです: {v} 週明けにローテーションします",
        lambda n, v: f"Вот ключ от прод-окружения: {v} — не коммить!",
        lambda n, v: f"Aqui está o token do ambiente de testes: {v}",
        lambda n, v: f"Esta es la clave que usé ayer: {v}",
        lambda n, v: f"Subject: access for the audit\n\nHi Priya,\n\nthe credential is {v}\n\nBest, Tom",
        lambda n, v: f"memo: {v} works against prod, the other one was revoked",
    ]


def _block_contexts() -> list[Callable[[str, str], str]]:
    return [
        lambda n, v: v,
        lambda n, v: f"Found in the old deploy box, rotate ASAP:\n\n```\n{v}\n```",
        lambda n, v: (
            f"Incident 4411 timeline — 10:02 config dumped to the log:\n{v}\n10:05 log bucket made private."
        ),
        lambda n, v: f"value = <<EOT\n{v}\nEOT",
        lambda n, v: f"Вот конфиг, не потеряй:\n{v}",
        lambda n, v: f"From: ops@acme.example\nSubject: staging creds\n\n{v}\n\n-- sent from my phone",
        lambda n, v: f"# saved for the migration on Friday\n{v}",
        lambda n, v: f"Notas de la reunión: el acceso queda así\n{v}\nRevisar con seguridad.",
    ]


_ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
_BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u200f", "\u200e"]
_PLACEHOLDERS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXXXX", "TEST", "changeme"]
_DISGUISES = [
    "plain", "zero_width", "plain", "soft_hyphen", "fullwidth", "plain", "bidi", "percent",
    "plain", "base64", "split", "plain", "placeholder",
]  # fmt: skip


def _fullwidth(s: str, all_chars: bool, g: _Gen) -> str:
    return "".join(
        chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E and (all_chars or g.r.random() < 0.4) else c for c in s
    )


def _at(v: str, core: str) -> int:
    # The middle of the random core, so the disguise lands inside the piece that must not survive.
    return v.index(core) + len(core) // 2


def _disguise(kind: str, g: _Gen, n: str, v: str, core: str, ctx: Callable[[str, str], str]) -> str:
    p = _at(v, core)
    r = g.r
    if kind == "zero_width":
        ch = r.choice(_ZW)
        q = v.index(core) + len(core) // 3
        return ctx(n, v[:q] + ch + v[q:p] + ch + v[p:])
    if kind == "soft_hyphen":
        return ctx(n, v[:p] + "\u00ad" + v[p:])
    if kind == "fullwidth":
        if r.random() < 0.5:
            return ctx(n, _fullwidth(v, True, g))
        return ctx(n, v[: p - 4] + _fullwidth(v[p - 4 : p + 4], True, g) + v[p + 4 :])
    if kind == "bidi":
        a, b = r.choice(_BIDI), r.choice(["\u202c", "\u2069", "\u200e"])
        return ctx(n, v[:p] + a + b + v[p:])
    if kind == "percent":
        mode = r.randrange(3)
        if mode == 0:
            return ctx(n, "".join(f"%{ord(c):02X}" for c in v))
        if mode == 1:
            enc = quote(f"{n or 'token'}={v}", safe="")
            return f"GET /oauth/callback?state=xyz&next=%2Fsettings%3F{enc} HTTP/1.1\nHost: app.internal"
        # Encoders that escape more than they must: the middle character is escaped too, so the token is
        # never left readable as it was.
        enc = quote(v[:p], safe="") + f"%{ord(v[p]):02X}" + quote(v[p + 1 :], safe="")
        return ctx(n, enc.replace("_", "%5F").replace("-", "%2D"))
    if kind == "base64":
        if n and r.random() < 0.5:
            line = base64.b64encode(f"{n}={v}\n".encode()).decode()
            return f"echo '{line}' | base64 -d >> .env   # restore the env on the new box"
        return ctx(n, base64.b64encode(v.encode()).decode())
    if kind == "split":
        brk = r.choice(["\n", "\\\n    ", "\n  ", "\r\n", "\n\t"])
        return ctx(n, v[:p] + brk + v[p:])
    return ctx(n, v)


def _secret_piece(core: str) -> str:
    n = len(core)
    size = min(n, max(8, min(16, n // 2)))
    start = (n - size) // 2
    return core[start : start + size]


def _with_placeholder(v: str, core: str, g: _Gen) -> tuple[str, str]:
    # A real random token that happens to contain a placeholder-looking word in its middle.
    word = g.r.choice(_PLACEHOLDERS)
    mid = len(core) // 2 - len(word) // 2
    new_core = core[:mid] + word + core[mid + len(word) :]
    return v.replace(core, new_core, 1), new_core


def _credentials(g: _Gen) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    named = _named_contexts()
    blocks = _block_contexts()
    for ki, (name, group, var, simple, make) in enumerate(_kinds()):
        for i in range(PER_KIND):
            v, core = make(g)
            disg = _DISGUISES[(ki + i * 5) % len(_DISGUISES)]
            if not simple and disg in ("placeholder", "bidi", "soft_hyphen"):
                disg = "plain"
            if disg == "placeholder":
                if len(core) < 16:
                    disg = "plain"
                else:
                    v, core = _with_placeholder(v, core, g)
            ctx = g.r.choice(named if simple else blocks)
            raw = ctx(var, v)
            text = raw if disg in ("plain", "placeholder") else _disguise(disg, g, var, v, core, ctx)
            if disg == "base64" and text.startswith("echo '"):
                raw = f"{var}={v}\n"
            out.append(
                (Sample(kind=name, group=group, text=text, disguise=disg, secret=_secret_piece(core)), raw)
            )
    return out


def _b58(g: _Gen, n: int) -> str:
    return g.s("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", n)


def _ulid(g: _Gen) -> str:
    return "01J" + g.s("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 23)


_PROSE = [
    "Rotate the GitHub token every 90 days; the reminder is in the team calendar.",
    "Never paste the Stripe secret key in Slack — use the vault link instead.",
    "The AWS secret access key is shown only once, so store it in 1Password right away.",
    "Policy: API keys for OpenAI live in Doppler, not in .env files.",
    "Der Datenbank-Passwort wird jede Woche automatisch rotiert.",
    "La clé API de Mailgun doit être régénérée après le départ d'un employé.",
    "Токен бота Telegram храним только в секретах CI.",
    "トークンはVaultに保存し、コードには書かないこと。",
    "Reminder: revoke the personal access token when the contractor leaves.",
    "We moved SLACK_BOT_TOKEN out of the repo into the sealed secret on Tuesday.",
]


def _lookalike_kinds() -> list[tuple[str, Callable[[_Gen], str]]]:
    return [
        (
            "git_commit_sha",
            lambda g: g.r.choice(
                [
                    f"commit {g.h(40)}\nAuthor: Dana <dana@acme.example>\n\n    Fix token count in the summariser",
                    f'Reverted {g.h(7)} ("add idempotency key"), bisect points at {g.h(40)}.',
                    f"git cherry-pick {g.h(40)}  # the secret-rotation script fix",
                ]
            ),
        ),
        (
            "sha256_checksum",
            lambda g: (
                f"SHA256 ({g.r.choice(['kenfold-1.8.0.tar.gz', 'cli-linux-amd64', 'installer.msi'])}) = {g.h(64)}"
            ),
        ),
        ("sha512_checksum", lambda g: f"{g.h(128)}  release/agent-2.3.1-darwin-arm64.zip"),
        (
            "uuid_primary_key",
            lambda g: g.r.choice(
                [
                    f"SELECT * FROM orders WHERE id = '{g.uuid()}';  -- primary key from the bug report",
                    f"tenant_id: {g.uuid()}\nsecret_name: stripe-prod (value stored in Key Vault)",
                    f"The record's primary key is {g.uuid()}, the foreign key {g.uuid()}.",
                ]
            ),
        ),
        ("ulid_request_id", lambda g: f"request_id={_ulid(g)} status=502 upstream=payments latency_ms=3012"),
        ("ksuid_event_id", lambda g: f"event {g.s(ALNUM, 27)} queued (ksuid), retry token count=3"),
        (
            "stripe_public_object_id",
            lambda g: g.r.choice(
                [
                    f"Refunded charge ch_{g.a(24)} for customer cus_{g.a(14)}.",
                    f"PaymentIntent pi_{g.a(24)} succeeded; event evt_{g.a(24)}.",
                    f"Idempotency-Key: {g.uuid()}\nPOST /v1/payment_intents -> pi_{g.a(24)}",
                ]
            ),
        ),
        (
            "slack_ids",
            lambda g: (
                f"Posted to channel C0{g.s(UPNUM, 9)} by user U0{g.s(UPNUM, 9)} in team T0{g.s(UPNUM, 8)}"
            ),
        ),
        (
            "aws_arn_and_account",
            lambda g: g.r.choice(
                [
                    f"arn:aws:iam::{g.d(12)}:role/deploy-{g.s(LOWNUM, 8)}",
                    f"arn:aws:secretsmanager:eu-west-1:{g.d(12)}:secret:prod/db-password-{g.a(6)}",
                    f"Account ID {g.d(12)}, KMS key id {g.uuid()} (the key material never leaves KMS)",
                ]
            ),
        ),
        # AWS documentation's own example keys, written exactly as the IAM docs show them.
        (
            "aws_documented_example",
            lambda g: g.r.choice(
                [
                    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                    "Per the AWS docs, an access key looks like AKIAIOSFODNN7EXAMPLE.",
                    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # from the CLI user guide",
                ]
            ),
        ),
        ("trace_id", lambda g: f"traceparent: 00-{g.h(32)}-{g.h(16)}-01  (trace id for the slow checkout)"),
        (
            "base64_plain_text",
            lambda g: (
                "metadata annotation: "
                + base64.b64encode(
                    g.r.choice(
                        [
                            "deployment finished without errors on all nodes",
                            "The quick brown fox jumps over the lazy dog again",
                            "config generated by helm 3.14 for namespace payments",
                        ]
                    ).encode()
                ).decode()
            ),
        ),
        (
            "base64_image",
            lambda g: "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + g.s(B64, 120) + "=)",
        ),
        (
            "npm_integrity",
            lambda g: (
                f'"node_modules/left-pad": {{\n  "version": "1.3.0",\n  "integrity": "sha512-{g.s(B64, 86)}=="\n}}'
            ),
        ),
        (
            "documented_placeholder",
            lambda g: g.r.choice(
                [
                    "STRIPE_SECRET_KEY=sk_test_<your key>",
                    "OPENAI_API_KEY=<YOUR_API_KEY>",
                    "token: xoxb-your-bot-token",
                    "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                    'api_key: "YOUR_API_KEY_HERE"',
                    'password = "<password>"',
                    "DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/DBNAME",
                ]
            ),
        ),
        (
            "env_reference",
            lambda g: g.r.choice(
                [
                    "API_KEY=${API_KEY}",
                    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
                    'token = os.environ["TOKEN"]',
                    "valueFrom:\n  secretKeyRef:\n    name: stripe\n    key: secret-key",
                    "GH_TOKEN: ${{ secrets.GH_TOKEN }}",
                    "db_password = var.db_password  # from TF_VAR_db_password",
                    "const key = process.env.OPENAI_API_KEY;",
                ]
            ),
        ),
        ("ssh_public_key", lambda g: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.s(B64, 43)} dana@laptop"),
        (
            "pem_public_key",
            lambda g: (
                "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
                + g.s(B64, 20)
                + "\n"
                + g.s(B64, 64)
                + "\n-----END PUBLIC KEY-----"
            ),
        ),
        (
            "webpack_chunk_hash",
            lambda g: (
                f'<script src="/static/js/main.{g.h(8)}.chunk.js"></script> <link href="/css/app.{g.h(20)}.css">'
            ),
        ),
        (
            "youtube_id",
            lambda g: f"Recording of the security review: https://www.youtube.com/watch?v={g.u(11)}",
        ),
        ("docker_image_digest", lambda g: f"image: ghcr.io/acme/api@sha256:{g.h(64)}"),
        (
            "nix_store_path",
            lambda g: f"/nix/store/{g.s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.13",
        ),
        (
            "ipfs_cid",
            lambda g: g.r.choice(
                [f"ipfs://bafybei{g.s('abcdefghijklmnopqrstuvwxyz234567', 52)}", f"ipfs cat Qm{_b58(g, 44)}"]
            ),
        ),
        ("secret_prose", lambda g: g.r.choice(_PROSE)),
        ("key_fingerprint", lambda g: f"ED25519 key fingerprint is SHA256:{g.s(B64, 43)}."),
        (
            "stripe_publishable_key",
            lambda g: (
                f"<script>Stripe('pk_live_{g.a(99)}')</script>  <!-- publishable key, public by design -->"
            ),
        ),
        (
            "k8s_pod_name",
            lambda g: f"pod/api-{g.h(10)}-{g.s(LOWNUM, 5)} restarted 3 times; secret volume mounted OK",
        ),
        (
            "token_count_log",
            lambda g: (
                f"usage: prompt_tokens={g.d(4)} completion_tokens={g.d(3)} model=gpt-4o request id req_{g.h(32)}"
            ),
        ),
        (
            "cargo_lock_checksum",
            lambda g: f'[[package]]\nname = "serde"\nversion = "1.0.197"\nchecksum = "{g.h(64)}"',
        ),
    ]


def _lookalikes(g: _Gen) -> list[tuple[Sample, str]]:
    out: list[tuple[Sample, str]] = []
    for name, make in _lookalike_kinds():
        for _ in range(LOOKALIKES_PER_KIND):
            text = make(g)
            out.append((Sample(kind=name, group="lookalike", text=text), text))
    return out


def build(seed: int = SEED) -> list[tuple[Sample, str]]:
    """Each sample with its text before disguising (for the shape test's checks)."""
    g = _Gen(random.Random(seed))
    return _credentials(g) + _lookalikes(g)


def fifteenth_part() -> list[Sample]:
    return [sample for sample, _ in build()]
