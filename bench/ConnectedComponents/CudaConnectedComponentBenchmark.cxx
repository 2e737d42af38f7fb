// Benchmark of itk::CudaConnectedComponentImageFilter against ITK's ConnectedComponentImageFilter (all cores),
// on raw uint8 inputs written by bench/ConnectedComponents/peers.py (which times the Python peers on the same files, in
// the same run). Prints a line per measurement and writes JSON.
//
//   CudaConnectedComponentBenchmark --json out.json [--reps N] [--no-itk] NAME:FILE:NXxNY[xNZ][:noitk] ...
#include "Common/chsBenchTiming.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "chs/Execution.h"

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
using Backend = itk::CudaSegmentationBackendEnums::Backend;

struct Case
{
  std::string           name, file;
  std::vector<uint64_t> size;
  bool                  itk = true;
};

using chs_bench::Median;
using chs_bench::WallMs;

template <unsigned D>
void
RunCase(const Case & c, int reps, std::ostream & json, bool & firstRecord)
{
  using Image  = itk::Image<unsigned char, D>;
  using Labels = itk::Image<unsigned int, D>;
  typename Image::SizeType size;
  for (unsigned d = 0; d < D; ++d)
    size[d] = c.size[d];
  auto image = Image::New();
  image->SetRegions(size);
  image->Allocate();
  const uint64_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  {
    FILE * f = std::fopen(c.file.c_str(), "rb");
    if (!f || std::fread(image->GetBufferPointer(), 1, n, f) != n)
    {
      std::cerr << "cannot read " << n << " bytes from " << c.file << '\n';
      std::exit(1);
    }
    std::fclose(f);
  }
  for (bool full : { false, true })
  {
    auto ours = itk::CudaConnectedComponentImageFilter<Image, Labels>::New();
    ours->SetInput(image);
    ours->SetFullyConnected(full);
    ours->SetBackend(Backend::CUDA);
    ours->Update(); // warm-up: context, memory pool, page faults of the output
    std::vector<double> kernel, endToEnd;
    for (int r = 0; r < reps; ++r)
    {
      ours->Modified();
      endToEnd.push_back(WallMs([&] { ours->Update(); }));
      kernel.push_back(ours->GetKernelMilliseconds());
    }
    const double kernelMs = Median(kernel), e2eMs = Median(endToEnd);
    const auto   objects = ours->GetObjectCount();
    const auto   peak    = ours->GetPeakDeviceMemory();

    double itkMs     = -1;
    bool   identical = false;
    if (c.itk)
    {
      auto itkFilter = itk::ConnectedComponentImageFilter<Image, Labels>::New();
      itkFilter->SetInput(image);
      itkFilter->SetFullyConnected(full);
      itkFilter->Update();
      std::vector<double> t;
      for (int r = 0; r < 3; ++r)
      {
        itkFilter->Modified();
        t.push_back(WallMs([&] { itkFilter->Update(); }));
      }
      itkMs     = Median(t);
      identical = itkFilter->GetObjectCount() == objects && std::equal(itkFilter->GetOutput()->GetBufferPointer(),
                                                                       itkFilter->GetOutput()->GetBufferPointer() + n,
                                                                       ours->GetOutput()->GetBufferPointer());
    }
    std::string shape;
    for (unsigned d = 0; d < D; ++d)
      shape += (d ? "x" : "") + std::to_string(c.size[d]);
    std::printf("%-10s %-16s %-4s objects=%-9llu kernel %9.3f ms  Update() %9.2f ms  ITK %9.1f ms  peak %7.1f MiB  "
                "identical-to-ITK=%s\n",
                c.name.c_str(),
                shape.c_str(),
                full ? "full" : "face",
                (unsigned long long)objects,
                kernelMs,
                e2eMs,
                itkMs,
                peak / 1048576.0,
                c.itk ? (identical ? "yes" : "NO") : "not run");
    std::fflush(stdout);
    json << (firstRecord ? "" : ",\n") << "  {\"case\": \"" << c.name << "\", \"shape\": \"" << shape
         << "\", \"voxels\": " << n << ", \"connectivity\": \"" << (full ? "full" : "face")
         << "\", \"objects\": " << objects << ", \"kernel_ms\": " << kernelMs << ", \"update_ms\": " << e2eMs
         << ", \"peak_device_bytes\": " << peak << ", \"input_bytes\": " << n << ", \"label_bytes\": " << 4 * n
         << ", \"itk_ms\": " << itkMs
         << ", \"itk_threads\": " << itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads()
         << ", \"identical_to_itk\": " << (c.itk ? (identical ? "true" : "false") : "null") << "}";
    firstRecord = false;
  }
}

} // namespace

int
main(int argc, char ** argv)
{
  std::string       jsonFile = "ccl_module.json";
  int               reps     = 20;
  bool              runITK   = true;
  std::vector<Case> cases;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonFile = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else if (a == "--no-itk")
      runITK = false;
    else
    {
      std::vector<std::string> parts;
      std::stringstream        ss(a);
      for (std::string p; std::getline(ss, p, ':');)
        parts.push_back(p);
      if (parts.size() < 3)
      {
        std::cerr << "usage: " << argv[0] << " --json out.json [--reps N] NAME:FILE:NXxNY[xNZ][:noitk] ...\n";
        return 2;
      }
      Case              c{ parts[0], parts[1], {}, !(parts.size() > 3 && parts[3] == "noitk") };
      std::stringstream sz(parts[2]);
      for (std::string p; std::getline(sz, p, 'x');)
        c.size.push_back(std::stoull(p));
      cases.push_back(c);
    }
  }
  if (chs::CudaDeviceCount() == 0)
  {
    std::cerr << "no CUDA device\n";
    return 1;
  }
  std::ofstream json(jsonFile);
  json << "{\"device\": \"" << chs::CudaDeviceName(0) << "\", \"itk_version\": \"" << ITK_VERSION_STRING
       << "\", \"records\": [\n";
  bool first = true;
  for (auto c : cases)
  {
    c.itk = c.itk && runITK;
    if (c.size.size() == 2)
      RunCase<2>(c, reps, json, first);
    else
      RunCase<3>(c, reps, json, first);
  }
  json << "\n]}\n";
  return 0;
}
