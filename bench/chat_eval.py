"""What the chat-model evaluations (extract_eval.py, consolidate_eval.py) share: their command line and
the chat model they score, built from KENFOLD_CHAT_* exactly as the server builds it."""

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def parse_args(*, doc: str, data: Path, argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=data)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser.parse_args(argv)


def configured_chat() -> object | None:
    """The configured chat model (Django set up on the way), or None after saying what to set."""
    if not os.environ.get("KENFOLD_CHAT_URL"):
        print("set KENFOLD_CHAT_URL (and KENFOLD_CHAT_MODEL) to the chat model to score", file=sys.stderr)
        return None
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings

    from memories.providers.chat import chat_from_settings

    return chat_from_settings(chat=settings.CHAT)
