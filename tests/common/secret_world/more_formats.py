"""More credential formats, none of them among formats.py's 134 kinds, for the second unseen part
(second_unseen.py). Written from the providers' descriptions of their keys (prefix, length, alphabet) on
2026-12-06, before the filter ever ran on them; values are generated from a seeded generator.

Where a provider documents no shape beyond "a random string" (hex, a UUID, base62 of some length), the kind
is ``named``: like formats.py's, it is only ever shown under the variable the provider's docs use.
"""

import json
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
    b64url,
    chars,
    digits,
    framed,
    token,
    uuid4,
)

DIGITS = string.digits


def _prefixed_uuid(prefix: str) -> Callable[[random.Random], Credential]:
    def make(rng: random.Random) -> Credential:
        value = prefix + uuid4(rng)
        return Credential(value, value)

    return make


def _uuid(rng: random.Random) -> Credential:
    value = uuid4(rng)
    return Credential(value, value)


def _named(alphabet: str, length: int) -> Callable[[random.Random], Credential]:
    return token("", (alphabet, length))


def _twitter_bearer(rng: random.Random) -> Credential:
    # App-only bearer tokens: a run of "A", the app id, more "A", then URL-encoded base64 (%2B, %3D).
    value = (
        "A" * 22
        + chars(rng, ALNUM, 6)
        + "A" * 7
        + chars(rng, ALNUM, 18)
        + "%2B"
        + chars(rng, ALNUM, 21)
        + "%3D"
        + chars(rng, ALNUM, 50)
    )
    return Credential(value, value)


def _tailscale(rng: random.Random) -> Credential:
    value = f"tskey-auth-{chars(rng, ALNUM, 12)}CNTRL-{chars(rng, ALNUM, 34)}"
    return Credential(value, value)


def _fcm(rng: random.Random) -> Credential:
    value = f"AAAA{chars(rng, BASE64URL, 7)}:APA91b{chars(rng, BASE64URL, 134)}"
    return Credential(value, value)


def _jfrog_identity(rng: random.Random) -> Credential:
    # JFrog identity (reference) tokens are base64 of "reftkn:01:<expiry>:<random>".
    value = b64(f"reftkn:01:{digits(rng, 10)}:{chars(rng, ALNUM, 27)}".encode()).rstrip("=")
    return Credential(value, value)


def _teamcity(rng: random.Random) -> Credential:
    # TeamCity access tokens: a JWT-like header {"typ": "TCV2"}, then two random parts.
    value = f"eyJ0eXAiOiAiVENWMiJ9.{chars(rng, BASE64URL, 36)}.{chars(rng, BASE64URL, 48)}"
    return Credential(value, value)


def _matrix(rng: random.Random) -> Credential:
    # Synapse access tokens: "syt_", the base64 of the user's localpart, a random part and a checksum.
    user = rng.choice(("deploy-bot", "ops", "alerts", "ci"))
    value = f"syt_{b64url(user.encode())}_{chars(rng, ALNUM, 20)}_{chars(rng, ALNUM, 6)}"
    return Credential(value, value)


def _ably(rng: random.Random) -> Credential:
    value = f"{chars(rng, ALNUM, 6)}.{chars(rng, ALNUM, 6)}:{chars(rng, BASE64URL, 43)}"
    return Credential(value, value)


def _ghost_admin(rng: random.Random) -> Credential:
    value = f"{chars(rng, HEX, 24)}:{chars(rng, HEX, 64)}"
    return Credential(value, value)


def _wordpress(rng: random.Random) -> Credential:
    # WordPress application passwords: 24 letters and digits shown in six groups of four.
    value = " ".join(chars(rng, ALNUM, 4) for _ in range(6))
    return Credential(value, value)


def _infisical(rng: random.Random) -> Credential:
    value = f"st.{uuid4(rng)}.{chars(rng, HEX, 32)}.{chars(rng, HEX, 32)}"
    return Credential(value, value)


def _cloudflare_tunnel(rng: random.Random) -> Credential:
    # "cloudflared service install <token>": base64 of {"a": account tag, "t": tunnel id, "s": secret}.
    document = {"a": chars(rng, HEX, 32), "t": uuid4(rng), "s": b64(rng.randbytes(32))}
    value = b64(json.dumps(document, separators=(",", ":")).encode())
    return Credential(value, value)


def _acr(rng: random.Random) -> Credential:
    # Azure Container Registry passwords: 52 characters with "+ACR" in them.
    value = chars(rng, ALNUM, 42) + "+ACR" + chars(rng, ALNUM, 6)
    return Credential(value, value)


def _checkout(rng: random.Random) -> Credential:
    value = rng.choice(("sk_sbox_", "sk_")) + chars(rng, LOWER_ALNUM, 26)
    return Credential(value, value)


def _cloudinary(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, BASE64URL, 27)
    return f"cloudinary://{digits(rng, 15)}:{secret}@acme-media", secret


def _snowflake(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, ALNUM, 20)
    return f"snowflake://etl_user:{secret}@xy12345.eu-central-1/analytics/public?warehouse=etl", secret


def _redis_cloud(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, ALNUM, 32)
    port = digits(rng, 5)
    return (
        f"rediss://default:{secret}@redis-{port}.c{rng.randrange(1, 300)}.us-east-1-2.ec2.cloud.redislabs.com:{port}",
        secret,
    )


def _cockroach(rng: random.Random) -> tuple[str, str]:
    secret = chars(rng, BASE64URL, 22)
    return (
        f"postgresql://orders:{secret}@acme-cluster-{digits(rng, 4)}.8nk.gcp-us-central1.cockroachlabs.cloud:26257"
        "/defaultdb?sslmode=verify-full",
        secret,
    )


MORE_KINDS: tuple[Kind, ...] = (
    # --- cloud ---
    Kind("cloudflare-origin-ca-key", "cloud", "CF_ORIGIN_CA_KEY", token("v1.0-", (HEX, 24), "-", (HEX, 146)),
         prefix="v1.0-"),
    Kind("openshift-token", "cloud", "OPENSHIFT_TOKEN", token("sha256~", (BASE64URL, 43)), prefix="sha256~"),
    Kind("scalingo-token", "cloud", "SCALINGO_API_TOKEN", token("tk-us-", (BASE64URL, 48)), prefix="tk-us-"),
    Kind("yandex-api-key", "cloud", "YC_API_KEY", token("AQVN", (BASE64URL, 36)), prefix="AQVN"),
    Kind("tailscale-auth-key", "cloud", "TS_AUTHKEY", _tailscale, prefix="tskey-auth-"),
    Kind("render-key", "cloud", "RENDER_API_KEY", token("rnd_", (ALNUM, 32)), prefix="rnd_"),
    Kind("scaleway-secret-key", "cloud", "SCW_SECRET_KEY", _uuid, named=True),
    Kind("linode-token", "cloud", "LINODE_TOKEN", _named(HEX, 64), named=True),
    Kind("hetzner-token", "cloud", "HCLOUD_TOKEN", _named(ALNUM, 64), named=True),
    Kind("vultr-key", "cloud", "VULTR_API_KEY", _named(UPPER_ALNUM, 36), named=True),
    Kind("backblaze-key", "cloud", "B2_APPLICATION_KEY", token("K00", (DIGITS, 1), (ALNUM, 27)), named=True),
    Kind("cloudflare-tunnel-token", "cloud", "TUNNEL_TOKEN", _cloudflare_tunnel),
    # --- CI and code hosting ---
    Kind("codecov-token", "ci", "CODECOV_TOKEN", _uuid, named=True),
    Kind("harness-pat", "ci", "HARNESS_API_KEY",
         token("pat.", (BASE64URL, 22), ".", (HEX, 24), ".", (ALNUM, 20)), prefix="pat."),
    Kind("infracost-key", "ci", "INFRACOST_API_KEY", token("ico-", (ALNUM, 32)), prefix="ico-"),
    Kind("octopus-key", "ci", "OCTOPUS_API_KEY", token("API-", (UPPER_ALNUM, 26)), prefix="API-"),
    Kind("jenkins-token", "ci", "JENKINS_API_TOKEN", token("11", (HEX, 32)), named=True),
    Kind("teamcity-token", "ci", "TEAMCITY_TOKEN", _teamcity, prefix="eyJ0eXAiOiAiVENWMiJ9."),
    Kind("sourcegraph-token", "ci", "SRC_ACCESS_TOKEN", token("sgp_", (HEX, 16), "_", (HEX, 40)), prefix="sgp_"),
    Kind("gitea-token", "ci", "GITEA_TOKEN", _named(HEX, 40), named=True),
    # --- chat ---
    Kind("slack-config-token", "chat", "SLACK_CONFIG_TOKEN", token("xoxe.xoxp-1-", (ALNUM, 140)),
         prefix="xoxe.xoxp-1-"),
    Kind("fcm-server-key", "chat", "FCM_SERVER_KEY", _fcm, prefix="AAAA"),
    Kind("facebook-access-token", "chat", "FACEBOOK_ACCESS_TOKEN", token("EAAG", (ALNUM, 150)), prefix="EAAG"),
    Kind("matrix-token", "chat", "MATRIX_ACCESS_TOKEN", _matrix, prefix="syt_"),
    Kind("ably-key", "chat", "ABLY_API_KEY", _ably),
    Kind("pubnub-secret-key", "chat", "PUBNUB_SECRET_KEY", token("sec-c-", (BASE64, 48)), prefix="sec-c-"),
    Kind("mattermost-token", "chat", "MATTERMOST_TOKEN", _named(LOWER_ALNUM, 26), named=True),
    # --- payment ---
    Kind("gocardless-token", "payment", "GOCARDLESS_ACCESS_TOKEN", token("live_", (BASE64URL, 40)),
         prefix="live_"),
    Kind("checkout-secret-key", "payment", "CHECKOUT_SECRET_KEY", _checkout, prefix="sk_"),
    Kind("razorpay-key-secret", "payment", "RAZORPAY_KEY_SECRET", _named(ALNUM, 24), named=True),
    Kind("mollie-key", "payment", "MOLLIE_API_KEY", token("live_", (ALNUM, 30)), prefix="live_"),
    Kind("paddle-key", "payment", "PADDLE_API_KEY",
         token("pdl_live_apikey_", (LOWER_ALNUM, 26), "_", (ALNUM, 22), "_", (ALNUM, 3)), prefix="pdl_live_apikey_"),
    Kind("plaid-secret", "payment", "PLAID_SECRET", _named(HEX, 30), named=True),
    Kind("shippo-token", "payment", "SHIPPO_API_TOKEN", token("shippo_live_", (HEX, 40)), prefix="shippo_live_"),
    # --- databases ---
    Kind("neon-key", "database", "NEON_API_KEY", token("napi_", (LOWER_ALNUM, 64)), prefix="napi_"),
    Kind("clickhouse-key-secret", "database", "CLICKHOUSE_KEY_SECRET", token("4b1d", (ALNUM, 38)), prefix="4b1d"),
    Kind("mongodb-atlas-private-key", "database", "MONGODB_ATLAS_PRIVATE_KEY", _uuid, named=True),
    Kind("snowflake-url", "database", "SNOWFLAKE_URL", framed(_snowflake), framed=True),
    Kind("redis-cloud-url", "database", "REDIS_URL", framed(_redis_cloud), framed=True),
    Kind("cockroach-url", "database", "DATABASE_URL", framed(_cockroach), framed=True),
    # --- package registries ---
    Kind("jfrog-identity-token", "registry", "JFROG_ACCESS_TOKEN", _jfrog_identity, prefix="cmVmdGtuOjAxOj"),
    Kind("cloudsmith-key", "registry", "CLOUDSMITH_API_KEY", _named(HEX, 40), named=True),
    Kind("hexpm-key", "registry", "HEX_API_KEY", _named(HEX, 32), named=True),
    Kind("acr-password", "registry", "ACR_PASSWORD", _acr),
    Kind("quay-robot-token", "registry", "QUAY_ROBOT_TOKEN", _named(UPPER_ALNUM, 64), named=True),
    # --- observability ---
    Kind("pagerduty-token", "observability", "PAGERDUTY_TOKEN", token("u+", (BASE64URL, 18)), named=True),
    Kind("honeycomb-ingest-key", "observability", "HONEYCOMB_API_KEY", token("hcxik_", (LOWER_ALNUM, 58)),
         prefix="hcxik_"),
    Kind("coralogix-key", "observability", "CORALOGIX_PRIVATE_KEY", token("cxtp_", (ALNUM, 30)), prefix="cxtp_"),
    Kind("axiom-token", "observability", "AXIOM_TOKEN", _prefixed_uuid("xaat-"), prefix="xaat-"),
    Kind("posthog-personal-key", "observability", "POSTHOG_PERSONAL_API_KEY", token("phx_", (ALNUM, 43)),
         prefix="phx_"),
    Kind("rollbar-token", "observability", "ROLLBAR_ACCESS_TOKEN", _named(HEX, 32), named=True),
    Kind("checkly-key", "observability", "CHECKLY_API_KEY", token("cu_", (HEX, 32)), prefix="cu_"),
    Kind("sumologic-access-key", "observability", "SUMO_ACCESS_KEY", _named(ALNUM, 64), named=True),
    # --- AI providers ---
    Kind("pinecone-key", "ai", "PINECONE_API_KEY", token("pcsk_", (ALNUM, 5), "_", (ALNUM, 63)), prefix="pcsk_"),
    Kind("elevenlabs-key", "ai", "ELEVENLABS_API_KEY", token("sk_", (HEX, 48)), prefix="sk_"),
    Kind("together-key", "ai", "TOGETHER_API_KEY", _named(HEX, 64), named=True),
    Kind("fireworks-key", "ai", "FIREWORKS_API_KEY", token("fw_", (ALNUM, 24)), prefix="fw_"),
    Kind("openrouter-key", "ai", "OPENROUTER_API_KEY", token("sk-or-v1-", (HEX, 64)), prefix="sk-or-v1-"),
    Kind("voyage-key", "ai", "VOYAGE_API_KEY", token("pa-", (BASE64URL, 43)), prefix="pa-"),
    Kind("jina-key", "ai", "JINA_API_KEY", token("jina_", (ALNUM, 60)), prefix="jina_"),
    Kind("langfuse-secret-key", "ai", "LANGFUSE_SECRET_KEY", _prefixed_uuid("sk-lf-"), prefix="sk-lf-"),
    Kind("wandb-key", "ai", "WANDB_API_KEY", _named(HEX, 40), named=True),
    # --- other SaaS ---
    Kind("adafruit-io-key", "saas", "ADAFRUIT_IO_KEY", token("aio_", (ALNUM, 28)), prefix="aio_"),
    Kind("adobe-client-secret", "saas", "ADOBE_CLIENT_SECRET", token("p8e-", (ALNUM, 32)), prefix="p8e-"),
    Kind("asana-pat", "saas", "ASANA_ACCESS_TOKEN",
         token("2/", (DIGITS, 16), "/", (DIGITS, 16), ":", (HEX, 32)), prefix="2/"),
    Kind("duffel-token", "saas", "DUFFEL_ACCESS_TOKEN", token("duffel_live_", (BASE64URL, 43)),
         prefix="duffel_live_"),
    Kind("easypost-key", "saas", "EASYPOST_API_KEY", token("EZAK", (ALNUM, 54)), prefix="EZAK"),
    Kind("frameio-token", "saas", "FRAMEIO_TOKEN", token("fio-u-", (BASE64URL, 64)), prefix="fio-u-"),
    Kind("launchdarkly-sdk-key", "saas", "LD_SDK_KEY", _prefixed_uuid("sdk-"), prefix="sdk-"),
    Kind("brevo-key", "saas", "BREVO_API_KEY", token("xkeysib-", (HEX, 64), "-", (ALNUM, 16)), prefix="xkeysib-"),
    Kind("typeform-token", "saas", "TYPEFORM_TOKEN", token("tfp_", (ALNUM, 44), "_", (ALNUM, 14)), prefix="tfp_"),
    Kind("resend-key", "saas", "RESEND_API_KEY", token("re_", (ALNUM, 8), "_", (ALNUM, 24)), prefix="re_"),
    Kind("twitter-bearer-token", "saas", "TWITTER_BEARER_TOKEN", _twitter_bearer, prefix="A" * 22),
    Kind("algolia-admin-key", "saas", "ALGOLIA_ADMIN_API_KEY", _named(HEX, 32), named=True),
    Kind("klaviyo-private-key", "saas", "KLAVIYO_PRIVATE_API_KEY", token("pk_", (HEX, 34)), prefix="pk_"),
    Kind("ghost-admin-key", "saas", "GHOST_ADMIN_API_KEY", _ghost_admin, named=True),
    Kind("wordpress-app-password", "saas", "WP_APPLICATION_PASSWORD", _wordpress, named=True),
    Kind("auth0-client-secret", "saas", "AUTH0_CLIENT_SECRET", _named(BASE64URL, 64), named=True),
    Kind("stytch-secret", "saas", "STYTCH_SECRET", token("secret-live-", (BASE64URL, 36)), prefix="secret-live-"),
    Kind("infisical-service-token", "saas", "INFISICAL_TOKEN", _infisical, prefix="st."),
    Kind("sanity-token", "saas", "SANITY_API_TOKEN", token("sk", (ALNUM, 180)), prefix="sk"),
    Kind("cloudinary-url", "saas", "CLOUDINARY_URL", framed(_cloudinary), framed=True),
)  # fmt: skip
