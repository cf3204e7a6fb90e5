/* The engine options: one row per field of struct sl_engine_config that a user may set.
 * docs/OPTIONS.md is this table in prose; test_options checks that the two agree and
 * that every default below is what sl_engine_config_init writes. */
#include <stdint.h>

#include "engine_option_int.h"

#define FIELD(f, kind) offsetof(struct sl_engine_config, f), SL__OF_##kind
#define Q SL_ENGINE_OPT_QUERY
#define DBG (SL_ENGINE_OPT_QUERY | SL_ENGINE_OPT_DEBUG)
#define BIG INT64_MAX

const struct sl__option sl__options[] = {
    /* read when the engine opens */
    {{"threads", SL_ENGINE_OPT_INT, 0, "0", "CPU worker threads; 0 = one per online core.", NULL,
      0, 4096}, FIELD(n_threads, INT)},
    {{"gpus", SL_ENGINE_OPT_INT, 0, "-1", "GPUs to use; -1 = every usable GPU, 0 = none.", NULL,
      -1, 1024}, FIELD(n_gpus, INT)},
    {{"host_mem", SL_ENGINE_OPT_INT, 0, "0",
      "Bytes of host memory for query state; 0 = 80% of the RAM.", NULL, 0, BIG},
     FIELD(host_mem_limit, I64)},
    {{"gpu_mem", SL_ENGINE_OPT_INT, 0, "0",
      "Bytes of device memory per GPU; 0 = 90% of its free memory.", NULL, 0, BIG},
     FIELD(gpu_mem_limit, I64)},
    {{"split_gpu", SL_ENGINE_OPT_BOOL, 0, "false",
      "Presents the GPUs as `gpus` logical devices (round robin; several per GPU share its "
      "memory budget), each with its own streams and worker.", NULL, 0, 1},
     FIELD(split_gpu, INT)},
    {{"gpu_result_pinned", SL_ENGINE_OPT_INT, 0, "0",
      "Bytes of pinned host memory per GPU that results downloaded from it keep, reused "
      "across queries (a download lands where the result stays); past it results are "
      "copied into pageable memory. 0 = host_mem / 8, at most 8 GiB; -1 = none.", NULL, -1,
      BIG}, FIELD(gpu_result_pinned, I64)},
    {{"pin_threads", SL_ENGINE_OPT_BOOL, 0, "true", "Pins the CPU workers to cores.", NULL, 0, 1},
     FIELD(pin_threads, INT)},
    {{"pin_gpu_workers", SL_ENGINE_OPT_BOOL, 0, "false",
      "Pins each GPU worker's thread (it launches its GPU's work and waits for it) to a core "
      "of the GPU's NUMA node, the last one no other GPU worker took (with pin_threads): "
      "steadier from one engine to the next, but slower where that core's CPU worker also "
      "runs (bench mixed 2^22 on an H100: 8.2 ms against 7.5 unpinned); false leaves it to "
      "the OS.", NULL, 0, 1}, FIELD(pin_gpu_workers, INT)},
    {{"gpu_depth", SL_ENGINE_OPT_INT, 0, "0",
      "GPU tasks in flight per GPU (the next ones' copies overlap the current kernels); "
      "0 = 4.", NULL, 0, 64}, FIELD(gpu_depth, INT)},
    {{"cost_cache", SL_ENGINE_OPT_STRING, 0, "",
      "File keeping the calibrated throughput models between runs; \"\" = none.", NULL, 0,
      0}, FIELD(cost_cache_path, STR)},
    {{"trace", SL_ENGINE_OPT_STRING, 0, "",
      "File to write a Chrome trace of every query to; \"\" = none.", NULL, 0, 0},
     FIELD(trace_path, STR)},
    {{"mpi", SL_ENGINE_OPT_BOOL, 0, "false",
      "Joins the MPI job the process was started in (mpirun): rank and ranks come from "
      "MPI and exchange operators move rows between the ranks.", NULL, 0, 1},
     FIELD(mpi, INT)},
    {{"rank", SL_ENGINE_OPT_INT, 0, "0",
      "This process's rank: generators make its share of their rows; set by MPI with "
      "mpi.", NULL, 0, 1 << 20}, FIELD(rank, INT)},
    {{"ranks", SL_ENGINE_OPT_INT, 0, "1",
      "Processes sharing the data (each makes 1/ranks of every generated table); set by "
      "MPI with mpi.", NULL, 1, 1 << 20}, FIELD(ranks, INT)},
    /* query options: also on an open engine and per plan */
    {{"exchange_timeout", SL_ENGINE_OPT_FLOAT, Q, "0",
      "Seconds an exchange waits for the other ranks without progress before the query "
      "fails; 0 = 60.", NULL, 0, 0}, FIELD(exchange_timeout, F64)},
    {{"exchange_packet_bytes", SL_ENGINE_OPT_INT, Q, "0",
      "Bytes per exchange packet; 0 = 1 MiB.", NULL, 0, (int64_t)1 << 30},
     FIELD(exchange_packet_bytes, I64)},
    {{"exchange_credits", SL_ENGINE_OPT_INT, Q, "0",
      "Exchange packets in flight from one rank to another; 0 = 4.", NULL, 0, 1024},
     FIELD(exchange_credits, INT)},
    {{"exchange_bulk_bytes", SL_ENGINE_OPT_INT, Q, "0",
      "The most host memory (bytes) an exchange between ranks may hold to move its rows "
      "all at once (the runs a rank sends and receives); past it, or past the host budget "
      "left, every rank of the exchange sends packets instead; 0 = the host budget alone.",
      NULL, 0, BIG}, FIELD(exchange_bulk_bytes, I64)},
    {{"exchange_gbps", SL_ENGINE_OPT_FLOAT, Q, "0",
      "Bandwidth between ranks (GB/s) that explain's exchange estimates assume; 0 = 5 "
      "(sluice bench exchange measures it).", NULL, 0, 0}, FIELD(exchange_gbps, F64)},
    {{"placement", SL_ENGINE_OPT_ENUM, Q, "auto",
      "Where pipelines run: chosen by estimated cost, CPU only, GPU where possible, or "
      "split across both (co-processing).", "auto,cpu,gpu,coprocess", 0, 3},
     FIELD(placement, INT)},
    {{"morsel_rows", SL_ENGINE_OPT_INT, Q, "0", "Rows per CPU morsel; 0 = 122880.", NULL, 0, BIG},
     FIELD(morsel_rows_cpu, I64)},
    {{"gpu_morsel_rows", SL_ENGINE_OPT_INT, Q, "0", "Rows per GPU chunk; 0 = 16 Mi.", NULL, 0,
      BIG}, FIELD(morsel_rows_gpu, I64)},
    {{"gpu_resident_morsel_rows", SL_ENGINE_OPT_INT, Q, "0",
      "Rows per GPU morsel of a table already in that GPU's memory, or of a sort's or "
      "merge's result left there for GPU stages (no copies for small morsels to overlap, "
      "so fewer launches); 0 = 2^28 while gpu_morsel_rows has its "
      "default, else gpu_morsel_rows.", NULL, 0, BIG}, FIELD(gpu_resident_morsel_rows, I64)},
    {{"coproc_morsel_rows", SL_ENGINE_OPT_INT, Q, "0",
      "Rows per morsel of a co-processed pipeline; 0 = about 32 morsels per CPU worker, "
      "between the CPU and GPU morsel sizes.", NULL, 0, BIG}, FIELD(coproc_morsel_rows, I64)},
    {{"coproc_cpu_workers", SL_ENGINE_OPT_INT, Q, "0",
      "CPU workers taking morsels of a co-processed pipeline; 0 = all but one (which keeps "
      "the GPU's copies going).", NULL, 0, 4096}, FIELD(coproc_cpu_workers, INT)},
    {{"host_gbps", SL_ENGINE_OPT_FLOAT, Q, "0",
      "Host memory bandwidth (GB/s) that bounds a co-processed pipeline in placement's "
      "estimate; 0 = the measured host-to-GPU link's.", NULL, 0, 0}, FIELD(host_gbps, F64)},
    {{"deadline_ms", SL_ENGINE_OPT_INT, Q, "0",
      "Milliseconds a query may run after its start; past them it fails with SL_ETIMEDOUT "
      "(\"deadline exceeded\"), as a cancel would. 0 = no deadline.", NULL, 0, BIG},
     FIELD(deadline_ms, I64)},
    {{"multi_gpu", SL_ENGINE_OPT_ENUM, Q, "auto",
      "A join or sort over several GPU devices: auto = when its shape, every device's "
      "memory budget and its size (at least 2^20 rows) allow; off = never; on = whenever "
      "its shape and the budgets allow (docs/MULTI_GPU.md).", "auto,off,on", 0, 2},
     FIELD(multi_gpu, INT)},
    {{"agg_gpu_part_threshold", SL_ENGINE_OPT_INT, Q, "65536",
      "Estimated groups above which the GPU group-by uses one record per group in a "
      "table visited partition by partition (one integer key, integer aggregates, no "
      "nulls) or partitions its input, instead of per-block shared tables merged into "
      "one hash table.", NULL, 1, BIG}, FIELD(agg_gpu_part_threshold, I64)},
    /* debug switches: tests and experiments */
    {{"debug_kmeans_method", SL_ENGINE_OPT_INT, DBG, "-1",
      "Forces the GPU k-means kernel (an SL_K_KMEANS_* number: 1 float32 fused, 2 "
      "multi-pass, 5 2xTF32 fused with exact re-check, 6 float32 fused tile kernel, 7 the "
      "tile kernel with its argmin by pairs of centroids) where it can run; -1 = chosen "
      "by shape.", NULL, -1, 63}, FIELD(debug_kmeans_method, INT)},
    {{"debug_ooc_sort_merge", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "Forces the out-of-core sort's merge onto the CPU or the GPU; late_cuts: as auto, but "
      "the GPU merge's bucket cuts are searched in the sorted runs after pass 1, not found "
      "on the GPU during it.", "auto,cpu,gpu,late_cuts", 0, 3},
     FIELD(debug_ooc_sort_merge, INT)},
    {{"debug_ooc_sort_gather", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "How the out-of-core sort's GPU merge reads each bucket's slices of the sorted runs: "
      "auto (batch up to 128 runs, else kernel), a copy call per slice and column, those "
      "copies batched in one call, or a kernel reading the pinned runs in place "
      "(zero-copy).", "auto,copy,batch,kernel", 0, 3}, FIELD(debug_ooc_sort_gather, INT)},
    {{"debug_ooc_readback", SL_ENGINE_OPT_ENUM, DBG, "copy",
      "How the out-of-core join reads pinned host partitions back: copies, or a kernel "
      "reading host memory (zero-copy).", "copy,kernel", 0, 1},
     FIELD(debug_ooc_readback, INT)},
    {{"debug_join_phase_times", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Times the GPU join's phases with CUDA events and adds them to the query profile, "
      "with the prepare phase's steps (prepare_keys, _sample, _range, _probe, _build, "
      "_rows; the low match ratio filter's in join_cuda_filter.c).",
      NULL, 0, 1}, FIELD(debug_join_phase_times, INT)},
    {{"debug_join_weak_hash", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Keeps only 8 bits of the GPU join's string-key hashes, so that different keys "
      "collide (tests of the collision check).", NULL, 0, 1}, FIELD(debug_join_weak_hash, INT)},
    {{"debug_mgpu_packets", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Moves a multi-device join's or sort's rows through the exchange transport in "
      "packets (receive slots and credits, as between processes) instead of copying them "
      "straight into place.", NULL, 0, 1}, FIELD(debug_mgpu_packets, INT)},
    {{"debug_mgpu_chunk_rows", SL_ENGINE_OPT_INT, DBG, "0",
      "Rows each device partitions at a time in a multi-device hash join, whose copies "
      "leave while it partitions the next; 0 = 2^20; -1 = every device partitions all of "
      "its rows before anything moves (as before the pipelined exchange).", NULL, -1, BIG},
     FIELD(debug_mgpu_chunk_rows, I64)},
    {{"debug_mgpu_copies", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the multi-device exchange between logical devices of one GPU copy each range "
      "(a sender, a receiver, a column) with a copy of its own instead of one kernel per "
      "sender (A/B runs).", NULL, 0, 1}, FIELD(debug_mgpu_copies, INT)},
    {{"debug_gpu_handoffs", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Hands the pipeline starts and sink finalizes that GPU tasks make ready to the CPU "
      "workers, and has the thread waiting for a query on a GPU sleep at once, as before "
      "both were cut (A/B runs of the engine's time between GPU pipelines).", NULL, 0, 1},
     FIELD(debug_gpu_handoffs, INT)},
    {{"debug_exchange_packets", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Makes exchange nodes send their rows between ranks in packets with credits, as "
      "before the bulk exchange, instead of all at once in a few large messages.", NULL,
      0, 1}, FIELD(debug_exchange_packets, INT)},
    {{"debug_agg_gpu_strided_estimate", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the GPU group-by estimate its groups from the distinct keys of its spread sample "
      "alone, as before the bound from the key changes after the sampled rows (A/B runs; "
      "an input sorted by key then looks like one group a row).", NULL, 0, 1},
     FIELD(debug_agg_gpu_strided_estimate, INT)},
    {{"debug_gpu_generic", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Runs every GPU projection in the expression interpreter, GPU group-bys of a few "
      "groups in the shared-table kernels and LIKE's GPU search a byte at a time, as before "
      "register programs, the few-groups kernel and the word search (A/B runs).", NULL, 0, 1},
     FIELD(debug_gpu_generic, INT)},
    {{"debug_agg_gpu_no_lean", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has a GPU group-by of a few thousand groups whose only state is one integer sum "
      "(count, sum, avg) take the general shared-table kernel, as before the kernel "
      "specialized for it (A/B runs).", NULL, 0, 1},
     FIELD(debug_agg_gpu_no_lean, INT)},
    {{"debug_agg_gpu_no_big_table", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has a GPU group-by of millions of groups aggregate partitions of about 2,000 groups "
      "in two blocks an SM, as before the partition kernel's big table (one block an SM, "
      "all its shared memory; A/B runs).", NULL, 0, 1},
     FIELD(debug_agg_gpu_no_big_table, INT)},
    {{"debug_gpu_wide_upload", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has GPU uploads move a pinned table's integer, date, decimal and dict columns at "
      "their full width instead of the narrow copies sl_table_pin makes (A/B runs).", NULL,
      0, 1}, FIELD(debug_gpu_wide_upload, INT)},
    {{"debug_gpu_no_upload_ahead", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has a GPU upload of a pinned table's narrow columns not send the same columns of "
      "the table's next batch ahead, so each task's upload waits for the previous task's "
      "kernels again (A/B runs).", NULL, 0, 1}, FIELD(debug_gpu_no_upload_ahead, INT)},
    {{"debug_join_stream", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "Host-resident inputs of a GPU join: auto = a side past 32 MiB stays in host memory "
      "(batches whose narrow copies save a quarter of their bytes go up through the "
      "sink) and the join uploads its build side, then streams the probe side through the "
      "probe in chunks, downloading each chunk's result while the next one runs (inner joins of "
      "one integer key and fixed-width columns); off = the sink uploads them as before "
      "(A/B runs); on = every host batch stays there (tests); inner = as auto, but semi "
      "and anti joins never stream (under auto they stream the batches the GPU budget "
      "sent to host memory; A/B runs).", "auto,off,on,inner", 0, 3},
     FIELD(debug_join_stream, INT)},
    {{"debug_join_filter", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "GPU join at a low match ratio (an inner or semi join whose probe sample lies mostly "
      "outside the build keys' range): auto = the probe rows inside that range are kept, "
      "then an exact bitmap of their keys keeps the build rows with a partner, and only the "
      "kept rows are packed; range = every row is packed and only the probe rows outside "
      "the range are dropped, as before (A/B runs); fused = as auto, but each side's select, "
      "key gather and packing in one pass (slower on the H100; A/B runs); mask = as auto, "
      "but each side's kept rows marked and counted in one pass, their keys and packed "
      "rows written in a second (slower with 4-byte keys, faster with 8-byte keys on the "
      "H100; A/B runs).",
      "auto,range,fused,mask", 0, 3},
     FIELD(debug_join_filter, INT)},
    {{"debug_join_keep_device", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has a GPU join's sink keep every device batch on the GPU, as before the batches "
      "past the join's share of the GPU budget went to host memory (A/B runs).", NULL, 0,
      1}, FIELD(debug_join_keep_device, INT)},
    {{"debug_join_stream_slots", SL_ENGINE_OPT_INT, DBG, "0",
      "The host-streamed GPU join's probe chunks in GPU memory at once, at most: 0 = as "
      "many as half the GPU budget left holds (the probe side uploads ahead while the table "
      "builds); 2 = one uploading while one is probed, as before 2026-11-27 (A/B runs).",
      NULL, 0, 1024}, FIELD(debug_join_stream_slots, INT)},
    {{"debug_join_stream_table", SL_ENGINE_OPT_ENUM, DBG, "parts",
      "The host-streamed GPU join's table: parts = built chunk by chunk as the build side "
      "arrives (the direct table over the range its first chunk suggests, rebuilt whole "
      "when a later key falls outside it or repeats; else the hash table); whole = after "
      "the whole build side is up, as before 2026-11-27 (A/B runs).", "parts,whole", 0, 1},
     FIELD(debug_join_stream_table, INT)},
    {{"debug_ooc_spill", SL_ENGINE_OPT_ENUM, DBG, "fused",
      "How the out-of-core GPU join's pass 1 spills to pinned host memory and pass 2 joins: "
      "fused = each partitioned chunk copied whole by DMA while the next ones upload, and "
      "count and sums of 4-byte integer aggregates by the join kernel, no output buffers, "
      "with the fanout that fills jobs best (1/16 of 2^27 x 2^27: 92 ms against 114 with "
      "dma, H100); dma = the same spill with session 16's plan for every join (aggregates "
      "materialized and summed per job; A/B runs); blocks = appended to fixed-size blocks "
      "by a kernel that writes the host blocks by zero-copy stores, as before 2026-11-27 "
      "(A/B runs; debug_ooc_readback=kernel applies to it alone); dma_half = dma with half "
      "the budget for the passes' buffers and half for the cache, as before session 16 "
      "(A/B runs).",
      "fused,blocks,dma_half,dma", 0, 3}, FIELD(debug_ooc_spill, INT)},
    {{"debug_smj_cpu_join", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort-merge join merge-join its key ranges in CPU tasks, as "
      "before 2026-11-27, where both sides' runs were merged on the GPU and it would join "
      "them there (A/B runs).", NULL, 0, 1}, FIELD(debug_smj_cpu_join, INT)},
    {{"debug_ooc_graded_runs", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Cuts the out-of-core sort's first and last R rows (R: its run size) into runs of a "
      "quarter, a quarter and a half, so that a pass's first upload and last download, "
      "which overlap nothing, are shorter; four more runs (A/B runs: not faster in its one "
      "timing).", NULL, 0, 1}, FIELD(debug_ooc_graded_runs, INT)},
    {{"debug_agg_gpu_big_strict", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has a GPU group-by whose group estimate asks for 13 radix bits take the smaller "
      "partition table at 13 bits, as before the big table at 12 where it fills at most 0.6 "
      "of its slots (A/B runs).", NULL, 0, 1}, FIELD(debug_agg_gpu_big_strict, INT)},
    {{"debug_ooc_unpacked_runs", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort keep an int32 key and one 4-byte column as two columns in "
      "its sorted runs, as before 2026-11-27, not packed into one 8-byte row each (whose "
      "slices are one copy each in the GPU merge, not two) (A/B runs).", NULL, 0, 1},
     FIELD(debug_ooc_unpacked_runs, INT)},
    {{"debug_ooc_run_buckets", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort's GPU merge cut buckets of the runs' size (halved until they "
      "fit), as before 2026-11-27, not of the most rows its budget holds (at least 32 "
      "buckets) (A/B runs).", NULL, 0, 1}, FIELD(debug_ooc_run_buckets, INT)},
    {{"debug_ooc_graded_buckets", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort's GPU merge cut its first and last bucket into a quarter, a "
      "quarter and a half (four more splitters from pass 1's samples), so that pass 2's "
      "first upload and last download, which overlap nothing, are shorter (A/B runs).",
      NULL, 0, 1}, FIELD(debug_ooc_graded_buckets, INT)},
    {{"debug_join_dense", SL_ENGINE_OPT_ENUM, DBG, "values",
      "The GPU no-partitioning join's direct table (dense, unique build keys): values = a "
      "bitmap of the keys present (kept in the L2 cache) and each key's value (the build "
      "side's one payload column, or its row), so that a probe reads one random sector; "
      "rows = the build rows only, inserted with atomicCAS, as before 2026-11-27 (A/B "
      "runs).", "values,rows", 0, 1}, FIELD(debug_join_dense, INT)},
    {{"debug_smj_ooc", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "How the out-of-core sort-merge join moves its sides: auto = key ranges cut while "
      "each side's runs are sorted, then each range of both sides uploaded, sorted and "
      "joined on the GPU (input up once, down once, up again, result down; range i + 1's "
      "sorts and count, and where no buffer must grow range i + 2's upload, enqueued before "
      "the host waits for range i's count); runs = each "
      "side's runs merged into one on the GPU first, then key ranges joined, as before "
      "2026-11-27 (A/B runs); serial = auto, but a range's sorts and count enqueued after "
      "the previous range's write and gathers and its upload after them, as in session 17 "
      "(A/B runs); noahead = auto without the uploads ahead: range i + 2 goes up after range "
      "i's write, as in session 18's first order (A/B runs).",
      "auto,runs,serial,noahead", 0, 3},
     FIELD(debug_smj_ooc, INT)},
    {{"debug_ooc_narrow_runs", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "The out-of-core sort's narrow runs (an int32 key and one 4-byte column in 6 bytes a "
      "row, the key's high 16 bits in a table per run: pass 1's download and the GPU "
      "merge's upload move 3/4 of the bytes): auto = where pass 1 finds the GPU merge's "
      "cuts; off = 8-byte packed rows, as before 2026-11-27 (A/B runs); on = whatever the "
      "merge (tests).", "auto,off,on", 0, 2}, FIELD(debug_ooc_narrow_runs, INT)},
    {{"debug_ooc_upload_pieces", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort upload a run's rows with a copy per input batch and column, "
      "as before 2026-11-27, not one copy per column for batches adjacent in memory (A/B "
      "runs).", NULL, 0, 1}, FIELD(debug_ooc_upload_pieces, INT)},
    {{"debug_smj_ooc_trace", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort-merge join's pass 2 time each key range's upload, sorts, "
      "write and download with CUDA events, reported as the join's profile phases smj_p2_* "
      "(summed over the ranges; diagnosis).", NULL, 0, 1}, FIELD(debug_smj_ooc_trace, INT)},
    {{"debug_smj_packed", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort-merge join's key-range path keep a side of an int32 key and "
      "one 4-byte column as packed 8-byte rows in its runs, as the out-of-core sort does "
      "(unless debug_ooc_unpacked_runs), so that pass 2 uploads a range's slice of a run in "
      "one copy instead of two and sorts and unpacks the rows on the GPU: fewer copies for "
      "the host to enqueue, more work for the GPU (A/B runs: faster on an H200, slower on "
      "an H100 in session 18).", NULL, 0, 1}, FIELD(debug_smj_packed, INT)},
    {{"debug_smj_sort_all_bits", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort-merge join's pass 2 sort a key range on all the key's bits, "
      "as before session 18, not only on the low bits in which the range's key codes "
      "differ (fewer radix passes) (A/B runs).", NULL, 0, 1},
     FIELD(debug_smj_sort_all_bits, INT)},
    {{"debug_smj_pass1", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "How the out-of-core sort-merge join's key-range path sorts its sides' runs: auto = "
      "side 0's runs queued before the splitters are sampled (the host samples while the "
      "GPU sorts; side 0's cuts searched in its runs afterwards) and side 1's queued "
      "before side 0's end, so the link does not idle between them; serial = splitters "
      "first, then each side's runs in turn, each run's cuts found on the GPU, as in "
      "session 18 (A/B runs).", "auto,serial", 0, 1}, FIELD(debug_smj_pass1, INT)},
    {{"debug_smj_count_copy", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort-merge join's pass 2 read each key range's result count by "
      "a copy on the task stream, as in session 18 (A/B runs), not by a one-thread kernel "
      "that writes it into pinned memory (a copy may queue behind the results' downloads "
      "on a copy engine).", NULL, 0, 1}, FIELD(debug_smj_count_copy, INT)},
    {{"debug_ooc_narrow_tops", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "How the out-of-core sort's GPU merge finds each bucket's window of top-16 key values "
      "in narrow runs: auto = from the values beside pass 1's cuts, found on the GPU as each "
      "run is sorted; host = by binary searches of the runs' pinned tables on the host, "
      "twice (bucket cuts and pass 2's tables), as before 2026-11-27 (A/B runs); check = "
      "both, the query failing where they differ (tests).", "auto,host,check", 0, 2},
     FIELD(debug_ooc_narrow_tops, INT)},
    {{"debug_ooc_presplit", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "When the out-of-core sort samples pass 2's splitters from its input: auto = while "
      "its first runs (some 256 MiB, at most a quarter of them) go up and are sorted, their "
      "cuts searched in the "
      "pinned runs on the host during the rest of pass 1; first = before any run, as "
      "before 2026-11-27 (A/B runs).", "auto,first", 0, 1},
     FIELD(debug_ooc_presplit, INT)},
    {{"debug_ooc_link_gaps", SL_ENGINE_OPT_BOOL, DBG, "false",
      "Has the out-of-core sort time each run's and bucket's upload and download with CUDA "
      "events, reported as profile phases ooc_runs_up_wait (the sum of the h2d stream's "
      "gaps between one upload's end and the next one's start), ooc_runs_down_wait and "
      "ooc_merge_down_wait (diagnosis).", NULL, 0, 1},
     FIELD(debug_ooc_link_gaps, INT)},
    {{"debug_ooc_pass1_buffers", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "Which buffer the out-of-core sort's pass 1 sorts narrow runs over: auto = the run's "
      "output buffer (free once the set's previous run is down), so the next upload into "
      "the set waits only for this run's packing; upload = the upload buffer, the next "
      "upload waiting for the sort, cuts and narrowing, as before 2026-11-27 (A/B runs).",
      "auto,upload", 0, 1},
     FIELD(debug_ooc_pass1_buffers, INT)},
    {{"debug_ooc_sets", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "How many buffer sets the out-of-core sort's pass 1 cycles its runs through: auto = "
      "2 = two (as before 2026-11-28); 3 = three where the budget holds three at the run "
      "size two take (pinned or GPU input: pageable input stages through two buffers), "
      "so that a run's upload waits for the sort three runs back instead of two. Not the "
      "default: pass 1 is at the link's two-way speed with two (H100, 2026-11-28).",
      "auto,2,3", 0, 2},
     FIELD(debug_ooc_sets, INT)},
    {{"debug_sort_sink", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "What the sort's GPU sink does with host batches: auto = keeps every one on the host "
      "when the pipeline's input (a batch's bytes times its morsels) could not be sorted "
      "in the GPU budget, so the out-of-core sort's pass 1 moves them all and its plan "
      "does not depend on how much the sink uploaded (issue 23: a larger budget never "
      "runs a worse plan); upload = uploads them while three times what it uploaded fits "
      "the budget, as before session 20 (A/B runs: some 340 MiB at 1 GiB for 2^28 pairs, "
      "alone on the link before the finalize).", "auto,upload", 0, 1},
     FIELD(debug_sort_sink, INT)},
    {{"debug_smj_narrow", SL_ENGINE_OPT_ENUM, DBG, "auto",
      "Whether the out-of-core sort-merge join's key-range path keeps a side of an int32 key "
      "and one 4-byte column in narrow runs, as the out-of-core sort does (6-byte rows and a "
      "table per run: pass 1's download and pass 2's upload a quarter smaller), its key "
      "ranges cut to at most 2,048 top-16 key code values, each range's slices decoded on "
      "the GPU before its sort (unless debug_ooc_unpacked_runs or debug_ooc_narrow_runs=off): "
      "auto = a side of several runs of at least 2^17 rows (a run's 256 KiB table at most "
      "half of what its narrow rows save across the link) whose pass-2 windows of the "
      "tables and ranges' cuts take at most 1/16 of the budget, the key ranges sized with "
      "them; true = every side that packs and has several runs, whatever their length, as "
      "in session 19, the key ranges sized with their cuts but not their windows (A/B "
      "runs, tests); false = runs of two columns, or packed ones with debug_smj_packed, as "
      "before 2026-11-28 (A/B runs).",
      "auto,false,true", 0, 2},
     FIELD(debug_smj_narrow, INT)},
};

const int sl__n_options = (int)(sizeof sl__options / sizeof sl__options[0]);
