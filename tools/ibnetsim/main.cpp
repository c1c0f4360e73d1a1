#include <iostream>

#include "sim/memory.h"
#include "tools/ibnetsim/commands.h"

int main(int argc, char** argv) {
  sim::back_heap_with_huge_pages();
  return cli::run_command_line(argc, argv, std::cout, std::cerr);
}
