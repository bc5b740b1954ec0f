// A read-only private mapping of a whole file: large inputs (models, artifacts) are read in place
// instead of being copied into a buffer first.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace sy {

class MappedFile {
 public:
  // Maps the first `size` bytes of path (the file's size, known to the caller). Throws sy::Error
  // "cannot open <what>: ..." / "cannot map <what>: ..." naming the OS error.
  MappedFile(const std::string& path, size_t size, const std::string& what);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view view() const;

 private:
  void* data_ = nullptr;
  size_t size_;
};

}  // namespace sy
