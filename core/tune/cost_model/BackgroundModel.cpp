// A cost model retrained on a background thread (pipelined tuning): the search keeps predicting
// with the last finished model while the next one trains.
#include <algorithm>
#include <future>
#include <mutex>

#include "core/tune/CostModel.h"
#include "core/tune/CpuProfile.h"

namespace loom::tune {

namespace {

class BackgroundModel : public CostModel {
public:
  BackgroundModel(std::function<std::unique_ptr<CostModel>()> make, size_t retrainEvery)
      : m_make(std::move(make)), m_every(std::max<size_t>(1, retrainEvery)) {}
  ~BackgroundModel() override {
    if (m_training.valid()) m_training.wait();
  }

  void update(const std::vector<std::vector<float>>& features, const std::vector<double>& timesMs) override {
    LOOM_ICHECK(features.size() == timesMs.size()) << "features and times differ in count";
    m_x.insert(m_x.end(), features.begin(), features.end());
    m_t.insert(m_t.end(), timesMs.begin(), timesMs.end());
    m_dirty = true;
    poll();
  }

  std::vector<double> predict(const std::vector<std::vector<float>>& features) const override {
    poll();
    if (!m_current) return std::vector<double>(features.size(), 0.0);
    return m_current->predict(features);
  }

  size_t trainedOn() const override {
    poll();
    return m_current ? m_current->trainedOn() : 0;
  }

private:
  /// Takes a finished training, and starts the next one when data arrived since.
  void poll() const {
    if (m_training.valid()) {
      // The first model is waited for (once, a training on the first K points): without it the
      // search proposes at random, and with fast results several batches would go by.
      if (m_current && m_training.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
      m_current = m_training.get(); // rethrows a CostModelError of the training
    }
    if (!m_dirty) return;
    // A training every m_every new results (the first one too).
    if (m_x.size() - m_started < m_every) return;
    m_dirty = false;
    m_started = m_x.size();
    m_training = std::async(std::launch::async, [make = m_make, x = m_x, t = m_t] {
      cpu::Scope profile(cpu::Phase::Training);
      std::unique_ptr<CostModel> m = make();
      m->update(x, t);
      return std::shared_ptr<CostModel>(std::move(m));
    });
  }

  std::function<std::unique_ptr<CostModel>()> m_make;
  std::vector<std::vector<float>> m_x;
  std::vector<double> m_t;
  size_t m_every;
  mutable bool m_dirty = false;
  mutable size_t m_started = 0; ///< data rows the last training started with
  mutable std::shared_ptr<CostModel> m_current;
  mutable std::future<std::shared_ptr<CostModel>> m_training;
};

} // namespace

std::unique_ptr<CostModel> makeBackgroundModel(std::function<std::unique_ptr<CostModel>()> make, size_t retrainEvery) {
  return std::make_unique<BackgroundModel>(std::move(make), retrainEvery);
}

} // namespace loom::tune
