// y = x * x over 64 dense float32 elements.
[[vk::binding(0, 0)]] StructuredBuffer<float> x;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> y;

static const uint COUNT = 64;

[numthreads(32, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    if (id.x >= COUNT) {
        return;
    }
    y[id.x] = x[id.x] * x[id.x];
}
