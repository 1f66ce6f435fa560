#pragma once
// The command line prints an Error's what() after "cuboid: error: " and exits non-zero; the
// library hands both kinds to its caller.
#include <cuboid/error.hpp>
