// Shared by the command-line programs: errors, the --backend value, the dimension of an image file.
#ifndef chsExampleCli_h
#define chsExampleCli_h

#include "itkCudaSegmentationBackendEnums.h"
#include "itkImageIOFactory.h"

#include <cstdlib>
#include <iostream>
#include <string>

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
