// Tests of base64 encoding and strict decoding (RFC 4648 vectors, malformed input).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/base64.h"

using namespace sy;

namespace {
std::string enc(const std::string& s) { return base64_encode(s.data(), s.size()); }
bool dec(const std::string& text, std::string& out) {
  std::vector<uint8_t> v;
  if (!base64_decode(text, v)) return false;
  out.assign(v.begin(), v.end());
  return true;
}
}  // namespace

TEST(Base64, Rfc4648Vectors) {
  const char* vectors[][2] = {{"", ""},         {"f", "Zg=="},       {"fo", "Zm8="},        {"foo", "Zm9v"},
                              {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (auto& v : vectors) {
    EXPECT_EQ(enc(v[0]), v[1]);
    EXPECT_EQ(base64_encoded_size(std::string(v[0]).size()), std::string(v[1]).size());
    std::string back;
    ASSERT_TRUE(dec(v[1], back)) << v[1];
    EXPECT_EQ(back, v[0]);
  }
}

TEST(Base64, AllByteValuesRoundTrip) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  std::string back;
  ASSERT_TRUE(dec(enc(all), back));
  EXPECT_EQ(back, all);
}

TEST(Base64, RejectsMalformedInput) {
  std::string out;
  for (const char* bad : {"Zg=", "Zg", "Z===", "Zm9v!A==", "Zm 9v", "Zh==", "Zm9=", "=Zm9", "Zm=v", "Zg==Zg=="})
    EXPECT_FALSE(dec(bad, out)) << bad;
  char buf[3];
  EXPECT_FALSE(base64_decode_into("Zm9v", buf, 2));  // decodes to 3 bytes, not 2
  EXPECT_TRUE(base64_decode_into("Zm9v", buf, 3));
  EXPECT_EQ(std::string(buf, 3), "foo");
}
