"""A corpus for the secret filter built from the providers' documented credential formats (formats.py and
the batches after it: more_formats.py, third_formats.py, fourth_unseen.py), in the texts people write
around them, disguised, next to look-alikes (texts.py).

Eleven parts, generated at test time from fixed seeds: the main part (below), against which the rules
were changed, and ten parts each written and committed before the filter first ran on it (aside.py,
fresh_aside.py, held_out.py, unseen.py, second_unseen.py, third_unseen.py, fourth_unseen.py,
fifth_unseen.py, sixth_unseen.py, seventh_unseen.py). Their first figures, the ones that say how the rules do on texts they were not tuned on,
are in docs/security.md; after that first measurement each was taught to the rules.
"""

import random

from tests.common.secret_world.texts import (
    MAIN_BARE_CONTEXTS,
    MAIN_NAMED_CONTEXTS,
    Sample,
    credentials,
    look_alikes,
)

MAIN_SEED = 37_001
MAIN_DISGUISES = {
    "plain": 0.40,
    "zero-width": 0.08,
    "soft-hyphen": 0.07,
    "fullwidth": 0.08,
    "placeholder-word": 0.09,
    "split-line": 0.09,
    "url-encoded": 0.09,
    "base64-encoded": 0.10,
}


def main_part() -> list[Sample]:
    rng = random.Random(MAIN_SEED)
    return credentials(
        rng,
        samples_per_kind=10,
        named_contexts=MAIN_NAMED_CONTEXTS,
        bare_contexts=MAIN_BARE_CONTEXTS,
        disguises=MAIN_DISGUISES,
    ) + look_alikes(rng, samples_per_kind=40)
