#include <iostream>

#include "sim/cli/commands.h"

int main(int argc, char** argv) {
  return cli::run_command_line(argc, argv, std::cout, std::cerr);
}
