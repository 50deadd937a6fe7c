#!/usr/bin/env bash
# libFuzzer runs (clang 14, -fsanitize=fuzzer,address,undefined) of:
#   schema_fuzz        the operator schema parser, with the round-trip property
#   expectations_fuzz  bp-conformance's expectation-file parser
#   dlpack_fuzz        bp_tensor_from_dlpack (links an instrumented libbackplane core)
#   onnx_load_fuzz     the ONNX model loader (frontends/onnx; libonnx and protobuf as installed)
# Each starts from its committed seed corpus (fuzz/corpus/<name>) and runs for
# FUZZ_SECONDS (default 60) seconds; a crash fails the script and leaves the
# input in build/fuzz/artifacts/ (make it a regression test, add it to the
# corpus). Prints executions per second and total executions per target.
# Usage: .ci/fuzz.sh [target...]   (needs build/default configured: the
# generated operator table and headers come from there). A source that fails
# to compile fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(schema_fuzz expectations_fuzz dlpack_fuzz onnx_load_fuzz)
CXX=${FUZZ_CXX:-clang++-14}
command -v "$CXX" >/dev/null || { echo "fuzz.sh: $CXX not found (apt-get install clang-14)"; exit 2; }
# FUZZ_BUILD: the configured build tree; FUZZ_OUT: where objects, binaries
# and artifacts go; FUZZ_LAUNCHER: the compiler launcher (default ccache when
# installed, "" for none). The CI scripts' test sets all three.
build_dir=${FUZZ_BUILD:-build/default}
out=${FUZZ_OUT:-build/fuzz}
mkdir -p "$out/obj" "$out/artifacts" "$out/work"
cmake --build "$build_dir" --target backplane_codegen >/dev/null
gen=$build_dir/generated
version=$(sed -n 's/^project(Backplane VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
       -fno-sanitize-recover=undefined -DBACKPLANE_BUILDING_LIBRARY=1 "-DBACKPLANE_VERSION_STRING=\"$version\""
       -Iabi/include -I$gen/abi/include -Idispatcher/src -Idispatcher/include -I$gen/include -Ifallback
       -Iconformance/src -Ifrontends/onnx/include -DONNX_ML=1 -DONNX_NAMESPACE=onnx)
jobs=$(nproc 2>/dev/null || echo 2)

# Compiles sources to objects and prints the object paths; fails when any
# source fails to compile. Every source is compiled each time, through ccache
# when it is installed (it knows when a header changed; a timestamp check on
# the source alone left stale objects), and its old object is removed first,
# so a failed compile can never leave last run's object to be linked.
cc_launcher=${FUZZ_LAUNCHER-$(command -v ccache || true)}
objects() {
  printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh -c \
    'o='"$out"'/obj/$(echo "{}" | tr / _).o; rm -f "$o"; '"$cc_launcher $CXX"' '"$(printf '%q ' "${flags[@]}")"' -c "{}" -o "$o"' \
    || return 1
  for src in "$@"; do echo "$out/obj/$(echo "$src" | tr / _).o"; done
}

build() {
  local name=$1
  shift
  # Not a process substitution: its exit status would be lost.
  local list="$out/$name.objects"
  if ! objects "fuzz/$name.cpp" "$@" >"$list"; then
    echo "fuzz.sh: $name: a source failed to compile (see the compiler's message above)"
    exit 1
  fi
  mapfile -t objs <"$list"
  "$CXX" -fsanitize=fuzzer,address,undefined "${objs[@]}" "${libs[@]}" -ldl -lpthread -o "$out/$name"
}
libs=()

for t in "${targets[@]}"; do
  case $t in
    schema_fuzz) build schema_fuzz dispatcher/src/schema.cpp dispatcher/src/status.cpp ;;
    expectations_fuzz) build expectations_fuzz conformance/src/expectations.cpp conformance/src/dtype.cpp conformance/src/floatfmt.cpp \
                         conformance/src/result.cpp ;;
    dlpack_fuzz)
      mapfile -t core < <(ls dispatcher/src/*.cpp dispatcher/src/*/*.cpp; echo "$gen/op_table.cpp"; \
                          echo fallback/host_fallback.cpp)
      build dlpack_fuzz "${core[@]}" ;;
    onnx_load_fuzz)
      # The loader alone: it calls no operator, so libbackplane comes from the
      # default build (uninstrumented) for the symbols the library references.
      libs=(-L"$build_dir/lib" -Wl,-rpath,"$(cd "$build_dir" && pwd)/lib" -lbackplane -lonnx -lonnx_proto -lprotobuf)
      # Every frontend source, its subdirectories (passes/) too: a new file
      # joins without an edit here.
      mapfile -t frontend < <(find frontends/onnx/src -name '*.cpp' | sort)
      build onnx_load_fuzz "${frontend[@]}"
      libs=() ;;
    *) echo "fuzz.sh: unknown target $t"; exit 2 ;;
  esac
done

status=0
for t in "${targets[@]}"; do
  corpus=fuzz/corpus/${t%_fuzz}
  work=$out/work/$t
  mkdir -p "$work"
  log=$out/$t.log
  # A working copy of the corpus grows during the run; the committed seeds stay as they are.
  if ! ASAN_OPTIONS=detect_leaks=1 "$out/$t" -max_total_time="$seconds" -print_final_stats=1 \
       -artifact_prefix="$out/artifacts/$t-" "$work" "$corpus" >"$log" 2>&1; then
    echo "FUZZ FAIL $t (log: $log)"
    tail -30 "$log"
    status=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  echo "FUZZ OK   $t: $runs executions in ${seconds} s ($secs exec/s)"
done
exit $status
