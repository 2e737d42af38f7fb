// The command-line programs' parameters, each declared once: one table per program (a chs_example::Module) gives
// the --help text, the 3D Slicer module description printed by --xml (Slicer's Execution Model) and the parser.
// A parameter is a flagged option (a switch, a number, a choice, a file), a positional file, or a value returned to
// Slicer; it carries its --help line, its Slicer element (unless it is for the command line only), its range and
// where its value goes.
#ifndef chsExampleOptions_h
#define chsExampleOptions_h

#include "chsExampleCli.h"

#include <functional>
#include <initializer_list>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace chs_example
{

/** One parameter of a program. Made by the functions below (Switch, Number, Numbers, Choice, Path, Positional,
 * Returned) and completed by the chained setters. */
struct Parameter
{
  std::string                              flag;    // "--sigma"; empty for a positional or returned parameter
  std::string                              metavar; // "<s>" in --help; empty for a switch
  std::string                              help;    // the --help text; empty: not listed (positional, returned)
  std::string                              tag;     // the Slicer element: boolean, integer, double, integer-vector, ...
  std::string                              attributes;             // of that element, e.g. ` type="label"`
  std::string                              name;                   // Slicer's name; empty: for the command line only
  std::string                              label;                  // Slicer's label
  std::string                              description;            // Slicer's description
  std::string                              channel;                // input or output (files and returned values)
  std::string                              defaultValue;           // Slicer's default
  std::vector<std::string>                 elements;               // of an enumeration
  std::string                              minimum, maximum, step; // constraints; a value below the minimum is refused
  int                                      index  = -1;            // of a positional parameter
  bool                                     common = false;         // an option every program has: listed last in --help
  std::function<void(const std::string &)> set;                    // takes the value ("true" for a switch)

  /** Describes the parameter to Slicer as `name` with `label` and `description`. */
  Parameter &&
  Slicer(std::string slicerName, std::string slicerLabel, std::string slicerDescription) &&
  {
    name        = std::move(slicerName);
    label       = std::move(slicerLabel);
    description = std::move(slicerDescription);
    return std::move(*this);
  }
  /** The constraints Slicer bounds its widgets with; the parser refuses a value below `low`. */
  Parameter &&
  Range(std::string low, std::string high, std::string by) &&
  {
    minimum = std::move(low);
    maximum = std::move(high);
    step    = std::move(by);
    return std::move(*this);
  }
  /** Slicer's default, where it is not the value the option starts with. */
  Parameter &&
  Default(std::string value) &&
  {
    defaultValue = std::move(value);
    return std::move(*this);
  }
  /** The file's Slicer element (image, file, directory), its attributes and channel. */
  Parameter &&
  As(std::string element, std::string channelName, std::string elementAttributes = "") &&
  {
    tag        = std::move(element);
    channel    = std::move(channelName);
    attributes = std::move(elementAttributes);
    return std::move(*this);
  }
  Parameter &&
  Common() &&
  {
    common = true;
    return std::move(*this);
  }
};

namespace detail
{
template <class T>
std::string
Text(const T & value)
{
  std::ostringstream s;
  s << value;
  return s.str();
}

/** The value of `text` as T (a whole number or a floating-point one); throws std::invalid_argument when it is not
 * one, or not all of it is. */
template <class T>
T
ParseNumber(const std::string & text)
{
  size_t used = 0;
  T      value{};
  if constexpr (std::is_floating_point_v<T>)
    value = T(std::stod(text, &used));
  else if constexpr (std::is_signed_v<T>)
    value = T(std::stoll(text, &used));
  else
  {
    if (text.find('-') != std::string::npos)
      throw std::invalid_argument(text);
    value = T(std::stoull(text, &used));
  }
  if (used != text.size())
    throw std::invalid_argument(text);
  return value;
}

inline std::string
OneOf(const std::vector<std::string> & names)
{
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return list;
}
} // namespace detail

/** A switch: `flag` sets `target` to true. */
inline Parameter
Switch(std::string flag, bool & target, std::string help)
{
  Parameter p;
  p.flag         = std::move(flag);
  p.help         = std::move(help);
  p.tag          = "boolean";
  p.defaultValue = target ? "true" : "false";
  p.set          = [&target](const std::string &) { target = true; };
  return p;
}

/** A number (integer or floating point, as T is). */
template <class T>
Parameter
Number(std::string flag, std::string metavar, T & target, std::string help)
{
  static_assert(std::is_arithmetic_v<T>);
  Parameter p;
  p.flag         = std::move(flag);
  p.metavar      = std::move(metavar);
  p.help         = std::move(help);
  p.tag          = std::is_floating_point_v<T> ? "double" : "integer";
  p.defaultValue = detail::Text(target);
  p.set          = [&target](const std::string & v) { target = detail::ParseNumber<T>(v); };
  return p;
}

/** Comma-separated whole numbers (Slicer's integer-vector). */
template <class T>
Parameter
Numbers(std::string flag, std::string metavar, std::vector<T> & target, std::string help)
{
  Parameter p;
  p.flag    = std::move(flag);
  p.metavar = std::move(metavar);
  p.help    = std::move(help);
  p.tag     = std::is_floating_point_v<T> ? "double-vector" : "integer-vector";
  for (size_t i = 0; i < target.size(); ++i)
    p.defaultValue += (i ? "," : "") + detail::Text(target[i]);
  p.set = [&target](const std::string & v)
  {
    target.clear();
    std::stringstream s(v);
    for (std::string part; std::getline(s, part, ',');)
      target.push_back(detail::ParseNumber<T>(part));
  };
  return p;
}

namespace detail
{
/** A choice among `names`; pick(i) takes the i-th. */
inline Parameter
ChoiceOf(std::string                 flag,
         std::string                 metavar,
         std::vector<std::string>    names,
         std::string                 current,
         const std::string &         what,
         std::string                 help,
         std::function<void(size_t)> pick)
{
  Parameter p;
  p.flag         = std::move(flag);
  p.metavar      = std::move(metavar);
  p.help         = std::move(help);
  p.tag          = "string-enumeration";
  p.elements     = std::move(names);
  p.defaultValue = std::move(current);
  p.set          = [names = p.elements, what, pick](const std::string & v)
  {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == v)
        return pick(i);
    throw std::domain_error("unknown " + what + " '" + v + "' (" + OneOf(names) + ")");
  };
  return p;
}
} // namespace detail

/** One of named values (Slicer's string-enumeration) that set `target` to the value paired with the name; `what`
 * names the option in the error for another name: "unknown <what> 'x' (a, b or c)". */
template <class T>
Parameter
Choice(std::string                                       flag,
       std::string                                       metavar,
       T &                                               target,
       std::initializer_list<std::pair<const char *, T>> named,
       const std::string &                               what,
       std::string                                       help)
{
  std::vector<std::string> names;
  std::vector<T>           values;
  std::string              current;
  for (const auto & [n, v] : named)
  {
    names.emplace_back(n);
    values.push_back(v);
    if (v == target && current.empty())
      current = n;
  }
  return detail::ChoiceOf(std::move(flag),
                          std::move(metavar),
                          std::move(names),
                          std::move(current),
                          what,
                          std::move(help),
                          [&target, values](size_t i) { target = values[i]; });
}

/** One of `names`, kept as the name. */
inline Parameter
Choice(std::string                         flag,
       std::string                         metavar,
       std::string &                       target,
       std::initializer_list<const char *> names,
       const std::string &                 what,
       std::string                         help)
{
  std::vector<std::string> list(names.begin(), names.end());
  return detail::ChoiceOf(std::move(flag),
                          std::move(metavar),
                          list,
                          target,
                          what,
                          std::move(help),
                          [&target, list](size_t i) { target = list[i]; });
}

/** A file or folder named by a flag: for the command line only unless Slicer() and As() describe it. */
inline Parameter
Path(std::string flag, std::string metavar, std::string & target, std::string help)
{
  Parameter p;
  p.flag    = std::move(flag);
  p.metavar = std::move(metavar);
  p.help    = std::move(help);
  p.set     = [&target](const std::string & v) { target = v; };
  return p;
}

/** A file given by position (`index` from 0), described to Slicer as `element` (image, file) of `channel`. */
inline Parameter
Positional(int index, std::string element, std::string channel, std::string attributes = "")
{
  Parameter p;
  p.index      = index;
  p.tag        = std::move(element);
  p.channel    = std::move(channel);
  p.attributes = std::move(attributes);
  return p;
}

/** A value the program returns to Slicer through its return parameter file. */
inline Parameter
Returned(std::string element, std::string defaultValue)
{
  Parameter p;
  p.tag          = std::move(element);
  p.channel      = "output";
  p.defaultValue = std::move(defaultValue);
  return p;
}

/** A program's parameters and texts: what --help prints, what --xml prints, what the parser accepts. Parameters are
 * added in the order --help lists them (the options every program has last) and, within each Slicer group, in the
 * order the module description lists them; the groups come in the order they were opened, advanced ones last. */
class Module
{
public:
  /** `usage` is --help's text before the options; `title` and `description` are Slicer's (no title: the program is
   * not a Slicer module and has no --xml). */
  Module(const char * program, std::string usage, std::string title = "", std::string description = "")
    : m_Program(program)
    , m_Usage(std::move(usage))
    , m_Title(std::move(title))
    , m_Description(std::move(description))
  {
  }

  /** Opens a Slicer parameter group: the parameters added next with a Slicer name go into it. */
  Module &
  Group(std::string label, std::string description, bool advanced = false)
  {
    m_Groups.push_back({ std::move(label), std::move(description), advanced, {} });
    return *this;
  }

  Module &
  Add(Parameter p)
  {
    if (!p.name.empty())
    {
      if (m_Groups.empty())
        throw std::logic_error("the Slicer parameter " + p.name + " is outside every group");
      m_Groups.back().members.push_back(m_Parameters.size());
    }
    m_Parameters.push_back(std::move(p));
    return *this;
  }

  /** The options every program has: --backend, --device and --returnparameterfile into `common` (the first two in
   * Slicer's advanced "Execution" group). */
  Module &
  AddExecution(CommonOptions & common)
  {
    using Backend = itk::CudaSegmentationBackendEnums::Backend;
    Group("Execution", "Where the computation runs.", true);
    Add(Choice("--backend",
               "<name>",
               common.backend,
               { { "auto", Backend::Auto }, { "cuda", Backend::CUDA }, { "cpu", Backend::CPU } },
               "backend",
               "auto (default: the GPU when there is one), cuda or cpu (the sequential reference)")
          .Slicer("backend",
                  "Backend",
                  "auto: the GPU when there is one, else the CPU; cuda: the GPU or an error; cpu: the sequential "
                  "reference.")
          .Common());
    Add(Number("--device", "<id>", common.device, "CUDA device (default 0)")
          .Slicer("device", "CUDA device", "Index of the CUDA device.")
          .Range("0", "63", "1")
          .Common());
    Add(Path("--returnparameterfile",
             "<f>",
             common.returnParameterFile,
             "write the output values (the region count) as 3D Slicer reads them")
          .Common());
    return *this;
  }

  /** The --help text. */
  std::string
  Usage() const
  {
    std::string text = m_Usage + "\nOptions:\n";
    for (bool common : { false, true })
      for (const auto & p : m_Parameters)
        if (!p.help.empty() && p.common == common)
          text += HelpLine(p.flag + (p.metavar.empty() ? "" : " " + p.metavar), p.help);
    if (!m_Title.empty())
      text += HelpLine("--xml", "print the 3D Slicer command-line module description and exit");
    return text + HelpLine("--help", "this text");
  }

  /** The Slicer module description (--xml). */
  std::string
  Xml() const
  {
    std::string xml = R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.GPU Hierarchies</category>
  <title>)" + m_Title +
                      "</title>\n  <description>" + m_Description + R"(</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <acknowledgements>Runs on an NVIDIA GPU through CUDA when there is one, else on the module's CPU reference, which gives the same result.</acknowledgements>
)";
    for (bool advanced : { false, true })
      for (const auto & g : m_Groups)
        if (g.advanced == advanced)
        {
          xml += std::string("  <parameters") + (advanced ? " advanced=\"true\"" : "") + ">\n    <label>" + g.label +
                 "</label>\n    <description>" + g.description + "</description>\n";
          for (size_t i : g.members)
            xml += ElementOf(m_Parameters[i]);
          xml += "  </parameters>\n";
        }
    return xml + "</executable>\n";
  }

  /** Parses the command line: --help and --xml print and exit; every option goes where its declaration says;
   * returns the positional arguments. Exits with status 2 and a message for an unknown option, a missing value, a
   * value that does not parse, a name not among a choice's, a value below the minimum. */
  std::vector<std::string>
  Parse(int argc, char ** argv) const
  {
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i)
    {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h")
      {
        std::cout << Usage();
        std::exit(0);
      }
      if (a == "--xml" && !m_Title.empty())
      {
        std::cout << Xml();
        std::exit(0);
      }
      if (a.empty() || a[0] != '-')
      {
        positional.push_back(a);
        continue;
      }
      const Parameter * p = Find(a);
      if (!p)
        Fail(m_Program, "unknown option " + a);
      if (p->tag == "boolean")
      {
        p->set("true");
        continue;
      }
      if (i + 1 >= argc)
        Fail(m_Program, a + " needs a value");
      const std::string value = argv[++i];
      try
      {
        if (!p->minimum.empty())
          CheckMinimum(a, value, std::stod(p->minimum));
        p->set(value);
      }
      catch (const std::domain_error & e)
      {
        Fail(m_Program, e.what());
      }
      catch (const std::logic_error &)
      {
        Fail(m_Program, "bad value for " + a + ": " + value);
      }
    }
    return positional;
  }

private:
  struct SlicerGroup
  {
    std::string         label, description;
    bool                advanced;
    std::vector<size_t> members;
  };

  const Parameter *
  Find(const std::string & flag) const
  {
    for (const auto & p : m_Parameters)
      if (!p.flag.empty() && p.flag == flag)
        return &p;
    return nullptr;
  }

  /** Throws std::domain_error when a value of `flag` (comma-separated for vectors) is below `minimum`. */
  static void
  CheckMinimum(const std::string & flag, const std::string & value, double minimum)
  {
    std::stringstream s(value);
    for (std::string item; std::getline(s, item, ',');)
      if (!(detail::ParseNumber<double>(item) >= minimum))
      {
        std::ostringstream m;
        m << flag << " " << value << " is out of range: the smallest value is " << minimum;
        throw std::domain_error(m.str());
      }
  }

  /** `help` after `left` at column 26, wrapped at 118 characters. */
  static std::string
  HelpLine(const std::string & left, const std::string & help)
  {
    constexpr size_t column = 26, width = 118;
    std::string      line = "  " + left;
    line += line.size() + 2 <= column ? std::string(column - line.size(), ' ') : "  ";
    std::string       text;
    size_t            start = line.size();
    std::stringstream words(help);
    bool              first = true;
    for (std::string w; words >> w; first = false)
    {
      if (!first && line.size() + 1 + w.size() > width)
      {
        text += line + '\n';
        line  = std::string(column, ' ');
        start = line.size();
      }
      line += (line.size() == start ? "" : " ") + w;
    }
    return text + line + '\n';
  }

  static std::string
  ElementOf(const Parameter & p)
  {
    auto field = [](const char * tag, const std::string & value, const char * indent = "      ")
    { return std::string(indent) + "<" + tag + ">" + value + "</" + tag + ">\n"; };
    std::string e = "    <" + p.tag + p.attributes + ">\n" + field("name", p.name);
    if (!p.flag.empty())
      e += field("longflag", p.flag);
    e += field("label", p.label) + field("description", p.description);
    if (!p.channel.empty())
      e += field("channel", p.channel);
    if (p.index >= 0)
      e += field("index", std::to_string(p.index));
    if (!p.defaultValue.empty())
      e += field("default", p.defaultValue);
    for (const auto & element : p.elements)
      e += field("element", element);
    if (!p.minimum.empty())
      e += "      <constraints>\n" + field("minimum", p.minimum, "        ") + field("maximum", p.maximum, "        ") +
           field("step", p.step, "        ") + "      </constraints>\n";
    return e + "    </" + p.tag + ">\n";
  }

  const char *             m_Program;
  std::string              m_Usage, m_Title, m_Description;
  std::vector<Parameter>   m_Parameters;
  std::vector<SlicerGroup> m_Groups;
};

} // namespace chs_example

#endif
