// attention_backward/fa2 on the cuda backend: the case around our fused backward
// (fa2_backward.h): the shared device case's buffers as BackwardParams, its workspace, and what
// the kernel refuses on this card.
#include "kernels/attention_backward/common/backward_case.h"
#include "kernels/attention_backward/fa2_sm80/fa2_backward.h"
#include "ops/attention_backward/attention_backward.h"
#include "ops/implementation.h"

namespace genbench::attention_backward {

namespace {

class Fa2BackwardCase final : public DeviceBackwardCase {
 public:
  Fa2BackwardCase(const AttentionShape& s, Context& ctx, bool deterministic) : DeviceBackwardCase(s, ctx) {
    set_deterministic(deterministic);
    ws_ptr_ = workspace(fa2::workspace_bytes(params()));
  }

 protected:
  void launch(cudaStream_t st) override { fa2::launch(params(), ws_ptr_, st); }
  std::string config_name() const override { return fa2::config_name(params()); }

 private:
  void* ws_ptr_ = nullptr;
};

class AttentionBackwardFa2 final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = AttentionShape::from(p);
    if (auto why = dtype_not_in(s.dtype, {DType::fp16, DType::bf16}); !why.empty()) return why;
    if (s.batch * s.seqlen_q > 2147483647 / s.heads || s.batch * s.seqlen_k > 2147483647 / s.heads_kv)
      return "more rows than 32-bit indices hold";
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    return fa2::unsupported(backward_params_of(s, p.boolean(attention_backward_axis::deterministic)), prop.major,
                            prop.minor);
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<Fa2BackwardCase>(AttentionShape::from(p), ctx,
                                             p.boolean(attention_backward_axis::deterministic));
  }
};

}  // namespace

}  // namespace genbench::attention_backward

namespace genbench {

std::unique_ptr<Implementation> make_attention_backward_fa2() {
  return std::make_unique<attention_backward::AttentionBackwardFa2>();
}

}  // namespace genbench
