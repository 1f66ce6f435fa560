#pragma once
// Reading a file the user named: regular files only (not a directory, a FIFO or /dev/zero) and
// never more than a stated size, so that a wrong path is an error and not a hang or an
// exhausted memory.
#include <cstddef>
#include <string>

namespace cuboid {

// The whole content of `path`. Throws cuboid::Error "PATH: cannot open WHAT: why" when it does
// not exist, is not a regular file, cannot be read, or holds more than `max_bytes`.
std::string read_input_file(const std::string& path, std::size_t max_bytes,
                            const std::string& what);

}  // namespace cuboid
