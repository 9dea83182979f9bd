#version 450
// y = 3 * x + 7 on int32 values of an NHWC tensor of shape [1, 8, 8, 4], dispatched in two
// dimensions: x runs over one row (W * C = 32 scalars), y over the rows (H = 8).
layout(local_size_x = 16, local_size_y = 4, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Input { int x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { int y[]; };

const uint ROW = 32u;
const uint ROWS = 8u;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= ROW || p.y >= ROWS) {
        return;
    }
    uint i = p.y * ROW + p.x;
    y[i] = 3 * x[i] + 7;
}
