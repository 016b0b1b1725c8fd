"""Doc chunks' fields weigh more than their body text in the full-text ranking (issue 17).

Both search vectors become the memory's text (weight D, as before) followed by, for a doc chunk
(attrs.kind = "doc"), its page's title and heading path (A), tags, aliases and answers (B) and
description (C); the lexical ranking weighs the parts with memories.search.fulltext.FIELD_WEIGHTS. Other
memories have no such fields: their vectors, and their ranking, are unchanged. A generated column's expression cannot be altered, so both columns and their indexes are
dropped and added again (the table is rewritten once: about a second per 10,000 memories).
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.db import migrations, models

import kenfold.db_functions

FIELDS_FUNCTION = r"""
CREATE OR REPLACE FUNCTION kenfold_doc_fields_tsv(config regconfig, attrs jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN attrs->>'kind' = 'doc' THEN
    setweight(to_tsvector(config, concat_ws(' ', attrs->>'title', attrs->>'heading_path')), 'A')
    || setweight(to_tsvector(config, concat_ws(' ', attrs->>'tags', attrs->>'aliases', attrs->>'answers')), 'B')
    || setweight(to_tsvector(config, coalesce(attrs->>'description', '')), 'C')
ELSE ''::tsvector END;

CREATE OR REPLACE FUNCTION kenfold_search_tsv(content text, attrs jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_tsvector('simple'::regconfig, content) || kenfold_doc_fields_tsv('simple'::regconfig, attrs);

CREATE OR REPLACE FUNCTION kenfold_search_tsv_en(content text, attrs jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN to_tsvector('english'::regconfig,
                   regexp_replace(regexp_replace(content, '([a-z])([A-Z])', '\1 \2', 'g'), '[_./]', ' ', 'g'))
       || kenfold_doc_fields_tsv('english'::regconfig, attrs);
"""

DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS kenfold_search_tsv(text, jsonb);
DROP FUNCTION IF EXISTS kenfold_search_tsv_en(text, jsonb);
DROP FUNCTION IF EXISTS kenfold_doc_fields_tsv(regconfig, jsonb);
"""


def _vector(name: str, expression: models.Func) -> list[migrations.operations.base.Operation]:
    index = f"memory_{name}"
    return [
        migrations.RemoveIndex(model_name="memory", name=index),
        migrations.RemoveField(model_name="memory", name=name),
        migrations.AddField(
            model_name="memory",
            name=name,
            field=models.GeneratedField(
                db_persist=True,
                expression=expression,
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=django.contrib.postgres.indexes.GinIndex(fields=[name], name=index),
        ),
    ]


class Migration(migrations.Migration):
    dependencies = [("memories", "0010_extraction")]

    operations = [
        migrations.RunSQL(FIELDS_FUNCTION, DROP_FUNCTIONS),
        *_vector("content_tsv", kenfold.db_functions.SearchTsVector(models.F("content"), models.F("attrs"))),
        *_vector(
            "content_tsv_en",
            kenfold.db_functions.EnglishSearchTsVector(models.F("content"), models.F("attrs")),
        ),
    ]
