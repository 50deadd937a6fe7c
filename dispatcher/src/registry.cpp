// Operator definitions and kernel registrations. Writers hold ctx->mu; each
// change publishes a fresh immutable KernelTable (readers never lock) and
// retires the old one until the context is destroyed.
#include "registry.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>

#include "plugin.h"

namespace bp::core {
namespace {

std::string BackendName(bp_context_t* ctx, int32_t backend) { return ctx->slots[backend].name; }

std::string OwnerName(const bp_registration_t* reg) {
  if (reg->owner == nullptr) return "the host";
  return "plugin '" + reg->owner->path + "'";
}

// Fills the argument bookkeeping of `op` from its parsed schema.
Status SetupFromSchema(bp_op_t* op) {
  const Schema& s = op->schema;
  if (s.arguments.size() > static_cast<size_t>(kMaxArgs)) {
    return Error(BP_STATUS_INVALID_ARGUMENT, "operator '" + op->name + "' has " +
                                                 std::to_string(s.arguments.size()) + " arguments; at most " +
                                                 std::to_string(kMaxArgs) + " are supported");
  }
  op->num_args = static_cast<int32_t>(s.arguments.size());
  op->num_returns = static_cast<int32_t>(s.returns.size());
  if (op->num_returns > kMaxOutputs) {
    return Error(BP_STATUS_INVALID_ARGUMENT, "operator '" + op->name + "' has too many returns");
  }
  for (int32_t i = 0; i < op->num_args; ++i) {
    const Argument& a = s.arguments[i];
    op->arg_names[i] = a.name.c_str();
    bp_value_t v{};
    if (a.default_value.has_value()) {
      const DefaultValue& d = *a.default_value;
      op->has_default[i] = true;
      v.kind = d.kind;
      switch (d.kind) {
        case BP_VALUE_INT: v.u.i = d.i; break;
        case BP_VALUE_DOUBLE: v.u.d = d.d; break;
        case BP_VALUE_BOOL: v.u.b = d.b ? 1 : 0; break;
        case BP_VALUE_INT_LIST:
          op->default_ints[i] = d.ints;
          v.u.int_list.data = op->default_ints[i].data();
          v.u.int_list.size = static_cast<int64_t>(op->default_ints[i].size());
          break;
        case BP_VALUE_STRING: v.u.str = a.default_value->str.c_str(); break;
        case BP_VALUE_DTYPE: v.u.dtype = DtypeToDL(static_cast<DType>(d.i)); break;
        default: v.kind = BP_VALUE_NONE; break;
      }
    } else if (a.optional) {
      // An optional without a default may be omitted: it is None.
      op->has_default[i] = true;
      v.kind = BP_VALUE_NONE;
    }
    op->defaults[i] = v;
  }
  // The argument a return aliases mutably (in-place, out=, copy_, fill_).
  for (const Return& r : s.returns) {
    if (!r.is_mutable || r.alias_set.empty()) continue;
    for (int32_t i = 0; i < op->num_args; ++i) {
      if (s.arguments[i].is_mutable && s.arguments[i].alias_set == r.alias_set) {
        op->mutated_arg = i;
        break;
      }
    }
  }
  return Status::Ok();
}

void AddToListsLocked(bp_context_t* ctx, bp_op_t* op) {
  std::unique_lock<std::shared_mutex> lock(ctx->ops_mu);
  ctx->ops.push_back(op);
  ctx->op_by_name[op->name] = op;
}

void Publish(bp_context_t* ctx, bp_op_t* op, int32_t backend) {
  op = op->functional;
  const KernelTable* old = op->table.load(std::memory_order_relaxed);
  auto* fresh = new KernelTable(*old);
  const auto& stack = op->stacks[backend];
  // A masked pair publishes no kernel: every reader then takes the fallback
  // path with no extra check on the call path.
  const bool masked = ((op->masked_backends.load(std::memory_order_relaxed) >> backend) & 1u) != 0;
  fresh->kernels[backend] = stack.empty() || masked
                                ? KernelEntry{}
                                : KernelEntry{stack.back()->fn, stack.back()->data, stack.back()->dtype_mask};
  op->table.store(fresh, std::memory_order_release);
  RoutesChanged(ctx);
  ctx->retired_tables.push_back(old);
}

void PublishFallback(bp_context_t* ctx, int32_t backend) {
  BackendSlot& slot = ctx->slots[backend];
  const KernelEntry* fresh = nullptr;
  if (!slot.fallback_stack.empty()) {
    fresh = new KernelEntry{slot.fallback_stack.back()->fn, slot.fallback_stack.back()->data};
  }
  const KernelEntry* old = slot.fallback.exchange(fresh, std::memory_order_acq_rel);
  if (old != nullptr) ctx->retired_fallbacks.push_back(old);
  RoutesChanged(ctx);  // plans may hold the backend fallback route
}

// What a custom operator's schema may say (DefineOpLocked): its own
// namespace, and no mutation and no aliased (view) returns, because the
// custom dispatch path returns fresh outputs and would silently leave an
// in-place or out= argument unchanged, or return a copy for a view.
Status CheckCustomSchema(const Schema& s, const std::string& name) {
  if (name.size() > BP_MAX_NAME_LENGTH) {
    return Error(BP_STATUS_INVALID_ARGUMENT, "define_op: operator name '" + name.substr(0, 32) +
                                                 "...' is longer than BP_MAX_NAME_LENGTH (" +
                                                 std::to_string(BP_MAX_NAME_LENGTH) + " bytes)");
  }
  const std::string fn = "define_op: '" + name + "'";
  if (s.ns.empty()) {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 fn + ": a custom operator needs a namespace of its own ('myvendor::" + s.name + "'), got none");
  }
  if (s.ns == "aten") {
    return Error(BP_STATUS_INVALID_ARGUMENT,
                 fn + ": the 'aten' namespace belongs to the core operators; use a namespace of your own");
  }
  for (const Argument& a : s.arguments) {
    if (a.is_mutable && a.type != ArgType::kTensor && a.type != ArgType::kTensorList) {
      return Error(BP_STATUS_INVALID_ARGUMENT,
                   fn + ": argument '" + a.name + "' of type " + TypeName(a.type) + " cannot be mutable (!)");
    }
    if (a.is_mutable) {
      return Error(BP_STATUS_UNIMPLEMENTED,
                   fn + ": argument '" + a.name + "' is mutable (Tensor(" + a.alias_set +
                       "!)); custom operators must be functional (in-place and out= custom operators are not "
                       "supported: their results would not alias the argument)");
    }
  }
  for (size_t r = 0; r < s.returns.size(); ++r) {
    const Return& ret = s.returns[r];
    if (ret.alias_set.empty()) continue;
    if (ret.is_mutable) {
      return Error(BP_STATUS_UNIMPLEMENTED,
                   fn + ": return " + std::to_string(r) + " is mutable (Tensor(" + ret.alias_set +
                       "!)); custom operators must be functional");
    }
    const Argument* viewed = nullptr;
    for (const Argument& a : s.arguments) {
      if (viewed == nullptr && a.alias_set == ret.alias_set) viewed = &a;
    }
    if (viewed == nullptr) {
      return Error(BP_STATUS_INVALID_ARGUMENT, fn + ": return " + std::to_string(r) + " has alias annotation '" +
                                                   ret.alias_set + "', which no argument has");
    }
    // A custom operator's kernel writes a fresh output: accepted, the
    // "view" would silently be a copy that later writes do not share.
    return Error(BP_STATUS_UNIMPLEMENTED,
                 fn + ": return " + std::to_string(r) + " is declared as a view of argument '" + viewed->name +
                     "' (Tensor(" + ret.alias_set +
                     ")); custom operators cannot define views: views are core operations on tensor metadata, "
                     "never kernels, and a custom operator's result is a fresh tensor (declare the return as "
                     "plain 'Tensor' for a function that returns a copy)");
  }
  return Status::Ok();
}

}  // namespace

Schema SchemaFromTable(const OpTableEntry& e) {
  Schema s;
  s.ns = e.ns;
  s.name = e.name;
  s.overload = e.overload;
  s.arguments.resize(static_cast<size_t>(e.num_args));
  for (int32_t i = 0; i < e.num_args; ++i) {
    const OpArgDef& d = e.args[i];
    Argument& a = s.arguments[i];
    a.name = d.name;
    a.type = d.type;
    a.optional = d.optional;
    a.kwarg_only = d.kwarg_only;
    a.is_mutable = d.is_mutable;
    a.list_size = d.list_size;
    a.alias_set = d.alias_set;
    if (d.has_default) {
      const OpDefaultDef& v = d.default_value;
      DefaultValue dv;
      dv.kind = v.kind;
      dv.i = v.i;
      dv.d = v.d;
      dv.b = v.b;
      dv.ints.assign(v.ints, v.ints + v.num_ints);
      dv.str = v.str;
      a.default_value = std::move(dv);
    }
  }
  s.returns.resize(static_cast<size_t>(e.num_returns));
  for (int32_t i = 0; i < e.num_returns; ++i) {
    s.returns[i].type = e.returns[i].type;
    s.returns[i].alias_set = e.returns[i].alias_set;
    s.returns[i].is_mutable = e.returns[i].is_mutable;
  }
  return s;
}

Status BuildCoreOps(bp_context_t* ctx) {
  std::vector<bp_op_t*> built;
  for (size_t i = 0; i < kOpTableSize; ++i) {
    const OpTableEntry& e = kOpTable[i];
    auto op = std::make_unique<bp_op_t>();
    op->ctx = ctx;
    op->schema = SchemaFromTable(e);
    op->name = op->schema.full_name();
    op->schema_text = e.schema;
    op->kind_name = e.kind;
    op->doc = e.doc != nullptr ? e.doc : "";
    op->meta_name = e.meta != nullptr ? e.meta : "";
    op->variant = e.variant;
    op->dtype_mask = e.dtype_mask;
    BP_RETURN_IF_ERROR(SetupFromSchema(op.get()));
    if (op->kind_name == "view") {
      op->kind = OpKind::kView;
      op->view = FindViewFunctions(op->meta_name.c_str());
    } else if (op->kind_name == "composite") {
      op->kind = OpKind::kComposite;
    } else {
      op->kind = op->name == "copy_" ? OpKind::kCopy : OpKind::kKernel;
      op->meta = FindMetaFunctions(op->meta_name.c_str());
    }
    if (e.variant == OpVariant::kFunctional) op->table.store(new KernelTable());
    built.push_back(op.get());
    ctx->all_ops.push_back(std::move(op));
  }
  for (size_t i = 0; i < kOpTableSize; ++i) {
    bp_op_t* op = built[i];
    int32_t f = kOpTable[i].functional_index;
    if (f < 0 || static_cast<size_t>(f) >= kOpTableSize) {
      return Error(BP_STATUS_INTERNAL, "core operator table: bad functional_index for " + op->name);
    }
    op->functional = built[f];
    if (op->functional->table.load() == nullptr) op->functional->table.store(new KernelTable());
  }
  for (bp_op_t* op : built) {
    // An out= variant's meta function and kernel see the functional arguments.
    op->num_meta_args = op->variant == OpVariant::kOut ? op->functional->num_args : op->num_args;
    SetupFastPath(op);
    AddToListsLocked(ctx, op);
    if (op->name == "copy_") ctx->copy_op = op;
  }
  return Status::Ok();
}

Status DefineOpLocked(bp_context_t* ctx, const std::string& schema_text, bp_meta_fn meta, void* meta_data,
                      bp_plugin_t* owner, bp_op_t** out_op, bool list) {
  Schema schema;
  BP_RETURN_IF_ERROR(parse_schema(schema_text, &schema));
  const std::string name = schema.full_name();
  if (FindOp(ctx, name.c_str()) != nullptr) {
    return Error(BP_STATUS_ALREADY_EXISTS, "define_op: operator '" + name + "' is already defined");
  }
  BP_RETURN_IF_ERROR(CheckCustomSchema(schema, name));
  // A plugin reloaded defines its operators again: reuse the removed ones
  // (no growth per load/unload cycle).
  auto [first, last] = ctx->custom_by_name.equal_range(name);
  for (auto it = first; it != last; ++it) {
    bp_op_t* op = it->second;
    if (!op->removed.load(std::memory_order_relaxed) || op->schema_text != schema_text) continue;
    op->custom_meta = meta;
    op->custom_meta_data = meta_data;
    op->owner = owner;
    for (int32_t b = 0; b < kMaxBackends; ++b) {
      op->native_count.Reset(b);
      op->fallback_count.Reset(b);
      op->cast_count[b].store(0, std::memory_order_relaxed);
      op->cast_bytes[b].store(0, std::memory_order_relaxed);
      op->fallback_warned[b].store(false, std::memory_order_relaxed);
    }
    if (op->masked_backends.exchange(0, std::memory_order_relaxed) != 0) {
      for (int32_t b = 0; b < kMaxBackends; ++b) Publish(ctx, op, b);
    }
    if (list) ListOpLocked(ctx, op);
    *out_op = op;
    return Status::Ok();
  }
  auto op = std::make_unique<bp_op_t>();
  op->ctx = ctx;
  op->schema = std::move(schema);
  op->name = name;
  op->schema_text = schema_text;
  op->kind_name = "custom";
  op->kind = OpKind::kCustom;
  op->custom_meta = meta;
  op->custom_meta_data = meta_data;
  op->owner = owner;
  BP_RETURN_IF_ERROR(SetupFromSchema(op.get()));
  op->num_meta_args = op->num_args;
  op->table.store(new KernelTable());
  RoutesChanged(ctx);
  bp_op_t* raw = op.get();
  ctx->all_ops.push_back(std::move(op));
  try {
    ctx->custom_by_name.emplace(name, raw);
  } catch (...) {
    ctx->all_ops.pop_back();  // nothing half-inserted on bad_alloc
    throw;
  }
  if (list) {
    ListOpLocked(ctx, raw);
  } else {
    raw->removed.store(true, std::memory_order_release);  // not callable until listed
  }
  *out_op = raw;
  return Status::Ok();
}

void ListOpLocked(bp_context_t* ctx, bp_op_t* op) {
  AddToListsLocked(ctx, op);
  op->removed.store(false, std::memory_order_release);
}

void UndefineOpsLocked(bp_context_t* ctx, const std::vector<bp_op_t*>& ops) {
  if (ops.empty()) return;
  std::unique_lock<std::shared_mutex> lock(ctx->ops_mu);
  for (bp_op_t* op : ops) {
    op->removed.store(true, std::memory_order_release);
    auto it = ctx->op_by_name.find(op->name);
    if (it != ctx->op_by_name.end() && it->second == op) ctx->op_by_name.erase(it);
  }
  // One pass for all of them: erasing one at a time made unloading a plugin
  // with n operators quadratic.
  ctx->ops.erase(std::remove_if(ctx->ops.begin(), ctx->ops.end(),
                                [](const bp_op_t* op) { return op->removed.load(std::memory_order_relaxed); }),
                 ctx->ops.end());
}

namespace {
// Levenshtein distance, ignoring ASCII case ('softmax.Int' is one edit from
// 'softmax.int' but should rank first anyway: case slips are common).
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string DidYouMean(bp_context_t* ctx, const std::string& name) {
  constexpr size_t kMaxSuggestions = 3;
  // Farther than a third of the name (at least 2 edits) is not a typo.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> near;
  {
    std::shared_lock<std::shared_mutex> lock(ctx->ops_mu);
    for (const bp_op_t* op : ctx->ops) {
      const size_t d = EditDistance(name, op->name);
      if (d <= limit) near.emplace_back(d, op->name);
    }
  }
  if (near.empty()) return "";
  std::sort(near.begin(), near.end());
  if (near.size() > kMaxSuggestions) near.resize(kMaxSuggestions);
  std::string out = " (did you mean ";
  for (size_t i = 0; i < near.size(); ++i) {
    if (i > 0) out += i + 1 == near.size() ? " or " : ", ";
    out += "'" + near[i].second + "'";
  }
  return out + "?)";
}

bp_op_t* FindOp(bp_context_t* ctx, const char* name) {
  std::shared_lock<std::shared_mutex> lock(ctx->ops_mu);
  auto it = ctx->op_by_name.find(name);
  return it == ctx->op_by_name.end() ? nullptr : it->second;
}

namespace {
// Puts a new registration on top of `stack` (an operator's kernels on one
// backend, or a backend's fallbacks); the context owns it. The caller publishes.
bp_registration_t* PushRegistration(bp_context_t* ctx, std::vector<bp_registration_t*>& stack,
                                    const bp_registration_t& fields) {
  ctx->registrations.push_back(std::make_unique<bp_registration_t>(fields));
  stack.push_back(ctx->registrations.back().get());
  return stack.back();
}
}  // namespace

Status AddKernelLocked(bp_context_t* ctx, bp_op_t* op, int32_t backend, bp_kernel_fn fn, void* data, uint32_t flags,
                       bp_plugin_t* owner, bp_registration_t** out, uint32_t dtype_mask) {
  bp_op_t* f = op->functional;
  auto& stack = f->stacks[backend];
  if (!stack.empty() && (flags & BP_REGISTER_OVERRIDE) == 0) {
    return Error(BP_STATUS_ALREADY_EXISTS,
                 "register_kernel: " + f->name + " already has a kernel on backend '" + BackendName(ctx, backend) +
                     "' (registered by " + OwnerName(stack.back()) + "); pass BP_REGISTER_OVERRIDE to replace it");
  }
  bp_registration_t* reg = PushRegistration(ctx, stack, {ctx, f, backend, fn, data, dtype_mask, owner});
  Publish(ctx, f, backend);
  if (out != nullptr) *out = reg;
  return Status::Ok();
}

Status AddFallbackLocked(bp_context_t* ctx, int32_t backend, bp_kernel_fn fn, void* data, uint32_t flags,
                         bp_plugin_t* owner, bp_registration_t** out) {
  BackendSlot& slot = ctx->slots[backend];
  if (!slot.fallback_stack.empty() && (flags & BP_REGISTER_OVERRIDE) == 0) {
    return Error(BP_STATUS_ALREADY_EXISTS,
                 "register_fallback: backend '" + slot.name + "' already has a fallback (registered by " +
                     OwnerName(slot.fallback_stack.back()) + "); pass BP_REGISTER_OVERRIDE to replace it");
  }
  bp_registration_t* reg = PushRegistration(
      ctx, slot.fallback_stack, {ctx, /*op=*/nullptr, backend, fn, data, /*dtype_mask=*/0xffffffffu, owner});
  PublishFallback(ctx, backend);
  if (out != nullptr) *out = reg;
  return Status::Ok();
}

void RemoveRegistrationLocked(bp_context_t* ctx, bp_registration_t* reg) {
  if (!reg->active) return;
  reg->active = false;
  auto& stack = reg->op != nullptr ? reg->op->stacks[reg->backend] : ctx->slots[reg->backend].fallback_stack;
  stack.erase(std::remove(stack.begin(), stack.end(), reg), stack.end());
  if (reg->op != nullptr) {
    Publish(ctx, reg->op, reg->backend);
  } else {
    PublishFallback(ctx, reg->backend);
  }
}

void SetKernelMaskedLocked(bp_context_t* ctx, bp_op_t* op, int32_t backend, bool masked) {
  bp_op_t* f = op->functional;
  const uint32_t bit = 1u << backend;
  const uint32_t old = f->masked_backends.load(std::memory_order_relaxed);
  const uint32_t now = masked ? (old | bit) : (old & ~bit);
  if (now == old) return;
  f->masked_backends.store(now, std::memory_order_relaxed);
  Publish(ctx, f, backend);
}

}  // namespace bp::core
