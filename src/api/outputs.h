// Naming, summarising and saving a model's output tensors.
#pragma once
#include <string>
#include <vector>

#include "support/tensor.h"

namespace sy::api {

// A file-name-safe version of an output name: characters other than letters, digits, '.', '-'
// and '_' become '_' ("logits/0:0" -> "logits_0_0"), a leading '.' becomes '_', and an empty
// result becomes "output".
std::string sanitize_file_name(const std::string& name);

// Sanitised names made unique by appending "_2", "_3", ... to later duplicates.
std::vector<std::string> output_file_stems(const std::vector<std::string>& names);

struct TensorSummary {
  std::vector<double> first;  // up to 6 leading values
  double min = 0, max = 0, mean = 0;  // over the finite values (0 if none)
  int64_t nonfinite = 0;              // NaN or infinite values
};
TensorSummary summarize(const Tensor& t);

// "(1, 1000) float32  min -2.31  max 3.07  mean 0.012  [0.52, -1.1, ...]"
std::string summary_line(const Tensor& t, const TensorSummary& s);

}  // namespace sy::api
