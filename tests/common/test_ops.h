/* Small operators that prove the runtime before real operators exist: each has a CPU
 * and a CUDA implementation (the CUDA one only when built with CUDA).
 *   test.affine  (stream)        y = a*x + b on an int64 column "x"
 *   test.sum     (sink+source)   count and wrapping sum of int64 column "x"; the CUDA
 *                                sink adds on the device; combine runs on each device
 *   test.fail    (stream)        fails at morsel `at` (option), on CPU with
 *                                sl_task_fail, on GPU through the status word
 *   test.positive (stream)       keeps rows with x > 0; counts first, returns
 *                                SL_BLOCKED, then allocates exactly and writes */
#ifndef SLUICE_TEST_OPS_H
#define SLUICE_TEST_OPS_H

/* Registers the test operators in the global registry (idempotent). */
int sl_test_ops_register(void);

#endif
