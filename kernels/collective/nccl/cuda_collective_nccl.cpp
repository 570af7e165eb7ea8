// collective/nccl on the cuda backend: each collective through NCCL on device buffers, one
// communicator over all ranks (src/backend/cuda/nccl_comm.h) kept for the whole run.
//   all_reduce, all_gather, reduce_scatter, broadcast, reduce: the NCCL call of that name
//   all_to_all: n grouped ncclSend/ncclRecv pairs, one chunk per peer
//   send_recv:  ring as nccl-tests: send to rank+1, receive from rank-1, grouped
// In-place follows nccl-tests: all_gather's input is this rank's slice of the output, and
// reduce_scatter's output is this rank's slice of the input. all_to_all and send_recv have no
// in-place form here (peers would overwrite data not yet sent): reported unsupported.
//
// mode=graph: K operations (10..100, enough for a replay of >= 200 us; the same K on every
// rank) are captured in prepare(); run() replays them and iterations_per_run() returns K.
//
// Host waits (prepare, validate) poll the stream (wait_stream, src/backend/cuda/nccl_comm.h)
// instead of blocking in cudaStreamSynchronize: the watchdog's record names the collective and
// its number, and asynchronous NCCL errors end the wait. run() itself never waits.
//
// Verification: inputs are written on the device from collective_input(); the result is
// copied back and compared with collective_expected() by count_wrong(). Buffers of more than
// kFullCheck elements are compared on kBlocks evenly spaced blocks of kBlock elements plus the
// last block (the expected values of those elements only). Validation::error is the count of
// wrong elements.
#include <algorithm>
#include <cstring>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/graph.h"
#include "backend/cuda/nccl_comm.h"
#include "comm/comm.h"
#include "core/strings.h"
#include "kernels/collective/nccl/device_fill.h"
#include "kernels/collective/nccl/nccl_ops.h"
#include "ops/collective/collective.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

constexpr double kGraphTargetSeconds = 200e-6;

bool nccl_has_fp8() { return nccl_version_code() >= 22400; }

class NcclCase final : public Case {
 public:
  NcclCase(const CollectiveShape& s, Context& ctx)
      : s_(s), comm_(ctx.comm), seed_(ctx.seed), stream_(cuda_backend_of(ctx.backend).stream()) {
    el_ = dtype_size(s.dtype);
    const std::size_t send_bytes = static_cast<std::size_t>(s.send_count) * el_;
    const std::size_t recv_bytes = static_cast<std::size_t>(s.recv_count) * el_;
    if (s.in_place) {
      recv_ = ctx.backend.allocate(std::max(send_bytes, recv_bytes));
    } else {
      send_ = ctx.backend.allocate(send_bytes);
      recv_ = ctx.backend.allocate(recv_bytes);
    }
    nccl_ = nccl_comm_for(comm_);
    fill();
    wait_stream(stream_);
    if (s.graph) {
      // One operation's time, the slowest rank's, sets K: every rank must capture the same K.
      const double t = comm_.max(time_on_stream(stream_, 3, [&] { enqueue(); }));
      const int k = graph_iterations(t, kGraphTargetSeconds, 10, 100);
      graph_.capture(stream_, k, [&](int) { enqueue(); });
    }
  }

  unsigned char* in_ptr() const {
    if (!s_.in_place) return send_.as<unsigned char>();
    unsigned char* base = recv_.as<unsigned char>();
    if (s_.kind == CollectiveKind::all_gather) base += static_cast<std::size_t>(comm_.rank() * s_.send_count) * el_;
    return base;
  }
  unsigned char* out_ptr() const {
    unsigned char* base = recv_.as<unsigned char>();
    if (s_.in_place && s_.kind == CollectiveKind::reduce_scatter)
      base += static_cast<std::size_t>(comm_.rank() * s_.recv_count) * el_;
    return base;
  }

  void fill() { fill_collective_device(in_ptr(), s_, seed_, comm_.rank(), s_.send_count, stream_); }

  void enqueue() { nccl_enqueue(s_, in_ptr(), out_ptr(), nccl_, stream_, comm_.rank(), comm_.size()); }

  void run() override {
    if (!graph_.empty()) graph_.launch(stream_);
    else enqueue();
  }

  int iterations_per_run() const override { return graph_.empty() ? 1 : graph_.iterations(); }
  std::string variant() const override { return graph_.empty() ? "" : strprintf("graph x%d", graph_.iterations()); }

  // One eager operation on fresh inputs (a graph replays K operations, which would reduce an
  // in-place buffer K times; the graph holds the same call).
  Validation validate() override {
    fill();
    if (!s_.in_place) GENBENCH_CHECK_CUDA(cudaMemsetAsync(recv_.get(), 0xff, recv_.bytes(), stream_));
    enqueue();
    wait_stream(stream_);
    Validation v;
    const bool checked = s_.kind != CollectiveKind::reduce || comm_.rank() == s_.root;
    std::int64_t wrong = 0, compared = 0;
    if (checked) wrong = nccl_count_wrong(s_, seed_, comm_.rank(), out_ptr(), &compared);
    v.error = static_cast<double>(wrong);
    v.ok = wrong == 0;
    v.detail = strprintf("%lld wrong elements of %lld compared (of %lld)", static_cast<long long>(wrong),
                         static_cast<long long>(compared), static_cast<long long>(s_.recv_count));
    return v;
  }

 private:
  CollectiveShape s_;
  const Comm& comm_;
  std::uint64_t seed_;
  cudaStream_t stream_;
  ncclComm_t nccl_ = nullptr;
  std::size_t el_ = 4;
  DeviceBuffer send_, recv_;
  CapturedGraph graph_;
};

class CollectiveNccl final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = CollectiveShape::from(p, ctx.comm.size());
    if (s.in_place && (s.kind == CollectiveKind::all_to_all || s.kind == CollectiveKind::send_recv))
      return strprintf("%s has no in-place form through ncclSend/ncclRecv", collective_name(s.kind));
    if (s.dtype == DType::fp8_e4m3 || s.dtype == DType::fp8_e5m2) {
      if (!nccl_has_fp8() || NCCL_VERSION_CODE < NCCL_VERSION(2, 24, 0))
        return "fp8 collectives need NCCL 2.24 or newer";
      const auto& prop = cuda_backend_of(ctx.backend).properties();
      if (is_reduction(s.kind) && prop.major < 9) return "NCCL reduces fp8 only on compute capability 9.0 or newer";
    }
    if (s.dtype != DType::fp32 && s.dtype != DType::fp16 && s.dtype != DType::bf16 && s.dtype != DType::int32 &&
        s.dtype != DType::fp8_e4m3 && s.dtype != DType::fp8_e5m2)
      return strprintf("NCCL has no %s type here", dtype_name(s.dtype));
    if (s.redop == ReduceOp::avg && s.dtype == DType::int32 && is_reduction(s.kind))
      return "avg of int32 is not defined (integer division)";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<NcclCase>(CollectiveShape::from(p, ctx.comm.size()), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_collective_nccl() { return std::make_unique<CollectiveNccl>(); }

}  // namespace genbench
