#pragma once
// One dispatch of shaders/matmul.comp, shared by VulkanBackend::linear and ::matmul. The push
// constants' meanings are stated in the shader's header; offsets count elements.

#include <cstdint>

namespace headlight::vk {

class Buffer;

struct MatmulPush {
    uint32_t M, K, N, nOffset, nCount, ldw;
    uint32_t xBase, wBase, outBase;
    uint32_t xBatch = 0, wBatch = 0, outBatch = 0, group = 1;
    uint32_t hasBias = 0, biasBase = 0;
    float alpha = 1.0f;
};

struct MatmulDispatch {
    const Buffer *x, *w, *bias, *out;
    MatmulPush push;
    bool transposeB = true; // w is [n, k], as an nn.Linear weight
    uint32_t batches = 1;   // workgroups in z, one per batch
    uint32_t wDType = 0;    // vk::StoredDType of w: linear's weight may be held in 16 bits
};
} // namespace headlight::vk
