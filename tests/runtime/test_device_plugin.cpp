// Device plugins: a DeviceAPI found at run time as libloom_device_<name>.so, and the error when none is.
#include <QtTest>

#include "runtime/DeviceAPI.h"
#include "runtime/NDArray.h"
#include "runtime/RuntimeFailure.h"

using namespace loom::runtime;

class TestDevicePlugin : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    // A missing directory first: the search goes on to the next one.
    qputenv("LOOM_DEVICE_PATH", QByteArray("/nonexistent/loom:") + FIXTURE_DEVICE_DIR);
  }

  void pluginIsFoundAndUsed() {
    DeviceAPI* api = DeviceAPI::find(DeviceType::OpenCL);
    QVERIFY(api);
    Device dev{DeviceType::OpenCL, 0};
    QCOMPARE(std::get<std::string>(api->attr(dev, DeviceAttr::DeviceName)),
             std::string("host-backed opencl plugin"));
    QCOMPARE(DeviceAPI::get(DeviceType::OpenCL), api);  // loaded once
    {
      NDArray host = NDArray::empty({3, 5}, DType::f32());
      for (int i = 0; i < 15; ++i) host.as<float>()[i] = float(i) / 3.0f;
      NDArray onDev = NDArray::empty({3, 5}, DType::f32(), dev);
      QCOMPARE(std::get<int64_t>(api->attr(dev, DeviceAttr::MaxThreadsPerBlock)), int64_t(1));
      onDev.copyFrom(host);
      NDArray back = onDev.copy();
      QCOMPARE(std::get<int64_t>(api->attr(dev, DeviceAttr::MaxThreadsPerBlock)), int64_t(2));
      NDArray result = NDArray::empty({3, 5}, DType::f32());
      result.copyFrom(back);
      for (int i = 0; i < 15; ++i) QCOMPARE(result.as<float>()[i], float(i) / 3.0f);
    }
    QCOMPARE(std::get<int64_t>(api->attr(dev, DeviceAttr::MaxThreadsPerBlock)), int64_t(0));
  }

  void missingPluginIsReported() {
    QVERIFY(DeviceAPI::find(DeviceType::CUDA) == nullptr);
    try {
      NDArray::empty({2}, DType::f32(), Device{DeviceType::CUDA, 0});
      QFAIL("no exception");
    } catch (const RuntimeFailure& e) {
      QString msg = e.what();
      QVERIFY2(msg.startsWith("no device API for cuda (only cpu is built in): no plugin "
                              "libloom_device_cuda.so"),
               qPrintable(msg));
    }
  }
};

QTEST_APPLESS_MAIN(TestDevicePlugin)
#include "test_device_plugin.moc"
