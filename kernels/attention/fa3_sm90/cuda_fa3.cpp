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
#include "ops/attention/attention.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

// The tuning axes (register.cpp; recorded in the points table as given and as chosen):
// fa3_consumers 2 or 3 consumer warpgroups; fa3_pingpong off turns the consumers' turn-taking
// off; fa3_persistent on/off forces one CTA per SM or one per tile; fa3_split on/off splits a
// persistent launch's partial last round by key range always or never. "auto" is the kernel's
// own choice, or the documented environment alias (GENBENCH_FA3_CONSUMERS=N,
// GENBENCH_FA3_PINGPONG=0, GENBENCH_FA3_PERSISTENT=0|1, GENBENCH_FA3_SPLIT=0|1) where set.
// Diagnostics for the tests, recorded in the variant string: GENBENCH_FA3_FP8_P_LIMIT=x sets the
// P at which the fp8 kernel's max-free blocks rebase a row (fa3_fp8_sm90.h; 0: max-free blocks
// off, below 448: more rebases); with GENBENCH_FA3_FP8_COUNT=1 the fp8 kernel counts its
// max-free blocks and rebases (per warp, over all launches of the case) and the variant string
// ends in " maxfree=N rebase=M".
struct Tuning {
  int consumers = 0;    // 0: the kernel's choice
  int pingpong = -1;    // -1: the kernel's choice (on)
  int persistent = -1;  // -1: the kernel's choice
  int split = -1;       // -1: the kernel's choice
};

int tristate(const Point& p, const char* axis, const char* env) {
  const std::string v = tuning_value(p, attention_op(), axis, env);
  if (v == "auto") return -1;
  return v == "off" || v == "0" ? 0 : 1;
}

Tuning tuning_of(const Point& p) {
  Tuning t;
  const std::string c = tuning_value(p, attention_op(), "fa3_consumers", "GENBENCH_FA3_CONSUMERS");
  t.consumers = c == "auto" ? 0 : std::atoi(c.c_str());
  t.pingpong = tristate(p, "fa3_pingpong", "GENBENCH_FA3_PINGPONG");
  t.persistent = tristate(p, "fa3_persistent", "GENBENCH_FA3_PERSISTENT");
  t.split = tristate(p, "fa3_split", "GENBENCH_FA3_SPLIT");
  return t;
}

const char* on_off(bool b) { return b ? "on" : "off"; }

// The part of a kernel's problem every fa3 kernel shares, from the shape and the case's buffers
// (sched: the persistent launch's tile counters).
void set_tensors(fa3::Tensors& t, const AttentionShape& s, const Tuning& tune, const DeviceBuffer& q,
                 const DeviceBuffer& k, const DeviceBuffer& v, const DeviceBuffer& o, const DeviceBuffer& lse,
                 const DeviceBuffer& sched) {
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
  t.head_dim_v = static_cast<int>(s.dv());
  t.causal = s.causal;
  t.scale = s.scale;
  t.pingpong = tune.pingpong != 0;
  t.persistent = tune.persistent;
  t.split_tail = tune.split;
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

fa3::Problem problem_of(const AttentionShape& s, const Tuning& tune, const DeviceBuffer& q, const DeviceBuffer& k,
                        const DeviceBuffer& v, const DeviceBuffer& o, const DeviceBuffer& lse, const DeviceBuffer& cu_q,
                        const DeviceBuffer& cu_k, const DeviceBuffer& sched) {
  fa3::Problem p;
  set_tensors(p, s, tune, q, k, v, o, lse, sched);
  p.consumers = tune.consumers;
  if (s.varlen) {
    p.cu_q = cu_q.as<int>();
    p.cu_k = cu_k.as<int>();
  }
  p.bf16 = s.dtype == DType::bf16;
  return p;
}

class Fa3Case final : public attention::DeviceAttentionCase {
 public:
  Fa3Case(const AttentionShape& s, const Tuning& tune, Context& ctx)
      : DeviceAttentionCase(s, ctx),
        sched_(zeroed(ctx, 2 * sizeof(int))),
        launcher_(problem_of(s, tune, q_, k_, v_, o_, lse_, cu_q_, cu_k_, sched_)),
        split_ws_(split_workspace(ctx, launcher_)) {}

  std::vector<std::pair<std::string, std::string>> chosen() const override {
    return {{"fa3_consumers", std::to_string(launcher_.consumers())},
            {"fa3_pingpong", on_off(launcher_.pingpong())},
            {"fa3_persistent", on_off(launcher_.persistent())},
            {"fa3_split", on_off(launcher_.split())}};
  }

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
  Fa3Fp8Case(const AttentionShape& s, const Tuning& tune, Context& ctx)
      : DeviceAttentionCase(s, ctx), sched_(zeroed(ctx, 2 * sizeof(int))) {
    fa3::fp8::Problem p;
    set_tensors(p, s, tune, q_, k_, v_, o_, lse_, sched_);
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

  std::vector<std::pair<std::string, std::string>> chosen() const override {
    return {{"fa3_consumers", std::to_string(launcher_->consumers())},
            {"fa3_pingpong", on_off(launcher_->pingpong())},
            {"fa3_persistent", on_off(launcher_->persistent())},
            {"fa3_split", on_off(launcher_->split())}};
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
      if ((s.head_dim != 128 && s.head_dim != 256) || s.dv() != s.head_dim)
        return strprintf("fa3 fp8 supports head_dim 128 and 256 (V's the same), not %lld/%lld",
                         static_cast<long long>(s.head_dim), static_cast<long long>(s.dv()));
      if (s.varlen) return "fa3 fp8: varlen is not implemented (the V^T pre-pass pads each sequence's keys)";
      if (s.batch * s.heads_kv > 65535) return "fa3 fp8: batch x heads_kv over 65535 (grid z of the V^T pass)";
      if (tuning_of(p).consumers == 3) return "fa3 fp8 runs two consumer warpgroups (fa3_consumers: 3 is 16-bit only)";
    } else if (s.dtype != DType::bf16 && s.dtype != DType::fp16) {
      return strprintf("fa3 supports fp16, bf16 and fp8_e4m3, not %s", dtype_name(s.dtype));
    }
    if (s.head_dim > 256 || s.dv() > 256 ||
        fa3::kernel_dim(static_cast<int>(s.head_dim), static_cast<int>(s.dv())) == 0)
      return strprintf("fa3 supports head dims that are multiples of 8 up to 256, not %lld/%lld",
                       static_cast<long long>(s.head_dim), static_cast<long long>(s.dv()));
    if (s.batch > 65535) return "fa3: batch over 65535 (grid z limit)";
    if (s.heads > 65535) return "fa3: heads over 65535 (grid y limit)";
    if (s.batch * s.seqlen_q >= (std::int64_t{1} << 31) || s.batch * s.seqlen_k >= (std::int64_t{1} << 31))
      return "fa3: more than 2^31 rows";
    if (s.dtype == DType::fp8_e4m3) return fa3::fp8::build_support();
    return fa3::build_support();
  }

  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    const Tuning tune = tuning_of(p);
    if (s.dtype == DType::fp8_e4m3) return std::make_unique<Fa3Fp8Case>(s, tune, ctx);
    return std::make_unique<Fa3Case>(s, tune, ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_attention_fa3() { return std::make_unique<Fa3>(); }

}  // namespace genbench
