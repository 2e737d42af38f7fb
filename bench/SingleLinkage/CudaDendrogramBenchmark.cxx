// Benchmark of the single-linkage dendrogram filters (itk::CudaGraphToSingleLinkageDendrogramFilter and
// itk::CudaImageToSingleLinkageDendrogramFilter) against the sequential union-find dendrogram (the module's CPU
// reference: sort, then Kruskal with the bottom-up union-find of PANDORA's algorithm 2) on this machine's CPU, in one
// run on the same inputs. Checks that the GPU dendrogram equals the sequential one, and prints a line per case and
// writes JSON.
//
//   CudaDendrogramBenchmark --json out.json [--reps N] [--sizes N,N,...] [--no-gpu] [--no-cpu] [--no-3d]
//                           [--graph NAME:FILE[:ZFILE]]... [--staging CHUNK_KIB,SLOTS,WORKERS,STREAM|default]
// A graph file (written by bench/SingleLinkage/peers.py) holds uint64 n, uint64 m, then m uint32 u, m uint32 v, m
// float64 w. With ZFILE, the GPU dendrogram's SciPy linkage matrix is written there (float64, n-1 rows of 4) for the
// peer script to compare with SciPy's.
#include "Common/chsBenchTiming.h"
#include "itkCudaGraphToSingleLinkageDendrogramFilter.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkImage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace
{

using Backend     = itk::CudaSegmentationBackendEnums::Backend;
using GraphFilter = itk::CudaGraphToSingleLinkageDendrogramFilter<double>;

using chs_bench::Median;
using chs_bench::WallMs;

struct Result
{
  std::string name, kind;
  uint64_t    vertices = 0, edges = 0;
  double      gpuKernelMs = 0, gpuMstMs = 0, gpuDendrogramMs = 0, gpuEndToEndMs = 0, gpuFirstMs = 0, cpuMs = 0;
  uint64_t    bytesUp = 0, bytesDown = 0; // the edges (u, v, w) or the image up; the dendrogram's arrays down
  uint64_t    peakBytes = 0;
  unsigned    levels = 0, rounds = 0;
  bool        identical = false, gpu = false, cpu = false;
};

std::vector<Result> results;

void
Print(const Result & r)
{
  std::printf(
    "%-28s %11llu edges  GPU kernels %9.3f ms (MST %8.3f, dendrogram %8.3f) end-to-end %9.3f ms (first %9.3f)  "
    "sequential %10.1f ms  levels %2u  rounds %2u  %s\n",
    r.name.c_str(),
    (unsigned long long)r.edges,
    r.gpuKernelMs,
    r.gpuMstMs,
    r.gpuDendrogramMs,
    r.gpuEndToEndMs,
    r.gpuFirstMs,
    r.cpuMs,
    r.levels,
    r.rounds,
    r.gpu && r.cpu ? (r.identical ? "identical" : "DIFFERENT") : "");
  std::fflush(stdout);
}

bool
Same(const itk::Dendrogram * a, const itk::Dendrogram * b)
{
  return a->GetParents()->CastToSTLConstContainer() == b->GetParents()->CastToSTLConstContainer() &&
         a->GetWeights()->CastToSTLConstContainer() == b->GetWeights()->CastToSTLConstContainer() &&
         a->GetEdgeIds()->CastToSTLConstContainer() == b->GetEdgeIds()->CastToSTLConstContainer();
}

/** Times the filter on the GPU (reps runs after a warm-up: medians) and once on the CPU; compares. */
template <class FMake>
void
Measure(Result & r, FMake && make, int reps, bool gpu, bool cpu)
{
  itk::Dendrogram::Pointer gpuResult, cpuResult;
  if (gpu)
  {
    std::vector<double> kernel, mst, dend, e2e;
    for (int i = 0; i <= reps; ++i)
    {
      auto         filter = make(Backend::CUDA);
      const double ms     = WallMs([&] { filter->Update(); });
      if (i == 0)
      {
        // Warm-up: the CUDA context, the staging buffers, and the output's arrays new (their pages mapped on first
        // use); later runs take the arrays that the previous output left in the host array cache.
        r.gpuFirstMs = ms;
        continue;
      }
      e2e.push_back(ms);
      kernel.push_back(filter->GetKernelMilliseconds());
      mst.push_back(filter->GetSpanningTreeMilliseconds());
      dend.push_back(filter->GetDendrogramMilliseconds());
      r.peakBytes = filter->GetPeakDeviceMemory();
      r.levels    = filter->GetNumberOfContractionLevels();
      r.rounds    = filter->GetNumberOfBoruvkaRounds();
      if (i == reps)
      {
        gpuResult = filter->GetOutput();
        gpuResult->DisconnectPipeline();
      }
    }
    r.gpuKernelMs     = Median(kernel);
    r.gpuMstMs        = Median(mst);
    r.gpuDendrogramMs = Median(dend);
    r.gpuEndToEndMs   = Median(e2e);
    r.gpu             = true;
  }
  if (cpu)
  {
    auto filter = make(Backend::CPU);
    r.cpuMs     = WallMs([&] { filter->Update(); });
    cpuResult   = filter->GetOutput();
    cpuResult->DisconnectPipeline();
    r.cpu = true;
  }
  if (gpuResult && cpuResult)
    r.identical = Same(gpuResult, cpuResult);
  r.vertices = (gpuResult ? gpuResult : cpuResult)->GetNumberOfVertices();
  // parents (2n - 1) x 4; weights, end vertices and edge ids (n - 1) x (8 + 4 + 4 + 8)
  r.bytesDown = (2 * r.vertices - 1) * 4 + (r.vertices - 1) * (8 + 4 + 4 + sizeof(itk::IdentifierType));
  Print(r);
  results.push_back(r);
}

struct EdgeArrays
{
  uint64_t                                  n = 0;
  GraphFilter::VertexContainerType::Pointer u = GraphFilter::VertexContainerType::New();
  GraphFilter::VertexContainerType::Pointer v = GraphFilter::VertexContainerType::New();
  GraphFilter::WeightContainerType::Pointer w = GraphFilter::WeightContainerType::New();
};

/** Trees on n vertices, shuffled ids and edge order: random recursive (vertex i joins a uniform earlier vertex) with
 * uniform weights; a path whose weights rise along it (the dendrogram is one chain of height n - 1); a star with
 * uniform weights (one chain, the sorting case). */
EdgeArrays
MakeTree(uint64_t n, const std::string & shape, unsigned seed)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> weight(0.0, 1.0);
  std::vector<uint32_t>                  id(n);
  std::iota(id.begin(), id.end(), 0u);
  std::shuffle(id.begin(), id.end(), rng);
  std::vector<uint64_t> order(n - 1);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  EdgeArrays g;
  g.n = n;
  g.u->resize(n - 1);
  g.v->resize(n - 1);
  g.w->resize(n - 1);
  for (uint64_t i = 1; i < n; ++i)
  {
    uint64_t j = 0;
    double   w = weight(rng);
    if (shape == "random")
      j = std::uniform_int_distribution<uint64_t>(0, i - 1)(rng);
    else if (shape == "path")
    {
      j = i - 1;
      w = double(i);
    }
    const uint64_t e = order[i - 1];
    (*g.u)[e]        = id[j];
    (*g.v)[e]        = id[i];
    (*g.w)[e]        = w;
  }
  return g;
}

EdgeArrays
ReadGraph(const std::string & file)
{
  std::ifstream in(file, std::ios::binary);
  uint64_t      head[2];
  in.read(reinterpret_cast<char *>(head), sizeof(head));
  EdgeArrays g;
  g.n = head[0];
  g.u->resize(head[1]);
  g.v->resize(head[1]);
  g.w->resize(head[1]);
  in.read(reinterpret_cast<char *>(g.u->CastToSTLContainer().data()), head[1] * 4);
  in.read(reinterpret_cast<char *>(g.v->CastToSTLContainer().data()), head[1] * 4);
  in.read(reinterpret_cast<char *>(g.w->CastToSTLContainer().data()), head[1] * 8);
  if (!in)
    throw std::runtime_error("cannot read " + file);
  return g;
}

void
RunGraph(const std::string & name,
         const std::string & kind,
         const EdgeArrays &  g,
         bool                tree,
         int                 reps,
         bool                gpu,
         bool                cpu,
         const std::string & zFile = "")
{
  Result r;
  r.name    = name;
  r.kind    = kind;
  r.edges   = g.u->size();
  r.bytesUp = r.edges * (2 * sizeof(uint32_t) + sizeof(double));
  Measure(
    r,
    [&](Backend b)
    {
      auto filter = GraphFilter::New();
      filter->SetEdges(g.u, g.v, g.w);
      filter->SetNumberOfVertices(g.n);
      filter->SetInputIsTree(tree);
      filter->SetBackend(b);
      return filter;
    },
    reps,
    gpu,
    cpu);
  if (!zFile.empty())
  {
    auto filter = GraphFilter::New();
    filter->SetEdges(g.u, g.v, g.w);
    filter->SetNumberOfVertices(g.n);
    filter->SetBackend(gpu ? Backend::CUDA : Backend::CPU);
    filter->Update();
    const auto    z = filter->GetOutput()->ComputeLinkageMatrix();
    std::ofstream out(zFile, std::ios::binary);
    out.write(reinterpret_cast<const char *>(z->CastToSTLConstContainer().data()), z->size() * sizeof(double));
  }
}

/** Smoothed uniform noise, 8-bit: a box blur of radius 2 along each axis, scaled to 0..255. */
template <unsigned D>
typename itk::Image<uint8_t, D>::Pointer
SmoothNoise(const std::vector<uint64_t> & size, unsigned seed)
{
  using ImageType = itk::Image<uint8_t, D>;
  typename ImageType::SizeType s;
  uint64_t                     n = 1;
  for (unsigned d = 0; d < D; ++d)
    n *= (s[d] = size[d]);
  std::vector<float>                    v(n), t(n);
  std::mt19937                          rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto & x : v)
    x = u(rng);
  uint64_t stride = 1;
  for (unsigned d = 0; d < D; ++d)
  {
#pragma omp parallel for
    for (int64_t i = 0; i < int64_t(n); ++i)
    {
      const uint64_t c   = uint64_t(i) / stride % size[d];
      float          sum = 0;
      int            k   = 0;
      for (int o = -2; o <= 2; ++o)
        if (int64_t(c) + o >= 0 && c + o < size[d])
          sum += v[i + o * int64_t(stride)], ++k;
      t[i] = sum / k;
    }
    v.swap(t);
    stride *= size[d];
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  auto image          = ImageType::New();
  image->SetRegions(s);
  image->Allocate();
  for (uint64_t i = 0; i < n; ++i)
    image->GetBufferPointer()[i] = uint8_t(std::lround(255.0f * (v[i] - *lo) / (*hi - *lo)));
  return image;
}

template <unsigned D>
void
RunImage(const std::string & name, const std::vector<uint64_t> & size, int reps, bool gpu, bool cpu)
{
  using ImageType  = itk::Image<uint8_t, D>;
  const auto image = SmoothNoise<D>(size, 7);
  Result     r;
  r.name           = name;
  r.kind           = "image";
  r.bytesUp        = image->GetLargestPossibleRegion().GetNumberOfPixels(); // 8-bit pixels
  const uint64_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  r.edges          = n - 1; // the tree's edges
  Measure(
    r,
    [&](Backend b)
    {
      auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
      filter->SetInput(image);
      filter->SetBackend(b);
      return filter;
    },
    reps,
    gpu,
    cpu);
}

} // namespace

int
main(int argc, char * argv[])
{
  std::string              json;
  int                      reps = 5;
  bool                     gpu = true, cpu = true, threeD = true;
  std::vector<uint64_t>    sizes{ 1000000, 10000000, 100000000 };
  std::vector<std::string> graphs;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else if (a == "--no-gpu")
      gpu = false;
    else if (a == "--no-cpu")
      cpu = false;
    else if (a == "--no-3d")
      threeD = false;
    else if (a == "--sizes" && i + 1 < argc)
    {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string s; std::getline(ss, s, ',');)
        sizes.push_back(std::stoull(s));
    }
    else if (a == "--graph" && i + 1 < argc)
      graphs.push_back(argv[++i]);
    else if (a == "--staging" && i + 1 < argc && chs_bench::SetStaging(argv[i + 1]))
      ++i;
    else
    {
      std::cerr
        << "usage: CudaDendrogramBenchmark --json out.json [--reps N] [--sizes N,...] [--no-gpu] [--no-cpu] [--no-3d] "
           "[--graph NAME:FILE[:ZFILE]]... [--staging CHUNK_KIB,SLOTS,WORKERS,STREAM|default]\n";
      return 2;
    }
  }
  try
  {
    for (const std::string shape : { "random", "path", "star" })
      for (uint64_t edges : sizes)
        RunGraph("tree-" + shape + "-" + std::to_string(edges / 1000000) + "M",
                 "tree",
                 MakeTree(edges + 1, shape, 3),
                 true,
                 reps,
                 gpu,
                 cpu);
    RunImage<2>("image-4096x4096", { 4096, 4096 }, reps, gpu, cpu);
    if (threeD)
      RunImage<3>("image-512x512x512", { 512, 512, 512 }, reps, gpu, cpu);
    for (const std::string & spec : graphs)
    {
      std::vector<std::string> p;
      std::stringstream        ss(spec);
      for (std::string s; std::getline(ss, s, ':');)
        p.push_back(s);
      RunGraph(p.at(0), "graph", ReadGraph(p.at(1)), false, reps, gpu, cpu, p.size() > 2 ? p[2] : "");
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  if (!json.empty())
  {
    std::ofstream out(json);
    out << "{\n  \"device\": \"" << (gpu ? chs::CudaDeviceName(0) : std::string("none")) << "\",\n  \"cases\": [\n";
    for (size_t i = 0; i < results.size(); ++i)
    {
      const Result & r = results[i];
      out << "    {\"name\": \"" << r.name << "\", \"kind\": \"" << r.kind << "\", \"vertices\": " << r.vertices
          << ", \"tree_edges\": " << r.edges << ", \"gpu_kernel_ms\": " << r.gpuKernelMs
          << ", \"gpu_mst_ms\": " << r.gpuMstMs << ", \"gpu_dendrogram_ms\": " << r.gpuDendrogramMs
          << ", \"gpu_end_to_end_ms\": " << r.gpuEndToEndMs << ", \"gpu_first_update_ms\": " << r.gpuFirstMs
          << ", \"bytes_up\": " << r.bytesUp << ", \"bytes_down\": " << r.bytesDown
          << ", \"sequential_ms\": " << r.cpuMs << ", \"peak_device_bytes\": " << r.peakBytes
          << ", \"contraction_levels\": " << r.levels << ", \"boruvka_rounds\": " << r.rounds
          << ", \"identical\": " << (r.identical ? "true" : "false") << "}" << (i + 1 < results.size() ? "," : "")
          << "\n";
    }
    out << "  ]\n}\n";
  }
  bool ok = true;
  for (const Result & r : results)
    ok = ok && (!(r.gpu && r.cpu) || r.identical);
  return ok ? 0 : 3;
}
