#version 450
// d = x - 2 * y over 256 dense float32 elements, with resources spread over three descriptor
// sets and sparse binding numbers.
layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 3) readonly buffer InputX { float x[]; };
layout(std430, set = 1, binding = 0) readonly buffer InputY { float y[]; };
layout(std430, set = 2, binding = 5) writeonly buffer Output { float d[]; };

const uint COUNT = 256u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= COUNT) {
        return;
    }
    d[i] = x[i] - 2.0 * y[i];
}
