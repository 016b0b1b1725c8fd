"""What the rankers hand on: a found memory (Hit) with what the steps after the fusion read of it, a
similar memory with its score (Ranked), and the reads of the memories a search returns."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from kenfold.db_functions import model_rows, server_bound
from memories.models import NOT_IN_VIEWS, Memory


@dataclass(frozen=True)
class Ranked:
    """A memory found by similarity to another (remember's similar[]), with that similarity."""

    memory_id: UUID
    score: float


@dataclass(frozen=True)
class Hit:
    """A memory a ranker found, with what the steps after the fusion read of it: its text (cut as the
    search was asked) for the cross-language steps, and what its score's multipliers read. The rankers
    read these from the rows they already touch, so a search queries its candidates again only for the
    memories it returns."""

    memory_id: UUID
    text: str
    type: str
    created_at: datetime
    code_state: str | None


# A search's `text_chars`: the whole text, else its first N characters.
WHOLE_TEXT = None


def text_sql(alias: str, chars: int | None) -> str:
    """The SQL of memory `alias`'s text, cut at `chars` characters (WHOLE_TEXT: all of it)."""
    if chars is None:
        return f"{alias}.content"
    # 0: no text (an empty one, without reading a long text's out-of-line parts).
    return f"left({alias}.content, {int(chars)})" if chars > 0 else "''::text"


def candidate_texts(ids: Sequence[UUID], *, chars: int | None) -> list[tuple[UUID, str, str]]:
    """(id, text, type) of each memory; the text cut at `chars` characters unless None."""
    return server_bound(
        f"SELECT m.id, {text_sql('m', chars)}, m.type FROM memory m WHERE m.id = ANY(%s::uuid[])",
        [list(ids)],
        prepare=True,
    )


def memories_by_id(ids: Sequence[UUID]) -> dict[UUID, Memory]:
    """The memories with these ids, in any status, without the columns no view shows (a prepared
    statement: every recall and remember reads the memories it returns this way)."""
    rows = model_rows(Memory, "WHERE id = ANY(%s::uuid[])", [list(ids)], defer=NOT_IN_VIEWS)
    return {memory.id: memory for memory in rows}
