#version 450
// y = 2 * x + 1 over 256 dense float32 elements.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { float y[]; };

const uint COUNT = 256u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= COUNT) {
        return;
    }
    y[i] = 2.0 * x[i] + 1.0;
}
