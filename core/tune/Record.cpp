// TuningRecord JSON form.
#include "core/tune/Record.h"

#include <ctime>
#include <limits>
#include <numeric>

#include "core/support/Error.h"

#ifndef LOOM_VERSION
#define LOOM_VERSION "unknown"
#endif

namespace loom::tune {

double TuningRecord::meanMs() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  return std::accumulate(timesMs.begin(), timesMs.end(), 0.0) / double(timesMs.size());
}

nlohmann::json TuningRecord::toJson() const {
  nlohmann::json j;
  j["workload"] = workload;
  j["target"] = target;
  j["trace"] = trace;
  j["times_ms"] = timesMs;
  j["error_kind"] = errorKind;
  j["error_message"] = errorMessage;
  j["version"] = version;
  j["timestamp"] = timestamp;
  if (cacheFlush) j["cache_flush"] = true;
  if (retime) j["retime"] = true;
  if (!host.empty()) j["host"] = host;
  return j;
}

TuningRecord TuningRecord::fromJson(const nlohmann::json& j) {
  if (!j.is_object()) LOOM_THROW(ParseError) << "tuning record: expected a JSON object";
  auto str = [&](const char* key, bool required) -> std::string {
    if (!j.contains(key)) {
      if (required) LOOM_THROW(ParseError) << "tuning record: missing field '" << key << "'";
      return {};
    }
    if (!j[key].is_string()) LOOM_THROW(ParseError) << "tuning record: field '" << key << "' is not a string";
    return j[key].get<std::string>();
  };
  TuningRecord r;
  r.workload = str("workload", true);
  r.target = str("target", true);
  if (!j.contains("trace") || !j["trace"].is_object())
    LOOM_THROW(ParseError) << "tuning record: missing or non-object field 'trace'";
  r.trace = j["trace"];
  if (j.contains("times_ms")) {
    if (!j["times_ms"].is_array()) LOOM_THROW(ParseError) << "tuning record: field 'times_ms' is not a list";
    for (auto& t : j["times_ms"]) {
      if (!t.is_number()) LOOM_THROW(ParseError) << "tuning record: a time in 'times_ms' is not a number";
      r.timesMs.push_back(t.get<double>());
    }
  }
  r.errorKind = str("error_kind", false);
  r.errorMessage = str("error_message", false);
  r.version = str("version", false);
  r.timestamp = str("timestamp", false);
  r.host = str("host", false);
  if (j.contains("cache_flush")) {
    if (!j["cache_flush"].is_boolean()) LOOM_THROW(ParseError) << "tuning record: field 'cache_flush' is not a boolean";
    r.cacheFlush = j["cache_flush"].get<bool>();
  }
  if (j.contains("retime")) {
    if (!j["retime"].is_boolean()) LOOM_THROW(ParseError) << "tuning record: field 'retime' is not a boolean";
    r.retime = j["retime"].get<bool>();
  }
  return r;
}

std::string utcTimestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string loomVersion() { return LOOM_VERSION; }

} // namespace loom::tune
