#version 450
// y[i] = x[i] * SCALE + BIAS over COUNT fp16 values, computed in fp16.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float16_t y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(COUNT)) {
        return;
    }
    y[i] = x[i] * float16_t(SCALE) + float16_t(BIAS);
}
