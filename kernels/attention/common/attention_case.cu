#include "kernels/attention/common/attention_case.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>

#include "backend/cuda/graph.h"
#include "core/error.h"
#include "core/strings.h"
#include "kernels/common/device_fill.h"

namespace genbench::attention {

namespace {

std::vector<int> cumulative(const std::vector<std::int64_t>& lens) {
  std::vector<int> cu(lens.size() + 1, 0);
  for (std::size_t b = 0; b < lens.size(); ++b) cu[b + 1] = cu[b] + static_cast<int>(lens[b]);
  return cu;
}

}  // namespace

std::vector<float> download_as_float(const void* p, DType t, std::size_t n, float scale) {
  std::vector<float> out = download_as_float(p, t, n);
  if (scale != 1.0f)
    for (float& x : out) x *= scale;
  return out;
}

std::vector<float> download_as_float(const void* p, DType t, std::size_t n) {
  std::vector<float> out(n);
  if (t == DType::fp32) {
    GENBENCH_CHECK_CUDA(cudaMemcpy(out.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
  }
  if (dtype_size(t) == 1) {
    std::vector<std::uint8_t> raw(n);
    GENBENCH_CHECK_CUDA(cudaMemcpy(raw.data(), p, n, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i) {
      if (t == DType::fp8_e4m3) {
        __nv_fp8_e4m3 x;
        x.__x = raw[i];
        out[i] = static_cast<float>(x);
      } else if (t == DType::fp8_e5m2) {
        __nv_fp8_e5m2 x;
        x.__x = raw[i];
        out[i] = static_cast<float>(x);
      } else {
        throw Error(strprintf("attention: cannot download %s", dtype_name(t)));
      }
    }
    return out;
  }
  std::vector<std::uint16_t> raw(n);
  GENBENCH_CHECK_CUDA(cudaMemcpy(raw.data(), p, n * 2, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i) {
    if (t == DType::bf16) {
      __nv_bfloat16_raw r;
      r.x = raw[i];
      out[i] = __bfloat162float(__nv_bfloat16(r));
    } else {
      __half_raw r;
      r.x = raw[i];
      out[i] = __half2float(__half(r));
    }
  }
  return out;
}

DeviceAttentionCase::DeviceAttentionCase(const AttentionShape& s, Context& ctx)
    : s_(s), be_(cuda_backend_of(ctx.backend)), seed_(ctx.seed) {
  rows_q_ = s.batch * s.seqlen_q;
  rows_k_ = s.batch * s.seqlen_k;
  const std::size_t el = dtype_size(s.dtype);
  const auto n_q = static_cast<std::size_t>(rows_q_ * s.heads * s.head_dim);
  const auto n_kv = static_cast<std::size_t>(rows_k_ * s.heads_kv * s.head_dim);
  const auto n_v = static_cast<std::size_t>(rows_k_ * s.heads_kv * s.dv());
  const auto n_o = static_cast<std::size_t>(rows_q_ * s.heads * s.dv());
  q_ = ctx.backend.allocate(n_q * el);
  k_ = ctx.backend.allocate(n_kv * el);
  v_ = ctx.backend.allocate(n_v * el);
  o_ = ctx.backend.allocate(n_o * dtype_size(output_dtype(s.dtype)));
  lse_ = ctx.backend.allocate(static_cast<std::size_t>(rows_q_ * s.heads) * sizeof(float));
  cu_q_ = ctx.backend.allocate(static_cast<std::size_t>(s.batch + 1) * sizeof(int));
  cu_k_ = ctx.backend.allocate(static_cast<std::size_t>(s.batch + 1) * sizeof(int));
  // Stored = draw / descale (fp8: 64 x the draw; other dtypes: the draw itself).
  const float fill_scale = 1.0f / input_descale(s.dtype);
  fill_normal_device(q_.get(), static_cast<std::int64_t>(n_q), seed_ + 1, s.dtype, fill_scale, stream());
  fill_normal_device(k_.get(), static_cast<std::int64_t>(n_kv), seed_ + 2, s.dtype, fill_scale, stream());
  fill_normal_device(v_.get(), static_cast<std::int64_t>(n_v), seed_ + 3, s.dtype, fill_scale, stream());
  set_lengths(s.lengths_q(), s.lengths_k());
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
}

DeviceAttentionCase::~DeviceAttentionCase() {
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void DeviceAttentionCase::set_lengths(const std::vector<std::int64_t>& len_q, const std::vector<std::int64_t>& len_k) {
  if (static_cast<std::int64_t>(len_q.size()) != s_.batch || static_cast<std::int64_t>(len_k.size()) != s_.batch)
    throw Error("attention: one length per sequence expected");
  for (std::size_t b = 0; b < len_q.size(); ++b)
    if (len_q[b] < 1 || len_q[b] > s_.seqlen_q || len_k[b] < 1 || len_k[b] > s_.seqlen_k)
      throw Error("attention: sequence length outside [1, seqlen]");
  len_q_ = len_q;
  len_k_ = len_k;
  max_len_q_ = *std::max_element(len_q.begin(), len_q.end());
  max_len_k_ = *std::max_element(len_k.begin(), len_k.end());
  // Uniform batches keep the padded layout b * seqlen, which is the same as packing them.
  const auto cq = cumulative(len_q), ck = cumulative(len_k);
  // The copy is stream-ordered: pageable sources are staged before the call returns.
  GENBENCH_CHECK_CUDA(
      cudaMemcpyAsync(cu_q_.get(), cq.data(), cq.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
  GENBENCH_CHECK_CUDA(
      cudaMemcpyAsync(cu_k_.get(), ck.data(), ck.size() * sizeof(int), cudaMemcpyHostToDevice, stream()));
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
}

void DeviceAttentionCase::capture() {
  cudaStream_t st = stream();
  GENBENCH_CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  try {
    launch(st);
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(st, &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  GENBENCH_CHECK_CUDA(cudaStreamEndCapture(st, &graph_));
  GENBENCH_CHECK_CUDA(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  ++captures_;
}

void DeviceAttentionCase::execute() {
  if (s_.graph) {
    if (!graph_exec_) capture();
    GENBENCH_CHECK_CUDA(cudaGraphLaunch(graph_exec_, stream()));
  } else {
    launch(stream());
  }
}

void DeviceAttentionCase::run() { execute(); }

void DeviceAttentionCase::poison_outputs() {
  // All-ones bits are NaN in fp32, fp16 and bf16.
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(o_.get(), 0xff, o_.bytes(), stream()));
  GENBENCH_CHECK_CUDA(cudaMemsetAsync(lse_.get(), 0xff, lse_.bytes(), stream()));
}

Validation DeviceAttentionCase::check_outputs() {
  GENBENCH_CHECK_CUDA(cudaStreamSynchronize(stream()));
  HostAttentionData d;
  d.shape = s_;
  d.len_q = len_q_;
  d.len_k = len_k_;
  if (s_.varlen) {
    d.start_q = starts_of(len_q_);
    d.start_k = starts_of(len_k_);
  } else {
    d.start_q.resize(static_cast<std::size_t>(s_.batch));
    d.start_k.resize(static_cast<std::size_t>(s_.batch));
    for (std::int64_t b = 0; b < s_.batch; ++b) {
      d.start_q[static_cast<std::size_t>(b)] = b * s_.seqlen_q;
      d.start_k[static_cast<std::size_t>(b)] = b * s_.seqlen_k;
    }
  }
  const auto n_q = static_cast<std::size_t>(rows_q_ * s_.heads * s_.head_dim);
  const auto n_kv = static_cast<std::size_t>(rows_k_ * s_.heads_kv * s_.head_dim);
  const auto n_v = static_cast<std::size_t>(rows_k_ * s_.heads_kv * s_.dv());
  const auto n_o = static_cast<std::size_t>(rows_q_ * s_.heads * s_.dv());
  d.q = download_as_float(q_.get(), s_.dtype, n_q, descale());
  d.k = download_as_float(k_.get(), s_.dtype, n_kv, descale());
  d.v = download_as_float(v_.get(), s_.dtype, n_v, descale());
  d.o = download_as_float(o_.get(), output_dtype(s_.dtype), n_o);
  d.lse = download_as_float(lse_.get(), DType::fp32, static_cast<std::size_t>(rows_q_ * s_.heads));
  return validate_attention(d, seed_);
}

Validation DeviceAttentionCase::validate() {
  poison_outputs();
  execute();
  Validation v = check_outputs();
  if (!v.ok || !s_.graph) return v;

  // Graph mode: replays of the one captured graph, with new lengths when varlen.
  if (s_.varlen) {
    const auto lq = s_.lengths_q(1), lk = s_.lengths_k(1);
    set_lengths(lq, lk);
    poison_outputs();
    execute();
    Validation v2 = check_outputs();
    set_lengths(s_.lengths_q(), s_.lengths_k());
    if (!v2.ok) {
      v2.detail = "graph replay with a second set of lengths: " + v2.detail;
      return v2;
    }
    v.error = std::max(v.error, v2.error);
    v.detail += "; graph replayed with a second set of lengths: " + v2.detail;
  }
  // Replay jitter: 21 replays, each timed alone.
  std::vector<double> ms = time_each_on_stream(
      stream(), 21, [&] { execute(); }, 0);
  for (double& x : ms) x *= 1e3;
  std::sort(ms.begin(), ms.end());
  graph_note_ = strprintf("graph: %d capture(s)%s; 21 replays min %.1f us median %.1f us max %.1f us", captures_,
                          s_.varlen ? ", 2 length sets replayed without re-capture" : "", 1e3 * ms.front(),
                          1e3 * ms[ms.size() / 2], 1e3 * ms.back());
  v.detail += "; " + graph_note_;
  // The variant column holds 64 characters: the short form.
  // Replay times in us below 10 ms, else in ms, so slow replays (e.g. under a sanitizer) stay short.
  auto t = [](double msv) { return msv < 10 ? strprintf("%.0fus", 1e3 * msv) : strprintf("%.0fms", msv); };
  graph_short_ = strprintf("g:%dcap%s p50 %s max %s", captures_, s_.varlen ? "+2len" : "", t(ms[ms.size() / 2]).c_str(),
                           t(ms.back()).c_str());
  return v;
}

std::string DeviceAttentionCase::variant() const {
  std::string v = config_name();
  if (!graph_short_.empty()) v += (v.empty() ? "" : " ") + graph_short_;
  return v;
}

}  // namespace genbench::attention
