#include "sim/errors.h"

#include <utility>

namespace sim {

namespace {
std::string input_message(const std::string& file, const std::string& pointer, const std::string& expected,
                          const std::string& got) {
  // Pointer "" is the whole document; show it as "/" so the location is never blank.
  return file + ":" + (pointer.empty() ? "/" : pointer) + ": expected " + expected + ", got " + got;
}
} // namespace

InputError::InputError(std::string file, std::string json_pointer, std::string expected, std::string got)
    : std::runtime_error(input_message(file, json_pointer, expected, got)), file_(std::move(file)),
      json_pointer_(std::move(json_pointer)), expected_(std::move(expected)), got_(std::move(got)) {}

InvariantViolation::InvariantViolation(std::string id, std::string component, std::string detail, std::string state)
    : std::runtime_error("invariant violated [" + id + "] " + component + ": " + detail), id_(std::move(id)),
      component_(std::move(component)), detail_(std::move(detail)), state_(std::move(state)) {}

} // namespace sim
