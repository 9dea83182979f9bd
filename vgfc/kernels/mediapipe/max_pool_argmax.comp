#version 450
// MediaPipe MaxPoolingWithArgmax2D (mediapipe/util/tflite/operations/max_pool_argmax.cc), fp32,
// NHWC. One invocation per output element (x: out_x, y: out_y, z: batch * C + channel).
//
// Defines (from vgfc/kernels/mediapipe/mediapipe.yaml):
//   N, H, W, C           output dims;   IN_H, IN_W   input height and width
//   STRIDE_H, STRIDE_W, FILTER_H, FILTER_W, PAD_TOP, PAD_LEFT
//   ACTIVATION           0 none, 1 relu, 2 relu_n1_to_1, 3 relu6 (TFLite's activation range)
//
// Semantics kept from MediaPipe: the window is clipped to the input (padding is never read);
// the first strict maximum wins; the index is y * FILTER_W + x inside the (unclipped) window,
// stored as a float plus 0.1; a window with no value above the lowest float keeps index 0.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Input { float data_in[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float data_out[]; };
layout(set = 0, binding = 2) writeonly buffer Indices { float data_idx[]; };

const float LOWEST = -3.40282347e+38;

void main() {
    const int ox = int(gl_GlobalInvocationID.x);
    const int oy = int(gl_GlobalInvocationID.y);
    const int z = int(gl_GlobalInvocationID.z);
    if (ox >= W || oy >= H || z >= N * C) {
        return;
    }
    const int n = z / C;
    const int c = z % C;
    const int x0 = ox * STRIDE_W - PAD_LEFT;
    const int y0 = oy * STRIDE_H - PAD_TOP;
    const int fx_start = max(0, -x0);
    const int fx_end = min(FILTER_W, IN_W - x0);
    const int fy_start = max(0, -y0);
    const int fy_end = min(FILTER_H, IN_H - y0);
    float best = LOWEST;
    int best_x = 0;
    int best_y = 0;
    for (int fy = fy_start; fy < fy_end; ++fy) {
        for (int fx = fx_start; fx < fx_end; ++fx) {
            const float v = data_in[((n * IN_H + y0 + fy) * IN_W + x0 + fx) * C + c];
            if (v > best) {
                best = v;
                best_x = fx;
                best_y = fy;
            }
        }
    }
#if ACTIVATION == 1
    best = max(best, 0.0);
#elif ACTIVATION == 2
    best = min(max(best, -1.0), 1.0);
#elif ACTIVATION == 3
    best = min(max(best, 0.0), 6.0);
#endif
    const int o = ((n * H + oy) * W + ox) * C + c;
    data_out[o] = best;
    data_idx[o] = float(best_y * FILTER_W + best_x) + 0.1;
}
