// `genbench describe` (io/describe.h): an op from the registry, a result file from its stored
// descriptions and tables.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/describe.h"
#include "io/result_file.h"
#include "io/schema.h"
#include "ops/implementation.h"
#include "support/test_env.h"

namespace genbench {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The line of the text's column table that starts with the column's name.
std::string column_line(const std::string& text, const std::string& name) {
  for (const auto& l : lines_of(text))
    if (l.rfind("  " + name + " ", 0) == 0) return l;
  return "";
}

// Every registered op: the JSON's columns are Op::columns(), each with its unit, kind and how its
// value is obtained, and the text has one line per column carrying its name, unit and source.
TEST(Describe, EveryOpCarriesItsDeclaredColumns) {
  for (const Op* op : all_ops()) {
    SCOPED_TRACE(op->name());
    const json d = json::parse(describe_op_json(*op));
    EXPECT_EQ(d.at("op"), op->name());
    const auto& cols = op->columns();
    ASSERT_EQ(d.at("columns").size(), cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const json& c = d["columns"][i];
      EXPECT_EQ(c.at("name"), cols[i].name);
      EXPECT_EQ(c.at("unit"), cols[i].unit);
      EXPECT_EQ(c.at("kind"), column_kind_name(cols[i].kind));
      EXPECT_EQ(c.at("computed"), column_kind_source(cols[i].kind));
    }
    EXPECT_EQ(d.at("axes").size(), op->axes().size());
    EXPECT_EQ(d.at("implementations").size(), Registry::instance().for_op(op->name()).size());
    const std::string text = describe_op_text(*op);
    EXPECT_EQ(text.rfind("op " + op->name(), 0), 0u) << text;
    for (const auto& c : cols) {
      const std::string line = column_line(text, c.name);
      ASSERT_FALSE(line.empty()) << c.name << " not in\n" << text;
      EXPECT_NE(line.find(" " + (c.unit.empty() ? std::string("-") : c.unit) + " "), std::string::npos) << line;
      EXPECT_NE(line.find(column_kind_source(c.kind)), std::string::npos) << line;
      EXPECT_NE(line.find(c.meaning), std::string::npos) << line;
    }
    for (const auto& a : op->axes()) EXPECT_FALSE(column_line(text, a.name).empty()) << a.name;
  }
}

// A tuning axis names the implementations it belongs to, and the text lists them under theirs.
TEST(Describe, TuningAxesByImplementation) {
  const Op* op = find_op("attention");
  ASSERT_NE(op, nullptr);
  const json d = json::parse(describe_op_json(*op));
  bool seen = false;
  for (const auto& a : d.at("axes"))
    if (a.at("name") == "fa3_pingpong") {
      EXPECT_EQ(a.at("implementations"), json::array({"fa3"}));
      seen = true;
    }
  EXPECT_TRUE(seen);
  const std::string text = describe_op_text(*op);
  const std::string fa3 = column_line(text, "fa3 (cuda)");
  EXPECT_NE(fa3.find("fa3_pingpong"), std::string::npos) << text;
  EXPECT_EQ(fa3.find("fa2_tile"), std::string::npos) << fa3;
  // fa2_tile's many values go on their own line under the axes table.
  EXPECT_NE(column_line(text, "fa2_tile").find(" (below) "), std::string::npos) << text;
  EXPECT_NE(text.find("\n  fa2_tile: auto, "), std::string::npos) << text;
}

// The ceiling at the defaults, and the axes that change it: attention's dtype, w4a16's m (copy
// bandwidth for small m, the GEMM rate above); an op without a ceiling says so.
TEST(Describe, CeilingAndTheAxesThatChangeIt) {
  const json att = json::parse(describe_op_json(*find_op("attention"))).at("ceiling");
  EXPECT_EQ(att.at("at_defaults").at("name"), "gemm_bf16_tflops");
  EXPECT_EQ(att.at("at_defaults").at("held_against"), "tflops");
  ASSERT_EQ(att.at("by_axis").size(), 1u) << att.dump();
  EXPECT_EQ(att["by_axis"][0].at("axis"), "dtype");
  bool fp16 = false;
  for (const auto& v : att["by_axis"][0].at("values"))
    fp16 = fp16 || (v.at("value") == "fp16" && v.at("name") == "gemm_fp16_tflops");
  EXPECT_TRUE(fp16) << att.dump();

  const std::string w4 = describe_op_text(*find_op("w4a16"));
  EXPECT_NE(w4.find("by m (powers of two tried): 1 to 64 -> copy_GBps; 128 to 1M -> gemm_fp16_tflops"),
            std::string::npos)
      << w4;
  EXPECT_NE(describe_op_text(*find_op("collective")).find("ceiling: none"), std::string::npos);
}

// A result file of one gemm benchmark of three points: one ok, one failed, one never written.
std::string gemm_file() {
  const Op& op = *find_op("gemm");
  const std::string path = test::temp_dir() + "/describe.h5";
  RunAttributes a;
  a.tool_version = "test";
  a.config_text = "benchmarks: []";
  a.config_path = "configs/x.yaml";
  a.world_size = 1;
  a.backend = "host";
  a.start_utc = utc_now();
  ResultFile f = ResultFile::create(path, true, a);
  BenchmarkInfo b;
  b.name = "mm";
  b.op = &op;
  b.implementations = {"reference"};
  b.sweep_size = 3;
  b.timing.max_iterations = 2;
  for (std::size_t i = 0; i < 2; ++i) {
    PointRecord r;
    r.point = point_of(op, "reference", {{"m", AxisValue{static_cast<std::int64_t>(64) << i}}});
    r.point.index = i;
    r.status = i == 0 ? schema::kOk : schema::kFailed;
    r.samples.assign(1, {1e-3, 2e-3});
    r.ranks.resize(1);
    r.ranks[0].summary.n = 2;
    r.slowest.n = 2;
    r.slowest.median = 1.5e-3;
    r.work = op.work(r.point, 1);
    r.op_values = op.values(r.point, 1, r.work, r.slowest.median, {});
    f.append(b, r);
  }
  f.finish("complete", utc_now());
  return path;
}

TEST(Describe, ResultFileBenchmarksStatusesAndStoredDescription) {
  const std::string path = gemm_file();
  const json d = json::parse(describe_file_json(path));
  EXPECT_EQ(d.at("schema_version"), schema::kSchemaVersion);
  EXPECT_EQ(d.at("state"), "complete");
  ASSERT_EQ(d.at("benchmarks").size(), 1u);
  const json& b = d["benchmarks"][0];
  EXPECT_EQ(b.at("name"), "mm");
  EXPECT_EQ(b.at("op"), "gemm");
  EXPECT_EQ(b.at("implementations"), json::array({"reference"}));
  EXPECT_EQ(b.at("sweep_size"), 3);
  EXPECT_EQ(b.at("rows"), 3);
  EXPECT_EQ(b.at("completed"), 2);
  EXPECT_EQ(b.at("status"), (json{{"ok", 1}, {"failed", 1}, {"not run", 1}}));
  EXPECT_EQ(b.at("by_implementation").at("reference"), (json{{"ok", 1}, {"failed", 1}}));
  EXPECT_EQ(b.at("axes").at("m"), json::array({64, 128}));
  const json& desc = b.at("description");
  EXPECT_EQ(desc.at("op"), "gemm");
  const auto& cols = find_op("gemm")->columns();
  ASSERT_EQ(desc.at("columns").size(), cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i)
    EXPECT_EQ(desc["columns"][i].at("computed"), column_kind_source(cols[i].kind));

  const std::string text = describe_file_text(path);
  EXPECT_NE(text.find("benchmark mm (op gemm): 3 points x 1 round = 3 rows, 2 completed"), std::string::npos) << text;
  EXPECT_NE(text.find("status: ok 1, failed 1, not run 1"), std::string::npos) << text;
  EXPECT_NE(text.find("axes that vary: m=64,128"), std::string::npos) << text;
  EXPECT_NE(text.find("as stored with mm (op_description):\nop gemm"), std::string::npos) << text;
  for (const auto& c : cols) EXPECT_FALSE(column_line(text, c.name).empty()) << c.name;
}

// What is no readable result file is a UsageError (exit code 2) that says what is wrong.
TEST(Describe, BadFilesAreUsageErrors) {
  const std::string dir = test::temp_dir();
  const auto message = [](const std::string& path) -> std::string {
    try {
      describe_file_text(path);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no UsageError)";
  };
  EXPECT_EQ(message(dir + "/none.h5"), dir + "/none.h5: no such file");
  { std::ofstream(dir + "/text.h5") << "not hdf5\n"; }
  EXPECT_EQ(message(dir + "/text.h5"), dir + "/text.h5: not an HDF5 file (or truncated)");
  const std::string other = dir + "/other.h5";
  H5Fclose(H5Fcreate(other.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_EQ(message(other), other + ": not a genbench result file (no format='genbench-results' attribute)");
}

}  // namespace
}  // namespace genbench
