"""The model tier: whole models from several sources, run on the vendor device per flow.

``tier`` is the tier as the registry sees it; ``cases`` builds, runs and judges one test; the
``test_*.py`` modules are the suite a worker collects.
"""
