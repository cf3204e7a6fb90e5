/* Hands Arrow arrays to sluice and takes the result out as an Arrow stream: builds a
 * struct array of one int64 column with a null (as any Arrow producer would, through the
 * C Data Interface), imports it zero-copy, sums it with a plan, and reads the result back
 * through the C Stream Interface.   ./arrow_in_out   prints "count=4 sum=10" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

/* --- a tiny Arrow producer: the release callbacks free what it allocated --- */
static int64_t values[5] = {1, 2, 99, 3, 4};
static uint8_t validity[1] = {0x1b}; /* rows 0, 1, 3, 4 valid; row 2 null */

static void release_child(struct ArrowArray *a)
{
    free(a->buffers);
    a->release = NULL;
}

static void release_struct(struct ArrowArray *a)
{
    a->children[0]->release(a->children[0]);
    free(a->children[0]);
    free(a->children);
    free(a->buffers);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s)
{
    for (int64_t i = 0; i < s->n_children; i++) {
        s->children[i]->release = NULL;
        free(s->children[i]);
    }
    free(s->children);
    s->release = NULL;
}

static void produce(struct ArrowArray *arr, struct ArrowSchema *sch)
{
    struct ArrowArray *x = calloc(1, sizeof *x);
    x->length = 5;
    x->null_count = 1;
    x->n_buffers = 2;
    x->buffers = calloc(2, sizeof(void *));
    x->buffers[0] = validity;
    x->buffers[1] = values;
    x->release = release_child;
    memset(arr, 0, sizeof *arr);
    arr->length = 5;
    arr->n_buffers = 1;
    arr->buffers = calloc(1, sizeof(void *));
    arr->n_children = 1;
    arr->children = calloc(1, sizeof(struct ArrowArray *));
    arr->children[0] = x;
    arr->release = release_struct;

    struct ArrowSchema *xs = calloc(1, sizeof *xs);
    xs->format = "l";
    xs->name = "x";
    xs->flags = ARROW_FLAG_NULLABLE;
    xs->release = release_schema;
    memset(sch, 0, sizeof *sch);
    sch->format = "+s";
    sch->name = "";
    sch->n_children = 1;
    sch->children = calloc(1, sizeof(struct ArrowSchema *));
    sch->children[0] = xs;
    sch->release = release_schema;
}

int main(void)
{
    struct ArrowArray arr;
    struct ArrowSchema sch;
    produce(&arr, &sch);
    sl_batch_t *batch;
    if (sl_batch_import_arrow(&arr, &sch, &batch) != SL_OK) { /* moves arr and sch */
        fprintf(stderr, "import: %s\n", sl_last_errmsg());
        return 1;
    }
    sl_table_t *in;
    sl_table_create(&in);
    sl_table_append(in, batch);
    sl_batch_unref(batch);
    /* arr and sch were moved into sluice (their release is NULL now): the producer's
     * release callbacks run when sluice drops the last reference to the buffers. */

    sl_engine_t *eng;
    sl_engine_open(&eng, NULL);
    sl_plan_t *plan;
    int s, a;
    sl_plan_create(&plan);
    sl_plan_add_table(plan, in, &s);
    sl_plan_add(plan, "aggregate.sum", (int[]){s}, 1, "column=x", &a);
    sl_plan_output(plan, a, "total");
    sl_query_t *q;
    int rc = sl_query_create(eng, plan, &q);
    if (rc == SL_OK)
        rc = sl_query_run(q);
    int exit_code = 1;
    if (rc != SL_OK) {
        fprintf(stderr, "query: %s\n", q ? sl_query_errmsg(q) : sl_plan_errmsg(plan));
    } else {
        sl_table_t *out;
        sl_query_result(q, "total", &out);
        struct ArrowArrayStream stream;
        sl_table_export_stream(out, &stream); /* the stream holds its own reference */
        sl_table_unref(out);
        struct ArrowSchema os;
        struct ArrowArray oa;
        stream.get_schema(&stream, &os);
        if (stream.get_next(&stream, &oa) == 0 && oa.release) {
            const int64_t *cnt = oa.children[0]->buffers[1];
            const int64_t *sum = oa.children[1]->buffers[1];
            printf("count=%lld sum=%lld\n", (long long)cnt[oa.children[0]->offset],
                   (long long)sum[oa.children[1]->offset]);
            exit_code = cnt[oa.children[0]->offset] == 4 && sum[oa.children[1]->offset] == 10 ? 0 : 1;
            oa.release(&oa);
        }
        os.release(&os);
        stream.release(&stream);
    }
    sl_query_destroy(q);
    sl_plan_destroy(plan);
    sl_table_unref(in);
    sl_engine_close(eng);
    return exit_code;
}
