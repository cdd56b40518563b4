// The one translation unit that compiles CLI11 for pxq's programs (see pxq/common/cli.hpp).
#include "pxq/common/cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <stdexcept>

namespace pxq::cli {

Option* Option::range(long long lo, long long hi) {
  option_->check(CLI::Range(lo, hi));
  return this;
}

Option* Option::member(const std::vector<std::string>& values) {
  option_->check(CLI::IsMember(values));
  return this;
}

Option* Option::delimiter(char c) {
  option_->delimiter(c);
  return this;
}

Option* Option::required() {
  option_->required();
  return this;
}

Option* Option::excludes(Option* other) {
  option_->excludes(other->option_);
  return this;
}

App::App(const std::string& description, const std::string& name)
    : owned_(std::make_unique<CLI::App>(description, name)), app_(owned_.get()) {}

App::App(CLI::App* sub) : app_(sub) {}

App::~App() = default;

Option* App::keep(CLI::Option* option) {
  options_.push_back(std::make_unique<Option>(option));
  return options_.back().get();
}

// One definition per option type CLI11 converts to (its add_option is a template).
Option* App::add_option(const std::string& name, int& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, long& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, long long& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, unsigned long& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, unsigned long long& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, double& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, std::string& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, std::vector<int>& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, std::vector<double>& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}
Option* App::add_option(const std::string& name, std::vector<std::string>& target, const std::string& help) {
  return keep(app_->add_option(name, target, help));
}

Option* App::add_ignored(const std::string& name, const std::string& help) {
  return keep(app_->add_option(name, help));
}

Option* App::add_flag(const std::string& name, bool& target, const std::string& help) {
  return keep(app_->add_flag(name, target, help));
}

App* App::add_subcommand(const std::string& name, const std::string& description) {
  subcommands_.push_back(std::unique_ptr<App>(new App(app_->add_subcommand(name, description))));
  return subcommands_.back().get();
}

void App::take_last() { app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast); }

bool App::parsed() const { return app_->parsed(); }

std::size_t App::count(const std::string& name) const { return app_->count(name); }

std::string App::help() const { return app_->help(); }

std::string App::name() const { return app_->get_name(); }

App::Outcome App::parse(int argc, char** argv, std::string& message) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return Outcome::help;
  } catch (const CLI::ParseError& e) {
    message = e.what();
    return Outcome::error;
  }
  return Outcome::ok;
}

int App::parse_or_exit(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the help (exit 0) or the error and the hint to --help; a bad command line
    // leaves with pxq's bad-input code, 2, as every pxq program does (not CLI11's 105-115).
    return app_->exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

int guarded_main(const char* name, int (*body)(int, char**), int argc, char** argv) noexcept {
  try {
    return body(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: an unknown exception\n", name);
  }
  return 3;
}

}  // namespace pxq::cli
