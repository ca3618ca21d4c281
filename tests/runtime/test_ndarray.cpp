// NDArray and DeviceAPI: aligned allocation, copies, bad shapes, the CPU device, and a registered device.
#include <QtTest>

#include <cstring>
#include <map>
#include <random>

#include "loom/c_runtime_api.h"
#include "runtime/DeviceAPI.h"
#include "runtime/NDArray.h"
#include "runtime/RuntimeFailure.h"

using namespace loom::runtime;

namespace {

// A pretend accelerator: host memory behind a DeviceAPI that counts what it is asked.
class FakeDeviceAPI : public DeviceAPI {
public:
  int* allocs;
  int* frees;
  int* copies;
  FakeDeviceAPI(int* a, int* f, int* c) : allocs(a), frees(f), copies(c) {}
  void* allocData(Device, size_t nbytes, size_t alignment, DType) override {
    ++*allocs;
    return std::aligned_alloc(alignment, (nbytes + alignment - 1) / alignment * alignment + alignment);
  }
  void freeData(Device, void* ptr) override {
    ++*frees;
    std::free(ptr);
  }
  void copyData(const void* from, size_t fromOffset, void* to, size_t toOffset, size_t nbytes,
                Device, Device) override {
    ++*copies;
    std::memcpy(static_cast<char*>(to) + toOffset, static_cast<const char*>(from) + fromOffset, nbytes);
  }
  void sync(Device) override {}
  AttrValue attr(Device, DeviceAttr kind) override {
    if (kind == DeviceAttr::WarpSize) return int64_t(32);
    return {};
  }
};

}  // namespace

class TestNDArray : public QObject {
  Q_OBJECT
private slots:
  void alignedAndZeroed() {
    std::vector<NDArray> keep;
    for (int64_t n : {0, 1, 3, 63, 64, 65, 1000, 4097}) {
      for (DType t : {DType::f32(), DType{DType::Int, 8, 1}, DType{DType::Float, 64, 1},
                      DType{DType::Bool, 1, 1}, DType{DType::Float, 32, 4}}) {
        NDArray a = NDArray::empty({n}, t);
        QVERIFY(a.defined());
        QCOMPARE(reinterpret_cast<uintptr_t>(a.data()) % NDArray::kAlignment, uintptr_t(0));
        QCOMPARE(a.numel(), n);
        QCOMPARE(a.byteSize(), size_t(n) * t.bytes());
        auto* bytes = static_cast<unsigned char*>(a.data());
        for (size_t i = 0; i < a.byteSize(); ++i)
          if (bytes[i] != 0) QFAIL("not zero-filled");
        std::memset(a.data(), 0xff, a.byteSize());  // the whole size is writable
        keep.push_back(a);
      }
    }
    NDArray scalar = NDArray::empty({}, DType::f32());
    QCOMPARE(scalar.numel(), int64_t(1));
    QCOMPARE(scalar.byteSize(), size_t(4));
  }

  void copiesAreDeepAndHandlesShare() {
    std::mt19937 rng(3);
    NDArray a = NDArray::empty({4, 5, 6}, DType::f32());
    for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = float(rng() % 1000) / 7.0f;
    NDArray shared = a;
    QCOMPARE(shared.data(), a.data());
    NDArray c = a.copy();
    QVERIFY(c.data() != a.data());
    QCOMPARE(c.shape(), a.shape());
    QCOMPARE(c.dtype(), a.dtype());
    QCOMPARE(std::memcmp(c.data(), a.data(), a.byteSize()), 0);
    a.as<float>()[0] = -1.0f;
    QCOMPARE(shared.as<float>()[0], -1.0f);
    QVERIFY(c.as<float>()[0] != -1.0f);

    NDArray d = NDArray::empty({4, 5, 6}, DType::f32());
    d.copyFrom(a);
    QCOMPARE(std::memcmp(d.data(), a.data(), a.byteSize()), 0);
    std::vector<float> host(120);
    d.copyToBytes(host.data(), host.size() * 4);
    QCOMPARE(host[0], -1.0f);
    host[5] = 42.0f;
    d.copyFromBytes(host.data(), host.size() * 4);
    QCOMPARE(d.as<float>()[5], 42.0f);
  }

  void refusals() {
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, NDArray::empty({2, -1}, DType::f32()));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, NDArray::empty({int64_t(1) << 62, 1 << 20}, DType::f32()));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, NDArray::empty({2}, DType{DType::Float, 32, 0}));
    NDArray a = NDArray::empty({2, 3}, DType::f32());
    NDArray b = NDArray::empty({3, 2}, DType::f32());
    try {
      a.copyFrom(b);
      QFAIL("no exception");
    } catch (const RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("NDArray::copyFrom: cannot copy float32[3, 2] on "
                                          "cpu(0) into float32[2, 3] on cpu(0)"));
    }
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, a.copyFrom(NDArray::empty({2, 3}, DType{DType::Int, 32, 1})));
    float small[2];
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, a.copyFromBytes(small, sizeof small));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, a.copyToBytes(small, sizeof small));
    try {
      NDArray::empty({2}, DType::f32(), Device{DeviceType::OpenCL, 0});
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {  // RuntimeFailure is a std::runtime_error
      QVERIFY(QString(e.what()).contains("no device API for opencl"));
    }
  }

  void cpuDevice() {
    DeviceAPI* cpu = DeviceAPI::get(DeviceType::CPU);
    QVERIFY(cpu == DeviceAPI::find(DeviceType::CPU));
    Device dev{};
    QCOMPARE(std::get<int64_t>(cpu->attr(dev, DeviceAttr::Exist)), int64_t(1));
    QCOMPARE(std::get<int64_t>(cpu->attr(Device{DeviceType::CPU, 3}, DeviceAttr::Exist)), int64_t(0));
    QVERIFY(!std::get<std::string>(cpu->attr(dev, DeviceAttr::DeviceName)).empty());
    QVERIFY(std::get<int64_t>(cpu->attr(dev, DeviceAttr::MultiProcessorCount)) >= 1);
    QVERIFY(std::get<int64_t>(cpu->attr(dev, DeviceAttr::TotalMemory)) > (int64_t(1) << 20));
    void* p = cpu->allocData(dev, 100, 256, DType::f32());
    QCOMPARE(reinterpret_cast<uintptr_t>(p) % 256, uintptr_t(0));
    char src[8] = "abcdefg";
    cpu->copyData(src, 2, p, 10, 4, dev, dev);
    QCOMPARE(std::memcmp(static_cast<char*>(p) + 10, "cdef", 4), 0);
    cpu->freeData(dev, p);
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, cpu->allocData(dev, 8, 3, DType::f32()));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure,
                             cpu->copyData(src, 0, src, 0, 1, dev, Device{DeviceType::CUDA, 0}));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, DeviceAPI::registerAPI(DeviceType::CPU, nullptr));
    QCOMPARE(deviceTypeName(DeviceType::OpenCL), std::string("opencl"));
    QCOMPARE(deviceTypeName(DeviceType(9)), std::string("device(9)"));
  }

  void registeredDevice() {
    QVERIFY(DeviceAPI::find(DeviceType::CUDA) == nullptr);
    int allocs = 0, frees = 0, copies = 0;
    DeviceAPI::registerAPI(DeviceType::CUDA, std::make_unique<FakeDeviceAPI>(&allocs, &frees, &copies));
    QVERIFY(DeviceAPI::find(DeviceType::CUDA) != nullptr);
    Device gpu{DeviceType::CUDA, 0};
    QCOMPARE(std::get<int64_t>(DeviceAPI::get(DeviceType::CUDA)->attr(gpu, DeviceAttr::WarpSize)),
             int64_t(32));
    {
      NDArray host = NDArray::empty({16}, DType::f32());
      for (int i = 0; i < 16; ++i) host.as<float>()[i] = float(i * i);
      NDArray dev = NDArray::empty({16}, DType::f32(), gpu);
      QCOMPARE(allocs, 1);
      QCOMPARE(dev.device(), gpu);
      dev.copyFrom(host);  // host -> device through the device's API
      QCOMPARE(copies, 1);
      NDArray back = NDArray::empty({16}, DType::f32());
      back.copyFrom(dev);
      QCOMPARE(copies, 2);
      for (int i = 0; i < 16; ++i) QCOMPARE(back.as<float>()[i], float(i * i));
      NDArray dev2 = dev.copy();  // device -> device
      QCOMPARE(allocs, 2);
      QCOMPARE(copies, 3);
      // Workspaces go through the same API.
      void* ws = loom_backend_alloc_workspace(kLoomCUDA, 0, 128, kLoomDTypeFloat, 32);
      QVERIFY(ws);
      QCOMPARE(allocs, 3);
      QCOMPARE(loom_backend_free_workspace(kLoomCUDA, 0, ws), 0);
      QCOMPARE(frees, 1);
    }
    QCOMPARE(frees, 3);  // both device arrays freed through it
  }
};

QTEST_APPLESS_MAIN(TestNDArray)
#include "test_ndarray.moc"
