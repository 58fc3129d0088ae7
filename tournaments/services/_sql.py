"""SQL shared by the services on the paths every table takes (claim, record): rows read and
written without the ORM's query compiler, bulk inserts by COPY, points as stored."""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import TypeVar

from django.db import connection, models

from tournaments.models import Table

ModelT = TypeVar("ModelT", bound=models.Model)

BULK_BATCH = 2000
POINTS_QUANTUM = Decimal("0.0001")

# Rows read and written on the paths every table takes (claim, record), in SQL: compiling
# these through the ORM's query compiler cost the worker more CPU than the server took to run
# them (docs/operations.md).
TABLE = Table._meta.db_table


def sql_row(
    model: type[ModelT],
    where: str,
    *params: object,
    lock: bool = False,
    update: tuple[str, list[object]] | None = None,
) -> ModelT | None:
    """The row of ``model`` WHERE ``where`` (None if there is none) as the ORM loads it:
    locked (``FOR UPDATE``) if ``lock``; or first updated with ``update`` (a SET clause and
    its parameters), as it is after the change."""
    meta = model._meta
    columns = ", ".join(connection.ops.quote_name(f.column) for f in meta.concrete_fields)
    if update is not None:
        assignments, values = update
        sql = f"UPDATE {meta.db_table} SET {assignments} WHERE {where} RETURNING {columns}"
        rows = model._default_manager.raw(sql, [*values, *params])
    else:
        sql = f"SELECT {columns} FROM {meta.db_table} WHERE {where}"
        if lock and connection.features.has_select_for_update:
            sql += " FOR UPDATE"
        rows = model._default_manager.raw(sql, list(params))
    return next(iter(rows), None)


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[tuple[object, ...]]
) -> None:
    """Insert many rows at once: PostgreSQL's COPY (the fastest path by far: a table writes
    hundreds of decisions), else ``bulk_create``. JSON fields take Python values; None is
    SQL NULL, as the ORM writes it."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        model._default_manager.bulk_create(
            [model(**dict(zip(fields, row, strict=True))) for row in rows],
            batch_size=BULK_BATCH,
        )
        return
    meta = model._meta
    concrete = [meta.get_field(f) for f in fields]
    assert all(isinstance(f, models.Field) for f in concrete)
    json_columns = [isinstance(f, models.JSONField) for f in concrete]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in concrete if isinstance(f, models.Field))
    statement = f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN"
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(
                [
                    dumps(value) if is_json and value is not None else value
                    for value, is_json in zip(row, json_columns, strict=True)
                ]
            )


def as_points(value: Fraction) -> Decimal:
    return (Decimal(value.numerator) / Decimal(value.denominator)).quantize(POINTS_QUANTUM)
