// Where the module's watershed from markers (and with a Level) and ITK's morphological watersheds agree, and why they
// differ where they do (issue 61, "What ITK users will compare"), on real images.
//
// For each image (2D or 3D, any format ITK reads), two reliefs: its gradient magnitude (central differences) in
// float, and the same rescaled to 0..255 and rounded to unsigned char (a quantised relief: plateaux, so ties). For each
// relief, three marker sets: random blobs (one marker every ~2,000 pixels, discs or balls of radius 2, labels 1..K),
// and the regional minima of the h-minima transform of height 2% and 5% of the relief's range (the filters' Level).
// Both connectivities. Each case runs itk::CudaWatershedImageFilter (--backend: cpu, the default, or auto) and ITK's
// MorphologicalWatershedFromMarkersImageFilter or MorphologicalWatershedImageFilter (MarkWatershedLine off, the same
// connectivity), and reports the share of pixels whose labels differ.
//
// Why they differ: both should be minimax flooding forests from the same markers (a path costs its highest pixel, a
// marker's own value included; every pixel takes the label of a marker that reaches it at the lowest possible cost).
// The tool computes that cost C(p) with its own Dijkstra (an oracle independent of both filters) and checks each
// labelling: a pixel is supported when it is a marker pixel with its marker's label, or has a supported neighbour q of
// its label with max(C(q), I(p)) = C(p). An unsupported labelled pixel breaks the definition; where both labellings
// are fully supported, every pixel on which they differ is a tie: two markers reach it at the same cost. For the
// Level cases the markers are ITK's (HMinimaImageFilter, RegionalMinimaImageFilter, ConnectedComponentImageFilter,
// as MorphologicalWatershedImageFilter finds them); the module's marker count is printed beside theirs.
//
// Usage: CudaWatershedItkAgreement [--backend cpu|auto] IMAGE...
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "itkGradientMagnitudeImageFilter.h"
#include "itkHMinimaImageFilter.h"
#include "itkImageFileReader.h"
#include "itkMorphologicalWatershedFromMarkersImageFilter.h"
#include "itkMorphologicalWatershedImageFilter.h"
#include "itkRegionalMinimaImageFilter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace
{

using Backend = itk::CudaSegmentationBackendEnums::Backend;
using Label   = unsigned int;

/** The neighbours of pixel i of an image of `size` (face or full connectivity). */
template <unsigned D>
struct Neighbourhood
{
  int64_t size[3] = { 1, 1, 1 };
  bool    full    = false;

  template <typename F>
  void
  ForEach(int64_t i, F && f) const
  {
    const int64_t x = i % size[0], y = i / size[0] % size[1], z = i / size[0] / size[1];
    for (int64_t dz = -1; dz <= 1; ++dz)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx)
        {
          const int64_t steps = (dx != 0) + (dy != 0) + (dz != 0);
          if (steps == 0 || (!full && steps > 1) || (D == 2 && dz != 0))
            continue;
          const int64_t nx = x + dx, ny = y + dy, nz = z + dz;
          if (nx < 0 || ny < 0 || nz < 0 || nx >= size[0] || ny >= size[1] || nz >= size[2])
            continue;
          f((nz * size[1] + ny) * size[0] + nx);
        }
  }
};

/** The minimax cost of every pixel from the marker pixels (markers[i] != 0): a marker pixel costs its own value, a
 * path the largest value along it. Pixels no marker reaches keep +inf. */
template <unsigned D>
std::vector<double>
FloodCost(const std::vector<double> & value, const std::vector<Label> & markers, const Neighbourhood<D> & nb)
{
  std::vector<double> cost(value.size(), INFINITY);
  using Entry = std::pair<double, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  for (int64_t i = 0; i < int64_t(value.size()); ++i)
    if (markers[i] != 0)
    {
      cost[i] = value[i];
      queue.emplace(cost[i], i);
    }
  while (!queue.empty())
  {
    const auto [c, i] = queue.top();
    queue.pop();
    if (c > cost[i])
      continue;
    nb.ForEach(i,
               [&](int64_t j)
               {
                 const double d = std::max(c, value[j]);
                 if (d < cost[j])
                 {
                   cost[j] = d;
                   queue.emplace(d, j);
                 }
               });
  }
  return cost;
}

/** Pixels of `labels` that the definition does not support (see the top of the file): labelled pixels with no chain
 * of equal-label optimal steps back to a marker of their label, marker pixels with another label, and reachable
 * pixels left at 0. */
template <unsigned D>
int64_t
Unsupported(const std::vector<Label> &  labels,
            const std::vector<double> & value,
            const std::vector<Label> &  markers,
            const std::vector<double> & cost,
            const Neighbourhood<D> &    nb)
{
  const int64_t        n = int64_t(labels.size());
  std::vector<uint8_t> supported(n, 0);
  std::vector<int64_t> queue;
  int64_t              bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (markers[i] != 0)
    {
      if (labels[i] == markers[i])
      {
        supported[i] = 1;
        queue.push_back(i);
      }
      else
        ++bad;
    }
  for (size_t k = 0; k < queue.size(); ++k)
  {
    const int64_t q = queue[k];
    nb.ForEach(q,
               [&](int64_t p)
               {
                 if (!supported[p] && markers[p] == 0 && labels[p] == labels[q] &&
                     std::max(cost[q], value[p]) == cost[p])
                 {
                   supported[p] = 1;
                   queue.push_back(p);
                 }
               });
  }
  for (int64_t i = 0; i < n; ++i)
    if (markers[i] == 0 && !supported[i] && (labels[i] != 0 || std::isfinite(cost[i])))
      ++bad;
  return bad;
}

template <typename TImage>
std::vector<typename TImage::PixelType>
Pixels(const TImage * image)
{
  const auto * p = image->GetBufferPointer();
  return std::vector<typename TImage::PixelType>(p, p + image->GetBufferedRegion().GetNumberOfPixels());
}

/** One relief: every marker set and connectivity, a line each. */
template <unsigned D, typename TRelief>
void
CompareOn(const std::string &                      name,
          const char *                             reliefName,
          typename itk::Image<TRelief, D>::Pointer relief,
          Backend                                  backend)
{
  using ReliefImage                = itk::Image<TRelief, D>;
  using LabelImage                 = itk::Image<Label, D>;
  const auto                region = relief->GetLargestPossibleRegion();
  const int64_t             n      = int64_t(region.GetNumberOfPixels());
  const auto                pixels = Pixels(relief.GetPointer());
  const std::vector<double> value(pixels.begin(), pixels.end());
  const auto [lo, hi] = std::minmax_element(value.begin(), value.end());
  Neighbourhood<D> nb;
  for (unsigned d = 0; d < D; ++d)
    nb.size[d] = int64_t(region.GetSize()[d]);

  // Random blobs: one marker every ~2,000 pixels, radius 2, labels 1..K (a later blob overwrites an earlier one).
  auto blobs = LabelImage::New();
  blobs->SetRegions(region);
  blobs->Allocate(true);
  blobs->CopyInformation(relief);
  {
    std::mt19937  rng(1);
    const int64_t count = std::max<int64_t>(8, n / 2000);
    const int64_t r     = 2;
    Label *       b     = blobs->GetBufferPointer();
    for (int64_t k = 1; k <= count; ++k)
    {
      int64_t c[3] = { 0, 0, 0 };
      for (unsigned d = 0; d < D; ++d)
        c[d] = std::uniform_int_distribution<int64_t>(0, nb.size[d] - 1)(rng);
      for (int64_t z = c[2] - (D == 3 ? r : 0); z <= c[2] + (D == 3 ? r : 0); ++z)
        for (int64_t y = c[1] - r; y <= c[1] + r; ++y)
          for (int64_t x = c[0] - r; x <= c[0] + r; ++x)
          {
            const int64_t dz = D == 3 ? z - c[2] : 0;
            if (x < 0 || y < 0 || z < 0 || x >= nb.size[0] || y >= nb.size[1] || z >= nb.size[2] ||
                (x - c[0]) * (x - c[0]) + (y - c[1]) * (y - c[1]) + dz * dz > r * r)
              continue;
            b[(z * nb.size[1] + y) * nb.size[0] + x] = Label(k);
          }
    }
  }

  for (const char * markersName : { "blobs", "level 2%", "level 5%" })
  {
    const bool   level  = markersName[0] == 'l';
    const double share  = std::strcmp(markersName, "level 2%") == 0 ? 0.02 : 0.05;
    double       height = share * (*hi - *lo);
    if (std::is_integral<TRelief>::value)
      height = std::max(1.0, std::round(height));
    for (bool full : { false, true })
    {
      nb.full   = full;
      auto ours = itk::CudaWatershedImageFilter<ReliefImage, LabelImage>::New();
      ours->SetInput(relief);
      ours->SetFullyConnected(full);
      ours->SetBackend(backend);
      typename LabelImage::Pointer markers;
      size_t                       itkMarkers = 0;
      std::vector<Label>           theirs;
      if (level)
      {
        ours->SetLevel(height);
        // ITK's markers, as MorphologicalWatershedImageFilter finds them.
        auto hmin = itk::HMinimaImageFilter<ReliefImage, ReliefImage>::New();
        hmin->SetInput(relief);
        hmin->SetHeight(static_cast<TRelief>(height));
        hmin->SetFullyConnected(full);
        auto minima = itk::RegionalMinimaImageFilter<ReliefImage, LabelImage>::New();
        minima->SetInput(hmin->GetOutput());
        minima->SetFullyConnected(full);
        minima->SetFlatIsMinima(true);
        minima->SetForegroundValue(1);
        minima->SetBackgroundValue(0);
        auto components = itk::ConnectedComponentImageFilter<LabelImage, LabelImage>::New();
        components->SetInput(minima->GetOutput());
        components->SetFullyConnected(full);
        components->Update();
        markers           = components->GetOutput();
        itkMarkers        = components->GetObjectCount();
        auto itkWatershed = itk::MorphologicalWatershedImageFilter<ReliefImage, LabelImage>::New();
        itkWatershed->SetInput(relief);
        itkWatershed->SetLevel(static_cast<TRelief>(height));
        itkWatershed->SetFullyConnected(full);
        itkWatershed->SetMarkWatershedLine(false);
        itkWatershed->Update();
        theirs = Pixels(itkWatershed->GetOutput());
      }
      else
      {
        markers = blobs;
        ours->SetMarkerImage(blobs);
        auto itkWatershed = itk::MorphologicalWatershedFromMarkersImageFilter<ReliefImage, LabelImage>::New();
        itkWatershed->SetInput(relief);
        itkWatershed->SetMarkerImage(blobs);
        itkWatershed->SetFullyConnected(full);
        itkWatershed->SetMarkWatershedLine(false);
        itkWatershed->Update();
        theirs = Pixels(itkWatershed->GetOutput());
      }
      ours->Update();
      const std::vector<Label> mine   = Pixels(ours->GetOutput());
      const std::vector<Label> seeds  = Pixels(markers.GetPointer());
      int64_t                  differ = 0;
      for (int64_t i = 0; i < n; ++i)
        differ += mine[i] != theirs[i];
      const std::vector<double> cost = FloodCost(value, seeds, nb);
      // The check can fail: the module's labels with one labelled non-marker pixel given a label no marker has.
      {
        std::vector<Label> broken = mine;
        int64_t            i      = n / 2;
        while (i < n && (seeds[i] != 0 || broken[i] == 0))
          ++i;
        if (i < n)
        {
          broken[i] = *std::max_element(mine.begin(), mine.end()) + 1;
          if (Unsupported(broken, value, seeds, cost, nb) == 0)
            throw std::runtime_error("the support check accepted a pixel of a label no marker has");
        }
      }
      std::printf("| %s | %s | %s | %s | %lld | %.3f%% | %lld | %lld | %s |\n",
                  name.c_str(),
                  reliefName,
                  level ? (std::string(markersName) + " (" + std::to_string(itkMarkers) + " / " +
                           std::to_string(ours->GetObjectCount()) + ")")
                            .c_str()
                        : markersName,
                  full ? "full" : "face",
                  static_cast<long long>(n),
                  100.0 * double(differ) / double(n),
                  static_cast<long long>(Unsupported(mine, value, seeds, cost, nb)),
                  static_cast<long long>(Unsupported(theirs, value, seeds, cost, nb)),
                  ours->GetLastBackend() == Backend::CUDA ? "CUDA" : "CPU");
      std::fflush(stdout);
    }
  }
}

template <unsigned D>
void
CompareImage(const std::string & path, Backend backend)
{
  using FloatImage = itk::Image<float, D>;
  using ByteImage  = itk::Image<unsigned char, D>;
  auto reader      = itk::ImageFileReader<FloatImage>::New();
  reader->SetFileName(path);
  auto gradient = itk::GradientMagnitudeImageFilter<FloatImage, FloatImage>::New();
  gradient->SetInput(reader->GetOutput());
  gradient->SetUseImageSpacing(false);
  gradient->Update();
  typename FloatImage::Pointer g = gradient->GetOutput();
  g->DisconnectPipeline();
  // The same relief quantised to 0..255.
  auto bytes = ByteImage::New();
  bytes->SetRegions(g->GetLargestPossibleRegion());
  bytes->Allocate();
  bytes->CopyInformation(g);
  const float * src   = g->GetBufferPointer();
  const size_t  n     = g->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto [lo, hi] = std::minmax_element(src, src + n);
  for (size_t i = 0; i < n; ++i)
    bytes->GetBufferPointer()[i] =
      static_cast<unsigned char>(std::lround(*hi > *lo ? 255.0 * (src[i] - *lo) / (*hi - *lo) : 0.0));
  const std::string name = path.substr(path.find_last_of('/') + 1);
  CompareOn<D, unsigned char>(name, "uint8 gradient", bytes, backend);
  CompareOn<D, float>(name, "float gradient", g, backend);
}

} // namespace

int
main(int argc, char * argv[])
{
  Backend                  backend = Backend::CPU;
  std::vector<std::string> images;
  for (int a = 1; a < argc; ++a)
  {
    const std::string arg = argv[a];
    if (arg == "--backend" && a + 1 < argc)
      backend = std::string(argv[++a]) == "auto" ? Backend::Auto : Backend::CPU;
    else
      images.push_back(arg);
  }
  if (images.empty())
  {
    std::fprintf(stderr, "usage: %s [--backend cpu|auto] IMAGE...\n", argv[0]);
    return 2;
  }
  std::printf("| image | relief | markers (ITK's / the module's count) | connectivity | pixels | labels differ | "
              "unsupported, module | unsupported, ITK | backend |\n|---|---|---|---|---:|---:|---:|---:|---|\n");
  try
  {
    for (const std::string & path : images)
    {
      auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
      if (!io)
        throw std::runtime_error("cannot read " + path);
      io->SetFileName(path);
      io->ReadImageInformation();
      if (io->GetNumberOfDimensions() == 3 && io->GetDimensions(2) > 1)
        CompareImage<3>(path, backend);
      else
        CompareImage<2>(path, backend);
    }
  }
  catch (const std::exception & e)
  {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
