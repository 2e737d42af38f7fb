// Shared by the command-line programs: errors, the command-line parser with the options every program has, the
// Slicer description of those options, the dimension of an image file.
#ifndef chsExampleCli_h
#define chsExampleCli_h

#include "itkCudaSegmentationBackendEnums.h"
#include "itkImageIOFactory.h"

#include <cstdlib>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace chs_example
{

[[noreturn]] inline void
Fail(const char * program, const std::string & message)
{
  std::cerr << program << ": " << message << "\n(run with --help for the usage)\n";
  std::exit(2);
}

inline itk::CudaSegmentationBackendEnums::Backend
ParseBackend(const char * program, const std::string & b)
{
  using Backend = itk::CudaSegmentationBackendEnums::Backend;
  if (b == "auto")
    return Backend::Auto;
  if (b == "cuda")
    return Backend::CUDA;
  if (b == "cpu")
    return Backend::CPU;
  Fail(program, "unknown backend '" + b + "' (auto, cuda or cpu)");
}

/** Parses the command line. --help and --xml print `usage` and `xml` and exit; the options every program has
 * (--backend, --device, --segmentation, --returnparameterfile) go to `common`; any other option goes to
 * option(name, value), which returns false for an option it does not know (value() takes the option's value);
 * returns the positional arguments. Exits with a message for an unknown option, a missing value or a value that
 * does not parse. */
/** The options every program has. */
struct CommonOptions
{
  itk::CudaSegmentationBackendEnums::Backend backend = itk::CudaSegmentationBackendEnums::Backend::Auto;
  int                                        device  = 0;
  std::string segmentation;        // --segmentation: also write the labels as a Slicer segmentation (.seg.nrrd)
  std::string returnParameterFile; // --returnparameterfile: where Slicer reads the module's output values

  /** Sets a filter's Backend and DeviceId (itk::CudaSegmentationFilter) from --backend and --device. */
  template <class TFilter>
  void
  Apply(TFilter * filter) const
  {
    filter->SetBackend(backend);
    filter->SetDeviceId(device);
  }
};

/** Where a filter's last update ran, for the programs' one-line reports: "CUDA" or "CPU reference". */
template <class TFilter>
const char *
RanOn(const TFilter * filter)
{
  return filter->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA ? "CUDA" : "CPU reference";
}

/** What --help says of the options every program has. */
constexpr const char * kCommonUsage =
  R"(  --segmentation <f>      also write the labels as a 3D Slicer segmentation (.seg.nrrd), one segment per label
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --returnparameterfile <f>  write the output values (the region count) as 3D Slicer reads them
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

template <class FOption>
std::vector<std::string>
ParseArguments(int                 argc,
               char **             argv,
               const char *        program,
               const char *        usage,
               const std::string & xml,
               CommonOptions &     common,
               FOption &&          option)
{
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i)
  {
    const std::string                  a     = argv[i];
    const std::function<std::string()> value = [&]() -> std::string
    {
      if (i + 1 >= argc)
        Fail(program, a + " needs a value");
      return argv[++i];
    };
    try
    {
      if (a == "--help" || a == "-h")
      {
        std::cout << usage;
        std::exit(0);
      }
      if (a == "--xml")
      {
        std::cout << xml;
        std::exit(0);
      }
      if (a == "--backend")
        common.backend = ParseBackend(program, value());
      else if (a == "--device")
        common.device = std::stoi(value());
      else if (a == "--segmentation")
      {
        common.segmentation   = value();
        const std::string & f = common.segmentation;
        if (!f.empty() && (f.size() < 9 || f.compare(f.size() - 9, 9, ".seg.nrrd") != 0))
          Fail(program, "the segmentation file " + f + " must end with .seg.nrrd");
      }
      else if (a == "--returnparameterfile")
        common.returnParameterFile = value();
      else if (!a.empty() && a[0] == '-')
      {
        if (!option(a, value))
          Fail(program, "unknown option " + a);
      }
      else
        positional.push_back(a);
    }
    catch (const std::logic_error &)
    {
      Fail(program, "bad value for " + a);
    }
  }
  return positional;
}

/** 2 or 3, from the file's header; exits with a message for other files. */
inline unsigned
ImageDimension(const char * program, const std::string & file)
{
  auto io = itk::ImageIOFactory::CreateImageIO(file.c_str(), itk::CommonEnums::IOFileMode::ReadMode);
  if (!io)
    Fail(program, "cannot read " + file);
  io->SetFileName(file);
  io->ReadImageInformation();
  const unsigned d = io->GetNumberOfDimensions();
  if (d != 2 && d != 3)
    Fail(program, file + " has " + std::to_string(d) + " dimensions; 2D images and 3D volumes are supported");
  return d;
}

/** Runs run() (which returns main's exit status) and turns an ITK or standard exception into a message on stderr
 * and exit status 1. */
template <class FRun>
int
ReportFailures(const char * program, FRun && run)
{
  try
  {
    return run();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << program << ": " << e.GetDescription() << '\n';
  }
  catch (const std::exception & e)
  {
    std::cerr << program << ": " << e.what() << '\n';
  }
  return 1;
}

/** The end of main() of a program that takes <input> <output>: checks the positional arguments, then calls
 * run(std::integral_constant<unsigned, D>{}) for the input's dimension D; a failure is reported as by
 * ReportFailures. */
template <class FRun>
int
RunOnInputDimension(const char *                     program,
                    const std::vector<std::string> & positional,
                    std::string &                    input,
                    std::string &                    output,
                    FRun &&                          run)
{
  if (positional.size() != 2)
    Fail(program, "expected an input and an output file");
  input  = positional[0];
  output = positional[1];
  return ReportFailures(program,
                        [&]
                        {
                          if (ImageDimension(program, input) == 3)
                            run(std::integral_constant<unsigned, 3>{});
                          else
                            run(std::integral_constant<unsigned, 2>{});
                          return 0;
                        });
}

} // namespace chs_example

#endif
