#version 450
// MediaPipe Landmarks2TransformMatrix, version 2
// (mediapipe/util/tflite/operations/landmarks_to_transform_matrix.cc, namespace v2), fp32.
//
// From landmarks [1, L, 3] (read as x, y, z triples) to a 4x4 row-major matrix that maps a
// pixel of an OUT_W x OUT_H crop to landmark space:
//   rotation r = TARGET_ROTATION - atan2(right.y - left.y, right.x - left.x);
//   the SUBSET landmarks, rotated by r, give a box (min, max): its size (w, h) and centre,
//   rotated back by -r, (cx, cy);
//   M = shift(cx, cy) * rotate(-r) * scale(SCALE_X * w / OUT_W, SCALE_Y * h / OUT_H)
//       * shift(-OUT_W / 2, -OUT_H / 2).
// Each of 16 invocations computes the matrix and writes its own element of it.
//
// Defines: RANK (of the landmarks), VALUES (their element count), LEFT_IDX, RIGHT_IDX,
// TARGET_ROTATION, OUT_H, OUT_W, SCALE_X, SCALE_Y, SUBSET (a comma-separated list of landmark
// indices), SUBSET_COUNT, MIN_INDEX / MAX_INDEX (over SUBSET, LEFT_IDX and RIGHT_IDX),
// PARAMS_OK (1 when OUT_H, OUT_W, SCALE_X and SCALE_Y are all positive, as MediaPipe requires).
#if RANK != 3
#error Landmarks2TransformMatrix: only version 2 (landmarks of rank 3, [1, L, 3]) is supported
#endif
#if SUBSET_COUNT == 0
#error Landmarks2TransformMatrix: subset_idxs is empty
#endif
#if MIN_INDEX < 0 || MAX_INDEX * 3 + 2 >= VALUES
#error Landmarks2TransformMatrix: a landmark index (subset_idxs, left/right_rotation_idx) is out of range
#endif
#if !PARAMS_OK
#error Landmarks2TransformMatrix: output_height, output_width, scale_x and scale_y must be positive
#endif
layout(local_size_x = 16, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Landmarks { float landmarks[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float matrix[]; };

const int subset[SUBSET_COUNT] = int[](SUBSET);

// Row-major 4x4 product a * b, summed in MediaPipe's order.
void multiply(inout float a[16], const float b[16]) {
    float result[16];
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 4; c++) {
            precise float sum = 0.0;
            for (int k = 0; k < 4; k++) {
                sum += a[r * 4 + k] * b[k * 4 + c];
            }
            result[r * 4 + c] = sum;
        }
    }
    a = result;
}

void main() {
    const vec2 left = vec2(landmarks[LEFT_IDX * 3], landmarks[LEFT_IDX * 3 + 1]);
    const vec2 right = vec2(landmarks[RIGHT_IDX * 3], landmarks[RIGHT_IDX * 3 + 1]);
    const float rotation = float(TARGET_ROTATION) - atan(right.y - left.y, right.x - left.x);

    const float cr = cos(rotation);
    const float sr = sin(rotation);
    vec2 lo = vec2(0.0);
    vec2 hi = vec2(0.0);
    for (int i = 0; i < SUBSET_COUNT; i++) {
        const int at = subset[i] * 3;
        const float x = landmarks[at];
        const float y = landmarks[at + 1];
        precise float rx = cr * x + (-sr) * y;
        precise float ry = sr * x + cr * y;
        if (i == 0) {
            lo = vec2(rx, ry);
            hi = vec2(rx, ry);
        } else {
            hi = vec2(hi.x < rx ? rx : hi.x, hi.y < ry ? ry : hi.y);
            lo = vec2(lo.x > rx ? rx : lo.x, lo.y > ry ? ry : lo.y);
        }
    }
    const float crop_w = hi.x - lo.x;
    const float crop_h = hi.y - lo.y;
    const float mx = (lo.x + hi.x) / 2.0;
    const float my = (lo.y + hi.y) / 2.0;
    const float ci = cos(-rotation);
    const float si = sin(-rotation);
    precise float crop_x = ci * mx + (-si) * my;
    precise float crop_y = si * mx + ci * my;

    float t[16] = float[](1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                          0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0);
    multiply(t, float[](1.0, 0.0, 0.0, crop_x, 0.0, 1.0, 0.0, crop_y,
                        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0));
    const float cb = cos(-rotation);
    const float sb = sin(-rotation);
    multiply(t, float[](cb, -sb, 0.0, 0.0, sb, cb, 0.0, 0.0,
                        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0));
    const float scale_x = float(SCALE_X) * crop_w / float(OUT_W);
    const float scale_y = float(SCALE_Y) * crop_h / float(OUT_H);
    multiply(t, float[](scale_x, 0.0, 0.0, 0.0, 0.0, scale_y, 0.0, 0.0,
                        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0));
    const float shift_x = -1.0 * (float(OUT_W) / 2.0);
    const float shift_y = -1.0 * (float(OUT_H) / 2.0);
    multiply(t, float[](1.0, 0.0, 0.0, shift_x, 0.0, 1.0, 0.0, shift_y,
                        0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0));
    const uint i = gl_GlobalInvocationID.x;
    if (i < 16) {
        matrix[i] = t[i];
    }
}
