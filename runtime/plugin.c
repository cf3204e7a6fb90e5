/* Loading plugins: dlopen a shared object, find its entry point, let it register its
 * operators into a staging registry through the host table, then move them into the
 * process-wide registry all at once (include/sluice/plugin.h, docs/PLUGINS.md).
 *
 * Loaded plugins stay loaded until the process exits: their definitions sit in the
 * global registry, which any plan on any engine may reference, and nothing tracks those
 * references. Loads are serialized by one mutex; the list of handles is a static array
 * so that it stays out of the allocation counters tests check for leaks. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin_int.h"

#define PLUGIN_MAX 256

static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static void *loaded[PLUGIN_MAX];
static int n_loaded;

/* The load in progress on this thread: what its entry declared and the first error the
 * host reported to it (the entry may ignore a failed registry_add; the load may not). */
struct load_ctx {
    const char *path;
    sl_registry_t *staging;
    uint32_t declared;
    int err;
    char msg[SL__MSG_MAX];
};
static _Thread_local struct load_ctx *cur;

static void note_error(int rc)
{
    if (cur && !cur->err) {
        cur->err = rc;
        snprintf(cur->msg, sizeof cur->msg, "plugin '%s': %s", cur->path, sl_last_errmsg());
    }
}

int sl__plugin_declare_abi(sl_registry_t *reg, uint32_t abi_version)
{
    if (cur && reg == cur->staging)
        cur->declared = abi_version ? abi_version : UINT32_MAX;
    int rc = sl__abi_check(abi_version, "it");
    if (rc < 0 && cur && reg == cur->staging)
        note_error(rc);
    return rc;
}

int sl__plugin_registry_add(sl_registry_t *reg, const struct sl_op_def *def)
{
    int rc = sl_registry_add(reg, def);
    if (rc < 0 && cur && reg == cur->staging)
        note_error(rc);
    return rc;
}

/* sl_<name>_entry from the file name: "dir/libtopk.so.1" -> "sl_topk_entry". */
static void derived_entry(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strncmp(base, "lib", 3))
        base += 3;
    size_t n = snprintf(out, cap, "sl_");
    for (; *base && *base != '.' && n + 8 < cap; base++)
        out[n++] = isalnum((unsigned char)*base) ? *base : '_';
    snprintf(out + n, cap - n, "_entry");
}

static bool is_loaded(void *h)
{
    for (int i = 0; i < n_loaded; i++)
        if (loaded[i] == h)
            return true;
    return false;
}

/* Runs the entry against a staging registry and merges what it registered. */
static int run_entry(const char *path, sl_plugin_entry_fn entry)
{
    struct load_ctx ctx = {.path = path, .staging = sl__registry_new()};
    if (!ctx.staging)
        return sl__set_last_error(SL_ENOMEM, "plugin '%s': out of memory", path);
    sl__set_last_error(SL_OK, "%s", "");
    cur = &ctx;
    int rc = entry(sl__host_api(), ctx.staging);
    cur = NULL;
    if (ctx.err) { /* what the host told it, whether or not the entry passed it on */
        rc = sl__set_last_error(rc < 0 ? rc : ctx.err, "%s", ctx.msg);
    } else if (rc < 0) {
        char why[SL__MSG_MAX];
        snprintf(why, sizeof why, "%s", sl_last_errmsg());
        if (sl__err_known(rc))
            sl__set_last_error(rc, "plugin '%s': its entry failed with %s%s%s", path,
                               sl_err_name(rc), *why ? ": " : "", why);
        else
            rc = sl__set_last_error(SL_EINTERNAL, "plugin '%s': its entry failed with %d, "
                                    "which is not a sluice error code", path, rc);
    } else if (!ctx.declared) {
        rc = sl__set_last_error(SL_EABI, "plugin '%s' did not declare the operator ABI it was "
                                "built for (its entry must call sl_plugin_init or "
                                "host->declare_abi first)", path);
    } else if ((rc = sl__registry_merge(sl_registry_global(), ctx.staging)) < 0) {
        char why[SL__MSG_MAX];
        snprintf(why, sizeof why, "%s", sl_last_errmsg());
        sl__set_last_error(rc, "plugin '%s': %s", path, why);
    }
    sl__registry_free(ctx.staging);
    return rc < 0 ? rc : SL_OK;
}

/* dlopen with a clear message; a name without '/' means a file here, not a library
 * search. */
static void *open_file(const char *path, int *rc)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *rc = sl__set_last_error(SL_ENOTFOUND, "plugin '%s': %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *rc = sl__set_last_error(SL_EFORMAT, "plugin '%s' is not a regular file", path);
        return NULL;
    }
    char local[4096];
    const char *file = path;
    if (!strchr(path, '/') && snprintf(local, sizeof local, "./%s", path) < (int)sizeof local)
        file = local;
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        *rc = sl__set_last_error(SL_EFORMAT, "plugin '%s' is not a shared object this "
                                 "process can load: %s", path, dlerror());
    return h;
}

int sl_plugin_load(const char *path)
{
    if (!path || !*path)
        return sl__set_last_error(SL_EINVAL, "sl_plugin_load: no path");
    pthread_mutex_lock(&load_mu);
    int rc = SL_OK;
    void *h = open_file(path, &rc);
    if (!h)
        goto out;
    if (is_loaded(h)) { /* dlopen counted one more reference: give it back */
        dlclose(h);
        goto out;
    }
    char name[256];
    derived_entry(path, name, sizeof name);
    /* A function pointer from dlsym's void *, as POSIX requires to work. */
    sl_plugin_entry_fn entry = (sl_plugin_entry_fn)dlsym(h, "sl_plugin_entry");
    if (!entry)
        entry = (sl_plugin_entry_fn)dlsym(h, name);
    if (!entry)
        rc = sl__set_last_error(SL_ENOTFOUND, "plugin '%s' exports neither sl_plugin_entry nor "
                                "%s: not a sluice plugin", path, name);
    else if (n_loaded == PLUGIN_MAX)
        rc = sl__set_last_error(SL_ENOSPC, "too many plugins loaded (%d)", PLUGIN_MAX);
    else
        rc = run_entry(path, entry);
    if (rc < 0)
        dlclose(h); /* nothing of it was registered */
    else
        loaded[n_loaded++] = h;
out:
    pthread_mutex_unlock(&load_mu);
    return rc;
}
