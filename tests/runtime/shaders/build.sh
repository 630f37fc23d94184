#!/bin/sh
# Regenerates the committed SPIR-V of the runtime's test shaders: one NAME.spv per NAME.comp.
#   sh tests/runtime/shaders/build.sh
set -eu
cd "$(dirname "$0")"
for src in *.comp; do
    glslangValidator -V --target-env vulkan1.2 -o "${src%.comp}.spv" "$src" >/dev/null
done
