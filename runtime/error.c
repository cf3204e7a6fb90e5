/* Status codes, their names and texts, and the per-thread last-error store. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char last_msg[SL__MSG_MAX];

const char *sl_strerror(int code)
{
    switch (code) {
    case SL_OK:
        return "success";
#define SL__ERR_TEXT(name, val, text) \
    case SL_##name:                   \
        return text;
        SL_ERRNO_MAP(SL__ERR_TEXT)
#undef SL__ERR_TEXT
    default:
        return "unknown error";
    }
}

const char *sl_err_name(int code)
{
    switch (code) {
    case SL_OK:
        return "SL_OK";
#define SL__ERR_NAME(name, val, text) \
    case SL_##name:                   \
        return "SL_" #name;
        SL_ERRNO_MAP(SL__ERR_NAME)
#undef SL__ERR_NAME
    default:
        return "SL_E?";
    }
}

bool sl__err_known(int code)
{
    return code == SL_OK || strcmp(sl_err_name(code), "SL_E?") != 0;
}

static _Thread_local int dev_err_native, dev_err_device = -1;

void sl__device_error_note(int native, int device)
{
    dev_err_native = native;
    dev_err_device = device;
}

int sl__device_error_take(int *device)
{
    int native = dev_err_native;
    if (device)
        *device = native ? dev_err_device : -1;
    sl__device_error_clear();
    return native;
}

void sl__device_error_clear(void)
{
    dev_err_native = 0;
    dev_err_device = -1;
}

const char *sl_last_errmsg(void)
{
    return last_msg;
}

int sl__set_last_errorv(int code, const char *fmt, va_list ap)
{
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    return code;
}

int sl__set_last_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sl__set_last_errorv(code, fmt, ap);
    va_end(ap);
    return code;
}

int sl__errslot_set(struct sl__errslot *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    memcpy(last_msg, e->msg, sizeof last_msg);
    return code;
}

unsigned sl_version(void)
{
    return SL_VERSION_HEX;
}

const char *sl_version_string(void)
{
#define SL__STR2(x) #x
#define SL__STR(x) SL__STR2(x)
    return SL__STR(SL_VERSION_MAJOR) "." SL__STR(SL_VERSION_MINOR) "." SL__STR(SL_VERSION_PATCH);
}
