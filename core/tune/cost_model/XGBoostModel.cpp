// The XGBoost cost model (via xgboost/c_api.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <xgboost/c_api.h>

#include "core/tune/CostModel.h"
#include "core/tune/Features.h"

namespace loom::tune {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) LOOM_THROW(tune::CostModelError) << "xgboost " << what << " failed: " << XGBGetLastError();
}

/// Owns a DMatrix built from rows.
class Matrix {
public:
  explicit Matrix(const std::vector<std::vector<float>>& rows) {
    size_t cols = featureCount();
    std::vector<float> flat;
    flat.reserve(rows.size() * cols);
    for (auto& r : rows) {
      LOOM_ICHECK(r.size() == cols) << "feature row of " << r.size() << " entries, expected " << cols;
      flat.insert(flat.end(), r.begin(), r.end());
    }
    check(XGDMatrixCreateFromMat(flat.data(), bst_ulong(rows.size()), bst_ulong(cols), NAN, &m_h),
          "XGDMatrixCreateFromMat");
  }
  ~Matrix() {
    if (m_h) XGDMatrixFree(m_h);
  }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle get() const { return m_h; }

private:
  DMatrixHandle m_h = nullptr;
};

class XGBoostModel : public CostModel {
public:
  explicit XGBoostModel(const XGBoostOptions& o) : m_opts(o) {}
  ~XGBoostModel() override {
    if (m_booster) XGBoosterFree(m_booster);
  }

  void update(const std::vector<std::vector<float>>& features, const std::vector<double>& timesMs) override {
    LOOM_ICHECK(features.size() == timesMs.size()) << "features and times differ in count";
    m_x.insert(m_x.end(), features.begin(), features.end());
    m_t.insert(m_t.end(), timesMs.begin(), timesMs.end());
    double best = INFINITY;
    for (double t : m_t)
      if (std::isfinite(t) && t > 0) best = std::min(best, t);
    if (!std::isfinite(best)) return; // nothing succeeded yet
    std::vector<float> labels;
    for (double t : m_t) labels.push_back(std::isfinite(t) && t > 0 ? float(best / t) : 0.0f);
    Matrix dtrain(m_x);
    check(XGDMatrixSetFloatInfo(dtrain.get(), "label", labels.data(), bst_ulong(labels.size())),
          "XGDMatrixSetFloatInfo");
    if (m_booster) XGBoosterFree(m_booster);
    m_booster = nullptr;
    DMatrixHandle mats[1] = {dtrain.get()};
    check(XGBoosterCreate(mats, 1, &m_booster), "XGBoosterCreate");
    auto set = [&](const char* k, const std::string& v) { check(XGBoosterSetParam(m_booster, k, v.c_str()), "XGBoosterSetParam"); };
    set("objective", "reg:squarederror");
    set("max_depth", std::to_string(m_opts.maxDepth));
    set("eta", std::to_string(m_opts.eta));
    set("min_child_weight", std::to_string(m_opts.minChildWeight));
    set("nthread", std::to_string(m_opts.threads));
    set("seed", std::to_string(m_opts.seed));
    set("verbosity", "0");
    for (int i = 0; i < m_opts.rounds; ++i) check(XGBoosterUpdateOneIter(m_booster, i, dtrain.get()), "XGBoosterUpdateOneIter");
    m_trained = m_t.size();
  }

  std::vector<double> predict(const std::vector<std::vector<float>>& features) const override {
    std::vector<double> out(features.size(), 0.0);
    if (!m_booster || features.empty()) return out;
    Matrix d(features);
    bst_ulong len = 0;
    const float* res = nullptr;
    check(XGBoosterPredict(m_booster, d.get(), 0, 0, 0, &len, &res), "XGBoosterPredict");
    LOOM_ICHECK(len == features.size()) << "xgboost returned " << len << " predictions";
    for (size_t i = 0; i < out.size(); ++i) out[i] = res[i];
    return out;
  }

  size_t trainedOn() const override { return m_trained; }

private:
  XGBoostOptions m_opts;
  BoosterHandle m_booster = nullptr;
  std::vector<std::vector<float>> m_x;
  std::vector<double> m_t;
  size_t m_trained = 0;
};

} // namespace

std::unique_ptr<CostModel> makeXGBoostModel(const XGBoostOptions& options) {
  return std::make_unique<XGBoostModel>(options);
}

} // namespace loom::tune
