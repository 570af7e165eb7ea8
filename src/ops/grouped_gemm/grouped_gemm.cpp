#include "ops/grouped_gemm/grouped_gemm.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "core/strings.h"
#include "ops/grouped_gemm/group_sizes.h"

namespace genbench {

GroupedShape GroupedShape::from(const Point& p) {
  namespace a = grouped_gemm_axis;
  GroupedShape s;
  s.groups = p.integer(a::groups);
  s.tokens = p.integer(a::tokens);
  s.top_k = p.integer(a::top_k);
  s.skew = p.real(a::skew);
  s.rows = p.integer(a::rows);
  s.route_seed = p.integer(a::route_seed);
  s.n = p.integer(a::n);
  s.k = p.integer(a::k);
  s.dtype = *parse_dtype(p.choice(a::dtype));
  return s;
}

const std::vector<std::int64_t>& GroupedShape::sizes() const {
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, double, std::int64_t, std::int64_t>;
  static std::mutex mu;
  static std::map<Key, std::vector<std::int64_t>> cache;
  const Key key{groups, tokens, top_k, skew, rows, route_seed};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() > 256) cache.clear();
    std::vector<std::int64_t> v =
        rows > 0 ? grouped::fixed_group_sizes(groups, rows)
                 : grouped::routed_group_sizes(groups, tokens, top_k, skew, static_cast<std::uint64_t>(route_seed));
    it = cache.emplace(key, std::move(v)).first;
  }
  return it->second;
}

std::int64_t GroupedShape::total_rows() const {
  std::int64_t t = 0;
  for (auto m : sizes()) t += m;
  return t;
}

std::int64_t GroupedShape::nonempty() const {
  const auto& v = sizes();
  return std::count_if(v.begin(), v.end(), [](std::int64_t m) { return m > 0; });
}

double GroupedShape::flops() const {
  return 2.0 * static_cast<double>(total_rows()) * static_cast<double>(n) * static_cast<double>(k);
}

double GroupedShape::bytes() const {
  const double R = static_cast<double>(total_rows()), N = static_cast<double>(n), K = static_cast<double>(k);
  return 2.0 * (R * K + static_cast<double>(nonempty()) * N * K + R * N);
}

std::string grouped_check(const GroupedShape& s) {
  if (s.groups < 1) return strprintf("groups must be at least 1 (groups=%lld)", static_cast<long long>(s.groups));
  if (!(s.skew >= 0.0 && s.skew <= grouped::kMaxSkew))
    return strprintf("skew=%g is outside its range 0 to %g", s.skew, grouped::kMaxSkew);
  if (s.rows == 0) {
    if (s.top_k < 1 || s.top_k > s.groups)
      return strprintf("top_k=%lld must be from 1 to groups (%lld)", static_cast<long long>(s.top_k),
                       static_cast<long long>(s.groups));
    if (s.tokens < 1) return "tokens must be at least 1 when rows = 0 (routed sizes)";
  }
  return "";
}

namespace {

class GroupedGemmOp final : public Op {
 public:
  std::string name() const override { return "grouped_gemm"; }

  std::string summary() const override {
    return "mixture-of-experts GEMMs: one GEMM per group with its own rows (fixed or routed top-k), shared n and k";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = grouped_gemm_axis;
    const std::int64_t big = std::int64_t{1} << 20;
    Axes v(a::count);
    v.int64(a::groups, "groups").unit("groups").default_(8).range(0, 1 << 16).help("groups (experts), at least 1");
    v.size(a::tokens, "tokens")
        .unit("tokens")
        .default_(512)
        .range(0, big)
        .help("tokens routed when rows = 0 (rows in all = tokens x top_k)");
    v.int64(a::top_k, "top_k").unit("groups").default_(2).range(0, 1 << 16).help("groups per token (1..groups)");
    v.real(a::skew, "skew")
        .default_(0.0)
        .help("router skew from 0 (uniform) to 4: group e drawn with weight (e + 1)^-skew");
    v.size(a::rows, "rows")
        .unit("rows")
        .default_(0)
        .range(0, big)
        .help("> 0: every group gets this many rows (no routing); 0: routed");
    v.int64(a::route_seed, "route_seed").default_(1).range(0, INT64_MAX).help("seed of the routing draw");
    v.size(a::n, "n").default_(4096).range(1, big).help("output features per group");
    v.size(a::k, "k").default_(4096).range(1, big).help("input features");
    v.choice(a::dtype, "dtype", {"bf16", "fp16"}).default_("bf16").help("inputs and output; fp32 accumulation");
    return v.done();
  }

  std::string check(const Point& p, int) const override { return grouped_check(GroupedShape::from(p)); }

  Work work(const Point& p, int) const override {
    const auto s = GroupedShape::from(p);
    Work w;
    w.flops = s.flops();
    w.bytes = s.bytes();
    w.tokens = static_cast<double>(s.rows > 0 ? s.total_rows() : s.tokens);
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    // A point that fails the check (groups 0, top_k above groups) has no sizes: 0 rows.
    const auto legal = [](const Point& p) {
      auto s = GroupedShape::from(p);
      return std::make_pair(s, grouped_check(s).empty());
    };
    OpColumns c;
    c.effective("total_rows", "rows", "rows over all groups (tokens x top_k when routed)", [=](const Point& p, int) {
      const auto [s, ok] = legal(p);
      return ok ? s.total_rows() : std::int64_t{0};
    });
    c.effective("nonempty_groups", "groups", "groups that got at least one row", [=](const Point& p, int) {
      const auto [s, ok] = legal(p);
      return ok ? s.nonempty() : std::int64_t{0};
    });
    c.effective("max_rows", "rows", "rows of the largest group", [=](const Point& p, int) {
      const auto [s, ok] = legal(p);
      if (!ok) return std::int64_t{0};
      const auto& v = s.sizes();
      return *std::max_element(v.begin(), v.end());
    });
    c.metric("tflops", "TFLOP/s", "2 x rows x n x k over all groups per second, median time",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    c.metric("GBps", "GB/s", "X + the non-empty groups' W + D bytes per second",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    return c.done();
  }

  CeilingId ceiling(const Point& p) const override { return ceilings::gemm(GroupedShape::from(p).dtype); }

  HostExample host_example() const override {
    return HostExample()
        .ints("groups", {16})
        .ints("top_k", {2})
        .ints("tokens", {40})
        .ints("rows", {0, 17})
        .reals("skew", {0, 2})
        .ints("n", {64})
        .ints("k", {96});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Grouped (mixture-of-experts) GEMM against tokens";
    h.x = "tokens";
    h.log_x = true;
    h.facets = {"groups", "top_k", "n", "k", "skew"};
    h.compare_metric = "tflops";
    h.higher_is_better = true;
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto s = GroupedShape::from(p);
    const std::string sizes = s.rows > 0 ? strprintf("rows=%lld", static_cast<long long>(s.rows))
                                         : strprintf("tokens=%lld top%lld skew=%g", static_cast<long long>(s.tokens),
                                                     static_cast<long long>(s.top_k), s.skew);
    return strprintf("%s groups=%lld %s n=%lld k=%lld", dtype_name(s.dtype), static_cast<long long>(s.groups),
                     sizes.c_str(), static_cast<long long>(s.n), static_cast<long long>(s.k));
  }
};

}  // namespace

const Op& grouped_gemm_op() {
  static const GroupedGemmOp op;
  return op;
}

GENBENCH_REGISTER_OP(grouped_gemm_op)

}  // namespace genbench
