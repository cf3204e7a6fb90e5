/* libFuzzer target: plan-file text must parse or fail with an error, never crash, hang
 * or leak (AddressSanitizer's leak check runs at exit; the allocation counters are
 * checked after every input). Built by -Dfuzz=true with clang (see .ci/run). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) == SL_OK) {
        int rc = sl_plan_parse(plan, text, "fuzz");
        if (rc > 0)
            abort(); /* only SL_OK or a negative error */
        sl_plan_destroy(plan);
    }
    free(text);
    struct sl__mem_counters c;
    sl__mem_counters(&c);
    if (c.live_allocs != 0)
        abort(); /* something the parser allocated was not freed */
    return 0;
}
