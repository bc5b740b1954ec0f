#include <gtest/gtest.h>

#include "support/tensor.h"
#include "support/tensor_storage.h"

using namespace sy;

TEST(Tensor, AllocatesZeroedAlignedStorage) {
  Tensor t(DType::f32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<float>()[i], 0.0f);
}

// Large long-lived storage (weights) is a mapping of its own (tensor_storage.h): still zeroed,
// aligned, writable to the last byte, and kept while a tensor shares it.
TEST(Tensor, LongLivedLargeStorageIsZeroedAlignedAndWritable) {
  EXPECT_EQ(current_tensor_lifetime(), StorageLifetime::transient);
  {
    LongLivedTensors weights;
    EXPECT_EQ(current_tensor_lifetime(), StorageLifetime::long_lived);
    {
      LongLivedTensors nested;
    }
    EXPECT_EQ(current_tensor_lifetime(), StorageLifetime::long_lived);
    for (int64_t n : {int64_t{1} << 19, (int64_t{3} << 19) + 5}) {  // exactly 2 MB; 6 MB + 20 bytes
      Tensor z(DType::f32, {n});
      EXPECT_EQ(reinterpret_cast<uintptr_t>(z.raw()) % (uintptr_t{2} << 20), 0u);  // on a huge-page boundary
      const float* zd = z.data<float>();
      for (int64_t i = 0; i < n; i += 1009) ASSERT_EQ(zd[i], 0.0f) << i;
      EXPECT_EQ(zd[n - 1], 0.0f);
      Tensor u = Tensor::uninitialized(DType::f32, {n});
      float* ud = u.data<float>();
      for (int64_t i = 0; i < n; ++i) ud[i] = static_cast<float>(i);
      Tensor v = u.reshaped({1, n});
      u = Tensor();
      EXPECT_EQ(v.data<float>()[n - 1], static_cast<float>(n - 1));
    }
  }
  EXPECT_EQ(current_tensor_lifetime(), StorageLifetime::transient);
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
