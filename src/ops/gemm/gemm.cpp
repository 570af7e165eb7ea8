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
    namespace g = gemm_axis;
    const std::int64_t big = std::int64_t{1} << 20;
    Axes v(g::count);
    v.size(g::m, "m").default_(1024).range(1, big).help("rows of A and D");
    v.size(g::n, "n").default_(1024).range(1, big).help("columns of B and D");
    v.size(g::k, "k").default_(1024).range(1, big).help("reduction dimension");
    v.int64(g::batch, "batch").default_(1).range(1, 1 << 16).help("batch count");
    v.choice(g::trans_a, "trans_a", {"n", "t"}).default_("n").help("A transposed");
    v.choice(g::trans_b, "trans_b", {"n", "t"}).default_("n").help("B transposed");
    v.choice(g::dtype, "dtype", {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "fp4_e2m1"})
        .default_("bf16")
        .auto_all()
        .help("input precision ('auto': every precision; those the card lacks are unsupported)");
    v.choice(g::cache, "cache", {"hot", "cold"}).default_("hot").help("L2 state");
    v.choice(g::mode, "mode", {"eager", "graph"}).default_("eager").help("execution mode");
    return v.done();
  }

  std::string summary() const override {
    return "D = A B in every precision a card has (fp32/tf32/fp16/bf16/fp8/int8), any shape and layout";
  }

  std::string check(const Point&, int) const override { return ""; }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.metric("tflops", "TFLOP/s", "2*m*n*k*batch per second, median time",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .ints("m", {33})
        .ints("n", {17})
        .ints("k", {65})
        .choices("trans_a", {"n", "t"})
        .choices("trans_b", {"n", "t"})
        .choices("dtype", {"fp32", "bf16", "int8"});
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

  CeilingId ceiling(const Point& p) const override { return ceilings::gemm(GemmShape::from(p).dtype); }

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
