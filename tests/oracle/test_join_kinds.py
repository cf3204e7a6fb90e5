"""Right and full outer joins, residual conditions and cross joins against DuckDB, on
int64 and string keys with nulls, duplicates and no-match rows, every CPU algorithm,
materialized and fused aggregate output. Exits 1 listing every case that differs."""
import random
import sys

from oracle_common import require_modules, Sluice, SluiceError, diff

pa, duckdb = require_modules()
rng = random.Random(23)


def table(n, keys, ktype):
    return pa.table({
        "k": pa.array([None if rng.random() < 0.1 else rng.choice(keys) for _ in range(n)], ktype),
        "v": pa.array([None if rng.random() < 0.1 else rng.randint(-1000, 1000) for _ in range(n)], pa.int64()),
        "s": pa.array([rng.choice(["a", "bb", None, "ccc"]) for _ in range(n)], pa.string()),
    })


failures, cases = [], 0


def check(name, plan, tables, sql):
    global cases
    cases += 1
    try:
        got = sl.run(plan, tables)["j"]
        d = diff(got, duckdb.sql(sql))
    except SluiceError as e:
        d = str(e)
    if d:
        failures.append(f"{name}: {d}")


HEAD = "a = scan.table name=l\nb = scan.table name=r\n"
with Sluice() as sl:
    for ktype, keys in ((pa.int64(), [1, 2, 3, 4, -2**63, 2**63 - 1]), (pa.string(), ["x", "y", "", "zz", "long string key"])):
        for nl, nr in ((0, 4), (4, 0), (1, 1), (300, 150), (40, 900)):
            l, r = table(nl, keys, ktype), table(nr, keys[:4], ktype)
            for kind, sqlkind in (("right", "right join"), ("full", "full outer join")):
                for algo in ("radix", "nopart", "sortmerge"):
                    check(f"{ktype} {nl}x{nr} {kind} {algo}",
                          HEAD + f"j = join(a, b) on=k kind={kind} algo={algo} right_columns=\"k,v,s\"\noutput j\n",
                          {"l": l, "r": r},
                          f"select l.k, l.v, l.s, r.k, r.v, r.s from l {sqlkind} r on l.k = r.k")
                check(f"{ktype} {nl}x{nr} {kind} aggregate",
                      HEAD + f"j = join(a, b) on=k kind={kind} output=aggregate left_columns=v right_columns=v\noutput j\n",
                      {"l": l, "r": r},
                      f"select count(*), sum(l.v), sum(r.v) from l {sqlkind} r on l.k = r.k")
            # residual: pairs must also differ (or order) on v, as Q21's l1.suppkey <> l2.suppkey
            for op in ("<>", "<", ">="):
                for kind, sql in (
                        ("inner", "select l.k, l.v, l.s, r.v from l join r on l.k = r.k and l.v {op} r.v"),
                        ("left", "select l.k, l.v, l.s, r.v from l left join r on l.k = r.k and l.v {op} r.v"),
                        ("semi", "select l.* from l where exists (select 1 from r where r.k = l.k and l.v {op} r.v)"),
                        ("anti", "select l.* from l where not exists (select 1 from r where r.k = l.k and l.v {op} r.v)"),
                        ("right", "select l.k, l.v, l.s, r.v from l right join r on l.k = r.k and l.v {op} r.v")):
                    rc = "" if kind in ("semi", "anti") else " right_columns=v"
                    check(f"{ktype} {nl}x{nr} residual {op} {kind}",
                          HEAD + f"j = join(a, b) on=k kind={kind} residual=\"v {op} v\"{rc}\noutput j\n",
                          {"l": l, "r": r}, sql.format(op=op))
    # cross joins: a scalar subquery's one row, none, a few
    for nl in (0, 1, 1000):
        for nr in (0, 1, 3):
            l = table(nl, [1, 2], pa.int64())
            r = pa.table({"total": pa.array([rng.randint(0, 99) for _ in range(nr)], pa.int64()),
                          "name": pa.array(["n%d" % i for i in range(nr)], pa.string())})
            check(f"cross {nl}x{nr}", HEAD + "j = join(a, b) kind=cross\noutput j\n",
                  {"l": l, "r": r}, "select * from l cross join r")

# dictionary columns whose batches each hold another dictionary (a table read in
# parts, as TPC-H's .tbl files are): the output column gets one merged dictionary
def dict_table(n, parts):
    batches = []
    for _ in range(parts):
        words = rng.sample(["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR", ""], 5)
        batches.append(pa.record_batch({
            "k": pa.array([rng.randint(1, 6) for _ in range(n)], pa.int64()),
            "d": pa.array([None if rng.random() < 0.1 else rng.choice(words) for _ in range(n)],
                          pa.string()).dictionary_encode()}))
    return pa.Table.from_batches(batches)


with Sluice() as sl:
    for nl, pl, nr, pr in ((50, 3, 40, 4), (200, 5, 7, 1), (1, 1, 30, 6)):
        l, r = dict_table(nl, pl), dict_table(nr, pr)
        for kind, sql in (("inner", "select l.k, l.d, r.d from l join r on l.k = r.k"),
                          ("left", "select l.k, l.d, r.d from l left join r on l.k = r.k"),
                          ("right", "select l.k, l.d, r.d from l right join r on l.k = r.k"),
                          ("full", "select l.k, l.d, r.d from l full join r on l.k = r.k"),
                          ("semi", "select l.* from l where exists (select 1 from r where r.k = l.k)"),
                          ("anti", "select l.* from l where not exists (select 1 from r where r.k = l.k)")):
            rc = "" if kind in ("semi", "anti") else " right_columns=d"
            for algo in ("radix", "nopart", "sortmerge"):
                check(f"dict {pl}+{pr} batches {kind} {algo}",
                      HEAD + f"j = join(a, b) on=k kind={kind} algo={algo}{rc}\noutput j\n",
                      {"l": l, "r": r}, sql)
        check(f"dict {pl}+{pr} batches cross", HEAD + "j = join(a, b) kind=cross\noutput j\n",
              {"l": l, "r": r}, "select l.k, l.d, r.k, r.d from l cross join r")

# bad options are errors, not crashes
with Sluice() as sl:
    l = table(5, [1], pa.int64())
    for opts, want in (("on=k kind=cross", "no on/left_on"), ("on=k residual=\"v <> nope\"", "no column 'nope'"),
                       ("on=k residual=\"v ~ v\"", "expected"), ("on=k residual=\"v <> s\"", "different types"),
                       ("on=k kind=full residual=\"v <> v\"", "kind=full")):
        cases += 1
        try:
            sl.run(HEAD + f"j = join(a, b) {opts}\noutput j\n", {"l": l, "r": l})
            failures.append(f"'{opts}' ran; want an error with '{want}'")
        except SluiceError as e:
            if want not in e.msg:
                failures.append(f"'{opts}': message {e.msg!r} lacks {want!r}")

print(f"{cases} cases, {len(failures)} differ")
for f in failures[:40]:
    print("  " + f)
sys.exit(1 if failures else 0)
