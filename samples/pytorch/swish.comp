#version 450
// y = x * sigmoid(BETA * x) over fp32 storage buffers, one invocation an element.
// BETA (the op's float argument) and COUNT (the element count) come from the kernel library.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    float v = x[i];
    y[i] = v / (1.0 + exp(-BETA * v));
}
