// The host backend: the CPU as the "device". Same pipeline, real computation, no GPU.
#include <hdf5.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "core/strings.h"

namespace genbench {

namespace {

class HostTimer final : public Timer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "host CPU";
}

class HostBackend final : public Backend {
 public:
  explicit HostBackend(const BackendOptions& o) : opts_(o) {}
  BackendKind kind() const override { return BackendKind::host; }

  DeviceInfo device_info() const override {
    DeviceInfo d;
    d.backend = "host";
    d.device_index = -1;
    d.name = cpu_model();
    d.sm_count = static_cast<int>(std::thread::hardware_concurrency());
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    d.memory_bytes = static_cast<std::int64_t>(pages) * page;
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    d.hdf5_version = strprintf("%u.%u.%u", maj, min, rel);
    return d;
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<HostTimer>(); }
  void synchronize() override {}

  void flush_cache() override {
    if (flush_.empty()) {
      long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
      if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
      flush_.assign(2 * static_cast<std::size_t>(llc > 0 ? llc : 32L << 20), 0);
    }
    ++flushes_;
    for (std::size_t i = 0; i < flush_.size(); i += 64) flush_[i] = static_cast<unsigned char>(flushes_ + i);
    // read back one byte per line so the stores are not dropped as dead
    unsigned sum = 0;
    for (std::size_t i = 0; i < flush_.size(); i += 4096) sum += flush_[i];
    sink_ = sum;
  }

  MemoryInfo memory_info() const override {
    MemoryInfo m;
    const long page = sysconf(_SC_PAGE_SIZE);
    m.free_bytes = static_cast<std::int64_t>(sysconf(_SC_AVPHYS_PAGES)) * page;
    m.total_bytes = static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) * page;
    return m;
  }

 protected:
  void* raw_allocate(std::size_t bytes) override {
    // Refuse what the machine clearly cannot hold, rather than letting the OOM killer act.
    if (static_cast<std::int64_t>(bytes) > memory_info().total_bytes / 2) return nullptr;
    return std::malloc(bytes);
  }
  void raw_free(void* p) override { std::free(p); }

 private:
  BackendOptions opts_;
  std::vector<unsigned char> flush_;  // flush_cache()'s scratch buffer
  unsigned flushes_ = 0;
  volatile unsigned sink_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend(const BackendOptions& opts) { return std::make_unique<HostBackend>(opts); }

}  // namespace genbench
