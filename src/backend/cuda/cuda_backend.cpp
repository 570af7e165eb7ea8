#include "backend/cuda/cuda_backend.h"

#include <cublasLt.h>
#include <hdf5.h>
#include <nccl.h>
#ifdef GENBENCH_HAVE_CUDNN
#include <cudnn.h>
#endif

#include "backend/cuda/nccl_comm.h"
#include "backend/cuda/nvml.h"
#include "core/strings.h"

namespace genbench {

namespace {

class EventTimer final : public Timer {
 public:
  explicit EventTimer(cudaStream_t s) : stream_(s) {
    GENBENCH_CHECK_CUDA(cudaEventCreate(&start_));
    GENBENCH_CHECK_CUDA(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { GENBENCH_CHECK_CUDA(cudaEventRecord(start_, stream_)); }
  void stop() override { GENBENCH_CHECK_CUDA(cudaEventRecord(stop_, stream_)); }
  double seconds() override {
    wait_event(stop_);  // polled: a hang inside NCCL stays visible to the watchdog and NCCL's errors
    float ms = 0;
    GENBENCH_CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_{}, stop_{};
};

std::string version3(int v, int major_div, int minor_div, int minor_mod) {
  return strprintf("%d.%d.%d", v / major_div, (v / minor_div) % minor_mod, v % minor_div);
}

class CudaBackendImpl final : public CudaBackend {
 public:
  explicit CudaBackendImpl(const BackendOptions& o) {
    int count = 0;
    GENBENCH_CHECK_CUDA(cudaGetDeviceCount(&count));
    if (count == 0) throw Error("no CUDA device is visible");
    if (o.local_size > count && !o.allow_shared_devices)
      throw UsageError(
          strprintf("%d ranks on this node but only %d GPU(s); use one rank per GPU or set "
                    "settings.allow_shared_devices: true",
                    o.local_size, count));
    device_ = o.local_rank % count;
    GENBENCH_CHECK_CUDA(cudaSetDevice(device_));
    GENBENCH_CHECK_CUDA(cudaGetDeviceProperties(&prop_, device_));
    GENBENCH_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device_) == cudaSuccess) nvml_ = std::make_unique<NvmlDevice>(bus);
  }
  ~CudaBackendImpl() override {
    if (stream_) cudaStreamSynchronize(stream_);
    if (flush_) cudaFree(flush_);
    release_nccl_comms();  // every rank destroys its backend at the same point of the run
    if (stream_) cudaStreamDestroy(stream_);
  }

  BackendKind kind() const override { return BackendKind::cuda; }
  cudaStream_t stream() const override { return stream_; }
  int device() const override { return device_; }
  const cudaDeviceProp& properties() const override { return prop_; }

  DeviceInfo device_info() const override {
    DeviceInfo d;
    d.backend = "cuda";
    d.device_index = device_;
    d.name = prop_.name;
    std::string uuid = "GPU-";
    for (int i = 0; i < 16; ++i) {
      uuid += strprintf("%02x", static_cast<unsigned char>(prop_.uuid.bytes[i]));
      if (i == 3 || i == 5 || i == 7 || i == 9) uuid += '-';
    }
    d.uuid = uuid;
    d.pci_bus_id = strprintf("%08x:%02x:%02x.0", prop_.pciDomainID, prop_.pciBusID, prop_.pciDeviceID);
    d.sm_count = prop_.multiProcessorCount;
    d.cc_major = prop_.major;
    d.cc_minor = prop_.minor;
    d.memory_bytes = static_cast<std::int64_t>(prop_.totalGlobalMem);
    d.l2_bytes = prop_.l2CacheSize;
    int v = 0;
    cudaDriverGetVersion(&v);
    d.driver_version = strprintf("%d.%d", v / 1000, (v % 1000) / 10);
    cudaRuntimeGetVersion(&v);
    d.runtime_version = strprintf("%d.%d", v / 1000, (v % 1000) / 10);
    if (ncclGetVersion(&v) == ncclSuccess) d.nccl_version = version3(v, 10000, 100, 100);
    d.cublas_version = version3(static_cast<int>(cublasLtGetVersion()), 10000, 100, 100);
#ifdef GENBENCH_HAVE_CUDNN
    d.cudnn_version = version3(static_cast<int>(cudnnGetVersion()), 10000, 100, 100);
#endif
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    d.hdf5_version = strprintf("%u.%u.%u", maj, min, rel);
    return d;
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<EventTimer>(stream_); }
  void synchronize() override { wait_stream(stream_); }

  DeviceState sample_state() override { return nvml_ ? nvml_->sample() : DeviceState{}; }

  void flush_cache() override {
    // Written lines take L2 space: writing twice its size leaves none of the operands there.
    const std::size_t bytes = 2 * static_cast<std::size_t>(std::max(prop_.l2CacheSize, 1 << 20));
    if (!flush_) GENBENCH_CHECK_CUDA(cudaMalloc(&flush_, bytes));
    GENBENCH_CHECK_CUDA(cudaMemsetAsync(flush_, ++flushes_ & 0xff, bytes, stream_));
  }

  MemoryInfo memory_info() const override {
    std::size_t free = 0, total = 0;
    GENBENCH_CHECK_CUDA(cudaMemGetInfo(&free, &total));
    return {static_cast<std::int64_t>(free), static_cast<std::int64_t>(total)};
  }

 protected:
  void* raw_allocate(std::size_t bytes) override {
    void* p = nullptr;
    const cudaError_t rc = cudaMalloc(&p, bytes);
    if (rc == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear the sticky-free error so later calls work
      return nullptr;
    }
    GENBENCH_CHECK_CUDA(rc);
    return p;
  }
  void raw_free(void* p) override { cudaFree(p); }

 private:
  int device_ = 0;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<NvmlDevice> nvml_;
  void* flush_ = nullptr;  // flush_cache()'s scratch buffer
  int flushes_ = 0;
};

}  // namespace

CudaBackend& cuda_backend_of(Backend& b) {
  if (b.kind() != BackendKind::cuda) throw Error("a CUDA implementation was given a non-CUDA backend");
  return static_cast<CudaBackend&>(b);
}

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& opts) {
  return std::make_unique<CudaBackendImpl>(opts);
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

bool cuda_backend_built() { return true; }

}  // namespace genbench
