// The records the ranks exchange (src/runner/exchange.h) survive their encoding: strings with
// separators and quotes, 64-bit sizes, missing readings (NaN), empty lists.
#include <gtest/gtest.h>

#include <cmath>

#include "runner/exchange.h"

namespace genbench {
namespace {

TEST(Exchange, DeviceInfoRoundTrips) {
  DeviceInfo d;
  d.rank = 7;
  d.local_rank = 3;
  d.host = "node-\x1f\"a\"";  // the old separator and quotes travel as text
  d.backend = "cuda";
  d.device_index = 3;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-1234";
  d.pci_bus_id = "00000000:19:00.0";
  d.sm_count = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.memory_bytes = std::int64_t{150} << 30;
  d.l2_bytes = 60 << 20;
  d.driver_version = "580.1";
  d.runtime_version = "13.0";
  d.nccl_version = "2.28.3";
  d.cublas_version = "13.0.0";
  d.cudnn_version = "9.14.0";
  d.mpi_version = "Open MPI v4.1.6, package: ...";
  d.hdf5_version = "1.10.10";
  const DeviceInfo e = exchange::decode_device(exchange::encode(d));
  EXPECT_EQ(e.rank, 7);
  EXPECT_EQ(e.local_rank, 3);
  EXPECT_EQ(e.host, d.host);
  EXPECT_EQ(e.memory_bytes, d.memory_bytes);
  EXPECT_EQ(e.l2_bytes, d.l2_bytes);
  EXPECT_EQ(e.cc_major, 9);
  EXPECT_EQ(e.mpi_version, d.mpi_version);
  EXPECT_EQ(e.hdf5_version, d.hdf5_version);
  EXPECT_EQ(e.pci_bus_id, d.pci_bus_id);
}

TEST(Exchange, CeilingsRoundTripWithMissingValues) {
  std::vector<Ceiling> rows{{1, "copy_GBps", 4301.25, "GB/s", "cudaMemcpy d2d, 1 GiB"},
                            {1, "gemm_fp8_e4m3_tflops", std::nan(""), "TFLOP/s", "not measured"}};
  const auto back = exchange::decode_ceilings(exchange::encode(rows));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].rank, 1);
  EXPECT_EQ(back[0].name, "copy_GBps");
  EXPECT_DOUBLE_EQ(back[0].value, 4301.25);
  EXPECT_EQ(back[0].detail, "cudaMemcpy d2d, 1 GiB");
  EXPECT_TRUE(std::isnan(back[1].value));
  EXPECT_TRUE(exchange::decode_ceilings(exchange::encode(std::vector<Ceiling>{})).empty());
}

TEST(Exchange, RankPointRoundTrips) {
  exchange::RankPoint p;
  p.peak_bytes = std::int64_t{3} << 40;
  p.memory_delta = -4096;
  p.state.valid = true;
  p.state.sm_clock_mhz = 1980;
  p.state.power_w = std::nan("");
  p.state.throttle_reasons = 0x8000000000000004ull;
  p.state.throttled = true;
  p.extra = {{"overlap_efficiency", 0.75}, {"t_comm_s", std::nan("")}};
  p.chosen = {{"fa3_consumers", "3"}, {"fa2_tile", "d128 64x64 w4"}};
  const auto q = exchange::decode_point(exchange::encode(p));
  EXPECT_EQ(q.peak_bytes, p.peak_bytes);
  EXPECT_EQ(q.memory_delta, -4096);
  EXPECT_TRUE(q.state.valid);
  EXPECT_DOUBLE_EQ(q.state.sm_clock_mhz, 1980);
  EXPECT_TRUE(std::isnan(q.state.power_w));
  EXPECT_TRUE(std::isnan(q.state.temperature_c));
  EXPECT_EQ(q.state.throttle_reasons, 0x8000000000000004ull);
  EXPECT_TRUE(q.state.throttled);
  ASSERT_EQ(q.extra.size(), 2u);
  EXPECT_EQ(q.extra[0].first, "overlap_efficiency");
  EXPECT_DOUBLE_EQ(q.extra[0].second, 0.75);
  EXPECT_TRUE(std::isnan(q.extra[1].second));
  ASSERT_EQ(q.chosen.size(), 2u);
  EXPECT_EQ(q.chosen[1].second, "d128 64x64 w4");
}

TEST(Exchange, DoneSetRoundTrips) {
  exchange::DoneSet d{{"attention", {0, 5, 19999}}, {"a \"quoted\" name", {}}};
  const auto e = exchange::decode_done(exchange::encode(d));
  EXPECT_EQ(e, d);
}

}  // namespace
}  // namespace genbench
