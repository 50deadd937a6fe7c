/*
 * Backplane plugin API: what a backend plugin (CPU, CUDA, HIP, OpenCL, a new
 * accelerator) implements. Pure C99; a plugin includes only abi/ headers.
 *
 * Life of a plugin (the host does each step once, in this order):
 *   1. dlopen(path, RTLD_NOW | RTLD_LOCAL); dlsym(BP_PLUGIN_ENTRY_SYMBOL).
 *   2. entry() returns a static bp_plugin_entry_t.
 *   3. negotiate(): the host offers its newest ABI version; the plugin answers
 *      the highest version both support. Majors must match.
 *   4. init(): the plugin fills bp_backend_t and registers kernels through the
 *      bp_host_api_t it is handed.
 *   5. ...operator calls on any thread...
 *   6. backend.shutdown(), after every registration of the plugin is removed
 *      and every tensor on its devices is released; then dlclose.
 *
 * Rules (docs/abi.md): a NULL function slot means "unsupported" and the host
 * routes around it; no C++ exception may leave a plugin function; every
 * function returns a bp_status_t and reports details through
 * bp_host_api_t.set_error, or (kernels, ABI >= 1.2) through the call's own
 * bp_kernel_call_t.fail. backplane/plugin_kit.h has helpers for negotiation,
 * struct_size checks and error reporting; backplane/op_args.h (generated from
 * abi/ops.yaml) names every operator and the index of each argument.
 */
#ifndef BACKPLANE_BACKEND_H_
#define BACKPLANE_BACKEND_H_

#include "backplane/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Name of the one symbol a plugin exports. */
#define BP_PLUGIN_ENTRY_SYMBOL "bp_plugin_entry"

/* Opaque host-side handles. */
typedef struct bp_registrar_t bp_registrar_t; /* registration scope of one plugin */

/* A stream: an in-order queue of device work, owned by the backend. The value
 * is opaque to the host (a cudaStream_t, a cl_command_queue, NULL on the CPU). */
typedef void* bp_stream_t;
/* An event recorded on a stream; opaque to the host, owned by the backend. */
typedef void* bp_event_t;

/* ---- Kernel calling convention ------------------------------------------- */

/* One argument as a kernel sees it. Fixed layout (24 bytes), frozen for ABI
 * major 1. Tensor pointers are borrowed for the duration of the call. */
typedef struct bp_kernel_arg_t {
  int32_t kind;  /* enum bp_value_kind */
  int32_t flags; /* BP_KERNEL_ARG_* bits (ABI 1.5; until 1.4 `reserved0`, always zero) */
  union {
    const DLTensor* tensor;                                     /* BP_VALUE_TENSOR */
    /* BP_VALUE_TENSOR with BP_KERNEL_ARG_CONSTANT set (ABI 1.5): `tensor` is
     * the same pointer as u.tensor; `id` names the constant storage. */
    struct { const DLTensor* tensor; uint64_t id; } constant;
    struct { const DLTensor* const* data; int64_t size; } tensor_list;
    int64_t i;                                                  /* BP_VALUE_INT */
    double d;                                                   /* BP_VALUE_DOUBLE */
    int32_t b;                                                  /* BP_VALUE_BOOL: 0 or 1 */
    struct { const int64_t* data; int64_t size; } int_list;     /* BP_VALUE_INT_LIST */
    DLDataType dtype;                                           /* BP_VALUE_DTYPE */
    const char* str;                                            /* BP_VALUE_STRING, NUL-terminated */
  } u;
} bp_kernel_arg_t;

/* bp_kernel_arg_t.flags bits (ABI 1.5).
 *
 * BP_KERNEL_ARG_CONSTANT, on a BP_VALUE_TENSOR argument: the tensor's storage
 * was made constant by the host application (bp_tensor_set_constant): its
 * bytes never change again while u.constant.id names it. The id is non-zero,
 * unique within the process and never reused, not even after the storage is
 * freed, so a kernel may keep something it derived from the values (weights
 * reordered into its own layout, quantization parameters) keyed by
 * (id, the view's byte_offset, shape and strides) and reuse it on any later
 * call that carries the same id: PyTorch's prepacked weights and ONNX
 * Runtime's pre-packed initializers, without a separate prepack operator.
 * The host may leave the flag off where it knows a tensor is constant (a
 * kernel must then read the values); it never sets it on anything else.
 * A 1.0-1.4 host always passes zero flags. What a kernel keeps is its own
 * memory: it bounds it and frees it at shutdown. */
#define BP_KERNEL_ARG_CONSTANT 1

/* What a kernel receives. Built by the dispatcher after the operator's meta
 * function ran: arguments are validated, broadcast and promoted as the
 * "Kernel contract by meta family" comment at the top of abi/ops.yaml
 * (installed as <prefix>/share/backplane/ops.yaml) describes for the
 * operator's `meta:` family, and the outputs are allocated. A kernel only
 * computes; it never re-validates.
 *
 * DLTensor conventions for every tensor a kernel sees:
 *   - data is the storage base as the backend's allocate() returned it
 *     (a host pointer, a CUdeviceptr, a cl_mem, ...); byte_offset is the
 *     view's offset in bytes from that base. Address = data + byte_offset.
 *   - strides are always non-NULL and given in elements; they may be zero
 *     (broadcast) or describe any non-contiguous view. Outputs share no memory
 *     with inputs except as exact aliases (docs/plugin/kernel-contract.md).
 *   - device is the backend's DLPack device type and the device index.
 *   - dtype lanes is 1; bool is {BP_DTYPE_CODE_BOOL, 8, 1}.
 * Lifetime: the call struct and everything it points to are borrowed for the
 * duration of the call only. */
typedef struct bp_kernel_call_t {
  size_t struct_size;
  const char* op_name;           /* "add.Tensor"; static while the op exists */
  const bp_kernel_arg_t* args;   /* the functional schema's arguments, in order */
  int32_t num_args;
  int32_t num_outputs;
  DLTensor* const* outputs;      /* preallocated outputs (in-place ops: the mutated argument) */
  bp_stream_t stream;            /* the device's current stream; enqueue work here */
  int32_t device_index;
  int32_t reserved0;
  void* kernel_data;             /* as given at registration; borrowed */
  void* backend_data;            /* bp_backend_t.backend_data of the kernel's backend */

  /* ---- ABI 1.2: per-call error reporting. Present when
   * BP_KIT_HAS_FIELD(call, fail) (plugin_kit.h) holds, i.e. struct_size
   * reaches past `error_state`; a 1.0/1.1 host's call ends above. ---------- */

  /* Attaches an error message to this call and returns `code`, so a kernel can
   * write `return call->fail(call, BP_STATUS_INVALID_ARGUMENT, "...")`.
   * `call` must be the struct the kernel received; `code` an error status
   * (BP_STATUS_OK records nothing and returns OK). `message` (NUL-terminated,
   * may be NULL for none) is copied, truncated to BP_KERNEL_ERROR_MAX_MESSAGE
   * bytes; like set_error's, it should name the operator, the argument, what
   * was expected and what came. The host reports it as the status message of
   * the operator call (bp_last_error_message() of the caller's thread), so the
   * kernel's own thread-local state is never involved.
   * Thread-safety: may be called from any thread (a kernel's worker threads
   * included) while the kernel runs; the first message attached wins. Calling
   * it after the kernel returned is undefined. Host-owned; never NULL when
   * present. Use bp_kit_fail() (plugin_kit.h) to fall back to
   * bp_host_api_t.set_error on an older host. */
  bp_status_t (*fail)(const struct bp_kernel_call_t* call, bp_status_t code, const char* message);
  /* The host's error slot for this call, used by `fail`. Opaque to the plugin:
   * never read, write or free it. Owned by the host; valid for the duration of
   * the call only. */
  void* error_state;
} bp_kernel_call_t;

/* Longest message, in bytes, the host keeps from a plugin: through
 * bp_kernel_call_t.fail (ABI 1.2) and, since 1.2, through
 * bp_host_api_t.set_error too; longer messages are truncated, and only that
 * many bytes of them are read. */
#define BP_KERNEL_ERROR_MAX_MESSAGE 4096

/* Longest name, in bytes, the host accepts from a plugin: the backend name
 * (bp_backend_t.name), the operator name given to register_kernel, and the
 * operator name (namespace::name.overload) of a define_op schema. Longer
 * names are refused with BP_STATUS_INVALID_ARGUMENT; only that many bytes
 * (plus one) of them are read. The plugin's other strings (version,
 * no_device_reason, log messages, define_op schemas) are capped at
 * BP_KERNEL_ERROR_MAX_MESSAGE bytes: version, no_device_reason and log
 * messages are truncated, a longer schema is refused. */
#define BP_MAX_NAME_LENGTH 128

/* Most devices one backend may report (bp_backend_t.device_count), since ABI
 * 1.2; each device costs the host a caching allocator and a default stream. */
#define BP_MAX_DEVICES 1024

/* A kernel. Returns BP_STATUS_OK, or an error code after attaching a message
 * naming the operator: with call->fail (ABI >= 1.2; bp_kit_fail() picks it) or
 * bp_host_api_t.set_error (any ABI). A kernel that fails with no message gets
 * "<op>: kernel on backend '<name>' failed with <STATUS>". May be called
 * from any thread concurrently with other calls; must not throw.
 * A kernel that cannot run this particular call (a dtype the device lacks,
 * float64 without cl_khr_fp64) returns BP_STATUS_UNIMPLEMENTED before writing
 * anything: the dispatcher then runs the backend fallback or the CPU fallback
 * instead, and counts the call as a fallback. Kernels validate runtime values
 * (integer division by zero) before writing any output. */
typedef bp_status_t (*bp_kernel_fn)(const bp_kernel_call_t* call);

/* A shape/dtype description used by meta functions. */
typedef struct bp_tensor_spec_t {
  size_t struct_size;
  DLDataType dtype;
  int32_t ndim;
  int64_t sizes[BP_MAX_NDIM];
} bp_tensor_spec_t;

/* What a meta function of a custom operator receives: the arguments (tensors
 * carry sizes, strides, dtype and device; data is NULL and must not be read)
 * and room for num_outputs specs to fill (struct_size is preset). */
typedef struct bp_meta_call_t {
  size_t struct_size;
  const char* op_name;
  const bp_kernel_arg_t* args;
  int32_t num_args;
  int32_t num_outputs;
  bp_tensor_spec_t* out_specs;  /* out: one per output */
  void* meta_data;              /* as given at definition; borrowed */
} bp_meta_call_t;

/* A meta function: validates the arguments and fills the output specs.
 * Returns BP_STATUS_OK or an error after set_error. Any thread; must not throw. */
typedef bp_status_t (*bp_meta_fn)(const bp_meta_call_t* call);

/* ---- Host services handed to the plugin ---------------------------------- */

enum bp_log_level { BP_LOG_DEBUG = 0, BP_LOG_INFO = 1, BP_LOG_WARNING = 2, BP_LOG_ERROR = 3 };

/* Registration flags. */
#define BP_REGISTER_OVERRIDE 0x1u /* replace an existing kernel instead of failing */

/* Functions the host offers a plugin. The table is owned by the host and lives
 * until the plugin's shutdown returns. All functions are thread-safe. */
typedef struct bp_host_api_t {
  size_t struct_size;
  uint32_t abi_version;          /* the negotiated version */
  uint32_t reserved0;

  /* Records a message for the calling thread's last error and returns `code`,
   * so a plugin can write `return host->set_error(BP_STATUS_INVALID_ARGUMENT, "...")`.
   * `message` is copied (at most BP_KERNEL_ERROR_MAX_MESSAGE bytes; NULL for
   * none); it should name the operator, the argument, what was expected and
   * what came. A `code` that is not a bp_status_t value is recorded and
   * returned as BP_STATUS_INTERNAL. A plugin function that fails without
   * setting a message gets a generic one naming the backend and the call,
   * never an earlier error's text. */
  bp_status_t (*set_error)(bp_status_t code, const char* message);

  /* Sends a message to the context's log callback (stderr by default). */
  void (*log)(bp_registrar_t* registrar, int32_t level, const char* message);

  /* Registers `kernel` as this plugin's implementation of operator `op_name`
   * ("add.Tensor", schema name with overload), always the functional name:
   * the kernel also serves the in-place and out= variants. Errors: NOT_FOUND
   * (unknown operator; the message suggests the nearest names and the host
   * logs it as a warning: a plugin skips the kernel and goes on loading),
   * ALREADY_EXISTS (a kernel is registered and `flags` lacks
   * BP_REGISTER_OVERRIDE), INVALID_ARGUMENT (NULL; a variant name such as
   * "relu_" or "relu.out", the message naming the operator to use; a name
   * longer than BP_MAX_NAME_LENGTH). Only valid during init. The
   * registration lasts until the plugin is unloaded. */
  bp_status_t (*register_kernel)(bp_registrar_t* registrar, const char* op_name,
                                 bp_kernel_fn kernel, void* kernel_data, uint32_t flags);

  /* Registers a backend-wide boxed fallback: called for every operator this
   * plugin has no kernel for, before the host's CPU fallback. Same errors. */
  bp_status_t (*register_fallback)(bp_registrar_t* registrar, bp_kernel_fn fallback,
                                   void* fallback_data, uint32_t flags);

  /* Defines a new operator from a schema string in the plugin's namespace
   * ("myvendor::fused_gelu(Tensor self) -> Tensor") with its CPU kernel (used
   * on the CPU and by the CPU fallback) and its meta function. Errors:
   * INVALID_ARGUMENT (bad schema, with the column; a schema with no
   * namespace or in "aten::"; an alias annotation on a return that matches
   * no argument; a mutable (!) annotation on anything but a Tensor),
   * UNIMPLEMENTED (a mutable alias, i.e. an in-place or out= operator such as
   * "ns::op_(Tensor(a!) self) -> Tensor(a!)": custom operators are
   * functional, they return fresh tensors), ALREADY_EXISTS,
   * PERMISSION_DENIED (a namespace other than the plugin's backend name:
   * a plugin defines only "<backend name>::..." operators). The
   * operator lives until the plugin is unloaded. */
  bp_status_t (*define_op)(bp_registrar_t* registrar, const char* schema,
                           bp_kernel_fn cpu_kernel, void* cpu_kernel_data,
                           bp_meta_fn meta, void* meta_data);

  /* ---- ABI 1.3. Present when BP_KIT_HAS_FIELD(host, register_kernel_dtypes)
   * holds (plugin_kit.h); a 1.0-1.2 host's table ends above. -------------- */

  /* register_kernel with the compute dtypes the kernel runs:
   * `dtype_mask` is an OR of BP_DTYPE_MASK_* (types.h). The compute dtypes of
   * a call are the dtypes of its tensor arguments after the operator's meta
   * function cast them (exp of int32 computes in float32; where's `condition`
   * is bool): the host picks this kernel only when every one of them is in
   * the mask, and otherwise routes the call, before anything is allocated or
   * cast, to the backend fallback or the CPU fallback. A call the core had to
   * cast for the kernel is counted as a cast route (bp_cast_count).
   * A kernel registered without a mask (register_kernel, or a plugin built
   * against ABI 1.0-1.2) takes every dtype. Declining a call at run time
   * (BP_STATUS_UNIMPLEMENTED) stays legal for data-dependent cases.
   * Errors: those of register_kernel, and INVALID_ARGUMENT for a mask of 0 or
   * with bits outside BP_DTYPE_MASK_ALL; such a mask also fails the plugin's
   * load, with a message naming the plugin, the operator and the bits. Only
   * valid during init. */
  bp_status_t (*register_kernel_dtypes)(bp_registrar_t* registrar, const char* op_name, bp_kernel_fn kernel,
                                        void* kernel_data, uint32_t flags, uint64_t dtype_mask);
} bp_host_api_t;

/* ---- Devices ------------------------------------------------------------- */

#define BP_DEVICE_CAP_FP64 0x1u      /* float64 kernels can run */
#define BP_DEVICE_CAP_FP16 0x2u      /* float16 kernels can run */
#define BP_DEVICE_CAP_BF16 0x4u      /* bfloat16 kernels can run */
#define BP_DEVICE_CAP_UNIFIED 0x8u   /* device memory is host-addressable */

typedef struct bp_device_properties_t {
  size_t struct_size;
  char name[256];               /* NUL-terminated */
  char vendor[128];
  char driver_version[128];
  uint64_t total_memory_bytes;
  uint64_t capabilities;        /* BP_DEVICE_CAP_* */
  uint32_t alignment_bytes;     /* minimum alignment of allocate() results */
  int32_t compute_units;        /* 0 if unknown */
  char extensions[512];         /* space-separated, informational ("cl_khr_fp64 ...") */
} bp_device_properties_t;

/* ---- The table a plugin fills in init() ----------------------------------- */

/* Every function gets `backend_data` first. Unless a comment says otherwise,
 * functions are thread-safe and return BP_STATUS_OK or an error after
 * set_error. Sizes and offsets are in bytes. Device pointers are opaque to
 * the host (a cl_mem is a valid "pointer"). */
typedef struct bp_backend_t {
  size_t struct_size;           /* set by the host; fill only fields that fit */
  const char* name;             /* "cpu", "opencl", "myvendor": [a-z0-9_]+; static */
  const char* version;          /* plugin version, "1.0.0"; static */
  int32_t device_type;          /* DLDeviceType of this backend's devices */
  int32_t reserved0;
  void* backend_data;           /* plugin state, passed back to every call */
  /* Why device_count is zero (no driver, no device), NULL otherwise. Owned by
   * the plugin; lives until shutdown. */
  const char* no_device_reason;

  /* Number of devices; 0 is valid (the plugin stays loaded). At most
   * BP_MAX_DEVICES: a larger count (or a negative one) makes the load fail
   * with INVALID_ARGUMENT before the host allocates anything per device; a
   * failing device_count loads the backend with no device. Required. */
  bp_status_t (*device_count)(void* backend_data, int32_t* out_count);
  /* Fills properties of device `device` (struct_size preset). Required. */
  bp_status_t (*device_properties)(void* backend_data, int32_t device,
                                   bp_device_properties_t* out_properties);

  /* Raw device memory. allocate(nbytes == 0) may return NULL with OK.
   * OUT_OF_MEMORY when the device is full. NULL slots: host memory is used
   * (only the backend named "cpu" may leave them NULL). Every other backend
   * must fill allocate, deallocate, copy_host_to_device and
   * copy_device_to_host, even when device_count is 0 (no driver, no device,
   * a compute-only plugin): the loader refuses it otherwise ("must provide
   * allocate, deallocate and copies"). With zero devices they are never
   * called; each may just return an error through set_error. */
  bp_status_t (*allocate)(void* backend_data, int32_t device, size_t nbytes,
                          void** out_ptr);
  bp_status_t (*deallocate)(void* backend_data, int32_t device, void* ptr);

  /* Copies. Enqueued on `stream` in order with kernels; the host buffer must
   * stay valid until the stream is synchronized, except that
   * copy_device_to_host returns with the data in `dst` (it synchronizes). */
  bp_status_t (*copy_host_to_device)(void* backend_data, int32_t device, const void* src,
                                     void* dst, size_t dst_offset, size_t nbytes,
                                     bp_stream_t stream);
  bp_status_t (*copy_device_to_host)(void* backend_data, int32_t device, const void* src,
                                     size_t src_offset, void* dst, size_t nbytes,
                                     bp_stream_t stream);
  bp_status_t (*copy_device_to_device)(void* backend_data, int32_t device, const void* src,
                                       size_t src_offset, void* dst, size_t dst_offset,
                                       size_t nbytes, bp_stream_t stream);

  /* Streams. stream_get_default returns the device's default stream (owned by
   * the backend, valid until shutdown); NULL is a valid stream value. */
  bp_status_t (*stream_get_default)(void* backend_data, int32_t device, bp_stream_t* out_stream);
  /* Blocks until all work enqueued on `stream` has finished. */
  bp_status_t (*stream_synchronize)(void* backend_data, int32_t device, bp_stream_t stream);

  /* Events (optional: NULL slots mean unsupported). */
  bp_status_t (*event_create)(void* backend_data, int32_t device, bp_event_t* out_event);
  bp_status_t (*event_record)(void* backend_data, bp_event_t event, bp_stream_t stream);
  bp_status_t (*event_wait)(void* backend_data, bp_event_t event, bp_stream_t stream);
  bp_status_t (*event_synchronize)(void* backend_data, bp_event_t event);
  bp_status_t (*event_destroy)(void* backend_data, bp_event_t event);

  /* Releases everything the plugin holds. Called once, last. May be NULL. */
  void (*shutdown)(void* backend_data);

  /* ---- ABI 1.4: streams beyond the default, event queries and timing ----
   * Optional; the host reads them only when the plugin's struct_size covers
   * them, and a NULL slot means unsupported. Ordering rules (docs/streams.md):
   * work on one stream runs in enqueue order; work on two streams is
   * unordered unless an event orders it; event_wait(e, s) makes work
   * enqueued on `s` after the call wait for the work that preceded e's last
   * event_record (and returns without waiting on the host). */

  /* Creates an in-order stream on `device`, independent of the default
   * stream. Owned by the plugin until stream_destroy. NULL slot: the device
   * has only its default stream (bp_stream_create fails with UNIMPLEMENTED).
   * Errors: OUT_OF_MEMORY, UNAVAILABLE. */
  bp_status_t (*stream_create)(void* backend_data, int32_t device, bp_stream_t* out_stream);
  /* Destroys a stream made by stream_create. The host synchronizes it first
   * and never passes the default stream. Required when stream_create is set. */
  bp_status_t (*stream_destroy)(void* backend_data, int32_t device, bp_stream_t stream);
  /* Sets *out_complete to 1 when the work that preceded the event's last
   * event_record has finished, or when the event was never recorded; 0
   * otherwise. Never blocks. NULL slot: the host answers with
   * event_synchronize (it blocks). */
  bp_status_t (*event_query)(void* backend_data, bp_event_t event, int32_t* out_complete);
  /* Milliseconds (a float, at least microsecond resolution) from the
   * completion of `start`'s last record to that of `end`'s, both created on
   * one device. Errors: FAILED_PRECONDITION when either was never recorded
   * or has not completed. NULL slot: event timing unsupported. */
  bp_status_t (*event_elapsed_time)(void* backend_data, bp_event_t start, bp_event_t end, float* out_ms);

  /* Pinned host memory and asynchronous copies into it (ABI 1.4, optional).
   * host_allocate returns host memory of `nbytes` that the device copies to
   * and from without staging (cudaHostAlloc, page-locked memory), owned by
   * the plugin until host_deallocate; nbytes == 0 may return NULL with OK.
   * The host caches these blocks (bp_host_alloc). NULL slots: the host uses
   * its own aligned memory. Errors: OUT_OF_MEMORY. */
  bp_status_t (*host_allocate)(void* backend_data, int32_t device, size_t nbytes, void** out_ptr);
  bp_status_t (*host_deallocate)(void* backend_data, int32_t device, void* ptr);
  /* As copy_device_to_host, but returns once the copy is enqueued on
   * `stream`: `dst` (host memory, from host_allocate when the slot is set)
   * holds the bytes once the stream's work up to this call has finished.
   * NULL slot: the host calls copy_device_to_host (which waits). */
  bp_status_t (*copy_device_to_host_async)(void* backend_data, int32_t device, const void* src,
                                           size_t src_offset, void* dst, size_t nbytes, bp_stream_t stream);
} bp_backend_t;

/* ---- The entry point ----------------------------------------------------- */

typedef struct bp_plugin_init_args_t {
  size_t struct_size;
  uint32_t abi_version;          /* negotiated version */
  uint32_t reserved0;
  const bp_host_api_t* host;     /* borrowed; valid until shutdown returns */
  bp_registrar_t* registrar;     /* pass to register_* / define_op / log */
  bp_backend_t* backend;         /* out: the plugin fills it (struct_size preset) */
} bp_plugin_init_args_t;

typedef struct bp_plugin_entry_t {
  size_t struct_size;
  uint32_t abi_version;          /* newest version the plugin supports */
  uint32_t reserved0;
  /* In: *inout_version is the host's newest version. Out: the highest version
   * both support. INCOMPATIBLE_VERSION if the majors differ. Called first. */
  bp_status_t (*negotiate)(uint32_t* inout_version);
  /* Fills args->backend and registers kernels. On error the host unloads the
   * plugin without calling shutdown; the plugin must have freed what it made. */
  bp_status_t (*init)(const bp_plugin_init_args_t* args);
} bp_plugin_entry_t;

/* The one symbol a plugin exports (name: BP_PLUGIN_ENTRY_SYMBOL). Returns a
 * pointer to a static table; never NULL; no side effects. */
typedef const bp_plugin_entry_t* (*bp_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_BACKEND_H_ */
