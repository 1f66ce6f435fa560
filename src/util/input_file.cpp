#include "util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.hpp"
#include "util/host_memory.hpp"
#include "util/text.hpp"

namespace cuboid {

std::string read_input_file(const std::string& path, std::size_t max_bytes,
                            const std::string& what) {
  const std::string name = clip(path, 200);
  auto fail = [&](const std::string& why) -> std::string {
    throw Error(name + ": cannot open " + what + ": " + why);
  };
  if (path.empty()) throw Error("cannot open " + what + ": the path is empty");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected just below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail("it is a directory");
  if (!S_ISREG(st.st_mode)) fail("it is not a regular file");
  if (std::size_t(st.st_size) > max_bytes)
    fail("it holds " + human_bytes(double(st.st_size)) + ", more than the " +
         human_bytes(double(max_bytes)) + " such a file may have");
  // Room for one byte beyond the size seen, so that a file growing meanwhile is noticed.
  std::string text(std::size_t(st.st_size) + 1, '\0');
  std::size_t got = 0;
  for (;;) {
    const ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(std::strerror(errno));
    }
    if (r == 0) break;
    got += std::size_t(r);
    if (got > max_bytes) fail("it holds more than " + human_bytes(double(max_bytes)));
    if (got == text.size()) text.resize(std::min(max_bytes + 1, text.size() * 2 + 4096));
  }
  text.resize(got);
  return text;
}

}  // namespace cuboid
