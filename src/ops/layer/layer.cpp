#include "ops/layer/layer.h"

#include "core/strings.h"

namespace genbench {

LayerShape LayerShape::from(const Point& p) {
  namespace a = layer_axis;
  LayerShape s;
  s.decode = p.choice(a::phase) == "decode";
  s.batch = p.integer(a::batch);
  s.cache = p.integer(a::cache);
  s.seq = p.integer(a::seq);
  s.hidden = p.integer(a::hidden);
  s.heads = p.integer(a::heads);
  s.heads_kv = p.integer(a::heads_kv);
  s.head_dim = p.integer(a::head_dim);
  s.inter = p.integer(a::inter);
  s.precision = p.choice(a::precision);
  return s;
}

const std::vector<std::string>& layer_part_names() {
  static const std::vector<std::string> v{"add_rmsnorm", "qkv",     "rope",     "attention",
                                          "o",           "gate_up", "silu_mul", "down"};
  return v;
}

std::vector<LayerPart> layer_parts(const LayerShape& s, bool cold_weights) {
  const std::int64_t m = s.tokens(), h = s.hidden, d = s.head_dim;
  const std::string cache = cold_weights ? "cold" : "hot";
  const auto linear = [&](const std::string& name, std::int64_t n, std::int64_t k) {
    if (s.precision == "int4")
      return LayerPart{name,
                       1,
                       "w4a16",
                       {{"m", m},
                        {"n", n},
                        {"k", k},
                        {"weights", std::string("int4")},
                        {"group", std::int64_t{128}},
                        {"dtype", std::string("bf16")},
                        {"cache", cache}}};
    return LayerPart{name,
                     1,
                     "gemm",
                     {{"m", m},
                      {"n", n},
                      {"k", k},
                      {"trans_b", std::string("t")},
                      {"dtype", std::string(s.precision == "fp8" ? "fp8_e4m3" : "bf16")},
                      {"cache", cache}}};
  };
  const auto pointwise = [&](const std::string& kind, std::vector<std::pair<std::string, AxisValue>> axes) {
    axes.insert(axes.begin(), {{"kind", kind}, {"rows", m}});
    return LayerPart{kind, 1, "pointwise", std::move(axes)};
  };
  std::vector<LayerPart> v;
  v.push_back(pointwise("add_rmsnorm", {{"hidden", h}}));
  v.back().count = 2;
  v.push_back(linear("qkv", (s.heads + 2 * s.heads_kv) * d, h));
  v.push_back(pointwise("rope", {{"heads", s.heads}, {"heads_kv", s.heads_kv}, {"head_dim", d}}));
  if (s.decode)
    v.push_back(LayerPart{"attention",
                          1,
                          "decode",
                          {{"batch", s.batch},
                           {"heads", s.heads},
                           {"heads_kv", s.heads_kv},
                           {"head_dim", d},
                           {"cache", s.cache},
                           {"page_size", std::int64_t{64}}}});
  else
    v.push_back(LayerPart{"attention",
                          1,
                          "attention",
                          {{"batch", s.batch},
                           {"seqlen_q", s.seq},
                           {"heads", s.heads},
                           {"heads_kv", s.heads_kv},
                           {"head_dim", d},
                           {"causal", std::int64_t{1}}}});
  v.push_back(linear("o", h, s.heads * d));
  v.push_back(linear("gate_up", 2 * s.inter, h));
  v.push_back(pointwise("silu_mul", {{"hidden", s.inter}}));
  v.push_back(linear("down", h, s.inter));
  return v;
}

namespace {

class LayerOp final : public Op {
 public:
  std::string name() const override { return "layer"; }

  std::string summary() const override {
    return "one decoder layer whole: its parts back to back (one CUDA graph on a GPU) beside the same parts timed "
           "alone";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = layer_axis;
    std::vector<AxisSpec> v(a::count);
    const std::int64_t big = std::int64_t{1} << 24;
    v[a::phase] = {"phase",
                   AxisType::choice,
                   std::string("decode"),
                   {"decode", "prefill"},
                   0,
                   0,
                   {},
                   "a decode step (one new token a sequence) or a prefill"};
    v[a::batch] = {"batch", AxisType::integer, std::int64_t{1}, {}, 1, 1 << 16, {}, "sequences"};
    v[a::cache] = {"cache", AxisType::size, std::int64_t{4096}, {}, 1, big, {}, "decode: keys per sequence"};
    v[a::seq] = {"seq", AxisType::size, std::int64_t{2048}, {}, 1, big, {}, "prefill: tokens per sequence"};
    v[a::hidden] = {"hidden", AxisType::size, std::int64_t{4096}, {}, 1, 1 << 20, {}, "hidden size"};
    v[a::heads] = {"heads", AxisType::integer, std::int64_t{32}, {}, 1, 4096, {}, "query heads (this rank's)"};
    v[a::heads_kv] = {"heads_kv", AxisType::integer, std::int64_t{8}, {}, 1, 4096, {}, "key/value heads"};
    v[a::head_dim] = {"head_dim", AxisType::integer, std::int64_t{128}, {}, 1, 1024, {64, 128, 256}, "head dimension"};
    v[a::inter] = {"inter", AxisType::size, std::int64_t{14336}, {}, 1, 1 << 20, {}, "MLP width (this rank's)"};
    v[a::precision] = {"precision",
                       AxisType::choice,
                       std::string("bf16"),
                       {"bf16", "fp8", "int4"},
                       0,
                       0,
                       {},
                       "the GEMMs: bf16, fp8 (e4m3) or int4 weights (w4a16)"};
    return v;
  }

  std::string check(const Point& p, int) const override {
    const auto s = LayerShape::from(p);
    if (s.heads % s.heads_kv != 0)
      return strprintf("heads (%lld) must be a multiple of heads_kv (%lld)", static_cast<long long>(s.heads),
                       static_cast<long long>(s.heads_kv));
    for (const auto& part : layer_parts(s)) {
      const Op* op = find_op(part.op);
      if (!op) return "no op " + part.op + " in this build";
      const std::string why = op->check(point_of(*op, "", part.axes), 1);
      if (!why.empty()) return part.name + ": " + why;
    }
    return "";
  }

  Work work(const Point& p, int ws) const override {
    const auto s = LayerShape::from(p);
    Work w;
    for (const auto& part : layer_parts(s)) {
      const Op& op = *find_op(part.op);
      const Work pw = op.work(point_of(op, "", part.axes), ws);
      w.flops += part.count * pw.flops;
      w.bytes += part.count * pw.bytes;
    }
    w.tokens = static_cast<double>(s.tokens());
    return w;
  }

  std::vector<MetricSpec> metrics() const override {
    return {{"tokens_per_s", "tokens/s", "tokens of the step through this one layer per second (median time)",
             [](const Work& w, double t) { return w.tokens / t; }, ""},
            {"tflops", "TFLOP/s", "the parts' FLOPs (GEMMs and attention as their ops count them) per second",
             [](const Work& w, double t) { return w.flops / t / 1e12; }, ""},
            {"GBps", "GB/s", "the parts' bytes (as their ops count them) per second",
             [](const Work& w, double t) { return w.bytes / t / 1e9; }, ""}};
  }

  std::vector<std::pair<std::string, std::string>> extra_columns() const override {
    std::vector<std::pair<std::string, std::string>> v{{"parts_alone_s", "s"}};
    for (const auto& n : layer_part_names()) v.emplace_back("t_" + n + "_s", "s");
    return v;
  }

  std::vector<ColumnSpec> effective_columns() const override {
    return {{"tokens", ColumnType::i64, "", "tokens of the step (decode: the batch; prefill: batch x seq)"}};
  }
  std::vector<ColumnValue> effective(const Point& p, int) const override { return {LayerShape::from(p).tokens()}; }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "A whole decoder layer: tokens/s through it";
    h.x = "batch";
    h.facets = {"phase", "precision"};
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto s = LayerShape::from(p);
    const auto ll = [](std::int64_t x) { return static_cast<long long>(x); };
    return strprintf("%s %s b=%lld %s=%lld h=%lld heads=%lld/%lld d=%lld mlp=%lld", s.decode ? "decode" : "prefill",
                     s.precision.c_str(), ll(s.batch), s.decode ? "cache" : "seq", ll(s.decode ? s.cache : s.seq),
                     ll(s.hidden), ll(s.heads), ll(s.heads_kv), ll(s.head_dim), ll(s.inter));
  }
};

}  // namespace

const Op& layer_op() {
  static const LayerOp op;
  return op;
}

GENBENCH_REGISTER_OP(layer_op)

}  // namespace genbench
