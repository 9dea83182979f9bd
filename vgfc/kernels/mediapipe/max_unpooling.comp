#version 450
// MediaPipe MaxUnpooling2D (mediapipe/util/tflite/operations/max_unpooling.cc), fp32, NHWC.
//
// MediaPipe scatters: for each input element, idx = int(indices) picks (idx / FILTER_W,
// idx % FILTER_W) in the window at (in_y * STRIDE_H - PAD_TOP, in_x * STRIDE_W - PAD_LEFT) and
// the input value is written there; every other output element is 0; when windows overlap the
// element written last (in row-major input order) stays. This kernel gathers instead, one
// invocation per output element, visiting the input positions whose window covers it from last
// to first and taking the first whose index points at it: the same result, without races.
// Indices outside the window (idx < 0 or idx >= FILTER_H * FILTER_W) point nowhere here.
//
// Defines: N, H, W, C output dims; IN_H, IN_W input dims; STRIDE_H, STRIDE_W, FILTER_H,
// FILTER_W, PAD_TOP, PAD_LEFT.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Input { float data_in[]; };
layout(set = 0, binding = 1) readonly buffer Indices { float data_idx[]; };
layout(set = 0, binding = 2) writeonly buffer Output { float data_out[]; };

// Floor division for a possibly negative numerator and a positive divisor.
int floor_div(int a, int b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void main() {
    const int ox = int(gl_GlobalInvocationID.x);
    const int oy = int(gl_GlobalInvocationID.y);
    const int z = int(gl_GlobalInvocationID.z);
    if (ox >= W || oy >= H || z >= N * C) {
        return;
    }
    const int n = z / C;
    const int c = z % C;
    // Window offsets 0 <= dy < FILTER_H: in_y * STRIDE_H = oy + PAD_TOP - dy.
    const int ty = oy + PAD_TOP;
    const int tx = ox + PAD_LEFT;
    const int iy_hi = min(IN_H - 1, floor_div(ty, STRIDE_H));
    const int iy_lo = max(0, floor_div(ty - FILTER_H, STRIDE_H) + 1);
    const int ix_hi = min(IN_W - 1, floor_div(tx, STRIDE_W));
    const int ix_lo = max(0, floor_div(tx - FILTER_W, STRIDE_W) + 1);
    float result = 0.0;
    bool found = false;
    for (int iy = iy_hi; iy >= iy_lo && !found; --iy) {
        for (int ix = ix_hi; ix >= ix_lo && !found; --ix) {
            const int at = ((n * IN_H + iy) * IN_W + ix) * C + c;
            const int idx = int(data_idx[at]);
            if (idx >= 0 && idx < FILTER_H * FILTER_W
                    && idx / FILTER_W == ty - iy * STRIDE_H
                    && idx % FILTER_W == tx - ix * STRIDE_W) {
                result = data_in[at];
                found = true;
            }
        }
    }
    data_out[((n * H + oy) * W + ox) * C + c] = result;
}
