#version 450
// y[n, h, w, c] = x[n, h, w, c] * (SCALE + c * STEP), on NHWC fp32 buffers.
// SCALE, STEP and CHANNELS come from the kernel library as defines.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    uint c = i % uint(CHANNELS);
    y[i] = x[i] * (SCALE + float(c) * STEP);
}
