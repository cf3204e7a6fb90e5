/* Output files (write.csv, write.bin, traces, the cost cache) written as `cp` treats
 * its destination, but atomically where that is possible:
 *  - a missing path or a regular file with one link: a temporary file beside it, given
 *    the old file's mode (and owner, where allowed), renamed over it on commit; readers
 *    see the old file or the new one, and an error or a cancel leaves the old file;
 *  - a symlink: followed; its target is treated as above (the link stays a link);
 *  - a device, FIFO or socket, a regular file with several hard links, a dangling
 *    symlink, or a file whose folder cannot take a temporary file: written in place,
 *    as `cp` would (a FIFO with no reader fails at once instead of blocking);
 *  - a directory: an error.
 * Renaming a temporary file over a device node or FIFO would replace the node itself
 * (as root, /dev/null became a regular file): that is what this file avoids. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static int fail(struct sl__out_file *o, int code, char *err, size_t err_len, const char *what,
                int e)
{
    snprintf(err, err_len, "cannot write '%s' (%s): %s", o->path ? o->path : "?", what,
             strerror(e));
    sl__out_file_abort(o);
    return code;
}

/* Opens what `path` names for writing in place: no temporary file, nothing renamed. */
static int open_in_place(struct sl__out_file *o, const char *path, char *err, size_t err_len)
{
    /* O_NONBLOCK: a FIFO with no reader fails with ENXIO instead of blocking forever. */
    int fd = sl__io_open(path, O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0)
        return fail(o, SL_EIO, err, err_len,
                    errno == ENXIO ? "no process reads it" : "opening it", errno);
    o->fd = fd;
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return fail(o, SL_EIO, err, err_len, "opening it", errno);
    o->regular = S_ISREG(st.st_mode);
    if (o->regular && ftruncate(fd, 0) != 0)
        return fail(o, SL_EIO, err, err_len, "truncating it", errno);
    return SL_OK;
}

int sl__out_file_open(struct sl__out_file *o, const char *path, char *err, size_t err_len)
{
    static _Atomic uint64_t counter;
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!(o->path = sl__strdup(path)))
        return fail(o, SL_ENOMEM, err, err_len, "copying its name", ENOMEM);
    struct stat st, lst;
    bool exists = true;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT)
            return fail(o, SL_EIO, err, err_len, "looking at it", errno);
        if (lstat(path, &lst) == 0) /* a dangling symlink: create what it names */
            return open_in_place(o, path, err, err_len);
        memset(&st, 0, sizeof st);
        st.st_mode = S_IFREG; /* missing: created as a new file */
        st.st_nlink = 1;
        exists = false;
    } else if (S_ISDIR(st.st_mode)) {
        return fail(o, SL_EIO, err, err_len, "writing a file", EISDIR);
    }
    if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
        return open_in_place(o, path, err, err_len);
    /* A symlink's target gets the data; the link itself is left alone. */
    char *real = exists ? realpath(path, NULL) : NULL;
    const char *target = real ? real : path;
    size_t n = strlen(target) + 64;
    o->target = sl__strdup(target);
    o->tmp = sl__malloc(n);
    free(real);
    if (!o->target || !o->tmp)
        return fail(o, SL_ENOMEM, err, err_len, "copying its name", ENOMEM);
    snprintf(o->tmp, n, "%s.tmp-%ld-%llu", o->target, (long)getpid(),
             (unsigned long long)atomic_fetch_add(&counter, 1));
    o->fd = sl__io_open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (o->fd < 0) {
        int e = errno;
        sl__free_str(o->tmp);
        o->tmp = NULL; /* nothing to remove */
        if (exists && (e == EACCES || e == EROFS || e == EPERM)) /* the file is writable */
            return open_in_place(o, path, err, err_len);
        return fail(o, SL_EIO, err, err_len, "creating a temporary file beside it", e);
    }
    o->regular = true;
    if (exists) {
        /* The old owner where allowed (root); elsewhere the new file is ours, as a file
         * `cp` creates would be. Then the old mode (after chown, which may clear setuid). */
        if (st.st_uid != geteuid() || st.st_gid != getegid())
            (void)!fchown(o->fd, st.st_uid, st.st_gid);
        if (fchmod(o->fd, st.st_mode & 07777) != 0)
            return fail(o, SL_EIO, err, err_len, "keeping its mode", errno);
    }
    return SL_OK;
}

ssize_t sl__out_file_write(struct sl__out_file *o, const void *data, size_t len)
{
    if (o->regular)
        return sl__io_write(o->fd, data, len);
    /* A FIFO or socket whose reader left raises SIGPIPE, which kills the process by
     * default: blocked in this thread for the write (the signal goes to the writing
     * thread), and one this write raised taken back, so it fails with EPIPE instead. */
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t k = sl__io_write(o->fd, data, len);
    int e = errno;
    /* Also after a partial write: the reader left while the write waited for room. */
    sigpending(&pending);
    if (!was_pending && sigismember(&pending, SIGPIPE)) {
        static const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return k;
}

/* The stream writes through sl__out_file_write (the FIFO's SIGPIPE guard, the fault
 * hooks); the descriptor stays the out_file's, so commit can sync it after the flush. */
static ssize_t stream_write(void *cookie, const char *data, size_t len)
{
    struct sl__out_file *o = cookie;
    ssize_t k;
    while ((k = sl__out_file_write(o, data, len)) < 0 && errno == EINTR)
        ;
    if (k <= 0 && !o->stream_errno) /* the first failure is the one to report */
        o->stream_errno = k < 0 ? errno : EIO;
    return k > 0 ? k : -1;
}

FILE *sl__out_file_stream(struct sl__out_file *o, char *err, size_t err_len)
{
    static const cookie_io_functions_t io = {.write = stream_write};
    o->stream = fopencookie(o, "w", io);
    if (!o->stream) {
        fail(o, SL_EIO, err, err_len, "opening a stream", errno);
        return NULL;
    }
    return o->stream;
}

int sl__out_file_commit(struct sl__out_file *o, char *err, size_t err_len)
{
    if (o->stream) {
        FILE *f = o->stream;
        o->stream = NULL;
        bool bad = fflush(f) != 0 || ferror(f);
        int e = o->stream_errno ? o->stream_errno : errno;
        fclose(f); /* only frees the stream: the descriptor is closed below */
        if (bad)
            return fail(o, SL_EIO, err, err_len, "writing it", e);
    }
    if (o->fd >= 0) {
        if (o->regular && sl__io_fsync(o->fd) != 0)
            return fail(o, SL_EIO, err, err_len, "syncing it", errno);
        int fd = o->fd;
        o->fd = -1;
        if (close(fd) != 0)
            return fail(o, SL_EIO, err, err_len, "closing it", errno);
    }
    if (o->tmp && sl__io_rename(o->tmp, o->target) != 0)
        return fail(o, SL_EIO, err, err_len, "renaming the temporary file over it", errno);
    sl__free_str(o->tmp);
    o->tmp = NULL; /* renamed: nothing to remove */
    sl__out_file_abort(o);
    return SL_OK;
}

void sl__out_file_abort(struct sl__out_file *o)
{
    if (o->stream)
        fclose(o->stream); /* flushes what it holds: into the temporary file removed below */
    if (o->fd >= 0)
        close(o->fd);
    o->stream = NULL;
    o->fd = -1;
    if (o->tmp)
        unlink(o->tmp);
    sl__free_str(o->tmp);
    sl__free_str(o->target);
    sl__free_str(o->path);
    o->tmp = o->target = o->path = NULL;
}
