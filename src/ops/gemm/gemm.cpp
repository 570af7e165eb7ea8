#include "ops/gemm/gemm.h"

#include "core/strings.h"

namespace genbench {

GemmShape GemmShape::from(const Point& p) {
  namespace g = gemm_axis;
  GemmShape s{};
  s.m = p.integer(g::m);
  s.n = p.integer(g::n);
  s.k = p.integer(g::k);
  s.batch = p.integer(g::batch);
  s.trans_a = p.choice(g::trans_a) == "t";
  s.trans_b = p.choice(g::trans_b) == "t";
  s.dtype = *parse_dtype(p.choice(g::dtype));
  s.cold = p.choice(g::cache) == "cold";
  s.graph = p.choice(g::mode) == "graph";
  return s;
}

namespace {

class GemmOp final : public Op {
 public:
  std::string name() const override { return "gemm"; }

  std::vector<AxisSpec> define_axes() const override {
    {
      std::vector<AxisSpec> v(gemm_axis::count);
      namespace g = gemm_axis;
      const std::int64_t big = std::int64_t{1} << 20;
      v[g::m] = {"m", AxisType::size, std::int64_t{1024}, {}, 1, big, {}, "rows of A and D"};
      v[g::n] = {"n", AxisType::size, std::int64_t{1024}, {}, 1, big, {}, "columns of B and D"};
      v[g::k] = {"k", AxisType::size, std::int64_t{1024}, {}, 1, big, {}, "reduction dimension"};
      v[g::batch] = {"batch", AxisType::integer, std::int64_t{1}, {}, 1, 1 << 16, {}, "batch count"};
      v[g::trans_a] = {"trans_a", AxisType::choice, std::string("n"), {"n", "t"}, 0, 0, {}, "A transposed"};
      v[g::trans_b] = {"trans_b", AxisType::choice, std::string("n"), {"n", "t"}, 0, 0, {}, "B transposed"};
      v[g::dtype] = {"dtype",
                     AxisType::choice,
                     std::string("bf16"),
                     {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "fp4_e2m1"},
                     0,
                     0,
                     {},
                     "input precision ('auto': every precision; those the card lacks are unsupported)"};
      v[g::dtype].auto_all = true;
      v[g::cache] = {"cache", AxisType::choice, std::string("hot"), {"hot", "cold"}, 0, 0, {}, "L2 state"};
      v[g::mode] = {"mode", AxisType::choice, std::string("eager"), {"eager", "graph"}, 0, 0, {}, "execution mode"};
      return v;
    }
  }

  std::string summary() const override {
    return "D = A B in every precision a card has (fp32/tf32/fp16/bf16/fp8/int8), any shape and layout";
  }

  std::string check(const Point&, int) const override { return ""; }

  std::vector<MetricSpec> metrics() const override {
    return {{"tflops", "TFLOP/s", "2*m*n*k*batch per second, median time",
             [](const Work& w, double t) { return w.flops / t / 1e12; }}};
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "GEMM throughput per precision and shape";
    h.x = "m";
    h.facets = {"dtype"};
    return h;
  }

  Work work(const Point& p, int) const override {
    const auto s = GemmShape::from(p);
    Work w;
    w.flops = s.flops();
    const bool four_bit = s.dtype == DType::int4 || s.dtype == DType::fp4_e2m1;  // two elements a byte
    const double in = four_bit ? 0.5 : static_cast<double>(dtype_size(s.dtype));
    const double out = s.dtype == DType::int8 ? 4.0 : (s.dtype == DType::fp32 || s.dtype == DType::tf32 ? 4.0 : 2.0);
    w.bytes = static_cast<double>(s.batch) *
              (in * static_cast<double>(s.m * s.k + s.k * s.n) + out * static_cast<double>(s.m * s.n));
    return w;
  }

  std::string ceiling(const Point& p) const override {
    return std::string("gemm_") + dtype_name(GemmShape::from(p).dtype) + "_tflops";
  }

  std::string describe(const Point& p) const override {
    const auto s = GemmShape::from(p);
    return strprintf("%s %lldx%lldx%lld b=%lld %c%c %s %s", dtype_name(s.dtype), static_cast<long long>(s.m),
                     static_cast<long long>(s.n), static_cast<long long>(s.k), static_cast<long long>(s.batch),
                     s.trans_a ? 't' : 'n', s.trans_b ? 't' : 'n', s.cold ? "cold" : "hot",
                     s.graph ? "graph" : "eager");
  }
};

}  // namespace

const Op& gemm_op() {
  static const GemmOp op;
  return op;
}

GENBENCH_REGISTER_OP(gemm_op)

}  // namespace genbench
