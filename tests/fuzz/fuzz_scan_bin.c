/* libFuzzer target: a binary (SLCF) file's contents through scan.bin. The first byte of
 * the input chooses: verify=true or false, and whether the harness first repairs the
 * checksums and the recorded file size, so that mutations get past them to the checks
 * behind (docs/FILE_FORMAT.md, "What readers check"), which must hold even with
 * verify=false. The scan must give rows or an error, never crash, hang or leak; every
 * value it gives is formatted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/file_int.h"
#include "fuzz_common.h"

#define FIXED 40
#define ENTRY 96 /* version 2 column entry */

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* A section's checksum at entry offset `sum` over [entry off, + entry len) if in range. */
static void fix_section(uint8_t *f, size_t size, uint8_t *e, int off, int len, int sum)
{
    uint64_t o = get64(e + off), n = get64(e + len);
    if (o <= size && n <= size - o)
        put64(e + sum, sl__xxh64(f + o, n));
}

/* Rewrites file_bytes, every section checksum and the header checksum (version 2). */
static void repair(uint8_t *f, size_t size)
{
    if (size < FIXED)
        return;
    put64(f + 24, size);
    uint32_t n_cols, header_bytes;
    memcpy(&n_cols, f + 8, 4);
    memcpy(&header_bytes, f + 12, 4);
    for (uint64_t c = 0; c < n_cols && FIXED + (c + 1) * ENTRY <= size; c++) {
        uint8_t *e = f + FIXED + c * ENTRY;
        fix_section(f, size, e, 16, 24, 48);
        fix_section(f, size, e, 32, 40, 56);
        fix_section(f, size, e, 64, 72, 80);
    }
    if (header_bytes >= FIXED && header_bytes <= size) {
        put64(f + 32, 0);
        put64(f + 32, sl__xxh64(f, header_bytes));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t o = data[0];
    uint8_t *file = malloc(size);
    if (!file)
        return 0;
    memcpy(file, data + 1, size - 1);
    if (o & 2)
        repair(file, size - 1);
    const char *path = fuzz_file_with(file, size - 1);
    free(file);
    char text[512];
    snprintf(text, sizeof text, "r = scan.bin path=\"%s\" verify=%s\noutput r\n", path,
             o & 1 ? "true" : "false");
    fuzz_plan_text_run(text, 5000);
    fuzz_check_no_live_allocs();
    return 0;
}
