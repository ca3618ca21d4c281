// Random valid tensor programs (TVMScript text) and random schedules of them, for differential
// testing of the compiler against the reference interpreter.
#pragma once
#include <cstdint>
#include <random>
#include <string>

#include "core/schedule/Schedule.h"
#include "core/tir/Function.h"

namespace loom::fuzz {

/// One random program: a chain of 1-4 blocks over a base shape S (rank 1-3, extents 1-9), each an
/// elementwise expression (loads of earlier results and of inputs broadcast from sub-shapes,
/// constants, index casts, + - * min max, exp / floordiv / floormod by constants, if_then_else,
/// Select, an if/else statement) or a reduction (sum, max, min over 1-2 extra axes of an input),
/// in one dtype (float32, float64, int32, int8). The last block writes the output parameter.
std::string randomTirProgram(std::mt19937_64& rng);

/// One random reduction with data reuse (a read that misses an output index), the kind of block
/// the GPU space's multi-level tiling (vthreads, local accumulators, shared-memory tiles) takes
/// and randomTirProgram seldom makes: a matmul `C[i, j] += A[i, k] * B[k, j]`, a matrix-vector
/// product `C[i] += A[i, k] * B[k]` or a 1-D convolution `C[i, j] += A[i, j + k] * W[k]`, extents
/// 1-24 (k 1-32), in float32, float64, int32 or int8, sometimes followed by an elementwise
/// epilogue (bias add and max with 0, into `out`).
std::string randomReuseProgram(std::mt19937_64& rng);

/// Applies up to `steps` random primitives to `sch` (split, fuse, reorder, parallel, vectorize,
/// unroll, compute_inline, reverse_compute_inline, compute_at, reverse_compute_at, cache_read,
/// cache_write, rfactor, decompose_reduction); refusals (ScheduleError) are skipped. Returns how
/// many applied.
int randomSchedule(tir::Schedule& sch, std::mt19937_64& rng, int steps);

} // namespace loom::fuzz
