#version 450
// y = a * b over 256 dense float32 elements; a and b are separate bindings.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer InputA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer InputB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Output { float y[]; };

const uint COUNT = 256u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= COUNT) {
        return;
    }
    y[i] = a[i] * b[i];
}
