#!/usr/bin/env bash
# Walks docs/plugin-guide.md as a vendor with only the SDK would: every `sh`
# block of the *installed* guide, as written and in order, in one shell
# (`set -e`), as the unprivileged user nobody, with HOME a new directory
# holding a copy of the installed SDK moved there (~/backplane-sdk, the
# guide's prefix), a clean environment, and the source tree (and the build
# tree in it) hidden under an empty tmpfs in a mount namespace of its own.
# Usage: guide_walk.sh SOURCE_TREE BUILD_DIR WALK_DIR
# Leaves WALK_DIR/home (what the guide made), WALK_DIR/guide.log (its
# output) and WALK_DIR/times.txt (seconds since the start at the end of each
# block, then the block's first line). Exits non-zero when a line fails.
set -euo pipefail
src=$1 build=$2 walk=$3
mkdir -p "$walk"
home=$walk/home

# The SDK, installed (stripped: debug info records the build directory) and
# then moved: nothing may depend on where it was installed.
cmake --install "$build" --prefix "$walk/stage" --strip > "$walk/install.log"
mkdir -p "$home/tmp"
mv "$walk/stage" "$home/backplane-sdk"
guide=$home/backplane-sdk/share/doc/Backplane/plugin-guide.md
[ -f "$guide" ] || { echo "guide_walk: the SDK installs no $guide" >&2; exit 1; }

# The script: each block as written, then a line recording the time.
{
  echo 'set -e'
  awk '/^```sh$/ { on = 1; first = ""; next }
       /^```$/ && on { on = 0; gsub(/\047/, "", first);
                       printf "printf \"%%s\\t%%s\\n\" \"$SECONDS\" \047%s\047 >> \"$HOME/.guide-times\"\n", first; next }
       on { if (first == "") first = $0; print }' "$guide"
} > "$walk/guide.sh"
grep -q 'bp-plugin-new' "$walk/guide.sh" || { echo "guide_walk: no sh blocks found in $guide" >&2; exit 1; }

# Readable by nobody: the walk's own directories only.
chown -R nobody:nogroup "$home"
d=$walk
while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
chmod o+r "$walk/guide.sh"

run_env=(env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TMPDIR="$home/tmp"
         bash -c 'cd "$HOME" || exit 1
                  if [ -e "$0" ] && [ -n "$(ls -A "$0")" ]; then echo "guide_walk: the source tree $0 is visible" >&2; exit 1; fi
                  exec bash "$1"' "$src" "$walk/guide.sh")
if [ "$(id -u)" = 0 ]; then
  # As root (CI): a private mount namespace hides the tree, setpriv drops to nobody.
  unshare --mount --propagation private -- sh -c 'mount -t tmpfs -o size=1m,mode=0755 bp-hidden "$1" && shift && exec "$@"' \
    sh "$src" setpriv --reuid=nobody --regid=nogroup --clear-groups -- "${run_env[@]}" 2>&1 | tee "$walk/guide.log"
else
  # As a user: a user namespace of one's own may mount the tmpfs.
  unshare --user --map-root-user --mount -- sh -c 'mount -t tmpfs -o size=1m bp-hidden "$1" && shift && exec "$@"' \
    sh "$src" "${run_env[@]}" 2>&1 | tee "$walk/guide.log"
fi
cp "$home/.guide-times" "$walk/times.txt"
