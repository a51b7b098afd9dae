// kiln: list, run, check, time and dump the sample kernels.
#include <exception>
#include <iostream>
#include <stdexcept>
#include <variant>

#include "arguments.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  try {
    const kiln::tool::Command command = kiln::tool::parse_command_line(argc, argv);
    return std::visit([](const auto& checked) { return kiln::tool::execute(checked); }, command);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "kiln: " << e.what() << "\n";
    return 1;
  }
}
