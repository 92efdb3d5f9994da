"""What really ran on the device: each ATen op of a device call, attributed to where it ran.

A PASS alone cannot tell a device's own kernels from a backend that sends everything to a CPU
fallback (PyTorch's boxed ``cpu_fallback``, or a Python fallback registered for PrivateUse1):
both compute the right values. While the device call runs, a ``TorchDispatchMode`` sees every
op that reaches the backend (after autograd, so CompositeImplicitAutograd ops have already
decomposed into their parts) and asks PyTorch's dispatcher where it went:

- ``native``: the op has a kernel of its own registered for the device's dispatch key
  (PrivateUse1 for an out-of-tree backend; CPU for the kit's own cpu vendor);
- ``decomposed``: it has none, but a composite kernel (CompositeExplicitAutograd, or
  CompositeImplicitAutograd: those of the case's own ops never reach the backend at all, see
  ``decomposed_of``) splits it into other ops, which are what count;
- ``fallback``: device tensors, but no kernel of its own and no composite: the backend's
  boxed fallback ran it;
- ``cpu``: no device tensor in or out.

The mode only looks and passes every call on unchanged, so the results are the same. It runs
in the vendor's process, like the call: attribution is what the dispatcher of that process
says, evidence beside the values rather than a proof.

Two modules: ``dispatch`` (the record's ``details.dispatch``, plain data any layer reads) and
``recorder`` (the dispatch mode, in the vendor's process: imports torch).
"""
