// Default GPU schedules (as schedule scripts) for tensor programs: thread binding, shared-memory tiling.
#include "core/transform/GPUSchedules.h"

#include <sstream>
#include <vector>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::transform {

using namespace tir;

namespace {

struct BlockInfo {
  std::string name;
  size_t loops = 0;    ///< iter vars = loops of an unscheduled TE block
  size_t spatial = 0;  ///< leading spatial iter vars
};

std::vector<BlockInfo> blocksOf(const PrimFunc& f) {
  std::vector<BlockInfo> out;
  postOrderVisit(f->body, [&](const IRNode* n) {
    if (n->nodeKind != NodeKind::Block) return;
    auto* b = static_cast<const BlockNode*>(n);
    if (b->name == "root") return;
    BlockInfo info{b->name, b->iterVars.size(), 0};
    while (info.spatial < b->iterVars.size() && b->iterVars[info.spatial].iterType == IterType::DataPar) ++info.spatial;
    out.push_back(info);
  });
  return out;
}

/// Per block: fuse the spatial loops into `f<n>` (the script lines), or nothing when it has none.
std::string fusedSpatial(std::ostringstream& s, const BlockInfo& b, size_t n) {
  std::string bn = "b" + std::to_string(n);
  s << bn << " = sch.get_block(\"" << b.name << "\")\n";
  std::vector<std::string> loops;
  for (size_t i = 0; i < b.loops; ++i) loops.push_back("l" + std::to_string(n) + "_" + std::to_string(i));
  for (size_t i = 0; i < loops.size(); ++i) s << (i ? ", " : "") << loops[i];
  s << (loops.size() == 1 ? "," : "") << " = sch.get_loops(" << bn << ")\n";
  if (b.spatial == 1) return loops[0];
  std::string fused = "f" + std::to_string(n);
  s << fused << " = sch.fuse(";
  for (size_t i = 0; i < b.spatial; ++i) s << (i ? ", " : "") << loops[i];
  s << ")\n";
  return fused;
}

}  // namespace

std::string gpuScheduleFlat(const PrimFunc& f, int threads) {
  std::ostringstream s;
  s << "# Every block: spatial loops fused, " << threads << " threads per block (blockIdx.x, threadIdx.x).\n";
  auto blocks = blocksOf(f);
  for (size_t n = 0; n < blocks.size(); ++n) {
    if (blocks[n].spatial == 0) continue;
    std::string fused = fusedSpatial(s, blocks[n], n);
    s << "bx" << n << ", tx" << n << " = sch.split(" << fused << ", factors=[None, " << threads << "])\n";
    s << "sch.bind(bx" << n << ", \"blockIdx.x\")\n";
    s << "sch.bind(tx" << n << ", \"threadIdx.x\")\n";
  }
  return s.str();
}

std::string gpuSchedule2D(const PrimFunc& f, int ty, int tx) {
  std::ostringstream s;
  s << "# Every block: spatial loops fused, " << ty << " x " << tx << " thread blocks (threadIdx.y, threadIdx.x).\n";
  auto blocks = blocksOf(f);
  for (size_t n = 0; n < blocks.size(); ++n) {
    if (blocks[n].spatial == 0) continue;
    std::string fused = fusedSpatial(s, blocks[n], n);
    s << "bx" << n << ", ty" << n << ", tx" << n << " = sch.split(" << fused << ", factors=[None, " << ty << ", " << tx
      << "])\n";
    s << "sch.bind(bx" << n << ", \"blockIdx.x\")\n";
    s << "sch.bind(ty" << n << ", \"threadIdx.y\")\n";
    s << "sch.bind(tx" << n << ", \"threadIdx.x\")\n";
  }
  return s.str();
}

std::string gpuScheduleMatmulShared(int tile, int kTile) {
  std::string t = std::to_string(tile);
  std::string kt = std::to_string(kTile > 0 ? kTile : tile);
  return "# Shared-memory tiled matmul: " + t + "x" + t + " output tiles per block, one thread per element,\n"
         "# the A and B tiles of each step of k (" + kt + " wide) fetched into shared memory by all the\n"
         "# threads of the block together; thread-sync puts barriers between fetch and use.\n"
         "b = sch.get_block(\"C\")\n"
         "i, j, k = sch.get_loops(b)\n"
         "bi, ti = sch.split(i, factors=[None, " + t + "])\n"
         "bj, tj = sch.split(j, factors=[None, " + t + "])\n"
         "ko, ki = sch.split(k, factors=[None, " + kt + "])\n"
         "sch.reorder(bi, bj, ko, ti, tj, ki)\n"
         "sch.bind(bi, \"blockIdx.y\")\n"
         "sch.bind(bj, \"blockIdx.x\")\n"
         "sch.bind(ti, \"threadIdx.y\")\n"
         "sch.bind(tj, \"threadIdx.x\")\n"
         "As = sch.cache_read(b, 0, \"shared\")\n"
         "Bs = sch.cache_read(b, 1, \"shared\")\n"
         "sch.compute_at(As, ko)\n"
         "sch.compute_at(Bs, ko)\n"
         "a_bi, a_bj, a_ko, a0, a1 = sch.get_loops(As)\n"
         "a_rest, a_ty, a_tx = sch.split(sch.fuse(a0, a1), factors=[None, " + t + ", " + t + "])\n"
         "sch.bind(a_ty, \"threadIdx.y\")\n"
         "sch.bind(a_tx, \"threadIdx.x\")\n"
         "b_bi, b_bj, b_ko, b0, b1 = sch.get_loops(Bs)\n"
         "b_rest, b_ty, b_tx = sch.split(sch.fuse(b0, b1), factors=[None, " + t + ", " + t + "])\n"
         "sch.bind(b_ty, \"threadIdx.y\")\n"
         "sch.bind(b_tx, \"threadIdx.x\")\n";
}

namespace {
/// The C block's loops of the matmul schedules with virtual threads: i and j split into blocks,
/// virtual threads and threads (bound in that order), k into steps of `kt`.
std::string matmulThreadTiling(const std::string& t, const std::string& v, const std::string& kt) {
  return "b = sch.get_block(\"C\")\n"
         "i, j, k = sch.get_loops(b)\n"
         "by, vy, ty = sch.split(i, factors=[None, " + v + ", " + t + "])\n"
         "bx, vx, tx = sch.split(j, factors=[None, " + v + ", " + t + "])\n"
         "ko, ki = sch.split(k, factors=[None, " + kt + "])\n"
         "sch.reorder(by, bx, ko, vy, vx, ty, tx, ki)\n"
         "sch.bind(by, \"blockIdx.y\")\n"
         "sch.bind(bx, \"blockIdx.x\")\n"
         "sch.bind(vy, \"vthread.y\")\n"
         "sch.bind(vx, \"vthread.x\")\n"
         "sch.bind(ty, \"threadIdx.y\")\n"
         "sch.bind(tx, \"threadIdx.x\")\n";
}

/// A and B tiles of each k step staged in shared memory, copied by the block's t x t threads.
std::string matmulSharedTiles(const std::string& t) {
  return "As = sch.cache_read(b, 0, \"shared\")\n"
         "Bs = sch.cache_read(b, 1, \"shared\")\n"
         "sch.compute_at(As, ko)\n"
         "sch.compute_at(Bs, ko)\n"
         "a_by, a_bx, a_ko, a0, a1 = sch.get_loops(As)\n"
         "a_rest, a_ty, a_tx = sch.split(sch.fuse(a0, a1), factors=[None, " + t + ", " + t + "])\n"
         "sch.bind(a_ty, \"threadIdx.y\")\n"
         "sch.bind(a_tx, \"threadIdx.x\")\n"
         "b_by, b_bx, b_ko, b0, b1 = sch.get_loops(Bs)\n"
         "b_rest, b_ty, b_tx = sch.split(sch.fuse(b0, b1), factors=[None, " + t + ", " + t + "])\n"
         "sch.bind(b_ty, \"threadIdx.y\")\n"
         "sch.bind(b_tx, \"threadIdx.x\")\n";
}
}  // namespace

std::string gpuScheduleMatmulVThread(int threads, int vthreads, int kTile) {
  std::string t = std::to_string(threads), v = std::to_string(vthreads), kt = std::to_string(kTile);
  std::string tile = std::to_string(threads * vthreads);
  return "# Matmul with virtual threads: " + tile + "x" + tile + " outputs per block, " + t + "x" + t +
         " threads, " + v + "x" + v + " virtual threads\n"
         "# (each thread computes " + std::to_string(vthreads * vthreads) + " outputs " + t +
         " apart), A and B tiles of each k step (" + kt + ") in shared memory.\n" +
         matmulThreadTiling(t, v, kt) + matmulSharedTiles(t);
}

std::string gpuScheduleMatmulLocal(int threads, int vthreads, int kTile) {
  std::string t = std::to_string(threads), v = std::to_string(vthreads), kt = std::to_string(kTile);
  std::string tile = std::to_string(threads * vthreads);
  return "# Matmul with virtual threads and register accumulators: " + tile + "x" + tile + " outputs per block, " +
         t + "x" + t + " threads,\n# " + v + "x" + v + " virtual threads (each thread accumulates " +
         std::to_string(vthreads * vthreads) + " outputs " + t + " apart in registers, C_local),\n" +
         "# A and B tiles of each k step (" + kt + ") in shared memory.\n" +
         matmulThreadTiling(t, v, kt) +
         "Cl = sch.cache_write(b, 0, \"local\")\n"
         "sch.reverse_compute_at(Cl, bx)\n"
         "w_by, w_bx, w0, w1 = sch.get_loops(Cl)\n"
         "wvy, wty = sch.split(w0, factors=[" + v + ", " + t + "])\n"
         "wvx, wtx = sch.split(w1, factors=[" + v + ", " + t + "])\n"
         "sch.reorder(wvy, wvx, wty, wtx)\n"
         "sch.bind(wvy, \"vthread.y\")\n"
         "sch.bind(wvx, \"vthread.x\")\n"
         "sch.bind(wty, \"threadIdx.y\")\n"
         "sch.bind(wtx, \"threadIdx.x\")\n" +
         matmulSharedTiles(t);
}

std::string gpuScheduleReduceRfactor(int parts) {
  std::string p = std::to_string(parts);
  return "# Row sum in two kernels: " + p + " partial sums per row (one block per row, one thread per\n"
         "# partial sum), then the write-back adds them.\n"
         "b = sch.get_block(\"A_red\")\n"
         "i, k = sch.get_loops(b)\n"
         "ko, ki = sch.split(k, factors=[None, " + p + "])\n"
         "rf = sch.rfactor(ki, factor_axis=0)\n"
         "ri, rko, rki = sch.get_loops(rf)\n"
         "sch.reorder(ri, rki, rko)\n"
         "sch.bind(ri, \"blockIdx.x\")\n"
         "sch.bind(rki, \"threadIdx.x\")\n"
         "wi, wk = sch.get_loops(b)\n"
         "wo, wt = sch.split(wi, factors=[None, 32])\n"
         "sch.bind(wo, \"blockIdx.x\")\n"
         "sch.bind(wt, \"threadIdx.x\")\n";
}

std::string gpuScheduleReduceCrossThread(int threads) {
  std::string t = std::to_string(threads);
  return "# Row sum as a cross-thread reduction: one block per row, " + t + " threads each summing a\n"
         "# strided share, then a shared-memory tree.\n"
         "b = sch.get_block(\"A_red\")\n"
         "i, k = sch.get_loops(b)\n"
         "ko, ki = sch.split(k, factors=[None, " + t + "])\n"
         "sch.reorder(i, ki, ko)\n"
         "sch.bind(i, \"blockIdx.x\")\n"
         "sch.bind(ki, \"threadIdx.x\")\n";
}

std::string defaultGPUSchedule(const std::string& workload, const PrimFunc& f) {
  auto blocks = blocksOf(f);
  // Without a name, a matmul is one block "C" over (i, j, k) with k a reduction.
  bool looksLikeMatmul = blocks.size() == 1 && blocks[0].name == "C" && blocks[0].loops == 3 && blocks[0].spatial == 2;
  if ((workload == "matmul" || (workload.empty() && looksLikeMatmul)) && f->params.size() == 3) {
    bool fits = true;
    std::vector<int64_t> dims;  // A's M, K; B's K, N; C's M, N
    for (auto& p : f->params) {
      Buffer b = f->bufferOf(p);
      if (!b.defined() || b->shape.size() != 2) return gpuScheduleFlat(f);
      for (auto& e : b->shape) {
        const int64_t* c = asConstInt(e);
        fits = fits && c && *c % 8 == 0;
        dims.push_back(c ? *c : 0);
      }
    }
    int64_t m = dims[0], k = dims[1], n = dims[3];
    // 64x64 outputs per block, accumulated in registers (8 KiB of shared tiles per block), from
    // 32 such blocks on (measured on an H200: 1.15x the 8x8 tiles at 384^3, 36 blocks; 1.8x at
    // 512^3; 4.9x at 1024^3; but 0.7x at 256^3, 16 blocks).
    if (fits && m % 64 == 0 && n % 64 == 0 && k % 16 == 0 && (m / 64) * (n / 64) >= 32)
      return gpuScheduleMatmulLocal(16, 4, 16);
    // Two 8x8 float tiles per block: 512 bytes of shared memory, whatever the matrix size.
    if (fits) return gpuScheduleMatmulShared(8);
  }
  if (workload == "reduce_sum" && f->params.size() == 2) {
    Buffer a = f->bufferOf(f->params[0]);
    const int64_t* n = a.defined() && a->shape.size() == 2 ? asConstInt(a->shape[1]) : nullptr;
    if (n && *n % 32 == 0) return gpuScheduleReduceCrossThread(32);
  }
  return gpuScheduleFlat(f);
}

}  // namespace loom::transform
