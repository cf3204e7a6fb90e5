/* A program linked against libsluice.so (as pkg-config users link it): the program's
 * malloc must still be libc's, although libsluice depends on jemalloc, and memory the
 * program allocates mixes freely with sluice calls. Under a sanitizer the program's
 * malloc is the sanitizer's, so there the identity check is left out. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_NOLOAD */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/sluice.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    CHECK(libc != NULL);
#ifndef SANITIZED
    const char *fns[] = {"malloc", "free", "calloc", "realloc", "posix_memalign",
                         "aligned_alloc"};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *global = dlsym(RTLD_DEFAULT, fns[i]);
        void *from_libc = dlsym(libc, fns[i]);
        if (global != from_libc) {
            Dl_info info = {0};
            dladdr(global, &info);
            fprintf(stderr, "%s resolves to %s, not libc\n", fns[i],
                    info.dli_fname ? info.dli_fname : "?");
            return 1;
        }
    }
#endif
    dlclose(libc);

    char *before = malloc(1000);
    CHECK(before != NULL);
    const char *names[] = {"x"};
    const enum sl_type types[] = {SL_TYPE_INT64};
    sl_batch_t *b = NULL;
    CHECK(sl_batch_create(&b, 1, names, types, 100000) == SL_OK);
    int64_t *x = sl_batch_column_data(b, 0);
    CHECK(x != NULL);
    for (int64_t i = 0; i < 100000; i++)
        x[i] = i;
    char *during = strdup(sl_strerror(SL_ENOMEM));
    CHECK(during != NULL && strcmp(during, "out of memory") == 0);
    sl_batch_unref(b);
    free(before);
    free(during);
    printf("ok: malloc is libc's with libsluice linked (sluice %s)\n", sl_version_string());
    return 0;
}
