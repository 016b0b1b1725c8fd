"""Forms of credentials the unseen parts of the corpus showed the filter missing (issue 37), each as one
memory text, and the look-alikes those parts showed it refusing. Values are built at test time from a
seeded generator so that no credential-shaped string is committed."""

import base64
import json
import random
import string

import pytest

from kenfold_common.secrets import find_secrets, redact_secrets

RNG = random.Random(37_0612)
ALNUM = string.ascii_letters + string.digits


def chars(alphabet: str, length: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(length))


HEX32 = chars("0123456789abcdef", 32)
HEX40 = chars("0123456789abcdef", 40)
KEY40 = chars(ALNUM, 40)
UUID = f"{chars('0123456789abcdef', 8)}-4{chars('0123456789abcdef', 3)}-8{chars('0123456789abcdef', 3)}-{chars('0123456789abcdef', 4)}-{chars('0123456789abcdef', 12)}"
BASE64_KEY = base64.b64encode(RNG.randbytes(64)).decode()


def jwt(claims: dict[str, object]) -> str:
    def part(document: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(claims)}.{chars(ALNUM, 43)}"


@pytest.mark.parametrize(
    "text",
    [
        # name/value forms
        f"| orders | `DATADOG_APPLICATION_KEY` | `{HEX40}` |",
        f'let dd_api_key = std::env::var("DD_API_KEY").unwrap_or("{HEX32}".into());',
        f'const key = process.env.POSTMARK_SERVER_TOKEN ?? "{UUID}";',
        f'variable "api_key" {{\n  type      = string\n  sensitive = true\n  default   = "{HEX32}"\n}}',
        f"스테이징 배포는 DATADOG_APPLICATION_KEY 값으로 {HEX40} 를 쓴다.",
        f"- **CODECOV_TOKEN**: `{UUID}`",
        f"@oncall fyi MONGODB_ATLAS_PRIVATE_KEY -> {UUID}",
        f'read -r ALGOLIA_ADMIN_API_KEY <<< "{HEX32}"',
        f"together_api_key: >-\n  {HEX40}{HEX32}\ntimeout: 30",
        f"La clave WANDB_API_KEY es {HEX40} (no compartir).",
        f"Le DATADOG_APPLICATION_KEY de prod est {HEX40} pour l'instant.",
        f"<pagerdutyIntegrationKey>{HEX32}</pagerdutyIntegrationKey>",
        f"GET /v1/data?cosmos_key={BASE64_KEY}&format=json HTTP/1.1",
        f"aws ssm put-parameter --name /prod/AGORA_APP_CERTIFICATE --type SecureString --value {HEX32}",
        f"echo -n '{KEY40}' | gcloud secrets create auth0-client-secret --data-file=-",
        f"GITHUB_CLIENT_SECRET ?= {HEX40}\n\ndeploy:\n\t./deploy.sh",
        f"{{code}}CONSUL_HTTP_TOKEN={UUID}{{code}}",
        f"AZURE_SPEECH_KEYは「{HEX32}」です。",
        f"vercel env add ROLLBAR_ACCESS_TOKEN production <<< {HEX32}",
        f'$PlivoAuthToken = "{KEY40}"',
        f"<key>BINANCE_SECRET_KEY</key>\n<string>{KEY40}{KEY40[:24]}</string>",
        f"Το PAGERDUTY_INTEGRATION_KEY είναι {HEX32}.",
        f"CONSUL_HTTP_TOKEN ni {UUID}, usishiriki.",
        f"Ang DATADOG_APPLICATION_KEY ay {HEX40}, huwag ibahagi.",
        f"GITEA_TOKEN — це {HEX40}, не поширюйте.",
        f'buildConfigField("String", "ROLLBAR_ACCESS_TOKEN", "\\"{HEX32}\\"")',
        f"Parameters:\n  HEX_API_KEY:\n    Type: String\n    Default: {HEX32}",
        f"$ENV{{SPLUNK_HEC_TOKEN}} = '{UUID}';",
        f"[voice note] so the client secret is {HEX40} okay bye",
        '{:db-password "Falcon@4802" :port 8080}',
        f"TELEGRAM_BOT_TOKEN: `{RNG.randrange(10**9, 10**10)}:Aplaceholder{chars(ALNUM, 24)}`",
        f"WP_APPLICATION_PASSWORD: {' '.join(chars(ALNUM, 4) for _ in range(6))}",
        # disguises
        "payload=" + "%EC%8A%A4 COHERE_API_KEY %EA%B0%92%EC%9C%BC%EB%A1%9C " + KEY40,
        "https://tracker.example.io/r?u=GITHUB_TOKEN%253Dghp_" + KEY40[:36],
        "<td>ghp&#95;" + KEY40[:36] + "</td>",
        '{"source": ["token = \'ghp_' + KEY40[:18] + "\\n" + KEY40[18:36] + "'\"]}",
        'token = "ghp_' + KEY40[:18] + '" + "' + KEY40[18:36] + '"',
        # formats no rule knew before the unseen parts
        "Here you go: v1.0-" + chars("0123456789abcdef", 24) + "-" + chars("0123456789abcdef", 146),
        'tokens = ["sgp_' + chars("0123456789abcdef", 16) + "_" + HEX40 + '"]',
        "copy this -> xaat-" + UUID,
        "pasted: acme_" + KEY40,
        "Unseal Key 1: " + base64.b64encode(RNG.randbytes(33)).decode(),
        '{"auths": {"ghcr.io": {"auth": "'
        + base64.b64encode(b"ci-bot:" + KEY40[:24].encode()).decode()
        + '"}}}',
        "https://hooks.zapier.com/hooks/catch/"
        + str(RNG.randrange(10**7, 10**8))
        + "/"
        + chars("abcdefghijklmnopqrstuvwxyz0123456789", 7)
        + "/",
    ],
)
def test_forms_the_unseen_parts_showed_are_refused_and_redacted_whole(text: str) -> None:
    assert find_secrets(text)
    redacted = redact_secrets(text)
    assert "[REDACTED:" in redacted
    assert KEY40[10:18] not in redacted and HEX32[10:18] not in redacted and UUID[-8:] not in redacted


@pytest.mark.parametrize(
    "text",
    [
        "NEXT_PUBLIC_SUPABASE_ANON_KEY=" + jwt({"iss": "supabase", "role": "anon", "iat": 1700000000}),
        f"DD_CLIENT_TOKEN=pub{HEX32}",
        f"posthog.init('phc_{KEY40}', {{api_host: 'https://eu.posthog.com'}})",
        f"checkout session cs_live_{KEY40}{KEY40[:18]} completed",
        f"apns device token {HEX40}{HEX32[:24]}",
        "CONSUL_HTTP_TOKEN=00000000-0000-0000-0000-000000000000",
        "HCAPTCHA_SECRET=0x0000000000000000000000000000000000000000",
        "COSMOS_KEY=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
        f"cache_key: {HEX40}",
        f"idempotency_key: {UUID}",
        f"public_key: {HEX40}{HEX32[:24]}",
        'print("hello" + "world")',
        f"the token is {HEX40}",
        "[voice note] so the api key is in the vault under orders slash prod okay bye",
        "The token header eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 says RS256.",
        f"https://auth.acme.io/authorize?client_id=web&state={KEY40[:32]}&code_challenge=QO5T_{KEY40[:38]}",
        '{"message": "line one\\nline two\\nline three", "level": "info"}',
        "<p>Use &lt;YOUR_TOKEN&gt; in the header &amp; keep it out of the repo.</p>",
    ],
)
def test_look_alikes_the_unseen_parts_showed_are_not_refused(text: str) -> None:
    assert find_secrets(text) == []
