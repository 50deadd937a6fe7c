#include "dump_inputs.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "bponnx/npy.h"
#include "dtype.h"
#include "opdb.h"

namespace bpc {

namespace {

// "cpu:0" -> "cpu_0", "add.Tensor" stays: names safe as one path component.
std::string component(std::string s) {
  for (char& c : s) {
    if (c == '/' || c == ':' || c == ' ') c = '_';
  }
  return s;
}

bool write_npy(const HostTensor& t, const std::string& path, std::string* err) {
  // The frontend's .npy writer; bfloat16 (no NumPy dtype) goes out as float32.
  const DType d = t.dtype == DType::kBFloat16 ? DType::kFloat32 : t.dtype;
  bponnx::RawTensor r;
  bool known = false;
  for (int k = 0; k <= static_cast<int>(bponnx::DType::kBool); ++k) {
    const auto bd = static_cast<bponnx::DType>(k);
    if (dtype_name(d) == std::string(bponnx::dtype_name(bd))) {
      r.dtype = bd;
      known = true;
    }
  }
  if (!known) return *err = std::string("no .npy dtype for ") + dtype_name(d), false;
  r.sizes = t.sizes;
  std::vector<uint8_t> bytes;
  dtype_encode(d, t.values, &bytes);
  r.bytes.assign(bytes.begin(), bytes.end());
  return bponnx::npy_write(path, r, err);
}

}  // namespace

int dump_failing_inputs(const Runner& runner, const std::vector<DeviceReport>& reports, const std::string& dir,
                        std::ostream& os) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    os << "--dump-inputs: cannot create " << dir << ": " << std::strerror(errno) << "\n";
    return 0;
  }
  int written = 0;
  std::set<std::string> done;
  for (const DeviceReport& r : reports) {
    for (const CaseResult& c : r.cases) {
      if (!outcome_is_failure(c.outcome) || c.group != kGroupOps || c.sample < 0) continue;
      const std::string name =
          component(c.device) + "_" + component(c.op) + "_" + c.dtype + "_sample" + std::to_string(c.sample);
      if (!done.insert(name).second) continue;
      const OpEntry* op = nullptr;
      for (const OpEntry& e : runner.ops()) {
        if (e.name == c.op) op = &e;
      }
      DType d;
      std::string why;
      const Case* found = nullptr;
      std::vector<Case> cases;
      if (op != nullptr && op->claim != nullptr && dtype_from_name(c.dtype, &d)) {
        // The full tier numbers every sample (the quick tier is a subset of them).
        cases = make_cases(*op->claim, d, c.seed, true, &why);
        for (const Case& k : cases) {
          if (k.index == c.sample) found = &k;
        }
      }
      if (found == nullptr) {
        os << "--dump-inputs: " << name << ": the sample could not be made again" << (why.empty() ? "" : ": " + why)
           << "\n";
        continue;
      }
      const std::string sub = dir + "/" + name;
      if (mkdir(sub.c_str(), 0755) != 0 && errno != EEXIST) {
        os << "--dump-inputs: cannot create " << sub << ": " << std::strerror(errno) << "\n";
        continue;
      }
      std::string err;
      bool ok = true;
      const std::vector<Arg>& args = found->sample.args;
      for (size_t k = 0; k < args.size() && ok; ++k) {
        const std::string base = sub + "/arg" + std::to_string(k);
        if (args[k].kind == Arg::kTensor) ok = write_npy(args[k].tensor.t, base + ".npy", &err);
        for (size_t j = 0; j < args[k].list.size() && ok; ++j) {
          ok = write_npy(args[k].list[j].t, base + "_" + std::to_string(j) + ".npy", &err);
        }
      }
      if (!ok) {
        os << "--dump-inputs: " << name << ": " << err << "\n";
        continue;
      }
      os << "--dump-inputs: " << c.op << " " << c.dtype << " sample " << c.sample << " on " << c.device << ": " << sub
         << "/arg<k>.npy (" << found->sample.desc << ")\n";
      ++written;
    }
  }
  return written;
}

}  // namespace bpc
