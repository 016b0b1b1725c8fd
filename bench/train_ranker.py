"""Train the learned first-stage order (memories.search.learned_rank) and write memories/search/ranker_weights.py.

    .venv/bin/python bench/train_ranker.py ../shared/data/locomo/locomo10.json --conversations 5 \\
        --locomo-context --extra bench/data/train_ranker.json [--out memories/search/ranker_weights.py]

Training data must be none of the evaluation sets: the first 5 LoCoMo conversations, so LoCoMo is then
evaluated on conversations 6-10 only (bench/retrieval_eval.py --from-conversation 5), and
bench/data/train_ranker.json, a small corpus of our own (four projects unlike dev.json's, memories and
questions in Korean and English both ways), the only place a question meets a memory in the other
language; bench/data/dev.json is refused. Each question runs through search exactly as `recall` runs
it, with the learned order off; the features of its best 50 candidates (SearchOptions.trace) become rows,
labelled 1 for the question's evidence turns. A logistic regression (L2, standardized features, plain
numpy gradient descent; no new dependency) is fitted to them.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval_eval

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="LoCoMo's locomo10.json")
    parser.add_argument("--conversations", type=int, default=5, help="train on the first N conversations")
    parser.add_argument("--locomo-context", action="store_true")
    parser.add_argument(
        "--extra", type=Path, action="append", default=[], help="a training set in Kenfold's format"
    )
    parser.add_argument(
        "--extra-weight", type=float, default=4.0, help="weight of each --extra question against a LoCoMo one"
    )
    parser.add_argument("--l2", type=float, default=1e-3, help="L2 penalty on the weights")
    parser.add_argument("--out", type=Path, default=REPO / "memories" / "search" / "ranker_weights.py")
    args = parser.parse_args()
    return retrieval_eval.on_throwaway_database(
        argparse.Namespace(no_vectors=False, rerank_url=None), lambda: run(args)
    )


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from datetime import UTC, datetime

    from django.conf import settings
    from django.db import connection
    from django.test import override_settings

    from access.caller import Caller
    from memories import selectors
    from memories.providers import configured
    from memories.search.embedding_store import backfill
    from memories.search.learned_rank import FEATURES
    from memories.search.retrieval import SearchOptions

    raw = json.loads(args.data.read_text())
    if not isinstance(raw, list):
        raise SystemExit("train on LoCoMo's locomo10.json (never on bench/data/dev.json, an evaluation set)")
    now = datetime.now(UTC)
    with override_settings(EMBEDDING=replace(settings.EMBEDDING, mode="off")):
        ids, queries = retrieval_eval.load_locomo(
            raw[: args.conversations], now=now, context_turns=args.locomo_context
        )
        for extra in args.extra:
            if extra.resolve() == (REPO / "bench" / "data" / "dev.json").resolve():
                raise SystemExit("bench/data/dev.json is an evaluation set; never train on it")
            extra_ids, extra_queries = retrieval_eval.load_kenfold_format(
                json.loads(extra.read_text()), now=now
            )
            ids.update(extra_ids)
            queries += [{**query, "weight": args.extra_weight} for query in extra_queries]
    for embedder in configured.embedders():
        backfill(embedder=embedder)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")
    by_id = {memory_id: key for key, memory_id in ids.items()}
    rows: list[list[float]] = []
    labels: list[float] = []
    question_weights: list[float] = []
    caller = Caller(agent="train")
    for query in queries:
        trace: list = []
        selectors.memory_recall(
            caller=caller,
            query=query["query"],
            project=query.get("project"),
            limit=10,
            options=SearchOptions(now=now, learned_rank=False, trace=trace),
        )
        relevant = set(query["relevant"])
        for vectors in trace:
            for memory_id, vector in vectors.items():
                rows.append(vector)
                labels.append(1.0 if by_id.get(str(memory_id)) in relevant else 0.0)
                question_weights.append(query.get("weight", 1.0))
    x = np.asarray(rows, dtype=np.float64)
    y = np.asarray(labels)
    sample_weights = np.asarray(question_weights)
    print(f"{len(queries)} questions, {len(y)} candidates, {int(y.sum())} relevant", file=sys.stderr)
    means = x.mean(axis=0)
    scales = x.std(axis=0)
    scales[scales < 1e-9] = 1.0
    z = (x - means) / scales
    weights, bias = fit(z, y, sample_weights / sample_weights.mean(), l2=args.l2)
    for name, weight in zip(FEATURES, weights, strict=True):
        print(f"  {name:16} {weight:+.3f}", file=sys.stderr)
    print(f"  {'bias':16} {bias:+.3f}", file=sys.stderr)
    write(args.out, FEATURES, means, scales, weights, bias, args)
    return 0


def fit(
    z: np.ndarray, y: np.ndarray, w: np.ndarray, *, l2: float, steps: int = 3000, rate: float = 0.5
) -> tuple:
    """Weighted logistic regression by full-batch gradient descent (convex: no luck involved)."""
    weights = np.zeros(z.shape[1])
    bias = float(np.log(max(y.mean(), 1e-6) / max(1 - y.mean(), 1e-6)))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(z @ weights + bias)))
        error = (p - y) * w
        weights -= rate * (z.T @ error / len(y) + l2 * weights)
        bias -= rate * float(error.mean())
    return weights, bias


def write(path: Path, features, means, scales, weights, bias, args: argparse.Namespace) -> None:
    def numbers(values) -> str:
        return "(" + ", ".join(f"{float(v):.6g}" for v in values) + ",)"

    names = "".join(f'    "{name}",\n' for name in features)
    path.write_text(
        '"""Weights of the learned first-stage order (memories.search.learned_rank), written by bench/train_ranker.py:\n\n'
        f"    bench/train_ranker.py {args.data.name} --conversations {args.conversations}"
        f"{' --locomo-context' if args.locomo_context else ''}"
        + "".join(f" --extra {path}" for path in args.extra)
        + f" --extra-weight {args.extra_weight} --l2 {args.l2}\n\n"
        f"Trained on LoCoMo conversations 1-{args.conversations} (evaluate on the others)"
        + (" and " + ", ".join(str(path) for path in args.extra) if args.extra else "")
        + ".\n"
        '"""\n\n'
        f"FEATURES = (\n{names})\n"
        f"MEANS = {numbers(means)}\n"
        f"SCALES = {numbers(scales)}\n"
        f"WEIGHTS = {numbers(weights)}\n"
        f"BIAS = {float(bias):.6g}\n"
    )


if __name__ == "__main__":
    sys.exit(main())
