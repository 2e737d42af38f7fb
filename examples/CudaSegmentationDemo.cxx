// CudaSegmentationDemo: what each of the module's algorithms does to a real T1 MRI volume and to a generated CT-like
// volume, how long the GPU takes against the CPU reference, and where to open the results. scripts/demo.sh runs it.
//
//   CudaSegmentationDemo [options] <output folder>
//
// For each volume: connected components of a threshold, the watershed of the gradient magnitude and its waterfall
// levels, an alpha-omega cut of the alpha-tree, a single-linkage cut into k clusters, waterpixels (supervoxels) and
// the Image Foresting Transform from a few markers. With a GPU every algorithm runs on it and on the CPU reference,
// and the demo compares the two label images voxel for voxel; without one it runs on the CPU reference alone.
// Each result is written as a label map (.nrrd), a 3D Slicer segmentation (.seg.nrrd, up to kMaxSegments labels) and
// a PNG of the middle slice with the region borders over the image; summary.md and summary.tsv hold the table
// printed at the end. Run with --help for the options.
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"
#include "chs/Execution.h"
#include "chsSlicerModule.h"
#include "itkAlphaTreeCutImageFilter.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkCudaImageForestingTransformImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaWaterpixelImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "itkDendrogramToLabelImageFilter.h"

#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkMedianImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"
#include "itksys/SystemTools.hxx"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace
{
using Backend = itk::CudaSegmentationBackendEnums::Backend;
using Volume  = itk::Image<short, 3>; // both inputs: the MRI is int16, the CT-like volume's values fit
using Relief  = itk::Image<float, 3>; // gradient magnitudes, the smoothed input of single linkage
using Labels  = itk::Image<unsigned int, 3>;

const char * kProgram = "CudaSegmentationDemo";
/** Debian's insighttoolkit5-examples package (scripts/setup.sh installs it). */
const char * kDefaultMri = "/usr/share/doc/insighttoolkit5-examples/examples/Data/KmeansTest_T1UCharRaw.nii.gz";
/** Above this many labels a result is written as a label map only: 3D Slicer shows each segment in its segment list
 * and builds a surface for each, which is slow beyond a few thousand. */
constexpr unsigned long long kMaxSegments = chs_example::kMaxSlicerSegments;

struct Options
{
  std::string folder, mri = kDefaultMri;
  unsigned    ctSize      = 256;
  Backend     backend     = Backend::Auto;
  bool        noReference = false; // --no-reference: the GPU only
  int         device      = 0;
};

/** What the demo does to one volume; sizes in voxels, the filters' sigmas derived from them. */
struct Parameters
{
  short    threshold;      // connected components of the voxels >= threshold
  double   sigmaVoxels;    // gradient magnitude scale, in voxels of the smallest spacing
  unsigned waterfallLevel; // the level written (all are computed and compared)
  double   alpha, omega;   // the alpha-omega cut of the alpha-tree of the 3x3x3 median
  unsigned clusters;       // single-linkage cut
  unsigned waterpixelStep; // voxels per waterpixel cell and axis
  unsigned pngScale;       // pixels of the picture per voxel
};

struct Input
{
  std::string     name, description;
  Volume::Pointer image;
  Parameters      p;
};

/** One algorithm's run on one backend: the label image that is written and compared, any further label images
 * compared with it (the waterfall's other levels), the region count the filter reports and a note. */
struct Run
{
  Labels::Pointer              labels;
  std::vector<Labels::Pointer> compared;
  unsigned long long           regions = 0;
  std::string                  note;
};

struct Row
{
  std::string        input, algorithm, parameters, note;
  unsigned long long regions = 0;
  double             gpuMs = std::nan(""), gpuAgainMs = std::nan(""), cpuMs = std::nan("");
  std::string        comparison; // identical, DIFFERENT, no GPU, not compared
  std::string        labelMap, segmentation, picture;
};

[[noreturn]] void
Fail(const std::string & message)
{
  chs_example::Fail(kProgram, message);
}

Options
Parse(int argc, char ** argv)
{
  Options             o;
  chs_example::Module m(kProgram, R"(Usage: CudaSegmentationDemo [options] <output folder>

Runs every algorithm of the module on a real T1 MRI volume (Debian's insighttoolkit5-examples: 128x128x62, int16)
and on a generated CT-like volume (a porous rock as a microCT shows it), on the GPU and on the CPU reference,
compares the two, and writes the label maps (.nrrd), 3D Slicer segmentations (.seg.nrrd), pictures (.png) and
the summary table (summary.md, summary.tsv) into the folder.
)");
  m.Add(chs_example::Path("--mri",
                          "<file>",
                          o.mri,
                          "the MRI volume (default: KmeansTest_T1UCharRaw.nii.gz of insighttoolkit5-examples); "
                          "\"none\" leaves it out"));
  m.Add(chs_example::Number(
    "--ct-size", "<n>", o.ctSize, "side of the generated CT-like volume (default 256; 0 leaves it out)"));
  m.Add(chs_example::Choice("--backend",
                            "<name>",
                            o.backend,
                            { { "auto", Backend::Auto }, { "cuda", Backend::CUDA }, { "cpu", Backend::CPU } },
                            "backend",
                            "auto (default): the GPU when there is one, compared with the CPU reference; cuda: the "
                            "GPU or an error; cpu: the CPU reference only"));
  m.Add(chs_example::Switch(
    "--no-reference", o.noReference, "with a GPU, do not run the CPU reference (no comparison, no CPU time)"));
  m.Add(chs_example::Number("--device", "<n>", o.device, "CUDA device (default 0)").Range("0", "63", "1"));
  const std::vector<std::string> positional = m.Parse(argc, argv);
  if (positional.size() != 1)
    Fail("expected one output folder");
  o.folder = positional[0];
  if (o.ctSize != 0 && (o.ctSize < 16 || o.ctSize > 1024))
    Fail("--ct-size must be 0 or between 16 and 1024");
  return o;
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

/** The output of an ITK filter of `image` set up by configure(filter), disconnected from the filter. */
template <class TFilter, class FConfigure>
typename TFilter::OutputImageType::Pointer
Filtered(const typename TFilter::InputImageType * image, FConfigure && configure)
{
  auto filter = TFilter::New();
  filter->SetInput(image);
  configure(filter.GetPointer());
  filter->Update();
  typename TFilter::OutputImageType::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}

/** Gaussian smoothing at sigma voxels (unit spacing). */
Relief::Pointer
Smooth(const Relief * image, double sigma)
{
  return Filtered<itk::SmoothingRecursiveGaussianImageFilter<Relief>>(image, [&](auto * f) { f->SetSigma(sigma); });
}

/** White noise of unit variance, one random stream per z slice (seeded from `seed` and z), so that the volume is the
 * same whatever the thread count. */
Relief::Pointer
Noise(unsigned n, unsigned seed)
{
  auto             noise = Relief::New();
  Relief::SizeType size;
  size.Fill(n);
  noise->SetRegions(size);
  noise->Allocate();
  const size_t slice = size_t(n) * n;
  itk::MultiThreaderBase::New()->ParallelizeArray(
    0,
    n,
    [&](itk::SizeValueType z)
    {
      std::mt19937                    rng(seed * 100003u + unsigned(z));
      std::normal_distribution<float> g;
      float *                         p = noise->GetBufferPointer() + z * slice;
      for (size_t i = 0; i < slice; ++i)
        p[i] = g(rng);
    },
    nullptr);
  return noise;
}

/** A porous rock as a microCT shows it (the project's CT-like generator, examples/waterpixel_inputs.py): grains
 * (smoothed noise above 0) at 170 in pores at 70, a texture of smoothed noise (12 grey levels), voxel noise (6),
 * then a slight blur; 50-micrometre voxels. */
Volume::Pointer
CtLike(unsigned n, unsigned seed)
{
  const auto   grains  = Smooth(Noise(n, seed), 6.0);
  const auto   texture = Smooth(Noise(n, seed + 1), 1.5);
  const auto   voxel   = Noise(n, seed + 2);
  const size_t count   = size_t(n) * n * n;
  double       sum2    = 0;
  for (size_t i = 0; i < count; ++i)
    sum2 += double(texture->GetBufferPointer()[i]) * texture->GetBufferPointer()[i];
  const float scale = float(12.0 / std::sqrt(sum2 / double(count)));
  for (size_t i = 0; i < count; ++i)
  {
    float & v = voxel->GetBufferPointer()[i];
    v = (grains->GetBufferPointer()[i] > 0 ? 170.0f : 70.0f) + scale * texture->GetBufferPointer()[i] + 6.0f * v;
  }
  const auto blurred = Smooth(voxel, 0.8);
  auto       out     = Volume::New();
  out->SetRegions(blurred->GetLargestPossibleRegion());
  Volume::SpacingType spacing;
  spacing.Fill(0.05);
  out->SetSpacing(spacing);
  out->Allocate();
  for (size_t i = 0; i < count; ++i)
    out->GetBufferPointer()[i] =
      short(std::min(255.0f, std::max(0.0f, std::nearbyint(blurred->GetBufferPointer()[i]))));
  return out;
}

double
SmallestSpacing(const Volume * image)
{
  const auto s = image->GetSpacing();
  return std::min({ s[0], s[1], s[2] });
}

/** The gradient magnitude at sigma voxels of the smallest spacing (ITK's recursive Gaussian, on the CPU). */
Relief::Pointer
Gradient(const Volume * image, double sigmaVoxels)
{
  return Filtered<itk::GradientMagnitudeRecursiveGaussianImageFilter<Volume, Relief>>(
    image, [&](auto * f) { f->SetSigma(sigmaVoxels * SmallestSpacing(image)); });
}

/** The input smoothed at sigma voxels, in float (single linkage chains through noise less on it). */
Relief::Pointer
Smoothed(const Volume * image, double sigmaVoxels)
{
  return Filtered<itk::SmoothingRecursiveGaussianImageFilter<Volume, Relief>>(
    image, [&](auto * f) { f->SetSigma(sigmaVoxels * SmallestSpacing(image)); });
}

template <class TImage>
typename TImage::Pointer
NewLike(const itk::ImageBase<3> * like)
{
  auto image = TImage::New();
  image->CopyInformation(like);
  image->SetRegions(like->GetLargestPossibleRegion());
  image->Allocate(true);
  return image;
}

/** The 3x3x3 median of the input: the alpha-tree's input, with fewer isolated noisy voxels. */
Volume::Pointer
Median(const Volume * image)
{
  return Filtered<itk::MedianImageFilter<Volume, Volume>>(image, [](auto * f) { f->SetRadius(1); });
}

/** The voxels >= threshold as 1, the others 0. */
Volume::Pointer
Threshold(const Volume * image, short threshold)
{
  auto         out = NewLike<Volume>(image);
  const size_t n   = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (size_t i = 0; i < n; ++i)
    out->GetBufferPointer()[i] = image->GetBufferPointer()[i] >= threshold ? 1 : 0;
  return out;
}

/** Markers for the seeded transform: a ball of radius 2 voxels at the centre and at a quarter of the way in from
 * each face (labels 1 to 7), and the eight corners (label 8, the background). */
Labels::Pointer
Markers(const Volume * image)
{
  auto       markers = NewLike<Labels>(image);
  const auto size    = image->GetLargestPossibleRegion().GetSize();
  auto       put     = [&](long x, long y, long z, unsigned label, long r)
  {
    for (long dz = -r; dz <= r; ++dz)
      for (long dy = -r; dy <= r; ++dy)
        for (long dx = -r; dx <= r; ++dx)
        {
          const long px = x + dx, py = y + dy, pz = z + dz;
          if (dx * dx + dy * dy + dz * dz > r * r || px < 0 || py < 0 || pz < 0 || px >= long(size[0]) ||
              py >= long(size[1]) || pz >= long(size[2]))
            continue;
          markers->GetBufferPointer()[(size_t(pz) * size[1] + size_t(py)) * size[0] + size_t(px)] = label;
        }
  };
  const long cx = long(size[0]) / 2, cy = long(size[1]) / 2, cz = long(size[2]) / 2;
  const long qx = long(size[0]) / 4, qy = long(size[1]) / 4, qz = long(size[2]) / 4;
  put(cx, cy, cz, 1, 2);
  put(cx - qx, cy, cz, 2, 2);
  put(cx + qx, cy, cz, 3, 2);
  put(cx, cy - qy, cz, 4, 2);
  put(cx, cy + qy, cz, 5, 2);
  put(cx, cy, cz - qz, 6, 2);
  put(cx, cy, cz + qz, 7, 2);
  for (int corner = 0; corner < 8; ++corner)
    put(
      corner & 1 ? long(size[0]) - 1 : 0, corner & 2 ? long(size[1]) - 1 : 0, corner & 4 ? long(size[2]) - 1 : 0, 8, 2);
  return markers;
}

// ---------------------------------------------------------------------------------------------------------------
// Running, comparing, writing

unsigned long long
DistinctNonZero(const Labels * labels)
{
  std::unordered_set<unsigned int> seen;
  const size_t                     n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  for (size_t i = 0; i < n; ++i)
    if (labels->GetBufferPointer()[i] != 0)
      seen.insert(labels->GetBufferPointer()[i]);
  return seen.size();
}

/** "K regions of 1000 voxels or more hold P% of the voxels": an alpha-omega cut keeps the voxels of smooth
 * transitions as small regions (Soille's transition regions) beside the large ones. */
std::string
LargeRegions(const Labels * labels)
{
  std::vector<size_t> voxels;
  const size_t        n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  for (size_t i = 0; i < n; ++i)
  {
    const unsigned int l = labels->GetBufferPointer()[i];
    if (l >= voxels.size())
      voxels.resize(size_t(l) + 1, 0);
    ++voxels[l];
  }
  size_t large = 0, inLarge = 0;
  for (size_t l = 1; l < voxels.size(); ++l)
    if (voxels[l] >= 1000)
    {
      ++large;
      inLarge += voxels[l];
    }
  std::ostringstream s;
  s << large << " regions of 1000 voxels or more hold " << std::fixed << std::setprecision(1)
    << 100.0 * double(inLarge) / double(n) << "% of the voxels";
  return s.str();
}

bool
SameVoxels(const Labels * a, const Labels * b)
{
  const size_t n = a->GetLargestPossibleRegion().GetNumberOfPixels();
  return b->GetLargestPossibleRegion() == a->GetLargestPossibleRegion() &&
         std::equal(a->GetBufferPointer(), a->GetBufferPointer() + n, b->GetBufferPointer());
}

bool
SameRun(const Run & a, const Run & b)
{
  if (a.regions != b.regions || !SameVoxels(a.labels, b.labels) || a.compared.size() != b.compared.size())
    return false;
  for (size_t i = 0; i < a.compared.size(); ++i)
    if (!SameVoxels(a.compared[i], b.compared[i]))
      return false;
  return true;
}

class Demo
{
public:
  explicit Demo(const Options & o)
    : m_Options(o)
  {
    std::string why;
    const bool  gpu = o.backend != Backend::CPU && chs::CudaDeviceCount(&why) > o.device;
    if (o.backend == Backend::CUDA && !gpu)
      Fail("--backend cuda, but there is no CUDA device " + std::to_string(o.device) + (why.empty() ? "" : ": " + why));
    m_Gpu = gpu;
    if (m_Gpu)
      std::cout << "GPU: " << chs::CudaDeviceName(o.device)
                << (!o.noReference ? "; every result is compared with the CPU reference's" : "") << '\n';
    else if (o.backend == Backend::CPU)
      std::cout << "CPU reference only (--backend cpu)\n";
    else
      std::cout << "No GPU (" << (why.empty() ? "no CUDA device" : why)
                << "): every algorithm runs on the CPU reference, which gives the GPU's results, more slowly\n";
  }

  void
  Process(const Input & in)
  {
    const std::string dir  = m_Options.folder + "/";
    const auto        size = in.image->GetLargestPossibleRegion().GetSize();
    std::cout << "\n"
              << in.name << ": " << in.description << ", " << size[0] << "x" << size[1] << "x" << size[2]
              << " voxels\n";
    chs_example::WriteImage(in.image.GetPointer(), dir + in.name + ".nrrd");
    m_Input = in.image;

    const Parameters & p = in.p;
    // The inputs of the filters, made once with ITK on the CPU (not timed).
    const auto mask     = Threshold(in.image, p.threshold);
    const auto gradient = Gradient(in.image, p.sigmaVoxels);
    const auto smoothed = Smoothed(in.image, 1.0);
    const auto median   = Median(in.image);
    const auto markers  = Markers(in.image);
    chs_example::WriteImage(markers.GetPointer(), dir + in.name + "-ift-markers.nrrd");
    std::ostringstream sigma;
    sigma << "gradient at " << p.sigmaVoxels << " voxel" << (p.sigmaVoxels == 1 ? "" : "s");

    Execute(in,
            "connected components",
            "voxels >= " + std::to_string(p.threshold) + ", 26-connected",
            "connected-components",
            p.pngScale,
            [&](Backend b)
            {
              auto filter = itk::CudaConnectedComponentImageFilter<Volume, Labels>::New();
              filter->SetInput(mask);
              filter->SetFullyConnected(true);
              return Finish(filter, b, [&] { return filter->GetObjectCount(); });
            });
    Execute(in,
            "watershed",
            sigma.str(),
            "watershed",
            p.pngScale,
            [&](Backend b)
            {
              auto filter = itk::CudaWatershedImageFilter<Relief, Labels>::New();
              filter->SetInput(gradient);
              return Finish(filter, b, [&] { return filter->GetObjectCount(); });
            });
    Execute(in,
            "waterfall",
            sigma.str() + ", level " + std::to_string(p.waterfallLevel),
            "waterfall",
            p.pngScale,
            [&](Backend b)
            {
              auto filter = itk::CudaWaterfallImageFilter<Relief, Labels>::New();
              filter->SetInput(gradient);
              SetBackend(filter, b);
              filter->Update();
              const unsigned     levels = filter->GetNumberOfComputedLevels();
              const unsigned     level  = std::min(p.waterfallLevel, levels - 1);
              Run                r;
              std::ostringstream note;
              note << "regions per level:";
              for (unsigned k = 0; k < levels; ++k)
              {
                Labels::Pointer image = filter->GetLevel(k);
                image->DisconnectPipeline();
                note << ' ' << filter->GetRegionCount(k);
                if (k == level)
                  r.labels = image;
                else
                  r.compared.push_back(image);
              }
              r.regions = filter->GetRegionCount(level);
              r.note    = note.str();
              return r;
            });
    std::ostringstream cut;
    cut << "alpha " << p.alpha << ", omega " << p.omega << " of the 3x3x3 median";
    Execute(in,
            "alpha-tree",
            cut.str(),
            "alpha-omega",
            p.pngScale,
            [&](Backend b)
            {
              auto tree = itk::CudaImageToAlphaTreeFilter<Volume>::New();
              tree->SetInput(median);
              tree->SetComputeValueRanges(true);
              SetBackend(tree, b);
              tree->Update();
              auto filter = itk::AlphaTreeCutImageFilter<Labels>::New();
              filter->SetInput(tree->GetOutput());
              filter->SetAlpha(p.alpha);
              filter->SetOmega(p.omega);
              Run r  = Finish(filter, b, [&] { return filter->GetObjectCount(); });
              r.note = std::to_string(tree->GetOutput()->GetNumberOfNodes()) + " tree nodes; " + LargeRegions(r.labels);
              return r;
            });
    Execute(in,
            "single linkage",
            std::to_string(p.clusters) + " clusters of the input smoothed at 1 voxel",
            "single-linkage",
            p.pngScale,
            [&](Backend b)
            {
              auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<Relief>::New();
              dendrogram->SetInput(smoothed);
              SetBackend(dendrogram, b);
              dendrogram->Update();
              auto filter = itk::DendrogramToLabelImageFilter<Labels>::New();
              filter->SetInput(dendrogram->GetOutput());
              filter->SetNumberOfClusters(p.clusters);
              filter->Update();
              Run r;
              r.labels = filter->GetOutput();
              r.labels->DisconnectPipeline();
              r.regions = filter->GetObjectCount();
              return r;
            });
    Execute(in,
            "waterpixels",
            "cells of " + std::to_string(p.waterpixelStep) + " voxels",
            "waterpixels",
            p.pngScale,
            [&](Backend b)
            {
              auto filter = itk::CudaWaterpixelImageFilter<Volume, Labels>::New();
              filter->SetInput(in.image);
              filter->SetGridStep(p.waterpixelStep);
              return Finish(filter, b, [&] { return filter->GetNumberOfSuperpixels(); });
            });
    Execute(in,
            "seeded IFT",
            "8 markers (" + in.name + "-ift-markers.nrrd) on the " + sigma.str(),
            "ift",
            p.pngScale,
            [&](Backend b)
            {
              auto filter = itk::CudaImageForestingTransformImageFilter<Relief, Labels>::New();
              filter->SetInput(gradient);
              filter->SetSeedImage(markers);
              Run r  = Finish(filter, b, [&] { return DistinctNonZero(filter->GetOutput()); });
              r.note = std::to_string(filter->GetSeedCount()) + " seed voxels";
              return r;
            });
  }

  /** The table: printed, and written as summary.md (the same text) and summary.tsv (for scripts and the test). */
  void
  Summarise() const
  {
    std::ostringstream md;
    md << "| input | algorithm | parameters | regions | GPU ms, first | GPU ms, again | CPU reference ms | GPU = CPU "
          "| open |\n"
       << "|---|---|---|---:|---:|---:|---:|---|---|\n";
    auto ms = [](double t)
    {
      if (std::isnan(t))
        return std::string("-");
      std::ostringstream s;
      s << std::fixed << std::setprecision(t < 10 ? 2 : t < 100 ? 1 : 0) << t;
      return s.str();
    };
    for (const Row & r : m_Rows)
      md << "| " << r.input << " | " << r.algorithm << " | " << r.parameters << " | " << r.regions << " | "
         << ms(r.gpuMs) << " | " << ms(r.gpuAgainMs) << " | " << ms(r.cpuMs) << " | " << r.comparison << " | "
         << (r.segmentation.empty() ? r.labelMap : r.segmentation) << " |\n";
    std::cout
      << "\nSummary. Times are one update of the filters, from the input on the host to the labels on the host: "
         "the GPU's first update in this process (new host memory to map), then a second one (host arrays "
         "reused); bench/ times the steady state against other libraries. GPU = CPU: the GPU's labels, both "
         "times, equal the CPU reference's voxel for voxel.\n\n"
      << md.str();
    const std::string dir = m_Options.folder + "/";
    std::ofstream(chs_example::Output(dir + "summary.md")) << md.str();
    std::ofstream tsv(chs_example::Output(dir + "summary.tsv"));
    tsv << "input\talgorithm\tparameters\tregions\tgpu_ms\tgpu_again_ms\tcpu_ms\tcomparison\tlabel_map\tsegmentation"
           "\tpicture\tnote\n";
    for (const Row & r : m_Rows)
      tsv << r.input << '\t' << r.algorithm << '\t' << r.parameters << '\t' << r.regions << '\t'
          << (std::isnan(r.gpuMs) ? "" : std::to_string(r.gpuMs)) << '\t'
          << (std::isnan(r.gpuAgainMs) ? "" : std::to_string(r.gpuAgainMs)) << '\t'
          << (std::isnan(r.cpuMs) ? "" : std::to_string(r.cpuMs)) << '\t' << r.comparison << '\t' << r.labelMap << '\t'
          << r.segmentation << '\t' << r.picture << '\t' << r.note << '\n';
    if (!tsv)
      throw std::runtime_error("cannot write " + dir + "summary.tsv");
    std::cout << "\nOpen the .seg.nrrd files (or the .nrrd label maps with their input volume) in 3D Slicer, the "
                 ".nrrd files in ParaView, the .png pictures in any image viewer: "
              << m_Options.folder << "/\n";
  }

  /** 1 when a GPU result differed from the CPU reference's. */
  int
  ExitCode() const
  {
    for (const Row & r : m_Rows)
      if (r.comparison == "DIFFERENT")
        return 1;
    return 0;
  }

private:
  template <class TFilterPointer>
  void
  SetBackend(const TFilterPointer & filter, Backend b) const
  {
    filter->SetBackend(b);
    filter->SetDeviceId(m_Options.device);
  }

  /** Runs a label-image filter on backend b; its output and count(). */
  template <class TFilterPointer, class TCount>
  Run
  Finish(const TFilterPointer & filter, Backend b, TCount count) const
  {
    SetBackend(filter, b);
    filter->Update();
    Run r;
    r.regions = count();
    r.labels  = filter->GetOutput();
    r.labels->DisconnectPipeline();
    return r;
  }

  static double
  Time(const std::function<Run(Backend)> & run, Backend b, Run & out)
  {
    const auto start = std::chrono::steady_clock::now();
    out              = run(b);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  void
  Execute(const Input &                       in,
          const std::string &                 algorithm,
          const std::string &                 parameters,
          const std::string &                 suffix,
          unsigned                            pngScale,
          const std::function<Run(Backend)> & run)
  {
    if (m_Gpu && !m_WarmedUp) // the CUDA context and the memory pool, once, outside the timings
    {
      Run warm;
      Time(run, Backend::CUDA, warm);
      m_WarmedUp = true;
    }
    Row r;
    r.input      = in.name;
    r.algorithm  = algorithm;
    r.parameters = parameters;
    // The CPU reference first; then the GPU twice, each result compared with the reference's, the first dropped
    // before the second update (its host arrays go back to the module's cache, as in a loop over volumes).
    Run  cpu, gpu;
    bool same = true;
    if (!m_Gpu || !m_Options.noReference)
      r.cpuMs = Time(run, Backend::CPU, cpu);
    if (m_Gpu)
    {
      r.gpuMs      = Time(run, Backend::CUDA, gpu);
      same         = m_Options.noReference || SameRun(gpu, cpu);
      gpu          = Run();
      r.gpuAgainMs = Time(run, Backend::CUDA, gpu);
      same         = same && (m_Options.noReference || SameRun(gpu, cpu));
    }
    r.comparison     = !m_Gpu ? "no GPU" : m_Options.noReference ? "not compared" : same ? "identical" : "DIFFERENT";
    const Run & kept = m_Gpu ? gpu : cpu;
    r.regions        = kept.regions;
    r.note           = kept.note;
    const unsigned long long inFile = DistinctNonZero(kept.labels);
    if (inFile != kept.regions)
      throw std::logic_error(in.name + " " + algorithm + ": the filter reports " + std::to_string(kept.regions) +
                             " regions, the label image has " + std::to_string(inFile));

    const std::string base = in.name + "-" + suffix;
    const std::string dir  = m_Options.folder + "/";
    r.labelMap             = base + ".nrrd";
    chs_example::WriteImage(kept.labels.GetPointer(), dir + r.labelMap);
    if (kept.regions <= kMaxSegments)
    {
      r.segmentation = base + ".seg.nrrd";
      chs_example::WriteSlicerSegmentation(
        kept.labels.GetPointer(), chs_example::Output(dir + r.segmentation), algorithm);
    }
    r.picture = base + ".png";
    chs_example::WriteBorderOverlay(
      m_Input.GetPointer(), kept.labels.GetPointer(), chs_example::Output(dir + r.picture), pngScale);

    std::cout << "  " << std::left << std::setw(22) << algorithm << std::right << std::setw(8) << r.regions
              << " regions";
    if (m_Gpu)
      std::cout << "  GPU " << std::fixed << std::setprecision(1) << std::setw(7) << r.gpuMs << " ms, again "
                << std::setw(7) << r.gpuAgainMs << " ms";
    if (!std::isnan(r.cpuMs))
      std::cout << "  CPU " << std::fixed << std::setprecision(1) << std::setw(8) << r.cpuMs << " ms";
    std::cout << "  " << r.comparison << "  " << (r.segmentation.empty() ? r.labelMap : r.segmentation);
    if (r.segmentation.empty())
      std::cout << " (label map only: more than " << kMaxSegments << " segments)";
    if (!r.note.empty())
      std::cout << "  (" << r.note << ")";
    std::cout << std::endl;
    m_Rows.push_back(r);
  }

  Options          m_Options;
  bool             m_Gpu      = false;
  bool             m_WarmedUp = false;
  Volume::Pointer  m_Input;
  std::vector<Row> m_Rows;
};

} // namespace

int
main(int argc, char ** argv)
{
  const Options o = Parse(argc, argv);
  return chs_example::ReportFailures(kProgram,
                                     [&]() -> int
                                     {
                                       itksys::SystemTools::MakeDirectory(o.folder);
                                       Demo demo(o);
                                       if (o.mri != "none")
                                       {
                                         auto reader = itk::ImageFileReader<Volume>::New();
                                         reader->SetFileName(o.mri);
                                         try
                                         {
                                           reader->Update();
                                         }
                                         catch (const itk::ExceptionObject & e)
                                         {
                                           Fail("cannot read the MRI volume " + o.mri +
                                                " (Debian's insighttoolkit5-examples package has it; "
                                                "scripts/setup.sh installs it, or give --mri none): " +
                                                e.GetDescription());
                                         }
                                         // Grey values 0..255; the brain's white matter is above 100. Spacing 2 x 2 x 3
                                         // mm.
                                         demo.Process({ "mri-t1",
                                                        "T1 MRI of a head (insighttoolkit5-examples)",
                                                        reader->GetOutput(),
                                                        Parameters{ 100, 1.0, 2, 32, 160, 16, 8, 3 } });
                                       }
                                       if (o.ctSize != 0)
                                         demo.Process({ "ct-like",
                                                        "generated CT-like volume of a porous rock",
                                                        CtLike(o.ctSize, 7),
                                                        Parameters{ 120, 2.0, 3, 32, 200, 16, 16, 2 } });
                                       demo.Summarise();
                                       return demo.ExitCode();
                                     });
}
