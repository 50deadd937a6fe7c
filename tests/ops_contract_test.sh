#!/usr/bin/env bash
# The kernel contract comment at the top of ops.yaml spells each operator
# family as the `meta:` field does: gen_ops.py accepts the real ops.yaml and
# refuses a copy whose comment names a family that does not exist ('unary',
# the old spelling of unary_no_bool) or leaves one out.
# Usage: ops_contract_test.sh GEN_OPS_PY OPS_YAML SCHEMA_TOOL
set -u
gen=$1 yaml=$2 tool=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 "$gen" --yaml "$yaml" --out-dir "$dir/out" --schema-tool "$tool" || fail "gen_ops.py refused ops.yaml"

sed 's/^#   binary, binary_true_divide,/#   binary, unary, binary_true_divide,/' "$yaml" > "$dir/stale.yaml"
cmp -s "$yaml" "$dir/stale.yaml" && fail "the contract comment has no '#   binary, binary_true_divide,' line to alter"
if /usr/bin/python3 "$gen" --yaml "$dir/stale.yaml" --out-dir "$dir/out2" --schema-tool "$tool" 2>"$dir/err"; then
  fail "gen_ops.py accepted a contract comment naming the family 'unary'"
fi
grep -q "names \['unary'\], which no meta family is called" "$dir/err" || fail "no clear message: $(cat "$dir/err")"

sed 's/^#   unary_no_bool, /#   /' "$yaml" > "$dir/missing.yaml"
cmp -s "$yaml" "$dir/missing.yaml" && fail "the contract comment has no '#   unary_no_bool, ' line to alter"
if /usr/bin/python3 "$gen" --yaml "$dir/missing.yaml" --out-dir "$dir/out3" --schema-tool "$tool" 2>"$dir/err"; then
  fail "gen_ops.py accepted a contract comment without unary_no_bool"
fi
grep -q "does not describe the meta family \['unary_no_bool'\]" "$dir/err" || fail "no clear message: $(cat "$dir/err")"
echo "ops_contract_test: passed"
