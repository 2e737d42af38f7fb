// The module's copies between pageable host memory and the device, through its pinned staging buffers
// (src/Common/chsCudaCommon.cu, "StagedTransfer"), for a set of staging shapes, in one run beside the plain pinned
// copy: what every filter's upload of an ordinary ITK or NumPy array, and every tree's download, moves at. Each
// shape's copies are checked (the bytes that come back are the bytes sent).
//   CudaStagingBenchmark [--json FILE] [--mib N]... [--reps R] [--threads T] [--shape
//   CHUNK_KIB,SLOTS,WORKERS,STREAM]...
// Without --shape: the default shape and a sweep of chunk sizes, slot counts, worker counts, plain or non-temporal
// stores.
#include "chs/Execution.h"

#include "Common/chsBenchCuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using chs_bench::Check;
using chs_bench::MedianMs;

namespace
{

struct Shape
{
  uint64_t chunkKiB = 0; // all zero: the library's default
  unsigned slots = 0, workers = 0;
  bool     streaming = false;

  std::string
  Name() const
  {
    if (chunkKiB == 0)
      return "default";
    std::ostringstream s;
    s << chunkKiB << "KiB x" << slots << " w" << workers << (streaming ? " nt" : " plain");
    return s.str();
  }
};

std::vector<Shape>
Sweep()
{
  std::vector<Shape> shapes{ Shape{} };
  for (bool streaming : { false, true })
    for (unsigned workers : { 8u, 16u })
      for (uint64_t kib : { 1024u, 2048u, 4096u, 8192u })
        for (unsigned slots : { 4u, 8u })
          shapes.push_back(Shape{ kib, slots, workers, streaming });
  return shapes;
}
} // namespace

int
main(int argc, char ** argv)
{
  std::string           json;
  std::vector<uint64_t> mibs;
  std::vector<Shape>    shapes;
  int                   reps    = 9;
  unsigned              threads = 0;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--mib" && i + 1 < argc)
      mibs.push_back(std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc)
      threads = unsigned(std::atoi(argv[++i]));
    else if (a == "--shape" && i + 1 < argc)
    {
      Shape              s;
      unsigned           streaming = 0;
      unsigned long long kib       = 0;
      if (std::sscanf(argv[++i], "%llu,%u,%u,%u", &kib, &s.slots, &s.workers, &streaming) != 4)
      {
        std::fprintf(stderr, "--shape CHUNK_KIB,SLOTS,WORKERS,STREAM\n");
        return 2;
      }
      s.chunkKiB  = kib;
      s.streaming = streaming != 0;
      shapes.push_back(s);
    }
    else
    {
      std::fprintf(stderr,
                   "usage: %s [--json FILE] [--mib N]... [--reps R] [--threads T] "
                   "[--shape CHUNK_KIB,SLOTS,WORKERS,STREAM]...\n",
                   argv[0]);
      return 2;
    }
  }
  if (mibs.empty())
    mibs = { 64, 256 };
  if (shapes.empty())
    shapes = Sweep();
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "device");
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  std::ofstream out;
  if (!json.empty())
    out.open(json);
  out << "{\"device\": \"" << prop.name << "\", \"reps\": " << reps << ", \"results\": [";
  bool first = true, allEqual = true;
  std::printf("device %s, host threads %u (0: all), median of %d\n", prop.name, threads, reps);
  for (const uint64_t mib : mibs)
  {
    const uint64_t bytes  = mib << 20;
    const double   mb     = double(bytes) / 1e6;
    char *         pinned = nullptr, *device = nullptr;
    Check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
    Check(cudaMalloc(&device, bytes), "cudaMalloc");
    std::unique_ptr<char[]> source(new char[bytes]), back(new char[bytes]);
    for (uint64_t i = 0; i < bytes; ++i)
      source[i] = char((i * 2654435761u) >> 13); // pages mapped, contents that a lost chunk would change
    std::memset(back.get(), 0, bytes);
    auto pinnedCopy = [&](void * dst, const void * src, cudaMemcpyKind kind)
    {
      return MedianMs(
        [&]
        {
          Check(cudaMemcpyAsync(dst, src, bytes, kind, stream), "copy");
          Check(cudaStreamSynchronize(stream), "sync");
        },
        reps);
    };
    const double up = pinnedCopy(device, pinned, cudaMemcpyHostToDevice);
    const double dn = pinnedCopy(pinned, device, cudaMemcpyDeviceToHost);
    std::printf("%llu MiB: pinned up %.3f ms (%.1f GB/s), down %.3f ms (%.1f GB/s)\n",
                (unsigned long long)mib,
                up,
                mb / up,
                dn,
                mb / dn);
    out << (first ? "" : ", ") << "{\"mib\": " << mib << ", \"shape\": \"pinned\", \"up_ms\": " << up
        << ", \"down_ms\": " << dn << ", \"up_gbps\": " << mb / up << ", \"down_gbps\": " << mb / dn << "}";
    first = false;
    for (const Shape & s : shapes)
    {
      chs::testing::SetHostStaging(s.chunkKiB << 10, s.slots, s.workers, s.streaming);
      const auto stream64 = reinterpret_cast<uintptr_t>(stream);
      // Warm-up and check: the bytes that come back are the bytes sent.
      Check(cudaMemset(device, 0, bytes), "cudaMemset");
      std::memset(back.get(), 0, bytes);
      chs::testing::CopyHostArray(device, source.get(), bytes, true, 0, stream64, threads);
      chs::testing::CopyHostArray(back.get(), device, bytes, false, 0, stream64, threads);
      const bool equal = std::memcmp(back.get(), source.get(), bytes) == 0;
      allEqual         = allEqual && equal;
      const double u =
        MedianMs([&] { chs::testing::CopyHostArray(device, source.get(), bytes, true, 0, stream64, threads); }, reps);
      const double d =
        MedianMs([&] { chs::testing::CopyHostArray(back.get(), device, bytes, false, 0, stream64, threads); }, reps);
      std::printf("%llu MiB %-28s up %7.3f ms %5.1f GB/s  down %7.3f ms %5.1f GB/s%s\n",
                  (unsigned long long)mib,
                  s.Name().c_str(),
                  u,
                  mb / u,
                  d,
                  mb / d,
                  equal ? "" : "  BYTES DIFFER");
      out << ", {\"mib\": " << mib << ", \"shape\": \"" << s.Name() << "\", \"chunk_kib\": " << s.chunkKiB
          << ", \"slots\": " << s.slots << ", \"workers\": " << s.workers << ", \"streaming\": " << s.streaming
          << ", \"up_ms\": " << u << ", \"down_ms\": " << d << ", \"up_gbps\": " << mb / u
          << ", \"down_gbps\": " << mb / d << ", \"equal\": " << equal << "}";
    }
    cudaFreeHost(pinned);
    cudaFree(device);
  }
  chs::testing::SetHostStaging(0, 0, 0, false);
  out << "], \"all_equal\": " << allEqual << "}\n";
  if (!allEqual)
    std::printf("FAILED: a staged copy changed the bytes\n");
  return allEqual ? 0 : 1;
}
