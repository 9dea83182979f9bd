#version 450
// MediaPipe TransformTensorBilinear, version 2
// (mediapipe/util/tflite/operations/transform_tensor_bilinear.cc, namespace v2), fp32, NHWC.
//
// The first two rows of the 4x4 matrix map an output pixel (x, y, 0, 1) to input coordinates,
// with the version-2 pixel-centre correction (row[3] += 0.5 * row[0] + 0.5 * row[1] - 0.5).
// A coordinate outside [0, IN_W - 1] x [0, IN_H - 1] gives 0; otherwise the four neighbours are
// blended bilinearly, a neighbour past the edge reading 0. MediaPipe handles batch 0 only; here
// every batch is transformed by the same matrix.
//
// Defines: N, H, W, C output dims; IN_H, IN_W input dims.
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Input { float data_in[]; };
layout(set = 0, binding = 1) readonly buffer Matrix { float matrix[]; };
layout(set = 0, binding = 2) writeonly buffer Output { float data_out[]; };

float read_input(int n, int h, int w, int c) {
    if (h < 0 || w < 0 || h >= IN_H || w >= IN_W) {
        return 0.0;
    }
    return data_in[((n * IN_H + h) * IN_W + w) * C + c];
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
    precise vec4 x_row = vec4(matrix[0], matrix[1], matrix[2], matrix[3]);
    precise vec4 y_row = vec4(matrix[4], matrix[5], matrix[6], matrix[7]);
    x_row.w += x_row.x * 0.5 + x_row.y * 0.5 - 0.5;
    y_row.w += y_row.x * 0.5 + y_row.y * 0.5 - 0.5;
    const vec4 p = vec4(float(ox), float(oy), 0.0, 1.0);
    precise float tx = x_row.x * p.x + x_row.y * p.y + x_row.z * p.z + x_row.w * p.w;
    precise float ty = y_row.x * p.x + y_row.y * p.y + y_row.z * p.z + y_row.w * p.w;
    float result = 0.0;
    if (!(tx < 0.0 || tx > float(IN_W - 1) || ty < 0.0 || ty > float(IN_H - 1))) {
        const float fx = floor(tx);
        const float fy = floor(ty);
        const int x0 = int(fx);
        const int y0 = int(fy);
        const float q11 = read_input(n, y0, x0, c);
        const float q21 = read_input(n, y0, x0 + 1, c);
        const float q12 = read_input(n, y0 + 1, x0, c);
        const float q22 = read_input(n, y0 + 1, x0 + 1, c);
        precise float right = tx - fx;
        precise float lower = ty - fy;
        precise float upper_row = (1.0 - right) * q11 + right * q21;
        precise float lower_row = (1.0 - right) * q12 + right * q22;
        result = lower * lower_row + (1.0 - lower) * upper_row;
    }
    data_out[((n * H + oy) * W + ox) * C + c] = result;
}
