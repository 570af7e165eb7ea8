// Shared NCCL pieces (nccl_ops.h).
#include "kernels/collective/nccl/nccl_ops.h"

#include <functional>
#include <vector>

#include "backend/cuda/check.h"
#include "backend/cuda/convert.h"
#include "backend/cuda/nccl_comm.h"
#include "ops/collective/collective_data.h"

namespace genbench {

namespace {
constexpr std::int64_t kFullCheck = std::int64_t{1} << 24;
constexpr std::int64_t kBlocks = 64, kBlock = 4096;
}  // namespace

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::fp16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::int32: return ncclInt32;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    case DType::fp8_e4m3: return ncclFloat8e4m3;
    case DType::fp8_e5m2: return ncclFloat8e5m2;
#endif
    default: return ncclFloat32;
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::avg: return ncclAvg;
    default: return ncclSum;
  }
}

void nccl_enqueue(const CollectiveShape& s, const void* in, void* out, ncclComm_t c, cudaStream_t stream, int r,
                  int n) {
  const ncclDataType_t t = nccl_type(s.dtype);
  const std::size_t el = dtype_size(s.dtype);
  const auto count = [](std::int64_t x) { return static_cast<std::size_t>(x); };
  // Inside a group the calls are deferred; the first error ends the group, ncclGroupEnd's
  // result (possibly ncclInProgress on a non-blocking communicator) is the group's.
  const auto group = [](const std::function<ncclResult_t()>& calls) {
    ncclResult_t rc = ncclGroupStart();
    if (rc != ncclSuccess) return rc;
    rc = calls();
    const ncclResult_t end = ncclGroupEnd();
    return rc != ncclSuccess && rc != ncclInProgress ? rc : end;
  };
  switch (s.kind) {
    case CollectiveKind::all_reduce:
      nccl_collective(c, "ncclAllReduce",
                      [&] { return ncclAllReduce(in, out, count(s.recv_count), t, nccl_op(s.redop), c, stream); });
      break;
    case CollectiveKind::all_gather:
      nccl_collective(c, "ncclAllGather", [&] { return ncclAllGather(in, out, count(s.send_count), t, c, stream); });
      break;
    case CollectiveKind::reduce_scatter:
      nccl_collective(c, "ncclReduceScatter",
                      [&] { return ncclReduceScatter(in, out, count(s.recv_count), t, nccl_op(s.redop), c, stream); });
      break;
    case CollectiveKind::broadcast:
      nccl_collective(c, "ncclBroadcast",
                      [&] { return ncclBroadcast(in, out, count(s.recv_count), t, s.root, c, stream); });
      break;
    case CollectiveKind::reduce:
      nccl_collective(c, "ncclReduce",
                      [&] { return ncclReduce(in, out, count(s.recv_count), t, nccl_op(s.redop), s.root, c, stream); });
      break;
    case CollectiveKind::all_to_all: {
      const std::size_t chunk = count(s.send_count / n);
      nccl_collective(c, "ncclSend/ncclRecv group (all_to_all)", [&] {
        return group([&] {
          for (int p = 0; p < n; ++p) {
            const std::size_t off = static_cast<std::size_t>(p) * chunk * el;
            ncclResult_t rc = ncclSend(static_cast<const unsigned char*>(in) + off, chunk, t, p, c, stream);
            if (rc == ncclSuccess || rc == ncclInProgress)
              rc = ncclRecv(static_cast<unsigned char*>(out) + off, chunk, t, p, c, stream);
            if (rc != ncclSuccess && rc != ncclInProgress) return rc;
          }
          return ncclSuccess;
        });
      });
      break;
    }
    case CollectiveKind::send_recv:
      nccl_collective(c, "ncclSend/ncclRecv group (send_recv)", [&] {
        return group([&] {
          ncclResult_t rc = ncclSend(in, count(s.send_count), t, (r + 1) % n, c, stream);
          if (rc == ncclSuccess || rc == ncclInProgress)
            rc = ncclRecv(out, count(s.recv_count), t, (r - 1 + n) % n, c, stream);
          return rc;
        });
      });
      break;
  }
}

std::int64_t nccl_count_wrong(const CollectiveShape& s, std::uint64_t seed, int r, const void* out,
                              std::int64_t* compared) {
  const std::size_t el = dtype_size(s.dtype);
  std::vector<double> expected, got;
  std::vector<unsigned char> host;
  auto take = [&](std::int64_t first, std::int64_t count) {
    host.resize(static_cast<std::size_t>(count) * el);
    GENBENCH_CHECK_CUDA(cudaMemcpy(host.data(),
                                   static_cast<const unsigned char*>(out) + static_cast<std::size_t>(first) * el,
                                   host.size(), cudaMemcpyDeviceToHost));
    for (std::int64_t i = 0; i < count; ++i) {
      got.push_back(convert::element(s.dtype, host.data(), static_cast<std::size_t>(i)));
      if (s.recv_count > kFullCheck) expected.push_back(collective_expected_at(s, seed, r, first + i));
    }
  };
  if (s.recv_count <= kFullCheck) {
    expected = collective_expected(s, seed, r);
    take(0, s.recv_count);
  } else {
    const std::int64_t stride = (s.recv_count - kBlock) / kBlocks;
    for (std::int64_t b = 0; b < kBlocks; ++b) take(b * stride, kBlock);
    take(s.recv_count - kBlock, kBlock);
  }
  if (compared) *compared = static_cast<std::int64_t>(got.size());
  return count_wrong(s, expected, got);
}

}  // namespace genbench
