#version 450
// A long-running kernel (tens of seconds on lavapipe at a large grid): each invocation runs a
// 60,000-step LCG, under lavapipe's 65,535-iteration loop cap. Used to test fence timeouts.
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { uint result[]; };
layout(push_constant) uniform Args {
    uint grid0, grid1, grid2;
    uint base0, base1, base2;
};

void main() {
    uint i = gl_GlobalInvocationID.x + base0;
    if (i >= grid0) return;
    uint acc = i;
    for (uint k = 0u; k < 60000u; ++k) {
        acc = acc * 1664525u + 1013904223u;
    }
    result[i] = acc;
}
