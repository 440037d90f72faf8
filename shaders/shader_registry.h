#pragma once
// The SPIR-V of every shaders/*.comp, *.vert and *.frag, compiled by glslc at build time and
// embedded here.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace headlight::shaders {

struct EmbeddedShader {
    std::string_view name; // file name without its extension
    const uint32_t* words; // SPIR-V words
    std::size_t wordCount;
    bool compute; // a compute kernel (.comp); otherwise a stage of the canvas' graphics pipeline
    std::span<const uint32_t> spirv() const { return {words, wordCount}; }
};

std::span<const EmbeddedShader> all();              // every shader, sorted by name
const EmbeddedShader* find(std::string_view name); // nullptr when no such shader
} // namespace headlight::shaders
