#version 450
// Reads an RGBA32F image of width 8 and height 4 with texelFetch (exact, no filtering) and writes
//   swapped: the texels with red and blue exchanged, as a dense NHWC float32 buffer [1, 4, 8, 4];
//   doubled: every texel times two, as an RGBA32F storage image of the same size.
layout(local_size_x = 4, local_size_y = 4, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform sampler2D src;
layout(std430, set = 0, binding = 1) writeonly buffer Swapped { float swapped[]; };
layout(set = 0, binding = 2, rgba32f) uniform writeonly image2D doubled;

const ivec2 SIZE = ivec2(8, 4);

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= SIZE.x || p.y >= SIZE.y) {
        return;
    }
    vec4 t = texelFetch(src, p, 0);
    uint base = uint(p.y * SIZE.x + p.x) * 4u;
    swapped[base + 0u] = t.b;
    swapped[base + 1u] = t.g;
    swapped[base + 2u] = t.r;
    swapped[base + 3u] = t.a;
    imageStore(doubled, p, t * 2.0);
}
