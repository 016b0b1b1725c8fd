"""The secret filter reads a text as written and as a reader sees it: NFKC-folded, without invisible
characters, percent-decoded, with broken lines joined, base64 runs decoded and placeholder words written
over part of a real token masked. Findings map back to the original characters."""

import base64
from urllib.parse import quote

import pytest

from kenfold_common.secrets import find_secrets, redact_secrets

BODY = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"  # 34 characters, so "ghp_" + BODY + "Q2" is 40
TOKEN = "ghp_" + BODY + "Q2"


def layers(text: str) -> list[tuple[str, str]]:
    return [(f.rule, f.layer) for f in find_secrets(text)]


@pytest.mark.parametrize(
    ("disguised", "layer"),
    [
        (TOKEN[:10] + "\u200b" + TOKEN[10:], "normalized"),
        (TOKEN[:10] + "\u00ad" + TOKEN[10:], "normalized"),
        (TOKEN[:10] + "\u202e" + TOKEN[10:], "normalized"),
        ("".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in TOKEN), "normalized"),
        (TOKEN[:20] + "\n  " + TOKEN[20:], "joined lines"),
        (TOKEN[:20] + "\\\n" + TOKEN[20:], "joined lines"),
    ],
)
def test_a_disguised_token_is_found_and_redacted_whole(disguised: str, layer: str) -> None:
    text = f"deploy uses {disguised} for the nightly job"
    assert layers(text) == [("github-token", layer)]
    assert redact_secrets(text) == "deploy uses [REDACTED:github-token] for the nightly job"


def test_a_url_encoded_assignment_is_found() -> None:
    text = "https://example.net/cb?next=" + quote("GITHUB_TOKEN=" + TOKEN, safe="")
    assert layers(text) == [("github-token", "normalized")]
    assert TOKEN[10:] not in redact_secrets(text)


def test_a_base64_encoded_line_is_found_and_the_whole_run_redacted() -> None:
    encoded = base64.b64encode(f"export GITHUB_TOKEN={TOKEN}\n".encode()).decode()
    assert layers(f"echo {encoded} | base64 -d") == [("github-token", "base64-decoded")]
    assert redact_secrets(f"echo {encoded} | base64 -d") == "echo [REDACTED:github-token] | base64 -d"


def test_base64_of_ordinary_text_and_binary_is_left_alone() -> None:
    prose = base64.b64encode(b"The nightly job merges duplicate memories at two.").decode()
    digest = base64.b64encode(bytes(range(40, 104))).decode()
    assert find_secrets(f"data: {prose}") == []
    assert find_secrets(f"integrity: sha512-{digest}") == []


@pytest.mark.parametrize("word", ["EXAMPLE", "xxxx", "sample", "test"])
def test_a_real_shaped_token_with_a_placeholder_word_inside_is_still_refused(word: str) -> None:
    hex_token = "sbp_" + "0c22fe737798defc" + word + "cd23e73da13911788e0c22fe737798"[: 24 - len(word)]
    assert layers(f"deploy uses {hex_token} nightly") == [("supabase-token", "masked placeholder words")]
    assert [
        f.rule for f in find_secrets("token: ghp_" + BODY[:10] + word + BODY[10 + len(word) :] + "Q2")
    ] == ["github-token"]


@pytest.mark.parametrize(
    "text",
    [
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "kubeadm join 10.0.0.10:6443 --token abcdef.0123456789abcdef",
        "token: ghp_" + "x" * 36,
        "SUPABASE_ACCESS_TOKEN=sbp_" + "x" * 40,
        "SLACK_BOT_TOKEN=xoxb-your-bot-token-here",
    ],
)
def test_documented_example_values_and_all_placeholder_bodies_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "TWILIO_AUTH_TOKEN=" + "e93cff970a76d4cedada20f5fdef724a",
        "api_key: " + "22f8534955da3b06e4caffbb575ac972",
        "HEROKU_API_KEY=" + "3a16f3f3-3d8a-4fdd-91ec-ef5bdc12ab2d",
    ],
)
def test_hex_and_uuid_keys_count_under_a_name_that_says_which_secret(text: str) -> None:
    assert [f.rule for f in find_secrets(text)] == ["secret-assignment"]


@pytest.mark.parametrize(
    "text",
    [
        "token=3f5e1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",  # a bare "token" is as often a commit SHA
        "request_id=3a16f3f3-3d8a-4fdd-91ec-ef5bdc12ab2d",
        "checksum: 22f8534955da3b06e4caffbb575ac97222f8534955da3b06e4caffbb575ac972",
        "the release notes\nwere written by Alice and reviewed\nby the whole team on Friday",
    ],
)
def test_hashes_ids_and_wrapped_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
