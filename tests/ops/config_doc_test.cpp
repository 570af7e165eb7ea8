// docs/config.md holds, between two markers per op, the section `genbench list --markdown`
// prints for it (ops/op_doc.h): this test fails when the doc and the registry (an op's axes, its
// implementations, their tuning axes) disagree, when an op has no section, and when a section
// names no registered op. Regenerate with scripts/config-doc.py.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "ops/implementation.h"
#include "ops/op_doc.h"
#include "support/test_env.h"

namespace genbench {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first line where a and b differ, as "line N: doc: ... / generated: ...".
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string lx, ly;
  for (int line = 1;; ++line) {
    const bool gx = static_cast<bool>(std::getline(x, lx)), gy = static_cast<bool>(std::getline(y, ly));
    if (!gx && !gy) return "";
    if (!gx || !gy || lx != ly)
      return "line " + std::to_string(line) + ":\n  doc:       " + (gx ? lx : "(end)") +
             "\n  generated: " + (gy ? ly : "(end)");
  }
}

TEST(ConfigDoc, EveryOpsSectionIsWhatTheRegistrySays) {
  const std::string path = test::source_dir() + "/docs/config.md";
  const std::string doc = read(path);
  ASSERT_FALSE(doc.empty()) << path;
  ASSERT_NE(doc.find(kConfigDocNewOps), std::string::npos) << path << " lacks the marker " << kConfigDocNewOps;
  const std::string fix = "\nRegenerate with scripts/config-doc.py docs/config.md BUILD/bin/genbench";
  for (const Op* op : all_ops()) {
    const std::string begin = config_doc_begin(op->name()), end = config_doc_end(op->name());
    const auto b = doc.find(begin), e = doc.find(end);
    if (b == std::string::npos || e == std::string::npos || e < b) {
      ADD_FAILURE() << path << " has no section for op " << op->name() << fix;
      continue;
    }
    EXPECT_EQ(doc.find(begin, b + 1), std::string::npos) << op->name() << ": two sections";
    const std::string in_doc = doc.substr(b + begin.size(), e - b - begin.size());
    const std::string generated = op_config_markdown(*op);
    if (in_doc != generated)
      ADD_FAILURE() << path << ": op " << op->name() << "'s section differs from genbench list --markdown at its "
                    << first_difference(in_doc, generated) << fix;
  }
  // No section of an op that is not registered (one removed or renamed).
  const std::regex marker("<!-- genbench list --markdown (\\w+): begin -->");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), marker); it != std::sregex_iterator(); ++it)
    EXPECT_NE(find_op((*it)[1]), nullptr)
        << path << " has a section for op " << (*it)[1] << ", which is not registered" << fix;
}

TEST(ConfigDoc, SectionsComeFromTheAxesAndTheImplementations) {
  const Op* gemm = find_op("gemm");
  ASSERT_NE(gemm, nullptr);
  const std::string md = op_config_markdown(*gemm);
  EXPECT_EQ(md.rfind("### gemm\n", 0), 0u) << md;
  // Every axis a row, its type, default and choices; tuning axes name their implementation.
  for (const auto& a : gemm->axes()) EXPECT_NE(md.find("| `" + a.name + "` |"), std::string::npos) << a.name;
  EXPECT_NE(md.find("| `m` | size | 1K | 1 to "), std::string::npos) << md;
  EXPECT_NE(md.find("| `cublaslt_workspace_mb` | tuning (cublaslt) | auto |"), std::string::npos) << md;
  EXPECT_NE(md.find("`fp8_e4m3`"), std::string::npos);
  for (const auto* impl : Registry::instance().for_op("gemm"))
    EXPECT_NE(md.find("| `" + impl->name() + "` | " + backend_name(impl->backend()) + " | "), std::string::npos)
        << impl->name();
  // A pipe in a help text does not split its cell.
  const std::string all = config_markdown();
  for (const Op* op : all_ops()) {
    EXPECT_NE(all.find(config_doc_begin(op->name()) + "### " + op->name() + "\n"), std::string::npos) << op->name();
    EXPECT_NE(all.find(config_doc_end(op->name())), std::string::npos) << op->name();
  }
  std::istringstream lines(all);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    std::size_t cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    EXPECT_TRUE(cells == 7 || cells == 4) << line;  // axis rows have 6 cells, implementation rows 3
  }
}

TEST(ConfigDoc, AxisValuesAreWrittenAsAConfigWritesThem) {
  AxisSpec size{"bytes", AxisType::size};
  EXPECT_EQ(axis_value_text(size, AxisValue{std::int64_t{256} << 20}), "256M");
  EXPECT_EQ(axis_value_text(size, AxisValue{std::int64_t{1000}}), "1000");
  EXPECT_EQ(axis_value_text(size, AxisValue{std::int64_t{0}}), "0");
  AxisSpec flag{"causal", AxisType::boolean};
  EXPECT_EQ(axis_value_text(flag, AxisValue{std::int64_t{1}}), "true");
  AxisSpec count{"m", AxisType::integer};
  EXPECT_EQ(axis_value_text(count, AxisValue{std::int64_t{4096}}), "4096");
}

// The registry as JSON (`genbench list --json`): every op with its axes, implementations and a
// host example that names only its axes, with values of their kinds.
TEST(ConfigDoc, RegistryJsonCarriesEveryOpsHostExample) {
  const auto j = nlohmann::json::parse(registry_json());
  ASSERT_EQ(j.at("ops").size(), all_ops().size());
  for (const auto& o : j.at("ops")) {
    const Op* op = find_op(o.at("name"));
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(o.at("axes").size(), op->axes().size());
    bool host = false;
    for (const auto& i : o.at("implementations")) host = host || i.at("backend") == "host";
    EXPECT_TRUE(host) << op->name() << " has no host implementation";
    for (const auto& [axis, values] : o.at("host_example").at("axes").items()) {
      const std::size_t i = op->axis_index(axis);
      ASSERT_LT(i, op->axes().size()) << op->name() << ": " << axis;
      const AxisType t = op->axes()[i].type;
      for (const auto& v : values) {
        if (t == AxisType::boolean) EXPECT_TRUE(v.is_boolean()) << axis;
        if (t == AxisType::integer || t == AxisType::size) EXPECT_TRUE(v.is_number_integer()) << axis;
        if (t == AxisType::choice) EXPECT_TRUE(v.is_string()) << axis;
        if (t == AxisType::real) EXPECT_TRUE(v.is_number()) << axis;
      }
    }
    EXPECT_GE(o.at("host_example").at("ranks").get<int>(), 1);
  }
  EXPECT_EQ(j.at("ceiling_sources").size(), 2u);
}

}  // namespace
}  // namespace genbench
