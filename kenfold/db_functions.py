"""SQL functions used as column defaults and in generated columns, the advisory lock writers share, and
the server-bound statements of the hot paths."""

import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np
import psycopg
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from psycopg.adapt import AdaptersMap, Dumper
from psycopg.pq import Format


def sql_literal(text: str) -> str:
    """`text` as an SQL string literal (standard_conforming_strings, on since PostgreSQL 9.1: only the
    quote is special), for the few values a statement must show its planner."""
    return "'" + text.replace("'", "''") + "'"


class PgVector:
    """A vector parameter of `server_bound`, sent in pgvector's binary form: write it as `%(name)b::vector`.

    The text form cost more than the statement: 0.35-0.5 ms of Python per vector to format 384 or 512
    numbers, and the server parsing them back (a remember writes two vectors and looks up one or two).
    """

    __slots__ = ("values",)

    def __init__(self, values: Sequence[float]) -> None:
        self.values = values


class _PgVectorDumper(Dumper):
    # pgvector's vector_recv: dimensions and an unused word (uint16 each), then float4s, all big-endian.
    # The parameter's type is left to the server, which takes it from the statement's ::vector cast.
    format = Format.BINARY

    def dump(self, obj: PgVector) -> bytes:
        values = np.asarray(obj.values, dtype=">f4")
        return struct.pack(">HH", len(values), 0) + values.tobytes()


def register_vector_dumper(adapters: AdaptersMap) -> None:
    """Let `adapters` send PgVector parameters. Kenfold's database backend calls it on the adapter map
    every connection it opens copies, so no statement pays for it (registering on each cursor copied the
    cursor's map every time: 0.3 ms of a recall's 8 ms of Python at 100,000 memories, py-spy,
    2026-12-03)."""
    adapters.register_dumper(PgVector, _PgVectorDumper)


class _ServerCursor(psycopg.Cursor):
    """Runs every statement prepared or every one unprepared, as `server_bound` asks. (A connection
    without a prepare threshold, KENFOLD_DATABASE_PREPARED=false, prepares nothing whatever is asked.)"""

    def __init__(self, conn: psycopg.Connection, *, prepare: bool) -> None:
        super().__init__(conn)
        self._prepare = prepare

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ):
        return super().execute(query, params, prepare=self._prepare, binary=binary)


def server_bound(sql: str, params: Mapping[str, Any] | Sequence[Any], *, prepare: bool) -> list[tuple]:
    """Run one statement on the request's connection with its parameters bound by the server; its rows.

    Django's cursors put the parameters into the SQL text on the client (quoting every value, vectors as
    text twice for a vector search) and the server then parses, and plans, a new statement
    for every call. The searches and the vector writes every recall and remember runs go through here
    instead: values travel apart from the SQL, and with `prepare` the statement is parsed once per pooled
    connection and PostgreSQL may keep a generic plan. A statement whose plan must see its values (the
    full-text search is planned knowing which words are rare) passes prepare=False; nothing is prepared
    with KENFOLD_DATABASE_PREPARED=false (kenfold.settings: for a pooler that loses them). Django's cursor
    wrapper still runs it, so its errors, query logging and execute wrappers are Django's as for any
    query. A statement that writes returns its RETURNING rows.
    """
    connection.ensure_connection()
    raw = _ServerCursor(connection.connection, prepare=prepare)
    wrap = connection.make_debug_cursor if connection.queries_logged else connection.make_cursor
    with wrap(raw) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []


@cache
def _row_shape(
    model: type[models.Model], deferred: frozenset[str]
) -> tuple[str, list[str], list[tuple[int, Callable, models.Field]]]:
    """The select list of `model`'s columns but `deferred`, their attribute names, and the fields' own
    converters by position (what the ORM's compiler applies to each row, e.g. JSON decoding)."""
    fields = [field for field in model._meta.concrete_fields if field.attname not in deferred]
    columns = ", ".join(f'"{model._meta.db_table}"."{field.column}"' for field in fields)
    converters = [
        (index, converter, field)
        for index, field in enumerate(fields)
        for converter in field.get_db_converters(connection)
    ]
    return columns, [field.attname for field in fields], converters


def model_rows[M: models.Model](
    model: type[M], where: str, params: Mapping[str, Any] | Sequence[Any], *, defer: Sequence[str] = ()
) -> list[M]:
    """Instances of `model` for `SELECT <its columns> FROM <its table> <where>`, as a prepared statement.

    What a queryset gives (fields converted as the ORM converts them, `defer`red ones loaded on access),
    without building and compiling the SQL on every call: for the lookups every request makes (the key
    check, the memories and code references a search returns) that compilation cost three to five times
    the query's own client time (0.42 against 0.12 ms for the key lookup, 2026-12-02). `where` refers to
    the table by its name.
    """
    columns, names, converters = _row_shape(model, frozenset(defer))
    rows = server_bound(f'SELECT {columns} FROM "{model._meta.db_table}" {where}', params, prepare=True)
    instances = []
    for row in rows:
        values = list(row)
        for index, converter, field in converters:
            values[index] = converter(values[index], field, connection)
        instances.append(model.from_db(connection.alias, names, values))
    return instances


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


@contextmanager
def one_at_a_time(name: str) -> Iterator[bool]:
    """Whether this process may run the job `name` now: True while no other process, on any machine of
    the cluster, runs it; False at once when one does. The body runs either way and decides what to do.

    The lock is a transaction-scoped advisory lock held by an open transaction on a connection of its
    own, not a session lock on the request's connection: behind PgBouncer in transaction mode (the
    KENFOLD_DATABASE_PREPARED=false path) a session lock stays on whichever server connection took it,
    so its unlock may reach another one and leave it held for good, while a later job landing on the
    first connection would take it again (session locks are re-entrant) and run twice. A transaction
    keeps its server connection to the end, and a process killed mid-job drops its connection, which
    ends the transaction and frees the lock with no lease to expire. The transaction writes nothing and
    holds no snapshot between statements, so it keeps no rows from being vacuumed.
    """
    # The request's connection first: with the embedded server, taking it starts the server if need be.
    connections[DEFAULT_DB_ALIAS].ensure_connection()
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    with psycopg.connect(**params, autocommit=False) as holder:
        row = holder.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [name]).fetchone()
        try:
            yield bool(row and row[0])
        finally:
            holder.rollback()


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
