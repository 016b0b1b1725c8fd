"""The aside part of the corpus: other seed, other contexts, another disguise mix (bidi controls, which the
main part never uses, and more encodings), more look-alikes. Nobody tuned the rules against these texts;
their figures are reported apart (docs/security.md).
"""

import random
import string

from tests.common.secret_world.formats import HEX, chars, digits
from tests.common.secret_world.texts import Context, Sample, camel, credentials, look_alikes

ASIDE_SEED = 9_137_555

ASIDE_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f'{env.lower()} = "{v}"',
    lambda rng, env, v: f"apiVersion: v1\nkind: Secret\nstringData:\n  {env}: {v}\n",
    lambda rng, env, v: f"| {env} | `{v}` | prod |",
    lambda rng, env, v: f"        env:\n          {env}: {v}",
    lambda rng, env, v: f"set -x {env} {v}" if rng.random() < 0.5 else f'$env:{env} = "{v}"',
    lambda rng, env, v: f"settings.{camel(env)} = '{v}'",
    lambda rng, env, v: f"운영 배포의 {env}={v} 값은 다음 주에 교체한다.",
)

ASIDE_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"운영 토큰은 {v} 입니다.",
    lambda rng, env, v: f"2026-11-02T10:00:00Z INFO using credential {v} for upload",
    lambda rng, env, v: f"- [ ] rotate `{v}` (leaked in #ops)",
    lambda rng, env, v: f"git clone https://oauth2:{v}@gitlab.example.com/acme/orders.git",
)

ASIDE_DISGUISES = {
    "plain": 0.30,
    "zero-width": 0.07,
    "soft-hyphen": 0.07,
    "bidi-control": 0.08,
    "fullwidth": 0.08,
    "placeholder-word": 0.10,
    "split-line": 0.10,
    "url-encoded": 0.10,
    "base64-encoded": 0.10,
}


def hex_colours(rng: random.Random) -> str:
    return "; ".join(f"--c{i}: #{chars(rng, HEX, 6)}" for i in range(rng.randrange(2, 6)))


def dates_and_numbers(rng: random.Random) -> str:
    return (
        f"Invoice {digits(rng, 10)} due 2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}, "
        f"IBAN check digits {digits(rng, 2)}, order #{digits(rng, 7)}"
    )


def config_without_secrets(rng: random.Random) -> str:
    return (
        f"[server]\nport = {rng.randrange(1024, 65535)}\nworkers = {rng.randrange(1, 17)}\n"
        f"secret_name = prod/orders/{chars(rng, string.ascii_lowercase, 8)}\ntoken_url = https://auth.example.org/token\n"
    )


def aside_part() -> list[Sample]:
    rng = random.Random(ASIDE_SEED)
    return credentials(
        rng,
        samples_per_kind=4,
        named_contexts=ASIDE_NAMED_CONTEXTS,
        bare_contexts=ASIDE_BARE_CONTEXTS,
        disguises=ASIDE_DISGUISES,
    ) + look_alikes(
        rng,
        samples_per_kind=30,
        extra={
            "hex-colours": hex_colours,
            "dates-and-numbers": dates_and_numbers,
            "config-without-secrets": config_without_secrets,
        },
    )
