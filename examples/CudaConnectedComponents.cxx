// CudaConnectedComponents: label the connected components of any ITK-readable 2D image or 3D volume on the GPU.
//
//   CudaConnectedComponents [options] <input> <output>
//   CudaConnectedComponents --demo <folder>     label a generated sample image and volume, write them and a summary
//   CudaConnectedComponents --xml               the 3D Slicer command-line module description
//
// Run with --help for the options.
#include "itkCudaConnectedComponentImageFilter.h"
#include "chs/Execution.h"
#include "chsExampleCli.h"
#include "chsSlicerModule.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkImageRegionIterator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace
{
using Backend = itk::CudaSegmentationBackendEnums::Backend;

struct Options
{
  std::string                input, output, statisticsFile, demoFolder;
  bool                       fullyConnected = false;
  bool                       flatZones      = false;
  bool                       periodic       = false;
  double                     distance       = 0;
  long long                  background     = 0;
  chs_example::CommonOptions common;
};

const char * kProgram = "CudaConnectedComponents";

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  chs_example::Module m(kProgram,
                        R"(Usage: CudaConnectedComponents [options] <input> <output>

Labels the connected components of a 2D image or 3D volume (any format ITK reads: .nrrd, .nii.gz, .mha, .png,
.tif, ...) and writes a label image of unsigned 32-bit integers: background 0, objects 1..N in raster order of
their first voxel, identical to itk::ConnectedComponentImageFilter. Non-zero voxels are foreground.
)",
                        "CUDA Connected Components",
                        "Labels the connected components of a volume on the GPU (CPU fallback), or its flat zones. The "
                        "labels are identical to ITK's ConnectedComponentImageFilter.");
  m.Group("Labeling", "What is connected.");
  m.Add(chs_example::Switch("--fully-connected",
                            o.fullyConnected,
                            "8-connectivity in 2D, 26 in 3D (default: 4 / 6, face neighbours only)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Add(chs_example::Switch("--flat-zones",
                            o.flatZones,
                            "label the flat zones (connected regions of equal value) instead of the non-zero voxels")
          .Slicer("flatZones", "Flat zones", "Label connected regions of equal value instead of non-zero voxels."));
  m.Add(chs_example::Number("--distance-threshold",
                            "<d>",
                            o.distance,
                            "with --flat-zones: join neighbours whose values differ by at most d (default 0: equal)")
          .Slicer("distanceThreshold",
                  "Distance threshold",
                  "With flat zones: join neighbours whose values differ by at most this (0: equal values).")
          .Range("0", "1000000000", "1"));
  m.Add(chs_example::Switch("--periodic", o.periodic, "the image wraps around on every axis (a torus)")
          .Slicer("periodicBoundary", "Periodic boundary", "The image wraps around on every axis (a torus)."));
  m.Add(chs_example::Number("--background",
                            "<value>",
                            o.background,
                            "output value of background voxels (default 0; objects count up from 0 and skip it)"));
  m.Add(chs_example::Path("--demo",
                          "<folder>",
                          o.demoFolder,
                          "no input: label a generated 512x512 image and 128^3 volume, write them to <folder>"));
  chs_example::AddImageToLabelMap(m, "objects", o.common);
  m.Add(chs_example::Path(
          "--statistics", "<file>", o.statisticsFile, "write each object's voxel count and bounding box as CSV")
          .Slicer("statisticsFile", "Object statistics", "Each object's voxel count and bounding box as CSV.")
          .As("file", "output", " fileExtensions=\".csv\""));
  m.AddExecution(o.common);
  return m;
}

Options
Parse(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  if (o.demoFolder.empty())
  {
    if (positional.size() != 2)
      chs_example::Fail(kProgram, "expected an input and an output file");
    o.input  = positional[0];
    o.output = positional[1];
  }
  return o;
}

using LabelType = unsigned int;

struct Result
{
  itk::SizeValueType              objects            = 0;
  double                          milliseconds       = 0;
  double                          kernelMilliseconds = 0;
  Backend                         backend            = Backend::Auto;
  std::vector<itk::SizeValueType> counts;
};

template <typename TImage>
Result
LabelAndWrite(const TImage *                image,
              const Options &               o,
              const std::string &           output,
              chs_example::SlicerProgress * progress = nullptr)
{
  using LabelImage = itk::Image<LabelType, TImage::ImageDimension>;
  auto filter      = itk::CudaConnectedComponentImageFilter<TImage, LabelImage>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(o.fullyConnected);
  filter->SetFlatZones(o.flatZones);
  filter->SetDistanceThreshold(o.distance);
  filter->SetPeriodicBoundary(o.periodic);
  filter->SetBackgroundValue(static_cast<LabelType>(o.background));
  o.common.Apply(filter.GetPointer());
  if (progress)
    progress->Watch(filter, 0.1f, 0.85f);
  filter->SetComputeStatistics(true);
  const auto start = std::chrono::steady_clock::now();
  filter->Update();
  Result r;
  r.milliseconds       = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.kernelMilliseconds = filter->GetKernelMilliseconds();
  r.objects            = filter->GetObjectCount();
  r.backend            = filter->GetLastBackend();
  r.counts             = filter->GetVoxelCounts();

  if (progress)
    chs_example::WriteLabelOutputs(filter->GetOutput(), output, o.common, r.objects, "Object", *progress);
  else
  {
    auto writer = itk::ImageFileWriter<LabelImage>::New();
    writer->SetInput(filter->GetOutput());
    writer->SetFileName(chs_example::Output(output));
    writer->UseCompressionOn();
    writer->Update();
  }

  if (!o.statisticsFile.empty())
  {
    std::ofstream csv(chs_example::Output(o.statisticsFile));
    csv << "label,voxels";
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
      csv << ",min"
          << "xyz"[d];
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
      csv << ",max"
          << "xyz"[d];
    csv << '\n';
    for (itk::SizeValueType k = 0; k < r.objects; ++k)
    {
      const auto label = static_cast<LabelType>(o.background >= 0 && k >= itk::SizeValueType(o.background) ? k + 1 : k);
      const auto box   = filter->GetBoundingBox(label);
      csv << label << ',' << filter->GetVoxelCount(label);
      for (unsigned d = 0; d < TImage::ImageDimension; ++d)
        csv << ',' << box.GetIndex()[d];
      for (unsigned d = 0; d < TImage::ImageDimension; ++d)
        csv << ',' << box.GetIndex()[d] + itk::IndexValueType(box.GetSize()[d]) - 1;
      csv << '\n';
    }
  }
  return r;
}

void
Report(const std::string & what, const std::string & output, const Result & r)
{
  std::cout << what << ": " << r.objects << " objects, " << std::fixed << std::setprecision(2) << r.milliseconds
            << " ms (" << (r.backend == Backend::CUDA ? "CUDA" : "CPU reference");
  if (r.backend == Backend::CUDA)
    std::cout << ", kernels " << std::setprecision(3) << r.kernelMilliseconds << " ms";
  std::cout << ") -> " << output << '\n';
}

template <typename TPixel, unsigned D>
Result
ReadLabelWrite(const Options & o)
{
  using Image = itk::Image<TPixel, D>;
  chs_example::SlicerProgress progress(kProgram, "Connected components of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  reader->Update();
  const Result r = LabelAndWrite<Image>(reader->GetOutput(), o, o.output, &progress);
  Report(o.input, o.output, r);
  progress.Finish();
  return r;
}

template <unsigned D>
Result
Dispatch(itk::IOComponentEnum component, const Options & o)
{
  // Integers up to 16 bits keep their type; wider integers are read as 64-bit integers (exact).
  switch (component)
  {
    case itk::IOComponentEnum::UCHAR:
      return ReadLabelWrite<unsigned char, D>(o);
    case itk::IOComponentEnum::CHAR:
    case itk::IOComponentEnum::SHORT:
      return ReadLabelWrite<short, D>(o);
    case itk::IOComponentEnum::USHORT:
      return ReadLabelWrite<unsigned short, D>(o);
    case itk::IOComponentEnum::FLOAT:
      return ReadLabelWrite<float, D>(o);
    case itk::IOComponentEnum::DOUBLE:
      return ReadLabelWrite<double, D>(o);
    default:
      return ReadLabelWrite<long long, D>(o);
  }
}

/** Deterministic sample: smoothed noise thresholded at its median (blobs), as the benchmark uses. */
template <typename TImage>
typename TImage::Pointer
SampleBlobs(const typename TImage::SizeType & size, int radius, unsigned seed)
{
  const size_t n = [&]
  {
    size_t m = 1;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
      m *= size[d];
    return m;
  }();
  std::vector<float>              a(n), b(n);
  std::mt19937                    rng(seed);
  std::normal_distribution<float> g;
  for (auto & v : a)
    v = g(rng);
  size_t stride = 1;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
  {
    const int64_t len = size[d];
    for (size_t i = 0; i < n; ++i)
    {
      const int64_t c = (i / stride) % len;
      float         s = 0;
      for (int64_t k = std::max<int64_t>(0, c - radius); k <= std::min<int64_t>(len - 1, c + radius); ++k)
        s += a[i + (k - c) * int64_t(stride)];
      b[i] = s;
    }
    std::swap(a, b);
    stride *= size[d];
  }
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  std::vector<float> sorted(a);
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
  const float median = sorted[n / 2];
  for (size_t i = 0; i < n; ++i)
    image->GetBufferPointer()[i] = a[i] > median ? 255 : 0;
  return image;
}

void
Summary(const char * what, const Result & r)
{
  std::vector<itk::SizeValueType> sorted(r.counts);
  std::sort(sorted.rbegin(), sorted.rend());
  std::cout << "  " << what << ": largest objects (voxels):";
  for (size_t i = 0; i < std::min<size_t>(5, sorted.size()); ++i)
    std::cout << ' ' << sorted[i];
  std::cout << '\n';
}

int
Demo(Options o)
{
  std::string why;
  const int   devices = chs::CudaDeviceCount(&why);
  std::cout << "CudaHierarchicalSegmentation demo: connected components of generated blobs\n";
  std::cout << "  device: "
            << (devices > 0 ? chs::CudaDeviceName(o.common.device) : "none (" + why + "), CPU reference") << "\n";
  using Image2             = itk::Image<unsigned char, 2>;
  using Image3             = itk::Image<unsigned char, 3>;
  const std::string dir    = o.demoFolder + "/";
  auto              image  = SampleBlobs<Image2>({ { 512, 512 } }, 4, 1);
  auto              volume = SampleBlobs<Image3>({ { 128, 128, 128 } }, 2, 2);
  chs_example::WriteImage<Image2>(image, dir + "sample-image.nrrd");
  chs_example::WriteImage<Image3>(volume, dir + "sample-volume.nrrd");
  for (bool full : { false, true })
  {
    o.fullyConnected         = full;
    const std::string suffix = full ? "-full" : "-face";
    const auto        r2     = LabelAndWrite<Image2>(image, o, dir + "sample-image-labels" + suffix + ".nrrd");
    Report(std::string("  512x512 image, ") + (full ? "8" : "4") + "-connected",
           dir + "sample-image-labels" + suffix + ".nrrd",
           r2);
    Summary("512x512 image", r2);
    const auto r3 = LabelAndWrite<Image3>(volume, o, dir + "sample-volume-labels" + suffix + ".nrrd");
    Report(std::string("  128^3 volume, ") + (full ? "26" : "6") + "-connected",
           dir + "sample-volume-labels" + suffix + ".nrrd",
           r3);
    Summary("128^3 volume", r3);
  }
  std::cout << "  inputs: " << dir << "sample-image.nrrd, " << dir << "sample-volume.nrrd (open them in 3D Slicer)\n";
  return 0;
}

} // namespace

int
main(int argc, char ** argv)
{
  const Options o = Parse(argc, argv);
  return chs_example::ReportFailures(
    kProgram,
    [&]() -> int
    {
      if (!o.demoFolder.empty())
        return Demo(o);
      chs_example::CheckPngFile(kProgram, o.input);
      auto io = itk::ImageIOFactory::CreateImageIO(o.input.c_str(), itk::CommonEnums::IOFileMode::ReadMode);
      if (!io)
        chs_example::Fail(kProgram, "cannot read " + o.input + ": no ITK image reader recognises it");
      io->SetFileName(o.input);
      io->ReadImageInformation();
      if (io->GetNumberOfComponents() != 1)
        chs_example::Fail(kProgram,
                          o.input + " has " + std::to_string(io->GetNumberOfComponents()) +
                            " components per pixel; scalar images only");
      const unsigned dim = io->GetNumberOfDimensions();
      if (dim == 2)
        Dispatch<2>(io->GetComponentType(), o);
      else if (dim == 3)
        Dispatch<3>(io->GetComponentType(), o);
      else
        chs_example::Fail(kProgram,
                          o.input + " has " + std::to_string(dim) + " dimensions; 2D images and 3D volumes only");
      return 0;
    });
}
