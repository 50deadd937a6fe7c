/*
 * Communicators and collectives for host applications (ABI 1.6). Pure C99;
 * included by backplane.h (use that header). Guide: docs/distributed.md.
 * Semantics follow torch.distributed (ProcessGroupGloo) and NCCL.
 *
 * A communicator joins `world_size` processes (ranks), one device each.
 * Its engine is the device plugin's own collectives where it has them
 * (bp_backend_t.collectives, backplane/collectives.h), else Gloo over TCP
 * (Debian's libgloo), staged through host memory; a device whose memory the
 * host can address (the cpu backend, BP_DEVICE_CAP_UNIFIED) is read and
 * written in place when the tensor is contiguous.
 *
 * Bootstrap: ranks find each other through a key-value store the host
 * provides (bp_kv_store_t), e.g. the file store below on a shared directory,
 * or torch's TCPStore through the PyTorch bridge.
 *
 * Ordering: every rank must issue the same collectives on a communicator in
 * the same order, with the same dtype, element counts, reduction and root
 * (as NCCL). Calls are queued on the communicator's worker thread and run in
 * issue order; each call first waits for the work already enqueued on the
 * calling thread's current stream of the device (it synchronizes that
 * stream), so inputs produced by earlier operators are complete. A call
 * returns a work handle (or, with out_work NULL, waits itself): inputs must
 * not be written nor outputs read until bp_comm_work_wait returned OK.
 *
 * Failures: every call completes within the communicator's timeout. A rank
 * that never arrives, a rank that died, or ranks that disagree on sizes or
 * dtypes make the pending call fail with DEADLINE_EXCEEDED on every
 * surviving rank; the communicator is then broken and every later call on
 * it fails at once with the same status (destroy it, as NCCL's abort).
 * Outputs of a failed call are unspecified; no other memory is written.
 *
 * Threads: functions are thread-safe; calls on one communicator from several
 * threads are serialized in the order they reach it (which the ranks must
 * agree on: use one thread per communicator). Handles belong to one context
 * and must be destroyed before it.
 */
#ifndef BACKPLANE_COMM_H_
#define BACKPLANE_COMM_H_

#include "backplane/collectives.h" /* bp_reduce_op_t */

#ifdef __cplusplus
extern "C" {
#endif

/* A key-value store shared by the ranks (torch's c10d::Store). Provided by
 * the host; Backplane borrows it during bp_comm_create only. Keys are
 * NUL-terminated; values are bytes. Callbacks may run on any thread. */
typedef struct bp_kv_store_t {
  size_t struct_size;
  void* user_data;
  /* Stores `nbytes` bytes under `key`, replacing any value. */
  bp_status_t (*set)(void* user_data, const char* key, const void* value, size_t nbytes);
  /* Waits until `key` exists (at most timeout_ms milliseconds: then
   * DEADLINE_EXCEEDED; timeout_ms 0: one look, no wait), copies at most
   * `capacity` bytes of its value to `value` and sets *out_nbytes to the
   * value's full size. */
  bp_status_t (*get)(void* user_data, const char* key, void* value, size_t capacity, size_t* out_nbytes,
                     int64_t timeout_ms);
} bp_kv_store_t;

/* A store on a directory every rank can reach (a local or shared file
 * system), as torch's FileStore: one file per key, written atomically (to a
 * temporary of unpredictable name, opened O_EXCL|O_NOFOLLOW, then renamed).
 * The directory is created (mode 0700) if missing; old keys of an earlier
 * run with the same prefix must be removed by the caller (use a fresh
 * directory per job). The directory must pass the plugin path rules of
 * docs/security.md, checked on the directory opened once (later accesses go
 * through that descriptor): owned by root or the running user, not
 * world-writable unless sticky, not a symbolic link. A key's file that is a
 * link or not a regular file fails get with UNAVAILABLE.
 * Owned by the caller: bp_kv_store_file_destroy. Errors: INVALID_ARGUMENT
 * (NULL, an empty path, a path that is not a directory), PERMISSION_DENIED
 * (cannot create the directory; a directory owned by another user, or
 * world-writable without the sticky bit, or a symbolic link), NOT_FOUND
 * (cannot create or open the directory). */
BP_API bp_status_t bp_kv_store_file_create(const char* directory, bp_kv_store_t** out_store);
/* Frees the store (not its files). Accepts NULL. */
BP_API void bp_kv_store_file_destroy(bp_kv_store_t* store);

typedef struct bp_comm_t bp_comm_t;           /* a communicator; owned by the caller */
typedef struct bp_comm_work_t bp_comm_work_t; /* one queued call; owned by the caller */

/* Which engine a communicator uses. */
typedef enum bp_comm_engine_t {
  BP_COMM_ENGINE_AUTO = 0,   /* the plugin's collectives if it has them, else Gloo */
  BP_COMM_ENGINE_NATIVE = 1, /* the plugin's collectives; UNIMPLEMENTED if none */
  BP_COMM_ENGINE_GLOO = 2    /* Gloo over TCP, staged through host memory */
} bp_comm_engine_t;

typedef struct bp_comm_options_t {
  size_t struct_size;
  int32_t rank;             /* 0 <= rank < world_size */
  int32_t world_size;       /* 1 to 4096 */
  const bp_kv_store_t* store; /* rendezvous; borrowed during bp_comm_create */
  /* Prefix of every key this communicator writes, so several communicators
   * (and runs) share one store; NULL: "bp_comm". At most 128 bytes. One
   * communicator per prefix: a prefix another communicator (of this job or
   * another) already claimed in the store is refused (FAILED_PRECONDITION,
   * docs/distributed.md "One job per prefix"). */
  const char* prefix;
  /* Milliseconds within which creation and each call complete or fail with
   * DEADLINE_EXCEEDED; 0: 300000 (five minutes, torch's default). Values
   * above 2^40 (about 35 years) are clamped to it. Creation has one
   * deadline for the whole bootstrap, not one per rank waited for. */
  int64_t timeout_ms;
  int32_t engine;           /* bp_comm_engine_t */
  int32_t reserved0;
  /* Gloo only: the address or host name other ranks reach this process at;
   * NULL: the environment variable BACKPLANE_COMM_HOST, else "127.0.0.1"
   * (every rank on this machine). Checked and resolved before Gloo sees it
   * (1 to 253 bytes of letters, digits, '.', '-', '_', ':', '%'). */
  const char* host;
} bp_comm_options_t;

/* Joins a communicator on `device`; every rank calls it with the same
 * world_size, prefix and engine. Returns when all ranks joined. Errors:
 * INVALID_ARGUMENT (NULL; world_size outside [1, 4096]; rank outside
 * [0, world_size); a prefix over 128 bytes; an unknown engine; a Gloo host
 * that is no host name or address), NOT_FOUND (no such device),
 * UNIMPLEMENTED (engine NATIVE on a backend without collectives; GLOO when
 * this libbackplane was built without Gloo), DEADLINE_EXCEEDED (a rank did
 * not join within timeout_ms), UNAVAILABLE (network errors; a Gloo host that
 * does not resolve, naming it and whether it came from options->host or
 * BACKPLANE_COMM_HOST), FAILED_PRECONDITION (the prefix is already used by
 * another job or communicator in this store). */
BP_API bp_status_t bp_comm_create(bp_context_t* context, bp_device_t device, const bp_comm_options_t* options,
                                  bp_comm_t** out_comm);
/* Waits for the communicator's queued calls, then frees it. A handle used
 * after destroy is rejected with INVALID_ARGUMENT ("destroyed
 * communicator") as long as the context lives. Accepts NULL. */
BP_API bp_status_t bp_comm_destroy(bp_comm_t* comm);

typedef struct bp_comm_info_t {
  size_t struct_size;
  int32_t rank;
  int32_t world_size;
  bp_device_t device;
  const char* engine;       /* "gloo" or the backend's name ("vendor_sim"); static */
  int64_t timeout_ms;
} bp_comm_info_t;
/* Errors: INVALID_ARGUMENT (NULL, struct_size too small, destroyed). */
BP_API bp_status_t bp_comm_info(const bp_comm_t* comm, bp_comm_info_t* out_info);

/* The collectives. Tensors are on the communicator's device, of one dtype
 * (bool, int8, uint8, int32, int64, float16, bfloat16, float32, float64),
 * any strides; n is the element count of `input` (of `output` for
 * reduce_scatter and recv), W the world size. Each returns once the call is
 * queued (with *out_work to wait on; the caller destroys it) or, when
 * out_work is NULL, once it completed. Errors found before queueing:
 * INVALID_ARGUMENT (NULL; a destroyed communicator; a tensor on another
 * device; dtypes that differ; output sizes that do not fit, naming the
 * argument, what was expected and what came; W x n overflowing int64; a
 * constant output; a root or peer outside [0, W); reduce_op not a
 * bp_reduce_op_t; PROD/MIN/MAX/AVG on bool), FAILED_PRECONDITION (the
 * communicator is broken by an earlier failure). Errors of the call itself
 * come from bp_comm_work_wait (or from the call when out_work is NULL):
 * DEADLINE_EXCEEDED, UNAVAILABLE, and what the engine reports. */

/* output[i] = reduce over ranks of input[i] (as torch.distributed.all_reduce
 * and ncclAllReduce); output has n elements; output may be input. */
BP_API bp_status_t bp_comm_all_reduce(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                      bp_reduce_op_t op, bp_comm_work_t** out_work);
/* Every rank's `tensor` (n elements) gets root's (as dist.broadcast). */
BP_API bp_status_t bp_comm_broadcast(bp_comm_t* comm, bp_tensor_t* tensor, int32_t root, bp_comm_work_t** out_work);
/* output (W*n elements, any shape) is the ranks' inputs in rank order (as
 * dist.all_gather_into_tensor). */
BP_API bp_status_t bp_comm_all_gather(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                      bp_comm_work_t** out_work);
/* input has W*n elements; output (n) gets block `rank` reduced over ranks
 * (as dist.reduce_scatter_tensor). */
BP_API bp_status_t bp_comm_reduce_scatter(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                          bp_reduce_op_t op, bp_comm_work_t** out_work);
/* input and output have W*n elements; block r of input goes to rank r and
 * block r of output comes from rank r (as dist.all_to_all_single). */
BP_API bp_status_t bp_comm_all_to_all(bp_comm_t* comm, const bp_tensor_t* input, bp_tensor_t* output,
                                      bp_comm_work_t** out_work);
/* Point to point (as dist.send / dist.recv): `peer` posts the matching call
 * with the same element count and dtype; peer != own rank. */
BP_API bp_status_t bp_comm_send(bp_comm_t* comm, const bp_tensor_t* input, int32_t peer, bp_comm_work_t** out_work);
BP_API bp_status_t bp_comm_recv(bp_comm_t* comm, bp_tensor_t* output, int32_t peer, bp_comm_work_t** out_work);
/* Completes when every rank has entered it. */
BP_API bp_status_t bp_comm_barrier(bp_comm_t* comm, bp_comm_work_t** out_work);

/* Blocks until the call completed (never longer than the communicator's
 * timeout) and returns its status; its message is bp_last_error_message().
 * May be called again (same answer). Errors: INVALID_ARGUMENT (NULL). */
BP_API bp_status_t bp_comm_work_wait(bp_comm_work_t* work);
/* *out_complete = 1 when the call completed (either way), else 0; never
 * blocks. Errors: INVALID_ARGUMENT (NULL). */
BP_API bp_status_t bp_comm_work_query(bp_comm_work_t* work, int32_t* out_complete);
/* Waits for the call, then frees the handle. Accepts NULL. */
BP_API void bp_comm_work_destroy(bp_comm_work_t* work);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_COMM_H_ */
