"""Credential formats of a third batch, none of them among formats.py's or more_formats.py's kinds, for the
third unseen part (third_unseen.py). Written on 2026-12-06 from the providers' descriptions of their
credentials after the rules learnt from the second unseen part, and before the filter ever ran on them.
"""

import random
import string
from collections.abc import Callable

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    BASE64URL,
    HEX,
    LOWER_ALNUM,
    UPPER_ALNUM,
    Credential,
    Kind,
    b64,
    chars,
    digits,
    framed,
    token,
    uuid4,
)

DIGITS = string.digits
UPPER_HEX = "0123456789ABCDEF"


def _named(alphabet: str, length: int) -> Callable[[random.Random], Credential]:
    return token("", (alphabet, length))


def _uuid(rng: random.Random) -> Credential:
    value = uuid4(rng)
    return Credential(value, value)


def _prefixed_uuid(prefix: str) -> Callable[[random.Random], Credential]:
    def make(rng: random.Random) -> Credential:
        value = prefix + uuid4(rng)
        return Credential(value, value)

    return make


def _base64_key(length: int) -> Callable[[random.Random], Credential]:
    def make(rng: random.Random) -> Credential:
        value = b64(rng.randbytes(length))
        return Credential(value, value)

    return make


def _ethereum(rng: random.Random) -> Credential:
    value = "0x" + chars(rng, HEX, 64)
    return Credential(value, value)


def _laravel(rng: random.Random) -> Credential:
    value = "base64:" + b64(rng.randbytes(32))
    return Credential(value, value)


def _django(rng: random.Random) -> Credential:
    # "startproject" writes 50 characters of this alphabet after "django-insecure-".
    value = "django-insecure-" + chars(rng, string.ascii_lowercase + DIGITS + "!@#$%^&*(-_=+)", 50)
    return Credential(value, value)


def _google_refresh(rng: random.Random) -> Credential:
    value = "1//0" + chars(rng, BASE64URL, 99)
    return Credential(value, value)


def _bedrock(rng: random.Random) -> Credential:
    value = "ABSK" + b64(
        f"BedrockAPIKey-{chars(rng, LOWER_ALNUM, 4)}-at-{digits(rng, 12)}:".encode() + rng.randbytes(30)
    )
    return Credential(value, value)


def _salesforce_session(rng: random.Random) -> Credential:
    value = f"00D{chars(rng, ALNUM, 12)}!{chars(rng, ALNUM + '._', 96)}"
    return Credential(value, value)


def _zoho(rng: random.Random) -> Credential:
    value = f"1000.{chars(rng, HEX, 32)}.{chars(rng, HEX, 32)}"
    return Credential(value, value)


def _clickup(rng: random.Random) -> Credential:
    value = f"pk_{digits(rng, 8)}_{chars(rng, UPPER_ALNUM, 32)}"
    return Credential(value, value)


def _trello(rng: random.Random) -> Credential:
    value = "ATTA" + chars(rng, HEX, 64) + chars(rng, UPPER_HEX, 8)
    return Credential(value, value)


def _intercom(rng: random.Random) -> Credential:
    value = b64(f"tok:{uuid4(rng)}:1:0".encode()).rstrip("=")
    return Credential(value, value)


def _convex(rng: random.Random) -> Credential:
    name = (
        f"{rng.choice(('happy', 'brave', 'quiet'))}-{rng.choice(('otter', 'lynx', 'heron'))}-{digits(rng, 3)}"
    )
    value = f"prod:{name}|{b64(rng.randbytes(48))}"
    return Credential(value, value)


def _bitbucket_access(rng: random.Random) -> Credential:
    value = "ATCTT3xFfGN0" + chars(rng, BASE64URL, 180) + "=" + chars(rng, UPPER_HEX, 8)
    return Credential(value, value)


def _mattermost_hook(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, LOWER_ALNUM, 26)
    return f"https://chat.acme.io/hooks/{secret}", secret


def _slack_workflow(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, HEX, 32)
    return (
        f"https://hooks.slack.com/triggers/T{chars(rng, UPPER_ALNUM, 10)}/{digits(rng, 13)}/{secret}",
        secret,
    )


def _zapier(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, LOWER_ALNUM, 7)
    return f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{secret}/", f"{secret}/"


def _ifttt(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, BASE64URL, 22)
    return f"https://maker.ifttt.com/trigger/deploy_done/with/key/{secret}", secret


def _feishu(rng: random.Random) -> tuple[str, str]:
    secret = uuid4(rng)
    return f"https://open.feishu.cn/open-apis/bot/v2/hook/{secret}", secret


def _wecom(rng: random.Random) -> tuple[str, str]:
    secret = uuid4(rng)
    return f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={secret}", secret


def _docker_auth(rng: random.Random) -> tuple[str, str]:
    auth = b64(f"ci-bot:{chars(rng, ALNUM, 24)}".encode())
    return '{"auths": {"ghcr.io": {"auth": "' + auth + '"}}}', auth


def _kubeconfig_key(rng: random.Random) -> tuple[str, str]:
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(chars(rng, BASE64, 64) for _ in range(5))
    pem += "\n-----END RSA PRIVATE KEY-----\n"
    data = b64(pem.encode())
    return f"users:\n- name: admin\n  user:\n    client-key-data: {data}", data[60:80]


def _putty(rng: random.Random) -> tuple[str, str]:
    private = chars(rng, BASE64, 44)
    return (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\n"
        f"AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, BASE64, 43)}\n{chars(rng, BASE64, 20)}\nPrivate-Lines: 1\n{private}\n"
        f"Private-MAC: {chars(rng, HEX, 64)}",
        private,
    )


def _openvpn(rng: random.Random) -> tuple[str, str]:
    lines = [chars(rng, HEX, 32) for _ in range(16)]
    return (
        "-----BEGIN OpenVPN Static key V1-----\n"
        + "\n".join(lines)
        + "\n-----END OpenVPN Static key V1-----",
        lines[3],
    )


def _wireguard(rng: random.Random) -> tuple[str, str]:
    key = b64(rng.randbytes(32))
    return f"[Interface]\nPrivateKey = {key}\nAddress = 10.8.0.2/32\nDNS = 1.1.1.1", key


def _minisign(rng: random.Random) -> tuple[str, str]:
    key = "RWRTY0Iy" + chars(rng, BASE64, 150)
    return f"untrusted comment: minisign encrypted secret key\n{key}", key


THIRD_KINDS: tuple[Kind, ...] = (
    # --- cloud ---
    Kind("azure-function-key", "cloud", "AZURE_FUNCTION_KEY", _base64_key(40), named=True),
    Kind("azure-cosmos-key", "cloud", "COSMOS_KEY", _base64_key(64), named=True),
    Kind("aws-bedrock-api-key", "cloud", "AWS_BEARER_TOKEN_BEDROCK", _bedrock, prefix="ABSK"),
    Kind("google-oauth-refresh-token", "cloud", "GOOGLE_REFRESH_TOKEN", _google_refresh, prefix="1//0"),
    Kind("deno-deploy-token", "cloud", "DENO_DEPLOY_TOKEN", token("ddp_", (ALNUM, 36)), prefix="ddp_"),
    Kind("railway-token", "cloud", "RAILWAY_TOKEN", _uuid, named=True),
    Kind("convex-deploy-key", "cloud", "CONVEX_DEPLOY_KEY", _convex, prefix="prod:"),
    Kind("supabase-secret-key", "cloud", "SUPABASE_SECRET_KEY", token("sb_secret_", (BASE64URL, 31)),
         prefix="sb_secret_"),
    Kind("cloudflare-global-key", "cloud", "CF_API_KEY", _named(HEX, 37), named=True),
    # --- CI ---
    Kind("bitbucket-access-token", "ci", "BITBUCKET_ACCESS_TOKEN", _bitbucket_access, prefix="ATCTT3xFfGN0"),
    Kind("buildkite-agent-token", "ci", "BUILDKITE_AGENT_TOKEN", _named(HEX, 50), named=True),
    Kind("expo-token", "ci", "EXPO_TOKEN", _named(ALNUM, 40), named=True),
    Kind("k6-cloud-token", "ci", "K6_CLOUD_TOKEN", _named(HEX, 64), named=True),
    # --- chat and webhooks ---
    Kind("mattermost-webhook", "chat", "MATTERMOST_WEBHOOK_URL", framed(_mattermost_hook), framed=True),
    Kind("slack-workflow-webhook", "chat", "SLACK_WORKFLOW_URL", framed(_slack_workflow), framed=True),
    Kind("zapier-webhook", "chat", "ZAPIER_HOOK_URL", framed(_zapier), framed=True),
    Kind("ifttt-webhook", "chat", "IFTTT_WEBHOOK_URL", framed(_ifttt), framed=True),
    Kind("feishu-webhook", "chat", "FEISHU_WEBHOOK", framed(_feishu), framed=True),
    Kind("wecom-webhook", "chat", "WECOM_WEBHOOK", framed(_wecom), framed=True),
    Kind("vonage-api-secret", "chat", "VONAGE_API_SECRET", _named(ALNUM, 16), named=True),
    Kind("plivo-auth-token", "chat", "PLIVO_AUTH_TOKEN", _named(ALNUM, 40), named=True),
    Kind("pusher-secret", "chat", "PUSHER_APP_SECRET", _named(HEX, 20), named=True),
    # --- payment and crypto ---
    Kind("ethereum-private-key", "payment", "PRIVATE_KEY", _ethereum, named=True),
    Kind("binance-secret-key", "payment", "BINANCE_SECRET_KEY", _named(ALNUM, 64), named=True),
    Kind("infura-secret", "payment", "INFURA_API_SECRET", _named(HEX, 32), named=True),
    # --- databases and frameworks ---
    Kind("laravel-app-key", "database", "APP_KEY", _laravel, named=True),
    Kind("django-secret-key", "database", "SECRET_KEY", _django, prefix="django-insecure-"),
    Kind("hasura-admin-secret", "database", "HASURA_GRAPHQL_ADMIN_SECRET", _named(ALNUM, 32), named=True),
    Kind("docker-config-auth", "registry", "DOCKER_AUTH_CONFIG", framed(_docker_auth), framed=True),
    Kind("kubeconfig-client-key", "cloud", "KUBECONFIG", framed(_kubeconfig_key), framed=True),
    Kind("putty-private-key", "cloud", "SSH_KEY", framed(_putty), framed=True),
    Kind("openvpn-static-key", "cloud", "VPN_KEY", framed(_openvpn), framed=True),
    Kind("wireguard-private-key", "cloud", "WG_PRIVATE_KEY", framed(_wireguard), framed=True),
    Kind("minisign-secret-key", "registry", "MINISIGN_KEY", framed(_minisign), framed=True),
    # --- observability ---
    Kind("pagerduty-integration-key", "observability", "PAGERDUTY_INTEGRATION_KEY", _named(HEX, 32), named=True),
    Kind("opsgenie-key", "observability", "OPSGENIE_API_KEY", _uuid, named=True),
    # --- AI and other SaaS ---
    Kind("riot-api-key", "saas", "RIOT_API_KEY", _prefixed_uuid("RGAPI-"), prefix="RGAPI-"),
    Kind("clickup-token", "saas", "CLICKUP_API_TOKEN", _clickup, prefix="pk_"),
    Kind("trello-token", "saas", "TRELLO_TOKEN", _trello, prefix="ATTA"),
    Kind("intercom-token", "saas", "INTERCOM_ACCESS_TOKEN", _intercom, prefix="dG9rO"),
    Kind("salesforce-session", "saas", "SF_SESSION_ID", _salesforce_session, prefix="00D"),
    Kind("zoho-refresh-token", "saas", "ZOHO_REFRESH_TOKEN", _zoho, prefix="1000."),
    Kind("spotify-client-secret", "saas", "SPOTIFY_CLIENT_SECRET", _named(HEX, 32), named=True),
    Kind("twitch-client-secret", "saas", "TWITCH_CLIENT_SECRET", _named(LOWER_ALNUM, 30), named=True),
    Kind("openweather-key", "saas", "OPENWEATHER_API_KEY", _named(HEX, 32), named=True),
    Kind("mailersend-key", "saas", "MAILERSEND_API_KEY", token("mlsn.", (HEX, 64)), prefix="mlsn."),
)  # fmt: skip
