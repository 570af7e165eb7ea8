// overlap/cuda on the cuda backend: a cuBLASLt GEMM on a compute stream and an NCCL collective
// on a communication stream, both forked from and joined back into the backend's stream, on
// which the runner times run(). GEMM and collective are those of gemm/cublaslt and
// collective/nccl (kernels/gemm/cublaslt/lt_matmul.h, kernels/collective/nccl/nccl_ops.h).
//
//   main:    fork ------------------------------------------------ wait(c1, m1) join
//   compute: wait(fork) c0 gemm[0] done[0] gemm[1] done[1] ... c1
//   comm:    wait(fork) [wait(done[0])] m0 coll[0] m1 [wait(done[1])] m0 coll[1] m1 ...
//
// chunks = 1: the GEMM and the whole collective start together. chunks = c: the GEMM is c
// pieces of m/c rows (A and D rows are contiguous) and the collective c pieces of its buffer;
// collective piece i waits for GEMM piece i. The collective works on its own buffers (not on
// D), so its data and validation do not depend on the GEMM.
//
// Streams: created with cudaStreamCreateWithPriority; `priority` gives the compute stream, the
// comm stream or neither the device's greatest priority (the other gets the least).
// NCCL: the communicator for nccl_ctas (src/backend/cuda/nccl_comm.h; minCTAs = maxCTAs).
// Host waits for NCCL work poll (wait_stream / wait_event, nccl_comm.h), all outside the timed
// run(): a stuck collective is named to the watchdog and asynchronous NCCL errors surface.
//
// Per point (extra columns): the GEMM alone and the collective alone (all pieces, on their own
// streams, kAloneReps event-timed runs each after warm-up, measured in prepare(); the
// collective after a barrier, as the runner starts samples); and from every run() since the
// validation (warm-up included): fork -> join, c0 -> c1 (the GEMM inside the overlap) and the
// sum over pieces of m0 -> m1 (each piece's collective from the moment its wait is satisfied).
// Medians of each.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/nccl_comm.h"
#include "comm/comm.h"
#include "core/strings.h"
#include "kernels/collective/nccl/device_fill.h"
#include "kernels/collective/nccl/nccl_ops.h"
#include "kernels/common/device_fill.h"
#include "kernels/gemm/cublaslt/lt_matmul.h"
#include "ops/implementation.h"
#include "ops/overlap/overlap.h"
#include "stats/stats.h"

namespace genbench {

namespace {

constexpr int kAloneReps = 20;
constexpr int kCandidates = 8;
constexpr float kScaleA = 0.75f, kScaleB = 1.25f;  // fp8 per-tensor scale factors
constexpr std::size_t kAlign = 256;

std::size_t padded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

double median_of(std::vector<double> v) { return v.empty() ? std::nan("") : summarize(std::move(v)).median; }

double elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  GENBENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1e-3;
}

cudaEvent_t new_event(bool timing) {
  cudaEvent_t e = nullptr;
  GENBENCH_CHECK_CUDA(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return e;
}

class OverlapCudaCase final : public Case {
 public:
  OverlapCudaCase(const OverlapShape& s, Context& ctx)
      : s_(s), comm_(ctx.comm), seed_(ctx.seed), main_(cuda_backend_of(ctx.backend).stream()) {
    try {
      setup(ctx);
    } catch (...) {
      release();
      throw;
    }
  }
  ~OverlapCudaCase() override { release(); }
  OverlapCudaCase(const OverlapCudaCase&) = delete;
  OverlapCudaCase& operator=(const OverlapCudaCase&) = delete;

  void setup(Context& ctx) {
    int least = 0, greatest = 0;
    GENBENCH_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    const int p_compute = s_.priority == StreamPriority::compute_high ? greatest : least;
    const int p_comm = s_.priority == StreamPriority::comm_high ? greatest : least;
    GENBENCH_CHECK_CUDA(cudaStreamCreateWithPriority(&compute_, cudaStreamNonBlocking, p_compute));
    GENBENCH_CHECK_CUDA(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, p_comm));
    prio_ = strprintf("prio compute %d comm %d", p_compute, p_comm);

    // GEMM: A (m x k), B (n x k), D (m x n), row-major; piece c = rows [c m/chunks, (c+1) m/chunks).
    const auto& g = s_.gemm;
    const std::size_t in = dtype_size(g.dtype), out = dtype_size(lt_output_type(g.dtype));
    a_ = ctx.backend.allocate(padded(static_cast<std::size_t>(g.m * g.k) * in));
    b_ = ctx.backend.allocate(padded(static_cast<std::size_t>(g.n * g.k) * in));
    d_ = ctx.backend.allocate(padded(static_cast<std::size_t>(g.m * g.n) * out));
    piece_a_ = static_cast<std::size_t>(g.m / s_.chunks * g.k) * in;
    piece_d_ = static_cast<std::size_t>(g.m / s_.chunks * g.n) * out;
    const std::size_t ws = lt_workspace_bytes();
    if (ws) ws_ = ctx.backend.allocate(ws);
    fill_normal_device(a_.get(), g.m * g.k, seed_ + 11, g.dtype, 1.0f, main_);
    fill_normal_device(b_.get(), g.n * g.k, seed_ + 12, g.dtype, 1.0f, main_);
    const float* sa = nullptr;
    const float* sb = nullptr;
    if (lt_is_fp8(g.dtype)) {
      scales_ = ctx.backend.allocate(2 * kAlign);
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.get(), &kScaleA, sizeof(float), cudaMemcpyHostToDevice, main_));
      GENBENCH_CHECK_CUDA(cudaMemcpyAsync(scales_.as<unsigned char>() + kAlign, &kScaleB, sizeof(float),
                                          cudaMemcpyHostToDevice, main_));
      sa = scales_.as<float>();
      sb = reinterpret_cast<const float*>(scales_.as<unsigned char>() + kAlign);
    }

    // Collective: `chunks` pieces side by side in one send and one receive buffer.
    el_ = dtype_size(s_.piece.dtype);
    send_ = ctx.backend.allocate(static_cast<std::size_t>(s_.piece.send_count * s_.chunks) * el_);
    recv_ = ctx.backend.allocate(static_cast<std::size_t>(s_.piece.recv_count * s_.chunks) * el_);
    fill_collective();
    wait_stream(main_);

    GemmShape piece = g;
    piece.m = g.m / s_.chunks;
    gemm_ = std::make_unique<LtGemm>(piece, ws ? ws_.get() : nullptr, ws, sa, sb);
    gemm_->tune(a_.get(), b_.get(), d_.get(), compute_, kCandidates);
    nccl_ = nccl_comm_for(comm_, s_.nccl_ctas);

    for (int c = 0; c < s_.chunks; ++c) done_.push_back(new_event(false));
    c0_ = new_event(true);
    c1_ = new_event(true);

    // Alone: the GEMM (all pieces) on its stream, then the collective (all pieces) on its own.
    auto time_alone = [&](cudaStream_t st, bool barrier, int warm, auto&& body) {
      std::vector<double> t;
      for (int r = -warm; r < kAloneReps; ++r) {
        if (barrier) comm_.barrier();
        GENBENCH_CHECK_CUDA(cudaEventRecord(c0_, st));
        body();
        GENBENCH_CHECK_CUDA(cudaEventRecord(c1_, st));
        wait_event(c1_);
        if (r >= 0) t.push_back(elapsed(c0_, c1_));
      }
      return t;
    };
    compute_alone_ = time_alone(compute_, false, 1, [&] {
      for (int c = 0; c < s_.chunks; ++c) gemm_piece(c);
    });
    comm_alone_ = time_alone(comm_stream_, true, 2, [&] {
      for (int p = 0; p < s_.chunks; ++p) collective_piece(p);
    });
  }

  void release() noexcept {
    // Polled: a collective a peer never joins leaves this rank to the watchdog instead of
    // blocking inside CUDA; a failed wait is dropped (the streams are destroyed anyway).
    for (cudaStream_t st : {compute_, comm_stream_})
      if (st) {
        try {
          wait_stream(st);
        } catch (const std::exception&) {
          cudaGetLastError();
        }
      }
    for (auto& r : pending_) free_.push_back(std::move(r));
    pending_.clear();
    for (auto& r : free_)
      for (cudaEvent_t e : r) cudaEventDestroy(e);
    free_.clear();
    for (cudaEvent_t e : done_) cudaEventDestroy(e);
    done_.clear();
    for (cudaEvent_t* e : {&c0_, &c1_})
      if (*e) {
        cudaEventDestroy(*e);
        *e = nullptr;
      }
    for (cudaStream_t* st : {&compute_, &comm_stream_})
      if (*st) {
        cudaStreamDestroy(*st);
        *st = nullptr;
      }
  }

  void fill_collective() {
    for (int p = 0; p < s_.chunks; ++p)
      fill_collective_device(send_.as<unsigned char>() + static_cast<std::size_t>(p * s_.piece.send_count) * el_,
                             s_.piece, seed_ + static_cast<std::uint64_t>(p), comm_.rank(), s_.piece.send_count, main_);
  }

  void gemm_piece(int c) {
    gemm_->run(a_.as<unsigned char>() + static_cast<std::size_t>(c) * piece_a_, b_.get(),
               d_.as<unsigned char>() + static_cast<std::size_t>(c) * piece_d_, compute_);
  }

  void collective_piece(int p) {
    nccl_enqueue(s_.piece, send_.as<unsigned char>() + static_cast<std::size_t>(p * s_.piece.send_count) * el_,
                 recv_.as<unsigned char>() + static_cast<std::size_t>(p * s_.piece.recv_count) * el_, nccl_,
                 comm_stream_, comm_.rank(), comm_.size());
  }

  // Timing events of one run(): fork, join, c0, c1, then m0/m1 of each piece.
  std::vector<cudaEvent_t> take_record() {
    if (!free_.empty()) {
      auto r = std::move(free_.back());
      free_.pop_back();
      return r;
    }
    std::vector<cudaEvent_t> r;
    for (int i = 0; i < 4 + 2 * s_.chunks; ++i) r.push_back(new_event(true));
    return r;
  }

  // Reads the finished records (all of them when `wait`), oldest first.
  void harvest(bool wait) {
    while (!pending_.empty()) {
      auto& r = pending_.front();
      if (wait) {
        wait_event(r[1]);
      } else {
        const cudaError_t q = cudaEventQuery(r[1]);
        if (q == cudaErrorNotReady) break;
        GENBENCH_CHECK_CUDA(q);
      }
      both_.push_back(elapsed(r[0], r[1]));
      compute_in_.push_back(elapsed(r[2], r[3]));
      double comm = 0;
      for (int p = 0; p < s_.chunks; ++p)
        comm += elapsed(r[4 + 2 * static_cast<std::size_t>(p)], r[5 + 2 * static_cast<std::size_t>(p)]);
      comm_in_.push_back(comm);
      free_.push_back(std::move(r));
      pending_.pop_front();
    }
  }

  void run() override {
    harvest(false);
    auto r = take_record();
    GENBENCH_CHECK_CUDA(cudaEventRecord(r[0], main_));
    GENBENCH_CHECK_CUDA(cudaStreamWaitEvent(compute_, r[0], 0));
    GENBENCH_CHECK_CUDA(cudaStreamWaitEvent(comm_stream_, r[0], 0));
    GENBENCH_CHECK_CUDA(cudaEventRecord(r[2], compute_));
    for (int c = 0; c < s_.chunks; ++c) {
      gemm_piece(c);
      if (s_.chunks > 1) GENBENCH_CHECK_CUDA(cudaEventRecord(done_[static_cast<std::size_t>(c)], compute_));
    }
    GENBENCH_CHECK_CUDA(cudaEventRecord(r[3], compute_));
    for (int p = 0; p < s_.chunks; ++p) {
      if (s_.chunks > 1) GENBENCH_CHECK_CUDA(cudaStreamWaitEvent(comm_stream_, done_[static_cast<std::size_t>(p)], 0));
      GENBENCH_CHECK_CUDA(cudaEventRecord(r[4 + 2 * static_cast<std::size_t>(p)], comm_stream_));
      collective_piece(p);
      GENBENCH_CHECK_CUDA(cudaEventRecord(r[5 + 2 * static_cast<std::size_t>(p)], comm_stream_));
    }
    GENBENCH_CHECK_CUDA(cudaStreamWaitEvent(main_, r[3], 0));
    GENBENCH_CHECK_CUDA(cudaStreamWaitEvent(main_, r[3 + 2 * static_cast<std::size_t>(s_.chunks)], 0));
    GENBENCH_CHECK_CUDA(cudaEventRecord(r[1], main_));
    pending_.push_back(std::move(r));
  }

  // One overlapped execution on fresh inputs and poisoned outputs; the GEMM is checked on
  // sampled elements (gemm/cublaslt's check), every collective piece with count_wrong.
  Validation validate() override {
    const auto& g = s_.gemm;
    const DType od = lt_output_type(g.dtype);
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(d_.get(), 0xff, static_cast<std::size_t>(g.m * g.n) * dtype_size(od), main_));
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(recv_.get(), 0xff, recv_.bytes(), main_));
    fill_collective();
    run();
    wait_stream(main_);
    harvest(true);
    const double scale = lt_is_fp8(g.dtype) ? static_cast<double>(kScaleA) * static_cast<double>(kScaleB) : 1.0;
    Validation v = lt_check_sampled(g, a_.get(), b_.get(), d_.get(), scale);
    std::int64_t wrong = 0, compared = 0;
    for (int p = 0; p < s_.chunks; ++p) {
      std::int64_t n = 0;
      wrong +=
          nccl_count_wrong(s_.piece, seed_ + static_cast<std::uint64_t>(p), comm_.rank(),
                           recv_.as<unsigned char>() + static_cast<std::size_t>(p * s_.piece.recv_count) * el_, &n);
      compared += n;
    }
    v.detail = "GEMM: " + v.detail +
               strprintf("; collective: %lld wrong elements of %lld compared in %d piece(s)",
                         static_cast<long long>(wrong), static_cast<long long>(compared), s_.chunks);
    v.error += static_cast<double>(wrong);
    v.ok = v.ok && wrong == 0;
    return v;
  }

  std::vector<std::pair<std::string, double>> extra_metrics() override {
    harvest(true);
    return overlap_metrics(median_of(compute_alone_), median_of(comm_alone_), median_of(both_), median_of(compute_in_),
                           median_of(comm_in_));
  }

  std::string variant() const override { return gemm_->variant() + "; " + prio_; }

 private:
  OverlapShape s_;
  const Comm& comm_;
  std::uint64_t seed_;
  cudaStream_t main_;
  cudaStream_t compute_ = nullptr, comm_stream_ = nullptr;
  std::string prio_;
  DeviceBuffer a_, b_, d_, ws_, scales_, send_, recv_;
  std::size_t piece_a_ = 0, piece_d_ = 0, el_ = 2;
  std::unique_ptr<LtGemm> gemm_;
  ncclComm_t nccl_ = nullptr;
  cudaEvent_t c0_ = nullptr, c1_ = nullptr;  // alone timing
  std::vector<cudaEvent_t> done_;
  std::deque<std::vector<cudaEvent_t>> pending_;
  std::vector<std::vector<cudaEvent_t>> free_;
  std::vector<double> compute_alone_, comm_alone_, both_, compute_in_, comm_in_;
};

class OverlapCuda final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = OverlapShape::from(p, ctx.comm.size());
    const auto& prop = cuda_backend_of(ctx.backend).properties();
    if (lt_is_fp8(s.gemm.dtype) && prop.major * 10 + prop.minor < 89)
      return strprintf("fp8 matmul needs compute capability 8.9 or newer (this GPU is %d.%d)", prop.major, prop.minor);
    if (s.nccl_ctas > 0 && nccl_version_code() < 21700)
      return "nccl_ctas needs NCCL 2.17 or newer (ncclConfig_t CTA limits)";
    GemmShape piece = s.gemm;
    piece.m = s.gemm.m / s.chunks;
    LtProblem lt;
    static const float dummy = 1.0f;  // fp8 needs scale pointers set; the heuristic never reads them
    const float* sp = lt_is_fp8(piece.dtype) ? &dummy : nullptr;
    lt.build(piece, lt_workspace_bytes(), sp, sp);
    std::string why;
    if (lt.candidates(1, &why).empty())
      return strprintf("cuBLASLt has no %s algorithm for m=%lld n=%lld k=%lld%s", dtype_name(piece.dtype),
                       static_cast<long long>(piece.m), static_cast<long long>(piece.n),
                       static_cast<long long>(piece.k), why.empty() ? "" : (" [" + why + "]").c_str());
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<OverlapCudaCase>(OverlapShape::from(p, ctx.comm.size()), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_overlap_cuda() { return std::make_unique<OverlapCuda>(); }

}  // namespace genbench
