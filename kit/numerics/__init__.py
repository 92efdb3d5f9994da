"""Numerics: how close a result must come to its reference, and how close it came.

One module per concern:

- ``model``: the unit tier's error model (op classes, their constants, overrides per dtype);
- ``accumulation``: the accumulation length ``K`` the model grows with;
- ``criteria``: the one criterion type, ``Criterion``, in three kinds: the error model's
  ``ErrorBound``, the ``Tolerance`` ``atol + rtol * |expected|`` and the ``SqnrFloor``;
- ``parsing``: the standards' files read into rules and criteria;
- ``comparison``: measuring a result tensor by tensor under a criterion's per-element bound;
- ``judging``: a criterion's ``Judgement`` of a result, and ``assert_close``.

The package's ``__init__`` imports nothing: the standard imports the light modules (``model``,
``criteria``, ``parsing``) without loading torch.
"""
