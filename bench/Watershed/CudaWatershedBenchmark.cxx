// Benchmark of itk::CudaWatershedImageFilter and itk::CudaWaterfallImageFilter against ITK's
// MorphologicalWatershedImageFilter (all the machine's cores) and the module's sequential CPU reference, in one run
// on the same inputs: the gradient magnitude of smoothed noise at 4096x4096, 128^3, 512^3 and 4000x4000x50 (the
// paper's 800-megavoxel headline). ITK and the CPU reference run up to 20M voxels (--itk-max-voxels,
// --cpu-max-voxels), ITK's 26-connected watershed only at 128^3 (256^3 takes it minutes). Prints a line per case and
// writes JSON. Every GPU result is checked: equal to the CPU reference where that ran, and with as many basins as ITK's
// watershed found (both have one per regional minimum). With --write-inputs DIR it writes the 2D inputs as DIR/NAME.raw
// (float32, with DIR/inputs.txt) for bench/Watershed/peers.py (scikit-image, OpenCV).
//
//   CudaWatershedBenchmark --json out.json [--reps N] [--quick] [--itk-max-voxels N] [--cpu-max-voxels N]
//                          [--write-inputs DIR] [--no-800m] [--only 2d|3d] [--rounds N]
//   --rounds N runs the variants of each image N times over in the one process, each round's rows with their round
//   number (whether the first variants of a process run slower: bench/results/Watershed/overlapped-transfers/
//   rounds-f2e2fca).
//   Any form takes --staging CHUNK_KIB,SLOTS,WORKERS,STREAM|default: the shape of the staging buffers that the
//   copies of pageable host arrays go through (bench/Common/CudaStagingBenchmark.cu).
//   CudaWatershedBenchmark --waterfall-paths [--json out.json] [--reps N]   (the waterfall's two level paths by size)
//   CudaWatershedBenchmark --scale [--json out.json] [--reps N]   (watershed and waterfall, 4096^2 to 2048x2048x1100)
//                          [--max-voxels N] (sizes up to N voxels) [--only watershed] (no waterfall rows)
//   CudaWatershedBenchmark --scale --markers [--json out.json] [--reps N]   (the watershed from markers, same sizes)
//   CudaWatershedBenchmark --markers [--mode markers|level] [--only 2d|3d] [--json out.json] [--reps N] [--quick]
//                          (the watershed by flooding: from grid
//                          markers against ITK's MorphologicalWatershedFromMarkersImageFilter, and with a Level
//                          against MorphologicalWatershedImageFilter with that Level)
#include "Watershed/CudaWatershedBenchmarkCommon.h"

namespace
{

template <unsigned D>
void
RunWatershed(const std::string &                            name,
             const typename itk::Image<float, D>::Pointer & image,
             const Options &                                o,
             bool                                           variants)
{
  using Image      = itk::Image<float, D>;
  using Labels     = itk::Image<unsigned int, D>;
  const uint64_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (bool full : { false, true })
  {
    if (D == 3 && full && n > 200000000ull)
      continue; // the 800-megavoxel case: face connectivity, as the paper's headline
    const int conn = D == 2 ? (full ? 8 : 4) : (full ? 26 : 6);
    // The CPU reference (once) and ITK's watershed.
    std::vector<unsigned int> reference;
    double                    cpuMs = 0;
    if (n <= o.cpuMax)
    {
      auto cpu = itk::CudaWatershedImageFilter<Image, Labels>::New();
      cpu->SetInput(image);
      cpu->SetFullyConnected(full);
      cpu->SetBackend(Backend::CPU);
      cpuMs = WallMs([&] { cpu->Update(); });
      reference.assign(cpu->GetOutput()->GetBufferPointer(), cpu->GetOutput()->GetBufferPointer() + n);
    }
    double        itkMs     = 0;
    unsigned long itkBasins = 0;
    if (n <= o.itkMax && !(D == 3 && full && n > 4000000ull))
    {
      auto itkWs = itk::MorphologicalWatershedImageFilter<Image, Labels>::New();
      itkWs->SetInput(image);
      itkWs->SetFullyConnected(full);
      itkWs->SetMarkWatershedLine(false);
      itkWs->SetLevel(0);
      itkMs            = WallMs([&] { itkWs->Update(); });
      const auto * out = itkWs->GetOutput()->GetBufferPointer();
      itkBasins        = *std::max_element(out, out + n);
    }
    std::vector<std::pair<Algorithm, Resolution>> runs{ { Algorithm::PRUF, Resolution::Balanced } };
    if (variants)
      runs = { { Algorithm::PRUF, Resolution::Balanced },
               { Algorithm::APRUF, Resolution::Balanced },
               { Algorithm::PRW, Resolution::Balanced },
               { Algorithm::PRUF, Resolution::Synchronous },
               { Algorithm::PRUF, Resolution::BlockAsynchronous } };
    for (int round = 1; round <= o.rounds; ++round)
      for (const auto & [algorithm, resolution] : runs)
      {
        auto gpu = itk::CudaWatershedImageFilter<Image, Labels>::New();
        gpu->SetInput(image);
        gpu->SetFullyConnected(full);
        gpu->SetAlgorithm(algorithm);
        gpu->SetPlateauResolution(resolution);
        gpu->SetBackend(Backend::CUDA);
        const OverlapTimes t         = TimedWithoutAndWithOverlap(gpu.GetPointer(), o.reps);
        const auto *       out       = gpu->GetOutput()->GetBufferPointer();
        const bool         identical = !reference.empty() && std::equal(reference.begin(), reference.end(), out);
        const double       k = Median(t.kernel), w = Median(t.wall), ws = Median(t.serialWall), ke = Median(t.exposed);
        if (o.rounds > 1)
          std::printf("round %d: ", round);
        std::printf(
          "%-14s %2d-conn %-5s %-8s %11llu vox  kernel %8.2f ms (%7.0f Mvox/s)  end-to-end %8.2f ms  "
          "basins %9llu  rounds %4llu  peak %6.0f MiB  CPU ref %9.1f ms%s  ITK %9.1f ms (%lu basins, x%.0f)\n",
          name.c_str(),
          conn,
          Name(algorithm),
          Name(resolution),
          (unsigned long long)n,
          k,
          n / k / 1e3,
          w,
          (unsigned long long)gpu->GetObjectCount(),
          (unsigned long long)gpu->GetPlateauRounds(),
          gpu->GetPeakDeviceMemory() / 1048576.0,
          cpuMs,
          reference.empty() ? "" : (identical ? " (identical)" : " (DIFFERENT)"),
          itkMs,
          itkBasins,
          itkMs > 0 ? itkMs / w : 0.0);
        std::printf("%-14s %2d-conn %-5s %-8s transfers not overlapped: end-to-end %8.2f ms; overlapped: kernels "
                    "outside the transfers %6.2f ms, progress reports (ms after Update() was called, medians): %s\n",
                    name.c_str(),
                    conn,
                    Name(algorithm),
                    Name(resolution),
                    ws,
                    ke,
                    PhaseLine(t.phases).c_str());
        std::fflush(stdout);
        records.push_back(
          "{" + Field("kind", std::string("watershed")) + ", " + Field("name", name) + ", " +
          Field("connectivity", conn) + ", " + Field("round", round) + ", " +
          Field("algorithm", std::string(Name(algorithm))) + ", " + Field("resolution", std::string(Name(resolution))) +
          ", " + Field("voxels", n) + ", " + Field("kernel_ms", k) + ", " + Field("end_to_end_ms", w) + ", " +
          Field("end_to_end_not_overlapped_ms", ws) + ", " + Field("kernel_outside_transfers_ms", ke) + ", " +
          Field("bytes_up", uint64_t(n * sizeof(float))) + ", " +
          Field("bytes_down", uint64_t(n * sizeof(unsigned int))) + ", " +
          Field("basins", uint64_t(gpu->GetObjectCount())) + ", " +
          Field("plateau_rounds", uint64_t(gpu->GetPlateauRounds())) + ", " +
          Field("peak_device_bytes", uint64_t(gpu->GetPeakDeviceMemory())) + ", " + Field("cpu_reference_ms", cpuMs) +
          ", " + Field("cpu_checked", !reference.empty()) + ", " + Field("identical_to_cpu", identical) + ", " +
          Field("itk_ms", itkMs) + ", " + Field("itk_basins", uint64_t(itkBasins)) + "}");
      }
  }
}

template <unsigned D>
void
RunWaterfall(const std::string & name, const typename itk::Image<float, D>::Pointer & image, const Options & o)
{
  using Image      = itk::Image<float, D>;
  using Labels     = itk::Image<unsigned int, D>;
  const uint64_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (bool full : { false, true })
  {
    const int                              conn = D == 2 ? (full ? 8 : 4) : (full ? 26 : 6);
    std::vector<std::vector<unsigned int>> reference;
    double                                 cpuMs = 0;
    if (n <= o.cpuMax)
    {
      auto cpu = itk::CudaWaterfallImageFilter<Image, Labels>::New();
      cpu->SetInput(image);
      cpu->SetFullyConnected(full);
      cpu->SetBackend(Backend::CPU);
      cpuMs = WallMs([&] { cpu->Update(); });
      for (unsigned k = 0; k < cpu->GetNumberOfComputedLevels(); ++k)
        reference.emplace_back(cpu->GetLevel(k)->GetBufferPointer(), cpu->GetLevel(k)->GetBufferPointer() + n);
    }
    auto gpu = itk::CudaWaterfallImageFilter<Image, Labels>::New();
    gpu->SetInput(image);
    gpu->SetFullyConnected(full);
    gpu->SetBackend(Backend::CUDA);
    gpu->Update();
    std::vector<double> ws, levels, wall;
    for (int r = 0; r < o.reps; ++r)
    {
      gpu->Modified();
      wall.push_back(WallMs([&] { gpu->Update(); }));
      ws.push_back(gpu->GetWatershedMilliseconds());
      levels.push_back(gpu->GetLevelsMilliseconds());
    }
    bool identical = !reference.empty() && reference.size() == gpu->GetNumberOfComputedLevels();
    for (unsigned k = 0; identical && k < reference.size(); ++k)
      identical = std::equal(reference[k].begin(), reference[k].end(), gpu->GetLevel(k)->GetBufferPointer());
    std::string counts;
    for (auto c : gpu->GetRegionCounts())
      counts += (counts.empty() ? "" : " ") + std::to_string(c);
    std::printf("%-14s %2d-conn waterfall %11llu vox  kernel %8.2f ms (watershed %6.2f + %u levels %6.2f)  "
                "end-to-end %8.2f ms  regions [%s]  levels on the %s  CPU ref %9.1f ms%s\n",
                name.c_str(),
                conn,
                (unsigned long long)n,
                Median(ws) + Median(levels),
                Median(ws),
                gpu->GetNumberOfComputedLevels() - 1,
                Median(levels),
                Median(wall),
                counts.c_str(),
                gpu->GetLevelsOnRegionGraph() ? "region graph" : "voxels",
                cpuMs,
                reference.empty() ? "" : (identical ? " (identical)" : " (DIFFERENT)"));
    std::fflush(stdout);
    records.push_back(
      "{" + Field("kind", std::string("waterfall")) + ", " + Field("name", name) + ", " + Field("connectivity", conn) +
      ", " + Field("voxels", n) + ", " + Field("watershed_ms", Median(ws)) + ", " + Field("levels_ms", Median(levels)) +
      ", " + Field("levels_on_region_graph", gpu->GetLevelsOnRegionGraph()) + ", " +
      Field("end_to_end_ms", Median(wall)) + ", " + Field("bytes_up", uint64_t(n * sizeof(float))) + ", " +
      Field("bytes_down", uint64_t(n * sizeof(unsigned int) * gpu->GetNumberOfComputedLevels())) + ", " +
      Field("regions", "[" + counts + "]") + ", " + Field("cpu_reference_ms", cpuMs) + ", " +
      Field("cpu_checked", !reference.empty()) + ", " + Field("identical_to_cpu", identical) + "}");

    // The same hierarchy kept as level 0's labels and the parent labels (ProduceLevelImages off), and one level made
    // from them on request; checked against the level images of the run above.
    auto tree = itk::CudaWaterfallImageFilter<Image, Labels>::New();
    tree->SetInput(image);
    tree->SetFullyConnected(full);
    tree->SetBackend(Backend::CUDA);
    tree->ProduceLevelImagesOff();
    tree->Update();
    std::vector<double> treeWall, make;
    for (int r = 0; r < o.reps; ++r)
    {
      tree->Modified();
      treeWall.push_back(WallMs([&] { tree->Update(); }));
      make.push_back(WallMs([&] { tree->ComputeLevelImage(1); }));
    }
    bool same = tree->GetRegionCounts() == gpu->GetRegionCounts();
    for (unsigned k = 0; same && k < tree->GetNumberOfComputedLevels(); ++k)
      same = std::equal(gpu->GetLevel(k)->GetBufferPointer(),
                        gpu->GetLevel(k)->GetBufferPointer() + n,
                        tree->ComputeLevelImage(k)->GetBufferPointer());
    uint64_t parentBytes = 0;
    for (unsigned k = 0; k + 1 < tree->GetNumberOfComputedLevels(); ++k)
      parentBytes += tree->GetRegionCount(k) * sizeof(uint32_t);
    std::printf("%-14s %2d-conn waterfall hierarchy (ProduceLevelImages off) end-to-end %8.2f ms; "
                "ComputeLevelImage(1) %6.2f ms; every level equal to the level images: %s\n",
                name.c_str(),
                conn,
                Median(treeWall),
                Median(make),
                same ? "yes" : "NO");
    std::fflush(stdout);
    records.push_back("{" + Field("kind", std::string("waterfall-hierarchy")) + ", " + Field("name", name) + ", " +
                      Field("connectivity", conn) + ", " + Field("voxels", n) + ", " +
                      Field("watershed_ms", tree->GetWatershedMilliseconds()) + ", " +
                      Field("levels_ms", tree->GetLevelsMilliseconds()) + ", " +
                      Field("end_to_end_ms", Median(treeWall)) + ", " + Field("bytes_up", uint64_t(n * sizeof(float))) +
                      ", " + Field("bytes_down", uint64_t(n * sizeof(unsigned int) + parentBytes)) + ", " +
                      Field("compute_level_1_ms", Median(make)) + ", " + Field("identical_to_level_images", same) +
                      "}");
    identicalAll = identicalAll && same;
  }
}

/** --markers: the watershed by flooding (markers or a Level), CUDA against the CPU reference and ITK's filters
 * (all cores) in one run. Markers: one every `step` voxels along each axis, labelled 1, 2, ...; Level: 2% of the
 * image's range (the gradients' range is a few tens: the level is a float). Reports the fraction of voxels where ITK's
 * labels equal the module's (the float gradients have few ties; where two floods tie, the two tie rules may differ) and
 * checks that the marker counts agree. */
template <unsigned D>
void
RunMarkers(const std::string & name, const typename itk::Image<float, D>::Pointer & image, int step, const Options & o)
{
  using Image         = itk::Image<float, D>;
  using Labels        = itk::Image<unsigned int, D>;
  const uint64_t n    = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto *   v    = image->GetBufferPointer();
  const auto [lo, hi] = std::minmax_element(v, v + n);
  const double level  = double(float(0.02 * double(*hi - *lo))); // a float, as the float image's filters take it
  auto         grid   = Labels::New();
  grid->SetRegions(image->GetLargestPossibleRegion());
  grid->Allocate();
  grid->FillBuffer(0);
  const auto   size = image->GetLargestPossibleRegion().GetSize();
  unsigned int next = 0;
  for (uint64_t i = 0; i < n; ++i)
  {
    bool on = true;
    for (unsigned d = 0, r = 1; d < D; r *= unsigned(size[d]), ++d)
      on = on && (i / r % size[d]) % step == unsigned(step / 2);
    if (on)
      grid->GetBufferPointer()[i] = ++next;
  }
  for (bool full : { false, true })
    for (const bool withLevel : { false, true })
    {
      if (o.mode == (withLevel ? "markers" : "level"))
        continue;
      const int  conn  = D == 2 ? (full ? 8 : 4) : (full ? 26 : 6);
      const auto setup = [&](auto & f)
      {
        f->SetInput(image);
        f->SetFullyConnected(full);
        if (withLevel)
          f->SetLevel(level);
        else
          f->SetMarkerImage(grid);
      };
      std::vector<unsigned int> reference;
      double                    cpuMs = 0;
      if (n <= o.cpuMax)
      {
        auto cpu = itk::CudaWatershedImageFilter<Image, Labels>::New();
        setup(cpu);
        cpu->SetBackend(Backend::CPU);
        cpuMs = WallMs([&] { cpu->Update(); });
        reference.assign(cpu->GetOutput()->GetBufferPointer(), cpu->GetOutput()->GetBufferPointer() + n);
      }
      std::vector<unsigned int> itkLabels;
      double                    itkMs = 0;
      if (n <= o.itkMax)
      {
        if (withLevel)
        {
          auto f = itk::MorphologicalWatershedImageFilter<Image, Labels>::New();
          f->SetInput(image);
          f->SetFullyConnected(full);
          f->SetMarkWatershedLine(false);
          f->SetLevel(float(level));
          itkMs = WallMs([&] { f->Update(); });
          itkLabels.assign(f->GetOutput()->GetBufferPointer(), f->GetOutput()->GetBufferPointer() + n);
        }
        else
        {
          auto f = itk::MorphologicalWatershedFromMarkersImageFilter<Image, Labels>::New();
          f->SetInput(image);
          f->SetMarkerImage(grid);
          f->SetFullyConnected(full);
          f->SetMarkWatershedLine(false);
          itkMs = WallMs([&] { f->Update(); });
          itkLabels.assign(f->GetOutput()->GetBufferPointer(), f->GetOutput()->GetBufferPointer() + n);
        }
      }
      auto gpu = itk::CudaWatershedImageFilter<Image, Labels>::New();
      setup(gpu);
      gpu->SetBackend(Backend::CUDA);
      const OverlapTimes t         = TimedWithoutAndWithOverlap(gpu.GetPointer(), o.reps);
      const auto *       out       = gpu->GetOutput()->GetBufferPointer();
      const bool         identical = !reference.empty() && std::equal(reference.begin(), reference.end(), out);
      uint64_t           agree = 0, itkMarkers = 0;
      for (uint64_t i = 0; i < itkLabels.size(); ++i)
      {
        agree += itkLabels[i] == out[i];
        itkMarkers = std::max<uint64_t>(itkMarkers, itkLabels[i]);
      }
      const uint64_t markers = withLevel ? uint64_t(gpu->GetObjectCount()) : uint64_t(next);
      const double   k = Median(t.kernel), w = Median(t.wall), equal = itkLabels.empty() ? 0.0 : double(agree) / n;
      if (!reference.empty() && !identical)
        identicalAll = false;
      if (!itkLabels.empty() && itkMarkers != markers)
        identicalAll = false;
      std::printf("%-14s %2d-conn %-7s %11llu vox  kernel %8.2f ms  end-to-end %8.2f ms  markers %8llu  peak %6.0f MiB"
                  "  CPU ref %9.1f ms%s  ITK %9.1f ms (%llu markers, x%.0f, labels equal at %.4f%% of voxels)\n",
                  name.c_str(),
                  conn,
                  withLevel ? "level" : "markers",
                  (unsigned long long)n,
                  k,
                  w,
                  (unsigned long long)markers,
                  gpu->GetPeakDeviceMemory() / 1048576.0,
                  cpuMs,
                  reference.empty() ? "" : (identical ? " (identical)" : " (DIFFERENT)"),
                  itkMs,
                  (unsigned long long)itkMarkers,
                  itkMs > 0 ? itkMs / w : 0.0,
                  100.0 * equal);
      std::fflush(stdout);
      records.push_back("{" + Field("kind", std::string(withLevel ? "watershed-level" : "watershed-markers")) + ", " +
                        Field("name", name) + ", " + Field("connectivity", conn) + ", " + Field("voxels", n) + ", " +
                        Field("level", level) + ", " + Field("markers", markers) + ", " + Field("kernel_ms", k) + ", " +
                        Field("end_to_end_ms", w) + ", " +
                        Field("peak_device_bytes", uint64_t(gpu->GetPeakDeviceMemory())) + ", " +
                        Field("cpu_reference_ms", cpuMs) + ", " + Field("cpu_checked", !reference.empty()) + ", " +
                        Field("identical_to_cpu", identical) + ", " + Field("itk_ms", itkMs) + ", " +
                        Field("itk_markers", itkMarkers) + ", " + Field("itk_equal_fraction", equal) + "}");
    }
}

/** Writes the records as {"results": [...]} to `json` (nothing when it is empty). */
void
WriteRecords(const std::string & json)
{
  if (json.empty())
    return;
  std::ofstream out(json);
  out << "{\"results\": [\n";
  for (size_t i = 0; i < records.size(); ++i)
    out << "  " << records[i] << (i + 1 < records.size() ? ",\n" : "\n");
  out << "]}\n";
}

/** --waterfall-paths: the waterfall kept as a hierarchy (ProduceLevelImages off) on 2D gradients of 256^2 to 4096^2,
 * with its levels on the voxels and on the region graph (chs::testing::SetWaterfallLevelPath), both connectivities:
 * where the region graph starts to pay. */
void
WaterfallPaths(const Options & o)
{
  using Image  = itk::Image<float, 2>;
  using Labels = itk::Image<unsigned int, 2>;
  for (const int64_t side : { 256, 512, 1024, 2048, 4096 })
  {
    const int64_t size[3] = { side, side, 1 };
    const auto    image   = ToImage<2>(GradientOfSmoothedNoise(side, side, 1, 3, 1), size);
    for (const bool full : { false, true })
    {
      double levels[3] = {}, wall[3] = {};
      bool   graph[3] = {};
      for (int path : { 1, 2, 0 })
      {
        chs::testing::SetWaterfallLevelPath(path);
        auto tree = itk::CudaWaterfallImageFilter<Image, Labels>::New();
        tree->SetInput(image);
        tree->SetFullyConnected(full);
        tree->SetBackend(Backend::CUDA);
        tree->ProduceLevelImagesOff();
        tree->Update();
        std::vector<double> w, l;
        for (int r = 0; r < o.reps; ++r)
        {
          tree->Modified();
          w.push_back(WallMs([&] { tree->Update(); }));
          l.push_back(tree->GetLevelsMilliseconds());
        }
        levels[path] = Median(l);
        wall[path]   = Median(w);
        graph[path]  = tree->GetLevelsOnRegionGraph();
      }
      chs::testing::SetWaterfallLevelPath(0);
      std::printf(
        "%5lld^2 %d-conn waterfall hierarchy: levels on the voxels %7.3f ms (end to end %7.3f), on the region "
        "graph %7.3f ms (end to end %7.3f); the sizes choose the %s\n",
        (long long)side,
        full ? 8 : 4,
        levels[1],
        wall[1],
        levels[2],
        wall[2],
        graph[0] ? "region graph" : "voxels");
      std::fflush(stdout);
      records.push_back("{" + Field("kind", std::string("waterfall-paths")) + ", " + Field("side", side) + ", " +
                        Field("connectivity", full ? 8 : 4) + ", " + Field("voxel_levels_ms", levels[1]) + ", " +
                        Field("voxel_end_to_end_ms", wall[1]) + ", " + Field("graph_levels_ms", levels[2]) + ", " +
                        Field("graph_end_to_end_ms", wall[2]) + ", " + Field("auto_took_graph", graph[0]) + "}");
    }
  }
  WriteRecords(o.json);
}

/** One row of --scale: `run` (returning the basins or regions it found, filling `info`) timed over the repetitions
 * after a warm-up; a refusal is recorded with its message. */
template <typename F>
void
ScaleRow(const std::string & kind, const std::string & label, uint64_t n, int reps, F && run)
{
  std::vector<double> kernel, wall;
  chs::RunInfo        info;
  uint64_t            count = 0;
  std::string         refused;
  for (int r = 0; r <= reps && refused.empty(); ++r) // the first run warms up
  {
    try
    {
      const double ms = WallMs([&] { count = run(info); });
      if (r > 0)
      {
        wall.push_back(ms);
        kernel.push_back(info.kernelMilliseconds);
      }
    }
    catch (const std::exception & e)
    {
      refused = e.what();
    }
  }
  if (!refused.empty())
  {
    std::printf("%s %s: refused: %s\n", kind.c_str(), label.c_str(), refused.c_str());
    records.push_back("{" + Field("kind", kind + "-scale") + ", " + Field("name", label) + ", " + Field("voxels", n) +
                      ", " + Field("refused", refused) + "}");
    return;
  }
  const double k = Median(kernel), e = Median(wall);
  std::printf("%s %s: %llu regions, kernel %.2f ms (%.2f Gvoxel/s), end to end %.2f ms (%.2f Gvoxel/s), peak %.2f GB, "
              "reserved %.2f GB\n",
              kind.c_str(),
              label.c_str(),
              static_cast<unsigned long long>(count),
              k,
              n / k / 1e6,
              e,
              n / e / 1e6,
              info.peakDeviceBytes / 1e9,
              info.reservedDeviceBytes / 1e9);
  records.push_back("{" + Field("kind", kind + "-scale") + ", " + Field("name", label) + ", " + Field("voxels", n) +
                    ", " + Field(kind == "watershed" ? "basins" : "regions", count) + ", " + Field("kernel_ms", k) +
                    ", " + Field("end_to_end_ms", e) + ", " + Field("peak_device_bytes", info.peakDeviceBytes) + ", " +
                    Field("reserved_device_bytes", info.reservedDeviceBytes) + ", " +
                    Field("reps", int(kernel.size())) + "}");
}

/** --scale --markers: the watershed from markers through the ITK-free API (chs::MarkerWatershedCUDA, uint8 pixels,
 * uint32 labels, 6-connected in 3D), from grid markers (one every 16 voxels along each axis, at 8 mod 16, labelled
 * 1, 2, ... in raster order) and from the minima with a level of 8, on the 32-bit path and the 64-bit path forced
 * (below 2^32 - 1 voxels; above it the 64-bit path is the run's own): times and device memory. A run that cannot fit
 * the device is refused before it allocates anything; the row says so. */
void
ScaleMarkers(const std::vector<uint8_t> & pixels,
             const chs::Grid &            grid,
             const std::string &          name,
             int                          reps,
             std::vector<uint32_t> &      labels)
{
  const uint64_t        n = grid.NumberOfVoxels(), nx = grid.size[0], ny = grid.size[1], nz = grid.size[2];
  const uint64_t        mx = (nx + 7) / 16, my = (ny + 7) / 16;
  std::vector<uint32_t> markers(n);
  ParallelFor(int64_t(ny * nz),
              [&](int64_t a, int64_t b)
              {
                for (int64_t row = a; row < b; ++row)
                {
                  const uint64_t y = uint64_t(row) % ny, z = uint64_t(row) / ny;
                  const bool     on = y % 16 == 8 && (grid.dimension == 2 || z % 16 == 8);
                  for (uint64_t x = 0; x < nx; ++x)
                    markers[uint64_t(row) * nx + x] =
                      on && x % 16 == 8 ? uint32_t(1 + ((grid.dimension == 2 ? 0 : z / 16) * my + y / 16) * mx + x / 16)
                                        : 0u;
                }
              });
  for (const bool withLevel : { false, true })
    for (const bool wide : { false, true })
    {
      if (wide && n >= 0xffffffffull)
        break;
      const std::string label =
        name + (withLevel ? ", level 8" : ", grid markers") + (wide ? " (64-bit path, forced)" : "");
      chs::MarkerWatershedParameters p;
      p.level          = withLevel ? 8.0 : 0.0;
      p.forceWideIndex = wide;
      ScaleRow("markers",
               label,
               n,
               reps,
               [&](chs::RunInfo & info)
               {
                 const auto r = chs::MarkerWatershedCUDA(pixels.data(),
                                                         withLevel ? nullptr : markers.data(),
                                                         static_cast<const uint8_t *>(nullptr),
                                                         grid,
                                                         p,
                                                         labels.data(),
                                                         chs::ExecutionContext{},
                                                         &info);
                 return withLevel ? r.markerCount : r.seedCount;
               });
    }
}

/** --scale: the watershed and the waterfall through the ITK-free API (chs::WatershedCUDA and chs::WaterfallCUDA,
 * uint8 pixels, uint32 labels, 6-connected in 3D) from 4096^2, 512^3 and 1024^3 to the 2048 x 2048 x 1100 volume of
 * the connected-components benchmark (4.6e9 voxels, above 2^32): kernel and end-to-end times, voxels per second,
 * peak and reserved device memory. The waterfall computes every level and returns every level's parents; one label
 * image crosses the link, level 1's (the watershed's row copies its one label image too). The pixels are the gradient
 * of smoothed noise, quantised to 0 .. 255. */
void
Scale(const Options & o)
{
  const int64_t sizes[][3] = { { 4096, 4096, 1 }, { 512, 512, 512 }, { 1024, 1024, 1024 }, { 2048, 2048, 1100 } };
  for (const auto & size : sizes)
  {
    const int64_t n = size[0] * size[1] * size[2];
    if (uint64_t(n) > o.scaleMax)
      continue;
    const std::string name = std::to_string(size[0]) + "x" + std::to_string(size[1]) +
                             (size[2] > 1 ? "x" + std::to_string(size[2]) : std::string());
    std::vector<uint8_t> pixels(n);
    {
      const auto g = GradientOfSmoothedNoise(size[0], size[1], size[2], 2, 7);
      ParallelFor(n,
                  [&](int64_t a, int64_t b)
                  {
                    for (int64_t i = a; i < b; ++i)
                      pixels[i] = uint8_t(std::min(255.0f, g[i] * 0.25f));
                  });
    }
    chs::Grid grid;
    grid.dimension = size[2] > 1 ? 3 : 2;
    for (int d = 0; d < 3; ++d)
      grid.size[d] = uint64_t(size[d]);
    std::vector<uint32_t> labels(n);
    const int             reps = n > (int64_t(1) << 31) ? std::min(o.reps, 3) : o.reps;
    if (o.markers)
    {
      ScaleMarkers(pixels, grid, name, reps, labels);
      continue;
    }
    // Below 2^32 - 1 voxels the 64-bit path is also run, forced (the path larger volumes take).
    for (const bool wide : { false, true })
    {
      if (wide && n >= int64_t(0xffffffff))
        break;
      const std::string        label = wide ? name + " (64-bit path, forced)" : name;
      chs::WatershedParameters p;
      p.forceWideIndex       = wide;
      uint64_t plateauRounds = 0;
      ScaleRow("watershed",
               label,
               uint64_t(n),
               reps,
               [&](chs::RunInfo & info)
               {
                 const auto r =
                   chs::WatershedCUDA(pixels.data(), grid, p, labels.data(), chs::ExecutionContext{}, &info);
                 plateauRounds = r.plateauRounds;
                 return r.basinCount;
               });
      std::printf("  watershed %s: %llu plateau rounds\n", label.c_str(), (unsigned long long)plateauRounds);
      if (o.only == "watershed")
        continue;
      chs::WaterfallParameters wp;
      wp.watershed                                 = p;
      const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned level, uint64_t)
      { return level == 1 ? labels.data() : nullptr; };
      chs::WaterfallResult last;
      ScaleRow("waterfall",
               label,
               uint64_t(n),
               reps,
               [&](chs::RunInfo & info)
               {
                 last = chs::WaterfallCUDA(pixels.data(), grid, wp, sink, chs::ExecutionContext{}, &info);
                 return last.regionCounts[0];
               });
      std::printf("  waterfall %s: %zu levels, on the %s\n",
                  label.c_str(),
                  last.regionCounts.size(),
                  last.levelsOnRegionGraph ? "region graph" : "voxels");
    }
  }
  WriteRecords(o.json);
}

} // namespace

int
main(int argc, char * argv[])
{
  Options o;
  for (int i = 1; i < argc; ++i)
  {
    const std::string a    = argv[i];
    auto              next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--json")
      o.json = next();
    else if (a == "--rounds")
      o.rounds = std::max(1, std::stoi(next()));
    else if (a == "--reps")
      o.reps = std::stoi(next());
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--no-800m")
      o.no800m = true;
    else if (a == "--itk-max-voxels")
      o.itkMax = std::stoull(next());
    else if (a == "--cpu-max-voxels")
      o.cpuMax = std::stoull(next());
    else if (a == "--write-inputs")
      o.inputs = next();
    else if (a == "--only")
      o.only = next();
    else if (a == "--waterfall-paths")
      o.waterfallPaths = true;
    else if (a == "--markers")
      o.markers = true;
    else if (a == "--mode")
      o.mode = next();
    else if (a == "--scale")
      o.scale = true;
    else if (a == "--max-voxels")
      o.scaleMax = std::stoull(next());
    else if (a == "--staging" && chs_bench::SetStaging(next()))
      ;
    else
    {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::printf("threads: %u (ITK's default: %u)\n",
              std::thread::hardware_concurrency(),
              itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  if (o.waterfallPaths)
  {
    WaterfallPaths(o);
    return 0;
  }
  if (o.scale)
  {
    Scale(o);
    return 0;
  }
  const int64_t side = o.quick ? 1024 : 4096, vol = o.quick ? 128 : 512;
  if (o.markers)
  {
    const int64_t size2[3] = { side, side, 1 }, cube = vol / 2, size3[3] = { cube, cube, cube };
    if (o.only != "3d")
      RunMarkers<2>(
        std::to_string(side) + "^2", ToImage<2>(GradientOfSmoothedNoise(side, side, 1, 3, 1), size2), 32, o);
    if (o.only != "2d")
      RunMarkers<3>(
        std::to_string(cube) + "^3", ToImage<3>(GradientOfSmoothedNoise(cube, cube, cube, 2, 2), size3), 16, o);
    WriteRecords(o.json);
    return identicalAll ? 0 : 1;
  }
  if (o.only != "3d")
  {
    const int64_t     size[3] = { side, side, 1 };
    const auto        g       = GradientOfSmoothedNoise(side, side, 1, 3, 1);
    const auto        image   = ToImage<2>(g, size);
    const std::string name    = std::to_string(side) + "^2";
    if (!o.inputs.empty())
    {
      std::ofstream(o.inputs + "/grad2d.raw", std::ios::binary)
        .write(reinterpret_cast<const char *>(g.data()), std::streamsize(g.size() * sizeof(float)));
      std::ofstream(o.inputs + "/inputs.txt") << "grad2d " << side << " " << side << "\n";
    }
    RunWatershed<2>(name, image, o, true);
    RunWaterfall<2>(name, image, o);
  }
  for (const int64_t v : { vol / 4, vol })
  {
    if (o.only == "2d")
      break;
    const int64_t size[3] = { v, v, v };
    const auto    image   = ToImage<3>(GradientOfSmoothedNoise(v, v, v, 2, 2), size);
    RunWatershed<3>(std::to_string(v) + "^3", image, o, false);
  }
  if (!o.quick && !o.no800m && o.only != "2d")
  {
    const int64_t size[3] = { 4000, 4000, 50 };
    const auto    image   = ToImage<3>(GradientOfSmoothedNoise(4000, 4000, 50, 2, 3), size);
    Options       few     = o;
    few.reps              = std::min(o.reps, 5);
    RunWatershed<3>("4000x4000x50", image, few, false);
  }
  WriteRecords(o.json);
  return identicalAll ? 0 : 1;
}
