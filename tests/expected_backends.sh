# BACKPLANE_EXPECT_BACKENDS for ctest shell scripts (source this file), as
# tests/expected_backends.h does for GoogleTest: a backend the run expects
# (CI sets the list, see .ci/run) fails where it would otherwise skip.

# True when BACKPLANE_EXPECT_BACKENDS names backend $1 (blanks ignored).
bp_backend_expected() {
  local list=",${BACKPLANE_EXPECT_BACKENDS-},"
  case ${list// /} in *",$1,"*) return 0 ;; esac
  return 1
}

# Exits 77 (skipped) saying why ($2), or 1 when backend $1 is expected.
bp_skip_unless_expected() {
  if bp_backend_expected "$1"; then
    echo "FAIL: $2; BACKPLANE_EXPECT_BACKENDS names $1, so this fails"
    exit 1
  fi
  echo "SKIP: $2"
  exit 77
}

# The backend name of a --backend argument: a name, or a plugin's path
# (.../libbackplane_NAME.so).
bp_backend_name() {
  local n=${1##*/}
  n=${n%.so}
  echo "${n#libbackplane_}"
}
