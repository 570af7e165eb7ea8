#include "backend/cuda/nvml.h"

#include <dlfcn.h>

namespace genbench {

namespace {

// The few NVML entry points used, declared here so no NVML header is needed at build time.
using nvml_return = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using nvml_device = void*;
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;   // NVML_TEMPERATURE_GPU

struct Nvml {
  bool ok = false;
  nvml_return (*init)() = nullptr;
  nvml_return (*by_pci)(const char*, nvml_device*) = nullptr;
  nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*power)(nvml_device, unsigned*) = nullptr;
  nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*reasons)(nvml_device, unsigned long long*) = nullptr;

  template <typename F>
  static void bind(void* lib, F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;  // kept open for the life of the process
    bind(lib, init, "nvmlInit_v2");
    bind(lib, by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(lib, clock, "nvmlDeviceGetClockInfo");
    bind(lib, power, "nvmlDeviceGetPowerUsage");
    bind(lib, temperature, "nvmlDeviceGetTemperature");
    bind(lib, reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) bind(lib, reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    ok = init && by_pci && init() == 0;
  }
};

const Nvml& nvml() {
  static const Nvml n;
  return n;
}

}  // namespace

NvmlDevice::NvmlDevice(const std::string& pci_bus_id) {
  const Nvml& n = nvml();
  if (!n.ok) return;
  nvml_device d = nullptr;
  if (n.by_pci(pci_bus_id.c_str(), &d) == 0) handle_ = d;
}

DeviceState NvmlDevice::sample() const {
  DeviceState s;
  if (!handle_) return s;
  const Nvml& n = nvml();
  unsigned v = 0;
  if (n.clock && n.clock(handle_, kClockSm, &v) == 0) s.sm_clock_mhz = v;
  if (n.clock && n.clock(handle_, kClockMem, &v) == 0) s.mem_clock_mhz = v;
  if (n.power && n.power(handle_, &v) == 0) s.power_w = v * 1e-3;  // milliwatts
  if (n.temperature && n.temperature(handle_, kTempGpu, &v) == 0) s.temperature_c = v;
  unsigned long long r = 0;
  if (n.reasons && n.reasons(handle_, &r) == 0) {
    s.throttle_reasons = r;
    s.throttled = (r & clocks_event::kHolding) != 0;
  }
  s.valid = true;
  return s;
}

}  // namespace genbench
