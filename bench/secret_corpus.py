"""The secret filter on the world's credential formats (tests/common/secret_world): per part, the share of
credentials refused and of look-alikes refused, the kinds and disguises it misses, which layer of the filter
caught what, and the time per 1 KB of memory text.

    .venv/bin/python -m bench.secret_corpus [--part main|aside|fresh-aside|held-out|unseen|second-unseen|third-unseen|fourth-unseen|fifth-unseen|sixth-unseen|seventh-unseen|independent-dev|independent-aside|independent-third|independent-fourth|independent-fifth|independent-sixth|independent-seventh|independent-eighth|independent-ninth|independent-tenth|independent-eleventh|independent-twelfth|independent-thirteenth|independent-fourteenth|independent-fifteenth|independent-sixteenth|all] [--rules path/to/secrets.py]
        [--detect-secrets DIR] [--list-misses]

--rules measures another version of the filter (``git show main:client/kenfold_common/secrets.py``);
--detect-secrets adds PyPI detect-secrets (installed with ``pip install --target DIR detect-secrets``) as a
second layer and reports what it would add and what it would wrongly refuse (--without-entropy: without its
two high-entropy-string plugins).
"""

import argparse
import importlib.util
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client"))

from tests.common.secret_independent.part_aside import aside_part as independent_aside_part  # noqa: E402
from tests.common.secret_independent.part_dev import dev_part  # noqa: E402
from tests.common.secret_independent.part_eighth import eighth_part  # noqa: E402
from tests.common.secret_independent.part_eleventh import eleventh_part  # noqa: E402
from tests.common.secret_independent.part_fifteenth import fifteenth_part  # noqa: E402
from tests.common.secret_independent.part_fifth import fifth_part  # noqa: E402
from tests.common.secret_independent.part_fourteenth import fourteenth_part  # noqa: E402
from tests.common.secret_independent.part_fourth import fourth_part  # noqa: E402
from tests.common.secret_independent.part_ninth import ninth_part  # noqa: E402
from tests.common.secret_independent.part_seventh import seventh_part  # noqa: E402
from tests.common.secret_independent.part_sixteenth import sixteenth_part  # noqa: E402
from tests.common.secret_independent.part_sixth import sixth_part  # noqa: E402
from tests.common.secret_independent.part_tenth import tenth_part  # noqa: E402
from tests.common.secret_independent.part_third import third_part  # noqa: E402
from tests.common.secret_independent.part_thirteenth import thirteenth_part  # noqa: E402
from tests.common.secret_independent.part_twelfth import twelfth_part  # noqa: E402
from tests.common.secret_world import main_part  # noqa: E402
from tests.common.secret_world.aside import aside_part  # noqa: E402
from tests.common.secret_world.fifth_unseen import fifth_unseen_part  # noqa: E402
from tests.common.secret_world.fourth_unseen import fourth_unseen_part, is_fourth_kind  # noqa: E402
from tests.common.secret_world.fresh_aside import fresh_aside_part  # noqa: E402
from tests.common.secret_world.held_out import held_out_part  # noqa: E402
from tests.common.secret_world.second_unseen import is_new_kind, second_unseen_part  # noqa: E402
from tests.common.secret_world.seventh_unseen import seventh_unseen_part  # noqa: E402
from tests.common.secret_world.sixth_unseen import sixth_unseen_part  # noqa: E402
from tests.common.secret_world.texts import Sample  # noqa: E402
from tests.common.secret_world.third_unseen import is_third_kind, third_unseen_part  # noqa: E402
from tests.common.secret_world.unseen import unseen_part  # noqa: E402


def load_rules(path: str | None) -> ModuleType:
    if path is None:
        from kenfold_common import secrets

        return secrets
    spec = importlib.util.spec_from_file_location("secrets_under_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def detect_secrets_scanner(directory: str, *, entropy: bool) -> Callable[[str], bool]:
    """detect-secrets 1.5 on each line with its default filters: all its plugins, or all but the two
    high-entropy-string detectors (which refuse most hashes and ids)."""
    sys.path.insert(0, directory)
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, transient_settings

    plugins = [
        {"name": plugin.__name__}
        for plugin in get_mapping_from_secret_type_to_class().values()
        if entropy or "HighEntropy" not in plugin.__name__
    ]

    def found(text: str) -> bool:
        with default_settings(), transient_settings({"plugins_used": plugins}):
            return any(True for line in text.splitlines() for _ in scan_line(line))

    return found


def measure(
    name: str,
    samples: list[Sample],
    rules: ModuleType,
    second: Callable[[str], bool] | None,
    list_misses: bool,
) -> None:
    credentials = [s for s in samples if s.is_credential]
    look_alikes = [s for s in samples if not s.is_credential]
    missed: Counter[str] = Counter()
    missed_disguise: Counter[str] = Counter()
    layers: Counter[str] = Counter()
    leaks = 0
    second_adds = 0
    second_false = 0
    second_alone_caught = 0
    for sample in credentials:
        findings = rules.find_secrets(sample.text)
        if findings:
            layers[getattr(findings[0], "layer", "as written")] += 1
            if sample.secret in rules.redact_secrets(sample.text):
                leaks += 1
        else:
            missed[sample.kind] += 1
            missed_disguise[sample.disguise] += 1
            if list_misses:
                print(f"  MISS {sample.kind} [{sample.disguise}]: {sample.text[:150]!r}")
        if second is not None:
            hit = second(sample.text)
            second_alone_caught += hit
            second_adds += hit and not findings
    refused = [s for s in look_alikes if rules.find_secrets(s.text)]
    if second is not None:
        second_false = sum(1 for s in look_alikes if second(s.text) and not rules.find_secrets(s.text))
    caught = len(credentials) - sum(missed.values())
    print(
        f"== {name}: {len(credentials)} credentials of {len({s.kind for s in credentials})} kinds, {len(look_alikes)} look-alikes"
    )
    print(f"credentials refused: {caught}/{len(credentials)} = {caught / len(credentials):.2%}")
    own_kinds = {"second-unseen": is_new_kind, "third-unseen": is_third_kind, "fourth-unseen": is_fourth_kind}
    if name in own_kinds:
        new = [s for s in credentials if own_kinds[name](s)]
        new_caught = len(new) - sum(missed[kind] for kind in {s.kind for s in new})
        print(
            f"  of kinds no other part has: {new_caught}/{len(new)} = {new_caught / len(new):.2%}; "
            f"of the older kinds: {caught - new_caught}/{len(credentials) - len(new)}"
        )
    print(f"look-alikes refused: {len(refused)}/{len(look_alikes)} = {len(refused) / len(look_alikes):.2%}")
    print(f"refused but not fully redacted: {leaks}")
    print("caught by layer: " + ", ".join(f"{layer} {count}" for layer, count in layers.most_common()))
    by_disguise = Counter(s.disguise for s in credentials)
    print(
        "missed by disguise: "
        + ", ".join(f"{d} {missed_disguise[d]}/{n}" for d, n in sorted(by_disguise.items()))
    )
    print("missed kinds: " + (", ".join(f"{k} {n}" for k, n in missed.most_common()) or "none"))
    for sample in refused:
        print(f"  FALSE POSITIVE {sample.kind}: {sample.text[:150]!r}")
    if second is not None:
        print(
            f"detect-secrets alone refuses {second_alone_caught}/{len(credentials)} credentials; as a second layer it "
            f"adds {second_adds} and wrongly refuses {second_false} more look-alikes"
        )


def time_per_kilobyte(rules: ModuleType) -> None:
    texts = {
        "prose with a credential": (
            "Deploy notes: the orders service reads its settings from the environment. " * 6
            + "GITHUB_TOKEN=ghp_"
            + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF2h4J"
            + " and the rest of the paragraph goes on about queues and retries. " * 5
        )[:1024],
        "plain English": ("The consolidation job merges duplicate memories every night at two. " * 20)[:1024],
        "Korean": ("배포 전에 마이그레이션을 먼저 실행하고, 실패하면 롤백 스크립트를 돌린다. " * 40)[:1024],
        "code and hashes": (
            "def handler(event):\n    sha = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3'\n    return sha[:7]\n"
            * 12
        )[:1024],
        "config lines": (
            "ORDERS_DB_HOST=db.internal\nORDERS_QUEUE=orders-v2\nRETRY_BACKOFF_MS=2500\nFEATURE_FLAGS=a1,b2,c3\n"
            "deploy:\n  image: registry.example.org/orders:1.4.2\n  replicas: 3\n  region: eu-west-1\n" * 6
        )[:1024],
        "URLs with escapes": (
            "https://example.com/search?q=rollback%20plan&ref=docs%2Fdeploy.md&utm_source=wiki%20page " * 12
        )[:1024],
    }
    for label, text in texts.items():
        rounds = 500
        start = time.process_time()
        for _ in range(rounds):
            rules.find_secrets(text)
        elapsed = (time.process_time() - start) / rounds
        print(f"time per 1 KB ({label}): {elapsed * 1e6:.0f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        choices=(
            "main",
            "aside",
            "fresh-aside",
            "held-out",
            "unseen",
            "second-unseen",
            "third-unseen",
            "fourth-unseen",
            "fifth-unseen",
            "sixth-unseen",
            "seventh-unseen",
            "independent-dev",
            "independent-aside",
            "independent-third",
            "independent-fourth",
            "independent-fifth",
            "independent-sixth",
            "independent-seventh",
            "independent-eighth",
            "independent-ninth",
            "independent-tenth",
            "independent-eleventh",
            "independent-twelfth",
            "independent-thirteenth",
            "independent-fourteenth",
            "independent-fifteenth",
            "independent-sixteenth",
            "all",
        ),
        default="all",
    )
    parser.add_argument("--rules")
    parser.add_argument("--detect-secrets", dest="detect_secrets")
    parser.add_argument(
        "--without-entropy", action="store_true", help="detect-secrets without its entropy plugins"
    )
    parser.add_argument("--list-misses", action="store_true")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    rules = load_rules(args.rules)
    second = (
        detect_secrets_scanner(args.detect_secrets, entropy=not args.without_entropy)
        if args.detect_secrets
        else None
    )
    parts: dict[str, Callable[[], list[Sample]]] = {
        "main": main_part,
        "aside": aside_part,
        "fresh-aside": fresh_aside_part,
        "held-out": held_out_part,
        "unseen": unseen_part,
        "second-unseen": second_unseen_part,
        "third-unseen": third_unseen_part,
        "fourth-unseen": fourth_unseen_part,
        "fifth-unseen": fifth_unseen_part,
        "sixth-unseen": sixth_unseen_part,
        "seventh-unseen": seventh_unseen_part,
        "independent-dev": dev_part,
        "independent-aside": independent_aside_part,
        "independent-third": third_part,
        "independent-fourth": fourth_part,
        "independent-fifth": fifth_part,
        "independent-sixth": sixth_part,
        "independent-seventh": seventh_part,
        "independent-eighth": eighth_part,
        "independent-ninth": ninth_part,
        "independent-tenth": tenth_part,
        "independent-eleventh": eleventh_part,
        "independent-twelfth": twelfth_part,
        "independent-thirteenth": thirteenth_part,
        "independent-fourteenth": fourteenth_part,
        "independent-fifteenth": fifteenth_part,
        "independent-sixteenth": sixteenth_part,
    }
    for name, build in parts.items():
        if args.part in (name, "all"):
            measure(name, build(), rules, second, args.list_misses)
    if not args.no_timing:
        time_per_kilobyte(rules)


if __name__ == "__main__":
    main()
