"""The unseen part: written after the last rule change (issue 37) and committed before the filter was ever run
on it, so that its first figures measure the current rules on texts they were not tuned on.

It shares only formats.py (the providers' documented formats) with the other parts. Its contexts, disguises
and look-alikes are written here from scratch: places credentials turn up in an agent's memories (chat
notes, Markdown tables, compose and CI files, Terraform, package-manager rc files, curl, JDBC/ODBC, code in
several languages, kubectl and Helm, JSON, logs, Korean), and the ordinary values that share those places.
Its figures, as first measured, are in docs/security.md. After that measurement the rules learnt its
misses (bcacdd2), so it is no longer unseen; second_unseen.py and the parts after it took its place.
"""

import base64
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import ALNUM, HEX, KINDS, LOWER_ALNUM, Kind, chars, digits, uuid4
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes

UNSEEN_SEED = 2_026_120_600

# Contexts that show the variable's name next to the value.
UNSEEN_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"Heads up: the staging deploy uses {env} {v} until ops rotates it next sprint.",
    lambda rng, env, v: f"| service | variable | value |\n|---|---|---|\n| orders | `{env}` | `{v}` |",
    lambda rng, env, v: (
        f"services:\n  worker:\n    image: ghcr.io/acme/worker:2.3\n    environment:\n      - {env}={v}\n"
        "      - QUEUE=jobs"
    ),
    lambda rng, env, v: f"jobs:\n  release:\n    runs-on: ubuntu-latest\n    env:\n      {env}: {v}",
    lambda rng, env, v: (
        f'variable "{env.lower()}" {{\n  type      = string\n  sensitive = true\n  default   = "{v}"\n}}'
    ),
    lambda rng, env, v: f'{env.lower()} = "{v}"   # terraform.tfvars',
    lambda rng, env, v: f'{env.lower()} = os.getenv("{env}", "{v}")',
    lambda rng, env, v: f'const {env.lower().replace("_", "")} = process.env.{env} ?? "{v}";',
    lambda rng, env, v: f'{env.lower()} := "{v}" // TODO move to vault',
    lambda rng, env, v: f'let {env.lower()} = std::env::var("{env}").unwrap_or("{v}".into());',
    lambda rng, env, v: f'private static final String {env} = "{v}";',
    lambda rng, env, v: f"kubectl create secret generic app-secrets --from-literal={env.lower()}={v} -n prod",
    lambda rng, env, v: f'# values-prod.yaml\nsecrets:\n  {env.lower()}: "{v}"\nreplicaCount: 2',
    lambda rng, env, v: f'{{\n  "env": {{\n    "{env}": "{v}",\n    "NODE_ENV": "production"\n  }}\n}}',
    lambda rng, env, v: f"2026-12-05T22:14:03Z WARN config loaded {env}={v} from .env.local",
    lambda rng, env, v: f"스테이징 배포는 {env} 값으로 {v} 를 쓴다. 다음 주에 교체 예정.",
    lambda rng, env, v: f"[default]\n{env.lower()} = {v}\nregion = ap-northeast-2",
    lambda rng, env, v: f"- name: {env}\n  value: {v}",
)

# Contexts with no name: only for kinds whose value is recognisable on its own.
UNSEEN_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"the staging deploy uses {v} — ask Mina before changing it",
    lambda rng, env, v: f'curl -H "Authorization: Bearer {v}" https://api.internal.example/v1/builds',
    lambda rng, env, v: f"curl -H 'X-Api-Key: {v}' -X POST https://hooks.example.dev/run",
    lambda rng, env, v: f"//npm.pkg.github.com/:_authToken={v}",
    lambda rng, env, v: f"[pypi]\nusername = __token__\npassword = {v}",
    lambda rng, env, v: f"| key | {v} | prod |",
    lambda rng, env, v: f"client = Client(token='{v}')",
    lambda rng, env, v: f"INFO auth ok token={v} user=deploy-bot",
    lambda rng, env, v: f"이 키 {v} 는 운영 환경 전용이니 공유하지 말 것.",
    lambda rng, env, v: f"`{v}`",
)

# Framed values (URLs, connection strings, key files) shown as they are.
UNSEEN_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"JDBC/ODBC for the reporting box:\n{v}",
    lambda rng, env, v: f"spring.datasource.url={v}" if "\n" not in v else f"spring key:\n{v}",
    lambda rng, env, v: f"Pasted from the runbook ({rng.choice(('prod', 'staging'))}): {v}",
    lambda rng, env, v: f"```ini\n{v}\n```",
)

UNSEEN_DISGUISES = {
    "plain": 0.40,
    "zero-width": 0.08,
    "soft-hyphen": 0.07,
    "fullwidth": 0.08,
    "percent-encoded": 0.09,
    "base64-encoded": 0.09,
    "split-line": 0.10,
    "placeholder-word": 0.09,
}


def _body_start(secret: str, prefix: str) -> int:
    return len(prefix) if prefix and secret.startswith(prefix) else 1


def _insert(rng: random.Random, secret: str, prefix: str, insertions: tuple[str, ...]) -> str:
    # One or two invisible characters after the documented prefix, where a paste from a rich editor puts them.
    out = secret
    for _ in range(rng.choice((1, 1, 2))):
        position = rng.randrange(_body_start(out, prefix), len(out) - 1)
        out = out[:position] + rng.choice(insertions) + out[position:]
    return out


def _fullwidth(rng: random.Random, secret: str, prefix: str) -> str:
    chosen = set(rng.sample(range(len(secret)), k=max(1, len(secret) // 3)))
    return "".join(
        chr(ord(c) + 0xFEE0) if i in chosen and c in string.ascii_letters + string.digits else c
        for i, c in enumerate(secret)
    )


def _split(rng: random.Random, secret: str, prefix: str) -> str:
    low = _body_start(secret, prefix) + 1
    position = rng.randrange(low, len(secret) - 1) if len(secret) - 1 > low else len(secret) // 2
    return secret[:position] + rng.choice(("\n", "\\\n", "\n    ")) + secret[position:]


def _placeholder(rng: random.Random, secret: str, prefix: str) -> str:
    word = rng.choice(("YOUR", "dummy", "CHANGEME", "fake", "placeholder", "XXXX"))
    start = _body_start(secret, prefix)
    spots = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
    if not spots:
        return secret
    position = rng.choice(spots)
    return secret[:position] + word + secret[position + len(word) :]


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    if disguise == "zero-width":
        return _insert(rng, secret, prefix, ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"))
    if disguise == "soft-hyphen":
        return _insert(rng, secret, prefix, ("\u00ad",))
    if disguise == "fullwidth":
        return _fullwidth(rng, secret, prefix)
    if disguise == "split-line":
        return _split(rng, secret, prefix)
    if disguise == "placeholder-word":
        return _placeholder(rng, secret, prefix)
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str) -> str:
    if disguise == "percent-encoded":
        encoded = quote(text, safe="")
        return rng.choice(
            (
                f"GET /oauth/callback?state={encoded}&code=ok HTTP/1.1",
                f"The bug report link was https://support.example.io/new?body={encoded}",
                f"payload={encoded}",
            )
        )
    if disguise == "base64-encoded":
        encoded = base64.b64encode(text.encode()).decode()
        return rng.choice(
            (
                f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-env\ndata:\n  config: {encoded}",
                f'{{"attachment": "{encoded}", "encoding": "base64"}}',
                f"Saved the env file as base64 so chat would not mangle it: {encoded}",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.4:
        text = rng.choice(UNSEEN_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(UNSEEN_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(UNSEEN_NAMED_CONTEXTS + UNSEEN_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _commit_in_prose(rng: random.Random) -> str:
    sha = chars(rng, HEX, 40)
    return rng.choice(
        (
            f"Bisected the flaky test to {sha}, reverting it fixed the nightly run.",
            f"Cherry-picked {sha[:10]} onto release/2.3 and tagged it.",
            f"The regression came in with commit {sha} (merge of #4412).",
            f"git revert --no-edit {sha}",
            f"배포된 커밋은 {sha} 이다.",
        )
    )


def _lockfile_hash(rng: random.Random) -> str:
    sha = chars(rng, HEX, 64)
    package = rng.choice(("requests", "urllib3", "pydantic", "django", "psycopg"))
    return rng.choice(
        (
            f'{{file = "{package}-2.31.0-py3-none-any.whl", hash = "sha256:{sha}"}},',
            f"{package}==2.31.0 \\\n    --hash=sha256:{sha}",
            f'  resolved "https://registry.yarnpkg.com/{package}/-/{package}-1.2.3.tgz#{chars(rng, HEX, 40)}"',
            f'      "integrity": "sha512-{base64.b64encode(rng.randbytes(64)).decode()}",',
            f'"checksum {package} 0.4.1 (registry+https://github.com/rust-lang/crates.io-index)" = "{sha}"',
            f"h1:{base64.b64encode(rng.randbytes(32)).decode()}",
        )
    )


def _uuid_in_url(rng: random.Random) -> str:
    return rng.choice(
        (
            f"https://app.example.com/projects/{uuid4(rng)}/settings",
            f"DELETE /v2/workspaces/{uuid4(rng)}/members/{uuid4(rng)}",
            f"See the incident at https://status.example.io/incidents/{uuid4(rng)}",
            f"https://portal.azure.com/#@contoso/resource/subscriptions/{uuid4(rng)}/overview",
        )
    )


def _request_id(rng: random.Random) -> str:
    return rng.choice(
        (
            f"x-request-id: {chars(rng, HEX, 32)}",
            f"ERROR 503 from upstream (request {uuid4(rng)}) after 3 retries",
            f"cf-ray: {chars(rng, HEX, 16)}-ICN",
            f"traceparent: 00-{chars(rng, HEX, 32)}-{chars(rng, HEX, 16)}-01",
            f"X-Amz-Request-Id: {chars(rng, string.ascii_uppercase + string.digits, 16)}",
            f'correlation_id={chars(rng, LOWER_ALNUM, 26)} level=info msg="job done"',
        )
    )


def _base64_text(rng: random.Random) -> str:
    plain = rng.choice(
        (
            "Deploy the orders service after the migration finishes.",
            "Remember to rotate the logs on Sunday night.",
            '{"feature": "dark-mode", "enabled": true, "rollout": 25}',
            "배포 체크리스트를 먼저 확인할 것.",
            "hello from the staging cluster, all checks green",
        )
    )
    encoded = base64.b64encode(plain.encode()).decode()
    return rng.choice(
        (
            f"The header value decodes to plain text: {encoded}",
            f"data:\n  motd: {encoded}",
            f'{{"note": "{encoded}"}}',
        )
    )


def _long_identifier(rng: random.Random) -> str:
    words = ("Abstract", "Singleton", "Proxy", "Factory", "Bean", "Request", "Handler", "Orders", "Payment")
    name = "".join(rng.choice(words) for _ in range(rng.randrange(5, 9)))
    return rng.choice(
        (
            f"The stack trace ends in {name}.invoke(Native Method)",
            f"class {name}Test extends BaseIntegrationTest {{}}",
            f"test_{'_'.join(w.lower() for w in rng.sample(words, 6))}_when_the_queue_is_full PASSED",
            f"feature flag enable_{'_'.join(w.lower() for w in rng.sample(words, 5))} is on in prod",
        )
    )


def _css_color(rng: random.Random) -> str:
    return rng.choice(
        (
            f".btn-primary {{ color: #{chars(rng, HEX, 6)}; background: #{chars(rng, HEX, 6)}; }}",
            f"--brand-accent: #{chars(rng, HEX, 8)};",
            f"theme: {{ primary: '#{chars(rng, HEX, 6)}', muted: '#{chars(rng, HEX, 3)}' }}",
        )
    )


def _version(rng: random.Random) -> str:
    major, minor, patch = rng.randrange(0, 30), rng.randrange(0, 40), rng.randrange(0, 200)
    return rng.choice(
        (
            f"Upgraded Django to {major}.{minor}.{patch} and the tests still pass.",
            f"image: ghcr.io/acme/api:v{major}.{minor}.{patch}-rc.{rng.randrange(1, 9)}",
            f'"typescript": "^{major}.{minor}.{patch}"',
            f"Go version go1.{minor}.{patch % 10} linux/amd64, build {chars(rng, HEX, 12)}",
        )
    )


def _placeholder_doc(rng: random.Random) -> str:
    return rng.choice(
        (
            "curl -H 'Authorization: Bearer <YOUR_API_KEY>' https://api.example.com/v1/me",
            "Set OPENAI_API_KEY=<your key> in .env before running the agent.",
            "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
            "password = {{ vault_db_password }}",
            "STRIPE_KEY=sk_test_<redacted>",
            "aws configure set aws_secret_access_key <SECRET>",
            'export ANTHROPIC_API_KEY="..."',
            "JIRA_API_TOKEN: '***'",
            "jdbc:postgresql://db.internal:5432/app?user=app&password=<password>",
            "token: [REDACTED]",
        )
    )


def _secrets_reference(rng: random.Random) -> str:
    name = rng.choice(("NPM_TOKEN", "AWS_SECRET_ACCESS_KEY", "DOCKERHUB_TOKEN", "SLACK_WEBHOOK_URL"))
    return rng.choice(
        (
            f"env:\n  {name}: ${{{{ secrets.{name} }}}}",
            f"password: ${{{{ secrets.{name} }}}}",
            f"default = var.{name.lower()}  # set in the workspace, not here",
            f"- name: {name}\n  valueFrom:\n    secretKeyRef: {{name: ci, key: {name.lower()}}}",
            f"{name}=$(op read op://ci/{name.lower()}/credential)",
            f"token = os.environ['{name}']",
        )
    )


def _korean(rng: random.Random) -> str:
    return rng.choice(
        (
            "API 키는 절대 메모리에 저장하지 말고, 필요하면 금고에서 읽어 오세요.",
            "스테이징 배포는 화요일 오후 세 시에 진행하고, 실패하면 바로 롤백합니다.",
            "비밀번호 정책: 최소 열두 자, 분기마다 변경, 재사용 금지.",
            "토큰이 만료되면 로그인 화면에서 다시 발급받으면 된다.",
            "이번 장애의 원인은 캐시 만료 시간 설정 오류였다.",
        )
    )


def _markdown_table(rng: random.Random) -> str:
    return (
        "| service | port | replicas | owner |\n|---|---|---|---|\n"
        f"| orders | {rng.randrange(3000, 9000)} | {rng.randrange(1, 6)} | team-{chars(rng, LOWER_ALNUM, 4)} |\n"
        f"| billing | {rng.randrange(3000, 9000)} | {rng.randrange(1, 6)} | team-{chars(rng, LOWER_ALNUM, 4)} |"
    )


def _config_without_secret(rng: random.Random) -> str:
    return rng.choice(
        (
            f"services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_DB=orders\n"
            f"      - POSTGRES_PORT={rng.randrange(5400, 5500)}",
            f'variable "instance_type" {{\n  default = "t3.{rng.choice(("small", "medium", "large"))}"\n}}',
            f"registry=https://registry.npmjs.org/\nalways-auth=false\nfetch-retries={rng.randrange(2, 6)}",
            f"jdbc:postgresql://db-{chars(rng, LOWER_ALNUM, 6)}.internal:5432/reports?ssl=true&connectTimeout=10",
            f'{{"timeout_ms": {rng.randrange(100, 9000)}, "region": "eu-central-1", "cache": "redis"}}',
            f"kubectl rollout restart deployment/orders-{chars(rng, LOWER_ALNUM, 5)} -n prod",
        )
    )


def _ids_in_code(rng: random.Random) -> str:
    return rng.choice(
        (
            f'ORDER_TOPIC_ARN = "arn:aws:sns:us-east-1:{digits(rng, 12)}:orders-{chars(rng, LOWER_ALNUM, 6)}"',
            f'const bucket = "acme-artifacts-{chars(rng, LOWER_ALNUM, 12)}";',
            f'let run_id = "{chars(rng, ALNUM, 22)}"; // temporal workflow run',
            f'String correlation = "{uuid4(rng)}";',
            f'google_analytics_id = "G-{chars(rng, string.ascii_uppercase + string.digits, 10)}"',
        )
    )


def _masked(rng: random.Random) -> str:
    # What dashboards and CLIs print instead of a credential: a prefix or a tail, the rest starred.
    tail = chars(rng, ALNUM, 4)
    return rng.choice(
        (
            f"Rotated the key ending in ...{tail} yesterday; the new one is in 1Password.",
            f"token: ghp_****************************{tail}",
            "gh auth status: Token: gho_************************************",
            "AWS_SECRET_ACCESS_KEY=****************************************",
            f"sk-...{tail} (revoked)",
        )
    )


UNSEEN_LOOK_ALIKES = {
    "commit-in-prose": _commit_in_prose,
    "lockfile-hash": _lockfile_hash,
    "uuid-in-url": _uuid_in_url,
    "request-id": _request_id,
    "base64-of-text": _base64_text,
    "long-identifier": _long_identifier,
    "css-color": _css_color,
    "version-string": _version,
    "placeholder-doc": _placeholder_doc,
    "secrets-reference": _secrets_reference,
    "korean-text": _korean,
    "markdown-table": _markdown_table,
    "config-without-secret": _config_without_secret,
    "ids-in-code": _ids_in_code,
    "masked-value": _masked,
}


def unseen_part() -> list[Sample]:
    rng = random.Random(UNSEEN_SEED)
    names = list(UNSEEN_DISGUISES)
    weights = [UNSEEN_DISGUISES[name] for name in names]
    samples = [_credential(rng, kind, rng.choices(names, weights)[0]) for kind in KINDS for _ in range(4)]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in UNSEEN_LOOK_ALIKES.items()
        for _ in range(32)
    ]
    return public_as_look_alikes(samples)
