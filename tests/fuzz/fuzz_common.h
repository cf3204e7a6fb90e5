/* What the fuzz targets share: a small engine, a query run under a watchdog that
 * cancels it, a check that nothing the library allocated is left, and a private file
 * for targets whose input is a file's contents. */
#ifndef SLUICE_FUZZ_COMMON_H
#define SLUICE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/sluice.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An engine of two CPU workers, no GPU and a 256 MiB host budget; aborts if none opens
 * (the fuzzer then reports it). */
sl_engine_t *fuzz_engine_open(void);
/* Runs the query; a watchdog cancels it after `ms` milliseconds. Returns its code
 * (printed with the message when SLUICE_FUZZ_VERBOSE is set). */
int fuzz_query_run(sl_query_t *q, int ms);
/* Formats every value of every batch of the result `name` (if the query has it):
 * reading what the library produced is part of the check. */
void fuzz_touch_result(sl_query_t *q, const char *name);
/* Parses plan text and runs it on a fresh engine under the watchdog, formatting its
 * result r; any step may fail with an error. */
void fuzz_plan_text_run(const char *text, int ms);
/* data[0, size) as a NUL-terminated string (malloc'ed; NULL when out of memory). */
char *fuzz_text(const uint8_t *data, size_t size);
/* Aborts when a library call returned a positive code (only SL_OK or errors exist). */
void fuzz_check_code(int rc);
/* Aborts if any allocation of the library is still live (after the engine closed). */
void fuzz_check_no_live_allocs(void);
/* A file of this process (created once, removed at exit) holding data[0, size). */
const char *fuzz_file_with(const uint8_t *data, size_t size);

#endif /* SLUICE_FUZZ_COMMON_H */
