/*
 * Call plans (ABI 1.3): an operator call decided once, run many times. Pure
 * C99; included by backplane.h (use that header).
 *
 * A plan is prepared for a call signature: per argument its value kind and,
 * for tensors, dtype, device and rank. Those decide everything but sizes and
 * pointers: the route (the backend's kernel, its fallback, the CPU fallback,
 * or an error), the output dtypes and casts, the kernel. bp_plan_call then
 * binds sizes and pointers and runs. bp_op_call does exactly this through a
 * per-context cache of plans keyed by signature, so a plan only saves that
 * cache lookup; hold one where a call site repeats one signature.
 *
 * A plan stays valid while its context's routes do: loading or unloading a
 * plugin, registering or removing a kernel or fallback, or masking a kernel
 * in the context makes every plan prepared before it stale (route
 * BP_PLAN_ROUTE_STALE); calling a stale plan is FAILED_PRECONDITION and runs
 * nothing; prepare it again. Changes in another context leave it valid.
 */
#ifndef BACKPLANE_CALL_PLAN_H_
#define BACKPLANE_CALL_PLAN_H_

#ifdef __cplusplus
extern "C" {
#endif

/* A prepared call of one operator; created by bp_op_prepare or
 * bp_op_prepare_for_args, owned by the caller, freed by bp_plan_release. */
typedef struct bp_call_plan_t bp_call_plan_t;

/* One argument of a call signature. */
typedef struct bp_arg_signature_t {
  int32_t kind;       /* enum bp_value_kind of the argument */
  int32_t ndim;       /* tensors: the rank; other kinds: 0 */
  DLDataType dtype;   /* tensors: the dtype; other kinds: zero */
  bp_device_t device; /* tensors: the device; other kinds: zero */
} bp_arg_signature_t;
/* For a BP_VALUE_TENSOR_LIST argument, ndim, dtype and device describe the
 * list's first element of rank > 0 (else its first element; an empty list:
 * all zero); the other elements are checked by the call itself. */

/* A call signature. */
typedef struct bp_call_signature_t {
  size_t struct_size;             /* sizeof(bp_call_signature_t), set by the caller */
  int32_t num_args;               /* arguments given, in schema order; omitted trailing ones take defaults */
  int32_t reserved0;              /* zero */
  const bp_arg_signature_t* args; /* num_args entries; borrowed for the call */
} bp_call_signature_t;

/* Prepares a call of `op` for `signature`. `*out_plan` receives a new plan
 * (release it with bp_plan_release). A signature nothing can run (no kernel,
 * strict mode, devices that do not mix) still gives a plan: its route is
 * BP_PLAN_ROUTE_ERROR (bp_plan_info says why) and calling it returns that
 * error after checking the arguments, as bp_op_call would.
 * Thread-safe; lock-free apart from the allocation of the plan.
 * Errors: INVALID_ARGUMENT (NULL argument, op of another context, struct_size
 * smaller than this struct, num_args outside [0, the operator's argument
 * count], an unknown value kind), FAILED_PRECONDITION (op was removed with
 * the plugin that defined it). On error *out_plan is unchanged. */
BP_API bp_status_t bp_op_prepare(bp_context_t* context, const bp_op_t* op, const bp_call_signature_t* signature,
                                 bp_call_plan_t** out_plan);

/* bp_op_prepare for the signature of real arguments `args` (num_args of
 * them, as bp_op_call takes them). Only kinds, dtypes, devices and ranks are
 * read; nothing is kept. Errors: as bp_op_prepare, and INVALID_ARGUMENT for a
 * NULL tensor argument. */
BP_API bp_status_t bp_op_prepare_for_args(bp_context_t* context, const bp_op_t* op, const bp_value_t* args,
                                          int32_t num_args, bp_call_plan_t** out_plan);

/* Runs the plan with `args`, which must fit its signature: the same
 * argument count, and per argument the same kind and, for tensors, dtype,
 * device and rank (sizes, strides and values are free). Results as
 * bp_op_call's: num_results new references in out_results (NULL and 0 drop
 * them). The plan may be called from several threads at once.
 * Errors: INVALID_ARGUMENT (NULL plan; arguments that do not fit the
 * signature: the message names the operator, the argument, what the plan
 * expects and what came), FAILED_PRECONDITION (the plan is stale, or its
 * context was destroyed; nothing runs), and every error of bp_op_call.
 * On error no output tensor was modified. */
BP_API bp_status_t bp_plan_call(bp_call_plan_t* plan, const bp_value_t* args, int32_t num_args,
                                bp_tensor_t** out_results, int32_t num_results);

/* Frees a plan. Accepts NULL. Valid also after the plan's context was
 * destroyed. The plan must not be in use by another thread. */
BP_API void bp_plan_release(bp_call_plan_t* plan);

/* How a plan's calls are served (bp_plan_info_t.route). */
enum bp_plan_route {
  BP_PLAN_ROUTE_ERROR = 0,            /* nothing can run it: status and message say why */
  BP_PLAN_ROUTE_NATIVE = 1,           /* the device's backend's kernel */
  BP_PLAN_ROUTE_BACKEND_FALLBACK = 2, /* the backend's own boxed fallback */
  BP_PLAN_ROUTE_HOST_FALLBACK = 3,    /* the CPU kernel, with copies */
  BP_PLAN_ROUTE_CORE = 4,             /* views, composites, copy_: done by the core */
  BP_PLAN_ROUTE_STALE = 5             /* the context's routes changed, or it was destroyed: prepare again */
};

/* What a plan decided. */
typedef struct bp_plan_info_t {
  size_t struct_size;  /* set by the caller; fields past it are not written */
  int32_t route;       /* enum bp_plan_route */
  bp_status_t status;  /* BP_PLAN_ROUTE_ERROR: the error's status; else BP_STATUS_OK */
  const char* message; /* BP_PLAN_ROUTE_ERROR: the error's message; else "". Borrowed, lives with the plan */
  bp_device_t device;  /* the device whose backend the route was decided for (the dispatch key) */
} bp_plan_info_t;

/* Fills `out_info` (struct_size preset; a smaller, older struct is accepted
 * and filled up to its size). The route is the one decided at prepare time
 * (a kernel may still decline one call at run time, which then takes the
 * next route). Thread-safe. Errors: INVALID_ARGUMENT (NULL, struct_size
 * smaller than the first two fields). */
BP_API bp_status_t bp_plan_info(const bp_call_plan_t* plan, bp_plan_info_t* out_info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BACKPLANE_CALL_PLAN_H_ */
