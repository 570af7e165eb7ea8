// collective/mpi on the host backend: each collective through the matching MPI call on host
// memory. fp32 and int32 reduce; the other types move as raw bytes (no MPI reduction exists
// for fp16/bf16/fp8, so reducing collectives report them unsupported).
#include <cstring>

#include "comm/comm.h"
#include "core/strings.h"
#include "ops/collective/collective.h"
#include "ops/collective/collective_data.h"
#include "ops/implementation.h"

namespace genbench {

namespace {

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
    default: return MPI_SUM;  // avg = sum, then divided locally
  }
}

class CollectiveMpiCase final : public Case {
 public:
  CollectiveMpiCase(const CollectiveShape& s, Context& ctx) : s_(s), comm_(ctx.comm), seed_(ctx.seed) {
    el_ = dtype_size(s.dtype);
    type_ = s.dtype == DType::fp32 ? MPI_FLOAT : s.dtype == DType::int32 ? MPI_INT32_T : MPI_BYTE;
    // One buffer when in place (sized for the larger side), else separate send and receive.
    const std::size_t send_bytes = static_cast<std::size_t>(s.send_count) * el_;
    const std::size_t recv_bytes = static_cast<std::size_t>(s.recv_count) * el_;
    if (s.in_place) {
      recv_ = ctx.backend.allocate(std::max(send_bytes, recv_bytes));
    } else {
      send_ = ctx.backend.allocate(send_bytes);
      recv_ = ctx.backend.allocate(recv_bytes);
    }
    fill();
  }

  // Input data at the place the collective reads it (for in-place, inside the one buffer).
  void fill() {
    const int r = comm_.rank();
    unsigned char* base = s_.in_place ? recv_.as<unsigned char>() : send_.as<unsigned char>();
    std::int64_t offset = 0;  // elements
    if (s_.in_place && s_.kind == CollectiveKind::all_gather) offset = static_cast<std::int64_t>(r) * s_.send_count;
    for (std::int64_t i = 0; i < s_.send_count; ++i) store(base, offset + i, collective_input(s_, seed_, r, i));
  }

  void store(unsigned char* base, std::int64_t i, float v) const {
    const std::size_t at = static_cast<std::size_t>(i) * el_;
    if (s_.dtype == DType::int32) {
      const std::int32_t x = static_cast<std::int32_t>(v);
      std::memcpy(base + at, &x, 4);
    } else if (s_.dtype == DType::fp32) {
      std::memcpy(base + at, &v, 4);
    } else {
      // Types MPI only moves: a byte pattern that identifies the value.
      for (std::size_t b = 0; b < el_; ++b) base[at + b] = static_cast<unsigned char>(v);
    }
  }

  double load(const unsigned char* base, std::int64_t i) const {
    const std::size_t at = static_cast<std::size_t>(i) * el_;
    if (s_.dtype == DType::int32) {
      std::int32_t x;
      std::memcpy(&x, base + at, 4);
      return x;
    }
    if (s_.dtype == DType::fp32) {
      float x;
      std::memcpy(&x, base + at, 4);
      return x;
    }
    for (std::size_t b = 1; b < el_; ++b)
      if (base[at + b] != base[at]) return -1;  // torn element
    return base[at];
  }

  void run() override {
    const int n = comm_.size(), r = comm_.rank();
    void* recv = recv_.get();
    const void* send = s_.in_place ? MPI_IN_PLACE : send_.get();
    const int sc = static_cast<int>(s_.send_count), rc = static_cast<int>(s_.recv_count);
    switch (s_.kind) {
      case CollectiveKind::all_reduce:
        GENBENCH_CHECK_MPI(MPI_Allreduce(send, recv, rc, type_, mpi_op(s_.redop), comm_.world()));
        break;
      case CollectiveKind::all_gather:
        GENBENCH_CHECK_MPI(MPI_Allgather(send, sc, type_, recv, sc, type_, comm_.world()));
        break;
      case CollectiveKind::reduce_scatter:
        GENBENCH_CHECK_MPI(MPI_Reduce_scatter_block(send, recv, rc, type_, mpi_op(s_.redop), comm_.world()));
        break;
      case CollectiveKind::all_to_all:
        GENBENCH_CHECK_MPI(MPI_Alltoall(send, sc / n, type_, recv, sc / n, type_, comm_.world()));
        break;
      case CollectiveKind::broadcast:
        if (!s_.in_place && r == s_.root) std::memcpy(recv, send_.get(), static_cast<std::size_t>(sc) * el_);
        GENBENCH_CHECK_MPI(MPI_Bcast(recv, rc, type_, s_.root, comm_.world()));
        break;
      case CollectiveKind::reduce:
        GENBENCH_CHECK_MPI(MPI_Reduce(s_.in_place && r != s_.root ? recv : send, recv, rc, type_, mpi_op(s_.redop),
                                      s_.root, comm_.world()));
        break;
      case CollectiveKind::send_recv: {
        // Ring, as nccl-tests: send to the next rank, receive from the previous one.
        const void* sbuf = s_.in_place ? recv : send_.get();
        if (s_.in_place) {
          GENBENCH_CHECK_MPI(MPI_Sendrecv_replace(recv, rc, type_, (r + 1) % n, 0, (r - 1 + n) % n, 0, comm_.world(),
                                                  MPI_STATUS_IGNORE));
        } else {
          GENBENCH_CHECK_MPI(MPI_Sendrecv(sbuf, sc, type_, (r + 1) % n, 0, recv, rc, type_, (r - 1 + n) % n, 0,
                                          comm_.world(), MPI_STATUS_IGNORE));
        }
        break;
      }
    }
    if (s_.redop == ReduceOp::avg && is_reduction(s_.kind) && (s_.kind != CollectiveKind::reduce || r == s_.root)) {
      float* out = recv_.as<float>();
      if (s_.dtype == DType::fp32)
        for (int i = 0; i < rc; ++i) out[i] /= static_cast<float>(n);
    }
  }

  Validation validate() override {
    fill();
    if (!s_.in_place) std::memset(recv_.get(), 0xff, recv_.bytes());  // poison
    run();
    Validation v;
    const bool checked = s_.kind != CollectiveKind::reduce || comm_.rank() == s_.root;
    std::int64_t wrong = 0;
    if (checked) {
      const auto expected = collective_expected(s_, seed_, comm_.rank());
      std::vector<double> got(expected.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        got[i] = load(recv_.as<unsigned char>(), static_cast<std::int64_t>(i));
      if (s_.dtype != DType::fp32 && s_.dtype != DType::int32) {
        // Raw-byte types carry the low byte of the expected value.
        std::vector<double> exp_bytes(expected.size());
        for (std::size_t i = 0; i < expected.size(); ++i) exp_bytes[i] = static_cast<unsigned char>(expected[i]);
        wrong = count_wrong(s_, exp_bytes, got);
      } else {
        wrong = count_wrong(s_, expected, got);
      }
    }
    v.error = static_cast<double>(wrong);
    v.ok = wrong == 0;
    v.detail =
        strprintf("%lld wrong elements of %lld", static_cast<long long>(wrong), static_cast<long long>(s_.recv_count));
    return v;
  }

 private:
  CollectiveShape s_;
  const Comm& comm_;
  std::uint64_t seed_;
  std::size_t el_ = 4;
  MPI_Datatype type_ = MPI_BYTE;
  DeviceBuffer send_, recv_;
};

class CollectiveMpi final : public Implementation {
 public:
  std::string can_implement(const Point& p, const Context& ctx) const override {
    const auto s = CollectiveShape::from(p, ctx.comm.size());
    if (s.graph) return "graph mode needs the cuda backend";
    if (is_reduction(s.kind) && s.dtype != DType::fp32 && s.dtype != DType::int32)
      return strprintf("MPI has no %s reduction", dtype_name(s.dtype));
    if (s.redop == ReduceOp::avg && s.dtype == DType::int32 && is_reduction(s.kind))
      return "avg of int32 is not defined";
    if (s.send_count > INT32_MAX || s.recv_count > INT32_MAX) return "more than 2^31 elements in one MPI call";
    return "";
  }
  std::unique_ptr<Case> prepare(const Point& p, Context& ctx) const override {
    return std::make_unique<CollectiveMpiCase>(CollectiveShape::from(p, ctx.comm.size()), ctx);
  }
};

}  // namespace

std::unique_ptr<Implementation> make_collective_mpi() { return std::make_unique<CollectiveMpi>(); }

}  // namespace genbench
