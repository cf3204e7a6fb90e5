/* Placement: which device runs the tasks of a pipeline.
 *
 * Forced placement wins: a node placed with sl_plan_place, or the engine's placement
 * (config or SLUICE_PLACEMENT). A pipeline can run on a GPU when at least one of its
 * phases has a CUDA implementation; phases without one run on the host inside the GPU
 * task (a segment boundary: the runtime moves the batch across).
 *
 * Left to the engine (SL_PLACE_AUTO), the rule is StarPU's dmda, at pipeline level:
 *
 *   finish(d) = wait(d) + transfer(d) + compute(d)
 *   wait(d)     = rows already queued on d's workers * ns_per_row(d) / workers(d)
 *   transfer(d) = bytes of the pipeline's input that are not on d / link bandwidth
 *                 (rows x the source schema's row bytes: each type's width, a DICT
 *                 column its 4-byte codes, sl__schema_row_bytes)
 *   compute(d)  = (rows * ns_per_row(d) + tasks(d) * task_ns(d)) / min(workers(d), tasks(d))
 *
 * except that a GPU overlaps one morsel's copies with another's kernels: over n GPU
 * morsels, transfer + compute becomes max(transfer, compute) + min(transfer, compute) / n.
 *
 * where ns_per_row(d) is the pipeline's measured cost on d, keyed by its operators'
 * names ("scan.table>test.affine>test.sum"): an exponential average kept by the engine,
 * fed after every task, saved to the engine's cost cache file when one is set. Never
 * measured on d, the phases' cost functions are asked; with neither, the pipeline stays
 * on the CPU, where every operator can run.
 *
 * The inputs of one multi-input sink (a join's build and probe sides) are placed
 * together: each compares the sums of its own and its siblings' estimates, so both go
 * where the pair is cheaper (sibling_sums).
 *
 * Co-processing (issue 8): a pipeline whose nodes all allow it (sl_op_def.can_split) may
 * run its morsels on the CPU workers and a GPU at once. The GPU's copies overlap its
 * kernels there (a split pipeline streams many morsels), so its time is
 * gpu_ov = max(compute, transfer), and the two finish together when
 *
 *   f * gpu_ov = (1 - f) * cpu_ns,  so  f = cpu_ns / (cpu_ns + gpu_ov)   (GPU's share)
 *   split_ns   = max(cpu_ns * gpu_ov / (cpu_ns + gpu_ov), bytes / host_bw)
 *
 * The second term: the input crosses the host's memory bus once, whichever device reads
 * it, and the CPU's reads and the GPU's copies share it. host_bw is the option host_gbps,
 * else taken to be the link's: the H100 host's memcpy (45-53 GB/s) is no faster than its
 * link (52 GB/s), and there the GPU alone already reads the input at the memory's speed
 * (bench/RESULTS.md, "CPU+GPU co-processing"), so a pipeline bound by its copies is not split.
 * Left to the engine, a pipeline is split when the better device alone would take more
 * than 1.1 * split_ns (the split's merge and imbalance are not free); placement
 * SL_PLACE_COPROCESS splits whenever the nodes allow it. The runtime hands morsels out
 * dynamically (exec.c), so f is only the estimate explain shows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"
#include "gpu_int.h"
#include "plugin_int.h"

/* Split only when the better single device would take this much longer. */
#define SPLIT_GAIN 1.1

static bool phase_has_cuda(const struct sl_phase *ph)
{
    for (unsigned i = 0; ph && i < ph->n_impls; i++)
        if (ph->impls[i].device == SL_DEVICE_CUDA)
            return true;
    return false;
}

static const struct sl_phase *stage_phase(const struct sl__pipeline *p, int stage)
{
    if (stage < 0)
        return p->source->op->def->source;
    if (stage < p->n_chain)
        return p->chain[stage]->op->def->execute;
    return p->sink->op->def->sink;
}

static struct sl__opstate *stage_op(const struct sl__pipeline *p, int stage)
{
    if (stage < 0)
        return p->source;
    return stage < p->n_chain ? p->chain[stage] : p->sink;
}

bool sl__pipeline_gpu_capable(const struct sl__pipeline *p)
{
    for (int s = -1; s <= p->n_chain; s++)
        if (phase_has_cuda(stage_phase(p, s)))
            return true;
    return false;
}

void sl__pipeline_signature(struct sl__pipeline *p)
{
    size_t len = 0;
    p->signature[0] = 0;
    for (int s = -1; s <= p->n_chain && len < sizeof p->signature; s++)
        len += (size_t)snprintf(p->signature + len, sizeof p->signature - len, "%s%s",
                                s < 0 ? "" : ">", stage_op(p, s)->op->def->name);
}

bool sl__pipeline_splittable(const struct sl__pipeline *p)
{
    for (int s = -1; s <= p->n_chain; s++) {
        const struct sl_op *op = stage_op(p, s)->op;
        if (op->placement != SL_PLACE_AUTO || !sl__op_call_can_split(op->def, op))
            return false;
    }
    return true;
}

/* Estimated ns per row of the pipeline on `kind`: its measured history, else the sum of
 * its phases' cost functions (seconds per million rows), else < 0 (unknown). */
static double pipeline_cost(struct sl_query *q, const struct sl__pipeline *p,
                            enum sl_device_kind kind)
{
    double c = sl__cost_lookup(q->eng, p->signature, kind);
    if (c >= 0)
        return c;
    double total = 0;
    for (int s = -1; s <= p->n_chain; s++) {
        const struct sl_phase *ph = stage_phase(p, s);
        if (!ph || !ph->cost)
            return -1;
        double sec = ph->cost(stage_op(p, s)->op, kind, 1000000);
        if (sec < 0)
            return -1;
        total += sec * 1e3;
    }
    return total;
}

/* Records why a pipeline goes where it goes (for explain); `why` may be NULL. */
#define WHY(...) (why ? (void)snprintf(why, cap, __VA_ARGS__) : (void)0)

enum { DECIDE_BY_COST = -2 };

/* The device a pipeline goes to whatever the costs (forced, no GPU, not GPU-capable,
 * reading a GPU's results), with why; DECIDE_BY_COST when the engine chooses, *forced
 * then being auto or co-processing and *gpu the GPU it would use. */
static int fixed_device(struct sl_query *q, const struct sl__pipeline *p, char *why, size_t cap,
                        enum sl_placement *forced_out, int *gpu_out)
{
    sl_engine_t *eng = q->eng;
    enum sl_placement forced = SL_PLACE_AUTO;
    for (int s = -1; s <= p->n_chain; s++) {
        enum sl_placement pl = stage_op(p, s)->op->placement;
        if (pl == SL_PLACE_GPU)
            forced = SL_PLACE_GPU;
        else if (pl == SL_PLACE_CPU && forced == SL_PLACE_AUTO &&
                 phase_has_cuda(stage_phase(p, s)))
            forced = SL_PLACE_CPU;
    }
    bool by_node = forced != SL_PLACE_AUTO;
    if (forced == SL_PLACE_AUTO)
        forced = q->opts.placement;
    *forced_out = forced;
    const char *by = by_node ? "a 'place' of one of its nodes"
                              : "the engine's placement option (--placement)";
    if (eng->n_gpus == 0) {
        if (forced == SL_PLACE_GPU)
            WHY("forced to the GPU by %s, but no usable GPU is present: falls back to the CPU",
                by);
        else
            WHY("no GPU in use");
        return -1;
    }
    if (!sl__pipeline_gpu_capable(p)) {
        WHY("%sno operator of it has a GPU implementation",
            forced == SL_PLACE_GPU ? "forced to the GPU, but " : "");
        return -1;
    }
    /* Results a GPU finalize left in its memory are read there (op.h, "GPU placement"). */
    if (forced != SL_PLACE_CPU && p->source->home_gpu >= 0 && phase_has_cuda(stage_phase(p, -1))) {
        WHY("reads results its source left on GPU %d", p->source->home_gpu);
        return p->source->home_gpu;
    }
    /* The GPU used: spread pipelines over the GPUs round-robin. */
    *gpu_out = eng->gpu_ordinals[p->id % eng->n_gpus];
    if (forced == SL_PLACE_GPU) {
        WHY("forced to the GPU by %s", by);
        return *gpu_out;
    }
    if (forced == SL_PLACE_CPU) {
        WHY("forced to the CPU by %s", by);
        return -1;
    }
    return DECIDE_BY_COST;
}

/* A pipeline's estimates (ns) on the CPU workers, on a GPU (copies overlapped across
 * morsels) and co-processed, from what sl__place_estimate takes (exec_int.h); pure
 * arithmetic, so the unit tests check the rules without a GPU. */
void sl__place_estimate(const struct sl__place_input *in, struct sl__place_estimate *e)
{
    double rows = in->rows, bytes = in->bytes;
    double link = in->link_gbps > 0 ? in->link_gbps : 25.0; /* GB/s = bytes/ns */
    /* Each task also pays its device's fixed cost (cost.c), which the history leaves out. */
    double cpu_tasks = ceil(rows / in->morsel_rows_cpu);
    cpu_tasks = cpu_tasks < 1 ? 1 : cpu_tasks;
    double chunks = ceil(rows / in->morsel_rows_gpu);
    chunks = chunks < 1 ? 1 : chunks;
    /* The history is one thread's ns per row: the workers share the tasks, but a pipeline
     * of fewer tasks than workers runs on that many only. */
    double cpu_par = cpu_tasks < in->threads ? cpu_tasks : in->threads;
    e->cpu_ns = (rows * in->cpu_ns_per_row + cpu_tasks * sl__cost_task_ns(SL_DEVICE_CPU)) / cpu_par;
    double gpu_work = rows * in->gpu_ns_per_row + chunks * sl__cost_task_ns(SL_DEVICE_CUDA);
    double xfer = bytes / link;
    e->gpu_ov = gpu_work > xfer ? gpu_work : xfer;
    /* One GPU task per morsel: the copies of one overlap the kernels of another
     * (gpu_worker.c), so n morsels take the longer of the two plus 1/n of the shorter. */
    e->gpu_ns = e->gpu_ov + (gpu_work + xfer - e->gpu_ov) / chunks;
    double host_bw = in->host_gbps > 0 ? in->host_gbps : link;
    e->split_ns = e->cpu_ns * e->gpu_ov / (e->cpu_ns + e->gpu_ov);
    e->split_ns = e->split_ns > bytes / host_bw ? e->split_ns : bytes / host_bw;
    e->known = true;
}

/* The estimates of pipeline p at these ns per row on one CPU thread and on the GPU. */
static struct sl__place_estimate estimate_of(struct sl_query *q, const struct sl__pipeline *p,
                                             double cpu, double gpu_c)
{
    struct sl__place_estimate e = {.known = false};
    double rows = p->source->op->rows_estimate > 0 ? (double)p->source->op->rows_estimate : 1e6;
    struct sl__place_input in = {
        .rows = rows,
        .bytes = rows * (double)sl__schema_row_bytes(p->source->op->schema),
        .cpu_ns_per_row = cpu,
        .gpu_ns_per_row = gpu_c,
        .morsel_rows_cpu = (double)q->opts.morsel_rows_cpu,
        .morsel_rows_gpu = (double)q->opts.morsel_rows_gpu,
        .threads = q->eng->n_threads,
        .link_gbps = q->eng->link_gbps,
        .host_gbps = q->opts.host_gbps,
    };
    sl__place_estimate(&in, &e);
    return e;
}

static struct sl__place_estimate estimate(struct sl_query *q, const struct sl__pipeline *p)
{
    double cpu = pipeline_cost(q, p, SL_DEVICE_CPU), gpu = pipeline_cost(q, p, SL_DEVICE_CUDA);
    if (cpu < 0 || gpu < 0)
        return (struct sl__place_estimate){.known = false};
    return estimate_of(q, p, cpu, gpu);
}

/* The inputs of one multi-input sink (a join's build and probe sides) go to one device:
 * its finalize runs where the sides were sunk, so a side sunk elsewhere crosses the link
 * first, and a build on the CPU beside a probe on the GPU is never the cheaper plan. The
 * estimates of every sibling the engine places by cost are summed; *n_sides counts the
 * pipelines summed (1: no sibling). (`bench mixed` at 2^22 rows, H100 2026-11-26: the
 * small join's 1,024-row build went to the CPU and its 16,384-row probe to the GPU in
 * one run of ten, 1.15x the GPU's time.) */
static void sibling_sums(struct sl_query *q, const struct sl__pipeline *p,
                         const struct sl__place_estimate *own, double *cpu_ns, double *gpu_ns, int *n_sides)
{
    *cpu_ns = own->cpu_ns, *gpu_ns = own->gpu_ns, *n_sides = 1;
    const struct sl__opstate *sk = p->sink;
    for (int i = 0; sk && sk->n_pipes_in > 1 && i < sk->n_pipes_in; i++) {
        const struct sl__pipeline *o = &q->pipes[sk->pipe0 + i];
        enum sl_placement forced;
        int gpu;
        if (o == p || o->sink != sk || fixed_device(q, o, NULL, 0, &forced, &gpu) != DECIDE_BY_COST)
            continue;
        struct sl__place_estimate oe = estimate(q, o);
        if (!oe.known)
            continue;
        *cpu_ns += oe.cpu_ns, *gpu_ns += oe.gpu_ns, (*n_sides)++;
    }
}

int sl__place_pipeline_why(struct sl_query *q, struct sl__pipeline *p, char *why, size_t cap)
{
    enum sl_placement forced = SL_PLACE_AUTO;
    int gpu = -1;
    p->split = false;
    p->split_gpu_share = -1;
    int fixed = fixed_device(q, p, why, cap, &forced, &gpu);
    if (fixed != DECIDE_BY_COST)
        return fixed;
    const char *by = "the engine's placement option (--placement)";
    bool split_ok = sl__pipeline_splittable(p);
    struct sl__place_estimate e = estimate(q, p);
    if (!e.known) {
        if (forced == SL_PLACE_COPROCESS && split_ok) {
            p->split = true;
            WHY("co-processed with GPU %d, forced by %s (share unknown: no cost)", gpu, by);
            return gpu;
        }
        WHY("cost unknown on the %s: stays on the CPU",
            pipeline_cost(q, p, SL_DEVICE_CPU) < 0 ? "CPU" : "GPU");
        return -1;
    }
    double best_ns = e.gpu_ov < e.cpu_ns ? e.gpu_ov : e.cpu_ns;
    if (split_ok && (forced == SL_PLACE_COPROCESS || best_ns > SPLIT_GAIN * e.split_ns)) {
        p->split = true;
        p->split_gpu_share = e.cpu_ns / (e.cpu_ns + e.gpu_ov);
        WHY("co-processed with GPU %d%s: ~%.0f%% of rows to the GPU, est. %.3g ms (GPU alone "
            "%.3g, CPU %.3g)", gpu, forced == SL_PLACE_COPROCESS ? " (forced)" : "",
            100 * p->split_gpu_share, e.split_ns / 1e6, e.gpu_ov / 1e6, e.cpu_ns / 1e6);
        return gpu;
    }
    double cpu_sum, gpu_sum;
    int n_sides;
    sibling_sums(q, p, &e, &cpu_sum, &gpu_sum, &n_sides);
    if (n_sides > 1)
        WHY("estimated %.3g ms on GPU %d (copies included) against %.3g ms on the CPU; with "
            "the %d other input%s of its sink, which go%s to the same device: %.3g against "
            "%.3g ms", e.gpu_ns / 1e6, gpu, e.cpu_ns / 1e6, n_sides - 1, n_sides > 2 ? "s" : "",
            n_sides > 2 ? "" : "es", gpu_sum / 1e6, cpu_sum / 1e6);
    else
        WHY("estimated %.3g ms on GPU %d (copies included) against %.3g ms on the CPU%s",
            e.gpu_ns / 1e6, gpu, e.cpu_ns / 1e6,
            forced == SL_PLACE_COPROCESS ? "; its nodes do not allow a split" : "");
    return gpu_sum < cpu_sum ? gpu : -1;
}

int sl__place_pipeline(struct sl_query *q, struct sl__pipeline *p)
{
    return sl__place_pipeline_why(q, p, NULL, 0);
}

/* The GPU pipeline p will most likely run on alone, guessed when the query's graph is
 * built (its start then goes to that GPU's worker, exec.c), or -1: the CPU, a split, or
 * no guess. The pipeline is placed for real when it starts; a wrong guess costs a hop.
 * A source that is a sink leaves its results on the GPU its inputs ran on (its
 * home_gpu, known only after its finalize): `guess` holds the guesses of the pipelines
 * before p, -1 where none, and sink inputs come before the pipelines that read the sink. */
int sl__place_guess(struct sl_query *q, struct sl__pipeline *p, const int *guess)
{
    const struct sl__opstate *src = p->source;
    if (src->n_pipes_in > 0 && src->op->placement != SL_PLACE_CPU &&
        phase_has_cuda(stage_phase(p, -1)))
        for (int k = src->pipe0; k < src->pipe0 + src->n_pipes_in && k < p->id; k++)
            if (guess[k] >= 0)
                return guess[k];
    int dev = sl__place_pipeline(q, p);
    bool split = p->split;
    p->split = false;
    p->split_gpu_share = -1;
    return split ? -1 : dev;
}

/* The estimated ms of pipeline p on `device` (-1: the CPU), or co-processed, or < 0 when
 * its cost there is unknown (explain sets it beside the measured time). */
double sl__pipeline_estimate_ms(struct sl_query *q, const struct sl__pipeline *p, int device,
                                bool split)
{
    double cpu = pipeline_cost(q, p, SL_DEVICE_CPU), gpu = pipeline_cost(q, p, SL_DEVICE_CUDA);
    if (split ? cpu < 0 || gpu < 0 : (device >= 0 ? gpu : cpu) < 0)
        return -1;
    struct sl__place_estimate e = estimate_of(q, p, cpu < 0 ? gpu : cpu, gpu < 0 ? cpu : gpu);
    return (split ? e.split_ns : device >= 0 ? e.gpu_ns : e.cpu_ns) / 1e6;
}

/* ns per row of pipeline p on `kind` as placement sees it (history, else cost
 * functions), or < 0 when unknown. */
double sl__pipeline_ns_per_row(struct sl_query *q, const struct sl__pipeline *p,
                               enum sl_device_kind kind)
{
    return pipeline_cost(q, p, kind);
}

bool sl__pipeline_source_on_host(struct sl_query *q, struct sl__pipeline *p)
{
    const struct sl_op_def *d = p->source->op->def;
    if (!(d->flags & SL_OP_SINK) || p->source->op->placement == SL_PLACE_GPU)
        return false;
    /* The CUDA source, where there is one, reads the GPU finalize's result: it refuses
     * after a host finalize, also one a GPU finalize handed over to (a join's, on nulls
     * it counted or colliding hashes); can_run sees only the operator's state. */
    sl_task_t t = {.q = q, .os = p->source, .pipe = p, .stage = -1, .kind = SL_DEVICE_CUDA,
                   .count = 1};
    return !sl__phase_impl(d->source, SL_DEVICE_CUDA, &t);
}

/* Whether stage `s` of a GPU task runs its CUDA implementation (else its CPU one). */
bool sl__stage_on_gpu(const struct sl__pipeline *p, int stage)
{
    const struct sl_phase *ph = stage_phase(p, stage);
    return phase_has_cuda(ph) && stage_op(p, stage)->op->placement != SL_PLACE_CPU;
}
