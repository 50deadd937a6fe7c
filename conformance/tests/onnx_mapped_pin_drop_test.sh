#!/usr/bin/env bash
# Negative control of onnx_mapped_pin_test.sh: the corpus again (symbolic
# links), with test_eyelike_without_dtype's input made rank 3, so EyeLike's
# mapping throws NotMapped at run time. The pin test must fail on the drop.
# Usage: onnx_mapped_pin_drop_test.sh BP_CONFORMANCE PIN
set -u
corpus=/usr/share/libonnx-testdata/data/node
t=test_eyelike_without_dtype
[ -d "$corpus/$t" ] || { echo "SKIP: no ONNX node-test corpus at $corpus (libonnx-testdata)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for d in "$corpus"/test_*; do ln -s "$d" "$dir/"; done
rm "$dir/$t"
mkdir -p "$dir/$t/test_data_set_0"
ln -s "$corpus/$t/model.onnx" "$dir/$t/model.onnx"
ln -s "$corpus/$t/test_data_set_0/output_0.pb" "$dir/$t/test_data_set_0/output_0.pb"
# A TensorProto's dims are field 1: a leading dim of 1 (bytes 08 01) makes it rank 3.
{ printf '\010\001'; cat "$corpus/$t/test_data_set_0/input_0.pb"; } >"$dir/$t/test_data_set_0/input_0.pb"
bash "$(dirname "$0")/onnx_mapped_pin_test.sh" "$1" "$2" "$dir"
