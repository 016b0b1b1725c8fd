"""The held-out part: written after the last rule change and measured once, in contexts taken from
places the other parts do not cover (code in several languages, CI and deploy tools, netrc, chat and
mail), with its own seed and disguise mix. Its figures are the ones to quote for credentials the rules were
never tuned on; docs/security.md gives them as first measured.
"""

import random

from tests.common.secret_world.texts import Context, Sample, credentials, look_alikes

HELD_OUT_SEED = 20_261_206

HELD_OUT_NAMED_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f'os.Setenv("{env}", "{v}")',
    lambda rng, env, v: f'ENV["{env}"] = "{v}"',
    lambda rng, env, v: f'const {env}: &str = "{v}";',
    lambda rng, env, v: f"      - uses: acme/deploy@v3\n        with:\n          {env.lower()}: {v}",
    lambda rng, env, v: f"{env.lower()}: !unsafe '{v}'  # ansible vars",
    lambda rng, env, v: f"ARG {env}={v}",
    lambda rng, env, v: f"Subject: new credentials\n\nHi, the new {env} is {v} — rotate the old one today.",
    lambda rng, env, v: f"@channel new {env} = {v}",
    lambda rng, env, v: f"gh secret set {env} --body {v}",
)

HELD_OUT_BARE_CONTEXTS: tuple[Context, ...] = (
    lambda rng, env, v: f"machine api.example.com login deploy password {v}",
    lambda rng, env, v: f"curl -u deploy:{v} https://api.example.com/v1/releases",
    lambda rng, env, v: f'git config http.extraheader "AUTHORIZATION: bearer {v}"',
    lambda rng, env, v: f"npm config set //registry.npmjs.org/:_authToken {v}",
    lambda rng, env, v: f"{v}",
)

HELD_OUT_DISGUISES = {
    "plain": 0.36,
    "zero-width": 0.07,
    "soft-hyphen": 0.07,
    "bidi-control": 0.07,
    "fullwidth": 0.07,
    "placeholder-word": 0.09,
    "split-line": 0.09,
    "url-encoded": 0.09,
    "base64-encoded": 0.09,
}


def held_out_part() -> list[Sample]:
    rng = random.Random(HELD_OUT_SEED)
    return credentials(
        rng,
        samples_per_kind=4,
        named_contexts=HELD_OUT_NAMED_CONTEXTS,
        bare_contexts=HELD_OUT_BARE_CONTEXTS,
        disguises=HELD_OUT_DISGUISES,
    ) + look_alikes(rng, samples_per_kind=35)
