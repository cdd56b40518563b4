// pxq's command lines: a thin front of CLI11 compiled once (the pxq_cli library). CLI11 is a
// header-only parser whose code every translation unit that includes it compiles again (about
// 10 s at -O2 each, over half of pxq's whole build); a program's options now cost its file a
// few declarations. What a program may say of an option is what pxq's programs use: its type
// (the overloads below), a range, a set of values, a delimiter, required, excludes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace pxq::cli {

class Option {
 public:
  explicit Option(CLI::Option* option) : option_(option) {}
  Option* range(long long lo, long long hi);               // an integer in [lo, hi]
  Option* member(const std::vector<std::string>& values);  // one of these words
  Option* delimiter(char c);                               // a list option: values split at c too
  Option* required();
  Option* excludes(Option* other);  // not given together with other

 private:
  CLI::Option* option_;
};

class App {
 public:
  explicit App(const std::string& description = "", const std::string& name = "");
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  Option* add_option(const std::string& name, int& target, const std::string& help = "");
  Option* add_option(const std::string& name, long& target, const std::string& help = "");
  Option* add_option(const std::string& name, long long& target, const std::string& help = "");
  Option* add_option(const std::string& name, unsigned long& target, const std::string& help = "");
  Option* add_option(const std::string& name, unsigned long long& target, const std::string& help = "");
  Option* add_option(const std::string& name, double& target, const std::string& help = "");
  Option* add_option(const std::string& name, std::string& target, const std::string& help = "");
  Option* add_option(const std::string& name, std::vector<int>& target, const std::string& help = "");
  Option* add_option(const std::string& name, std::vector<double>& target, const std::string& help = "");
  Option* add_option(const std::string& name, std::vector<std::string>& target, const std::string& help = "");
  Option* add_ignored(const std::string& name, const std::string& help);  // taken, and nothing done with it
  Option* add_flag(const std::string& name, bool& target, const std::string& help = "");
  App* add_subcommand(const std::string& name, const std::string& description);

  void take_last();     // a later value of an option wins over an earlier one (set before adding)
  bool parsed() const;  // a subcommand: it was given
  std::size_t count(const std::string& name) const;  // how often an option was given
  std::string help() const;
  std::string name() const;

  enum class Outcome { ok, help, error };
  // Parses ARGV; on an error, `message` says what is wrong. Throws nothing.
  Outcome parse(int argc, char** argv, std::string& message);
  // CLI11's usual main(): parses, and on --help or an error prints what CLI11 prints and
  // returns the exit code to leave with (0 after the help, 2 for a bad command line); -1 when
  // the program goes on.
  int parse_or_exit(int argc, char** argv);

 private:
  explicit App(CLI::App* sub);
  std::unique_ptr<CLI::App> owned_;
  CLI::App* app_;
  std::vector<std::unique_ptr<Option>> options_;
  std::vector<std::unique_ptr<App>> subcommands_;
  Option* keep(CLI::Option* option);
};

// A program's main() without MPI: the body's exceptions end it with one error line naming the
// program, never std::terminate: std::invalid_argument is bad input (exit 2), any other exception
// a runtime error (exit 3), the miniapps' codes (pxq/common/app.hpp).
int guarded_main(const char* name, int (*body)(int, char**), int argc, char** argv) noexcept;

}  // namespace pxq::cli

// main()'s first line after the options: leave on --help or a bad command line.
#define PXQ_CLI_PARSE(app, argc, argv)                                                                        \
  do {                                                                                                        \
    if (const int pxq_cli_exit = (app).parse_or_exit((argc), (argv)); pxq_cli_exit >= 0) return pxq_cli_exit; \
  } while (false)
