// Shared by the command-line programs: errors, output files written whole or not at all, the options every program
// has (declared in chsExampleOptions.h), the dimension of an image file.
#ifndef chsExampleCli_h
#define chsExampleCli_h

#include "itkCudaSegmentationBackendEnums.h"
#include "itkImageIOFactory.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <png.h>
#include <unistd.h>

namespace chs_example
{

/** The programs' output files, written under temporary names and renamed to their own only when the program has
 * finished without error, so that a failed or interrupted run leaves nothing half-written: a file of an output's
 * name is a complete one (of this run or an earlier one). The temporary name is ".partial-<pid>-<name>" in the
 * output's folder (the same file system, so the rename is atomic; the same extension, so ITK picks the same writer).
 * Files with a detached data file (.nhdr, .mhd), whose header names that file, are written under their own names. */
class PendingOutputs
{
public:
  static PendingOutputs &
  Instance()
  {
    static PendingOutputs pending;
    return pending;
  }

  /** The name to write `file` under until Commit(). */
  std::string
  Path(const std::string & file)
  {
    const auto        slash    = file.find_last_of('/');
    const std::string folder   = slash == std::string::npos ? "" : file.substr(0, slash + 1);
    const std::string name     = slash == std::string::npos ? file : file.substr(slash + 1);
    auto              endsWith = [&](const char * e)
    {
      const std::string x(e);
      return name.size() >= x.size() && name.compare(name.size() - x.size(), x.size(), x) == 0;
    };
    if (name.empty() || endsWith(".nhdr") || endsWith(".mhd"))
      return file;
    const std::string temporary = folder + ".partial-" + std::to_string(::getpid()) + "-" + name;
    m_Files.emplace_back(temporary, file);
    return temporary;
  }

  /** Renames every pending file to its own name. */
  void
  Commit()
  {
    for (const auto & [temporary, file] : m_Files)
      if (std::rename(temporary.c_str(), file.c_str()) != 0)
        std::cerr << "cannot rename " << temporary << " to " << file << '\n';
    m_Files.clear();
  }

  /** Removes every pending file (after a failure). */
  void
  Discard()
  {
    for (const auto & entry : m_Files)
      std::remove(entry.first.c_str());
    m_Files.clear();
  }

private:
  std::vector<std::pair<std::string, std::string>> m_Files;
};

/** The name to write an output file under until the program ends well (PendingOutputs). */
inline std::string
Output(const std::string & file)
{
  return PendingOutputs::Instance().Path(file);
}

[[noreturn]] inline void
Fail(const char * program, const std::string & message)
{
  PendingOutputs::Instance().Discard();
  std::cerr << program << ": " << message << "\n(run with --help for the usage)\n";
  std::exit(2);
}

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

namespace detail
{
inline void
PngError(png_structp png, png_const_charp message)
{
  *static_cast<std::string *>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}
inline void
PngWarning(png_structp, png_const_charp)
{
}
} // namespace detail

/** ITK 5.2's PNG reader lets libpng abort the process on a corrupted PNG file (its ReadImageInformation installs no
 * error handler, and its Read calls setjmp in a helper that has returned before libpng jumps back), so a file that
 * starts with the PNG signature is read here first, header and every row, with a handler: a corrupted or truncated
 * PNG ends the program with a message instead. Other files are left to ITK. */
inline void
CheckPngFile(const char * program, const std::string & file)
{
  std::FILE * fp = std::fopen(file.c_str(), "rb");
  if (!fp)
    return; // ITK's reader says why
  unsigned char signature[8];
  if (std::fread(signature, 1, 8, fp) != 8 || png_sig_cmp(signature, 0, 8) != 0)
  {
    std::fclose(fp);
    return;
  }
  std::string why;
  png_structp png  = png_create_read_struct(PNG_LIBPNG_VER_STRING, &why, detail::PngError, detail::PngWarning);
  png_infop   info = png ? png_create_info_struct(png) : nullptr;
  std::vector<unsigned char> row;
  if (!png || !info || setjmp(png_jmpbuf(png)))
  {
    png_destroy_read_struct(png ? &png : nullptr, info ? &info : nullptr, nullptr);
    std::fclose(fp);
    Fail(program, "cannot read " + file + ": not a valid PNG file (" + (why.empty() ? "libpng failed" : why) + ")");
  }
  png_init_io(png, fp);
  png_set_sig_bytes(png, 8);
  png_read_info(png, info);
  const int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  row.resize(png_get_rowbytes(png, info));
  for (int pass = 0; pass < passes; ++pass)
    for (png_uint_32 y = 0; y < png_get_image_height(png, info); ++y)
      png_read_row(png, row.data(), nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  std::fclose(fp);
}

/** 2 or 3, from the file's header; exits with a message for other files. */
inline unsigned
ImageDimension(const char * program, const std::string & file)
{
  CheckPngFile(program, file);
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
 * and exit status 1; renames the pending output files to their names when run() returned 0, else removes them. */
template <class FRun>
int
ReportFailures(const char * program, FRun && run)
{
  try
  {
    const int status = run();
    if (status == 0)
      PendingOutputs::Instance().Commit();
    else
      PendingOutputs::Instance().Discard();
    return status;
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << program << ": " << e.GetDescription() << '\n';
  }
  catch (const std::exception & e)
  {
    std::cerr << program << ": " << e.what() << '\n';
  }
  PendingOutputs::Instance().Discard();
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
