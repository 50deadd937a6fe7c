/* A host application compiled against one minor's backplane.h (the include
 * path picks tests/abi_compat/headers/<minor> or abi/include) calling every
 * query that fills a struct, and bp_context_create's options, against
 * today's libbackplane: the struct_size rule of docs/abi.md, from the
 * caller's side. For each struct:
 *   - the caller's layout (sizeof in its headers) is accepted and filled;
 *   - a caller struct that ends right after its oldest layout's last field
 *     (no tail padding) is accepted, and nothing past that size is written;
 *   - a larger caller struct keeps its struct_size;
 * and in every case nothing past the caller's struct_size is written;
 *   - one byte less than the oldest layout is INVALID_ARGUMENT with a message
 *     naming the argument, and nothing is written.
 * Exit 0 when all hold; otherwise prints each failure and exits 1. */
#include <stdio.h>
#include <string.h>

#include "backplane/backplane.h"

#define GUARD 0xA5
#define PAD 64 /* bytes past the caller's struct that must stay untouched */

/* End of `field`: the oldest layout of a struct ends at its last field's end. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))

static int failures = 0;

static void fail(const char* query, const char* what) {
  fprintf(stderr, "FAIL (ABI %u.%u caller) %s: %s\n", (unsigned)BP_ABI_VERSION_MAJOR, (unsigned)BP_ABI_VERSION_MINOR,
          query, what);
  ++failures;
}

/* A caller's struct of `size` bytes at the start of a guarded buffer. */
typedef struct {
  unsigned char bytes[4096 + PAD];
} buffer_t;

static void fill_guard(buffer_t* b, size_t struct_size) {
  memset(b->bytes, GUARD, sizeof b->bytes);
  memcpy(b->bytes, &struct_size, sizeof struct_size);
}

static int guard_intact(const buffer_t* b, size_t from) {
  size_t i;
  for (i = from; i < sizeof b->bytes; ++i) {
    if (b->bytes[i] != GUARD) return 0;
  }
  return 1;
}

static size_t struct_size_of(const buffer_t* b) {
  size_t s;
  memcpy(&s, b->bytes, sizeof s);
  return s;
}

typedef bp_status_t (*query_fn)(bp_context_t* ctx, void* out);

static bp_context_t* g_ctx;
static bp_device_t g_cpu;
static bp_op_t* g_add;

static bp_status_t q_backend_info(bp_context_t* ctx, void* out) {
  return bp_backend_info(ctx, 0, (bp_backend_info_t*)out);
}
static bp_status_t q_device_properties(bp_context_t* ctx, void* out) {
  return bp_device_properties(ctx, g_cpu, (bp_device_properties_t*)out);
}
static bp_status_t q_allocator_stats(bp_context_t* ctx, void* out) {
  return bp_allocator_stats(ctx, g_cpu, (bp_allocator_stats_t*)out);
}
static bp_status_t q_op_info(bp_context_t* ctx, void* out) {
  (void)ctx;
  return bp_op_info(g_add, (bp_op_info_t*)out);
}
#if BP_ABI_VERSION_MINOR >= 2
static bp_status_t q_transfer_stats(bp_context_t* ctx, void* out) {
  return bp_transfer_stats(ctx, 0, (bp_transfer_stats_t*)out);
}
#endif

/* Runs the four cases above for one query whose struct has `current` bytes
 * in the caller's headers and `oldest` bytes in its first layout. `check`
 * verifies a field the query must have filled. */
static void check_query(const char* name, query_fn q, size_t current, size_t oldest, int (*check)(const buffer_t* b)) {
  buffer_t b;
  const size_t sizes[3] = {current, oldest, current + PAD / 2};
  int i;
  char what[160];
  for (i = 0; i < 3; ++i) {
    fill_guard(&b, sizes[i]);
    if (q(g_ctx, b.bytes) != BP_STATUS_OK) {
      snprintf(what, sizeof what, "struct_size %zu refused: %s", sizes[i], bp_last_error_message());
      fail(name, what);
      continue;
    }
    if (struct_size_of(&b) != sizes[i]) {
      snprintf(what, sizeof what, "struct_size %zu came back as %zu", sizes[i], struct_size_of(&b));
      fail(name, what);
    }
    if (!guard_intact(&b, sizes[i])) {
      snprintf(what, sizeof what, "struct_size %zu: bytes past it were written", sizes[i]);
      fail(name, what);
    }
    if (!check(&b)) {
      snprintf(what, sizeof what, "struct_size %zu: a field was not filled", sizes[i]);
      fail(name, what);
    }
  }
  fill_guard(&b, oldest - 1);
  if (q(g_ctx, b.bytes) != BP_STATUS_INVALID_ARGUMENT) {
    fail(name, "a struct_size below the oldest layout was not INVALID_ARGUMENT");
  } else if (strstr(bp_last_error_message(), "struct_size") == NULL) {
    fail(name, "the refusal does not name struct_size");
  }
  if (!guard_intact(&b, sizeof(size_t))) fail(name, "a refused call wrote into the struct");
}

static int filled_backend_info(const buffer_t* b) {
  bp_backend_info_t v;
  memcpy(&v, b->bytes, sizeof v);
  return v.name != NULL && strcmp(v.name, "cpu") == 0;
}
static int filled_device_properties(const buffer_t* b) {
  bp_device_properties_t v;
  memcpy(&v, b->bytes, sizeof v);
  return memchr(v.name, '\0', sizeof v.name) != NULL;
}
static int filled_allocator_stats(const buffer_t* b) {
  bp_allocator_stats_t v;
  memcpy(&v, b->bytes, sizeof v);
  return v.cache_hits != 0xA5A5A5A5A5A5A5A5ull;
}
static int filled_op_info(const buffer_t* b) {
  bp_op_info_t v;
  memcpy(&v, b->bytes, sizeof v);
  return v.name != NULL && strcmp(v.name, "add.Tensor") == 0 && v.num_returns == 1;
}
#if BP_ABI_VERSION_MINOR >= 2
static int filled_transfer_stats(const buffer_t* b) {
  bp_transfer_stats_t v;
  memcpy(&v, b->bytes, sizeof v);
  return v.host_to_device_count == 0; /* backend 0: host memory, never counted */
}
#endif

int main(void) {
  bp_context_options_t opts;
  /* The options struct at the oldest layout's size, then at the caller's. */
  memset(&opts, 0, sizeof opts);
  opts.min_log_level = BP_LOG_ERROR;
  opts.struct_size = END_OF(bp_context_options_t, min_log_level);
  if (bp_context_create(&opts, &g_ctx) != BP_STATUS_OK) {
    fail("bp_context_create", bp_last_error_message());
    return 1;
  }
  bp_context_destroy(g_ctx);
  opts.struct_size = sizeof opts;
  if (bp_context_create(&opts, &g_ctx) != BP_STATUS_OK) {
    fail("bp_context_create", bp_last_error_message());
    return 1;
  }
  opts.struct_size = END_OF(bp_context_options_t, min_log_level) - 1;
  {
    bp_context_t* refused = NULL;
    if (bp_context_create(&opts, &refused) != BP_STATUS_INVALID_ARGUMENT || refused != NULL) {
      fail("bp_context_create", "options below the oldest layout were not INVALID_ARGUMENT");
      bp_context_destroy(refused);
    }
  }
  if (bp_device_parse(g_ctx, "cpu", &g_cpu) != BP_STATUS_OK ||
      bp_op_find(g_ctx, "add.Tensor", &g_add) != BP_STATUS_OK) {
    fail("setup", bp_last_error_message());
    return 1;
  }
  /* The oldest layouts, by their last field (1.0 unless noted); these never change. */
  check_query("bp_backend_info", q_backend_info, sizeof(bp_backend_info_t), END_OF(bp_backend_info_t, loaded),
              filled_backend_info);
  check_query("bp_device_properties", q_device_properties, sizeof(bp_device_properties_t),
              END_OF(bp_device_properties_t, extensions), filled_device_properties);
  check_query("bp_allocator_stats", q_allocator_stats, sizeof(bp_allocator_stats_t),
              END_OF(bp_allocator_stats_t, cache_hits), filled_allocator_stats);
  check_query("bp_op_info", q_op_info, sizeof(bp_op_info_t), END_OF(bp_op_info_t, num_returns), filled_op_info);
#if BP_ABI_VERSION_MINOR >= 2
  check_query("bp_transfer_stats", q_transfer_stats, sizeof(bp_transfer_stats_t), /* ABI 1.2 */
              END_OF(bp_transfer_stats_t, device_to_device_bytes), filled_transfer_stats);
#endif
  bp_context_destroy(g_ctx);
  if (failures == 0) {
    printf("abi_compat: an ABI %u.%u caller's queries all follow the struct_size rule\n",
           (unsigned)BP_ABI_VERSION_MAJOR, (unsigned)BP_ABI_VERSION_MINOR);
  }
  return failures == 0 ? 0 : 1;
}
