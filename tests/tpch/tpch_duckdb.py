"""TPC-H on DuckDB, shared by tpch_check.py (the correctness check), its
--write-expected mode (answer files for `sluice tpch --expected DIR`) and the benchmark
peer bench/peers/duckdb_tpch.py: the schema of plans/tpch/schema.txt, the .tbl files
read into DuckDB tables, the standard query text, and the answer-file format.

Answer file (docs/TPCH.md): '#' comment lines, one of them "# order: a, b" naming the
query's ORDER BY columns; a header of name:kind cells (kind: int, decimal, float, date,
string, bool); then one CSV row per result row (RFC 4180 quoting; an empty unquoted
field is NULL; decimals in plain notation, floats as Python's repr).
"""
import decimal
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders",
          "lineitem"]
DUCK_TYPES = {"int32": "INTEGER", "int64": "BIGINT", "date32": "DATE", "utf8": "VARCHAR",
              "dict": "VARCHAR"}


def require_modules():
    """Exits 77 (the tests' skip) when duckdb or pyarrow is missing."""
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401 (DuckDB's results are pyarrow tables)
    except ImportError as e:
        print(f"skipped: {e}")
        sys.exit(77)


def read_schema():
    """{table: [(column, sluice type)]} from plans/tpch/schema.txt."""
    schema = {}
    with open(os.path.join(ROOT, "plans", "tpch", "schema.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, cols = line.split(None, 1)
            schema[name] = [tuple(c.strip().split(":", 1)) for c in cols.split(", ")]
    return schema


def load_duckdb(con, schema, ddir):
    """The eight .tbl files of ddir as DuckDB tables in memory."""
    for t in TABLES:
        cols = {c: DUCK_TYPES.get(ty, ty.upper()) for c, ty in schema[t]}
        cols["sluice_trailing"] = "VARCHAR"  # the empty field after each line's last '|'
        spec = "{" + ", ".join(f"'{c}': '{ty}'" for c, ty in cols.items()) + "}"
        path = os.path.join(ddir, t + ".tbl")
        con.execute(f"create table {t} as select * exclude (sluice_trailing) from "
                    f"read_csv('{path}', delim='|', header=false, quote='', escape='', "
                    f"columns={spec})")


def query_sql(q):
    """The standard text of query q (1..22), validation parameters."""
    with open(os.path.join(HERE, "queries", f"q{q:02d}.sql")) as f:
        return f.read()


def order_columns(sql):
    m = re.search(r"^-- sluice-order:(.*)$", sql, re.M)
    if not m:
        return []
    return [c.strip().split()[0] for c in m.group(1).split(",") if c.strip()]


def arrow_of(rel):
    """A DuckDB result as a pyarrow table (the method's name changed across versions)."""
    for name in ("fetch_arrow_table", "to_arrow_table", "arrow"):
        if hasattr(rel, name):
            r = getattr(rel, name)()
            return r.read_all() if hasattr(r, "read_all") else r
    raise AttributeError("no arrow conversion on this DuckDB result")


def _kind(t):
    import pyarrow as pa
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_boolean(t):
        return "bool"
    return "string"


def _text(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _csv_field(v):
    """None as an empty field; a field that is empty or holds , " or a line end quoted."""
    t = _text(v)
    if t is None:
        return ""
    if t == "" or any(ch in t for ch in ',"\n\r'):
        return '"' + t.replace('"', '""') + '"'
    return t


def answer_text(table, order, comment):
    """The answer file of a pyarrow table (see the module's docstring)."""
    lines = [f"# {comment}"]
    if order:
        lines.append(f"# order: {', '.join(order)}")
    lines.append(",".join(_csv_field(f"{f.name}:{_kind(f.type)}") for f in table.schema))
    cols = [c.to_pylist() for c in table.columns]
    lines += [",".join(_csv_field(v) for v in row) for row in zip(*cols)]
    return "\n".join(lines) + "\n"


def write_expected(con, out_dir, queries, source):
    """Writes out_dir/qNN.csv, DuckDB's answer to each query, for `sluice tpch
    --expected out_dir`."""
    import duckdb
    os.makedirs(out_dir, exist_ok=True)
    for q in queries:
        sql = query_sql(q)
        table = arrow_of(con.sql(sql))
        text = answer_text(table, order_columns(sql),
                           f"TPC-H q{q:02d} on {source}: DuckDB {duckdb.__version__}")
        with open(os.path.join(out_dir, f"q{q:02d}.csv"), "w") as f:
            f.write(text)
