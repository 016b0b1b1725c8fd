"""The fifth unseen part: written on 2026-12-06 after the rules learnt from the fourth unseen part's misses,
and committed before the filter ever ran on it.

No new kinds: two of each of the 278 kinds of the other parts, in contexts no other part uses (Jenkinsfile,
Azure Pipelines, launchd plists, appsettings.json, secret-setting CLIs of dotnet, firebase, vercel,
netlify, railway, podman, Java/Go/Dart/R/PowerShell/zsh/crontab, Jira and Confluence markup, mail, chat in
Swedish, Czech, Greek, Japanese and Chinese), with variants of the earlier disguises. Look-alikes no other
part has: PKCE challenges and OAuth state, build-asset hashes, Go pseudo-versions, known_hosts lines,
Codecov badge tokens, TOTP documentation examples, Gravatar hashes, release names, .env.example files.
"""

import base64
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import (
    ALNUM,
    BASE64,
    BASE64URL,
    HEX,
    KINDS,
    LOWER_ALNUM,
    Kind,
    chars,
    digits,
)
from tests.common.secret_world.fourth_unseen import FOURTH_KINDS
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes
from tests.common.secret_world.third_formats import THIRD_KINDS

FIFTH_UNSEEN_SEED = 5_5_061_2026
KIND_SAMPLES = 2
LOOK_ALIKE_SAMPLES = 40


def _pascal(env: str) -> str:
    return "".join(part.title() for part in env.lower().split("_"))


FIFTH_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"pipeline {{\n  environment {{\n    {env} = '{v}'\n  }}\n}}",
    lambda rng, env, v: f"variables:\n- name: {env}\n  value: {v}",
    lambda rng, env, v: f"<key>{env}</key>\n<string>{v}</string>",
    lambda rng, env, v: f'{{\n  "Payments": {{\n    "{_pascal(env)}": "{v}"\n  }}\n}}',
    lambda rng, env, v: f'dotnet user-secrets set "{env}" "{v}"',
    lambda rng, env, v: f'firebase functions:config:set app.{env.lower()}="{v}"',
    lambda rng, env, v: f"vercel env add {env} production <<< {v}",
    lambda rng, env, v: f"netlify env:set {env} {v}",
    lambda rng, env, v: f'railway variables --set "{env}={v}"',
    lambda rng, env, v: f"podman run --env {env}={v} quay.io/acme/api:3",
    lambda rng, env, v: f'System.setProperty("{env.lower().replace("_", ".")}", "{v}");',
    lambda rng, env, v: f'{env.lower()} := flag.String("{env.lower().replace("_", "-")}", "{v}", "")',
    lambda rng, env, v: f"const {env.lower()} = '{v}';",
    lambda rng, env, v: f'Sys.setenv({env} = "{v}")',
    lambda rng, env, v: f'$env:{env} = "{v}"' if rng.random() < 0.3 else f'${_pascal(env)} = "{v}"',
    lambda rng, env, v: f"typeset -x {env}={v}",
    lambda rng, env, v: f"{env}={v}\n0 3 * * * /srv/jobs/nightly.sh",
    lambda rng, env, v: f"{{code}}{env}={v}{{code}}",
    lambda rng, env, v: f"|| Name || Value ||\n| {env} | {v} |",
    lambda rng, env, v: (
        f"Subject: access for the new vendor\n\nUsername: acme-vendor\n{env}: {v}\n\nThanks, Mina"
    ),
    lambda rng, env, v: f"{env} är {v}, dela den inte.",
    lambda rng, env, v: f"{env} je {v}, nesdílet.",
    lambda rng, env, v: f"Το {env} είναι {v}.",
    lambda rng, env, v: f"{env}は「{v}」です。",
    lambda rng, env, v: f"{env}：{v}",
)

FIFTH_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"pls use {v} for the staging run",
    lambda rng, env, v: f"`{v}` ← new one",
    lambda rng, env, v: f"Ny nyckel: {v}",
    lambda rng, env, v: f"新的密钥：{v}",
    lambda rng, env, v: f"docker run --rm acme/cli login {v}",
)

FIFTH_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"From the old Confluence page:\n{{noformat}}\n{v}\n{{noformat}}",
    lambda rng, env, v: f"- connection: {v}",
)

FIFTH_DISGUISES = {
    "plain": 0.40,
    "zero-width": 0.07,
    "bidi-control": 0.05,
    "fullwidth": 0.07,
    "percent-encoded": 0.08,
    "base64-encoded": 0.08,
    "split-line": 0.10,
    "soft-hyphen": 0.06,
    "placeholder-word": 0.09,
}


def _in_token(rng: random.Random, disguise: str, secret: str, prefix: str) -> str:
    start = len(prefix) if prefix and secret.startswith(prefix) else 1
    if len(secret) - 2 <= start:
        return secret
    position = rng.randrange(start + 1, len(secret) - 1)
    if disguise == "zero-width":
        return secret[:position] + rng.choice(("\u200c", "\ufeff", "\u200b\u200b")) + secret[position:]
    if disguise == "bidi-control":
        return secret[:position] + rng.choice(("\u2067", "\u2068", "\u200f")) + secret[position:]
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad\u00ad"[: rng.randrange(1, 3)] + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\n      ", "\\\n    ", "\r\n")) + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.5 else c
            for c in secret
        )
    if disguise == "placeholder-word":
        word = rng.choice(("EXAMPLE", "test", "xxxx", "Sample", "dummy", "demo"))
        spots = [i for i in range(start, len(secret) - len(word)) if secret[i : i + len(word)].isalnum()]
        if not spots:
            return secret
        at = rng.choice(spots)
        return secret[:at] + word + secret[at + len(word) :]
    return secret


def _whole_text(rng: random.Random, disguise: str, text: str) -> str:
    if disguise == "percent-encoded":
        return rng.choice(
            (
                f"mailto:ops@acme.io?subject=creds&body={quote(text, safe='')}",
                f"https://wiki.acme.io/search?q={quote(text, safe='')}",
            )
        )
    if disguise == "base64-encoded":
        encoded = base64.b64encode(text.encode()).decode()
        return rng.choice(
            (
                f"Content-Transfer-Encoding: base64\n\n{encoded}",
                f"value: !!binary |\n  {encoded}",
                f"base64 -d <<< {encoded}",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(FIFTH_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(FIFTH_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(FIFTH_NAMED_CONTEXTS + FIFTH_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _oauth_params(rng: random.Random) -> str:
    return (
        f"https://auth.acme.io/authorize?response_type=code&client_id=orders-web&state={chars(rng, ALNUM, 32)}"
        f"&code_challenge={chars(rng, BASE64URL, 43)}&code_challenge_method=S256"
    )


def _build_assets(rng: random.Random) -> str:
    return rng.choice(
        (
            f"dist/assets/index-{chars(rng, BASE64URL, 8)}.js  142.31 kB │ gzip: 45.02 kB",
            f"main.{chars(rng, HEX, 8)}.chunk.js",
            f"/_next/static/{chars(rng, BASE64URL, 21)}/_buildManifest.js",
            f"pod-template-hash={chars(rng, LOWER_ALNUM, 10)}",
        )
    )


def _go_versions(rng: random.Random) -> str:
    return f"github.com/acme/lib v0.0.0-2023{digits(rng, 10)}-{chars(rng, HEX, 12)} // indirect"


def _known_hosts(rng: random.Random) -> str:
    return rng.choice(
        (
            f"github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{chars(rng, BASE64, 43)}",
            f"|1|{base64.b64encode(rng.randbytes(20)).decode()}|{base64.b64encode(rng.randbytes(20)).decode()} ecdsa-sha2-nistp256 AAAAE2VjZHNh",
        )
    )


def _badges(rng: random.Random) -> str:
    return rng.choice(
        (
            f"[![codecov](https://codecov.io/gh/acme/orders/branch/main/graph/badge.svg?token={chars(rng, string.ascii_uppercase + string.digits, 10)})](https://codecov.io/gh/acme/orders)",
            "[![CI](https://github.com/acme/orders/actions/workflows/ci.yml/badge.svg?branch=main)](https://github.com/acme/orders/actions)",
            f"![avatar](https://www.gravatar.com/avatar/{chars(rng, HEX, 32)}?s=80)",
        )
    )


def _documented_examples(rng: random.Random) -> str:
    return rng.choice(
        (
            "otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example",
            'dotnet user-secrets set "Movies:ServiceApiKey" "12345"',
            'firebase functions:config:set someservice.key="THE API KEY" someservice.id="THE CLIENT ID"',
            "vercel env add API_TOKEN production",
            "netlify env:set API_KEY <value>",
            "<key>API_KEY</key>\n<string>$(API_KEY)</string>",
        )
    )


def _release_names(rng: random.Random) -> str:
    return rng.choice(
        (
            f"sentry-cli releases new orders@1.{rng.randrange(0, 30)}.{rng.randrange(0, 9)}+{chars(rng, HEX, 7)}",
            f"PROJ-{rng.randrange(100, 9999)} fix retry storm",
            f"monitor {digits(rng, 8)} triggered at 2026-12-06T01:{rng.randrange(10, 59)}:00Z",
        )
    )


def _env_example(rng: random.Random) -> str:
    return rng.choice(
        (
            "# .env.example\nDATABASE_URL=\nSTRIPE_SECRET_KEY=\nSENTRY_DSN=\nLOG_LEVEL=info",
            "API_KEY=\nAPI_SECRET=\n# ask #platform for the values",
            f"|| Name || Value ||\n| REGION | eu-west-1 |\n| REPLICAS | {rng.randrange(2, 9)} |",
        )
    )


def _code_and_config(rng: random.Random) -> str:
    return rng.choice(
        (
            "pipeline {\n  environment {\n    API_KEY = credentials('orders-api-key')\n  }\n}",
            "variables:\n- group: orders-secrets\n- name: buildConfiguration\n  value: Release",
            'System.setProperty("javax.net.ssl.trustStore", "/etc/ssl/truststore.jks");',
            'timeout := flag.Duration("timeout", 30*time.Second, "")',
            '$Password = Read-Host -AsSecureString "Password"',
            "typeset -x PATH=$HOME/bin:$PATH",
        )
    )


def _chat(rng: random.Random) -> str:
    return rng.choice(
        (
            "Lösenordet ligger i valvet, inte i wikin.",
            "Heslo je v trezoru, nedávejte ho do chatu.",
            "Ο κωδικός είναι στο vault, όχι στο chat.",
            "パスワードは金庫にあります。チャットには貼らないでください。",
            "密码在保险库里，别贴到群里。",
        )
    )


def _mail_and_markup(rng: random.Random) -> str:
    return rng.choice(
        (
            "Subject: vendor access\n\nUsername: acme-vendor\nPassword: sent separately by SMS\n\nThanks, Mina",
            "{code}export LOG_LEVEL=debug{code}",
            f"Message-ID: <{chars(rng, HEX, 16)}.{digits(rng, 10)}@mail.acme.io>",
        )
    )


def _encoded_ordinary_text(rng: random.Random) -> str:
    plain = rng.choice(("Välkommen tillbaka!", "Děkujeme za objednávku.", "Καλημέρα ομάδα", "新年快乐"))
    return rng.choice(
        (
            f"Content-Transfer-Encoding: base64\n\n{base64.b64encode(plain.encode()).decode()}",
            f"https://wiki.acme.io/search?q={quote(plain, safe='')}",
            f"value: !!binary |\n  {base64.b64encode(plain.encode()).decode()}",
        )
    )


def _hex_and_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f"Build {chars(rng, HEX, 40)} passed on main",
            f"user_id,email\n{digits(rng, 6)},mina@acme.io\n{digits(rng, 6)},jo@acme.io",
            f"idempotency-key: {chars(rng, ALNUM, 32)}",
            f'etag W/"{chars(rng, HEX, 40)}"',
        )
    )


FIFTH_LOOK_ALIKES = {
    "oauth-params": _oauth_params,
    "build-assets": _build_assets,
    "go-pseudo-versions": _go_versions,
    "known-hosts": _known_hosts,
    "badges-and-avatars": _badges,
    "documented-examples": _documented_examples,
    "release-names": _release_names,
    "env-example": _env_example,
    "code-and-config": _code_and_config,
    "chat-about-secrets": _chat,
    "mail-and-markup": _mail_and_markup,
    "encoded-ordinary-text": _encoded_ordinary_text,
    "hex-and-ids": _hex_and_ids,
}


def fifth_unseen_part() -> list[Sample]:
    rng = random.Random(FIFTH_UNSEEN_SEED)
    names = list(FIFTH_DISGUISES)
    weights = [FIFTH_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in (*FOURTH_KINDS, *THIRD_KINDS, *MORE_KINDS, *KINDS)
        for _ in range(KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in FIFTH_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)
