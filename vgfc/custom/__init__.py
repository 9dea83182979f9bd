"""Custom operators: Vulkan shader attributes and the resource layout contract."""
