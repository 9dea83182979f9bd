// z = a + b over 256 dense float32 elements.
[[vk::binding(0, 0)]] StructuredBuffer<float> a;
[[vk::binding(1, 0)]] StructuredBuffer<float> b;
[[vk::binding(2, 0)]] RWStructuredBuffer<float> z;

static const uint COUNT = 256;

[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    if (id.x >= COUNT) {
        return;
    }
    z[id.x] = a[id.x] + b[id.x];
}
