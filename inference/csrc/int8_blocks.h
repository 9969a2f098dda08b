// Block-scaled int8 projections for decode steps: see int8_blocks.cpp.
#pragma once

#include <torch/extension.h>

#include <optional>

namespace int8_blocks {

// Weights and activations share one scale per kGroup consecutive inputs of a row.
constexpr int64_t kGroup = 128;

// Which kernel runs (layers/int8_blocks.py chooses; tests force kAvx2 to check the fallback).
// kAmx and kAvx512Vnni take their weights tiled (layers/int8_blocks.py tile_weights); kAvx2 row-major.
enum Isa : int64_t { kAvx2 = 1, kAvx512Vnni = 2, kAmx = 3 };

// y = x @ dequant(qweight).T (+ bias) in x's dtype, x quantised per row and group on the fly.
// x: [M, K] float32 or bfloat16; qweight: [N, K] int8; scales: [N, K / kGroup] float32.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& qweight, const torch::Tensor& scales,
                     const std::optional<torch::Tensor>& bias, int64_t isa);

// Which of the kernels this build has, e.g. "amx avx512_vnni avx2", "avx2" or "".
std::string compiled_isas();

}  // namespace int8_blocks
