#version 450
// Reverses the channel order of an NHWC float32 tensor of shape [1, 4, 4, 4]:
// y[n, h, w, c] = x[n, h, w, 3 - c].
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { float y[]; };

const uint CHANNELS = 4u;
const uint COUNT = 64u;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= COUNT) {
        return;
    }
    uint c = i % CHANNELS;
    y[i] = x[i - c + (CHANNELS - 1u - c)];
}
