/* sluice version and the ABI promise.
 *
 * SL_VERSION_MAJOR 0 means the C API and the operator ABI are unstable: any minor
 * release may change them. From 1.0 on, the same major version keeps the C API and
 * ABI compatible; structs that cross the plugin boundary only grow (see plugin.h).
 */
#ifndef SLUICE_VERSION_H
#define SLUICE_VERSION_H

#define SL_VERSION_MAJOR 0
#define SL_VERSION_MINOR 3
#define SL_VERSION_PATCH 0
#define SL_VERSION_HEX ((SL_VERSION_MAJOR << 16) | (SL_VERSION_MINOR << 8) | SL_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SL_BUILDING_LIBRARY) && defined(__GNUC__)
#define SL_API __attribute__((visibility("default")))
#else
#define SL_API
#endif

/* The version of the library actually loaded, as SL_VERSION_HEX; compare with the
 * header's value to detect a mismatch at run time. Cannot fail; thread-safe. Added in
 * 0.1. */
SL_API unsigned sl_version(void);
/* The same as a string, e.g. "0.3.0" (static storage). Cannot fail; thread-safe. Added
 * in 0.1. */
SL_API const char *sl_version_string(void);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_VERSION_H */
