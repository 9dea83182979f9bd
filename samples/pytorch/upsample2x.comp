#version 450
// dst = src scaled up 2x with bilinear filtering: each destination texel samples the source at
// its own centre, so the sampler (LINEAR, CLAMP_TO_EDGE) does the interpolation. Both images
// hold four fp32 channels; the tensors are NHWC [1, H, W, 4].
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D dst;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(dst);
    if (any(greaterThanEqual(p, size))) {
        return;
    }
    imageStore(dst, p, texture(src, (vec2(p) + 0.5) / vec2(size)));
}
