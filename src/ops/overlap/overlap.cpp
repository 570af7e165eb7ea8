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
    namespace o = overlap_axis;
    const std::int64_t big = std::int64_t{1} << 20;
    Axes v(o::count);
    v.choice(o::compute, "compute", {"gemm"}).default_("gemm").help("the compute operation");
    v.size(o::m, "m").default_(8192).range(1, big).help("GEMM rows of A and D (split into chunks)");
    v.size(o::n, "n").default_(8192).range(1, big).help("GEMM columns of D");
    v.size(o::k, "k").default_(8192).range(1, big).help("GEMM reduction dimension");
    v.choice(o::dtype, "dtype", {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3"})
        .default_("bf16")
        .help("GEMM input precision (A row-major m x k, B stored n x k)");
    v.choice(o::collective, "collective", kCollectives).default_("all_reduce").help("the collective");
    v.size(o::bytes, "bytes")
        .unit("B")
        .default_(std::int64_t{1} << 28)
        .range(1, std::int64_t{1} << 40)
        .help("collective size (nccl-tests convention)");
    v.choice(o::coll_dtype, "coll_dtype", {"fp32", "fp16", "bf16"})
        .default_("bf16")
        .help("collective element type (sum)");
    v.choice(o::priority, "priority", kPriorities)
        .default_("equal")
        .help("stream priorities: equal, comm_high (collective stream higher), compute_high");
    v.int64(o::nccl_ctas, "nccl_ctas")
        .unit("CTAs")
        .default_(0)
        .range(0, 64)
        .help("CTAs (SMs) NCCL runs with: minCTAs = maxCTAs of its communicator; 0 = NCCL's default");
    v.int64(o::chunks, "chunks")
        .default_(1)
        .range(1, 64)
        .help("pipeline pieces: GEMM split along M, piece i's collective overlaps piece i+1's GEMM");
    return v.done();
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

  std::vector<OpColumn> define_columns() const override {
    namespace om = overlap_metric;
    OpColumns c;
    c.metric("tflops", "TFLOP/s", "the GEMM's FLOPs over the time of GEMM and collective together",
             [](const Work& w, double t) { return w.flops / t / 1e12; });
    c.extra(om::t_compute, "s", "the GEMM alone (all pieces), median");
    c.extra(om::t_comm, "s", "the collective alone (all pieces), median");
    c.extra(om::t_both, "s", "GEMM and collective overlapped, median");
    c.extra(om::t_compute_overlap, "s", "the GEMM's own time inside the overlapped run, median");
    c.extra(om::t_comm_overlap, "s", "the collective's own time inside the overlapped run, median");
    c.extra(om::efficiency, "",
            "time hidden over the most that could be: (t_compute + t_comm - t_both) / min(t_compute, t_comm)");
    c.extra(om::compute_slowdown, "", "t_compute_in_overlap_s / t_compute_s");
    c.extra(om::comm_slowdown, "", "t_comm_in_overlap_s / t_comm_s");
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .ints("m", {64})
        .ints("n", {32})
        .ints("k", {48})
        .choices("dtype", {"fp32"})
        .choices("collective", {"all_reduce", "all_gather"})
        .ints("bytes", {16384})
        .choices("coll_dtype", {"fp32"})
        .ints("chunks", {1, 4})
        .with_ranks(2);
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "GEMM and collective overlapped";
    h.x = "bytes";
    h.facets = {"collective", "priority"};
    h.compare_metric = overlap_metric::efficiency;
    // The efficiency against the collective's size, the GEMM's size (its FLOPs) and NCCL's CTAs;
    // the CTA panel lets chunks and priority vary too (one line each).
    namespace om = overlap_metric;
    ExtraPlotHint e;
    e.name = "efficiency";
    e.title = "Compute-communication overlap";
    e.subtitle = "(t_compute + t_comm - t_both) / min(t_compute, t_comm); 1 = the shorter one fully hidden";
    e.y = om::efficiency;
    e.y_label = "overlap efficiency";
    e.reference_lines = {0.0, 1.0};
    e.hold = {"nccl_ctas", "chunks", "priority"};
    PanelHint size{"bytes", "collective size"};
    size.lines = {"collective", "m", "n", "k"};
    PanelHint gemm{"work_flops", "GEMM size (FLOP)"};
    gemm.lines = {"collective", "bytes"};
    PanelHint ctas{"nccl_ctas", "NCCL CTAs (0: NCCL's default)"};
    ctas.categorical = true;
    ctas.tick_labels = {{"0", "default"}};
    ctas.lines = {"collective", "bytes", "m", "n", "k", "chunks", "priority"};
    ctas.free = {"nccl_ctas", "chunks", "priority"};
    e.panels = {size, gemm, ctas};
    e.table = {"m", "n", "k", "dtype", "collective", "bytes", "coll_dtype", "priority", "nccl_ctas", "chunks"};
    for (const char* c :
         {om::t_compute, om::t_comm, om::t_both, om::efficiency, om::compute_slowdown, om::comm_slowdown})
      e.table.emplace_back(c);
    e.table_note =
        "Times are medians (ms) on rank 0: the GEMM alone, the collective alone, both together; slowdowns are each "
        "part's time inside the overlap over its time alone.";
    h.extra_plots = {e};
    return h;
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
