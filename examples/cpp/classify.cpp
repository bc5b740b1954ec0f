// Classify an image with Switchyard's C++ API: load an ONNX model, compile it for this CPU
// (oneDNN too, if asked), run it on an input .npy and print the five best classes.
//
//   classify MODEL.onnx INPUT.npy [BACKEND,...]
#include <switchyard/switchyard.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL.onnx INPUT.npy [BACKEND,...]\n", argv[0]);
    return 2;
  }
  try {
    switchyard::Model model = switchyard::Model::load(argv[1]);
    switchyard::CompileOptions opts;
    if (argc > 3)
      for (std::stringstream ss(argv[3]); ss.good();) {
        std::string b;
        std::getline(ss, b, ',');
        opts.backends.push_back(b);
      }
    switchyard::Compiled net = switchyard::compile(model, opts);
    switchyard::Tensor image = switchyard::Tensor::load_npy(argv[2]);
    auto outputs = net.run({{model.inputs().at(0).name, image}});
    const switchyard::Tensor& logits = outputs.begin()->second;
    const float* p = logits.data_as<float>();
    std::vector<int> order(static_cast<size_t>(logits.numel()));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + 5, order.end(), [&](int a, int b) { return p[a] > p[b]; });
    std::printf("top-5:");
    for (int k = 0; k < 5; ++k) std::printf(" %d", order[static_cast<size_t>(k)]);
    std::printf("\n");
    return 0;
  } catch (const switchyard::Error& e) {
    std::fprintf(stderr, "classify: %s\n", e.what());
    return 1;
  }
}
