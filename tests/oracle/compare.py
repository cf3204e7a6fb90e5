"""Compares two pyarrow tables as SQL results: as row multisets (or in order, for ORDER
BY), nulls equal to nulls, floats within a relative tolerance, NaN equal to NaN."""
import math

import pyarrow as pa


def _key(v):
    # Sorts any mix of values: nulls first, then by type name, then by value.
    if v is None:
        return (0, "", 0)
    if isinstance(v, float) and math.isnan(v):
        return (2, "float", 0)
    if isinstance(v, (int, float)):
        return (1, "num", v)
    return (1, type(v).__name__, v)


def _eq(a, b, rel):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        return fa == fb or abs(fa - fb) <= rel * max(abs(fa), abs(fb), 1e-300)
    return a == b


def as_table(x):
    """A pa.Table from a table, a record batch reader or a DuckDB relation."""
    if isinstance(x, pa.Table):
        return x
    if isinstance(x, pa.RecordBatchReader):
        return x.read_all()
    for name in ("fetch_arrow_table", "to_arrow_table"):
        if hasattr(x, name):
            return getattr(x, name)()
    r = x.arrow()
    return r.read_all() if isinstance(r, pa.RecordBatchReader) else r


def rows(table):
    cols = [c.to_pylist() for c in table.columns]
    return list(zip(*cols)) if cols else []


def diff(got, want, ordered=False, rel=1e-9, limit=5):
    """None when equal, else a short description of the first differences."""
    got, want = as_table(got), as_table(want)
    if got.num_columns != want.num_columns:
        return f"{got.num_columns} columns, want {want.num_columns}: {got.schema} vs {want.schema}"
    g, w = rows(got), rows(want)
    if len(g) != len(w):
        return f"{len(g)} rows, want {len(w)}; first got {g[:limit]}, want {w[:limit]}"
    if not ordered:
        g = sorted(g, key=lambda r: [_key(v) for v in r])
        w = sorted(w, key=lambda r: [_key(v) for v in r])
    bad = [(i, x, y) for i, (x, y) in enumerate(zip(g, w))
           if not all(_eq(a, b, rel) for a, b in zip(x, y))]
    if bad:
        return f"{len(bad)} rows differ, e.g. " + "; ".join(f"row {i}: got {x} want {y}"
                                                          for i, x, y in bad[:limit])
    return None
