// The host link's speed, measured in the same GPU run as the module's benchmarks so that each end-to-end time can be
// set against the bytes it must move (bench/Common/link_report.py): cudaMemcpyAsync host <-> device of 256 MiB,
// from and into pinned memory (cudaMallocHost), pageable memory whose pages are mapped, and that memory page-locked
// with cudaHostRegister, each direction the median of 9; the time to map fresh pageable memory (the first write to a
// new allocation); a host memcpy on one thread.
//   CudaHostLinkBenchmark [--json FILE] [--mib N]
#include "Common/chsBenchCuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using chs_bench::Check;
using chs_bench::MedianMs;

int
main(int argc, char ** argv)
{
  std::string json;
  size_t      bytes = size_t(256) << 20;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--mib" && i + 1 < argc)
      bytes = size_t(std::atoll(argv[++i])) << 20;
    else
    {
      std::fprintf(stderr, "usage: %s [--json FILE] [--mib N]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "device");
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  char *pinned = nullptr, *device = nullptr;
  Check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  Check(cudaMalloc(&device, bytes), "cudaMalloc");
  Check(cudaMemset(device, 1, bytes), "cudaMemset");
  std::unique_ptr<char[]> pageable(new char[bytes]);
  std::memset(pageable.get(), 2, bytes); // pages mapped
  std::memset(pinned, 3, bytes);
  auto copy = [&](void * dst, const void * src, cudaMemcpyKind kind)
  {
    return MedianMs(
      [&]
      {
        Check(cudaMemcpyAsync(dst, src, bytes, kind, stream), "copy");
        Check(cudaStreamSynchronize(stream), "sync");
      });
  };
  const double pinnedUp     = copy(device, pinned, cudaMemcpyHostToDevice);
  const double pinnedDown   = copy(pinned, device, cudaMemcpyDeviceToHost);
  const double pageableUp   = copy(device, pageable.get(), cudaMemcpyHostToDevice);
  const double pageableDown = copy(pageable.get(), device, cudaMemcpyDeviceToHost);
  // The same pageable buffer page-locked with cudaHostRegister (what a library can do to memory it did not
  // allocate with cudaMallocHost), each direction; the registration itself once.
  const auto registerStart = std::chrono::steady_clock::now();
  Check(cudaHostRegister(pageable.get(), bytes, cudaHostRegisterPortable), "cudaHostRegister");
  const double registerMs =
    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - registerStart).count();
  const double registeredUp   = copy(device, pageable.get(), cudaMemcpyHostToDevice);
  const double registeredDown = copy(pageable.get(), device, cudaMemcpyDeviceToHost);
  Check(cudaHostUnregister(pageable.get()), "cudaHostUnregister");
  const double firstTouch = MedianMs(
    [&]
    {
      std::unique_ptr<char[]> fresh(new char[bytes]);
      volatile char *         p = fresh.get(); // volatile: the writes are not optimised away
      for (size_t i = 0; i < bytes; i += 4096)
        p[i] = char(i);
    },
    5);
  std::unique_ptr<char[]> other(new char[bytes]);
  std::memset(other.get(), 4, bytes);
  const double memcpyMs = MedianMs([&] { std::memcpy(other.get(), pageable.get(), bytes); }, 5);
  const double mb       = double(bytes) / 1e6;
  auto         gbps     = [mb](double ms) { return mb / ms; }; // MB/ms = GB/s
  std::printf("device %s, %zu MiB per copy (median of 9)\n", prop.name, bytes >> 20);
  std::printf("pinned   host->device %8.3f ms  %6.2f GB/s\n", pinnedUp, gbps(pinnedUp));
  std::printf("pinned   device->host %8.3f ms  %6.2f GB/s\n", pinnedDown, gbps(pinnedDown));
  std::printf("pageable host->device %8.3f ms  %6.2f GB/s\n", pageableUp, gbps(pageableUp));
  std::printf("pageable device->host %8.3f ms  %6.2f GB/s\n", pageableDown, gbps(pageableDown));
  std::printf("registered host->device %8.3f ms  %6.2f GB/s\n", registeredUp, gbps(registeredUp));
  std::printf("registered device->host %8.3f ms  %6.2f GB/s\n", registeredDown, gbps(registeredDown));
  std::printf("cudaHostRegister of the buffer, once %8.3f ms\n", registerMs);
  std::printf("first write to fresh pageable memory %8.3f ms  %6.2f GB/s\n", firstTouch, gbps(firstTouch));
  std::printf("host memcpy, one thread %8.3f ms  %6.2f GB/s\n", memcpyMs, gbps(memcpyMs));
  if (!json.empty())
  {
    std::ofstream out(json);
    out << "{\"device\": \"" << prop.name << "\", \"bytes\": " << bytes << ", \"pinned_up_gbps\": " << gbps(pinnedUp)
        << ", \"pinned_down_gbps\": " << gbps(pinnedDown) << ", \"pageable_up_gbps\": " << gbps(pageableUp)
        << ", \"pageable_down_gbps\": " << gbps(pageableDown) << ", \"registered_up_gbps\": " << gbps(registeredUp)
        << ", \"registered_down_gbps\": " << gbps(registeredDown) << ", \"register_ms\": " << registerMs
        << ", \"fresh_page_mapping_gbps\": " << gbps(firstTouch) << ", \"host_memcpy_gbps\": " << gbps(memcpyMs)
        << "}\n";
  }
  cudaFreeHost(pinned);
  cudaFree(device);
  return 0;
}
