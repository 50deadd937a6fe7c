// The ABI and runtime group of bp-conformance: what every (backend, device)
// must get right besides operator numerics. This file: ABI version
// negotiation (through the plugin's own bp_plugin_entry), struct_size rules
// and error reporting; abi_runtime_copies.cpp: copies of views in every
// direction and DLPack; abi_runtime_device.cpp: the allocator, stream order,
// device properties against what runs, and strict mode with a masked kernel.
// One suite, instantiated here.
//
// Public C API only (backplane.h), plus dlopen of the target's plugin for
// negotiation. Every test leaves the shared context as it found it: tensors
// are released, strict mode and kernel masks restored.
#include <dlfcn.h>
#include <elf.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backplane/backend.h"
#include "backplane/backplane.h"
#include "dtype.h"
#include "groups/abi_runtime_fixture.h"
#include "target.h"

namespace bpc {
namespace {

// ---- ABI version negotiation (the plugin's own entry) -----------------------

// The target's plugin opened a second time (the loader's handle stays), its
// entry table, and the version the loader negotiated with it.
class PluginEntry {
 public:
  explicit PluginEntry(const Target& t) {
    if (t.plugin_path.empty()) return;
    handle_ = dlopen(t.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle_ == nullptr) handle_ = dlopen(t.plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) return;
    auto fn = reinterpret_cast<bp_plugin_entry_fn>(dlsym(handle_, BP_PLUGIN_ENTRY_SYMBOL));
    entry_ = fn != nullptr ? fn() : nullptr;
  }
  ~PluginEntry() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  PluginEntry(const PluginEntry&) = delete;
  PluginEntry& operator=(const PluginEntry&) = delete;
  const bp_plugin_entry_t* get() const { return entry_; }

 private:
  void* handle_ = nullptr;
  const bp_plugin_entry_t* entry_ = nullptr;
};

#define BPC_REQUIRE_ENTRY(entry)                                                                             \
  if (GetParam().plugin_path.empty())                                                                        \
    GTEST_SKIP() << "backend '" << GetParam().backend_name << "' is the core's built-in host memory (no plugin)"; \
  ASSERT_NE((entry).get(), nullptr) << GetParam().plugin_path << ": no " BP_PLUGIN_ENTRY_SYMBOL " table";    \
  ASSERT_NE((entry).get()->negotiate, nullptr) << "bp_plugin_entry_t.negotiate is NULL"

std::string VersionText(uint32_t v) {
  return std::to_string(BP_ABI_VERSION_GET_MAJOR(v)) + "." + std::to_string(BP_ABI_VERSION_GET_MINOR(v));
}

TEST_P(AbiRuntimeTest, NegotiationAcceptsTheHostVersion) {
  PluginEntry entry(GetParam());
  BPC_REQUIRE_ENTRY(entry);
  EXPECT_GE(entry.get()->struct_size, sizeof(bp_plugin_entry_t));
  EXPECT_NE(entry.get()->init, nullptr);
  EXPECT_EQ(BP_ABI_VERSION_GET_MAJOR(entry.get()->abi_version), BP_ABI_VERSION_MAJOR)
      << "the plugin's entry says ABI " << VersionText(entry.get()->abi_version);
  uint32_t v = BP_ABI_VERSION;
  ASSERT_EQ(entry.get()->negotiate(&v), BP_STATUS_OK) << "offered " << VersionText(BP_ABI_VERSION);
  EXPECT_EQ(BP_ABI_VERSION_GET_MAJOR(v), BP_ABI_VERSION_MAJOR) << "answered " << VersionText(v);
  EXPECT_LE(v, BP_ABI_VERSION) << "answered " << VersionText(v) << ", newer than offered";
  EXPECT_LE(v, entry.get()->abi_version) << "answered " << VersionText(v) << ", newer than its entry's "
                                         << VersionText(entry.get()->abi_version);
  bp_backend_info_t info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(bp_backend_info(ctx(), GetParam().backend, &info), BP_STATUS_OK) << LastError();
  EXPECT_EQ(info.abi_version, v) << "the loader recorded " << VersionText(info.abi_version);
}

TEST_P(AbiRuntimeTest, NegotiationWithAnOlderMinorAnswersAtMostTheOffer) {
  PluginEntry entry(GetParam());
  BPC_REQUIRE_ENTRY(entry);
  const uint32_t offered = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR, 0);
  uint32_t v = offered;
  const bp_status_t st = entry.get()->negotiate(&v);
  if (st == BP_STATUS_OK) {
    EXPECT_EQ(BP_ABI_VERSION_GET_MAJOR(v), BP_ABI_VERSION_MAJOR) << "answered " << VersionText(v);
    EXPECT_LE(v, offered) << "offered " << VersionText(offered) << ", answered " << VersionText(v);
  } else {
    EXPECT_EQ(st, BP_STATUS_INCOMPATIBLE_VERSION) << "a refusal says INCOMPATIBLE_VERSION";
  }
}

TEST_P(AbiRuntimeTest, NegotiationWithANewerMinorAnswersThePluginsOwnVersion) {
  PluginEntry entry(GetParam());
  BPC_REQUIRE_ENTRY(entry);
  const uint32_t offered = BP_MAKE_ABI_VERSION(BP_ABI_VERSION_MAJOR, BP_ABI_VERSION_MINOR + 7);
  uint32_t v = offered;
  ASSERT_EQ(entry.get()->negotiate(&v), BP_STATUS_OK) << "offered " << VersionText(offered);
  EXPECT_EQ(v, entry.get()->abi_version) << "offered " << VersionText(offered) << ", answered " << VersionText(v)
                                         << "; the entry says " << VersionText(entry.get()->abi_version);
}

TEST_P(AbiRuntimeTest, NegotiationWithAnotherMajorIsRefused) {
  PluginEntry entry(GetParam());
  BPC_REQUIRE_ENTRY(entry);
  for (uint32_t major : {BP_ABI_VERSION_MAJOR + 1u, BP_ABI_VERSION_MAJOR - 1u, 0xffffu}) {
    uint32_t v = BP_MAKE_ABI_VERSION(major, BP_ABI_VERSION_MINOR);
    EXPECT_EQ(entry.get()->negotiate(&v), BP_STATUS_INCOMPATIBLE_VERSION) << "offered " << VersionText(v);
  }
}

// The names of the symbols an ELF64 shared object defines for others
// (.dynsym: global or weak, default or protected visibility, not absolute),
// leaving out the linker's own _init/_fini; false if the file is not ELF64.
bool ExportedSymbols(const std::string& path, std::vector<std::string>* out, std::string* err) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Elf64_Ehdr eh;
  if (bytes.size() < sizeof(eh)) return *err = "too short for an ELF header", false;
  std::memcpy(&eh, bytes.data(), sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return *err = "not an ELF64 file", false;
  }
  auto section = [&](size_t i, Elf64_Shdr* sh) {
    const size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
    if (i >= eh.e_shnum || at + sizeof(Elf64_Shdr) > bytes.size()) return false;
    std::memcpy(sh, bytes.data() + at, sizeof(*sh));
    return sh->sh_offset + sh->sh_size <= bytes.size();
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sym, str;
    if (!section(i, &sym) || sym.sh_type != SHT_DYNSYM) continue;
    if (!section(sym.sh_link, &str)) return *err = "bad string table of .dynsym", false;
    for (size_t k = 1; k < sym.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym s;
      std::memcpy(&s, bytes.data() + sym.sh_offset + k * sizeof(Elf64_Sym), sizeof(s));
      const int bind = ELF64_ST_BIND(s.st_info), vis = ELF64_ST_VISIBILITY(s.st_other);
      if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          (vis != STV_DEFAULT && vis != STV_PROTECTED) || s.st_name >= str.sh_size) {
        continue;
      }
      const std::string name(bytes.data() + str.sh_offset + s.st_name);
      if (name != "_init" && name != "_fini") out->push_back(name);
    }
    return true;
  }
  return *err = "no .dynsym section", false;
}

// docs/abi.md: "A plugin exports exactly one symbol, bp_plugin_entry" (so two
// plugins, or a plugin and the host, never bind to each other's code).
TEST_P(AbiRuntimeTest, PluginExportsOnlyItsEntrySymbol) {
  if (GetParam().plugin_path.empty()) {
    GTEST_SKIP() << "backend '" << GetParam().backend_name << "' is the core's built-in host memory (no plugin)";
  }
  std::vector<std::string> names;
  std::string err;
  if (!ExportedSymbols(GetParam().plugin_path, &names, &err)) {
    GTEST_SKIP() << GetParam().plugin_path << ": cannot read its dynamic symbols (" << err << ")";
  }
  std::string extra;
  bool entry = false;
  for (const std::string& n : names) {
    if (n == BP_PLUGIN_ENTRY_SYMBOL) {
      entry = true;
    } else if (extra.size() < 400) {
      extra += (extra.empty() ? "" : " ") + n;
    }
  }
  if (entry && extra.empty()) return;
  // One paragraph a vendor can act on with the installed SDK alone.
  const size_t others = names.size() - (entry ? 1 : 0);
  std::string what =
      entry ? "exports " BP_PLUGIN_ENTRY_SYMBOL " and " + std::to_string(others) + " other symbols ("
            : "does not export " BP_PLUGIN_ENTRY_SYMBOL "; it exports " + std::to_string(others) + " symbols (";
  what += extra + (extra.size() >= 400 ? " ..." : "") + ")";
  ADD_FAILURE() << GetParam().plugin_path << " " << what
                << ". A plugin must export exactly one symbol, " BP_PLUGIN_ENTRY_SYMBOL
                   ", so that two plugins, or a plugin and the host, never bind to each other's code. Fix: build it "
                   "with backplane_add_plugin(<target> SOURCES ...) after find_package(Backplane), which compiles "
                   "with hidden visibility and links the SDK's export map; with another build system, compile with "
                   "-fvisibility=hidden and link with a version script that keeps only " BP_PLUGIN_ENTRY_SYMBOL
                   " global ('{ global: " BP_PLUGIN_ENTRY_SYMBOL "; local: *; };').";
}

// ---- struct_size --------------------------------------------------------------

// Calls `fill` with a struct of T declared `tail` bytes larger than known, its
// tail guarded; the call must succeed, keep struct_size and leave the tail.
template <typename T, typename F>
void ExpectLargerStructAccepted(const char* what, F fill) {
  constexpr size_t kTail = 64;
  abirt::GuardedStruct g(sizeof(T), kTail, sizeof(T) + kTail);
  std::memset(g.as<char>() + sizeof(size_t), 0, sizeof(T) - sizeof(size_t));
  EXPECT_EQ(fill(g.as<T>()), BP_STATUS_OK) << what << " with struct_size " << sizeof(T) + kTail << ": " << LastError();
  EXPECT_EQ(g.declared(), sizeof(T) + kTail) << what << " changed the caller's struct_size";
  EXPECT_TRUE(g.Untouched(sizeof(T))) << what << " wrote past the fields it knows";
}

// The same with struct_size one field short: refused with a message, nothing written.
template <typename T, typename F>
void ExpectSmallerStructRefused(const char* what, F fill) {
  const size_t declared = sizeof(T) - 8;
  abirt::GuardedStruct g(sizeof(T), 0, declared);
  EXPECT_EQ(fill(g.as<T>()), BP_STATUS_INVALID_ARGUMENT) << what << " with struct_size " << declared;
  EXPECT_NE(std::string(bp_last_error_message()).find("struct_size"), std::string::npos)
      << what << ": the message should name struct_size: " << LastError();
  EXPECT_EQ(g.declared(), declared) << what;
  EXPECT_TRUE(g.Untouched(sizeof(size_t))) << what << " wrote into a struct it refused";
}

TEST_P(AbiRuntimeTest, InfoStructsLargerThanKnownAreFilledAndTheirTailKept) {
  bp_context_t* c = ctx();
  const bp_device_t d = dev();
  const int32_t b = GetParam().backend;
  ExpectLargerStructAccepted<bp_backend_info_t>("bp_backend_info",
                                                [&](bp_backend_info_t* s) { return bp_backend_info(c, b, s); });
  ExpectLargerStructAccepted<bp_device_properties_t>(
      "bp_device_properties", [&](bp_device_properties_t* s) { return bp_device_properties(c, d, s); });
  ExpectLargerStructAccepted<bp_allocator_stats_t>(
      "bp_allocator_stats", [&](bp_allocator_stats_t* s) { return bp_allocator_stats(c, d, s); });
  bp_op_t* add = abirt::FindOp(c, "add.Tensor");
  ASSERT_NE(add, nullptr);
  ExpectLargerStructAccepted<bp_op_info_t>("bp_op_info", [&](bp_op_info_t* s) { return bp_op_info(add, s); });
  // The fields are filled too.
  abirt::GuardedStruct g(sizeof(bp_backend_info_t), 64, sizeof(bp_backend_info_t) + 64);
  ASSERT_EQ(bp_backend_info(c, b, g.as<bp_backend_info_t>()), BP_STATUS_OK) << LastError();
  EXPECT_STREQ(g.as<bp_backend_info_t>()->name, GetParam().backend_name.c_str());
  EXPECT_EQ(g.as<bp_backend_info_t>()->backend, b);
}

TEST_P(AbiRuntimeTest, InfoStructsSmallerThanKnownAreRefusedWithoutAWrite) {
  bp_context_t* c = ctx();
  const bp_device_t d = dev();
  const int32_t b = GetParam().backend;
  ExpectSmallerStructRefused<bp_backend_info_t>("bp_backend_info",
                                                [&](bp_backend_info_t* s) { return bp_backend_info(c, b, s); });
  ExpectSmallerStructRefused<bp_device_properties_t>(
      "bp_device_properties", [&](bp_device_properties_t* s) { return bp_device_properties(c, d, s); });
  ExpectSmallerStructRefused<bp_allocator_stats_t>(
      "bp_allocator_stats", [&](bp_allocator_stats_t* s) { return bp_allocator_stats(c, d, s); });
  bp_op_t* add = abirt::FindOp(c, "add.Tensor");
  ASSERT_NE(add, nullptr);
  ExpectSmallerStructRefused<bp_op_info_t>("bp_op_info", [&](bp_op_info_t* s) { return bp_op_info(add, s); });
}

TEST_P(AbiRuntimeTest, ContextOptionsStructSizeFollowsTheRule) {
  // Larger, with a zero tail: accepted. (A fresh context, no plugins.)
  struct Larger {
    bp_context_options_t o;
    unsigned char tail[64];
  } larger{};
  larger.o.struct_size = sizeof(larger);
  bp_context_t* fresh = nullptr;
  ASSERT_EQ(bp_context_create(&larger.o, &fresh), BP_STATUS_OK) << LastError();
  bp_context_destroy(fresh);
  // Smaller: refused, out_context untouched.
  bp_context_options_t small{};
  small.struct_size = sizeof(small) - 8;
  bp_context_t* sentinel = reinterpret_cast<bp_context_t*>(uintptr_t{0x1234});
  bp_context_t* out = sentinel;
  EXPECT_EQ(bp_context_create(&small, &out), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out, sentinel) << "bp_context_create wrote out_context on error";
  EXPECT_NE(std::string(bp_last_error_message()).find("struct_size"), std::string::npos) << LastError();
}

// ---- error reporting ------------------------------------------------------------

// The last error names `op` and one of `args` (as 'name').
::testing::AssertionResult NamesOpAndArgument(const std::string& op, std::initializer_list<const char*> args) {
  const std::string msg = bp_last_error_message();
  if (msg.find(op) == std::string::npos) return ::testing::AssertionFailure() << "message lacks '" << op << "': " << msg;
  for (const char* a : args) {
    if (msg.find(std::string("'") + a + "'") != std::string::npos) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "message names none of the arguments: " << msg;
}

TEST_P(AbiRuntimeTest, ShapeMismatchIsReportedWithOperatorAndArgumentAndNoWrite) {
  Held a = Make({2, 3}, DType::kFloat32, abirt::Values(DType::kFloat32, 6));
  Held b = Make({4}, DType::kFloat32, abirt::Values(DType::kFloat32, 4, 1));
  const std::vector<double> guard(6, 42.0);
  Held out = Make({2, 3}, DType::kFloat32, guard);
  ASSERT_TRUE(a && b && out);
  EXPECT_EQ(CallOp(ctx(), "add.out", {vt(a.get()), vt(b.get()), vi(1), vt(out.get())}, nullptr),
            BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(NamesOpAndArgument("add", {"self", "other"}));
  EXPECT_EQ(Read(out.get(), DType::kFloat32), guard) << "add.out wrote its output on error";
  Held r;
  EXPECT_EQ(CallOp(ctx(), "add.Tensor", {vt(a.get()), vt(b.get())}, &r), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_FALSE(r) << "a failed call returned a tensor";
  EXPECT_TRUE(NamesOpAndArgument("add.Tensor", {"self", "other"}));
}

TEST_P(AbiRuntimeTest, DtypeTheOperatorRejectsIsReportedWithOperatorAndArgumentAndNoWrite) {
  Held a = Make({3}, DType::kBool, {1, 0, 1});
  const std::vector<double> guard = {5, 6, 7};
  Held out = Make({3}, DType::kBool, {0, 1, 0});
  ASSERT_TRUE(a && out);
  // sub rejects bool (as torch.sub).
  EXPECT_EQ(CallOp(ctx(), "sub.Tensor", {vt(a.get()), vt(a.get())}, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(NamesOpAndArgument("sub", {"self", "other"}));
  EXPECT_EQ(CallOp(ctx(), "sub_.Tensor", {vt(out.get()), vt(a.get())}, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Read(out.get(), DType::kBool), (std::vector<double>{0, 1, 0})) << "sub_ wrote self on error";
  // In place: a float result cannot be cast into an int self.
  Held i = Make({3}, DType::kInt32, guard);
  Held f = Make({3}, DType::kFloat32, {0.5, 0.5, 0.5});
  ASSERT_TRUE(i && f);
  EXPECT_EQ(CallOp(ctx(), "add_.Tensor", {vt(i.get()), vt(f.get())}, nullptr), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(NamesOpAndArgument("add_", {"self"}));
  EXPECT_EQ(Read(i.get(), DType::kInt32), guard) << "add_ wrote self on error";
}

// Errors that depend on the data (kernel contract: "Kernels validate runtime
// values (integer division by zero) before writing any output"). The zero is
// not first, so a kernel that writes before it checks shows.
TEST_P(AbiRuntimeTest, DataDependentKernelErrorsLeaveNoPartialWrite) {
  for (DType d : {DType::kInt32, DType::kInt64, DType::kInt8}) {
    SCOPED_TRACE(dtype_name(d));
    const std::vector<double> av = {7, -7, 9, 4, 5, 6}, guard = {100, 100, 100, 100, 100, 100};
    Held a = Make({6}, d, av), b = Make({6}, d, {2, 3, 4, 0, 1, 2}), out = Make({6}, d, guard);
    Held e = Make({6}, d, {2, 1, 0, 3, -1, 2});
    ASSERT_TRUE(a && b && out && e);
    for (const char* mode : {"trunc", "floor"}) {
      EXPECT_EQ(CallOp(ctx(), "div.Tensor_mode_out", {vt(a.get()), vt(b.get()), vs(mode), vt(out.get())},
                       nullptr),
                BP_STATUS_INVALID_ARGUMENT)
          << mode << ": " << LastError();
      EXPECT_NE(std::string(bp_last_error_message()).find("zero"), std::string::npos) << LastError();
      EXPECT_EQ(Read(out.get(), d), guard) << "div(rounding_mode='" << mode << "') wrote out before failing";
      EXPECT_EQ(CallOp(ctx(), "div_.Tensor_mode", {vt(a.get()), vt(b.get()), vs(mode)}, nullptr),
                BP_STATUS_INVALID_ARGUMENT)
          << mode << ": " << LastError();
      EXPECT_EQ(Read(a.get(), d), av) << "div_(rounding_mode='" << mode << "') wrote self before failing";
    }
    EXPECT_EQ(CallOp(ctx(), "pow.Tensor_Tensor_out", {vt(a.get()), vt(e.get()), vt(out.get())}, nullptr),
              BP_STATUS_INVALID_ARGUMENT)
        << LastError();
    EXPECT_NE(std::string(bp_last_error_message()).find("negative"), std::string::npos) << LastError();
    EXPECT_EQ(Read(out.get(), d), guard) << "pow wrote out before failing";
  }
}

TEST_P(AbiRuntimeTest, NullTensorArgumentIsReportedWithOperatorAndArgument) {
  Held a = Make({2}, DType::kFloat32, {1, 2});
  ASSERT_TRUE(a);
  Held r;
  EXPECT_EQ(CallOp(ctx(), "add.Tensor", {vt(a.get()), vt(nullptr)}, &r), BP_STATUS_INVALID_ARGUMENT);
  EXPECT_FALSE(r);
  EXPECT_TRUE(NamesOpAndArgument("add.Tensor", {"other"}));
  EXPECT_EQ(bp_last_error_status(), BP_STATUS_INVALID_ARGUMENT);
}

}  // namespace

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AbiRuntimeTest);
INSTANTIATE_TEST_SUITE_P(Abi, AbiRuntimeTest, ::testing::ValuesIn(suite_targets()), TargetName());

}  // namespace bpc
