// Type relations: inferred shapes (static and symbolic) and the typed errors for mismatches,
// which name the op, the source node and the shapes at fault.
#include <QtTest>

#include "GraphTestUtil.h"
#include "core/graph/Op.h"
#include "core/graph/Printer.h"
#include "core/graph/pass/InferType.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::testutil;

namespace {

/// The message of the error thrown by typing `e` (empty when none).
template <class E = TypeError> std::string typeError(const std::function<Expr()>& build) {
  try {
    inferType(build());
  } catch (const E& e) {
    return e.what();
  }
  return {};
}

std::string typeOf(const Expr& e) {
  return typeStr(inferType(e));
}

using IntList = std::vector<int64_t>;

} // namespace

class TestTypeRelations : public QObject {
  Q_OBJECT

private slots:
  void shapes() {
    Var x = makeVar("x", f32({2, 3, 32, 32}));
    Expr conv = makeCall("nn.conv2d", {x, randomConst({16, 3, 5, 5}, 1)},
                         {{"strides", IntList{2, 2}}, {"padding", IntList{2, 2, 2, 2}}});
    QCOMPARE(typeOf(conv), std::string("Tensor[(2, 16, 16, 16), float32]"));
    Expr dw = makeCall("nn.conv2d", {conv, randomConst({16, 1, 3, 3}, 2)},
                       {{"groups", int64_t(16)}, {"dilation", IntList{2, 2}}});
    QCOMPARE(typeOf(dw), std::string("Tensor[(2, 16, 12, 12), float32]"));
    Expr pool = makeCall(
        "nn.max_pool2d", {dw},
        {{"pool_size", IntList{3, 3}}, {"strides", IntList{2, 2}}, {"ceil_mode", int64_t(1)}});
    QCOMPARE(typeOf(pool), std::string("Tensor[(2, 16, 6, 6), float32]"));
    Expr up = makeCall("nn.conv2d_transpose", {pool, randomConst({16, 8, 4, 4}, 3)},
                       {{"strides", IntList{2, 2}}, {"padding", IntList{1, 1, 1, 1}}});
    QCOMPARE(typeOf(up), std::string("Tensor[(2, 8, 12, 12), float32]"));
    Expr t = makeCall("transpose", {up}, {{"axes", IntList{0, 2, 3, 1}}});
    QCOMPARE(typeOf(t), std::string("Tensor[(2, 12, 12, 8), float32]"));
    Expr mm =
        makeCall("nn.matmul", {makeVar("a", f32({4, 1, 5, 6})), makeVar("b", f32({3, 6, 7}))});
    QCOMPARE(typeOf(mm), std::string("Tensor[(4, 3, 5, 7), float32]"));
    Expr sl = makeCall("strided_slice", {t},
                       {{"begin", IntList{1, -1}},
                        {"end", IntList{100, -13}},
                        {"strides", IntList{3, -2}},
                        {"axes", IntList{1, 2}}});
    QCOMPARE(typeOf(sl), std::string("Tensor[(2, 4, 6, 8), float32]"));
    // A step of INT64_MAX (one element: "every step-th to the end") overflowed (hi - lo + st - 1):
    // fuzz_torch, rel12. INT64_MIN, whose negation overflows, is refused.
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    Expr one = makeCall("strided_slice", {t}, {{"begin", IntList{1, -1}}, {"end", IntList{kMax, -kMax}},
                                               {"strides", IntList{kMax, -kMax}}, {"axes", IntList{1, 2}}});
    QCOMPARE(typeOf(one), std::string("Tensor[(2, 1, 1, 8), float32]"));
    Expr minStep = makeCall("strided_slice", {t}, {{"begin", IntList{0}}, {"end", IntList{5}},
                                                   {"strides", IntList{std::numeric_limits<int64_t>::min()}}, {"axes", IntList{1}}});
    QVERIFY_THROWS_EXCEPTION(TypeError, inferType(minStep));
    // A pool window whose dilation * (pool_size - 1) overflows int64 (fuzz_torch, rel12) is refused:
    // 2^62 * 4 wrapped to 0, a window of one element, and the type said 12 x 12.
    Expr hugePool = makeCall("nn.max_pool2d", {dw},
                             {{"pool_size", IntList{5, 5}}, {"dilation", IntList{int64_t(1) << 62, 1}}});
    QVERIFY_THROWS_EXCEPTION(TypeError, inferType(hugePool));
    Expr tk = makeCall("take",
                       {t, makeConstant(runtime::NDArray::empty({2, 5}, runtime::DType{0, 64, 1}))},
                       {{"axis", int64_t(3)}});
    QCOMPARE(typeOf(tk), std::string("Tensor[(2, 12, 12, 2, 5), float32]"));
    Expr am = makeCall("argmax", {t}, {{"axis", int64_t(-1)}, {"keepdims", int64_t(0)}});
    QCOMPARE(typeOf(am), std::string("Tensor[(2, 12, 12), int64]"));
    Expr red = makeCall("mean", {t}, {{"axis", IntList{1, 2}}, {"keepdims", int64_t(1)}});
    QCOMPARE(typeOf(red), std::string("Tensor[(2, 1, 1, 8), float32]"));
    Expr cmp = makeCall("less", {t, makeScalar(0, DataType::Float(32))});
    QCOMPARE(typeOf(cmp), std::string("Tensor[(2, 12, 12, 8), bool]"));
    Expr rs = makeCall("image.resize2d", {up},
                       {{"size", IntList{5, 7}}, {"method", std::string("nearest_neighbor")}});
    QCOMPARE(typeOf(rs), std::string("Tensor[(2, 8, 5, 7), float32]"));
  }

  void symbolicDims() {
    Var x = makeVar("x", tensorType(Shape{Dim::symbol("batch"), Dim(3), Dim::any(), Dim(8)},
                                    DataType::Float(32)));
    Expr conv = makeCall("nn.conv2d", {x, randomConst({4, 3, 3, 3}, 1)});
    QCOMPARE(typeOf(conv), std::string("Tensor[(batch, 4, ?, 6), float32]"));
    Expr add = makeCall("add", {conv, makeVar("b", f32({4, 1, 1}))});
    QCOMPARE(typeOf(add), std::string("Tensor[(batch, 4, ?, 6), float32]"));
    Expr bc =
        makeCall("add", {makeVar("p", tensorType(Shape{Dim::symbol("n")}, DataType::Float(32))),
                         makeVar("q", f32({5}))});
    QCOMPARE(typeOf(bc), std::string("Tensor[(5,), float32]"));
    Expr shape = makeCall("shape_of", {x});
    QCOMPARE(typeOf(shape), std::string("Tensor[(4,), int64]"));
  }

  void errorsNameNodeAndShapes() {
    auto conv = [] {
      return Expr(makeCall("nn.conv2d",
                           {makeVar("x", f32({1, 3, 8, 8})), randomConst({4, 2, 3, 3}, 1)}, {},
                           "conv7"));
    };
    QCOMPARE(typeError<GraphTypeError>(conv),
             std::string("nn.conv2d (node 'conv7'): data Tensor[(1, 3, 8, 8), float32] has 3 input "
                         "channels but weight "
                         "Tensor[(4, 2, 3, 3), float32] expects 2 (2 x groups 1)"));
    QCOMPARE(
        typeError([] {
          return Expr(
              makeCall("add", {makeVar("a", f32({2, 3})), makeVar("b", f32({4}))}, {}, "sum1"));
        }),
        std::string(
            "add (node 'sum1'): shapes (2, 3) and (4,) do not broadcast (dimension 1: 3 vs 4)"));
    QCOMPARE(typeError([] {
               return Expr(makeCall("reshape", {makeVar("a", f32({2, 3}))},
                                    {{"newshape", IntList{4, 2}}}, "r"));
             }),
             std::string("reshape (node 'r'): cannot reshape Tensor[(2, 3), float32] (6 elements) "
                         "to [4, 2] (8 elements)"));
    QCOMPARE(
        typeError([] {
          return Expr(makeCall("nn.dense", {makeVar("a", f32({2, 3})), makeVar("w", f32({5, 4}))}));
        }),
        std::string("nn.dense: data Tensor[(2, 3), float32] and weight Tensor[(5, 4), float32] "
                    "disagree on the "
                    "reduction dimension (3 vs 4)"));
    QCOMPARE(typeError([] {
               return Expr(makeCall("concatenate",
                                    {makeVar("a", f32({2, 3})), makeVar("b", f32({3, 3}))},
                                    {{"axis", int64_t(1)}}, "cat"));
             }),
             std::string("concatenate (node 'cat'): input 1 Tensor[(3, 3), float32] differs from "
                         "input 0 Tensor[(2, 3), "
                         "float32] in dimension 0 (concatenating along axis 1)"));
    QCOMPARE(typeError([] {
               return Expr(
                   makeCall("transpose", {makeVar("a", f32({2, 3}))}, {{"axes", IntList{0, 0}}}));
             }),
             std::string("transpose: axes [0, 0] repeat axis 0"));
    QCOMPARE(
        typeError([] {
          return Expr(makeCall("nn.softmax", {makeVar("a", f32({2, 3}))}, {{"axis", int64_t(2)}}));
        }),
        std::string("nn.softmax: axis 2 is out of range for rank 2"));
    QCOMPARE(
        typeError([] {
          return Expr(makeCall(
              "add", {makeVar("a", f32({2})),
                      makeVar("b", tensorType(std::vector<int64_t>{2}, DataType::Int(64)))}));
        }),
        std::string("add: argument types differ: Tensor[(2,), float32] vs Tensor[(2,), int64]"));
    QCOMPARE(
        typeError([] {
          return Expr(makeCall("split", {makeVar("a", f32({5}))}, {{"sections", IntList{2, 2}}}));
        }),
        std::string(
            "split: sections [2, 2] sum to 4 but dimension 0 of Tensor[(5,), float32] is 5"));
    QCOMPARE(
        typeError([] { return Expr(makeTupleGetItem(makeTuple({makeVar("a", f32({1}))}), 3)); }),
        std::string("tuple index .3 out of range for (Tensor[(1,), float32],)"));
  }

  void windowsWiderThanData() {
    // Found by fuzz_difftest: (W + pads - kernel) / stride + 1 truncated -1 / 2 to 0, so a 1x3
    // kernel on a width-2 input with stride 2 typed as width 1 and its kernel read out of bounds.
    auto conv = [](IntList kernel, IntList strides, IntList dilation, IntList pads) {
      return [=] {
        return Expr(makeCall("nn.conv2d", {makeVar("x", f32({1, 5, 2, 7})), randomConst(kernel, 1)},
                             {{"strides", strides}, {"dilation", dilation}, {"padding", pads}, {"groups", kernel[0] == 5 && kernel[1] == 1 ? int64_t(5) : int64_t(1)}},
                             "c"));
      };
    };
    QVERIFY(typeError<GraphTypeError>(conv({7, 5, 1, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0})).find("does not fit") == std::string::npos);
    QVERIFY(typeError<GraphTypeError>(conv({7, 5, 3, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0})).find("does not fit") != std::string::npos);
    QVERIFY(typeError<GraphTypeError>(conv({5, 1, 3, 3}, {2, 2}, {2, 2}, {1, 1, 1, 1})).find("does not fit") != std::string::npos);
    QVERIFY(typeError<GraphTypeError>(conv({7, 5, 1, 1}, {1, 1}, {0, 0}, {0, 0, 0, 0})).find("dilation must be positive") != std::string::npos);
    QVERIFY(typeError<GraphTypeError>(conv({7, 5, 1, 1}, {1, 1}, {1, 1}, {0, -1, 0, 0})).find("padding must not be negative") != std::string::npos);
    auto pool = [](IntList size, IntList strides) {
      return [=] {
        return Expr(makeCall("nn.max_pool2d", {makeVar("x", f32({1, 2, 2, 7}))}, {{"pool_size", size}, {"strides", strides}}, "p"));
      };
    };
    QVERIFY(typeError<GraphTypeError>(pool({3, 1}, {2, 2})).find("does not fit") != std::string::npos);
    QVERIFY(typeError<GraphTypeError>(pool({1, 1}, {0, 1})).find("must be positive") != std::string::npos);
    QCOMPARE(typeOf(makeCall("nn.max_pool2d", {makeVar("x", f32({1, 2, 2, 7}))}, {{"pool_size", IntList{2, 3}}, {"strides", IntList{2, 2}}})),
             std::string("Tensor[(1, 2, 1, 3), float32]"));
  }
  void schemaErrors() {
    Var x = makeVar("x", f32({2, 2}));
    auto msg = [](const std::function<void()>& f) -> std::string {
      try {
        f();
      } catch (const GraphTypeError& e) {
        return e.what();
      }
      return {};
    };
    QCOMPARE(msg([&] {
               makeCall("nn.relu", {x}, {{"alpha", 0.5}}, "act");
             }),
             std::string("nn.relu (node 'act'): unknown attribute 'alpha'"));
    QCOMPARE(msg([&] { makeCall("reshape", {x}); }),
             std::string("reshape: missing required attribute 'newshape'"));
    QCOMPARE(msg([&] {
               makeCall("nn.softmax", {x}, {{"axis", 1.0}});
             }),
             std::string("nn.softmax: attribute 'axis' must be int, got float"));
    QCOMPARE(msg([&] { makeCall("add", {x}); }), std::string("add: expects 2 argument(s), got 1"));
  }

  void functionCallTypes() {
    Var p = makeVar("p", f32({2}));
    Function fn = makeFunction({p}, makeCall("nn.relu", {p}), true, "fused_nn_relu");
    QCOMPARE(typeOf(makeFnCall(fn, {makeVar("a", f32({2}))})),
             std::string("Tensor[(2,), float32]"));
    QCOMPARE(typeError([&] { return Expr(makeFnCall(fn, {makeVar("b", f32({3}))})); }),
             std::string("call of fused_nn_relu: argument 0 has type Tensor[(3,), float32] but "
                         "parameter %p expects "
                         "Tensor[(2,), float32]"));
  }

  void customOpRegistration() {
    OpDef d;
    d.name = "test.twice";
    d.pattern = OpPattern::ElemWise;
    d.attrs = {AttrSpec{"factor", AttrKind::Float, AttrValue(2.0)}};
    d.typeRel = [](const CallNode& call, const std::vector<Type>& args) -> Type {
      auto* t = args[0].as<TensorTypeNode>();
      if (!t) LOOM_TYPE_FAIL(call) << "wants a tensor";
      return tensorType(t->shape, t->dtype);
    };
    d.hostKernel = [](const CallNode& call, const std::vector<runtime::NDArray>& in, const Type&) {
      runtime::NDArray out = in[0].copy();
      for (int64_t i = 0; i < out.numel(); ++i)
        out.as<float>()[i] *= float(call.attrs.getFloat("factor"));
      return std::vector<runtime::NDArray>{out};
    };
    d.doc = "test op";
    registerOp(d);
    QVERIFY(findOp("nn.conv2d") != nullptr); // built-ins are still there
    Var x = makeVar("x", f32({3}));
    Function f = makeFunction({x}, makeCall("test.twice", {x}, {{"factor", 3.0}}));
    runtime::NDArray in = randomArray({3}, 1);
    runtime::NDArray out = evaluate(f, {in})[0];
    QCOMPARE(out.as<float>()[2], in.as<float>()[2] * 3.f);
    // topi/ attaches computes through mutableOp (the field is empty until then).
    QVERIFY(!getOp("test.twice").compute);
    QCOMPARE(mutableOp("test.twice"), const_cast<OpDef*>(&getOp("test.twice")));
    QCOMPARE(mutableOp("no.such.op"), static_cast<OpDef*>(nullptr));
  }

  void everyOpIsComplete() {
    std::vector<const OpDef*> ops = allOps();
    QVERIFY(ops.size() >= 60);
    for (const OpDef* op : ops) {
      if (op->name.rfind("test.", 0) == 0) continue;
      QVERIFY2(op->typeRel != nullptr, op->name.c_str());
      QVERIFY2(op->hostKernel != nullptr, op->name.c_str());
      QVERIFY2(!op->doc.empty(), op->name.c_str());
    }
    QCOMPARE(int(getOp("nn.conv2d").pattern), int(OpPattern::OutEWiseFusable));
    QCOMPARE(int(getOp("add").pattern), int(OpPattern::Broadcast));
    QCOMPARE(int(getOp("nn.relu").pattern), int(OpPattern::ElemWise));
    QCOMPARE(int(getOp("reshape").pattern), int(OpPattern::Injective));
    QCOMPARE(int(getOp("sum").pattern), int(OpPattern::CommReduce));
    QCOMPARE(int(getOp("nn.softmax").pattern), int(OpPattern::Opaque));
  }
};

QTEST_APPLESS_MAIN(TestTypeRelations)
#include "test_type_relations.moc"
