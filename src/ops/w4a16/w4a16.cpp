#include "ops/w4a16/w4a16.h"

#include "core/strings.h"

namespace genbench {

W4a16Shape W4a16Shape::from(const Point& p) {
  namespace a = w4a16_axis;
  W4a16Shape s;
  s.m = p.integer(a::m);
  s.n = p.integer(a::n);
  s.k = p.integer(a::k);
  s.zero_points = p.choice(a::weights) == "uint4";
  s.group = p.integer(a::group);
  s.dtype = *parse_dtype(p.choice(a::dtype));
  s.cold = p.choice(a::cache) == "cold";
  return s;
}

double W4a16Shape::bytes() const {
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double scales = static_cast<double>(groups()) * N;
  return 2.0 * M * K + K * N / 2.0 + 2.0 * scales + (zero_points ? scales / 2.0 : 0.0) + 2.0 * M * N;
}

std::string w4a16_check(const W4a16Shape& s) {
  if (s.n % 2 != 0)
    return strprintf("n=%lld is odd: two 4-bit codes share a byte along n, so n must be even",
                     static_cast<long long>(s.n));
  if (s.group != 0 && s.k % s.group != 0)
    return strprintf("k=%lld is not a multiple of the group size %lld", static_cast<long long>(s.k),
                     static_cast<long long>(s.group));
  return "";
}

namespace {

class W4a16Op final : public Op {
 public:
  std::string name() const override { return "w4a16"; }

  std::string summary() const override {
    return "weight-only int4 GEMM (GPTQ/AWQ): 4-bit weights with per-group scales (and zeros) x fp16/bf16 "
           "activations";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = w4a16_axis;
    const std::int64_t big = std::int64_t{1} << 20;
    Axes v(a::count);
    v.size(a::m, "m").unit("tokens").default_(16).range(1, big).help("tokens: rows of A and D");
    v.size(a::n, "n").default_(4096).range(1, big).help(
        "output features: columns of W and D (even: two 4-bit codes share a byte)");
    v.size(a::k, "k").default_(4096).range(1, big).help("input features (a multiple of the group)");
    v.choice(a::weights, "weights", {"int4", "uint4"})
        .default_("int4")
        .help("int4: symmetric, stored as q = v + 8 with zero 8; uint4: a 4-bit zero point per group");
    v.int64(a::group, "group")
        .default_(128)
        .range(0, big)
        .allowed({0, 32, 64, 128})
        .help("k per scale (and zero): 32, 64, 128, or 0 for one per column");
    v.choice(a::dtype, "dtype", {"fp16", "bf16"}).default_("fp16").help("activations, scales and output");
    v.choice(a::cache, "cache", {"hot", "cold"})
        .default_("hot")
        .help("cold: the weights are not in L2 (as in a model's layer after layer); hot: back to back");
    return v.done();
  }

  std::string check(const Point& p, int) const override { return w4a16_check(W4a16Shape::from(p)); }

  Work work(const Point& p, int) const override {
    const auto s = W4a16Shape::from(p);
    Work w;
    w.flops = s.flops();
    w.bytes = s.bytes();
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("group_k", "", "k per scale group (k itself for one group per column)",
                [](const Point& p, int) { return W4a16Shape::from(p).group_k(); });
    c.effective("weight_bytes", "B", "bytes of codes, scales and zeros", [](const Point& p, int) {
      const auto s = W4a16Shape::from(p);
      const double scales = static_cast<double>(s.groups()) * static_cast<double>(s.n);
      return static_cast<double>(s.k) * static_cast<double>(s.n) / 2.0 + 2.0 * scales +
             (s.zero_points ? scales / 2.0 : 0.0);
    });
    c.metric("tflops", "TFLOP/s", "2*m*n*k per second, median time (as gemm's, so the same shape compares)",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    c.metric("GBps", "GB/s", "A + W (half a byte a weight) + scales + zeros + D bytes per second",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    return c.done();
  }

  // Few tokens stream the weights (bandwidth-bound); many are bound by the 16-bit tensor cores.
  CeilingId ceiling(const Point& p) const override {
    const auto s = W4a16Shape::from(p);
    return s.m <= 64 ? ceilings::copy() : ceilings::gemm(s.dtype);
  }

  HostExample host_example() const override {
    return HostExample()
        .ints("m", {1, 7})
        .ints("n", {128})
        .ints("k", {256})
        .choices("weights", {"int4", "uint4"})
        .ints("group", {32, 0});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "W4A16 GEMM against tokens (m), per layer shape";
    h.x = "m";
    h.log_x = true;
    h.facets = {"n", "k", "weights", "group", "dtype"};
    h.compare_metric = "tflops";
    h.higher_is_better = true;
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto s = W4a16Shape::from(p);
    return strprintf("%s %s g%s m=%lld n=%lld k=%lld %s", s.zero_points ? "uint4" : "int4", dtype_name(s.dtype),
                     s.group ? std::to_string(s.group).c_str() : "col", static_cast<long long>(s.m),
                     static_cast<long long>(s.n), static_cast<long long>(s.k), s.cold ? "cold" : "hot");
  }
};

}  // namespace

const Op& w4a16_op() {
  static const W4a16Op op;
  return op;
}

GENBENCH_REGISTER_OP(w4a16_op)

}  // namespace genbench
