/* libFuzzer target: sequences of public API calls. The input is a byte code: each
 * instruction is an opcode byte and two argument bytes, calling one function on a few
 * slots of engines, plans, queries and tables in whatever order the fuzzer finds, with
 * canned plan texts and options. Every call must succeed or return an error (never a
 * crash, hang or leak); whatever is left is freed at the end and nothing the library
 * allocated may remain. The interpreter keeps the rules the headers state to the
 * caller: a plan and an engine outlive the queries made of them (it never passes a
 * pointer it has freed; a call on an empty slot passes NULL). */
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"

#define SLOTS 3
#define RUN_MS 2000

static const char *const texts[] = {
    "n = gen.sequence rows=1000\nt = aggregate.sum(n) column=x\noutput t\n",
    "a = gen.keys rows=3000 kind=m2m distinct=50 seed=1 payloads=1\n"
    "g = aggregate(a) keys=k aggs=\"count(*), sum(p1)\"\noutput g\n",
    "b = gen.keys rows=500 kind=unique seed=1 payloads=1\n"
    "a = gen.keys rows=2000 kind=fk pk_rows=500 seed=2 payloads=1\n"
    "j = join(a, b) on=k\ns = sort.topk(j) keys=k limit=7\noutput s\noutput j as all\n",
    "n = gen.sequence rows=5000 column=x\nf = filter(n) where=\"x % 7 = 0\"\n"
    "p = project(f) columns=\"y = x * 2\"\ns = sort(p) by=y\noutput s\n",
    "x = scan.table name=t\noutput x\n",
    "n = gen.sequence rows=10\noutput n\noutput n as again\nset morsel_rows = 3\n",
    "bad = no.such.op\n",
    "n = gen.sequence rows=-4\n",
};
#define N_TEXTS (int)(sizeof texts / sizeof *texts)
static const char *const names[] = {"t", "g", "s", "all", "x", "n", "again", "r"};
static const char *const ops[] = {"gen.sequence", "aggregate.sum", "filter", "sort", "nope"};
static const char *const opts[] = {"rows=100", "column=x", "where=\"x > 3\"", "by=x", "", NULL};
static const char *const settings[][2] = {
    {"morsel_rows", "7"}, {"placement", "cpu"}, {"threads", "3"}, {"nope", "1"},
    {"morsel_rows", "-1"}, {"placement", "gpu"},
};

struct state {
    sl_engine_t *eng[SLOTS];
    sl_plan_t *plan[SLOTS];
    sl_query_t *q[SLOTS];
    int q_eng[SLOTS], q_plan[SLOTS]; /* which slots a query was made of */
    sl_table_t *t[SLOTS];
    int last_node[SLOTS];
};

static int engine_in_use(const struct state *s, int i)
{
    for (int k = 0; k < SLOTS; k++)
        if (s->q[k] && s->q_eng[k] == i)
            return 1;
    return 0;
}

static int plan_in_use(const struct state *s, int i)
{
    for (int k = 0; k < SLOTS; k++)
        if (s->q[k] && s->q_plan[k] == i)
            return 1;
    return 0;
}

static void query_destroy(struct state *s, int i)
{
    sl_query_destroy(s->q[i]);
    s->q[i] = NULL;
}

static void table_set(struct state *s, int i, sl_table_t *t)
{
    sl_table_unref(s->t[i]);
    s->t[i] = t;
}

/* The result table read out through an Arrow stream and back, into slot j. */
static void table_round_trip(struct state *s, int i, int j)
{
    struct ArrowArrayStream st;
    memset(&st, 0, sizeof st);
    sl_table_t *back = NULL;
    int rc = s->t[i] ? sl_table_export_stream(s->t[i], &st) : SL_EINVAL;
    fuzz_check_code(rc);
    if (rc == SL_OK)
        fuzz_check_code(sl_table_import_stream(&st, &back));
    if (st.release)
        st.release(&st);
    if (back)
        table_set(s, j, back);
}

static void describe(struct state *s, int i, int what)
{
    const struct sl_explain *x;
    struct sl_error_info info = SL_ERROR_INFO_INIT;
    struct sl_progress pr = SL_PROGRESS_INIT;
    switch (what % 6) {
    case 0: (void)sl_query_explain_json(s->q[i]); break;
    case 1: fuzz_check_code(sl_query_explain(s->q[i], &x)); break;
    case 2: (void)sl_query_profile_json(s->q[i]); break;
    case 3: fuzz_check_code(sl_query_error(s->q[i], &info)); break;
    case 4: fuzz_check_code(sl_query_progress(s->q[i], &pr)); break;
    default: (void)sl_query_errmsg(s->q[i]); (void)sl_engine_errmsg(s->eng[i]); break;
    }
}

/* One instruction: opcode `op` with argument bytes a and b. */
static void step(struct state *s, uint8_t op, uint8_t a, uint8_t b)
{
    int i = a % SLOTS, j = b % SLOTS;
    switch (op % 20) {
    case 0:
        if (!s->eng[i])
            s->eng[i] = fuzz_engine_open();
        break;
    case 1:
        if (!engine_in_use(s, i)) {
            sl_engine_close(s->eng[i]);
            s->eng[i] = NULL;
        }
        break;
    case 2:
        if (!s->plan[i])
            fuzz_check_code(sl_plan_create(&s->plan[i]));
        break;
    case 3:
        if (!plan_in_use(s, i)) {
            sl_plan_destroy(s->plan[i]);
            s->plan[i] = NULL;
        }
        break;
    case 4: fuzz_check_code(sl_plan_parse(s->plan[i], texts[b % N_TEXTS], "fuzz")); break;
    case 5: {
        int in[] = {s->last_node[i]}, node = -1;
        int n_in = b & 1;
        fuzz_check_code(sl_plan_add(s->plan[i], ops[(b >> 1) % 5], in, n_in, opts[(b >> 4) % 6],
                                    &node));
        if (node >= 0)
            s->last_node[i] = node;
        break;
    }
    case 6: fuzz_check_code(sl_plan_output(s->plan[i], s->last_node[i], names[b % 8])); break;
    case 7: fuzz_check_code(sl_plan_register_table(s->plan[i], names[b % 8], s->t[j])); break;
    case 8: {
        int node = -1;
        fuzz_check_code(sl_plan_add_table(s->plan[i], s->t[j], &node));
        if (node >= 0)
            s->last_node[i] = node;
        break;
    }
    case 9:
        fuzz_check_code(sl_plan_option_set(s->plan[i], settings[b % 6][0], settings[b % 6][1]));
        break;
    case 10: {
        if (s->q[i])
            query_destroy(s, i);
        int pe = b % SLOTS, pp = (b / SLOTS) % SLOTS;
        if (sl_query_create(s->eng[pe], s->plan[pp], &s->q[i]) == SL_OK) {
            s->q_eng[i] = pe;
            s->q_plan[i] = pp;
        } else {
            s->q[i] = NULL;
        }
        break;
    }
    case 11: (void)fuzz_query_run(s->q[i], RUN_MS); break;
    case 12: fuzz_check_code(sl_query_start(s->q[i])); break;
    case 13: fuzz_check_code(sl_query_wait(s->q[i])); break;
    case 14: sl_query_cancel(s->q[i]); break;
    case 15: query_destroy(s, i); break;
    case 16: {
        sl_table_t *t = NULL;
        if (sl_query_result(s->q[i], names[b % 8], &t) == SL_OK)
            table_set(s, j, t);
        break;
    }
    case 17: table_set(s, i, NULL); break;
    case 18: table_round_trip(s, i, j); break;
    default: describe(s, i, b); break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct state s;
    memset(&s, 0, sizeof s);
    for (size_t k = 0; k + 3 <= size && k < 3 * 64; k += 3)
        step(&s, data[k], data[k + 1], data[k + 2]);
    /* A started query that nobody waited for is waited for by its destroy. */
    for (int i = 0; i < SLOTS; i++)
        query_destroy(&s, i);
    for (int i = 0; i < SLOTS; i++) {
        table_set(&s, i, NULL);
        sl_plan_destroy(s.plan[i]);
        sl_engine_close(s.eng[i]);
    }
    fuzz_check_no_live_allocs();
    return 0;
}
