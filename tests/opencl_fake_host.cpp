#include "opencl_fake_host.h"

#include <utility>

namespace bpcl_test {
namespace {
size_t ItemSize(DLDataType dt) { return (dt.bits + 7u) / 8u; }
}  // namespace

int32_t FakeHost::device_count() {
  int32_t n = 0;
  backend().device_count(backend().backend_data, &n);
  return n;
}

DevTensor FakeHost::Empty(std::vector<int64_t> shape, DLDataType dt, int32_t device) {
  DevTensor t;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  t.shape = std::move(shape);
  t.strides.assign(t.shape.size(), 1);
  for (size_t k = t.shape.size(); k-- > 1;) t.strides[k - 1] = t.strides[k] * t.shape[k];
  t.bytes = static_cast<size_t>(n) * ItemSize(dt);
  backend().allocate(backend().backend_data, device, t.bytes, &t.mem);
  t.owner = true;
  t.dl.device = DLDevice{kDLOpenCL, device};
  t.dl.dtype = dt;
  t.dl.byte_offset = 0;
  return t;
}

DevTensor FakeHost::View(const DevTensor& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                         int64_t offset_elems) {
  DevTensor t;
  t.mem = base.mem;
  t.bytes = base.bytes;
  t.owner = false;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  t.dl = base.dl;
  t.dl.byte_offset = static_cast<uint64_t>(offset_elems) * ItemSize(base.dl.dtype);
  return t;
}

void FakeHost::Free(DevTensor* t) {
  if (t->owner && t->mem != nullptr) backend().deallocate(backend().backend_data, t->dl.device.device_id, t->mem);
  t->mem = nullptr;
  t->owner = false;
}

bp_status_t FakeHost::Call(const std::string& op, std::vector<bp_kernel_arg_t> args, std::vector<DevTensor*> outs,
                           int32_t device) {
  bp_stream_t stream = nullptr;
  backend().stream_get_default(backend().backend_data, device, &stream);
  return CallOn(stream, op, std::move(args), std::move(outs), device);
}

bp_status_t FakeHost::CallOn(bp_stream_t stream, const std::string& op, std::vector<bp_kernel_arg_t> args,
                             std::vector<DevTensor*> outs, int32_t device) {
  std::vector<DLTensor*> out_ptrs;
  for (DevTensor* t : outs) out_ptrs.push_back(t->get());
  return bp_test::FakeHost::Call(op, args, out_ptrs, stream, device);
}

}  // namespace bpcl_test
