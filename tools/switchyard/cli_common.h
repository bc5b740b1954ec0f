// Helpers shared by the switchyard commands: loading with progress, number formatting, JSON.
// The program uses the public API (<switchyard/...>) only, like any other user of the library.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <switchyard/switchyard.h>

namespace CLI { class App; }

namespace switchyard::cli {

// A subcommand: its CLI11 app and what to do when it was chosen. run() returns the exit code and
// may throw switchyard::Error (reported by main as one line).
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_inspect_command(CLI::App& root);
Command add_run_command(CLI::App& root);
Command add_print_command(CLI::App& root);
Command add_zoo_command(CLI::App& root);
Command add_demo_command(CLI::App& root);
Command add_partition_command(CLI::App& root);
Command add_compile_command(CLI::App& root);
Command add_backends_command(CLI::App& root);
Command add_target_command(CLI::App& root);
Command add_tune_command(CLI::App& root);
Command add_records_command(CLI::App& root);

// Transient status on stderr ("loading zoo:resnet50...", "run 3/10"), only when stderr is a
// terminal, so that logs and pipes stay clean.
class Progress {
 public:
  Progress();
  ~Progress();
  void show(const std::string& text);
  void clear();

 private:
  bool enabled_;
  size_t shown_ = 0;
};

// The --input-shape texts ("NAME=1,3,224,224") as LoadOptions::input_shapes.
std::map<std::string, std::vector<int64_t>> input_shapes(const std::vector<std::string>& texts);

// Loads spec (a model, or an artifact's compiled graph) with the --input-shape texts applied.
Model load(const std::string& spec, const std::vector<std::string>& input_shapes,
           const std::map<std::string, std::vector<int64_t>>& data_shapes = {});

std::string with_commas(int64_t v);            // 25557032 -> "25,557,032"
std::string si(double v, const char* unit);    // 25557032, "" -> "25.6 M"; 8.2e9, "FLOP" -> "8.21 GFLOP"
std::string fixed(double v, int digits);       // fixed-point with `digits` decimals
std::string ms(double v);                      // "2283.8 ms", "41.27 ms", "0.015 ms"
std::string join(const std::vector<std::string>& items, const std::string& sep);

nlohmann::json shape_json(const std::vector<int64_t>& s);
nlohmann::json tensor_info_json(const TensorInfo& t);

// Number of threads the executor uses for `--threads N` (0: all cores).
int resolve_threads(int requested);

}  // namespace switchyard::cli
