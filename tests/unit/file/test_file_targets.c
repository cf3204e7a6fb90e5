/* Tests what the writers and scans do with the path they are given (docs/RELIABILITY.md):
 * a device, FIFO, symlink, hard link or 0600 file at the output path is written as `cp`
 * writes it (the node, link, other names and mode stay), a regular file is replaced
 * whole and a failed write leaves it intact with no temporary file; a FIFO or device as
 * an input fails at once instead of blocking, and a file truncated after it was opened
 * is read as it was (no SIGBUS). Files live in a temporary directory under /tmp. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../../../operators/file/file_int.h"
#include "internal.h"
#include "sl_test.h"

static char g_dir[200];
static char g_msg[1024];

static const char *fpath(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", g_dir, name);
    return p[i];
}

static void dir_create(void)
{
    strcpy(g_dir, "/tmp/sluice-targets-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
}

/* The names in the directory, sorted and joined with spaces (temporary files show). */
static const char *dir_list(void)
{
    static char out[32 * 257];
    char names[32][256];
    int n = 0;
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while ((e = readdir(d)) && n < 32) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
    out[0] = 0;
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", names[i]);
    return out;
}

static void dir_remove(void)
{
    DIR *d = opendir(g_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(fpath(e->d_name));
    }
    closedir(d);
    assert_int_equal(rmdir(g_dir), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The whole file (NUL-terminated); *n its length. */
static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 22);
    *n = fread(buf, 1, (1 << 22) - 1, f);
    buf[*n] = 0;
    fclose(f);
    return buf;
}

/* gen.sequence of n rows written by op to path; the query's code, message in g_msg. */
static int run_write(sl_engine_t *e, const char *op, int64_t n, const char *path)
{
    char text[512];
    snprintf(text, sizeof text, "s = gen.sequence rows=%lld\nw = %s(s) path=\"%s\"\n",
             (long long)n, op, path);
    sl_plan_t *p = sl_test_plan_parse(text);
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    int rc = sl_query_run(q);
    snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_query_errmsg(q) : "");
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

/* scan op of path; the code of sl_plan_add or the query, message in g_msg. */
static int run_scan(sl_engine_t *e, const char *op, const char *path)
{
    char opts[512];
    snprintf(opts, sizeof opts, "path=\"%s\"%s", path,
             strcmp(op, "scan.csv") ? "" : " columns=\"x int64\"");
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int s;
    int rc = sl_plan_add(p, op, NULL, 0, opts, &s);
    snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_plan_errmsg(p) : "");
    sl_query_t *q = NULL;
    if (rc == SL_OK) {
        SL_ASSERT_OK(sl_plan_output(p, s, "r"));
        SL_ASSERT_OK(sl_query_create(e, p, &q));
        rc = sl_query_run(q);
        snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_query_errmsg(q) : "");
        sl_query_destroy(q);
    }
    sl_plan_destroy(p);
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------- output targets ---------------- */

/* The bytes each writer produces for 1000 rows, written to a regular file. */
static char *reference_output(sl_engine_t *e, const char *op, size_t *n)
{
    SL_ASSERT_OK(run_write(e, op, 1000, fpath("ref")));
    char *ref = read_all(fpath("ref"), n);
    unlink(fpath("ref"));
    assert_true(*n > 100);
    return ref;
}

SL_TEST(device_target_stays_a_device)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    /* A private copy of /dev/null first (root only): should the writer replace the node,
     * the test fails here and never touches the real /dev/null. */
    if (mknod(fpath("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        SL_ASSERT_OK(run_write(e, "write.csv", 1000, fpath("null")));
        SL_ASSERT_OK(run_write(e, "write.bin", 1000, fpath("null")));
        struct stat st;
        assert_int_equal(lstat(fpath("null"), &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        assert_string_equal(dir_list(), "null");
    }
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        if (run_write(e, ops[i], 1000, "/dev/null") != SL_OK)
            fail_msg("%s to /dev/null: %s", ops[i], g_msg);
        struct stat st;
        assert_int_equal(stat("/dev/null", &st), 0);
        assert_true(S_ISCHR(st.st_mode));
    }
    /* /dev/full takes nothing: the error names the path, the device stays. */
    assert_int_equal(run_write(e, "write.csv", 1000, "/dev/full"), SL_EIO);
    assert_non_null(strstr(g_msg, "/dev/full"));
    dir_remove();
    sl_engine_close(e);
}

SL_TEST(symlink_target_is_followed)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        size_t n_ref, n;
        char *ref = reference_output(e, ops[i], &n_ref);
        write_text(fpath("target"), "old");
        assert_int_equal(symlink("target", fpath("link")), 0);
        SL_ASSERT_OK(run_write(e, ops[i], 1000, fpath("link")));
        struct stat st;
        assert_int_equal(lstat(fpath("link"), &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        char *got = read_all(fpath("target"), &n);
        assert_int_equal(n, n_ref);
        assert_memory_equal(got, ref, n);
        assert_string_equal(dir_list(), "link target");
        /* A dangling link: what it names is created. */
        unlink(fpath("target"));
        SL_ASSERT_OK(run_write(e, ops[i], 1000, fpath("link")));
        free(got);
        got = read_all(fpath("target"), &n);
        assert_int_equal(n, n_ref);
        unlink(fpath("link"));
        unlink(fpath("target"));
        free(got);
        free(ref);
    }
    dir_remove();
    sl_engine_close(e);
}

SL_TEST(hard_linked_target_keeps_its_links)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    size_t n_ref, n;
    char *ref = reference_output(e, "write.csv", &n_ref);
    write_text(fpath("a"), "old");
    assert_int_equal(link(fpath("a"), fpath("b")), 0);
    SL_ASSERT_OK(run_write(e, "write.csv", 1000, fpath("a")));
    char *got = read_all(fpath("b"), &n); /* the other name sees the new data */
    assert_int_equal(n, n_ref);
    assert_memory_equal(got, ref, n);
    assert_string_equal(dir_list(), "a b");
    free(got);
    free(ref);
    dir_remove();
    sl_engine_close(e);
}

SL_TEST(target_mode_is_kept)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        write_text(fpath("secret"), "old");
        assert_int_equal(chmod(fpath("secret"), 0600), 0);
        SL_ASSERT_OK(run_write(e, ops[i], 1000, fpath("secret")));
        struct stat st;
        assert_int_equal(stat(fpath("secret"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_true(st.st_size > 100);
        /* A new file gets the mode open(2) gives with the umask, as `cp` makes it. */
        mode_t mask = umask(0);
        umask(mask);
        SL_ASSERT_OK(run_write(e, ops[i], 10, fpath("new")));
        assert_int_equal(stat(fpath("new"), &st), 0);
        assert_int_equal(st.st_mode & 07777, 0666 & ~mask);
        unlink(fpath("new"));
        unlink(fpath("secret"));
    }
    dir_remove();
    sl_engine_close(e);
}

struct fifo_reader {
    const char *path;
    char *buf;
    size_t n;
};

static void *fifo_read(void *arg)
{
    struct fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    r->buf = malloc(1 << 22);
    r->n = 0;
    ssize_t k;
    while (fd >= 0 && (k = read(fd, r->buf + r->n, (1 << 22) - r->n)) > 0)
        r->n += (size_t)k;
    if (fd >= 0)
        close(fd);
    return NULL;
}

SL_TEST(fifo_target_is_written_in_place)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    assert_int_equal(mkfifo(fpath("fifo"), 0600), 0);
    /* No reader: an error at once, not a query blocked forever. */
    int64_t t0 = now_ms();
    assert_int_equal(run_write(e, "write.csv", 10, fpath("fifo")), SL_EIO);
    assert_non_null(strstr(g_msg, "no process reads it"));
    assert_true(now_ms() - t0 < 5000);
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        size_t n_ref;
        char *ref = reference_output(e, ops[i], &n_ref);
        struct fifo_reader r = {fpath("fifo"), NULL, 0};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, fifo_read, &r), 0);
        int rc;
        while ((rc = run_write(e, ops[i], 1000, r.path)) == SL_EIO &&
               strstr(g_msg, "no process reads it"))
            usleep(1000); /* the reader has not opened it yet */
        SL_ASSERT_OK(rc);
        pthread_join(th, NULL);
        /* write.bin cannot seek back on a FIFO: the same bytes, header first. */
        assert_int_equal(r.n, n_ref);
        assert_memory_equal(r.buf, ref, n_ref);
        struct stat st;
        assert_int_equal(lstat(r.path, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
        assert_string_equal(dir_list(), "fifo");
        free(r.buf);
        free(ref);
    }
    dir_remove();
    sl_engine_close(e);
}

/* Opens the FIFO, reads a little and leaves. */
static void *fifo_read_and_leave(void *arg)
{
    int fd = open(arg, O_RDONLY);
    char buf[100];
    if (fd >= 0 && read(fd, buf, sizeof buf) > 0)
        close(fd);
    return NULL;
}

SL_TEST(fifo_reader_leaving_is_an_error_not_sigpipe)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    assert_int_equal(mkfifo(fpath("fifo"), 0600), 0);
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s", fpath("fifo"));
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, fifo_read_and_leave, path), 0);
        int rc;
        while ((rc = run_write(e, ops[i], 200000, path)) == SL_EIO &&
               strstr(g_msg, "no process reads it"))
            usleep(1000);
        pthread_join(th, NULL);
        /* More than a pipe holds: the write after the reader left fails (the process
         * would have died of SIGPIPE). */
        assert_int_equal(rc, SL_EIO);
        assert_non_null(strstr(g_msg, "Broken pipe"));
    }
    dir_remove();
    sl_engine_close(e);
}

SL_TEST(failed_write_keeps_old_file_and_leaves_no_temporary)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    /* A file size limit makes the writes fail part-way (EFBIG instead of SIGXFSZ). */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        write_text(fpath("out"), "old");
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        int rc = run_write(e, ops[i], 100000, fpath("out"));
        setrlimit(RLIMIT_FSIZE, &old);
        assert_int_equal(rc, SL_EIO);
        assert_non_null(strstr(g_msg, fpath("out")));
        size_t n;
        char *got = read_all(fpath("out"), &n);
        assert_string_equal(got, "old");
        free(got);
        assert_string_equal(dir_list(), "out");
    }
    /* A directory is refused; nothing is created beside it. */
    assert_int_equal(mkdir(fpath("d"), 0700), 0);
    assert_int_equal(run_write(e, "write.csv", 10, fpath("d")), SL_EIO);
    assert_non_null(strstr(g_msg, "Is a directory"));
    rmdir(fpath("d"));
    assert_string_equal(dir_list(), "out");
    dir_remove();
    sl_engine_close(e);
}

/* ---------------- inputs ---------------- */

SL_TEST(fifo_or_device_input_fails_at_once)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    assert_int_equal(mkfifo(fpath("fifo"), 0600), 0);
    const char *ops[] = {"scan.csv", "scan.bin"};
    for (int i = 0; i < 2; i++) {
        int64_t t0 = now_ms();
        assert_int_equal(run_scan(e, ops[i], fpath("fifo")), SL_EIO);
        assert_non_null(strstr(g_msg, "not a regular file (a FIFO)"));
        assert_int_equal(run_scan(e, ops[i], "/dev/zero"), SL_EIO);
        assert_non_null(strstr(g_msg, "not a regular file (a device)"));
        assert_int_equal(run_scan(e, ops[i], g_dir), SL_EIO);
        assert_non_null(strstr(g_msg, "not a regular file (a directory)"));
        assert_true(now_ms() - t0 < 5000);
    }
    dir_remove();
    sl_engine_close(e);
}

SL_TEST(file_truncated_after_open_is_read_as_opened)
{
    dir_create();
    const char *path = fpath("big");
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < 100000; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    size_t n;
    char *want = read_all(path, &n);
    char err[256];
    struct sl__fmap *m;
    SL_ASSERT_OK(sl__fmap_open(path, UINT64_MAX, &m, err, sizeof err));
    assert_int_equal(m->bytes, n);
    /* A mapped file would now fault (SIGBUS) on every page past the end. */
    assert_int_equal(truncate(path, 0), 0);
    assert_memory_equal(m->base, want, n);
    sl__fmap_unref(m);
    /* A prefix only (scan.bin's bind reads just the header). */
    f = fopen(path, "wb");
    fwrite(want, 1, 100, f);
    fclose(f);
    SL_ASSERT_OK(sl__fmap_open(path, 64, &m, err, sizeof err));
    assert_int_equal(m->bytes, 64);
    assert_int_equal(m->file_bytes, 100);
    assert_memory_equal(m->base, want, 64);
    sl__fmap_unref(m);
    free(want);
    dir_remove();
}

/* Cancels q as soon as a temporary file appears beside the target (finalize writing). */
struct canceller {
    sl_query_t *q;
    int saw_tmp;
};

static void *cancel_when_tmp(void *arg)
{
    struct canceller *c = arg;
    for (int64_t t0 = now_ms(); now_ms() - t0 < 60000 && !c->saw_tmp;) {
        DIR *d = opendir(g_dir);
        struct dirent *e;
        while ((e = readdir(d)))
            c->saw_tmp |= strstr(e->d_name, ".tmp-") != NULL;
        closedir(d);
    }
    sl_query_cancel(c->q);
    return NULL;
}

SL_TEST(cancel_while_writing_leaves_no_temporary)
{
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    dir_create();
    const char *ops[] = {"write.csv", "write.bin"};
    for (int i = 0; i < 2; i++) {
        write_text(fpath("out"), "old");
        char text[512];
        snprintf(text, sizeof text, "s = gen.sequence rows=2^23\nw = %s(s) path=\"%s\"\n", ops[i],
                 fpath("out"));
        sl_plan_t *p = sl_test_plan_parse(text);
        struct canceller c = {NULL, 0};
        SL_ASSERT_OK(sl_query_create(e, p, &c.q));
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, cancel_when_tmp, &c), 0);
        int rc = sl_query_run(c.q);
        pthread_join(th, NULL);
        sl_query_destroy(c.q);
        sl_plan_destroy(p);
        assert_true(c.saw_tmp);
        /* Cancelled while writing 64+ MiB, 1 MiB at a time: stopped, nothing renamed. */
        assert_int_equal(rc, SL_ECANCELED);
        size_t n;
        char *got = read_all(fpath("out"), &n);
        assert_string_equal(got, "old");
        free(got);
        assert_string_equal(dir_list(), "out");
    }
    dir_remove();
    sl_engine_close(e);
}
