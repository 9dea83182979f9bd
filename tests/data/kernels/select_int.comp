#version 450
// y[i] = x[i] * SCALE + BIAS over COUNT int32 values (kernel selection tests).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { int x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { int y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    y[i] = x[i] * int(SCALE) + int(BIAS);
}
