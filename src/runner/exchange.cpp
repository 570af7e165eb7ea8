#include "runner/exchange.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace genbench {

// JSON form of a ceiling row (DeviceInfo's comes from its field table in backend.h).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Ceiling, rank, name, value, unit, detail)

namespace {

// JSON has no NaN: a missing reading travels as null and comes back as NaN.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
double number(const nlohmann::json& j) { return j.is_number() ? j.get<double>() : std::nan(""); }

nlohmann::json state_json(const DeviceState& s) {
  return {{"valid", s.valid},
          {"sm_clock_mhz", number(s.sm_clock_mhz)},
          {"mem_clock_mhz", number(s.mem_clock_mhz)},
          {"power_w", number(s.power_w)},
          {"temperature_c", number(s.temperature_c)},
          {"throttle_reasons", s.throttle_reasons},
          {"throttled", s.throttled}};
}

DeviceState state_of(const nlohmann::json& j) {
  DeviceState s;
  s.valid = j.at("valid").get<bool>();
  s.sm_clock_mhz = number(j.at("sm_clock_mhz"));
  s.mem_clock_mhz = number(j.at("mem_clock_mhz"));
  s.power_w = number(j.at("power_w"));
  s.temperature_c = number(j.at("temperature_c"));
  s.throttle_reasons = j.at("throttle_reasons").get<std::uint64_t>();
  s.throttled = j.at("throttled").get<bool>();
  return s;
}

template <class T, class Decode>
std::vector<T> gather_as(const Comm& comm, const std::string& mine, Decode decode) {
  std::vector<T> out;
  for (const auto& text : comm.gather(mine)) out.push_back(decode(text));
  return out;
}

}  // namespace

namespace exchange {

std::string encode(const DeviceInfo& d) { return to_json(d); }
DeviceInfo decode_device(const std::string& text) { return device_info_from_json(text); }

std::string encode(const std::vector<Ceiling>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : rows) {
    nlohmann::json x = c;
    x["value"] = number(c.value);
    j.push_back(std::move(x));
  }
  return j.dump();
}

std::vector<Ceiling> decode_ceilings(const std::string& text) {
  std::vector<Ceiling> rows;
  for (const auto& x : nlohmann::json::parse(text)) {
    Ceiling c;
    c.rank = x.at("rank").get<int>();
    c.name = x.at("name").get<std::string>();
    c.value = number(x.at("value"));
    c.unit = x.at("unit").get<std::string>();
    c.detail = x.at("detail").get<std::string>();
    rows.push_back(std::move(c));
  }
  return rows;
}

std::string encode(const RankPoint& p) {
  nlohmann::json extra = nlohmann::json::array(), chosen = nlohmann::json::array();
  for (const auto& [name, v] : p.extra) extra.push_back({name, number(v)});
  for (const auto& [name, v] : p.chosen) chosen.push_back({name, v});
  return nlohmann::json{{"peak_bytes", p.peak_bytes},
                        {"memory_delta", p.memory_delta},
                        {"state", state_json(p.state)},
                        {"extra", extra},
                        {"chosen", chosen}}
      .dump();
}

RankPoint decode_point(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankPoint p;
  p.peak_bytes = j.at("peak_bytes").get<std::int64_t>();
  p.memory_delta = j.at("memory_delta").get<std::int64_t>();
  p.state = state_of(j.at("state"));
  for (const auto& x : j.at("extra")) p.extra.emplace_back(x.at(0).get<std::string>(), number(x.at(1)));
  for (const auto& x : j.at("chosen")) p.chosen.emplace_back(x.at(0).get<std::string>(), x.at(1).get<std::string>());
  return p;
}

std::string encode(const DoneSet& d) { return nlohmann::json(d).dump(); }
DoneSet decode_done(const std::string& text) { return nlohmann::json::parse(text).get<DoneSet>(); }

std::vector<DeviceInfo> gather_devices(const Comm& comm, const DeviceInfo& mine) {
  return gather_as<DeviceInfo>(comm, encode(mine), decode_device);
}

std::vector<Ceiling> gather_ceilings(const Comm& comm, const std::vector<Ceiling>& mine) {
  std::vector<Ceiling> all;
  for (const auto& text : comm.gather(encode(mine)))
    for (auto& c : decode_ceilings(text)) all.push_back(std::move(c));
  return all;
}

std::vector<RankPoint> gather_point(const Comm& comm, const RankPoint& mine) {
  return gather_as<RankPoint>(comm, encode(mine), decode_point);
}

void broadcast_done(const Comm& comm, DoneSet& done) {
  std::string text = comm.is_root() ? encode(done) : std::string();
  comm.broadcast(text);
  if (!comm.is_root()) done = decode_done(text);
}

}  // namespace exchange
}  // namespace genbench
