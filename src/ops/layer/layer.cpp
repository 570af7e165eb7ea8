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
    const std::int64_t big = std::int64_t{1} << 24;
    Axes v(a::count);
    v.choice(a::phase, "phase", {"decode", "prefill"})
        .default_("decode")
        .help("a decode step (one new token a sequence) or a prefill");
    v.int64(a::batch, "batch").unit("sequences").default_(1).range(1, 1 << 16).help("sequences");
    v.size(a::cache, "cache").unit("tokens").default_(4096).range(1, big).help("decode: keys per sequence");
    v.size(a::seq, "seq").unit("tokens").default_(2048).range(1, big).help("prefill: tokens per sequence");
    v.size(a::hidden, "hidden").default_(4096).range(1, 1 << 20).help("hidden size");
    v.int64(a::heads, "heads").unit("heads").default_(32).range(1, 4096).help("query heads (this rank's)");
    v.int64(a::heads_kv, "heads_kv").unit("heads").default_(8).range(1, 4096).help("key/value heads");
    v.int64(a::head_dim, "head_dim").default_(128).range(1, 1024).allowed({64, 128, 256}).help("head dimension");
    v.size(a::inter, "inter").default_(14336).range(1, 1 << 20).help("MLP width (this rank's)");
    v.choice(a::precision, "precision", {"bf16", "fp8", "int4"})
        .default_("bf16")
        .help("the GEMMs: bf16, fp8 (e4m3) or int4 weights (w4a16)");
    return v.done();
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

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("tokens", "tokens", "tokens of the step (decode: the batch; prefill: batch x seq)",
                [](const Point& p, int) { return LayerShape::from(p).tokens(); });
    c.metric("tokens_per_s", "tokens/s", "tokens of the step through this one layer per second (median time)",
             [](const Work& w, double t) { return w.tokens / t; });
    c.metric("tflops", "TFLOP/s", "the parts' FLOPs (GEMMs and attention as their ops count them) per second",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    c.metric("GBps", "GB/s", "the parts' bytes (as their ops count them) per second",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    c.extra("parts_alone_s", "s", "the parts each timed alone (median of 7 runs), times their count, summed");
    for (const auto& n : layer_part_names())
      c.extra("t_" + n + "_s", "s", "part " + n + " timed alone, median of 7 runs");
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .choices("phase", {"decode", "prefill"})
        .ints("batch", {2})
        .ints("cache", {70})
        .ints("seq", {33})
        .ints("hidden", {128})
        .ints("heads", {4})
        .ints("heads_kv", {2})
        .ints("head_dim", {64})
        .ints("inter", {256})
        .choices("precision", {"bf16", "int4"});
  }

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
