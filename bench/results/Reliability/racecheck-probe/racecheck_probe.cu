// Does compute-sanitizer's racecheck stall on a multithreaded host program that uses none of the module's code?
// Each of T host threads repeats, on its own non-blocking stream, what a filter of the module does in one update:
// an allocation from the stream-ordered pool, a pageable host-to-device copy, a kernel that reduces through shared
// memory with barriers, a CUB scan with its scratch, an event recorded and queried, a device-to-host copy, a stream
// synchronisation and the frees. Every result is checked against the host's sum.
// Build: nvcc -O2 -arch=sm_90 -std=c++17 racecheck_probe.cu -o racecheck_probe
// Run:   racecheck_probe THREADS ROUNDS ITEMS [noscan] [noevent]
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#define CHECK(x)                                                                                             \
  do                                                                                                         \
  {                                                                                                          \
    cudaError_t e_ = (x);                                                                                    \
    if (e_ != cudaSuccess)                                                                                   \
    {                                                                                                        \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e_));                                   \
      std::exit(2);                                                                                          \
    }                                                                                                        \
  } while (0)

__global__ void
BlockSums(const unsigned * in, unsigned n, unsigned long long * total)
{
  __shared__ unsigned s[256];
  unsigned            acc = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += in[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2)
  {
    if (threadIdx.x < w)
      s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    atomicAdd(total, static_cast<unsigned long long>(s[0]));
}

int
main(int argc, char ** argv)
{
  const int      threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int      rounds  = argc > 2 ? std::atoi(argv[2]) : 2;
  const unsigned n       = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1u << 16;
  bool           scan = true, events = true; // "noscan": the CUB scan left out; "noevent": no event created
  for (int a = 4; a < argc; ++a)
  {
    scan   = scan && std::string(argv[a]) != "noscan";
    events = events && std::string(argv[a]) != "noevent";
  }
  CHECK(cudaFree(nullptr));
  std::atomic<int>         failures{ 0 };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      cudaStream_t stream;
      CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      std::vector<unsigned> host(n);
      for (unsigned i = 0; i < n; ++i)
        host[i] = (i * 2654435761u + static_cast<unsigned>(t)) % 7u;
      unsigned long long expected = 0;
      for (unsigned v : host)
        expected += v;
      for (int r = 0; r < rounds; ++r)
      {
        unsigned *           in = nullptr, *scanned = nullptr;
        unsigned long long * total = nullptr;
        CHECK(cudaMallocAsync(reinterpret_cast<void **>(&in), n * sizeof(unsigned), stream));
        CHECK(cudaMallocAsync(reinterpret_cast<void **>(&scanned), n * sizeof(unsigned), stream));
        CHECK(cudaMallocAsync(reinterpret_cast<void **>(&total), sizeof(unsigned long long), stream));
        CHECK(cudaMemcpyAsync(in, host.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice, stream));
        CHECK(cudaMemsetAsync(total, 0, sizeof(unsigned long long), stream));
        BlockSums<<<64, 256, 0, stream>>>(in, n, total);
        CHECK(cudaGetLastError());
        size_t scratchBytes = 0;
        CHECK(cub::DeviceScan::InclusiveSum(nullptr, scratchBytes, in, scanned, n, stream));
        void * scratch = nullptr;
        CHECK(cudaMallocAsync(&scratch, scratchBytes, stream));
        if (scan)
          CHECK(cub::DeviceScan::InclusiveSum(scratch, scratchBytes, in, scanned, n, stream));
        cudaEvent_t done = nullptr;
        if (events)
        {
          CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
          CHECK(cudaEventRecord(done, stream));
        }
        unsigned long long sum = 0;
        unsigned           last = 0;
        CHECK(cudaMemcpyAsync(&sum, total, sizeof sum, cudaMemcpyDeviceToHost, stream));
        CHECK(cudaMemcpyAsync(&last, scanned + n - 1, sizeof last, cudaMemcpyDeviceToHost, stream));
        CHECK(cudaFreeAsync(scratch, stream));
        CHECK(cudaFreeAsync(total, stream));
        CHECK(cudaFreeAsync(scanned, stream));
        CHECK(cudaFreeAsync(in, stream));
        CHECK(cudaStreamSynchronize(stream));
        if (events)
        {
          CHECK(cudaEventQuery(done));
          CHECK(cudaEventDestroy(done));
        }
        if (sum != expected || (scan && last != static_cast<unsigned>(expected)))
          ++failures;
      }
      CHECK(cudaStreamDestroy(stream));
    });
  for (auto & th : pool)
    th.join();
  std::printf("threads %d rounds %d items %u: %d wrong results\n", threads, rounds, n, failures.load());
  return failures.load() == 0 ? 0 : 1;
}
