// decode/reference on the host backend: the input-precision computation of
// kernels/decode/common/decode_reference.h (fp32 scores, P rounded to the type the kernels
// multiply V in, O rounded to the output type) on inputs rounded to the point's precisions,
// through the block table. Validated like the device implementations (sampled rows against
// double, outputs poisoned first), and the paged layout against the contiguous layout of the
// same data (bit-exact: the same arithmetic in the same key order).
#include <cmath>
#include <cstring>
#include <limits>

#include "core/strings.h"
#include "kernels/decode/common/decode_reference.h"
#include "ops/decode/decode.h"
#include "ops/fill.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kHostFlopLimit = 2e10;  // beyond this a CPU point takes minutes

class DecodeReferenceHostCase final : public Case {
 public:
  DecodeReferenceHostCase(const DecodeShape& s, Context& ctx) : s_(s), seed_(ctx.seed) {
    const auto& d = s.dims;
    const auto n_q = static_cast<std::size_t>(d.batch * d.new_tokens * d.heads * d.head_dim);
    const auto n_pool = static_cast<std::size_t>(d.pool_elements());
    // A counted allocation of the inputs' and outputs' size (malloc'd and never touched: the
    // data lives in x_'s vectors), so the point reports its memory and the backend refuses
    // what the host cannot hold.
    bufs_.push_back(ctx.backend.allocate(n_q * sizeof(float) * 2 + n_pool * sizeof(float) * 2));
    x_.dims = d;
    x_.q_dtype = s.dtype;
    x_.kv_dtype = s.kv_dtype;
    x_.scale = s.scale;
    x_.lengths = s.lengths();
    x_.table = decode::block_table(d, seed_);
    x_.q.resize(n_q);
    fill_random(x_.q, seed_ + 1, s.dtype);
    // fp8 K/V: stored = 64 x the draw rounded to e4m3, true value = stored / 64.
    const float descale = s.kv_descale();
    for (auto* pool : {&x_.k, &x_.v}) {
      pool->resize(n_pool);
      fill_random(*pool, seed_ + (pool == &x_.k ? 2 : 3), s.kv_dtype, 1.0f / descale);
      if (descale != 1.0f)
        for (float& v : *pool) v *= descale;
    }
  }

  void run() override { decode::compute_all(x_); }

  Validation validate() override {
    std::fill(x_.o.begin(), x_.o.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(x_.lse.begin(), x_.lse.end(), std::numeric_limits<float>::quiet_NaN());
    run();
    const decode::DecodeCheck c = decode::validate_decode(x_, seed_);
    Validation v{c.ok, c.error, c.tolerance, c.detail};
    if (!v.ok || s_.dims.page_size == 0) return v;
    // The paged layout against the contiguous layout of the same data.
    decode::HostDecodeData flat = x_;
    flat.dims.page_size = 0;
    flat.table = decode::block_table(flat.dims, seed_);
    flat.k = decode::to_contiguous(x_.dims, x_.table, x_.k);
    flat.v = decode::to_contiguous(x_.dims, x_.table, x_.v);
    decode::compute_all(flat);
    std::size_t diff = 0;
    for (std::size_t i = 0; i < flat.o.size(); ++i)
      if (std::memcmp(&flat.o[i], &x_.o[i], sizeof(float)) != 0) ++diff;
    v.detail +=
        strprintf("; paged vs contiguous layout of the same data: %zu of %zu O elements differ", diff, flat.o.size());
    if (diff) {
      v.ok = false;
      v.error = INFINITY;
    }
    return v;
  }

 private:
  DecodeShape s_;
  std::uint64_t seed_;
  decode::HostDecodeData x_;
  std::vector<DeviceBuffer> bufs_;
};

class DecodeReferenceHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = DecodeShape::from(p);
    if (s.graph) return "graph mode needs the cuda backend";
    const double f = decode::flops(s.dims, s.lengths());
    if (f > kHostFlopLimit) return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", f, kHostFlopLimit);
    if (s.dims.pool_bytes() * (4.0 / s.dims.kv_bytes) > 4e9) return "the pools exceed the host backend's 4 GB limit";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<DecodeReferenceHostCase>(DecodeShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_decode_reference_host() { return std::make_unique<DecodeReferenceHost>(); }

}  // namespace genbench
