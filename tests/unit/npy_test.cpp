// Tests of the .npy reader/writer: round trips of every dtype and the error messages.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/npy.h"

using namespace sy;

namespace {

// A version-1 file with the given header dict and data bytes (header padded as NumPy does).
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  size_t n = header.size();
  for (size_t k = 0; k < prefix - 8; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  return out + header + data;
}

std::string error_of(const std::string& bytes) {
  try {
    npy::read_bytes(bytes, "input.npy");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Npy, RoundTripsEveryDtype) {
  for (DType dt : kAllDTypes) {
    Tensor t(dt, {2, 3});
    for (int64_t i = 0; i < t.numel(); ++i)
      dispatch_dtype(dt, [&](auto tag) {
        using T = decltype(tag);
        static_cast<T*>(t.raw())[i] = static_cast<T>(i % 2 == 0 ? i : 1);
      });
    std::string bytes = npy::to_bytes(t);
    // The data starts on a 64-byte boundary, as NumPy writes it.
    EXPECT_EQ((bytes.size() - t.nbytes()) % 64, 0u) << dtype_name(dt);
    Tensor back = npy::read_bytes(bytes, "t.npy");
    EXPECT_TRUE(back.bitwise_equal(t)) << dtype_name(dt);
  }
}

TEST(Npy, RoundTripsScalarsEmptyAndOneDim) {
  for (Shape s : {Shape{}, Shape{0}, Shape{5}, Shape{2, 0, 3}}) {
    Tensor t(DType::f32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 0.5f * static_cast<float>(i);
    Tensor back = npy::read_bytes(npy::to_bytes(t), "t.npy");
    EXPECT_EQ(back.shape(), s);
    EXPECT_TRUE(back.bitwise_equal(t));
  }
  std::string one_dim = npy::to_bytes(Tensor(DType::i64, {5}));
  EXPECT_NE(one_dim.find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, ReadsVersion2And3Headers) {
  std::string data(8, '\0');
  float v[2] = {1.5f, -2.0f};
  std::memcpy(data.data(), v, 8);
  for (int major : {2, 3}) {
    Tensor t = npy::read_bytes(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, major),
                               "v.npy");
    ASSERT_EQ(t.shape(), Shape{2});
    EXPECT_EQ(t.data<float>()[1], -2.0f);
  }
}

TEST(Npy, AcceptsKeysInAnyOrderAndNonZeroBools) {
  Tensor t = npy::read_bytes(make_npy("{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"|b1\"}",
                                      std::string("\x00\x01\x07", 3)),
                             "b.npy");
  ASSERT_EQ(t.dtype(), DType::boolean);
  EXPECT_EQ(t.get_as_int(0), 0);
  EXPECT_EQ(t.get_as_int(2), 1);
}

TEST(Npy, ReportsTruncatedData) {
  std::string bytes = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 224, 224), }",
                               std::string(1000, '\0'));
  EXPECT_EQ(error_of(bytes), "input.npy: truncated: header says 602112 bytes, file has 1000");
}

TEST(Npy, ReportsMalformedFiles) {
  EXPECT_NE(error_of("hello").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x93NUMPY\x01", 7)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x93NUMPY\x01\x00\xff\x00{", 11)).find("truncated: header length"),
            std::string::npos);
  EXPECT_NE(error_of(std::string("\x93NUMPY\x07\x00\x00\x00", 10)).find("version 7.0"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'shape': (2,), }", "")).find("missing key 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", ""))
                .find("malformed .npy header"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", ""))
                .find("non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", ""))
                .find("unexpected key 'x'"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, "
                              "99999999999), }",
                              ""))
                .find("too large"),
            std::string::npos);
  // A zero extent must not hide an element count beyond int64 (tests/fuzz/regressions/npy).
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2305843009213693952, 4, 0), }", ""))
                .find("too large"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1152921504606846976), }", ""))
                .find("too large"),
            std::string::npos);
}

TEST(Npy, RejectsUnsupportedLayoutsAndDtypes) {
  std::string d8(8, '\0');
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", d8)).find("Fortran-order"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", d8)).find("big-endian"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", d8))
                .find("unsupported dtype '<f2'"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", d8)).find("4 unexpected bytes"),
            std::string::npos);
}

TEST(Npy, FileErrorsNameThePath) {
  try {
    npy::read_file("/nonexistent/x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/x.npy: cannot open file", 0), 0u) << e.what();
  }
  auto dir = std::filesystem::temp_directory_path() / "sy_npy_test";
  std::filesystem::create_directories(dir);
  auto path = (dir / "a.npy").string();
  Tensor t = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  npy::write_file(path, t);
  EXPECT_TRUE(npy::read_file(path).bitwise_equal(t));
  std::filesystem::remove_all(dir);
}
