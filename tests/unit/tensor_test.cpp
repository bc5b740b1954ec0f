#include <gtest/gtest.h>

#include "support/tensor.h"

using namespace sy;

TEST(Tensor, AllocatesZeroedAlignedStorage) {
  Tensor t(DType::f32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
}

TEST(Tensor, ReshapeSharesStorage) {
  auto t = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  auto r = t.reshaped({4});
  EXPECT_EQ(r.raw(), t.raw());
  EXPECT_EQ(r.to_int_vector(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_THROW(t.reshaped({3}), InternalError);
}

TEST(Tensor, TypedAccessChecksDtype) {
  Tensor t(DType::i32, {1});
  EXPECT_THROW(t.data<float>(), InternalError);
}
