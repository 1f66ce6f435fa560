#include "util/atomic_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"
#include "util/text.hpp"

namespace cuboid {
namespace {

std::string where(const std::string& flag, const std::string& path) {
  return flag + " '" + clip(path, 200) + "'";
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A new, empty file beside `path` (same directory, so that rename is atomic); its name.
std::string make_temp(const std::string& flag, const std::string& path, const char* tag, int& fd) {
  std::string name =
      directory_of(path) + "/." + base_of(path).substr(0, 100) + "." + tag + "-XXXXXX";
  fd = ::mkstemp(name.data());
  if (fd < 0)
    throw Error(where(flag, path) + ": cannot create a file in '" + clip(directory_of(path), 200) +
                "': " + std::strerror(errno));
  return name;
}

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t w = ::write(fd, s.data() + done, s.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += std::size_t(w);
  }
  return ::fsync(fd) == 0;
}

}  // namespace

void check_output_path(const std::string& flag, const std::string& path) {
  if (path.empty()) throw Error(flag + ": the path is empty (give a file name)");
  if (path.back() == '/') throw Error(where(flag, path) + ": names a directory, not a file");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(where(flag, path) + ": is a directory, not a file");
    if (!S_ISREG(st.st_mode)) throw Error(where(flag, path) + ": exists and is not a regular file");
  }
  const std::string dir = directory_of(path);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0)
    throw Error(where(flag, path) + ": its directory '" + clip(dir, 200) +
                "' does not exist: " + std::strerror(errno));
  if (!S_ISDIR(ds.st_mode))
    throw Error(where(flag, path) + ": '" + clip(dir, 200) + "' is not a directory");
  int fd = -1;
  const std::string probe = make_temp(flag, path, "cuboid-probe", fd);
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_outputs(const std::vector<OutputFile>& files) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  std::vector<std::string> temps;
  auto drop_temps = [&] {
    for (const auto& t : temps) ::unlink(t.c_str());
  };
  try {
    for (const auto& f : files) {
      check_output_path(f.flag, f.path);
      int fd = -1;
      temps.push_back(make_temp(f.flag, f.path, "cuboid-tmp", fd));
      const bool ok = write_all(fd, f.content);
      const int err = errno;
      ::close(fd);
      if (!ok) throw Error(where(f.flag, f.path) + ": writing failed: " + std::strerror(err));
      ::chmod(temps.back().c_str(), 0666 & ~mask);  // mkstemp made it 0600
    }
  } catch (...) {
    drop_temps();
    throw;
  }
  // Keep what each target held, to put it back if a later rename fails.
  struct Done {
    std::string path, backup;  // backup empty: the target did not exist
  };
  std::vector<Done> done;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i].path;
    std::string backup;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      int fd = -1;
      backup = make_temp(files[i].flag, path, "cuboid-old", fd);
      ::close(fd);
      ::unlink(backup.c_str());
      if (::link(path.c_str(), backup.c_str()) != 0) backup.clear();
    }
    if (::rename(temps[i].c_str(), path.c_str()) != 0) {
      const int err = errno;
      if (!backup.empty()) ::unlink(backup.c_str());
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        if (it->backup.empty())
          ::unlink(it->path.c_str());
        else
          ::rename(it->backup.c_str(), it->path.c_str());
      }
      for (std::size_t j = i; j < temps.size(); ++j) ::unlink(temps[j].c_str());
      throw Error(where(files[i].flag, path) + ": cannot put the file in place: " +
                  std::strerror(err) + " (no output was written)");
    }
    done.push_back({path, backup});
  }
  for (const auto& d : done)
    if (!d.backup.empty()) ::unlink(d.backup.c_str());
}

}  // namespace cuboid
