/* libFuzzer target: plan-file text must parse or fail with an error, never crash, hang
 * or leak (AddressSanitizer's leak check runs at exit; the allocation counters are
 * checked after every input). Built by -Dfuzz=true with clang (see .ci/run). */
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    sl_plan_t *plan;
    if (sl_plan_create(&plan) == SL_OK) {
        fuzz_check_code(sl_plan_parse(plan, text, "fuzz"));
        sl_plan_destroy(plan);
    }
    free(text);
    fuzz_check_no_live_allocs(); /* something the parser allocated was not freed */
    return 0;
}
