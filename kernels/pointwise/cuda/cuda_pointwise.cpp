// pointwise/cuda on the cuda backend: our kernels (pointwise_kernels.h) on device buffers filled
// on the GPU. Validation refills the inputs (rope kinds and add_rmsnorm update theirs in place;
// embedding_backward's gradient table is zeroed), reads the sampled rows' inputs back, poisons the
// outputs (dx, dw), runs once and checks the rows' outputs against double math
// (kernels/pointwise/common). Timed calls of embedding_backward keep adding into the table, as
// gradient accumulation does: zeroing it is the optimizer's work, not the kernel's.
#include <memory>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_backend.h"
#include "kernels/common/device_fill.h"
#include "kernels/pointwise/common/pointwise_reference.h"
#include "kernels/pointwise/cuda/pointwise_kernels.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

class PointwiseCudaCase final : public Case {
 public:
  PointwiseCudaCase(const PointwiseShape& s, Context& ctx) : s_(s), seed_(ctx.seed) {
    auto& be = cuda_backend_of(ctx.backend);
    stream_ = be.stream();
    const std::size_t e = dtype_size(s.dtype);
    const auto n = [](std::int64_t r, std::int64_t w) { return static_cast<std::size_t>(r * w); };
    const PointwiseKind k = s.kind;
    const bool table = k == PointwiseKind::embedding || k == PointwiseKind::embedding_backward;
    a_elems_ = table ? n(s.vocab, s.hidden) : n(s.rows, s.in_width());
    a_ = ctx.backend.allocate((k == PointwiseKind::embedding_backward ? sizeof(float) : e) * a_elems_);
    if (k == PointwiseKind::add_rmsnorm || is_norm_backward(k) || k == PointwiseKind::silu_mul_backward ||
        k == PointwiseKind::embedding_backward)
      b_ = ctx.backend.allocate(e * n(s.rows, s.hidden));
    if (k == PointwiseKind::add_rmsnorm_backward) c_ = ctx.backend.allocate(e * n(s.rows, s.hidden));
    if (!is_rope(k) && k != PointwiseKind::embedding_backward) y_ = ctx.backend.allocate(e * n(s.rows, s.out_width()));
    if (is_norm_backward(k)) {
      blocks_ = pointwise::rmsnorm_backward_blocks(s.rows, s.hidden, k == PointwiseKind::add_rmsnorm_backward, s.dtype);
      dw_ = ctx.backend.allocate(sizeof(float) * static_cast<std::size_t>(s.hidden));
      partial_ = ctx.backend.allocate(sizeof(float) * n(blocks_, s.hidden));
    }
    if (k == PointwiseKind::rmsnorm || k == PointwiseKind::add_rmsnorm || is_norm_backward(k)) {
      w_ = ctx.backend.allocate(e * static_cast<std::size_t>(s.hidden));
      fill_normal_device(w_.get(), s.hidden, seed_ + 3, s.dtype, 1.0f, stream_);
      weight_ = read(w_, 0, s.hidden);
    }
    if (is_rope(k)) {
      pointwise::rope_table(s.head_dim, cos_, sin_);
      cos_d_ = ctx.backend.allocate(cos_.size() * sizeof(float));
      sin_d_ = ctx.backend.allocate(sin_.size() * sizeof(float));
      GENBENCH_CHECK_CUDA(cudaMemcpy(cos_d_.get(), cos_.data(), cos_.size() * sizeof(float), cudaMemcpyHostToDevice));
      GENBENCH_CHECK_CUDA(cudaMemcpy(sin_d_.get(), sin_.data(), sin_.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    index_ = pointwise::row_index(s, seed_);
    if (!index_.empty()) {
      index_d_ = ctx.backend.allocate(index_.size() * sizeof(std::int32_t));
      GENBENCH_CHECK_CUDA(
          cudaMemcpy(index_d_.get(), index_.data(), index_.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
    }
    fill_inputs();
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  void run() override {
    using namespace pointwise;
    switch (s_.kind) {
      case PointwiseKind::rmsnorm:
      case PointwiseKind::add_rmsnorm:
        rmsnorm(a_.get(), b_.get(), w_.get(), y_.get(), s_.rows, s_.hidden, PointwiseShape::kEps, s_.dtype, stream_);
        break;
      case PointwiseKind::rope:
        pointwise::rope(a_.get(), index_d_.as<std::int32_t>(), cos_d_.as<float>(), sin_d_.as<float>(), s_.rows,
                        s_.rope_width(), s_.head_dim, s_.dtype, stream_);
        break;
      case PointwiseKind::silu_mul:
        pointwise::silu_mul(a_.get(), y_.get(), s_.rows, s_.hidden, s_.dtype, stream_);
        break;
      case PointwiseKind::embedding:
        pointwise::embedding(index_d_.as<std::int32_t>(), a_.get(), y_.get(), s_.rows, s_.hidden, s_.dtype, stream_);
        break;
      case PointwiseKind::rmsnorm_backward:
      case PointwiseKind::add_rmsnorm_backward:
        pointwise::rmsnorm_backward(a_.get(), w_.get(), b_.get(), c_.get(), y_.get(), dw_.as<float>(),
                                    partial_.as<float>(), blocks_, s_.rows, s_.hidden, PointwiseShape::kEps, s_.dtype,
                                    stream_);
        break;
      case PointwiseKind::rope_backward:
        pointwise::rope(a_.get(), index_d_.as<std::int32_t>(), cos_d_.as<float>(), sin_d_.as<float>(), s_.rows,
                        s_.rope_width(), s_.head_dim, s_.dtype, stream_, true);
        break;
      case PointwiseKind::silu_mul_backward:
        pointwise::silu_mul_backward(a_.get(), b_.get(), y_.get(), s_.rows, s_.hidden, s_.dtype, stream_);
        break;
      case PointwiseKind::embedding_backward:
        pointwise::embedding_backward(index_d_.as<std::int32_t>(), b_.get(), a_.as<float>(), s_.rows, s_.hidden,
                                      s_.dtype, stream_);
        break;
    }
  }

  Validation validate() override {
    fill_inputs();  // rope kinds and add_rmsnorm update their inputs in place; the gradient table zeroed
    const auto read = [this](pointwise::Buffer which, std::int64_t at, std::int64_t n) {
      using pointwise::Buffer;
      if (which == Buffer::dw) return read_f32(dw_, at, n);
      if (which == Buffer::a && s_.kind == PointwiseKind::embedding_backward) return read_f32(a_, at, n);
      return this->read(which == Buffer::a ? a_ : which == Buffer::b ? b_ : which == Buffer::c ? c_ : y_, at, n);
    };
    return pointwise::validate_rows(s_, index_, cos_, sin_, weight_, read, [this] {
      for (const DeviceBuffer* out : {&y_, &dw_})  // all ones: NaN in fp16, bf16 and fp32
        if (out->get()) GENBENCH_CHECK_CUDA(cudaMemsetAsync(out->get(), 0xff, out->bytes(), stream_));
      run();
      GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    });
  }

 private:
  void fill_inputs() {
    if (s_.kind == PointwiseKind::embedding_backward)
      GENBENCH_CHECK_CUDA(cudaMemsetAsync(a_.get(), 0, a_.bytes(), stream_));
    else fill_normal_device(a_.get(), static_cast<std::int64_t>(a_elems_), seed_ + 1, s_.dtype, 1.0f, stream_);
    if (b_.get()) fill_normal_device(b_.get(), s_.rows * s_.hidden, seed_ + 2, s_.dtype, 1.0f, stream_);
    if (c_.get()) fill_normal_device(c_.get(), s_.rows * s_.hidden, seed_ + 4, s_.dtype, 1.0f, stream_);
  }

  // Elements [at, at + n) of an fp32 device buffer.
  std::vector<float> read_f32(const DeviceBuffer& buf, std::int64_t at, std::int64_t n) const {
    std::vector<float> out(static_cast<std::size_t>(n));
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(out.data(), buf.as<float>() + at, out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    return out;
  }

  // Elements [at, at + n) of a device buffer of the point's dtype, as floats.
  std::vector<float> read(const DeviceBuffer& buf, std::int64_t at, std::int64_t n) const {
    std::vector<std::uint16_t> raw(static_cast<std::size_t>(n));
    GENBENCH_CHECK_CUDA(
        cudaMemcpyAsync(raw.data(), buf.as<std::uint16_t>() + at, raw.size() * 2, cudaMemcpyDeviceToHost, stream_));
    GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> out(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i)
      out[i] = static_cast<float>(s_.dtype == DType::bf16 ? convert::from_bf16(raw[i]) : convert::from_fp16(raw[i]));
    return out;
  }

  PointwiseShape s_;
  std::uint64_t seed_;
  cudaStream_t stream_ = nullptr;
  std::size_t a_elems_ = 0;
  int blocks_ = 0;  // rmsnorm_backward's blocks, the rows of partial_
  DeviceBuffer a_, b_, c_, y_, w_, dw_, partial_, cos_d_, sin_d_, index_d_;
  std::vector<float> weight_, cos_, sin_;
  std::vector<std::int32_t> index_;
};

class PointwiseCuda final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context&) const override {
    const auto s = PointwiseShape::from(p);
    if (s.kind == PointwiseKind::rmsnorm || s.kind == PointwiseKind::add_rmsnorm || is_norm_backward(s.kind))
      return pointwise::rmsnorm_unsupported(s.hidden,
                                            is_norm_backward(s.kind) ? pointwise_kind_name(s.kind) : "rmsnorm");
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<PointwiseCudaCase>(PointwiseShape::from(p), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_pointwise_cuda() { return std::make_unique<PointwiseCuda>(); }

}  // namespace genbench
