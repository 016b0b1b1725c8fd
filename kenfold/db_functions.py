"""SQL functions used as column defaults and in generated columns, and the advisory lock writers share."""

from django.db import connection, models


def xact_lock(*parts: str, content: str | None = None) -> None:
    """A transaction-scoped advisory lock on a text key (released at commit or rollback).

    With `content`, the key ends with its content key (kenfold_content_key, as the column), so that two
    texts that deduplicate to each other take the same lock.
    """
    key = "array_to_string(%s::text[], chr(10))"
    params: list[object] = [list(parts)]
    if content is not None:
        key += " || chr(10) || kenfold_content_key(%s)"
        params.append(content)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_advisory_xact_lock(hashtextextended({key}, 0))", params)


class UUIDv7(models.Func):
    """PostgreSQL 18's uuidv7(): time-ordered ids, so id order is creation order and btree inserts stay local."""

    template = "uuidv7()"
    output_field = models.UUIDField()


class ContentKey(models.Func):
    """kenfold_content_key(content): the normalized form used for deduplication.

    Defined once in SQL (migration memories.0001) and used by the generated column and by every lookup,
    so Python never has to mirror it: trimmed, whitespace runs collapsed to one space, a trailing run of
    `.`, `!` or `。` removed, lowercased.
    """

    function = "kenfold_content_key"
    output_field = models.TextField()


class SimpleTsVector(models.Func):
    """to_tsvector in the `simple` configuration: no stemming, predictable for mixed Korean and English."""

    template = "to_tsvector('simple'::regconfig, %(expressions)s)"
    output_field = models.TextField()


class EnglishTsVector(models.Func):
    """to_tsvector('english') over the text with identifiers split (`refreshSession` → `refresh Session`,
    `snake_case`, `src/lib/auth.ts` → words): stemmed English words for the second lexical ranker."""

    template = (
        "to_tsvector('english'::regconfig, regexp_replace(regexp_replace(%(expressions)s, "
        "'([a-z])([A-Z])', '\\1 \\2', 'g'), '[_./]', ' ', 'g'))"
    )
    output_field = models.TextField()


class SearchTsVector(models.Func):
    """The `simple` search vector of a memory: its text, plus (for a doc chunk) the page's title and
    headings weighted A, tags, aliases and answers weighted B, and its description weighted C
    (kenfold_search_tsv, migration memories.0011). Body text keeps the default weight D, so every other
    memory ranks as before."""

    template = "kenfold_search_tsv(%(expressions)s)"
    output_field = models.TextField()


class EnglishSearchTsVector(models.Func):
    """The stemmed English search vector, weighted as SearchTsVector (kenfold_search_tsv_en)."""

    template = "kenfold_search_tsv_en(%(expressions)s)"
    output_field = models.TextField()
