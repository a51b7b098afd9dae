// The kiln tool's subcommands, each on its checked command line (arguments.hpp).
#pragma once

#include "arguments.hpp"

namespace kiln::tool {

/// Each returns the process exit code; errors are thrown as std::exception
/// and printed by main as one line.
int execute(const HelpCommand& command);
int execute(const ListCommand& command);
int execute(const InfoCommand& command);
int execute(const RunCommand& command);
int execute(const DumpCommand& command);
int execute(const BenchCommand& command);

}  // namespace kiln::tool
