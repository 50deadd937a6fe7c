// bp-conformance's reports: the JUnit XML validates against the JUnit schema
// and parses back to the cases it came from; --baseline finds a planted
// regression and a fix; the verdict follows the documented rule.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlschemas.h>

#include <map>
#include <sstream>
#include <string>

#include "baseline.h"
#include "report.h"

namespace bpc {
namespace {

CaseResult make_case(const std::string& group, const std::string& op, const std::string& dtype, int sample,
                     Outcome o, const std::string& message = "") {
  CaseResult c;
  c.group = group;
  c.test_id = "Ops/OpCellTest.Run/cpu_0__" + op + "__" + dtype;
  c.backend = "cpu";
  c.device = "cpu:0";
  c.op = op;
  c.dtype = dtype;
  c.sample = sample;
  c.seed = 7;
  c.input_shapes = {{2, 3}, {3}};
  c.output_shape = {2, 3};
  c.outcome = o;
  c.message = message;
  c.repro = "bp-conformance --backend cpu --op " + op + " --dtype " + dtype + " --sample " + std::to_string(sample);
  if (o == Outcome::kFail) {
    c.has_numbers = true;
    c.worst_index = 4;
    c.expected = 1.5;
    c.actual = 2.5;
    c.max_abs = 1.0;
    c.max_rel = 0.4;
  }
  return c;
}

DeviceReport sample_report() {
  DeviceReport r;
  r.backend = "cpu";
  r.device = "cpu:0";
  r.ops = {"add.Tensor", "mul.Tensor", "neg", "sin"};
  for (const std::string& op : r.ops) r.cells[op];
  auto add = [&](CaseResult c) {
    DType d;
    EXPECT_TRUE(dtype_from_name(c.dtype, &d));
    if (c.group == kGroupOps) fold_case(&r.cells[c.op][static_cast<size_t>(d)], c);
    if (c.group == kGroupFallback) fold_case(&r.fallback_cells[c.op][static_cast<size_t>(d)], c);
    r.cases.push_back(c);
  };
  add(make_case(kGroupOps, "add.Tensor", "float32", 0, Outcome::kNativePass));
  add(make_case(kGroupOps, "add.Tensor", "float32", 1, Outcome::kNativePass));
  add(make_case(kGroupOps, "mul.Tensor", "float32", 0, Outcome::kFail, "values differ <&> \"here\"\nsecond line"));
  add(make_case(kGroupOps, "neg", "int32", 0, Outcome::kCrashed, "child killed by signal 11 (SIGSEGV)"));
  add(make_case(kGroupOps, "sin", "float64", -1, Outcome::kUnsupported, "device lacks BP_DEVICE_CAP_FP64"));
  add(make_case(kGroupFallback, "add.Tensor", "float32", 0, Outcome::kFallbackPass));
  CaseResult abi = make_case(kGroupAbi, "abi.AllocatorAlignment", "", -1, Outcome::kNativePass);
  abi.test_id = "Abi/AbiRuntimeTest.AllocatorAlignment/cpu_0";
  r.cases.push_back(abi);
  return r;
}

std::string attr(xmlNode* n, const char* name) {
  xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
  std::string s = v ? reinterpret_cast<const char*>(v) : "";
  xmlFree(v);
  return s;
}

std::vector<xmlNode*> children(xmlNode* n, const char* name) {
  std::vector<xmlNode*> out;
  for (xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE && std::string(reinterpret_cast<const char*>(c->name)) == name) out.push_back(c);
  }
  return out;
}

TEST(ConformanceJunit, ValidatesAgainstTheJunitSchemaAndParsesBack) {
  const std::string xml = junit_xml({sample_report()});
  xmlDoc* doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr, XML_PARSE_NONET);
  ASSERT_NE(doc, nullptr) << "not well-formed XML:\n" << xml;

  xmlSchemaParserCtxt* pctx = xmlSchemaNewParserCtxt(BPC_JUNIT_XSD);
  xmlSchema* schema = xmlSchemaParse(pctx);
  ASSERT_NE(schema, nullptr) << "cannot read " << BPC_JUNIT_XSD;
  xmlSchemaValidCtxt* vctx = xmlSchemaNewValidCtxt(schema);
  EXPECT_EQ(xmlSchemaValidateDoc(vctx, doc), 0) << "invalid JUnit XML:\n" << xml;
  xmlSchemaFreeValidCtxt(vctx);
  xmlSchemaFree(schema);
  xmlSchemaFreeParserCtxt(pctx);

  xmlNode* root = xmlDocGetRootElement(doc);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(root->name)), "testsuites");
  EXPECT_EQ(attr(root, "tests"), "7");
  EXPECT_EQ(attr(root, "failures"), "1");
  EXPECT_EQ(attr(root, "errors"), "1");
  EXPECT_EQ(attr(root, "skipped"), "1");
  std::map<std::string, xmlNode*> suites;
  for (xmlNode* s : children(root, "testsuite")) suites[attr(s, "name")] = s;
  ASSERT_EQ(suites.size(), 3u);
  ASSERT_TRUE(suites.count("cpu:0 ops"));
  EXPECT_EQ(attr(suites["cpu:0 ops"], "tests"), "5");
  EXPECT_EQ(children(suites["cpu:0 fallback"], "testcase").size(), 1u);
  EXPECT_EQ(children(suites["cpu:0 abi"], "testcase").size(), 1u);

  // The failing case: its failure, and its facts as properties.
  xmlNode* failing = nullptr;
  for (xmlNode* tc : children(suites["cpu:0 ops"], "testcase")) {
    if (!children(tc, "failure").empty()) failing = tc;
  }
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(attr(failing, "name"), "Ops/OpCellTest.Run/cpu_0__mul.Tensor__float32/sample0");
  EXPECT_EQ(attr(failing, "classname"), "bp-conformance.cpu.ops");
  xmlNode* failure = children(failing, "failure")[0];
  EXPECT_EQ(attr(failure, "message"), "values differ <&> \"here\"");
  xmlChar* text = xmlNodeGetContent(failure);
  EXPECT_NE(std::string(reinterpret_cast<const char*>(text)).find("rerun: bp-conformance --backend cpu --op mul.Tensor"),
            std::string::npos);
  xmlFree(text);
  std::map<std::string, std::string> props;
  for (xmlNode* p : children(children(failing, "properties")[0], "property")) props[attr(p, "name")] = attr(p, "value");
  EXPECT_EQ(props["backend"], "cpu");
  EXPECT_EQ(props["device"], "cpu:0");
  EXPECT_EQ(props["op"], "mul.Tensor");
  EXPECT_EQ(props["dtype"], "float32");
  EXPECT_EQ(props["seed"], "7");
  EXPECT_EQ(props["input_shapes"], "[2,3] [3]");
  EXPECT_EQ(props["outcome"], "fail");
  EXPECT_EQ(props["max_abs_error"], "1");
  EXPECT_EQ(props["worst_index"], "4");
  xmlFreeDoc(doc);
}

TEST(ConformanceJunit, TheSchemaRejectsWhatIsNotJunit) {
  // A testcase without its name and a suite without its test count.
  const std::string bad =
      "<testsuites><testsuite name=\"x\"><testcase classname=\"c\"/></testsuite></testsuites>";
  xmlDoc* doc = xmlReadMemory(bad.data(), static_cast<int>(bad.size()), "bad.xml", nullptr, XML_PARSE_NONET);
  ASSERT_NE(doc, nullptr);
  xmlSchemaParserCtxt* pctx = xmlSchemaNewParserCtxt(BPC_JUNIT_XSD);
  xmlSchema* schema = xmlSchemaParse(pctx);
  ASSERT_NE(schema, nullptr);
  xmlSchemaValidCtxt* vctx = xmlSchemaNewValidCtxt(schema);
  xmlSchemaSetValidErrors(vctx, nullptr, nullptr, nullptr);  // expected errors: keep the log quiet
  EXPECT_NE(xmlSchemaValidateDoc(vctx, doc), 0);
  xmlSchemaFreeValidCtxt(vctx);
  xmlSchemaFree(schema);
  xmlSchemaFreeParserCtxt(pctx);
  xmlFreeDoc(doc);
}

TEST(ConformanceBaseline, FindsAPlantedRegressionAndAFix) {
  DeviceReport before = sample_report();
  DeviceReport now = sample_report();
  // Planted: add.Tensor float32 passed natively before and fails now.
  now.cells["add.Tensor"][static_cast<size_t>(DType::kFloat32)].outcome = Outcome::kFail;
  now.cells["add.Tensor"][static_cast<size_t>(DType::kFloat32)].reason = "sample 1: wrong";
  // Fixed: mul.Tensor float32 failed before and passes now.
  now.cells["mul.Tensor"][static_cast<size_t>(DType::kFloat32)].outcome = Outcome::kNativePass;
  const BaselineDiff d = diff_runs(run_to_json({before}, 1, true), run_to_json({now}, 1, true));
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(d.regressions[0].op, "add.Tensor");
  EXPECT_EQ(d.regressions[0].dtype, "float32");
  EXPECT_EQ(d.regressions[0].before, "native_pass");
  EXPECT_EQ(d.regressions[0].after, "fail");
  ASSERT_EQ(d.fixes.size(), 1u);
  EXPECT_EQ(d.fixes[0].op, "mul.Tensor");
  const BaselineDiff same = diff_runs(run_to_json({before}, 1, true), run_to_json({before}, 1, true));
  EXPECT_TRUE(same.regressions.empty());
  EXPECT_TRUE(same.fixes.empty());
  EXPECT_GT(same.unchanged, 0);
}

TEST(ConformanceVerdict, FailsOnFailuresCrashesAndLostTests) {
  DeviceReport r = sample_report();
  Verdict v = verdict_of(r, ReportOptions{});
  EXPECT_FALSE(v.conformant);
  EXPECT_NE(v.summary.find("1 failing cells"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("1 crashed cells"), std::string::npos) << v.summary;

  DeviceReport ok;
  ok.backend = "cpu";
  ok.device = "cpu:0";
  ok.ops = {"add.Tensor"};
  fold_case(&ok.cells["add.Tensor"][0], make_case(kGroupOps, "add.Tensor", "float32", 0, Outcome::kNativePass));
  EXPECT_TRUE(verdict_of(ok, ReportOptions{}).conformant) << verdict_of(ok, ReportOptions{}).summary;
  ok.tests_expected = 3;
  ok.tests_reported = 2;
  v = verdict_of(ok, ReportOptions{});
  EXPECT_FALSE(v.conformant);
  EXPECT_NE(v.summary.find("1 tests lost without a report"), std::string::npos) << v.summary;
}

TEST(ConformanceVerdict, WroteThenFailedFailsRejectedOnlyDoesNot) {
  DeviceReport r;
  r.backend = "x";
  r.device = "x:0";
  r.ops = {"exp", "exp_"};
  CellResult& exp = r.cells["exp"][0];
  fold_case(&exp, make_case(kGroupOps, "exp", "float32", 0, Outcome::kFallbackPass));
  fold_case(&exp, make_case(kGroupOps, "exp", "float32", 1, Outcome::kWroteOnError));
  EXPECT_EQ(exp.outcome, Outcome::kWroteOnError);
  EXPECT_EQ(exp.failed, 1);
  // A cell of rejected inputs only is 'r'; one real pass makes it 'N'.
  CellResult& rejected = r.cells["exp_"][6];
  fold_case(&rejected, make_case(kGroupOps, "exp_", "int32", 0, Outcome::kNotReached));
  EXPECT_EQ(outcome_char(rejected.outcome), 'r');
  CellResult mixed;
  fold_case(&mixed, make_case(kGroupOps, "neg", "float32", 0, Outcome::kNotReached));
  fold_case(&mixed, make_case(kGroupOps, "neg", "float32", 1, Outcome::kNativePass));
  EXPECT_EQ(mixed.outcome, Outcome::kNativePass);

  Verdict v = verdict_of(r, ReportOptions{});
  EXPECT_FALSE(v.conformant);
  EXPECT_NE(v.summary.find("1 cells whose kernel wrote its output, then failed"), std::string::npos) << v.summary;
  exp = CellResult{};
  fold_case(&exp, make_case(kGroupOps, "exp", "float32", 0, Outcome::kFallbackPass));
  v = verdict_of(r, ReportOptions{});
  EXPECT_TRUE(v.conformant) << v.summary;
  EXPECT_NE(v.summary.find("1 with rejected inputs only"), std::string::npos) << v.summary;

  // --baseline: W is a regression from a pass; r is not compared.
  DeviceReport before = r;
  r.cells["exp"][0].outcome = Outcome::kWroteOnError;
  r.cells["exp_"][6].outcome = Outcome::kNativePass;
  const BaselineDiff d = diff_runs(run_to_json({before}, 1, true), run_to_json({r}, 1, true));
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(d.regressions[0].after, "wrote_then_failed");
  EXPECT_TRUE(d.fixes.empty());
}

// Issue 23 item 18: a cell the core served without any kernel (a view) is
// 'V', counted apart from native cells; one sample a kernel computed makes it 'N'.
TEST(ConformanceVerdict, CoreOnlyCellsAreNotCountedAsNative) {
  DeviceReport r;
  r.backend = "x";
  r.device = "x:0";
  r.ops = {"t", "neg"};
  CellResult& view = r.cells["t"][0];
  fold_case(&view, make_case(kGroupOps, "t", "float32", 0, Outcome::kCorePass));
  fold_case(&view, make_case(kGroupOps, "t", "float32", 1, Outcome::kNotReached));
  EXPECT_EQ(outcome_char(view.outcome), 'V');
  CellResult& mixed = r.cells["neg"][0];
  fold_case(&mixed, make_case(kGroupOps, "neg", "float32", 0, Outcome::kCorePass));
  fold_case(&mixed, make_case(kGroupOps, "neg", "float32", 1, Outcome::kNativePass));
  EXPECT_EQ(mixed.outcome, Outcome::kNativePass);
  const Totals t = totals_of(r);
  EXPECT_EQ(t.native, 1);
  EXPECT_EQ(t.core, 1);
  const Verdict v = verdict_of(r, ReportOptions{});
  EXPECT_TRUE(v.conformant) << v.summary;
  EXPECT_NE(v.summary.find("1 cells native, 0 via fallback, 1 core only"), std::string::npos) << v.summary;
  // A report from before 'V' existed counted such a cell native: no regression.
  DeviceReport before = r;
  before.cells["t"][0].outcome = Outcome::kNativePass;
  EXPECT_TRUE(diff_runs(run_to_json({before}, 1, true), run_to_json({r}, 1, true)).regressions.empty());
}

// Issue 18 item 4: a cell passed on the native kernel after a cast the core
// staged is 'S', counted apart from native cells; a fallback sample beats it,
// and it beats a native sample.
TEST(ConformanceVerdict, CastRouteCellsAreCountedApart) {
  DeviceReport r;
  r.backend = "x";
  r.device = "x:0";
  r.ops = {"exp", "neg"};
  CellResult& cast = r.cells["exp"][0];
  fold_case(&cast, make_case(kGroupOps, "exp", "int32", 0, Outcome::kNativePass));
  fold_case(&cast, make_case(kGroupOps, "exp", "int32", 1, Outcome::kCastPass));
  EXPECT_EQ(outcome_char(cast.outcome), 'S');
  CellResult& fell = r.cells["neg"][0];
  fold_case(&fell, make_case(kGroupOps, "neg", "int32", 0, Outcome::kCastPass));
  fold_case(&fell, make_case(kGroupOps, "neg", "int32", 1, Outcome::kFallbackPass));
  EXPECT_EQ(fell.outcome, Outcome::kFallbackPass);
  const Totals t = totals_of(r);
  EXPECT_EQ(t.cast, 1);
  EXPECT_EQ(t.native, 0);
  const Verdict v = verdict_of(r, ReportOptions{});
  EXPECT_TRUE(v.conformant) << v.summary;
  EXPECT_NE(v.summary.find("0 cells native, 1 via fallback, 1 via cast route"), std::string::npos) << v.summary;
  Outcome back;
  ASSERT_TRUE(outcome_from_name(outcome_name(Outcome::kCastPass), &back));
  EXPECT_EQ(back, Outcome::kCastPass);
  // A report from before 'S' existed counted such a cell native: no regression.
  DeviceReport before = r;
  before.cells["exp"][0].outcome = Outcome::kNativePass;
  EXPECT_TRUE(diff_runs(run_to_json({before}, 1, true), run_to_json({r}, 1, true)).regressions.empty());
}

// The streams group: its part of the verdict line follows the ABI group's;
// a failure names the group; its skips and notes print under its summary.
TEST(ConformanceVerdict, StreamsGroupHasItsOwnPartAndFailsTheVerdict) {
  DeviceReport r;
  r.backend = "x";
  r.device = "x:0";
  auto whole = [](const char* group, const char* op, Outcome o, const char* msg) {
    return make_case(group, op, "", -1, o, msg);
  };
  r.cases.push_back(whole(kGroupAbi, "abi.AllocatorAlignment", Outcome::kNativePass, ""));
  r.cases.push_back(whole(kGroupStreams, "streams.OneStreamRunsItsWorkInOrder", Outcome::kNativePass, ""));
  r.cases.push_back(whole(kGroupStreams, "streams.WithoutAnEventTwoStreamsMayOverlap", Outcome::kNativePass,
                          "streams A and B ran concurrently"));
  r.cases.push_back(whole(kGroupStreams, "streams.EventTimesAreMonotonicOnOneStream", Outcome::kUnsupported,
                          "backend has no event timing"));
  Verdict v = verdict_of(r, ReportOptions{});
  EXPECT_TRUE(v.conformant) << v.summary;
  EXPECT_NE(v.summary.find("; ABI group 1 pass, 0 skipped; streams group 2 pass, 1 skipped"), std::string::npos)
      << v.summary;
  std::ostringstream groups;
  print_groups(groups, r);
  EXPECT_NE(groups.str().find("Streams group: 2 pass, 0 fail, 1 skipped"), std::string::npos) << groups.str();
  EXPECT_NE(groups.str().find("  skipped streams.EventTimesAreMonotonicOnOneStream: backend has no event timing"),
            std::string::npos)
      << groups.str();
  EXPECT_NE(groups.str().find("  note streams.WithoutAnEventTwoStreamsMayOverlap: streams A and B ran concurrently"),
            std::string::npos)
      << groups.str();
  r.cases.push_back(whole(kGroupStreams, "streams.EventWaitOrdersTheConsumerStreamAfterTheProducer", Outcome::kFail,
                          "stream B ran before the event recorded on stream A completed: event_wait not honoured"));
  v = verdict_of(r, ReportOptions{});
  EXPECT_FALSE(v.conformant);
  EXPECT_NE(v.summary.find("1 streams-group failures"), std::string::npos) << v.summary;
  // A report without the group (older, or --group abi) has no streams part.
  DeviceReport abi_only = r;
  abi_only.cases.resize(1);
  EXPECT_EQ(verdict_of(abi_only, ReportOptions{}).summary.find("streams"), std::string::npos);
  // --baseline: a streams test that passed and fails now is a regression.
  DeviceReport before = r;
  before.cases.back().outcome = Outcome::kNativePass;
  const BaselineDiff d = diff_runs(run_to_json({before}, 1, true), run_to_json({r}, 1, true));
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(d.regressions[0].group, "streams");
  EXPECT_EQ(d.regressions[0].op, "streams.EventWaitOrdersTheConsumerStreamAfterTheProducer");
}

}  // namespace
}  // namespace bpc
