// The three kinds of failure (STYLE rule 35), kept apart:
//  - bad input: sim::InputError, which the CLI reports as "file:/json/pointer: expected ..., got ..." and exit 2;
//  - a violated model invariant: sim::InvariantViolation, which the CLI reports with its stable id and the
//    offending component's state, and exit 3;
//  - a programming bug: an assert.
#pragma once

#include <stdexcept>
#include <string>

namespace sim {

/// Exit codes of the ibnetsim executable.
inline constexpr int exit_ok = 0;
inline constexpr int exit_input_error = 2;
inline constexpr int exit_invariant_violation = 3;

/// Bad user input: names the file, the JSON pointer, what was expected and what was found.
class InputError : public std::runtime_error {
public:
  InputError(std::string file, std::string json_pointer, std::string expected, std::string got);

  const std::string& file() const { return file_; }
  /// RFC 6901 pointer into the file's document; "" means the whole document.
  const std::string& json_pointer() const { return json_pointer_; }
  const std::string& expected() const { return expected_; }
  const std::string& got() const { return got_; }

private:
  std::string file_;
  std::string json_pointer_;
  std::string expected_;
  std::string got_;
};

/// A model invariant does not hold: the run is wrong and must stop (exit 3).
class InvariantViolation : public std::runtime_error {
public:
  /// `id` is stable and greppable (`credit-conservation`); `component` names the instance (`s3/p7 vl2`);
  /// `state` is a dump of that component's state.
  InvariantViolation(std::string id, std::string component, std::string detail, std::string state);

  const std::string& id() const { return id_; }
  const std::string& component() const { return component_; }
  const std::string& detail() const { return detail_; }
  const std::string& state() const { return state_; }

private:
  std::string id_;
  std::string component_;
  std::string detail_;
  std::string state_;
};

} // namespace sim
