// Benchmark of the waterpixels (chs::WaterpixelsCUDA, the code under itk::CudaWaterpixelImageFilter) against the
// sequential Image Foresting Transform (the module's CPU reference, on this machine's CPU), on raw uint8 inputs
// written by bench/wp_peers.py, which times scikit-image's watershed on the same files in the same run. Checks that
// the GPU labels equal the sequential ones. Prints a line per case and writes JSON.
//
//   CudaWaterpixelBenchmark --json out.json [--reps N] [--cpu-reps N] NAME:FILE:NXxNY[xNZ]:SIGMA[,SIGMA...] ...
#include "chsWaterpixels.h"

#include <algorithm>
#include <chrono>
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

double
Median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double
WallMs(F && f)
{
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::vector<std::string>
Split(const std::string & s, char c)
{
  std::vector<std::string> parts;
  std::stringstream        ss(s);
  for (std::string p; std::getline(ss, p, c);)
    parts.push_back(p);
  return parts;
}

} // namespace

int
main(int argc, char ** argv)
{
  std::string       jsonFile = "wp_module.json";
  int               reps = 10, cpuReps = 1;
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonFile = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
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
  json << "{\"device\": \"" << chs::CudaDeviceName(0) << "\", \"records\": [\n";
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
      chs::WaterpixelResult r = chs::WaterpixelsCUDA(image.data(), grid, p, gpu.data(), nullptr, {}, &info); // warm-up
      std::vector<double>   kernel, endToEnd, rounds;
      for (int k = 0; k < reps; ++k)
      {
        endToEnd.push_back(
          WallMs([&] { r = chs::WaterpixelsCUDA(image.data(), grid, p, gpu.data(), nullptr, {}, &info); }));
        kernel.push_back(info.kernelMilliseconds);
        rounds.push_back(double(r.rounds));
      }
      std::vector<double> cpuMs;
      for (int k = 0; k < cpuReps; ++k)
        cpuMs.push_back(WallMs([&] { chs::WaterpixelsCPU(image.data(), grid, p, cpu.data(), nullptr); }));
      if (cpuMs.empty())
        cpuMs.push_back(0.0); // not run (--cpu-reps 0)
      const bool  identical = cpuReps > 0 && gpu == cpu;
      std::string shape;
      for (size_t d = 0; d < c.size.size(); ++d)
        shape += (d ? "x" : "") + std::to_string(c.size[d]);
      const double kernelMs = Median(kernel), e2eMs = Median(endToEnd), seqMs = Median(cpuMs);
      std::printf("%-8s %-14s sigma %3llu  superpixels %8llu  k %6.2f  rounds %4.0f-%-4.0f kernel %9.3f ms  "
                  "end-to-end %9.2f ms  sequential IFT %10.1f ms  (x%.0f kernel, x%.0f end-to-end)  peak %7.1f MiB  "
                  "identical=%s\n",
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
                  identical ? "yes" : "NO");
      std::fflush(stdout);
      json << (first ? "" : ",\n") << "  {\"case\": \"" << c.name << "\", \"shape\": \"" << shape
           << "\", \"voxels\": " << n << ", \"sigma\": " << sigma << ", \"superpixels\": " << r.superpixels
           << ", \"compactness\": " << r.compactness
           << ", \"rounds_min\": " << *std::min_element(rounds.begin(), rounds.end())
           << ", \"rounds_max\": " << *std::max_element(rounds.begin(), rounds.end()) << ", \"kernel_ms\": " << kernelMs
           << ", \"update_ms\": " << e2eMs << ", \"sequential_ms\": " << seqMs
           << ", \"peak_device_bytes\": " << info.peakDeviceBytes
           << ", \"identical_to_sequential\": " << (identical ? "true" : "false") << "}";
      first = false;
    }
  }
  json << "\n]}\n";
  return 0;
}
