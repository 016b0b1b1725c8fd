"""The secret filter: every rule, the value checks that keep ordinary text out, overlap, redaction, speed.

Fake credentials are assembled at run time so the repository itself never holds a string that secret
scanners would report as a real key.
"""

import base64
import json
import time

import pytest

from kenfold_common.errors import SecretDetected
from kenfold_common.secrets import SecretFinding, find_secrets, redact_secrets, reject_secrets

# Twenty distinct characters of three classes: the smallest kind of value that passes "looks random".
RANDOM_VALUE = "Zq8xK2mN" + "9pL4vR7t" + "Y3wB"


def alnum(length: int) -> str:
    return ("aB3dE5fG7h" * (length // 10 + 1))[:length]


def b64url_json(payload: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()


AWS_KEY = "AKIA" + "Z7Q2" * 4
GITHUB_TOKEN = "ghp" + "_" + alnum(36)
JWT = ".".join(
    [
        b64url_json({"alg": "HS256", "typ": "JWT"}),
        b64url_json({"sub": "agent-7", "iat": 1764460800}),
        "dozjgNryP4J3jVmN" + "Hl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
)
PRIVATE_KEY = (
    "-----BEGIN "
    + "RSA PRIVATE"
    + " KEY-----\nMIIEpAIBAAKCAQEA"
    + alnum(40)
    + "\n-----END RSA PRIVATE KEY-----"
)


def rules_found(text: str) -> list[str]:
    return [finding.rule for finding in find_secrets(text)]


def found_values(text: str) -> list[str]:
    return [text[finding.start : finding.end] for finding in find_secrets(text)]


@pytest.mark.parametrize(
    ("rule", "secret"),
    [
        ("private-key", PRIVATE_KEY),
        (
            "private-key",
            "-----BEGIN "
            + "PGP PRIVATE KEY"
            + " BLOCK-----\n"
            + alnum(30)
            + "\n-----END PGP PRIVATE KEY BLOCK-----",
        ),
        ("aws-access-key", AWS_KEY),
        ("aws-access-key", "ASIA" + "Q7W3" * 4),
        ("github-token", GITHUB_TOKEN),
        ("github-token", "gho" + "_" + alnum(40)),
        ("github-token", "github" + "_pat_" + alnum(22) + "_" + alnum(59)),
        ("gitlab-token", "glpat" + "-" + alnum(20)),
        ("gitlab-token", "glrt" + "-" + alnum(20)),
        ("gitlab-token", "gldt" + "-" + alnum(20)),
        ("gitlab-token", "glptt" + "-" + "3f5e1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f"),
        ("gitlab-token", "GR1348941" + alnum(20)),
        ("anthropic-key", "sk-ant" + "-api03-" + alnum(80)),
        ("openai-key", "sk-proj" + "-" + alnum(48)),
        ("openai-key", "sk-" + alnum(48)),
        ("openai-key", "sk-svcacct" + "-" + alnum(20)),
        ("slack-token", "xoxb" + "-1234567890-" + alnum(24)),
        ("slack-token", "xapp" + "-1-A0B1C2D3E4F-1234567890123-" + alnum(40)),
        ("slack-token", "xoxe" + "-1-" + alnum(60)),
        ("slack-webhook", "https://hooks.slack.com/services/" + "T0AB1CD2E/B0FG3HI4J/" + alnum(24)),
        ("stripe-key", "sk_" + "live_" + alnum(24)),
        ("stripe-key", "rk_" + "test_" + alnum(24)),
        ("stripe-webhook-secret", "whsec" + "_" + alnum(32)),
        ("google-oauth-client-secret", "GOCSPX" + "-" + alnum(28)),
        ("google-oauth-token", "ya29" + "." + alnum(120)),
        ("pypi-token", "pypi" + "-AgEIcHlwaS5vcmc" + alnum(60)),
        ("google-api-key", "AIza" + "Sy" + alnum(33)),
        ("npm-token", "npm" + "_" + alnum(36)),
        ("huggingface-token", "hf" + "_" + alnum(34)),
        ("kenfold-key", "kf" + "_" + alnum(40) + "-_x"),
        ("kenfold-oauth-token", "kfa" + "_" + alnum(43)),
        ("kenfold-oauth-token", "kfr" + "_" + alnum(43)),
        ("kenfold-oauth-token", "kfc" + "_" + alnum(43)),
        ("jwt", JWT),
    ],
)
def test_each_token_rule_finds_its_credential_in_running_text(rule: str, secret: str) -> None:
    text = f"The deploy notes say to use {secret} for the staging job."

    assert [(finding.rule, finding.start, finding.end) for finding in find_secrets(text)] == [
        (rule, 28, 28 + len(secret))
    ]


def test_finding_is_rule_label_and_position_without_the_value() -> None:
    assert find_secrets("key " + AWS_KEY) == [
        SecretFinding(rule="aws-access-key", label="AWS access key", start=4, end=24)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "AKIA" + "Z7Q2" * 3,  # 12 characters after the prefix, not 16
        "XAKIA" + "Z7Q2" * 4,  # inside a longer word
        "AKIA" + "Z7Q2" * 4 + "Q",  # longer than an access key
        "akia" + "z7q2" * 4,
        "ghp" + "_" + alnum(35),
        "glpat" + "-" + alnum(19),
        "sk-ant" + "-short",
        "sk-" + "abcdefghijklmnopqrstuvwxyz",  # OpenAI keys always contain a digit
        "sk-proj" + "-" + alnum(15),  # the 20 characters count after the prefix
        "task-queue-restart-2024-11-30-workers",  # "sk-" inside a word
        "desk_live_" + alnum(24),
        "xoxb" + "-12345",
        "https://hooks.slack.com/services/T0AB1CD2E",
        "npm" + "_" + alnum(20),
        "hf" + "_" + alnum(29),
        "kf" + "_" + alnum(42),
        "eyJhbGciOiJIUzI1NiJ9 is only a header",
        "-----BEGIN " + "PUBLIC KEY" + "-----\n" + alnum(40) + "\n-----END PUBLIC KEY-----",
    ],
)
def test_near_misses_of_token_rules_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "last-write-wins is the conflict rule; the newest handoff replaces the older one.",
        "Run `make test` before pushing; the CI token is rotated monthly by the platform team.",
        "The password manager holds everything; ask Mina for access.",
        "commit 3f5e1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f fixed the retry loop",
        "배포 전에 마이그레이션을 먼저 실행하고, 실패하면 롤백합니다.",
        "see https://github.com/org/repo/blob/main/README.md#install and email ops@example.com",
    ],
)
def test_ordinary_prose_and_identifiers_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_korean_text_around_a_key_still_finds_it() -> None:
    # Korean particles attach directly to the preceding word, so the key has no space after it.
    text = "운영 키는" + AWS_KEY + "를 쓰고, 토큰은 " + GITHUB_TOKEN + "입니다."

    assert found_values(text) == [AWS_KEY, GITHUB_TOKEN]
    assert (
        redact_secrets(text)
        == "운영 키는[REDACTED:aws-access-key]를 쓰고, 토큰은 [REDACTED:github-token]입니다."
    )


def test_private_key_runs_through_its_end_line_only() -> None:
    text = "key:\n" + PRIVATE_KEY + "\nthen restart nginx"

    assert redact_secrets(text) == "key:\n[REDACTED:private-key]\nthen restart nginx"


def test_two_private_keys_keep_the_text_between_them() -> None:
    text = PRIVATE_KEY + "\nand the backup key\n" + PRIVATE_KEY

    assert redact_secrets(text) == "[REDACTED:private-key]\nand the backup key\n[REDACTED:private-key]"


def test_private_key_without_its_end_line_is_redacted_to_the_end() -> None:
    truncated = (
        "-----BEGIN "
        + "OPENSSH PRIVATE"
        + " KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END EC PRIVATE KEY-----"
    )

    assert redact_secrets("pasted: " + truncated) == "pasted: [REDACTED:private-key]"


def test_url_password_is_the_finding() -> None:
    text = "DATABASE_URL is postgres://app:" + "S3cretPw" + "@db.internal:5432/app"

    assert found_values(text) == ["S3cretPw"]
    assert (
        redact_secrets(text)
        == "DATABASE_URL is postgres://app:[REDACTED:url-credentials]@db.internal:5432/app"
    )


@pytest.mark.parametrize(
    "password",
    ["hunter22", "longpassphrase", "p!ss", "Zq8xK2mN9pL4vR7tY3wB"],
)
def test_url_passwords_that_are_long_or_have_a_digit_or_symbol_are_found(password: str) -> None:
    assert rules_found(f"redis://cache:{password}@10.0.0.5:6379/0") == ["url-credentials"]


def test_url_password_with_empty_user_is_found() -> None:
    assert found_values("redis://:" + "hunter22" + "@cache:6379") == ["hunter22"]


@pytest.mark.parametrize(
    "url",
    [
        "postgres://app:app@localhost:5432/app",  # password equal to the user name
        "postgres://Deploy1:deploy1@localhost/app",
        "postgres://app:${DB_PASSWORD}@db/app",
        "postgres://app:<password>@db/app",
        "postgres://app:changeme1@db/app",
        "postgres://app:%DB_PASS%@db/app",
        "amqp://guest:pass@rabbit/",  # short, no digit or symbol
        "postgres://app:zzzzzzzzzz@db/app",  # one repeated character
        "https://example.org:8080/path",
    ],
)
def test_url_placeholders_and_harmless_credentials_are_not_secrets(url: str) -> None:
    assert find_secrets(url) == []


@pytest.mark.parametrize(
    "header",
    [
        "Authorization: Bearer " + RANDOM_VALUE,
        "authorization=token " + RANDOM_VALUE,
        '{"Authorization": "Bearer ' + RANDOM_VALUE + '"}',
        "curl -H 'AUTHORIZATION: Basic "
        + base64.b64encode(b"deploy:" + RANDOM_VALUE.encode()).decode()
        + "'",
    ],
)
def test_authorization_header_value_is_found(header: str) -> None:
    findings = find_secrets(header)

    assert [finding.rule for finding in findings] == ["authorization-header"]
    assert header[findings[0].start : findings[0].end] in {
        RANDOM_VALUE,
        base64.b64encode(b"deploy:" + RANDOM_VALUE.encode()).decode(),
    }


@pytest.mark.parametrize(
    "header",
    [
        "Authorization: Bearer <token>",
        "Authorization: Bearer $API_TOKEN",
        "Authorization: Bearer your-access-token-here",
        "Authorization: Bearer abcdefghijklmnopqrstu",  # one class of characters
    ],
)
def test_authorization_header_placeholders_are_not_secrets(header: str) -> None:
    assert find_secrets(header) == []


def test_jwt_inside_an_authorization_header_is_reported_once_as_a_jwt() -> None:
    text = "Authorization: Bearer " + JWT

    assert rules_found(text) == ["jwt"]
    assert redact_secrets(text) == "Authorization: Bearer [REDACTED:jwt]"


@pytest.mark.parametrize(
    "assignment",
    [
        'DB_PASSWORD="' + RANDOM_VALUE + '"',
        "export API_TOKEN=" + RANDOM_VALUE,
        "--client-secret " + RANDOM_VALUE,
        '{"apiKey": "' + RANDOM_VALUE + '"}',
        "aws_access_key: '" + RANDOM_VALUE + "'",
        "SECRET_KEY = '" + RANDOM_VALUE + "'",
        "token := " + RANDOM_VALUE,
        "'password' => '" + RANDOM_VALUE + "'",
        "db.credentials=" + RANDOM_VALUE,
        "(pwd=" + RANDOM_VALUE + ")",
        "password: abc123#def456",
        "password: 한글암호7#비번9!키값3",  # Hangul has no case: digits and symbols are enough
    ],
)
def test_random_value_assigned_to_a_secret_named_field_is_found(assignment: str) -> None:
    assert rules_found(assignment) == ["secret-assignment"]


def test_secret_assignment_finding_is_the_value_only() -> None:
    text = 'settings: DB_PASSWORD="' + RANDOM_VALUE + '" and DEBUG=false'

    assert redact_secrets(text) == 'settings: DB_PASSWORD="[REDACTED:secret-assignment]" and DEBUG=false'


def test_assignment_hidden_behind_a_rejected_value_is_still_found() -> None:
    # "api_token=..." is first read as the value of "password", which is a placeholder (it contains "token").
    text = "password: api_token=" + RANDOM_VALUE

    assert found_values(text) == [RANDOM_VALUE]


@pytest.mark.parametrize(
    "assignment",
    [
        "password=changeme123",
        "API_TOKEN=${API_TOKEN}",
        "api_key: <your-key>",
        "token=%API_TOKEN%",
        "DB_PASSWORD=process.env.DB_PASSWORD",
        "password=" + "x" * 16,
        "token=" + RANDOM_VALUE + "-EXAMPLE",
        "token=3f5e1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",  # commit SHA
        "token=DEADbeef0123456789ABCdef",  # mixed-case hex is still hex
        "token=Zq8xK2mN9p",  # shorter than 12
        "password=abc123def456ghi789",  # only lower case and digits
        "password=1234-5678-9012-#!",  # no letter
        "token=xY7xY7xY7xY7xY7",  # three classes but low entropy
        "DB_PASSWORD=/etc/app/db/" + RANDOM_VALUE,  # a path says where the secret is kept
        "token=vault" + ":" + RANDOM_VALUE,  # so does a reference with a colon
        "token_count=" + RANDOM_VALUE,  # the name does not end in a secret word
        "the token expires after 3600s",
    ],
)
def test_placeholders_and_values_that_do_not_look_random_are_not_secrets(assignment: str) -> None:
    assert find_secrets(assignment) == []


@pytest.mark.parametrize(
    "placeholder",
    [
        "ghp" + "_" + "x" * 36,
        "AKIA" + "X" * 16,
        "AKIA" + "IOSFODNN7" + "EXAMPLE",  # the key AWS documentation uses
        "sk-proj" + "-" + "x" * 48,
        "xoxb" + "-your-bot-token-here",
        "glpat" + "-" + "xxxxxxxxxxxxxxxxxxxx",
        "AIza" + "Sy" + "X" * 33,
        "-----BEGIN " + "RSA PRIVATE KEY" + "-----\n...\n-----END RSA PRIVATE KEY-----",
        "the deploy key file starts with -----BEGIN " + "OPENSSH PRIVATE KEY" + "----- and lives in Vault",
    ],
)
def test_documented_placeholders_of_token_rules_are_not_secrets(placeholder: str) -> None:
    assert find_secrets(f"Set it like this: {placeholder}") == []


AWS_SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCY" + "8q2Zk3LmWp"  # 40 characters, two of them "/"


@pytest.mark.parametrize(
    "text",
    [
        "[default]\naws_access_key_id = AKIA" + "Z7Q2" * 4 + "\naws_secret_access_key = " + AWS_SECRET_KEY,
        "export AWS_SECRET_ACCESS_KEY=" + AWS_SECRET_KEY,
        '{"Credentials": {"SecretAccessKey": "' + AWS_SECRET_KEY + '"}}',
    ],
)
def test_aws_secret_key_with_slashes_is_found_by_its_name(text: str) -> None:
    assert AWS_SECRET_KEY in found_values(text)
    assert "aws-secret-key" in rules_found(text)


def test_aws_session_token_is_found_by_its_name() -> None:
    token = "IQoJb3JpZ2luX2VjE" + (alnum(50) + "/+") * 6 + "=="

    assert found_values("aws_session_token = " + token) == [token]
    assert rules_found('"SessionToken": "' + token + '"') == ["aws-session-token"]
    assert find_secrets("AWS_SESSION_TOKEN=${AWS_SESSION_TOKEN}") == []


@pytest.mark.parametrize(
    "assignment",
    [
        "ENCRYPTION_KEY=" + RANDOM_VALUE,
        "DB_PASS=" + RANDOM_VALUE,
        "dbPass: " + RANDOM_VALUE,
        '{"secretKey": "' + RANDOM_VALUE + '"}',
        "secret_key_base: " + "3f5e1c2a9b8d7e6f" * 8,  # Rails: 128 hex digits
        "ENCRYPTION_KEY=" + "a1b2c3d4e5f60718" * 4,  # openssl rand -hex 32
        "SIGNING_KEY=" + "q8K2/mN9+pL4vR7tY3wBZx6c" + "Tz0Hd5Jf1Uo=",  # openssl rand -base64 32
        "password: Summer2021!",
        "DB_PASS=Winter2023#",
        '"password": "Autumn#2020"',
        "--password Spring2024!",
        "password: Zq8xK2mN9p",
        "password=xY7xY7xY7xY7xY7",
    ],
)
def test_more_secret_names_and_human_passwords_are_found(assignment: str) -> None:
    assert rules_found(assignment) == ["secret-assignment"]


@pytest.mark.parametrize(
    "text",
    [
        "the password Summer2021! expired",  # prose: no ":" or "=" after the name
        "bypass=Summer2021!",  # "pass" must start a word
        "password = settings.DB_PASSWORD2",
        "password = Config.DbPass2",  # code, not a value
        "password: Optional[str] = None",
        "ENCRYPTION_KEY_FILE=/etc/app/keys/Prod2024.key",
        "token=" + "3f5e1c2a9b8d7e6f" * 3,  # 48 hex digits: a digest, not a key
        "API_KEY=config/Prod2024/keys",  # a relative path is not base64
    ],
)
def test_human_password_rule_leaves_prose_code_and_paths_alone(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    ("command", "password"),
    [
        ("mysql -u root -pS3cure!Pass42 app", "S3cure!Pass42"),
        ("mysqldump -h db.internal -u backup -p'Summer2021!' shop", "Summer2021!"),
        ("docker login -u ci -p " + RANDOM_VALUE + " registry.example.org", RANDOM_VALUE),
        ("echo done && podman login quay.io -p " + RANDOM_VALUE, RANDOM_VALUE),
        ("sshpass -p Winter2023# ssh deploy@10.0.0.7", "Winter2023#"),
    ],
)
def test_password_on_a_command_line_is_found(command: str, password: str) -> None:
    assert found_values(command) == [password]
    assert rules_found(command) == ["command-line-password"]


@pytest.mark.parametrize(
    "command",
    [
        'docker login -u ci -p "$REGISTRY_PASSWORD" registry.example.org',
        "mysql -u root -p",  # prompts for the password
        "mkdir -p build-Out2024!",
        "docker run -p 8080:80 nginx",
        "ssh -p 2222 deploy@host",
        "mysql -u app; mkdir -p Build-2024!x",  # the flag belongs to the next command
    ],
)
def test_command_lines_without_a_password_are_left_alone(command: str) -> None:
    assert find_secrets(command) == []


def test_npmrc_auth_token_of_any_registry_is_found() -> None:
    uuid_token = "5f0c8a2e-93b1-4d7e-a6c4-2b9e1f7d3a58"
    npmrc = (
        "registry=https://npm.example.org/\n//npm.example.org/:_authToken="
        + uuid_token
        + "\n_auth=ZGVwbG95OlMzY3VyZVBhc3M=\nalways-auth=true"
    )

    assert found_values(npmrc) == [uuid_token, "ZGVwbG95OlMzY3VyZVBhc3M="]
    assert find_secrets("//registry.npmjs.org/:_authToken=${NPM_TOKEN}") == []
    assert find_secrets("    self._auth = requests.auth.HTTPBasicAuth(user, key)") == []


def test_a_sentry_dsn_is_public_but_its_legacy_secret_is_not() -> None:
    # Sentry documents the DSN's key as safe to keep public (it only lets a client send events); the old
    # "public:secret@" form also held a secret key, which is a URL's password.
    key = "3f5e1c2a9b8d7e6f5a4b3c2d1e0f9a8b"
    assert find_secrets("SENTRY_DSN=https://" + key + "@o450123.ingest.us.sentry.io/4505123") == []
    legacy = "SENTRY_DSN=https://" + key + ":" + key[::-1] + "@sentry.example.com/12"
    assert found_values(legacy) == [key[::-1]]


def test_rejection_names_the_new_kinds_without_their_values() -> None:
    with pytest.raises(
        SecretDetected, match=r"^next_steps\[0\] appears to contain an AWS secret access key\. "
    ):
        reject_secrets(field="next_steps[0]", text="aws_secret_access_key=" + AWS_SECRET_KEY)
    with pytest.raises(SecretDetected) as caught:
        reject_secrets(field="content", text="mysql -pS3cure!Pass42")
    assert str(caught.value).startswith("content appears to contain a password on a command line. ")
    assert "S3cure" not in str(caught.value)


def test_earlier_rule_wins_and_each_span_is_reported_once() -> None:
    text = "aws_access_key=" + AWS_KEY + "\n" + PRIVATE_KEY.replace("MIIEpAIBAAKCAQEA", AWS_KEY)

    assert rules_found(text) == ["aws-access-key", "private-key"]


def test_findings_are_sorted_by_position_across_rules() -> None:
    text = "DB_PASSWORD=" + RANDOM_VALUE + " then " + GITHUB_TOKEN + " then " + AWS_KEY

    findings = find_secrets(text)

    assert [finding.rule for finding in findings] == ["secret-assignment", "github-token", "aws-access-key"]
    assert [finding.start for finding in findings] == sorted(finding.start for finding in findings)


def test_redaction_replaces_every_span_with_its_rule_id() -> None:
    text = "key " + AWS_KEY + ", token " + GITHUB_TOKEN + "."

    assert redact_secrets(text) == "key [REDACTED:aws-access-key], token [REDACTED:github-token]."


def test_redaction_of_clean_text_returns_it_unchanged() -> None:
    text = "Use pnpm, not npm, in this repository."

    assert redact_secrets(text) == text


def test_rejection_names_the_field_and_kind_but_not_the_value() -> None:
    with pytest.raises(SecretDetected) as caught:
        reject_secrets(field="content", text="the key is " + AWS_KEY)

    assert str(caught.value) == (
        "content appears to contain an AWS access key. Credentials must never be stored in shared memory: "
        "remove the value (you can say where it is kept, for example the name of the environment variable "
        "or secret manager entry) and try again"
    )
    assert AWS_KEY not in str(caught.value)


def test_rejection_joins_distinct_labels_in_order_of_appearance() -> None:
    two = GITHUB_TOKEN + " " + AWS_KEY + " " + AWS_KEY
    three = "Authorization: Bearer " + JWT + " " + GITHUB_TOKEN + " and " + AWS_KEY

    with pytest.raises(
        SecretDetected, match=r"^steps appears to contain a GitHub token and AWS access key\. "
    ):
        reject_secrets(field="steps", text=two)
    with pytest.raises(
        SecretDetected, match=r"^summary appears to contain a JWT, GitHub token and AWS access key\. "
    ):
        reject_secrets(field="summary", text=three)


def test_rejection_accepts_clean_text() -> None:
    reject_secrets(field="content", text="Deploys read the key from the STRIPE_API_KEY environment variable.")


ADVERSARIAL_UNITS = [
    "a",
    "sk-",
    "eyJ",
    "eyJ-",
    "password=",
    "password ",
    " tokenx",
    "Authorization: Bearer ",
    "ab://user:",
    "-----BEGIN " + "PRIVATE KEY-----",
    "ghp_",
    "AKIA",
    "token=" + RANDOM_VALUE + " ",
    "aws_secret_access_key=",
    "aws_session_token=",
    ":_authToken=",
    "mysql ",
    "docker login ",
    " -p",
    "https://",
    "whsec_",
    "DB_PASS=Summer2021! ",
    "dbPass",
    # A value and a copula before every name, with no line break for the line's context to stop at.
    "abcdefgh " * 8 + "is the new key token secret password. ",
    "the key for the thing:\n\n    " + "a" * 11 + "\n",
    'login("' + "ab" * 8 + '" ',
    "a,b,c,d,e,f,g,h,i,j,k,secret\n",
]


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_adversarial_text_of_a_memory_is_processed_quickly(unit: str) -> None:
    # A bound against catastrophic backtracking, not a benchmark: memories stop at 8000 characters, which a
    # linear scan handles in about 10 ms, a quadratic one in seconds.
    text = (unit * (8000 // len(unit) + 1))[:8000]

    started = time.perf_counter()
    find_secrets(text)
    redact_secrets(text)

    assert time.perf_counter() - started < 0.5


def near_matches(length: int) -> str:
    """Runs of every adversarial unit, each run as long as the text allows, so a quadratic rule shows."""
    run = length // len(ADVERSARIAL_UNITS)
    return "".join((unit * (run // len(unit) + 1))[:run] for unit in ADVERSARIAL_UNITS)


def scan_seconds(text: str) -> float:
    # The fastest of two runs: a loaded machine only ever adds time, never removes it.
    timings = []
    for _ in range(2):
        started = time.perf_counter()
        find_secrets(text)
        timings.append(time.perf_counter() - started)
    return min(timings)


def test_scan_time_grows_linearly_with_hook_captures_of_a_megabyte() -> None:
    # Hook captures run far longer than a memory. Ten times the text should take about ten times as long;
    # a quadratic rule would take a hundred times as long on its run. The bound leaves room for noise.
    small, large = scan_seconds(near_matches(100_000)), scan_seconds(near_matches(1_000_000))

    assert large / small < 30, f"100 KB took {small:.3f} s, 1 MB took {large:.3f} s"
