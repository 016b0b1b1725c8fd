"""The fifth independent part of the secret corpus: credentials generated from the formats the providers
document (prefixes, lengths, alphabets, connection-string and key-file shapes), put into memory texts an agent
might store, some disguised, next to look-alikes that are not credentials.

Written from vendor documentation only, without reading the filter's rules, so it measures the filter
against the world rather than against itself.
"""

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from tests.common.secret_world.texts import Sample

SEED = 5_061_2026

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIG = string.digits
ALNUM = UPPER + LOWER + DIG
LALNUM = LOWER + DIG
UALNUM = UPPER + DIG
HEX = "0123456789abcdef"
UHEX = HEX.upper()
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
B32 = UPPER + "234567"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _uuid(rng: random.Random) -> str:
    h = _r(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


@dataclass(frozen=True)
class Cred:
    # The credential as it is pasted, the span [start, end) of its random part (where a disguise goes and
    # the secret piece is taken from), and the name people usually keep it under.
    value: str
    start: int
    end: int
    var: str


def _tok(prefix: str, body: str, suffix: str = "", var: str = "TOKEN") -> Cred:
    return Cred(prefix + body + suffix, len(prefix), len(prefix) + len(body), var)


def _in(template: str, body: str, var: str) -> Cred:
    # template has one "{}" where the random part goes
    before, after = template.split("{}")
    return Cred(before + body + after, len(before), len(before) + len(body), var)


def _pem(rng: random.Random, label: str, nbytes: int) -> str:
    raw = _b64(rng.randbytes(nbytes))
    lines = [raw[i : i + 64] for i in range(0, len(raw), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _pem_cred(rng: random.Random, label: str, nbytes: int, var: str) -> Cred:
    pem = _pem(rng, label, nbytes)
    start = pem.index("\n", pem.index("\n") + 1) + 1  # from the second body line, clear of the header
    return Cred(pem, start, start + 60, var)


Maker = Callable[[random.Random], Cred]


@dataclass(frozen=True)
class KindSpec:
    name: str
    group: str
    make: Maker


def _openssh_key(rng: random.Random) -> Cred:
    # OpenSSH private key format (PROTOCOL.key): base64 of "openssh-key-v1\0" + fields, 70 chars a line
    blob = b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none" + rng.randbytes(360)
    raw = _b64(blob)
    lines = [raw[i : i + 70] for i in range(0, len(raw), 70)]
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    start = text.index("\n", text.index("\n") + 1) + 1
    return Cred(text, start, start + 64, "id_ed25519")


def _gcp_sa_json(rng: random.Random) -> Cred:
    # Google Cloud IAM docs "Create service account keys": JSON with type, project_id, private_key_id,
    # private_key (PEM PKCS#8, newlines escaped), client_email ...
    pem = _pem(rng, "PRIVATE KEY", 1190).replace("\n", "\\n")
    project = rng.choice(["billing-prod-381", "kf-analytics", "acme-data-22"])
    doc = (
        "{\n"
        '  "type": "service_account",\n'
        f'  "project_id": "{project}",\n'
        f'  "private_key_id": "{_r(rng, HEX, 40)}",\n'
        f'  "private_key": "{pem}\\n",\n'
        f'  "client_email": "etl-runner@{project}.iam.gserviceaccount.com",\n'
        f'  "client_id": "{_r(rng, DIG, 21)}",\n'
        '  "token_uri": "https://oauth2.googleapis.com/token"\n'
        "}"
    )
    start = doc.index("KEY-----\\n") + len("KEY-----\\n") + 70
    return Cred(doc, start, start + 48, "GOOGLE_APPLICATION_CREDENTIALS_JSON")


def _jwt(rng: random.Random, payload: dict[str, object], sig_len: int = 43) -> tuple[str, int, int]:
    def seg(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

    head = seg({"alg": "HS256", "typ": "JWT"})
    body = seg(payload)
    sig = _r(rng, URLSAFE, sig_len)
    token = f"{head}.{body}.{sig}"
    return token, len(head) + len(body) + 2, len(token)


def _supabase(rng: random.Random) -> Cred:
    # Supabase docs "API keys": the service_role key is a JWT signed with the project's JWT secret
    ref = _r(rng, LOWER, 20)
    token, a, b = _jwt(rng, {"iss": "supabase", "ref": ref, "role": "service_role", "iat": 1712000000})
    return Cred(token, a, b, "SUPABASE_SERVICE_ROLE_KEY")


def _docker_config(rng: random.Random) -> Cred:
    # Docker docs "docker login": ~/.docker/config.json keeps "auth": base64("user:password")
    user = rng.choice(["ci-bot", "deploy", "jlaurent"])
    pw = _r(rng, ALNUM, 20)
    auth = _b64(f"{user}:{pw}".encode())
    doc = '{\n  "auths": {\n    "registry.example-corp.io": {\n      "auth": "' + auth + '"\n    }\n  }\n}'
    start = doc.index(auth)
    return Cred(doc, start + 4, start + len(auth) - 4, "config.json")


def _basic_header(rng: random.Random) -> Cred:
    # RFC 7617: Authorization: Basic base64(user-id ":" password)
    user = rng.choice(["admin", "svc-reporting", "grafana"])
    pw = _r(rng, ALNUM, 18)
    enc = _b64(f"{user}:{pw}".encode())
    v = f"Authorization: Basic {enc}"
    return Cred(v, len(v) - len(enc) + 4, len(v) - 2, "AUTH_HEADER")


def _words_password(rng: random.Random) -> Cred:
    words = [
        "harbor",
        "velvet",
        "quartz",
        "mango",
        "tundra",
        "pixel",
        "saffron",
        "orbit",
        "cobalt",
        "lantern",
    ]
    pw = (
        rng.choice(words).capitalize()
        + rng.choice("!#%*-_")
        + rng.choice(words)
        + _r(rng, DIG, 4)
        + rng.choice(words)
    )
    return Cred(pw, 0, len(pw), "password")


def _kubeconfig(rng: random.Random) -> Cred:
    # Kubernetes docs "Organizing cluster access using kubeconfig files": users[].user.token, here a bound
    # service account token (a JWT)
    token, a, b = _jwt(
        rng,
        {
            "iss": "https://kubernetes.default.svc",
            "sub": "system:serviceaccount:ci:deployer",
            "exp": 1893456000,
        },
        342,
    )
    cluster = rng.choice(["prod-eu", "gke-analytics", "k3s-lab"])
    head = f"apiVersion: v1\nkind: Config\ncurrent-context: {cluster}\nusers:\n- name: deployer\n  user:\n    token: "
    return Cred(head + token + "\n", len(head) + a + 40, len(head) + b - 40, "kubeconfig")


def _aws_secret(rng: random.Random) -> Cred:
    return _tok("", _r(rng, ALNUM + "+/", 40), var="AWS_SECRET_ACCESS_KEY")


def _mercadopago(rng: random.Random) -> Cred:
    # Mercado Pago developers "Credenciales": production Access Token APP_USR-<digits>-<digits>-<hex>-<digits>
    mid = _r(rng, HEX, 32)
    v = f"APP_USR-{_r(rng, DIG, 16)}-{_r(rng, DIG, 6)}-{mid}-{_r(rng, DIG, 9)}"
    s = v.index(mid)
    return Cred(v, s, s + 32, "MP_ACCESS_TOKEN")


def _braintree(rng: random.Random) -> Cred:
    # Braintree/PayPal docs: access_token$production$<merchant id>$<32 hex>
    mid = _r(rng, HEX, 32)
    v = f"access_token$production${_r(rng, LALNUM, 16)}${mid}"
    return Cred(v, len(v) - 32, len(v), "BRAINTREE_ACCESS_TOKEN")


def _astra(rng: random.Random) -> Cred:
    # DataStax Astra docs "Application tokens": AstraCS:<24 letters>:<64 hex>
    mid = _r(rng, HEX, 64)
    v = f"AstraCS:{_r(rng, ALNUM, 24)}:{mid}"
    return Cred(v, len(v) - 64, len(v), "ASTRA_DB_APPLICATION_TOKEN")


def _twilio(rng: random.Random) -> Cred:
    # Twilio docs "Auth tokens": Account SID AC + 32 hex, Auth Token 32 hex
    v = _r(rng, HEX, 32)
    return Cred(v, 0, 32, "TWILIO_AUTH_TOKEN")


def _slack_webhook(rng: random.Random) -> Cred:
    # Slack docs "Sending messages using incoming webhooks": https://hooks.slack.com/services/T.../B.../<24>
    secret = _r(rng, ALNUM, 24)
    v = f"https://hooks.slack.com/services/T{_r(rng, UALNUM, 8)}/B{_r(rng, UALNUM, 10)}/{secret}"
    return Cred(v, len(v) - 24, len(v), "SLACK_WEBHOOK_URL")


def _discord_webhook(rng: random.Random) -> Cred:
    # Discord developer docs "Webhook resource": /api/webhooks/{webhook.id}/{webhook.token}
    secret = _r(rng, URLSAFE, 68)
    v = f"https://discord.com/api/webhooks/{_r(rng, DIG, 19)}/{secret}"
    return Cred(v, len(v) - 68, len(v), "DISCORD_WEBHOOK")


def _discord_bot(rng: random.Random) -> Cred:
    # Discord bot token: base64(user id) . timestamp (6) . HMAC (27 or 38)
    uid = base64.b64encode(_r(rng, DIG, 18).encode()).decode().rstrip("=")
    v = f"{uid}.{_r(rng, URLSAFE, 6)}.{_r(rng, URLSAFE, 38)}"
    return Cred(v, len(v) - 38, len(v), "DISCORD_BOT_TOKEN")


def _telegram(rng: random.Random) -> Cred:
    # Telegram Bot API docs: token looks like 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11 (bot id : 35 chars)
    body = "AA" + _r(rng, URLSAFE, 33)
    v = f"{rng.randint(10**8, 8 * 10**9)}:{body}"
    return Cred(v, len(v) - 35, len(v), "TELEGRAM_BOT_TOKEN")


def _teams_webhook(rng: random.Random) -> Cred:
    # Microsoft Teams incoming webhook URL (webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<id>/<guid>)
    secret = _r(rng, HEX, 32)
    v = (
        f"https://contoso.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/"
        f"{secret}/{_uuid(rng)}"
    )
    s = v.index(secret)
    return Cred(v, s, s + 32, "TEAMS_WEBHOOK_URL")


def _azure_storage(rng: random.Random) -> Cred:
    # Azure docs "Configure Azure Storage connection strings": AccountKey is 64 bytes base64 (88 chars)
    key = _b64(rng.randbytes(64))
    v = (
        f"DefaultEndpointsProtocol=https;AccountName=stlogs{_r(rng, LALNUM, 6)};AccountKey={key};"
        "EndpointSuffix=core.windows.net"
    )
    s = v.index(key)
    return Cred(v, s, s + 86, "AZURE_STORAGE_CONNECTION_STRING")


def _azure_sas(rng: random.Random) -> Cred:
    # Azure docs "Create a service SAS": sv=...&sp=...&se=...&sig=<url-encoded base64 HMAC-SHA256>
    sig = quote(_b64(rng.randbytes(32)), safe="")
    v = f"?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01T00:00:00Z&spr=https&sig={sig}"
    return Cred(v, len(v) - len(sig), len(v), "AZURE_SAS")


def _azure_client_secret(rng: random.Random) -> Cred:
    # Entra ID app client secrets: 40 chars, 3 chars + "8Q~" + 34 of [A-Za-z0-9_.~-]
    body = _r(rng, ALNUM, 3) + "8Q~" + _r(rng, ALNUM + "_.~-", 34)
    return Cred(body, 6, 40, "AZURE_CLIENT_SECRET")


def _yc_iam(rng: random.Random) -> Cred:
    # Yandex Cloud docs "IAM token": starts with t1. then base64url segments
    v = "t1.9euelZ" + _r(rng, URLSAFE, 80) + "." + _r(rng, URLSAFE, 86)
    return Cred(v, 9, 89, "YC_TOKEN")


def _tfc(rng: random.Random) -> Cred:
    # HCP Terraform API tokens: <14>.atlasv1.<67>
    tail = _r(rng, URLSAFE, 67)
    v = f"{_r(rng, ALNUM, 14)}.atlasv1.{tail}"
    return Cred(v, len(v) - 67, len(v), "TFE_TOKEN")


def _pg_url(rng: random.Random) -> Cred:
    pw = _r(rng, ALNUM, 22)
    v = f"postgresql://app_rw:{pw}@db-primary.internal:5432/orders?sslmode=require"
    s = v.index(pw)
    return Cred(v, s, s + 22, "DATABASE_URL")


def _mysql_url(rng: random.Random) -> Cred:
    pw = _r(rng, ALNUM + "_", 18)
    v = f"mysql://reporting:{pw}@10.20.3.14:3306/analytics"
    s = v.index(pw)
    return Cred(v, s, s + 18, "MYSQL_URL")


def _mongo_srv(rng: random.Random) -> Cred:
    # MongoDB docs "Connection String": mongodb+srv://user:pass@cluster0.xxxxx.mongodb.net/
    pw = _r(rng, ALNUM, 20)
    v = f"mongodb+srv://atlasAdmin:{pw}@cluster0.{_r(rng, LALNUM, 5)}.mongodb.net/?retryWrites=true&w=majority"
    s = v.index(pw)
    return Cred(v, s, s + 20, "MONGODB_URI")


def _redis_url(rng: random.Random) -> Cred:
    # redis-py / Redis docs: redis://[[username]:[password]]@host:port/db, rediss:// for TLS
    pw = _r(rng, ALNUM, 32)
    v = f"rediss://default:{pw}@cache-7.upstash.io:6379/0"
    s = v.index(pw)
    return Cred(v, s, s + 32, "REDIS_URL")


def _pgpass(rng: random.Random) -> Cred:
    # PostgreSQL docs "The Password File": hostname:port:database:username:password
    pw = _r(rng, ALNUM, 20)
    v = f"db-replica.prod.internal:5432:*:etl_reader:{pw}"
    return Cred(v, len(v) - 20, len(v), ".pgpass")


def _jdbc(rng: random.Random) -> Cred:
    pw = _r(rng, ALNUM, 16)
    v = f"jdbc:postgresql://pg.corp:5432/ledger?user=ledger_app&password={pw}&ssl=true"
    s = v.index(pw)
    return Cred(v, s, s + 16, "SPRING_DATASOURCE_URL")


def _mssql(rng: random.Random) -> Cred:
    # SqlClient connection string keywords: Server=...;Database=...;User Id=...;Password=...;
    pw = _r(rng, ALNUM, 14) + rng.choice("!@#$") + _r(rng, DIG, 3)
    v = f"Server=tcp:sql-erp.database.windows.net,1433;Database=erp;User ID=erp_svc;Password={pw};Encrypt=True;"
    s = v.index(pw)
    return Cred(v, s, s + 18, "ConnectionStrings__Erp")


def _netrc(rng: random.Random) -> Cred:
    pw = _r(rng, ALNUM, 24)
    v = f"machine artifacts.corp.example login build-agent password {pw}"
    return Cred(v, len(v) - 24, len(v), ".netrc")


def _npmrc(rng: random.Random) -> Cred:
    # npm docs ".npmrc": //registry.npmjs.org/:_authToken=<token>; npm tokens are npm_ + 36
    t = _r(rng, ALNUM, 36)
    v = f"//registry.npmjs.org/:_authToken=npm_{t}"
    return Cred(v, len(v) - 36, len(v), ".npmrc")


def _pypirc(rng: random.Random) -> Cred:
    # PyPI docs "API tokens": username __token__, password pypi-AgEIcHlwaS5vcmc... (macaroon, base64url)
    t = _r(rng, URLSAFE, 150)
    v = f"[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJ{t}"
    return Cred(v, len(v) - 150, len(v), ".pypirc")


def _keyed(var: str, alphabet: str, n: int) -> Maker:
    # "value under a secret name": the vendor documents only the length/alphabet, the name says what it is
    def make(rng: random.Random) -> Cred:
        return _tok("", _r(rng, alphabet, n), var=var)

    return make


def _pref(prefix: str, alphabet: str, n: int, var: str, suffix: str = "") -> Maker:
    def make(rng: random.Random) -> Cred:
        return _tok(prefix, _r(rng, alphabet, n), suffix, var=var)

    return make


def _stripe_whsec(rng: random.Random) -> Cred:
    return _tok("whsec_", _r(rng, ALNUM, 32), var="STRIPE_WEBHOOK_SECRET")


def _gh_fine(rng: random.Random) -> Cred:
    # GitHub docs "About authentication": fine-grained PATs start github_pat_ (22 + "_" + 59)
    body = _r(rng, ALNUM, 22) + "_" + _r(rng, ALNUM, 59)
    return _tok("github_pat_", body, var="GH_TOKEN")


def _grafana_sa(rng: random.Random) -> Cred:
    # Grafana docs "Service account tokens": glsa_<32 alnum>_<8 hex checksum>
    return _tok("glsa_", _r(rng, ALNUM, 32), "_" + _r(rng, HEX, 8), var="GRAFANA_TOKEN")


def _dynatrace(rng: random.Random) -> Cred:
    # Dynatrace docs "Access tokens": dt0c01.<24 public id>.<64 secret>
    sec = _r(rng, UALNUM, 64)
    v = f"dt0c01.{_r(rng, UALNUM, 24)}.{sec}"
    return Cred(v, len(v) - 64, len(v), "DT_API_TOKEN")


def _postman(rng: random.Random) -> Cred:
    # Postman API keys: PMAK-<24 hex>-<34 hex>
    sec = _r(rng, HEX, 34)
    v = f"PMAK-{_r(rng, HEX, 24)}-{sec}"
    return Cred(v, len(v) - 34, len(v), "POSTMAN_API_KEY")


def _airtable(rng: random.Random) -> Cred:
    # Airtable docs "Personal access tokens": pat<14>.<64 hex>
    sec = _r(rng, HEX, 64)
    v = f"pat{_r(rng, ALNUM, 14)}.{sec}"
    return Cred(v, len(v) - 64, len(v), "AIRTABLE_TOKEN")


def _hubspot(rng: random.Random) -> Cred:
    # HubSpot private app access tokens: pat-na1-<uuid>
    u = _uuid(rng)
    return _tok(f"pat-{rng.choice(['na1', 'eu1'])}-", u, var="HUBSPOT_ACCESS_TOKEN")


def _okta(rng: random.Random) -> Cred:
    # Okta docs "Create an API token": used as "Authorization: SSWS {api_token}", 42 chars starting 00
    t = "00" + _r(rng, URLSAFE, 40)
    v = f"Authorization: SSWS {t}"
    return Cred(v, len(v) - 40, len(v), "OKTA_API_TOKEN")


def _splunk_hec(rng: random.Random) -> Cred:
    # Splunk docs "HTTP Event Collector": Authorization: Splunk <GUID token>
    t = _uuid(rng).upper()
    v = f"Authorization: Splunk {t}"
    return Cred(v, len(v) - 36, len(v), "SPLUNK_HEC_TOKEN")


def _opsgenie(rng: random.Random) -> Cred:
    # Opsgenie docs "API access": Authorization: GenieKey <uuid>
    t = _uuid(rng)
    v = f"Authorization: GenieKey {t}"
    return Cred(v, len(v) - 36, len(v), "OPSGENIE_API_KEY")


def _mailchimp(rng: random.Random) -> Cred:
    # Mailchimp Marketing API docs: API key <32 hex>-<dc> e.g. -us6
    return _tok("", _r(rng, HEX, 32), f"-us{rng.randint(1, 21)}", var="MAILCHIMP_API_KEY")


def _atlassian(rng: random.Random) -> Cred:
    # Atlassian API tokens: ATATT3xFfGF0 + ~180 base64url chars with an 8-hex checksum at the end
    return _tok("ATATT3xFfGF0", _r(rng, URLSAFE, 170), "=" + _r(rng, UHEX, 8), var="JIRA_API_TOKEN")


def _sendgrid(rng: random.Random) -> Cred:
    # Twilio SendGrid API keys: SG.<22>.<43>
    sec = _r(rng, URLSAFE, 43)
    v = f"SG.{_r(rng, URLSAFE, 22)}.{sec}"
    return Cred(v, len(v) - 43, len(v), "SENDGRID_API_KEY")


def _anthropic(rng: random.Random) -> Cred:
    # Anthropic console API keys: sk-ant-api03-<93 base64url>AA
    return _tok("sk-ant-api03-", _r(rng, URLSAFE, 93), "AA", var="ANTHROPIC_API_KEY")


def _openai_proj(rng: random.Random) -> Cred:
    # OpenAI project keys: sk-proj-<long base64url, contains T3BlbkFJ ("OpenAI" in base64)>
    body = _r(rng, URLSAFE, 74) + "T3BlbkFJ" + _r(rng, URLSAFE, 74)
    return _tok("sk-proj-", body, var="OPENAI_API_KEY")


def _openai_legacy(rng: random.Random) -> Cred:
    return _tok("sk-", _r(rng, ALNUM, 20) + "T3BlbkFJ" + _r(rng, ALNUM, 20), var="OPENAI_API_KEY")


def _langsmith(rng: random.Random) -> Cred:
    # LangSmith API keys: lsv2_pt_<32 hex>_<10 hex> (personal) or lsv2_sk_ (service)
    return _tok("lsv2_pt_", _r(rng, HEX, 32), "_" + _r(rng, HEX, 10), var="LANGSMITH_API_KEY")


def _yc_api(rng: random.Random) -> Cred:
    # Yandex Cloud docs "API key": AQVN + 36 base64url
    return _tok("AQVN", _r(rng, URLSAFE, 36), var="YC_API_KEY")


KINDS: list[KindSpec] = [
    # --- cloud
    # AWS docs "Understanding unique ID prefixes": AKIA + 16 chars of A-Z2-7 for long-term access keys
    KindSpec("aws_access_key_id", "cloud", _pref("AKIA", B32, 16, "AWS_ACCESS_KEY_ID")),
    # AWS docs "Managing access keys": secret access key is 40 chars base64-like
    KindSpec("aws_secret_access_key", "cloud", _aws_secret),
    # AWS STS temporary credentials start ASIA
    KindSpec("aws_session_key_id", "cloud", _pref("ASIA", B32, 16, "AWS_ACCESS_KEY_ID")),
    # Google Cloud docs "API keys": AIza + 35 [A-Za-z0-9_-]
    KindSpec("gcp_api_key", "cloud", _pref("AIza", URLSAFE, 35, "GOOGLE_API_KEY")),
    KindSpec("gcp_service_account_json", "cloud", _gcp_sa_json),
    KindSpec("azure_storage_connection_string", "cloud", _azure_storage),
    KindSpec("azure_sas_token", "cloud", _azure_sas),
    KindSpec("azure_client_secret", "cloud", _azure_client_secret),
    # DigitalOcean docs "Personal access tokens": dop_v1_ + 64 hex (doo_v1_ OAuth)
    KindSpec("digitalocean_pat", "cloud", _pref("dop_v1_", HEX, 64, "DIGITALOCEAN_TOKEN")),
    # Alibaba Cloud AccessKey ID: LTAI + 20 alnum; the secret is 30 alnum
    KindSpec("alibaba_access_key_id", "cloud", _pref("LTAI", ALNUM, 20, "ALIBABA_CLOUD_ACCESS_KEY_ID")),
    KindSpec("alibaba_access_key_secret", "cloud", _keyed("ALIBABA_CLOUD_ACCESS_KEY_SECRET", ALNUM, 30)),
    # Tencent Cloud API keys: SecretId AKID + 32 alnum
    KindSpec("tencent_secret_id", "cloud", _pref("AKID", ALNUM, 32, "TENCENTCLOUD_SECRET_ID")),
    # IBM Cloud API key: 44 chars [A-Za-z0-9_-]
    KindSpec("ibm_cloud_api_key", "cloud", _keyed("IBMCLOUD_API_KEY", URLSAFE, 44)),
    # Linode/Akamai personal access token: 64 hex
    KindSpec("linode_token", "cloud", _keyed("LINODE_TOKEN", HEX, 64)),
    # Hetzner Cloud API token: 64 alnum
    KindSpec("hetzner_token", "cloud", _keyed("HCLOUD_TOKEN", ALNUM, 64)),
    # Cloudflare API tokens: 40 chars [A-Za-z0-9_-]
    KindSpec("cloudflare_api_token", "cloud", _keyed("CLOUDFLARE_API_TOKEN", URLSAFE, 40)),
    # Scaleway docs: secret key is a UUID, access key SCW + 17
    KindSpec("scaleway_secret_key", "cloud", lambda rng: _tok("", _uuid(rng), var="SCW_SECRET_KEY")),
    KindSpec("yandex_iam_token", "cloud", _yc_iam),
    KindSpec("yandex_api_key", "cloud", _yc_api),
    # Netlify personal access tokens: nfp_ + 36
    KindSpec("netlify_pat", "cloud", _pref("nfp_", ALNUM, 36, "NETLIFY_AUTH_TOKEN")),
    # Vercel access tokens: 24 alnum
    KindSpec("vercel_token", "cloud", _keyed("VERCEL_TOKEN", ALNUM, 24)),
    # Fly.io tokens: "FlyV1 fm2_" + long base64
    KindSpec("flyio_token", "cloud", _pref("FlyV1 fm2_", B64, 120, "FLY_API_TOKEN")),
    KindSpec("kubeconfig_token", "cloud", _kubeconfig),
    KindSpec("ssh_private_key", "cloud", _openssh_key),
    KindSpec(
        "rsa_private_key_pem", "cloud", lambda rng: _pem_cred(rng, "RSA PRIVATE KEY", 1190, "server.key")
    ),
    KindSpec("ec_private_key_pem", "cloud", lambda rng: _pem_cred(rng, "EC PRIVATE KEY", 121, "tls.key")),
    # --- ci
    # GitHub docs "About authentication to GitHub": ghp_, gho_, ghu_, ghs_, ghr_ + 36
    KindSpec("github_pat_classic", "ci", _pref("ghp_", ALNUM, 36, "GITHUB_TOKEN")),
    KindSpec("github_fine_grained_pat", "ci", _gh_fine),
    KindSpec("github_oauth_token", "ci", _pref("gho_", ALNUM, 36, "GH_OAUTH_TOKEN")),
    KindSpec("github_app_installation_token", "ci", _pref("ghs_", ALNUM, 36, "GITHUB_APP_TOKEN")),
    # GitLab docs "Token overview": glpat- + 20, glrt- runner, glptt- pipeline trigger, gldt- deploy
    KindSpec("gitlab_pat", "ci", _pref("glpat-", URLSAFE, 20, "GITLAB_TOKEN")),
    KindSpec("gitlab_runner_token", "ci", _pref("glrt-", URLSAFE, 20, "RUNNER_TOKEN")),
    KindSpec("gitlab_trigger_token", "ci", _pref("glptt-", HEX, 40, "TRIGGER_TOKEN")),
    KindSpec("gitlab_deploy_token", "ci", _pref("gldt-", URLSAFE, 20, "DEPLOY_TOKEN")),
    # CircleCI personal API tokens: CCIPAT_<...>_<40 hex>
    KindSpec("circleci_pat", "ci", _pref("CCIPAT_", ALNUM, 22, "CIRCLECI_TOKEN", "_" + "a1b2" * 10)),
    # Bitbucket app passwords: start ATBB, then a long alphanumeric body
    KindSpec("bitbucket_app_password", "ci", _pref("ATBB", ALNUM, 32, "BITBUCKET_APP_PASSWORD")),
    # Buildkite API access tokens: bkua_ + 40 hex
    KindSpec("buildkite_token", "ci", _pref("bkua_", HEX, 40, "BUILDKITE_API_TOKEN")),
    # Jenkins API token: 34 hex ("11" + 32 hex)
    KindSpec("jenkins_api_token", "ci", _pref("11", HEX, 32, "JENKINS_API_TOKEN")),
    KindSpec("terraform_cloud_token", "ci", _tfc),
    # Doppler service tokens: dp.st.<env>.<40 alnum>
    KindSpec("doppler_service_token", "ci", _pref("dp.st.prd.", ALNUM, 40, "DOPPLER_TOKEN")),
    # HashiCorp Vault 1.10+ service tokens: hvs. + 24+ base62
    KindSpec("vault_token", "ci", _pref("hvs.", ALNUM, 90, "VAULT_TOKEN")),
    # --- chat
    # Slack docs "Token types": xoxb- bot, xoxp- user, xapp- app-level
    KindSpec(
        "slack_bot_token",
        "chat",
        lambda rng: _tok(
            f"xoxb-{_r(rng, DIG, 12)}-{_r(rng, DIG, 13)}-", _r(rng, ALNUM, 24), var="SLACK_BOT_TOKEN"
        ),
    ),
    KindSpec(
        "slack_user_token",
        "chat",
        lambda rng: _tok(
            f"xoxp-{_r(rng, DIG, 12)}-{_r(rng, DIG, 12)}-{_r(rng, DIG, 13)}-",
            _r(rng, HEX, 32),
            var="SLACK_USER_TOKEN",
        ),
    ),
    KindSpec(
        "slack_app_token",
        "chat",
        lambda rng: _tok(
            f"xapp-1-A{_r(rng, UALNUM, 10)}-{_r(rng, DIG, 13)}-", _r(rng, HEX, 64), var="SLACK_APP_TOKEN"
        ),
    ),
    KindSpec("slack_webhook_url", "chat", _slack_webhook),
    KindSpec("discord_bot_token", "chat", _discord_bot),
    KindSpec("discord_webhook_url", "chat", _discord_webhook),
    KindSpec("telegram_bot_token", "chat", _telegram),
    KindSpec("teams_webhook_url", "chat", _teams_webhook),
    # Mattermost personal access tokens: 26 lowercase alnum
    KindSpec("mattermost_token", "chat", _keyed("MATTERMOST_TOKEN", LALNUM, 26)),
    # LINE Messaging API channel access token: long base64 (~172)
    KindSpec("line_channel_token", "chat", _keyed("LINE_CHANNEL_ACCESS_TOKEN", B64, 172)),
    # --- payment
    # Stripe docs "API keys": sk_live_, rk_live_ (restricted), whsec_ webhook signing secrets
    KindSpec("stripe_secret_key", "payment", _pref("sk_live_", ALNUM, 99, "STRIPE_SECRET_KEY")),
    KindSpec("stripe_restricted_key", "payment", _pref("rk_live_", ALNUM, 99, "STRIPE_RESTRICTED_KEY")),
    KindSpec("stripe_webhook_secret", "payment", _stripe_whsec),
    KindSpec("braintree_access_token", "payment", _braintree),
    # Square developer docs: production access tokens EAAA + 60 base64url
    KindSpec("square_access_token", "payment", _pref("EAAA", URLSAFE, 60, "SQUARE_ACCESS_TOKEN")),
    # Razorpay docs "API keys": key id rzp_live_ + 14, key secret 24 alnum
    KindSpec("razorpay_key_secret", "payment", _keyed("RAZORPAY_KEY_SECRET", ALNUM, 24)),
    # Paystack docs "API keys": sk_live_ + 40 hex
    KindSpec("paystack_secret_key", "payment", _pref("sk_live_", HEX, 40, "PAYSTACK_SECRET_KEY")),
    # Flutterwave docs: FLWSECK-<32 hex>-X
    KindSpec("flutterwave_secret_key", "payment", _pref("FLWSECK-", HEX, 32, "FLW_SECRET_KEY", "-X")),
    KindSpec("mercadopago_access_token", "payment", _mercadopago),
    # Shopify docs "Access tokens": shpat_ (admin API), shpss_ (shared secret) + 32 hex
    KindSpec("shopify_admin_token", "payment", _pref("shpat_", HEX, 32, "SHOPIFY_ACCESS_TOKEN")),
    KindSpec("shopify_shared_secret", "payment", _pref("shpss_", HEX, 32, "SHOPIFY_API_SECRET")),
    # Mollie docs "API keys": live_ + 30 alnum
    KindSpec("mollie_live_key", "payment", _pref("live_", ALNUM, 30, "MOLLIE_API_KEY")),
    # Midtrans (Indonesia) server key: Mid-server- + 24 base64url
    KindSpec("midtrans_server_key", "payment", _pref("Mid-server-", URLSAFE, 24, "MIDTRANS_SERVER_KEY")),
    # Adyen API key: AQE + long base64-ish with dots/pipes
    KindSpec("adyen_api_key", "payment", _pref("AQEyhmfxK", URLSAFE, 110, "ADYEN_API_KEY")),
    # --- database
    KindSpec("postgres_url", "database", _pg_url),
    KindSpec("mysql_url", "database", _mysql_url),
    KindSpec("mongodb_srv_uri", "database", _mongo_srv),
    KindSpec("redis_url", "database", _redis_url),
    KindSpec("pgpass_line", "database", _pgpass),
    KindSpec("jdbc_password", "database", _jdbc),
    KindSpec("mssql_connection_string", "database", _mssql),
    KindSpec("supabase_service_role_jwt", "database", _supabase),
    # PlanetScale passwords: pscale_pw_ + 43 base64url
    KindSpec("planetscale_password", "database", _pref("pscale_pw_", URLSAFE, 43, "PLANETSCALE_PASSWORD")),
    KindSpec("astra_db_token", "database", _astra),
    KindSpec("db_password_words", "database", _words_password),
    # --- registry
    KindSpec("npm_token_npmrc", "registry", _npmrc),
    KindSpec("npm_token", "registry", _pref("npm_", ALNUM, 36, "NPM_TOKEN")),
    KindSpec("pypi_token_pypirc", "registry", _pypirc),
    # Docker docs "Access tokens": dckr_pat_ + 27 base64url
    KindSpec("dockerhub_pat", "registry", _pref("dckr_pat_", URLSAFE, 27, "DOCKERHUB_TOKEN")),
    KindSpec("docker_config_auth", "registry", _docker_config),
    # RubyGems API keys: rubygems_ + 48 hex
    KindSpec("rubygems_api_key", "registry", _pref("rubygems_", HEX, 48, "GEM_HOST_API_KEY")),
    # NuGet.org API keys: oy2 + 43 lowercase alnum
    KindSpec("nuget_api_key", "registry", _pref("oy2", LALNUM, 43, "NUGET_API_KEY")),
    # crates.io tokens: cio + 32 alnum
    KindSpec("crates_io_token", "registry", _pref("cio", ALNUM, 32, "CARGO_REGISTRY_TOKEN")),
    # JFrog Artifactory API keys: AKCp + 69 alnum
    KindSpec("artifactory_api_key", "registry", _pref("AKCp", ALNUM, 69, "ARTIFACTORY_API_KEY")),
    KindSpec("netrc_password", "registry", _netrc),
    # --- observability
    # Datadog docs "API and application keys": API key 32 hex, application key 40 hex
    KindSpec("datadog_api_key", "observability", _keyed("DD_API_KEY", HEX, 32)),
    KindSpec("datadog_app_key", "observability", _keyed("DD_APP_KEY", HEX, 40)),
    # New Relic docs "API keys": user keys NRAK- + 27 upper alnum; license keys 40 chars ending NRAL
    KindSpec("newrelic_user_key", "observability", _pref("NRAK-", UALNUM, 27, "NEW_RELIC_API_KEY")),
    KindSpec("newrelic_license_key", "observability", _pref("", HEX, 36, "NEW_RELIC_LICENSE_KEY", "NRAL")),
    # Sentry docs "Auth tokens": user tokens sntryu_ + 64 hex
    KindSpec("sentry_user_token", "observability", _pref("sntryu_", HEX, 64, "SENTRY_AUTH_TOKEN")),
    # Grafana Cloud access policy tokens: glc_ + base64
    KindSpec("grafana_cloud_token", "observability", _pref("glc_", B64, 100, "GRAFANA_CLOUD_TOKEN")),
    KindSpec("grafana_service_account_token", "observability", _grafana_sa),
    KindSpec("dynatrace_token", "observability", _dynatrace),
    KindSpec("splunk_hec_token", "observability", _splunk_hec),
    KindSpec("opsgenie_api_key", "observability", _opsgenie),
    # Honeycomb ingest keys: hcaik_ + 58 alnum (v2 keys)
    KindSpec("honeycomb_ingest_key", "observability", _pref("hcaik_", LALNUM, 58, "HONEYCOMB_API_KEY")),
    # PagerDuty REST API keys: 20 chars [A-Za-z0-9_+-] often starting u+
    KindSpec("pagerduty_api_key", "observability", _pref("u+", URLSAFE, 18, "PAGERDUTY_TOKEN")),
    # --- ai
    KindSpec("openai_project_key", "ai", _openai_proj),
    KindSpec("openai_legacy_key", "ai", _openai_legacy),
    KindSpec("anthropic_api_key", "ai", _anthropic),
    # Hugging Face docs "User access tokens": hf_ + 34 alnum
    KindSpec("huggingface_token", "ai", _pref("hf_", ALNUM, 34, "HF_TOKEN")),
    # Replicate API tokens: r8_ + 37
    KindSpec("replicate_token", "ai", _pref("r8_", ALNUM, 37, "REPLICATE_API_TOKEN")),
    # Groq API keys: gsk_ + 52 alnum
    KindSpec("groq_api_key", "ai", _pref("gsk_", ALNUM, 52, "GROQ_API_KEY")),
    # Cohere API keys: 40 alnum
    KindSpec("cohere_api_key", "ai", _keyed("CO_API_KEY", ALNUM, 40)),
    # Mistral API keys: 32 alnum
    KindSpec("mistral_api_key", "ai", _keyed("MISTRAL_API_KEY", ALNUM, 32)),
    # Perplexity API keys: pplx- + 48 alnum
    KindSpec("perplexity_api_key", "ai", _pref("pplx-", ALNUM, 48, "PPLX_API_KEY")),
    # OpenRouter keys: sk-or-v1- + 64 hex
    KindSpec("openrouter_key", "ai", _pref("sk-or-v1-", HEX, 64, "OPENROUTER_API_KEY")),
    # xAI API keys: xai- + 80 alnum
    KindSpec("xai_api_key", "ai", _pref("xai-", ALNUM, 80, "XAI_API_KEY")),
    KindSpec("langsmith_api_key", "ai", _langsmith),
    # Pinecone API keys: pcsk_ + id _ + secret
    KindSpec("pinecone_api_key", "ai", _pref("pcsk_", ALNUM, 70, "PINECONE_API_KEY")),
    # --- saas
    KindSpec("twilio_auth_token", "saas", _twilio),
    KindSpec("sendgrid_api_key", "saas", _sendgrid),
    # Mailgun docs: private API key key- + 32 hex
    KindSpec("mailgun_api_key", "saas", _pref("key-", HEX, 32, "MAILGUN_API_KEY")),
    KindSpec("mailchimp_api_key", "saas", _mailchimp),
    KindSpec("atlassian_api_token", "saas", _atlassian),
    # Notion docs "Authorization": internal integration secrets ntn_ + 46 (older secret_ + 43)
    KindSpec("notion_integration_secret", "saas", _pref("ntn_", ALNUM, 46, "NOTION_TOKEN")),
    # Linear API keys: lin_api_ + 40 alnum
    KindSpec("linear_api_key", "saas", _pref("lin_api_", ALNUM, 40, "LINEAR_API_KEY")),
    KindSpec("airtable_pat", "saas", _airtable),
    # Figma personal access tokens: figd_ + 40 base64url
    KindSpec("figma_pat", "saas", _pref("figd_", URLSAFE, 40, "FIGMA_TOKEN")),
    KindSpec("hubspot_private_app_token", "saas", _hubspot),
    KindSpec("okta_api_token", "saas", _okta),
    KindSpec("postman_api_key", "saas", _postman),
    # Contentful CMA personal access tokens: CFPAT- + 43
    KindSpec("contentful_pat", "saas", _pref("CFPAT-", URLSAFE, 43, "CONTENTFUL_MANAGEMENT_TOKEN")),
    # Dropbox short-lived access tokens: sl. + ~135 base64url
    KindSpec("dropbox_access_token", "saas", _pref("sl.B", URLSAFE, 130, "DROPBOX_TOKEN")),
    KindSpec("basic_auth_header", "saas", _basic_header),
    # Auth0 client secret: 64 base64url
    KindSpec("auth0_client_secret", "saas", _keyed("AUTH0_CLIENT_SECRET", URLSAFE, 64)),
    # Zendesk API token: 40 alnum
    KindSpec("zendesk_api_token", "saas", _keyed("ZENDESK_API_TOKEN", ALNUM, 40)),
]

# ---------------------------------------------------------------------------------------------------------
# Contexts: (var, value, rng) -> text. Written as memories an agent would keep.

Context = Callable[[str, str, random.Random], str]

_PEOPLE = ["Priya", "Tomasz", "Aiko", "Lucía", "Kwame", "Sven", "Mei", "Olu", "Dmitri", "Fatima"]
_SERVICES = ["billing-api", "ingest-worker", "checkout", "search-indexer", "notifier", "etl-nightly"]


def _c_env(var: str, value: str, rng: random.Random) -> str:
    return f"# .env.production ({rng.choice(_SERVICES)})\nLOG_LEVEL=info\n{var}={value}\nPORT=8080"


def _c_export(var: str, value: str, rng: random.Random) -> str:
    return (
        f"$ export {var}='{value}'\n$ ./scripts/deploy.sh --env staging\ndeploy: ok ({rng.randint(3, 90)}s)"
    )


def _c_yaml(var: str, value: str, rng: random.Random) -> str:
    return (
        f'# helm values for {rng.choice(_SERVICES)}\nenv:\n  - name: {var}\n    value: "{value}"\n'
        "  - name: REGION\n    value: eu-west-1"
    )


def _c_json(var: str, value: str, rng: random.Random) -> str:
    return json.dumps(
        {"service": rng.choice(_SERVICES), "credentials": {var.lower(): value}}, indent=2, ensure_ascii=False
    )


def _c_toml(var: str, value: str, rng: random.Random) -> str:
    return f'[integrations.{rng.choice(["alerts", "sync", "export"])}]\nenabled = true\n{var.lower()} = "{value}"'


def _c_python(var: str, value: str, rng: random.Random) -> str:
    return (
        "# notebook cell 14 — quick test before moving it to the vault\n"
        f'{var.lower()} = "{value}"\nresp = client.get("/v1/status", headers={{"X-Key": {var.lower()}}})\nresp.json()'
    )


def _c_incident(var: str, value: str, rng: random.Random) -> str:
    who = rng.choice(_PEOPLE)
    return (
        f"Incident INC-{rng.randint(1000, 9999)} notes: {rng.choice(_SERVICES)} returned 401 after the rotation. "
        f"{who} pasted the new value in the war room: {value} — needs to go into the secret store, then revoke "
        "the old one."
    )


def _c_chat_fr(var: str, value: str, rng: random.Random) -> str:
    return f"{rng.choice(_PEOPLE)} (Slack, #ops) : voilà le jeton pour la préprod, {var} = {value} , merci de ne pas le partager"


def _c_chat_de(var: str, value: str, rng: random.Random) -> str:
    return (
        f"Kurze Notiz von {rng.choice(_PEOPLE)}: der Schlüssel für den Export ist {value} (gilt bis Freitag)."
    )


def _c_chat_es(var: str, value: str, rng: random.Random) -> str:
    return f"Recordatorio: en el servidor de staging usamos {var}={value} hasta que migremos a Vault."


def _c_chat_ja(var: str, value: str, rng: random.Random) -> str:
    return f"メモ：本番の{var}は {value} です。来週ローテーション予定。"


def _c_chat_pt(var: str, value: str, rng: random.Random) -> str:
    return f"Oi {rng.choice(_PEOPLE)}, a credencial nova ficou assim: {value}\nPode atualizar o pipeline?"


def _c_docker(var: str, value: str, rng: random.Random) -> str:
    return f"docker run --rm -e {var}={value} -p 9000:9000 ghcr.io/acme/{rng.choice(_SERVICES)}:1.{rng.randint(0, 40)}"


def _c_k8s(var: str, value: str, rng: random.Random) -> str:
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\ntype: Opaque\nstringData:\n"
        f"  {var}: |\n    {value}"
    )


def _c_ci(var: str, value: str, rng: random.Random) -> str:
    return (
        "# .github/workflows/release.yml (before we moved it to secrets)\njobs:\n  publish:\n    runs-on: ubuntu-latest\n"
        f"    env:\n      {var}: {value}\n    steps:\n      - run: make release"
    )


def _c_hcl(var: str, value: str, rng: random.Random) -> str:
    return f'provider "acme" {{\n  region = "eu-central-1"\n  {var.lower()} = "{value}"\n}}'


def _c_log(var: str, value: str, rng: random.Random) -> str:
    return (
        f"2026-03-{rng.randint(10, 28)}T0{rng.randint(1, 9)}:12:44Z DEBUG http.client request headers="
        f"{{'Authorization': 'Bearer {value}', 'User-Agent': 'kf/2.1'}}"
    )


def _c_trace(var: str, value: str, rng: random.Random) -> str:
    return (
        'Traceback (most recent call last):\n  File "sync.py", line 88, in push\n    api.login(key)\n'
        f"AuthError: invalid credentials for key='{value}' (status 403)"
    )


def _c_md_table(var: str, value: str, rng: random.Random) -> str:
    return (
        "| env | variable | value |\n|---|---|---|\n"
        f"| staging | {var} | `{value}` |\n| prod | {var} | (in vault) |"
    )


def _c_pr(var: str, value: str, rng: random.Random) -> str:
    return (
        f"PR #{rng.randint(100, 4000)}: switch {rng.choice(_SERVICES)} to the new provider.\n"
        f"Testing: ran locally with {var}={value}; all green."
    )


def _c_email(var: str, value: str, rng: random.Random) -> str:
    return (
        f"From: {rng.choice(_PEOPLE).lower()}@partner.example\nSubject: your sandbox access\n\n"
        f"Hi team,\nhere are the credentials you asked for:\n\n    {value}\n\nBest regards"
    )


def _c_xml(var: str, value: str, rng: random.Random) -> str:
    return f'<configuration>\n  <appSettings>\n    <add key="{var}" value="{value}" />\n  </appSettings>\n</configuration>'


def _c_ini(var: str, value: str, rng: random.Random) -> str:
    return f"[default]\nregion = us-east-1\n{var.lower()} = {value}\n"


def _c_screenshot(var: str, value: str, rng: random.Random) -> str:
    return f"(transcribed from a screenshot of the provider console)\nName: ci-{rng.randint(1, 99)}\nToken: {value}\nCreated: just now"


def _c_history(var: str, value: str, rng: random.Random) -> str:
    return f' 1042  cd ~/src/{rng.choice(_SERVICES)}\n 1043  curl -H "Authorization: Bearer {value}" https://api.partner.example/v2/me\n 1044  git status'


def _c_java(var: str, value: str, rng: random.Random) -> str:
    return f'private static final String {var} = "{value}"; // TODO move to config'


def _c_go(var: str, value: str, rng: random.Random) -> str:
    return f'cfg := Config{{Endpoint: "https://api.internal", Secret: "{value}"}}'


CONTEXTS: list[Context] = [
    _c_env, _c_export, _c_yaml, _c_json, _c_toml, _c_python, _c_incident, _c_chat_fr, _c_chat_de,
    _c_chat_es, _c_chat_ja, _c_chat_pt, _c_docker, _c_k8s, _c_ci, _c_hcl, _c_log, _c_trace, _c_md_table,
    _c_pr, _c_email, _c_xml, _c_ini, _c_screenshot, _c_history, _c_java, _c_go,
]  # fmt: skip


def _c_cat(var: str, value: str, rng: random.Random) -> str:
    path = var if var.startswith(("~", "/")) else f"~/{var}" if var.startswith(".") else f"./{var}"
    return f"$ cat {path}\n{value}\n$ # copied from {rng.choice(_PEOPLE)}'s laptop while debugging the {rng.choice(_SERVICES)} deploy"


def _c_runbook(var: str, value: str, rng: random.Random) -> str:
    return (
        f"## Runbook: restore {rng.choice(_SERVICES)} access\n1. Write the file `{var}` with:\n```\n{value}\n```\n"
        "2. Restart the agent and check the health page."
    )


# Multi-line values (PEM, JSON key files, .pypirc) read naturally only in block contexts.
BLOCK_CONTEXTS: list[Context] = [_c_k8s, _c_email, _c_incident, _c_screenshot, _c_chat_pt, _c_cat, _c_runbook]
# Values that are whole files or file lines (.netrc, .pgpass, .npmrc, key files) are shown as files.
FILE_CONTEXTS: list[Context] = [_c_cat, _c_runbook, _c_email, _c_incident]

# ---------------------------------------------------------------------------------------------------------
# Disguises

DISGUISES = [
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split",
    "placeholder_word",
]

_FULL = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits}


def _disguise(kind: str, cred: Cred, secret_at: tuple[int, int], rng: random.Random) -> tuple[str, str]:
    """Returns the disguised value and the variable name to show it under."""
    v, (a, b) = cred.value, secret_at
    mid = (a + b) // 2
    if kind == "zero_width":
        ch = rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
        return v[:mid] + ch + v[mid:], cred.var
    if kind == "soft_hyphen":
        return v[: a + 3] + "\u00ad" + v[a + 3 : mid] + "\u00ad" + v[mid:], cred.var
    if kind == "fullwidth":
        lo, hi = (a, b) if rng.random() < 0.5 else (cred.start, cred.end)
        return v[:lo] + "".join(_FULL.get(c, c) for c in v[lo:hi]) + v[hi:], cred.var
    if kind == "bidi":
        ch = rng.choice(["\u202e", "\u200f", "\u2066", "\u202a"])
        return v[:mid] + ch + v[mid:], cred.var
    if kind == "percent":
        if rng.random() < 0.5:
            return "".join(f"%{ord(c):02X}" if c.isascii() else c for c in v), cred.var
        return quote(f"{cred.var}={v}", safe=""), cred.var + "_QS"
    if kind == "base64":
        if rng.random() < 0.5:
            return _b64(v.encode()), cred.var + "_B64"
        return _b64(f"{cred.var}={v}".encode()), "ENV_B64"
    if kind == "split":
        brk = rng.choice(["\n", "\n    ", "\\\n", "\\\n  "])
        return v[:mid] + brk + v[mid:], cred.var
    raise ValueError(kind)


_WORDS = ["EXAMPLE", "xxxx", "sample", "test", "dummy", "XXXXXXXX", "placeholder", "TEST", "changeme"]


def _with_word(cred: Cred, rng: random.Random) -> tuple[Cred, tuple[int, int]] | None:
    """Puts a placeholder-looking word inside the random part (the token is still real and random around
    it). None when the random part's alphabet could not hold the word (hex bodies, JSON/PEM blobs)."""
    body = cred.value[cred.start : cred.end]
    if cred.end - cred.start < 20 or "\n" in body:
        return None
    has_lower = any(c.islower() for c in body)
    has_upper = any(c.isupper() for c in body)
    hex_only = all(c in HEX for c in body) or all(c in UHEX for c in body)
    if hex_only:
        return None
    words = [w for w in _WORDS if (has_lower or not any(c.islower() for c in w))]
    words = [w for w in words if (has_upper or not any(c.isupper() for c in w))]
    if not words:
        return None
    w = rng.choice(words)
    pos = cred.start + (cred.end - cred.start - len(w)) // 2
    new = cred.value[:pos] + w + cred.value[pos + len(w) :]
    lo, hi = max(cred.start, pos - 5), min(cred.end, pos + len(w) + 5)
    return Cred(new, cred.start, cred.end, cred.var), (lo, hi)


def _secret_span(cred: Cred) -> tuple[int, int]:
    # A middle piece of the random part, 8 to 16 characters, never on a line break.
    n = cred.end - cred.start
    length = max(8, min(16, n // 2))
    a = cred.start + (n - length) // 2
    return a, a + length


# ---------------------------------------------------------------------------------------------------------
# Look-alikes: not credentials, but long, random-looking or secret-named.


def _look_alikes(rng: random.Random) -> list[Sample]:
    def sha(n: int) -> str:
        return _r(rng, HEX, n)

    svc = lambda: rng.choice(_SERVICES)  # noqa: E731
    gens: dict[str, Callable[[], str]] = {
        "git_sha": lambda: f"Fixed in {sha(40)} ({svc()}: retry on 503). Cherry-picked as {sha(12)}.",
        "sha256_digest": lambda: (
            f"{sha(64)}  kenfold-{rng.randint(1, 9)}.{rng.randint(0, 20)}.0-linux-amd64.tar.gz"
        ),
        "sha512_release_checksum": lambda: (
            f"Release notes v{rng.randint(1, 5)}.{rng.randint(0, 9)}\nSHA512: {sha(128)}"
        ),
        "uuid": lambda: f"Tenant {_uuid(rng)} migrated; job id {_uuid(rng)}.",
        "ulid": lambda: f"event_id=01{_r(rng, '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 24)} kind=order.created",
        "ksuid": lambda: f"segment ksuid {rng.choice('12')}{_r(rng, ALNUM, 26)} appended to the log",
        "stripe_public_ids": lambda: (
            f"Customer cus_{_r(rng, ALNUM, 14)} paid with pi_{_r(rng, ALNUM, 24)}; charge ch_{_r(rng, ALNUM, 24)}."
        ),
        "stripe_publishable_placeholder": lambda: "STRIPE_PUBLISHABLE_KEY=pk_test_<your publishable key>",
        "slack_channel_ids": lambda: (
            f"Post alerts to C{_r(rng, UALNUM, 10)} and DM U{_r(rng, UALNUM, 10)} on failure."
        ),
        "aws_arn": lambda: (
            f"arn:aws:iam::{_r(rng, DIG, 12)}:role/{svc()}-task-role attached to arn:aws:s3:::{svc()}-artifacts"
        ),
        "aws_account_id": lambda: (
            f"Prod account {_r(rng, DIG, 12)}, staging {_r(rng, DIG, 12)} (see org chart)."
        ),
        # AWS docs use these exact example values in every guide
        "aws_documented_example": lambda: rng.choice(
            [
                "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "Example from the AWS docs: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ]
        ),
        "request_trace_ids": lambda: (
            f"x-request-id: {sha(32)} traceparent: 00-{sha(32)}-{sha(16)}-01 (span {sha(16)})"
        ),
        "base64_text": lambda: (
            "payload (base64 of the webhook body): "
            + _b64(
                rng.choice(
                    [
                        "hello world from the staging box",
                        '{"event":"ping","ok":true}',
                        "Lorem ipsum dolor sit amet, consectetur",
                    ]
                ).encode()
            )
        ),
        "base64_image": lambda: (
            "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + _b64(rng.randbytes(48)) + ")"
        ),
        "npm_integrity": lambda: (
            f'"node_modules/{rng.choice(["lodash", "react", "zod", "chalk"])}": {{\n  "version": "4.{rng.randint(0, 20)}.1",\n'
            f'  "integrity": "sha512-{_b64(rng.randbytes(64))}"\n}}'
        ),
        "env_reference": lambda: rng.choice(
            [
                "API_KEY=${API_KEY}",
                'token = os.environ["GITHUB_TOKEN"]',
                "password: ${{ secrets.DB_PASSWORD }}",
                "STRIPE_SECRET_KEY=$(vault kv get -field=key secret/stripe)",
                'export OPENAI_API_KEY="$(op read op://dev/openai/credential)"',
                'const apiKey = process.env.SENDGRID_API_KEY ?? "";',
            ]
        ),
        "vault_and_secret_refs": lambda: rng.choice(
            [
                "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  " + sha(64),
                "valueFrom:\n  secretKeyRef:\n    name: db-creds\n    key: password",
                "db_password = data.aws_secretsmanager_secret_version.db.secret_string",
            ]
        ),
        "ssh_public_key": lambda: (
            f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_r(rng, B64, 43)} {rng.choice(_PEOPLE).lower()}@laptop"
        ),
        "pem_public_key": lambda: _pem(rng, "PUBLIC KEY", 294),
        "css_module_hash": lambda: (
            f'<div class="Button_primary__{_r(rng, URLSAFE, 5)} css-{_r(rng, LALNUM, 6)}">'
        ),
        "youtube_id": lambda: f"Talk recording: https://www.youtube.com/watch?v={_r(rng, URLSAFE, 11)}",
        "webpack_chunk": lambda: (
            f"static/js/main.{sha(8)}.js  static/js/{rng.randint(100, 999)}.{sha(20)}.chunk.js"
        ),
        "docker_image_digest": lambda: f"image: ghcr.io/acme/{svc()}@sha256:{sha(64)}",
        "nix_store_path": lambda: (
            f"/nix/store/{_r(rng, '0123456789abcdfghijklmnpqrsvwxyz', 32)}-openssl-3.0.13"
        ),
        "ipfs_cid": lambda: f"pinned at ipfs://bafybei{_r(rng, 'abcdefghijklmnopqrstuvwxyz234567', 51)}",
        "prose_about_secrets": lambda: rng.choice(
            [
                "Rotate the GitHub token every 90 days and never paste it in chat.",
                "Reminder: the Stripe secret key lives in Vault under secret/payments, ask Priya for access.",
                "Policy: database passwords are at least 24 characters and generated by the password manager.",
                "We revoked the leaked Slack bot token on Monday; the new one is only in the secret store.",
                "Les clés API doivent être stockées dans le coffre, jamais dans le dépôt git.",
            ]
        ),
        "documented_placeholders": lambda: rng.choice(
            [
                "OPENAI_API_KEY=sk-...",
                "STRIPE_SECRET_KEY=sk_test_<your key>",
                "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "api_key: YOUR_API_KEY_HERE",
                'password = "<password>"',
                "DATABASE_URL=postgres://user:password@localhost:5432/dbname",
            ]
        ),
        "resource_names": lambda: (
            f"projects/{svc()}-{rng.randint(100, 999)}/locations/europe-west1/services/{svc()}-{_r(rng, LALNUM, 5)}"
        ),
    }
    out: list[Sample] = []
    per_kind = 24
    for name, gen in gens.items():
        for _ in range(per_kind):
            out.append(Sample(kind=name, group="look_alike", text=gen()))
    return out


# ---------------------------------------------------------------------------------------------------------

PER_KIND = 9
PLAIN_PER_KIND = 4


def fifth_part_with_raw() -> list[tuple[Sample, str]]:
    """Each sample with the same text before any disguise (the look-alikes: the text itself), so the shape
    test can check that each credential's secret piece is in the raw credential."""
    rng = random.Random(SEED)
    out: list[tuple[Sample, str]] = []
    turn = 0
    for spec in KINDS:
        for i in range(PER_KIND):
            cred = spec.make(rng)
            span = _secret_span(cred)
            disguise = "plain"
            if i >= PLAIN_PER_KIND:
                disguise = DISGUISES[turn % len(DISGUISES)]
                turn += 1
                if disguise == "placeholder_word":
                    worded = _with_word(cred, rng)
                    if worded is None:
                        disguise = DISGUISES[turn % len(DISGUISES)]
                        turn += 1
                    else:
                        cred, span = worded
            file_like = (
                cred.var.startswith(".") or "." in cred.var or cred.var in ("id_ed25519", "kubeconfig")
            )
            contexts = FILE_CONTEXTS if file_like else BLOCK_CONTEXTS if "\n" in cred.value else CONTEXTS
            ctx = rng.choice(contexts)
            secret = cred.value[span[0] : span[1]]
            ctx_seed = rng.random()
            raw_text = ctx(cred.var, cred.value, random.Random(ctx_seed))
            if disguise in ("plain", "placeholder_word"):
                text = raw_text
            else:
                shown, var = _disguise(disguise, cred, span, rng)
                text = ctx(var, shown, random.Random(ctx_seed))
            out.append(
                (
                    Sample(kind=spec.name, group=spec.group, text=text, disguise=disguise, secret=secret),
                    raw_text,
                )
            )
    for s in _look_alikes(rng):
        out.append((s, s.text))
    return out


def fifth_part() -> list[Sample]:
    return [s for s, _ in fifth_part_with_raw()]
