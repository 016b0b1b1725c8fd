"""The secret filter on real text that holds no credential: the documentation and metadata of every package
installed in the virtualenv and this repository's own docs and code (the secret corpora left out), split
into paragraphs. Every refusal there is a false positive or a documented example; the count per rule says
which rules pay for their reach with real text.

    .venv/bin/python -m bench.secret_real_text [--rules path/to/secrets.py] [--base path/to/secrets.py]
        [--list N]

--base counts only the paragraphs the rules refuse and the base rules do not (``git show
main:client/kenfold_common/secrets.py > /tmp/base.py``).
"""

import argparse
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.secret_corpus import load_rules  # noqa: E402

_SUFFIXES = (".md", ".rst", ".txt", "METADATA", ".json", ".toml", ".cfg", ".ini", ".html", ".yml", ".yaml")
_REPO_SUFFIXES = (".md", ".py", ".toml", ".yml", ".yaml", ".json", ".html", ".sh")
_CORPORA = ("tests/common/secret_world", "tests/common/secret_independent")
_MAX_FILE = 400_000
_MAX_PARAGRAPH = 20_000


def text_files() -> list[Path]:
    site = next((REPO / ".venv" / "lib").glob("python3*/site-packages"))
    files = [
        path
        for path in sorted(site.rglob("*"))
        if path.is_file() and path.name.endswith(_SUFFIXES) and path.stat().st_size < _MAX_FILE
    ]
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    files += [
        REPO / name
        for name in tracked.stdout.split()
        if name.endswith(_REPO_SUFFIXES) and not name.startswith(_CORPORA) and (REPO / name).is_file()
    ]
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules")
    parser.add_argument("--base")
    parser.add_argument("--list", type=int, default=20, help="how many refused paragraphs to show")
    args = parser.parse_args()
    rules = load_rules(args.rules)
    base = load_rules(args.base) if args.base else None
    files = text_files()
    paragraphs = 0
    refused: Counter[str] = Counter()
    shown = 0
    for index, path in enumerate(files):
        if index % 100 == 0:
            print(f"\r{index}/{len(files)} files", end="", file=sys.stderr, flush=True)
        text = path.read_text(errors="replace")
        for paragraph in text.split("\n\n"):
            if not 16 <= len(paragraph) <= _MAX_PARAGRAPH:
                continue
            paragraphs += 1
            findings = rules.find_secrets(paragraph)
            if not findings or (base is not None and base.find_secrets(paragraph)):
                continue
            refused[findings[0].rule] += 1
            if shown < args.list:
                shown += 1
                found = findings[0]
                where = os.path.relpath(path, REPO)
                excerpt = paragraph[max(0, found.start - 40) : found.end + 20]
                print(f"  {where[-70:]} [{found.rule}]: {excerpt[:160]!r}")
    print(file=sys.stderr)
    kind = "newly refused (not by --base)" if base is not None else "refused"
    print(f"{len(files)} files, {paragraphs} paragraphs; {kind}: {sum(refused.values())}")
    print("by rule: " + (", ".join(f"{rule} {count}" for rule, count in refused.most_common()) or "none"))


if __name__ == "__main__":
    main()
