#include "bponnx/proto.h"

#include <limits>

#include "external_data.h"

namespace bponnx {

namespace {

// Appends the low `n` bytes of `bits`, little-endian.
void append_bits(uint64_t bits, size_t n, std::string* out) {
  for (size_t b = 0; b < n; ++b) out->push_back(static_cast<char>(bits >> (8 * b)));
}

// The tensor's external_data entries (location, offset, length) read with
// read_external_file; `want` is the byte count its dims need.
bool read_external(const onnx::TensorProto& p, const std::string& base_dir, uint64_t want, std::string* bytes,
                   std::string* err) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      *err = "tensor " + p.name() + ": external_data " + kv.key() + "=" + kv.value() + " is not a number";
      return false;
    }
  }
  if (!read_external_file(base_dir, location, offset, length, want, bytes, err)) {
    *err = "tensor " + p.name() + ": " + *err;
    return false;
  }
  return true;
}

}  // namespace

bool raw_tensor_from_proto(const onnx::TensorProto& p, const std::string& base_dir, RawTensor* out,
                           std::string* err, int declared) {
  *out = RawTensor{};
  const int type = p.data_type() == 4 && declared == 16 ? 16 : p.data_type();
  std::string name;
  DType d;
  out->sizes.assign(p.dims().begin(), p.dims().end());
  for (int64_t s : out->sizes) {
    if (s < 0) {
      *err = "tensor " + p.name() + " has a negative dim " + std::to_string(s);
      return false;
    }
  }
  if (!dtype_from_onnx(type, &d, &name)) {
    out->unsupported = name;
    return true;
  }
  out->dtype = d;
  const size_t item = dtype_itemsize(d);
  // numel with an overflow check (a hostile file can name huge dims).
  uint64_t n = 1;
  for (int64_t s : out->sizes) {
    if (s != 0 && n > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(s)) {
      *err = "tensor " + p.name() + ": dims " + sizes_str(out->sizes) + " are too large";
      return false;
    }
    n *= static_cast<uint64_t>(s);
  }
  const uint64_t want = n * item;
  size_t got = 0;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!read_external(p, base_dir, want, &out->bytes, err)) return false;
    got = out->bytes.size() / item;
  } else if (p.has_raw_data()) {
    out->bytes = p.raw_data();
    got = out->bytes.size() / item;
  } else {
    // Typed fields (onnx.proto): which one holds which element type.
    switch (d) {
      case DType::kFloat32:
        got = static_cast<size_t>(p.float_data_size());
        out->bytes.assign(reinterpret_cast<const char*>(p.float_data().data()), got * 4);
        break;
      case DType::kFloat64:
        got = static_cast<size_t>(p.double_data_size());
        out->bytes.assign(reinterpret_cast<const char*>(p.double_data().data()), got * 8);
        break;
      case DType::kInt64:
        got = static_cast<size_t>(p.int64_data_size());
        out->bytes.assign(reinterpret_cast<const char*>(p.int64_data().data()), got * 8);
        break;
      default:  // float16/bfloat16 bit patterns, int32, int8, uint8, bool: in int32_data
        got = static_cast<size_t>(p.int32_data_size());
        for (int32_t v : p.int32_data()) append_bits(static_cast<uint32_t>(d == DType::kBool ? v != 0 : v), item, &out->bytes);
        break;
    }
  }
  if (out->bytes.size() != want) {
    *err = "tensor " + p.name() + " holds " + std::to_string(out->bytes.size()) + " bytes of data (" +
           std::to_string(got) + " " + dtype_name(d) + " values), its dims " + sizes_str(out->sizes) + " say " +
           std::to_string(n);
    return false;
  }
  return true;
}

bool attribute_from_proto(const onnx::AttributeProto& a, const std::string& base_dir, OnnxAttribute* out,
                          std::string* err) {
  OnnxAttribute& r = *out;
  r = OnnxAttribute{};
  switch (a.type()) {
    case onnx::AttributeProto::INT: r.kind = OnnxAttribute::kInt; r.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: r.kind = OnnxAttribute::kFloat; r.f = a.f(); break;
    case onnx::AttributeProto::STRING: r.kind = OnnxAttribute::kString; r.s = a.s(); break;
    case onnx::AttributeProto::INTS:
      r.kind = OnnxAttribute::kInts;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      r.kind = OnnxAttribute::kFloats;
      for (float f : a.floats()) r.floats.push_back(f);
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = OnnxAttribute::kTensor;
      if (!raw_tensor_from_proto(a.t(), base_dir, &r.tensor, err)) {
        *err = "attribute " + a.name() + ": " + *err;
        return false;
      }
      break;
    default:
      r.kind = OnnxAttribute::kOther;
      r.type_name = onnx::AttributeProto::AttributeType_Name(a.type());
      r.strings.assign(a.strings().begin(), a.strings().end());  // RNN activations
      break;
  }
  return true;
}

bool node_from_proto(const onnx::NodeProto& n, int64_t opset, const std::string& base_dir, OnnxNode* out,
                     std::string* err) {
  *out = OnnxNode{};
  out->name = n.name();
  out->op_type = n.op_type();
  out->domain = n.domain() == "ai.onnx" ? "" : n.domain();
  out->opset = opset;
  out->inputs.assign(n.input().begin(), n.input().end());
  out->outputs.assign(n.output().begin(), n.output().end());
  for (const auto& a : n.attribute()) {
    if (!attribute_from_proto(a, base_dir, &out->attrs[a.name()], err)) {
      *err = "node " + (n.name().empty() ? n.op_type() : n.name()) + ": " + *err;
      return false;
    }
  }
  return true;
}

}  // namespace bponnx
