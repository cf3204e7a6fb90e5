/* libFuzzer target: a CSV file's contents through scan.csv. The first two bytes of the
 * input choose the scan's options (header, delimiter, quoting, null text, the declared
 * columns, a tiny parse range so that the file is cut into many parallel ranges, a
 * row filter); the rest is the file. The scan must give rows or an error, never crash,
 * hang or leak; every value it gives is formatted. */
#include <stdio.h>

#include "fuzz_common.h"

static const char *const column_sets[] = {
    "a int64",
    "a int32, b utf8",
    "a float64, b date32, c decimal(15,2)",
    "a utf8, b int64, c timestamp",
    "a bool, b int8, c uint64",
    "a dict, b large_utf8",
    "a decimal(38,4), b float32",
    "a int64, b int16, c utf8, d uint8",
};
static const char *const delimiters[] = {",", "|", "\\t", ";"};
static const char *const filters[] = {"", "a IS NOT NULL", "a = a", "b IS NULL"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t o = data[0], r = data[1];
    const char *path = fuzz_file_with(data + 2, size - 2);
    char text[1024];
    snprintf(text, sizeof text,
             "r = scan.csv path=\"%s\" columns=\"%s\" header=%s delimiter=\"%s\" %s "
             "trailing_delimiter=%s null=\"%s\" range_bytes=%d where=\"%s\"\noutput r\n",
             path, column_sets[(o >> 4) & 7], o & 1 ? "true" : "false", delimiters[(o >> 1) & 3],
             o & 8 ? "quote=\"\"" : "", o & 128 ? "true" : "false", r & 1 ? "NULL" : "",
             r & 2 ? 1 + (r >> 4) * 3 : 1 << 20, filters[(r >> 2) & 3]);
    fuzz_plan_text_run(text, 5000);
    fuzz_check_no_live_allocs();
    return 0;
}
