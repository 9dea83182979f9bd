#version 450
// MediaPipe TransformLandmarks, version 2
// (mediapipe/util/tflite/operations/transform_landmarks.cc, namespace v2), fp32.
//
// Landmarks [B, COUNT, DIMS] with DIMS 2 (x, y) or 3 (x, y, z); the first two rows of the 4x4
// matrix map (x, y, 0, 1) to the new x and y; z is copied. MediaPipe handles B = 1; here every
// row is transformed by the same matrix. One invocation per output value.
//
// Defines: TOTAL = B * COUNT landmarks, DIMS.
#if DIMS != 2 && DIMS != 3
#error TransformLandmarks takes landmarks of 2 or 3 values (the last dimension)
#endif
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) readonly buffer Landmarks { float data_in[]; };
layout(set = 0, binding = 1) readonly buffer Matrix { float matrix[]; };
layout(set = 0, binding = 2) writeonly buffer Output { float data_out[]; };

void main() {
    const int k = int(gl_GlobalInvocationID.x);
    if (k >= TOTAL * DIMS) {
        return;
    }
    const int at = k - k % DIMS;
    const int component = k % DIMS;
    const vec4 p = vec4(data_in[at], data_in[at + 1], 0.0, 1.0);
    if (component == 0) {
        precise float x = matrix[0] * p.x + matrix[1] * p.y + matrix[2] * p.z + matrix[3] * p.w;
        data_out[k] = x;
    } else if (component == 1) {
        precise float y = matrix[4] * p.x + matrix[5] * p.y + matrix[6] * p.z + matrix[7] * p.w;
        data_out[k] = y;
    } else {
        data_out[k] = data_in[k];
    }
}
