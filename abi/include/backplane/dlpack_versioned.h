/*
 * DLPack 1.x versioned tensors for host applications (ABI 1.6 host API
 * addition). Pure C99; included by backplane.h (use that header).
 *
 * DLPack 1.0 added DLManagedTensorVersioned: the 0.6 DLManagedTensor with a
 * version first and a flags word (read-only, copied). Python's array API
 * (numpy 2.x, torch 2.x) exchanges it in capsules named
 * 'dltensor_versioned'. Debian ships dlpack.h 0.6, which lacks it, so the
 * structs are declared here from the DLPack 1.x specification
 * (https://dmlc.github.io/dlpack/latest/c_api.html), layout-identical to
 * DLPack 1.x; when the dlpack.h already included is 1.0 or newer, its own
 * declarations are used and nothing is redefined.
 *
 * The stable-prefix rule (DLPack's): `version` comes first and keeps its
 * place in every major version, so a consumer can read a producer's version
 * and, on a major mismatch, call `deleter` (the next two fields) without
 * reading anything else.
 */
#ifndef BACKPLANE_DLPACK_VERSIONED_H_
#define BACKPLANE_DLPACK_VERSIONED_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1

/* A DLPack ABI version. `major` changes break the struct layout (a consumer
 * must refuse a major it does not know); `minor` ones only add. */
typedef struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* The producer may not be written through this tensor (the consumer must not
 * write its memory). */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
/* The producer copied the data to make this tensor (for instance because
 * `copy=True` was asked); nobody else sees writes to it. */
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)

/* A DLTensor with its owner, versioned (DLPack 1.x). 80 bytes on LP64:
 * version at 0, manager_ctx at 8, deleter at 16, flags at 24, dl_tensor at
 * 32 (pinned by tests/abi_layout_test.cpp). */
typedef struct DLManagedTensorVersioned {
  /* The DLPack version the producer filled this struct for. */
  DLPackVersion version;
  /* The producer's context for `deleter`; opaque to the consumer. */
  void* manager_ctx;
  /* Frees the tensor (called once by the consumer when done; may be NULL
   * when there is nothing to free). */
  void (*deleter)(struct DLManagedTensorVersioned* self);
  /* DLPACK_FLAG_BITMASK_* bits; bits not listed are reserved. */
  uint64_t flags;
  /* The tensor itself. */
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* DLPack older than 1.0 */

#endif /* BACKPLANE_DLPACK_VERSIONED_H_ */
