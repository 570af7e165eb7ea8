// Ceilings: the typed names ops use (ops/ceiling.h) and the registry of measurements keyed by
// backend (backend/ceilings.h), which kernels/ceilings/ fills.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "backend/ceilings.h"
#include "ops/implementation.h"
#include "ops/op.h"

namespace genbench {
namespace {

std::vector<Ceiling> two_rows(Backend&) {
  return {Ceiling::of(ceilings::copy(), 100, "a"), Ceiling::of(ceilings::gemm(DType::bf16), 2, "b")};
}
std::vector<Ceiling> throws(Backend&) { throw std::runtime_error("no device here"); }
std::vector<Ceiling> one_row(Backend&) { return {Ceiling::of(ceilings::gemm(DType::fp8_e4m3), 3, "c")}; }

TEST(Ceilings, NamesAndUnitsAreDeclaredOnce) {
  EXPECT_EQ(ceilings::copy().name, "copy_GBps");
  EXPECT_EQ(ceilings::copy().unit, "GB/s");
  EXPECT_EQ(ceilings::gemm(DType::bf16).name, "gemm_bf16_tflops");
  EXPECT_EQ(ceilings::gemm(DType::fp8_e4m3).name, "gemm_fp8_e4m3_tflops");
  EXPECT_EQ(ceilings::gemm(DType::fp8_e4m3).unit, "TFLOP/s");
  EXPECT_TRUE(ceilings::none().none());
  EXPECT_NE(ceilings::gemm(DType::fp16), ceilings::gemm(DType::bf16));
  const Ceiling c = Ceiling::of(ceilings::copy(), 4.5, "how");
  EXPECT_EQ(c.name, "copy_GBps");
  EXPECT_EQ(c.unit, "GB/s");
  EXPECT_EQ(c.value, 4.5);
  EXPECT_EQ(c.detail, "how");
}

TEST(Ceilings, RegistryRunsTheBackendsSourcesInOrderAndReportsFailures) {
  CeilingRegistry reg;
  reg.add({"zeta", BackendKind::host, "one row"}, &one_row);
  reg.add({"alpha", BackendKind::host, "two rows"}, &two_rows);
  reg.add({"broken", BackendKind::host, "throws"}, &throws);
  reg.add({"device", BackendKind::cuda, "not for the host"}, &two_rows);
  reg.add({"absent", BackendKind::host, "not built", "a library"}, nullptr);
  EXPECT_THROW(reg.add({"alpha", BackendKind::host, "again"}, &one_row), std::logic_error);
  EXPECT_THROW(reg.add({"", BackendKind::host, "nameless"}, &one_row), std::logic_error);

  const auto all = reg.all();
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0]->info.name, "absent");  // (backend, name) order
  EXPECT_EQ(all[0]->info.missing, "a library");
  EXPECT_EQ(all[3]->info.name, "zeta");
  EXPECT_EQ(all[4]->info.name, "device");
  EXPECT_EQ(reg.runnable(BackendKind::host).size(), 3u);
  EXPECT_EQ(reg.runnable(BackendKind::cuda).size(), 1u);

  auto host = make_host_backend({});
  std::vector<std::string> failures;
  const auto rows = measure_ceilings(*host, reg, &failures);
  ASSERT_EQ(rows.size(), 3u);  // alpha's two, then zeta's; broken's none; device's not on host
  EXPECT_EQ(rows[0].name, "copy_GBps");
  EXPECT_EQ(rows[1].name, "gemm_bf16_tflops");
  EXPECT_EQ(rows[2].name, "gemm_fp8_e4m3_tflops");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0], "broken: no device here");
}

TEST(Ceilings, KernelsRegisterTheCudaSourcesAndTheHostHasNone) {
  std::set<std::string> names;
  for (const auto* s : CeilingRegistry::instance().all()) {
    EXPECT_EQ(s->info.backend, BackendKind::cuda) << s->info.name;
    EXPECT_FALSE(s->info.description.empty()) << s->info.name;
    names.insert(s->info.name);
  }
  EXPECT_EQ(names, (std::set<std::string>{"copy", "gemm"}));
  EXPECT_TRUE(CeilingRegistry::instance().runnable(BackendKind::host).empty());
#ifdef GENBENCH_HAVE_CUDA
  EXPECT_EQ(CeilingRegistry::instance().runnable(BackendKind::cuda).size(), 2u);
#else
  EXPECT_TRUE(CeilingRegistry::instance().runnable(BackendKind::cuda).empty());
#endif
  auto host = make_host_backend({});
  EXPECT_TRUE(measure_ceilings(*host).empty());
}

// An op's ceiling and ceiling line are held against a metric of the same unit; one with no such
// metric would leave ceiling_fraction NaN on every card.
TEST(Ceilings, EveryOpsCeilingHasAMetricOfItsUnit) {
  int with_ceiling = 0;
  for (const Op* op : all_ops()) {
    std::set<std::string> units;
    for (const auto& m : op->metrics()) units.insert(m.unit);
    Point p;
    p.impl = Registry::instance().names(op->name()).front();
    for (const auto& a : op->axes()) p.values.push_back(a.default_value);
    const CeilingId c = op->ceiling(p);
    if (!c.none()) {
      ++with_ceiling;
      EXPECT_TRUE(units.count(c.unit)) << op->name() << ": ceiling " << c.name << " in " << c.unit;
    }
    const CeilingId line = op->analysis().ceiling_line;
    if (!line.none()) EXPECT_TRUE(units.count(line.unit)) << op->name() << ": line " << line.name;
  }
  EXPECT_GE(with_ceiling, 6);  // attention, attention_backward, decode, gemm, grouped_gemm, pointwise, w4a16
}

}  // namespace
}  // namespace genbench
