#include "ops/evaluator.h"

#include <atomic>

#include "support/error.h"

namespace sy::ops {

namespace {
std::atomic<const Evaluator*> registered{nullptr};
}

void set_evaluator(const Evaluator* evaluator) { registered.store(evaluator); }

const Evaluator& evaluator() {
  const Evaluator* e = registered.load();
  SY_CHECK(e) << "no op evaluator is registered (the reference backend's is, by sy::register_builtins(), in "
                 "every program linking switchyard_backends)";
  return *e;
}

}  // namespace sy::ops
