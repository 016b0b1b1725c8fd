"""The sixth independent part of the secret corpus: credentials generated from the formats the providers
document (prefixes, lengths, alphabets, connection-string and key-file shapes), written without reading the
filter, inside memory texts an agent might keep, plus look-alikes that are not secrets.

Each credential kind's comment says where its shape comes from. Values come from one fixed-seed
`random.Random`, so the corpus is the same on every run and no real token is ever copied."""

import base64
import json
import random
import string
from collections.abc import Callable
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 6_061_2026

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
UPNUM = UP + DIG
LONUM = LO + DIG
HEXL = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = LO + "234567"


class _Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        h = self.s(HEXL, 32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def b64(self, n_bytes: int) -> str:
        return base64.b64encode(bytes(self.r.randrange(256) for _ in range(n_bytes))).decode()

    def b64url(self, n_bytes: int) -> str:
        return (
            base64.urlsafe_b64encode(bytes(self.r.randrange(256) for _ in range(n_bytes)))
            .decode()
            .rstrip("=")
        )

    def words_pw(self) -> str:
        words = [
            "harbor",
            "violet",
            "cactus",
            "meadow",
            "quartz",
            "falcon",
            "tundra",
            "pepper",
            "orbit",
            "lantern",
        ]
        return f"{self.r.choice(words).title()}{self.r.choice('!#%&*')}{self.r.choice(words)}{self.s(DIG, 4)}"


def _mid(token: str, start: int = 0) -> str:
    """A middle piece of the random body (from `start`), at least 8 characters."""
    body = token[start:]
    n = max(8, len(body) // 3)
    n = min(n, len(body))
    off = (len(body) - n) // 2
    return body[off : off + n]


# A kind: (name, group, variable name, generator returning (value, secret piece), placeholder-able prefix length)
# The prefix length says where the random body starts, so the placeholder disguise writes its word there.
KindGen = Callable[[_Gen], tuple[str, str]]


def _tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> KindGen:
    def g(x: _Gen) -> tuple[str, str]:
        body = x.s(alphabet, n)
        return prefix + body + suffix, _mid(body)

    return g


def _gcp_sa(x: _Gen) -> tuple[str, str]:
    # Google Cloud docs "Create and delete service account keys": JSON key file with type, project_id,
    # private_key_id (40 hex), private_key (PKCS#8 PEM), client_email ...iam.gserviceaccount.com.
    body = x.b64(1190)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"
    proj = f"orbit-{x.s(LONUM, 6)}"
    doc = {
        "type": "service_account",
        "project_id": proj,
        "private_key_id": x.s(HEXL, 40),
        "private_key": pem,
        "client_email": f"deployer@{proj}.iam.gserviceaccount.com",
        "client_id": x.s(DIG, 21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(doc, indent=2), lines[5][10:40]


def _pem_rsa(x: _Gen) -> tuple[str, str]:
    # RFC 7468 / OpenSSL: PKCS#1 "BEGIN RSA PRIVATE KEY" block, base64 in 64-char lines.
    body = x.b64(1192)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----", lines[
        7
    ][8:40]


def _openssh(x: _Gen) -> tuple[str, str]:
    # OpenSSH PROTOCOL.key: "BEGIN OPENSSH PRIVATE KEY", base64 starting with "openssh-key-v1\0" (b3BlbnNzaC1rZXktdjEA).
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQAAACA" + x.b64(300)
    lines = [body[i : i + 70] for i in range(0, len(body), 70)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(
        lines
    ) + "\n-----END OPENSSH PRIVATE KEY-----", lines[3][10:40]


def _oci_pem(x: _Gen) -> tuple[str, str]:
    # Oracle Cloud "Required Keys and OCIDs": API signing key is a PEM private key referenced from ~/.oci/config.
    body = x.b64(1190)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\nOCI_API_KEY"
    return pem, lines[4][12:44]


def _azure_conn(x: _Gen) -> tuple[str, str]:
    # Azure Storage docs "Configure a connection string": DefaultEndpointsProtocol;AccountName;AccountKey (64-byte base64).
    key = x.b64(64)
    return (
        f"DefaultEndpointsProtocol=https;AccountName=st{x.s(LONUM, 10)};AccountKey={key};EndpointSuffix=core.windows.net",
        _mid(key),
    )


def _azure_sas(x: _Gen) -> tuple[str, str]:
    # Azure "Create a service SAS": sv, ss, srt, sp, se, st, spr, sig (HMAC-SHA256, base64 then URL-encoded).
    sig = quote(x.b64(32), safe="")
    return (
        f"https://st{x.s(LONUM, 8)}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2027-03-01T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={sig}",
        sig[6:30],
    )


def _azure_sp_secret(x: _Gen) -> tuple[str, str]:
    # Microsoft Entra app client secrets: 40 chars, 3 chars + "8Q~" (or 7Q~) + 34 chars of [A-Za-z0-9_~.-].
    body = x.s(ALNUM + "_~.-", 34)
    return x.s(ALNUM, 3) + "8Q~" + body, _mid(body)


def _slack_webhook(x: _Gen) -> tuple[str, str]:
    # Slack "Sending messages using incoming webhooks": https://hooks.slack.com/services/T.../B.../24 chars.
    s = x.s(ALNUM, 24)
    return f"https://hooks.slack.com/services/T{x.s(UPNUM, 10)}/B{x.s(UPNUM, 10)}/{s}", _mid(s)


def _slack_bot(x: _Gen) -> tuple[str, str]:
    # Slack "Token types": bot tokens xoxb-<team digits>-<bot digits>-<24 alnum>.
    s = x.s(ALNUM, 24)
    return f"xoxb-{x.s(DIG, 12)}-{x.s(DIG, 13)}-{s}", _mid(s)


def _slack_user(x: _Gen) -> tuple[str, str]:
    # Slack "Token types": user tokens xoxp-<digits>-<digits>-<digits>-<32 hex>.
    s = x.s(HEXL, 32)
    return f"xoxp-{x.s(DIG, 12)}-{x.s(DIG, 12)}-{x.s(DIG, 13)}-{s}", _mid(s)


def _discord_bot(x: _Gen) -> tuple[str, str]:
    # Discord developer docs: bot token = base64(user id) . 6-char timestamp . 27+ char HMAC (base64url).
    uid = base64.b64encode(x.s(DIG, 18).encode()).decode().rstrip("=")
    h = x.s(B64URL, 38)
    return f"{uid}.{x.s(B64URL, 6)}.{h}", _mid(h)


def _discord_webhook(x: _Gen) -> tuple[str, str]:
    # Discord "Webhook resource": https://discord.com/api/webhooks/{id}/{token} (68-char token).
    t = x.s(B64URL, 68)
    return f"https://discord.com/api/webhooks/{x.s(DIG, 19)}/{t}", _mid(t)


def _telegram(x: _Gen) -> tuple[str, str]:
    # Telegram Bot API: token "123456789:AA" + 33 chars [A-Za-z0-9_-] from @BotFather.
    t = "AA" + x.s(B64URL, 33)
    return f"{x.s(DIG, 10)}:{t}", _mid(t, 2)


def _teams_webhook(x: _Gen) -> tuple[str, str]:
    # Microsoft Teams incoming webhook URL: <tenant>.webhook.office.com/webhookb2/<guid>@<guid>/IncomingWebhook/<32 hex>/<guid>.
    h = x.s(HEXL, 32)
    return (
        f"https://contoso{x.s(LONUM, 4)}.webhook.office.com/webhookb2/{x.uuid()}@{x.uuid()}/IncomingWebhook/{h}/{x.uuid()}",
        _mid(h),
    )


def _braintree(x: _Gen) -> tuple[str, str]:
    # Braintree/PayPal docs: access tokens "access_token$production$<merchant 16>$<32 hex>".
    h = x.s(HEXL, 32)
    return f"access_token$production${x.s(LONUM, 16)}${h}", _mid(h)


def _mercadopago(x: _Gen) -> tuple[str, str]:
    # Mercado Pago "Credentials": production access token APP_USR-<16 digits>-<6 digits>-<32 hex>-<9 digits>.
    h = x.s(HEXL, 32)
    return f"APP_USR-{x.s(DIG, 16)}-{x.s(DIG, 6)}-{h}-{x.s(DIG, 9)}", _mid(h)


def _razorpay(x: _Gen) -> tuple[str, str]:
    # Razorpay "Generate API keys": key id rzp_live_<14>, key secret 24 alnum shown once.
    sec = x.s(ALNUM, 24)
    return f"RAZORPAY_KEY_ID=rzp_live_{x.s(ALNUM, 14)}\nRAZORPAY_KEY_SECRET={sec}", _mid(sec)


def _url_pw(scheme: str, host: str, port: int, db: str, user: str = "app") -> KindGen:
    def g(x: _Gen) -> tuple[str, str]:
        pw = x.s(ALNUM, 22)
        return f"{scheme}://{user}:{pw}@{host}-{x.s(LONUM, 5)}.internal:{port}/{db}", _mid(pw)

    return g


def _mongo_srv(x: _Gen) -> tuple[str, str]:
    # MongoDB "Connection String URI Format": mongodb+srv://user:password@cluster0.xxxxx.mongodb.net/db?retryWrites=true.
    pw = x.s(ALNUM, 20)
    return (
        f"mongodb+srv://svc_ingest:{pw}@cluster0.{x.s(LONUM, 5)}.mongodb.net/events?retryWrites=true&w=majority",
        _mid(pw),
    )


def _pgpass(x: _Gen) -> tuple[str, str]:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password.
    pw = x.words_pw() + x.s(ALNUM, 6)
    return f"db-{x.s(LONUM, 4)}.prod.lan:5432:billing:report_ro:{pw}", pw[2:-2] if len(pw) > 12 else pw


def _mssql(x: _Gen) -> tuple[str, str]:
    # SQL Server / ADO.NET connection strings: Server=...;Database=...;User Id=...;Password=...;
    pw = x.s(ALNUM + "!#$", 20)
    return (
        f"Server=tcp:sql-{x.s(LONUM, 6)}.database.windows.net,1433;Database=crm;User Id=crm_app;Password={pw};Encrypt=True;",
        _mid(pw),
    )


def _jwt(role: str) -> KindGen:
    # Supabase docs "API keys": anon/service_role keys are HS256 JWTs with {"iss":"supabase","ref":..,"role":..}.
    def g(x: _Gen) -> tuple[str, str]:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        claims = {"iss": "supabase", "ref": x.s(LO, 20), "role": role, "iat": 1764547200, "exp": 2080123200}
        pay = (
            base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=")
        )
        sig = x.b64url(32)
        return f"{head}.{pay}.{sig}", _mid(sig)

    return g


def _docker_auth(x: _Gen) -> tuple[str, str]:
    # Docker "docker login" docs: ~/.docker/config.json "auths": {"<registry>": {"auth": base64("user:password")}}.
    pw = x.s(ALNUM, 24)
    auth = base64.b64encode(f"ci-bot:{pw}".encode()).decode()
    return json.dumps({"auths": {"registry.example-corp.io": {"auth": auth}}}, indent=2), _mid(auth)


def _basic_header(x: _Gen) -> tuple[str, str]:
    # RFC 7617: Authorization: Basic base64(user-id ":" password).
    pw = x.s(ALNUM, 20)
    enc = base64.b64encode(f"deploy:{pw}".encode()).decode()
    return f"Authorization: Basic {enc}", _mid(enc)


def _netrc(x: _Gen) -> tuple[str, str]:
    # GNU inetutils / curl docs: .netrc "machine host login user password secret".
    pw = x.s(ALNUM, 26)
    return f"machine git.intra-{x.s(LONUM, 4)}.net login buildbot password {pw}", _mid(pw)


def _npmrc(x: _Gen) -> tuple[str, str]:
    # npm docs "About access tokens": granular tokens npm_ + 36 alnum, stored as //registry.npmjs.org/:_authToken=.
    t = x.s(ALNUM, 36)
    return f"//registry.npmjs.org/:_authToken=npm_{t}", _mid(t)


def _pypirc(x: _Gen) -> tuple[str, str]:
    # PyPI "API tokens": username __token__, password pypi-AgEIcHlwaS5vcmc... (macaroon, base64url), in .pypirc.
    t = "pypi-AgEIcHlwaS5vcmc" + x.s(B64URL, 150)
    return f"[pypi]\n  username = __token__\n  password = {t}", _mid(t, 20)


def _kubeconfig(x: _Gen) -> tuple[str, str]:
    # Kubernetes "Configure Access to Multiple Clusters": users[].user.token (service-account JWT).
    head = (
        base64.urlsafe_b64encode(b'{"alg":"RS256","kid":"' + x.s(ALNUM, 20).encode() + b'"}')
        .decode()
        .rstrip("=")
    )
    claims = {"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ci:deployer"}
    pay = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    sig = x.b64url(256)
    tok = f"{head}.{pay}.{sig}"
    return f"users:\n- name: ci-deployer\n  user:\n    token: {tok}", _mid(sig)


def _atlassian(x: _Gen) -> tuple[str, str]:
    # Atlassian "Manage API tokens": tokens start ATATT3xFfGF0 followed by ~180 chars and an 8-hex checksum.
    t = x.s(B64URL, 171)
    return f"ATATT3xFfGF0{t}={x.s(HEXL, 8).upper()}", _mid(t)


def _anthropic(x: _Gen) -> tuple[str, str]:
    # Anthropic console: API keys sk-ant-api03-<93 base64url>AA.
    t = x.s(B64URL, 93)
    return f"sk-ant-api03-{t}AA", _mid(t)


def _openai(x: _Gen) -> tuple[str, str]:
    # OpenAI platform: project keys "sk-proj-" followed by a long base64url body (T3BlbkFJ marker inside).
    a, b = x.s(B64URL, 74), x.s(B64URL, 74)
    return f"sk-proj-{a}T3BlbkFJ{b}", _mid(a)


def _twilio(x: _Gen) -> tuple[str, str]:
    # Twilio "Auth tokens and how to change them": Account SID AC+32 hex, Auth Token 32 hex.
    tok = x.s(HEXL, 32)
    return f"TWILIO_ACCOUNT_SID=AC{x.s(HEXL, 32)}\nTWILIO_AUTH_TOKEN={tok}", _mid(tok)


def _dynatrace(x: _Gen) -> tuple[str, str]:
    # Dynatrace "Access tokens": dt0c01.<24 upper alnum public>.<64 upper alnum secret>.
    s = x.s(UPNUM, 64)
    return f"dt0c01.{x.s(UPNUM, 24)}.{s}", _mid(s)


def _grafana_sa(x: _Gen) -> tuple[str, str]:
    # Grafana "Service accounts": tokens glsa_<32 alnum>_<8 hex checksum>.
    s = x.s(ALNUM, 32)
    return f"glsa_{s}_{x.s(HEXL, 8)}", _mid(s)


def _grafana_cloud(x: _Gen) -> tuple[str, str]:
    # Grafana Cloud access policies: tokens glc_ + base64 of a JSON {"o":..,"n":..,"k":..,"m":..}.
    k = x.s(ALNUM, 24)
    blob = base64.b64encode(
        json.dumps({"o": x.s(DIG, 6), "n": "stack-write", "k": k, "m": {"r": "prod-eu-west-2"}}).encode()
    ).decode()
    return "glc_" + blob, _mid(blob)


def _terraform(x: _Gen) -> tuple[str, str]:
    # HCP Terraform "API tokens": <14 alnum>.atlasv1.<67 alnum>.
    s = x.s(ALNUM, 67)
    return f"{x.s(ALNUM, 14)}.atlasv1.{s}", _mid(s)


def _doppler(x: _Gen) -> tuple[str, str]:
    # Doppler "Service tokens": dp.st.<config>.<40 alnum>.
    s = x.s(ALNUM, 40)
    return f"dp.st.prd.{s}", _mid(s)


def _sendgrid(x: _Gen) -> tuple[str, str]:
    # SendGrid "API keys": SG.<22 base64url>.<43 base64url>.
    s = x.s(B64URL, 43)
    return f"SG.{x.s(B64URL, 22)}.{s}", _mid(s)


def _airtable(x: _Gen) -> tuple[str, str]:
    # Airtable "Personal access tokens": pat<14 alnum>.<64 hex>.
    s = x.s(HEXL, 64)
    return f"pat{x.s(ALNUM, 14)}.{s}", _mid(s)


def _asana(x: _Gen) -> tuple[str, str]:
    # Asana "Personal access token": 1/<user gid digits>:<32 hex> (older form) and 2/<gid>/<gid>:<32 hex>.
    s = x.s(HEXL, 32)
    return f"2/{x.s(DIG, 16)}/{x.s(DIG, 16)}:{s}", _mid(s)


def _postman(x: _Gen) -> tuple[str, str]:
    # Postman "Generate an API key": PMAK-<24 hex>-<34 hex>.
    s = x.s(HEXL, 34)
    return f"PMAK-{x.s(HEXL, 24)}-{s}", _mid(s)


def _hubspot(x: _Gen) -> tuple[str, str]:
    # HubSpot private apps: access tokens pat-<region>-<uuid>.
    u = x.uuid()
    return f"pat-na1-{u}", u[4:28]


def _github_fg(x: _Gen) -> tuple[str, str]:
    # GitHub docs "About authentication": fine-grained PATs github_pat_<22>_<59> of [A-Za-z0-9].
    a, b = x.s(ALNUM, 22), x.s(ALNUM, 59)
    return f"github_pat_{a}_{b}", _mid(b)


def _paystack(x: _Gen) -> tuple[str, str]:
    # Paystack docs "API keys": secret keys sk_live_<40 hex>.
    s = x.s(HEXL, 40)
    return f"sk_live_{s}", _mid(s)


def _flutterwave(x: _Gen) -> tuple[str, str]:
    # Flutterwave "API keys": FLWSECK-<32 hex>-X.
    s = x.s(HEXL, 32)
    return f"FLWSECK-{s}-X", _mid(s)


def _jenkins(x: _Gen) -> tuple[str, str]:
    # Jenkins API tokens: 11 + 32 hex (34 chars), used as user:token in basic auth.
    s = x.s(HEXL, 32)
    return f"11{s}", _mid(s)


def _ibm(x: _Gen) -> tuple[str, str]:
    # IBM Cloud IAM API keys: 44 chars [A-Za-z0-9_-].
    s = x.s(B64URL, 44)
    return s, _mid(s)


# name, group, secret-looking variable name, generator, random body start (for the placeholder disguise; -1 = none)
KINDS: list[tuple[str, str, str, KindGen, int]] = [
    # --- cloud ---
    # AWS IAM docs "Manage access keys": access key id AKIA + 16 upper alnum; secret 40 base64 chars.
    ("aws_access_key_id", "cloud", "AWS_ACCESS_KEY_ID", _tok("AKIA", UP + "234567", 16), 4),
    ("aws_secret_access_key", "cloud", "aws_secret_access_key", _tok("", ALNUM + "+/", 40), 0),
    # AWS STS temporary credentials: ASIA + 16.
    ("aws_session_key_id", "cloud", "AWS_ACCESS_KEY_ID", _tok("ASIA", UP + "234567", 16), 4),
    # Google Cloud "API keys": AIza + 35 chars [A-Za-z0-9_-].
    ("gcp_api_key", "cloud", "GOOGLE_MAPS_API_KEY", _tok("AIza", B64URL, 35), 4),
    ("gcp_service_account_json", "cloud", "GOOGLE_APPLICATION_CREDENTIALS_JSON", _gcp_sa, -1),
    ("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", _azure_conn, -1),
    ("azure_sas_url", "cloud", "BACKUP_SAS_URL", _azure_sas, -1),
    ("azure_client_secret", "cloud", "AZURE_CLIENT_SECRET", _azure_sp_secret, 6),
    # DigitalOcean "personal access tokens": dop_v1_ + 64 hex.
    ("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", _tok("dop_v1_", HEXL, 64), 7),
    # Alibaba Cloud RAM AccessKey: id LTAI + 20 alnum; secret 30 alnum.
    ("alibaba_access_key_id", "cloud", "ALIBABA_CLOUD_ACCESS_KEY_ID", _tok("LTAI", ALNUM, 20), 4),
    ("alibaba_access_key_secret", "cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", _tok("", ALNUM, 30), 0),
    # Tencent Cloud CAM: SecretId AKID + 32 alnum; SecretKey 32 alnum.
    ("tencent_secret_id", "cloud", "TENCENTCLOUD_SECRET_ID", _tok("AKID", ALNUM, 32), 4),
    # Hetzner Cloud API token: 64 alnum.
    ("hetzner_token", "cloud", "HCLOUD_TOKEN", _tok("", ALNUM, 64), 0),
    # Linode/Akamai personal access token: 64 hex.
    ("linode_token", "cloud", "LINODE_TOKEN", _tok("", HEXL, 64), 0),
    ("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", _ibm, 0),
    ("oci_api_signing_key", "cloud", "OCI_KEY_FILE", _oci_pem, -1),
    # Scaleway IAM: secret key is a UUID, access key SCW + 17 upper alnum.
    ("scaleway_secret_key", "cloud", "SCW_SECRET_KEY", lambda x: (lambda u: (u, u[4:28]))(x.uuid()), -1),
    # Yandex Cloud OAuth tokens: y0_ + base64url (about 55 chars).
    ("yandex_oauth_token", "cloud", "YC_TOKEN", _tok("y0_AgAAAA", B64URL, 50), 9),
    # Cloudflare API tokens: 40 chars [A-Za-z0-9_-].
    ("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", _tok("", B64URL, 40), 0),
    # --- ci ---
    # GitHub docs: classic PAT ghp_ + 36 alnum; OAuth gho_; app installation ghs_; refresh ghr_.
    ("github_pat_classic", "ci", "GITHUB_TOKEN", _tok("ghp_", ALNUM, 36), 4),
    ("github_pat_fine_grained", "ci", "GH_TOKEN", _github_fg, 33),
    ("github_oauth_token", "ci", "GITHUB_OAUTH_TOKEN", _tok("gho_", ALNUM, 36), 4),
    ("github_app_token", "ci", "GITHUB_APP_TOKEN", _tok("ghs_", ALNUM, 36), 4),
    # GitLab "Token overview": personal access token glpat- + 20 chars; runner auth token glrt-.
    ("gitlab_pat", "ci", "GITLAB_TOKEN", _tok("glpat-", B64URL, 20), 6),
    ("gitlab_runner_token", "ci", "CI_RUNNER_TOKEN", _tok("glrt-", B64URL, 20), 5),
    # Buildkite API access tokens: bkua_ + 40 hex.
    ("buildkite_token", "ci", "BUILDKITE_API_TOKEN", _tok("bkua_", HEXL, 40), 5),
    # CircleCI personal API token: 40 hex (CIRCLE_TOKEN).
    ("circleci_token", "ci", "CIRCLE_TOKEN", _tok("", HEXL, 40), 0),
    ("jenkins_api_token", "ci", "JENKINS_API_TOKEN", _jenkins, 2),
    # Azure DevOps PAT: 52 chars lowercase base32 (older) form.
    ("azure_devops_pat", "ci", "AZURE_DEVOPS_EXT_PAT", _tok("", B32, 52), 0),
    # Bitbucket app passwords: ATBB + 32 alnum.
    ("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", _tok("ATBB", ALNUM, 32), 4),
    ("terraform_cloud_token", "ci", "TFE_TOKEN", _terraform, 23),
    # Netlify personal access tokens: nfp_ + 40 alnum.
    ("netlify_token", "ci", "NETLIFY_AUTH_TOKEN", _tok("nfp_", ALNUM, 40), 4),
    # Vercel tokens: 24 alnum.
    ("vercel_token", "ci", "VERCEL_TOKEN", _tok("", ALNUM, 24), 0),
    ("doppler_service_token", "ci", "DOPPLER_TOKEN", _doppler, 10),
    # --- chat ---
    ("slack_bot_token", "chat", "SLACK_BOT_TOKEN", _slack_bot, -1),
    ("slack_user_token", "chat", "SLACK_USER_TOKEN", _slack_user, -1),
    ("slack_webhook_url", "chat", "SLACK_WEBHOOK_URL", _slack_webhook, -1),
    ("discord_bot_token", "chat", "DISCORD_BOT_TOKEN", _discord_bot, -1),
    ("discord_webhook_url", "chat", "DISCORD_WEBHOOK", _discord_webhook, -1),
    ("telegram_bot_token", "chat", "TELEGRAM_BOT_TOKEN", _telegram, -1),
    ("teams_webhook_url", "chat", "TEAMS_WEBHOOK_URL", _teams_webhook, -1),
    ("twilio_auth_token", "chat", "TWILIO_CREDS", _twilio, -1),
    # Mattermost personal access tokens: 26 lowercase alnum.
    ("mattermost_token", "chat", "MM_ACCESS_TOKEN", _tok("", LONUM, 26), 0),
    # --- payment ---
    # Stripe "API keys": sk_live_ / rk_live_ + 99 alnum (24 in older keys); webhook secrets whsec_ + 32.
    ("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", _tok("sk_live_", ALNUM, 99), 8),
    ("stripe_restricted_key", "payment", "STRIPE_RESTRICTED_KEY", _tok("rk_live_", ALNUM, 24), 8),
    ("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", _tok("whsec_", ALNUM, 32), 6),
    ("braintree_access_token", "payment", "BRAINTREE_ACCESS_TOKEN", _braintree, -1),
    # Square "Access tokens": production EAAA + 60 base64url.
    ("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", _tok("EAAA", B64URL, 60), 4),
    ("razorpay_key_secret", "payment", "RAZORPAY", _razorpay, -1),
    ("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", _paystack, 8),
    ("flutterwave_secret_key", "payment", "FLW_SECRET_KEY", _flutterwave, 8),
    ("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", _mercadopago, -1),
    # Mollie "API keys": live_ + 30 alnum.
    ("mollie_api_key", "payment", "MOLLIE_API_KEY", _tok("live_", ALNUM, 30), 5),
    # Shopify Admin API access tokens: shpat_ + 32 hex.
    ("shopify_admin_token", "payment", "SHOPIFY_ACCESS_TOKEN", _tok("shpat_", HEXL, 32), 6),
    # Adyen API keys: long base64-ish starting AQE.
    ("adyen_api_key", "payment", "ADYEN_API_KEY", _tok("AQE", ALNUM + "+/=", 120), 3),
    # --- database ---
    # PostgreSQL libpq "Connection URIs": postgresql://user:password@host:port/db.
    ("postgres_url", "database", "DATABASE_URL", _url_pw("postgresql", "pg", 5432, "orders"), -1),
    # MySQL Connector/J-style URL with credentials.
    ("mysql_url", "database", "MYSQL_URL", _url_pw("mysql", "mysql", 3306, "shop", "shop_rw"), -1),
    # Redis URI scheme (IANA): redis://[user:password@]host:port/db.
    ("redis_url", "database", "REDIS_URL", _url_pw("rediss", "cache", 6380, "0", "default"), -1),
    # AMQP URI spec (RabbitMQ): amqp://user:pass@host:port/vhost.
    ("amqp_url", "database", "CELERY_BROKER_URL", _url_pw("amqps", "mq", 5671, "jobs", "celery"), -1),
    ("mongodb_srv_url", "database", "MONGODB_URI", _mongo_srv, -1),
    ("pgpass_line", "database", "PGPASSFILE", _pgpass, -1),
    ("mssql_connection_string", "database", "ConnectionStrings__Crm", _mssql, -1),
    # PlanetScale passwords: pscale_pw_ + 43 base64url.
    ("planetscale_password", "database", "PLANETSCALE_PASSWORD", _tok("pscale_pw_", B64URL, 43), 10),
    ("supabase_service_role_jwt", "database", "SUPABASE_SERVICE_ROLE_KEY", _jwt("service_role"), -1),
    # A database password under a secret name, made of words and digits.
    ("db_password_words", "database", "DB_PASSWORD", lambda x: (lambda p: (p, p[1:-1]))(x.words_pw()), -1),
    # --- registry ---
    ("npmrc_auth_token", "registry", "NPMRC", _npmrc, -1),
    # npm granular token on its own.
    ("npm_token", "registry", "NPM_TOKEN", _tok("npm_", ALNUM, 36), 4),
    ("pypi_token", "registry", "TWINE_PASSWORD", _pypirc, -1),
    ("docker_config_auth", "registry", "DOCKER_CONFIG_JSON", _docker_auth, -1),
    # Docker Hub "Personal access tokens": dckr_pat_ + 27 base64url.
    ("dockerhub_pat", "registry", "DOCKERHUB_TOKEN", _tok("dckr_pat_", B64URL, 27), 9),
    # RubyGems API keys: rubygems_ + 48 hex.
    ("rubygems_api_key", "registry", "GEM_HOST_API_KEY", _tok("rubygems_", HEXL, 48), 9),
    # NuGet.org API keys: oy2 + 43 lowercase alnum.
    ("nuget_api_key", "registry", "NUGET_API_KEY", _tok("oy2", LONUM, 43), 3),
    # JFrog Artifactory API keys: AKCp + 69 alnum.
    ("artifactory_api_key", "registry", "ARTIFACTORY_API_KEY", _tok("AKCp", ALNUM, 69), 4),
    # crates.io API tokens: cio + 32 alnum.
    ("crates_io_token", "registry", "CARGO_REGISTRY_TOKEN", _tok("cio", ALNUM, 32), 3),
    ("netrc_password", "registry", "NETRC", _netrc, -1),
    # --- observability ---
    # Datadog "API and Application Keys": API key 32 hex, application key 40 hex.
    ("datadog_api_key", "observability", "DD_API_KEY", _tok("", HEXL, 32), 0),
    ("datadog_app_key", "observability", "DD_APP_KEY", _tok("", HEXL, 40), 0),
    # New Relic "API keys": license key 40 chars ending NRAL; user key NRAK- + 27 upper alnum.
    ("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", _tok("eu01xx", HEXL, 30, "NRAL"), 6),
    ("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", _tok("NRAK-", UPNUM, 27), 5),
    # Sentry user auth tokens: sntryu_ + 64 hex.
    ("sentry_user_token", "observability", "SENTRY_AUTH_TOKEN", _tok("sntryu_", HEXL, 64), 7),
    ("grafana_service_account_token", "observability", "GRAFANA_TOKEN", _grafana_sa, 5),
    ("grafana_cloud_token", "observability", "GRAFANA_CLOUD_TOKEN", _grafana_cloud, -1),
    ("dynatrace_token", "observability", "DT_API_TOKEN", _dynatrace, -1),
    # Splunk HTTP Event Collector token: a GUID sent as "Authorization: Splunk <token>".
    (
        "splunk_hec_token",
        "observability",
        "SPLUNK_HEC_TOKEN",
        lambda x: (lambda u: (u, u[4:28]))(x.uuid()),
        -1,
    ),
    # Honeycomb ingest keys: hcaik_ + 58 lowercase alnum.
    ("honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", _tok("hcaik_", LONUM, 58), 6),
    # --- ai ---
    ("openai_project_key", "ai", "OPENAI_API_KEY", _openai, 8),
    ("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", _anthropic, 13),
    # Hugging Face "User access tokens": hf_ + 34 letters.
    ("huggingface_token", "ai", "HF_TOKEN", _tok("hf_", UP + LO, 34), 3),
    # Groq API keys: gsk_ + 52 alnum.
    ("groq_api_key", "ai", "GROQ_API_KEY", _tok("gsk_", ALNUM, 52), 4),
    # Replicate API tokens: r8_ + 37 alnum.
    ("replicate_token", "ai", "REPLICATE_API_TOKEN", _tok("r8_", ALNUM, 37), 3),
    # Perplexity API keys: pplx- + 48 alnum.
    ("perplexity_api_key", "ai", "PPLX_API_KEY", _tok("pplx-", ALNUM, 48), 5),
    # xAI API keys: xai- + 80 alnum.
    ("xai_api_key", "ai", "XAI_API_KEY", _tok("xai-", ALNUM, 80), 4),
    # Cohere / Mistral API keys: 40 / 32 alnum, no prefix.
    ("cohere_api_key", "ai", "CO_API_KEY", _tok("", ALNUM, 40), 0),
    ("mistral_api_key", "ai", "MISTRAL_API_KEY", _tok("", ALNUM, 32), 0),
    # DeepSeek keys: sk- + 32 hex.
    ("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", _tok("sk-", HEXL, 32), 3),
    # --- saas ---
    ("sendgrid_api_key", "saas", "SENDGRID_API_KEY", _sendgrid, -1),
    # Mailgun private API keys: key- + 32 hex (older) form.
    ("mailgun_api_key", "saas", "MAILGUN_API_KEY", _tok("key-", HEXL, 32), 4),
    # Mailchimp API keys: 32 hex + "-us" + datacenter digits.
    ("mailchimp_api_key", "saas", "MAILCHIMP_API_KEY", _tok("", HEXL, 32, "-us21"), 0),
    ("atlassian_api_token", "saas", "JIRA_API_TOKEN", _atlassian, 12),
    # Notion internal integration secrets: ntn_ + 46 alnum (older secret_ + 43).
    ("notion_integration_secret", "saas", "NOTION_TOKEN", _tok("ntn_", ALNUM, 46), 4),
    # Linear personal API keys: lin_api_ + 40 alnum.
    ("linear_api_key", "saas", "LINEAR_API_KEY", _tok("lin_api_", ALNUM, 40), 8),
    ("airtable_pat", "saas", "AIRTABLE_TOKEN", _airtable, -1),
    ("hubspot_private_app_token", "saas", "HUBSPOT_ACCESS_TOKEN", _hubspot, -1),
    ("asana_pat", "saas", "ASANA_PAT", _asana, -1),
    ("postman_api_key", "saas", "POSTMAN_API_KEY", _postman, -1),
    # Figma personal access tokens: figd_ + 40 base64url.
    ("figma_pat", "saas", "FIGMA_TOKEN", _tok("figd_", B64URL, 40), 5),
    # Okta API tokens: 00 + 40 base64url.
    ("okta_api_token", "saas", "OKTA_API_TOKEN", _tok("00", B64URL, 40), 2),
    # Auth0 client secrets: 64 base64url.
    ("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", _tok("", B64URL, 64), 0),
    # Dropbox short-lived access tokens: sl. + ~135 base64url.
    ("dropbox_access_token", "saas", "DROPBOX_ACCESS_TOKEN", _tok("sl.", B64URL, 135), 3),
    ("basic_auth_header", "saas", "AUTH_HEADER", _basic_header, -1),
    ("kubeconfig_token", "saas", "KUBECONFIG", _kubeconfig, -1),
    ("rsa_private_key_pem", "saas", "TLS_KEY", _pem_rsa, -1),
    ("openssh_private_key", "saas", "DEPLOY_KEY", _openssh, -1),
]

# Contexts: (name, value) -> text. Many languages, formats and human languages.
Ctx = Callable[[random.Random, str, str], str]

_CONTEXTS: list[Ctx] = [
    lambda r, n, v: (
        f"Incident 2026-11-{r.randint(10, 28)}: the worker crashed on startup until I exported {n}={v} in the unit file."
    ),
    lambda r, n, v: f"$ export {n}='{v}'\n$ ./bin/deploy --env prod\ndeploy: ok ({r.randint(3, 90)}s)",
    lambda r, n, v: (
        f'```yaml\nenv:\n  - name: {n}\n    value: "{v}"\n```\nDeployment env for the billing job.'
    ),
    lambda r, n, v: f'{{"service": "ingest", "{n.lower()}": "{v}", "retries": {r.randint(1, 5)}}}',
    lambda r, n, v: f"[default]\nregion = eu-west-{r.randint(1, 3)}\n{n.lower()} = {v}\n",
    lambda r, n, v: (
        f'resource "vault_generic_secret" "app" {{\n  path = "secret/app"\n  data_json = jsonencode({{ {n.lower()} = "{v}" }})\n}}'
    ),
    lambda r, n, v: (
        f"Hola equipo, os paso la credencial para staging: {v} — no la compartáis fuera del canal."
    ),
    lambda r, n, v: f"Salut ! La clé pour le webhook de recette, c'est {v}. Je la tourne vendredi.",
    lambda r, n, v: f"Moin, hier ist der Zugang für das Monitoring: {n}={v} (bitte nicht ins Wiki kopieren).",
    lambda r, n, v: f"ステージング用のキーです: {v}\n来週ローテーション予定。",
    lambda r, n, v: f'import os\nos.environ.setdefault("{n}", "{v}")  # TODO move to vault before release',
    lambda r, n, v: (
        f"const client = new Client({{\n  token: '{v}',\n  timeout: {r.randint(1, 30)}_000,\n}});"
    ),
    lambda r, n, v: f"| env | variable | value |\n|---|---|---|\n| prod | {n} | {v} |",
    lambda r, n, v: (
        f'<configuration>\n  <appSettings>\n    <add key="{n}" value="{v}" />\n  </appSettings>\n</configuration>'
    ),
    lambda r, n, v: (
        f"2026-12-0{r.randint(1, 5)}T0{r.randint(0, 9)}:12:44Z ERROR auth failed for request with {n.lower()}={v} status=401"
    ),
    lambda r, n, v: (
        f"Subject: access for the new contractor\n\nHi Priya,\n\nhere is what you need:\n\n{v}\n\nCheers, Tom"
    ),
    lambda r, n, v: (
        f"PR #{r.randint(100, 999)} description: fixes the nightly sync. Tested locally with\n{n}={v}\nagainst the sandbox."
    ),
    lambda r, n, v: f'# notebook cell [{r.randint(1, 40)}]\nclient = connect(api_key="{v}")\nclient.ping()',
    lambda r, n, v: (
        f"Screenshot of the settings page (transcribed):\n  Name: ci-bot\n  Secret: {v}\n  Created: 3 days ago"
    ),
    lambda r, n, v: f'FROM python:3.12-slim\nENV {n}={v}\nCMD ["python", "-m", "worker"]',
    lambda r, n, v: f'[tool.app.secrets]\n{n.lower()} = "{v}"',
    lambda r, n, v: (
        f'Traceback (most recent call last):\n  File "sync.py", line {r.randint(10, 300)}, in run\n    login("{v}")\nPermissionError: token rejected'
    ),
    lambda r, n, v: f"Remember for next time: the {n} for the shared sandbox is {v}",
    lambda r, n, v: f"Oi pessoal, a chave nova do ambiente de teste: {v} (expira em 30 dias).",
]

_PLACEHOLDER_WORDS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXXXX", "changeme", "demo"]
_ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
_BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u2069", "\u200f"]


def _fullwidth(s: str, rng: random.Random, all_chars: bool) -> str:
    out = []
    for ch in s:
        if ("!" <= ch <= "~") and (all_chars or rng.random() < 0.4):
            out.append(chr(ord(ch) + 0xFEE0))
        else:
            out.append(ch)
    return "".join(out)


def _inside(value: str, secret: str, fn: Callable[[str], str]) -> str:
    """Applies `fn` to the secret piece inside the value, leaving the rest as it was."""
    i = value.find(secret)
    return value[:i] + fn(secret) + value[i + len(secret) :]


def _disguise(rng: random.Random, kind: str, name: str, value: str, secret: str) -> tuple[str, str, str]:
    """Returns (disguise, name, disguised value)."""
    roll = rng.random()
    if roll < 0.48:
        return "plain", name, value
    choice = rng.choice(
        [
            "zero_width",
            "soft_hyphen",
            "fullwidth",
            "bidi",
            "url_encoded",
            "base64",
            "split_line",
            "zero_width",
        ]
    )
    half = len(secret) // 2
    if choice == "zero_width":
        zw = rng.choice(_ZW)
        return choice, name, _inside(value, secret, lambda s: s[:half] + zw + s[half:])
    if choice == "soft_hyphen":
        return (
            choice,
            name,
            _inside(value, secret, lambda s: s[:3] + "\u00ad" + s[3:half] + "\u00ad" + s[half:]),
        )
    if choice == "fullwidth":
        all_chars = rng.random() < 0.3
        if all_chars and "\n" not in value:
            return choice, name, _fullwidth(value, rng, True)
        return choice, name, _inside(value, secret, lambda s: _fullwidth(s, rng, False))
    if choice == "bidi":
        b = rng.choice(_BIDI)
        return choice, name, _inside(value, secret, lambda s: s[:half] + b + s[half:])
    if choice == "url_encoded":
        if rng.random() < 0.5:
            # Every byte percent-encoded, as some form encoders and log scrubbers write it.
            return choice, name, "".join(f"%{b:02X}" for b in value.encode())
        # A query string carried inside another parameter: `token%3D...`, separators and all encoded.
        return choice, "redirect", quote(f"{name.lower()}={value}&state=ok", safe="")
    if choice == "base64":
        if rng.random() < 0.5:
            return choice, name, base64.b64encode(value.encode()).decode()
        return choice, "b64line", base64.b64encode(f"{name}={value}".encode()).decode()
    brk = rng.choice(["\n", "\\\n    ", "\n  ", "\r\n"])
    return "split_line", name, _inside(value, secret, lambda s: s[:half] + brk + s[half:])


def _placeholder_value(x: _Gen, gen: KindGen, start: int) -> tuple[str, str]:
    """A real random token whose random body happens to contain a placeholder-looking word."""
    value, _ = gen(x)
    word = x.r.choice(_PLACEHOLDER_WORDS)
    body_len = len(value) - start
    pos = start + max(1, (body_len - len(word)) // 3)
    value = value[:pos] + word + value[pos + len(word) :]
    secret_start = max(start, pos - 4)
    secret = value[secret_start : secret_start + len(word) + 8]
    return value, secret


# ----------------------------------------------------------------- look-alikes (not credentials)


def _lookalikes(x: _Gen) -> list[Sample]:
    r = x.r
    out: list[Sample] = []

    def add(kind: str, texts: Callable[[], str], n: int = 26) -> None:
        for _ in range(n):
            out.append(Sample(kind=kind, group="lookalike", text=texts()))

    add(
        "git_sha",
        lambda: (
            f"Reverted {x.s(HEXL, 40)} because it broke the nightly build; cherry-pick {x.s(HEXL, 7)} instead."
        ),
    )
    add("sha256_digest", lambda: f"{x.s(HEXL, 64)}  kenfold-{r.randint(1, 9)}.{r.randint(0, 20)}.tar.gz")
    add(
        "sha512_release_checksum",
        lambda: f"Release notes v{r.randint(1, 4)}.{r.randint(0, 9)}: SHA-512 {x.s(HEXL, 128)}",
    )
    add("uuid", lambda: f"Request {x.uuid()} timed out after 30s; retried as {x.uuid()}.")
    add("ulid", lambda: f"order id 01{x.s('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)} shipped to warehouse B")
    add(
        "ksuid",
        lambda: f"event_id={x.s(ALNUM, 27)} type=page_view ts={r.randint(1_700_000_000, 1_800_000_000)}",
    )
    add(
        "stripe_public_ids",
        lambda: f"Refund for customer cus_{x.s(ALNUM, 14)} on payment intent pi_{x.s(ALNUM, 24)} approved.",
    )
    add("slack_channel_id", lambda: f"Posted the summary in C0{x.s(UPNUM, 9)} and pinged U0{x.s(UPNUM, 9)}.")
    add(
        "aws_arn_account",
        lambda: (
            f"Role arn:aws:iam::{x.s(DIG, 12)}:role/ci-deployer assumed; bucket arn:aws:s3:::logs-{x.s(LONUM, 6)}"
        ),
    )
    add(
        "request_trace_id",
        lambda: f"traceparent: 00-{x.s(HEXL, 32)}-{x.s(HEXL, 16)}-01  x-request-id: req_{x.s(ALNUM, 20)}",
    )
    add(
        "base64_text",
        lambda: (
            "Decoded attachment: "
            + base64.b64encode(
                r.choice(
                    [
                        "Meeting moved to Thursday at 10, room 4B.",
                        "Quarterly report attached, see section 3 for numbers.",
                        "Lunch order: two falafel wraps and a salad.",
                    ]
                ).encode()
            ).decode()
        ),
    )
    add("base64_image", lambda: "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + x.b64(90) + ")")
    add(
        "npm_integrity",
        lambda: (
            f'"node_modules/left-pad": {{\n  "version": "1.3.0",\n  "integrity": "sha512-{x.b64(64)}"\n}}'
        ),
    )
    add(
        "aws_documented_example",
        lambda: r.choice(
            [
                "AWS docs example: aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # from the AWS CLI user guide",
                "Use the placeholder AKIAIOSFODNN7EXAMPLE in docs, never a real key.",
            ]
        ),
    )
    add(
        "angle_placeholder",
        lambda: r.choice(
            [
                "STRIPE_SECRET_KEY=sk_test_<your key>",
                "export OPENAI_API_KEY=<your-api-key>",
                "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                "api_key: YOUR_API_KEY_HERE",
                "password: ********",
                "SLACK_BOT_TOKEN=xoxb-your-token",
            ]
        ),
    )
    add(
        "env_reference",
        lambda: r.choice(
            [
                "API_KEY=${API_KEY}",
                'token = os.environ["GITHUB_TOKEN"]',
                "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
                "valueFrom:\n  secretKeyRef:\n    name: db-creds\n    key: password",
                "DATABASE_URL: {{ .Values.database.url }}",
                "secret = process.env.STRIPE_SECRET_KEY",
                'aws_secret_access_key = "${var.aws_secret}"',
                "password = ${{ secrets.DB_PASSWORD }}",
            ]
        ),
    )
    add("ssh_public_key", lambda: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{x.b64(24)} alice@laptop")
    add(
        "pem_public_key",
        lambda: "-----BEGIN PUBLIC KEY-----\n" + x.b64(45) + "\n" + x.b64(45) + "\n-----END PUBLIC KEY-----",
    )
    add(
        "css_hash",
        lambda: (
            f'<link rel="stylesheet" href="/static/app.{x.s(HEXL, 20)}.css" integrity="sha384-{x.b64(48)}">'
        ),
    )
    add(
        "youtube_id",
        lambda: f"Good talk on queues: https://www.youtube.com/watch?v={x.s(B64URL, 11)} (from minute 12)",
    )
    add(
        "webpack_chunk",
        lambda: (
            f"Loading chunk {r.randint(100, 999)} failed (/assets/{r.randint(1, 99)}.{x.s(HEXL, 20)}.chunk.js)"
        ),
    )
    add("docker_digest", lambda: f"image: ghcr.io/acme/api@sha256:{x.s(HEXL, 64)}")
    add(
        "nix_store_path",
        lambda: f"/nix/store/{x.s('0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.{r.randint(1, 15)}",
    )
    add("ipfs_cid", lambda: f"pinned at ipfs://bafybei{x.s(B32, 52)}")
    add(
        "prose_about_secrets",
        lambda: r.choice(
            [
                "Rotate the GitHub token every 90 days and store it in the vault, not in .env files.",
                "Reminder: Stripe live keys start with sk_live_ and must never go in the repo.",
                "The AWS secret access key is shown only once when you create it; download the CSV then.",
                "Nota: las claves de API se guardan en el gestor de secretos, nunca en el chat.",
                "Wir rotieren alle Datenbank-Passwörter quartalsweise.",
                "If a token leaks, revoke it first, then audit the access logs.",
            ]
        ),
    )
    add(
        "object_store_etag",
        lambda: f'ETag: "{x.s(HEXL, 32)}-{r.randint(2, 40)}"  key=backups/{x.s(LONUM, 8)}.tar',
    )
    add("google_analytics_id", lambda: f"gtag('config', 'G-{x.s(UPNUM, 10)}'); // public measurement id")
    add(
        "resource_names",
        lambda: f"Scaled deployment api-{x.s(LONUM, 10)}-{x.s(LONUM, 5)} in namespace prod-{x.s(LONUM, 4)}",
    )
    return out


# ----------------------------------------------------------------- assembly


def _build(seed: int = SEED) -> list[tuple[Sample, str]]:
    """(sample, raw text before disguising) pairs; look-alikes carry their own text as raw."""
    rng = random.Random(seed)
    x = _Gen(rng)
    pairs: list[tuple[Sample, str]] = []
    for kind, group, name, gen, start in KINDS:
        n = 6
        for i in range(n):
            ctx = _CONTEXTS[rng.randrange(len(_CONTEXTS))]
            if start >= 0 and i == n - 1:
                value, secret = _placeholder_value(x, gen, start)
                disguise, shown_name, shown = "placeholder_word", name, value
            else:
                value, secret = gen(x)
                disguise, shown_name, shown = _disguise(rng, kind, name, value, secret)
            # One sub-seed for both renderings, so the raw and the disguised text differ only in the value.
            ctx_seed = rng.getrandbits(32)
            raw = ctx(random.Random(ctx_seed), name, value)
            text = ctx(random.Random(ctx_seed), shown_name, shown)
            pairs.append((Sample(kind=kind, group=group, text=text, disguise=disguise, secret=secret), raw))
    for s in _lookalikes(x):
        pairs.append((s, s.text))
    return pairs


def sixth_part_with_raw(seed: int = SEED) -> list[tuple[Sample, str]]:
    return _build(seed)


def sixth_part() -> list[Sample]:
    return [s for s, _ in _build(SEED)]
