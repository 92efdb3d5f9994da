"""The flows tier: op specs and exportable OpInfo samples through each program flow.

``tier`` is the tier as the registry sees it; ``cases`` builds, runs and judges one test; the
``test_*.py`` modules are the suite a worker collects.
"""
