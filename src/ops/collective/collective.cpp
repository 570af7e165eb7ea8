#include "ops/collective/collective.h"

#include "core/strings.h"

namespace genbench {

namespace {
const std::vector<std::string> kKinds = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                         "broadcast",  "reduce",     "send_recv"};
const std::vector<std::string> kOps = {"sum", "prod", "max", "min", "avg"};

template <typename E>
E index_of(const std::vector<std::string>& names, const std::string& s) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == s) return static_cast<E>(i);
  return static_cast<E>(0);
}
}  // namespace

const char* collective_name(CollectiveKind k) { return kKinds[static_cast<std::size_t>(k)].c_str(); }

bool is_reduction(CollectiveKind k) {
  return k == CollectiveKind::all_reduce || k == CollectiveKind::reduce || k == CollectiveKind::reduce_scatter;
}

CollectiveShape CollectiveShape::from(const Point& p, int world_size) {
  namespace c = collective_axis;
  CollectiveShape s{};
  s.kind = index_of<CollectiveKind>(kKinds, p.choice(c::collective));
  s.bytes = p.integer(c::bytes);
  s.dtype = *parse_dtype(p.choice(c::dtype));
  s.redop = index_of<ReduceOp>(kOps, p.choice(c::redop));
  s.in_place = p.boolean(c::in_place);
  s.root = static_cast<int>(p.integer(c::root));
  s.graph = p.choice(c::mode) == "graph";
  s.world = world_size;
  const std::int64_t n = world_size;
  const std::int64_t elems = s.bytes / static_cast<std::int64_t>(dtype_size(s.dtype));
  switch (s.kind) {
    case CollectiveKind::all_gather:  // size = total output
      s.recv_count = (elems / n) * n;
      s.send_count = s.recv_count / n;
      break;
    case CollectiveKind::reduce_scatter:  // size = total input
      s.send_count = (elems / n) * n;
      s.recv_count = s.send_count / n;
      break;
    case CollectiveKind::all_to_all:  // size = per-rank buffer, split in n chunks
      s.send_count = s.recv_count = (elems / n) * n;
      break;
    default: s.send_count = s.recv_count = elems;
  }
  return s;
}

double CollectiveShape::size_bytes() const {
  const double el = static_cast<double>(dtype_size(dtype));
  switch (kind) {
    case CollectiveKind::all_gather: return static_cast<double>(recv_count) * el;
    default: return static_cast<double>(send_count) * el;
  }
}

double CollectiveShape::busbw_factor() const {
  const double n = world;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    default: return 1.0;
  }
}

namespace {

class CollectiveOp final : public Op {
 public:
  std::string name() const override { return "collective"; }

  std::vector<AxisSpec> define_axes() const override {
    namespace c = collective_axis;
    Axes v(c::count);
    v.choice(c::collective, "collective", kKinds).default_("all_reduce").help("which collective");
    v.size(c::bytes, "bytes")
        .unit("B")
        .default_(std::int64_t{1} << 20)
        .range(1, std::int64_t{1} << 40)
        .help("message size (nccl-tests convention)");
    v.choice(c::dtype, "dtype", {"fp32", "fp16", "bf16", "int32", "fp8_e4m3", "fp8_e5m2"})
        .default_("fp32")
        .help("element type");
    v.choice(c::redop, "redop", kOps).default_("sum").help("reduction");
    v.boolean(c::in_place, "in_place").help("output aliases input");
    v.int64(c::root, "root").default_(0).range(0, 1 << 20).help("root of broadcast/reduce");
    v.choice(c::mode, "mode", {"eager", "graph"}).default_("eager").help("execution mode");
    return v.done();
  }

  std::string check(const Point& p, int world_size) const override {
    const auto s = CollectiveShape::from(p, world_size);
    if (s.root >= world_size) return strprintf("root %d does not exist in a world of %d ranks", s.root, world_size);
    return "";
  }

  std::string skip_reason(const Point& p, int world_size) const override {
    const auto s = CollectiveShape::from(p, world_size);
    if (s.send_count == 0 || s.recv_count == 0)
      return strprintf("%lld bytes is less than one %s element per rank", static_cast<long long>(s.bytes),
                       dtype_name(s.dtype));
    return "";
  }

  Work work(const Point& p, int world_size) const override {
    const auto s = CollectiveShape::from(p, world_size);
    Work w;
    w.bytes = s.size_bytes();
    w.busbw_factor = s.busbw_factor();
    return w;
  }

  std::string summary() const override {
    return "NCCL/MPI collectives: algbw and busbw as nccl-tests defines them, results verified";
  }

  std::vector<OpColumn> define_columns() const override {
    OpColumns c;
    c.effective("busbw_factor", "", "busbw / algbw for this collective and world size (nccl-tests)",
                [](const Point& p, int world_size) { return CollectiveShape::from(p, world_size).busbw_factor(); });
    c.metric(
        "busbw_GBps", "GB/s", "algbw x the collective's bus-bandwidth factor (nccl-tests)",
        [](const Work& w, double t) { return w.busbw_factor > 0 ? w.bytes / t / 1e9 * w.busbw_factor : 0.0; }, "busbw");
    c.metric("algbw_GBps", "GB/s", "size (nccl-tests convention) per second, median time",
             [](const Work& w, double t) { return w.bytes / t / 1e9; });
    return c.done();
  }

  HostExample host_example() const override {
    return HostExample()
        .choices("collective",
                 {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"})
        .ints("bytes", {4096})
        .flags("in_place", {false, true})
        .with_ranks(2);
  }

  AnalysisHints analysis() const override {
    AnalysisHints h;
    h.title = "Collective bus bandwidth against message size";
    h.x = "bytes";
    h.facets = {"collective"};
    return h;
  }

  std::string describe(const Point& p) const override {
    const auto& ax = p.values;
    namespace c = collective_axis;
    return strprintf("%s %s %s %s%s %s", std::get<std::string>(ax[c::collective]).c_str(),
                     format_bytes(static_cast<double>(std::get<std::int64_t>(ax[c::bytes]))).c_str(),
                     std::get<std::string>(ax[c::dtype]).c_str(), std::get<std::string>(ax[c::redop]).c_str(),
                     std::get<std::int64_t>(ax[c::in_place]) ? " in-place" : "",
                     std::get<std::string>(ax[c::mode]).c_str());
  }
};

}  // namespace

const Op& collective_op() {
  static const CollectiveOp op;
  return op;
}

GENBENCH_REGISTER_OP(collective_op)

}  // namespace genbench
