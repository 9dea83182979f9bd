#version 450
// y[i] = x[i] * SCALE + BIAS over COUNT fp32 values (any layout).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    y[i] = x[i] * SCALE + BIAS;
}
