#version 450
// Copies COUNT 32-bit words: any data viewed as raw bits, so one shader serves fp32 and fp16
// (kernel selection tests; SCALE and BIAS are accepted and ignored).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { uint y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    y[i] = x[i];
}
