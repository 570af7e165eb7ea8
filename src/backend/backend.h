#pragma once
// A backend owns a device (a GPU, or the host CPU): its description, its memory with
// per-point accounting, its clock, and how to wait for it.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace genbench {

enum class BackendKind { host, cuda };
const char* backend_name(BackendKind k);

// One row of the per-rank system table.
struct DeviceInfo {
  int rank = 0;
  int local_rank = 0;
  std::string host;
  std::string backend;
  int device_index = -1;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  int sm_count = 0;  // multiprocessors (host: logical CPUs)
  int cc_major = 0, cc_minor = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::string driver_version;
  std::string runtime_version;
  std::string nccl_version;
  std::string cublas_version;
  std::string cudnn_version;
  std::string mpi_version;
  std::string hdf5_version;
};

// DeviceInfo's fields, declared once: the /system dataset's columns (src/io/columns.cpp), its
// JSON form (to_json/device_info_from_json, which the runner gathers over MPI), `genbench
// schema` and docs/hdf5-schema.md all come from this table. Exactly one member pointer is set:
// an int or int64 field is an int64 column, a string field a fixed-length string column.
struct DeviceInfoField {
  const char* name;
  const char* unit;  // "" when dimensionless
  const char* meaning;
  std::size_t str_len;  // bytes of the string column (NUL included); 0 for integers
  int DeviceInfo::*as_int;
  std::int64_t DeviceInfo::*as_i64;
  std::string DeviceInfo::*as_str;
};
const std::vector<DeviceInfoField>& device_info_fields();
// One JSON object with every field by name; from_json refuses a missing field or a wrong type
// (Error naming the field).
std::string to_json(const DeviceInfo& d);
DeviceInfo device_info_from_json(const std::string& json);

// Times one region on the backend's clock: device events for cuda, a steady clock for host.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double seconds() = 0;  // waits for the region to finish
};

// Allocations made through the backend are counted, so each point reports its peak extra
// memory. Buffers are freed when the DeviceBuffer goes out of scope.
class Backend;
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend* owner, void* ptr, std::size_t bytes) : owner_(owner), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  Backend* owner_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// NVML clocks-event reason bits (DeviceState::throttle_reasons) that hold the card back:
// software power cap, hardware slowdown, software and hardware thermal slowdown, power brake.
namespace clocks_event {
constexpr std::uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40, kPowerBrake = 0x80;
constexpr std::uint64_t kHolding = kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kPowerBrake;
}  // namespace clocks_event

// Clocks, power and temperature of the device at one moment (NVML on cuda; the host backend
// and cuda without NVML leave valid false and the numbers NaN).
struct DeviceState {
  bool valid = false;
  double sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  double mem_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  double power_w = std::numeric_limits<double>::quiet_NaN();
  double temperature_c = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t throttle_reasons = 0;  // NVML clocks-event reason bits
  bool throttled = false;              // a clocks_event::kHolding reason among them
};

struct MemoryInfo {
  std::int64_t free_bytes = 0;
  std::int64_t total_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual DeviceInfo device_info() const = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual void synchronize() = 0;
  virtual MemoryInfo memory_info() const = 0;
  virtual DeviceState sample_state() { return {}; }
  // Evicts the caches a timed run() would otherwise find warm (timing.cache: cold): the device
  // writes a scratch buffer of twice its L2 (the host twice its last-level cache), ordered
  // before the next timed region and outside it. The buffer is the backend's own, allocated
  // on first use and not counted in any point's memory.
  virtual void flush_cache() = 0;

  // Counted allocation; throws OutOfMemory when the device cannot provide it.
  DeviceBuffer allocate(std::size_t bytes);
  void reset_peak() { peak_ = current_; }
  std::int64_t peak_bytes() const { return peak_; }
  std::int64_t current_bytes() const { return current_; }

 protected:
  virtual void* raw_allocate(std::size_t bytes) = 0;  // nullptr when out of memory
  virtual void raw_free(void* p) = 0;

 private:
  friend class DeviceBuffer;
  void release(void* p, std::size_t bytes);
  std::int64_t current_ = 0;
  std::int64_t peak_ = 0;
};

class OutOfMemory : public std::exception {
 public:
  explicit OutOfMemory(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

struct BackendOptions {
  int local_rank = 0;
  int local_size = 1;
  bool allow_shared_devices = false;
};

std::unique_ptr<Backend> make_host_backend(const BackendOptions& opts);
// nullptr when this build has no CUDA backend.
std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts);
// Number of CUDA devices visible to this process (0 without a CUDA build or driver).
int cuda_device_count();
bool cuda_backend_built();

// Fault injection on the cuda backend (runner/fault.h; docs/reliability.md). Without a CUDA
// build both throw Error (the runner uses the host fallbacks there).
// A real device fault on `b`'s stream: a one-thread kernel that traps, then the checked call
// that reports it; throws an Error naming that call, with `tag` appended. Never returns.
[[noreturn]] void cuda_inject_device_fault(Backend& b, const std::string& tag);
// This rank leaves out its next NCCL collective (the call returns without enqueuing).
void cuda_skip_next_nccl_collective();

}  // namespace genbench
