#include "ops/pointwise/pointwise.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace genbench {

namespace {
const std::vector<std::string>& kind_names() {
  static const std::vector<std::string> v{
      "rmsnorm",          "add_rmsnorm",          "rope",          "silu_mul",          "embedding",
      "rmsnorm_backward", "add_rmsnorm_backward", "rope_backward", "silu_mul_backward", "embedding_backward"};
  return v;
}
}  // namespace

const char* pointwise_kind_name(PointwiseKind k) { return kind_names()[static_cast<std::size_t>(k)].c_str(); }

bool is_backward(PointwiseKind k) { return k >= PointwiseKind::rmsnorm_backward; }  // listed after the forward

bool is_rope(PointwiseKind k) { return k == PointwiseKind::rope || k == PointwiseKind::rope_backward; }

bool is_norm_backward(PointwiseKind k) {
  return k == PointwiseKind::rmsnorm_backward || k == PointwiseKind::add_rmsnorm_backward;
}

PointwiseShape PointwiseShape::from(const Point& p) {
  namespace a = pointwise_axis;
  PointwiseShape s;
  const auto& names = kind_names();
  s.kind = static_cast<PointwiseKind>(std::find(names.begin(), names.end(), p.choice(a::kind)) - names.begin());
  s.rows = p.integer(a::rows);
  s.hidden = p.integer(a::hidden);
  s.heads = p.integer(a::heads);
  s.heads_kv = p.integer(a::heads_kv);
  s.head_dim = p.integer(a::head_dim);
  s.vocab = p.integer(a::vocab);
  s.dtype = *parse_dtype(p.choice(a::dtype));
  return s;
}

std::int64_t PointwiseShape::in_width() const {
  switch (kind) {
    case PointwiseKind::rope:
    case PointwiseKind::rope_backward: return rope_width();
    case PointwiseKind::silu_mul:
    case PointwiseKind::silu_mul_backward: return 2 * hidden;
    default: return hidden;
  }
}

std::int64_t PointwiseShape::out_width() const {
  if (is_rope(kind)) return rope_width();
  return kind == PointwiseKind::silu_mul_backward ? 2 * hidden : hidden;
}

double PointwiseShape::touched_rows() const {
  const double v = static_cast<double>(vocab);
  return -v * std::expm1(static_cast<double>(rows) * std::log1p(-1.0 / v));
}

double PointwiseShape::bytes() const {
  const double e = static_cast<double>(dtype_size(dtype)), r = static_cast<double>(rows),
               h = static_cast<double>(hidden);
  switch (kind) {
    case PointwiseKind::rmsnorm:  // x in, y out, the weights once
      return e * (2 * r * h + h);
    case PointwiseKind::add_rmsnorm:  // x and r in, r and y out
      return e * (4 * r * h + h);
    case PointwiseKind::rope:
    case PointwiseKind::rope_backward: {  // Q and K in and out, a position a row, the table rows in use
      const double table = static_cast<double>(std::min(rows, kPositions)) * static_cast<double>(head_dim) * 4;
      return e * 2 * r * static_cast<double>(rope_width()) + 4 * r + table;
    }
    case PointwiseKind::silu_mul:  // g and u in, y out
      return e * 3 * r * h;
    case PointwiseKind::embedding:  // one table row and one id in, one row out, per token
      return e * 2 * r * h + 4 * r;
    case PointwiseKind::rmsnorm_backward:  // x and dy in, dx out, the weights once, dw (fp32) out
      return e * (3 * r * h + h) + 4 * h;
    case PointwiseKind::add_rmsnorm_backward:  // s, dy and dr_in in, dx out, the weights, dw (fp32)
      return e * (4 * r * h + h) + 4 * h;
    case PointwiseKind::silu_mul_backward:  // g, u and dy in, dg and du out
      return e * 5 * r * h;
    case PointwiseKind::embedding_backward:  // dy and the ids in, the touched fp32 table rows out
      return e * r * h + 4 * r + 4 * touched_rows() * h;
  }
  return 0;
}

namespace {

class PointwiseOp final : public Op {
 public:
  std::string name() const override { return "pointwise"; }

  std::string summary() const override {
    return "a layer's memory-bound parts: rmsnorm (residual add fused or not), rope, silu_mul, embedding gather, "
           "and their backward (GB/s vs the copy ceiling)";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = pointwise_axis;
    const std::int64_t big = std::int64_t{1} << 24;
    Axes v(a::count);
    v.choice(a::kind, "kind", kind_names()).default_("rmsnorm").auto_all().help("which part");
    v.size(a::rows, "rows").unit("tokens").default_(4096).range(1, big).help("tokens (batch x sequence)");
    v.size(a::hidden, "hidden")
        .default_(4096)
        .range(1, 1 << 20)
        .help("row width: hidden size (norms, embedding) or intermediate size (silu_mul)");
    v.int64(a::heads, "heads").unit("heads").default_(32).range(1, 4096).help("rope: query heads");
    v.int64(a::heads_kv, "heads_kv").unit("heads").default_(8).range(0, 4096).help("rope: key heads (0: none)");
    v.int64(a::head_dim, "head_dim").default_(128).range(2, 1024).help("rope: head dimension, even");
    v.size(a::vocab, "vocab").default_(128256).range(1, big).help("embedding: rows of the table");
    v.choice(a::dtype, "dtype", {"fp16", "bf16"}).default_("bf16").help("element type");
    return v.done();
  }

  std::string check(const Point& p, int) const override {
    const auto s = PointwiseShape::from(p);
    if (is_rope(s.kind) && s.head_dim % 2 != 0)
      return strprintf("%s needs an even head_dim (pairs i, i + head_dim/2); got %lld", pointwise_kind_name(s.kind),
                       static_cast<long long>(s.head_dim));
    return "";
  }

  Work work(const Point& p, int) const override {
    const auto s = PointwiseShape::from(p);
    Work w;
    w.bytes = s.bytes();
    w.tokens = static_cast<double>(s.rows);
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("bytes", "B", "bytes one call reads and writes at least",
                [](const Point& p, int) { return PointwiseShape::from(p).bytes(); });
    c.metric("GBps", "GB/s", "bytes one call must read and write (docs/pointwise.md) per second, median time",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    return c.done();
  }

  CeilingId ceiling(const Point&) const override { return ceilings::copy(); }

  HostExample host_example() const override {
    return HostExample()
        .choices("kind", {"auto"})
        .ints("rows", {5})
        .ints("hidden", {64})
        .ints("heads", {4})
        .ints("heads_kv", {2})
        .ints("head_dim", {32})
        .ints("vocab", {300});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Memory-bound layer parts: bandwidth against rows";
    h.x = "rows";
    h.facets = {"kind", "hidden"};
    h.ceiling_line = ceilings::copy();
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto s = PointwiseShape::from(p);
    const auto ll = [](std::int64_t x) { return static_cast<long long>(x); };
    switch (s.kind) {
      case PointwiseKind::rope:
      case PointwiseKind::rope_backward:
        return strprintf("%s %s rows=%lld h=%lld/%lld d=%lld", pointwise_kind_name(s.kind), dtype_name(s.dtype),
                         ll(s.rows), ll(s.heads), ll(s.heads_kv), ll(s.head_dim));
      case PointwiseKind::embedding:
      case PointwiseKind::embedding_backward:
        return strprintf("%s %s rows=%lld hidden=%lld vocab=%lld", pointwise_kind_name(s.kind), dtype_name(s.dtype),
                         ll(s.rows), ll(s.hidden), ll(s.vocab));
      default:
        return strprintf("%s %s rows=%lld hidden=%lld", pointwise_kind_name(s.kind), dtype_name(s.dtype), ll(s.rows),
                         ll(s.hidden));
    }
  }
};

}  // namespace

const Op& pointwise_op() {
  static const PointwiseOp op;
  return op;
}

GENBENCH_REGISTER_OP(pointwise_op)

}  // namespace genbench
