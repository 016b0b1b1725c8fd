"""Docs as memory: the `relates_to` links between a project's doc pages (projectdocs stores them as edges
between the pages' sections), read for recall's `related` of a doc section."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from memories.models import served_sql
from memories.presenters import DOC_RELATION_PREFIX
from memories.schemas import RelatedDoc


@dataclass(frozen=True)
class DocLink:
    """A `relates_to` edge between two served doc pages of one scope (chunk edges folded to pages)."""

    source: str
    relation: str
    target: str
    source_title: str | None
    target_title: str | None


def doc_links(*, scope: str, paths: Sequence[str], now: datetime) -> list[DocLink]:
    """The `relates_to` links from or to the pages `paths` of `scope`, between served chunks only (a
    retired page links nowhere)."""
    if not paths:
        return []
    sql = f"""
        SELECT DISTINCT s.attrs->>'path', substr(e.relation, %(cut)s), d.attrs->>'path',
               s.attrs->>'title', d.attrs->>'title'
        FROM memory_edge e
             JOIN memory s ON s.id = e.src_id
             JOIN memory d ON d.id = e.dst_id
        WHERE e.relation LIKE %(prefix)s
          AND s.scope = %(scope)s AND d.scope = %(scope)s
          AND {served_sql("s")} AND {served_sql("d")}
          AND (s.attrs->>'path' = ANY(%(paths)s) OR d.attrs->>'path' = ANY(%(paths)s))
        ORDER BY 1, 2, 3
    """
    params = {
        "cut": len(DOC_RELATION_PREFIX) + 1,
        "prefix": DOC_RELATION_PREFIX + "%",
        "scope": scope,
        "paths": list(paths),
        "now": now,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [DocLink(*row) for row in cursor.fetchall()]


def related_docs(*, scope: str, path: str, depth: int, now: datetime) -> list[RelatedDoc]:
    """Pages linked to page `path` of `scope` through `relates_to`, up to `depth` hops, in either
    direction; each page is reported once, at its smallest depth."""
    seen = {path}
    frontier = {path}
    found: list[RelatedDoc] = []
    for hop in range(1, depth + 1):
        reached: set[str] = set()
        for link in doc_links(scope=scope, paths=sorted(frontier), now=now):
            for near, far, title, direction in (
                (link.source, link.target, link.target_title, "outgoing"),
                (link.target, link.source, link.source_title, "incoming"),
            ):
                if near in frontier and far not in seen:
                    found.append(
                        RelatedDoc(
                            path=far, title=title, relation=link.relation, direction=direction, depth=hop
                        )
                    )
                    reached.add(far)
        if not reached:
            break
        seen |= reached
        frontier = reached
    return found
