// Unit tests of bp-conformance's child-process runner (crash isolation):
// streamed cases are collected; a signal, a hang and an abnormal exit are
// told apart, and the case that was running is named.
#include <gtest/gtest.h>

#include "child_process.h"

namespace bpc {
namespace {

ChildOutcome sh(const std::string& script, double timeout_s = 30.0) {
  return run_child({"/bin/sh", "-c", script}, timeout_s);
}

const char* kStart = R"({"start": {"test": "Ops/OpCellTest.Run/cpu_0__neg__float32", "what": "float32 sample 3"}})";
const char* kEnd = R"({"end": {"test": "Ops/OpCellTest.Run/cpu_0__neg__float32"}})";
const char* kCase = R"({"case": {"op": "neg", "dtype": "float32", "sample": 3, "outcome": "native_pass"}})";

TEST(ChildProcess, CollectsStreamedCases) {
  const ChildOutcome c = sh(std::string("echo '") + kStart + "'; echo 'plugin chatter'; echo '" + kCase + "'");
  EXPECT_EQ(c.status, ChildOutcome::kExited);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].op, "neg");
  EXPECT_EQ(c.cases[0].outcome, Outcome::kNativePass);
  EXPECT_TRUE(c.last_started.empty());
}

TEST(ChildProcess, ASignalIsACrashNamingTheRunningCase) {
  const ChildOutcome c = sh(std::string("echo '") + kCase + "'; echo '" + kStart + "'; kill -SEGV $$");
  EXPECT_EQ(c.status, ChildOutcome::kCrashed);
  EXPECT_EQ(c.signal, 11);
  EXPECT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.last_started, "Ops/OpCellTest.Run/cpu_0__neg__float32 (float32 sample 3)");
  EXPECT_EQ(c.last_test, "Ops/OpCellTest.Run/cpu_0__neg__float32");
  EXPECT_TRUE(c.ended_tests.empty());
  EXPECT_NE(c.message.find("signal 11"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("float32 sample 3"), std::string::npos) << c.message;
}

TEST(ChildProcess, ACrashKeepsTheCaseItWasRunning) {
  // The worker announces each case with what is known of it before it runs.
  const char* start = R"({"start": {"test": "Ops/OpCellTest.Run/x_0__neg__float64", "what": "float64 sample 4", )"
                      R"("case": {"op": "neg", "dtype": "float64", "sample": 4, "desc": "odd size [7]", "seed": 9, )"
                      R"("input_shapes": [[7]], "inputs": "float64[7]", "repro": "bp-conformance --op neg"}}})";
  const ChildOutcome c = sh(std::string("echo '") + start + "'; kill -SEGV $$");
  EXPECT_EQ(c.status, ChildOutcome::kCrashed);
  ASSERT_TRUE(c.has_last_case);
  EXPECT_EQ(c.last_case.sample, 4);
  EXPECT_EQ(c.last_case.desc, "odd size [7]");
  EXPECT_EQ(c.last_case.seed, 9u);
  EXPECT_EQ(c.last_case.inputs, "float64[7]");
  ASSERT_EQ(c.last_case.input_shapes.size(), 1u);
  EXPECT_EQ(c.last_case.repro, "bp-conformance --op neg");
  // A case that finished clears it: the crash came after.
  const ChildOutcome after = sh(std::string("echo '") + start + "'; echo '" + kCase + "'; kill -SEGV $$");
  EXPECT_FALSE(after.has_last_case);
}

TEST(ChildProcess, EndedTestsAreCounted) {
  const ChildOutcome c = sh(std::string("echo '") + kStart + "'; echo '" + kCase + "'; echo '" + kEnd + "'");
  EXPECT_EQ(c.status, ChildOutcome::kExited);
  EXPECT_EQ(c.ended_tests.count("Ops/OpCellTest.Run/cpu_0__neg__float32"), 1u);
  EXPECT_TRUE(c.last_test.empty());
}

TEST(ChildProcess, AHangIsATimeout) {
  const ChildOutcome c = sh(std::string("echo '") + kStart + "'; sleep 30", 1.0);
  EXPECT_EQ(c.status, ChildOutcome::kTimeout);
  EXPECT_NE(c.message.find("time limit"), std::string::npos) << c.message;
}

TEST(ChildProcess, ANonZeroExitIsAbnormal) {
  const ChildOutcome c = sh("exit 3");
  EXPECT_EQ(c.status, ChildOutcome::kCrashed);
  EXPECT_EQ(c.exit_code, 3);
}

TEST(ChildProcess, AMissingProgramIsASpawnFailure) {
  const ChildOutcome c = run_child({"/nonexistent/bp-conformance"}, 5.0);
  EXPECT_EQ(c.status, ChildOutcome::kSpawnFailed);
}

}  // namespace
}  // namespace bpc
