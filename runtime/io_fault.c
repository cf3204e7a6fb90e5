/* The library's file calls (open, pread, write, pwrite, fsync, rename), each through a
 * thin wrapper so that tests can make the Nth call fail (SQLite's ioerr tests, driven by
 * tests/unit/test_io_faults.c). With no fault armed, a wrapper costs one relaxed atomic
 * load before the system call. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

struct io_fault {
    _Atomic int64_t countdown; /* 1 + calls left before the fault; 0 = not armed */
    _Atomic int kind;          /* enum sl__io_fault, perhaps | SL__IO_STICKY */
    _Atomic int err;           /* errno of an SL__IO_ERRNO fault */
};

static struct io_fault faults[SL__IO_CALLS];

void sl__io_fail_after(enum sl__io_call call, int64_t n, int kind, int err)
{
    if ((unsigned)call >= SL__IO_CALLS)
        return;
    struct io_fault *f = &faults[call];
    atomic_store(&f->countdown, 0); /* disarmed while kind and err change */
    atomic_store(&f->kind, kind);
    atomic_store(&f->err, err);
    atomic_store(&f->countdown, n < 0 ? 0 : n + 1);
}

void sl__io_faults_off(void)
{
    for (int c = 0; c < SL__IO_CALLS; c++)
        atomic_store(&faults[c].countdown, 0);
}

/* The fault this call gets: -1 for none, else its kind. A single-shot fault fires on the
 * call that takes the countdown from 1 to 0 (off); a sticky one stays at 1 and fires on
 * every call from then on. */
static int fault_now(enum sl__io_call call, int *err)
{
    struct io_fault *f = &faults[call];
    if (SL__LIKELY(atomic_load_explicit(&f->countdown, memory_order_relaxed) == 0))
        return -1;
    int kind = atomic_load(&f->kind);
    int64_t v = atomic_load(&f->countdown);
    while (v > 0) {
        int64_t next = v == 1 && (kind & SL__IO_STICKY) ? 1 : v - 1;
        if (atomic_compare_exchange_weak(&f->countdown, &v, next)) {
            if (v != 1)
                return -1;
            *err = atomic_load(&f->err);
            return kind & ~SL__IO_STICKY;
        }
    }
    return -1;
}

/* Applies a transfer fault to a request of `*len` bytes: -1 with errno set when the call
 * must fail, 1 when it must return 0 (end of file), else 0 with *len perhaps shortened. */
static int transfer_fault(enum sl__io_call call, size_t *len)
{
    int err = 0;
    switch (fault_now(call, &err)) {
    case SL__IO_ERRNO:
        errno = err ? err : EIO;
        return -1;
    case SL__IO_SHORT:
        if (*len > 1)
            *len /= 2;
        return 0;
    case SL__IO_EOF:
        return 1;
    default:
        return 0;
    }
}

/* A fault of a call that only succeeds or fails (open, fsync, rename): true with errno
 * set when it must fail. */
static bool call_fault(enum sl__io_call call)
{
    int err = 0;
    if (fault_now(call, &err) < 0)
        return false;
    errno = err ? err : EIO;
    return true;
}

int sl__io_open(const char *path, int flags, mode_t mode)
{
    return call_fault(SL__IO_OPEN) ? -1 : open(path, flags, mode);
}

ssize_t sl__io_pread(int fd, void *buf, size_t len, off_t off)
{
    int f = transfer_fault(SL__IO_READ, &len);
    return f < 0 ? -1 : f > 0 ? 0 : pread(fd, buf, len, off);
}

ssize_t sl__io_write(int fd, const void *buf, size_t len)
{
    int f = transfer_fault(SL__IO_WRITE, &len);
    return f < 0 ? -1 : f > 0 ? 0 : write(fd, buf, len);
}

ssize_t sl__io_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    int f = transfer_fault(SL__IO_WRITE, &len);
    return f < 0 ? -1 : f > 0 ? 0 : pwrite(fd, buf, len, off);
}

int sl__io_fsync(int fd)
{
    return call_fault(SL__IO_SYNC) ? -1 : fsync(fd);
}

int sl__io_rename(const char *from, const char *to)
{
    return call_fault(SL__IO_RENAME) ? -1 : rename(from, to);
}
