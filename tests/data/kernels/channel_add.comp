#version 450
// y[n, h, w, c] = x[n, h, w, c] * SCALE + c * STEP on dense NHWC fp32 buffers: the result
// depends on which axis is the channel axis, so running it on NCHW data gives other numbers.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    uint c = i % uint(CHANNELS);
    y[i] = x[i] * SCALE + float(c) * STEP;
}
