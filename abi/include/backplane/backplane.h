/*
 * Backplane host API: what a host application calls to load backend plugins,
 * list devices, move tensors and call operators. Pure C99.
 *
 * Conventions (docs/abi.md):
 *   - Every function returns a bp_status_t (BP_STATUS_OK == 0) unless noted.
 *     On error, bp_last_error_message() on the same thread names the
 *     operator or function, the argument, what was expected and what came,
 *     and every output parameter and tensor is left unchanged.
 *   - Output parameters are named out_*. Returned objects are owned by the
 *     caller (release/destroy them); borrowed pointers say how long they live.
 *   - Destroy/release functions accept NULL.
 *   - Thread-safety: a bp_context_t is free-threaded. Operator calls, tensor
 *     functions and queries may run concurrently on any threads, also while
 *     plugins load and unload. A tensor may be read concurrently; writing a
 *     tensor while another thread uses it is a data race, as in PyTorch.
 *   - No C++ exception crosses this API.
 */
#ifndef BACKPLANE_BACKPLANE_H_
#define BACKPLANE_BACKPLANE_H_

#include "backplane/backend.h"
#include "backplane/dlpack_versioned.h" /* DLPack 1.x structs (ABI 1.6 addition) */
#include "backplane/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Opaque handles ------------------------------------------------------ */
typedef struct bp_context_t bp_context_t;           /* owns plugins, ops, caches */
typedef struct bp_plugin_t bp_plugin_t;             /* a loaded plugin; owned by the context */
typedef struct bp_tensor_t bp_tensor_t;             /* refcounted */
typedef struct bp_op_t bp_op_t;                     /* an operator; owned by the context */
typedef struct bp_registration_t bp_registration_t; /* a host-side impl/fallback registration */

/* A device: the backend (dispatch key) and the device index within it.
 * Backend 0 is always "cpu" (host memory). */
typedef struct bp_device_t {
  int32_t backend;
  int32_t index;
} bp_device_t;

/* One argument of an operator call. Fixed layout (24 bytes), frozen for ABI
 * major 1. Pointers are borrowed for the duration of the call. */
typedef struct bp_value_t {
  int32_t kind;      /* enum bp_value_kind */
  int32_t reserved0; /* zero */
  union {
    bp_tensor_t* tensor;                                       /* BP_VALUE_TENSOR */
    struct { bp_tensor_t* const* data; int64_t size; } tensor_list;
    int64_t i;                                                 /* BP_VALUE_INT */
    double d;                                                  /* BP_VALUE_DOUBLE */
    int32_t b;                                                 /* BP_VALUE_BOOL */
    struct { const int64_t* data; int64_t size; } int_list;    /* BP_VALUE_INT_LIST */
    DLDataType dtype;                                          /* BP_VALUE_DTYPE */
    const char* str;                                           /* BP_VALUE_STRING */
  } u;
} bp_value_t;

/* ---- Library and errors -------------------------------------------------- */

/* The ABI version this library implements (BP_ABI_VERSION at its build). */
BP_API uint32_t bp_abi_version(void);
/* The library version, "1.0.0". Static string. */
BP_API const char* bp_version_string(void);
/* The status of the last failed call on this thread (OK if none failed). */
BP_API bp_status_t bp_last_error_status(void);
/* The message of the last failed call on this thread ("" if none). Valid
 * until the next Backplane call on this thread. */
BP_API const char* bp_last_error_message(void);
/* "INVALID_ARGUMENT" for BP_STATUS_INVALID_ARGUMENT, ...; static string. */
BP_API const char* bp_status_name(bp_status_t status);

/* ---- Context ------------------------------------------------------------- */

/* Receives log messages (fallback warnings, plugin logs). `message` is
 * borrowed for the call. Called from any thread. */
typedef void (*bp_log_fn)(void* user_data, int32_t level, const char* message);

typedef struct bp_context_options_t {
  size_t struct_size;
  /* 1: a CPU fallback is an error (FAILED_PRECONDITION) instead of a warning.
   * The environment variable BACKPLANE_STRICT=1 sets it too. */
  int32_t strict_fallback;
  /* 1: load plugins by discovery (bp_plugin_discover) during create. */
  int32_t discover_plugins;
  bp_log_fn log_callback;        /* NULL: warnings go to stderr */
  void* log_user_data;
  int32_t min_log_level;         /* enum bp_log_level; default WARNING */
} bp_context_options_t;

/* Creates a context. `options` may be NULL (defaults: not strict, no
 * discovery, log to stderr). Errors: INVALID_ARGUMENT (NULL out_context,
 * struct_size too small), OUT_OF_MEMORY. */
BP_API bp_status_t bp_context_create(const bp_context_options_t* options,
                                     bp_context_t** out_context);
/* Unloads every plugin and frees everything the context owns. Tensors still
 * alive are a caller bug (reported in debug builds). Accepts NULL. */
BP_API void bp_context_destroy(bp_context_t* context);
/* Turns strict fallback mode on (1) or off (0). */
BP_API bp_status_t bp_context_set_strict_fallback(bp_context_t* context, int32_t strict);

/* ---- Plugins ------------------------------------------------------------- */

/* Loads the plugin at `path` (dlopen with RTLD_LOCAL), negotiates the ABI
 * version, runs its init and registers its kernels. `out_plugin` may be NULL.
 * `path` is resolved first (realpath: relative to the current directory, every
 * symbolic link followed) and dlopen gets that absolute path, so the library
 * path is never searched. Unless the environment has
 * BACKPLANE_ALLOW_INSECURE_PLUGINS=1 (development only; read with
 * secure_getenv), the file must be owned by root or the running user and not
 * world-writable, and so must every directory and symbolic link on the way
 * (a directory world-writable with the sticky bit, like /tmp, is accepted).
 * A file already loaded in this context (the same device and inode: the same
 * path, a symbolic or hard link) is refused before dlopen, none of its code
 * run again. Transactional: on any error none of the
 * plugin's kernels, operators or devices remain. Loading a plugin runs its
 * code in this process: docs/security.md.
 * Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (not a regular file, a
 * symbolic link loop, not a shared library, no bp_plugin_entry symbol, bad
 * backend table, more than BP_MAX_DEVICES devices), PERMISSION_DENIED
 * (an owner or permission check failed), INCOMPATIBLE_VERSION (other ABI
 * major), ALREADY_EXISTS (the same file, or a backend of the same name, is
 * loaded), FAILED_PRECONDITION (called from the thread loading a plugin into
 * this context: a plugin's init calling back), OUT_OF_MEMORY, or the status its
 * init returned (with its message, or a generic one naming the plugin).
 * Costs: one dlopen plus registration (target <= 5 ms). */
BP_API bp_status_t bp_plugin_load(bp_context_t* context, const char* path,
                                  bp_plugin_t** out_plugin);

/* Loads plugins by discovery, in this order, skipping a backend name already
 * loaded: (1) BACKPLANE_PLUGINS, a ':'-separated list of plugin files;
 * (2) BACKPLANE_PLUGIN_PATH, a ':'-separated list of directories searched
 * for files named lib*.so; (3) the install directory
 * <libdir>/backplane/plugins, and the build tree's plugin directory when run
 * from it. Entries of (1) and (2) that are not absolute paths (".",
 * "plugins") are ignored with a warning. Environment variables are read with
 * secure_getenv (ignored in setuid programs). Every file passes the checks of
 * bp_plugin_load (resolved path, owners and permissions). A file that fails to
 * load is reported through the log callback and skipped. `out_loaded` (may
 * be NULL) receives how many loaded. */
BP_API bp_status_t bp_plugin_discover(bp_context_t* context, int32_t* out_loaded);

/* Unloads a plugin: removes its registrations and its backend; tensors still
 * on its devices keep the library mapped until they are released (their
 * operators then fail with FAILED_PRECONDITION). Safe while other threads
 * dispatch. Errors: INVALID_ARGUMENT (NULL, not of this context). */
BP_API bp_status_t bp_plugin_unload(bp_context_t* context, bp_plugin_t* plugin);

/* ---- Backends and devices ------------------------------------------------ */

typedef struct bp_backend_info_t {
  size_t struct_size;
  const char* name;              /* borrowed: lives while the backend is loaded */
  const char* version;           /* plugin version; borrowed, likewise */
  const char* plugin_path;       /* "" for the built-in cpu memory; borrowed, likewise */
  const char* no_device_reason;  /* NULL if it has devices; borrowed, likewise */
  uint32_t abi_version;          /* negotiated with the plugin */
  int32_t device_type;           /* DLDeviceType */
  int32_t device_count;
  int32_t backend;               /* the dispatch key, as in bp_device_t.backend */
  int32_t loaded;                /* 0 for a backend slot whose plugin was unloaded */
} bp_backend_info_t;

/* Number of backend slots (loaded or not); backend ids are 0..count-1. */
BP_API bp_status_t bp_backend_count(bp_context_t* context, int32_t* out_count);
/* Fills `out_info` (struct_size preset) for backend id `backend`.
 * Errors: OUT_OF_RANGE, INVALID_ARGUMENT. */
BP_API bp_status_t bp_backend_info(bp_context_t* context, int32_t backend,
                                   bp_backend_info_t* out_info);
/* Finds a backend id by name ("cpu"). Errors: NOT_FOUND. */
BP_API bp_status_t bp_backend_find(bp_context_t* context, const char* name, int32_t* out_backend);
/* Parses "cpu", "opencl:1" into a device. Errors: NOT_FOUND, INVALID_ARGUMENT. */
BP_API bp_status_t bp_device_parse(bp_context_t* context, const char* spec, bp_device_t* out_device);
/* Fills device properties (struct_size preset). Errors: OUT_OF_RANGE. */
BP_API bp_status_t bp_device_properties(bp_context_t* context, bp_device_t device,
                                        bp_device_properties_t* out_properties);
/* Waits for all work queued on every stream of the device (ABI 1.4; before
 * it, the default stream only). Errors: NOT_FOUND, and what the backend
 * reports. */
BP_API bp_status_t bp_device_synchronize(bp_context_t* context, bp_device_t device);

/* ---- Caching allocator (one per device) ---------------------------------- */

typedef struct bp_allocator_stats_t {
  size_t struct_size;
  uint64_t allocated_bytes;        /* held by live tensors (rounded sizes) */
  uint64_t reserved_bytes;         /* obtained from the device, cached or in use */
  uint64_t peak_allocated_bytes;
  uint64_t device_allocations;     /* calls to the backend's allocate() */
  uint64_t cache_hits;             /* requests served from the cache */
} bp_allocator_stats_t;

BP_API bp_status_t bp_allocator_stats(bp_context_t* context, bp_device_t device,
                                      bp_allocator_stats_t* out_stats);
/* Sets the device's peak_allocated_bytes to its current allocated_bytes, so
 * the peak is measured from now on (as torch.cuda.reset_peak_memory_stats).
 * Thread-safe. Errors: INVALID_ARGUMENT (NULL context), NOT_FOUND (no such
 * device). Host API, added in 1.6's second revision (plugins unaffected). */
BP_API bp_status_t bp_allocator_reset_peak_stats(bp_context_t* context, bp_device_t device);
/* Returns every cached (unused) block of the device to the backend. */
BP_API bp_status_t bp_allocator_empty_cache(bp_context_t* context, bp_device_t device);

/* ---- Tensors ------------------------------------------------------------- */
/* Sizes and strides are in elements; byte counts are in bytes. A tensor has
 * at most BP_MAX_NDIM dims; its element count and byte size must fit in
 * int64 (OUT_OF_RANGE otherwise). */

/* A new uninitialized contiguous tensor. Errors: INVALID_ARGUMENT (negative
 * size, unsupported dtype, NULL), OUT_OF_RANGE (overflow), NOT_FOUND (no
 * such device), OUT_OF_MEMORY. */
BP_API bp_status_t bp_tensor_empty(bp_context_t* context, bp_device_t device, int32_t ndim,
                                   const int64_t* sizes, DLDataType dtype,
                                   bp_tensor_t** out_tensor);
/* A new contiguous tensor on `device` holding a copy of `nbytes` of
 * row-major host data; nbytes must equal numel * itemsize. */
BP_API bp_status_t bp_tensor_from_host(bp_context_t* context, bp_device_t device, int32_t ndim,
                                       const int64_t* sizes, DLDataType dtype,
                                       const void* data, size_t nbytes,
                                       bp_tensor_t** out_tensor);
/* Copies the tensor's elements, row-major, to host memory `dst` of `nbytes`
 * (== numel * itemsize). Synchronizes the tensor's stream. */
BP_API bp_status_t bp_tensor_to_host(const bp_tensor_t* tensor, void* dst, size_t nbytes);
/* A new contiguous copy of `tensor` on `device` (any backend to any backend). */
BP_API bp_status_t bp_tensor_to_device(const bp_tensor_t* tensor, bp_device_t device,
                                       bp_tensor_t** out_tensor);
/* Wraps a DLPack tensor zero-copy. On success the tensor owns `managed` and
 * calls its deleter exactly once, when the last reference is released; on
 * error ownership stays with the caller. The DLPack device must belong to a
 * loaded backend. Checked: dtype (lanes 1, a supported type), ndim in
 * [0, BP_MAX_NDIM], shape not NULL when ndim > 0, no negative size, the
 * element count and byte size fit int64, data not NULL unless there are no
 * elements, byte_offset a multiple of the item size, device_id 0 for kDLCPU.
 * Not checkable (DLPack carries no buffer size): that data + byte_offset and
 * the strides stay inside the producer's buffer; that is the producer's
 * promise. Errors: INVALID_ARGUMENT (NULL, lanes, dtype, ndim, a negative
 * size, NULL data, byte_offset, kDLCPU device_id != 0), OUT_OF_RANGE (element
 * count or byte size overflows int64), NOT_FOUND (no loaded backend has the
 * DLPack device type, or no such device index). */
BP_API bp_status_t bp_tensor_from_dlpack(bp_context_t* context, DLManagedTensor* managed,
                                         bp_tensor_t** out_tensor);
/* Exports zero-copy. The returned DLManagedTensor holds a reference on the
 * tensor's storage; the consumer calls its deleter exactly once. A
 * read-only tensor (bp_tensor_is_read_only) is exported too, though DLPack
 * 0.6 cannot mark it: the consumer must not write it (the Python module
 * refuses such a legacy capsule; bp_tensor_to_dlpack_versioned marks it). */
BP_API bp_status_t bp_tensor_to_dlpack(bp_tensor_t* tensor, DLManagedTensor** out_managed);

/* The DLPack version bp_tensor_to_dlpack_versioned writes (1.0); imports take
 * any 1.x (minor versions only add). */
#define BP_DLPACK_VERSION_MAJOR 1
#define BP_DLPACK_VERSION_MINOR 0

/* Wraps a DLPack 1.x versioned tensor zero-copy, as DLPack 1.x
 * (DLManagedTensorVersioned, backplane/dlpack_versioned.h). ABI 1.6 host API
 * addition. `managed` (owned on success, borrowed on error): on success the
 * tensor owns it and calls its deleter exactly once, when the last
 * reference on the storage is released (views and exports included); on
 * error ownership stays with the caller, who calls the deleter. Shapes,
 * strides, dtypes and devices are taken and checked exactly as
 * bp_tensor_from_dlpack does (same checks, same errors); `flags`:
 *   - DLPACK_FLAG_BITMASK_READ_ONLY: the storage is recorded read-only.
 *     Backplane then never writes it: an operator call that would (in place,
 *     as an `out=` argument, the destination of copy_ or of an asynchronous
 *     copy, a collective's output) fails with INVALID_ARGUMENT naming the
 *     operator and the argument, and writes nothing; it applies to every view
 *     of the storage, and bp_tensor_to_dlpack_versioned exports it with
 *     READ_ONLY set. Unlike bp_tensor_set_constant, kernels are not told the
 *     values are constant (the producer may still change them).
 *   - DLPACK_FLAG_BITMASK_IS_COPIED and reserved bits: accepted, ignored.
 * version.major must be 1; any minor is accepted. Thread-safe.
 * Errors: INVALID_ARGUMENT (NULL; version.major != 1, the message naming
 * the version; every error of bp_tensor_from_dlpack), OUT_OF_RANGE,
 * NOT_FOUND (as bp_tensor_from_dlpack). */
BP_API bp_status_t bp_tensor_from_dlpack_versioned(bp_context_t* context, DLManagedTensorVersioned* managed,
                                                   bp_tensor_t** out_tensor);
/* Exports zero-copy as DLPack 1.x (DLManagedTensorVersioned). ABI 1.6 host
 * API addition. *out_managed (owned by the caller) has version
 * {BP_DLPACK_VERSION_MAJOR, BP_DLPACK_VERSION_MINOR}, the tensor's device,
 * dtype, sizes, strides (in elements) and byte_offset, and holds a
 * reference on the tensor's storage until the caller calls its deleter,
 * exactly once; the shape and strides arrays live as long as the struct.
 * flags: what the caller asks to be set, DLPACK_FLAG_BITMASK_READ_ONLY
 * and/or DLPACK_FLAG_BITMASK_IS_COPIED (a caller that copied the tensor
 * first says so); READ_ONLY is also set, whatever `flags` says, when the
 * storage is read-only (a READ_ONLY import) or constant
 * (bp_tensor_set_constant). Thread-safe. Errors: INVALID_ARGUMENT (NULL
 * tensor or out_managed, a flag bit other than those two). */
BP_API bp_status_t bp_tensor_to_dlpack_versioned(bp_tensor_t* tensor, uint64_t flags,
                                                 DLManagedTensorVersioned** out_managed);
/* 1 when the tensor's storage is read-only (imported with
 * DLPACK_FLAG_BITMASK_READ_ONLY by bp_tensor_from_dlpack_versioned), else 0
 * (also for NULL). A read-only storage is never written by Backplane (see
 * bp_tensor_from_dlpack_versioned). Thread-safe. ABI 1.6 host API addition. */
BP_API int32_t bp_tensor_is_read_only(const bp_tensor_t* tensor);

/* Getters. They never fail for a live tensor; returned pointers live as long
 * as the tensor. */
BP_API int32_t bp_tensor_ndim(const bp_tensor_t* tensor);
BP_API const int64_t* bp_tensor_sizes(const bp_tensor_t* tensor);
BP_API const int64_t* bp_tensor_strides(const bp_tensor_t* tensor);
BP_API int64_t bp_tensor_storage_offset(const bp_tensor_t* tensor); /* elements */
BP_API int64_t bp_tensor_numel(const bp_tensor_t* tensor);
BP_API DLDataType bp_tensor_dtype(const bp_tensor_t* tensor);
BP_API bp_device_t bp_tensor_device(const bp_tensor_t* tensor);
BP_API int32_t bp_tensor_is_contiguous(const bp_tensor_t* tensor);

/* Makes the tensor's storage constant (ABI 1.5): from now on Backplane never
 * writes it. Irreversible; it applies to every tensor viewing that storage.
 * An operator call that would write it (in place, as an `out=` argument, as
 * the destination of copy_ or of an asynchronous copy) fails with
 * INVALID_ARGUMENT naming the operator and the argument, and writes nothing.
 * Kernels see such a tensor argument with BP_KERNEL_ARG_CONSTANT and a
 * storage id (backend.h), so a backend may keep a transformed copy of it
 * (the CPU backend keeps convolution weights in oneDNN's layout). Memory
 * reached outside Backplane (a DLPack export, the CPU device's data
 * pointer) must not be written either: a kernel may have kept a copy made
 * from the old bytes. What a session loads as weights is the intended use
 * (the ONNX runner marks every initializer it uploads).
 * Thread-safe; idempotent. Errors: INVALID_ARGUMENT (NULL tensor). */
BP_API bp_status_t bp_tensor_set_constant(bp_tensor_t* tensor);
/* 1 when the tensor's storage is constant (bp_tensor_set_constant), else 0
 * (also for NULL). Thread-safe. ABI 1.5. */
BP_API int32_t bp_tensor_is_constant(const bp_tensor_t* tensor);

/* Reference counting. A tensor starts with one reference. Releasing more
 * often than retained is a bug, caught in debug builds (abort with a message). */
BP_API void bp_tensor_retain(bp_tensor_t* tensor);
BP_API void bp_tensor_release(bp_tensor_t* tensor);

/* ---- Operators ----------------------------------------------------------- */

/* Finds an operator by schema name: "add.Tensor", "relu", "myvendor::gelu2".
 * The handle lives as long as the context (or the plugin that defined it).
 * Resolve once, call many times. Errors: NOT_FOUND. */
BP_API bp_status_t bp_op_find(bp_context_t* context, const char* name, bp_op_t** out_op);

/* Calls an operator with boxed arguments in schema order; trailing arguments
 * with defaults may be omitted. `out_results` receives num_results new
 * references (functional ops: new tensors; in-place and out= variants: the
 * mutated tensor); pass NULL and 0 to drop them. The call dispatches to the
 * backend of the tensor arguments (0-dim CPU tensors join any device as
 * scalars): its kernel, else its fallback, else the CPU fallback (unless
 * strict). Errors: INVALID_ARGUMENT (argument count, kind, shape, dtype,
 * device mix), OUT_OF_RANGE (dims), UNIMPLEMENTED (no kernel anywhere),
 * FAILED_PRECONDITION (strict mode refused a fallback), OUT_OF_MEMORY, or a
 * kernel's error. On error no output tensor was modified. */
BP_API bp_status_t bp_op_call(bp_context_t* context, const bp_op_t* op, const bp_value_t* args,
                              int32_t num_args, bp_tensor_t** out_results, int32_t num_results);

typedef struct bp_op_info_t {
  size_t struct_size;
  const char* name;     /* "add.Tensor"; borrowed, lives with the op */
  const char* schema;   /* full schema string; likewise */
  const char* kind;     /* "pointwise", "reduction", "view", "composite", "custom", ... */
  const char* doc;      /* one line; may be "" */
  int32_t num_arguments;
  int32_t num_returns;
} bp_op_info_t;

/* Number of operators; operator ids are 0..count-1 (stable while no plugin
 * is loaded or unloaded). */
BP_API bp_status_t bp_op_count(bp_context_t* context, int32_t* out_count);
BP_API bp_status_t bp_op_at(bp_context_t* context, int32_t index, bp_op_t** out_op);
BP_API bp_status_t bp_op_info(const bp_op_t* op, bp_op_info_t* out_info);

enum bp_dispatch_kind {
  BP_DISPATCH_NONE = 0,          /* nothing can run it on that backend */
  BP_DISPATCH_NATIVE = 1,        /* the backend registered a kernel */
  BP_DISPATCH_CORE = 2,          /* views and composites: done by the core */
  BP_DISPATCH_BACKEND_FALLBACK = 3,
  BP_DISPATCH_CPU_FALLBACK = 4
};
/* How a call of `op` on backend `backend` would be served now. */
BP_API bp_status_t bp_op_dispatch_kind(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                       int32_t* out_kind);

/* Defines a host-side operator. Same contract as bp_host_api_t.define_op;
 * the operator lives as long as the context. `out_op` may be NULL. */
BP_API bp_status_t bp_op_define(bp_context_t* context, const char* schema, bp_kernel_fn cpu_kernel,
                                void* cpu_kernel_data, bp_meta_fn meta, void* meta_data,
                                bp_op_t** out_op);
/* Registers a kernel for (op, backend) from the host. A second registration
 * for the same pair is ALREADY_EXISTS unless flags has BP_REGISTER_OVERRIDE;
 * removing the registration restores the kernel it replaced. The handle is
 * owned by the context; remove it with bp_registration_remove. */
BP_API bp_status_t bp_op_register_kernel(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                         bp_kernel_fn kernel, void* kernel_data, uint32_t flags,
                                         bp_registration_t** out_registration);
/* Registers a backend-wide fallback for `backend` from the host. */
BP_API bp_status_t bp_register_fallback(bp_context_t* context, int32_t backend,
                                        bp_kernel_fn fallback, void* fallback_data, uint32_t flags,
                                        bp_registration_t** out_registration);
/* Removes a host-side registration; the previous kernel comes back. Safe
 * while other threads dispatch. Errors: INVALID_ARGUMENT (NULL, removed twice). */
BP_API bp_status_t bp_registration_remove(bp_context_t* context, bp_registration_t* registration);

/* Masks (masked = 1) or restores (masked = 0) the kernel a backend
 * registered for `op` (ABI 1.1). While masked, calls of `op` on that backend's
 * devices in this context are served as if the backend had registered no
 * kernel for it: by the backend's own fallback (bp_host_api_t.register_fallback),
 * else the CPU fallback, else UNIMPLEMENTED; in strict mode the CPU fallback is
 * refused with FAILED_PRECONDITION, whose message names the operator, the
 * backend and the mask. bp_op_dispatch_kind reports the masked pair that way,
 * and bp_fallback_count / bp_native_count count such calls as fallbacks.
 * Purpose: testing a backend's fallback path, and comparing a kernel with the
 * CPU result, without rebuilding the plugin.
 *
 * The mask applies to the kernel table `op` shares with its variants: masking
 * "add.Tensor", "add_.Tensor" or "add.out" masks all three. It applies to
 * whatever kernel is registered for the pair, also one registered after the
 * call (host or plugin), and lasts until restored or the context is destroyed;
 * the backend id keeps it across an unload and reload of the backend's plugin
 * (a reloaded backend takes its old id). Masking an operator the backend has
 * no kernel for, or masking twice, is allowed and changes nothing. Views and
 * composites are done by the core and are unaffected; a masked copy_ kernel
 * makes the core move the data itself (counted in neither counter).
 *
 * The CPU backend (id 0) cannot be masked: its kernels are the CPU fallback
 * every other backend falls back to (INVALID_ARGUMENT).
 *
 * Thread-safety: safe while other threads call operators; operator calls
 * stay lock-free (a new kernel table snapshot is published). A call that
 * started before this function returned may still run the kernel it found;
 * every call that starts after it sees the new state. Concurrent calls of
 * this function and registrations serialize on the context.
 *
 * Errors: INVALID_ARGUMENT (NULL context or op, op of another context,
 * masked not 0 or 1, backend 0), OUT_OF_RANGE (backend id not in
 * [0, bp_backend_count)), FAILED_PRECONDITION (op was removed with the plugin
 * that defined it). On error nothing changes. */
BP_API bp_status_t bp_op_set_kernel_masked(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                           int32_t masked);

/* How many times `op` ran on `backend` through a fallback: the backend's own
 * (bp_host_api_t.register_fallback) or the CPU fallback. Into *out_count.
 *
 * Thread-safety: any thread, while other threads call operators; the count
 * is exact for every call that returned before this one began (a call still
 * running may or may not be in it). Counting costs a call no locked
 * instruction for the first threads to use the library (per-thread shards).
 *
 * Errors: INVALID_ARGUMENT (NULL context, op or out_count), OUT_OF_RANGE
 * (backend id not in [0, bp_backend_count)); *out_count is then unchanged. */
BP_API bp_status_t bp_fallback_count(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                     uint64_t* out_count);
/* How many times `op` ran on `backend` through the backend's own kernel
 * without casts by the core (a call the core cast for is a cast route:
 * bp_cast_count). Into *out_count. Thread-safety and errors as
 * bp_fallback_count's. */
BP_API bp_status_t bp_native_count(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                   uint64_t* out_count);
/* The cast route (ABI 1.3): how many times `op` ran on `backend` through the
 * backend's own kernel after the core cast arguments (or converted a result)
 * to the dtypes the kernel computes in, e.g. exp of an int32 tensor on a
 * backend whose exp kernel takes float32 only; and the bytes those casts
 * moved between the host and the device (*out_bytes, may be NULL; 0 when the
 * backend's copy_ kernel converted on the device). The CPU backend's casts
 * are its own arithmetic: its calls count as native. A call counts in exactly
 * one of bp_native_count, bp_cast_count and bp_fallback_count. Errors as
 * bp_native_count's. */
BP_API bp_status_t bp_cast_count(bp_context_t* context, const bp_op_t* op, int32_t backend, uint64_t* out_count,
                                 uint64_t* out_bytes);

/* ---- Transfer counters (ABI 1.2) ------------------------------------------ */

/* Data the core moved between the host and one backend's devices, per
 * direction, since the context was created or the counters were last
 * reset: every copy the core asks a backend for (tensor moves, cross-device
 * copy_, fallbacks), one count per backend copy call. Bytes are bytes as
 * passed to the backend's copy function; a strided view that the core stages
 * through a span counts the span. Copies that happen inside a backend's own
 * kernels are not seen. Backend 0's memory is host memory: its counters stay 0. */
typedef struct bp_transfer_stats_t {
  size_t struct_size;              /* set by the caller; a larger struct's tail is untouched */
  uint64_t host_to_device_count;   /* copy_host_to_device calls */
  uint64_t host_to_device_bytes;
  uint64_t device_to_host_count;   /* copy_device_to_host calls */
  uint64_t device_to_host_bytes;
  uint64_t device_to_device_count; /* copy_device_to_device calls */
  uint64_t device_to_device_bytes;
  /* ABI 1.3: calls of any operator served by the cast route on this backend
   * (bp_cast_count), and the host<->device bytes of their casts (included in
   * the counters above). */
  uint64_t cast_count;
  uint64_t cast_bytes;
} bp_transfer_stats_t;

/* Fills `out_stats` (struct_size preset) with the transfer counters of
 * backend id `backend`. Thread-safe and lock-free: counters are read one by
 * one while other threads may be copying, so the fields of one snapshot can
 * be a few copies apart. A caller's older, smaller struct (ABI 1.2, without
 * the cast fields) is accepted; fields past its struct_size are not written.
 * Errors: INVALID_ARGUMENT (NULL, struct_size smaller than the ABI 1.2
 * struct), OUT_OF_RANGE (backend not in [0, bp_backend_count)). */
BP_API bp_status_t bp_transfer_stats(bp_context_t* context, int32_t backend,
                                     bp_transfer_stats_t* out_stats);
/* Sets the transfer counters of backend id `backend` to zero. Thread-safe;
 * copies running concurrently may be counted before or after the reset.
 * Errors: INVALID_ARGUMENT (NULL), OUT_OF_RANGE. */
BP_API bp_status_t bp_transfer_stats_reset(bp_context_t* context, int32_t backend);

#ifdef __cplusplus
} /* extern "C" */
#endif

#include "backplane/call_plan.h" /* ABI 1.3: prepared calls */
#include "backplane/streams.h"   /* ABI 1.4: streams and events */
#include "backplane/comm.h"      /* ABI 1.6: communicators and collectives */

#endif /* BACKPLANE_BACKPLANE_H_ */
