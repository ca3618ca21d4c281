// The cost model interface: predicts a score (higher is faster) for candidate programs from their
// feature rows, trained online from measurements.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace loom::tune {

/// The XGBoost library reported an error (its message attached).
LOOM_DECLARE_ERROR(CostModelError, RuntimeError);

class CostModel {
public:
  virtual ~CostModel() = default;
  /// Adds measured programs (feature rows; mean time in ms, +inf for failures) and retrains.
  virtual void update(const std::vector<std::vector<float>>& features, const std::vector<double>& timesMs) = 0;
  /// Scores for programs (higher: predicted faster). Before any training: all zero.
  virtual std::vector<double> predict(const std::vector<std::vector<float>>& features) const = 0;
  /// How many measurements it was trained on.
  virtual size_t trainedOn() const = 0;
};

struct XGBoostOptions {
  int rounds = 80;
  int maxDepth = 6;
  double eta = 0.2;
  double minChildWeight = 1;
  int threads = 1;
  uint64_t seed = 1;
};

/// Gradient-boosted trees (libxgboost's C API) regressing normalized throughput
/// (best time / time, 0 for failures) per workload, retrained from all data on each update.
std::unique_ptr<CostModel> makeXGBoostModel(const XGBoostOptions& options = {});

/// A model retrained on a background thread: update() hands all data so far to a fresh model made
/// by `make` and returns at once; predict() and trainedOn() use the last model whose training
/// finished (data that arrives while one trains starts the next training). Pipelined tuning uses
/// it so that retraining never holds up handing out candidates. With `retrainEvery` > 1, a new
/// training starts only once that many results arrived since the last one started (the first one
/// too): many workers then do not keep a core retraining. The first
/// training alone is waited for by the next predict() / trainedOn(): until a model exists the
/// search can only propose at random.
std::unique_ptr<CostModel> makeBackgroundModel(std::function<std::unique_ptr<CostModel>()> make,
                                               size_t retrainEvery = 1);

} // namespace loom::tune
