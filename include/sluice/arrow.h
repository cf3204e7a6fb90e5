/* Arrow C Data Interface, C Stream Interface and C Device Data Interface.
 *
 * The struct definitions follow the published Arrow specifications exactly and are
 * guarded by the macros the specification names, so this header can be included
 * beside any other copy of them (nanoarrow, arrow/c/abi.h).
 *
 * Import takes ownership: the source structs are moved (their release is set to NULL)
 * and the foreign release callback runs once, when sluice drops the last reference to
 * the imported buffers. Import is zero-copy: sluice reads the foreign buffers in place,
 * with their offsets and whatever alignment they have.
 * Export produces structs that the consumer owns and must release.
 */
#ifndef SLUICE_ARROW_H
#define SLUICE_ARROW_H

#include <stdint.h>

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    /* Array type description */
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;

    /* Release callback */
    void (*release)(struct ArrowSchema *);
    /* Opaque producer-specific data */
    void *private_data;
};

struct ArrowArray {
    /* Array data description */
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;

    /* Release callback */
    void (*release)(struct ArrowArray *);
    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    /* Callbacks providing stream functionality */
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);

    /* Release callback */
    void (*release)(struct ArrowArrayStream *);

    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

/* Device type for the allocated memory */
typedef int32_t ArrowDeviceType;

/* CPU device, same as using ArrowArray directly instead of ArrowDeviceArray */
#define ARROW_DEVICE_CPU 1
/* CUDA GPU Device */
#define ARROW_DEVICE_CUDA 2
/* Pinned CUDA CPU memory by cudaMallocHost */
#define ARROW_DEVICE_CUDA_HOST 3
/* OpenCL Device */
#define ARROW_DEVICE_OPENCL 4
/* Vulkan buffer for next-gen graphics */
#define ARROW_DEVICE_VULKAN 7
/* Metal for Apple GPU */
#define ARROW_DEVICE_METAL 8
/* Verilog simulator buffer */
#define ARROW_DEVICE_VPI 9
/* ROCm GPUs for AMD GPUs */
#define ARROW_DEVICE_ROCM 10
/* Pinned ROCm CPU memory allocated by hipMallocHost */
#define ARROW_DEVICE_ROCM_HOST 11
/* Reserved for extension */
#define ARROW_DEVICE_EXT_DEV 12
/* CUDA managed/unified memory allocated by cudaMallocManaged */
#define ARROW_DEVICE_CUDA_MANAGED 13
/* unified shared memory allocated on a oneAPI non-partitioned device. */
#define ARROW_DEVICE_ONEAPI 14
/* GPU support for next-gen WebGPU standard. */
#define ARROW_DEVICE_WEBGPU 15
/* Qualcomm Hexagon DSP */
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
    /* the Allocated Array */
    struct ArrowArray array;
    /* The device id to identify a specific device */
    int64_t device_id;
    /* The type of device which can access this memory. */
    ArrowDeviceType device_type;
    /* An event-like object to synchronize on if needed. */
    void *sync_event;
    /* Reserved bytes for future expansion. */
    int64_t reserved[3];
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

/* --- sluice <-> Arrow --- */

/* Imports a struct array (format "+s") whose children are columns of types sluice
 * knows, or one such array (one column named by the schema): every integer and float
 * format, "b", "tdD", timestamps without a time zone, decimal128, "u", "U" and
 * dictionaries of "u"/"U" (docs/ARROW.md lists how each is taken; booleans, decimals of
 * precision <= 18, other timestamp units and non-int32 indexes are converted, the rest
 * shared). Moves *array and *schema (their release becomes NULL). On failure nothing
 * is moved, the caller still owns both, and the message is in sl_last_errmsg().
 * Errors: SL_EINVAL (NULL or released input), SL_EUNSUPPORTED (a type sluice lacks),
 * SL_EFORMAT (inconsistent lengths, missing buffers, string offsets out of order, an
 * index past its dictionary, a value that does not fit its sluice type), SL_ENOMEM. */
SL_API int sl_batch_import_arrow(struct ArrowArray *array, struct ArrowSchema *schema,
                                 sl_batch_t **out);
/* Exports a batch as a struct array and its schema; each column's buffers stay shared
 * with the batch (zero-copy) until the consumer releases the array, except bool and
 * decimal(P<=18) columns, which are converted (bit-packed, widened to decimal128). DICT
 * columns become int32 indexes over a utf8 dictionary array. */
SL_API int sl_batch_export_arrow(sl_batch_t *b, struct ArrowArray *array,
                                 struct ArrowSchema *schema);
/* Exports only the schema of a batch. */
SL_API int sl_batch_export_schema(const sl_batch_t *b, struct ArrowSchema *schema);

/* Imports every batch of a stream into a new table, then releases the stream. */
SL_API int sl_table_import_stream(struct ArrowArrayStream *stream, sl_table_t **out);
/* Exports a table as a stream; the stream holds a reference to the table. */
SL_API int sl_table_export_stream(sl_table_t *t, struct ArrowArrayStream *stream);

/* Device arrays. CPU devices (ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA_HOST) are imported
 * like plain arrays. ARROW_DEVICE_CUDA arrays are imported zero-copy as columns whose
 * home is GPU `device_id`, after waiting on sync_event (a cudaEvent_t*, may be NULL);
 * without CUDA support that is SL_EUNSUPPORTED. */
SL_API int sl_batch_import_device_arrow(struct ArrowDeviceArray *array,
                                        struct ArrowSchema *schema, sl_batch_t **out);
/* Exports a batch as a device array on the device where its columns live (CPU for
 * host-resident batches, with sync_event NULL). */
SL_API int sl_batch_export_device_arrow(sl_batch_t *b, struct ArrowDeviceArray *array,
                                        struct ArrowSchema *schema);

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_ARROW_H */
