// attention/fa2 on the cuda backend: the dispatch table and the Implementation.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/attention/fa2_sm80/fa2.h"
#include "kernels/attention/fa2_sm80/fa2_tiles.h"
#include "ops/implementation.h"

namespace genbench {

namespace fa2 {

// Defined in fa2_d*.cu.
#define GENBENCH_FA2_EXTERN(T, D, BM, BN, W)             \
  extern template struct Kernel<T, D, BM, BN, W, false>; \
  extern template struct Kernel<T, D, BM, BN, W, true>;
GENBENCH_FA2_EXTERN(__half, 64, 128, 128, 4)
GENBENCH_FA2_EXTERN(__nv_bfloat16, 64, 128, 128, 4)
GENBENCH_FA2_EXTERN(__half, 128, 128, 64, 4)
GENBENCH_FA2_EXTERN(__nv_bfloat16, 128, 128, 64, 4)
GENBENCH_FA2_EXTERN(__half, 128, 64, 64, 4)
GENBENCH_FA2_EXTERN(__nv_bfloat16, 128, 64, 64, 4)
GENBENCH_FA2_EXTERN(__half, 256, 128, 64, 8)
GENBENCH_FA2_EXTERN(__nv_bfloat16, 256, 128, 64, 8)
GENBENCH_FA2_EXTERN(__half, 256, 64, 32, 4)
GENBENCH_FA2_EXTERN(__nv_bfloat16, 256, 64, 32, 4)
#undef GENBENCH_FA2_EXTERN

namespace {

struct Fns {
  void (*setup)();
  void (*launch)(const Params&, cudaStream_t);
};

struct TileConfig {
  std::string name;  // tile_name()
  int d, bm, bn, warps, smem_bytes;
  Fns fns[2][2];  // [0 fp16, 1 bf16][causal]
};

// Configuration I of kTileShapes (fa2_tiles.h), its kernels instantiated in fa2_d*.cu.
template <std::size_t I>
TileConfig make_config() {
  constexpr TileShape t = kTileShapes[I];
  constexpr int D = t.d, BM = t.bm, BN = t.bn, W = t.warps;
  using H = __half;
  using B = __nv_bfloat16;
  return TileConfig{tile_name(t),
                    D,
                    BM,
                    BN,
                    W,
                    Kernel<H, D, BM, BN, W, false>::kSmemBytes,
                    {{{&Kernel<H, D, BM, BN, W, false>::setup, &Kernel<H, D, BM, BN, W, false>::launch},
                      {&Kernel<H, D, BM, BN, W, true>::setup, &Kernel<H, D, BM, BN, W, true>::launch}},
                     {{&Kernel<B, D, BM, BN, W, false>::setup, &Kernel<B, D, BM, BN, W, false>::launch},
                      {&Kernel<B, D, BM, BN, W, true>::setup, &Kernel<B, D, BM, BN, W, true>::launch}}}};
}

template <std::size_t... I>
std::vector<TileConfig> make_configs(std::index_sequence<I...>) {
  return {make_config<I>()...};
}

// Every configuration, in kTileShapes' order (the rules below index it).
const std::vector<TileConfig>& configs() {
  static const std::vector<TileConfig> c = make_configs(std::make_index_sequence<kNumTileShapes>());
  return c;
}

// The dispatch table: the first rule that matches (arch, dtype, head_dim, causal, bucket)
// names the tile configuration. bucket = ceil(log2(seqlen_q)). -1 matches anything.
struct Rule {
  int min_cc;  // compute capability * 10
  int dtype;   // 0 fp16, 1 bf16
  int head_dim;
  int causal;
  int bucket_lo, bucket_hi;
  int config;  // index into configs()
};

const Rule kRules[] = {
    {80, -1, 64, -1, 0, 64, 0},
    // Up to 64 query rows: 64-row tiles halve the padding and double the blocks.
    {80, -1, 128, -1, 0, 6, 2},
    {80, -1, 128, -1, 7, 64, 1},
    // d=256 (H200, 2026-11-30, 16K tokens: 128x64 w8 316.5 TFLOP/s, 64x32 w4 285.5, 64x64 w4
    // 268.6; torch flash 318.7): the 192 KB tile where the device has the shared memory.
    {90, -1, 256, -1, 0, 64, 3},
    {80, -1, 256, -1, 0, 64, 4},
};

int bucket_of(std::int64_t n) {
  int b = 0;
  while ((std::int64_t{1} << b) < n) ++b;
  return b;
}

// The fa2_tile axis (or its alias GENBENCH_FA2_TILE) names a configuration of the point's
// head_dim (tuning runs; recorded in fa2_tile_chosen and the variant); "auto" uses the rules.
const TileConfig* forced(const std::string& tile, std::int64_t d) {
  for (const auto& c : configs())
    if (c.d == d && tile == c.name) return &c;
  return nullptr;
}

std::string tile_of(const Point& pt) { return tuning_value(pt, attention_op(), "fa2_tile", "GENBENCH_FA2_TILE"); }

const TileConfig* choose(int cc, DType dt, std::int64_t d, bool causal, std::int64_t seqlen_q,
                         const std::string& tile) {
  if (tile != "auto") return forced(tile, d);
  const int dti = dt == DType::bf16 ? 1 : 0, bucket = bucket_of(seqlen_q);
  for (const auto& r : kRules)
    if (cc >= r.min_cc && (r.dtype < 0 || r.dtype == dti) && r.head_dim == d && (r.causal < 0 || r.causal == causal) &&
        bucket >= r.bucket_lo && bucket <= r.bucket_hi)
      return &configs()[static_cast<std::size_t>(r.config)];
  return nullptr;
}

class Fa2Case final : public attention::DeviceAttentionCase {
 public:
  Fa2Case(const AttentionShape& s, Context& ctx, const TileConfig* cfg) : DeviceAttentionCase(s, ctx), cfg_(cfg) {
    fns_ = cfg->fns[s.dtype == DType::bf16 ? 1 : 0][s.causal ? 1 : 0];
    fns_.setup();
  }

 protected:
  void launch(cudaStream_t st) override {
    Params p{};
    p.q = q_.get();
    p.k = k_.get();
    p.v = v_.get();
    p.o = o_.get();
    p.lse = lse_.as<float>();
    p.cu_q = s_.varlen ? cu_q_.as<int>() : nullptr;
    p.cu_k = s_.varlen ? cu_k_.as<int>() : nullptr;
    p.batch = static_cast<int>(s_.batch);
    p.heads = static_cast<int>(s_.heads);
    p.heads_kv = static_cast<int>(s_.heads_kv);
    p.group = static_cast<int>(s_.heads / s_.heads_kv);
    p.seqlen_q = static_cast<int>(s_.seqlen_q);
    p.seqlen_k = static_cast<int>(s_.seqlen_k);
    p.q_row_stride = s_.heads * s_.head_dim;
    p.kv_row_stride = s_.heads_kv * s_.head_dim;
    p.lse_head_stride = rows_q_;
    p.scale = s_.scale;
    p.scale_log2 = static_cast<float>(static_cast<double>(s_.scale) * 1.4426950408889634);
    fns_.launch(p, st);
  }
  std::string config_name() const override { return cfg_->name + (s_.varlen ? " varlen" : ""); }

 public:
  std::vector<std::pair<std::string, std::string>> chosen() const override { return {{"fa2_tile", cfg_->name}}; }

 private:
  const TileConfig* cfg_;
  Fns fns_{};
};

class Fa2Attention final : public Implementation {
 public:
  std::string can_implement(const Point& pt, const Context& ctx) const override {
    const auto s = AttentionShape::from(pt);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    const int cc = prop.major * 10 + prop.minor;
    if (cc < 80) return strprintf("needs sm80 or later (this device is sm%d)", cc);
    if (s.dv() != s.head_dim)
      return strprintf("fa2 takes one head dim for Q, K and V, not %lld/%lld", static_cast<long long>(s.head_dim),
                       static_cast<long long>(s.dv()));
    const std::string tile = tile_of(pt);
    const TileConfig* cfg = choose(cc, s.dtype, s.head_dim, s.causal, s.seqlen_q, tile);
    if (!cfg && tile != "auto")
      return strprintf("fa2_tile '%s' is not a tile of head_dim %lld", tile.c_str(),
                       static_cast<long long>(s.head_dim));
    if (!cfg) return strprintf("no tile configuration for head_dim %lld", static_cast<long long>(s.head_dim));
    if (static_cast<std::size_t>(cfg->smem_bytes) > prop.sharedMemPerBlockOptin)
      return strprintf("tile needs %d bytes of shared memory, the device allows %zu", cfg->smem_bytes,
                       prop.sharedMemPerBlockOptin);
    if (s.batch > 65535 || s.heads > 65535) return "batch and heads must be at most 65535 (grid limits)";
    if (s.batch * s.seqlen_q >= (std::int64_t{1} << 31) || s.batch * s.seqlen_k >= (std::int64_t{1} << 31))
      return "more than 2^31 rows";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& pt, Context& ctx) const override {
    const auto s = AttentionShape::from(pt);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    return std::make_unique<Fa2Case>(
        s, ctx, choose(prop.major * 10 + prop.minor, s.dtype, s.head_dim, s.causal, s.seqlen_q, tile_of(pt)));
  }
};

}  // namespace
}  // namespace fa2

std::unique_ptr<Implementation> make_attention_fa2() { return std::make_unique<fa2::Fa2Attention>(); }

}  // namespace genbench
