/*
 * Collectives extension of the plugin ABI (ABI 1.6). Pure C99; a plugin that
 * fills it includes this header (it includes backend.h). Optional: a plugin whose devices have their own interconnect
 * (NVLink through NCCL, a vendor fabric, vendor_sim's shared memory) points
 * bp_backend_t.collectives at a static bp_collectives_t; every other device
 * gets Backplane's host engine (Gloo over TCP, staged through host memory).
 * Semantics follow NCCL and PJRT's collectives extension; the host API over
 * both engines is backplane/comm.h, the guide docs/distributed.md.
 *
 * Life of a communicator (the host drives it; ranks are processes):
 *   1. Rank 0 calls comm_bootstrap: the plugin writes an opaque blob (at most
 *      BP_COMM_BOOTSTRAP_MAX_BYTES) naming the rendezvous (NCCL's unique id,
 *      a shared-memory name).
 *   2. The host hands the blob to every rank through its key-value store.
 *   3. Every rank calls comm_create with its rank, the world size and the
 *      blob; it returns once all ranks joined, or fails at timeout_ms.
 *   4. collective() calls, in the same order on every rank (the host
 *      serializes them per communicator).
 *   5. comm_destroy on every rank.
 */
#ifndef BACKPLANE_COLLECTIVES_H_
#define BACKPLANE_COLLECTIVES_H_

#include "backplane/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest bootstrap blob, bytes. */
#define BP_COMM_BOOTSTRAP_MAX_BYTES 256
/* Largest error message collective() writes, bytes with the NUL. */
#define BP_COMM_MAX_MESSAGE 1024

/* Reduction of all_reduce and reduce_scatter (as torch.distributed.ReduceOp
 * and ncclRedOp_t). AVG is SUM divided by the world size, in the dtype
 * (integer division truncates toward zero). */
typedef enum bp_reduce_op_t {
  BP_REDUCE_SUM = 0,
  BP_REDUCE_PROD = 1,
  BP_REDUCE_MIN = 2,
  BP_REDUCE_MAX = 3,
  BP_REDUCE_AVG = 4
} bp_reduce_op_t;

/* What one collective() call does. n is the element count of one rank's
 * block; W the world size. Every rank passes the same kind, dtype, n, op and
 * root, else the result is undefined and the call may time out.
 *   ALL_REDUCE      input [n] -> output [n], reduced over ranks
 *   BROADCAST       root's input [n] -> every rank's output [n]
 *   ALL_GATHER      input [n] -> output [W*n], block r from rank r
 *   REDUCE_SCATTER  input [W*n] -> output [n], block `rank` reduced
 *   ALL_TO_ALL      input [W*n] -> output [W*n]; input block r goes to
 *                   rank r, output block r comes from rank r
 *   SEND            input [n] -> rank `peer` (a matching RECV there)
 *   RECV            output [n] <- rank `peer`
 *   BARRIER         no tensors; returns when every rank entered it */
typedef enum bp_collective_kind_t {
  BP_COLLECTIVE_ALL_REDUCE = 0,
  BP_COLLECTIVE_BROADCAST = 1,
  BP_COLLECTIVE_ALL_GATHER = 2,
  BP_COLLECTIVE_REDUCE_SCATTER = 3,
  BP_COLLECTIVE_ALL_TO_ALL = 4,
  BP_COLLECTIVE_SEND = 5,
  BP_COLLECTIVE_RECV = 6,
  BP_COLLECTIVE_BARRIER = 7
} bp_collective_kind_t;

/* A plugin's communicator: opaque to the host, owned by the plugin from
 * comm_create to comm_destroy. */
typedef void* bp_device_comm_t;

/* One collective call (PJRT style: one args struct that may grow). Filled by
 * the host; valid only during the call. */
typedef struct bp_collective_args_t {
  size_t struct_size;
  int32_t kind;                 /* bp_collective_kind_t */
  int32_t reduce_op;            /* bp_reduce_op_t; ALL_REDUCE, REDUCE_SCATTER */
  int32_t peer;                 /* BROADCAST: root; SEND/RECV: the other rank; else -1 */
  int32_t reserved0;
  /* Contiguous (compact strides), on the communicator's device, dtype one of
   * the dtypes the host checked (bool, uint8, int8, int32, int64, float16, bfloat16,
   * float32, float64). input is NULL for RECV and BARRIER, output for SEND
   * and BARRIER. input->data may equal output->data (in place) for
   * ALL_REDUCE and BROADCAST. Borrowed for the call; the memory stays valid
   * until the work enqueued on `stream` by this call has finished. */
  const DLTensor* input;
  const DLTensor* output;
  bp_stream_t stream;           /* the device's stream to enqueue on */
  /* The call fails with DEADLINE_EXCEEDED if it has not completed this many
   * milliseconds after it started (a rank that never comes, a dead rank). */
  int64_t timeout_ms;
  /* Host-owned buffer of BP_COMM_MAX_MESSAGE bytes: on error the plugin
   * writes a NUL-terminated message naming the collective, the rank and what
   * went wrong. */
  char* message;
} bp_collective_args_t;

/* The table a plugin with native collectives points bp_backend_t.collectives
 * at. Static, owned by the plugin, valid until shutdown. Every function
 * receives bp_backend_t.backend_data first and reports errors through the
 * host's set_error (on the calling thread, before returning), except
 * collective(), which writes args->message. Thread-safety: different
 * communicators may be used from different threads at once; the host never
 * calls one communicator from two threads at once. */
typedef struct bp_collectives_t {
  size_t struct_size;           /* sizeof(bp_collectives_t) of the plugin's build */
  /* Writes the rendezvous blob for a new communicator of `world_size` ranks
   * on devices of this backend into `out_blob` (capacity *inout_nbytes,
   * at least BP_COMM_BOOTSTRAP_MAX_BYTES) and sets *inout_nbytes to its size.
   * Called on rank 0 only. Errors: INVALID_ARGUMENT, UNAVAILABLE. */
  bp_status_t (*comm_bootstrap)(void* backend_data, int32_t device, int32_t world_size, void* out_blob,
                                size_t* inout_nbytes);
  /* Joins the communicator named by `blob` as `rank` (0 <= rank < world_size,
   * checked by the host) on `device`. Returns when every rank joined.
   * Errors: DEADLINE_EXCEEDED (not every rank joined within timeout_ms),
   * INVALID_ARGUMENT (a blob this plugin did not make; a rank another
   * process already holds; another world size than rank 0's),
   * OUT_OF_MEMORY, UNAVAILABLE. */
  bp_status_t (*comm_create)(void* backend_data, int32_t device, int32_t rank, int32_t world_size,
                             const void* blob, size_t blob_nbytes, int64_t timeout_ms,
                             bp_device_comm_t* out_comm);
  /* Frees the communicator; pending work is abandoned (the host waits for
   * its calls first). Accepts NULL. */
  bp_status_t (*comm_destroy)(void* backend_data, bp_device_comm_t comm);
  /* Enqueues one collective on args->stream, or runs it before returning.
   * The host waits for args->stream before it reads the output. Errors:
   * INVALID_ARGUMENT, UNIMPLEMENTED (a kind, dtype or reduction the plugin
   * lacks: the message says which; the host does not retry elsewhere),
   * DEADLINE_EXCEEDED (timeout, dead peer: the communicator is broken and
   * every later call on it may fail the same way), UNAVAILABLE. An error
   * found after an enqueued call returned is reported by the next
   * stream_synchronize of the stream and by comm_async_error. */
  bp_status_t (*collective)(void* backend_data, bp_device_comm_t comm, const bp_collective_args_t* args);
  /* Optional (NULL: the plugin reports every error from collective() or
   * stream_synchronize). OK when no asynchronous error happened on `comm`;
   * otherwise that error's status, with its message written to `message`
   * (BP_COMM_MAX_MESSAGE bytes, host-owned). */
  bp_status_t (*comm_async_error)(void* backend_data, bp_device_comm_t comm, char* message);
} bp_collectives_t;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_COLLECTIVES_H_ */
