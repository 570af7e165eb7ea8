// attention/fa3 on the cuda backend: the Implementation around the sm_90a kernel of
// fa3_sm90.cu. Inputs, graph mode and validation come from kernels/attention/common.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/attention/common/attention_case.h"
#include "kernels/attention/fa3_sm90/fa3_fp8_sm90.h"
#include "kernels/attention/fa3_sm90/fa3_sm90.h"
#include "ops/implementation.h"
#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

// A/B switches (the variant string records what ran): GENBENCH_FA3_PINGPONG=0 turns the
// consumer turn-taking off; GENBENCH_FA3_PERSISTENT=1 or 0 forces one CTA per SM or one per
// tile (unset: the kernel's default for the problem); GENBENCH_FA3_SPLIT=1 or 0 splits a
// persistent launch's last round by key range whenever it is partial, or never (unset: where the
// kernel expects a gain; fa3_split.h); GENBENCH_FA3_FP8_P_LIMIT=x sets the P at
// which the fp8 kernel's max-free blocks rebase a row (fa3_fp8_sm90.h; 0: max-free blocks off,
// below 448: more rebases, for tests); with GENBENCH_FA3_FP8_COUNT=1 the fp8
// kernel counts its max-free blocks and rebases (per warp, over all launches of the case) and
// the variant string ends in " maxfree=N rebase=M" (tests).
bool env_enabled(const char* name) {
  const char* e = std::getenv(name);
  return !(e && std::strcmp(e, "0") == 0);
}

int env_tristate(const char* name) {
  const char* e = std::getenv(name);
  if (!e || !*e) return -1;
  return std::strcmp(e, "0") == 0 ? 0 : 1;
}

// The part of a kernel's problem every fa3 kernel shares, from the shape and the case's buffers
// (sched: the persistent launch's tile counters).
void set_tensors(fa3::Tensors& t, const AttentionShape& s, const DeviceBuffer& q, const DeviceBuffer& k,
                 const DeviceBuffer& v, const DeviceBuffer& o, const DeviceBuffer& lse, const DeviceBuffer& sched) {
  t.q = q.get();
  t.k = k.get();
  t.v = v.get();
  t.o = o.get();
  t.lse = lse.as<float>();
  t.batch = static_cast<int>(s.batch);
  t.heads = static_cast<int>(s.heads);
  t.heads_kv = static_cast<int>(s.heads_kv);
  t.seqlen_q = static_cast<int>(s.seqlen_q);
  t.seqlen_k = static_cast<int>(s.seqlen_k);
  t.head_dim = static_cast<int>(s.head_dim);
  t.causal = s.causal;
  t.scale = s.scale;
  t.pingpong = env_enabled("GENBENCH_FA3_PINGPONG");
  t.persistent = env_tristate("GENBENCH_FA3_PERSISTENT");
  t.split_tail = env_tristate("GENBENCH_FA3_SPLIT");
  t.sched = sched.as<int>();
}

DeviceBuffer zeroed(Context& ctx, std::size_t bytes) {
  DeviceBuffer b = ctx.backend.allocate(bytes);
  GENBENCH_CHECK_CUDA(cudaMemset(b.get(), 0, bytes));
  return b;
}

// The split tail's workspace of a Launcher (none where its plan does not split), allocated
// through the backend so that the point's memory counts it, and handed to the Launcher.
template <class L>
DeviceBuffer split_workspace(Context& ctx, L& launcher) {
  const std::size_t bytes = launcher.split_workspace_bytes();
  if (bytes == 0) return {};
  DeviceBuffer ws = zeroed(ctx, bytes);
  launcher.set_split_workspace(ws.get());
  return ws;
}

fa3::Problem problem_of(const AttentionShape& s, const DeviceBuffer& q, const DeviceBuffer& k, const DeviceBuffer& v,
                        const DeviceBuffer& o, const DeviceBuffer& lse, const DeviceBuffer& cu_q,
                        const DeviceBuffer& cu_k, const DeviceBuffer& sched) {
  fa3::Problem p;
  set_tensors(p, s, q, k, v, o, lse, sched);
  if (s.varlen) {
    p.cu_q = cu_q.as<int>();
    p.cu_k = cu_k.as<int>();
  }
  p.bf16 = s.dtype == DType::bf16;
  return p;
}

class Fa3Case final : public attention::DeviceAttentionCase {
 public:
  Fa3Case(const AttentionShape& s, Context& ctx)
      : DeviceAttentionCase(s, ctx),
        sched_(zeroed(ctx, 2 * sizeof(int))),
        launcher_(problem_of(s, q_, k_, v_, o_, lse_, cu_q_, cu_k_, sched_)),
        split_ws_(split_workspace(ctx, launcher_)) {}

 protected:
  void launch(cudaStream_t stream) override { launcher_.launch(stream); }
  std::string config_name() const override { return launcher_.variant(); }

 private:
  DeviceBuffer sched_;  // the persistent launch's tile counters (before launcher_: built first)
  fa3::Launcher launcher_;
  DeviceBuffer split_ws_;  // the split tail's workspace, if any (after launcher_, which sizes it)
};

// fp8 (e4m3) inputs: the kernel of fa3_fp8_sm90.cu. O is bf16 and the inputs carry the case's
// per-tensor descale (attention_validate.h); the V^T scratch the kernel's pre-pass writes and
// the tile counters are allocated here, once.
class Fa3Fp8Case final : public attention::DeviceAttentionCase {
 public:
  Fa3Fp8Case(const AttentionShape& s, Context& ctx) : DeviceAttentionCase(s, ctx), sched_(zeroed(ctx, 2 * sizeof(int))) {
    fa3::fp8::Problem p;
    set_tensors(p, s, q_, k_, v_, o_, lse_, sched_);
    vt_ = ctx.backend.allocate(fa3::fp8::vt_bytes(p.batch, p.heads_kv, p.head_dim, p.seqlen_k));
    p.vt = vt_.get();
    p.descale_q = p.descale_k = p.descale_v = descale();
    if (const char* e = std::getenv("GENBENCH_FA3_FP8_P_LIMIT"); e && *e) {
      double limit = 0;
      if (!parse_number(e, limit)) throw Error(strprintf("GENBENCH_FA3_FP8_P_LIMIT: '%s' is not a number", e));
      p.p_limit = static_cast<float>(limit);  // range: fp8::Launcher
    }
    if (const char* e = std::getenv("GENBENCH_FA3_FP8_COUNT"); e && *e && std::strcmp(e, "0") != 0) {
      counts_ = zeroed(ctx, 2 * sizeof(int));
      p.counts = counts_.as<int>();
    }
    launcher_ = std::make_unique<fa3::fp8::Launcher>(p);
    split_ws_ = split_workspace(ctx, *launcher_);
  }

 protected:
  void launch(cudaStream_t stream) override { launcher_->launch(stream); }
  std::string config_name() const override {
    if (!counts_.get()) return launcher_->variant();
    int n[2] = {0, 0};
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
    GENBENCH_CHECK_CUDA(cudaMemcpy(n, counts_.get(), sizeof n, cudaMemcpyDeviceToHost));
    return strprintf("%s maxfree=%d rebase=%d", launcher_->variant().c_str(), n[0], n[1]);
  }

 private:
  DeviceBuffer sched_, vt_, counts_, split_ws_;
  std::unique_ptr<fa3::fp8::Launcher> launcher_;
};

class Fa3 final : public Implementation {
 public:

  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    if (prop.major != 9 || prop.minor != 0) return "fa3 needs sm_90a (Hopper)";
    if (s.dtype == DType::fp8_e4m3) {
      if (s.head_dim != 128 && s.head_dim != 256)
        return strprintf("fa3 fp8 supports head_dim 128 and 256, not %lld", static_cast<long long>(s.head_dim));
      if (s.varlen) return "fa3 fp8: varlen is not implemented (the V^T pre-pass pads each sequence's keys)";
      if (s.batch * s.heads_kv > 65535) return "fa3 fp8: batch x heads_kv over 65535 (grid z of the V^T pass)";
    } else if (s.dtype != DType::bf16 && s.dtype != DType::fp16) {
      return strprintf("fa3 supports fp16, bf16 and fp8_e4m3, not %s", dtype_name(s.dtype));
    }
    if (s.head_dim != 64 && s.head_dim != 128 && s.head_dim != 256)
      return strprintf("fa3 supports head_dim 64, 128 and 256, not %lld", static_cast<long long>(s.head_dim));
    if (s.batch > 65535) return "fa3: batch over 65535 (grid z limit)";
    if (s.heads > 65535) return "fa3: heads over 65535 (grid y limit)";
    if (s.batch * s.seqlen_q >= (std::int64_t{1} << 31) || s.batch * s.seqlen_k >= (std::int64_t{1} << 31))
      return "fa3: more than 2^31 rows";
    if (s.dtype == DType::fp8_e4m3) return fa3::fp8::build_support();
    return fa3::build_support();
  }

  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    if (s.dtype == DType::fp8_e4m3) return std::make_unique<Fa3Fp8Case>(s, ctx);
    return std::make_unique<Fa3Case>(s, ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_fa3() { return std::make_unique<Fa3>(); }

}  // namespace genbench
