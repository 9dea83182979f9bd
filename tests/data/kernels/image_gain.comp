#version 450
// dst = src * (1, 2, 3, 4) + OFFSET per texel, on RGBA32F storage images of WIDTH x HEIGHT.
layout(local_size_x = 4, local_size_y = 4) in;
layout(set = 0, binding = 0, rgba32f) uniform readonly image2D src;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= WIDTH || p.y >= HEIGHT) {
        return;
    }
    vec4 t = imageLoad(src, p);
    imageStore(dst, p, t * vec4(1.0, 2.0, 3.0, 4.0) + vec4(OFFSET));
}
