#!/usr/bin/env bash
# .ci/check_doc_links.py: the docs (installed as they are) link only among
# themselves, and the checker does catch a link out of the docs directory, a
# missing file and a missing anchor. Usage: doc_links_test.sh CHECKER DOCS_DIR
set -u
checker=$1 docs=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

/usr/bin/python3 "$checker" "$docs" || fail "broken links in $docs (above)"

mkdir "$dir/docs" "$dir/docs/plugin"
printf '# Title\n## A section (`--flag`)\n' > "$dir/docs/a.md"
printf '[ok](../a.md#a-section---flag) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n' > "$dir/docs/plugin/b.md"
/usr/bin/python3 "$checker" "$dir/docs" > "$dir/out" || fail "good links refused: $(cat "$dir/out")"
printf '[out](../../src/ops.yaml)\n[gone](c.md)\n[anchor](../a.md#nope)\n' >> "$dir/docs/plugin/b.md"
if /usr/bin/python3 "$checker" "$dir/docs" > "$dir/out"; then fail "broken links accepted"; fi
grep -q 'plugin/b.md:5: ../../src/ops.yaml: leaves the docs directory' "$dir/out" || fail "no 'leaves': $(cat "$dir/out")"
grep -q 'plugin/b.md:6: c.md: no such file' "$dir/out" || fail "no 'no such file': $(cat "$dir/out")"
grep -q "plugin/b.md:7: ../a.md#nope: no heading '#nope' in a.md" "$dir/out" || fail "no anchor message: $(cat "$dir/out")"
echo "doc_links_test: passed"
