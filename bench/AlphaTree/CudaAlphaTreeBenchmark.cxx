// Benchmark of itk::CudaImageToAlphaTreeFilter: the CUDA construction algorithms (the level-synchronous one on
// integer scalar images only; kernel time and end-to-end Update()) against the module's sequential CPU reference
// (Kruskal, then canonicalisation) on this machine's CPU, in one run on the same images: 8-bit 4096^2 and 8192^2 images
// with natural-image statistics (smoothed noise at two scales plus constant regions with sharp edges plus fine noise),
// their 16-bit version, an RGB image, and 8-bit volumes. Checks that every GPU tree equals the CPU tree where the CPU
// ran, prints a line per case and writes JSON. With --write-inputs DIR it also writes each image as DIR/NAME.raw (with
// DIR/inputs.txt listing name, type, size, components and connectivity) for bench/AlphaTree/peers.py (Higra). Where the
// CPU reference ran, it also times the alpha cut of its tree (alpha 8, itk::AlphaTreeCutImageFilter) and its saliency
// map (itk::AlphaTreeSaliencyImageFilter) on both backends.
//
//   CudaAlphaTreeBenchmark --json out.json [--reps N] [--quick] [--cpu-max-pixels N] [--write-inputs DIR]
//                          [--only 2d|3d] [--side N]... [--volume N]... [--algorithm NAME]...
//                          [--type uint8|uint16|rgb8]... [--no-queries]
// (--side/--volume: the image sides and volume sides instead of the defaults; --algorithm: v1-insert-all,
// v2-skip-redundant, spanning-tree or level-synchronous, only those; --type: only images of these pixel types;
// --no-queries: no cut and saliency timings)
#include "Common/chsBenchTiming.h"
#include "itkAlphaTreeCutImageFilter.h"
#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkImage.h"
#include "itkVectorImage.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace
{

using Backend   = itk::CudaSegmentationBackendEnums::Backend;
using Algorithm = itk::CudaAlphaTreeEnums::Algorithm;
using chs_bench::Median;
using chs_bench::WallMs;

struct Result
{
  std::string name, type, algorithm;
  uint64_t    pixels       = 0;
  int         connectivity = 4;
  double      kernelMs = 0, buildMs = 0, canonicalMs = 0, endToEndMs = 0, firstMs = 0, cpuMs = 0;
  uint64_t    nodes = 0, inserted = 0, peakBytes = 0;
  uint64_t    bytesUp = 0, bytesDown = 0; // the image up; the parents and the internal nodes' levels down
  bool        cpu = false, identical = false;
};
std::vector<Result>      results;
std::vector<std::string> chosenAlgorithms; // --algorithm: only these (all when empty)
std::vector<int64_t>     chosenSides, chosenVolumes;
std::vector<std::string> chosenTypes;      // --type: only images of these pixel types (all when empty)
bool                     queries   = true; // --no-queries: no cut and saliency timings
bool                     cutsAgree = true; // the CPU and CUDA cuts of every tree measured

/** Box blur of radius r along one axis of a field of nx x ny x nz values, in place (running sums). */
void
BlurAxis(std::vector<float> & f, int64_t nx, int64_t ny, int64_t nz, int axis, int r)
{
  const int64_t n[3] = { nx, ny, nz }, stride[3] = { 1, nx, nx * ny };
  const int64_t len = n[axis], s = stride[axis];
  if (len == 1)
    return;
  std::vector<float> line(len);
  for (int64_t z = 0; z < (axis == 2 ? 1 : nz); ++z)
    for (int64_t y = 0; y < (axis == 1 ? 1 : ny); ++y)
      for (int64_t x = 0; x < (axis == 0 ? 1 : nx); ++x)
      {
        const int64_t base = z * nx * ny + y * nx + x;
        double        acc  = 0;
        for (int64_t i = -r; i <= r; ++i)
          acc += f[base + std::clamp<int64_t>(i, 0, len - 1) * s];
        for (int64_t i = 0; i < len; ++i)
        {
          line[i] = float(acc / (2 * r + 1));
          acc += f[base + std::min(i + r + 1, len - 1) * s] - f[base + std::max<int64_t>(i - r, 0) * s];
        }
        for (int64_t i = 0; i < len; ++i)
          f[base + i * s] = line[i];
      }
}

/** A field in [0, 1] with natural-image statistics: smoothed noise at a coarse and a fine scale, constant regions
 * with sharp edges (disks or balls), and fine noise. */
std::vector<float>
NaturalField(int64_t nx, int64_t ny, int64_t nz, unsigned seed)
{
  const uint64_t                        n = uint64_t(nx * ny * nz);
  std::mt19937                          rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int                             dims        = nz > 1 ? 3 : 2;
  auto                                  smoothNoise = [&](int r)
  {
    std::vector<float> f(n);
    for (auto & v : f)
      v = u(rng);
    for (int pass = 0; pass < 2; ++pass)
      for (int a = 0; a < dims; ++a)
        BlurAxis(f, nx, ny, nz, a, r);
    return f;
  };
  std::vector<float>       field = smoothNoise(dims == 3 ? 6 : 24);
  const std::vector<float> fine  = smoothNoise(2);
  // Regions: a value offset inside each of a few hundred disks or balls.
  std::vector<float> region(n, 0.0f);
  const int          count = dims == 3 ? 200 : 400;
  for (int k = 0; k < count; ++k)
  {
    const float   cx = u(rng) * nx, cy = u(rng) * ny, cz = u(rng) * nz;
    const float   radius = (0.01f + 0.06f * u(rng)) * float(std::min(nx, ny));
    const float   offset = u(rng) - 0.5f;
    const int64_t x0 = std::max<int64_t>(0, int64_t(cx - radius)), x1 = std::min<int64_t>(nx, int64_t(cx + radius) + 1);
    const int64_t y0 = std::max<int64_t>(0, int64_t(cy - radius)), y1 = std::min<int64_t>(ny, int64_t(cy + radius) + 1);
    const int64_t z0 = dims == 3 ? std::max<int64_t>(0, int64_t(cz - radius)) : 0;
    const int64_t z1 = dims == 3 ? std::min<int64_t>(nz, int64_t(cz + radius) + 1) : 1;
    for (int64_t z = z0; z < z1; ++z)
      for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x)
        {
          const float dx = x - cx, dy = y - cy, dz = dims == 3 ? z - cz : 0.0f;
          if (dx * dx + dy * dy + dz * dz <= radius * radius)
            region[uint64_t((z * ny + y) * nx + x)] = offset;
        }
  }
  float lo = 1e30f, hi = -1e30f;
  for (uint64_t i = 0; i < n; ++i)
  {
    field[i] = 0.6f * field[i] + 0.25f * fine[i] + 0.5f * region[i] + 0.03f * u(rng);
    lo       = std::min(lo, field[i]);
    hi       = std::max(hi, field[i]);
  }
  for (auto & v : field)
    v = (v - lo) / (hi - lo);
  return field;
}

template <typename TImage>
void
WriteInput(const std::string & dir,
           const std::string & name,
           const TImage *      image,
           unsigned            components,
           const char *        type,
           int                 connectivity)
{
  if (dir.empty())
    return;
  const auto     size = image->GetLargestPossibleRegion().GetSize();
  const uint64_t n    = image->GetLargestPossibleRegion().GetNumberOfPixels();
  std::ofstream  raw(dir + "/" + name + ".raw", std::ios::binary);
  raw.write(
    reinterpret_cast<const char *>(image->GetBufferPointer()),
    std::streamsize(n * components * sizeof(typename itk::NumericTraits<typename TImage::PixelType>::ValueType)));
  std::ofstream list(dir + "/inputs.txt", std::ios::app);
  list << name << ' ' << type << ' ' << size[0] << ' ' << size[1] << ' '
       << (TImage::ImageDimension == 3 ? size[TImage::ImageDimension - 1] : 1) << ' ' << components << ' '
       << connectivity << '\n';
}

/** A tree query on both backends: `make()` returns a configured filter; each backend runs it reps + 1 times (the
 * first a warm-up whose filter is kept). Returns the two kept filters (CPU, CUDA); writes the median end-to-end ms
 * of each and the median CUDA kernel ms. */
template <class FMake>
auto
BothBackends(FMake && make, int reps, double (&ms)[2], double & kernel)
{
  std::vector<decltype(make())> kept;
  for (Backend backend : { Backend::CPU, Backend::CUDA })
  {
    std::vector<double> times, kernels;
    for (int rep = 0; rep <= reps; ++rep)
    {
      auto filter = make();
      filter->SetBackend(backend);
      const double t = WallMs([&] { filter->Update(); });
      if (rep == 0)
        kept.push_back(filter);
      else
      {
        times.push_back(t);
        kernels.push_back(filter->GetKernelMilliseconds());
      }
    }
    ms[backend == Backend::CUDA] = Median(times);
    if (backend == Backend::CUDA)
      kernel = Median(kernels);
  }
  return kept;
}

/** The alpha cut of a tree (alpha 8) and its saliency map on both backends, end to end (Update()), and whether
 * they agree. */
template <unsigned D>
void
MeasureCut(const std::string & name, const itk::AlphaTree * tree, int reps)
{
  using Labels     = itk::Image<uint32_t, D>;
  using Map        = itk::Image<float, D>;
  double     ms[2] = { 0, 0 }, kernel = 0;
  const auto cuts = BothBackends(
    [&]
    {
      auto cut = itk::AlphaTreeCutImageFilter<Labels>::New();
      cut->SetInput(tree);
      cut->SetAlpha(8.0);
      return cut;
    },
    reps,
    ms,
    kernel);
  const uint64_t n    = tree->GetNumberOfLeaves();
  const bool     same = std::equal(cuts[0]->GetOutput()->GetBufferPointer(),
                               cuts[0]->GetOutput()->GetBufferPointer() + n,
                               cuts[1]->GetOutput()->GetBufferPointer());
  std::printf("%-22s cut at alpha 8: %llu regions; CPU %8.2f ms, CUDA %8.2f ms end to end (kernels %6.2f ms) %s\n",
              name.c_str(),
              (unsigned long long)cuts[0]->GetObjectCount(),
              ms[0],
              ms[1],
              kernel,
              same ? "same labels" : "DIFFERENT labels");
  std::fflush(stdout);

  const auto maps = BothBackends(
    [&]
    {
      auto map = itk::AlphaTreeSaliencyImageFilter<Map>::New();
      map->SetInput(tree);
      return map;
    },
    reps,
    ms,
    kernel);
  const uint64_t samples = maps[0]->GetOutput()->GetLargestPossibleRegion().GetNumberOfPixels();
  const bool     equal   = std::equal(maps[0]->GetOutput()->GetBufferPointer(),
                                maps[0]->GetOutput()->GetBufferPointer() + samples,
                                maps[1]->GetOutput()->GetBufferPointer());
  std::printf("%-22s saliency map, %llu samples: CPU %8.2f ms, CUDA %8.2f ms end to end (kernels %6.2f ms) %s\n",
              name.c_str(),
              (unsigned long long)samples,
              ms[0],
              ms[1],
              kernel,
              equal ? "same values" : "DIFFERENT values");
  std::fflush(stdout);
  cutsAgree = cutsAgree && same && equal;
}

template <typename TImage>
void
Measure(const std::string & name,
        const char *        type,
        const TImage *      image,
        bool                full,
        int                 reps,
        uint64_t            cpuMaxPixels,
        const std::string & inputs)
{
  using Filter = itk::CudaImageToAlphaTreeFilter<TImage>;
  if (!chosenTypes.empty() && std::find(chosenTypes.begin(), chosenTypes.end(), type) == chosenTypes.end())
    return;
  const uint64_t n    = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const int      conn = TImage::ImageDimension == 2 ? (full ? 8 : 4) : (full ? 26 : 6);
  WriteInput(inputs, name, image, image->GetNumberOfComponentsPerPixel(), type, conn);
  itk::AlphaTree::Pointer cpuTree;
  double                  cpuMs = 0;
  if (n <= cpuMaxPixels)
  {
    auto filter = Filter::New();
    filter->SetInput(image);
    filter->SetFullyConnected(full);
    filter->SetBackend(Backend::CPU);
    filter->ComputeValueRangesOff();
    cpuMs   = WallMs([&] { filter->Update(); });
    cpuTree = filter->GetOutput();
    cpuTree->DisconnectPipeline();
  }
  const bool levels = std::is_integral<typename itk::NumericTraits<typename TImage::PixelType>::ValueType>::value &&
                      image->GetNumberOfComponentsPerPixel() == 1;
  if (cpuTree && queries)
    MeasureCut<TImage::ImageDimension>(name, cpuTree.GetPointer(), reps);
  for (Algorithm algorithm : { Algorithm::InsertAllEdges,
                               Algorithm::SkipRedundantEdges,
                               Algorithm::SpanningTree,
                               Algorithm::LevelSynchronous })
  {
    if (algorithm == Algorithm::LevelSynchronous && !levels)
      continue; // integer scalar pixels only
    Result r;
    r.name      = name;
    r.type      = type;
    r.algorithm = algorithm == Algorithm::InsertAllEdges       ? "v1-insert-all"
                  : algorithm == Algorithm::SkipRedundantEdges ? "v2-skip-redundant"
                  : algorithm == Algorithm::SpanningTree       ? "spanning-tree"
                                                               : "level-synchronous";
    if (!chosenAlgorithms.empty() &&
        std::find(chosenAlgorithms.begin(), chosenAlgorithms.end(), r.algorithm) == chosenAlgorithms.end())
      continue;
    r.pixels       = n;
    r.connectivity = conn;
    std::vector<double> kernel, build, canonical, total;
    bool                refused = false;
    for (int rep = 0; rep <= reps && !refused; ++rep)
    {
      auto filter = Filter::New();
      filter->SetInput(image);
      filter->SetFullyConnected(full);
      filter->SetBackend(Backend::CUDA);
      filter->SetAlgorithm(algorithm);
      filter->ComputeValueRangesOff();
      double ms = 0;
      try
      {
        ms = WallMs([&] { filter->Update(); });
      }
      catch (const itk::ExceptionObject & e)
      {
        // A run that does not fit the device is refused before it allocates (recorded, not an error).
        std::printf("%-22s %-6s %2d-conn %-18s %11llu px  refused: %s\n",
                    r.name.c_str(),
                    r.type.c_str(),
                    r.connectivity,
                    r.algorithm.c_str(),
                    (unsigned long long)n,
                    e.GetDescription());
        std::fflush(stdout);
        refused = true;
        continue;
      }
      if (rep == 0)
      {
        // Warm-up run: also the one compared with the CPU tree. Its time is that of a first update (the output's
        // arrays new, their pages mapped on first use); the later runs take the arrays that the previous run's
        // output left in the host array cache (include/chs/HostCache.h).
        r.firstMs   = ms;
        r.nodes     = filter->GetOutput()->GetNumberOfNodes();
        r.bytesUp   = n * image->GetNumberOfComponentsPerPixel() * sizeof(typename TImage::InternalPixelType);
        r.bytesDown = r.nodes * sizeof(uint32_t) + (r.nodes - n) * sizeof(double);
        r.inserted  = filter->GetNumberOfInsertedEdges();
        r.peakBytes = filter->GetPeakDeviceMemory();
        if (cpuTree)
        {
          r.cpu       = true;
          r.cpuMs     = cpuMs;
          r.identical = filter->GetOutput()->GetParents()->CastToSTLConstContainer() ==
                          cpuTree->GetParents()->CastToSTLConstContainer() &&
                        filter->GetOutput()->GetLevels()->CastToSTLConstContainer() ==
                          cpuTree->GetLevels()->CastToSTLConstContainer();
        }
        continue;
      }
      kernel.push_back(filter->GetKernelMilliseconds());
      build.push_back(filter->GetConstructionMilliseconds());
      canonical.push_back(filter->GetCanonicalisationMilliseconds());
      total.push_back(ms);
    }
    if (refused)
      continue;
    r.kernelMs    = Median(kernel);
    r.buildMs     = Median(build);
    r.canonicalMs = Median(canonical);
    r.endToEndMs  = Median(total);
    std::printf("%-22s %-6s %2d-conn %-18s %11llu px  kernels %8.2f ms (build %7.2f, canonical %7.2f) = %7.0f MP/s  "
                "end-to-end %8.2f ms (first %8.2f)  nodes %10llu  inserted %10llu  peak %6.0f MB  CPU %9.1f ms %s\n",
                r.name.c_str(),
                r.type.c_str(),
                r.connectivity,
                r.algorithm.c_str(),
                (unsigned long long)n,
                r.kernelMs,
                r.buildMs,
                r.canonicalMs,
                n / r.kernelMs / 1e3,
                r.endToEndMs,
                r.firstMs,
                (unsigned long long)r.nodes,
                (unsigned long long)r.inserted,
                r.peakBytes / 1048576.0,
                r.cpuMs,
                r.cpu ? (r.identical ? "identical" : "DIFFERENT") : "");
    std::fflush(stdout);
    results.push_back(r);
  }
}

template <typename T, unsigned D>
typename itk::Image<T, D>::Pointer
Quantised(const std::vector<float> & field, const itk::Size<D> & size, double scale)
{
  auto image = itk::Image<T, D>::New();
  image->SetRegions(size);
  image->Allocate();
  T * p = image->GetBufferPointer();
  for (size_t i = 0; i < field.size(); ++i)
    p[i] = T(std::lround(field[i] * scale));
  return image;
}

} // namespace

int
main(int argc, char * argv[])
{
  std::string json  = "alpha_tree_module.json", inputs;
  int         reps  = 5;
  bool        quick = false;
  std::string only;
  uint64_t    cpuMaxPixels = uint64_t(4096) * 4096;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else if (a == "--quick")
      quick = true;
    else if (a == "--cpu-max-pixels" && i + 1 < argc)
      cpuMaxPixels = std::stoull(argv[++i]);
    else if (a == "--write-inputs" && i + 1 < argc)
      inputs = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--side" && i + 1 < argc)
      chosenSides.push_back(std::stoll(argv[++i]));
    else if (a == "--volume" && i + 1 < argc)
      chosenVolumes.push_back(std::stoll(argv[++i]));
    else if (a == "--algorithm" && i + 1 < argc)
      chosenAlgorithms.push_back(argv[++i]);
    else if (a == "--type" && i + 1 < argc)
      chosenTypes.push_back(argv[++i]);
    else if (a == "--no-queries")
      queries = false;
    else if (a == "--staging" && i + 1 < argc && chs_bench::SetStaging(argv[i + 1]))
      ++i;
    else
    {
      std::fprintf(stderr,
                   "usage: %s --json FILE [--reps N] [--quick] [--cpu-max-pixels N] [--write-inputs DIR] "
                   "[--only 2d|3d] [--side N]... [--volume N]... [--algorithm NAME]... [--type uint8|uint16|rgb8]... "
                   "[--no-queries] [--staging CHUNK_KIB,SLOTS,WORKERS,STREAM|default]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!inputs.empty() && only != "3d")
    std::ofstream(inputs + "/inputs.txt", std::ios::trunc);
  std::vector<int64_t> sides   = quick ? std::vector<int64_t>{ 1024 } : std::vector<int64_t>{ 4096, 8192 };
  std::vector<int64_t> volumes = quick ? std::vector<int64_t>{ 128 } : std::vector<int64_t>{ 256, 512 };
  if (!chosenSides.empty())
    sides = chosenSides;
  if (!chosenVolumes.empty())
    volumes = chosenVolumes;
  if (only == "3d")
    sides.clear();
  if (only == "2d")
    volumes.clear();
  for (int64_t side : sides)
  {
    const itk::Size<2> size{ { itk::SizeValueType(side), itk::SizeValueType(side) } };
    const auto         field = NaturalField(side, side, 1, 1);
    const auto         u8    = Quantised<uint8_t, 2>(field, size, 255);
    const auto         u16   = Quantised<uint16_t, 2>(field, size, 65535);
    const std::string  tag   = std::to_string(side);
    Measure("natural-" + tag, "uint8", u8.GetPointer(), false, reps, cpuMaxPixels, inputs);
    Measure("natural-" + tag, "uint8", u8.GetPointer(), true, reps, cpuMaxPixels, inputs);
    Measure("natural-" + tag + "-16bit", "uint16", u16.GetPointer(), false, reps, cpuMaxPixels, inputs);
    Measure("natural-" + tag + "-16bit", "uint16", u16.GetPointer(), true, reps, cpuMaxPixels, inputs);
    if (side == sides.front())
    {
      // RGB: three fields of the same statistics.
      using V2 = itk::VectorImage<uint8_t, 2>;
      auto rgb = V2::New();
      rgb->SetRegions(size);
      rgb->SetNumberOfComponentsPerPixel(3);
      rgb->Allocate();
      for (unsigned c = 0; c < 3; ++c)
      {
        const auto f = c == 0 ? field : NaturalField(side, side, 1, 10 + c);
        for (size_t i = 0; i < f.size(); ++i)
          rgb->GetBufferPointer()[i * 3 + c] = uint8_t(std::lround(f[i] * 255));
      }
      Measure("natural-" + tag + "-rgb", "rgb8", rgb.GetPointer(), false, reps, cpuMaxPixels, inputs);
    }
  }
  for (int64_t side : volumes)
  {
    const itk::Size<3> size{ { itk::SizeValueType(side), itk::SizeValueType(side), itk::SizeValueType(side) } };
    const auto         field = NaturalField(side, side, side, 2);
    const auto         u8    = Quantised<uint8_t, 3>(field, size, 255);
    Measure("volume-" + std::to_string(side), "uint8", u8.GetPointer(), false, reps, cpuMaxPixels, inputs);
    Measure("volume-" + std::to_string(side), "uint8", u8.GetPointer(), true, reps, cpuMaxPixels, inputs);
    // 16-bit volumes only when asked for (--type uint16): the default run keeps its images.
    if (std::find(chosenTypes.begin(), chosenTypes.end(), "uint16") != chosenTypes.end())
    {
      const auto u16 = Quantised<uint16_t, 3>(field, size, 65535);
      Measure(
        "volume-" + std::to_string(side) + "-16bit", "uint16", u16.GetPointer(), false, reps, cpuMaxPixels, inputs);
      Measure(
        "volume-" + std::to_string(side) + "-16bit", "uint16", u16.GetPointer(), true, reps, cpuMaxPixels, inputs);
    }
  }

  std::ofstream out(json);
  out << "{\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i)
  {
    const Result & r = results[i];
    out << "    {\"name\": \"" << r.name << "\", \"type\": \"" << r.type << "\", \"algorithm\": \"" << r.algorithm
        << "\", \"pixels\": " << r.pixels << ", \"connectivity\": " << r.connectivity
        << ", \"kernel_ms\": " << r.kernelMs << ", \"build_ms\": " << r.buildMs
        << ", \"canonical_ms\": " << r.canonicalMs << ", \"end_to_end_ms\": " << r.endToEndMs
        << ", \"first_update_ms\": " << r.firstMs << ", \"bytes_up\": " << r.bytesUp
        << ", \"bytes_down\": " << r.bytesDown << ", \"nodes\": " << r.nodes << ", \"inserted_edges\": " << r.inserted
        << ", \"peak_device_bytes\": " << r.peakBytes << ", \"cpu_ms\": " << (r.cpu ? r.cpuMs : -1)
        << ", \"identical_to_cpu\": " << (r.cpu ? (r.identical ? "true" : "false") : "null") << "}"
        << (i + 1 < results.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  bool ok = cutsAgree;
  for (const Result & r : results)
    ok = ok && (!r.cpu || r.identical);
  return ok ? 0 : 1;
}
