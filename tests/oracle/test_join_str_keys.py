"""String join keys around the short-key layout (keys of at most 16 bytes carried in the
join's tuples, operators/join/join_str16.c) against DuckDB: keys of 0, 1, 7, 8, 9, 15,
16, 17 and 200 bytes (17 and 200 take the hashed path), keys that differ only in a
trailing zero byte or their last byte, utf8 and large_utf8 sides; empty sides, one row,
duplicates on both sides, no matches, null keys, several sliced batches; every join
kind, a residual condition, materialized rows and the fused aggregate (with payloads
inline and by row); composite string + int keys. Exits 1 listing every case that
differs."""
import random

from oracle_common import require_modules, Sluice, finish, run_diff

pa, duckdb = require_modules()
rng = random.Random(1716)

SHORT = ["", "a", "a\x00", "b", "abcdefg", "abcdefh", "abcdefgh", "abcdefgi", "abcdefgh\x00",
         "abcdefghi", "0123456789abcde", "0123456789abcdf", "0123456789abcdef",
         "0123456789abcdeg", "é ü ß", "\x00" * 16]
LONG = ["0123456789abcdefX", "0123456789abcdefY", "z" * 200, "z" * 199 + "y"]


def keys(pool, n, nulls):
    return [None if rng.random() < nulls else rng.choice(pool) for _ in range(n)]


def table(pool, n, ktype, nulls=0.1):
    return pa.table({
        "k": pa.array(keys(pool, n, nulls), ktype),
        "i": pa.array([rng.randint(0, 2) for _ in range(n)], pa.int32()),
        "v": pa.array([None if rng.random() < 0.1 else rng.randint(-1000, 1000) for _ in range(n)],
                      pa.int64()),
        "w": pa.array([rng.randint(-10**9, 10**9) for _ in range(n)], pa.int64()),
    })


HEAD = "a = scan.table name=l\nb = scan.table name=r\n"
SQL = {
    "inner": "select l.k, l.i, l.v, l.w, r.k, r.v from l join r on {on}",
    "left": "select l.k, l.i, l.v, l.w, r.k, r.v from l left join r on {on}",
    "right": "select l.k, l.i, l.v, l.w, r.k, r.v from l right join r on {on}",
    "full": "select l.k, l.i, l.v, l.w, r.k, r.v from l full join r on {on}",
    "semi": "select l.k, l.i, l.v, l.w from l where exists (select 1 from r where {on})",
    "anti": "select l.k, l.i, l.v, l.w from l where not exists (select 1 from r where {on})",
}

failures, cases = [], 0


def check(name, plan, tables, sql):
    global cases
    cases += 1
    d = run_diff(sl, plan, tables, "j", duckdb.sql(sql))
    if d:
        failures.append(f"{name}: {d}")


def random_pool(n, maxlen):
    return ["".join(rng.choice("ab\x00é") for _ in range(rng.randint(0, maxlen))) for _ in range(n)]


def sides(pool, nl, nr, lt, rt):
    """Two sides: of a small pool (many duplicates); of disjoint keys at 400 x 300 (no
    matches); of a large pool of random strings at 3000 x 2000."""
    if nl == 400:
        return table(pool[: len(pool) // 2], nl, lt), table(pool[len(pool) // 2:], nr, rt)
    if nl == 3000:  # also in several batches, sliced (columns with an offset)
        pool = random_pool(1500, max(len(k) for k in pool))
        l, r = table(pool, nl, lt), table(pool, nr, rt)
        return (pa.concat_tables([l.slice(0, 1001), l.slice(1001)]),
                pa.concat_tables([r.slice(0, 7), r.slice(7, 1500), r.slice(1507)]))
    return table(pool, nl, lt), table(pool, nr, rt)


with Sluice() as sl:
    pools = (("short", SHORT), ("long", SHORT + LONG))
    types = ((pa.string(), pa.string()), (pa.large_string(), pa.string()))
    for pname, pool in pools:
        for lt, rt in types:
            for nl, nr in ((0, 5), (5, 0), (1, 1), (300, 40), (400, 300), (3000, 2000)):
                l, r = sides(pool, nl, nr, lt, rt)
                name = f"{pname} {lt}/{rt} {nl}x{nr}"
                for kind, sql in SQL.items():
                    rc = "" if kind in ("semi", "anti") else " right_columns=\"k,v\""
                    for algo in ("radix", "auto") + (("sortmerge",) if nl == 300 else ()):
                        check(f"{name} {kind} {algo}",
                              HEAD + f"j = join(a, b) on=k kind={kind} algo={algo}{rc}\n"
                              "output j\n", {"l": l, "r": r}, sql.format(on="l.k = r.k"))
                # residual: the pair must also differ on i
                check(f"{name} residual", HEAD + "j = join(a, b) on=k kind=inner algo=radix "
                      "residual=\"i <> i\" right_columns=\"k,v\"\noutput j\n", {"l": l, "r": r},
                      SQL["inner"].format(on="l.k = r.k and l.i <> r.i"))
                # fused aggregates: one non-null payload a side (inline), then by row
                for cols, lc, rc in (("w", "l.w", "r.w"), ("\"v,w\"", "l.v), sum(l.w", "r.v), sum(r.w")):
                    for kind in ("inner", "left"):
                        check(f"{name} aggregate {cols} {kind}",
                              HEAD + f"j = join(a, b) on=k kind={kind} algo=radix "
                              f"output=aggregate left_columns={cols} right_columns={cols}\n"
                              "output j\n", {"l": l, "r": r},
                              f"select count(*), sum({lc}), sum({rc}) from l "
                              f"{kind} join r on l.k = r.k")
    # composite string + int keys
    for nl, nr in ((0, 3), (1, 1), (500, 300)):
        l, r = table(SHORT, nl, pa.string(), 0.05), table(SHORT, nr, pa.string(), 0.05)
        for kind in ("inner", "left", "right", "full", "semi", "anti"):
            rc = "" if kind in ("semi", "anti") else " right_columns=\"k,v\""
            check(f"composite {nl}x{nr} {kind}",
                  HEAD + f"j = join(a, b) on=\"k,i\" kind={kind} algo=radix{rc}\noutput j\n",
                  {"l": l, "r": r}, SQL[kind].format(on="l.k = r.k and l.i = r.i"))

finish(cases, failures)
