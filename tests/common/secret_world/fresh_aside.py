"""A second aside part, written after the first aside part had been measured once (95.3 %: its markdown
tables and PowerShell assignments were forms the rules did not know) and before the rules were changed
for what that measurement showed. The first aside part stopped being unseen then; this one was not looked
at while the rules changed. Own seed, own contexts, own disguise mix.
"""

import random

from tests.common.secret_world.texts import Context, Sample, credentials, look_alikes

FRESH_ASIDE_SEED = 5_550_137

FRESH_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"[default]\n{env.lower()} = {v}\n",
    lambda rng, env, v: f"helm upgrade orders ./chart --set secrets.{env}={v}",
    lambda rng, env, v: f'Environment="{env}={v}"',
    lambda rng, env, v: f"{env.lower().replace('_', '.')}={v}",
    lambda rng, env, v: f'<add key="{env}" value="{v}" />',
    lambda rng, env, v: f'Client(\n    {env.lower()}="{v}",\n    timeout=30,\n)',
    lambda rng, env, v: f"X-{env.title().replace('_', '-')}: {v}",
    lambda rng, env, v: f"이번 주 배포에서 {env.lower()}: {v} 로 바꿨다",
)

FRESH_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"here's the key for staging: `{v}` (don't share)",
    lambda rng, env, v: f'["--verbose", "{v}", "--region=eu"]',
    lambda rng, env, v: f"トークンは {v} です。",
    lambda rng, env, v: f"> {v}\n> — pasted from the incident channel",
)

FRESH_DISGUISES = {
    "plain": 0.34,
    "zero-width": 0.08,
    "soft-hyphen": 0.06,
    "bidi-control": 0.08,
    "fullwidth": 0.08,
    "placeholder-word": 0.09,
    "split-line": 0.09,
    "url-encoded": 0.09,
    "base64-encoded": 0.09,
}


def fresh_aside_part() -> list[Sample]:
    rng = random.Random(FRESH_ASIDE_SEED)
    return credentials(
        rng,
        samples_per_kind=4,
        named_contexts=FRESH_NAMED_CONTEXTS,
        bare_contexts=FRESH_BARE_CONTEXTS,
        disguises=FRESH_DISGUISES,
    ) + look_alikes(rng, samples_per_kind=35)
