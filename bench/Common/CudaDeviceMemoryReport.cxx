// Device memory of every CUDA entry point of the ITK-free API: the peak a run held (RunInfo::peakDeviceBytes) and the
// bytes it reserved, checked against the free memory, before allocating (RunInfo::reservedDeviceBytes), per voxel, on
// a 2D image and a 3D volume with both connectivities. Exits 1 when a run held more than it reserved (a bug of its
// bound; chs::testing::DeviceMemoryOverruns counts them). Prints CSV, and writes it with --csv.
//
//   CudaDeviceMemoryReport [--csv out.csv] [--side2 2048] [--side3 256]
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "AttributeHierarchy/chsAttributeHierarchyBackends.h"
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "Waterpixels/chsWaterpixelsBackends.h"
#include "Watershed/chsWatershedBackends.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

/** A relief of many basins and plateaux: smooth waves plus hashed noise, in 0 .. 255. */
std::vector<uint8_t>
Relief(const chs::Grid & g)
{
  std::vector<uint8_t> v(g.NumberOfVoxels());
  for (uint64_t i = 0; i < v.size(); ++i)
  {
    const uint64_t x = i % g.size[0], y = i / g.size[0] % g.size[1], z = i / (g.size[0] * g.size[1]);
    uint64_t       h = i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    const double s = 127 + 60 * std::sin(x / 17.0) * std::cos(y / 23.0) * std::cos(z / 29.0) + double(h % 41) - 20;
    v[i]           = uint8_t(std::lround(std::fmin(255.0, std::fmax(0.0, s))));
  }
  return v;
}

struct Report
{
  std::ostringstream csv;
  int                failures = 0;

  void
  Row(const std::string & name, const chs::Grid & g, bool full, const std::function<void(chs::RunInfo &)> & run)
  {
    chs::RunInfo   info;
    const uint64_t before = chs::testing::DeviceMemoryOverruns();
    std::string    error;
    try
    {
      run(info);
    }
    catch (const std::exception & e)
    {
      error = e.what();
      ++failures;
    }
    std::string    last;
    const uint64_t overruns = chs::testing::DeviceMemoryOverruns(&last) - before;
    if (overruns)
    {
      ++failures;
      error += (error.empty() ? "" : "; ") + std::to_string(overruns) + " allocations above the reservation: " + last;
    }
    const double       n = double(g.NumberOfVoxels());
    std::ostringstream shape;
    shape << g.size[0] << "x" << g.size[1];
    if (g.dimension == 3)
      shape << "x" << g.size[2];
    char row[512];
    std::snprintf(row,
                  sizeof(row),
                  "\"%s\",%s,%s,%llu,%llu,%llu,%.2f,%.2f,%.3f,\"%s\"\n",
                  name.c_str(),
                  shape.str().c_str(),
                  full ? "full" : "face",
                  static_cast<unsigned long long>(g.NumberOfVoxels()),
                  static_cast<unsigned long long>(info.peakDeviceBytes),
                  static_cast<unsigned long long>(info.reservedDeviceBytes),
                  info.peakDeviceBytes / n,
                  info.reservedDeviceBytes / n,
                  info.peakDeviceBytes ? double(info.reservedDeviceBytes) / info.peakDeviceBytes : 0.0,
                  error.c_str());
    std::cout << row << std::flush;
    csv << row;
  }
};

void
RunShape(Report & r, const chs::Grid & g, bool full)
{
  const uint64_t              n = g.NumberOfVoxels();
  const chs::ExecutionContext context;
  const std::vector<uint8_t>  relief = Relief(g);
  std::vector<float>          weights(relief.begin(), relief.end());
  std::vector<uint8_t>        binary(n);
  std::vector<uint16_t>       wide(n);
  std::vector<uint32_t>       labels(n), seeds(n, 0);
  for (uint64_t i = 0; i < n; ++i)
  {
    binary[i] = relief[i] > 128;
    wide[i]   = uint16_t(relief[i] * 97 + i % 89);
    if (i % 37 == 0 && (i / g.size[0]) % 37 == 0)
      seeds[i] = uint32_t(i % 7 + 1);
  }

  // Binary (32-bit, and the 64-bit path forced) and flat zones.
  for (const int kind : { 0, 1, 2 })
    r.Row(kind == 0   ? "connected components"
          : kind == 1 ? "connected components (64-bit path, forced)"
                      : "connected components (flat zones)",
          g,
          full,
          [&](chs::RunInfo & info)
          {
            chs::ConnectedComponentParameters p;
            p.fullyConnected = full;
            p.maximumLabel   = 0xffffffffu;
            p.forceWideIndex = kind == 1;
            if (kind == 2)
              p.mode = chs::ConnectedComponentMode::FlatZones;
            chs::LabelConnectedComponentsCUDA(
              kind == 2 ? relief.data() : binary.data(), nullptr, labels.data(), g, p, nullptr, context, &info);
          });
  r.Row("watershed",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::WatershedParameters p;
          p.fullyConnected = full;
          chs::WatershedCUDA(relief.data(), g, p, labels.data(), context, &info);
        });
  r.Row("waterfall (all levels)",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::WaterfallParameters p;
          p.watershed.fullyConnected = full;
          chs::WaterfallCUDA<uint8_t, uint32_t>(
            relief.data(),
            g,
            p,
            [&](unsigned level, uint64_t) { return level == 0 ? labels.data() : nullptr; },
            context,
            &info);
        });
  for (const double level : { 0.0, 8.0 })
    r.Row(level > 0 ? "watershed from minima (level 8)" : "watershed from minima",
          g,
          full,
          [&](chs::RunInfo & info)
          {
            chs::MarkerWatershedParameters p;
            p.fullyConnected = full;
            p.level          = level;
            chs::MarkerWatershedCUDA<uint8_t, uint32_t>(
              relief.data(), nullptr, nullptr, g, p, labels.data(), context, &info);
          });
  r.Row("Image Foresting Transform",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::ForestingTransformParameters p;
          p.fullyConnected = full;
          chs::ImageForestingTransformCUDA<float, uint32_t>(
            weights.data(), seeds.data(), g, p, labels.data(), nullptr, nullptr, context, &info);
        });
  r.Row("waterpixels (step 16)",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::WaterpixelParameters p;
          p.fullyConnected = full;
          p.gridStep[0] = p.gridStep[1] = p.gridStep[2] = 16;
          chs::WaterpixelsCUDA<uint8_t, uint32_t>(relief.data(), g, p, labels.data(), nullptr, context, &info);
        });

  std::vector<uint32_t> parent;
  std::vector<double>   level;
  const auto            allocate = [&](uint64_t nodes)
  {
    parent.assign(nodes, 0);
    level.assign(nodes, 0.0);
    chs::AlphaTreeArrays a;
    a.parent         = parent.data();
    a.level          = level.data();
    a.leafLevelsZero = true;
    return a;
  };
  const auto tree = [&](const std::string & name, chs::AlphaTreeAlgorithm algorithm, auto * pixels, bool wide = false)
  {
    r.Row(name,
          g,
          full,
          [&](chs::RunInfo & info)
          {
            chs::AlphaTreeParameters p;
            p.graph.fullyConnected = full;
            p.algorithm            = algorithm;
            p.forceWideNodeIds     = wide;
            chs::ImageAlphaTreeCUDA(pixels, g, p, allocate, context, &info);
          });
  };
  tree("alpha-tree (uint16, level-synchronous)", chs::AlphaTreeAlgorithm::LevelSynchronous, wide.data());
  tree("alpha-tree (float, spanning tree)", chs::AlphaTreeAlgorithm::SpanningTree, weights.data());
  tree(
    "alpha-tree (float, spanning tree, 64-bit node ids)", chs::AlphaTreeAlgorithm::SpanningTree, weights.data(), true);
  tree("alpha-tree (uint8, paper's v2)", chs::AlphaTreeAlgorithm::SkipRedundantEdges, relief.data());
  tree("alpha-tree (uint8, level-synchronous)", chs::AlphaTreeAlgorithm::LevelSynchronous, relief.data());
  r.Row("alpha-tree cut",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::AlphaTreeCutCUDA(
            parent.data(), level.data(), nullptr, n, parent.size(), 8.0, INFINITY, labels.data(), context, &info);
        });
  r.Row("alpha-tree saliency",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::Grid samples = g;
          for (unsigned d = 0; d < g.dimension; ++d)
            samples.size[d] = 2 * g.size[d] - 1;
          std::vector<float> saliency(samples.NumberOfVoxels());
          chs::AlphaTreeSaliencyCUDA(parent.data(), level.data(), parent.size(), g, saliency.data(), context, &info);
        });

  std::vector<uint32_t>       dParent(2 * n - 1), du(n - 1), dv(n - 1), hParent(2 * n - 1), hu(n - 1), hv(n - 1);
  std::vector<double>         dWeight(n - 1), hWeight(n - 1);
  std::vector<uint64_t>       dEdge(n - 1), hEdge(n - 1);
  const chs::DendrogramArrays dendrogram{ dParent.data(), dWeight.data(), dEdge.data(), du.data(), dv.data() };
  const chs::DendrogramArrays hierarchy{ hParent.data(), hWeight.data(), hEdge.data(), hu.data(), hv.data() };
  r.Row("single-linkage dendrogram (float)",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          chs::ImageGraphParameters p;
          p.fullyConnected = full;
          chs::ImageSingleLinkageCUDA(weights.data(), g, p, dendrogram, context, &info);
        });
  {
    // 64-bit node ids (dendrograms of more than 2^31 - 1 vertices), forced on the same image.
    std::vector<uint64_t>                  wParent(2 * n - 1), wu(n - 1), wv(n - 1);
    const chs::DendrogramArraysT<uint64_t> wideDendrogram{
      wParent.data(), dWeight.data(), dEdge.data(), wu.data(), wv.data()
    };
    r.Row("single-linkage dendrogram (float, 64-bit node ids)",
          g,
          full,
          [&](chs::RunInfo & info) {
            chs::ImageSingleLinkageCUDA(
              weights.data(), g, chs::ImageGraphParameters{ full }, wideDendrogram, context, &info);
          });
    // The hierarchies by attribute of that dendrogram, in its width.
    std::vector<uint64_t>                  hwParent(2 * n - 1), hwu(n - 1), hwv(n - 1);
    const chs::DendrogramArraysT<uint64_t> wideHierarchy{
      hwParent.data(), hWeight.data(), hEdge.data(), hwu.data(), hwv.data()
    };
    const chs::DendrogramInputT<uint64_t> wideIn{
      n, wParent.data(), dWeight.data(), dEdge.data(), wu.data(), wv.data()
    };
    r.Row("watershed hierarchy by dynamics (64-bit node ids)",
          g,
          full,
          [&](chs::RunInfo & info)
          { chs::WatershedHierarchyCUDA(wideIn, chs::RegionAttribute::Dynamics, wideHierarchy, context, &info); });
    r.Row("attribute filter by height (64-bit node ids)",
          g,
          full,
          [&](chs::RunInfo & info)
          { chs::FilterRegionsCUDA(wideIn, chs::RegionAttribute::Height, 4.0, wideHierarchy, context, &info); });
  }
  const chs::DendrogramInput in{ n, dParent.data(), dWeight.data(), dEdge.data(), du.data(), dv.data() };
  r.Row("watershed hierarchy by area",
        g,
        full,
        [&](chs::RunInfo & info)
        { chs::WatershedHierarchyCUDA(in, chs::RegionAttribute::Area, hierarchy, context, &info); });
  r.Row("watershed hierarchy by dynamics",
        g,
        full,
        [&](chs::RunInfo & info)
        { chs::WatershedHierarchyCUDA(in, chs::RegionAttribute::Dynamics, hierarchy, context, &info); });
  r.Row("attribute filter by height",
        g,
        full,
        [&](chs::RunInfo & info)
        { chs::FilterRegionsCUDA(in, chs::RegionAttribute::Height, 4.0, hierarchy, context, &info); });
  {
    // The 16-byte Euler tour that 32-bit ids take from 2^30 leaves on, forced on the same dendrogram.
    chs::DendrogramInput tour = in;
    tour.forceWideTour        = true;
    r.Row("watershed hierarchy by dynamics (16-byte tour)",
          g,
          full,
          [&](chs::RunInfo & info)
          { chs::WatershedHierarchyCUDA(tour, chs::RegionAttribute::Dynamics, hierarchy, context, &info); });
  }
  r.Row("single-linkage dendrogram of the pixel graph's edges",
        g,
        full,
        [&](chs::RunInfo & info)
        {
          const uint64_t        m = chs::ImageGraphEdges(g, full, nullptr, nullptr, nullptr);
          std::vector<uint32_t> u(m), v(m);
          std::vector<uint64_t> index(m);
          chs::ImageGraphEdges(g, full, u.data(), v.data(), index.data());
          std::vector<float> w(m);
          for (uint64_t i = 0; i < m; ++i)
            w[i] = std::fabs(weights[u[i]] - weights[v[i]]);
          chs::GraphSingleLinkageCUDA(u.data(), v.data(), w.data(), m, n, false, dendrogram, context, &info);
        });
}

} // namespace

int
main(int argc, char ** argv)
{
  std::string csvPath;
  uint64_t    side2 = 2048, side3 = 256;
  for (int i = 1; i + 1 < argc; i += 2)
  {
    if (!std::strcmp(argv[i], "--csv"))
      csvPath = argv[i + 1];
    else if (!std::strcmp(argv[i], "--side2"))
      side2 = std::stoull(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--side3"))
      side3 = std::stoull(argv[i + 1]);
  }
  if (chs::CudaDeviceCount() == 0)
  {
    std::cerr << "no CUDA device\n";
    return 2;
  }
  {
    // What the check costs a run: its query of the free memory and the pool's use.
    chs::testing::AvailableDeviceBytes(0);
    const auto    start    = std::chrono::steady_clock::now();
    constexpr int kQueries = 1000;
    for (int i = 0; i < kQueries; ++i)
      chs::testing::AvailableDeviceBytes(0);
    const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kQueries;
    std::cout << "# the free-memory query of a run's check: " << us << " us (mean of " << kQueries << ")\n";
  }
  Report r;
  r.csv << "run,shape,connectivity,voxels,peak_bytes,reserved_bytes,peak_per_voxel,reserved_per_voxel,"
           "reserved_over_peak,error\n";
  std::cout << r.csv.str() << std::flush;
  chs::Grid g2, g3;
  g2.size[0] = g2.size[1] = side2;
  g3.dimension            = 3;
  g3.size[0] = g3.size[1] = g3.size[2] = side3;
  for (const chs::Grid & g : { g2, g3 })
    for (const bool full : { false, true })
      RunShape(r, g, full);
  if (!csvPath.empty())
    std::ofstream(csvPath) << r.csv.str();
  std::cout << (r.failures ? "FAILED: " + std::to_string(r.failures) + " runs"
                           : std::string("every run within its "
                                         "reservation"))
            << std::endl;
  return r.failures ? 1 : 0;
}
