// Checks what scripts/demo.sh (CudaSegmentationDemo) wrote, from the files alone:
//   chsCheckDemoOutputs <demo folder> [<original MRI volume>]
// - summary.tsv has a row for each algorithm and each input, and summary.md (the table the demo prints) the same
//   rows with the same region counts;
// - every file a row names exists and reads back with ITK: the label map and the segmentation have the input's
//   size, spacing, origin and direction, the segmentation holds the label map's voxels, and the number of distinct
//   non-zero labels in them is the row's region count; the picture is the input's middle slice, enlarged by a
//   whole factor;
// - a row without a segmentation has more regions than the demo writes segments for; no row says DIFFERENT;
// - the input written as <input>.nrrd has the original MRI's geometry and voxels.
// Prints what it checked; exits 1 with the reasons on the first failed file's row, or on any failure.
#include "itkImage.h"
#include "itkImageFileReader.h"
#include "itkRGBPixel.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace
{
using Volume  = itk::Image<short, 3>;
using Labels  = itk::Image<unsigned int, 3>;
using Picture = itk::Image<itk::RGBPixel<unsigned char>, 2>;

int failures = 0;

void
Check(bool ok, const std::string & what)
{
  if (!ok)
  {
    std::cerr << "FAILED: " << what << '\n';
    ++failures;
  }
}

template <class TImage>
typename TImage::Pointer
Read(const std::string & file)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(file);
  reader->Update();
  return reader->GetOutput();
}

bool
SameGeometry(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b)
{
  if (a->GetLargestPossibleRegion() != b->GetLargestPossibleRegion())
    return false;
  for (unsigned i = 0; i < 3; ++i)
  {
    const double scale = std::abs(a->GetSpacing()[i]);
    if (std::abs(a->GetSpacing()[i] - b->GetSpacing()[i]) > 1e-6 * scale ||
        std::abs(a->GetOrigin()[i] - b->GetOrigin()[i]) > 1e-6 * (1 + std::abs(a->GetOrigin()[i])))
      return false;
    for (unsigned j = 0; j < 3; ++j)
      if (std::abs(a->GetDirection()[i][j] - b->GetDirection()[i][j]) > 1e-6)
        return false;
  }
  return true;
}

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

std::vector<std::string>
Split(const std::string & line, char separator)
{
  std::vector<std::string> fields;
  std::string              field;
  std::istringstream       in(line);
  while (std::getline(in, field, separator))
    fields.push_back(field);
  if (!line.empty() && line.back() == separator)
    fields.emplace_back();
  return fields;
}

std::string
Trim(const std::string & s)
{
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 2 && argc != 3)
  {
    std::cerr << "Usage: chsCheckDemoOutputs <demo folder> [<original MRI volume>]\n";
    return 2;
  }
  const std::string dir = std::string(argv[1]) + "/";
  // CudaSegmentationDemo's kMaxSegments: above it a result has a label map and no segmentation.
  constexpr unsigned long long kMaxSegments = 5000;
  const std::set<std::string>  algorithms   = { "connected components", "watershed",   "waterfall", "alpha-tree",
                                                "single linkage",       "waterpixels", "seeded IFT" };
  try
  {
    std::ifstream tsv(dir + "summary.tsv");
    Check(bool(tsv), dir + "summary.tsv exists");
    std::string header;
    std::getline(tsv, header);
    const auto                    columns = Split(header, '\t');
    std::map<std::string, size_t> column;
    for (size_t i = 0; i < columns.size(); ++i)
      column[columns[i]] = i;
    for (const char * c : { "input", "algorithm", "regions", "comparison", "label_map", "segmentation", "picture" })
      if (!column.count(c))
        throw std::runtime_error(std::string("summary.tsv has no column ") + c);

    // summary.md: the printed table; its rows by (input, algorithm).
    std::map<std::pair<std::string, std::string>, std::string> printed;
    std::ifstream                                              md(dir + "summary.md");
    Check(bool(md), dir + "summary.md exists");
    for (std::string line; std::getline(md, line);)
    {
      const auto cells = Split(line, '|');
      if (cells.size() >= 5 && Trim(cells[1]) != "input" && Trim(cells[1]).rfind("---", 0) != 0)
        printed[{ Trim(cells[1]), Trim(cells[2]) }] = Trim(cells[4]);
    }

    std::map<std::string, std::set<std::string>> done; // input -> algorithms
    std::map<std::string, Volume::Pointer>       inputs;
    size_t                                       rows = 0;
    for (std::string line; std::getline(tsv, line);)
    {
      if (line.empty())
        continue;
      ++rows;
      const auto f = Split(line, '\t');
      if (f.size() != columns.size())
        throw std::runtime_error("summary.tsv: a row with " + std::to_string(f.size()) + " fields: " + line);
      const std::string        input = f[column["input"]], algorithm = f[column["algorithm"]];
      const std::string        what    = input + " / " + algorithm + ": ";
      const unsigned long long regions = std::stoull(f[column["regions"]]);
      done[input].insert(algorithm);
      Check(algorithms.count(algorithm) == 1, what + "a known algorithm");
      Check(f[column["comparison"]] == "identical" || f[column["comparison"]] == "no GPU" ||
              f[column["comparison"]] == "not compared",
            what + "GPU and CPU reference identical (" + f[column["comparison"]] + ")");
      const auto p = printed.find({ input, algorithm });
      Check(p != printed.end() && p->second == f[column["regions"]],
            what + "summary.md prints the same region count (" + (p == printed.end() ? "no row" : p->second) + ")");

      if (!inputs.count(input))
        inputs[input] = Read<Volume>(dir + input + ".nrrd");
      const Volume * image = inputs[input];

      const auto labels = Read<Labels>(dir + f[column["label_map"]]);
      Check(SameGeometry(image, labels), what + f[column["label_map"]] + " has the input's geometry");
      const auto inMap = DistinctNonZero(labels);
      Check(inMap == regions,
            what + f[column["label_map"]] + " has " + std::to_string(inMap) + " distinct labels, the summary says " +
              std::to_string(regions));

      const std::string segmentation = f[column["segmentation"]];
      if (segmentation.empty())
        Check(regions > kMaxSegments,
              what + "no segmentation, though " + std::to_string(regions) + " <= " + std::to_string(kMaxSegments) +
                " regions");
      else
      {
        const auto seg = Read<Labels>(dir + segmentation);
        Check(SameGeometry(image, seg), what + segmentation + " has the input's geometry");
        const size_t n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
        Check(seg->GetLargestPossibleRegion() == labels->GetLargestPossibleRegion() &&
                std::equal(seg->GetBufferPointer(), seg->GetBufferPointer() + n, labels->GetBufferPointer()),
              what + segmentation + " holds the label map's voxels");
        Check(DistinctNonZero(seg) == regions, what + segmentation + " has the summary's region count");
      }

      const auto picture = Read<Picture>(dir + f[column["picture"]]);
      const auto ps      = picture->GetLargestPossibleRegion().GetSize();
      const auto is      = image->GetLargestPossibleRegion().GetSize();
      Check(ps[0] % is[0] == 0 && ps[1] % is[1] == 0 && ps[0] / is[0] == ps[1] / is[1] && ps[0] >= is[0],
            what + f[column["picture"]] + " is the middle slice enlarged by a whole factor (" + std::to_string(ps[0]) +
              "x" + std::to_string(ps[1]) + ")");
      std::cout << what << regions << " regions in " << f[column["label_map"]]
                << (segmentation.empty() ? "" : " and " + segmentation) << ", " << f[column["picture"]]
                << ": checked\n";
    }
    Check(rows > 0 && printed.size() == rows, "summary.md has as many rows as summary.tsv");
    for (const auto & [input, names] : done)
      Check(names == algorithms, input + ": every algorithm has a row");
    if (argc == 3)
    {
      Check(inputs.count("mri-t1") == 1, "the MRI volume was processed");
      if (inputs.count("mri-t1"))
      {
        const auto   original = Read<Volume>(argv[2]);
        const auto * written  = inputs["mri-t1"].GetPointer();
        const size_t n        = original->GetLargestPossibleRegion().GetNumberOfPixels();
        Check(SameGeometry(original, written) &&
                std::equal(original->GetBufferPointer(), original->GetBufferPointer() + n, written->GetBufferPointer()),
              "mri-t1.nrrd is the original MRI volume, geometry and voxels");
      }
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << "FAILED: " << e.what() << '\n';
    return 1;
  }
  if (failures)
  {
    std::cerr << failures << " checks failed\n";
    return 1;
  }
  std::cout << "all outputs checked\n";
  return 0;
}
