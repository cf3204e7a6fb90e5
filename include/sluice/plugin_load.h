/* Loading plugins, for embedders. Writing a plugin is in plugin.h. */
#ifndef SLUICE_PLUGIN_LOAD_H
#define SLUICE_PLUGIN_LOAD_H

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the plugin at `path` (dlopen) and registers its operators in the process-wide
 * registry, where plans find them by name, in C and in plan files. Operators are
 * process-wide, like plans, so loading needs no engine and serves every engine. All of
 * a plugin's operators are registered, or none: on any failure nothing is registered
 * and the file is closed again. Loading a file that is already loaded does nothing and
 * returns SL_OK. A loaded plugin stays loaded until the process exits (its definitions
 * may be referenced by any plan, on any engine); `path` is read during the call only.
 * Thread-safe. Errors (message in sl_last_errmsg, naming the file):
 *   SL_ENOTFOUND  no such file, or it exports no entry point;
 *   SL_EFORMAT    the file is not a shared object this process can load;
 *   SL_EABI       built for a newer operator ABI than this library's (or for 0), or the
 *                 entry did not declare its version;
 *   SL_EEXIST     an operator name is already registered;
 *   any code the entry returned.
 * Added in 0.2 (in plugin.h; in this header since 0.3). */
SL_API int sl_plugin_load(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_PLUGIN_LOAD_H */
