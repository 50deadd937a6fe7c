#!/usr/bin/env bash
# CI: the installed SDK, used the way a vendor uses it.
# Needs build/default built (the README's test command does that).
#   1. cmake --install --strip into a temporary prefix outside the linker path;
#      no installed binary names the build or source tree (strings), RUNPATHs
#      are $ORIGIN-relative, and the installed docs link only among themselves
#      (.ci/check_doc_links.py);
#   2. docs/plugin-guide.md walked from the installed copy (.ci/guide_walk.sh):
#      every `sh` block as written, as nobody, from a copy of the SDK moved to
#      a new directory, with the source tree hidden. It scaffolds, builds and
#      runs conformance on a plugin (CONFORMANT), plants and reads a failure,
#      installs the plugin, packages it, runs bp-run --report on a model made
#      by the installed bp-export-models, and builds the vendor sample and
#      the one-file C plugin. The scaffold block's time is printed (the guide
#      states it). A plugin calling exp() links (libm), by CMake and pkg-config;
#   (e) the installed bp-run on an exported model; (f) a host app built
#      outside the tree against Backplane::onnx runs ONNX models on the cpu;
#   (g) the installed Python package imported from outside the tree runs an op;
#   (d) the entry-symbol check; find_package of another major;
#   3. the Debian packages (cpack -G DEB): each file list holds what it should
#      and nothing of another package; the runtime and cpu plugin packages,
#      extracted alone, run bp-info and list the cpu plugin; the SDK packages
#      and the guide's plugin package installed with apt-get (and removed at
#      the end), and the installed bp-conformance passes the plugin.
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
cmake --install build/default --prefix "$prefix" --strip > "$work/install.log"

step "no installed binary names the source or build tree; RUNPATHs are \$ORIGIN-relative or system directories"
while IFS= read -r f; do
  file -b "$f" | grep -Eq '^(ELF|current ar archive)' || continue
  if strings -a "$f" | grep -F -e "$src" -e "$build" > "$work/paths.txt"; then
    fail "$f holds build or source tree paths: $(head -3 "$work/paths.txt")"
  fi
  rp=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  for dir in ${rp//:/ }; do
    # $ORIGIN-relative, or a system directory (hipcc adds /usr/lib for libamdhip64).
    case $dir in '$ORIGIN'* | /usr/lib | /usr/lib/*-linux-gnu) ;; *) fail "$f has RUNPATH $rp, not \$ORIGIN-relative" ;; esac
  done
done < <(find "$prefix" -type f)

step "the installed docs link only among themselves"
/usr/bin/python3 .ci/check_doc_links.py "$prefix/share/doc/Backplane"

step "bp-plugin-new refuses what would not make a plugin, writing nothing"
mkdir "$work/refusals" "$work/refusals/taken"
cd "$work/refusals"
for bad in 9lives my-accel MyAccel; do
  if "$prefix/bin/bp-plugin-new" "$bad" 2>"$work/err"; then fail "bp-plugin-new accepted the name '$bad'"; fi
  grep -q "NAME '$bad'" "$work/err" || fail "bp-plugin-new '$bad' gave no clear message: $(cat "$work/err")"
done
if "$prefix/bin/bp-plugin-new" myaccel taken 2>"$work/err"; then fail "bp-plugin-new wrote into an existing directory"; fi
grep -q "already exists" "$work/err" || fail "bp-plugin-new gave no clear message for an existing DIR: $(cat "$work/err")"
[ -z "$(ls -A taken)" ] && [ ! -e myaccel ] || fail "a refused bp-plugin-new wrote files"
cd "$src"

step "docs/plugin-guide.md: every sh block as written, from a moved copy of the SDK, the source tree hidden"
walk=$work/walk
bash .ci/guide_walk.sh "$src" "$build" "$walk" > "$work/walk.out" 2>&1 \
  || { tail -40 "$work/walk.out"; fail "a line of the plugin guide failed (above)"; }
log=$walk/guide.log
plugins=$walk/home/plugins
# The scaffold block (scaffold, build, quick conformance, bp-info): the figure
# docs/plugin-guide.md states.
scaffold_s=$(awk -F'\t' '$2 == "bp-plugin-new myaccel" { print $1 - prev } { prev = $1 }' "$walk/times.txt")
echo "measured: the guide's scaffold block (bp-plugin-new, ci/conformance.sh with --quick --no-onnx, bp-info): ${scaffold_s} s;" \
     "the whole guide: $(tail -1 "$walk/times.txt" | cut -f1) s"
echo "docs/plugin-guide.md says: $(grep -o 'took [0-9]* s' docs/plugin-guide.md | head -1) (update it when this drifts)"
# (ci/conformance.sh runs it under ctest --verbose, which prefixes "1: ".)
grep -Eq '^([0-9]+: )?  myaccel \(myaccel:0\): CONFORMANT: [0-9]+ cells native, [0-9]+ via fallback, ' "$log" \
  || fail "the guide's scaffolded plugin has no CONFORMANT verdict"
grep -q '^  vendor_sim (vendor_sim:0): CONFORMANT' "$log" || fail "the guide's vendor sample has no CONFORMANT verdict"
grep -q '^  onefile (onefile:0): CONFORMANT' "$log" || fail "the guide's one-file plugin has no CONFORMANT verdict"
# Its one kernel (neg, float32) ran natively; every other cell passed through
# the fallback (or the core, for views), or had only rejected inputs.
python3 .ci/check_scaffold_report.py "$plugins/myaccel/build/conformance.json" "$plugins/myaccel/neg.json" \
  || fail "the scaffolded plugin's conformance report is not what it should be"
# The planted bug failed exactly its cell, with a rerun line (which the guide
# ran again: its grep '^FAIL' fails the walk unless the failure reproduced).
grep -q '^FAIL myaccel myaccel:0 neg float32 sample 0 ' "$log" || fail "the planted neg bug did not fail its cell"
grep -q '^    rerun: .*--op neg --dtype float32 --sample 0 --seed 1 --group ops' "$log" || fail "the failure has no rerun line"
# Installed into the moved SDK, discovery found it.
grep -Eq "^  myaccel .*/backplane-sdk/lib/backplane/plugins/libbackplane_myaccel\.so" "$log" \
  || fail "bp-info's discovery did not list the plugin installed into the SDK"
grep -q '^Depends: backplane-abi-1 (>= ' "$log" || fail "the plugin's package does not depend on backplane-abi-1"
plugin_deb=$(ls "$plugins"/myaccel/build/backplane-plugin-myaccel_0.1.0_*.deb)
# No build type given: backplane_add_plugin() must have compiled with the Release flags.
grep -rqs --include=build.ninja --include=flags.make -- "-O3 -DNDEBUG" "$plugins/vendor_plugin/build" \
  || fail "the vendor sample was not compiled optimized (no -O3 -DNDEBUG)"
vendor_so=$plugins/vendor_plugin/build/libbackplane_vendor_sim.so
# A plugin never links libbackplane.
for so in "$plugins/onefile/libbackplane_onefile.so" "$plugins/myaccel/build/libbackplane_myaccel.so" "$vendor_so"; do
  if readelf -d "$so" | grep -q 'NEEDED.*libbackplane'; then fail "$so links libbackplane"; fi
done
# backplane.pc serves host applications: the C API compiles and links with it.
mkdir "$work/pc"
printf '#include <backplane/backplane.h>\nint main(void) { return bp_abi_version() == 0; }\n' > "$work/pc/host.c"
# A plugin calling exp() links with --no-undefined: libm, by pkg-config and by CMake.
printf '#include <math.h>\ndouble probe_exp(double x);\ndouble probe_exp(double x) { return exp(x); }\n' > "$work/pc/exp.c"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's flags are meant to split into words
cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$work/pc/host" "$work/pc/host.c" $(pkg-config --cflags --libs backplane)
# shellcheck disable=SC2046
cc -std=c99 -shared -fPIC -o "$work/pc/libexp.so" "$work/pc/exp.c" $(pkg-config --cflags --libs backplane-plugin) \
  || fail "a plugin calling exp() does not link with backplane-plugin.pc's flags"
unset PKG_CONFIG_PATH
mkdir "$work/exp"
cp "$prefix/share/backplane/samples/one_file_plugin.c" "$work/pc/exp.c" "$work/exp/"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(exp LANGUAGES C)\nfind_package(Backplane REQUIRED)\nbackplane_add_plugin(backplane_exp SOURCES one_file_plugin.c exp.c)\n' \
  > "$work/exp/CMakeLists.txt"
{ cmake -S "$work/exp" -B "$work/exp/build" -DCMAKE_PREFIX_PATH="$prefix" && cmake --build "$work/exp/build"; } \
  > "$work/exp.log" 2>&1 || { cat "$work/exp.log"; fail "a plugin calling exp() does not link with backplane_add_plugin()"; }

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

step "(g) the installed Python package, imported from outside the tree, runs an operator"
if [ -f "$prefix/lib/python3/dist-packages/backplane/__init__.py" ]; then
  # What docs/python.md tells a user with a prefix outside /usr to do. It must
  # find the installed libbackplane and cpu plugin by itself ($ORIGIN RUNPATH).
  (cd "$work" && env -u LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$prefix/lib/python3/dist-packages" \
     /usr/bin/python3 -c '
import numpy as np, backplane
assert backplane.__file__.startswith("'"$prefix"'/"), backplane.__file__
x = backplane.tensor(np.arange(4, dtype=np.float32))
y = backplane.ops.add(x, x, alpha=2).numpy()
assert (y == np.arange(4) * 3).all(), y
print("python: ops.add on", x.device, "->", y.tolist())') || fail "the installed Python package does not import or run ops.add"
else
  echo "skipped: this SDK was built without python3-dev/python3-pybind11, so it installs no Python package"
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
check_deb backplane "usr/bin/bp-(info|conformance|run|export-models)|$lib/libbackplane\.so\.[0-9.]+|usr/share/backplane/conformance/.*" \
  usr/bin/bp-info usr/bin/bp-conformance usr/bin/bp-export-models "$lib/libbackplane\.so\.1"
dpkg-deb -f "$debs"/backplane_*.deb Provides | grep -q '^backplane-abi-1 (= 1\.[0-9]*)$' \
  || fail "the runtime package does not provide backplane-abi-1 (= 1.<minor>)"
check_deb backplane-dev \
  "usr/bin/bp-plugin-new|usr/share/backplane/plugin-template/.*|usr/include/(backplane|bponnx)/.*|$lib/libbackplane\.so|$lib/libbackplane_onnx(_map)?\.a|$lib/cmake/Backplane/.*|$lib/pkgconfig/backplane(-plugin)?\.pc|usr/share/backplane/ops\.yaml|usr/share/backplane/samples/.*|usr/share/doc/Backplane/.*\.md" \
  usr/include/backplane/backend.h usr/include/backplane/backplane.h usr/include/backplane/ops.hpp \
  usr/include/backplane/plugin_kit.h usr/include/backplane/plugin_kit/args.h usr/include/backplane/plugin_kit/dtype.h \
  usr/include/backplane/plugin_kit/errors.h usr/include/backplane/plugin_kit/kernel_table.h \
  "$lib/cmake/Backplane/BackplaneConfig.cmake" "$lib/cmake/Backplane/BackplaneConfigVersion.cmake" \
  "$lib/cmake/Backplane/plugin.map" "$lib/pkgconfig/backplane\.pc" "$lib/pkgconfig/backplane-plugin\.pc" \
  usr/share/backplane/ops.yaml usr/share/doc/Backplane/plugin-guide.md usr/share/doc/Backplane/install.md \
  usr/share/doc/Backplane/plugin/kernel-contract.md usr/share/backplane/samples/one_file_plugin.c \
  usr/share/backplane/samples/vendor_plugin/CMakeLists.txt usr/share/backplane/samples/host_app/main.cpp \
  "$lib/cmake/Backplane/BackplanePackagePlugin.cmake" \
  usr/bin/bp-plugin-new usr/share/backplane/plugin-template/CMakeLists.txt
# The Python package and its torch bridge, when the build made them.
py_pkgs=()
if [ -f "$build/python/backplane/__init__.py" ]; then
  check_deb python3-backplane "usr/lib/python3/dist-packages/backplane/(__init__|ops|onnx)\.py|usr/lib/python3/dist-packages/backplane/_C\..*\.so" \
    usr/lib/python3/dist-packages/backplane/__init__.py usr/lib/python3/dist-packages/backplane/ops.py \
    usr/lib/python3/dist-packages/backplane/onnx.py
  py_pkgs+=(python3-backplane)
fi
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

step "the SDK packages and the guide's plugin package, installed with apt-get, pass conformance"
# This changes the machine: the packages go into /usr and are removed again
# on the way out (and first, in case an earlier run was killed). The build
# tree's tools keep their own libbackplane: their RUNPATH comes before /usr/lib.
sdk_pkgs=(backplane backplane-plugin-cpu backplane-plugin-myaccel "${py_pkgs[@]}")
remove_pkgs() { dpkg --purge "${sdk_pkgs[@]}" > "$work/purge.log" 2>&1 || { cat "$work/purge.log"; return 1; }; }
if [ "$(id -u)" != 0 ]; then
  echo "skipped: installing packages needs root (CI runs as root)"
else
  remove_pkgs
  trap 'remove_pkgs; rm -rf "$work"' EXIT
  # The plugin's Depends (backplane-abi-1, a virtual package) is satisfied by the
  # SDK's runtime package alone; apt-get resolves local .debs with no network.
  cp "$plugin_deb" "$debs/"
  py_debs=()
  for p in "${py_pkgs[@]}"; do py_debs+=("$debs/${p}_"*.deb); done
  apt-get install -y "$debs"/backplane_*.deb "$debs"/backplane-plugin-cpu_*.deb \
    "$debs"/backplane-plugin-myaccel_*.deb "${py_debs[@]}" > "$work/apt-install.log" 2>&1 \
    || { cat "$work/apt-install.log"; fail "apt-get could not install the SDK and plugin packages"; }
  dpkg --audit > "$work/audit.log" 2>&1 && [ ! -s "$work/audit.log" ] || { cat "$work/audit.log"; fail "dpkg --audit"; }
  apt-get check > "$work/check.log" 2>&1 || { cat "$work/check.log"; fail "apt-get check: broken dependencies"; }
  env -u LD_LIBRARY_PATH /usr/bin/bp-info > "$work/bp-info-usr.txt"
  grep -Eq '^  myaccel .*/usr/lib/.*backplane/plugins/libbackplane_myaccel\.so' "$work/bp-info-usr.txt" \
    || { cat "$work/bp-info-usr.txt"; fail "the packaged plugin is not where the packaged bp-info discovers plugins"; }
  env -u LD_LIBRARY_PATH /usr/bin/bp-conformance --backend myaccel --quick --no-onnx --no-progress --failures-only \
    | tee "$work/deb-conformance.txt" | tail -2
  grep -q '^  myaccel (myaccel:0): CONFORMANT' "$work/deb-conformance.txt" || fail "the packaged plugin is not CONFORMANT"
  # The Python packages, installed, work for Debian's python3 with no PYTHONPATH.
  if ((${#py_pkgs[@]})); then
    (cd "$work" && env -u LD_LIBRARY_PATH -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -c '
import backplane
assert backplane.__file__.startswith("/usr/lib/python3/dist-packages/"), backplane.__file__
x = backplane.tensor([1.0, 2.0], device="cpu")
print("python3-backplane:", backplane.ops.add(x, x).numpy().tolist())') || fail "the installed python3-backplane does not work"
  fi
  # The build tree's tools still load the build tree's libbackplane, not /usr's.
  env -u LD_LIBRARY_PATH ldd "$build/bin/bp-info" | grep -q "=> $build/lib/libbackplane\.so" \
    || fail "with the SDK packages installed, the build tree's bp-info no longer loads its own libbackplane"
  remove_pkgs
  trap 'rm -rf "$work"' EXIT
fi

step "install test passed"
