#pragma once
// Output files written all or nothing. Every path is checked when the command starts (before
// any work), so that a bad --json or --svg is an input error and not a lost run; the contents
// are written to temporary files beside their targets and renamed into place only once all of
// them were written. If a rename fails, the targets already replaced get their old contents
// back (or are removed when they did not exist), so no half-set of files is left.
#include <string>
#include <vector>

namespace cuboid {

struct OutputFile {
  std::string flag;  // what named the path, for messages: "--json", "--svg"
  std::string path;
  std::string content;
};

// Throws cuboid::Error "FLAG PATH: why" unless `path` can be written: not empty, not a
// directory or other non-regular file, its directory exists and accepts a new file (tried by
// creating and removing one).
void check_output_path(const std::string& flag, const std::string& path);

// Writes every file or none (see above). Throws cuboid::Error naming the flag and path.
void write_outputs(const std::vector<OutputFile>& files);

}  // namespace cuboid
