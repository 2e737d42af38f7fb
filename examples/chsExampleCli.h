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

/** The 3D Slicer parameters of the options every program has: --backend and --device. */
constexpr const char * kSlicerBackendParameters = R"(    <string-enumeration>
      <name>backend</name>
      <longflag>--backend</longflag>
      <label>Backend</label>
      <description>auto: GPU when available; cuda; cpu.</description>
      <default>auto</default>
      <element>auto</element>
      <element>cuda</element>
      <element>cpu</element>
    </string-enumeration>
    <integer>
      <name>device</name>
      <longflag>--device</longflag>
      <label>CUDA device</label>
      <description>Index of the CUDA device.</description>
      <default>0</default>
    </integer>
)";

/** Parses the command line. --help and --xml print `usage` and `xml` and exit; --backend and --device set `backend`
 * and `device`; any other option goes to option(name, value), which returns false for an option it does not know
 * (value() takes the option's value); returns the positional arguments. Exits with a message for an unknown
 * option, a missing value or a value that does not parse. */
template <class FOption>
std::vector<std::string>
ParseArguments(int                                          argc,
               char **                                      argv,
               const char *                                 program,
               const char *                                 usage,
               const std::string &                          xml,
               itk::CudaSegmentationBackendEnums::Backend & backend,
               int &                                        device,
               FOption &&                                   option)
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
        backend = ParseBackend(program, value());
      else if (a == "--device")
        device = std::stoi(value());
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

} // namespace chs_example

#endif
