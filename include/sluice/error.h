/* Status codes and error messages.
 *
 * Every function that can fail returns int: SL_OK (0) on success, a negative SL_E*
 * code on failure. Operator phases may also return the non-negative flow codes
 * below, so "rc < 0" is always the test for failure. The text of an error is kept on
 * the object that failed (sl_engine_errmsg, sl_query_errmsg); calls without an object
 * leave it in a per-thread store read by sl_last_errmsg().
 */
#ifndef SLUICE_ERROR_H
#define SLUICE_ERROR_H

#include "version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XX(name, value, text): the single list that generates codes, names and texts.
 * SL_ETIMEDOUT (a query ran past its deadline_ms option) was added after 0.3. */
#define SL_ERRNO_MAP(XX)                                                     \
    XX(EINVAL, -1, "invalid argument")                                       \
    XX(ENOMEM, -2, "out of memory")                                          \
    XX(ETYPE, -3, "type mismatch")                                           \
    XX(ENOTFOUND, -4, "not found")                                           \
    XX(EPARSE, -5, "parse error")                                            \
    XX(EIO, -6, "input/output error")                                        \
    XX(EFORMAT, -7, "malformed data")                                        \
    XX(EBUDGET, -8, "memory budget exceeded")                                \
    XX(EDEVICE, -9, "device error")                                          \
    XX(ENODEV, -10, "no such device")                                        \
    XX(ECANCELED, -11, "canceled")                                           \
    XX(EOVERFLOW, -12, "arithmetic overflow")                                \
    XX(EUNSUPPORTED, -13, "not supported")                                   \
    XX(EBUSY, -14, "resource busy")                                          \
    XX(EABI, -15, "ABI version mismatch")                                    \
    XX(ESTATE, -16, "invalid state")                                         \
    XX(ENOSPC, -17, "no space left")                                         \
    XX(EEXIST, -18, "already exists")                                        \
    XX(EINTERNAL, -19, "internal error")                                     \
    XX(ETIMEDOUT, -20, "deadline exceeded")

enum sl_status {
    SL_OK = 0,
#define SL__ERR_ENUM(name, val, text) SL_##name = (val),
    SL_ERRNO_MAP(SL__ERR_ENUM)
#undef SL__ERR_ENUM
    /* Flow codes returned by operator phases; never errors. */
    SL_NEED_INPUT = 1,  /* give me the next input batch */
    SL_HAVE_OUTPUT = 2, /* call me again with the same input: more output follows */
    SL_DONE = 3,        /* this operator has finished for this task */
    SL_BLOCKED = 4      /* call me again once the work I enqueued has completed (e.g. a
                           count that sizes the output: count -> allocate -> write) */
};

/* Text for a code: "invalid argument". Unknown codes give "unknown error". Never NULL;
 * static storage. Thread-safe. Added in 0.1. */
SL_API const char *sl_strerror(int code);
/* Name for a code: "SL_EINVAL". Unknown codes give "SL_E?". Never NULL; static
 * storage. Thread-safe. Added in 0.1. */
SL_API const char *sl_err_name(int code);
/* The message of the last failing call on this thread that had no object to keep it
 * (sl_engine_open returning no engine, sl_plan_create, ...). Thread-local storage,
 * valid until the next failing call on this thread. Never NULL; "" when there was
 * none. Added in 0.1. */
SL_API const char *sl_last_errmsg(void);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_ERROR_H */
