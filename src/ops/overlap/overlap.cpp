#include "ops/overlap/overlap.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace genbench {

namespace {

const std::vector<std::string> kCollectives = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
const std::vector<std::string> kPriorities = {"equal", "comm_high", "compute_high"};

// The collective op's point for the same collective (sum, out of place, eager).
Point collective_point(const Point& p, std::int64_t bytes) {
  namespace o = overlap_axis;
  Point c;
  c.values.resize(collective_axis::count);
  c.values[collective_axis::collective] = p.choice(o::collective);
  c.values[collective_axis::bytes] = bytes;
  c.values[collective_axis::dtype] = p.choice(o::coll_dtype);
  c.values[collective_axis::redop] = std::string("sum");
  c.values[collective_axis::in_place] = std::int64_t{0};
  c.values[collective_axis::root] = std::int64_t{0};
  c.values[collective_axis::mode] = std::string("eager");
  return c;
}

}  // namespace

CollectiveShape collective_piece(const CollectiveShape& whole, int chunks) {
  CollectiveShape s = whole;
  const std::int64_t c = std::max(1, chunks), n = whole.world;
  switch (whole.kind) {
    case CollectiveKind::all_gather:
      s.send_count = whole.send_count / c;
      s.recv_count = s.send_count * n;
      break;
    case CollectiveKind::reduce_scatter:
      s.recv_count = whole.recv_count / c;
      s.send_count = s.recv_count * n;
      break;
    case CollectiveKind::all_to_all: s.send_count = s.recv_count = (whole.send_count / n / c) * n; break;
    default: s.send_count = s.recv_count = whole.send_count / c;
  }
  s.bytes = static_cast<std::int64_t>(s.size_bytes());
  return s;
}

OverlapShape OverlapShape::from(const Point& p, int world_size) {
  namespace o = overlap_axis;
  OverlapShape s{};
  s.gemm.m = p.integer(o::m);
  s.gemm.n = p.integer(o::n);
  s.gemm.k = p.integer(o::k);
  s.gemm.batch = 1;
  s.gemm.trans_a = false;
  s.gemm.trans_b = true;  // B stored n x k: the layout every cuBLASLt type has (fp8 included)
  s.gemm.dtype = *parse_dtype(p.choice(o::dtype));
  s.gemm.cold = false;
  s.gemm.graph = false;
  s.coll = CollectiveShape::from(collective_point(p, p.integer(o::bytes)), world_size);
  s.chunks = static_cast<int>(p.integer(o::chunks));
  s.piece = collective_piece(s.coll, s.chunks);
  const std::string& pr = p.choice(o::priority);
  s.priority = pr == "comm_high"      ? StreamPriority::comm_high
               : pr == "compute_high" ? StreamPriority::compute_high
                                      : StreamPriority::equal;
  s.nccl_ctas = static_cast<int>(p.integer(o::nccl_ctas));
  return s;
}

std::vector<std::pair<std::string, double>> overlap_metrics(double tc, double tm, double tb, double tco, double tmo) {
  namespace om = overlap_metric;
  const double nan = std::nan("");
  const double lo = std::min(tc, tm);
  return {{om::t_compute, tc},
          {om::t_comm, tm},
          {om::t_both, tb},
          {om::t_compute_overlap, tco},
          {om::t_comm_overlap, tmo},
          {om::efficiency, lo > 0 ? (tc + tm - tb) / lo : nan},
          {om::compute_slowdown, tc > 0 ? tco / tc : nan},
          {om::comm_slowdown, tm > 0 ? tmo / tm : nan}};
}

namespace {

class OverlapOp final : public Op {
 public:
  std::string name() const override { return "overlap"; }

  std::vector<AxisSpec> define_axes() const override {
    {
      std::vector<AxisSpec> v(overlap_axis::count);
      namespace o = overlap_axis;
      const std::int64_t big = std::int64_t{1} << 20;
      v[o::compute] = {"compute", AxisType::choice, std::string("gemm"), {"gemm"}, 0, 0, {}, "the compute operation"};
      v[o::m] = {"m", AxisType::size, std::int64_t{8192}, {}, 1, big, {}, "GEMM rows of A and D (split into chunks)"};
      v[o::n] = {"n", AxisType::size, std::int64_t{8192}, {}, 1, big, {}, "GEMM columns of D"};
      v[o::k] = {"k", AxisType::size, std::int64_t{8192}, {}, 1, big, {}, "GEMM reduction dimension"};
      v[o::dtype] = {"dtype",
                     AxisType::choice,
                     std::string("bf16"),
                     {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3"},
                     0,
                     0,
                     {},
                     "GEMM input precision (A row-major m x k, B stored n x k)"};
      v[o::collective] = {"collective", AxisType::choice, std::string("all_reduce"), kCollectives, 0, 0,
                          {},           "the collective"};
      v[o::bytes] = {"bytes",
                     AxisType::size,
                     std::int64_t{1} << 28,
                     {},
                     1,
                     std::int64_t{1} << 40,
                     {},
                     "collective size (nccl-tests convention)"};
      v[o::coll_dtype] = {"coll_dtype",
                          AxisType::choice,
                          std::string("bf16"),
                          {"fp32", "fp16", "bf16"},
                          0,
                          0,
                          {},
                          "collective element type (sum)"};
      v[o::priority] = {"priority",
                        AxisType::choice,
                        std::string("equal"),
                        kPriorities,
                        0,
                        0,
                        {},
                        "stream priorities: equal, comm_high (collective stream higher), compute_high"};
      v[o::nccl_ctas] = {"nccl_ctas",
                         AxisType::integer,
                         std::int64_t{0},
                         {},
                         0,
                         64,
                         {},
                         "CTAs (SMs) NCCL runs with: minCTAs = maxCTAs of its communicator; 0 = NCCL's default"};
      v[o::chunks] = {"chunks",
                      AxisType::integer,
                      std::int64_t{1},
                      {},
                      1,
                      64,
                      {},
                      "pipeline pieces: GEMM split along M, piece i's collective overlaps piece i+1's GEMM"};
      return v;
    }
  }

  std::string check(const Point& p, int) const override {
    namespace o = overlap_axis;
    const std::int64_t m = p.integer(o::m), c = p.integer(o::chunks);
    if (m % c != 0)
      return strprintf("m=%lld is not a multiple of chunks=%lld", static_cast<long long>(m), static_cast<long long>(c));
    return "";
  }

  std::string skip_reason(const Point& p, int world_size) const override {
    const auto s = OverlapShape::from(p, world_size);
    if (s.piece.send_count == 0 || s.piece.recv_count == 0)
      return strprintf("%lld bytes in %d chunk(s) is less than one %s element per rank and chunk",
                       static_cast<long long>(s.coll.bytes), s.chunks, dtype_name(s.coll.dtype));
    return "";
  }

  // FLOPs of the GEMM and bytes of the collective; no bus bandwidth (the time is both).
  Work work(const Point& p, int world_size) const override {
    const auto s = OverlapShape::from(p, world_size);
    Work w;
    w.flops = s.gemm.flops();
    w.bytes = s.piece.size_bytes() * s.chunks;
    return w;
  }

  std::string summary() const override {
    return "a GEMM and a collective on two streams: how much of the collective hides behind the GEMM";
  }

  std::vector<MetricSpec> metrics() const override {
    return {{"tflops", "TFLOP/s", "the GEMM's FLOPs over the time of GEMM and collective together",
             [](const Work& w, double t) { return w.flops / t / 1e12; }}};
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "GEMM and collective overlapped";
    h.x = "bytes";
    h.facets = {"collective", "priority"};
    h.compare_metric = overlap_metric::efficiency;
    return h;
  }

  std::vector<std::pair<std::string, std::string>> extra_columns() const override {
    namespace om = overlap_metric;
    return {{om::t_compute, "s"},      {om::t_comm, "s"},    {om::t_both, "s"},          {om::t_compute_overlap, "s"},
            {om::t_comm_overlap, "s"}, {om::efficiency, ""}, {om::compute_slowdown, ""}, {om::comm_slowdown, ""}};
  }

  std::string describe(const Point& p) const override {
    namespace o = overlap_axis;
    return strprintf("gemm %s %lldx%lldx%lld + %s %s %s prio=%s ctas=%lld chunks=%lld", p.choice(o::dtype).c_str(),
                     static_cast<long long>(p.integer(o::m)), static_cast<long long>(p.integer(o::n)),
                     static_cast<long long>(p.integer(o::k)), p.choice(o::collective).c_str(),
                     format_bytes(static_cast<double>(p.integer(o::bytes))).c_str(), p.choice(o::coll_dtype).c_str(),
                     p.choice(o::priority).c_str(), static_cast<long long>(p.integer(o::nccl_ctas)),
                     static_cast<long long>(p.integer(o::chunks)));
  }
};

}  // namespace

const Op& overlap_op() {
  static const OverlapOp op;
  return op;
}

GENBENCH_REGISTER_OP(overlap_op)

}  // namespace genbench
