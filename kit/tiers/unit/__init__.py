"""The unit tier: OpInfo samples and YAML op specs, each run on the vendor device.

``tier`` is the tier as the registry sees it; ``cases`` builds, runs and judges one test; the
``test_*.py`` modules are the suite a worker collects.
"""
