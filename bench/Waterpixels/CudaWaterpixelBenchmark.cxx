// Benchmark of the waterpixels (chs::WaterpixelsCUDA, the code under itk::CudaWaterpixelImageFilter) against the
// sequential Image Foresting Transform (the module's CPU reference, on this machine's CPU), on raw uint8 inputs
// written by bench/Waterpixels/peers.py, which times scikit-image's watershed on the same files in the same run. Checks
// that the GPU labels equal the sequential ones. Prints a line per case and writes JSON.
//
//   CudaWaterpixelBenchmark --json out.json [--reps N] [--cpu-reps N] [--no-gpu] NAME:FILE:NXxNY[xNZ]:SIGMA[,SIGMA...]
//   CudaWaterpixelBenchmark --scale [--json out.json] [--reps N] [--max-voxels N]   (waterpixels and the seeded IFT,
//                           4096^2 to 2048x2048x1100 or up to N voxels, 64-bit path forced below 2^32)
//   ...
#include "Common/chsBenchTiming.h"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Waterpixels/chsWaterpixelsBackends.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct Case
{
  std::string           name, file;
  std::vector<uint64_t> size;
  std::vector<uint64_t> sigmas;
};

using chs_bench::Median;
using chs_bench::ParallelFor;
using chs_bench::WallMs;

std::vector<std::string>
Split(const std::string & s, char c)
{
  std::vector<std::string> parts;
  std::stringstream        ss(s);
  for (std::string p; std::getline(ss, p, c);)
    parts.push_back(p);
  return parts;
}

/** A sequential IFT with a monotone radix heap over the 64-bit keys (V, D) of include/chs/ForestingTransform.h: the
 * fastest exact sequential method we have for float weights (Dial's buckets need integer costs). Pops in key order,
 * chooses each pixel's predecessor and label when it is popped, like the module's CPU reference, whose binary heap
 * it replaces. Arc weight B(q), face connectivity, 2D or 3D. */
class RadixHeapIFT
{
public:
  void
  Run(const float * B, const uint32_t * seeds, const chs::Grid & grid, uint32_t * labels)
  {
    const int64_t         nx = grid.size[0], ny = grid.size[1], nz = grid.size[2], n = nx * ny * nz;
    std::vector<uint64_t> key(n, ~0ull);
    std::vector<uint8_t>  done(n, 0);
    for (auto & b : m_Buckets)
      b.clear();
    m_Last = 0;
    m_Size = 0;
    for (int64_t i = 0; i < n; ++i)
      if (seeds[i])
      {
        key[i] = 0;
        Push(0, uint32_t(i));
      }
    const int64_t offsets[6] = { -nx * ny, -nx, -1, 1, nx, nx * ny };
    const int     first = grid.dimension == 3 ? 0 : 1, last = grid.dimension == 3 ? 6 : 5;
    const auto    code = [](float f)
    {
      uint32_t c;
      std::memcpy(&c, &f, 4);
      return f == 0 ? 0u : c;
    };
    while (m_Size)
    {
      const auto [k, q] = Pop();
      if (done[q] || k != key[q])
        continue;
      done[q]         = 1;
      const int64_t x = q % nx, y = q / nx % ny, z = q / (nx * ny);
      const bool    inside[6] = { z > 0, y > 0, x > 0, x + 1 < nx, y + 1 < ny, z + 1 < nz };
      uint64_t      bestKey   = ~0ull;
      int64_t       best      = q;
      for (int o = first; o < last; ++o) // neighbours in raster order
      {
        if (!inside[o])
          continue;
        const int64_t  p = q + offsets[o];
        const uint32_t w = code(B[q]);
        if (!seeds[q] && done[p] && key[p] < bestKey && Offer(key[p], w) == k)
        {
          bestKey = key[p];
          best    = p;
        }
        if (!done[p])
        {
          const uint64_t offer = Offer(k, code(B[p]));
          if (offer < key[p])
          {
            key[p] = offer;
            Push(offer, uint32_t(p));
          }
        }
      }
      labels[q] = seeds[q] ? seeds[q] : labels[best];
    }
  }

private:
  static uint64_t
  Offer(uint64_t kp, uint32_t w)
  {
    return w > uint32_t(kp >> 32) ? uint64_t(w) << 32 : kp + 1;
  }
  void
  Push(uint64_t k, uint32_t v)
  {
    m_Buckets[k == m_Last ? 0 : 64 - __builtin_clzll(k ^ m_Last)].push_back({ k, v });
    ++m_Size;
  }
  std::pair<uint64_t, uint32_t>
  Pop()
  {
    if (m_Buckets[0].empty())
    {
      int i = 1;
      while (m_Buckets[i].empty())
        ++i;
      auto & b = m_Buckets[i];
      m_Last   = std::min_element(b.begin(), b.end())->first;
      for (const auto & e : b)
        m_Buckets[e.first == m_Last ? 0 : 64 - __builtin_clzll(e.first ^ m_Last)].push_back(e);
      b.clear();
    }
    const auto e = m_Buckets[0].back();
    m_Buckets[0].pop_back();
    --m_Size;
    return e;
  }
  std::vector<std::pair<uint64_t, uint32_t>> m_Buckets[65];
  uint64_t                                   m_Last = 0;
  size_t                                     m_Size = 0;
};

/** --scale: waterpixels (chs::WaterpixelsCUDA, grid step 10, cell-centre seeds) and the seeded Image Foresting
 * Transform (chs::ImageForestingTransformCUDA, the Target arc weight, a seed every 16 voxels along each axis) on
 * synthetic uint8 images from 4096^2 to the 2048 x 2048 x 1100 volume of the connected-components benchmark (4.6e9
 * voxels, above 2^32), uint32 labels, face connectivity: kernel and end-to-end times, voxels per second, peak and
 * reserved device memory; below 2^32 - 1 voxels also with the 64-bit path forced. A size the library refuses is
 * printed with its message. */
int
Scale(const std::string & jsonFile, int reps, uint64_t maxVoxels)
{
  const int64_t sizes[][3] = { { 4096, 4096, 1 }, { 512, 512, 512 }, { 1024, 1024, 1024 }, { 2048, 2048, 1100 } };
  std::ofstream json(jsonFile);
  json << "{\"device\": \"" << chs::CudaDeviceName(0) << "\", \"records\": [\n";
  bool first = true;
  for (const auto & size : sizes)
  {
    const int64_t nx = size[0], ny = size[1], nz = size[2], n = nx * ny * nz;
    if (uint64_t(n) > maxVoxels)
      continue;
    chs::Grid grid;
    grid.dimension = nz > 1 ? 3 : 2;
    grid.size[0]   = uint64_t(nx);
    grid.size[1]   = uint64_t(ny);
    grid.size[2]   = uint64_t(nz);
    const std::string name =
      std::to_string(nx) + "x" + std::to_string(ny) + (nz > 1 ? "x" + std::to_string(nz) : std::string());
    // Waves of a few periods and hashed noise of 8 levels: edges and plateaux at every scale.
    std::vector<uint8_t>  image(n);
    std::vector<uint32_t> seeds(n), labels(n);
    ParallelFor(n,
                [&](int64_t a, int64_t b)
                {
                  for (int64_t p = a; p < b; ++p)
                  {
                    const int64_t x = p % nx, y = p / nx % ny, z = p / (nx * ny);
                    uint64_t      h = uint64_t(p) * 0x9E3779B97F4A7C15ull;
                    h ^= h >> 31;
                    image[p] = uint8_t(120 + 60 * std::sin(x * 0.07) * std::cos(y * 0.05) +
                                       40 * std::sin(z * 0.09 + x * 0.013) + double(h % 8));
                    seeds[p] = x % 16 == 8 && y % 16 == 8 && (nz == 1 || z % 16 == 8)
                                 ? uint32_t(1 + x / 16 + (y / 16) * 1000 + (z / 16) * 1000000)
                                 : 0u;
                  }
                });
    for (const bool wide : { false, true })
    {
      if (wide && n >= int64_t(0xffffffff))
        break;
      const std::string label = wide ? name + " (64-bit path, forced)" : name;
      const auto        row   = [&](const char * kind, auto && run)
      {
        std::vector<double> kernel, wall;
        chs::RunInfo        info;
        std::string         refused;
        const int           r = n > (int64_t(1) << 31) ? std::min(reps, 3) : reps;
        for (int i = 0; i <= r && refused.empty(); ++i) // the first run warms up
          try
          {
            const double ms = WallMs([&] { run(info); });
            if (i > 0)
            {
              wall.push_back(ms);
              kernel.push_back(info.kernelMilliseconds);
            }
          }
          catch (const std::exception & e)
          {
            refused = e.what();
          }
        if (!refused.empty())
        {
          std::printf("%s %s: refused: %s\n", kind, label.c_str(), refused.c_str());
          return;
        }
        const double k = Median(kernel), e = Median(wall);
        std::printf("%s %s: kernel %.2f ms (%.2f Gvoxel/s), end to end %.2f ms (%.2f Gvoxel/s), peak %.2f GB, "
                    "reserved %.2f GB\n",
                    kind,
                    label.c_str(),
                    k,
                    n / k / 1e6,
                    e,
                    n / e / 1e6,
                    info.peakDeviceBytes / 1e9,
                    info.reservedDeviceBytes / 1e9);
        json << (first ? "" : ",\n") << "  {\"kind\": \"" << kind << "-scale\", \"name\": \"" << label
             << "\", \"voxels\": " << n << ", \"kernel_ms\": " << k << ", \"end_to_end_ms\": " << e
             << ", \"peak_device_bytes\": " << info.peakDeviceBytes
             << ", \"reserved_device_bytes\": " << info.reservedDeviceBytes << ", \"reps\": " << kernel.size() << "}";
        first = false;
      };
      chs::WaterpixelParameters wp;
      for (int d = 0; d < 3; ++d)
        wp.gridStep[d] = 10;
      wp.forceWideIndex = wide;
      row("waterpixels",
          [&](chs::RunInfo & info)
          { chs::WaterpixelsCUDA(image.data(), grid, wp, labels.data(), nullptr, chs::ExecutionContext{}, &info); });
      chs::ForestingTransformParameters ift;
      ift.forceWideIndex = wide;
      row("ift",
          [&](chs::RunInfo & info)
          {
            chs::ImageForestingTransformCUDA(
              image.data(), seeds.data(), grid, ift, labels.data(), nullptr, nullptr, chs::ExecutionContext{}, &info);
          });
    }
  }
  json << "\n]}\n";
  return 0;
}

} // namespace

int
main(int argc, char ** argv)
{
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--scale")
    {
      std::string jsonFile  = "wp_scale.json";
      int         reps      = 5;
      uint64_t    maxVoxels = ~uint64_t(0);
      for (int j = 1; j < argc; ++j)
        if (std::string(argv[j]) == "--json" && j + 1 < argc)
          jsonFile = argv[j + 1];
        else if (std::string(argv[j]) == "--reps" && j + 1 < argc)
          reps = std::stoi(argv[j + 1]);
        else if (std::string(argv[j]) == "--max-voxels" && j + 1 < argc)
          maxVoxels = std::stoull(argv[j + 1]);
      return Scale(jsonFile, reps, maxVoxels);
    }
  std::string       jsonFile = "wp_module.json";
  int               reps = 10, cpuReps = 1;
  bool              noGpu = false; // check the sequential peers against each other on a machine without a GPU
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonFile = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else if (a == "--no-gpu")
      noGpu = true;
    else if (a == "--cpu-reps" && i + 1 < argc)
      cpuReps = std::stoi(argv[++i]);
    else
    {
      const auto parts = Split(a, ':');
      if (parts.size() != 4)
      {
        std::cerr << "bad case " << a << " (NAME:FILE:NXxNY[xNZ]:SIGMA[,SIGMA...])\n";
        return 2;
      }
      Case c{ parts[0], parts[1], {}, {} };
      for (const auto & s : Split(parts[2], 'x'))
        c.size.push_back(std::stoull(s));
      for (const auto & s : Split(parts[3], ','))
        c.sigmas.push_back(std::stoull(s));
      cases.push_back(c);
    }
  }
  std::ofstream json(jsonFile);
  json << "{\"device\": \"" << (noGpu ? std::string("none") : chs::CudaDeviceName(0)) << "\", \"records\": [\n";
  bool first = true;
  for (const Case & c : cases)
  {
    chs::Grid grid;
    grid.dimension = unsigned(c.size.size());
    for (size_t d = 0; d < c.size.size(); ++d)
      grid.size[d] = c.size[d];
    const uint64_t       n = grid.NumberOfVoxels();
    std::vector<uint8_t> image(n);
    FILE *               f = std::fopen(c.file.c_str(), "rb");
    if (!f || std::fread(image.data(), 1, n, f) != n)
    {
      std::cerr << "cannot read " << n << " bytes from " << c.file << '\n';
      return 1;
    }
    std::fclose(f);
    for (uint64_t sigma : c.sigmas)
    {
      chs::WaterpixelParameters p;
      p.gridStep[0] = p.gridStep[1] = p.gridStep[2] = sigma;
      std::vector<uint32_t> gpu(n), cpu(n);
      chs::RunInfo          info;
      chs::WaterpixelResult r;
      std::vector<double>   kernel{ 0.0 }, endToEnd{ 0.0 }, rounds{ 0.0 };
      if (!noGpu)
      {
        r = chs::WaterpixelsCUDA(image.data(), grid, p, gpu.data(), nullptr, {}, &info); // warm-up
        kernel.clear(), endToEnd.clear(), rounds.clear();
      }
      for (int k = 0; k < reps && !noGpu; ++k)
      {
        endToEnd.push_back(
          WallMs([&] { r = chs::WaterpixelsCUDA(image.data(), grid, p, gpu.data(), nullptr, {}, &info); }));
        kernel.push_back(info.kernelMilliseconds);
        rounds.push_back(double(r.rounds));
      }
      std::vector<double> cpuMs;
      std::vector<float>  border(n);
      for (int k = 0; k < cpuReps; ++k)
        cpuMs.push_back(WallMs([&] { chs::WaterpixelsCPU(image.data(), grid, p, cpu.data(), border.data()); }));
      if (noGpu)
        gpu = cpu;
      // The radix-heap IFT, timed on the border image and seeds alone (it is given B for free).
      double radixMs        = 0;
      bool   radixIdentical = false;
      if (cpuReps > 0)
      {
        std::vector<uint32_t> seeds(n, 0), radix(n);
        uint32_t              label  = 0;
        const auto            middle = [&](uint64_t i, int d)
        {
          const uint64_t first = i * sigma, last = std::min(first + sigma, grid.size[d]) - 1;
          return (first + last) / 2;
        };
        const uint64_t cells[3] = { (grid.size[0] + sigma - 1) / sigma,
                                    (grid.size[1] + sigma - 1) / sigma,
                                    grid.dimension == 3 ? (grid.size[2] + sigma - 1) / sigma : 1 };
        for (uint64_t cz = 0; cz < cells[2]; ++cz)
          for (uint64_t cy = 0; cy < cells[1]; ++cy)
            for (uint64_t cx = 0; cx < cells[0]; ++cx)
            {
              const uint64_t z = grid.dimension == 3 ? middle(cz, 2) : 0;
              seeds[(z * grid.size[1] + middle(cy, 1)) * grid.size[0] + middle(cx, 0)] = ++label;
            }
        RadixHeapIFT heap;
        radixMs        = WallMs([&] { heap.Run(border.data(), seeds.data(), grid, radix.data()); });
        radixIdentical = radix == gpu;
      }
      if (cpuMs.empty())
        cpuMs.push_back(0.0); // not run (--cpu-reps 0)
      const bool  identical = cpuReps > 0 && gpu == cpu;
      std::string shape;
      for (size_t d = 0; d < c.size.size(); ++d)
        shape += (d ? "x" : "") + std::to_string(c.size[d]);
      const double kernelMs = Median(kernel), e2eMs = Median(endToEnd), seqMs = Median(cpuMs);
      std::printf("%-8s %-14s sigma %3llu  superpixels %8llu  k %6.2f  rounds %4.0f-%-4.0f kernel %9.3f ms  "
                  "end-to-end %9.2f ms  sequential IFT %10.1f ms  (x%.0f kernel, x%.0f end-to-end)  peak %7.1f MiB  "
                  "identical=%s  radix-heap IFT %8.1f ms identical=%s\n",
                  c.name.c_str(),
                  shape.c_str(),
                  (unsigned long long)sigma,
                  (unsigned long long)r.superpixels,
                  r.compactness,
                  *std::min_element(rounds.begin(), rounds.end()),
                  *std::max_element(rounds.begin(), rounds.end()),
                  kernelMs,
                  e2eMs,
                  seqMs,
                  seqMs / kernelMs,
                  seqMs / e2eMs,
                  info.peakDeviceBytes / 1048576.0,
                  identical ? "yes" : "NO",
                  radixMs,
                  radixIdentical ? "yes" : "NO");
      std::fflush(stdout);
      json << (first ? "" : ",\n") << "  {\"case\": \"" << c.name << "\", \"shape\": \"" << shape
           << "\", \"voxels\": " << n << ", \"sigma\": " << sigma << ", \"superpixels\": " << r.superpixels
           << ", \"compactness\": " << r.compactness
           << ", \"rounds_min\": " << *std::min_element(rounds.begin(), rounds.end())
           << ", \"rounds_max\": " << *std::max_element(rounds.begin(), rounds.end()) << ", \"kernel_ms\": " << kernelMs
           << ", \"update_ms\": " << e2eMs << ", \"sequential_ms\": " << seqMs
           << ", \"peak_device_bytes\": " << info.peakDeviceBytes
           << ", \"identical_to_sequential\": " << (identical ? "true" : "false")
           << ", \"radix_heap_ift_ms\": " << radixMs
           << ", \"radix_heap_identical\": " << (radixIdentical ? "true" : "false") << "}";
      first = false;
    }
  }
  json << "\n]}\n";
  return 0;
}
