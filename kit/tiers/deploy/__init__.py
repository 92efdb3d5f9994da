"""The deploy tier: is the vendor stack installed and usable, before any op is judged?

``tier`` is the tier as the registry sees it; ``cases`` holds the checks and their judge; the
``test_*.py`` module is the suite a worker collects.
"""
