/* Loads libsluice with dlopen() into a program that has already allocated, as an
 * embedder loading sluice as a plugin would, and checks that the program's malloc is
 * untouched: the same function before and after loading, and blocks allocated before
 * the load are freed (and new ones allocated) with the program's free/malloc after it.
 * This program is not linked against libsluice; it reaches the API through dlsym.
 *
 *   test_dlopen path/to/libsluice.so
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

#define N_BLOCKS 256

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "dlsym(%s): %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

/* Allocates blocks of assorted sizes, small to a few hundred KiB, and fills them. */
static void alloc_blocks(unsigned char *blocks[], size_t sizes[], unsigned seed)
{
    for (int i = 0; i < N_BLOCKS; i++) {
        sizes[i] = (size_t)16 << ((i + seed) % 15);
        blocks[i] = malloc(sizes[i]);
        CHECK(blocks[i] != NULL);
        memset(blocks[i], (int)((i + seed) & 0xff), sizes[i]);
    }
}

static void free_blocks(unsigned char *blocks[], const size_t sizes[], unsigned seed)
{
    for (int i = 0; i < N_BLOCKS; i++) {
        CHECK(blocks[i][0] == (unsigned char)((i + seed) & 0xff));
        CHECK(blocks[i][sizes[i] - 1] == (unsigned char)((i + seed) & 0xff));
        free(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/libsluice.so\n", argv[0]);
        return 2;
    }
    static unsigned char *early[N_BLOCKS], *late[N_BLOCKS];
    static size_t early_sizes[N_BLOCKS], late_sizes[N_BLOCKS];
    alloc_blocks(early, early_sizes, 0);

    void *malloc_before = dlsym(RTLD_DEFAULT, "malloc");
    void *free_before = dlsym(RTLD_DEFAULT, "free");
    void *realloc_before = dlsym(RTLD_DEFAULT, "realloc");
    CHECK(malloc_before && free_before && realloc_before);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen(%s): %s\n", argv[1], dlerror());
        return 1;
    }

    __typeof__(sl_version) *version = sym(lib, "sl_version");
    __typeof__(sl_strerror) *strerror_ = sym(lib, "sl_strerror");
    __typeof__(sl_batch_create) *batch_create = sym(lib, "sl_batch_create");
    __typeof__(sl_batch_column_data) *batch_column_data = sym(lib, "sl_batch_column_data");
    __typeof__(sl_batch_unref) *batch_unref = sym(lib, "sl_batch_unref");
    __typeof__(sl_table_create) *table_create = sym(lib, "sl_table_create");
    __typeof__(sl_table_append) *table_append = sym(lib, "sl_table_append");
    __typeof__(sl_table_num_rows) *table_num_rows = sym(lib, "sl_table_num_rows");
    __typeof__(sl_table_unref) *table_unref = sym(lib, "sl_table_unref");

    CHECK(version() == SL_VERSION_HEX);
    CHECK(strcmp(strerror_(SL_EINVAL), "invalid argument") == 0);

    /* Blocks allocated with the library loaded, freed after it has allocated too. */
    alloc_blocks(late, late_sizes, 7);

    const char *names[] = {"x", "y"};
    const enum sl_type types[] = {SL_TYPE_INT64, SL_TYPE_FLOAT64};
    sl_table_t *t = NULL;
    CHECK(table_create(&t) == SL_OK);
    for (int round = 0; round < 4; round++) {
        sl_batch_t *b = NULL;
        int64_t n = 1000 * (round + 1);
        CHECK(batch_create(&b, 2, names, types, n) == SL_OK);
        int64_t *x = batch_column_data(b, 0);
        double *y = batch_column_data(b, 1);
        CHECK(x != NULL && y != NULL);
        for (int64_t i = 0; i < n; i++) {
            x[i] = i;
            y[i] = (double)i / 2;
        }
        CHECK(table_append(t, b) == SL_OK);
        batch_unref(b);
    }
    CHECK(table_num_rows(t) == 10000);
    table_unref(t);

    /* Loading sluice must not have replaced the program's allocator. */
    CHECK(dlsym(RTLD_DEFAULT, "malloc") == malloc_before);
    CHECK(dlsym(RTLD_DEFAULT, "free") == free_before);
    CHECK(dlsym(RTLD_DEFAULT, "realloc") == realloc_before);

    free_blocks(early, early_sizes, 0);
    free_blocks(late, late_sizes, 7);
    alloc_blocks(early, early_sizes, 3);
    for (int i = 0; i < N_BLOCKS; i++) {
        unsigned char *p = realloc(early[i], early_sizes[i] * 2);
        CHECK(p != NULL && p[0] == (unsigned char)((i + 3) & 0xff));
        early[i] = p;
    }
    for (int i = 0; i < N_BLOCKS; i++)
        free(early[i]);

    CHECK(dlclose(lib) == 0);
    void *p = malloc(100);
    CHECK(p != NULL);
    free(p);
    printf("ok: dlopen(%s) left malloc alone (sluice %u)\n", argv[1], SL_VERSION_HEX);
    return 0;
}
