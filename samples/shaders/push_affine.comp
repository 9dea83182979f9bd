#version 450
// y = x * (1 + scale) + bias over 256 dense float32 elements; scale and bias are push constants,
// so all-zero push constants give y = x.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(push_constant) uniform Params {
    float scale;
    float bias;
} params;

layout(std430, set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { float y[]; };

const uint COUNT = 256u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= COUNT) {
        return;
    }
    y[i] = x[i] * (1.0 + params.scale) + params.bias;
}
