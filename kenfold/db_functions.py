"""SQL functions used as column defaults and in generated columns."""

from django.db import models


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
