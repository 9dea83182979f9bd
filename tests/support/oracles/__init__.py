"""Independent reference implementations (oracles) that tests compare vgfc's results with.

Nothing here imports vgfc: each oracle is written from the public semantics of the operator it
models, so that an agreement between vgfc and an oracle means something.
"""
