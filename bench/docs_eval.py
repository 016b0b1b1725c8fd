"""Docs retrieval evaluation: sync a folder of Markdown pages as `kenfold docs sync` does (the client's
chunker, the server's docs_sync service), ask each question through recall's code path, and report R@5,
hit@5 and MRR@10 over doc sections, with and without field weights (issue 17).

    .venv/bin/python bench/docs_eval.py [bench/data/docs_eval] [--no-vectors] [--json OUT] [--show-misses]

The set (bench/data/docs_eval): pages/ holds 32 pages we wrote for a fictional marketplace (24 English,
8 Korean) with frontmatter; questions.json holds 52 questions (40 English, 12 Korean), each phrased unlike
the section it wants, naming it as "page#Heading" ("page#" for the text before the first heading). A
section merged into another by chunking counts as found in the chunk that holds its heading.

"without field weights" ranks a section's title, headings, tags, aliases, answers and description as
body text (memories.search.fulltext.UNWEIGHTED); "with" is the default (FIELD_WEIGHTS). Same database, same load.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "client"))

from bench.retrieval_eval import close_throwaway, metrics, summarize  # noqa: E402

PROJECT = "github.com/harbor/market"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", default=REPO / "bench" / "data" / "docs_eval")
    parser.add_argument("--no-vectors", action="store_true", help="full-text only (no embedder loaded)")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--show-misses", action="store_true", help="print questions whose top 5 misses")
    parser.add_argument(
        "--weights",
        help="try other ts_rank weights for D,C,B,A instead of FIELD_WEIGHTS, e.g. 0.1,0.2,0.4,1.0",
    )
    return parser.parse_args()


def load(pages_dir: Path) -> int:
    """Sync every page of `pages_dir` in one request, as the client would send it; returns the sections."""
    from access.caller import Caller
    from kenfold_client.docs import file_payload, read_pages
    from projectdocs.schemas import DocsSyncInput
    from projectdocs.services import docs_sync

    contents = {path.relative_to(pages_dir).as_posix(): path.read_bytes() for path in pages_dir.rglob("*.md")}
    pages = read_pages(contents)
    files = [file_payload(page, known=list(pages), docs_folder="") for page in pages.values()]
    output = docs_sync(caller=Caller(agent="eval"), sync=DocsSyncInput(project=PROJECT, files=files))
    if output.refused:
        raise SystemExit(f"pages refused: {output.refused}")
    return output.sections_stored


def matches(view, wanted: str) -> bool:
    path, _, heading = wanted.partition("#")
    if view.path != path:
        return False
    if not heading:
        # The preamble, alone or merged in front of the first section.
        return not view.heading_path or not view.content.startswith("#")
    return view.heading_path[:1] == [heading] or f"## {heading}\n" in view.content + "\n"


def evaluate(questions: list[dict], *, field_weights: bool, vectors: bool, show_misses: bool) -> dict:
    from access.caller import Caller
    from memories import selectors
    from memories.search.retrieval import SearchOptions

    options = SearchOptions(vectors=vectors, field_weights=field_weights)
    rows = {"en": [], "ko": []}
    for question in questions:
        result = selectors.memory_recall(
            caller=Caller(agent="eval"), query=question["query"], project=PROJECT, limit=10, options=options
        )
        ranked = []
        for view in result.memories:
            hit = next((wanted for wanted in question["relevant"] if matches(view, wanted)), None)
            ranked.append(hit or view.id)
        scores = metrics(ranked, question["relevant"])
        rows["ko" if question["id"].startswith("ko") else "en"].append(scores)
        if show_misses and scores["recall@5"] < 1:
            got = [f"{v.path}#{(v.heading_path or [''])[0]}" for v in result.memories[:5]]
            print(f"MISS {question['id']} {question['query']!r}\n  want {question['relevant']}\n  got  {got}")
    return {
        "overall": summarize(rows["en"] + rows["ko"]),
        "english": summarize(rows["en"]),
        "korean": summarize(rows["ko"]),
    }


def main() -> int:
    args = parse_args()
    home = None
    if not os.environ.get("KENFOLD_DATABASE_URL"):
        home = Path(tempfile.mkdtemp(prefix="kenfold-docs-eval-"))
        os.environ["KENFOLD_HOME"] = str(home)
        os.environ["KENFOLD_EMBEDDED_DURABLE"] = "false"
    if args.no_vectors:
        os.environ["KENFOLD_EMBED"] = "off"
    os.environ.setdefault("KENFOLD_LOG_LEVEL", "warning")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from memories.providers import configured
    from memories.search import fulltext

    if args.weights:
        fulltext.FIELD_WEIGHTS = [float(value) for value in args.weights.split(",")]

    try:
        call_command("migrate", interactive=False, verbosity=0)
        started = time.perf_counter()
        sections = load(args.data / "pages")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memory")
        questions = json.loads((args.data / "questions.json").read_text())
        pages = len(list((args.data / "pages").rglob("*.md")))
        print(
            f"synced {pages} pages as {sections} sections in {time.perf_counter() - started:.1f} s; "
            f"{len(questions)} questions; embedders: "
            f"{' + '.join(e.name for e in configured.embedders()) or 'none'}",
            file=sys.stderr,
        )
        report = {
            "weights": fulltext.FIELD_WEIGHTS,
            "pages": pages,
            "sections": sections,
            "questions": len(questions),
            "vectors": not args.no_vectors,
        }
        for name, weights in (("without field weights", False), ("with field weights", True)):
            report[name] = evaluate(
                questions, field_weights=weights, vectors=not args.no_vectors, show_misses=args.show_misses
            )
            for part, row in report[name].items():
                print(
                    f"{name:22} {part:8} n={row['queries']:<3} R@5 {row['recall@5']:.3f}  "
                    f"hit@5 {row['hit@5']:.3f}  MRR@10 {row['mrr@10']:.3f}"
                )
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        return 0
    finally:
        close_throwaway(home)


if __name__ == "__main__":
    sys.exit(main())
