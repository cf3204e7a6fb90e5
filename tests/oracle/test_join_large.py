"""Joins at scale against DuckDB: a 1M-row probe side against a 250k-row build side,
every join kind (every CPU algorithm for inner, full and anti), on int64 keys with nulls, duplicates, a hot key and
the extremes (INT64_MIN, INT64_MAX, the int32 limits: values, not null markers), and on
int32 keys with their extremes; float64 and float32 payloads with NaN, -0.0 and the
infinities. Each result is compared with DuckDB's as a full row multiset (EXCEPT ALL
both ways, inside DuckDB, NULL equal to NULL). Exits 1 listing every case that differs.
An argument runs only the cases whose name contains it (e.g. "k inner")."""
import sys

from oracle_common import require_modules, Sluice, SluiceError

pa, duckdb = require_modules()

N_PROBE, N_BUILD = 1_000_000, 250_000
EXTREMES = "[-9223372036854775808, 9223372036854775807, -2147483648, 2147483647, 0, -1]"

con = duckdb.connect()
con.execute("select setseed(0.24)").fetchall()


def side(n, key_range, hot, extreme):
    """n rows: k int64 (5% null, a share `hot` of a hot key, a share `extreme` of the six
    extremes, else uniform over key_range), k32 the same over int32 with its limits,
    f a float64 and g a float32 payload with the special values, v the row number. The
    build side keeps hot and extreme shares tiny, so matches stay near a few million."""
    return con.sql(f"""
        select case when r < 0.05 then null
                    when r < 0.05 + {hot} then 42
                    when r < 0.05 + {hot} + {extreme} then {EXTREMES}[1 + (i % 6)::int]
                    else (random() * {key_range})::bigint end as k,
               case when r < 0.05 then null
                    when r < 0.05 + {extreme} then [-2147483648, 2147483647][1 + (i % 2)::int]
                    else (random() * {key_range})::int end as k32,
               case when i % 97 = 0 then 'nan'::double when i % 89 = 0 then -0.0
                    when i % 83 = 0 then 'inf'::double when i % 7 = 0 then null
                    else random() * 1e6 - 5e5 end as f,
               case when i % 91 = 0 then '-inf'::float else (random() * 100)::float end as g,
               i as v
        from (select range as i, random() as r from range({n}))""").arrow()


def as_table(x):
    return x.read_all() if hasattr(x, "read_all") else x


L = as_table(side(N_PROBE, 400_000, 0.05, 0.01))  # 50k hot rows, 10k extremes
R = as_table(side(N_BUILD, 400_000, 2e-5, 5e-5))  # about 5 hot rows, 12 extremes
con.register("l", L)
con.register("r", R)

SQL = {
    "inner": "select l.*, r.f, r.g, r.v from l join r on l.{k} = r.{k}",
    "left": "select l.*, r.f, r.g, r.v from l left join r on l.{k} = r.{k}",
    "right": "select l.*, r.f, r.g, r.v from l right join r on l.{k} = r.{k}",
    "full": "select l.*, r.f, r.g, r.v from l full join r on l.{k} = r.{k}",
    "semi": "select l.* from l where exists (select 1 from r where r.{k} = l.{k})",
    "anti": "select l.* from l where not exists (select 1 from r where r.{k} = l.{k})",
}


def differences(got, want):
    """Rows of got missing from the table want and the reverse (as multisets), or None."""
    con.register("got", got)
    extra = con.sql(f"select count(*) from (select * from got except all select * from {want})")
    missing = con.sql(f"select count(*) from (select * from {want} except all select * from got)")
    extra, missing = extra.fetchall()[0][0], missing.fetchall()[0][0]
    n_want = con.sql(f"select count(*) from {want}").fetchall()[0][0]
    con.unregister("got")
    if extra or missing or got.num_rows != n_want:
        return f"{got.num_rows} rows, want {n_want}: {extra} unexpected, {missing} missing"
    return None


failures, cases = [], 0
with Sluice() as sl:
    hl, hr = sl.import_table(L), sl.import_table(R)
    # every kind at this scale; every algorithm for inner, full and anti (the smaller
    # oracles, join_types and join_kinds, cross every kind with every algorithm)
    for key, kinds in (("k", SQL), ("k32", ("inner", "full"))):
        for kind in kinds:
            algos = ("radix", "nopart", "sortmerge") if key == "k" and kind in (
                "inner", "full", "anti") else ("auto",)
            if len(sys.argv) > 1 and not any(sys.argv[1] in f"{key} {kind} {a}" for a in algos):
                continue
            con.execute(f"create or replace temp table want as {SQL[kind].format(k=key)}")
            for algo in algos:
                name = f"{key} {kind} {algo}"
                if len(sys.argv) > 1 and sys.argv[1] not in name:
                    continue
                cases += 1
                rc = "" if kind in ("semi", "anti") else ' right_columns="f,g,v"'
                plan = ("a = scan.table name=l\nb = scan.table name=r\n"
                        f"j = join(a, b) on={key} kind={kind} algo={algo}{rc}\noutput j\n")
                try:
                    got = sl.run(plan, {"l": hl, "r": hr})["j"]
                    d = differences(got, "want")
                except SluiceError as e:
                    d = str(e)
                print(f"{name}: {d or 'same'}", flush=True)
                if d:
                    failures.append(f"{name}: {d}")
    sl.release(hl)
    sl.release(hr)

print(f"{cases} cases, {len(failures)} differ")
for f in failures:
    print("  " + f)
sys.exit(1 if failures else 0)
