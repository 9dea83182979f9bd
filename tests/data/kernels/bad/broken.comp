#version 450
// Does not compile: an undeclared identifier. A library may hold it as long as no model uses it.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };

void main() {
    y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x] * not_declared_anywhere;
}
