// AnalysisHints::extra_plots as the file stores them (op_description "extra_plots"): every
// column they name is a column of the op's points table, held axes carry their defaults, and
// overlap asks for its efficiency plot and table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "io/columns.h"
#include "ops/overlap/overlap.h"

namespace genbench {
namespace {

std::set<std::string> point_columns(const Op& op) {
  std::set<std::string> out;
  for (const auto& c : columns::points(op)) out.insert(c.name);
  return out;
}

TEST(ExtraPlots, NameColumnsOfThePointsTable) {
  for (const Op* op : all_ops()) {
    const auto d = nlohmann::json::parse(op->description_json());
    ASSERT_TRUE(d.contains("extra_plots")) << op->name();
    ASSERT_TRUE(d.at("extra_plots").is_array()) << op->name();
    const auto have = point_columns(*op);
    std::set<std::string> names;
    for (const auto& p : d.at("extra_plots")) {
      const std::string what = op->name() + " extra plot " + p.at("name").get<std::string>();
      EXPECT_FALSE(p.at("name").get<std::string>().empty()) << op->name();
      EXPECT_TRUE(names.insert(p.at("name").get<std::string>()).second) << what << " twice";
      EXPECT_TRUE(have.count(p.at("y").get<std::string>())) << what << ": y";
      EXPECT_FALSE(p.at("panels").empty()) << what;
      for (const auto& q : p.at("panels")) {
        EXPECT_TRUE(have.count(q.at("x").get<std::string>())) << what << ": x " << q.at("x");
        for (const auto& c : q.at("lines")) EXPECT_TRUE(have.count(c.get<std::string>())) << what << ": line " << c;
        for (const auto& c : q.at("free"))
          EXPECT_TRUE(p.at("hold").contains(c.get<std::string>())) << what << ": " << c;
      }
      for (const auto& c : p.at("table")) EXPECT_TRUE(have.count(c.get<std::string>())) << what << ": table " << c;
      for (const auto& [axis, value] : p.at("hold").items()) {
        const std::size_t i = op->axis_index(axis);
        ASSERT_LT(i, op->axes().size()) << what << ": holds " << axis;
        EXPECT_EQ(value.dump(), nlohmann::json(std::visit([](const auto& v) { return nlohmann::json(v); },
                                                          op->axes()[i].default_value))
                                    .dump())
            << what << ": " << axis;
      }
    }
  }
}

TEST(ExtraPlots, OverlapAsksForItsEfficiencyPlot) {
  const auto d = nlohmann::json::parse(overlap_op().description_json());
  ASSERT_EQ(d.at("extra_plots").size(), 1u);
  const auto& p = d.at("extra_plots")[0];
  EXPECT_EQ(p.at("name"), "efficiency");
  EXPECT_EQ(p.at("y"), overlap_metric::efficiency);
  EXPECT_EQ(p.at("reference_lines"), nlohmann::json::array({0.0, 1.0}));
  EXPECT_EQ(p.at("hold"), nlohmann::json::parse(R"({"nccl_ctas": 0, "chunks": 1, "priority": "equal"})"));
  ASSERT_EQ(p.at("panels").size(), 3u);
  EXPECT_EQ(p.at("panels")[0].at("x"), "bytes");
  EXPECT_EQ(p.at("panels")[1].at("x"), "work_flops");
  EXPECT_EQ(p.at("panels")[2].at("x"), "nccl_ctas");
  EXPECT_TRUE(p.at("panels")[2].at("categorical").get<bool>());
  EXPECT_EQ(p.at("panels")[2].at("tick_labels").at("0"), "default");
  EXPECT_EQ(p.at("panels")[2].at("free").size(), 3u);
  bool efficiency_in_table = false;
  for (const auto& c : p.at("table")) efficiency_in_table |= c == overlap_metric::efficiency;
  EXPECT_TRUE(efficiency_in_table);
  EXPECT_FALSE(p.at("table_note").get<std::string>().empty());
}

// An op whose extra plot holds an axis it does not have is a programming error, said at once.
class BadHoldOp final : public Op {
 public:
  std::string name() const override { return "bad_hold_test"; }
  std::vector<AxisSpec> define_axes() const override {
    AxisSpec a;
    a.name = "n";
    a.type = AxisType::integer;
    a.default_value = std::int64_t{1};
    a.help = "n";
    return {a};
  }
  std::string check(const Point&, int) const override { return ""; }
  Work work(const Point&, int) const override { return {}; }
  AnalysisHints analysis() const override {
    AnalysisHints h;
    ExtraPlotHint e;
    e.name = "p";
    e.y = "n";
    e.hold = {"missing"};
    h.extra_plots = {e};
    return h;
  }
};

TEST(ExtraPlots, HoldingAnUnknownAxisThrows) {
  const BadHoldOp op;
  try {
    (void)op.description_json();
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("holds missing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace genbench
