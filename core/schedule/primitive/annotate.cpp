// annotate, unannotate: the annotation map of a loop or block, and their trace instructions.
#include "core/schedule/primitive/annotate.h"

#include "core/tir/Op.h"

namespace loom::tir {

namespace {

Expr annotationValue(const Schedule& sch, const Value& v) {
  switch (v.kind()) {
  case Value::Kind::Bool:
    return boolImm(v.asBool());
  case Value::Kind::Int:
    return intImm(DataType::Int(32), v.asInt());
  case Value::Kind::Float:
    return floatImm(DataType::Float(32), v.asFloat());
  case Value::Kind::String:
    return stringImm(v.asString());
  case Value::Kind::ExprRV:
    return intImm(DataType::Int(32), sch.get(v.asExprRV()));
  default:
    throw ScheduleValueError(
        std::string("an annotation value must be int, float, str or bool, not ") + v.typeName());
  }
}

/// Rebuilds the loop or block with `edit` applied to its annotations; the RV follows.
template <class Node, class F> void editAnnotations(Schedule& sch, const Node* node, F&& edit) {
  auto* n = new Node(*node);
  edit(n->annotations);
  sch.replace(node, Stmt(n), {{node, n}});
}

template <class Node>
void checkHas(const Schedule& sch, const Node* n, const std::string& what, const std::string& key) {
  if (n->annotations.count(key)) return;
  std::string known;
  for (auto& [k, v] : n->annotations)
    known += (known.empty() ? "" : ", ") + ("'" + k + "'");
  throw AnnotationNotFoundError(
      "unannotate: " + what + " has no annotation '" + key + "'" +
          (known.empty() ? std::string(" (it has none)") : " (it has " + known + ")"),
      sch.func(), {n});
}

} // namespace

void annotate(Schedule& sch, const LoopRV& loop, const std::string& key, const Value& value) {
  Expr v = annotationValue(sch, value);
  editAnnotations(sch, sch.get(loop), [&](Annotations& a) { a[key] = v; });
  sch.record("annotate", {Value(loop), Value(key), value}, {});
}

void annotate(Schedule& sch, const BlockRV& block, const std::string& key, const Value& value) {
  Expr v = annotationValue(sch, value);
  editAnnotations(sch, sch.get(block), [&](Annotations& a) { a[key] = v; });
  sch.record("annotate", {Value(block), Value(key), value}, {});
}

void unannotate(Schedule& sch, const LoopRV& loop, const std::string& key) {
  const ForNode* l = sch.get(loop);
  checkHas(sch, l, "loop '" + l->loopVar->name + "'", key);
  editAnnotations(sch, l, [&](Annotations& a) { a.erase(key); });
  sch.record("unannotate", {Value(loop), Value(key)}, {});
}

void unannotate(Schedule& sch, const BlockRV& block, const std::string& key) {
  const BlockNode* b = sch.get(block);
  checkHas(sch, b, "block '" + b->name + "'", key);
  editAnnotations(sch, b, [&](Annotations& a) { a.erase(key); });
  sch.record("unannotate", {Value(block), Value(key)}, {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerAnnotateInstructions() {
  registerInstructionKind({"annotate",
                           {{"block_or_loop", vt::Block | vt::Loop},
                            {"ann_key", vt::String},
                            {"ann_val", vt::Bool | vt::Float | vt::String | vt::ExprRV}},
                           false,
                           false,
                           false,
                           "Attach a key/value annotation to a loop or block",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             if (in[0].kind() == Value::Kind::Block)
                               annotate(s, in[0].asBlock(), in[1].asString(), in[2]);
                             else
                               annotate(s, in[0].asLoop(), in[1].asString(), in[2]);
                             return std::vector<Value>{};
                           }});
  registerInstructionKind({"unannotate",
                           {{"block_or_loop", vt::Block | vt::Loop}, {"ann_key", vt::String}},
                           false,
                           false,
                           false,
                           "Remove an annotation from a loop or block",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             if (in[0].kind() == Value::Kind::Block)
                               unannotate(s, in[0].asBlock(), in[1].asString());
                             else
                               unannotate(s, in[0].asLoop(), in[1].asString());
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
