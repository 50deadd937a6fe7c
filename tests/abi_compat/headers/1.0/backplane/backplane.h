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
 * Errors: NOT_FOUND (no such file), INVALID_ARGUMENT (not a shared library,
 * or no bp_plugin_entry symbol), INCOMPATIBLE_VERSION (other ABI major),
 * ALREADY_EXISTS (a backend of the same name is loaded), or the status its
 * init returned. Costs: one dlopen plus registration (target <= 5 ms). */
BP_API bp_status_t bp_plugin_load(bp_context_t* context, const char* path,
                                  bp_plugin_t** out_plugin);

/* Loads plugins by discovery, in this order, skipping a backend name already
 * loaded: (1) BACKPLANE_PLUGINS, a ':'-separated list of plugin files;
 * (2) BACKPLANE_PLUGIN_PATH, a ':'-separated list of directories searched
 * for lib*backplane_*.so / *.so plugins; (3) the install directory
 * <libdir>/backplane/plugins, and the build tree's plugin directory when run
 * from it. Environment variables are read with secure_getenv (ignored in
 * setuid programs). A file that fails to load is reported through the log
 * callback and skipped. `out_loaded` (may be NULL) receives how many loaded. */
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
/* Waits for all work queued on the device's default stream. */
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
 * loaded backend. Errors: INVALID_ARGUMENT (NULL, lanes != 1, bad ndim). */
BP_API bp_status_t bp_tensor_from_dlpack(bp_context_t* context, DLManagedTensor* managed,
                                         bp_tensor_t** out_tensor);
/* Exports zero-copy. The returned DLManagedTensor holds a reference on the
 * tensor's storage; the consumer calls its deleter exactly once. */
BP_API bp_status_t bp_tensor_to_dlpack(bp_tensor_t* tensor, DLManagedTensor** out_managed);

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

/* How many times `op` ran on `backend` through a fallback: the backend's own
 * (bp_host_api_t.register_fallback) or the CPU fallback. */
BP_API bp_status_t bp_fallback_count(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                     uint64_t* out_count);
/* How many times `op` ran on `backend` through the backend's own kernel. */
BP_API bp_status_t bp_native_count(bp_context_t* context, const bp_op_t* op, int32_t backend,
                                   uint64_t* out_count);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_BACKPLANE_H_ */
