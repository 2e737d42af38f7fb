// What the watershed benchmark's modes share (bench/Watershed/CudaWatershedBenchmark.cxx, which alone includes it):
// the input images, the options, the JSON fields, the timed updates and their phases.
#ifndef CudaWatershedBenchmarkCommon_h
#define CudaWatershedBenchmarkCommon_h

#include "Common/chsBenchTiming.h"
#include "Watershed/chsWatershedBackends.h"
#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "itkImage.h"
#include "itkMorphologicalWatershedFromMarkersImageFilter.h"
#include "itkMorphologicalWatershedImageFilter.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace
{

using Backend    = itk::CudaSegmentationBackendEnums::Backend;
using Algorithm  = itk::CudaWatershedEnums::Algorithm;
using Resolution = itk::CudaWatershedEnums::PlateauResolution;
using chs_bench::Median;
using chs_bench::ParallelFor;
using chs_bench::WallMs;

/** The gradient magnitude (central differences) of noise smoothed by two box passes of radius r along each axis:
 * basins of a few r across, as a lightly smoothed natural image gives. */
std::vector<float>
GradientOfSmoothedNoise(int64_t nx, int64_t ny, int64_t nz, int r, unsigned seed)
{
  const int64_t      n = nx * ny * nz;
  std::vector<float> f(n), g(n);
  const int64_t      chunks = 256;
  ParallelFor(chunks,
              [&](int64_t a, int64_t b)
              {
                for (int64_t c = a; c < b; ++c)
                {
                  std::mt19937                          rng(seed * 1000 + unsigned(c));
                  std::uniform_real_distribution<float> u(0.0f, 1.0f);
                  for (int64_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i)
                    f[i] = u(rng);
                }
              });
  const int64_t size[3] = { nx, ny, nz }, stride[3] = { 1, nx, nx * ny };
  for (int axis = 0; axis < 3; ++axis)
  {
    if (size[axis] == 1)
      continue;
    for (int pass = 0; pass < 2; ++pass)
    {
      const int64_t len = size[axis], s = stride[axis], lines = n / len;
      ParallelFor(lines,
                  [&](int64_t a, int64_t b)
                  {
                    std::vector<float> line(len);
                    for (int64_t l = a; l < b; ++l)
                    {
                      // The l-th line along the axis: its first element.
                      const int64_t base = axis == 0 ? l * nx : axis == 1 ? (l / nx) * nx * ny + l % nx : l;
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
                  });
    }
  }
  ParallelFor(n,
              [&](int64_t a, int64_t b)
              {
                for (int64_t i = a; i < b; ++i)
                {
                  const int64_t c[3] = { i % nx, i / nx % ny, i / (nx * ny) };
                  double        sum  = 0;
                  for (int d = 0; d < 3; ++d)
                  {
                    if (size[d] == 1)
                      continue;
                    const int64_t lo = c[d] > 0 ? i - stride[d] : i, hi = c[d] + 1 < size[d] ? i + stride[d] : i;
                    const double  diff = (f[hi] - f[lo]) * 0.5;
                    sum += diff * diff;
                  }
                  g[i] = float(std::sqrt(sum) * 1000.0);
                }
              });
  return g;
}

template <unsigned D>
typename itk::Image<float, D>::Pointer
ToImage(const std::vector<float> & v, const int64_t (&size)[3])
{
  using Image                    = itk::Image<float, D>;
  auto                     image = Image::New();
  typename Image::SizeType s;
  for (unsigned d = 0; d < D; ++d)
    s[d] = size[d];
  image->SetRegions(s);
  image->Allocate();
  std::copy(v.begin(), v.end(), image->GetBufferPointer());
  return image;
}

struct Options
{
  std::string json;
  int         reps   = 10;
  int         rounds = 1;
  bool        quick = false, no800m = false;
  uint64_t    itkMax = 20000000ull, cpuMax = 20000000ull;
  std::string inputs, only;
  bool        waterfallPaths = false;
  bool        markers        = false;
  std::string mode; // --markers: "markers" or "level" runs that mode only
  bool        scale    = false;
  uint64_t    scaleMax = ~uint64_t(0); // --scale: sizes of at most this many voxels
};

std::vector<std::string> records;
bool                     identicalAll = true; // every waterfall hierarchy equals its level images

template <typename T>
std::string
Field(const char * key, const T & value)
{
  return std::string("\"") + key + "\": " + std::to_string(value);
}
std::string
Field(const char * key, const std::string & value)
{
  return std::string("\"") + key + "\": \"" + value + "\"";
}
std::string
Field(const char * key, bool value)
{
  return std::string("\"") + key + "\": " + (value ? "true" : "false");
}

const char *
Name(Algorithm a)
{
  return a == Algorithm::PRUF ? "PRUF" : a == Algorithm::APRUF ? "APRUF" : "PRW";
}
const char *
Name(Resolution r)
{
  return r == Resolution::Balanced ? "balanced" : r == Resolution::Synchronous ? "sync" : "async";
}

/** Where an update's wall time goes: the times of the filter's progress reports (0 as GenerateData starts; the
 * watershed reports 0.2 once the image is on the device, 0.8 once its kernels are queued and the label count is
 * read, 1 once the labels are on the host), as milliseconds since Update() was called, and when it returned. */
struct Phases
{
  std::vector<std::vector<double>> byReport; // [report][rep]
  std::vector<float>               progress; // the report's value
  std::vector<double>              end;
};

/** A warm-up update, then `reps` timed ones: the kernel and the wall times of each, in ms; `phases`, when given,
 * gets the time of each progress report of each timed update. */
template <typename TFilter>
std::pair<std::vector<double>, std::vector<double>>
TimedUpdates(TFilter * filter, int reps, Phases * phases = nullptr)
{
  filter->Update();
  std::vector<double>                   kernel, wall;
  std::chrono::steady_clock::time_point start;
  std::vector<std::pair<float, double>> reports;
  unsigned long                         tag = 0;
  if (phases)
    tag = filter->AddObserver(
      itk::ProgressEvent(),
      [&](const itk::EventObject &)
      {
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        reports.emplace_back(filter->GetProgress(), ms);
      });
  for (int r = 0; r < reps; ++r)
  {
    filter->Modified();
    reports.clear();
    start = std::chrono::steady_clock::now();
    wall.push_back(WallMs([&] { filter->Update(); }));
    kernel.push_back(filter->GetKernelMilliseconds());
    if (phases)
    {
      if (phases->progress.empty())
        for (const auto & report : reports)
          phases->progress.push_back(report.first);
      phases->byReport.resize(phases->progress.size());
      for (size_t k = 0; k < reports.size() && k < phases->progress.size(); ++k)
        phases->byReport[k].push_back(reports[k].second);
      phases->end.push_back(wall.back());
    }
  }
  if (phases)
    filter->RemoveObserver(tag);
  return { kernel, wall };
}

/** One variant's updates: with the transfers before and after the kernels (every kernel timed: `kernel`,
 * `serialWall`), then overlapped with them, the default (`exposed`: the kernels outside the transfers; `wall`;
 * `phases`). */
struct OverlapTimes
{
  std::vector<double> kernel, serialWall, exposed, wall;
  Phases              phases;
};

template <typename TFilter>
OverlapTimes
TimedWithoutAndWithOverlap(TFilter * filter, int reps)
{
  OverlapTimes t;
  chs::testing::SetTransferOverlap(false);
  std::tie(t.kernel, t.serialWall) = TimedUpdates(filter, reps);
  chs::testing::SetTransferOverlap(true);
  std::tie(t.exposed, t.wall) = TimedUpdates(filter, reps, &t.phases);
  return t;
}

/** "progress@ms ..." of the median times of each report and of the return. */
std::string
PhaseLine(const Phases & phases)
{
  std::string line;
  char        buffer[64];
  for (size_t k = 0; k < phases.progress.size(); ++k)
  {
    std::snprintf(buffer, sizeof(buffer), "%.2g@%.3f ", phases.progress[k], Median(phases.byReport[k]));
    line += buffer;
  }
  std::snprintf(buffer, sizeof(buffer), "return@%.3f", Median(phases.end));
  return line + buffer;
}

} // namespace

#endif
