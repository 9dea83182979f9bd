#version 450
#extension GL_ARM_tensors : require
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 4> x;
layout(set = 0, binding = 1) uniform tensorARM<float, 4> y;
void main() {
    uvec3 g = gl_GlobalInvocationID;
    if (g.x >= tensorSizeARM(x, 3) || g.y >= tensorSizeARM(x, 2) || g.z >= PLANES) return;
    uint at[4] = uint[](g.z / CHANNELS, g.z % CHANNELS, g.y, g.x);
    float v;
    tensorReadARM(x, at, v);
    tensorWriteARM(y, at, v * SCALE);
}
