// What makes the command-line programs 3D Slicer command-line modules (Slicer's Execution Model): the parameters
// every module's description has (its IO group; the description itself comes from the program's option table,
// chsExampleOptions.h), progress reported on stdout in the protocol's <filter-progress> form, and the
// outputs Slicer loads: the label map, optionally a segmentation (.seg.nrrd, one segment per label), and the
// return parameter file with the region count.
#ifndef chsSlicerModule_h
#define chsSlicerModule_h

#include "chsExampleCli.h"
#include "chsExampleOptions.h"

#include "itkCommand.h"
#include "itkImageFileWriter.h"
#include "itkProcessObject.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <zlib.h>

namespace chs_example
{

/** An input image given by position `index`, a label map when `labelMap`. */
inline Parameter
InputImage(int index, std::string name, std::string label, std::string description, bool labelMap = false)
{
  return Positional(index, "image", "input", labelMap ? " type=\"label\"" : "")
    .Slicer(std::move(name), std::move(label), std::move(description));
}

/** The output label map given by position `index`, the optional segmentation file (--segmentation) and the
 * region count that Slicer reads from the return parameter file. */
inline void
AddLabelOutputs(Module & m, int index, const std::string & regions, CommonOptions & common)
{
  m.Add(Positional(index, "image", "output", " type=\"label\"")
          .Slicer("outputVolume", "Output label map", "The " + regions + ", labelled 1..N (0 where no region is)."));
  Parameter segmentation =
    Path("--segmentation",
         "<f>",
         common.segmentation,
         "also write the labels as a 3D Slicer segmentation (.seg.nrrd), one segment per label")
      .Slicer("outputSegmentation",
              "Output segmentation",
              "Also write the labels as a 3D Slicer segmentation file (.seg.nrrd), one segment per label.")
      .As("file", "output", " fileExtensions=\".seg.nrrd\"")
      .Common();
  segmentation.set = [&common](const std::string & f)
  {
    if (!f.empty() && (f.size() < 9 || f.compare(f.size() - 9, 9, ".seg.nrrd") != 0))
      throw std::domain_error("the segmentation file " + f + " must end with .seg.nrrd");
    common.segmentation = f;
  };
  m.Add(std::move(segmentation));
  m.Add(Returned("integer", "0").Slicer("regionCount", "Number of " + regions, "How many labels the output has."));
}

/** The IO group of a program that reads one image (index 0) and writes a label map (index 1); the program's
 * other outputs may follow in the group. */
inline void
AddImageToLabelMap(Module & m, const std::string & regions, CommonOptions & common)
{
  m.Group("IO", "Input and outputs.");
  m.Add(InputImage(0, "inputVolume", "Input volume", "The image to segment (2D or 3D, scalar)."));
  AddLabelOutputs(m, 1, regions, common);
}

/** Progress in the Execution Model's form on stdout: <filter-start> when made, <filter-progress> as the watched
 * filters advance (each mapped onto its share of the run), <filter-end> from Finish(). */
class SlicerProgress
{
public:
  SlicerProgress(const char * program, const std::string & comment)
    : m_Program(program)
    , m_Start(std::chrono::steady_clock::now())
  {
    std::cout << "<filter-start>\n<filter-name>" << m_Program << "</filter-name>\n<filter-comment>" << comment
              << "</filter-comment>\n</filter-start>" << std::endl;
  }

  /** Reports the progress of `filter` as overall progress from `from` to `to`. */
  void
  Watch(itk::ProcessObject * filter, float from, float to)
  {
    auto command = itk::SimpleMemberCommand<SlicerProgress>::New();
    command->SetCallbackFunction(this, &SlicerProgress::Changed);
    filter->AddObserver(itk::ProgressEvent(), command);
    m_Watched.push_back({ filter, from, to });
  }

  /** Reports overall progress f in [0, 1] (steps of at least 1%, and 1). */
  void
  Report(float f)
  {
    f = std::min(1.0f, std::max(f, m_Last));
    if (f < m_Last + 0.01f && !(f == 1.0f && m_Last < 1.0f))
      return;
    m_Last = f;
    char text[16];
    std::snprintf(text, sizeof(text), "%.4f", double(f));
    std::cout << "<filter-progress>" << text << "</filter-progress>" << std::endl;
  }

  void
  Finish()
  {
    Report(1.0f);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_Start).count();
    std::cout << "<filter-end>\n<filter-name>" << m_Program << "</filter-name>\n<filter-time>" << s
              << "</filter-time>\n</filter-end>" << std::endl;
  }

private:
  struct Watched
  {
    itk::ProcessObject * filter;
    float                from, to;
  };

  void
  Changed()
  {
    // SimpleMemberCommand does not say which filter called: the most advanced share that moved is reported.
    float f = m_Last;
    for (const auto & w : m_Watched)
    {
      const float p = w.filter->GetProgress();
      if (p > 0.0f)
        f = std::max(f, w.from + (w.to - w.from) * p);
    }
    Report(f);
  }

  const char *                          m_Program;
  std::chrono::steady_clock::time_point m_Start;
  std::vector<Watched>                  m_Watched;
  float                                 m_Last = 0.0f;
};

/** A colour per label (golden-angle hues), so that neighbouring labels differ. */
inline std::string
SegmentColor(unsigned long long label)
{
  const double h = std::fmod(double(label) * 137.50776405, 360.0) / 60.0, s = 0.65, v = 0.95;
  const double c = v * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = v - c;
  double       r = 0, g = 0, b = 0;
  switch (int(h))
  {
    case 0:
      r = c, g = x;
      break;
    case 1:
      r = x, g = c;
      break;
    case 2:
      g = c, b = x;
      break;
    case 3:
      g = x, b = c;
      break;
    case 4:
      r = x, b = c;
      break;
    default:
      r = c, b = x;
      break;
  }
  std::ostringstream out;
  out << r + m << ' ' << g + m << ' ' << b + m;
  return out.str();
}

namespace detail
{

template <class TOut>
const char *
NrrdType();
template <>
inline const char *
NrrdType<unsigned char>()
{
  return "unsigned char";
}
template <>
inline const char *
NrrdType<unsigned short>()
{
  return "unsigned short";
}
template <>
inline const char *
NrrdType<unsigned int>()
{
  return "unsigned int";
}

/** The .seg.nrrd file, written here rather than by ITK's NRRD writer, whose key/value list is quadratic in the
 * number of keys (nine per segment: 80 s for 20,000 segments). A text header, then the voxels as one gzip member. */
template <class TOut, class TLabels>
void
WriteSegmentationAs(const TLabels * labels, const std::string & file, const std::string & segmentName)
{
  constexpr unsigned D = TLabels::ImageDimension;
  // A segmentation is always 3D (slicerio and Slicer read "domain domain domain"): a 2D image is one slice.
  const auto region     = labels->GetLargestPossibleRegion();
  size_t     size[3]    = { 1, 1, 1 };
  double     spacing[3] = { 1, 1, 1 }, origin[3] = { 0, 0, 0 };
  double     direction[3][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  for (unsigned i = 0; i < D; ++i)
  {
    size[i]    = region.GetSize(i);
    spacing[i] = labels->GetSpacing()[i];
    origin[i]  = labels->GetOrigin()[i];
    for (unsigned j = 0; j < D; ++j)
      direction[i][j] = labels->GetDirection()[i][j];
  }
  const size_t      n  = region.GetNumberOfPixels();
  const auto *      in = labels->GetBufferPointer();
  std::vector<TOut> voxels(n);
  // Each label's extent (first and last index along x, y, z). Labels may be sparse and large (marker labels): a
  // map, looked up once per run of equal labels.
  using Extent = std::array<long long, 6>;
  std::map<unsigned long long, Extent> extent;
  auto                                 last = extent.end();
  for (size_t i = 0; i < n; ++i)
  {
    const unsigned long long l = in[i];
    voxels[i]                  = static_cast<TOut>(l);
    if (l == 0)
      continue;
    if (last == extent.end() || last->first != l)
    {
      constexpr long long big = std::numeric_limits<long long>::max();
      last                    = extent.emplace(l, Extent{ big, -1, big, -1, big, -1 }).first;
    }
    const long long xyz[3] = { (long long)(i % size[0]),
                               (long long)(i / size[0] % size[1]),
                               (long long)(i / (size[0] * size[1])) };
    for (unsigned d = 0; d < 3; ++d)
    {
      last->second[2 * d]     = std::min(last->second[2 * d], xyz[d]);
      last->second[2 * d + 1] = std::max(last->second[2 * d + 1], xyz[d]);
    }
  }
  const unsigned short one = 1;
  std::ostringstream   h;
  h.precision(17);
  h << "NRRD0004\n# Complete NRRD file format specification at:\n# http://teem.sourceforge.net/nrrd/format.html\n"
    << "type: " << NrrdType<TOut>() << "\ndimension: 3\nspace: left-posterior-superior\nsizes: " << size[0] << ' '
    << size[1] << ' ' << size[2] << "\nspace directions:";
  for (unsigned axis = 0; axis < 3; ++axis) // the axis' direction (a column) times its spacing
    h << " (" << direction[0][axis] * spacing[axis] << ',' << direction[1][axis] * spacing[axis] << ','
      << direction[2][axis] * spacing[axis] << ')';
  h << "\nkinds: domain domain domain\nendian: " << (*reinterpret_cast<const char *>(&one) ? "little" : "big")
    << "\nencoding: gzip\nspace origin: (" << origin[0] << ',' << origin[1] << ',' << origin[2] << ")\n";
  unsigned segment = 0;
  for (const auto & [l, e] : extent)
  {
    const std::string key = "Segment" + std::to_string(segment++) + "_";
    h << key << "Color:=" << SegmentColor(l) << '\n'
      << key << "ColorAutoGenerated:=0\n"
      << key << "Extent:=" << e[0] << ' ' << e[1] << ' ' << e[2] << ' ' << e[3] << ' ' << e[4] << ' ' << e[5] << '\n'
      << key << "ID:=Segment_" << l << '\n'
      << key << "LabelValue:=" << l << '\n'
      << key << "Layer:=0\n"
      << key << "Name:=" << segmentName << ' ' << l << '\n'
      << key << "NameAutoGenerated:=0\n"
      << key << "Tags:=Segmentation.Status:inprogress|\n";
  }
  // Slicer 5.4 and later name the representation the segments are edited in "source"; earlier releases read
  // "master", and every release ignores a key it does not know, so both are written.
  h << "Segmentation_ContainedRepresentationNames:=Binary labelmap|\n"
    << "Segmentation_MasterRepresentation:=Binary labelmap\n"
    << "Segmentation_ReferenceImageExtentOffset:=0 0 0\n"
    << "Segmentation_SourceRepresentation:=Binary labelmap\n\n";
  {
    std::ofstream header(file, std::ios::binary | std::ios::trunc);
    header << h.str();
    if (!header)
      throw std::runtime_error("cannot write " + file);
  }
  gzFile gz = gzopen(file.c_str(), "ab6");
  if (!gz)
    throw std::runtime_error("cannot write " + file);
  const char * bytes = reinterpret_cast<const char *>(voxels.data());
  size_t       left  = voxels.size() * sizeof(TOut);
  bool         ok    = true;
  while (ok && left > 0)
  {
    const unsigned chunk = unsigned(std::min<size_t>(left, size_t(1) << 30));
    ok                   = gzwrite(gz, bytes, chunk) == int(chunk);
    bytes += chunk;
    left -= chunk;
  }
  if (gzclose(gz) != Z_OK || !ok)
    throw std::runtime_error("cannot write " + file);
}

} // namespace detail

/** Writes `labels` as a 3D Slicer segmentation (.seg.nrrd): one segment per label that occurs ("<segmentName> <l>",
 * label value l, its own colour and extent), 0 outside every segment, the image's geometry (a 2D image becomes
 * one slice), voxels of the smallest unsigned type that holds the largest label. */
template <class TLabels>
void
WriteSlicerSegmentation(const TLabels * labels, const std::string & file, const std::string & segmentName)
{
  if (file.size() < 9 || file.compare(file.size() - 9, 9, ".seg.nrrd") != 0)
    throw std::invalid_argument("the segmentation file " + file + " must end with .seg.nrrd");
  const auto * in = labels->GetBufferPointer();
  const auto   n  = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const auto   m  = n ? *std::max_element(in, in + n) : 0;
  if (m <= std::numeric_limits<unsigned char>::max())
    detail::WriteSegmentationAs<unsigned char>(labels, file, segmentName);
  else if (m <= std::numeric_limits<unsigned short>::max())
    detail::WriteSegmentationAs<unsigned short>(labels, file, segmentName);
  else
    detail::WriteSegmentationAs<unsigned int>(labels, file, segmentName);
}

/** Writes an image to `file` (compressed where the format allows), under a temporary name until the program ends
 * well (PendingOutputs). */
template <class TImage>
void
WriteImage(const TImage * image, const std::string & file)
{
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(Output(file));
  writer->UseCompressionOn();
  writer->Update();
}

/** The most segments a module writes into a segmentation file. Slicer lists every segment in its Segmentations and
 * Segment Editor modules and keeps a display node per segment: thousands make it slow to load and to use (the
 * demo's 177,608 basins would take minutes). A result with more labels is written as the label map only; Slicer
 * turns a label map into a segmentation on request (Data module: right-click the volume, "Convert labelmap to
 * segmentation node"), for the labels one wants. */
constexpr unsigned long long kMaxSlicerSegments = 5000;

/** Writes a program's label output: the label map (compressed, with the input's geometry), the segmentation when
 * --segmentation asks for one and the labels are at most kMaxSlicerSegments (else a line on the standard output
 * says why it was not written), and the region count to Slicer's return parameter file when it gives one. The
 * writing is the last 10% of the progress. */
template <class TLabels>
void
WriteLabelOutputs(const TLabels *       labels,
                  const std::string &   output,
                  const CommonOptions & common,
                  unsigned long long    regionCount,
                  const std::string &   segmentName,
                  SlicerProgress &      progress)
{
  auto writer = itk::ImageFileWriter<TLabels>::New();
  writer->SetInput(labels);
  writer->SetFileName(Output(output));
  writer->UseCompressionOn();
  progress.Watch(writer, 0.9f, 0.97f);
  writer->Update();
  if (!common.segmentation.empty())
  {
    if (regionCount <= kMaxSlicerSegments)
      WriteSlicerSegmentation(labels, Output(common.segmentation), segmentName);
    else
      std::cout << "The segmentation " << common.segmentation << " was not written: " << regionCount
                << " regions, more than the " << kMaxSlicerSegments
                << " segments a segmentation file gets from this module (Slicer slows down with thousands of "
                   "segments). The label map "
                << output << " holds them all; Slicer's Data module converts it into a segmentation node.\n";
  }
  if (!common.returnParameterFile.empty())
  {
    std::ofstream f(Output(common.returnParameterFile));
    f << "regionCount = " << regionCount << '\n';
    if (!f)
      throw std::runtime_error("cannot write " + common.returnParameterFile);
  }
}

} // namespace chs_example

#endif
