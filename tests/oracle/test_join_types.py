"""Joins on every key type against DuckDB: inner, left, semi and anti joins, every CPU
algorithm, materialized rows and the fused aggregate, on random keys with nulls,
duplicates on both sides, extreme values and no-match rows; composite keys of mixed
types. Exits 1 listing every case that differs."""
import decimal
import datetime
import random
import sys

from oracle_common import require_modules, Sluice, SluiceError, diff

pa, duckdb = require_modules()
rng = random.Random(17)

I64 = (-2**63, 2**63 - 1)


def pick(pool, n, nulls=0.1):
    return [None if rng.random() < nulls else rng.choice(pool) for _ in range(n)]


def pools():
    """Per key type: an Arrow type and a small pool of values (so keys repeat)."""
    d0 = datetime.date(1992, 1, 1)
    return {
        "int8": (pa.int8(), [-128, 127, 0, 1, -1, 5]),
        "int16": (pa.int16(), [-32768, 32767, 0, 7, 300]),
        "int32": (pa.int32(), [-2**31, 2**31 - 1, 0, 1, 2, 3, -7]),
        "int64": (pa.int64(), [I64[0], I64[1], 0, 1, 2**40, -5]),
        "uint32": (pa.uint32(), [0, 2**32 - 1, 1, 2**31]),
        "uint64": (pa.uint64(), [0, 2**64 - 1, 2**63, 3]),
        "bool": (pa.bool_(), [True, False]),
        "date32": (pa.date32(), [d0 + datetime.timedelta(days=k) for k in (0, 1, 400, 2500, -9000)]),
        "timestamp": (pa.timestamp("us"), [datetime.datetime(1998, 12, 1, 0, 0, s) for s in range(5)]),
        "decimal(15,2)": (pa.decimal128(15, 2), [decimal.Decimal(x) for x in
                                                 ("0.00", "-0.01", "9999999999999.99", "12.34", "-12.34")]),
        "decimal(30,5)": (pa.decimal128(30, 5), [decimal.Decimal(x) for x in
                                                 ("0.00000", "1234567890123456789012345.12345",
                                                  "-1.00001", "3.14159")]),
        "float64": (pa.float64(), [0.0, -0.0, float("nan"), 1.5, -1e300, float("inf")]),
        "utf8": (pa.string(), ["", "a", "MAIL", "AIR REG", "é ü", "x" * 40, "a\x00b"]),
        "large_utf8": (pa.large_string(), ["", "b", "SHIP", "TRUCK", "z" * 17]),
    }


def table(kname, ktype, pool, n):
    keys = pick(pool, n)
    cols = {"k": pa.array(keys, ktype),
            "v": pa.array([rng.randint(-10**6, 10**6) if rng.random() > 0.1 else None for _ in range(n)], pa.int64()),
            "s": pa.array([rng.choice(["x", "yy", None, "zzz"]) for _ in range(n)], pa.string())}
    if kname == "utf8":  # also a dictionary-encoded copy of the key
        cols["kd"] = pa.array(keys, pa.string()).dictionary_encode()
    return pa.table(cols)


KINDS = ["inner", "left", "semi", "anti"]
ALGOS = ["radix", "nopart", "sortmerge"]
SQL = {
    "inner": "select l.k, l.v, l.s{lx}, r.v, r.s from l join r on {on}",
    "left": "select l.k, l.v, l.s{lx}, r.v, r.s from l left join r on {on}",
    "semi": "select l.k, l.v, l.s{lx} from l where exists (select 1 from r where {on})",
    "anti": "select l.k, l.v, l.s{lx} from l where not exists (select 1 from r where {on})",
}

failures = []
cases = 0
with Sluice() as sl:
    for kname, (ktype, pool) in pools().items():
        for nl, nr in ((0, 5), (1, 1), (300, 200), (2000, 50)):
            l = table(kname, ktype, pool, nl)
            r = table(kname, ktype, pool + ([] if kname in ("bool",) else []), nr)
            if nr > 100 and kname not in ("bool", "int8"):  # a right side with no matches
                r = table(kname, ktype, pool[:1], nr)
            lx = ", l.kd" if "kd" in l.column_names else ""
            rcols = "v,s"
            for kind in KINDS:
                for algo in (ALGOS if nl == 300 else ["auto"]):
                    cases += 1
                    plan = (f"a = scan.table name=l\nb = scan.table name=r\n"
                            f"j = join(a, b) on=k kind={kind} algo={algo}"
                            + ("" if kind in ("semi", "anti") else f" right_columns=\"{rcols}\"")
                            + "\noutput j\n")
                    want = duckdb.sql(SQL[kind].format(lx=lx, on="l.k = r.k"))
                    try:
                        got = sl.run(plan, {"l": l, "r": r})["j"]
                    except SluiceError as e:
                        failures.append(f"{kname} {nl}x{nr} {kind} {algo}: {e}")
                        continue
                    d = diff(got, want)
                    if d:
                        failures.append(f"{kname} {nl}x{nr} {kind} {algo}: {d}")
            # the fused aggregate: count and sums (NULL where nothing was summed)
            cases += 1
            plan = ("a = scan.table name=l\nb = scan.table name=r\n"
                    "j = join(a, b) on=k output=aggregate left_columns=v right_columns=v\noutput j\n")
            want = duckdb.sql("select count(*), sum(l.v), sum(r.v) from l join r on l.k = r.k")
            try:
                d = diff(sl.run(plan, {"l": l, "r": r})["j"], want)
            except SluiceError as e:
                d = str(e)
            if d:
                failures.append(f"{kname} {nl}x{nr} aggregate: {d}")
            # a dictionary key joins a plain string key
            if "kd" in l.column_names:
                cases += 1
                plan = ("a = scan.table name=l\nb = scan.table name=r\n"
                        "j = join(a, b) left_on=kd right_on=k kind=inner right_columns=v\noutput j\n")
                want = duckdb.sql("select l.k, l.v, l.s, l.kd, r.v from l join r on l.kd = r.k")
                try:
                    d = diff(sl.run(plan, {"l": l, "r": r})["j"], want)
                except SluiceError as e:
                    d = str(e)
                if d:
                    failures.append(f"dict-utf8 {nl}x{nr}: {d}")

    # composite keys of mixed types: (string, date, decimal)
    P = pools()
    for n in (0, 1, 500):
        def comp(n):
            return pa.table({"a": pa.array(pick(P["utf8"][1][:3], n, 0.05), pa.string()),
                             "b": pa.array(pick(P["date32"][1][:2], n, 0.05), pa.date32()),
                             "c": pa.array(pick(P["decimal(15,2)"][1][:2], n, 0.05), pa.decimal128(15, 2)),
                             "v": pa.array(range(n), pa.int64())})
        l, r = comp(n), comp(n // 2 + 1)
        for kind in KINDS:
            for algo in ALGOS:
                cases += 1
                plan = (f"x = scan.table name=l\ny = scan.table name=r\n"
                        f"j = join(x, y) on=\"a,b,c\" kind={kind} algo={algo}"
                        + ("" if kind in ("semi", "anti") else " right_columns=v") + "\noutput j\n")
                on = "l.a = r.a and l.b = r.b and l.c = r.c"
                sql = {"inner": f"select l.*, r.v from l join r on {on}",
                       "left": f"select l.*, r.v from l left join r on {on}",
                       "semi": f"select l.* from l where exists (select 1 from r where {on})",
                       "anti": f"select l.* from l where not exists (select 1 from r where {on})"}[kind]
                try:
                    d = diff(sl.run(plan, {"l": l, "r": r})["j"], duckdb.sql(sql))
                except SluiceError as e:
                    d = str(e)
                if d:
                    failures.append(f"composite {n} {kind} {algo}: {d}")

print(f"{cases} cases, {len(failures)} differ")
for f in failures[:40]:
    print("  " + f)
sys.exit(1 if failures else 0)
