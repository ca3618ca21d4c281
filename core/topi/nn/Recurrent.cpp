// nn.recurrence as one kernel: a loop over time whose step is the recurrent matmul (vectorized
// along the columns of R^T, summed in an unrolled register accumulator) followed by the fused,
// vectorized gate update. Written as TVMScript text and parsed, since TE has no serial loop that
// carries state. A parallel loop inside the time loop would pay a thread-pool launch per step
// (85 ms vs 16 ms for 100 steps of hidden 256 on the loaded 2-core machine), so wide layers run
// as a team instead: one launch of two tasks for the whole recurrence, each owning half of the
// units (its columns of R^T stay in its core's cache), meeting at a barrier once per step.
#include "core/topi/nn/Recurrent.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/graph/Op.h"
#include "core/tir/Parser.h"

namespace loom::topi::nn {

std::string float32Literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return std::string("T.float32(") + buf + ")";
}

namespace {


std::vector<std::string> splitNames(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// The activation `name` (ONNX recurrent activations) applied to the text `x`.
std::string activation(const std::string& name, double a, double b, const std::string& x) {
  const std::string zero = float32Literal(0);
  if (name == "Sigmoid") return "T.sigmoid(" + x + ")";
  if (name == "Tanh") return "T.tanh(" + x + ")";
  if (name == "Relu") return "T.max(" + x + ", " + zero + ")";
  if (name == "Affine") return float32Literal(a) + " * " + x + " + " + float32Literal(b);
  if (name == "LeakyRelu") return "T.Select(" + x + " < " + zero + ", " + float32Literal(a) + " * " + x + ", " + x + ")";
  if (name == "ThresholdedRelu") return "T.Select(" + float32Literal(a) + " < " + x + ", " + x + ", " + zero + ")";
  if (name == "ScaledTanh") return float32Literal(a) + " * T.tanh(" + float32Literal(b) + " * " + x + ")";
  if (name == "HardSigmoid") return "T.max(T.min(" + float32Literal(a) + " * " + x + " + " + float32Literal(b) + ", " + float32Literal(1) + "), " + zero + ")";
  if (name == "Elu") return "T.Select(" + x + " < " + zero + ", " + float32Literal(a) + " * (T.exp(" + x + ") - " + float32Literal(1) + "), " + x + ")";
  if (name == "Softsign") return x + " / (" + float32Literal(1) + " + T.fabs(" + x + "))";
  // max(x, 0) + log(1 + exp(-|x|)): exp(x) itself overflows float32 above 88.
  if (name == "Softplus")
    return "T.max(" + x + ", " + zero + ") + T.log(" + float32Literal(1) + " + T.exp(-T.fabs(" + x + ")))";
  LOOM_THROW(UnsupportedError) << "nn.recurrence: activation '" << name << "' is not supported";
}

struct Writer {
  std::ostringstream out;
  int depth = 0;
  void line(const std::string& s) { out << std::string(size_t(4 * depth), ' ') << s << "\n"; }
};

/// The tasks of a team step (see recurrenceScript) and the smallest hidden size that uses one.
constexpr int64_t kTeam = 2;
constexpr int64_t kTeamMinHidden = 128;

/// The widest vector (16, 8, 4, 2 or 1 lanes) that divides n.
int64_t lanesFor(int64_t n) {
  for (int64_t l : {16, 8, 4, 2})
    if (n % l == 0) return l;
  return 1;
}

} // namespace

std::string recurrenceScript(const graph::CallNode& call, const std::string& name) {
  auto shapeOf = [&](size_t i) { return call.args[i].type().as<graph::TensorTypeNode>()->staticShape(); };
  std::vector<int64_t> xs = shapeOf(0), rs = shapeOf(1);
  // RT is [D, H, GH], or packed in panels of P columns, [D, GH / P, H, P] (the importer packs
  // wide layers, folded at compile time): then a register tile is one panel, read contiguously.
  const bool packed = rs.size() == 4;
  // XP is [T, B, D, GH], or (xp_panels = 16) the input GEMM's panels [D * GH / 16, T * B, 16].
  const int64_t xpPanels = call.attrs.getInt("xp_panels");
  const int64_t B = shapeOf(3)[1], T = xpPanels ? xs[1] / B : xs[0], D = rs[0];
  const int64_t H = packed ? rs[2] : rs[1], GH = packed ? rs[1] * rs[3] : rs[2];
  const int64_t P = packed ? rs[3] : 0;
  if (packed && (H % P != 0 || P > 64))
    LOOM_THROW(UnsupportedError) << "nn.recurrence: RT packed in panels of " << P << " columns, which must divide the hidden size "
                                 << H << " and be at most 64";
  const std::string cell = call.attrs.getString("cell"), dir = call.attrs.getString("direction");
  std::vector<std::string> acts = splitNames(call.attrs.getString("activations"));
  const std::vector<double>& ap = call.attrs.getFloats("activation_params");
  const double clip = call.attrs.getFloat("clip");
  const bool lbr = call.attrs.getInt("linear_before_reset") != 0, coupled = call.attrs.getInt("input_forget") != 0;
  const size_t perDir = acts.size() / size_t(D);
  auto buf = [](const std::string& n, std::vector<int64_t> s, const char* t = "float32") {
    std::string r = n + ": T.Buffer((";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + (s.size() == 1 ? ",), \"" : "), \"") + t + "\")";
  };
  auto S = [](int64_t v) { return std::to_string(v); };
  auto cl = [&](const std::string& x) {
    return clip > 0 ? "T.max(T.min(" + x + ", " + float32Literal(clip) + "), " + float32Literal(-clip) + ")" : x;
  };
  Writer w;
  w.line("@T.prim_func");
  w.line("def " + name + "(" + buf("XP", xs) + ", " + buf("RT", rs) + ", " + buf("RB", {D, GH}) +
         ", " + buf("H0", {D, B, H}) + ", " + buf("C0", {D, B, H}) + ", " + buf("P", {D, 3 * H}) + ", " +
         buf("L", {B}, "int32") + ", " + buf("Y", {T, D, B, H}) + ", " + buf("YH", {D, B, H}) + ", " +
         buf("YC", {D, B, H}) + "):");
  w.depth = 1;
  w.line("T.func_attr({\"global_symbol\": \"" + name + "\", \"tir.noalias\": T.bool(True)})");
  w.line("with T.block(\"root\"):");
  w.depth = 2;
  w.line("G = T.alloc_buffer((" + S(B) + ", " + S(GH) + "), \"float32\")");
  w.line("ACC = T.alloc_buffer((64,), \"float32\", scope=\"local\")");
  // The hidden state, double-buffered: step s reads HS[d, s % 2] and writes HS[d, 1 - s % 2],
  // so a team task may write its units while the others still read the old state.
  w.line("HS = T.alloc_buffer((" + S(D) + ", 2, " + S(B) + ", " + S(H) + "), \"float32\")");
  if (cell == "gru") w.line("HG = T.alloc_buffer((" + S(B) + ", " + S(H) + "), \"float32\")");
  if (cell == "gru") w.line("HP = T.alloc_buffer((" + S(B) + ", " + S(H) + "), \"float32\")");
  w.line("for t, d, b, j in T.grid(" + S(T) + ", " + S(D) + ", " + S(B) + ", " + S(H) + "):");
  w.line("    Y[t, d, b, j] = " + float32Literal(0));
  w.line("for d, b, j in T.grid(" + S(D) + ", " + S(B) + ", " + S(H) + "):");
  w.line("    HS[d, 0, b, j] = H0[d, b, j]");
  w.line("    YC[d, b, j] = C0[d, b, j]");
  // dst[b, dstCol0 + c] = init(rtCol0 + c) + sum_k src(b, k) * R^T[d, k, rtCol0 + c] for the
  // columns c of `nseg` segments of n columns, H apart (a team task's share of each gate): per
  // batch row and tile of `vecs` vectors of `lanes` columns, the sums stay in a register
  // accumulator (ACC, unrolled; at most 64 floats, 8 AVX2 registers) across k, so the step is
  // bound by loading R rather than by store-to-load latency. The column offsets are TIR text (a
  // team task's offset depends on its index p). Packed RT: a tile is one panel of P columns,
  // panel rtPanel0 + (its offset) / P, read contiguously.
  auto matmul = [&](const std::string& dst, const std::string& dstCol0, const std::string& rtCol0,
                    const std::string& rtPanel0, int64_t n, int64_t nseg, const std::string& src,
                    const std::function<std::string(const std::string&, const std::string&)>& init) {
    int64_t lanes = lanesFor(n), vecs = 1;
    while (lanes * vecs * 2 <= 64 && (n / lanes) % (2 * vecs) == 0) vecs *= 2;
    if (packed) lanes = std::min<int64_t>(lanesFor(P), 16), vecs = P / lanes;
    const int64_t width = lanes * vecs, perSeg = n / width, tiles = nseg * perSeg;
    std::string q = "qc + u * " + S(lanes) + " + qi";
    std::string a = "ACC[u * " + S(lanes) + " + qi]";
    std::string inner = lanes > 1 ? "T.vectorized(" + S(lanes) + ")" : "range(1)";
    // Tiles in zig-zag order: odd steps run them backwards, so a step starts on the tiles of R
    // the previous step read last, still in L2 (R of hidden 256 is 1 MB, L2 often 512 KB: in one
    // direction every step would evict what the next step reads first).
    w.line("for qz in range(" + S(tiles) + "):");
    w.line("    qo: T.int32 = " + (tiles > 1 ? "qz + s % 2 * (" + S(tiles - 1) + " - 2 * qz)" : std::string("qz")));
    // The tile's column offset (qc) and panel (qp) from its segment and place in the segment.
    if (nseg > 1) {
      w.line("    qc: T.int32 = qo // " + S(perSeg) + " * " + S(H) + " + qo % " + S(perSeg) + " * " + S(width));
      if (packed) w.line("    qp: T.int32 = " + rtPanel0 + " + qo // " + S(perSeg) + " * " + S(H / P) + " + qo % " + S(perSeg));
    } else {
      w.line("    qc: T.int32 = qo * " + S(width));
      if (packed) w.line("    qp: T.int32 = " + rtPanel0 + " + qo");
    }
    const std::string rt =
        packed ? "RT[d_, qp, k, u * " + S(lanes) + " + qi]" : "RT[d_, k, " + rtCol0 + " + " + q + "]";
    if (packed && B > 1 && B * P <= 64) {
      // A few batch rows: all of them in the register tile (ACC[b * P + column]), so each step
      // reads the panel once for the whole batch (the importer picks P <= 64 / B).
      const std::string ab = "ACC[b * " + S(P) + " + u * " + S(lanes) + " + qi]";
      w.line("    for b in range(" + S(B) + "):");
      w.line("        for u in T.unroll(" + S(vecs) + "):");
      w.line("            for qi in " + inner + ":");
      w.line("                " + ab + " = " + init(rtCol0 + " + qc + u * " + S(lanes), "qi"));
      w.line("    for k in range(" + S(H) + "):");
      w.line("        for b in T.unroll(" + S(B) + "):");
      w.line("            for u in T.unroll(" + S(vecs) + "):");
      w.line("                for qi in " + inner + ":");
      w.line("                    " + ab + " = " + ab + " + " + src + " * " + rt);
      w.line("    for b in range(" + S(B) + "):");
      w.line("        for u in T.unroll(" + S(vecs) + "):");
      w.line("            for qi in " + inner + ":");
      w.line("                " + dst + "[b, " + dstCol0 + " + " + q + "] = " + ab);
      return;
    }
    w.line("    for b in range(" + S(B) + "):");
    w.line("        for u in T.unroll(" + S(vecs) + "):");
    w.line("            for qi in " + inner + ":");
    w.line("                " + a + " = " + init(rtCol0 + " + qc + u * " + S(lanes), "qi"));
    w.line("        for k in range(" + S(H) + "):");
    w.line("            for u in T.unroll(" + S(vecs) + "):");
    w.line("                for qi in " + inner + ":");
    w.line("                    " + a + " = " + a + " + " + src + " * " + rt);
    w.line("        for u in T.unroll(" + S(vecs) + "):");
    w.line("            for qi in " + inner + ":");
    w.line("                " + dst + "[b, " + dstCol0 + " + " + q + "] = " + a);
  };
  const std::string barrier = "T.evaluate(T.call_intrin(\"int32\", \"loom_parallel_barrier\"))";
  // The time loops of every direction at indentation `depth`. Serial: one task computes all H
  // units. Team: task p of kTeam computes units [p * Hp, (p + 1) * Hp) of every gate (its
  // columns of R^T), so its gate update needs only its own gates; the tasks meet once per step,
  // after the update (the new state is complete; the double buffer keeps the old one readable).
  // `only`: the one direction to run (a direction task), or -1 for all of them in turn.
  auto emitSteps = [&](int depth, bool team, int64_t only) {
    const int64_t Hp = team ? H / kTeam : H;
    const std::string j0 = team ? "p * " + S(Hp) : "0";
    auto col = [&](int64_t gate) { return team ? S(gate * H) + " + " + j0 : S(gate * H); };
    // The panel of column col(gate) when RT is packed (P divides H, and Hp in a team).
    auto panel = [&](int64_t gate) {
      if (!packed) return std::string("0");
      return team ? S(gate * H / P) + " + p * " + S(Hp / P) : S(gate * H / P);
    };
    for (int64_t d = 0; d < D; ++d) {
      if (only >= 0 && d != only) continue;
      const bool rev = dir == "reverse" || (dir == "bidirectional" && d == 1);
      auto act = [&](size_t k, const std::string& x) {
        size_t i = size_t(d) * perDir + k;
        // Both parenthesized: the kernel multiplies the activation (o_t * h(c_t); Affine and Softplus
        // are sums), and the argument is a sum (a gate plus its peephole term) that HardSigmoid,
        // LeakyRelu, Affine and ScaledTanh scale.
        return "(" + activation(acts.at(i), ap.at(2 * i), ap.at(2 * i + 1), "(" + x + ")") + ")";
      };
      // The time step of batch entry b at step s (reverse: from its own length down).
      const std::string tb = rev ? "T.min(T.max(L[b] - 1 - s, 0), " + S(T - 1) + ")" : "s";
      w.depth = depth;
      w.line("for s in range(" + S(T) + "):");
      w.depth = depth + 1;
      w.line("d_: T.int32 = " + S(d));
      // Column `base + lane` of XP (base a multiple of the vector width, which divides 16, so in
      // panel form the lane stays inside one panel and the index stays affine in it).
      auto xp = [&](const std::string& base, const std::string& lane) {
        if (!xpPanels) return "XP[" + tb + ", b, d_, " + base + " + " + lane + "]";
        return "XP[(" + S(d * GH) + " + " + base + ") // 16, " + tb + " * " + S(B) + " + b, (" + base + ") % 16 + " + lane + "]";
      };
      auto gateInit = [&](const std::string& base, const std::string& lane) {
        return xp(base, lane) + " + RB[d_, " + base + " + " + lane + "]";
      };
      if (cell == "gru") {
        // z and r: x + h R^T + Rb; then the h gate's recurrent part apart (HG).
        if (team) {
          matmul("G", col(0), col(0), panel(0), Hp, 2, "HS[d_, s % 2, b, k]", gateInit);
        } else {
          matmul("G", "0", "0", "0", 2 * H, 1, "HS[d_, s % 2, b, k]", gateInit);
        }
        std::string src = lbr ? "HS[d_, s % 2, b, k]" : "HS[d_, s % 2, b, k] * " + act(0, cl("G[b, " + S(H) + " + k]"));
        matmul("HG", j0, col(2), panel(2), Hp, 1, src,
               [&](const std::string& base, const std::string& lane) { return "RB[d_, " + base + " + " + lane + "]"; });
      } else if (team) {
        matmul("G", col(0), col(0), panel(0), Hp, GH / H, "HS[d_, s % 2, b, k]", gateInit);
      } else {
        matmul("G", "0", "0", "0", GH, 1, "HS[d_, s % 2, b, k]", gateInit);
      }
      // The gate update, vectorized over the units (the activations are vector code too).
      const int64_t ul = std::min<int64_t>(lanesFor(Hp), 8);
      if (cell == "gru") {
        // GRU's update reads the old state: from a copy, so the vectorizer sees no lane of HS
        // read after another lane's store.
        w.line("for b, jj in T.grid(" + S(B) + ", " + S(Hp) + "):");
        w.line("    HP[b, jj] = HS[d_, s % 2, b, " + j0 + " + jj]");
      }
      w.line("for b in range(" + S(B) + "):");
      w.line("    if s < L[b]:");
      w.line("        for jo in range(" + S(Hp / ul) + "):");
      w.line("            for ji in " + (ul > 1 ? "T.vectorized(" + S(ul) + ")" : std::string("range(1)")) + ":");
      w.depth = depth + 5;
      // The unit, written out (the vectorizer needs indices affine in the lane).
      const std::string J = "(" + j0 + " + jo * " + S(ul) + " + ji)";
      if (cell == "gru") w.line("h_prev: T.float32 = HP[b, jo * " + S(ul) + " + ji]");
      auto g = [&](int64_t gate) { return "G[b, " + S(gate * H) + " + " + J + "]"; };
      if (cell == "lstm") {
        w.line("c_prev: T.float32 = YC[d_, b, " + J + "]");
        w.line("i_t: T.float32 = " + act(0, cl(g(0) + " + P[d_, " + J + "] * c_prev")));
        w.line("f_t: T.float32 = " + (coupled ? float32Literal(1) + " - i_t" : act(0, cl(g(2) + " + P[d_, " + S(2 * H) + " + " + J + "] * c_prev"))));
        w.line("c_t: T.float32 = f_t * c_prev + i_t * " + act(1, cl(g(3))));
        w.line("o_t: T.float32 = " + act(0, cl(g(1) + " + P[d_, " + S(H) + " + " + J + "] * c_t")));
        w.line("h_t: T.float32 = o_t * " + act(2, "c_t"));
        w.line("YC[d_, b, " + J + "] = c_t");
      } else if (cell == "gru") {
        w.line("z_t: T.float32 = " + act(0, cl(g(0))));
        w.line("r_t: T.float32 = " + act(0, cl(g(1))));
        w.line("n_t: T.float32 = " + act(1, cl(xp(S(2 * H) + " + " + j0 + " + jo * " + S(ul), "ji") + " + " + (lbr ? "r_t * HG[b, " + J + "]" : "HG[b, " + J + "]"))));
        w.line("h_t: T.float32 = (" + float32Literal(1) + " - z_t) * n_t + z_t * h_prev");
      } else {
        w.line("h_t: T.float32 = " + act(0, cl(g(0))));
      }
      w.line("Y[" + tb + ", d_, b, " + J + "] = h_t");
      w.line("HS[d_, 1 - s % 2, b, " + J + "] = h_t");
      w.depth = depth + 2;
      w.line("else:");
      w.line("    for jj in range(" + S(Hp) + "):");
      w.line("        HS[d_, 1 - s % 2, b, " + j0 + " + jj] = HS[d_, s % 2, b, " + j0 + " + jj]");
      if (team) {
        w.depth = depth + 1;
        w.line(barrier);
      }
    }
  };
  // A team when each task's units fill whole vectors, the step is big enough to pay a barrier,
  // and no task needs another's gates (GRU without linear_before_reset multiplies r into h
  // before the matmul, so every task would need all of r).
  const bool teamOk = H % (kTeam * 8) == 0 && H >= kTeamMinHidden && (cell != "gru" || lbr) &&
                      (!packed || (H / kTeam) % P == 0);
  // A bidirectional layer that would run as a team runs its two directions as two independent
  // tasks instead (no barrier per step: under load a descheduled team task stalls its partner
  // at every barrier, 65 ms instead of 1.2 ms for 100 steps of hidden 128), unless R of one
  // direction is too big for one core's L2 (over 512 KB: an LSTM of hidden 256), where a team
  // per direction (each task half of R) reads less per task and step.
  const bool dirTasks = D == 2 && teamOk && GH * H * 4 <= 512 * 1024;
  const bool team = teamOk && !dirTasks;
  if (dirTasks) {
    // As for a team, the first barrier is a probe: with one thread task 0 runs both directions.
    w.line("for p in T.parallel(2):");
    w.line("    ok: T.int32 = T.call_intrin(\"int32\", \"loom_parallel_barrier\")");
    w.line("    if ok == 0:");
    w.line("        if p == 0:");
    emitSteps(5, false, 0);
    w.depth = 2;
    w.line("        else:");
    emitSteps(5, false, 1);
    w.depth = 2;
    w.line("    else:");
    w.line("        if p == 0:");
    emitSteps(5, false, -1);
  } else if (team) {
    // The first barrier is a probe: -1 means the tasks run one after another (one thread, a
    // nested launch), and then task 0 alone runs the serial loops.
    w.line("for p in T.parallel(" + S(kTeam) + "):");
    w.line("    ok: T.int32 = T.call_intrin(\"int32\", \"loom_parallel_barrier\")");
    w.line("    if ok == 0:");
    emitSteps(4, true, -1);
    w.depth = 2;
    w.line("    else:");
    w.line("        if p == 0:");
    emitSteps(5, false, -1);
  } else {
    emitSteps(2, false, -1);
  }
  w.depth = 2;
  w.line("for d, b, j in T.grid(" + S(D) + ", " + S(B) + ", " + S(H) + "):");
  w.line("    YH[d, b, j] = HS[d, " + S(T % 2) + ", b, j]");
  return "# from tvm.script import tir as T\n\n" + w.out.str();
}

namespace {
tir::PrimFunc ortFloatKernel(const graph::CallNode& call, const std::string& name) {
  return tir::parseFunc(ortFloatScript(call, name), "<" + name + ">");
}
}  // namespace

const LoopKernel* findLoopKernel(const std::string& op) {
  static const std::map<std::string, LoopKernel> kernels{
      {"nn.recurrence",
       [](const graph::CallNode& call, const std::string& name) {
         return tir::parseFunc(recurrenceScript(call, name), "<" + name + ">");
       }},
      {"nn.ort_layer_norm", ortFloatKernel},
      {"nn.ort_skip_layer_norm", ortFloatKernel},
      {"nn.ort_softmax", ortFloatKernel},
  };
  auto it = kernels.find(op);
  return it == kernels.end() ? nullptr : &it->second;
}

}  // namespace loom::topi::nn
