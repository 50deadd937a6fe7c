#!/usr/bin/env bash
# CI: the installed SDK, used the way a vendor uses it (docs/plugin-guide.md,
# "Building against the installed SDK", shows these same commands).
# Needs build/default built (the README's test command does that). Every
# command the guide shows appears here verbatim (the last step checks it).
#   1. cmake --install into a temporary prefix outside the linker path;
#   2. (a) a copy of samples/vendor_plugin/ built outside the tree with only
#      CMAKE_PREFIX_PATH, (b) a one-file C plugin built with pkg-config alone,
#      (c) a plugin written by the installed bp-plugin-new, built and checked
#      with its own CI script (its kernel native, the rest through fallback);
#   (e) the installed bp-run on an exported model; (f) a host app built
#      outside the tree against Backplane::onnx runs ONNX models on the cpu;
#   3. the *installed* bp-info and bp-conformance on each, with no
#      LD_LIBRARY_PATH (RUNPATH must do the work; set -e fails the step if
#      conformance or the entry-symbol check fails);
#   4. the Debian packages (cpack -G DEB): each file list holds what it should
#      and nothing of another package; the runtime and cpu plugin packages,
#      extracted alone, run bp-info and list the cpu plugin.
# Fails on the first problem, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$src/build/default
work=$(mktemp -d "${TMPDIR:-/tmp}/bp-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
step() { echo "--- [$(( $(date +%s) - start ))s] $*"; }
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
# What an installed tool sees on a vendor's machine: no plugin overrides
# (and each tool runs under env -u LD_LIBRARY_PATH).
unset BACKPLANE_PLUGINS BACKPLANE_PLUGIN_PATH

[ -x "$build/bin/bp-info" ] || fail "build/default is not built (run bash .ci/test.sh first)"

step "install into a temporary prefix"
prefix=$work/prefix
cmake --install build/default --prefix "$prefix"

step "(a) samples/vendor_plugin/ outside the tree, only CMAKE_PREFIX_PATH"
cp -r samples/vendor_plugin "$work/vendor_plugin"
cd "$work/vendor_plugin"
cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix"
cmake --build build
env -u LD_LIBRARY_PATH "$prefix/bin/bp-info" --no-discover --plugin build/libbackplane_vendor_sim.so
env -u LD_LIBRARY_PATH "$prefix/bin/bp-conformance" --backend build/libbackplane_vendor_sim.so --quick --no-onnx --no-progress --failures-only
vendor_so=$work/vendor_plugin/build/libbackplane_vendor_sim.so
# No build type given: backplane_add_plugin() must have compiled with the Release flags.
grep -rqs --include=build.ninja --include=flags.make -- "-O3 -DNDEBUG" build \
  || fail "the vendor sample was not compiled optimized (no -O3 -DNDEBUG)"
cd "$src"

step "(b) a one-file C plugin with pkg-config alone"
mkdir "$work/onefile"
cp tests/install/one_file_plugin.c "$work/onefile/"
cd "$work/onefile"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's flags are meant to split into words
cc -std=c99 -O2 -Wall -Wextra -Werror -pedantic -shared -fPIC -fvisibility=hidden -o libbackplane_onefile.so one_file_plugin.c $(pkg-config --cflags --libs backplane-plugin)
cmake -DPLUGIN=libbackplane_onefile.so -P "$prefix/lib/cmake/Backplane/BackplaneCheckPlugin.cmake"
env -u LD_LIBRARY_PATH "$prefix/bin/bp-info" --no-discover --plugin ./libbackplane_onefile.so
env -u LD_LIBRARY_PATH "$prefix/bin/bp-conformance" --backend ./libbackplane_onefile.so --quick --no-onnx --no-progress --failures-only
onefile_so=$work/onefile/libbackplane_onefile.so
# A plugin never links libbackplane.
if readelf -d "$onefile_so" | grep -q 'NEEDED.*libbackplane'; then fail "the one-file plugin links libbackplane"; fi
# backplane.pc serves host applications: the C API compiles and links with it.
printf '#include <backplane/backplane.h>\nint main(void) { return bp_abi_version() == 0; }\n' > host.c
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -pedantic -o host host.c $(pkg-config --cflags --libs backplane)
unset PKG_CONFIG_PATH
cd "$src"

step "(c) a plugin scaffolded by the installed bp-plugin-new: builds with only CMAKE_PREFIX_PATH, passes conformance"
cd "$work"
# It refuses what would not make a plugin, writing nothing.
for bad in 9lives my-accel MyAccel; do
  if "$prefix/bin/bp-plugin-new" "$bad" 2>"$work/err"; then fail "bp-plugin-new accepted the name '$bad'"; fi
  grep -q "NAME '$bad'" "$work/err" || fail "bp-plugin-new '$bad' gave no clear message: $(cat "$work/err")"
done
if "$prefix/bin/bp-plugin-new" myaccel onefile 2>"$work/err"; then fail "bp-plugin-new wrote into an existing directory"; fi
grep -q "already exists" "$work/err" || fail "bp-plugin-new gave no clear message for an existing DIR: $(cat "$work/err")"
"$prefix/bin/bp-plugin-new" myaccel
cd myaccel
env -u LD_LIBRARY_PATH CMAKE_PREFIX_PATH="$prefix" sh ci/conformance.sh -DCONFORMANCE_ARGS="--quick;--no-onnx"
env -u LD_LIBRARY_PATH "$prefix/bin/bp-info" --no-discover --plugin build/libbackplane_myaccel.so
env -u LD_LIBRARY_PATH "$prefix/bin/bp-conformance" --backend build/libbackplane_myaccel.so --op 'neg*' --quick --no-onnx --no-progress --json neg.json
# Its one kernel (neg, float32) ran natively; every other cell passed through
# the fallback (or the core, for views), or had only rejected inputs.
python3 - build/conformance.json neg.json <<'EOF' || fail "the scaffolded plugin's conformance report is not what it should be"
import json, sys
for path in sys.argv[1:]:
    dev = json.load(open(path))["devices"][0]
    cells = [(op, dt, c["outcome"]) for op, row in dev["cells"].items() for dt, c in row.items()]
    kernel = sorted({(c["op"], c["dtype"]) for c in dev["cases"] if c.get("path") == "native"})
    bad = [c for c in cells if c[2] not in ("native_pass", "fallback_pass", "not_reached")]
    print(f"{path}: native kernel ran for {kernel}; {sum(o == 'fallback_pass' for _, _, o in cells)} cells via fallback; failures: {bad}")
    assert dev["cells"]["neg"]["float32"]["outcome"] == "native_pass"
    assert dev["cells"]["neg"]["float64"]["outcome"] == "fallback_pass"
    assert kernel and all(op.startswith("neg") and dt == "float32" for op, dt in kernel)
    assert not bad
EOF
# Reading a failure: a planted bug (neg returns its input) fails exactly its
# cell, with the sample, its inputs and a rerun line, which reproduces it.
sed -i 's/= -\*f32_at(self, i);/= *f32_at(self, i);/' src/kernels.c
cmake --build build
if env -u LD_LIBRARY_PATH "$prefix/bin/bp-conformance" --backend build/libbackplane_myaccel.so --op neg --dtype float32 --quick --no-onnx --no-progress --failures-only --max-failures 1 >"$work/bug.txt"; then
  cat "$work/bug.txt"; fail "conformance passed a neg kernel that returns its input"
fi
cat "$work/bug.txt"
rerun=$(sed -n 's/^    rerun: //p' "$work/bug.txt" | head -1)
[ "$rerun" = "bp-conformance --backend build/libbackplane_myaccel.so --op neg --dtype float32 --sample 0 --seed 1 --group ops" ] \
  || fail "the first failure's rerun line is not the one docs/plugin-guide.md shows: $rerun"
if env -u LD_LIBRARY_PATH "$prefix/bin/bp-conformance" --backend build/libbackplane_myaccel.so --op neg --dtype float32 --sample 0 --seed 1 --group ops --no-progress > "$work/rerun.txt"; then
  fail "the rerun line did not reproduce the failure: $rerun"
fi
grep -q '^FAIL myaccel myaccel:0 neg float32 sample 0 ' "$work/rerun.txt" || fail "the rerun line ran something else: $rerun"
sed -i 's/= \*f32_at(self, i);/= -*f32_at(self, i);/' src/kernels.c
cmake --build build
# Shipping: installed into the SDK's plugin directory, discovery finds it.
cmake --install build --prefix "$prefix"
env -u LD_LIBRARY_PATH "$prefix/bin/bp-info" > "$work/bp-info.txt"
grep -Eq "^  myaccel .*/lib/backplane/plugins/libbackplane_myaccel\.so" "$work/bp-info.txt" \
  || fail "bp-info's discovery does not list the installed myaccel plugin: $(cat "$work/bp-info.txt")"
cd "$src"

step "(e) the installed bp-run on a real model (squeezenet1_1 exported by torch), against torch's outputs"
if [ -f "$build/models/squeezenet1_1/model.onnx" ]; then
  env -u LD_LIBRARY_PATH /usr/bin/python3 frontends/onnx/tests/model_test.py "$prefix/bin/bp-run" \
    "$build/models" squeezenet1_1 cpu | tail -3
else
  echo "skipped: $build/models has no exported models (ctest --preset default -R onnx_models_export makes them)"
fi

step "(f) a host app outside the tree running ONNX models through the installed frontend (Backplane::onnx)"
if [ -f "$prefix/lib/cmake/Backplane/BackplaneOnnxTargets.cmake" ]; then
  cp -r tests/install/onnx_host_app "$work/onnx_host_app"
  cd "$work/onnx_host_app"
  # The commands docs/bp-run.md shows ("The frontend library in a host app").
  cmake -S . -B build -DCMAKE_PREFIX_PATH="$prefix"
  cmake --build build
  # A model it writes itself with ONNX's protobuf classes, then one of the
  # ONNX node tests (Debian's libonnx-testdata) against its stored output.
  node_test=/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding
  [ -d "$node_test" ] || { echo "no $node_test (libonnx-testdata): only the written model runs"; node_test=; }
  env -u LD_LIBRARY_PATH build/onnx_host_app "$work/onnx_host_app" $node_test | tee "$work/onnx_host_app.txt"
  grep -q "every check passed" "$work/onnx_host_app.txt" || fail "the ONNX host app did not pass"
  # It links libbackplane (RUNPATH) and carries the frontend statically.
  readelf -d build/onnx_host_app | grep -q 'NEEDED.*libbackplane\.so' || fail "the ONNX host app does not link libbackplane"
  cd "$src"
else
  echo "skipped: this SDK was built without libonnx-dev, so it installs no Backplane::onnx"
fi

step "(d) the entry-symbol check; find_package of another major; bp-info on a file that is not a plugin"
# backplane_add_plugin() ran it after the link; run it again on the file itself.
cmake -DPLUGIN="$vendor_so" -P "$prefix/lib/cmake/Backplane/BackplaneCheckPlugin.cmake"
# ... and it does catch a library exporting more (libbackplane exports the whole C API).
if cmake -DPLUGIN="$prefix/lib/libbackplane.so" -P "$prefix/lib/cmake/Backplane/BackplaneCheckPlugin.cmake" \
     >/dev/null 2>&1; then
  fail "BackplaneCheckPlugin.cmake accepted libbackplane.so, which exports more than bp_plugin_entry"
fi
# An SDK of another ABI major is refused by find_package itself, with CMake's version message.
mkdir "$work/major2"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(major2 LANGUAGES C)\nfind_package(Backplane 2 REQUIRED)\n' \
  > "$work/major2/CMakeLists.txt"
if cmake -S "$work/major2" -B "$work/major2/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/major2.log" 2>&1; then
  fail "find_package(Backplane 2) accepted an SDK of ABI major 1"
fi
grep -q 'compatible with requested version "2"' "$work/major2.log" \
  || fail "find_package(Backplane 2) failed without CMake's version message: $(cat "$work/major2.log")"
# A file that is not a plugin: bp-info must say so and fail.
if env -u LD_LIBRARY_PATH "$prefix/bin/bp-info" --no-discover --plugin "$prefix/share/backplane/ops.yaml" 2>"$work/err"; then
  fail "bp-info --plugin <not a plugin> exited 0"
fi
grep -q "cannot load plugin" "$work/err" || fail "bp-info gave no loader message: $(cat "$work/err")"

step "Debian packages (cpack -G DEB)"
debs=$work/debs
(cd "$build" && cpack -G DEB -B "$debs" >/dev/null)
lib='usr/lib(/[a-z0-9_]+-linux-gnu)?'
# check_deb PACKAGE ALLOWED_REGEX REQUIRED_PATH...: every file of the package
# matches ALLOWED_REGEX (nothing of another package) and each REQUIRED_PATH is in it.
check_deb() {
  local pkg=$1 allowed=$2; shift 2
  local found=("$debs/${pkg}_"*.deb)
  local deb=${found[0]}
  [ -f "$deb" ] || fail "no package $pkg was built"
  dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' | grep -v '/$' > "$work/$pkg.files"
  local stray
  stray=$(grep -Ev "^($allowed)\$" "$work/$pkg.files" || true)
  [ -z "$stray" ] || fail "$pkg holds files of another package: $stray"
  for want in "$@"; do
    grep -Eq "^$want\$" "$work/$pkg.files" || fail "$pkg lacks $want"
  done
  echo "$pkg: $(wc -l < "$work/$pkg.files") files; Depends: $(dpkg-deb -f "$deb" Depends)"
}
check_deb backplane "usr/bin/bp-(info|conformance|run)|$lib/libbackplane\.so\.[0-9.]+|usr/share/backplane/conformance/.*" \
  usr/bin/bp-info usr/bin/bp-conformance "$lib/libbackplane\.so\.1"
check_deb backplane-dev \
  "usr/bin/bp-plugin-new|usr/share/backplane/plugin-template/.*|usr/include/(backplane|bponnx)/.*|$lib/libbackplane\.so|$lib/libbackplane_onnx(_map)?\.a|$lib/cmake/Backplane/.*|$lib/pkgconfig/backplane(-plugin)?\.pc|usr/share/backplane/ops\.yaml|usr/share/doc/Backplane/.*\.md" \
  usr/include/backplane/backend.h usr/include/backplane/backplane.h usr/include/backplane/ops.hpp \
  "$lib/cmake/Backplane/BackplaneConfig.cmake" "$lib/cmake/Backplane/BackplaneConfigVersion.cmake" \
  "$lib/cmake/Backplane/plugin.map" "$lib/pkgconfig/backplane\.pc" "$lib/pkgconfig/backplane-plugin\.pc" \
  usr/share/backplane/ops.yaml usr/share/doc/Backplane/plugin-guide.md \
  usr/bin/bp-plugin-new usr/share/backplane/plugin-template/CMakeLists.txt
# One package per plugin the build made, holding that plugin alone.
for so in "$build"/lib/backplane/plugins/libbackplane_*.so; do
  name=$(basename "$so" .so); name=${name#libbackplane_}
  check_deb "backplane-plugin-${name//_/-}" "$lib/backplane/plugins/libbackplane_$name\.so" \
    "$lib/backplane/plugins/libbackplane_$name\.so"
done
# Only the OpenCL plugin's package pulls an OpenCL loader.
for deb in "$debs"/*.deb; do
  case $(basename "$deb") in backplane-plugin-opencl_*) continue ;; esac
  if dpkg-deb -f "$deb" Depends | grep -qi opencl; then fail "$(basename "$deb") depends on OpenCL"; fi
done

# The README's install command resolves (simulated: -s changes nothing on this machine).
(cd "$debs" && apt-get install -s ./backplane_*.deb ./backplane-dev_*.deb ./backplane-plugin-cpu_*.deb) \
  > "$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get cannot install the packages"; }

step "the runtime and cpu plugin packages, extracted alone, run bp-info"
root=$work/root
mkdir -p "$root"
dpkg-deb -x "$debs"/backplane_*.deb "$root"
dpkg-deb -x "$debs"/backplane-plugin-cpu_*.deb "$root"
env -u LD_LIBRARY_PATH "$root/usr/bin/bp-info" > "$work/bp-info.txt" || { cat "$work/bp-info.txt"; fail "the extracted bp-info did not run"; }
cat "$work/bp-info.txt"
grep -Eq "^  cpu .*$root/.*libbackplane_cpu\.so" "$work/bp-info.txt" \
  || fail "the extracted bp-info did not list the extracted cpu plugin"

step "every command docs/plugin-guide.md shows is one this script runs"
awk '/^```sh$/ { on = 1; next } /^```$/ { on = 0 } on' docs/plugin-guide.md > "$work/guide-commands.txt"
[ -s "$work/guide-commands.txt" ] || fail "no commands found in docs/plugin-guide.md"
while IFS= read -r cmd; do
  grep -qF -- "$cmd" "$src/.ci/install_test.sh" || fail "docs/plugin-guide.md shows a command this script does not run: $cmd"
done < "$work/guide-commands.txt"

step "install test passed"
