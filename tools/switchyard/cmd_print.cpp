// `switchyard print MODEL`: the text IR (parseable unless --no-weights).
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli_common.h"

namespace switchyard::cli {
namespace {

struct PrintArgs {
  std::string model;
  std::vector<std::string> input_shapes;
  bool no_weights = false;
  std::string output;
};

int run_print(const PrintArgs& a) {
  Model m = load(a.model, a.input_shapes);
  std::string text = m.text(!a.no_weights);
  if (a.output.empty() || a.output == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream f(a.output, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(a.output + ": cannot write: " + std::strerror(errno));
  f << text;
  f.close();
  if (!f) throw Error(a.output + ": write failed");
  return 0;
}

}  // namespace

Command add_print_command(CLI::App& root) {
  auto args = std::make_shared<PrintArgs>();
  CLI::App* c = root.add_subcommand("print", "Print a model as text IR (parses back with the .sy reader)");
  c->add_option("MODEL", args->model, "model: file.onnx, file.sy or zoo:NAME")->required();
  c->add_option("--input-shape", args->input_shapes, "NAME=D1,D2,...: static shape of an input")
      ->type_name("NAME=SHAPE");
  c->add_flag("--no-weights", args->no_weights, "show constants as '...' (readable, but no longer parseable)");
  c->add_option("-o,--output", args->output, "write to FILE instead of standard output")->type_name("FILE");
  return {c, [args] { return run_print(*args); }};
}

}  // namespace switchyard::cli
