"""SPIR-V: the grammar tables, the module builder and the TOSA.001000.1 lowering table."""
