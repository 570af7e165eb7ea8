#pragma once
// Fault injection for reliability tests: GENBENCH_INJECT_FAULT="rank=R,point=K,kind=KIND"
// (optionally ",bench=NAME" and ",call=NAME") makes rank R misbehave at point K (the point's
// index in its benchmark, the `point` column of the result file). Read once per run; inert
// when unset. Kinds:
//   error  a fatal device-style error in CALL (default cudaLaunchKernel): the job aborts
//   hang   the rank skips the point's first collective and stalls (the watchdog's case)
//   wrong  the rank's result is wrong: validation fails, the point is recorded as failed
//   oom    the rank's allocation fails: the point is skipped with the reason
//   skip_collective  cuda backend: the rank leaves out the point's first NCCL collective (it
//          returns without enqueuing it), so its peers wait inside a real NCCL kernel until the
//          watchdog aborts the job. Host backend: as hang.
//   device_error     cuda backend: a kernel that traps runs on the rank's stream; the next
//          checked CUDA call reports the device's error and the job aborts. Host backend: as
//          error.
//   held   the rank's device state during the point's timed iterations reads as held back by
//          the software power cap (valid, clocks-event reason 0x4): the point is timed as usual
//          and reported as held back (progress line, summary, file, analysis warning), or
//          re-timed where timing.retime_held allows. ",times=N": held for the point's first N
//          timings only (its re-timing then finds the card free).
// The host-simulated kinds (error, hang, wrong, oom, held) behave the same on either backend.
// See docs/reliability.md.
#include <cstddef>
#include <string>

#include "backend/backend.h"
#include "ops/implementation.h"

namespace genbench {

class FaultPlan {
 public:
  enum class Kind { none, error, hang, wrong, oom, skip_collective, device_error, held };

  // Parses GENBENCH_INJECT_FAULT; throws UsageError when it is set but malformed.
  static FaultPlan from_env();
  static FaultPlan parse(const std::string& spec);  // same, from a string ("" = none)

  bool active() const { return kind_ != Kind::none; }
  Kind kind() const { return kind_; }
  bool hits(int rank, const std::string& bench, std::size_t point) const;

  const std::string& call() const { return call_; }

  // At the start of a point, before its first collective: `error` throws Error naming the
  // call, the point, the rank and host; `hang` stalls forever (until the watchdog aborts);
  // `skip_collective` arms the skip of the next NCCL collective; `device_error` makes the
  // device fault and throws the Error of the CUDA call that reports it (see above for the
  // host backend).
  void at_point_start(int rank, const std::string& bench, std::size_t point, Backend& backend) const;
  // Before prepare: `oom` throws OutOfMemory.
  void before_prepare(int rank, const std::string& bench, std::size_t point) const;
  // After validate: `wrong` turns the validation into a failure with a large error measure.
  void after_validate(int rank, const std::string& bench, std::size_t point, Validation& v) const;
  // After the timed iterations: `held` marks the state sampled during them as capped.
  void after_timing(int rank, const std::string& bench, std::size_t point, DeviceState& during) const;

 private:
  Kind kind_ = Kind::none;
  int rank_ = 0;
  long long point_ = 0;
  std::string bench_;    // "" = every benchmark
  long long times_ = 0;  // held: the timings it holds back (0: every one)
  mutable long long held_so_far_ = 0;
  std::string call_ = "cudaLaunchKernel";
};

}  // namespace genbench
