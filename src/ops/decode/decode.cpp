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

class DecodeOp final : public Op {
 public:
  std::string name() const override { return "decode"; }

  std::string summary() const override {
    return "decode attention: new tokens against a paged, grouped-query KV cache (memory-bound; GB/s vs the copy "
           "ceiling)";
  }

  std::vector<AxisSpec> define_axes() const override {
    namespace a = decode_axis;
    std::vector<AxisSpec> v(a::count);
    v[a::batch] = {"batch", AxisType::integer, std::int64_t{1}, {}, 1, 1 << 20, {}, "sequences"};
    v[a::heads] = {"heads", AxisType::integer, std::int64_t{32}, {}, 1, 4096, {}, "query heads"};
    v[a::heads_kv] = {"heads_kv",
                      AxisType::integer,
                      std::int64_t{8},
                      {},
                      1,
                      4096,
                      {},
                      "key/value heads (GQA/MQA); heads must be a multiple"};
    v[a::head_dim] = {"head_dim", AxisType::integer, std::int64_t{128}, {}, 1, 1024, {64, 128, 256}, "head dimension"};
    v[a::new_tokens] = {"new_tokens",
                        AxisType::integer,
                        std::int64_t{1},
                        {},
                        1,
                        16,
                        {},
                        "query tokens per sequence (speculative decoding: up to 16)"};
    v[a::cache] = {"cache",
                   AxisType::size,
                   std::int64_t{4096},
                   {},
                   0,
                   std::int64_t{1} << 24,
                   {},
                   "keys per sequence, the new tokens' included (with varlen: the largest)"};
    v[a::page_size] = {"page_size",
                       AxisType::integer,
                       std::int64_t{0},
                       {},
                       0,
                       std::int64_t{1} << 24,
                       {},
                       "0: contiguous cache; else keys per page (a power of two), pages in a seeded random order"};
    v[a::varlen] = {"varlen",
                    AxisType::boolean,
                    std::int64_t{0},
                    {},
                    0,
                    1,
                    {},
                    "per-sequence cache lengths drawn in [max(cache/2, new_tokens), cache], seeded"};
    v[a::causal] = {"causal",
                    AxisType::boolean,
                    std::int64_t{1},
                    {},
                    0,
                    1,
                    {},
                    "causal among the new tokens (bottom-right aligned)"};
    v[a::dtype] = {"dtype", AxisType::choice, std::string("bf16"), {"bf16", "fp16"}, 0, 0, {}, "Q and O precision"};
    v[a::kv_dtype] = {"kv_dtype",
                      AxisType::choice,
                      std::string("same"),
                      {"same", "bf16", "fp16", "fp8_e4m3"},
                      0,
                      0,
                      {},
                      "K/V cache precision (same: dtype; fp8_e4m3 with a per-tensor descale)"};
    v[a::scale] = {"scale", AxisType::real, 0.0, {}, 0, 0, {}, "softmax scale (0 = 1/sqrt(head_dim))"};
    v[a::mode] = {"mode",
                  AxisType::choice,
                  std::string("eager"),
                  {"eager", "graph"},
                  0,
                  0,
                  {},
                  "execution mode (graph: one capture serves any lengths up to cache)"};
    return v;
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

  std::vector<MetricSpec> metrics() const override {
    return {
        {"GBps", "GB/s",
         "bytes of K and V the cache lengths hold, Q, O and the block-table entries in use, per second (median time)",
         [](const Work& w, double t) { return w.bytes / t / 1e9; }, ""},
        {"tflops", "TFLOP/s", "4 x heads x head_dim x unmasked (query, key) pairs per second",
         [](const Work& w, double t) { return w.flops / t / 1e12; }, ""},
        {"tokens_per_s", "tokens/s", "batch x new_tokens per second",
         [](const Work& w, double t) { return w.tokens / t; }, ""}};
  }

  std::vector<ColumnSpec> effective_columns() const override {
    return {{"group", ColumnType::i64, "", "query heads per KV head (heads / heads_kv)"},
            {"total_cache_len", ColumnType::i64, "", "keys over all sequences (with varlen, the drawn lengths' sum)"},
            {"min_cache_len", ColumnType::i64, "", "the shortest sequence's keys"},
            {"pages_used", ColumnType::i64, "", "pages the lengths occupy (0 when contiguous)"},
            {"kv_bytes", ColumnType::f64, "B", "bytes of K and V the lengths hold (read once each)"},
            {"pool_bytes", ColumnType::f64, "B", "bytes of the K and V pools allocated (every sequence at cache)"}};
  }

  std::vector<ColumnValue> effective(const Point& p, int) const override {
    const auto s = DecodeShape::from(p);
    const auto lengths = s.lengths();
    std::int64_t total = 0, shortest = s.dims.cache, pages = 0;
    for (auto L : lengths) {
      total += L;
      shortest = std::min(shortest, L);
      if (s.dims.page_size > 0) pages += (L + s.dims.page_size - 1) / s.dims.page_size;
    }
    return {s.dims.group(), total, shortest, pages, decode::bytes(s.dims, lengths).kv, s.dims.pool_bytes()};
  }

  std::string ceiling(const Point&) const override { return "copy_GBps"; }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Decode attention bandwidth against cache length";
    h.x = "cache";
    h.log_x = true;
    h.facets = {"kv_dtype", "page_size", "heads"};
    h.compare_metric = "GBps";
    h.higher_is_better = true;
    h.ceiling_line = "copy_GBps";
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
