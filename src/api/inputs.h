// Preparing a model's inputs: .npy files checked against the declared types, the rest seeded
// random data.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/module.h"
#include "support/tensor.h"

namespace sy::api {

struct PreparedInput {
  std::string name;
  std::string source;  // the .npy path, or "random"
  Tensor value;
};


// One tensor per @main parameter, in order. `files` maps input names to .npy paths; each file's
// dtype and shape must match the parameter ("input 'x': x.npy has shape (1, 3, 8, 8), the model
// expects (1, 3, 16, 16)"). Names that are not inputs are rejected, listing the inputs. Inputs
// without a file get random_tensor(shape, dtype, seed + index).
std::vector<PreparedInput> prepare_inputs(const ir::Module& m, const std::map<std::string, std::string>& files,
                                          uint64_t seed);

// "NAME=FILE.npy" -> (NAME, FILE.npy); throws sy::Error quoting the bad text.
std::pair<std::string, std::string> parse_input_file(const std::string& text);

}  // namespace sy::api
