// overlap/host on the host backend: the reference CPU GEMM (fp32 accumulation) in a worker
// std::thread while the calling thread runs the MPI collective (MPI stays on the main thread,
// as MPI_THREAD_FUNNELED requires). Lets the overlap pipeline run and be tested without a GPU;
// its numbers are CPU numbers.
//
// Same structure as overlap/cuda: `chunks` GEMM pieces along M; collective piece i starts once
// GEMM piece i is done (chunks = 1: both start together). Alone times are measured in prepare()
// (kAloneReps each, after one untimed call); the in-overlap times are those of every run().
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "comm/comm.h"
#include "core/strings.h"
#include "ops/collective/collective_data.h"
#include "ops/fill.h"
#include "ops/implementation.h"
#include "ops/overlap/overlap.h"
#include "stats/stats.h"

namespace genbench {

namespace {

constexpr int kAloneReps = 10;
constexpr double kHostFlopLimit = 2e10;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  return summarize(std::move(v)).median;
}

class OverlapHostCase final : public Case {
 public:
  OverlapHostCase(const OverlapShape& s, Context& ctx) : s_(s), comm_(ctx.comm), seed_(ctx.seed) {
    const auto& g = s.gemm;
    a_ = ctx.backend.allocate(static_cast<std::size_t>(g.m * g.k) * sizeof(float));
    b_ = ctx.backend.allocate(static_cast<std::size_t>(g.n * g.k) * sizeof(float));
    d_ = ctx.backend.allocate(static_cast<std::size_t>(g.m * g.n) * sizeof(float));
    std::vector<float> tmp(static_cast<std::size_t>(g.m * g.k));
    fill_random(tmp, seed_ + 11, g.dtype);
    std::copy(tmp.begin(), tmp.end(), a_.as<float>());
    tmp.resize(static_cast<std::size_t>(g.n * g.k));
    fill_random(tmp, seed_ + 12, g.dtype);
    std::copy(tmp.begin(), tmp.end(), b_.as<float>());
    send_ = ctx.backend.allocate(static_cast<std::size_t>(s.piece.send_count * s.chunks) * sizeof(float));
    recv_ = ctx.backend.allocate(static_cast<std::size_t>(s.piece.recv_count * s.chunks) * sizeof(float));
    fill_collective();

    gemm_all();  // untimed first calls
    collective_all();
    for (int r = 0; r < kAloneReps; ++r) {
      const auto t0 = Clock::now();
      gemm_all();
      compute_alone_.push_back(since(t0));
    }
    for (int r = 0; r < kAloneReps; ++r) {
      comm_.barrier();
      const auto t0 = Clock::now();
      collective_all();
      comm_alone_.push_back(since(t0));
    }
  }

  void fill_collective() {
    const int r = comm_.rank();
    for (int p = 0; p < s_.chunks; ++p) {
      float* in = send_.as<float>() + p * s_.piece.send_count;
      for (std::int64_t i = 0; i < s_.piece.send_count; ++i) in[i] = collective_input(s_.piece, seed_ + p, r, i);
    }
  }

  // Rows [c * m / chunks, (c + 1) * m / chunks) of D = A B^T (B stored n x k).
  void gemm_piece(int c) {
    const auto& g = s_.gemm;
    const std::int64_t mc = g.m / s_.chunks;
    const float* a = a_.as<float>();
    const float* b = b_.as<float>();
    float* d = d_.as<float>();
    for (std::int64_t i = c * mc; i < (c + 1) * mc; ++i)
      for (std::int64_t j = 0; j < g.n; ++j) {
        float acc = 0;
        for (std::int64_t kk = 0; kk < g.k; ++kk) acc += a[i * g.k + kk] * b[j * g.k + kk];
        d[i * g.n + j] = acc;
      }
  }
  void gemm_all() {
    for (int c = 0; c < s_.chunks; ++c) gemm_piece(c);
  }

  void collective_piece(int p) {
    const int n = comm_.size();
    const float* in = send_.as<float>() + p * s_.piece.send_count;
    float* out = recv_.as<float>() + p * s_.piece.recv_count;
    const int sc = static_cast<int>(s_.piece.send_count), rc = static_cast<int>(s_.piece.recv_count);
    switch (s_.piece.kind) {
      case CollectiveKind::all_reduce:
        GENBENCH_CHECK_MPI(MPI_Allreduce(in, out, rc, MPI_FLOAT, MPI_SUM, comm_.world()));
        break;
      case CollectiveKind::all_gather:
        GENBENCH_CHECK_MPI(MPI_Allgather(in, sc, MPI_FLOAT, out, sc, MPI_FLOAT, comm_.world()));
        break;
      case CollectiveKind::reduce_scatter:
        GENBENCH_CHECK_MPI(MPI_Reduce_scatter_block(in, out, rc, MPI_FLOAT, MPI_SUM, comm_.world()));
        break;
      default:  // all_to_all
        GENBENCH_CHECK_MPI(MPI_Alltoall(in, sc / n, MPI_FLOAT, out, sc / n, MPI_FLOAT, comm_.world()));
        break;
    }
  }
  void collective_all() {
    for (int p = 0; p < s_.chunks; ++p) collective_piece(p);
  }

  void run() override {
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    double t_compute = 0, t_comm = 0;
    const auto t0 = Clock::now();
    std::thread worker([&] {
      const auto c0 = Clock::now();
      for (int c = 0; c < s_.chunks; ++c) {
        gemm_piece(c);
        {
          std::lock_guard<std::mutex> lock(mu);
          done = c + 1;
        }
        cv.notify_one();
      }
      t_compute = since(c0);
    });
    for (int p = 0; p < s_.chunks; ++p) {
      if (s_.chunks > 1) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return done > p; });
      }
      const auto m0 = Clock::now();
      try {
        collective_piece(p);
      } catch (...) {
        worker.join();
        throw;
      }
      t_comm += since(m0);
    }
    worker.join();
    both_.push_back(since(t0));
    compute_in_.push_back(t_compute);
    comm_in_.push_back(t_comm);
  }

  Validation validate() override {
    std::fill(d_.as<float>(), d_.as<float>() + s_.gemm.m * s_.gemm.n, std::nanf(""));
    std::fill(recv_.as<float>(), recv_.as<float>() + s_.piece.recv_count * s_.chunks, std::nanf(""));
    fill_collective();
    run();  // one overlapped execution, checked below
    const auto& g = s_.gemm;
    Validation v;
    v.tolerance = 1e-5;
    double worst = 0;
    const std::int64_t total = g.m * g.n, step = std::max<std::int64_t>(1, total / 256);
    std::vector<std::int64_t> picks;
    for (std::int64_t e = 0; e < total; e += step) picks.push_back(e);
    picks.push_back(total - 1);
    for (const std::int64_t e : picks) {
      const std::int64_t i = e / g.n, j = e % g.n;
      double ref = 0, mag = 0;
      for (std::int64_t kk = 0; kk < g.k; ++kk) {
        const double x =
            static_cast<double>(a_.as<float>()[i * g.k + kk]) * static_cast<double>(b_.as<float>()[j * g.k + kk]);
        ref += x;
        mag += std::fabs(x);
      }
      const double got = d_.as<float>()[e];
      worst = std::max(worst, std::isnan(got) ? INFINITY : std::fabs(got - ref) / std::max(mag, 1.0));
    }
    std::int64_t wrong = 0;
    for (int p = 0; p < s_.chunks; ++p) {
      const auto expected = collective_expected(s_.piece, seed_ + p, comm_.rank());
      const float* out = recv_.as<float>() + p * s_.piece.recv_count;
      std::vector<double> got(out, out + s_.piece.recv_count);
      wrong += count_wrong(s_.piece, expected, got);
    }
    v.error = std::isfinite(worst) ? worst + static_cast<double>(wrong) : INFINITY;
    v.ok = worst <= v.tolerance && wrong == 0;
    v.detail = strprintf(
        "GEMM: max error %.3g on %zu sampled elements (tolerance %.1g); collective: %lld wrong "
        "elements of %lld in %d piece(s)",
        worst, picks.size(), v.tolerance, static_cast<long long>(wrong),
        static_cast<long long>(s_.piece.recv_count * s_.chunks), s_.chunks);
    return v;
  }

  std::vector<std::pair<std::string, double>> extra_metrics() override {
    return overlap_metrics(median_of(compute_alone_), median_of(comm_alone_), median_of(both_), median_of(compute_in_),
                           median_of(comm_in_));
  }

  std::string variant() const override { return strprintf("thread gemm + mpi, %d chunk(s)", s_.chunks); }

 private:
  OverlapShape s_;
  const Comm& comm_;
  std::uint64_t seed_;
  DeviceBuffer a_, b_, d_, send_, recv_;
  std::vector<double> compute_alone_, comm_alone_, both_, compute_in_, comm_in_;
};

class OverlapHost final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = OverlapShape::from(p, ctx.comm.size());
    if (s.priority != StreamPriority::equal) return "stream priorities need the cuda backend";
    if (s.nccl_ctas != 0) return "nccl_ctas needs NCCL (cuda backend)";
    if (s.coll.dtype != DType::fp32)
      return strprintf("MPI has no %s reduction; the host overlap uses fp32", dtype_name(s.coll.dtype));
    if (s.gemm.flops() > kHostFlopLimit)
      return strprintf("%.2g FLOP is beyond the host backend's limit of %.0g", s.gemm.flops(), kHostFlopLimit);
    if (s.piece.send_count > INT32_MAX || s.piece.recv_count > INT32_MAX)
      return "more than 2^31 elements in one MPI call";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<OverlapHostCase>(OverlapShape::from(p, ctx.comm.size()), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_overlap_host() { return std::make_unique<OverlapHost>(); }

}  // namespace genbench
