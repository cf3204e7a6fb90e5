/* I/O fault injection (runtime/io_fault.c) into the readers and writers: scan.csv and
 * scan.bin under a failed open, EIO, short reads and a file that shrinks while it is
 * read; write.csv, write.bin and traces under ENOSPC, short writes, a failed fsync and a
 * failed rename, at every write call in turn. A failure must be SL_EIO with a message
 * naming the file and the system's reason, leave no temporary file and leave the old
 * output as it was; a short transfer is no error (same rows, same bytes). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/sluice.h>

#include "internal.h"
#include "sl_test.h"

static char g_dir[64];
static char g_msg[1024];

static void make_dir(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/sl_iofault_XXXXXX");
    assert_non_null(mkdtemp(g_dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* Parses and runs plan text (scan.bin reads its file's header when parsed); its output
 * r (if any) goes to *rows. The message is in g_msg. */
static int run(sl_engine_t *e, const char *text, int64_t *rows)
{
    sl_plan_t *p;
    SL_ASSERT_OK(sl_plan_create(&p));
    int rc = sl_plan_parse(p, text, "t.plan");
    if (rc != SL_OK) {
        snprintf(g_msg, sizeof g_msg, "%s", sl_plan_errmsg(p));
        sl_plan_destroy(p);
        return rc;
    }
    sl_query_t *q;
    SL_ASSERT_OK(sl_query_create(e, p, &q));
    rc = sl_query_run(q);
    snprintf(g_msg, sizeof g_msg, "%s", rc ? sl_query_errmsg(q) : "");
    sl_table_t *t;
    if (rc == SL_OK && rows && sl_query_result(q, "r", &t) == SL_OK) {
        *rows = sl_table_num_rows(t);
        sl_table_unref(t);
    }
    sl_query_destroy(q);
    sl_plan_destroy(p);
    return rc;
}

static void expect_msg(const char *what, const char *part)
{
    if (!strstr(g_msg, part))
        fail_msg("%s: message \"%s\" lacks \"%s\"", what, g_msg, part);
}

/* The whole file, or NULL (*len set); the caller frees it. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static void assert_same_file(const char *path, const char *want, size_t want_len)
{
    size_t len = 0;
    char *got = slurp(path, &len);
    assert_non_null(got);
    if (len != want_len || memcmp(got, want, len) != 0)
        fail_msg("%s: %zu bytes, want %zu (or other bytes)", path, len, want_len);
    free(got);
}

static void assert_no_temporary(const char *when)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strstr(de->d_name, ".tmp-"))
            fail_msg("%s: %s/%s left behind", when, g_dir, de->d_name);
    closedir(d);
}

/* ---------------- readers ---------------- */

#define ROWS 50000 /* rows of the scanned files */

/* Writes data.csv and data.bin (ROWS rows) without faults. */
static void write_inputs(sl_engine_t *e)
{
    char text[512];
    snprintf(text, sizeof text,
             "n = gen.keys rows=%d kind=m2m distinct=1000 seed=1 payloads=1\n"
             "c = write.csv(n) path=\"%s/data.csv\"\nb = write.bin(n) path=\"%s/data.bin\"\n",
             ROWS, g_dir, g_dir);
    SL_ASSERT_OK(run(e, text, NULL));
}

static const char *scan_text(const char *op, char *buf, size_t len)
{
    if (strcmp(op, "csv") == 0)
        snprintf(buf, len, "r = scan.csv path=\"%s/data.csv\" columns=\"k int64, p1 int64\"\n"
                 "output r\n", g_dir);
    else
        snprintf(buf, len, "r = scan.bin path=\"%s/data.bin\"\noutput r\n", g_dir);
    return buf;
}

/* A fault at each call of the scans in turn (scan.bin opens and reads its header when
 * the plan is parsed, then again when it runs) until a run gets through: each fails
 * naming the file and the reason, and the engine runs the scan again correctly. */
static void read_fault(enum sl__io_call call, int kind, int err, const char *reason)
{
    make_dir();
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    write_inputs(e);
    const char *ops[] = {"csv", "bin"};
    for (int i = 0; i < 2; i++) {
        char text[512], file[128];
        snprintf(file, sizeof file, "%s/data.%s", g_dir, ops[i]);
        scan_text(ops[i], text, sizeof text);
        int failed = 0;
        for (int64_t n = 0;; n++) {
            int64_t rows = 0;
            sl__io_fail_after(call, n, kind, err);
            int rc = run(e, text, &rows);
            sl__io_faults_off();
            if (rc == SL_OK) {
                assert_int_equal(rows, ROWS);
                break;
            }
            failed++;
            if (rc != SL_EIO)
                fail_msg("scan.%s: %s (%s), want SL_EIO", ops[i], sl_err_name(rc), g_msg);
            expect_msg(ops[i], file);
            expect_msg(ops[i], reason);
            SL_ASSERT_OK(run(e, text, &rows)); /* the engine and the file are fine */
            assert_int_equal(rows, ROWS);
            assert_true(n < 100);
        }
        assert_true(failed > 0);
    }
    sl_engine_close(e);
    remove_dir();
}

SL_TEST(open_failure_names_the_file)
{
    read_fault(SL__IO_OPEN, SL__IO_ERRNO, EMFILE, strerror(EMFILE));
}

SL_TEST(read_error_names_the_file)
{
    read_fault(SL__IO_READ, SL__IO_ERRNO, EIO, strerror(EIO));
}

SL_TEST(file_shrinking_during_the_read_is_an_error)
{
    read_fault(SL__IO_READ, SL__IO_EOF, 0, "shrank");
}

/* Every read short: the scans loop until they have it all. */
SL_TEST(short_reads_give_every_row)
{
    make_dir();
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    write_inputs(e);
    const char *ops[] = {"csv", "bin"};
    for (int i = 0; i < 2; i++) {
        char text[512];
        int64_t rows = 0;
        sl__io_fail_after(SL__IO_READ, 0, SL__IO_SHORT | SL__IO_STICKY, 0);
        int rc = run(e, scan_text(ops[i], text, sizeof text), &rows);
        sl__io_faults_off();
        SL_ASSERT_OK(rc);
        assert_int_equal(rows, ROWS);
    }
    sl_engine_close(e);
    remove_dir();
}

/* ---------------- writers ---------------- */

struct writer {
    const char *name;  /* for messages */
    const char *file;  /* under g_dir */
    const char *plan;  /* printf format of the plan, given the path */
};

static const struct writer writers[] = {
    {"write.csv", "out.csv", "n = gen.keys rows=120000 kind=m2m distinct=99 seed=%d payloads=1\n"
                             "w = write.csv(n) path=\"%s\"\n"},
    {"write.bin", "out.bin", "n = gen.keys rows=120000 kind=m2m distinct=99 seed=%d payloads=1\n"
                             "w = write.bin(n) path=\"%s\"\n"},
};

static const char *writer_text(const struct writer *w, int seed, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", g_dir, w->file);
    snprintf(buf, len, w->plan, seed, path);
    return buf;
}

/* Fault `kind` at every call of `call` in turn (n = 0, 1, ...) until a run gets
 * through; each failed run must leave the old file and no temporary file. */
static void write_sweep(const struct writer *w, enum sl__io_call call, int err)
{
    make_dir();
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    char text[512], path[128], want_text[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, w->file);
    SL_ASSERT_OK(run(e, writer_text(w, 1, text, sizeof text), NULL));
    size_t old_len, want_len;
    char *old = slurp(path, &old_len);
    /* The output a run without faults gives, kept aside for the comparison. */
    SL_ASSERT_OK(run(e, writer_text(w, 2, want_text, sizeof want_text), NULL));
    char *want = slurp(path, &want_len);
    SL_ASSERT_OK(run(e, text, NULL)); /* back to the old contents */
    int failed = 0;
    for (int64_t n = 0;; n++) {
        sl__io_fail_after(call, n, SL__IO_ERRNO, err);
        int rc = run(e, want_text, NULL);
        sl__io_faults_off();
        if (rc == SL_OK)
            break;
        failed++;
        if (rc != SL_EIO)
            fail_msg("%s, call %lld: %s (%s), want SL_EIO", w->name, (long long)n,
                     sl_err_name(rc), g_msg);
        expect_msg(w->name, path);
        expect_msg(w->name, strerror(err));
        assert_no_temporary(w->name);
        assert_same_file(path, old, old_len);
        assert_true(n < 1000);
    }
    printf("%s: %d runs failed cleanly before one got through\n", w->name, failed);
    assert_true(failed > 0);
    assert_same_file(path, want, want_len);
    assert_no_temporary(w->name);
    free(old);
    free(want);
    sl_engine_close(e);
    remove_dir();
}

static void sweep_each_writer(enum sl__io_call call, int err)
{
    for (size_t i = 0; i < sizeof writers / sizeof *writers; i++)
        write_sweep(&writers[i], call, err);
}

SL_TEST(no_space_at_every_write) { sweep_each_writer(SL__IO_WRITE, ENOSPC); }
SL_TEST(failed_sync_keeps_the_old_file) { sweep_each_writer(SL__IO_SYNC, EIO); }
SL_TEST(failed_rename_keeps_the_old_file) { sweep_each_writer(SL__IO_RENAME, EXDEV); }
SL_TEST(failed_temporary_open_is_an_error) { sweep_each_writer(SL__IO_OPEN, ENOSPC); }

/* Every write short: the writers loop; the file is the same as without faults. */
SL_TEST(short_writes_give_the_same_file)
{
    make_dir();
    sl_engine_t *e = sl_test_cpu_engine(2, 0);
    for (size_t i = 0; i < sizeof writers / sizeof *writers; i++) {
        char text[512], path[128];
        snprintf(path, sizeof path, "%s/%s", g_dir, writers[i].file);
        SL_ASSERT_OK(run(e, writer_text(&writers[i], 3, text, sizeof text), NULL));
        size_t want_len;
        char *want = slurp(path, &want_len);
        assert_int_equal(unlink(path), 0);
        sl__io_fail_after(SL__IO_WRITE, 0, SL__IO_SHORT | SL__IO_STICKY, 0);
        int rc = run(e, text, NULL);
        sl__io_faults_off();
        SL_ASSERT_OK(rc);
        assert_same_file(path, want, want_len);
        free(want);
    }
    sl_engine_close(e);
    remove_dir();
}

/* The stream writers (traces, the cost cache: sl__out_file_stream) under a full disk:
 * the commit fails naming the file, the old file stays and no temporary is left. */
SL_TEST(stream_write_failure_names_the_file)
{
    make_dir();
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/trace.json", g_dir);
    FILE *old = fopen(path, "w");
    assert_non_null(old);
    fputs("old\n", old);
    fclose(old);
    for (int sticky = 0; sticky < 2; sticky++) {
        struct sl__out_file o;
        SL_ASSERT_OK(sl__out_file_open(&o, path, err, sizeof err));
        FILE *f = sl__out_file_stream(&o, err, sizeof err);
        assert_non_null(f);
        for (int i = 0; i < 20000; i++) /* more than stdio's buffer: several writes */
            fprintf(f, "{\"event\": %d}\n", i);
        sl__io_fail_after(SL__IO_WRITE, 0, SL__IO_ERRNO | (sticky ? SL__IO_STICKY : 0), ENOSPC);
        int rc = sl__out_file_commit(&o, err, sizeof err);
        sl__io_faults_off();
        assert_int_equal(rc, SL_EIO);
        snprintf(g_msg, sizeof g_msg, "%s", err);
        expect_msg("stream", path);
        expect_msg("stream", strerror(ENOSPC));
        assert_no_temporary("stream");
        assert_same_file(path, "old\n", 4);
    }
    remove_dir();
}
