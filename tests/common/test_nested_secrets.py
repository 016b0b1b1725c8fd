"""The secret filter over JSON-like data (archive import, the stored-memory scan): nested strings, map keys,
and values under a key that names a secret."""

from kenfold_common.secrets import NestedFinding, find_nested_secrets, redact_nested

GITHUB_TOKEN = "ghp" + "_" + ("aB3dE5fG7h" * 4)[:36]
RANDOM_VALUE = "Zq8xK2mN" + "9pL4vR7t" + "Y3wB"


def test_nested_strings_and_keys_are_found_by_path_without_the_value() -> None:
    data = {"steps": ["fine", {"note": f"use {GITHUB_TOKEN}"}], GITHUB_TOKEN: 1}
    assert find_nested_secrets(data, path="attrs") == [
        NestedFinding(path="attrs.steps[1].note", rule="github-token", label="GitHub token"),
        NestedFinding(path="attrs.{key #2}", rule="github-token", label="GitHub token"),
    ]


def test_values_under_a_secret_named_key_count_at_any_depth_unless_placeholders() -> None:
    assert [f.path for f in find_nested_secrets({"db": {"apiKey": [RANDOM_VALUE]}}, path="a")] == [
        "a.db.apiKey[0]"
    ]
    assert [f.rule for f in find_nested_secrets({"password": "Summer2021!"}, path="a")] == [
        "secret-assignment"
    ]
    # Placeholders, ordinary words, numbers and the same value under an ordinary key are not credentials.
    for data in (
        {"password": "${DB_PASSWORD}"},
        {"token": "rotate-weekly"},
        {"token_count": RANDOM_VALUE},
        {"secret": 12345678901234},
        {"note": RANDOM_VALUE},
    ):
        assert find_nested_secrets(data, path="a") == [], data


def test_redact_nested_replaces_what_find_reports_and_keeps_the_rest() -> None:
    data = {
        "keep": [1, 2.5, None, True, "plain"],
        "credentials": {"main": RANDOM_VALUE},
        "n": f"t={GITHUB_TOKEN}",
    }
    assert redact_nested(data) == {
        "keep": [1, 2.5, None, True, "plain"],
        "credentials": {"main": "[REDACTED:secret-assignment]"},
        "n": "t=[REDACTED:github-token]",
    }
    assert find_nested_secrets(redact_nested(data), path="a") == []


PRIVATE_KEY = (
    "-----BEGIN "
    + "RSA PRIVATE"
    + " KEY-----\nMIIEpAIBAAKCAQEA"
    + "aB3dE5fG7h" * 4
    + "\n-----END RSA PRIVATE KEY-----"
)


def test_many_strings_are_scanned_as_exactly_as_one_by_one() -> None:
    # The first pass joins the strings; a credential in one of many, whatever surrounds it, is still found,
    # including after text whose rejected match runs on (a private key named with a placeholder).
    around = [
        "password:",
        "token",
        "Authorization: Bearer",
        "-----BEGIN RSA PRIVATE KEY----- example",
        "x" * 50,
    ]
    for secret, rule in ((GITHUB_TOKEN, "github-token"), (PRIVATE_KEY, "private-key")):
        data = {"a": [*around, {"b": secret}], "c": around}
        assert [(f.path, f.rule) for f in find_nested_secrets(data, path="attrs")] == [("attrs.a[5].b", rule)]
    assert find_nested_secrets({"a": around, "c": around}, path="attrs") == []
