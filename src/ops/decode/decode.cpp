#include "ops/decode/decode.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace genbench {

DecodeShape DecodeShape::from(const Point& p) {
  namespace a = decode_axis;
  DecodeShape s;
  s.dims.batch = p.integer(a::batch);
  s.dims.heads = p.integer(a::heads);
  s.dims.heads_kv = p.integer(a::heads_kv);
  s.dims.head_dim = p.integer(a::head_dim);
  s.dims.new_tokens = p.integer(a::new_tokens);
  s.dims.cache = p.integer(a::cache);
  s.dims.page_size = p.integer(a::page_size);
  s.dims.varlen = p.boolean(a::varlen);
  s.dims.causal = p.boolean(a::causal);
  s.dtype = *parse_dtype(p.choice(a::dtype));
  const std::string& kv = p.choice(a::kv_dtype);
  s.kv_dtype = kv == "same" ? s.dtype : *parse_dtype(kv);
  s.dims.q_bytes = static_cast<int>(dtype_size(s.dtype));
  s.dims.kv_bytes = static_cast<int>(dtype_size(s.kv_dtype));
  const double scale = p.real(a::scale);
  s.scale = static_cast<float>(scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.dims.head_dim)));
  s.graph = p.choice(a::mode) == "graph";
  return s;
}

namespace {

// How the drawn cache lengths of a point fill the cache.
struct CacheUse {
  std::int64_t total = 0, shortest = 0, pages = 0;
};

CacheUse cache_use(const Point& p) {
  const auto s = DecodeShape::from(p);
  CacheUse u;
  u.shortest = s.dims.cache;
  for (auto L : s.lengths()) {
    u.total += L;
    u.shortest = std::min(u.shortest, L);
    if (s.dims.page_size > 0) u.pages += (L + s.dims.page_size - 1) / s.dims.page_size;
  }
  return u;
}

class DecodeOp final : public Op {
 public:
  std::string name() const override { return "decode"; }

  std::string summary() const override {
    return "decode attention: new tokens against a paged, grouped-query KV cache (memory-bound; GB/s vs the copy "
           "ceiling)";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = decode_axis;
    Axes v(a::count);
    v.int64(a::batch, "batch").unit("sequences").default_(1).range(1, 1 << 20).help("sequences");
    v.int64(a::heads, "heads").unit("heads").default_(32).range(1, 4096).help("query heads");
    v.int64(a::heads_kv, "heads_kv")
        .unit("heads")
        .default_(8)
        .range(1, 4096)
        .help("key/value heads (GQA/MQA); heads must be a multiple");
    v.int64(a::head_dim, "head_dim").default_(128).range(1, 1024).allowed({64, 128, 256}).help("head dimension");
    v.int64(a::new_tokens, "new_tokens")
        .unit("tokens")
        .default_(1)
        .range(1, 16)
        .help("query tokens per sequence (speculative decoding: up to 16)");
    v.size(a::cache, "cache")
        .unit("tokens")
        .default_(4096)
        .range(0, std::int64_t{1} << 24)
        .help("keys per sequence, the new tokens' included (with varlen: the largest)");
    v.int64(a::page_size, "page_size")
        .unit("tokens")
        .default_(0)
        .range(0, std::int64_t{1} << 24)
        .help("0: contiguous cache; else keys per page (a power of two), pages in a seeded random order");
    v.boolean(a::varlen, "varlen")
        .help("per-sequence cache lengths drawn in [max(cache/2, new_tokens), cache], seeded");
    v.boolean(a::causal, "causal").default_(true).help("causal among the new tokens (bottom-right aligned)");
    v.choice(a::dtype, "dtype", {"bf16", "fp16"}).default_("bf16").help("Q and O precision");
    v.choice(a::kv_dtype, "kv_dtype", {"same", "bf16", "fp16", "fp8_e4m3"})
        .default_("same")
        .help("K/V cache precision (same: dtype; fp8_e4m3 with a per-tensor descale)");
    v.real(a::scale, "scale").default_(0.0).help("softmax scale (0 = 1/sqrt(head_dim))");
    v.choice(a::mode, "mode", {"eager", "graph"})
        .default_("eager")
        .help("execution mode (graph: one capture serves any lengths up to cache)");
    return v.done();
  }

  std::string check(const Point& p, int) const override {
    const auto s = DecodeShape::from(p);
    if (s.kv_dtype != DType::fp8_e4m3 && s.kv_dtype != s.dtype)
      return strprintf("kv_dtype %s with dtype %s: 16-bit K/V must match Q's type (or use fp8_e4m3)",
                       dtype_name(s.kv_dtype), dtype_name(s.dtype));
    return decode::check_dims(s.dims, kDecodeMaxPoolBytes);
  }

  Work work(const Point& p, int) const override {
    const auto s = DecodeShape::from(p);
    const auto lengths = s.lengths();
    Work w;
    w.flops = decode::flops(s.dims, lengths);
    w.bytes = decode::bytes(s.dims, lengths).total();
    w.tokens = static_cast<double>(s.dims.batch * s.dims.new_tokens);
    return w;
  }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("group", "", "query heads per KV head (heads / heads_kv)",
                [](const Point& p, int) { return DecodeShape::from(p).dims.group(); });
    c.effective("total_cache_len", "tokens", "keys over all sequences (with varlen, the drawn lengths' sum)",
                [](const Point& p, int) { return cache_use(p).total; });
    c.effective("min_cache_len", "tokens", "the shortest sequence's keys",
                [](const Point& p, int) { return cache_use(p).shortest; });
    c.effective("pages_used", "pages", "pages the lengths occupy (0 when contiguous)",
                [](const Point& p, int) { return cache_use(p).pages; });
    c.effective("kv_bytes", "B", "bytes of K and V the lengths hold (read once each)", [](const Point& p, int) {
      const auto s = DecodeShape::from(p);
      return decode::bytes(s.dims, s.lengths()).kv;
    });
    c.effective("pool_bytes", "B", "bytes of the K and V pools allocated (every sequence at cache)",
                [](const Point& p, int) { return DecodeShape::from(p).dims.pool_bytes(); });
    c.metric("GBps", "GB/s",
             "bytes of K and V the cache lengths hold, Q, O and the block-table entries in use, per second (median "
             "time)",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    c.metric("tflops", "TFLOP/s", "4 x heads x head_dim x unmasked (query, key) pairs per second",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    c.metric("tokens_per_s", "tokens/s", "batch x new_tokens per second",
             [](const Work& w, double t) { return w.tokens / t; });
    return c.done();
  }

  CeilingId ceiling(const Point&) const override { return ceilings::copy(); }

  HostExample host_example() const override {
    return HostExample()
        .ints("batch", {3})
        .ints("heads", {8})
        .ints("heads_kv", {2})
        .ints("head_dim", {64})
        .ints("new_tokens", {1, 3})
        .ints("cache", {100})
        .ints("page_size", {0, 16})
        .flags("varlen", {true})
        .choices("kv_dtype", {"same", "fp8_e4m3"});
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Decode attention bandwidth against cache length";
    h.x = "cache";
    h.log_x = true;
    h.facets = {"kv_dtype", "page_size", "heads"};
    h.compare_metric = "GBps";
    h.higher_is_better = true;
    h.ceiling_line = ceilings::copy();
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto s = DecodeShape::from(p);
    const auto& d = s.dims;
    return strprintf("%s kv=%s b=%lld h=%lld/%lld d=%lld new=%lld cache=%lld page=%lld%s%s %s", dtype_name(s.dtype),
                     dtype_name(s.kv_dtype), static_cast<long long>(d.batch), static_cast<long long>(d.heads),
                     static_cast<long long>(d.heads_kv), static_cast<long long>(d.head_dim),
                     static_cast<long long>(d.new_tokens), static_cast<long long>(d.cache),
                     static_cast<long long>(d.page_size), d.varlen ? " varlen" : "", d.causal ? " causal" : "",
                     s.graph ? "graph" : "eager");
  }
};

}  // namespace

const Op& decode_op() {
  static const DecodeOp op;
  return op;
}

GENBENCH_REGISTER_OP(decode_op)

}  // namespace genbench
