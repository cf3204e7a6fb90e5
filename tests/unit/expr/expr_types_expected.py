#!/usr/bin/env python3
"""Writes tests/unit/expr/expr_types_cases.h: the input table of test_expr_types.c and the
results DuckDB gives for each expression on it (run by hand when the cases change:
python3 tests/unit/expr/expr_types_expected.py > tests/unit/expr/expr_types_cases.h)."""
import datetime
import decimal
import math
import random
import re

import duckdb

NAN, INF = float("nan"), float("inf")
COLS = [  # name, sluice type, duckdb type, values
    ("i8", "SL_TYPE_INT8", "TINYINT", [1, -2, 127, -128, 0, 5, None, 3, 10, -7, 2, 100]),
    ("u64", "SL_TYPE_UINT64", "UBIGINT",
     [0, 1, 18446744073709551615, 9223372036854775808, 5, None, 42, 7, 3, 2, 1, 1000]),
    ("f", "SL_TYPE_FLOAT64", "DOUBLE",
     [1.5, -0.0, NAN, INF, -INF, 0.1, None, 2.5, 1e20, -3.25, 0.0, 1e-05]),
    ("b", "SL_TYPE_BOOL", "BOOLEAN",
     [True, False, None, True, False, True, True, False, None, True, False, True]),
    ("d", "SL_TYPE_DATE32", "DATE",
     ["1998-09-02", "2000-01-31", "2000-02-29", "1970-01-01", "1969-12-31", None, "1992-01-01",
      "1998-12-01", "2024-03-31", "1995-06-17", "1900-02-28", "2100-12-31"]),
    ("ts", "SL_TYPE_TIMESTAMP", "TIMESTAMP",
     ["1998-09-02 10:11:12.5", "2000-01-31 00:00:00", None, "1970-01-01 00:00:00.000001",
      "1969-12-31 23:59:59", "2000-02-29 12:00:00", "1992-01-01 01:02:03", "1998-12-01 00:00:00",
      "2024-03-31 23:59:59.999999", "1995-06-17 06:30:00", "1900-02-28 00:00:00",
      "2100-12-31 12:34:56"]),
    ("p", "sl_type_decimal(15, 2)", "DECIMAL(15,2)",
     ["123.45", "-0.05", "99999999999.99", "0.00", "1.00", "50.50", None, "17.99", "100.10",
      "-123.45", "0.01", "55.55"]),
    ("q", "sl_type_decimal(15, 2)", "DECIMAL(15,2)",
     ["0.05", "0.10", "0.00", "0.07", "0.02", None, "0.04", "0.10", "0.06", "0.01", "0.09", "0.03"]),
    ("w", "sl_type_decimal(38, 4)", "DECIMAL(38,4)",
     ["12345678901234567890123456789012.3456", "-1.0001", "0.0000", None, "5.5000", "-99999.9999",
      "1.0000", "123.4500", "-12345678901234567890123456789012.3456", "7.0000", "0.0001",
      "42.4200"]),
    ("s", "SL_TYPE_UTF8", "VARCHAR",
     ["abc", "", "h\u00e9llo w\u00f6rld", "ABC%", "it's", None, "abcabc", "xyz", "PROMO BRUSHED",
      "a_c", "a\u00e9c", "forest green"]),
    ("ds", "SL_TYPE_DICT", "VARCHAR",
     ["red", "green", None, "blue", "red", "green", "forest", "red", "blue", "green", "red",
      "blue"]),
]

# Random rows after the hand-picked ones: duplicates, nulls (one in eight) and values
# across each column's range, within what every case below can take without an error.
RNG = random.Random(5)
WORDS = ["abc", "", "h\u00e9llo", "ABC%", "it's", "xyz", "a_c", "forest green", "\u00fcber"]


def _rand(kind):
    if RNG.random() < 0.125:
        return None
    day = datetime.date(1900, 1, 1) + datetime.timedelta(days=RNG.randint(0, 73000))
    return {
        "i8": lambda: RNG.randint(-128, 127),
        "u64": lambda: RNG.choice([0, 2**64 - 1, RNG.randint(0, 2**64 - 1), RNG.randint(0, 9)]),
        "f": lambda: RNG.choice([float("nan"), 0.0, RNG.uniform(-1e3, 1e3),
                                 float(RNG.randint(-5, 5))]),
        "b": lambda: RNG.random() < 0.5,
        "d": lambda: day.isoformat(),
        "ts": lambda: "%s %02d:%02d:%02d.%06d" % (day.isoformat(), RNG.randint(0, 23),
                                                  RNG.randint(0, 59), RNG.randint(0, 59),
                                                  RNG.choice([0, RNG.randint(0, 999999)])),
        "p": lambda: str(decimal.Decimal(RNG.randint(-10**11, 10**11)).scaleb(-2)),
        "q": lambda: str(decimal.Decimal(RNG.randint(0, 10)).scaleb(-2)),
        "w": lambda: str(decimal.Decimal(RNG.randint(-10**24, 10**24)).scaleb(-4)),
        "s": lambda: RNG.choice(WORDS) + RNG.choice(["", "c", "\u00f6"]),
        "ds": lambda: RNG.choice(["red", "green", "blue", "forest"]),
    }[kind]()


for _name, _st, _dt, _vals in COLS:
    RNG.seed(len(_name) * 7919 + ord(_name[0]))  # a stream per column
    _vals.extend(_rand(_name) for _ in range(36))

# Each case: sluice expression, DuckDB expression (None: the same, with type names mapped).
CASES = [
    ("p * (1 - q) * (1 + q)", None),
    ("p + q", None), ("p - w", None), ("p * 2", None), ("p / 3", None), ("-p", None),
    ("p + 0.005", None), ("i8 + 1000", None), ("i8 * p", None),
    ("f > 1", None), ("f = f", None), ("f >= 1e300", None), ("f IN (1.5, 2.5)", None),
    ("f < 0.5", None),
    ("p > 50.5", None), ("p = 1", None), ("p BETWEEN 0 AND 100", None),
    ("p NOT BETWEEN 0 AND 100", None), ("p IN (123.45, 17.99, 1)", None), ("w > p", None),
    ("w = 5.5", None), ("q < 0.05", None), ("i8 < 0.5", None),
    ("u64 > 9223372036854775807", None), ("u64 IN (0, 42)", None), ("i8 IN (1, -128, 100)", None),
    ("d < DATE '1998-12-01' - INTERVAL '90' DAY", None),
    ("d >= '1998-01-01'", "d >= DATE '1998-01-01'"),
    ("ts >= d", None), ("ts < TIMESTAMP '1998-09-02 10:11:12.5'", None),
    ("d IN (DATE '1998-09-02', DATE '1970-01-01')", None),
    ("s < 'abd'", None), ("s = ''", None), ("s LIKE 'abc%'", None), ("s LIKE '%c'", None),
    ("s LIKE '%bc%'", None), ("s LIKE 'a_c'", None), ("s NOT LIKE '%o%'", None),
    ("s LIKE '%o%o%'", None), ("s IN ('xyz', 'abc')", None),
    ("ds = 'red'", None), ("ds IN ('red', 'blue')", None), ("ds LIKE '%re%'", None),
    ("ds > 'f'", None), ("ds NOT IN ('green')", None), ("ds <> s", None),
    ("b = true", None), ("b IS NULL", None), ("d IS NOT NULL", None), ("NOT b", None),
    ("SUBSTRING(s FROM 2 FOR 3)", None), ("SUBSTRING(s, -3, 2)", None), ("SUBSTRING(s, 0)", None),
    ("SUBSTRING(s, 3, -2)", None), ("LENGTH(s)", None), ("CHAR_LENGTH(ds)", None),
    ("SUBSTRING(ds, 1, 2)", None),
    ("d + INTERVAL '1' MONTH", "CAST(d + INTERVAL '1' MONTH AS DATE)"),
    ("d - INTERVAL 1 YEAR", "CAST(d - INTERVAL 1 YEAR AS DATE)"),
    ("d + INTERVAL '3' DAY", "CAST(d + INTERVAL '3' DAY AS DATE)"),
    ("d - INTERVAL '13' MONTH", "CAST(d - INTERVAL '13' MONTH AS DATE)"),
    ("ts + INTERVAL '1' MONTH", None),
    ("EXTRACT(YEAR FROM d)", None), ("EXTRACT(MONTH FROM ts)", None), ("EXTRACT(DAY FROM d)", None),
    ("CASE WHEN p > 50 THEN 'big' WHEN p > 0 THEN 'small' ELSE s END", None),
    ("CASE WHEN b THEN p ELSE 0 END", None), ("CASE WHEN i8 > 0 THEN i8 END", None),
    ("CASE WHEN p > 100 THEN w WHEN q > 0.05 THEN q END", None),
    ("COALESCE(s, ds, 'none')", None), ("COALESCE(q, 0.5)", None), ("COALESCE(i8, 0)", None),
    ("COALESCE(ts, d)", None), ("CASE WHEN p > 50 THEN p ELSE NULL END", None),
    ("COALESCE(NULL, s, 'z')", None), ("i8 + NULL", None), ("CAST(NULL AS utf8)", None),
    ("p = NULL", None), ("NULL OR b", None), ("CASE WHEN b THEN NULL ELSE d END", None),
    ("CAST(p AS int64)", None), ("CAST(p AS float64)", None), ("CAST(p AS decimal(14,1))", None),
    ("CAST(i8 AS decimal(5,2))", None), ("CAST(d AS utf8)", None), ("CAST(p AS utf8)", None),
    ("CAST(f AS utf8)", None), ("CAST(ts AS date32)", None), ("CAST(d AS timestamp)", None),
    ("CAST(b AS int32)", None), ("CAST(i8 AS bool)", None),
    ("CAST(CAST(p AS utf8) AS decimal(15,2))", None), ("CAST(w AS float64)", None),
    ("CAST(i8 AS utf8)", None), ("CAST(b AS utf8)", None), ("CAST(u64 AS utf8)", None),
    ("CAST(q AS decimal(15,1))", None), ("CAST(f AS float32)", None),
    ("CAST(SUBSTRING(CAST(d AS utf8), 1, 4) AS int32)", None), ("CAST(ts AS utf8)", None),
    ("CAST(' 12 ' AS decimal(5,1))", None), ("CAST('-0.05' AS decimal(5,1))", None),
    ("CAST('1e3' AS int32)", None), ("CAST('12.5' AS int32)", None),
    ("CAST('TRUE' AS bool)", None), ("CAST(i8 + 200 AS uint64)", "CAST(i8 + 200 AS UBIGINT)"),
    ("CAST(i8 AS int16) * 2", "CAST(i8 AS SMALLINT) * 2"), ("CAST(q * 100 AS uint32)", "CAST(q * 100 AS UINTEGER)"),
    ("CAST(i8 + 128 AS uint8)", "CAST(i8 + 128 AS UTINYINT)"), ("CAST('2.5e-1' AS float64)", None),
    ("CAST('2000-02-29' AS date32) + INTERVAL '1' YEAR",
     "CAST(CAST('2000-02-29' AS DATE) + INTERVAL '1' YEAR AS DATE)"),
    # a literal plus an interval is folded into one literal when parsed
    ("d < DATE '2000-01-31' + INTERVAL '1' MONTH", None),
    ("d >= INTERVAL '1' YEAR + DATE '1999-02-28'", None),
    ("d = DATE '2000-03-31' - INTERVAL '1' MONTH", None),
    ("ts < TIMESTAMP '2000-01-31 12:00:00' + INTERVAL '1' MONTH", None),
    ("DATE '2000-02-29' + INTERVAL '1' YEAR", "CAST(DATE '2000-02-29' + INTERVAL '1' YEAR AS DATE)"),
]

TYPES = {"utf8": "VARCHAR", "uint64": "UBIGINT", "uint32": "UINTEGER", "uint8": "UTINYINT",
         "int16": "SMALLINT", "int64": "BIGINT", "int32": "INTEGER", "float64": "DOUBLE",
         "float32": "FLOAT", "date32": "DATE", "bool": "BOOLEAN"}


def duck_expr(e):
    return re.sub(r"\bAS (utf8|int64|int32|float64|float32|date32|bool|uint64|uint32|uint8|int16)\b",
                  lambda m: "AS " + TYPES[m.group(1)], e)


def text(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return "%.17g" % v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        t = v.strftime("%Y-%m-%d %H:%M:%S")
        return t + ((".%06d" % v.microsecond).rstrip("0") if v.microsecond else "")
    if isinstance(v, datetime.date):
        return v.isoformat()
    return str(v)


def cstr(s):
    """A C string literal of s's UTF-8 bytes (octal escapes outside printable ASCII)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else "\\%03o" % b
                         for b in s.encode()) + '"'


def main():
    con = duckdb.connect()
    n = len(COLS[0][3])
    rows = []
    for r in range(n):
        vals = []
        for name, _, dt, v in COLS:
            x = v[r]
            vals.append("NULL" if x is None else
                        ("'nan'::DOUBLE" if isinstance(x, float) and math.isnan(x) else
                         "'inf'::DOUBLE" if x == INF else "'-inf'::DOUBLE" if x == -INF else
                         "'-0.0'::DOUBLE" if isinstance(x, float) and x == 0 and
                         math.copysign(1, x) < 0 else
                         "'" + str(x).replace("'", "''") + "'::" + dt if not isinstance(x, bool)
                         else str(x).upper()))
        rows.append("(" + str(r) + ", " + ", ".join(vals) + ")")
    con.sql("CREATE TABLE t AS SELECT * FROM (VALUES " + ", ".join(rows) + ") v(id, " +
            ", ".join(c[0] for c in COLS) + ")")
    con.sql("CREATE TABLE t2 AS SELECT id, " + ", ".join(
        "CAST(%s AS %s) AS %s" % (c[0], c[2], c[0]) for c in COLS) + " FROM t")
    print("/* Generated by expr_types_expected.py from DuckDB %s: do not edit. */" %
          duckdb.__version__)
    print("#define ET_ROWS %d" % n)
    print("#define ET_COLS %d" % len(COLS))
    print("static const char *const et_names[ET_COLS] = {%s};" %
          ", ".join(cstr(c[0]) for c in COLS))
    print("static enum sl_type et_type(int c)\n{\n    switch (c) {")
    for k, c in enumerate(COLS):
        print("    case %d: return %s;" % (k, c[1]))
    print("    default: return SL_TYPE_INVALID;\n    }\n}")
    print("/* Input values as text (NULL pointer: null). */")
    print("static const char *const et_input[ET_COLS][ET_ROWS] = {")
    for name, _, dt, v in COLS:
        print("    {" + ", ".join("NULL" if x is None else cstr(text(x) if not isinstance(x, str)
                                                               else x) for x in v) + "},")
    print("};")
    print("struct et_case {\n    const char *expr;\n    const char *type;\n"
          "    const char *want[ET_ROWS];\n};")
    print("static const struct et_case et_cases[] = {")
    for e, de in CASES:
        de = duck_expr(de or e)
        try:
            res = con.sql("SELECT typeof(%s), %s FROM t2 ORDER BY id" % (de, de)).fetchall()
        except duckdb.Error as err:
            raise SystemExit("case %s: %s" % (e, err))
        typ = res[0][0]
        print("    {%s, %s, {%s}}," % (cstr(e), cstr(typ), ", ".join(cstr(text(x[1])) for x in res)))
    print("};")


main()
