"""BACKPLANE_EXPECT_BACKENDS for Python tests and scripts, as
tests/expected_backends.h is for GoogleTest: a backend the run expects (CI
sets the list, see .ci/run) fails where it would otherwise skip."""
import os


def expected(name):
    """True when BACKPLANE_EXPECT_BACKENDS names backend `name` (blanks ignored)."""
    return name in (b.strip() for b in os.environ.get("BACKPLANE_EXPECT_BACKENDS", "").split(","))
