#include "support/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/error.h"

namespace sy {

MappedFile::MappedFile(const std::string& path, size_t size, const std::string& what) : size_(size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open " + what + ": " + std::strerror(errno));
  if (size_ == 0) {
    ::close(fd);
    return;
  }
  data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    throw Error("cannot map " + what + ": " + std::strerror(err));
  }
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

std::string_view MappedFile::view() const {
  return data_ ? std::string_view(static_cast<const char*>(data_), size_) : std::string_view();
}

}  // namespace sy
