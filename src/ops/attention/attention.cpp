#include "ops/attention/attention.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace genbench {

AttentionShape AttentionShape::from(const Point& p) {
  namespace a = attention_axis;
  AttentionShape s{};
  s.seqlen_q = p.integer(a::seqlen_q);
  s.seqlen_k = p.integer(a::seqlen_k) > 0 ? p.integer(a::seqlen_k) : s.seqlen_q;
  s.head_dim = p.integer(a::head_dim);
  s.head_dim_v = p.integer(a::head_dim_v);
  s.batch =
      p.integer(a::tokens) > 0 ? std::max<std::int64_t>(1, p.integer(a::tokens) / s.seqlen_q) : p.integer(a::batch);
  s.heads = p.integer(a::hidden) > 0 ? p.integer(a::hidden) / s.head_dim : p.integer(a::heads);
  s.heads_kv = p.integer(a::heads_kv) > 0 ? p.integer(a::heads_kv) : s.heads;
  s.causal = p.boolean(a::causal);
  s.dtype = *parse_dtype(p.choice(a::dtype));
  const double scale = p.real(a::scale);
  s.scale = static_cast<float>(scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  s.graph = p.choice(a::mode) == "graph";
  s.varlen = p.boolean(a::varlen);
  return s;
}

namespace {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Seeded by the shape and the draw alone, so work() and every rank see the same lengths.
std::vector<std::int64_t> draw_lengths(std::int64_t batch, std::int64_t seqlen, std::uint64_t salt) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(batch), seqlen);
  const std::int64_t lo = (seqlen + 1) / 2;
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::uint64_t r = mix64(salt ^ mix64(static_cast<std::uint64_t>(b) * 0x100000001b3ull));
    v[static_cast<std::size_t>(b)] = lo + static_cast<std::int64_t>(r % static_cast<std::uint64_t>(seqlen - lo + 1));
  }
  return v;
}

std::int64_t total(const std::vector<std::int64_t>& lengths) {
  std::int64_t n = 0;
  for (auto x : lengths) n += x;
  return n;
}

// Unmasked (query, key) pairs of one head of one sequence.
double pairs(std::int64_t sq, std::int64_t sk, bool causal) {
  if (!causal) return static_cast<double>(sq) * static_cast<double>(sk);
  if (sq == sk) return static_cast<double>(sq) * static_cast<double>(sk) / 2.0;
  // Row i (0-based) sees keys j <= i + (sk - sq), clamped to [0, sk].
  double n = 0;
  for (std::int64_t i = 0; i < sq; ++i)
    n += static_cast<double>(std::min<std::int64_t>(sk, std::max<std::int64_t>(0, i + sk - sq + 1)));
  return n;
}

}  // namespace

std::vector<std::int64_t> AttentionShape::lengths_q(std::uint64_t draw) const {
  if (!varlen) return std::vector<std::int64_t>(static_cast<std::size_t>(batch), seqlen_q);
  return draw_lengths(batch, seqlen_q, mix64(0x71u + draw * 7919u + static_cast<std::uint64_t>(seqlen_q)));
}

std::vector<std::int64_t> AttentionShape::lengths_k(std::uint64_t draw) const {
  if (!varlen) return std::vector<std::int64_t>(static_cast<std::size_t>(batch), seqlen_k);
  if (seqlen_k == seqlen_q) return lengths_q(draw);
  return draw_lengths(batch, seqlen_k, mix64(0x6bu + draw * 104729u + static_cast<std::uint64_t>(seqlen_k)));
}

double AttentionShape::flops() const {
  double total = 0;
  if (!varlen) {
    total = static_cast<double>(batch) * pairs(seqlen_q, seqlen_k, causal);
  } else {
    const auto lq = lengths_q(), lk = lengths_k();
    for (std::size_t b = 0; b < lq.size(); ++b) total += pairs(lq[b], lk[b], causal);
  }
  return 2.0 * static_cast<double>(heads) * total * static_cast<double>(head_dim + dv());
}

namespace {

class AttentionOp final : public Op {
 public:
  std::string name() const override { return "attention"; }

  std::string summary() const override {
    return "forward of softmax(Q K^T * scale) V: fp16/bf16/fp8, MHA/GQA/MQA, causal, varlen, eager or graph";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = attention_axis;
    Axes v(a::count);
    v.int64(a::batch, "batch").unit("sequences").default_(1).range(1, 1 << 20).help("sequences per batch");
    v.size(a::tokens, "tokens")
        .unit("tokens")
        .default_(0)
        .range(0, std::int64_t{1} << 40)
        .help("total tokens; batch = tokens / seqlen_q");
    v.int64(a::heads, "heads").unit("heads").default_(16).range(1, 4096).help("query heads");
    v.int64(a::hidden, "hidden").default_(0).range(0, 1 << 20).help("model width; heads = hidden / head_dim");
    v.int64(a::heads_kv, "heads_kv").unit("heads").default_(0).range(0, 4096).help("key/value heads (0 = heads)");
    v.size(a::seqlen_q, "seqlen_q").unit("tokens").default_(1024).range(1, std::int64_t{1} << 24).help("query length");
    v.size(a::seqlen_k, "seqlen_k")
        .unit("tokens")
        .default_(0)
        .range(0, std::int64_t{1} << 24)
        .help("key length (0 = seqlen_q)");
    v.int64(a::head_dim, "head_dim")
        .default_(128)
        .range(1, 1024)
        .allowed({64, 96, 128, 192, 256})
        .help("head dimension of Q and K");
    v.boolean(a::causal, "causal").help("bottom-right aligned causal mask");
    v.choice(a::dtype, "dtype", {"fp16", "bf16", "fp8_e4m3", "fp32"}).default_("bf16").help("input precision");
    v.real(a::scale, "scale").default_(0.0).help("softmax scale (0 = 1/sqrt(head_dim))");
    v.choice(a::mode, "mode", {"eager", "graph"}).default_("eager").help("execution mode");
    v.boolean(a::varlen, "varlen")
        .help("packed variable-length batch: per-sequence lengths drawn in [seqlen/2, seqlen], seeded");
    v.int64(a::head_dim_v, "head_dim_v")
        .default_(0)
        .range(0, 1024)
        .allowed({0, 64, 96, 128, 192, 256})
        .help("head dimension of V and O (0 = head_dim; DeepSeek MLA prefill: head_dim 192, head_dim_v 128)");
    return v.done();
  }

  std::string check(const Point& p, int) const override {
    const auto s = AttentionShape::from(p);
    if (p.integer(attention_axis::hidden) > 0 && p.integer(attention_axis::hidden) % s.head_dim != 0)
      return strprintf("hidden (%lld) is not a multiple of head_dim (%lld)",
                       static_cast<long long>(p.integer(attention_axis::hidden)), static_cast<long long>(s.head_dim));
    if (s.heads < 1) return "heads must be at least 1";
    if (s.heads % s.heads_kv != 0)
      return strprintf("heads (%lld) is not a multiple of heads_kv (%lld)", static_cast<long long>(s.heads),
                       static_cast<long long>(s.heads_kv));
    return "";
  }

  Work work(const Point& p, int) const override {
    const auto s = AttentionShape::from(p);
    Work w;
    w.flops = s.flops();
    const double el = static_cast<double>(dtype_size(s.dtype));
    std::int64_t tq = 0, tk = 0;
    for (auto n : s.lengths_q()) tq += n;
    for (auto n : s.lengths_k()) tk += n;
    // fp8 inputs give a bf16 output (kernels/attention/common/attention_validate.h).
    const double out_el = s.dtype == DType::fp8_e4m3 ? 2.0 : el;
    const auto d = static_cast<double>(s.head_dim), dv = static_cast<double>(s.dv());
    w.bytes =
        el * (d * static_cast<double>(s.heads * tq + s.heads_kv * tk) + dv * static_cast<double>(s.heads_kv * tk)) +
        out_el * dv * static_cast<double>(s.heads * tq);
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    const auto shape = [](const Point& p) { return AttentionShape::from(p); };
    OpColumns c;
    c.effective("effective_batch", "sequences", "sequences that ran (batch, or tokens / seqlen_q)",
                [=](const Point& p, int) { return shape(p).batch; });
    c.effective("effective_heads", "heads", "query heads that ran (heads, or hidden / head_dim)",
                [=](const Point& p, int) { return shape(p).heads; });
    c.effective("effective_heads_kv", "heads", "key/value heads that ran",
                [=](const Point& p, int) { return shape(p).heads_kv; });
    c.effective("effective_seqlen_k", "tokens", "key length that ran",
                [=](const Point& p, int) { return shape(p).seqlen_k; });
    c.effective("total_tokens_q", "tokens", "query rows over all sequences (with varlen, the drawn lengths' sum)",
                [=](const Point& p, int) { return total(shape(p).lengths_q()); });
    c.effective("total_tokens_k", "tokens", "key rows over all sequences (with varlen, the drawn lengths' sum)",
                [=](const Point& p, int) { return total(shape(p).lengths_k()); });
    c.metric("tflops", "TFLOP/s",
             "2*b*h*sq*sk*(d+dv) per second (4*b*h*sq*sk*d when dv = d; causal with sq == sk halved), median time",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .ints("batch", {2})
        .ints("heads", {2})
        .ints("heads_kv", {2, 1})
        .ints("seqlen_q", {17})
        .ints("seqlen_k", {40})
        .ints("head_dim", {64})
        .ints("head_dim_v", {0, 128})
        .flags("causal", {false, true})
        .choices("dtype", {"bf16", "fp8_e4m3"});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Attention throughput against sequence length";
    h.x = "seqlen_q";
    h.facets = {"dtype", "head_dim", "causal"};
    return h;
  }

  // Attention is matmul-bound: its rate is compared with the dense GEMM rate of its type.
  CeilingId ceiling(const Point& p) const override { return ceilings::gemm(AttentionShape::from(p).dtype); }

  std::string describe(const Point& p) const override {
    const auto s = AttentionShape::from(p);
    const std::string dv = s.dv() != s.head_dim ? strprintf("/%lld", static_cast<long long>(s.dv())) : "";
    return strprintf("%s b=%lld h=%lld/%lld sq=%lld sk=%lld d=%lld%s%s%s %s", dtype_name(s.dtype),
                     static_cast<long long>(s.batch), static_cast<long long>(s.heads),
                     static_cast<long long>(s.heads_kv), static_cast<long long>(s.seqlen_q),
                     static_cast<long long>(s.seqlen_k), static_cast<long long>(s.head_dim), dv.c_str(),
                     s.causal ? " causal" : "", s.varlen ? " varlen" : "", s.graph ? "graph" : "eager");
  }
};

}  // namespace

const Op& attention_op() {
  static const AttentionOp op;
  return op;
}

GENBENCH_REGISTER_OP(attention_op)

}  // namespace genbench
