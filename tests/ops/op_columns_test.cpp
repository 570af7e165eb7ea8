// The axis builder (ops/axes.h) and the op's one list of columns (ops/op_columns.h): what a
// declaration gives, what it refuses, and what a case's report must hold.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/attention/attention.h"
#include "ops/collective/collective.h"
#include "ops/implementation.h"
#include "ops/op.h"

namespace genbench {
namespace {

// default_(V) compiles on builder B.
template <class B, class V, class = void>
struct takes_default : std::false_type {};
template <class B, class V>
struct takes_default<B, V, std::void_t<decltype(std::declval<B&>().default_(std::declval<V>()))>> : std::true_type {};

// A wrong kind of default does not compile.
static_assert(takes_default<axis_builder::Int, int>::value);
static_assert(takes_default<axis_builder::Int, std::int64_t>::value);
static_assert(!takes_default<axis_builder::Int, double>::value);
static_assert(!takes_default<axis_builder::Int, bool>::value);
static_assert(!takes_default<axis_builder::Int, const char*>::value);
static_assert(takes_default<axis_builder::Real, double>::value);
static_assert(!takes_default<axis_builder::Real, bool>::value);
static_assert(!takes_default<axis_builder::Real, const char*>::value);
static_assert(takes_default<axis_builder::Bool, bool>::value);
static_assert(!takes_default<axis_builder::Bool, int>::value);
static_assert(takes_default<axis_builder::Choice, const char*>::value);
static_assert(!takes_default<axis_builder::Choice, int>::value);

TEST(AxisBuilder, GivesEachAxisWhatItsChainSays) {
  Axes v(4);
  v.size(1, "seqlen").unit("tokens").default_(512).range(1, 1 << 20).help("query length");
  v.int64(0, "head_dim").default_(128).allowed({64, 128}).help("head dimension");
  v.choice(2, "dtype", {"fp16", "bf16"}).default_("bf16").auto_all().help("precision");
  v.boolean(3, "causal").help("causal mask");
  const auto a = v.done();
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].name, "head_dim");
  EXPECT_EQ(a[0].type, AxisType::integer);
  EXPECT_EQ(a[0].allowed, (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(a[0].min, 1);  // the default bounds
  EXPECT_EQ(a[0].max, INT64_MAX);
  EXPECT_EQ(a[1].name, "seqlen");
  EXPECT_EQ(a[1].type, AxisType::size);
  EXPECT_EQ(a[1].unit, "tokens");
  EXPECT_EQ(std::get<std::int64_t>(a[1].default_value), 512);
  EXPECT_EQ(a[1].max, 1 << 20);
  EXPECT_EQ(a[1].help, "query length");
  EXPECT_EQ(a[2].choices, (std::vector<std::string>{"fp16", "bf16"}));
  EXPECT_EQ(std::get<std::string>(a[2].default_value), "bf16");
  EXPECT_TRUE(a[2].auto_all);
  EXPECT_EQ(a[3].type, AxisType::boolean);
  EXPECT_EQ(std::get<std::int64_t>(a[3].default_value), 0);  // false unless said
  EXPECT_EQ(a[3].max, 1);
}

std::string refusal(const Axes& v) {
  try {
    v.done();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(AxisBuilder, RefusesHolesRepeatsAndBadDefaults) {
  {
    Axes v(2);
    v.int64(1, "n").default_(1).help("n");
    EXPECT_NE(refusal(v).find("axis #0 is not declared"), std::string::npos) << refusal(v);
  }
  {
    Axes v(1);
    v.int64(0, "n").default_(1).help("n");
    v.int64(0, "m").default_(1).help("m");
    EXPECT_NE(refusal(v).find("declared twice"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.int64("n").default_(1).help("n");
    v.size("n").default_(1).help("n again");
    EXPECT_NE(refusal(v).find("axis n is declared twice"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.int64("n").default_(1);
    EXPECT_NE(refusal(v).find("axis n has no help"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.int64("n").help("n");
    EXPECT_NE(refusal(v).find("axis n has no default"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.int64("n").default_(0).help("n");  // below the default lower bound 1
    EXPECT_NE(refusal(v).find("default 0 is outside [1, "), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.int64("d").default_(96).allowed({64, 128}).help("d");
    EXPECT_NE(refusal(v).find("not among its allowed values"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.choice("dtype", {"fp16", "bf16"}).default_("fp8").help("precision");
    EXPECT_NE(refusal(v).find("default 'fp8' is not one of its choices"), std::string::npos) << refusal(v);
  }
  {
    Axes v;
    v.real("scale").help("scale");
    EXPECT_NE(refusal(v).find("axis scale has no default"), std::string::npos) << refusal(v);
  }
}

TEST(AxisBuilder, ChangesAnotherOpsAxes) {
  Axes v(attention_op().define_axes());
  v.at("dtype").choices = {"fp16", "bf16"};
  v.boolean(attention_axis::count, "extra_switch").help("a switch after attention's axes");
  const auto a = v.done();
  ASSERT_EQ(a.size(), static_cast<std::size_t>(attention_axis::count) + 1);
  EXPECT_EQ(a[attention_axis::dtype].choices.size(), 2u);
  EXPECT_EQ(a.back().name, "extra_switch");
  EXPECT_THROW(v.at("no_such_axis"), std::logic_error);
  // A change that leaves the default outside the choices is refused.
  v.at("dtype").choices = {"fp16"};
  EXPECT_NE(refusal(v).find("not one of its choices"), std::string::npos) << refusal(v);
}

TEST(AxisBuilder, TuningAxesAreChoicesDefaultingToAuto) {
  const AxisSpec t = tuning_axis("knob", {"a", "b"}, "a knob");
  EXPECT_TRUE(t.tuning);
  EXPECT_EQ(t.choices, (std::vector<std::string>{"auto", "a", "b"}));
  EXPECT_EQ(std::get<std::string>(t.default_value), "auto");
}

// The units of axes reach `genbench list`'s source (the axes), the file's op description and
// the schema's axis columns.
TEST(AxisBuilder, UnitsReachTheDescription) {
  EXPECT_EQ(attention_op().axes()[attention_axis::seqlen_q].unit, "tokens");
  EXPECT_EQ(collective_op().axes()[collective_axis::bytes].unit, "B");
  const auto d = nlohmann::json::parse(collective_op().description_json());
  bool found = false;
  for (const auto& a : d.at("axes"))
    if (a.at("name") == "bytes") {
      found = true;
      EXPECT_EQ(a.at("unit"), "B");
    }
  EXPECT_TRUE(found);
  for (const auto& a : d.at("axes")) EXPECT_TRUE(a.contains("unit")) << a.dump();
}

// An op of its own (not registered: no implementation gives it tuning axes).
class ColumnsOp : public Op {
 public:
  explicit ColumnsOp(std::vector<OpColumn> cols) : cols_(std::move(cols)) {}
  std::string name() const override { return "columns_test_op"; }
  std::vector<AxisSpec> define_axes() const override {
    Axes v;
    v.int64("n").default_(4).help("size");
    return v.done();
  }
  std::string check(const Point&, int) const override { return ""; }
  Work work(const Point& p, int) const override {
    Work w;
    w.flops = static_cast<double>(p.integer(0));
    return w;
  }
  std::vector<OpColumn> define_columns() const override { return cols_; }

 private:
  std::vector<OpColumn> cols_;
};

std::vector<OpColumn> declared() {
  OpColumns c;
  // Declared out of file order: the list puts the kinds in order, each kind as declared.
  c.extra("a_s", "s", "first extra");
  c.metric("rate", "FLOP/s", "flops per second", [](const Work& w, double t) { return w.flops / t; });
  c.effective("twice_n", "", "2 n", [](const Point& p, int) { return 2 * p.integer(0); });
  c.extra("b_s", "s", "second extra");
  c.effective("per_rank", "", "n over the world",
              [](const Point& p, int ws) { return static_cast<double>(p.integer(0)) / ws; });
  return c.done();
}

TEST(OpColumns, OneListInFileOrderWithTypesFromTheFunctions) {
  const ColumnsOp op(declared());
  const auto& c = op.columns();
  ASSERT_EQ(c.size(), 5u);
  const std::vector<std::string> names{c[0].name, c[1].name, c[2].name, c[3].name, c[4].name};
  EXPECT_EQ(names, (std::vector<std::string>{"twice_n", "per_rank", "rate", "a_s", "b_s"}));
  EXPECT_EQ(c[0].type, ColumnType::i64);
  EXPECT_EQ(c[1].type, ColumnType::f64);
  EXPECT_EQ(op.metrics().size(), 1u);
  EXPECT_EQ(op.metrics().front().name, "rate");
  const auto d = nlohmann::json::parse(op.description_json());
  ASSERT_EQ(d.at("columns").size(), 5u);
  EXPECT_EQ(d.at("columns")[0].at("kind"), "effective");
  EXPECT_EQ(d.at("columns")[0].at("type"), "i64");
  EXPECT_EQ(d.at("columns")[2].at("kind"), "metric");
  EXPECT_EQ(d.at("columns")[4].at("kind"), "extra");
  EXPECT_EQ(d.at("headline"), "rate");

  Point p;
  p.values = {std::int64_t{6}};
  const auto v = op.values(p, 3, op.work(p, 3), 2.0, {{}, {{"b_s", 0.5}, {"a_s", 0.25}}});
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(std::get<std::int64_t>(v[0]), 12);
  EXPECT_DOUBLE_EQ(std::get<double>(v[1]), 2.0);
  EXPECT_DOUBLE_EQ(std::get<double>(v[2]), 3.0);  // 6 flops / 2 s
  EXPECT_DOUBLE_EQ(std::get<double>(v[3]), 0.25);
  EXPECT_DOUBLE_EQ(std::get<double>(v[4]), 0.5);
}

std::string refusal(const ColumnsOp& op) {
  try {
    op.columns();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

TEST(OpColumns, RefusesRepeatsShadowsAndHalfDeclarations) {
  {
    OpColumns c;
    c.extra("x", "", "x");
    c.extra("x", "", "x again");
    EXPECT_NE(refusal(ColumnsOp(c.done())).find("column 'x' is declared twice"), std::string::npos);
  }
  {
    OpColumns c;
    c.effective("n", "", "the axis's name", [](const Point& p, int) { return p.integer(0); });
    EXPECT_NE(refusal(ColumnsOp(c.done())).find("has the name of an axis"), std::string::npos);
  }
  {
    OpColumns c;
    c.extra("x", "s", "");
    EXPECT_NE(refusal(ColumnsOp(c.done())).find("column 'x' has no meaning"), std::string::npos);
  }
  {
    OpColumns c;
    c.metric("r", "1/s", "a rate without its function", nullptr);
    EXPECT_NE(refusal(ColumnsOp(c.done())).find("no function of the work"), std::string::npos);
  }
  {
    OpColumn chosen;
    chosen.name = "knob_chosen";
    chosen.meaning = "declared by hand";
    chosen.kind = ColumnKind::chosen;
    EXPECT_NE(refusal(ColumnsOp({chosen})).find("declared as chosen"), std::string::npos);
  }
}

TEST(OpColumns, AReportMustGiveEveryExtraAndOwnChoiceAndNothingElse) {
  const ColumnsOp op(declared());
  const std::vector<AxisSpec> own{tuning_axis("knob", {"a", "b"}, "a knob")};
  const CaseReport good{{{"knob", "a"}}, {{"a_s", 1.0}, {"b_s", std::nan("")}}};  // NaN: does not apply
  EXPECT_EQ(op.check_report(good, own), "");
  EXPECT_EQ(op.check_report({{}, good.extra}, {}), "");  // an implementation without tuning axes

  CaseReport r = good;
  r.extra.emplace_back("c_s", 2.0);
  EXPECT_NE(op.check_report(r, own).find("reports 'c_s', which is no extra column of op columns_test_op"),
            std::string::npos)
      << op.check_report(r, own);
  r = good;
  r.extra.pop_back();
  EXPECT_NE(op.check_report(r, own).find("no value for extra column 'b_s'"), std::string::npos)
      << op.check_report(r, own);
  r = good;
  r.extra.emplace_back("a_s", 3.0);
  EXPECT_NE(op.check_report(r, own).find("'a_s' twice"), std::string::npos) << op.check_report(r, own);
  r = good;
  r.chosen.clear();
  EXPECT_NE(op.check_report(r, own).find("what it chose for its tuning axis 'knob'"), std::string::npos)
      << op.check_report(r, own);
  EXPECT_NE(op.check_report(good, {}).find("'knob', which is not a tuning axis of its implementation"),
            std::string::npos)
      << op.check_report(good, {});
  // An op without extra columns: any extra a case reports is refused.
  const CaseReport stray{{}, {{"x_s", 1.0}}};
  EXPECT_NE(collective_op().check_report(stray, {}).find("its extra columns: none"), std::string::npos);
}

// The registered attention op and fa3's own tuning axes: fa3's report fills its chosen columns;
// another implementation's columns stay "".
TEST(OpColumns, ChosenColumnsOfARegisteredImplementation) {
  const Implementation* fa3 = Registry::instance().find("attention", "fa3", BackendKind::cuda);
  ASSERT_NE(fa3, nullptr);
  const CaseReport r{{{"fa3_consumers", "3"}, {"fa3_pingpong", "on"}, {"fa3_persistent", "off"}, {"fa3_split", "on"}},
                     {}};
  EXPECT_EQ(attention_op().check_report(r, fa3->info().tuning), "");
  CaseReport missing = r;
  missing.chosen.pop_back();
  EXPECT_NE(attention_op().check_report(missing, fa3->info().tuning).find("fa3_split"), std::string::npos);
  Point p;
  for (const auto& a : attention_op().axes()) p.values.push_back(a.default_value);
  const auto v = attention_op().values(p, 1, Work{}, 0, r);
  const auto& cols = attention_op().columns();
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (cols[i].name == "fa3_consumers_chosen") EXPECT_EQ(std::get<std::string>(v[i]), "3");
    if (cols[i].name == "fa2_tile_chosen") EXPECT_EQ(std::get<std::string>(v[i]), "");
  }
}

}  // namespace
}  // namespace genbench
