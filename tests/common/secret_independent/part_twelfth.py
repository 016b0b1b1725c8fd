"""The twelfth independent part: credentials generated from the formats the providers document, placed in
memory texts an agent might store, some disguised; plus look-alikes that are public values or prose.

Written without reading the filter's rules. Each kind cites where its format comes from. Values are random
(fixed seed), never copies of real tokens.
"""

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 12_061_2026
PER_KIND = 10
LOOKALIKES_PER_KIND = 22

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = UPPER + "234567"

Gen = Callable[[random.Random], tuple[str, str]]


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _piece(body: str) -> str:
    """A middle piece of the random part: what must not survive redaction."""
    n = min(16, max(8, len(body) // 2))
    start = max(0, (len(body) - n) // 2)
    return body[start : start + n]


def _tok(prefix: str, alphabet: str, n: int, suffix: str = "") -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        body = _r(rng, alphabet, n)
        return prefix + body + suffix, _piece(body)

    return make


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(payload: dict[str, object], alg: str = "HS256") -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        head = _b64url(json.dumps({"alg": alg, "typ": "JWT"}).encode())
        body = dict(payload)
        body["iat"] = 1_760_000_000 + rng.randrange(10_000_000)
        body["jti"] = _r(rng, HEX, 16)
        sig = _r(rng, B64URL, 43 if alg.startswith("HS") else 86)
        return f"{head}.{_b64url(json.dumps(body).encode())}.{sig}", _piece(sig)

    return make


def _words_password(rng: random.Random) -> str:
    words = ["tundra", "Marmot", "quill", "Sable", "orbit", "Fennel", "gravel", "Lantern", "mosaic", "Pylon"]
    return rng.choice(words) + rng.choice("-_.!") + rng.choice(words) + str(rng.randrange(10, 9999))


def _pem(label: str, lead: str, lines: int) -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        body = lead + _r(rng, B64, 64 * lines - len(lead))
        rows = [body[i : i + 64] for i in range(0, len(body), 64)]
        text = f"-----BEGIN {label}-----\n" + "\n".join(rows) + f"\n-----END {label}-----"
        middle = rows[len(rows) // 2]
        return text, middle[20:36]

    return make


# --- structured credentials -------------------------------------------------------------------------------


def _aws_keypair(rng: random.Random) -> tuple[str, str]:
    # AWS IAM docs: access key ids start AKIA + 16 upper base32-ish chars; the secret access key is 40 chars
    # of base64 alphabet. Only the secret half is secret; the piece comes from it.
    secret = _r(rng, B64, 40)
    kid = "AKIA" + _r(rng, UPPER + "234567", 16)
    return f"aws_access_key_id = {kid}\naws_secret_access_key = {secret}", _piece(secret)


def _gcp_sa_json(rng: random.Random) -> tuple[str, str]:
    # Google Cloud IAM docs: a service account key file is JSON with type, project_id, private_key_id (40 hex)
    # and private_key (PKCS#8 PEM with \n escapes).
    pem, piece = _pem("PRIVATE KEY", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ", 16)(rng)
    project = rng.choice(["ledger-prod", "kiln-analytics", "acme-ml-392114", "harbor-etl"])
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": _r(rng, HEX, 40),
        "private_key": pem + "\n",
        "client_email": f"deployer@{project}.iam.gserviceaccount.com",
        "client_id": _r(rng, DIGITS, 21),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return json.dumps(doc, indent=2), piece


def _azure_storage(rng: random.Random) -> tuple[str, str]:
    # Azure Storage docs: DefaultEndpointsProtocol=https;AccountName=...;AccountKey=<88-char base64>;
    # EndpointSuffix=core.windows.net
    key = _r(rng, B64, 86) + "=="
    acct = rng.choice(["stlogsprod", "mediaassets01", "tfstatecorp", "backupweu"])
    return (
        f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={key};EndpointSuffix=core.windows.net",
        _piece(key[:86]),
    )


def _azure_sas(rng: random.Random) -> tuple[str, str]:
    # Azure "Create a service SAS" docs: sv, ss, srt, sp, se, st, spr and sig (HMAC-SHA256, base64,
    # URL-encoded). The sig is the secret part.
    sig = _r(rng, ALNUM, 43)
    url = (
        f"https://{rng.choice(['stmedia', 'stexports', 'stinvoices'])}.blob.core.windows.net/"
        f"{rng.choice(['exports', 'uploads', 'reports'])}?sv=2022-11-02&ss=b&srt=co&sp=rl"
        f"&se=2027-01-{rng.randrange(10, 28)}T00:00:00Z&st=2026-12-01T00:00:00Z&spr=https&sig={sig}%3D"
    )
    return url, _piece(sig)


def _conn_url(scheme: str, hosts: list[str], port: int, users: list[str], tail: str = "") -> Gen:
    def make(rng: random.Random) -> tuple[str, str]:
        pw = rng.choice([_r(rng, ALNUM, 20), _words_password(rng) + _r(rng, ALNUM, 6)])
        host = rng.choice(hosts)
        user = rng.choice(users)
        return (
            f"{scheme}://{user}:{pw}@{host}:{port}/{rng.choice(['app', 'orders', 'analytics'])}{tail}",
            _piece(pw),
        )

    return make


def _mongo_srv(rng: random.Random) -> tuple[str, str]:
    # MongoDB Atlas docs: mongodb+srv://<username>:<password>@cluster0.<id>.mongodb.net/?retryWrites=true
    pw = _r(rng, ALNUM, 16)
    return (
        f"mongodb+srv://app_rw:{pw}@cluster0.{_r(rng, LOWER_ALNUM, 5)}.mongodb.net/?retryWrites=true&w=majority",
        _piece(pw),
    )


def _pgpass(rng: random.Random) -> tuple[str, str]:
    # PostgreSQL docs (libpq-pgpass): hostname:port:database:username:password
    pw = _r(rng, ALNUM + "!#%", 18)
    return f"db-{rng.randrange(1, 9)}.internal:5432:billing:billing_app:{pw}", _piece(pw)


def _mssql(rng: random.Random) -> tuple[str, str]:
    # Microsoft SqlClient docs: Server=tcp:...;Database=...;User ID=...;Password=...;Encrypt=True;
    pw = _words_password(rng) + _r(rng, ALNUM, 8)
    return (
        f"Server=tcp:sql-{_r(rng, LOWER, 6)}.database.windows.net,1433;Initial Catalog=crm;"
        f"User ID=crm_svc;Password={pw};Encrypt=True;TrustServerCertificate=False;",
        _piece(pw),
    )


def _jdbc(rng: random.Random) -> tuple[str, str]:
    # MySQL Connector/J docs: jdbc:mysql://host:3306/db?user=...&password=...
    pw = _r(rng, ALNUM, 14)
    return f"jdbc:mysql://mysql-primary.svc:3306/shop?user=shop&password={pw}&useSSL=true", _piece(pw)


def _redis_cli(rng: random.Random) -> tuple[str, str]:
    # Redis docs: requirepass / AUTH <password>; redis-cli -a <password>
    pw = _r(rng, ALNUM, 32)
    return f"rediss://default:{pw}@{_r(rng, LOWER, 8)}.upstash.io:6379", _piece(pw)


def _docker_config(rng: random.Random) -> tuple[str, str]:
    # Docker docs (config.json): "auths": {"<registry>": {"auth": base64("user:password")}}
    pw = _r(rng, ALNUM, 24)
    auth = base64.b64encode(f"ci-bot:{pw}".encode()).decode()
    reg = rng.choice(["registry.gitlab.com", "ghcr.io", "harbor.corp.example", "index.docker.io/v1/"])
    doc = {"auths": {reg: {"auth": auth}}}
    return json.dumps(doc, indent=2), _piece(auth[8:])


def _basic_header(rng: random.Random) -> tuple[str, str]:
    # RFC 7617: Authorization: Basic base64(user-id ":" password)
    pw = _r(rng, ALNUM, 20)
    enc = base64.b64encode(f"{rng.choice(['admin', 'svc-deploy', 'grafana'])}:{pw}".encode()).decode()
    return f"Authorization: Basic {enc}", _piece(enc[6:])


def _netrc(machine: str) -> Gen:
    # netrc(5): machine <host> login <user> password <secret>
    def make(rng: random.Random) -> tuple[str, str]:
        pw = _r(rng, HEX, 40) if "wandb" in machine else _r(rng, ALNUM, 32)
        return f"machine {machine}\n  login {rng.choice(['user', 'deploy', 'ci'])}\n  password {pw}", _piece(
            pw
        )

    return make


def _kubeconfig_token(rng: random.Random) -> tuple[str, str]:
    # Kubernetes docs (bootstrap tokens): [a-z0-9]{6}.[a-z0-9]{16}; used as users[].user.token in kubeconfig.
    tid, tsec = _r(rng, LOWER_ALNUM, 6), _r(rng, LOWER_ALNUM, 16)
    return f"{tid}.{tsec}", _piece(tsec)


def _k8s_sa_token(rng: random.Random) -> tuple[str, str]:
    # Kubernetes docs: service account tokens are RS256 JWTs issued by the API server.
    return _jwt(
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "sub": "system:serviceaccount:ci:deployer",
        },
        "RS256",
    )(rng)


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    # Slack docs (incoming webhooks): https://hooks.slack.com/services/T<id>/B<id>/<24 alnum>
    sec = _r(rng, ALNUM, 24)
    return (
        f"https://hooks.slack.com/services/T{_r(rng, UPPER_ALNUM, 8)}/B{_r(rng, UPPER_ALNUM, 10)}/{sec}",
        _piece(sec),
    )


def _discord_webhook(rng: random.Random) -> tuple[str, str]:
    # Discord docs (webhooks): https://discord.com/api/webhooks/{webhook.id}/{webhook.token}
    sec = _r(rng, B64URL, 68)
    return f"https://discord.com/api/webhooks/{_r(rng, DIGITS, 19)}/{sec}", _piece(sec)


def _teams_webhook(rng: random.Random) -> tuple[str, str]:
    # Microsoft Teams docs (incoming webhook URL): https://<tenant>.webhook.office.com/webhookb2/<guid>@<guid>/
    # IncomingWebhook/<32 hex>/<guid>/<V2 key>
    sec = _r(rng, HEX, 32)
    u = [
        f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 12)}"
        for _ in range(3)
    ]
    return (
        f"https://contoso.webhook.office.com/webhookb2/{u[0]}@{u[1]}/IncomingWebhook/{sec}/{u[2]}/V2{_r(rng, B64URL, 40)}",
        _piece(sec),
    )


def _discord_bot(rng: random.Random) -> tuple[str, str]:
    # Discord docs: bot token = base64(user id) . timestamp (6) . HMAC (27+)
    uid = base64.b64encode(_r(rng, DIGITS, 18).encode()).decode().rstrip("=")
    sec = _r(rng, B64URL, 38)
    return f"{uid}.{_r(rng, B64URL, 6)}.{sec}", _piece(sec)


def _telegram(rng: random.Random) -> tuple[str, str]:
    # Telegram Bot API docs: <bot id>:<35 chars>, e.g. 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11
    sec = "AA" + _r(rng, B64URL, 33)
    return f"{rng.randrange(10**9, 8 * 10**9)}:{sec}", _piece(sec)


def _twilio_key(rng: random.Random) -> tuple[str, str]:
    # Twilio docs (API keys): SID SK + 32 hex, and a secret of 32 alnum shown once.
    sec = _r(rng, ALNUM, 32)
    return f"TWILIO_API_KEY=SK{_r(rng, HEX, 32)}\nTWILIO_API_SECRET={sec}", _piece(sec)


def _slack_bot(rng: random.Random) -> tuple[str, str]:
    # Slack docs (token types): bot tokens xoxb-<team>-<bot>-<24 alnum>
    sec = _r(rng, ALNUM, 24)
    return f"xoxb-{_r(rng, DIGITS, 12)}-{_r(rng, DIGITS, 13)}-{sec}", _piece(sec)


def _slack_user(rng: random.Random) -> tuple[str, str]:
    # Slack docs: user tokens xoxp-<team>-<user>-<id>-<32 hex>
    sec = _r(rng, HEX, 32)
    return f"xoxp-{_r(rng, DIGITS, 12)}-{_r(rng, DIGITS, 12)}-{_r(rng, DIGITS, 13)}-{sec}", _piece(sec)


def _slack_app(rng: random.Random) -> tuple[str, str]:
    # Slack docs: app-level tokens xapp-1-A<id>-<digits>-<64 hex>
    sec = _r(rng, HEX, 64)
    return f"xapp-1-A{_r(rng, UPPER_ALNUM, 10)}-{_r(rng, DIGITS, 13)}-{sec}", _piece(sec)


def _matrix(rng: random.Random) -> tuple[str, str]:
    # Synapse access tokens: syt_<base64 localpart>_<20 alnum>_<6 alnum checksum>
    local = _b64url(rng.choice([b"alice", b"ops-bot", b"deploybot"]))
    sec = _r(rng, ALNUM, 20)
    return f"syt_{local}_{sec}_{_r(rng, ALNUM, 6)}", _piece(sec)


def _braintree(rng: random.Random) -> tuple[str, str]:
    # Braintree docs: access_token$production$<merchant id>$<32 hex>
    sec = _r(rng, HEX, 32)
    return f"access_token$production${_r(rng, LOWER_ALNUM, 16)}${sec}", _piece(sec)


def _mercadopago(rng: random.Random) -> tuple[str, str]:
    # Mercado Pago docs: production access token APP_USR-<app id>-<date>-<32 hex>-<user id>
    sec = _r(rng, HEX, 32)
    return f"APP_USR-{_r(rng, DIGITS, 16)}-{_r(rng, DIGITS, 6)}-{sec}-{_r(rng, DIGITS, 9)}", _piece(sec)


def _razorpay(rng: random.Random) -> tuple[str, str]:
    # Razorpay docs: key id rzp_live_<14 alnum> (public) with a key secret of 24 alnum.
    sec = _r(rng, ALNUM, 24)
    return f"RAZORPAY_KEY_ID=rzp_live_{_r(rng, ALNUM, 14)}\nRAZORPAY_KEY_SECRET={sec}", _piece(sec)


def _astra(rng: random.Random) -> tuple[str, str]:
    # DataStax Astra docs: AstraCS:<client id>:<64 hex>
    sec = _r(rng, HEX, 64)
    return f"AstraCS:{_r(rng, ALPHA_MIXED, 24)}:{sec}", _piece(sec)


ALPHA_MIXED = string.ascii_letters


def _airtable(rng: random.Random) -> tuple[str, str]:
    # Airtable docs: personal access tokens pat<14>.<64 hex>
    sec = _r(rng, HEX, 64)
    return f"pat{_r(rng, ALNUM, 14)}.{sec}", _piece(sec)


def _asana(rng: random.Random) -> tuple[str, str]:
    # Asana docs: personal access tokens 2/<user gid>/<token gid>:<32 hex>
    sec = _r(rng, HEX, 32)
    return f"2/{_r(rng, DIGITS, 16)}/{_r(rng, DIGITS, 16)}:{sec}", _piece(sec)


def _postman(rng: random.Random) -> tuple[str, str]:
    # Postman docs: API keys PMAK-<24 hex>-<34 hex>
    sec = _r(rng, HEX, 34)
    return f"PMAK-{_r(rng, HEX, 24)}-{sec}", _piece(sec)


def _harness(rng: random.Random) -> tuple[str, str]:
    # Harness docs: pat.<account id>.<token id>.<secret>
    sec = _r(rng, ALNUM, 20)
    return f"pat.{_r(rng, B64URL, 22)}.{_r(rng, HEX, 24)}.{sec}", _piece(sec)


def _tfc(rng: random.Random) -> tuple[str, str]:
    # HCP Terraform docs: API tokens <14>.atlasv1.<67>
    sec = _r(rng, ALNUM, 67)
    return f"{_r(rng, ALNUM, 14)}.atlasv1.{sec}", _piece(sec)


def _dynatrace(rng: random.Random) -> tuple[str, str]:
    # Dynatrace docs (access tokens): dt0c01.<24 public id>.<64 secret>
    sec = _r(rng, UPPER_ALNUM, 64)
    return f"dt0c01.{_r(rng, UPPER_ALNUM, 24)}.{sec}", _piece(sec)


def _grafana_sa(rng: random.Random) -> tuple[str, str]:
    # Grafana docs: service account tokens glsa_<32 alnum>_<8 hex checksum>
    sec = _r(rng, ALNUM, 32)
    return f"glsa_{sec}_{_r(rng, HEX, 8)}", _piece(sec)


def _elastic_apikey(rng: random.Random) -> tuple[str, str]:
    # Elasticsearch docs (create API key): Authorization: ApiKey base64(id:api_key)
    enc = base64.b64encode(f"{_r(rng, B64URL, 20)}:{_r(rng, B64URL, 22)}".encode()).decode()
    return f"Authorization: ApiKey {enc}", _piece(enc[28:])


def _openai_legacy(rng: random.Random) -> tuple[str, str]:
    # OpenAI keys: sk-proj-<...> project keys (documented prefix "sk-proj-"), ~160 chars of [A-Za-z0-9_-]
    body = _r(rng, B64URL, 74) + "T3BlbkFJ" + _r(rng, B64URL, 74)
    return "sk-proj-" + body, _piece(body[:60])


def _langsmith(rng: random.Random) -> tuple[str, str]:
    # LangSmith docs: personal access tokens lsv2_pt_<32 hex>_<10 hex>
    sec = _r(rng, HEX, 32)
    return f"lsv2_pt_{sec}_{_r(rng, HEX, 10)}", _piece(sec)


def _pinecone(rng: random.Random) -> tuple[str, str]:
    # Pinecone docs: API keys pcsk_<key id>_<secret>
    sec = _r(rng, ALNUM, 64)
    return f"pcsk_{_r(rng, ALNUM, 6)}_{sec}", _piece(sec)


def _ngrok(rng: random.Random) -> tuple[str, str]:
    # ngrok docs: authtoken <27 id>_<21 secret>
    sec = _r(rng, ALNUM, 21) + _r(rng, ALNUM, 6)
    return f"2{_r(rng, ALNUM, 26)}_{sec}", _piece(sec)


def _atlassian(rng: random.Random) -> tuple[str, str]:
    # Atlassian docs: API tokens ATATT3xFfGF0<...>=<8 hex checksum>
    body = _r(rng, B64URL, 170)
    return f"ATATT3xFfGF0{body}={_r(rng, HEX, 8).upper()}", _piece(body)


def _bitbucket(rng: random.Random) -> tuple[str, str]:
    # Bitbucket docs: app passwords start ATBB, 32 chars, then an 8 hex checksum.
    body = _r(rng, ALNUM, 32)
    return f"ATBB{body}{_r(rng, HEX, 8).upper()}", _piece(body)


def _circleci(rng: random.Random) -> tuple[str, str]:
    # CircleCI docs: personal API tokens CCIPAT_<id>_<40 hex>
    sec = _r(rng, HEX, 40)
    return f"CCIPAT_{_r(rng, ALNUM, 22)}_{sec}", _piece(sec)


def _gh_fine(rng: random.Random) -> tuple[str, str]:
    # GitHub docs: fine-grained PATs github_pat_<22>_<59>
    sec = _r(rng, ALNUM, 59)
    return f"github_pat_11{_r(rng, UPPER_ALNUM, 20)}_{sec}", _piece(sec)


def _azdo(rng: random.Random) -> tuple[str, str]:
    # Azure DevOps docs (2024 PAT format): 84 chars containing "AZDO" at positions 76-79.
    head = _r(rng, ALNUM, 52)
    return head + _r(rng, ALNUM, 24) + "AZDO" + _r(rng, ALNUM, 4), _piece(head)


def _age(rng: random.Random) -> tuple[str, str]:
    # age spec: AGE-SECRET-KEY-1<58 upper bech32>
    body = _r(rng, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    return "AGE-SECRET-KEY-1" + body, _piece(body)


def _wireguard(rng: random.Random) -> tuple[str, str]:
    # wg(8): private keys are 32 bytes base64 (44 chars ending '=').
    raw = base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode()
    return raw, _piece(raw[:43])


def _mapbox_secret(rng: random.Random) -> tuple[str, str]:
    # Mapbox docs: secret tokens start sk. (public ones pk.), then a base64 JSON and a signature.
    head = _b64url(
        json.dumps({"u": rng.choice(["acme-maps", "fleetview"]), "a": _r(rng, LOWER_ALNUM, 25)}).encode()
    )
    sec = _r(rng, B64URL, 22)
    return f"sk.{head}.{sec}", _piece(sec)


def _sentry_org(rng: random.Random) -> tuple[str, str]:
    # Sentry docs: org auth tokens sntrys_<base64 JSON>_<base64 secret>
    head = _b64url(json.dumps({"iat": 1.76e9, "url": "https://sentry.io", "org": "acme"}).encode())
    sec = _r(rng, B64URL, 43)
    return f"sntrys_{head}_{sec}", _piece(sec)


def _pypi(rng: random.Random) -> tuple[str, str]:
    # PyPI docs: API tokens pypi-AgEIcHlwaS5vcmc<macaroon base64url>
    body = _r(rng, B64URL, 140)
    return "pypi-AgEIcHlwaS5vcmc" + body, _piece(body)


def _jfrog_identity(rng: random.Random) -> tuple[str, str]:
    # JFrog docs: reference tokens are base64 of "reftkn:01:<expiry>:<secret>", so they start cmVmdGtuOjAxOj
    raw = f"reftkn:01:{rng.randrange(1_700_000_000, 1_900_000_000)}:{_r(rng, ALNUM, 32)}"
    enc = base64.b64encode(raw.encode()).decode().rstrip("=")
    return enc, _piece(enc[20:])


def _ssh_openssh(rng: random.Random) -> tuple[str, str]:
    # OpenSSH PROTOCOL.key: base64 of "openssh-key-v1\0..." inside BEGIN/END OPENSSH PRIVATE KEY, 70-char rows.
    lead = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    body = lead + _r(rng, B64, 70 * 5 - len(lead))
    rows = [body[i : i + 70] for i in range(0, len(body), 70)]
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(rows) + "\n-----END OPENSSH PRIVATE KEY-----"
    return text, rows[3][10:26]


def _clouds_yaml(rng: random.Random) -> tuple[str, str]:
    # OpenStack docs (clouds.yaml): clouds.<name>.auth.password
    pw = _r(rng, ALNUM, 22)
    return (
        "clouds:\n  ovh-gra:\n    auth:\n      auth_url: https://auth.cloud.ovh.net/v3\n"
        f"      username: user-{_r(rng, ALNUM, 12)}\n      password: {pw}\n      project_name: '{_r(rng, DIGITS, 16)}'",
        _piece(pw),
    )


def _generic_password(rng: random.Random) -> tuple[str, str]:
    pw = _words_password(rng) + _r(rng, ALNUM, 4)
    return pw, _piece(pw)


def _smtp(rng: random.Random) -> tuple[str, str]:
    # Amazon SES docs: SMTP passwords are 44 chars of base64 alphabet starting "B".
    pw = "B" + _r(rng, B64, 43)
    return pw, _piece(pw)


@dataclass(frozen=True)
class CredKind:
    name: str
    group: str
    var: str
    make: Gen
    # Single-line values fit any context; multi-line ones (PEM, JSON, netrc) only the "file" contexts.
    multiline: bool = False


K = CredKind
KINDS: list[CredKind] = [
    # ---------------------------------------------------------------------------------------------- cloud
    K("aws_access_key_pair", "cloud", "AWS_CREDENTIALS", _aws_keypair, True),
    # AWS STS docs: session tokens are long base64; in practice they start IQoJb3JpZ2luX2Vj ("\t\x0forigin_ec").
    K("aws_session_token", "cloud", "AWS_SESSION_TOKEN", _tok("IQoJb3JpZ2luX2VjE", B64, 300)),
    K("gcp_service_account_json", "cloud", "GOOGLE_APPLICATION_CREDENTIALS_JSON", _gcp_sa_json, True),
    # Google Cloud docs (API keys): AIza + 35 chars [A-Za-z0-9_-]
    K("gcp_api_key", "cloud", "GOOGLE_API_KEY", _tok("AIza", B64URL, 35)),
    # Google OAuth docs: client secrets now start GOCSPX-
    K("gcp_oauth_client_secret", "cloud", "GOOGLE_CLIENT_SECRET", _tok("GOCSPX-", B64URL, 28)),
    K("azure_storage_connection_string", "cloud", "AZURE_STORAGE_CONNECTION_STRING", _azure_storage),
    K("azure_sas_url", "cloud", "AZURE_BLOB_SAS_URL", _azure_sas),
    # Microsoft Entra docs: client secret values are 40 chars with "8Q~" at index 3.
    K(
        "azure_entra_client_secret",
        "cloud",
        "AZURE_CLIENT_SECRET",
        lambda rng: (lambda b: (_r(rng, ALNUM, 3) + "8Q~" + b, _piece(b)))(_r(rng, ALNUM + "_.~-", 34)),
    ),
    # DigitalOcean docs: personal access tokens dop_v1_<64 hex>
    K("digitalocean_pat", "cloud", "DIGITALOCEAN_TOKEN", _tok("dop_v1_", HEX, 64)),
    # Linode docs: personal access tokens are 64 hex
    K("linode_token", "cloud", "LINODE_TOKEN", _tok("", HEX, 64)),
    # Hetzner Cloud docs: API tokens are 64 alnum (HCLOUD_TOKEN)
    K("hetzner_cloud_token", "cloud", "HCLOUD_TOKEN", _tok("", ALNUM, 64)),
    # Vultr docs: API keys are 36 upper alnum
    K("vultr_api_key", "cloud", "VULTR_API_KEY", _tok("", UPPER_ALNUM, 36)),
    # Alibaba Cloud docs: AccessKey ID LTAI..., AccessKey secret 30 alnum
    K("alibaba_access_key_secret", "cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", _tok("", ALNUM, 30)),
    # Tencent Cloud docs: SecretId AKID + 32, SecretKey 32 alnum
    K("tencent_secret_key", "cloud", "TENCENTCLOUD_SECRET_KEY", _tok("", ALNUM, 32)),
    # Huawei Cloud docs: AK 20 upper alnum, SK 40 alnum
    K("huawei_secret_key", "cloud", "HUAWEICLOUD_SDK_SK", _tok("", ALNUM, 40)),
    # Yandex Cloud docs: OAuth tokens y0_<...>; API keys AQVN<...>
    K("yandex_oauth_token", "cloud", "YC_TOKEN", _tok("y0_AgAAAAA", B64URL, 48)),
    K("yandex_api_key", "cloud", "YC_API_KEY", _tok("AQVN", B64URL, 36)),
    # IBM Cloud docs: API keys are 44 chars [A-Za-z0-9_-]
    K("ibm_cloud_api_key", "cloud", "IBMCLOUD_API_KEY", _tok("", B64URL, 44)),
    # Cloudflare docs: API tokens 40 chars [A-Za-z0-9_-]; the Global API Key is 37 lowercase hex.
    K("cloudflare_api_token", "cloud", "CLOUDFLARE_API_TOKEN", _tok("", B64URL, 40)),
    K("cloudflare_global_key", "cloud", "CF_API_KEY", _tok("", HEX, 37)),
    # Scaleway docs: the secret key is a UUID (SCW_SECRET_KEY); the access key SCW + 17 upper is public-ish.
    K(
        "scaleway_secret_key",
        "cloud",
        "SCW_SECRET_KEY",
        lambda rng: (lambda u: (u, u[9:23]))(
            f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-a{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"
        ),
    ),
    # OVHcloud docs: application secret 32 alnum
    K("ovh_application_secret", "cloud", "OVH_APPLICATION_SECRET", _tok("", ALNUM, 32)),
    # Netlify docs: personal access tokens nfp_<36 alnum>
    K("netlify_pat", "cloud", "NETLIFY_AUTH_TOKEN", _tok("nfp_", ALNUM, 36)),
    # Heroku docs (2024 token format): HRKU-<...>
    K("heroku_api_key", "cloud", "HEROKU_API_KEY", _tok("HRKU-AA", B64URL, 58)),
    # Render docs: API keys rnd_<32 alnum>
    K("render_api_key", "cloud", "RENDER_API_KEY", _tok("rnd_", ALNUM, 32)),
    # Fly.io docs: tokens "FlyV1 fm2_<base64>"
    K("flyio_token", "cloud", "FLY_API_TOKEN", _tok("FlyV1 fm2_lJPE", B64, 120)),
    # Vault docs (token prefixes): service tokens hvs.<90+ base62>
    K("vault_service_token", "cloud", "VAULT_TOKEN", _tok("hvs.", ALNUM, 92)),
    # Doppler docs (auth token formats): dp.st.<config>.<40-44 alnum>
    K("doppler_service_token", "cloud", "DOPPLER_TOKEN", _tok("dp.st.prd.", ALNUM, 43)),
    K("kubeconfig_bootstrap_token", "cloud", "KUBE_TOKEN", _kubeconfig_token),
    K("kubernetes_sa_jwt", "cloud", "KUBE_SA_TOKEN", _k8s_sa_token),
    K("openstack_clouds_yaml", "cloud", "OS_PASSWORD", _clouds_yaml, True),
    K("wireguard_private_key", "cloud", "WG_PRIVATE_KEY", _wireguard),
    K("age_secret_key", "cloud", "SOPS_AGE_KEY", _age),
    K(
        "rsa_private_key_pem",
        "cloud",
        "TLS_PRIVATE_KEY",
        _pem("RSA PRIVATE KEY", "MIIEowIBAAKCAQEA", 18),
        True,
    ),
    K("ec_private_key_pem", "cloud", "JWT_SIGNING_KEY", _pem("EC PRIVATE KEY", "MHcCAQEEI", 3), True),
    K("openssh_private_key", "cloud", "DEPLOY_SSH_KEY", _ssh_openssh, True),
    # ------------------------------------------------------------------------------------------------- ci
    # GitHub docs (token formats): ghp_ classic PATs, ghs_ installation tokens, gho_ OAuth: 36 base62.
    K("github_classic_pat", "ci", "GITHUB_TOKEN", _tok("ghp_", ALNUM, 36)),
    K("github_fine_grained_pat", "ci", "GH_TOKEN", _gh_fine),
    K("github_app_installation_token", "ci", "GITHUB_APP_TOKEN", _tok("ghs_", ALNUM, 36)),
    K("github_oauth_token", "ci", "GITHUB_OAUTH_TOKEN", _tok("gho_", ALNUM, 36)),
    # GitLab docs (token prefixes): glpat- PAT, glrt- runner auth, gldt- deploy, glptt- pipeline trigger.
    K("gitlab_pat", "ci", "GITLAB_TOKEN", _tok("glpat-", B64URL, 20)),
    K("gitlab_runner_token", "ci", "CI_RUNNER_TOKEN", _tok("glrt-", B64URL, 20)),
    K("gitlab_deploy_token", "ci", "GITLAB_DEPLOY_TOKEN", _tok("gldt-", B64URL, 20)),
    K("gitlab_trigger_token", "ci", "TRIGGER_TOKEN", _tok("glptt-", HEX, 40)),
    K("bitbucket_app_password", "ci", "BITBUCKET_APP_PASSWORD", _bitbucket),
    K("circleci_pat", "ci", "CIRCLECI_TOKEN", _circleci),
    # Buildkite docs: API access tokens bkua_<40 hex>
    K("buildkite_api_token", "ci", "BUILDKITE_API_TOKEN", _tok("bkua_", HEX, 40)),
    # Jenkins docs: API tokens are 34 hex starting "11"
    K("jenkins_api_token", "ci", "JENKINS_API_TOKEN", _tok("11", HEX, 32)),
    K("azure_devops_pat", "ci", "AZURE_DEVOPS_EXT_PAT", _azdo),
    # SonarQube docs: user tokens squ_, project sqp_, global sqa_ + 40 hex
    K("sonarqube_token", "ci", "SONAR_TOKEN", _tok("squ_", HEX, 40)),
    # Pulumi docs: access tokens pul-<40 hex>
    K("pulumi_access_token", "ci", "PULUMI_ACCESS_TOKEN", _tok("pul-", HEX, 40)),
    K("terraform_cloud_token", "ci", "TF_TOKEN_app_terraform_io", _tfc),
    # Octopus Deploy docs: API keys API-<26 upper alnum>
    K("octopus_api_key", "ci", "OCTOPUS_API_KEY", _tok("API-", UPPER_ALNUM, 26)),
    K("harness_pat", "ci", "HARNESS_API_KEY", _harness),
    # Codecov docs: upload token is a UUID under CODECOV_TOKEN
    K(
        "codecov_token",
        "ci",
        "CODECOV_TOKEN",
        lambda rng: (lambda u: (u, u[4:18]))(
            f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-b{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"
        ),
    ),
    # Travis CI docs: API tokens 22 chars
    K("travis_api_token", "ci", "TRAVIS_API_TOKEN", _tok("", B64URL, 22)),
    # -------------------------------------------------------------------------------------------- chat
    K("slack_bot_token", "chat", "SLACK_BOT_TOKEN", _slack_bot),
    K("slack_user_token", "chat", "SLACK_USER_TOKEN", _slack_user),
    K("slack_app_token", "chat", "SLACK_APP_TOKEN", _slack_app),
    K("slack_webhook_url", "chat", "SLACK_WEBHOOK_URL", _slack_webhook),
    K("discord_bot_token", "chat", "DISCORD_TOKEN", _discord_bot),
    K("discord_webhook_url", "chat", "DISCORD_WEBHOOK", _discord_webhook),
    K("telegram_bot_token", "chat", "TELEGRAM_BOT_TOKEN", _telegram),
    K("teams_webhook_url", "chat", "TEAMS_WEBHOOK_URL", _teams_webhook),
    # Mattermost docs: personal access tokens 26 lowercase alnum
    K("mattermost_pat", "chat", "MM_ACCESS_TOKEN", _tok("", LOWER_ALNUM, 26)),
    K("matrix_access_token", "chat", "MATRIX_ACCESS_TOKEN", _matrix),
    K("twilio_api_key_secret", "chat", "TWILIO_API_SECRET", _twilio_key, True),
    # Twilio docs: Auth Token is 32 hex
    K("twilio_auth_token", "chat", "TWILIO_AUTH_TOKEN", _tok("", HEX, 32)),
    # SendGrid docs: SG.<22>.<43>
    K(
        "sendgrid_api_key",
        "chat",
        "SENDGRID_API_KEY",
        lambda rng: (lambda s: (f"SG.{_r(rng, B64URL, 22)}.{s}", _piece(s)))(_r(rng, B64URL, 43)),
    ),
    # Mailgun docs: private API keys key-<32 hex> (legacy)
    K("mailgun_api_key", "chat", "MAILGUN_API_KEY", _tok("key-", HEX, 32)),
    # Mailchimp docs: API keys <32 hex>-us<dc>
    K("mailchimp_api_key", "chat", "MAILCHIMP_API_KEY", _tok("", HEX, 32, "-us14")),
    # LINE Messaging API docs: long-lived channel access tokens ~172 base64 chars ending '='
    K("line_channel_access_token", "chat", "LINE_CHANNEL_ACCESS_TOKEN", _tok("", B64, 171, "=")),
    # Vonage docs: API secret 16 alnum
    K("vonage_api_secret", "chat", "VONAGE_API_SECRET", _tok("", ALNUM, 16)),
    # Pusher docs: app secret 20 hex
    K("pusher_app_secret", "chat", "PUSHER_APP_SECRET", _tok("", HEX, 20)),
    # Amazon SES docs: SMTP credentials, password 44 chars
    K("ses_smtp_password", "chat", "SMTP_PASSWORD", _smtp),
    # Postmark docs: server API token is a UUID
    K(
        "postmark_server_token",
        "chat",
        "POSTMARK_SERVER_TOKEN",
        lambda rng: (lambda u: (u, u[9:23]))(
            f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 12)}"
        ),
    ),
    # ----------------------------------------------------------------------------------------- payment
    # Stripe docs (API keys): sk_live_ secret, rk_live_ restricted; whsec_ webhook signing secrets.
    K("stripe_secret_key", "payment", "STRIPE_SECRET_KEY", _tok("sk_live_", ALNUM, 99)),
    K("stripe_restricted_key", "payment", "STRIPE_RESTRICTED_KEY", _tok("rk_live_", ALNUM, 99)),
    K("stripe_webhook_secret", "payment", "STRIPE_WEBHOOK_SECRET", _tok("whsec_", ALNUM, 32)),
    # PayPal docs: REST client secret, 80 chars [A-Za-z0-9_-], starting E
    K("paypal_client_secret", "payment", "PAYPAL_CLIENT_SECRET", _tok("E", B64URL, 79)),
    K("braintree_access_token", "payment", "BRAINTREE_ACCESS_TOKEN", _braintree),
    # Square docs: production access tokens EAAA<60>
    K("square_access_token", "payment", "SQUARE_ACCESS_TOKEN", _tok("EAAA", B64URL, 60)),
    # Adyen docs: API keys start AQE
    K("adyen_api_key", "payment", "ADYEN_API_KEY", _tok("AQEyhmfxK", B64URL, 90)),
    K("razorpay_key_secret", "payment", "RAZORPAY_KEY_SECRET", _razorpay, True),
    # Paystack docs: secret keys sk_live_<40 hex>
    K("paystack_secret_key", "payment", "PAYSTACK_SECRET_KEY", _tok("sk_live_", HEX, 40)),
    # Flutterwave docs: FLWSECK-<32 hex>-X
    K("flutterwave_secret_key", "payment", "FLW_SECRET_KEY", _tok("FLWSECK-", HEX, 32, "-X")),
    K("mercadopago_access_token", "payment", "MP_ACCESS_TOKEN", _mercadopago),
    # Mollie docs: live API keys live_<30 alnum>
    K("mollie_api_key", "payment", "MOLLIE_API_KEY", _tok("live_", ALNUM, 30)),
    # Xendit docs: xnd_production_<60>
    K("xendit_secret_key", "payment", "XENDIT_SECRET_KEY", _tok("xnd_production_", ALNUM, 60)),
    # Midtrans docs: server keys Mid-server-<24>
    K("midtrans_server_key", "payment", "MIDTRANS_SERVER_KEY", _tok("Mid-server-", B64URL, 24)),
    # GoCardless docs: live access tokens live_<40>
    K("gocardless_access_token", "payment", "GOCARDLESS_ACCESS_TOKEN", _tok("live_", B64URL, 40)),
    # Plaid docs: secret 30 hex
    K("plaid_secret", "payment", "PLAID_SECRET", _tok("", HEX, 30)),
    # Checkout.com docs: secret keys sk_<uuid-like> / sk_sbox_<26>
    K("checkout_secret_key", "payment", "CKO_SECRET_KEY", _tok("sk_sbox_", LOWER_ALNUM, 26)),
    # PayMongo docs: sk_live_<24>
    K("paymongo_secret_key", "payment", "PAYMONGO_SECRET_KEY", _tok("sk_live_", ALNUM, 24)),
    # ---------------------------------------------------------------------------------------- database
    K(
        "postgres_url",
        "database",
        "DATABASE_URL",
        _conn_url(
            "postgres",
            ["db.prod.internal", "10.0.3.14", "pg-main.abc123.eu-west-1.rds.amazonaws.com"],
            5432,
            ["app", "postgres", "readonly"],
        ),
    ),
    K(
        "mysql_url",
        "database",
        "MYSQL_URL",
        _conn_url(
            "mysql", ["mysql-0.mysql", "aurora.cluster-xyz.rds.amazonaws.com"], 3306, ["root", "wp_user"]
        ),
    ),
    K("mongodb_srv_url", "database", "MONGODB_URI", _mongo_srv),
    K("redis_url", "database", "REDIS_URL", _redis_cli),
    K(
        "amqp_url",
        "database",
        "CELERY_BROKER_URL",
        _conn_url(
            "amqps", ["rabbit.internal", "b-1234.mq.eu-central-1.amazonaws.com"], 5671, ["celery", "worker"]
        ),
    ),
    K("pgpass_line", "database", "PGPASSFILE", _pgpass),
    K("mssql_connection_string", "database", "ConnectionStrings__Default", _mssql),
    K("jdbc_mysql_url", "database", "SPRING_DATASOURCE_URL", _jdbc),
    # PlanetScale docs: passwords pscale_pw_<43>, service tokens pscale_tkn_
    K("planetscale_password", "database", "PLANETSCALE_PASSWORD", _tok("pscale_pw_", B64URL, 43)),
    # Supabase docs: access tokens sbp_<40 hex>
    K("supabase_access_token", "database", "SUPABASE_ACCESS_TOKEN", _tok("sbp_", HEX, 40)),
    K(
        "supabase_service_role_jwt",
        "database",
        "SUPABASE_SERVICE_ROLE_KEY",
        _jwt({"iss": "supabase", "ref": "qwertyuiopasdfgh", "role": "service_role"}),
    ),
    # Databricks docs: PATs dapi<32 hex>
    K("databricks_pat", "database", "DATABRICKS_TOKEN", _tok("dapi", HEX, 32)),
    K("astra_db_token", "database", "ASTRA_DB_APPLICATION_TOKEN", _astra),
    # Upstash docs: REST token base64 starting "A"
    K("upstash_rest_token", "database", "UPSTASH_REDIS_REST_TOKEN", _tok("AX", B64URL, 60)),
    # Turso docs: auth tokens are EdDSA JWTs
    K("turso_auth_token", "database", "TURSO_AUTH_TOKEN", _jwt({"a": "rw", "id": "db-1"}, "EdDSA")),
    K("mssql_sa_password", "database", "MSSQL_SA_PASSWORD", _generic_password),
    # ---------------------------------------------------------------------------------------- registry
    # npm docs: granular/automation tokens npm_<36>
    K("npm_token", "registry", "NPM_TOKEN", _tok("npm_", ALNUM, 36)),
    K("pypi_token", "registry", "TWINE_PASSWORD", _pypi),
    # Docker docs: personal access tokens dckr_pat_<27>
    K("dockerhub_pat", "registry", "DOCKERHUB_TOKEN", _tok("dckr_pat_", B64URL, 27)),
    K("docker_config_auth", "registry", "DOCKER_CONFIG_JSON", _docker_config, True),
    # RubyGems docs: API keys rubygems_<48 hex>
    K("rubygems_api_key", "registry", "GEM_HOST_API_KEY", _tok("rubygems_", HEX, 48)),
    # NuGet: API keys oy2<43 lower alnum>
    K("nuget_api_key", "registry", "NUGET_API_KEY", _tok("oy2", LOWER_ALNUM, 43)),
    # crates.io: API tokens cio<32>
    K("cratesio_token", "registry", "CARGO_REGISTRY_TOKEN", _tok("cio", ALNUM, 32)),
    # JFrog docs: legacy API keys AKCp<69>; reference tokens base64 "reftkn:01:..."
    K("jfrog_api_key", "registry", "ARTIFACTORY_API_KEY", _tok("AKCp", ALNUM, 69)),
    K("jfrog_reference_token", "registry", "JFROG_ACCESS_TOKEN", _jfrog_identity),
    # Quay docs: robot account tokens 64 upper alnum
    K("quay_robot_token", "registry", "QUAY_ROBOT_TOKEN", _tok("", UPPER_ALNUM, 64)),
    K("netrc_heroku", "registry", "NETRC", _netrc("api.heroku.com"), True),
    K("maven_settings_password", "registry", "MAVEN_PASSWORD", _generic_password),
    # ----------------------------------------------------------------------------------- observability
    # Datadog docs: API key 32 hex, application key 40 hex
    K("datadog_api_key", "observability", "DD_API_KEY", _tok("", HEX, 32)),
    K("datadog_app_key", "observability", "DD_APP_KEY", _tok("", HEX, 40)),
    # New Relic docs: user keys NRAK-<27 upper alnum>; license keys 40 chars ending NRAL
    K("newrelic_user_key", "observability", "NEW_RELIC_API_KEY", _tok("NRAK-", UPPER_ALNUM, 27)),
    K("newrelic_license_key", "observability", "NEW_RELIC_LICENSE_KEY", _tok("eu01xx", HEX, 30, "NRAL")),
    K("sentry_org_token", "observability", "SENTRY_AUTH_TOKEN", _sentry_org),
    # Sentry docs: user auth tokens sntryu_<64 hex>
    K("sentry_user_token", "observability", "SENTRY_USER_TOKEN", _tok("sntryu_", HEX, 64)),
    # Honeycomb docs: ingest keys hcaik_<58>
    K("honeycomb_ingest_key", "observability", "HONEYCOMB_API_KEY", _tok("hcaik_01", LOWER_ALNUM, 56)),
    K("grafana_sa_token", "observability", "GRAFANA_SERVICE_ACCOUNT_TOKEN", _grafana_sa),
    # Grafana Cloud docs: access policy tokens glc_<base64>
    K("grafana_cloud_token", "observability", "GRAFANA_CLOUD_TOKEN", _tok("glc_eyJvIjoi", B64, 120)),
    # Splunk docs (HEC): Authorization: Splunk <uuid token>
    K(
        "splunk_hec_token",
        "observability",
        "SPLUNK_HEC_TOKEN",
        lambda rng: (lambda u: (u, u[9:23]))(
            f"{_r(rng, HEX, 8).upper()}-{_r(rng, HEX, 4).upper()}-{_r(rng, HEX, 4).upper()}-"
            f"{_r(rng, HEX, 4).upper()}-{_r(rng, HEX, 12).upper()}"
        ),
    ),
    # PagerDuty docs: REST API keys u+<18>; Events v2 integration keys 32 hex
    K("pagerduty_routing_key", "observability", "PAGERDUTY_ROUTING_KEY", _tok("R0", HEX, 30)),
    K("dynatrace_token", "observability", "DT_API_TOKEN", _dynatrace),
    K("elastic_api_key_header", "observability", "ES_API_KEY", _elastic_apikey),
    # InfluxDB docs: API tokens 86 chars base64url ending ==
    K("influxdb_token", "observability", "INFLUX_TOKEN", _tok("", B64URL, 86, "==")),
    # Rollbar docs: project access tokens 32 hex
    K("rollbar_server_token", "observability", "ROLLBAR_ACCESS_TOKEN", _tok("", HEX, 32)),
    # Sumo Logic docs: access key 64 alnum
    K("sumologic_access_key", "observability", "SUMO_ACCESS_KEY", _tok("", ALNUM, 64)),
    # ---------------------------------------------------------------------------------------------- ai
    K("openai_project_key", "ai", "OPENAI_API_KEY", _openai_legacy),
    # Anthropic docs: sk-ant-api03-<93>AA
    K("anthropic_api_key", "ai", "ANTHROPIC_API_KEY", _tok("sk-ant-api03-", B64URL, 93, "AA")),
    # Hugging Face docs: user access tokens hf_<34>
    K("huggingface_token", "ai", "HF_TOKEN", _tok("hf_", ALPHA_MIXED, 34)),
    # Cohere docs: 40 alnum
    K("cohere_api_key", "ai", "CO_API_KEY", _tok("", ALNUM, 40)),
    # Replicate docs: r8_<37>
    K("replicate_token", "ai", "REPLICATE_API_TOKEN", _tok("r8_", ALNUM, 37)),
    # Groq docs: gsk_<52>
    K("groq_api_key", "ai", "GROQ_API_KEY", _tok("gsk_", ALNUM, 52)),
    # Mistral docs: 32 alnum
    K("mistral_api_key", "ai", "MISTRAL_API_KEY", _tok("", ALNUM, 32)),
    # Perplexity docs: pplx-<48>
    K("perplexity_api_key", "ai", "PERPLEXITY_API_KEY", _tok("pplx-", ALNUM, 48)),
    # xAI docs: xai-<80>
    K("xai_api_key", "ai", "XAI_API_KEY", _tok("xai-", ALNUM, 80)),
    # OpenRouter docs: sk-or-v1-<64 hex>
    K("openrouter_api_key", "ai", "OPENROUTER_API_KEY", _tok("sk-or-v1-", HEX, 64)),
    # DeepSeek / DashScope docs: sk-<32 hex>
    K("deepseek_api_key", "ai", "DEEPSEEK_API_KEY", _tok("sk-", HEX, 32)),
    # Azure OpenAI docs: key1/key2 are 32 hex
    K("azure_openai_key", "ai", "AZURE_OPENAI_API_KEY", _tok("", HEX, 32)),
    K("pinecone_api_key", "ai", "PINECONE_API_KEY", _pinecone),
    K("langsmith_pat", "ai", "LANGSMITH_API_KEY", _langsmith),
    # W&B docs: API keys 40 hex; stored in ~/.netrc for api.wandb.ai
    K("wandb_netrc", "ai", "WANDB_NETRC", _netrc("api.wandb.ai"), True),
    # ElevenLabs: sk_<48 hex>
    K("elevenlabs_api_key", "ai", "ELEVENLABS_API_KEY", _tok("sk_", HEX, 48)),
    # Fireworks docs: fw_<24>
    K("fireworks_api_key", "ai", "FIREWORKS_API_KEY", _tok("fw_", ALNUM, 24)),
    # Zhipu (BigModel) docs: <32 hex>.<16 alnum>
    K(
        "zhipu_api_key",
        "ai",
        "ZHIPUAI_API_KEY",
        lambda rng: (lambda h: (f"{h}.{_r(rng, ALNUM, 16)}", _piece(h)))(_r(rng, HEX, 32)),
    ),
    # Gemini API docs: keys from AI Studio share Google's AIza format
    K("gemini_api_key", "ai", "GEMINI_API_KEY", _tok("AIzaSy", B64URL, 33)),
    # -------------------------------------------------------------------------------------------- saas
    # Shopify docs: admin API access tokens shpat_<32 hex>; shared secrets shpss_
    K("shopify_admin_token", "saas", "SHOPIFY_ACCESS_TOKEN", _tok("shpat_", HEX, 32)),
    K("shopify_shared_secret", "saas", "SHOPIFY_API_SECRET", _tok("shpss_", HEX, 32)),
    K("atlassian_api_token", "saas", "JIRA_API_TOKEN", _atlassian),
    # Notion docs: internal integration secrets ntn_<...>
    K("notion_integration_secret", "saas", "NOTION_TOKEN", _tok("ntn_", ALNUM, 46)),
    K("airtable_pat", "saas", "AIRTABLE_API_KEY", _airtable),
    # Linear docs: lin_api_<40>
    K("linear_api_key", "saas", "LINEAR_API_KEY", _tok("lin_api_", ALNUM, 40)),
    K("asana_pat", "saas", "ASANA_ACCESS_TOKEN", _asana),
    # HubSpot docs: private app tokens pat-na1-<uuid>
    K(
        "hubspot_private_app_token",
        "saas",
        "HUBSPOT_ACCESS_TOKEN",
        lambda rng: (lambda u: ("pat-na1-" + u, u[9:23]))(
            f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 4)}-{_r(rng, HEX, 12)}"
        ),
    ),
    # Figma docs: personal access tokens figd_<40>
    K("figma_pat", "saas", "FIGMA_TOKEN", _tok("figd_", B64URL, 40)),
    # Contentful docs: CFPAT-<43>
    K("contentful_pat", "saas", "CONTENTFUL_MANAGEMENT_TOKEN", _tok("CFPAT-", B64URL, 43)),
    K("postman_api_key", "saas", "POSTMAN_API_KEY", _postman),
    # Okta docs: API tokens 00<40>
    K("okta_api_token", "saas", "OKTA_API_TOKEN", _tok("00", B64URL, 40)),
    # Auth0 docs: client secrets 64 chars
    K("auth0_client_secret", "saas", "AUTH0_CLIENT_SECRET", _tok("", B64URL, 64)),
    # Dropbox docs: short-lived access tokens sl.<...>
    K("dropbox_access_token", "saas", "DROPBOX_TOKEN", _tok("sl.B", B64URL, 135)),
    # Typeform docs: tfp_<...>
    K("typeform_pat", "saas", "TYPEFORM_TOKEN", _tok("tfp_", ALNUM, 44, "_" + "3pPqsZ1kLmN0aB")),
    # 1Password docs: service account tokens ops_eyJ<base64 JSON>
    K(
        "onepassword_sa_token",
        "saas",
        "OP_SERVICE_ACCOUNT_TOKEN",
        _tok("ops_eyJzaWduSW5BZGRyZXNzIjoi", B64, 200),
    ),
    K("mapbox_secret_token", "saas", "MAPBOX_SECRET_TOKEN", _mapbox_secret),
    K("ngrok_authtoken", "saas", "NGROK_AUTHTOKEN", _ngrok),
    # Algolia docs: the Admin API key (32 hex) is secret; the search-only key is public.
    K("algolia_admin_key", "saas", "ALGOLIA_ADMIN_API_KEY", _tok("", HEX, 32)),
    # Django docs: SECRET_KEY, 50 chars; generated keys start "django-insecure-" only for startproject
    K("django_secret_key", "saas", "DJANGO_SECRET_KEY", _tok("", ALNUM + "!@#%^&*(-_=+)", 50)),
    K("basic_auth_header", "saas", "HTTP_AUTH", _basic_header),
    K(
        "url_with_password",
        "saas",
        "GIT_REMOTE",
        _conn_url("https", ["git.corp.example", "gitea.home.lan"], 443, ["deploy", "ci-bot"], ".git"),
    ),
    # Zendesk docs: API tokens 40 alnum, used as {email}/token:{api_token}
    K("zendesk_api_token", "saas", "ZENDESK_API_TOKEN", _tok("", ALNUM, 40)),
    K("generic_vendor_hex_token", "saas", "ACMEPAY_AUTH_TOKEN", _tok("", HEX, 32)),
    K("generic_api_key", "saas", "api_key", _tok("", ALNUM, 40)),
    K("generic_password_words", "saas", "password", _generic_password),
]

# --- contexts ------------------------------------------------------------------------------------------

Ctx = Callable[[random.Random, str, str], str]


def _ticket(rng: random.Random) -> str:
    return f"{rng.choice(['OPS', 'INFRA', 'PAY', 'SEC', 'PLAT'])}-{rng.randrange(100, 9999)}"


def _env_key(var: str) -> str:
    return var if var.upper() == var else var.upper()


NAMED: list[Ctx] = [
    lambda rng, var, v: f"{_env_key(var)}={v}",
    lambda rng, var, v: f'export {_env_key(var)}="{v}"',
    lambda rng, var, v: (
        f"# .env.production (copied from the old box)\nNODE_ENV=production\n{_env_key(var)}={v}\nLOG_LEVEL=info"
    ),
    lambda rng, var, v: (
        f"{var.lower()}: {v}\nregion: {rng.choice(['eu-west-1', 'us-east-2', 'ap-southeast-1'])}"
    ),
    lambda rng, var, v: f'[default]\n{var.lower()} = "{v}"\ntimeout = 30',
    lambda rng, var, v: f'{{"{var.lower()}": "{v}", "retries": 3}}',
    lambda rng, var, v: f'<add key="{var}" value="{v}" />',
    lambda rng, var, v: f'os.environ["{_env_key(var)}"] = "{v}"  # TODO remove before commit',
    lambda rng, var, v: (
        f"const {var.lower()} = '{v}';\nconst client = new Client({{ auth: {var.lower()} }});"
    ),
    lambda rng, var, v: f'{var.lower()} := "{v}" // hardcoded for the spike, see {_ticket(rng)}',
    lambda rng, var, v: f'variable "{var.lower()}" {{\n  default   = "{v}"\n  sensitive = true\n}}',
    lambda rng, var, v: f'      - name: {_env_key(var)}\n        value: "{v}"',
    lambda rng, var, v: f"$ {_env_key(var)}={v} ./scripts/deploy.sh --env prod\n[deploy] starting...",
    lambda rng, var, v: f'gh secret set {_env_key(var)} --body "{v}" --repo acme/platform',
    lambda rng, var, v: f"docker run -d -e {_env_key(var)}={v} -p 8080:8080 acme/api:1.14.2",
    lambda rng, var, v: f"| name | value |\n|---|---|\n| {_env_key(var)} | `{v}` |\n| REGION | fra1 |",
    lambda rng, var, v: (
        f"In [12]: {var.lower()} = \"{v}\"\nIn [13]: resp = session.get(url, headers={{'Authorization': {var.lower()}}})"
    ),
    lambda rng, var, v: (
        f'Traceback (most recent call last):\n  File "sync.py", line 88, in <module>\n    client = Api(key="{v}")\nAuthError: 401 Unauthorized'
    ),
    lambda rng, var, v: (
        f"2026-11-{rng.randrange(10, 30)}T08:{rng.randrange(10, 59)}:11Z DEBUG config loaded {var.lower()}={v} pid={rng.randrange(1000, 60000)}"
    ),
    lambda rng, var, v: (
        f"Runbook: if the sync job 401s, the {_env_key(var)} in Vault went stale. Current one: {v}"
    ),
    lambda rng, var, v: f"<{var}>{v}</{var}>",
    lambda rng, var, v: f"set -x\n+ curl -sf -H 'X-Api-Key: {v}' https://api.internal/v2/health",
    lambda rng, var, v: (
        f"PR #{rng.randrange(100, 4000)}: wire up the new client. Note for reviewers: locally I used {_env_key(var)}='{v}', will move to secrets manager."
    ),
    lambda rng, var, v: f'[[env]]\nname = "{_env_key(var)}"\nvalue = "{v}"',
    lambda rng, var, v: f"kubectl create secret generic app-secrets --from-literal={var.lower()}={v} -n prod",
    lambda rng, var, v: f"{_env_key(var)}: ${{{{ secrets.X }}}}  # was {v} before we moved it",
    lambda rng, var, v: (
        f"spring.datasource.password={v}" if "PASSWORD" in var.upper() else f"app.{var.lower()}={v}"
    ),
    lambda rng, var, v: f"Settings -> API -> {var}: {v} (screenshot transcribed from Priya's laptop)",
    lambda rng, var, v: f'$env:{_env_key(var)} = "{v}"\n.\\scripts\\Publish.ps1 -Verbose',
    lambda rng, var, v: f"set {_env_key(var)}={v}\r\ncall build.cmd",
    lambda rng, var, v: f"[Service]\nEnvironment={_env_key(var)}={v}\nExecStart=/usr/local/bin/worker",
    lambda rng, var, v: (
        f"services:\n  worker:\n    image: acme/worker:2.3\n    environment:\n      {_env_key(var)}: {v}"
    ),
    lambda rng, var, v: f'# values-prod.yaml\nsecrets:\n  {var.lower().replace("_", "")}: "{v}"',
    lambda rng, var, v: f"ENV['{_env_key(var)}'] ||= '{v}'",
    lambda rng, var, v: f"$config['{var.lower()}'] = '{v}';",
    lambda rng, var, v: f'private static final String {_env_key(var)} = "{v}";',
    lambda rng, var, v: f'builder.Configuration["{var}"] = "{v}";',
    lambda rng, var, v: f'let {var.lower()} = "{v}"; // FIXME read from env',
    lambda rng, var, v: f"0 3 * * * {_env_key(var)}={v} /opt/backup/run.sh >> /var/log/backup.log 2>&1",
    lambda rng, var, v: f'curl -sS https://api.vendor.example/v1/me \\\n  -H "Authorization: Bearer {v}"',
    lambda rng, var, v: (
        f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {_env_key(var)}: {v}\n    steps:\n      - run: make deploy"
    ),
    lambda rng, var, v: (
        f"Memory (agent): the user's {var.replace('_', ' ').lower()} for the staging tenant is {v}; they asked me to remember it."
    ),
]

NAMELESS: list[Ctx] = [
    lambda rng, var, v: f"Hola! Aquí está la clave que me pediste: {v} — no la compartas, porfa",
    lambda rng, var, v: f"Kannst du das mal testen? Der Schlüssel ist {v}",
    lambda rng, var, v: f"Voici le jeton pour la préprod : {v} (expire vendredi)",
    lambda rng, var, v: f"本番用のトークンです：{v}\n後で必ずローテーションしてください。",
    lambda rng, var, v: f"这是新的密钥 {v} ，别发到群里",
    lambda rng, var, v: f"Segue o token que o cliente mandou: {v}",
    lambda rng, var, v: f"Вот ключ от прода: {v} — только не коммить",
    lambda rng, var, v: f"새 토큰 여기요 {v} 내일까지 교체할게요",
    lambda rng, var, v: f"Ecco la chiave: {v} grazie!",
    lambda rng, var, v: f"Token burada: {v} — lütfen kimseyle paylaşma",
    lambda rng, var, v: f"Trzymaj, to nowy klucz: {v}",
    lambda rng, var, v: f"यह रहा टोकन: {v} इसे किसी से साझा मत करना",
    lambda rng, var, v: f"هذا هو المفتاح الجديد: {v}",
    lambda rng, var, v: f"Hier is de sleutel voor staging: {v}",
    lambda rng, var, v: f"Khóa API mới đây: {v}",
    lambda rng, var, v: f"Ini kuncinya ya: {v} jangan disebar",
    lambda rng, var, v: f"[10:42] maria: {v}\n[10:42] maria: oops wrong window\n[10:43] tom: rotating now",
    lambda rng, var, v: f"User said the integration works again after they pasted {v} into the admin page.",
    lambda rng, var, v: (
        f"Incident {_ticket(rng)} timeline:\n09:14 leaked value found in build log: {v}\n09:20 revoked"
    ),
    lambda rng, var, v: (
        f"From: ops@acme.example\nSubject: new credentials\n\nHi,\nplease use {v} from Monday.\nThanks"
    ),
    lambda rng, var, v: f"- [ ] rotate {v}\n- [ ] update the dashboard",
    lambda rng, var, v: f"```\n{v}\n```\n^ the thing from the vendor portal",
]

FILE_CONTEXTS: list[Ctx] = [
    lambda rng, var, v: f"Saved to ~/.config/{var.lower()}:\n{v}",
    lambda rng, var, v: f"Memory: the staging box uses this file\n```\n{v}\n```",
    lambda rng, var, v: f"cat > /tmp/creds <<'EOF'\n{v}\nEOF",
    lambda rng, var, v: (
        f"Incident {_ticket(rng)}: this was committed in a public gist:\n\n{v}\n\nRevocation pending."
    ),
    lambda rng, var, v: (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  value: |\n"
        + "\n".join("    " + line for line in v.splitlines())
    ),
    lambda rng, var, v: f"Notebook cell [7]:\nCREDS = '''\n{v}\n'''",
]


# Where each provider's documentation says the value goes: a CLI config file, a header, a URL.
SPECIFIC: dict[str, list[Ctx]] = {
    "npm_token": [lambda rng, var, v: f"//registry.npmjs.org/:_authToken={v}\nalways-auth=true"],
    "pypi_token": [lambda rng, var, v: f"[pypi]\n  username = __token__\n  password = {v}"],
    "cratesio_token": [lambda rng, var, v: f'# ~/.cargo/credentials.toml\n[registry]\ntoken = "{v}"'],
    "rubygems_api_key": [lambda rng, var, v: f"---\n:rubygems_api_key: {v}"],
    "nuget_api_key": [
        lambda rng, var, v: f"dotnet nuget push bin/Release/*.nupkg --api-key {v} --source nuget.org"
    ],
    "dockerhub_pat": [lambda rng, var, v: f"echo {v} | docker login -u acmebot --password-stdin"],
    "github_classic_pat": [
        lambda rng, var, v: f"git remote set-url origin https://x-access-token:{v}@github.com/acme/infra.git",
        lambda rng, var, v: f"url = https://{v}@github.com/acme/site",
    ],
    "gitlab_pat": [lambda rng, var, v: f"git clone https://oauth2:{v}@gitlab.com/acme/backend.git"],
    "kubeconfig_bootstrap_token": [
        lambda rng, var, v: f"users:\n- name: ci\n  user:\n    token: {v}",
        lambda rng, var, v: (
            f"kubeadm join 10.0.0.10:6443 --token {v} --discovery-token-ca-cert-hash sha256:{'0' * 8}"
        ),
    ],
    "kubernetes_sa_jwt": [lambda rng, var, v: f"users:\n- name: deployer\n  user:\n    token: {v}"],
    "stripe_secret_key": [lambda rng, var, v: f"curl https://api.stripe.com/v1/charges -u {v}:"],
    "openai_project_key": [lambda rng, var, v: f'client = OpenAI(api_key="{v}")'],
    "anthropic_api_key": [
        lambda rng, var, v: f"curl https://api.anthropic.com/v1/messages -H 'x-api-key: {v}'"
    ],
    "telegram_bot_token": [
        lambda rng, var, v: (
            f"curl 'https://api.telegram.org/bot{v}/sendMessage?chat_id=-1001&text=deploy%20ok'"
        )
    ],
    "datadog_api_key": [lambda rng, var, v: f"-H 'DD-API-KEY: {v}' https://api.datadoghq.eu/api/v1/validate"],
    "jenkins_api_token": [
        lambda rng, var, v: f"curl -X POST -u admin:{v} https://jenkins.corp/job/release/build"
    ],
    "zendesk_api_token": [
        lambda rng, var, v: f"curl https://acme.zendesk.com/api/v2/tickets.json -u ana@acme.example/token:{v}"
    ],
    "splunk_hec_token": [
        lambda rng, var, v: (
            f"curl -k https://splunk:8088/services/collector -H 'Authorization: Splunk {v}' -d '{{\"event\":\"hi\"}}'"
        )
    ],
    "slack_bot_token": [lambda rng, var, v: f'client = WebClient(token="{v}")'],
    "mailgun_api_key": [
        lambda rng, var, v: f"curl -s --user 'api:{v}' https://api.mailgun.net/v3/mg.acme.example/messages"
    ],
    "twilio_auth_token": [
        lambda rng, var, v: (
            f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{'0' * 32}/Messages.json -u AC{'0' * 32}:{v}"
        )
    ],
    "huggingface_token": [lambda rng, var, v: f"huggingface-cli login --token {v}"],
    "databricks_pat": [
        lambda rng, var, v: (
            f"[DEFAULT]\nhost = https://adb-1234567890123456.7.azuredatabricks.net\ntoken = {v}"
        )
    ],
    "sendgrid_api_key": [lambda rng, var, v: f"sg = SendGridAPIClient('{v}')"],
    "vault_service_token": [lambda rng, var, v: f"vault login {v}"],
    "mapbox_secret_token": [lambda rng, var, v: f"MAPBOX_DOWNLOADS_TOKEN={v} pod install"],
    "cloudflare_api_token": [
        lambda rng, var, v: f"wrangler: export CLOUDFLARE_API_TOKEN={v} && npx wrangler deploy"
    ],
}


# --- disguises -----------------------------------------------------------------------------------------

DISGUISES = [
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split_line",
    "placeholder_word",
]
PLACEHOLDER_WORDS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXX", "fake", "changeme"]
HEX_PLACEHOLDERS = ["deadbeef", "00000000", "cafebabe", "12345678"]


def _fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _insert(rng: random.Random, s: str, pieces: list[str]) -> str:
    out = s
    for p in pieces:
        i = rng.randrange(1, len(out) - 1)
        out = out[:i] + p + out[i:]
    return out


def _percent_all(s: str) -> str:
    return "".join(f"%{b:02X}" for b in s.encode())


def _disguise(
    rng: random.Random, disguise: str, var: str, value: str, secret: str, raw: str
) -> tuple[str, bool]:
    """The disguised text, and whether it wraps the line `var=value` instead of editing the raw text."""
    if disguise == "zero_width":
        marks = [
            rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) for _ in range(rng.randrange(1, 4))
        ]
        return (raw.replace(secret, _insert(rng, secret, marks)), False)
    if disguise == "soft_hyphen":
        return (raw.replace(secret, _insert(rng, secret, ["\u00ad"] * rng.randrange(1, 3))), False)
    if disguise == "fullwidth":
        if "\n" not in value and rng.random() < 0.5:
            return (raw.replace(value, _fullwidth(value)), False)
        i = rng.randrange(0, len(secret) // 2)
        return (raw.replace(secret, secret[:i] + _fullwidth(secret[i : i + 6]) + secret[i + 6 :]), False)
    if disguise == "bidi":
        a, b = rng.choice(
            [("\u202e", "\u202c"), ("\u2066", "\u2069"), ("\u200f", "\u200e"), ("\u202d", "\u202c")]
        )
        i = len(secret) // 3
        return (raw.replace(secret, secret[:i] + a + secret[i : 2 * i] + b + secret[2 * i :]), False)
    if disguise == "percent":
        mode = rng.randrange(3)
        if mode == 0 and "\n" not in value:
            return (raw.replace(value, _percent_all(value)), False)
        if mode == 1 and value in raw:
            enc = quote(value, safe="")
            # quote leaves a purely alphanumeric token unchanged; then encode every character instead.
            return (raw.replace(value, enc if enc != value else _percent_all(value)), False)
        wrapped = quote(f"{var}={value}", safe="")
        return (
            f"Redirect loop in the logs, the callback was https://sso.acme.example/cb?state={_r(rng, HEX, 8)}&next=%2Fsetup%3F{wrapped}",
            True,
        )
    if disguise == "base64":
        if rng.random() < 0.5 and value in raw:
            return (raw.replace(value, base64.b64encode(value.encode()).decode()), False)
        enc = base64.b64encode(f"{var}={value}".encode()).decode()
        wrappers = [
            f"echo {enc} | base64 -d >> .env",
            f"data:\n  config: {enc}",
            f"the CI variable holds base64 of the line: {enc}",
        ]
        return rng.choice(wrappers), True
    if disguise == "split_line":
        i = len(secret) // 2
        sep = rng.choice(["\n", "\\\n    ", "\n  ", "\r\n", " \\\n"])
        return (raw.replace(secret, secret[:i] + sep + secret[i:]), False)
    return raw, False


def _placeholder(rng: random.Random, value: str, secret: str) -> tuple[str, str]:
    """Overwrite part of the random piece with a word that looks like a placeholder: random tokens can
    contain such words, and a filter that trusts them lets real tokens through."""
    words = HEX_PLACEHOLDERS if all(c in HEX for c in secret.lower()) else PLACEHOLDER_WORDS
    word = rng.choice(words)
    new = (
        secret[:2] + word + secret[2 + len(word) :]
        if len(secret) >= len(word) + 4
        else secret[:2] + word + secret[2:]
    )
    return value.replace(secret, new, 1), new


@dataclass(frozen=True)
class RawSample:
    sample: Sample
    # The text before disguising; the credential's secret piece occurs in it verbatim.
    raw_text: str


def _credentials(rng: random.Random) -> list[RawSample]:
    out: list[RawSample] = []
    for kind in KINDS:
        for i in range(PER_KIND):
            # ~40 % plain; the rest spread over the other disguises, each kind getting several.
            disguise = "plain" if i < 4 else DISGUISES[1 + (i + KINDS.index(kind)) % (len(DISGUISES) - 1)]
            value, secret = kind.make(rng)
            if disguise == "placeholder_word":
                value, secret = _placeholder(rng, value, secret)
            if kind.multiline:
                ctx = rng.choice(FILE_CONTEXTS)
            elif kind.name in SPECIFIC and rng.random() < 0.4:
                ctx = rng.choice(SPECIFIC[kind.name])
            else:
                ctx = rng.choice(NAMED if rng.random() < 0.7 else NAMELESS)
            raw = ctx(rng, kind.var, value)
            if disguise in ("plain", "placeholder_word"):
                text = raw
            else:
                text, wrapped = _disguise(rng, disguise, kind.var, value, secret, raw)
                if wrapped:
                    # A wrapped form replaces the whole text: its raw form is the plain line it encodes.
                    raw = f"{kind.var}={value}"
            out.append(RawSample(Sample(kind.name, kind.group, text, disguise, secret), raw))
    return out


# --- look-alikes -----------------------------------------------------------------------------------------


def _uuid(rng: random.Random) -> str:
    return f"{_r(rng, HEX, 8)}-{_r(rng, HEX, 4)}-4{_r(rng, HEX, 3)}-{rng.choice('89ab')}{_r(rng, HEX, 3)}-{_r(rng, HEX, 12)}"


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

LookGen = Callable[[random.Random], str]

LOOKALIKES: dict[str, LookGen] = {
    "git_sha": lambda rng: rng.choice(
        [
            f"Reverted {_r(rng, HEX, 40)} — it broke the token refresh path.",
            f"git cherry-pick {_r(rng, HEX, 12)} && git push",
            f'Fixed in commit {_r(rng, HEX, 40)} ("rotate secret key loader").',
            f"bisect: first bad commit is {_r(rng, HEX, 40)}",
        ]
    ),
    "github_action_pin": lambda rng: (
        f"- uses: actions/checkout@{_r(rng, HEX, 40)} # v4.2.2\n- uses: actions/setup-node@{_r(rng, HEX, 40)} # v4"
    ),
    "sha256_checksum": lambda rng: rng.choice(
        [
            f"{_r(rng, HEX, 64)}  kenfold-1.{rng.randrange(0, 9)}.0-linux-amd64.tar.gz",
            f"SHA256 (release.zip) = {_r(rng, HEX, 64)}",
            f"Verify the download: expected sha256 {_r(rng, HEX, 64)}",
        ]
    ),
    "sha512_checksum": lambda rng: f"sha512sum: {_r(rng, HEX, 128)}  backup-2026-11-30.tar.zst",
    "npm_integrity": lambda rng: (
        f'"node_modules/left-pad": {{\n  "version": "1.3.0",\n  "integrity": "sha512-{_r(rng, B64, 86)}=="\n}}'
    ),
    "go_sum": lambda rng: f"github.com/spf13/cobra v1.8.{rng.randrange(0, 5)} h1:{_r(rng, B64, 43)}=",
    "cargo_lock_checksum": lambda rng: (
        f'[[package]]\nname = "serde"\nversion = "1.0.{rng.randrange(150, 220)}"\nchecksum = "{_r(rng, HEX, 64)}"'
    ),
    "uuid_ids": lambda rng: rng.choice(
        [
            f"primary key {_uuid(rng)} not found in orders table",
            f"Idempotency-Key: {_uuid(rng)}",
            f"request_id={_uuid(rng)} status=500 path=/v1/charges",
            f"AZURE_TENANT_ID={_uuid(rng)}\nAZURE_CLIENT_ID={_uuid(rng)}",
        ]
    ),
    "ulid": lambda rng: f"event id 01{_r(rng, CROCKFORD, 24)} processed twice (the idempotency key matched)",
    "ksuid": lambda rng: f"segment message id {rng.choice('123')}{_r(rng, ALNUM, 26)} dropped by the queue",
    "mongodb_objectid": lambda rng: f'db.users.find({{_id: ObjectId("{_r(rng, HEX, 24)}")}})',
    "stripe_object_ids": lambda rng: rng.choice(
        [
            f"Refunded pi_{_r(rng, ALNUM, 24)} for customer cus_{_r(rng, ALNUM, 14)}",
            f"price id price_{_r(rng, ALNUM, 24)} is the annual plan",
            f"charge ch_{_r(rng, ALNUM, 24)} disputed; invoice in_{_r(rng, ALNUM, 24)}",
            f"webhook event evt_{_r(rng, ALNUM, 24)} retried 3 times",
        ]
    ),
    # Stripe docs: publishable keys are meant to be public in client-side code.
    "stripe_publishable_key": lambda rng: (
        f"<script>const stripe = Stripe('pk_live_{_r(rng, ALNUM, 99)}');</script>"
    ),
    "slack_ids": lambda rng: (
        f"Post alerts to channel C0{_r(rng, UPPER_ALNUM, 9)} and mention user U0{_r(rng, UPPER_ALNUM, 9)} (team T0{_r(rng, UPPER_ALNUM, 8)})"
    ),
    "aws_arn_account": lambda rng: rng.choice(
        [
            f"arn:aws:iam::{_r(rng, DIGITS, 12)}:role/deploy-{_r(rng, LOWER, 6)}",
            f"arn:aws:secretsmanager:eu-west-1:{_r(rng, DIGITS, 12)}:secret:prod/db-{_r(rng, ALNUM, 6)}",
            f"aws sts get-caller-identity -> Account {_r(rng, DIGITS, 12)}, UserId AROA{_r(rng, UPPER_ALNUM, 17)}:session",
        ]
    ),
    # AWS docs: documented example credentials, not real ones.
    "aws_documented_example": lambda rng: rng.choice(
        [
            "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "The docs use AKIAIOSFODNN7EXAMPLE as the access key id in every example.",
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY  # from the AWS CLI guide",
            "[profile user1]\naws_access_key_id=AKIAI44QH8DHBEXAMPLE\naws_secret_access_key=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
            "AWS docs' second example pair: AKIAI44QH8DHBEXAMPLE / je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        ]
    ),
    "doc_placeholders": lambda rng: rng.choice(
        [
            "STRIPE_SECRET_KEY=<your secret key>",
            'export OPENAI_API_KEY="sk-..."  # paste yours here',
            "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "api_key: YOUR_API_KEY_HERE",
            "SLACK_BOT_TOKEN=xoxb-your-token",
            "password: changeme  # set a real one in the vault",
            "Replace <GITLAB_TOKEN> with a token that has read_api scope.",
            "DATABASE_URL=postgres://user:password@localhost:5432/dbname",
            "STRIPE_SECRET_KEY=sk_test_<your_key_here>",
            "ANTHROPIC_API_KEY=your-api-key  # see console settings",
            "HF_TOKEN=hf_xxx",
            "npm config set //registry.npmjs.org/:_authToken=${NPM_TOKEN}",
            "Authorization: Bearer <token>",
            "mongodb+srv://<username>:<password>@cluster0.example.mongodb.net/",
            "TELEGRAM_BOT_TOKEN=123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11  # the Bot API docs' sample",
        ]
    ),
    "secret_references": lambda rng: rng.choice(
        [
            "API_KEY=${API_KEY}",
            'token = os.environ["GITHUB_TOKEN"]',
            "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
            "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
            "STRIPE_KEY: ${{ secrets.STRIPE_KEY }}",
            "secret_key = data.aws_secretsmanager_secret_version.app.secret_string",
            "const apiKey = process.env.OPENAI_API_KEY ?? '';",
            "DD_API_KEY={{ datadog_api_key }}",
            'password = config.get("db", "password")',
            "token: \"{{ vault('secret/data/ci#token') }}\"",
            "password = getpass.getpass('DB password: ')",
            "$password = Read-Host -AsSecureString",
            'api_key = st.secrets["openai"]["api_key"]',
            'AWS_SECRET_ACCESS_KEY: "op://Engineering/aws-prod/secret key"',
            "SENTRY_AUTH_TOKEN=$(gcloud secrets versions access latest --secret=sentry-token)",
            'token := os.Getenv("SLACK_BOT_TOKEN")',
            "spring.datasource.password=${DB_PASSWORD}",
        ]
    ),
    "ssh_public_key": lambda rng: rng.choice(
        [
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_r(rng, B64, 43)} deploy@ci",
            f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{_r(rng, B64, 300)} alice@laptop",
        ]
    ),
    "pem_public_key": lambda rng: (
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"
        + _r(rng, B64, 20)
        + "\n"
        + "\n".join(_r(rng, B64, 64) for _ in range(5))
        + "\nIDAQAB\n-----END PUBLIC KEY-----"
    ),
    "pem_certificate": lambda rng: (
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE"
        + "\n".join(_r(rng, B64, 64) for _ in range(6))
        + "\n-----END CERTIFICATE-----"
    ),
    "key_fingerprints": lambda rng: rng.choice(
        [
            f"The public key fingerprint is SHA256:{_r(rng, B64, 43)}",
            f"gpg: using RSA key {_r(rng, HEX, 40).upper()}",
            f"Host key MD5:{':'.join(_r(rng, HEX, 2) for _ in range(16))}",
        ]
    ),
    "base64_ordinary": lambda rng: rng.choice(
        [
            "Decoded the payload: "
            + base64.b64encode(
                rng.choice(
                    ["Meeting moved to Thursday 3pm, room 4.12", '{"user":"alice","plan":"pro"}']
                ).encode()
            ).decode(),
            f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAB{_r(rng, B64, 120)}==">',
        ]
    ),
    "css_webpack_hashes": lambda rng: rng.choice(
        [
            f'<link rel="stylesheet" href="/static/css/main.{_r(rng, HEX, 8)}.chunk.css">',
            f"emitted chunk vendors~main.{_r(rng, HEX, 20)}.js (412 KiB)",
            f'class="Button_primary__{_r(rng, B64URL, 5)} Header_wrap__{_r(rng, B64URL, 5)}"',
            f"script-src 'sha256-{_r(rng, B64, 43)}='",
        ]
    ),
    "youtube_ids": lambda rng: (
        f"Demo recording: https://www.youtube.com/watch?v={_r(rng, B64URL, 11)} (token refresh at 4:10)"
    ),
    "docker_digest": lambda rng: f"image: ghcr.io/acme/api@sha256:{_r(rng, HEX, 64)}",
    "nix_store_path": lambda rng: (
        f"/nix/store/{_r(rng, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.14/bin/openssl"
    ),
    "ipfs_cid": lambda rng: f"pinned to ipfs://bafybei{_r(rng, 'abcdefghijklmnopqrstuvwxyz234567', 52)}",
    "trace_ids": lambda rng: rng.choice(
        [
            f"traceparent: 00-{_r(rng, HEX, 32)}-{_r(rng, HEX, 16)}-01",
            f"trace id {_r(rng, HEX, 32)} shows the auth service took 2.1 s",
            f"x-amz-request-id: {_r(rng, UPPER_ALNUM, 16)}; x-amz-id-2: {_r(rng, B64, 76)}",
            f"cf-ray: {_r(rng, HEX, 16)}-FRA",
        ]
    ),
    "k8s_resource_names": lambda rng: (
        f"pod api-{_r(rng, HEX, 10)}-{_r(rng, LOWER_ALNUM, 5)} CrashLoopBackOff; secret name: api-token-{_r(rng, LOWER_ALNUM, 5)}"
    ),
    "prose_about_secrets": lambda rng: rng.choice(
        [
            "Rotate the GitHub token every 90 days; the reminder is in the ops calendar.",
            "Never paste the Stripe secret key into Slack; use the 1Password share link instead.",
            "The API key lives in Vault under secret/prod/payments, ask #platform for access.",
            "Token count for the last run: 128,441 prompt tokens, 9,102 completion tokens.",
            "We switched from password auth to SSH keys for the deploy user last sprint.",
            "Le jeton d'accès expire après 24 heures ; le renouveler via le portail.",
            "Die API-Schlüssel werden jetzt in AWS Secrets Manager verwaltet.",
            "トークンは90日ごとに更新してください。",
            "Postmortem: the leaked key was revoked within 12 minutes; secret scanning caught it on push.",
            "Action item: move every API key out of the .env files and into the secrets manager.",
            "The access token expires after one hour; the refresh token lasts 30 days.",
            "Contraseña del Wi-Fi de la oficina: pregúntale a recepción, no la guardes aquí.",
            "Idempotency keys must be unique per request; we reuse the order id for that.",
            "Primary key and foreign key constraints were added in migration 0042.",
        ]
    ),
    # Sentry docs: the DSN's public key only allows sending events; Sentry says DSNs are safe to expose.
    "sentry_dsn": lambda rng: (
        f"Sentry.init({{ dsn: 'https://{_r(rng, HEX, 32)}@o{_r(rng, DIGITS, 6)}.ingest.sentry.io/{_r(rng, DIGITS, 7)}' }})"
    ),
    # Mapbox docs: pk. tokens are public, meant for browsers.
    "mapbox_public_token": lambda rng: (
        f"mapboxgl.accessToken = 'pk.{_b64url(json.dumps({'u': 'acme', 'a': _r(rng, LOWER_ALNUM, 25)}).encode())}.{_r(rng, B64URL, 22)}';"
    ),
    "google_oauth_client_id": lambda rng: (
        f"GOOGLE_CLIENT_ID={_r(rng, DIGITS, 12)}-{_r(rng, LOWER_ALNUM, 32)}.apps.googleusercontent.com"
    ),
    "llm_usage_log": lambda rng: (
        f'{{"id": "chatcmpl-{_r(rng, ALNUM, 29)}", "usage": {{"prompt_tokens": {rng.randrange(100, 9000)}, "completion_tokens": {rng.randrange(10, 900)}}}}}'
    ),
    # Algolia docs: the search-only API key is meant for front-end code; only the admin key is secret.
    "algolia_search_only_key": lambda rng: (
        f"instantsearch({{ appId: '{_r(rng, UPPER_ALNUM, 10)}', searchKey: '{_r(rng, HEX, 32)}' }}) // search-only, public"
    ),
    # RFC 7517: a JWKS publishes the public modulus n and exponent e.
    "jwks_public_key": lambda rng: (
        f'{{"keys": [{{"kty": "RSA", "kid": "{_r(rng, HEX, 16)}", "use": "sig", "n": "{_r(rng, B64URL, 342)}", "e": "AQAB"}}]}}'
    ),
    "ids_in_other_languages": lambda rng: rng.choice(
        [
            f"Die Kundennummer ist cus_{_r(rng, ALNUM, 14)}, Bestellung {_uuid(rng)}.",
            f"La clé primaire {_r(rng, DIGITS, 9)} existe déjà (commit {_r(rng, HEX, 7)}).",
            f"リクエストID {_uuid(rng)} でエラー、トレースID {_r(rng, HEX, 32)}",
            f"El identificador del pedido es ord_{_r(rng, ALNUM, 20)}; la clave de idempotencia {_uuid(rng)}.",
            f"Хэш коммита {_r(rng, HEX, 40)}, токенов в ответе: {rng.randrange(100, 5000)}",
        ]
    ),
    "crypto_public": lambda rng: rng.choice(
        [
            f"tx hash 0x{_r(rng, HEX, 64)} confirmed in block {rng.randrange(18_000_000, 21_000_000)}",
            f"send refunds to 0x{_r(rng, HEX, 40)} (public wallet)",
        ]
    ),
}


def _lookalikes(rng: random.Random) -> list[Sample]:
    # Kinds with a few fixed texts (documented examples, prose) would repeat; a repeat measures nothing new.
    out = []
    seen: set[str] = set()
    for name, gen in LOOKALIKES.items():
        for _ in range(LOOKALIKES_PER_KIND):
            text = gen(rng)
            if text not in seen:
                seen.add(text)
                out.append(Sample(name, "lookalike", text))
    return out


def twelfth_part_raw() -> list[RawSample]:
    """The corpus with each credential's text before disguising (look-alikes carry their own text)."""
    rng = random.Random(SEED)
    creds = _credentials(rng)
    looks = [RawSample(s, s.text) for s in _lookalikes(rng)]
    return creds + looks


def twelfth_part() -> list[Sample]:
    return [r.sample for r in twelfth_part_raw()]
