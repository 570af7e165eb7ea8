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
    {
      std::vector<AxisSpec> v(collective_axis::count);
      namespace c = collective_axis;
      v[c::collective] = {"collective", AxisType::choice,  std::string("all_reduce"), kKinds, 0, 0,
                          {},           "which collective"};
      v[c::bytes] = {"bytes",
                     AxisType::size,
                     std::int64_t{1} << 20,
                     {},
                     1,
                     std::int64_t{1} << 40,
                     {},
                     "message size (nccl-tests convention)"};
      v[c::dtype] = {"dtype",
                     AxisType::choice,
                     std::string("fp32"),
                     {"fp32", "fp16", "bf16", "int32", "fp8_e4m3", "fp8_e5m2"},
                     0,
                     0,
                     {},
                     "element type"};
      v[c::redop] = {"redop", AxisType::choice, std::string("sum"), kOps, 0, 0, {}, "reduction"};
      v[c::in_place] = {"in_place", AxisType::boolean, std::int64_t{0}, {}, 0, 1, {}, "output aliases input"};
      v[c::root] = {"root", AxisType::integer, std::int64_t{0}, {}, 0, 1 << 20, {}, "root of broadcast/reduce"};
      v[c::mode] = {"mode", AxisType::choice, std::string("eager"), {"eager", "graph"}, 0, 0, {}, "execution mode"};
      return v;
    }
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

  std::vector<MetricSpec> metrics() const override {
    return {{"busbw_GBps", "GB/s", "algbw x the collective's bus-bandwidth factor (nccl-tests)",
             [](const Work& w, double t) { return w.busbw_factor > 0 ? w.bytes / t / 1e9 * w.busbw_factor : 0.0; },
             "busbw"},
            {"algbw_GBps", "GB/s", "size (nccl-tests convention) per second, median time",
             [](const Work& w, double t) { return w.bytes / t / 1e9; }}};
  }

  std::vector<ColumnSpec> effective_columns() const override {
    return {{"busbw_factor", ColumnType::f64, "", "busbw / algbw for this collective and world size (nccl-tests)"}};
  }

  std::vector<ColumnValue> effective(const Point& p, int world_size) const override {
    return {CollectiveShape::from(p, world_size).busbw_factor()};
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
