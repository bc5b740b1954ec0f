// switchyard: the command-line program (inspect, run, print, zoo, demo).
#include <CLI/CLI.hpp>
#include <malloc.h>

#include <iostream>
#include <new>
#include <string>

#include <switchyard/switchyard.h>
#include <switchyard/version.h>

#include "cli_common.h"

namespace {

// Every failure is reported as exactly one line of valid UTF-8: line breaks and control
// characters become spaces, bytes that are not UTF-8 (e.g. echoed from a corrupt file) become '?'.
std::string one_line(const std::string& msg) {
  std::string out;
  for (size_t i = 0; i < msg.size();) {
    auto c = static_cast<unsigned char>(msg[i]);
    if (c < 0x80) {
      out += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (c >= 0xf5) len = 0;
    bool ok = len > 0 && i + len <= msg.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(msg[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(msg, i, len);
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Freed blocks of up to 32 MB stay in the heap for reuse instead of going back to the kernel.
// Why: executors free and reallocate tensors of several MB every op, and fresh memory costs a
// page fault per 4 KB (~10-20 us each on a VM). glibc raises these limits by itself, but only
// once it has freed a large mapped block, so run times depended on what happened to be freed
// earlier (MobileNetV2 on the reference executor: 72 or 102 ms per run; with these limits 74).
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int report(const std::string& msg) {
  std::cerr << "switchyard: error: " << one_line(msg) << "\n";
  return 1;
}

int main_impl(int argc, char** argv) {
  CLI::App app{"Switchyard: a deep-learning compiler and runtime. Loads a model (.onnx, .sy text IR, or zoo:NAME),\n"
               "partitions it across external backends (BYOC), compiles it into one artifact, and runs it.",
               "switchyard"};
  app.set_version_flag("--version", std::string("switchyard ") + SWITCHYARD_VERSION);
  app.require_subcommand(0, 1);
  app.footer(
      "MODEL is a path to an .onnx file, a .sy text-IR file, or zoo:NAME (see `switchyard zoo`).\n"
      "Examples:\n"
      "  switchyard demo\n"
      "  switchyard inspect zoo:resnet50\n"
      "  switchyard run model.onnx --input input=x.npy --output-dir out --repeat 10\n"
      "  switchyard partition model.onnx --backends LIST --explain\n"
      "  switchyard compile model.onnx --backends LIST -o model.sya && switchyard run model.sya\n"
      "  switchyard tune model.onnx -o records.jsonl && switchyard compile model.onnx --records records.jsonl -o model.sya\n"
      "Run `switchyard COMMAND --help` for the options of a command.");
  std::vector<switchyard::cli::Command> commands = {
      switchyard::cli::add_inspect_command(app), switchyard::cli::add_run_command(app), switchyard::cli::add_partition_command(app),
      switchyard::cli::add_compile_command(app), switchyard::cli::add_backends_command(app), switchyard::cli::add_target_command(app), switchyard::cli::add_print_command(app),
      switchyard::cli::add_zoo_command(app), switchyard::cli::add_demo_command(app), switchyard::cli::add_tune_command(app),
      switchyard::cli::add_records_command(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::string help = "switchyard --help";
    for (auto& c : commands)
      if (c.app->parsed()) help = "switchyard " + c.app->get_name() + " --help";
    std::cerr << "switchyard: error: " << one_line(e.what()) << " (see `" << help << "`)\n";
    return 2;
  }
  for (auto& c : commands)
    if (c.app->parsed()) return c.run();
  std::cout << app.help();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  try {
    return main_impl(argc, argv);
  } catch (const switchyard::InternalError& e) {
    return report(std::string(e.what()) + " (this is a bug in switchyard; please report it)");
  } catch (const switchyard::Error& e) {
    return report(e.what());
  } catch (const std::bad_alloc&) {
    return report("out of memory");
  } catch (const std::exception& e) {
    return report(e.what());
  }
}
