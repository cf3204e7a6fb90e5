/* Growable structs: the rule of engine.h for structs that start with `uint32_t size`.
 *
 * sluice fills or reads only the first `size` bytes the caller declared, so a program
 * built against older, smaller headers keeps working with a newer library: nothing is
 * written past its struct, and what it does not know takes the default.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"

static uint32_t size_of(const void *p)
{
    uint32_t size;
    memcpy(&size, p, sizeof size);
    return size;
}

int sl__out_fill(void *dst, const void *src, size_t full, const char *what)
{
    if (!dst)
        return sl__set_last_error(SL_EINVAL, "%s: NULL struct", what);
    uint32_t size = size_of(dst);
    if (size <= sizeof(uint32_t))
        return sl__set_last_error(SL_EINVAL, "%s: struct size %u; set it to sizeof the struct",
                                  what, size);
    /* The size member itself is the caller's and stays as it was. */
    size_t n = size < full ? size : full;
    memcpy((char *)dst + sizeof size, (const char *)src + sizeof size, n - sizeof size);
    return SL_OK;
}

int sl__in_read(void *out, const void *defaults, const void *in, size_t full, const char *what)
{
    uint32_t size = size_of(in);
    if (size <= sizeof(uint32_t))
        return sl__set_last_error(SL_EINVAL, "%s: struct size %u; set it to sizeof the struct",
                                  what, size);
    if (size > full)
        return sl__set_last_error(SL_EABI, "%s: struct size %u is larger than this library's "
                                  "%zu (built against newer headers)", what, size, full);
    memcpy(out, defaults, full);
    memcpy((char *)out + sizeof size, (const char *)in + sizeof size, size - sizeof size);
    return SL_OK;
}
