"""The seventh unseen part: written on 2026-12-06 after the rules learnt from the sixth unseen part's misses,
and committed before the filter ever ran on it.

No new kinds: two of each of the 278 kinds, in contexts no other part uses (Kubernetes Secret manifests
with stringData lists, Docker Swarm and Nomad job files, systemd credentials, supervisord, Procfile,
Deno and Bun, Julia, OCaml, Zig, Nim, Crystal, Groovy, F#, VB.NET, Fortran-free config formats such as
HOCON, EDN, Dhall and KDL, Slack slash commands, SMS, voice-note transcripts, and chat in Norwegian,
Danish, Catalan, Estonian, Slovak, Bengali and Persian), with the earlier disguise families. Look-alikes
no other part has: HOCON/EDN configuration, Nomad and Swarm job ids, SMS verification codes, voice
transcripts about secrets, Bengali and Persian text, file hashes in release notes.
"""

import base64
import random
import string
from urllib.parse import quote

from tests.common.secret_world.formats import ALNUM, HEX, KINDS, LOWER_ALNUM, Kind, chars, digits, uuid4
from tests.common.secret_world.fourth_unseen import FOURTH_KINDS
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.texts import Context, Sample, public_as_look_alikes
from tests.common.secret_world.third_formats import THIRD_KINDS

SEVENTH_UNSEEN_SEED = 7_7_061_2026
KIND_SAMPLES = 2
LOOK_ALIKE_SAMPLES = 40


def _kebab(env: str) -> str:
    return env.lower().replace("_", "-")


SEVENTH_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"stringData:\n  - key: {env}\n    value: {v}",
    lambda rng, env, v: f"docker service create --env {env}={v} --name api acme/api:4",
    lambda rng, env, v: (
        f'job "api" {{\n  group "web" {{\n    task "app" {{\n      env {{\n        {env} = "{v}"\n      }}\n    }}\n  }}\n}}'
    ),
    lambda rng, env, v: f"[Service]\nSetCredential={_kebab(env)}:{v}",
    lambda rng, env, v: f'[program:api]\nenvironment={env}="{v}",PORT="8080"',
    lambda rng, env, v: f"web: {env}={v} bundle exec puma -C config/puma.rb",
    lambda rng, env, v: f'Deno.env.set("{env}", "{v}");',
    lambda rng, env, v: f'Bun.env.{env} ||= "{v}";',
    lambda rng, env, v: f'ENV["{env}"] = get(ENV, "{env}", "{v}")',
    lambda rng, env, v: f'let {env.lower()} = "{v}"',
    lambda rng, env, v: f'const {env.lower()} = "{v}";',
    lambda rng, env, v: f'def {env.lower()} = System.getenv("{env}") ?: "{v}"',
    lambda rng, env, v: f'let {env.lower()} = "{v}" // F#',
    lambda rng, env, v: f'Dim {env.lower()} As String = "{v}"',
    lambda rng, env, v: f'orders {{\n  {_kebab(env)} = "{v}"\n}}',
    lambda rng, env, v: f'{{:{_kebab(env)} "{v}" :port 8080}}',
    lambda rng, env, v: f'{{ {env.lower()} = "{v}", port = 8080 }}',
    lambda rng, env, v: f'orders {_kebab(env)}="{v}"',
    lambda rng, env, v: f"/deploy set {env} {v}",
    lambda rng, env, v: f"SMS from ops: {env} {v} (valid 24h)",
    lambda rng, env, v: f"[voice note] so the {env.lower().replace('_', ' ')} is {v} okay bye",
    lambda rng, env, v: f"{env} er {v}, ikke del den.",
    lambda rng, env, v: f"{env} és {v}, no la comparteixis.",
    lambda rng, env, v: f"{env} on {v}, ära jaga.",
    lambda rng, env, v: f"{env} je {v}, nezdieľať.",
    lambda rng, env, v: f"{env} হলো {v}, শেয়ার করবেন না।",
    lambda rng, env, v: f"{env} برابر است با {v}",
)

SEVENTH_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"/deploy token {v}",
    lambda rng, env, v: f"ny nøkkel: {v}",
    lambda rng, env, v: f"کلید جدید: {v}",
    lambda rng, env, v: f"— {v}",
    lambda rng, env, v: f"* `{v}` (prod)",
)

SEVENTH_FRAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"runbook step 4: connect with {v} and run the migration",
    lambda rng, env, v: f'datasource {{\n  url = "{v}"\n}}' if "\n" not in v else f"keyfile:\n{v}",
)

SEVENTH_DISGUISES = {
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
        return secret[:position] + rng.choice(("\u200b", "\u2060", "\u200c\u200d")) + secret[position:]
    if disguise == "bidi-control":
        return secret[:position] + rng.choice(("\u202b", "\u2069", "\u200e")) + secret[position:]
    if disguise == "soft-hyphen":
        return secret[:position] + "\u00ad" + secret[position:]
    if disguise == "split-line":
        return secret[:position] + rng.choice(("\n", "\n  ", "\\\n\t", "\r\n")) + secret[position:]
    if disguise == "fullwidth":
        return "".join(
            chr(ord(c) + 0xFEE0) if c in string.ascii_letters + string.digits and rng.random() < 0.3 else c
            for c in secret
        )
    if disguise == "placeholder-word":
        word = rng.choice(("EXAMPLE", "test", "xxxxxx", "sample", "DUMMY", "fake"))
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
                f"https://chat.acme.io/share?text={quote(text, safe='')}&lang=nb",
                f"location: /login?return_to={quote(text, safe='')}",
            )
        )
    if disguise == "base64-encoded":
        encoded = base64.b64encode(text.encode()).decode()
        return rng.choice(
            (
                f"stringData:\n  - key: NOTES\n    value: {encoded}",
                f"echo {encoded} | base64 -D",
                f"payload_b64 = '{encoded}'",
            )
        )
    return text


def _credential(rng: random.Random, kind: Kind, disguise: str) -> Sample:
    made = kind.make(rng)
    value = made.value.replace(made.secret, _in_token(rng, disguise, made.secret, kind.prefix), 1)
    if kind.framed and rng.random() < 0.5:
        text = rng.choice(SEVENTH_FRAMED_CONTEXTS)(rng, kind.env, value)
    elif kind.named or kind.framed:
        text = rng.choice(SEVENTH_NAMED_CONTEXTS)(rng, kind.env, value)
    else:
        text = rng.choice(SEVENTH_NAMED_CONTEXTS + SEVENTH_BARE_CONTEXTS)(rng, kind.env, value)
    text = _whole_text(rng, disguise, text)
    middle = made.secret[len(made.secret) // 2 - 4 : len(made.secret) // 2 + 4]
    return Sample(kind=kind.name, group=kind.group, text=text, disguise=disguise, secret=middle)


# --- look-alikes --------------------------------------------------------------------------------------------


def _config_formats(rng: random.Random) -> str:
    return rng.choice(
        (
            f"orders {{\n  pool-size = {rng.randrange(4, 40)}\n  timeout = 30s\n}}",
            f'{{:port {rng.randrange(3000, 9000)} :region "eu-west-1"}}',
            f'orders replicas={rng.randrange(1, 9)} region="eu-west-1"',
            "[Service]\nLoadCredential=db-password:/etc/credstore/db-password",
            '[program:api]\nenvironment=PORT="8080",LOG_LEVEL="info"',
            "web: bundle exec puma -C config/puma.rb",
        )
    )


def _job_ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f'==> Evaluation "{chars(rng, HEX, 8)}" finished with status "complete"',
            f"{chars(rng, LOWER_ALNUM, 25)}\napi.1   acme/api:4   node-2   Running",
            f"Allocation {uuid4(rng)} created on node {chars(rng, HEX, 8)}",
        )
    )


def _sms_codes(rng: random.Random) -> str:
    return rng.choice(
        (
            f"SMS from ops: your verification code is {digits(rng, 6)} (valid 10 minutes)",
            f"Your Acme login code: {digits(rng, 6)}. Don't share it.",
            f"/deploy status {chars(rng, LOWER_ALNUM, 7)}",
        )
    )


def _voice(rng: random.Random) -> str:
    return rng.choice(
        (
            "[voice note] so the api key is in the vault under orders slash prod okay bye",
            "[voice note] the password rotation is friday, ask mina for access",
            "[voice note] token expired again, I'll mint a new one after lunch",
        )
    )


def _chat(rng: random.Random) -> str:
    return rng.choice(
        (
            "Passordet ligger i hvelvet, ikke lim det inn i chatten.",
            "Adgangskoden ligger i boksen, ikke i wikien.",
            "La contrasenya és a la caixa forta, no a la wiki.",
            "Parool on seifis, ära kleebi seda vestlusesse.",
            "Heslo je v trezore, nevkladajte ho do chatu.",
            "পাসওয়ার্ডটি ভল্টে আছে, চ্যাটে পেস্ট করবেন না।",
            "رمز عبور در گاوصندوق است، آن را در چت نگذارید.",
        )
    )


def _release_hashes(rng: random.Random) -> str:
    return rng.choice(
        (
            f"| orders-{rng.randrange(1, 9)}.{rng.randrange(0, 20)}.0-linux-amd64.tar.gz | `{chars(rng, HEX, 64)}` |",
            f"SHA-256: {chars(rng, HEX, 64)}",
            f"* `{chars(rng, HEX, 40)}` (prod)",
        )
    )


def _code(rng: random.Random) -> str:
    return rng.choice(
        (
            'Deno.env.set("LOG_LEVEL", "debug");',
            'Bun.env.PORT ||= "8080";',
            'def apiKey = System.getenv("API_KEY") ?: ""',
            'Dim apiKeyHeader As String = "X-Api-Key"',
            "let token_ttl = 3600",
            'ENV["JULIA_NUM_THREADS"] = get(ENV, "JULIA_NUM_THREADS", "4")',
        )
    )


def _encoded(rng: random.Random) -> str:
    plain = rng.choice(("Takk for hjelpen!", "Moltes gràcies!", "Aitäh!", "ধন্যবাদ!", "متشکرم!"))
    return rng.choice(
        (
            f"https://chat.acme.io/share?text={quote(plain, safe='')}&lang=nb",
            f"echo {base64.b64encode(plain.encode()).decode()} | base64 -D",
        )
    )


def _ids(rng: random.Random) -> str:
    return rng.choice(
        (
            f'tenant_id = "{uuid4(rng)}"',
            f"order #{digits(rng, 8)} shipped, tracking 1Z{chars(rng, string.ascii_uppercase + string.digits, 16)}",
            f"session {chars(rng, ALNUM, 20)} expired",
            f'ETag: "{chars(rng, HEX, 32)}"',
        )
    )


SEVENTH_LOOK_ALIKES = {
    "config-formats": _config_formats,
    "job-ids": _job_ids,
    "sms-and-slash-commands": _sms_codes,
    "voice-notes": _voice,
    "chat-about-secrets": _chat,
    "release-hashes": _release_hashes,
    "code-naming-a-secret": _code,
    "encoded-ordinary-text": _encoded,
    "ids": _ids,
    "placeholders": lambda rng: rng.choice(
        (
            'docker service create --env API_KEY="${API_KEY}" acme/api:4',
            "SetCredential=db-password:CHANGE_ME",
            'Deno.env.set("API_KEY", "<your key>");',
            "/deploy set API_TOKEN <token>",
        )
    ),
    "masked": lambda rng: f"SetCredential=api-key:{'*' * rng.randrange(8, 30)}",
    "long-words": lambda rng: rng.choice(
        (
            "Sikkerhetsoppdateringsprosedyren gjelder for alle produksjonsmiljøer.",
            "Internacionalització i localització de la interfície d'administració.",
        )
    ),
    "urls": lambda rng: f"https://status.acme.io/incidents/{chars(rng, LOWER_ALNUM, 12)}?lang=nb",
}


def seventh_unseen_part() -> list[Sample]:
    rng = random.Random(SEVENTH_UNSEEN_SEED)
    names = list(SEVENTH_DISGUISES)
    weights = [SEVENTH_DISGUISES[name] for name in names]
    samples = [
        _credential(rng, kind, rng.choices(names, weights)[0])
        for kind in (*FOURTH_KINDS, *THIRD_KINDS, *MORE_KINDS, *KINDS)
        for _ in range(KIND_SAMPLES)
    ]
    samples += [
        Sample(kind=name, group="look-alike", text=make(rng))
        for name, make in SEVENTH_LOOK_ALIKES.items()
        for _ in range(LOOK_ALIKE_SAMPLES)
    ]
    return public_as_look_alikes(samples)
